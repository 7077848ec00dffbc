/*
 * The `kernel sid, fn` assembler macro of the assembly guests (microbench,
 * predictor): calls `fn` between arp_enter_kernel(1, sid, 0) and
 * arp_leave_kernel(1, sid); with -DARP_NONE, the call alone. Include it
 * from a preprocessed .S file.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef ARP_KERNEL_ASM_H
#define ARP_KERNEL_ASM_H

#if defined(__riscv)
    .macro kernel sid, fn
#ifndef ARP_NONE
    li      a0, 1
    li      a1, \sid
    li      a2, 0
    jal     ra, arp_enter_kernel
#endif
    jal     ra, \fn
#ifndef ARP_NONE
    li      a0, 1
    li      a1, \sid
    jal     ra, arp_leave_kernel
#endif
    .endm
#else
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
#endif

#endif
