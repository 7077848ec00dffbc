/*
 * xip-rp2350 - the RP2350 XIP cache's rules, one loop each
 * (riscv/loops.S), run with the XIP_CTRL value the kernel names. Kernel
 * 2k+1 runs its loop 100 times and kernel 2k+2 the same loop with the same
 * XIP_CTRL 200 times: the difference of their samples is 100 iterations
 * in the steady state (each loop function writes XIP_CTRL and invalidates
 * every line on entry, and sets XIP_CTRL back to its reset value before
 * it returns, so the rest of both samples is the same).
 * tests/tests/rp2350.rs derives each difference by hand.
 *
 * `xip-rp2350 counter` reads XIP's hit counter, `pin` pins a line,
 * `split` sets XIP_CTRL.SPLIT_WAYS and `sram` reads the cache-as-SRAM
 * window, none of which the model has: each run stops naming it.
 * `store` writes the flash, which stops the run (on silicon the store is
 * downgraded to a read, XIP_CTRL.WRITABLE_M0).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <atomium_rp.h>

/* XIP_CTRL (pico-sdk rp2350 regs/xip.h): reset 0x83, EN_SECURE bit 0 */
#define ON 0x83u
#define OFF 0x82u
/* the uncached window: 0x14000000, the cached one's alias */
#define UNCACHED 0x04000000u

typedef void loop_fn(uint32_t ctrl, uint32_t iterations);
extern loop_fn straight_warm, straight_cold, straight_sram, sets2, sets3, setway;
extern loop_fn loads_cached, loads_uncached, loads_uncached_seq, loads_uncached_bytes;
extern void xip_set(uint32_t ctrl);

struct kernel {
    loop_fn *run;
    uint32_t ctrl;
    uint32_t alias;
};

/* in the order of the kernel ids: kernel 2i+1 and 2i+2 run kernels[i] */
static const struct kernel kernels[] = {
    {straight_warm, ON, 0},
    {straight_cold, ON, 0},
    {straight_warm, OFF, 0},
    {straight_warm, ON, UNCACHED},
    {straight_sram, ON, 0},
    {sets2, ON, 0},
    {sets3, ON, 0},
    {setway, ON, 0},
    {loads_cached, ON, 0},
    {loads_uncached, ON, 0},
    {loads_uncached_seq, ON, 0},
    {loads_uncached_bytes, ON, 0},
    {loads_cached, OFF, 0},
};

#define KERNELS (sizeof kernels / sizeof kernels[0])

/* One kernel: the same call site for every one, from the same cache state
 * (every line invalidated: otherwise a line the previous kernel touched
 * last could make the first lines of this sample hit). */
static void __attribute__((noinline)) measure(int sid, const struct kernel *k, uint32_t n)
{
    loop_fn *run = (loop_fn *)((uintptr_t)k->run + k->alias);
    xip_set(ON);
    arp_enter_kernel(1, sid, 0);
    run(k->ctrl, n);
    arp_leave_kernel(1, sid);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[argc - 1] : "";
    if (!strcmp(what, "counter"))
        return (int)*(volatile uint32_t *)0x400c800cu; /* XIP CTR_HIT */
    if (!strcmp(what, "pin")) {
        *(volatile uint8_t *)0x18000007u = 0; /* maintenance op 0x7 */
        return 0;
    }
    if (!strcmp(what, "split")) {
        *(volatile uint32_t *)0x400c8000u = ON | (1u << 9); /* SPLIT_WAYS */
        return 0;
    }
    if (!strcmp(what, "sram"))
        return (int)*(volatile uint32_t *)0x13ffc000u; /* XIP_SRAM_BASE */
    if (!strcmp(what, "store")) {
        *(volatile uint32_t *)0x10000000u = 0; /* the flash is read only */
        return 0;
    }
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 2 * KERNELS, arp_record_all, 0, 0, 0, 0, 0);
    for (unsigned i = 0; i < KERNELS; ++i) {
        measure(2 * i + 1, &kernels[i], 100);
        measure(2 * i + 2, &kernels[i], 200);
    }
    arp_finish();
    printf("xip-rp2350: done\n");
    return 0;
}
