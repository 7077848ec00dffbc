/*
 * arpcalls - an ARP-call-dense guest for the interception benchmark
 * (BENCHMARKS.md, issue 19): PAIRS enter/leave pairs of a kernel around
 * almost no work, so the host's cost per intercepted pair dominates.
 * Built with -DARP_NONE the calls vanish and the same loop remains.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <atomium_rp.h>

#ifndef PAIRS
#define PAIRS 100000
#endif

static volatile unsigned sink;

int main(void)
{
    unsigned i;
    arp_add_callbacks(arp_ullong, 0, 0, 0, 0, 0);
    arp_start(1, 2, arp_record_average, 0, 0, 0, 0, 0);
    arp_enter(1, 2, 0);
    for (i = 0; i < PAIRS; ++i) {
        arp_enter_kernel(1, 1, 0);
        sink += i;
        arp_leave_kernel(1, 1);
    }
    arp_leave(1, 2);
    arp_finish();
    printf("%u pairs\n", (unsigned)PAIRS);
    return 0;
}
