/*
 * board - start-up code of the kind that configures a UART before main's
 * work, on the built-in targets' boards. The first argument picks it:
 *
 *   board setup   three writes to the UART's control register and one
 *                 read of its status, then prints "configured"
 *   board poll    waits for a status bit that only a real UART sets
 *   board gap     reads an address between the board's peripheral ranges
 *
 * MPS2 (Cortex-M): CMSDK APB UART0 at 0x40004000 (DATA +0, STATE +4,
 * CTRL +8; QEMU hw/char/cmsdk-apb-uart.c). RP2350 (rv32imac): UART0 at
 * 0x40070000, a PL011 (UARTFR +0x18, TXFE bit 7; UARTCR +0x30).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define REG(a) (*(volatile uint32_t *)(a))

#if defined(__arm__)
#define UART_CTRL 0x40004008u
#define UART_STATUS 0x40004004u
/* STATE bit 1: receive buffer full */
#define READY_BIT (1u << 1)
#define GAP 0x40300000u
#else
#define UART_CTRL 0x40070030u
#define UART_STATUS 0x40070018u
/* UARTFR bit 7: transmit FIFO empty */
#define READY_BIT (1u << 7)
#define GAP 0x40200000u
#endif

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[argc - 1] : "";
    if (!strcmp(what, "setup")) {
        REG(UART_CTRL) = 0;
        REG(UART_CTRL) = 1;
        REG(UART_CTRL) = 3;
        printf("configured, status %lu\n", (unsigned long)REG(UART_STATUS));
    } else if (!strcmp(what, "poll")) {
        while (!(REG(UART_STATUS) & READY_BIT))
            ;
        printf("ready\n");
    } else if (!strcmp(what, "gap")) {
        printf("%lu\n", (unsigned long)REG(GAP));
    } else {
        printf("usage: board setup|poll|gap\n");
        return 2;
    }
    return 0;
}
