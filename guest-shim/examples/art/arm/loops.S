/*
 * The loops of the art example (art.c). Each function f(n, base) runs its
 * loop n times and returns; only PC-relative branches, so that art.c can
 * run the section through the flash's ITCM view (0x00200000, the same
 * bytes as 0x08000000) and from a copy in the ITCM RAM. The section is
 * 4 KiB aligned and the copy 4 KiB aligned: every instruction keeps its
 * offset within a 32-byte (256-bit) flash line. tests/tests/art.rs derives
 * the cost of one iteration of each loop.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
    .syntax unified
    .thumb
    .section .text.artloops, "ax", %progbits
    .p2align 12
    .global artloops_start
artloops_start:

    .macro function name
    .global \name
    .type \name, %function
    .thumb_func
\name:
    .endm

/* straight: 16 x ADD.W (64 bytes: two 32-byte lines), SUBS and BNE.N in
 * a third line: 3 lines an iteration, the second and third sequential */
    .p2align 5
function straight
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

/* jumps<N>: N - 1 taken B.W, 64 bytes apart, then SUBS, BNE.W: N blocks
 * in N lines, none the line after the one before (every second line) */
    .macro jumps name, branches
    .p2align 6
function \name
0:  .rept \branches
    b.w     1f
    .p2align 6
1:
    .endr
    subs    r0, r0, #1
    bne.w   0b
    bx      lr
    .endm

jumps jumps64, 63
jumps jumps65, 64

/* dload4: four loads 32 bytes apart (four lines of data), SUBS, BNE.N */
    .p2align 5
function dload4
1:  ldr     r2, [r1]
    ldr     r3, [r1, #32]
    ldr     r2, [r1, #64]
    ldr     r3, [r1, #96]
    subs    r0, r0, #1
    bne.n   1b
    bx      lr

    .global artloops_end
artloops_end:
