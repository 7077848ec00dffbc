/*
 * RISC-V traps (issue 39): the kernels of tests/tests/traps.rs, which
 * derives every count by hand.
 *
 * 32-bit instructions (.option norvc) on word addresses; a 16-bit
 * trapping instruction is followed by a c.nop, so that what comes after
 * stays word aligned. No linker relaxation. QEMU ends a translated block
 * after every CSR instruction, ecall, ebreak, mret and branch: the test
 * prices the code block by block, and the comments mark the blocks.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
    .option norvc
    .option norelax
    .text

/* sid's section around `fn`, called with t0 = n iterations */
    .macro trap_kernel sid, fn, n
#ifndef ARP_NONE
    li      a0, 1
    li      a1, \sid
    li      a2, 0
    jal     ra, arp_enter_kernel
#endif
    li      t0, \n
    jal     ra, \fn
#ifndef ARP_NONE
    li      a0, 1
    li      a1, \sid
    jal     ra, arp_leave_kernel
#endif
    .endm

/* run_<name>: kernel `fn` with 100 iterations in section `sid`, then 200
 * in section sid + 1 */
    .macro trap_case name, sid, fn
    .p2align 2
    .global run_\name
    .type run_\name, @function
run_\name:
    addi    sp, sp, -16
    sw      ra, 12(sp)
    trap_kernel \sid, \fn, 100
    trap_kernel (\sid + 1), \fn, 200
    lw      ra, 12(sp)
    addi    sp, sp, 16
    ret
    .endm

    .macro function name
    .p2align 2
    .global \name
    .type \name, @function
\name:
    .endm

/* The synchronous handlers (mtvec direct): record mcause, mepc, mtval and
 * mstatus at t3, step mepc over the trapping instruction (4 or 2 bytes),
 * return. 12 instructions in 7 blocks:
 * [csrr] [sw csrr] [sw csrr] [sw csrr] [sw csrr] [addi csrw] [mret] */
    .macro record_and_skip length
    csrr    t1, mcause
    sw      t1, 0(t3)
    csrr    t1, mepc
    sw      t1, 4(t3)
    csrr    t1, mtval
    sw      t1, 8(t3)
    csrr    t1, mstatus
    sw      t1, 12(t3)
    csrr    t1, mepc
    addi    t1, t1, \length
    csrw    mepc, t1
    mret
    .endm

function h_skip4
    record_and_skip 4
function h_skip2
    record_and_skip 2

/* A kernel: t3 = the record, mtvec = `handler`, `setup` (none, or t4 =
 * the misaligned address), then t0 iterations of `trap; addi; bnez`:
 * [la la csrw] ([setup la]) ([trap]...) [addi bnez] ... [ret] */
    .macro trap_loop name, handler
function k_\name
    la      t3, trap_rec
    la      t1, \handler
    csrw    mtvec, t1
    .endm

trap_loop ecall, h_skip4
    .global t_ecall
t_ecall:
1:  ecall
    addi    t0, t0, -1
    bnez    t0, 1b
    ret

trap_loop ebreak, h_skip4
    .global t_ebreak
t_ebreak:
1:  ebreak
    addi    t0, t0, -1
    bnez    t0, 1b
    ret

/* c.ebreak: 16 bits, then a c.nop (the handler returns to it) */
trap_loop cebreak, h_skip2
    .global t_cebreak
t_cebreak:
1:  .hword  0x9002
    .hword  0x0001
    addi    t0, t0, -1
    bnez    t0, 1b
    ret

/* custom-0 opcode: no instruction of RV32IMAC (QEMU raises it) */
trap_loop illegal, h_skip4
    .global t_illegal
t_illegal:
1:  .word   0x0000000b
    addi    t0, t0, -1
    bnez    t0, 1b
    ret

/* the all-zero halfword, defined illegal (c.unimp) */
trap_loop cunimp, h_skip2
    .global t_cunimp
t_cunimp:
1:  .hword  0x0000
    .hword  0x0001
    addi    t0, t0, -1
    bnez    t0, 1b
    ret

