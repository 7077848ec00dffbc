/*
 * m7cache - the Cortex-M7 L1 caches' rules (sim-host/src/model/l1cache.rs),
 * one loop each (arm/loops.S), run with the caches the kernel names.
 * Kernel 2i+1 runs its loop 100 times and kernel 2i+2 the same loop 200
 * times: the difference of their samples is 100 iterations in the steady
 * state. The caches are set up before each sample (both disabled, cleaned
 * and invalidated, then enabled as the kernel says, by CMSIS's sequences:
 * ICIALLU then CCR.IC; CSSELR, CCSIDR, DCISW over every set and way, then
 * CCR.DC), so both samples start from the same state; a short run of the
 * loop before it trains the branch predictor the same way for both. The
 * loops run from
 * the AXI flash or from a copy of their section in the ITCM, which has no
 * fetch stall: the reference. tests/tests/m7cache.rs derives each
 * difference by hand.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <atomium_rp.h>

/* The System Control Block's cache registers (ARMv7-M B3.2, Cortex-M7 TRM) */
#define REG(a) (*(volatile uint32_t *)(a))
#define SCB_CCR REG(0xE000ED14)
#define SCB_CCSIDR REG(0xE000ED80)
#define SCB_CSSELR REG(0xE000ED84)
#define SCB_ICIALLU REG(0xE000EF50)
#define SCB_DCISW_ADDR 0xE000EF60u
#define SCB_DCCISW_ADDR 0xE000EF74u
#define CCR_DC (1u << 16)
#define CCR_IC (1u << 17)

#define IC 1
#define DC 2
#define ITCM 4 /* run the copy in the ITCM */

typedef void loop_fn(uint32_t iterations, volatile uint32_t *base);
extern loop_fn straight, conflict2, conflict3, dload4, dload5, dstore4, dstore5;
extern char m7loops_start[], m7loops_end[];

/* the copy of the loops' section: 4 KiB aligned, as in the flash */
#define ITCM_COPY 0x1000u
#define SRAM_BUF ((volatile uint32_t *)0x20020000u) /* SRAM1: write-back cached */
static uint32_t dtcm_buf[1280] __attribute__((aligned(32))); /* in DTCM (.bss) */
static const uint32_t flash_table[32] __attribute__((aligned(32))) = {1, 2, 3};

struct kernel {
    loop_fn *run;
    unsigned config;
    volatile uint32_t *data;
};

#define FLASH ((volatile uint32_t *)flash_table)
#define DTCM ((volatile uint32_t *)dtcm_buf)

/* in the order of the kernel ids: kernel 2i+1 and 2i+2 run kernels[i];
 * the first pair only trains the predictor on measure's own call sites
 * (the test does not check it) */
static const struct kernel kernels[] = {
    {straight, 0, 0},
    {straight, 0, 0},
    {straight, IC, 0},
    {straight, ITCM, 0},
    {conflict2, IC, 0},
    {conflict2, 0, 0},
    {conflict2, ITCM, 0},
    {conflict3, IC, 0},
    {conflict3, 0, 0},
    {conflict3, ITCM, 0},
    {dload4, ITCM | DC, DTCM},
    {dload4, ITCM | DC, SRAM_BUF},
    {dload4, ITCM, SRAM_BUF},
    {dload4, ITCM | DC, FLASH},
    {dload4, ITCM, FLASH},
    {dload5, ITCM | DC, DTCM},
    {dload5, ITCM | DC, SRAM_BUF},
    {dstore5, ITCM | DC, DTCM},
    {dstore5, ITCM | DC, SRAM_BUF},
    {dstore4, ITCM | DC, DTCM},
    {dstore4, ITCM | DC, SRAM_BUF},
    {dstore5, ITCM, SRAM_BUF},
};

#define KERNELS (sizeof kernels / sizeof kernels[0])

static inline void barriers(void)
{
    __asm volatile("dsb 0xF\n\tisb 0xF" ::: "memory");
}

/* CMSIS's set/way loop (SCB_EnableDCache, SCB_CleanInvalidateDCache): the
 * operation at `op` on every set and way the CCSIDR of the data cache
 * gives */
static void dcache_every_set_and_way(uint32_t op)
{
    SCB_CSSELR = 0; /* the level 1 data cache */
    barriers();
    uint32_t ccsidr = SCB_CCSIDR;
    uint32_t sets = (ccsidr >> 13) & 0x7FFF;
    do {
        uint32_t ways = (ccsidr >> 3) & 0x3FF;
        do {
            REG(op) = ((sets << 5) & 0x3FE0u) | ((ways << 30) & 0xC0000000u);
        } while (ways-- != 0);
    } while (sets-- != 0);
    barriers();
}

static void caches_off(void)
{
    barriers();
    SCB_CCR &= ~(CCR_IC | CCR_DC);
    SCB_ICIALLU = 0;
    dcache_every_set_and_way(SCB_DCCISW_ADDR);
}

/* Whether CCR reads back the enable bits the kernel asked for */
static int caches_are(unsigned config)
{
    uint32_t want = (config & IC ? CCR_IC : 0) | (config & DC ? CCR_DC : 0);
    return (SCB_CCR & (CCR_IC | CCR_DC)) == want;
}

static void caches_on(unsigned config)
{
    if (config & IC) {
        barriers();
        SCB_ICIALLU = 0;
        barriers();
        SCB_CCR |= CCR_IC;
        barriers();
    }
    if (config & DC) {
        dcache_every_set_and_way(SCB_DCISW_ADDR);
        SCB_CCR |= CCR_DC;
        barriers();
    }
}

static loop_fn *placed(const struct kernel *k)
{
    if (!(k->config & ITCM))
        return k->run;
    uintptr_t offset = (uintptr_t)k->run - (uintptr_t)m7loops_start;
    return (loop_fn *)(ITCM_COPY + offset);
}

/* The one indirect call of a loop: the predictor's target buffer, which
 * remembers where each call went, then holds this loop's address for
 * both samples (the warm-up run calls it from here too). */
static void __attribute__((noinline)) call(loop_fn *run, uint32_t n, volatile uint32_t *data)
{
    run(n, data);
}

/* One kernel: the same call site for every one. */
static int __attribute__((noinline)) measure(int sid, const struct kernel *k, uint32_t n)
{
    loop_fn *run = placed(k);
    /* the branch predictor (the cortex-m7 table's) learns the loop's
     * branches the same way before either sample: 7 taken back edges
     * saturate its counters whatever the kernel before left */
    call(run, 8, k->data);
    caches_off();
    caches_on(k->config);
    if (!caches_are(k->config))
        return 0;
    arp_enter_kernel(1, sid, 0);
    call(run, n, k->data);
    arp_leave_kernel(1, sid);
    return 1;
}

int main(void)
{
    size_t size = (size_t)(m7loops_end - m7loops_start);
    if (size > 0x3000 || (uintptr_t)m7loops_start % 4096 != 0 ||
        (uintptr_t)(dtcm_buf + 1280) > 0x20010000u) {
        printf("m7cache: the loops or the DTCM buffer are misplaced\n");
        return 1;
    }
    memcpy((void *)ITCM_COPY, m7loops_start, size);
    barriers();
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 2 * KERNELS, arp_record_all, 0, 0, 0, 0, 0);
    for (unsigned i = 0; i < KERNELS; ++i) {
        if (!measure(2 * i + 1, &kernels[i], 100) || !measure(2 * i + 2, &kernels[i], 200)) {
            printf("m7cache: CCR does not read back the cache enable bits\n");
            return 1;
        }
    }
    caches_off();
    arp_finish();
    printf("m7cache: done\n");
    return 0;
}
