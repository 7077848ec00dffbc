/*
 * xip - the RP2040 XIP cache's rules, one loop each (arm/loops.S), run
 * with the XIP_CTRL value the kernel names. Kernel 2k+1 runs its loop 100
 * times and kernel 2k+2 the same loop with the same XIP_CTRL 200 times:
 * the difference of their samples is 100 iterations in the steady state
 * (each loop function writes XIP_CTRL and flushes the cache on entry, and
 * sets XIP_CTRL back to its reset value before it returns, so the rest of
 * both samples is the same). tests/tests/xip.rs derives each difference
 * by hand.
 *
 * `xip sram` reads the cache-as-SRAM window and `xip counter` XIP_CTRL's
 * hit counter, which the model does not have: both runs stop naming
 * them.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <atomium_rp.h>

/* XIP_CTRL (pico-sdk regs/xip.h): EN bit 0, ERR_BADWRITE bit 1 */
#define ON 3u
#define OFF 0u

typedef void loop_fn(uint32_t ctrl, uint32_t iterations);
extern loop_fn straight_warm, straight_cold, straight_sram, sets2, sets3;
extern loop_fn loads10, loads11, loads12, loads13, loads12_then_11;
extern void xip_flush(void);

struct kernel {
    loop_fn *run;
    uint32_t ctrl;
};

/* in the order of the kernel ids: kernel 2i+1 and 2i+2 run kernels[i] */
static const struct kernel kernels[] = {
    {straight_warm, ON},
    {straight_cold, ON},
    {straight_warm, OFF},
    {straight_sram, OFF},
    {sets2, ON},
    {sets3, ON},
    {loads10, ON},
    {loads11, ON},
    {loads12, ON},
    {loads13, ON},
    {loads10, OFF},
    {loads12_then_11, ON},
};

#define KERNELS (sizeof kernels / sizeof kernels[0])

/* One kernel: the same call site for every one, from the same cache state
 * (what the previous kernel left is flushed: otherwise a line it touched
 * last could make the first lines of this sample hit). */
static void __attribute__((noinline)) measure(int sid, const struct kernel *k, uint32_t n)
{
    xip_flush();
    arp_enter_kernel(1, sid, 0);
    k->run(k->ctrl, n);
    arp_leave_kernel(1, sid);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[argc - 1] : "";
    if (!strcmp(what, "sram"))
        return (int)*(volatile uint32_t *)0x15000000u; /* XIP_SRAM_BASE */
    if (!strcmp(what, "counter"))
        return (int)*(volatile uint32_t *)0x1400000cu; /* XIP CTR_HIT */
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 2 * KERNELS, arp_record_all, 0, 0, 0, 0, 0);
    for (unsigned i = 0; i < KERNELS; ++i) {
        measure(2 * i + 1, &kernels[i], 100);
        measure(2 * i + 2, &kernels[i], 200);
    }
    arp_finish();
    printf("xip: done\n");
    return 0;
}
