/*
 * Micro-benchmarks for Cortex-M3/M4 (Thumb-2). Each kernel K is a function
 * loop_<kind> that runs ITER iterations of a loop whose body is one kind of
 * instruction; main calls each between arp_enter_kernel(1, K, 0) and
 * arp_leave_kernel(1, K). The expected cycle count of every kernel is
 * derived by hand in tests/tests/microbench.rs.
 *
 * Layout rules that keep the counts exact:
 *  - every loop function starts word aligned with a 32-bit PUSH.W and a
 *    32-bit MOVW, so loop labels are word aligned (no misaligned-target
 *    fetch penalty);
 *  - branches never target their own fall-through address;
 *  - main comes last and is padded to a 512-byte boundary, so the -none
 *    variant (built with -DARP_NONE, no call sites) has every other
 *    function at the same address; main's BLs are word aligned in the
 *    -none variant, so returning to them costs no misaligned-fetch cycle
 *    (in the instrumented variant loops return to 16-bit MOVS).
 *
 * Kernels 9..19 (issue 15) prove one Cortex-M3/M4 rule of TRM 3.3 each;
 * the comment above each gives its hand-derived body count, asserted in
 * tests/tests/microbench.rs. Cortex-M0 (ARMv6-M, Thumb-1 only) builds
 * microbench_v6m.S instead: this file is empty there.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#if !defined(__ARM_ARCH_6M__)
    .syntax unified
    .thumb
    .text

#define ITER 100

    .macro loop_function name
    .p2align 2
    .global \name
    .type \name, %function
    .thumb_func
\name:
    push.w  {r4-r7, lr}
    .endm

    .macro loop_end
    subs    r3, r3, #1
    bne     1b
    pop     {r4-r7, pc}
    .endm

loop_function loop_alu
    movw    r3, #ITER
1:  adds    r4, r4, #1
    adds    r5, r5, #1
    adds    r6, r6, #1
    adds    r7, r7, #1
    loop_end

loop_function loop_mul
    movw    r3, #ITER
1:  muls    r4, r5, r4
    muls    r5, r6, r5
    muls    r6, r7, r6
    muls    r7, r4, r7
    loop_end

loop_function loop_div
    movw    r5, #1000
    movw    r6, #7
    movw    r3, #ITER
1:  udiv    r4, r5, r6
    udiv    r4, r5, r6
    udiv    r4, r5, r6
    udiv    r4, r5, r6
    loop_end

loop_function loop_ldr
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r3, #ITER
1:  ldr     r4, [r7]
    ldr     r5, [r7, #4]
    ldr     r6, [r7, #8]
    ldr     r0, [r7, #12]
    loop_end

loop_function loop_str
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r3, #ITER
1:  str     r4, [r7]
    str     r5, [r7, #4]
    str     r6, [r7, #8]
    str     r0, [r7, #12]
    loop_end

loop_function loop_branch_taken
    movw    r3, #ITER
1:  b       2f
    nop
2:  b       3f
    nop
3:  b       4f
    nop
4:  b       5f
    nop
5:  loop_end

loop_function loop_branch_not_taken
    movw    r3, #ITER
1:  cmp     r4, r4
    bne     9f
    bne     9f
    bne     9f
    bne     9f
    loop_end
9:  b       9b

loop_function loop_call
    movw    r3, #ITER
1:  bl      leaf
    bl      leaf
    bl      leaf
    bl      leaf
    loop_end

    .p2align 2
    .type leaf, %function
    .thumb_func
leaf:
    bx      lr

/* 9: STR with register offset, "other instructions cannot be pipelined
 * after STR with register offset" (3.3.2): 4 x 2 = 8; setup 5 x MOVW/MOVT */
loop_function loop_str_reg
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r1, #4
    movw    r2, #8
    movw    r3, #ITER
1:  str     r4, [r7, r1]
    str     r5, [r7, r2]
    str     r6, [r7, r1]
    str     r0, [r7, r2]
    loop_end

/* 10: LDR; STR with register offset pipelines after the load ("LDR
 * R0,[R1,R2]; STR R1,[R3,R2] - normally three cycles total", 3.3.2); a load
 * after a store does not pipeline: (2 + 1) + (2 + 1) = 6; setup 5 */
loop_function loop_ldr_str_reg
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r1, #4
    movw    r2, #8
    movw    r3, #ITER
1:  ldr     r4, [r7, r1]
    str     r4, [r7, r2]
    ldr     r5, [r7, r2]
    str     r5, [r7, r1]
    loop_end

/* 11: LDR Rx,[PC,#imm] with the literal in the code's memory: "might add a
 * cycle because of contention with the fetch unit" (3.3.2; the model adds
 * it): (2 + 1) + 3 x (1 pipelined + 1) = 9; setup 1 */
loop_function loop_ldr_literal
    movw    r3, #ITER
1:  ldr     r4, literals
    ldr     r5, literals + 4
    ldr     r6, literals + 8
    ldr     r0, literals + 12
    loop_end
    .p2align 2
literals:
    .word   0x11111111, 0x22222222, 0x33333333, 0x44444444

/* 12: IT folding (ACTLR.DISFOLD): CMP 1, IT after the 16-bit CMP folded 0,
 * ADDEQ 1, ADD.W 1, IT after a 32-bit instruction 1, ADDEQ 1 = 5; setup 1 */
loop_function loop_it_fold
    movw    r3, #ITER
1:  cmp     r4, r4
    it      eq
    addeq   r5, r5, #1
    add.w   r6, r6, #1
    it      eq
    addeq   r5, r5, #1
    loop_end

/* 13: loads with base writeback pipeline (3.3.2 names only the first
 * load's destination; a written-back base counts as one): LDR [r7],#4 2,
 * LDR [r1],#4 pipelined 1, LDR [r1],#4 uses the base just written back 2,
 * 2 x SUBS 1 = 7; setup 5 */
loop_function loop_ldr_writeback
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r1, #:lower16:buffer+32
    movt    r1, #:upper16:buffer+32
    movw    r3, #ITER
1:  ldr     r4, [r7], #4
    ldr     r5, [r1], #4
    ldr     r6, [r1], #4
    subs    r7, r7, #4
    subs    r1, r1, #8
    loop_end

/* 14: LDM/STM/PUSH/POP, 1 + N (Table 3-1): LDM.W {4 regs} 5, STMIA! 5,
 * SUBS 1, PUSH {2} 3, POP {2} 3 = 17; setup 3 */
loop_function loop_ldm_stm
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r3, #ITER
1:  ldm     r7, {r0, r1, r2, r4}
    stmia   r7!, {r0, r1, r2, r4}
    subs    r7, r7, #16
    push    {r0, r1}
    pop     {r0, r1}
    loop_end

/* 15: BLX Rm, 1 + P with P = 2 for a branch to a register (Table 3-1,
 * cortex-m4.toml), and BX LR the same: 4 x (3 + 3) = 24; setup 3 */
loop_function loop_blx_reg
    movw    r1, #:lower16:leaf
    movt    r1, #:upper16:leaf
    movw    r3, #ITER
1:  blx     r1
    blx     r1
    blx     r1
    blx     r1
    loop_end

/* 16: LDR PC, "at least five cycles": two for the load, three for the
 * pipeline reload (3.3.2): 4 x 5 = 20 (each jumps over a NOP.W, never to
 * its own fall-through); setup 3 */
loop_function loop_ldr_pc
    movw    r7, #:lower16:pc_table
    movt    r7, #:upper16:pc_table
    movw    r3, #ITER
1:  ldr.w   pc, [r7]
    nop.w
