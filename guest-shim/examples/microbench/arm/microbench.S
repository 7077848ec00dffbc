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
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
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

/* kernel K: arp_enter_kernel(1, K, 0); loop_<kind>(); arp_leave_kernel(1, K) */
    .macro kernel sid, fn
#ifndef ARP_NONE
    movs    r0, #1
    movs    r1, #\sid
    movs    r2, #0
    bl      arp_enter_kernel
#endif
    bl      \fn
#ifndef ARP_NONE
    movs    r0, #1
    movs    r1, #\sid
    bl      arp_leave_kernel
#endif
    .endm

    .p2align 2
    .global main
    .type main, %function
    .thumb_func
main:
    push.w  {r4, lr}        /* 32-bit: keeps the -none variant's BLs word aligned */
#ifndef ARP_NONE
    bl      arpsim_add_callbacks
    movs    r0, #1          /* max tid */
    movs    r1, #8          /* max sid */
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
