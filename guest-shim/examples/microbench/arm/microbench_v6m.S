/*
 * Micro-benchmarks for Cortex-M0 (ARMv6-M, Thumb-1 only), the counterpart
 * of microbench.S (which is Thumb-2 and empty on ARMv6-M; this file is
 * empty everywhere else). Same scheme: kernel K is loop_<kind>, ITER
 * iterations of one instruction kind, called by main between
 * arp_enter_kernel(1, K, 0) and arp_leave_kernel(1, K). The body counts
 * below come from ARM DDI 0432C Table 3-1 as cortex-m0.toml prices it
 * (fast multiplier); tests/tests/microbench.rs asserts them exactly.
 * Cortex-M0 has no pipelining of loads and no alignment penalty, so the
 * layout needs no care beyond never branching to a fall-through address.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#if defined(__ARM_ARCH_6M__)
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
    push    {r4-r7, lr}
    .endm

    .macro loop_end
    subs    r3, r3, #1
    bne     1b
    pop     {r4-r7, pc}
    .endm

/* 1: 4 x ADDS: 1 each = 4; setup MOVS 1 */
loop_function loop_alu
    movs    r3, #ITER
1:  adds    r4, r4, #1
    adds    r5, r5, #1
    adds    r6, r6, #1
    adds    r7, r7, #1
    loop_end

/* 2: 4 x MULS, 1 with the fast multiplier = 4; setup 1 */
loop_function loop_mul
    movs    r3, #ITER
1:  muls    r4, r5, r4
    muls    r5, r6, r5
    muls    r6, r7, r6
    muls    r7, r4, r7
    loop_end

/* 3: 4 x LDR: 2 each = 8; setup LDR literal 2 + MOVS 1 = 3 */
loop_function loop_ldr
    ldr     r7, =buffer
    movs    r3, #ITER
1:  ldr     r4, [r7]
    ldr     r5, [r7, #4]
    ldr     r6, [r7, #8]
    ldr     r0, [r7, #12]
    loop_end
    .ltorg

/* 4: 4 x STR: 2 each = 8; setup 3 */
loop_function loop_str
    ldr     r7, =buffer
    movs    r3, #ITER
1:  str     r4, [r7]
    str     r5, [r7, #4]
    str     r6, [r7, #8]
    str     r0, [r7, #12]
    loop_end
    .ltorg

/* 5: 4 x B taken: 3 each = 12; setup 1 */
loop_function loop_branch_taken
    movs    r3, #ITER
1:  b       2f
    nop
2:  b       3f
    nop
3:  b       4f
    nop
4:  b       5f
    nop
5:  loop_end

/* 6: CMP 1 + 4 x BNE not taken 1 = 5; setup 1 */
loop_function loop_branch_not_taken
    movs    r3, #ITER
1:  cmp     r4, r4
    bne     9f
    bne     9f
    bne     9f
    bne     9f
    loop_end
9:  b       9b

/* 7: 4 x (BL 4 + BX LR 3) = 28; setup 1 */
loop_function loop_call
    movs    r3, #ITER
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

/* 8: LDM/STM/PUSH/POP, 1 + N: LDM! {4} 5, SUBS 1, STM! {4} 5, SUBS 1,
 * PUSH {2} 3, POP {2} 3 = 18; setup 3 */
loop_function loop_ldm_stm
    ldr     r7, =buffer
    movs    r3, #ITER
1:  ldm     r7!, {r0, r1, r2, r4}
    subs    r7, r7, #16
    stm     r7!, {r0, r1, r2, r4}
    subs    r7, r7, #16
    push    {r0, r1}
    pop     {r0, r1}
    loop_end
    .ltorg

/* 9: 4 x (BL 4 + PUSH {r4, lr} 3 + POP {r4, pc} 4 + N, N = 1) = 48; setup 1 */
loop_function loop_pop_pc
    movs    r3, #ITER
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

/* 10: 4 x (BLX Rm 3 + BX LR 3) = 24; setup LDR literal 2 + MOVS 1 = 3 */
loop_function loop_blx_reg
    ldr     r1, =leaf
    movs    r3, #ITER
1:  blx     r1
    blx     r1
    blx     r1
    blx     r1
    loop_end
    .ltorg

/* kernel K: arp_enter_kernel(1, K, 0); loop_<kind>(); arp_leave_kernel(1, K) */
#include "arp_kernel_asm.h"

    .p2align 2
    .global main
    .type main, %function
    .thumb_func
main:
    push    {r4, lr}
#ifndef ARP_NONE
    bl      arpsim_add_callbacks
    movs    r0, #1          /* max tid */
    movs    r1, #10         /* max sid */
    movs    r2, #1          /* arp_record_all */
    bl      arpsim_start
#endif
    kernel  1, loop_alu
    kernel  2, loop_mul
    kernel  3, loop_ldr
    kernel  4, loop_str
    kernel  5, loop_branch_taken
    kernel  6, loop_branch_not_taken
    kernel  7, loop_call
    kernel  8, loop_ldm_stm
    kernel  9, loop_pop_pc
    kernel  10, loop_blx_reg
#ifndef ARP_NONE
    bl      arp_finish
#endif
    movs    r0, #0
    pop     {r4, pc}

    .bss
    .p2align 2
buffer:
    .space  64
#endif /* __ARM_ARCH_6M__ */
