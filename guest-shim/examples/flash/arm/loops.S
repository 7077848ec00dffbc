/*
 * The loops of the flash example (flash.c). Each function f(acr, n):
 * empties the ART's caches (FLASH_ACR = ICRST | DCRST, caches disabled,
 * RM0090 3.9.1), sets FLASH_ACR = acr, runs its loop n times, sets
 * FLASH_ACR = 0 and returns. Every loop head is at the start of a 128-bit
 * flash line (.p2align 4). tests/tests/flash.rs derives the cost of one
 * iteration of each.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
    .syntax unified
    .thumb
    .text

    .macro loop_function name
    .p2align 4
    .global \name
    .type \name, %function
    .thumb_func
\name:
    push    {r4-r7, lr}
    mov     r4, r1
    bl      acr_set
    mov     r3, r4
    .endm

    .macro loop_return
    movs    r0, #0
    bl      acr_set
    pop     {r4-r7, pc}
    .endm

/* FLASH_ACR = ICRST | DCRST (caches off: emptied), then r0 */
    .p2align 4
    .type acr_set, %function
    .thumb_func
acr_set:
    movw    r2, #0x3C00
    movt    r2, #0x4002
    movw    r1, #0x1800
    str     r1, [r2]
    str     r0, [r2]
    bx      lr

/* 16 x ADD.W (4 lines of 4), then SUBS, BNE in a fifth line */
loop_function straight
    .p2align 4
1:  .rept 4
    add.w   r4, r4, #1
    add.w   r5, r5, #1
    add.w   r6, r6, #1
    add.w   r7, r7, #1
    .endr
    subs    r3, r3, #1
    bne     1b
    loop_return

/* lines<N>: N - 1 taken B, each at the start of every other line (32
 * bytes apart, so no line follows the previous one), then SUBS, BNE.W
 * in the N-th line: N lines per iteration, never sequential */
    .macro lines_loop name, branches
loop_function \name
    .p2align 5
0:  .rept \branches
    b       1f
    .p2align 5
1:
    .endr
    subs    r3, r3, #1
    bne.w   0b
    loop_return
    .endm

lines_loop lines64, 63
lines_loop lines65, 64

/* four loads from four lines of a table in the flash (D-Code), then SUBS,
 * BNE: 12 bytes, one line */
loop_function flash_data
    movw    r7, #:lower16:table
    movt    r7, #:upper16:table
    .p2align 4
1:  ldr     r4, [r7]
    ldr     r5, [r7, #16]
    ldr     r6, [r7, #32]
    ldr     r0, [r7, #48]
    subs    r3, r3, #1
    bne     1b
    loop_return

/* the same four loads from the SRAM (a .bss table) and from the CCM data
 * RAM (0x10000000): no wait states, no flash access */
    .macro ram_loop name, lower, upper
loop_function \name
    movw    r7, \lower
    movt    r7, \upper
    .p2align 4
1:  ldr     r4, [r7]
    ldr     r5, [r7, #16]
    ldr     r6, [r7, #32]
    ldr     r0, [r7, #48]
    subs    r3, r3, #1
    bne     1b
    loop_return
    .endm

ram_loop sram_data, #:lower16:ram_table, #:upper16:ram_table
ram_loop ccm_data, #0, #0x1000

    .bss
    .p2align 4
ram_table:
    .space 64

    .section .rodata
    .p2align 4
table:
    .rept 16
    .word 0x12345678
    .endr
