/*
 * Micro-benchmarks of public silicon measurements (issue 41): each kernel
 * K is a function loop_<kind> that runs ITER iterations of a sequence
 * measured on silicon; main calls each between arp_enter_kernel(1, K, 0)
 * and arp_leave_kernel(1, K). The counts are derived by hand in
 * tests/tests/silicon_m7_m33.rs, which names the measurement of each.
 *
 * Layout as in examples/microbench: every loop function starts word
 * aligned with a 32-bit PUSH.W, and every loop instruction before the
 * branch is 32-bit, so loop labels are word aligned; main comes last,
 * padded to a 512-byte boundary.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#if defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__)
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

#if defined(__ARM_ARCH_7EM__)
/* Cortex-M7 (jnk0le, doc/cortex_m7.md, STM32H743) */

/* 1: "after executing multiply accumulate instructions vldr.f, vstr.f,
 * vmov instructions cannot be executed from younger opcode slot for 3
 * next cycles": four times VFMA.F32; VMOV; VLDR or VSTR (CMSIS-DSP's FIR
 * inner loop has such triples) */
loop_function loop_mac_then_move
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r3, #ITER
1:  vfma.f32 s8, s1, s2
    vmov.f32 s12, s3
    vldr    s16, [r7]
    vfma.f32 s9, s1, s2
    vmov.f32 s13, s3
    vldr    s17, [r7, #4]
    vfma.f32 s10, s1, s2
    vmov    r0, s3
    vstr    s3, [r7, #8]
    vfma.f32 s11, s1, s2
    vmov    r1, s3
    vstr    s3, [r7, #12]
    loop_end

/* 2: "flag forwarding can reduce branch misprediction penalty from 8 to
 * 6 cycles (in case of subs + bne), instruction generating flags have to
 * be placed at least 3 cycles before branch": SUBS, five independent
 * ADD.W (three cycles), BNE */
loop_function loop_flags_early
    movw    r3, #ITER
1:  subs.w  r3, r3, #1
    add.w   r4, r4, #1
    add.w   r5, r5, #1
    add.w   r6, r6, #1
    add.w   r7, r7, #1
    add.w   r0, r0, #1
    bne     1b
    pop     {r4-r7, pc}

/* 3: the same with the flags set two cycles before the branch ("Effect is
 * not gradual"): SUBS, three ADD.W, BNE */
loop_function loop_flags_late
    movw    r3, #ITER
1:  subs.w  r3, r3, #1
    add.w   r4, r4, #1
    add.w   r5, r5, #1
    add.w   r6, r6, #1
    bne     1b
    pop     {r4-r7, pc}

/* 4: "vdiv.f/vsqrt.f execute in 16/14 cycles, dual issues with one
 * integer instruction and locks pipeline for the rest of the duration":
 * VDIV; VLDR (not integer); VDIV | ADD.W */
loop_function loop_vdiv_pairs
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r3, #ITER
1:  vdiv.f32 s0, s1, s2
    vldr    s4, [r7]
    vdiv.f32 s5, s1, s2
    add.w   r4, r4, #1
    loop_end

#define MAX_SID 4
#else
/* Cortex-M33 (jnk0le, doc/cortex_m33.md, RP2350) */

/* 1: "load to use latency is 2 cycles", "load result can be consumed as
 * MAC accumulate dependency in 1 cycle", "load to store latency is 1
 * cycle": LDR; dependent ADD.W; LDR; MLA on it as the accumulator; LDR;
 * STR of it */
loop_function loop_load_use
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r3, #ITER
1:  ldr.w   r4, [r7]
    add.w   r5, r4, #1
    ldr.w   r6, [r7, #4]
    mla     r0, r1, r2, r6
    ldr.w   r1, [r7, #8]
    str.w   r1, [r7, #12]
    loop_end

/* 2: "vldr.32 has 1 cycle of load to use latency", "load/store double
 * execute in 2 cycles (applies to FPU)", "result latency of every other
 * FP compute instruction (vadd.f32, vmul.f32) is 2 cycles": VLDR; a chain
 * VADD, VADD, VMUL on it */
loop_function loop_fp_latency
    movw    r7, #:lower16:buffer
    movt    r7, #:upper16:buffer
    movw    r3, #ITER
1:  vldr    s4, [r7]
    vadd.f32 s5, s4, s4
    vadd.f32 s6, s5, s5
    vmul.f32 s7, s6, s6
    vstr    s7, [r7, #4]
    loop_end

/* 3: "DSP and SIMD instructions (qsub, uadd8, pkh{bt,tb}) have 2 cycle
 * result latency", "{u,x}xta{b,h,b16} have 2 cycle result latency": a
 * chain UADD8, QSUB, UXTAB (on the extended operand) */
loop_function loop_dsp_latency
    movw    r3, #ITER
1:  uadd8   r4, r5, r6
    qsub    r0, r4, r6
    uxtab   r1, r2, r0
    loop_end

#define MAX_SID 3
#endif

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
    movs    r1, #MAX_SID    /* max sid */
    movs    r2, #1          /* arp_record_all */
    bl      arpsim_start
#endif
#if defined(__ARM_ARCH_7EM__)
    kernel  1, loop_mac_then_move
    kernel  2, loop_flags_early
    kernel  3, loop_flags_late
    kernel  4, loop_vdiv_pairs
#else
    kernel  1, loop_load_use
    kernel  2, loop_fp_latency
    kernel  3, loop_dsp_latency
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
#endif