/* unimp = csrrw x0, cycle, x0: a write to a read-only CSR (sim-host's
 * counter CSR hook raises it) */
trap_loop unimp, h_skip4
    .global t_unimp
t_unimp:
1:  .word   0xc0001073
    addi    t0, t0, -1
    bnez    t0, 1b
    ret

/* an AMO and an LR at word + 1: the trap is taken inside the block
 * [amo addi bnez], which resumes at addi: [addi bnez] */
trap_loop amo, h_skip4
    la      t4, misaligned + 1
    .global t_amo
t_amo:
1:  amoadd.w t1, t2, (t4)
    addi    t0, t0, -1
    bnez    t0, 1b
    ret

trap_loop lr, h_skip4
    la      t4, misaligned + 1
    .global t_lr
t_lr:
1:  lr.w    t1, (t4)
    addi    t0, t0, -1
    bnez    t0, 1b
    ret

#include "arp_kernel_asm.h"

    trap_case ecall, 1, k_ecall
    trap_case ebreak, 3, k_ebreak
    trap_case cebreak, 5, k_cebreak
    trap_case illegal, 7, k_illegal
    trap_case cunimp, 9, k_cunimp
    trap_case unimp, 11, k_unimp
    trap_case amo, 13, k_amo
    trap_case lr, 15, k_lr

/* The machine timer and traps together: one handler (direct) for both.
 * An ecall steps mepc and counts in a5 (7 cycles on Hazard3 after the
 * entry: [csrr] [bltz] [csrr] [addi csrw] [addi mret]); a timer interrupt
 * moves mtimecmp by the period t5 (t3 = &mtimecmp) and counts in t6
 * ([csrr] [bltz, taken] [lw add sw addi mret]). */
function h_mixed
    csrr    t1, mcause
    bltz    t1, 2f
    csrr    t1, mepc
    addi    t1, t1, 4
    csrw    mepc, t1
    addi    a5, a5, 1
    mret
2:  lw      t4, 0(t3)
    add     t4, t4, t5
    sw      t4, 0(t3)
    addi    t6, t6, 1
    mret

/* The same, whose timer path makes an ecall of its own (a synchronous
 * trap while MIE is clear, taken all the same), saving and restoring
 * mepc and mstatus around it as a nesting handler must:
 * [csrr] [bltz, taken] [csrr] [csrr] ([ecall] ...) [csrw] [csrw]
 * [lw add sw addi mret] */
function h_nested
    csrr    t1, mcause
    bltz    t1, 2f
    csrr    t1, mepc
    addi    t1, t1, 4
    csrw    mepc, t1
    addi    a5, a5, 1
    mret
2:  csrr    a6, mepc
    csrr    a7, mstatus
    ecall
    csrw    mepc, a6
    csrw    mstatus, a7
    lw      t4, 0(t3)
    add     t4, t4, t5
    sw      t4, 0(t3)
    addi    t6, t6, 1
    mret

/* tick_ecall(mtimecmp, mtime, period, n, handler): mtvec = handler, mie =
 * MTIE; inside section 20: mtimecmp = mtime + period, MIE set, n
 * iterations of `ecall; addi; bnez`, MIE cleared. Returns the ecalls
 * handled (a5) and the ticks (t6) in counts[0..2]. */
function tick_ecall
    addi    sp, sp, -16
    sw      ra, 12(sp)
    sw      s1, 8(sp)
    csrw    mtvec, a4
    li      t1, 0x80
    csrs    mie, t1
    mv      t3, a0
    mv      t5, a2
    mv      t2, a3
    li      t6, 0
    li      a5, 0
    sw      zero, 4(t3)
    mv      s1, a1              /* callee-saved: kept over the call */
#ifndef ARP_NONE
    li      a0, 1
    li      a1, 20
    li      a2, 0
    jal     ra, arp_enter_kernel
#endif
    lw      t4, 0(s1)
    add     t4, t4, t5
    sw      t4, 0(t3)
    csrsi   mstatus, 8
1:  ecall
    addi    t2, t2, -1
    bnez    t2, 1b
    csrci   mstatus, 8
