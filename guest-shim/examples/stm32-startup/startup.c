/*
 * stm32-startup - a CubeMX-style start-up (system_stm32.c) reaching the
 * part's maximum clock, then a message through USART2 and one through
 * semihosting; `slow` skips the clock set-up (the part stays on the
 * 16 MHz HSI), `late-latency` switches to the PLL before raising the
 * flash latency (a warning at the switch), `no-uart-clock` uses USART2
 * without enabling its clock (a warning; the bytes are lost) and
 * `bad-register` reads an RCC register the model does not have (a stop
 * naming it).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <string.h>
#include "system_stm32.h"
#include <atomium_rp.h>

ARP_SECTION_NAME(1, "hse_on");
ARP_SECTION_NAME(2, "pll_on");
ARP_SECTION_NAME(3, "switch_to_pll");
ARP_SECTION_NAME(4, "overdrive_on");
ARP_SECTION_NAME(5, "usart2_puts");

int main(int argc, char **argv)
{
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 5, arp_record_all, 0, 0, 0, 0, 0);
    const char *mode = argc > 1 ? argv[argc - 1] : "";
    SystemInit();
    uint32_t hclk = 16000000u;
    late_latency = strcmp(mode, "late-latency") == 0;
    if (strcmp(mode, "bad-register") == 0) {
        printf("RCC+0x100 reads %lx\n", (unsigned long)REG(RCC_BASE + 0x100));
    }
    if (strcmp(mode, "slow") != 0) {
        hclk = SystemClock_Config();
    }
    /* APB1 runs at HCLK / 4 after SystemClock_Config, at HCLK from reset */
    uint32_t pclk1 = hclk == 16000000u ? hclk : hclk / 4;
    if (strcmp(mode, "no-uart-clock") == 0) {
        RCC_APB1ENR &= ~USART2EN;
        usart2_setup(pclk1, 115200);
    } else {
        usart2_init(pclk1, 115200);
    }
    char line[80];
    snprintf(line, sizeof line, "hello from USART2 at %lu Hz\r\n", (unsigned long)hclk);
    arp_enter_kernel(1, 5, 0);
    usart2_puts(line);
    arp_leave_kernel(1, 5);
    printf("semihosting: done at %lu Hz\n", (unsigned long)hclk);
    return 0;
}
