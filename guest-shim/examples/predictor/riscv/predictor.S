/*
 * Kernels for Hazard3's branch predictor (RP2350 datasheet 3.8.7.10). Each
 * kernel K is a function k_<name>, called by main between
 * arp_enter_kernel(1, K, 0) and arp_leave_kernel(1, K). Expected counts
 * are derived by hand in tests/tests/predictor.rs.
 *
 * 32-bit instructions (.option norvc) except in the two delay loops, which
 * need a 16-bit one and come last; every function is a whole number of
 * words long (the assembler's .p2align does not pad once 16-bit code was
 * assembled), so every 32-bit branch target is word aligned and no kernel
 * pays the misaligned-target cycle. No linker relaxation.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
    .option norvc
    .option norelax
    .text

#define ITER 100

    .macro kernel_function name
    .p2align 2
    .global \name
    .type \name, @function
\name:
    .endm

/* 1: the datasheet's copy routine, 10 bytes from src to dst (its
 * "a copy of 10 bytes would take 52 cycles") */
kernel_function k_copy
    la      a0, src
    la      a1, dst
    li      a2, 10
    beqz    a2, 2f
    add     a2, a2, a1
1:  lbu     a3, (a0)
    sb      a3, (a1)
    addi    a0, a0, 1
    addi    a1, a1, 1
    bltu    a1, a2, 1b
2:  ret

/* 4: an inner loop of two iterations inside an outer loop of ITER: the
 * two backward branches take the buffer from each other */
kernel_function k_nested
    li      t0, ITER
1:  li      t1, 2
2:  addi    t1, t1, -1
    bnez    t1, 2b
    addi    t0, t0, -1
    bnez    t0, 1b
    ret

/* 5: a forward branch taken in every iteration: never remembered */
kernel_function k_forward
    li      t0, ITER
1:  bnez    t0, 2f
    nop
2:  addi    t0, t0, -1
    bnez    t0, 1b
    ret

/* 2: a delay loop of one 16-bit instruction at a word-aligned address:
 * the predictor does not engage (3.8.7.10.1) */
kernel_function k_delay_aligned
    li      t0, ITER
    .option rvc
1:  c.addi  t0, -1
    bnez    t0, 1b
    ret                 /* c.jr ra: the function is 12 bytes */
    .option norvc

/* 3: the same loop with its body at a halfword address: it engages */
kernel_function k_delay_halfword
    li      t0, ITER
    .option rvc
    c.nop
1:  c.addi  t0, -1
    bnez    t0, 1b
    ret
    c.nop               /* never run: the next function word aligned */
    .option norvc

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
    li      a1, 5
    li      a2, 1
    jal     ra, arpsim_start
#endif
    kernel  1, k_copy
    kernel  2, k_delay_aligned
    kernel  3, k_delay_halfword
    kernel  4, k_nested
    kernel  5, k_forward
#ifndef ARP_NONE
    jal     ra, arp_finish
#endif
    li      a0, 0
    lw      ra, 12(sp)
    addi    sp, sp, 16
    ret

    .data
src:
    .ascii  "0123456789"
    .bss
dst:
    .space  16
