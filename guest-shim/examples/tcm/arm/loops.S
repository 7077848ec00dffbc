/*
 * The loop of the tcm example (tcm.c), twice: `flash_straight` in the
 * flash and `itcm_straight` in section .itcm.text, which the stm32f746
 * script runs from the ITCM (ARP_ITCM_CODE's section, written in assembly
 * so both copies are the same instructions at the same offsets within a
 * 32-byte line). Each f(n) runs its loop n times: 16 x ADD.W (64 bytes:
 * two 32-byte lines, eight 64-bit granules), then SUBS and BNE.N in a
 * third line (one granule). tests/tests/tcm.rs derives the counts.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
    .syntax unified
    .thumb

    .macro straight name, section
    .section \section, "ax", %progbits
    .p2align 5
    .global \name
    .type \name, %function
    .thumb_func
\name:
    .p2align 5
1:  .rept 4
    add.w   r2, r2, #1
    add.w   r3, r3, #1
    add.w   r12, r12, #1
    add.w   r1, r1, #1
    .endr
    subs    r0, r0, #1
    bne.n   1b
    bx      lr
    .size \name, . - \name
    .endm

    straight flash_straight, .text.tcm_flash
    straight itcm_straight, .itcm.text
