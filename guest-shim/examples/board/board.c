/*
 * board - start-up code of the kind that configures a peripheral sim-host
 * does not model before main's work, on the built-in targets' boards. The
 * first argument picks it:
 *
 *   board setup   three writes to the peripheral's control register and
 *                 one read of its status, then prints "configured"
 *   board poll    waits for a status bit that only the real device sets
 *   board gap     reads an address between the board's peripheral ranges
 *
 * MPS2 (Cortex-M): the CMSDK APB timer 0 at 0x40000000 (CTRL +0, VALUE
 * +4, RELOAD +8, INTSTATUS +0xc; QEMU hw/timer/cmsdk-apb-timer.c; the
 * board's UARTs are modelled since issue 40). RP2350 (rv32imac): UART0 at
 * 0x40070000, a PL011 (UARTFR +0x18, TXFE bit 7; UARTCR +0x30), which the
 * rv32imac target does not model.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define REG(a) (*(volatile uint32_t *)(a))

#if defined(__arm__)
#define UART_CTRL 0x40000000u
#define UART_STATUS 0x4000000cu
/* INTSTATUS bit 0: the timer reached zero */
#define READY_BIT (1u << 0)
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
