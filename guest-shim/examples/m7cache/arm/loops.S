/*
 * The loops of the m7cache example (m7cache.c). Each function f(n, base)
 * runs its loop n times and returns; only PC-relative branches, so that
 * m7cache.c can run a copy of the whole section from the ITCM (the
 * reference without fetch stalls). The section is 4 KiB aligned and
 * copied to a 4 KiB aligned ITCM address: every instruction keeps its
 * offset. tests/tests/m7cache.rs derives the cost of one iteration of
 * each loop from the rules in sim-host/src/model/l1cache.rs.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
    .syntax unified
    .thumb
    .section .text.m7loops, "ax", %progbits
    .p2align 12
    .global m7loops_start
m7loops_start:

    .macro function name
    .global \name
    .type \name, %function
    .thumb_func
\name:
    .endm

/* straight: 16 x ADD.W (64 bytes: two 32-byte lines, eight 64-bit
 * granules), SUBS and BNE.N in a third line (one granule): 3 lines and
 * 9 granules an iteration */
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

/* conflict<N>: N - 1 taken B.W, 2048 bytes apart, then SUBS, BNE.W: N
 * blocks whose lines all map to one set of the 64-set instruction cache
 * (64 sets x 32 bytes = 2048), one granule each */
    .macro conflict name, branches
    .p2align 11
function \name
0:  .rept \branches
    b.w     1f
    .p2align 11
1:
    .endr
    subs    r0, r0, #1
    bne.w   0b
    bx      lr
    .endm

conflict conflict2, 1
conflict conflict3, 2

/* dload4: four loads 32 bytes apart (four lines, four sets) */
    .p2align 5
function dload4
    .p2align 5
1:  ldr     r2, [r1]
    ldr     r3, [r1, #32]
    ldr     r12, [r1, #64]
    ldr     r2, [r1, #96]
    subs    r0, r0, #1
    bne.n   1b
    bx      lr

/* dload5: five loads 1024 bytes apart, one set of the 32-set data cache
 * (32 sets x 32 bytes = 1024) */
    .p2align 5
function dload5
    add.w   r3, r1, #4096
    .p2align 5
1:  ldr     r2, [r1]
    ldr     r2, [r1, #1024]
    ldr     r2, [r1, #2048]
    ldr     r2, [r1, #3072]
    ldr     r2, [r3]
    subs    r0, r0, #1
    bne.n   1b
    bx      lr

/* dstore<N>: N stores 1024 bytes apart, one set */
    .p2align 5
function dstore4
    .p2align 5
1:  str     r0, [r1]
    str     r0, [r1, #1024]
    str     r0, [r1, #2048]
    str     r0, [r1, #3072]
    subs    r0, r0, #1
    bne.n   1b
    bx      lr

    .p2align 5
function dstore5
    add.w   r3, r1, #4096
    .p2align 5
1:  str     r0, [r1]
    str     r0, [r1, #1024]
    str     r0, [r1, #2048]
    str     r0, [r1, #3072]
    str     r0, [r3]
    subs    r0, r0, #1
    bne.n   1b
    bx      lr

    .global m7loops_end
m7loops_end:
