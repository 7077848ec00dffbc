/*
 * arp_memory.h - place functions and data in a board's fast memories
 * (issue 40), through sections the board presets' linker scripts map:
 *
 *   ARP_ITCM_CODE  a function run from the ITCM RAM (stm32f746: 16 KiB at
 *                  0x00000000, zero wait states; RM0385 2.2, 2.3)
 *   ARP_DTCM_DATA  a variable in the DTCM RAM (stm32f746: 64 KiB at
 *                  0x20000000, zero wait states, never cached)
 *   ARP_CCM_DATA   a variable in the CCM data RAM (stm32f407: 64 KiB at
 *                  0x10000000; RM0090 2.3.1: data only, the core cannot
 *                  fetch instructions from it)
 *
 *     #include "arp_memory.h"
 *     ARP_ITCM_CODE int fir(const int *x, int n) { ... }
 *     ARP_DTCM_DATA int coefficients[64] = { ... };
 *
 * Start-up: ITCM code and CCM data are loaded in the flash and copied to
 * their memory before main by the function below, which picolibc's crt0
 * runs from .preinit_array after it has copied .data and cleared .bss
 * (__libc_init_array). DTCM data is the start of .data in the stm32f746
 * script, so crt0's own copy of .data fills it. A variable without an
 * initialiser is zero there too (the sections are copied, not cleared).
 *
 * The copy routine and its .preinit_array entry are one COMDAT group:
 * however many files include this header, the program has one of each.
 * It copies whole words between the symbols the linker script provides
 * (__arp_itcm_source/start/end, __arp_ccm_source/start/end), weak here:
 * under a script without them (another preset) it copies nothing, and a
 * section placed with a macro that script does not map stays in the
 * flash or RAM as an ordinary one.
 *
 * An ITCM function is `noinline` (inlined, it would run from its caller's
 * memory) and `long_call`: the ITCM is 128 MiB below the flash, beyond a
 * BL's reach.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef ARP_MEMORY_H
#define ARP_MEMORY_H

#if defined(__arm__)
#define ARP_ITCM_CODE __attribute__((section(".itcm.text"), noinline, long_call))
#else
#define ARP_ITCM_CODE __attribute__((section(".itcm.text"), noinline))
#endif
#define ARP_DTCM_DATA __attribute__((section(".dtcm.data")))
#define ARP_CCM_DATA __attribute__((section(".ccm.data")))

#if defined(__arm__) && !defined(__ASSEMBLER__)
/* arp_tcm_copy: for each of the ITCM and the CCM, words from its source
 * in the flash to [start, end). Thumb-1 instructions only (ARMv6-M too). */
__asm__(
    "  .pushsection .text.arp_tcm_copy,\"axG\",%progbits,arp_tcm_copy,comdat\n"
    "  .syntax unified\n"
    "  .thumb\n"
    "  .balign 4\n"
    "  .weak arp_tcm_copy\n"
    "  .weak __arp_itcm_source, __arp_itcm_start, __arp_itcm_end\n"
    "  .weak __arp_ccm_source, __arp_ccm_start, __arp_ccm_end\n"
    "  .thumb_func\n"
    "  .type arp_tcm_copy, %function\n"
    "arp_tcm_copy:\n"
    "  push {r4, lr}\n"
    "  ldr r0, =__arp_itcm_source\n"
    "  ldr r1, =__arp_itcm_start\n"
    "  ldr r2, =__arp_itcm_end\n"
    "  bl 1f\n"
    "  ldr r0, =__arp_ccm_source\n"
    "  ldr r1, =__arp_ccm_start\n"
    "  ldr r2, =__arp_ccm_end\n"
    "  bl 1f\n"
    "  pop {r4, pc}\n"
    /* copy words from r0 to r1 until r1 reaches r2 */
    "1: cmp r1, r2\n"
    "  bhs 2f\n"
    "  ldr r3, [r0]\n"
    "  str r3, [r1]\n"
    "  adds r0, #4\n"
    "  adds r1, #4\n"
    "  b 1b\n"
    "2: bx lr\n"
    "  .ltorg\n"
    "  .size arp_tcm_copy, . - arp_tcm_copy\n"
    "  .popsection\n"
    "  .pushsection .preinit_array,\"awG\",%preinit_array,arp_tcm_copy,comdat\n"
    "  .balign 4\n"
    "  .word arp_tcm_copy\n"
    "  .popsection\n");
#endif

#endif
