/*
 * Micro-benchmarks for the rv32imac target (Hazard3 timing). Each kernel K
 * is a function loop_<kind> running ITER iterations of a loop whose body is
 * one kind of instruction, called by main between arp_enter_kernel(1, K, 0)
 * and arp_leave_kernel(1, K). Expected counts are derived by hand in
 * tests/tests/microbench.rs.
 *
 * No compressed instructions (.option norvc): every instruction is 32-bit
 * and every branch target word aligned, so no misaligned-target penalty.
 * No linker relaxation (.option norelax): `la` stays auipc + addi.
 * main comes last, padded to 512 bytes (see the ARM file).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
    .option norvc
    .option norelax
    .text

#define ITER 100

    .macro loop_function name
    .p2align 2
    .global \name
    .type \name, @function
\name:
    addi    sp, sp, -16
    sw      ra, 12(sp)
    .endm

    .macro loop_end
    addi    t0, t0, -1
    bnez    t0, 1b
    lw      ra, 12(sp)
    addi    sp, sp, 16
    ret
    .endm

loop_function loop_alu
    li      t0, ITER
1:  addi    a2, a2, 1
    addi    a3, a3, 1
    addi    a4, a4, 1
    addi    a5, a5, 1
    loop_end

loop_function loop_mul
    li      t0, ITER
1:  mul     a2, a3, a2
    mul     a3, a4, a3
    mul     a4, a5, a4
    mul     a5, a2, a5
    loop_end

loop_function loop_div
    li      a3, 1000
    li      a4, 7
    li      t0, ITER
1:  divu    a2, a3, a4
    divu    a2, a3, a4
    divu    a2, a3, a4
    divu    a2, a3, a4
    loop_end

loop_function loop_lw
    la      a5, buffer
    li      t0, ITER
1:  lw      a2, 0(a5)
    lw      a3, 4(a5)
    lw      a4, 8(a5)
    lw      a6, 12(a5)
    loop_end

loop_function loop_load_use
    la      a5, buffer
    li      t0, ITER
1:  lw      a2, 0(a5)
    add     a3, a2, a2
    lw      a4, 4(a5)
    add     a6, a4, a4
    loop_end

loop_function loop_sw
    la      a5, buffer
    li      t0, ITER
1:  sw      a2, 0(a5)
    sw      a3, 4(a5)
    sw      a4, 8(a5)
    sw      a6, 12(a5)
    loop_end

loop_function loop_branch_taken
    li      t0, ITER
1:  j       2f
    nop
2:  j       3f
    nop
3:  j       4f
    nop
4:  j       5f
    nop
5:  loop_end

loop_function loop_branch_not_taken
    li      t0, ITER
1:  beqz    t0, 9f
    beqz    t0, 9f
    beqz    t0, 9f
    beqz    t0, 9f
    loop_end
9:  j       9b

loop_function loop_call
    li      t0, ITER
1:  jal     ra, leaf
    jal     ra, leaf
    jal     ra, leaf
    jal     ra, leaf
    loop_end

    .p2align 2
    .type leaf, @function
leaf:
    ret

#include "arp_kernel_asm.h"

    .p2align 2
    .global main
    .type main, @function
main:
    addi    sp, sp, -16
    sw      ra, 12(sp)
#ifndef ARP_NONE
    jal     ra, arpsim_add_callbacks
    li      a0, 1
    li      a1, 9
    li      a2, 1
    jal     ra, arpsim_start
#endif
    kernel  1, loop_alu
    kernel  2, loop_mul
    kernel  3, loop_div
    kernel  4, loop_lw
    kernel  5, loop_load_use
    kernel  6, loop_sw
    kernel  7, loop_branch_taken
    kernel  8, loop_branch_not_taken
    kernel  9, loop_call
#ifndef ARP_NONE
    jal     ra, arp_finish
#endif
    li      a0, 0
    lw      ra, 12(sp)
    addi    sp, sp, 16
    ret
    .balign 512

    .bss
    .p2align 2
buffer:
    .space  64
