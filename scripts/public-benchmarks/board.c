/*
 * board.c - memory configurations and the timer of the public-benchmarks
 * ports (see board.h). Built with -DBOARD_<target> by ./run.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <atomium_rp.h>
#include "board.h"

#define REG(a) (*(volatile uint32_t *)(a))

/* String tests of the board's own, not the C library's: the library's
 * strcmp is part of Dhrystone's timed work, and comparing a different
 * `cfg=` string with it would leave its branches differently predicted
 * (the Cortex-M7's predictor) in each configuration. */
static int same(const char *a, const char *b)
{
    while (*a && *a == *b)
        ++a, ++b;
    return *a == *b;
}

static int starts(const char *s, const char *prefix)
{
    while (*prefix && *s == *prefix)
        ++s, ++prefix;
    return !*prefix;
}

static inline void barriers(void)
{
    __asm volatile("dsb 0xF\n\tisb 0xF" ::: "memory");
}

#if defined(BOARD_stm32f407)
/* `cfg=st`: the ST-style start-up of guest-shim/examples/stm32-startup
 * (SystemInit, SystemClock_Config to 168 MHz from the 8 MHz HSE, which
 * sets FLASH_ACR 0x705), issue 40: its CoreMark/MHz must equal 0x705's. */
#define STARTUP_NO_SECTIONS
#undef REG
#include "system_stm32.c"

/* FLASH_ACR (RM0090 3.9.1): LATENCY 2:0, PRFTEN 8, ICEN 9, DCEN 10; the
 * configuration is the register's value, `cfg=0x705` (ST's SetSysClock at
 * 168 MHz: 5 wait states, prefetch and both caches on). */
static int configure(const char *cfg)
{
    if (same(cfg, "st")) {
        SystemInit();
        uint32_t hclk = SystemClock_Config();
        printf("board: ST start-up, HCLK %lu Hz, FLASH_ACR = 0x%03lx\n", (unsigned long)hclk,
               (unsigned long)FLASH_ACR);
        return 0;
    }
    char *end;
    unsigned long acr = strtoul(cfg, &end, 0);
    if (*end || acr & ~0x707ul) {
        printf("board: cfg=%s is not a FLASH_ACR value (LATENCY, PRFTEN, ICEN, DCEN)\n", cfg);
        return -1;
    }
    FLASH_ACR = (uint32_t)acr;
    barriers();
    if (FLASH_ACR != acr) {
        printf("board: FLASH_ACR reads 0x%lx, not 0x%lx\n", (unsigned long)FLASH_ACR, acr);
        return -1;
    }
    printf("board: FLASH_ACR = 0x%03lx\n", acr);
    return 0;
}
#elif defined(BOARD_stm32f746)
/* The Cortex-M7's caches, enabled the way CMSIS's SCB_EnableICache and
 * SCB_EnableDCache do (core_cm7.h): `cfg=off`, `cfg=i` (instruction cache),
 * `cfg=id` (both). */
#define SCB_CCR REG(0xE000ED14u)
#define SCB_CCSIDR REG(0xE000ED80u)
#define SCB_CSSELR REG(0xE000ED84u)
#define SCB_ICIALLU REG(0xE000EF50u)
#define SCB_DCISW REG(0xE000EF60u)
#define CCR_DC (1u << 16)
#define CCR_IC (1u << 17)

static void dcache_invalidate_all(void)
{
    SCB_CSSELR = 0;
    barriers();
    uint32_t ccsidr = SCB_CCSIDR;
    for (uint32_t set = ((ccsidr >> 13) & 0x7FFF) + 1; set-- > 0;)
        for (uint32_t way = ((ccsidr >> 3) & 0x3FF) + 1; way-- > 0;)
            SCB_DCISW = ((set << 5) & 0x3FE0u) | ((way << 30) & 0xC0000000u);
    barriers();
}

#if defined(BOARD_ITCM)
/* The ITCM variant (./run): the kernels' code, in section .itcm.text,
 * which the board's linker script (guest-shim/ld/stm32f746.ld) places in
 * the ITCM and loads in the flash, copied to the ITCM before they first
 * run. Word by word through volatile pointers: the ITCM starts at address
 * 0. */
extern uint32_t __arp_itcm_start[], __arp_itcm_end[], __arp_itcm_source[];
static void itcm_load(void)
{
    volatile uint32_t *to = __arp_itcm_start;
    const volatile uint32_t *from = __arp_itcm_source;
    while (to < __arp_itcm_end)
        *to++ = *from++;
    barriers();
    printf("board: %u bytes of code copied to the ITCM\n",
           (unsigned)((char *)__arp_itcm_end - (char *)__arp_itcm_start));
}
#else
static void itcm_load(void) {}
#endif

