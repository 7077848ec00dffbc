/*
 * art - the STM32F746's ART accelerator on the ITCM interface (RM0385
 * 3.3; sim-host/src/model/memsys.rs, kind stm32f7-art), one loop each
 * (arm/loops.S), run with the FLASH_ACR its kernel names. Kernel 2i+1
 * runs its loop 100 times and kernel 2i+2 the same loop 200 times: the
 * difference of their samples is 100 iterations in the steady state.
 * Before each sample the ART is disabled and reset (ARTRST), FLASH_ACR
 * set to the kernel's value, and the loop run 8 times through the same
 * call site (the ART and the branch predictor warm the same way for both
 * samples). The loops run through the flash's ITCM view (0x00200000 +
 * their offset in the flash: the same bytes) or from a copy in the ITCM
 * RAM, the reference without fetch stalls; data is read through the ITCM
 * view or from the DTCM. tests/tests/art.rs derives each difference.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <atomium_rp.h>

#define REG(a) (*(volatile uint32_t *)(a))
#define FLASH_ACR REG(0x40023C00u)
#define ACR_LATENCY_7 7u
#define ACR_PRFTEN (1u << 8)
#define ACR_ARTEN (1u << 9)
#define ACR_ARTRST (1u << 11)

#define AXIM_FLASH 0x08000000u
#define ITCM_FLASH 0x00200000u
#define ITCM_COPY 0x1000u /* in the ITCM RAM, 4 KiB aligned */

typedef void loop_fn(uint32_t iterations, volatile uint32_t *base);
extern loop_fn straight, jumps64, jumps65, dload4;
extern char artloops_start[], artloops_end[];

/* four lines of data in the flash */
static const uint32_t table[32] __attribute__((aligned(32))) = {1, 2, 3, 4};
static uint32_t dtcm_table[32] __attribute__((aligned(32))); /* .bss: DTCM */

#define RAM 0  /* the copy in the ITCM RAM */
#define ITCM 1 /* through the flash's ITCM view */

struct kernel {
    loop_fn *run;
    unsigned where;
    uint32_t acr;
    volatile uint32_t *data;
};

#define FLASH_DATA ((volatile uint32_t *)((uintptr_t)table - AXIM_FLASH + ITCM_FLASH))
#define DTCM_DATA ((volatile uint32_t *)dtcm_table)

/* in the order of the kernel ids: kernel 2i+1 and 2i+2 run kernels[i];
 * the first pair only trains the predictor on the call sites (the test
 * does not check it) */
static const struct kernel kernels[] = {
    {straight, RAM, ACR_LATENCY_7, 0},
    {straight, RAM, ACR_LATENCY_7, 0},
    {straight, ITCM, ACR_LATENCY_7, 0},
    {straight, ITCM, ACR_LATENCY_7 | ACR_PRFTEN, 0},
    {straight, ITCM, ACR_LATENCY_7 | ACR_ARTEN, 0},
    {jumps64, RAM, ACR_LATENCY_7, 0},
    {jumps64, ITCM, ACR_LATENCY_7 | ACR_ARTEN, 0},
    {jumps65, RAM, ACR_LATENCY_7, 0},
    {jumps65, ITCM, ACR_LATENCY_7 | ACR_ARTEN, 0},
    {dload4, RAM, ACR_LATENCY_7, DTCM_DATA},
    {dload4, RAM, ACR_LATENCY_7, FLASH_DATA},
    {dload4, RAM, ACR_LATENCY_7 | ACR_ARTEN, FLASH_DATA},
};

#define KERNELS (sizeof kernels / sizeof kernels[0])

static loop_fn *placed(const struct kernel *k)
{
    uintptr_t offset = (uintptr_t)k->run - (uintptr_t)artloops_start;
    uintptr_t base = k->where == RAM ? ITCM_COPY : (uintptr_t)artloops_start - AXIM_FLASH + ITCM_FLASH;
    return (loop_fn *)(base + offset);
}

/* The one call of every loop. */
static void __attribute__((noinline)) call(loop_fn *run, uint32_t n, volatile uint32_t *data)
{
    run(n, data);
}

static int __attribute__((noinline)) measure(int sid, const struct kernel *k, uint32_t n)
{
    loop_fn *run = placed(k);
    FLASH_ACR = ACR_LATENCY_7 | ACR_ARTRST; /* the ART off and emptied */
    FLASH_ACR = k->acr;
    if (FLASH_ACR != k->acr)
        return 0;
    call(run, 8, k->data);
    arp_enter_kernel(1, sid, 0);
    call(run, n, k->data);
    arp_leave_kernel(1, sid);
    return 1;
}

int main(void)
{
    size_t size = (size_t)(artloops_end - artloops_start);
    if (size > 0x3000 || (uintptr_t)artloops_start % 4096 != 0 ||
        (uintptr_t)artloops_start < AXIM_FLASH) {
        printf("art: the loops are misplaced\n");
        return 1;
    }
    /* the same bytes through both interfaces */
    if (memcmp((const void *)((uintptr_t)artloops_start - AXIM_FLASH + ITCM_FLASH), artloops_start,
               size) != 0) {
        printf("art: the flash's ITCM view differs from its AXIM view\n");
        return 1;
    }
    memcpy((void *)ITCM_COPY, artloops_start, size);
    __asm volatile("dsb 0xF\n\tisb 0xF" ::: "memory");
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 2 * KERNELS, arp_record_all, 0, 0, 0, 0, 0);
    for (unsigned i = 0; i < KERNELS; ++i) {
        if (!measure(2 * i + 1, &kernels[i], 100) || !measure(2 * i + 2, &kernels[i], 200)) {
            printf("art: FLASH_ACR does not read back what was written\n");
            return 1;
        }
    }
    arp_finish();
    printf("art: done\n");
    return 0;
}