2:  ldr.w   pc, [r7, #4]
    nop.w
3:  ldr.w   pc, [r7, #8]
    nop.w
4:  ldr.w   pc, [r7, #12]
    nop.w
5:  loop_end
    .p2align 2
pc_table:
    .word   2b + 1, 3b + 1, 4b + 1, 5b + 1

/* 17: POP {..., PC}, 1 + N + P with P = 3 (Table 3-1): 4 x (BL 2 +
 * PUSH {r4, lr} 3 + POP {r4, pc} 1 + 2 + 3) = 44; setup 1 */
loop_function loop_pop_pc
    movw    r3, #ITER
1:  bl      popper
    bl      popper
    bl      popper
    bl      popper
    loop_end

    .p2align 2
    .type popper, %function
    .thumb_func
popper:
    push    {r4, lr}
    pop     {r4, pc}

/* 18: a store followed by a load: the write buffer takes the store, the
 * load does not pipeline after it (only loads pipeline what follows):
 * STR 1, LDR 2, STR after LDR 1, LDR 2 = 6; setup 3 */
loop_function loop_str_ldr
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r3, #ITER
1:  str     r4, [r7]
    ldr     r5, [r7, #4]
    str     r5, [r7, #8]
    ldr     r6, [r7, #12]
    loop_end

/* 19: a table branch: TBB is 2 + P = 6 cycles (Table 3-1, and 3.3.2 "at
 * least six cycles"), and it always branches: here past its own table to
 * the word-aligned ADDS. MOVS 1, TBB 6, ADDS 1 = 8; setup 1 */
loop_function loop_tbb
    movw    r3, #ITER
1:  movs    r4, #0
    tbb     [pc, r4]
2:  .byte   (3f - 2b) / 2
    .byte   (3f - 2b) / 2
3:  adds    r5, r5, #1
    loop_end

#if defined(__ARM_FP)
/* Kernels 20..27 (issue 25): the FPU, on cores that have one (built with
 * hard float: cortex-m4f, cortex-m7, cortex-m33). Every instruction is
 * 32-bit, so loop labels stay word aligned. Counts in
 * tests/tests/microbench.rs. */

/* 20: a chain of dependent VADD.F32 */
loop_function loop_vadd_chain
    movw    r3, #ITER
    vmov.f32 s1, #1.0
1:  vadd.f32 s0, s0, s1
    vadd.f32 s0, s0, s1
    vadd.f32 s0, s0, s1
    vadd.f32 s0, s0, s1
    loop_end

/* 21: a chain of VMLA.F32 on one accumulator */
loop_function loop_vmla_chain
    movw    r3, #ITER
    vmov.f32 s1, #1.0
    vmov.f32 s2, #1.0
1:  vmla.f32 s0, s1, s2
    vmla.f32 s0, s1, s2
    vmla.f32 s0, s1, s2
    vmla.f32 s0, s1, s2
    loop_end

/* 22: a chain of VFMA.F32 on one accumulator */
loop_function loop_vfma_chain
    movw    r3, #ITER
    vmov.f32 s1, #1.0
    vmov.f32 s2, #1.0
1:  vfma.f32 s0, s1, s2
    vfma.f32 s0, s1, s2
    vfma.f32 s0, s1, s2
    vfma.f32 s0, s1, s2
    loop_end

/* 23: a chain of dependent VDIV.F32 */
loop_function loop_vdiv_chain
    movw    r3, #ITER
    vmov.f32 s1, #1.0
1:  vdiv.f32 s0, s0, s1
    vdiv.f32 s0, s0, s1
    vdiv.f32 s0, s0, s1
    vdiv.f32 s0, s0, s1
    loop_end

/* 24: independent VSQRT.F32 */
loop_function loop_vsqrt
    movw    r3, #ITER
    vmov.f32 s1, #1.0
1:  vsqrt.f32 s2, s1
    vsqrt.f32 s3, s1
    vsqrt.f32 s4, s1
    vsqrt.f32 s5, s1
    loop_end

/* 25: independent VLDR.32 */
loop_function loop_vldr
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r3, #ITER
1:  vldr    s4, [r7]
    vldr    s5, [r7, #4]
    vldr    s6, [r7, #8]
    vldr    s7, [r7, #12]
    loop_end

/* 26: moves between core and FPU registers */
loop_function loop_vmov
    movw    r3, #ITER
1:  vmov    s4, r4
    vmov    r5, s5
    vmov    s6, r6
    vmov    r0, s7
    loop_end

/* 27: independent VMUL.F32 and VADD.F32 */
loop_function loop_vmul_vadd
    movw    r3, #ITER
    vmov.f32 s1, #1.0
    vmov.f32 s2, #1.0
1:  vmul.f32 s4, s1, s2
    vadd.f32 s5, s1, s2
    vmul.f32 s6, s1, s2
    vadd.f32 s7, s1, s2
    loop_end
#endif /* __ARM_FP */

/* kernel K: arp_enter_kernel(1, K, 0); loop_<kind>(); arp_leave_kernel(1, K) */
#include "arp_kernel_asm.h"

    .p2align 2
    .global main
    .type main, %function
    .thumb_func
main:
    push.w  {r4, lr}        /* 32-bit: keeps the -none variant's BLs word aligned */
#ifndef ARP_NONE
    bl      arpsim_add_callbacks
    movs    r0, #1          /* max tid */
#if defined(__ARM_FP)
    movs    r1, #27         /* max sid */
#else
    movs    r1, #19         /* max sid */
#endif
    movs    r2, #1          /* arp_record_all */
    bl      arpsim_start
#endif
    kernel  1, loop_alu
    kernel  2, loop_mul
    kernel  3, loop_div
    kernel  4, loop_ldr
    kernel  5, loop_str
    kernel  6, loop_branch_taken
    kernel  7, loop_branch_not_taken
    kernel  8, loop_call
    kernel  9, loop_str_reg
    kernel  10, loop_ldr_str_reg
    kernel  11, loop_ldr_literal
    kernel  12, loop_it_fold
    kernel  13, loop_ldr_writeback
    kernel  14, loop_ldm_stm
    kernel  15, loop_blx_reg
    kernel  16, loop_ldr_pc
    kernel  17, loop_pop_pc
    kernel  18, loop_str_ldr
    kernel  19, loop_tbb
#if defined(__ARM_FP)
    kernel  20, loop_vadd_chain
    kernel  21, loop_vmla_chain
    kernel  22, loop_vfma_chain
    kernel  23, loop_vdiv_chain
    kernel  24, loop_vsqrt
    kernel  25, loop_vldr
    kernel  26, loop_vmov
    kernel  27, loop_vmul_vadd
#endif
#ifndef ARP_NONE
    bl      arp_finish
#endif
    movs    r0, #0
    pop     {r4, pc}
    .balign 512

    .bss
    .p2align 2
buffer:
    .space  64
#endif /* !__ARM_ARCH_6M__ */
