/*
 * tcm - functions and data placed in a board's fast memories with the
 * SDK's section attributes (guest-shim/include/arp_memory.h, issue 40).
 *
 * stm32f746 (-DTCM_STM32F746): `itcm_straight` (arm/loops.S, section
 * .itcm.text: what ARP_ITCM_CODE gives) runs from the ITCM after the
 * start-up copy, `flash_straight` is the same loop in the flash (AXIM).
 * Kernel 2i+1 runs a loop 100 times and kernel 2i+2 200 times: from the
 * ITCM and from the flash with the caches off (the flash read on every
 * fetch), then with the I-cache on and warm; tests/tests/tcm.rs derives
 * the differences. A C function
 * placed with ARP_ITCM_CODE and a variable with ARP_DTCM_DATA are checked
 * for where they landed and what they hold.
 *
 * stm32f407 (-DTCM_STM32F407): a table placed with ARP_CCM_DATA is in the
 * CCM (0x10000000) and holds its initial values (the start-up copy).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <atomium_rp.h>
#include <arp_memory.h>

static int failed(const char *what)
{
    printf("tcm: %s\n", what);
    return 1;
}

#if defined(TCM_STM32F746)
#define REG(a) (*(volatile uint32_t *)(a))
#define SCB_CCR REG(0xE000ED14)
#define SCB_ICIALLU REG(0xE000EF50)
#define CCR_IC (1u << 17)

typedef void loop_fn(uint32_t iterations);
extern loop_fn flash_straight, itcm_straight;

ARP_DTCM_DATA uint32_t dtcm_value = 0x5eed1234u;
ARP_DTCM_DATA uint32_t dtcm_zero;

/* a C function in the ITCM: what it returns proves it ran */
ARP_ITCM_CODE uint32_t itcm_sum(const uint32_t *v, int n)
{
    uint32_t s = 0;
    for (int i = 0; i < n; ++i)
        s += v[i];
    return s;
}

static inline void barriers(void)
{
    __asm volatile("dsb 0xF\n\tisb 0xF" ::: "memory");
}

static void icache(int on)
{
    barriers();
    SCB_CCR &= ~CCR_IC;
    SCB_ICIALLU = 0;
    barriers();
    if (on) {
        SCB_CCR |= CCR_IC;
        barriers();
    }
}

/* the one call site of every loop (the predictor's target buffer holds
 * the loop's address for both samples) */
static void __attribute__((noinline)) call(loop_fn *run, uint32_t n)
{
    run(n);
}

static void __attribute__((noinline)) measure(int sid, loop_fn *run, int cached, uint32_t n)
{
    icache(cached);
    /* warm the predictor (and, cached, the I-cache) the same way for
     * both samples */
    call(run, 8);
    arp_enter_kernel(1, sid, 0);
    call(run, n);
    arp_leave_kernel(1, sid);
}

/* in kernel order (2i+1, 2i+2); the first pair only trains the branch
 * predictor on the call sites (the test does not check it) */
static loop_fn *const loops[] = {itcm_straight, itcm_straight, flash_straight, flash_straight,
                                 itcm_straight};
static const int cached[] = {0, 0, 0, 1, 1};
#define PAIRS (sizeof cached / sizeof cached[0])

int main(void)
{
    static const uint32_t v[4] = {1, 2, 3, 4};
    if ((uintptr_t)itcm_straight >= 0x4000 || (uintptr_t)itcm_sum >= 0x4000)
        return failed("the ITCM code is not in the ITCM");
    if ((uintptr_t)flash_straight < 0x08000000u)
        return failed("the flash loop is not in the flash");
    if ((uintptr_t)&dtcm_value - 0x20000000u >= 0x10000u ||
        (uintptr_t)&dtcm_zero - 0x20000000u >= 0x10000u)
        return failed("the DTCM data is not in the DTCM");
    if (dtcm_value != 0x5eed1234u || dtcm_zero != 0)
        return failed("the DTCM data was not initialised");
    if (itcm_sum(v, 4) != 10)
        return failed("the ITCM function returned a wrong sum");
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 2 * PAIRS, arp_record_all, 0, 0, 0, 0, 0);
    for (unsigned i = 0; i < PAIRS; ++i) {
        measure(2 * i + 1, loops[i], cached[i], 100);
        measure(2 * i + 2, loops[i], cached[i], 200);
    }
    icache(0);
    arp_finish();
    printf("tcm: done\n");
    return 0;
}
#elif defined(TCM_STM32F407)
ARP_CCM_DATA uint32_t ccm_table[4] = {11, 22, 33, 44};
ARP_CCM_DATA uint32_t ccm_zero;

int main(void)
{
    if ((uintptr_t)ccm_table - 0x10000000u >= 0x10000u ||
        (uintptr_t)&ccm_zero - 0x10000000u >= 0x10000u)
        return failed("the CCM data is not in the CCM");
    uint32_t sum = 0;
    for (int i = 0; i < 4; ++i)
        sum += ccm_table[i];
    if (sum != 110 || ccm_zero != 0)
        return failed("the CCM data was not initialised");
    ccm_table[0] = 7; /* the CCM is writable */
    if (ccm_table[0] != 7)
        return failed("a write to the CCM did not stick");
    printf("tcm: done\n");
    return 0;
}
#else
int main(void)
{
    return failed("built for a target without a placement test");
}
#endif
