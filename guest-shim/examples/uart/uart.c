/*
 * uart - a message through the MPS2 board's CMSDK APB UART0 (ARM DDI
 * 0479C 4.3: DATA 0x00, STATE 0x04 bit 0 TX buffer full, CTRL 0x08 bit 0
 * TX enable, BAUDDIV 0x10, at least 16), then one through semihosting.
 * `disabled` writes without enabling the transmitter (the byte is lost,
 * with a warning).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <atomium_rp.h>

#ifndef UART0_BASE
#define UART0_BASE 0x40004000u
#endif
#define REG(offset) (*(volatile uint32_t *)(UART0_BASE + (offset)))
#define DATA REG(0x00)
#define STATE REG(0x04)
#define CTRL REG(0x08)
#define BAUDDIV REG(0x10)

ARP_SECTION_NAME(1, "uart_puts");

static void uart_puts(const char *s)
{
    for (; *s; s++) {
        while (STATE & 1u) {
        }
        DATA = (uint8_t)*s;
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[argc - 1] : "";
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 1, arp_record_all, 0, 0, 0, 0, 0);
    /* 25 MHz / 16: 1.5625 Mbaud, a 10-bit frame every 160 cycles */
    BAUDDIV = 16;
    if (strcmp(mode, "disabled") != 0) {
        CTRL = 1;
    }
    arp_enter_kernel(1, 1, 0);
    uart_puts("uart0: hello from the CMSDK UART\n");
    arp_leave_kernel(1, 1);
    printf("semihosting: bye\n");
    return 0;
}