#ifndef ARP_NONE
    li      a0, 1
    li      a1, 20
    jal     ra, arp_leave_kernel
#endif
    la      t1, counts
    sw      a5, 0(t1)
    sw      t6, 4(t1)
    lw      s1, 8(sp)
    lw      ra, 12(sp)
    addi    sp, sp, 16
    ret

/* pending_in_handler(mtimecmp): an ecall whose handler makes the timer
 * pending (mtimecmp = 0) while MIE is clear, marks itself inside while it
 * runs; the timer handler records mepc and the mark, and stops the timer
 * (mtimecmp high word all ones). MIE set around the ecall. */
function pending_in_handler
    la      t1, h_pending
    csrw    mtvec, t1
    li      t1, 0x80
    csrs    mie, t1
    mv      t3, a0
    la      t5, counts
    csrsi   mstatus, 8
    .global t_pending
t_pending:
    ecall
    csrci   mstatus, 8
    ret

function h_pending
    csrr    t1, mcause
    bltz    t1, 2f
    li      t1, 1
    sw      t1, 8(t5)           /* inside */
    sw      zero, 0(t3)
    sw      zero, 4(t3)         /* mtimecmp = 0: pending now */
    nop
    nop
    csrr    t1, mepc
    addi    t1, t1, 4
    csrw    mepc, t1
    sw      zero, 8(t5)         /* outside */
    mret
2:  csrr    t1, mepc
    sw      t1, 0(t5)           /* where the interrupt came */
    lw      t1, 8(t5)
    sw      t1, 4(t5)           /* inside, when it came */
    li      t1, -1
    sw      t1, 4(t3)           /* never due again */
    mret

/* software(msip, n): the machine software interrupt n times: inside
 * section 21, MIE set, n iterations of `sw 1 -> msip; addi; bnez`
 * ([sw addi bnez], the interrupt in front of the next block), MIE
 * cleared. The handler clears msip and counts in t6:
 * [sw addi mret]. Returns the count in counts[0]. */
function software
    addi    sp, sp, -16
    sw      ra, 12(sp)
    la      t1, h_software
    csrw    mtvec, t1
    li      t1, 0x8
    csrs    mie, t1
    mv      t3, a0
    mv      t2, a1
    li      t1, 1
    li      t6, 0
#ifndef ARP_NONE
    li      a0, 1
    li      a1, 21
    li      a2, 0
    jal     ra, arp_enter_kernel
#endif
    csrsi   mstatus, 8
1:  sw      t1, 0(t3)
    addi    t2, t2, -1
    bnez    t2, 1b
    csrci   mstatus, 8
#ifndef ARP_NONE
    li      a0, 1
    li      a1, 21
    jal     ra, arp_leave_kernel
#endif
    la      t4, counts
    sw      t6, 0(t4)
    csrr    t1, mcause
    sw      t1, 4(t4)
    lw      ra, 12(sp)
    addi    sp, sp, 16
    ret

function h_software
    sw      zero, 0(t3)
    addi    t6, t6, 1
    mret

/* Traps that cannot be taken, or never end. */
function ecall_mtvec_zero
    csrw    mtvec, zero
    .global t_mtvec_zero
t_mtvec_zero:
    ecall
    ret

function ecall_mtvec_data
    li      t1, 0x40000000
    csrw    mtvec, t1
    ecall
    ret

/* timer_mtvec_zero(mtimecmp): the timer due now, enabled, mtvec 0 */
function timer_mtvec_zero
    csrw    mtvec, zero
    sw      zero, 0(a0)
    sw      zero, 4(a0)
    li      t1, 0x80
    csrs    mie, t1
    csrsi   mstatus, 8
1:  j       1b

/* the handler is an illegal instruction: every trap traps again */
function storm
    la      t1, storm_handler
    csrw    mtvec, t1
    ecall
    ret

function storm_handler
    .word   0x0000000b

    .data
    .p2align 2
    .global trap_rec
trap_rec:
    .word   0, 0, 0, 0
    .global counts
counts:
    .word   0, 0, 0, 0
    .global misaligned
misaligned:
    .word   0x11223344, 0x55667788
