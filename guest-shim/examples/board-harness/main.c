/*
 * A fixed workload between the board layer's timer calls, as the CoreMark
 * port's start_time/stop_time put CoreMark's iterations there.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include "board.c"

static uint32_t workload(void)
{
    uint32_t x = 1;
    for (int i = 0; i < 2000; ++i)
        x = x * 1664525u + 1013904223u;
    return x;
}

int main(int argc, char **argv)
{
    if (board_configure(argc, argv))
        return 1;
    board_timer_start();
    uint32_t x = workload();
    board_timer_stop();
    printf("workload 0x%08lx\n", (unsigned long)x);
    board_finish();
    return 0;
}
