/*
 * The registers ST's start-up code uses, from RM0090 (STM32F405/407,
 * Rev 19) and RM0385 (STM32F74x/75x, Rev 8): RCC (RM0090 6.3, RM0385
 * 5.3), PWR (5.4, 4.4), FLASH_ACR (3.9.1, 3.7.1) and the USART (30.6,
 * 34.8). Written here; no ST source is used.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef SYSTEM_STM32_H
#define SYSTEM_STM32_H
#include <stdint.h>

#define REG(addr) (*(volatile uint32_t *)(addr))

#define RCC_BASE 0x40023800u
#define RCC_CR REG(RCC_BASE + 0x00)
#define RCC_PLLCFGR REG(RCC_BASE + 0x04)
#define RCC_CFGR REG(RCC_BASE + 0x08)
#define RCC_CIR REG(RCC_BASE + 0x0c)
#define RCC_APB1ENR REG(RCC_BASE + 0x40)
#define PWR_CR REG(0x40007000u)
#define PWR_CSR REG(0x40007004u)
#define FLASH_ACR REG(0x40023c00u)

/* RCC_CR */
#define HSION (1u << 0)
#define HSEON (1u << 16)
#define HSERDY (1u << 17)
#define HSEBYP (1u << 18)
#define CSSON (1u << 19)
#define PLLON (1u << 24)
#define PLLRDY (1u << 25)
/* RCC_CFGR */
#define SW_PLL 2u
#define SWS_MASK (3u << 2)
#define SWS_PLL (2u << 2)
#define PPRE1_DIV4 (5u << 10)
#define PPRE2_DIV2 (4u << 13)
/* RCC_APB1ENR */
#define PWREN (1u << 28)
#define USART2EN (1u << 17)
/* PWR_CR / PWR_CR1 */
#define VOS_SCALE1_F4 (1u << 14)
#define VOS_SCALE1_F7 (3u << 14)
#define ODEN (1u << 16)
#define ODSWEN (1u << 17)
/* FLASH_ACR */
#define PRFTEN (1u << 8)
#define ICEN (1u << 9)
#define DCEN (1u << 10)
#define ARTEN (1u << 9)

void SystemInit(void);
/* Returns the HCLK it set. */
uint32_t SystemClock_Config(void);
/* Set: SystemClock_Config switches to the PLL before it raises the flash
 * latency (the mistake the model warns of). */
extern int late_latency;
void usart2_init(uint32_t pclk1_hz, uint32_t baud);
/* usart2_init without enabling the USART's clock. */
void usart2_setup(uint32_t pclk1_hz, uint32_t baud);
void usart2_puts(const char *s);

#endif
