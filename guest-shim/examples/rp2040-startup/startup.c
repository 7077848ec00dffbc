/*
 * rp2040-startup - the clock set-up pico-sdk's clock_configure and
 * pll_init do, written from the RP2040 datasheet (2.15.3.2: a glitchless
 * clk_sys switch is confirmed by CLK_SYS_SELECTED; 2.18.2: PLL
 * programming), then UART0 (a PL011, datasheet 4.2).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <atomium_rp.h>

#define REG(a) (*(volatile uint32_t *)(a))
/* the atomic aliases (datasheet 2.1.2) */
#define SET(a) REG((a) + 0x2000u)
#define CLR(a) REG((a) + 0x3000u)

#define RESETS_RESET 0x4000c000u
#define RESETS_DONE 0x4000c008u
#define UART0_BIT (1u << 22)
#define CLK_SYS_CTRL 0x4000803cu
#define CLK_SYS_SELECTED 0x40008044u
#define PLL_SYS_CS 0x40028000u
#define PLL_SYS_PWR 0x40028004u
#define PLL_SYS_FBDIV 0x40028008u
#define PLL_SYS_PRIM 0x4002800cu
#define UART0 0x40034000u
#define UART_DR REG(UART0 + 0x000)
#define UART_FR REG(UART0 + 0x018)
#define UART_IBRD REG(UART0 + 0x024)
#define UART_FBRD REG(UART0 + 0x028)
#define UART_LCR_H REG(UART0 + 0x02c)
#define UART_CR REG(UART0 + 0x030)

ARP_SECTION_NAME(1, "pll_relock");
ARP_SECTION_NAME(2, "uart_puts");

static void clk_sys_from_ref(void)
{
    CLR(CLK_SYS_CTRL) = 1u; /* SRC = clk_ref */
    while (!(REG(CLK_SYS_SELECTED) & 1u)) {
    }
}

static void clk_sys_from_pll(void)
{
    REG(CLK_SYS_CTRL) = (REG(CLK_SYS_CTRL) & ~(7u << 5)) | 1u; /* AUXSRC pll_sys, SRC aux */
    while (!(REG(CLK_SYS_SELECTED) & 2u)) {
    }
}

/* 12 MHz / 1 x 133 = 1596 MHz VCO, / 6 / 2 = 133 MHz */
static void pll_sys_133mhz(void)
{
    SET(PLL_SYS_PWR) = (1u << 0) | (1u << 5) | (1u << 3); /* PD, VCOPD, POSTDIVPD */
    REG(PLL_SYS_FBDIV) = 133u;
    arp_enter_kernel(1, 1, 0);
    CLR(PLL_SYS_PWR) = (1u << 0) | (1u << 5);
    while (!(REG(PLL_SYS_CS) & (1u << 31))) {
    }
    arp_leave_kernel(1, 1);
    REG(PLL_SYS_PRIM) = (6u << 16) | (2u << 12);
    CLR(PLL_SYS_PWR) = 1u << 3;
}

static void uart_puts(const char *s)
{
    for (; *s; s++) {
        while (UART_FR & (1u << 5)) { /* TXFF */
        }
        UART_DR = (uint8_t)*s;
    }
    while (UART_FR & (1u << 3)) { /* BUSY */
    }
}

int main(void)
{
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 2, arp_record_all, 0, 0, 0, 0, 0);
    clk_sys_from_ref();
    pll_sys_133mhz();
    clk_sys_from_pll();
    SET(RESETS_RESET) = UART0_BIT;
    CLR(RESETS_RESET) = UART0_BIT;
    while (!(REG(RESETS_DONE) & UART0_BIT)) {
    }
    /* clk_peri = clk_sys = 133 MHz: 133e6 / (16 x 115200) = 72.16 ->
     * IBRD 72, FBRD round(0.157 x 64) = 10 */
    UART_IBRD = 72u;
    UART_FBRD = 10u;
    UART_LCR_H = (3u << 5) | (1u << 4); /* 8 bits, FIFOs on */
    UART_CR = (1u << 0) | (1u << 8) | (1u << 9);
    arp_enter_kernel(1, 2, 0);
    uart_puts("hello from the RP2040's UART0 at 133 MHz\r\n");
    arp_leave_kernel(1, 2);
    printf("semihosting: done\n");
    return 0;
}
