/*
 * The loops of the xip example (xip.c), Thumb-1 for the Cortex-M0+. Each
 * function f(ctrl, n): sets XIP_CTRL = ctrl and flushes the cache
 * (xip_set), runs its loop n times, sets XIP_CTRL = 3 (its reset value)
 * and returns. Every loop head is at the start of an 8-byte cache line
 * (.p2align 3). tests/tests/xip.rs derives the cost of one iteration of
 * each.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
    .syntax unified
    .cpu cortex-m0plus
    .thumb

    .macro loop_function name
    .p2align 3
    .global \name
    .type \name, %function
    .thumb_func
\name:
    push    {r4-r7, lr}
    mov     r4, r1
    ldr     r2, =xip_set
    blx     r2
    mov     r3, r4
    .endm

    .macro loop_return
    movs    r0, #3
    ldr     r2, =xip_set
    blx     r2
    pop     {r4-r7, pc}
    .endm

    .text

/* XIP_CTRL = r0, then FLUSH = 1 (pico-sdk regs/xip.h: 0x14000000, +4) */
    .p2align 3
    .type xip_set, %function
    .thumb_func
xip_set:
    ldr     r2, =0x14000000
    str     r0, [r2]
    movs    r1, #1
    str     r1, [r2, #4]
    bx      lr
    .ltorg

/* FLUSH = 1: measure() calls it before each sample starts, so that both
 * samples of a pair start from the same cache state */
    .p2align 3
    .global xip_flush
    .type xip_flush, %function
    .thumb_func
xip_flush:
    ldr     r2, =0x14000004
    movs    r1, #1
    str     r1, [r2]
    bx      lr
    .ltorg

/* STR r5 to FLUSH (1: flush, 0: nothing), 13 ADDS, SUBS, BNE: 16
 * instructions, 32 bytes, four lines */
    .macro straight_loop name, flush
loop_function \name
    ldr     r6, =0x14000004
    movs    r5, #\flush
    .p2align 3
1:  str     r5, [r6]
    .rept 13
    adds    r4, r4, #1
    .endr
    subs    r3, r3, #1
    bne     1b
    loop_return
    .ltorg
    .endm

straight_loop straight_warm, 0
straight_loop straight_cold, 1

/* lines 8 KiB apart share a set (1024 sets of 8-byte lines): sets2 runs
 * two such lines in turn, sets3 three */
loop_function sets2
    bl      2f
    .ltorg
    .balign 8192
2:  subs    r3, r3, #1
    beq     3f
    bl      4f
3:  loop_return
    .ltorg
    .balign 8192
4:  bl      2b

loop_function sets3
    bl      2f
    .ltorg
    .balign 8192
2:  subs    r3, r3, #1
    beq     3f
    bl      4f
3:  loop_return
    .ltorg
    .balign 8192
4:  bl      5f
    .balign 8192
5:  bl      2b

/* four loads from four lines of a table in the flash, through the alias
 * at table + offset, then SUBS, BNE: 12 bytes, two lines */
    .macro loads_loop name, offset
loop_function \name
    ldr     r7, =table + \offset
    .p2align 3
1:  ldr     r4, [r7]
    ldr     r5, [r7, #8]
    ldr     r6, [r7, #16]
    ldr     r0, [r7, #24]
    subs    r3, r3, #1
    bne     1b
    loop_return
    .ltorg
    .endm

loads_loop loads10, 0
loads_loop loads11, 0x01000000
loads_loop loads12, 0x02000000
loads_loop loads13, 0x03000000

/* one line read through 0x12 (always read, allocated), then through 0x11
 * (looked up: it hits); 8 bytes, one line */
loop_function loads12_then_11
    ldr     r7, =table + 0x02000000
    ldr     r6, =table + 0x01000000
    .p2align 3
1:  ldr     r4, [r7]
    ldr     r5, [r6]
    subs    r3, r3, #1
    bne     1b
    loop_return
    .ltorg

/* the straight loop in the SRAM (copied there with .data): no XIP access */
    .section .data
straight_loop straight_sram, 0

    .section .rodata
    .p2align 3
table:
    .rept 8
    .word 0x12345678
    .endr
