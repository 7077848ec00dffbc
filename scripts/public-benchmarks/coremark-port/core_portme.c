/*
 * core_portme.c - sim-host's port layer for EEMBC CoreMark (see
 * core_portme.h): the seeds, the timer (board.c: sim-host's ARP section
 * and the DWT counter) and the board's memory configuration.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include "coremark.h"
#include "board.h"

#ifndef ITERATIONS
#define ITERATIONS 0
#endif

/* The seeds CoreMark reads at run time (its SEED_VOLATILE method); the
 * values of its performance, validation and profile runs. */
#if PERFORMANCE_RUN
volatile ee_s32 seed1_volatile = 0x0;
volatile ee_s32 seed2_volatile = 0x0;
volatile ee_s32 seed3_volatile = 0x66;
#elif VALIDATION_RUN
volatile ee_s32 seed1_volatile = 0x3415;
volatile ee_s32 seed2_volatile = 0x3415;
volatile ee_s32 seed3_volatile = 0x66;
#else
volatile ee_s32 seed1_volatile = 0x8;
volatile ee_s32 seed2_volatile = 0x8;
volatile ee_s32 seed3_volatile = 0x8;
#endif
volatile ee_s32 seed4_volatile = ITERATIONS;
volatile ee_s32 seed5_volatile = 0;

ee_u32 default_num_contexts = 1;

static CORE_TICKS elapsed;

void start_time(void)
{
    board_timer_start();
}

void stop_time(void)
{
    elapsed = (CORE_TICKS)board_timer_stop();
}

CORE_TICKS get_time(void)
{
    return elapsed;
}

/* cycles as microseconds: CoreMark's iterations per "second" are its
 * iterations per million cycles, CoreMark/MHz */
secs_ret time_in_secs(CORE_TICKS ticks)
{
    return (secs_ret)ticks / 1000000.0;
}

void portable_init(core_portable *p, int *argc, char *argv[])
{
    if (board_configure(*argc, argv) != 0)
        exit(2);
    if (sizeof(ee_ptr_int) != sizeof(ee_u8 *) || sizeof(ee_u32) != 4)
        printf("port: ee_ptr_int or ee_u32 has the wrong size\n");
    p->portable_id = 1;
}

void portable_fini(core_portable *p)
{
    board_finish();
    p->portable_id = 0;
}
