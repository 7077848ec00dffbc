/*
 * SystemInit and SystemClock_Config as ST's templates do them, written
 * from the reference manuals (see system_stm32.h). The waits are the
 * register polls every CubeMX project makes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "system_stm32.h"
#include <atomium_rp.h>

/* Kernels: the start-up's stretches, timed by tests/tests/board_clocks.rs
 * (none when another program includes this start-up: the public
 * benchmarks' board.c defines STARTUP_NO_SECTIONS). */
enum { SID_HSE = 1, SID_PLL = 2, SID_SWITCH = 3, SID_OVERDRIVE = 4 };
/* Its own names, so that a program including this file keeps the ARP API
 * for its own sections. */
#if defined(STARTUP_NO_SECTIONS)
#define STARTUP_ENTER(sid) ((void)0)
#define STARTUP_LEAVE(sid) ((void)0)
#else
#define STARTUP_ENTER(sid) arp_enter_kernel(1, sid, 0)
#define STARTUP_LEAVE(sid) arp_leave_kernel(1, sid)
#endif

int late_latency;

/* RM0090 6.3.1-6.3.3: back to the reset configuration (HSI on, CFGR 0,
 * HSE, CSS and PLL off, PLLCFGR at its reset value, no interrupts). */
void SystemInit(void)
{
    RCC_CR |= HSION;
    RCC_CFGR = 0;
    RCC_CR &= ~(HSEON | CSSON | PLLON);
    RCC_PLLCFGR = 0x24003010u;
    RCC_CR &= ~HSEBYP;
    RCC_CIR = 0;
}

static void hse_on(void)
{
    STARTUP_ENTER(SID_HSE);
    RCC_CR |= HSEON;
    while (!(RCC_CR & HSERDY)) {
    }
    STARTUP_LEAVE(SID_HSE);
}

static void pll_on(uint32_t pllcfgr)
{
    RCC_PLLCFGR = pllcfgr;
    STARTUP_ENTER(SID_PLL);
    RCC_CR |= PLLON;
    while (!(RCC_CR & PLLRDY)) {
    }
    STARTUP_LEAVE(SID_PLL);
}

static void switch_to_pll(void)
{
    STARTUP_ENTER(SID_SWITCH);
    RCC_CFGR = (RCC_CFGR & ~3u) | SW_PLL;
    while ((RCC_CFGR & SWS_MASK) != SWS_PLL) {
    }
    STARTUP_LEAVE(SID_SWITCH);
}

#if defined(STM32F7)
/* RM0385 4.1.4 "Entering Over-drive mode": ODEN, wait ODRDY; ODSWEN,
 * wait ODSWRDY (PWR_CSR1 bits 16 and 17). */
static void overdrive_on(void)
{
    STARTUP_ENTER(SID_OVERDRIVE);
    PWR_CR |= ODEN;
    while (!(PWR_CSR & ODEN)) {
    }
    PWR_CR |= ODSWEN;
    while (!(PWR_CSR & ODSWEN)) {
    }
    STARTUP_LEAVE(SID_OVERDRIVE);
}

/* 216 MHz from the STM32F746G-DISCO's 25 MHz crystal: PLLM 25, PLLN 432,
 * PLLP /2, PLLQ 9 (RM0385 5.3.2); FLASH_ACR 7 wait states (3.3.2 Table
 * 5, 2.7-3.6 V), ART and prefetch on. */
uint32_t SystemClock_Config(void)
{
    RCC_APB1ENR |= PWREN;
    PWR_CR = (PWR_CR & ~(3u << 14)) | VOS_SCALE1_F7;
    hse_on();
    pll_on(25u | (432u << 6) | (1u << 22) | (9u << 24));
    overdrive_on();
    FLASH_ACR = 7u | PRFTEN | ARTEN;
    RCC_CFGR = (RCC_CFGR & ~0xfcf0u) | PPRE1_DIV4 | PPRE2_DIV2;
    switch_to_pll();
    return 216000000u;
}
#else
/* 168 MHz from the STM32F4DISCOVERY's 8 MHz crystal as ST's SetSysClock
 * does it: PWR clock and VOS Scale 1, HSE, prescalers (AHB /1, APB1 /4,
 * APB2 /2), PLL (PLLM 8, PLLN 336, PLLP /2, PLLQ 7), FLASH_ACR 5 wait
 * states with prefetch and both caches (RM0090 3.5.1 Table 10), then
 * the switch. */
uint32_t SystemClock_Config(void)
{
    hse_on();
    RCC_APB1ENR |= PWREN;
    PWR_CR |= VOS_SCALE1_F4;
    RCC_CFGR |= PPRE1_DIV4 | PPRE2_DIV2;
    pll_on(8u | (336u << 6) | (1u << 22) | (7u << 24));
    if (late_latency) {
        switch_to_pll();
        FLASH_ACR = 5u | PRFTEN | ICEN | DCEN;
        return 168000000u;
    }
    FLASH_ACR = 5u | PRFTEN | ICEN | DCEN;
    switch_to_pll();
    return 168000000u;
}
#endif

#if defined(STM32F7)
/* RM0385 34.8: CR1 0x00 (UE bit 0, TE bit 3), BRR 0x0c, ISR 0x1c (TXE
 * bit 7), TDR 0x28. */
#define USART2_CR1 REG(0x40004400u)
#define USART2_BRR REG(0x4000440cu)
#define USART2_ISR REG(0x4000441cu)
#define USART2_TDR REG(0x40004428u)
#define UE (1u << 0)
#else
/* RM0090 30.6: SR 0x00 (TXE bit 7, TC bit 6), DR 0x04, BRR 0x08, CR1 0x0c
 * (UE bit 13, TE bit 3). */
#define USART2_ISR REG(0x40004400u)
#define USART2_TDR REG(0x40004404u)
#define USART2_BRR REG(0x40004408u)
#define USART2_CR1 REG(0x4000440cu)
#define UE (1u << 13)
#endif
#define TE (1u << 3)
#define TXE (1u << 7)
#define TC (1u << 6)

/* 16x oversampling: BRR = fCK / baud, rounded (RM0090 30.3.4). */
void usart2_setup(uint32_t pclk1_hz, uint32_t baud)
{
    USART2_BRR = (pclk1_hz + baud / 2) / baud;
    USART2_CR1 = UE | TE;
}

void usart2_init(uint32_t pclk1_hz, uint32_t baud)
{
    RCC_APB1ENR |= USART2EN;
    usart2_setup(pclk1_hz, baud);
}

void usart2_puts(const char *s)
{
    for (; *s; s++) {
        while (!(USART2_ISR & TXE)) {
        }
        USART2_TDR = (uint8_t)*s;
    }
    while (!(USART2_ISR & TC)) {
    }
}
