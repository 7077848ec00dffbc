/*
 * flash - the STM32F4 flash accelerator's rules, one loop each
 * (arm/loops.S), run with the FLASH_ACR value the kernel names. Kernel
 * 2k+1 runs its loop 100 times and kernel 2k+2 the same loop with the same
 * FLASH_ACR 200 times: the difference of their samples is 100 iterations
 * in the steady state (each loop function empties the caches on entry and
 * sets FLASH_ACR back to 0 before it returns, so the rest of both samples
 * is the same). tests/tests/flash.rs derives each difference by hand.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <atomium_rp.h>

/* FLASH_ACR (RM0090 3.9.1) */
#define PRFTEN (1u << 8)
#define ICEN (1u << 9)
#define DCEN (1u << 10)

typedef void loop_fn(uint32_t acr, uint32_t iterations);
extern loop_fn straight, lines64, lines65, flash_data, sram_data, ccm_data;

struct kernel {
    loop_fn *run;
    uint32_t acr;
};

/* in the order of the kernel ids: kernel 2i+1 and 2i+2 run kernels[i] */
static const struct kernel kernels[] = {
    {straight, 0},
    {straight, 5},
    {straight, 5 | PRFTEN},
    {straight, 5 | ICEN},
    {straight, 5 | PRFTEN | ICEN},
    {straight, 2},
    {lines64, 5 | ICEN},
    {lines65, 5 | ICEN},
    {lines65, 5},
    {flash_data, 5 | ICEN},
    {flash_data, 5 | ICEN | DCEN},
    {sram_data, 5 | ICEN},
    {ccm_data, 5 | ICEN},
};

#define KERNELS (sizeof kernels / sizeof kernels[0])

/* One kernel: the same call site for every one. */
static void __attribute__((noinline)) measure(int sid, const struct kernel *k, uint32_t n)
{
    arp_enter_kernel(1, sid, 0);
    k->run(k->acr, n);
    arp_leave_kernel(1, sid);
}

/* `flash keyr` and `flash acr16`: the accesses beside the one register
 * modelled (FLASH_KEYR at +4, a 16-bit read of FLASH_ACR), which fault
 * naming them, or read 0 with --peripherals ignore. */
static int beside(const char *what)
{
    if (!strcmp(what, "keyr")) {
        printf("%lu\n", (unsigned long)*(volatile uint32_t *)0x40023C04u);
        return 1;
    }
    if (!strcmp(what, "acr16")) {
        printf("%u\n", (unsigned)*(volatile uint16_t *)0x40023C00u);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && beside(argv[argc - 1]))
        return 0;
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 2 * KERNELS, arp_record_all, 0, 0, 0, 0, 0);
    for (unsigned i = 0; i < KERNELS; ++i) {
        measure(2 * i + 1, &kernels[i], 100);
        measure(2 * i + 2, &kernels[i], 200);
    }
    arp_finish();
    printf("flash: done\n");
    return 0;
}
