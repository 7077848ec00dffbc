/*
 * The loops of the xip-rp2350 example (xip_rp2350.c), RV32I for Hazard3.
 * Each function f(ctrl, n): sets XIP_CTRL = ctrl and invalidates every
 * cache line (xip_set), runs its loop n times, sets XIP_CTRL = 0x83 (its
 * reset value) and returns. Every loop head is at the start of a 64-byte
 * block (.p2align 6: 8 cache lines, never across a page).
 * tests/tests/rp2350.rs derives the cost of one iteration of each.
 *
 * No compressed instructions (.option norvc): every instruction is 4
 * bytes, two per 8-byte line. No linker relaxation: `la` stays auipc +
 * addi, position-independent (the functions also run from the uncached
 * alias).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
    .option norvc
    .option norelax

    .macro loop_function name
    .p2align 6
    .global \name
    .type \name, @function
\name:
    addi    sp, sp, -16
    sw      ra, 12(sp)
    sw      s0, 8(sp)
    mv      s0, a1
    call    xip_set
    mv      a1, s0
    .endm

    .macro loop_return
    li      a0, 0x83
    call    xip_set
    lw      s0, 8(sp)
    lw      ra, 12(sp)
    addi    sp, sp, 16
    ret
    .endm

/* a5 = the maintenance window's address of label \at, operation \op:
 * 0x18000000 | (address & 0x3ffffff) | op (datasheet 4.4.1.1) */
    .macro maintenance_of at, op
    la      a5, \at
    slli    a5, a5, 6
    srli    a5, a5, 6
    li      t0, 0x18000000 + \op
    or      a5, a5, t0
    .endm

    .text

/* XIP_CTRL = a0 (0x400c8000), then invalidate by set/way (operation 0x0)
 * each of the 2048 lines: 0x18000000 + 8 x line, bit 13 the way */
    .p2align 3
    .global xip_set
    .type xip_set, @function
xip_set:
    li      t0, 0x400c8000
    sw      a0, 0(t0)
    li      t0, 0x18000000
    li      t1, 0x18004000
1:  sb      zero, 0(t0)
    addi    t0, t0, 8
    bne     t0, t1, 1b
    ret

/* eight SB to the maintenance window, one per line of the loop (\op 2:
 * invalidate by address; 3: clean by address, nothing to do), six ADDI,
 * ADDI, BNEZ: 16 instructions, 64 bytes, eight lines */
    .macro straight_loop name, op
loop_function \name
    maintenance_of 1f, \op
    .p2align 6
1:  sb      zero, 0(a5)
    sb      zero, 8(a5)
    sb      zero, 16(a5)
    sb      zero, 24(a5)
    sb      zero, 32(a5)
    sb      zero, 40(a5)
    sb      zero, 48(a5)
    sb      zero, 56(a5)
    .rept 6
    addi    a4, a4, 1
    .endr
    addi    a1, a1, -1
    bnez    a1, 1b
    loop_return
    .endm

straight_loop straight_warm, 3
straight_loop straight_cold, 2

/* invalidate by set/way both ways of the loop head's set: a5 = way 0,
 * a6 = way 1 (bit 13); SB, SB, twelve ADDI, ADDI, BNEZ: 16 instructions */
loop_function setway
    la      a5, 1f
    slli    a5, a5, 19
    srli    a5, a5, 19
    li      t0, 0x18000000
    or      a5, a5, t0
    li      t0, 0x2000
    or      a6, a5, t0
    .p2align 6
1:  sb      zero, 0(a5)
    sb      zero, 0(a6)
    .rept 12
    addi    a4, a4, 1
    .endr
    addi    a1, a1, -1
    bnez    a1, 1b
    loop_return

/* lines 8 KiB apart share a set (1024 sets of 8-byte lines): sets2 runs
 * two such lines in turn, sets3 three */
loop_function sets2
    j       2f
    .balign 8192
2:  addi    a1, a1, -1
    beqz    a1, 3f
    j       4f
3:  loop_return
    .balign 8192
4:  j       2b

loop_function sets3
    j       2f
    .balign 8192
2:  addi    a1, a1, -1
    beqz    a1, 3f
    j       4f
3:  loop_return
    .balign 8192
4:  j       5f
    .balign 8192
5:  j       2b

/* four loads (\insn) from the table through the window at table +
 * \alias, \stride bytes apart, then ADDI, BNEZ: 24 bytes, three lines */
    .macro loads_loop name, alias, stride, insn
loop_function \name
    la      a7, table
    li      t0, \alias
    add     a7, a7, t0
    .p2align 6
1:  \insn   a2, 0(a7)
    \insn   a3, \stride(a7)
    \insn   a4, 2*\stride(a7)
    \insn   a0, 3*\stride(a7)
    addi    a1, a1, -1
    bnez    a1, 1b
    loop_return
    .endm

loads_loop loads_cached, 0, 8, lw
loads_loop loads_uncached, 0x04000000, 8, lw
loads_loop loads_uncached_seq, 0x04000000, 4, lw
loads_loop loads_uncached_bytes, 0x04000000, 8, lb

/* the straight loop in the SRAM (copied there with .data): no XIP access;
 * executable, so that alignment pads with NOPs */
    .section .data.sram_code, "awx", @progbits
straight_loop straight_sram, 3

    .section .rodata
    .p2align 6
table:
    .rept 8
    .word 0x12345678
    .endr
