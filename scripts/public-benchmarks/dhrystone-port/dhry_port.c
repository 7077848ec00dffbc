/*
 * dhry_port.c - sim-host's port layer for Dhrystone 2.1 (Weicker's C
 * version, dhry_1.c and dhry_2.c, never in this repository: ./run takes
 * the path of a checkout). ./run builds dhry_1.c with -Dmain=dhry_main
 * -DMSC_CLOCK -DCLK_TCK=1000000, so Dhrystone times its loop with the
 * clock() below, which counts cycles as microseconds: its "Dhrystones per
 * Second" are Dhrystones per million cycles (per MHz). The number of runs
 * Dhrystone asks for is the guest argument `runs=N` (default 20000): the
 * scanf below answers its one question, so no run needs a console input
 * (qemu's semihosting gives none).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "board.h"

int dhry_main();

static int runs = 20000;

/* Dhrystone's one scanf: scanf ("%d", &n), the number of runs. */
int scanf(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    *va_arg(ap, int *) = runs;
    va_end(ap);
    printf("%d\n", runs);
    return 1;
}

/* Dhrystone calls clock() twice: before and after its loop. */
clock_t clock(void)
{
    static int calls;
    if (calls++ == 0) {
        board_timer_start();
        return 0;
    }
    return (clock_t)board_timer_stop();
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i)
        if (!strncmp(argv[i], "runs=", 5))
            runs = atoi(argv[i] + 5);
    if (runs <= 0 || board_configure(argc, argv) != 0)
        return 2;
    dhry_main();
    board_finish();
    return 0;
}
