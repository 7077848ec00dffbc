/*
 * cmdline - what a guest sees of its command line, and ARP's call order
 * (issue 39; README "Using it" documents both):
 *
 *   cmdline [args...]        prints argc and every argv[i]; then records
 *                            one kernel sample and exits 0
 *   cmdline early [args...]  the same, but enters a section before
 *                            arp_start: the run stops there (exit 121)
 *
 * picolibc's semihosting start-up (--crt0=semihost) asks the host for the
 * command line (SYS_GET_CMDLINE) and splits it at spaces into argv[1..];
 * argv[0] is its own constant.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>
#include <atomium_rp.h>

int main(int argc, char **argv)
{
    int early = 0;

    printf("argc=%d\n", argc);
    for (int i = 0; i < argc; ++i) {
        printf("argv[%d]=\"%s\"\n", i, argv[i]);
        early |= strcmp(argv[i], "early") == 0;
    }
    fflush(stdout);
    if (early)
        arp_enter(1, 1, 0);
    arp_start(1, 1, arp_record_average, 0, 0, 0, 0, 0);
    arp_enter_kernel(1, 1, 0);
    printf("in a kernel\n");
    arp_leave_kernel(1, 1);
    arp_finish();
    return 0;
}
