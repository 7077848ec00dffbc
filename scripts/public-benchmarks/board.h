/*
 * board.h - what the public-benchmarks ports (CoreMark, Dhrystone) need
 * from the board: its memory system set up as a named configuration, and
 * a timer around the timed part.
 *
 * The configuration is one guest argument, `cfg=<name>` (see board.c for
 * each board's names); the firmware sets the memory system through the
 * registers the silicon has (FLASH_ACR, the Cortex-M7's CCR and cache
 * maintenance registers, XIP_CTRL), as a board's start-up code does.
 *
 * The timer: sim-host's ARP section 1 (arp_enter_kernel / arp_leave_kernel,
 * intercepted, so they cost the guest nothing) is the measurement the
 * script reads; the DWT cycle counter, where the core has one (ARMv7-M),
 * is the guest's own reading of the same interval, printed as a check.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef PUBLIC_BENCHMARKS_BOARD_H
#define PUBLIC_BENCHMARKS_BOARD_H

/* Set up the memory configuration named by a `cfg=` argument (none: the
 * board's reset state); 0 on success, -1 (after a message) otherwise. */
int board_configure(int argc, char **argv);
void board_timer_start(void);
/* Cycles since board_timer_start by the DWT counter, 0 without one. */
unsigned long board_timer_stop(void);
/* Print the guest's own cycle count and close the ARP session. */
void board_finish(void);

#endif