static int configure(const char *cfg)
{
    itcm_load();
    int ic = same(cfg, "i") || same(cfg, "id");
    int dc = same(cfg, "id");
    if (!ic && !same(cfg, "off")) {
        printf("board: cfg=%s is not one of off, i, id\n", cfg);
        return -1;
    }
    if (ic) {
        barriers();
        SCB_ICIALLU = 0;
        barriers();
        SCB_CCR |= CCR_IC;
        barriers();
    }
    if (dc) {
        dcache_invalidate_all();
        SCB_CCR |= CCR_DC;
        barriers();
    }
    uint32_t want = (ic ? CCR_IC : 0) | (dc ? CCR_DC : 0);
    if ((SCB_CCR & (CCR_IC | CCR_DC)) != want) {
        printf("board: CCR does not read back the cache enable bits\n");
        return -1;
    }
    printf("board: CCR.IC = %d, CCR.DC = %d\n", ic, dc);
    return 0;
}
#elif defined(BOARD_rp2040)
/* The XIP cache (RP2040 datasheet 2.6.3): `cfg=on` (boot2's state, EN
 * set) or `cfg=off` (EN clear: every flash access goes to the QSPI
 * flash); CTRL at 0x14000000, FLUSH at +4. */
#define XIP_CTRL REG(0x14000000u)
#define XIP_FLUSH REG(0x14000004u)
static int configure(const char *cfg)
{
    int on = same(cfg, "on");
    if (!on && !same(cfg, "off")) {
        printf("board: cfg=%s is not one of on, off\n", cfg);
        return -1;
    }
    XIP_FLUSH = 1;
    (void)XIP_FLUSH; /* the read waits for the flush to finish */
    XIP_CTRL = (XIP_CTRL & ~1u) | (on ? 1u : 0u);
    if ((XIP_CTRL & 1u) != (unsigned)on) {
        printf("board: XIP_CTRL.EN does not read back %d\n", on);
        return -1;
    }
    printf("board: XIP_CTRL.EN = %d\n", on);
    return 0;
}
#else
/* A zero-wait target: nothing to set up. */
static int configure(const char *cfg)
{
    if (!same(cfg, "none")) {
        printf("board: this target has no memory configuration (cfg=%s)\n", cfg);
        return -1;
    }
    return 0;
}
#endif

#if __ARM_ARCH >= 7
/* The DWT cycle counter (ARMv7-M C1.8): DEMCR.TRCENA, DWT_CTRL.CYCCNTENA;
 * the Cortex-M7's DWT is locked until DWT_LAR gets the CoreSight key
 * (CPUID part number 0xC27). */
#define CPUID REG(0xE000ED00u)
#define DEMCR REG(0xE000EDFCu)
#define DWT_CTRL REG(0xE0001000u)
#define DWT_CYCCNT REG(0xE0001004u)
#define DWT_LAR REG(0xE0001FB0u)
static void counter_on(void)
{
    DEMCR |= 1u << 24;
    if ((CPUID >> 4 & 0xFFFu) == 0xC27u)
        DWT_LAR = 0xC5ACCE55u;
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;
}
static uint32_t counter(void) { return DWT_CYCCNT; }
#else
static void counter_on(void) {}
static uint32_t counter(void) { return 0; }
#endif

static uint32_t started;
static unsigned long last;

int board_configure(int argc, char **argv)
{
    const char *cfg = "none";
    for (int i = 1; i < argc; ++i)
        if (starts(argv[i], "cfg="))
            cfg = argv[i] + 4;
    if (configure(cfg))
        return -1;
#if !defined(BOARD_NO_DWT)
    counter_on();
#endif
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 1, arp_record_all, 0, 0, 0, 0, 0);
    return 0;
}

void board_timer_start(void)
{
    arp_enter_kernel(1, 1, 0);
#if !defined(BOARD_NO_DWT)
    started = counter();
#endif
}

unsigned long board_timer_stop(void)
{
#if !defined(BOARD_NO_DWT)
    last = counter() - started;
#endif
    arp_leave_kernel(1, 1);
    return last;
}

void board_finish(void)
{
    printf("board: DWT cycles of the timed part %lu\n", last);
    arp_finish();
}
