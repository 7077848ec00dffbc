/*
 * fourkernels - four ARP kernels in one loop, each with its
 * ato_kernel_* label, built with -O2 (issue 39, part 7). GCC moves the
 * kernels' arithmetic and gives the four labels of this loop one address
 * (in its variable tracking), so labels alone cannot tell the kernels
 * apart.
 * ARP_SECTION_NAME (atomium_rp.h) names them in a way the optimiser
 * cannot merge or drop; the -named variant uses it, the default one has
 * the labels only. The -stray variant adds a label no section reaches.
 *
 *   id  kind    label                    ARP_SECTION_NAME
 *    1  kernel  ato_kernel_add           "add"
 *    2  kernel  ato_kernel_fold          "fold"
 *    3  kernel  ato_kernel_mix           "mix"
 *    4  kernel  ato_kernel_step          "step"
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <atomium_rp.h>

#define ROUNDS 100

#ifdef USE_NAMES
ARP_SECTION_NAME(1, "add");
ARP_SECTION_NAME(2, "fold");
#endif

#ifdef STRAY_LABEL
/* A kernel label in a function that enters no section (the -stray
 * variant): it cannot name one, and sim-host says so. */
static int __attribute__((noinline)) stray(int x)
{
ato_kernel_stray:
    return (x * 5) & 7;
}
#else
#define stray(x) 0
#endif

int main(void)
{
#ifdef USE_NAMES
    /* in a function too: the macro works in both places */
    ARP_SECTION_NAME(3, "mix");
    ARP_SECTION_NAME(4, "step");
#endif
    /* The four kernels are the stages of one small computation, on a
     * value the loop carries in a register (it stays below 2^13: no
     * overflow). Nothing ties a stage's instructions to its place between
     * the ARP calls: GCC -O2 moves the arithmetic, and its variable
     * tracking gives all four labels one address, at the loop's head. */
    int acc = 1;

    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 4, arp_record_average, 0, 0, 0, 0, 0);
    for (int r = 0; r < ROUNDS; ++r) {
        arp_enter_kernel(1, 1, r);
ato_kernel_add:
        acc += r;
        arp_leave_kernel(1, 1);
        arp_enter_kernel(1, 2, r);
ato_kernel_fold:
        acc = (acc & 0xfff) + r;
        arp_leave_kernel(1, 2);
        arp_enter_kernel(1, 3, r);
ato_kernel_mix:
        acc ^= acc >> 3;
        arp_leave_kernel(1, 3);
        arp_enter_kernel(1, 4, r);
ato_kernel_step:
        acc += 7 + stray(r);
        arp_leave_kernel(1, 4);
    }
    arp_finish();
    printf("fourkernels: %d rounds, result %d\n", ROUNDS, acc);
    return 0;
}
