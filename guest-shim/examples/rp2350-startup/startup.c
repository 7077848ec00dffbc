/*
 * rp2350-startup - the clock set-up pico-sdk's runtime_init_clocks does
 * (src/rp2_common/pico_runtime_init/runtime_init_clocks.c: clk_sys and
 * clk_ref to their safe sources, xosc_init, pll_init, clock_configure,
 * start_all_ticks), written from the RP2350 datasheet (8.1.2.2: a
 * glitchless switch is confirmed by SELECTED; 8.6: PLL programming; 8.5:
 * the tick generators), with PLL_SYS at 120 MHz instead of the SDK's 150
 * so that the change shows; then UART0 (a PL011, datasheet 12.1).
 *
 * Mode "full" (the default) does all of it; "overclock" sets PLL_SYS to
 * 200 MHz (above the rated 150) and "badpll" powers it with FBDIV 10
 * (below pll.h's 16): each is warned of at its instruction. On Hazard3,
 * "mtime" reads SIO's mtime with TICKS.RISCV stopped, then at 2 MHz.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <atomium_rp.h>

#define REG(a) (*(volatile uint32_t *)(a))
/* the atomic aliases (datasheet 2.1.3) */
#define XOR(a) REG((a) + 0x1000u)
#define SET(a) REG((a) + 0x2000u)
#define CLR(a) REG((a) + 0x3000u)

/* addressmap.h and the register headers (RP2350) */
#define RESETS_RESET 0x40020000u
#define RESETS_DONE 0x40020008u
#define PLL_SYS_BIT (1u << 14)
#define UART0_BIT (1u << 26)
#define CLK_REF_CTRL 0x40010030u
#define CLK_REF_SELECTED 0x40010038u
#define CLK_SYS_CTRL 0x4001003cu
#define CLK_SYS_SELECTED 0x40010044u
#define CLK_PERI_CTRL 0x40010048u
#define CLK_SYS_RESUS_CTRL 0x40010084u
#define XOSC_CTRL 0x40048000u
#define XOSC_STATUS 0x40048004u
#define XOSC_STARTUP 0x4004800cu
#define PLL_SYS_CS 0x40050000u
#define PLL_SYS_PWR 0x40050004u
#define PLL_SYS_FBDIV 0x40050008u
#define PLL_SYS_PRIM 0x4005000cu
#define TICKS 0x40108000u
#define UART0 0x40070000u
#define UART_DR REG(UART0 + 0x000)
#define UART_FR REG(UART0 + 0x018)
#define UART_IBRD REG(UART0 + 0x024)
#define UART_FBRD REG(UART0 + 0x028)
#define UART_LCR_H REG(UART0 + 0x02c)
#define UART_CR REG(UART0 + 0x030)

ARP_SECTION_NAME(1, "pll_lock");
ARP_SECTION_NAME(2, "uart_puts");
ARP_SECTION_NAME(3, "mtime_span");

#if defined(__riscv)
/* SIO's RISC-V platform timer (datasheet 3.1.8; sio.h MTIME 0x1b0),
 * counting TICKS.RISCV's tick */
#define SIO_MTIME 0xd00001b0u
#define TICKS_RISCV_CTRL (TICKS + 0x3cu)
#define TICKS_RISCV_CYCLES (TICKS + 0x40u)

/* mtime's count over a busy stretch, the stretch a section */
static uint32_t mtime_span(uint32_t spins)
{
    arp_enter_kernel(1, 3, 0);
    uint32_t a = REG(SIO_MTIME);
    for (volatile uint32_t i = 0; i < spins; i++) {
    }
    uint32_t b = REG(SIO_MTIME);
    arp_leave_kernel(1, 3);
    return b - a;
}

/* mode "mtime": the tick generator stopped, then at clk_ref / 6 = 2 MHz */
static void mtime_follows_ticks(void)
{
    REG(TICKS_RISCV_CTRL) = 0u;
    printf("mtime stopped %lu\n", (unsigned long)mtime_span(1000u));
    REG(TICKS_RISCV_CYCLES) = 6u;
    REG(TICKS_RISCV_CTRL) = 1u;
    printf("mtime ticks %lu\n", (unsigned long)mtime_span(20000u));
}
#endif

static void unreset(uint32_t bits)
{
    SET(RESETS_RESET) = bits;
    CLR(RESETS_RESET) = bits;
    while ((REG(RESETS_DONE) & bits) != bits) {
    }
}

/* xosc_init: 1-15 MHz range, STARTUP.DELAY (12000 + 128) / 256 = 47,
 * ENABLE, wait for STABLE */
static void xosc_start(void)
{
    REG(XOSC_CTRL) = 0xaa0u;
    REG(XOSC_STARTUP) = 47u;
    SET(XOSC_CTRL) = 0xfabu << 12;
    while (!(REG(XOSC_STATUS) & (1u << 31))) {
    }
}

/* pll_init(pll_sys, 1, 12 MHz x fbdiv, post1, post2) */
static void pll_sys_init(uint32_t fbdiv, uint32_t post1, uint32_t post2)
{
    unreset(PLL_SYS_BIT);
    REG(PLL_SYS_CS) = 1u; /* REFDIV 1 */
    REG(PLL_SYS_FBDIV) = fbdiv;
    arp_enter_kernel(1, 1, 0);
    CLR(PLL_SYS_PWR) = (1u << 0) | (1u << 5); /* PD, VCOPD */
    while (!(REG(PLL_SYS_CS) & (1u << 31))) { /* LOCK */
    }
    arp_leave_kernel(1, 1);
    REG(PLL_SYS_PRIM) = (post1 << 16) | (post2 << 12);
    CLR(PLL_SYS_PWR) = 1u << 3; /* POSTDIVPD */
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

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[argc - 1] : "full";
    uint32_t fbdiv = 120u, post1 = 6u, post2 = 2u; /* 1440 MHz / 12 = 120 MHz */
    if (strcmp(mode, "overclock") == 0) {
        fbdiv = 100u, post1 = 6u, post2 = 1u; /* 1200 MHz / 6 = 200 MHz */
    } else if (strcmp(mode, "badpll") == 0) {
        fbdiv = 10u; /* VCO 120 MHz */
    }
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 3, arp_record_all, 0, 0, 0, 0, 0);
#if defined(__riscv)
    if (strcmp(mode, "mtime") == 0) {
        mtime_follows_ticks();
        return 0;
    }
#endif
    REG(CLK_SYS_RESUS_CTRL) = 0;
    xosc_start();
    /* before touching the PLLs, clk_sys and clk_ref off their aux sources */
    CLR(CLK_SYS_CTRL) = 1u;
    while (REG(CLK_SYS_SELECTED) != 1u) {
    }
    CLR(CLK_REF_CTRL) = 3u;
    while (REG(CLK_REF_SELECTED) != 1u) {
    }
    pll_sys_init(fbdiv, post1, post2);
    /* clk_ref = XOSC (SRC 2) */
    REG(CLK_REF_CTRL) = 2u;
    while (REG(CLK_REF_SELECTED) != 4u) {
    }
    /* clk_sys = aux (AUXSRC 0: PLL_SYS), SRC 1 */
    REG(CLK_SYS_CTRL) = 0u;
    REG(CLK_SYS_CTRL) = 1u;
    while (REG(CLK_SYS_SELECTED) != 2u) {
    }
    /* clk_peri = clk_sys (AUXSRC 0): disabled, mux set, enabled */
    CLR(CLK_PERI_CTRL) = 1u << 11;
    REG(CLK_PERI_CTRL) = 0u;
    SET(CLK_PERI_CTRL) = 1u << 11;
    /* start_all_ticks: clk_ref 12 MHz / 12 = 1 MHz each */
    for (uint32_t t = 0; t < 6; t++) {
        REG(TICKS + 12u * t) = 0u;
        REG(TICKS + 12u * t + 4u) = 12u;
        REG(TICKS + 12u * t) = 1u;
    }
    unreset(UART0_BIT);
    /* pico-sdk uart_set_baudrate at clk_peri 120 MHz: div = 8 x 120e6 /
     * 115200 + 1 = 8334; IBRD 8334 >> 7 = 65, FBRD (8334 & 0x7f) >> 1 = 7 */
    UART_IBRD = 65u;
    UART_FBRD = 7u;
    UART_LCR_H = (3u << 5) | (1u << 4); /* 8 bits, FIFOs on */
    UART_CR = (1u << 0) | (1u << 8) | (1u << 9);
    arp_enter_kernel(1, 2, 0);
    uart_puts("hello from the RP2350's UART0 at 120 MHz\r\n");
    arp_leave_kernel(1, 2);
    printf("semihosting: done\n");
    return 0;
}
