/*
 * svdreset - reads the peripheral registers its arguments name and prints
 * what each read returned, for checking reset values against an SVD file:
 *
 *   svdreset w:0x40100000 h:0x40100006 b:0x40100005 ...
 *
 * w, h, b: a 32-, 16- or 8-bit read at the address. Each read prints one
 * line "w 0x40100000 0x12345678". Then, if the last argument is
 * "poll:ADDR:MASK", waits for a bit of MASK to be set at ADDR (a register
 * that never changes: a run bounded by --max-cycles); "wait17" waits for
 * bit 17 of 0x40100000 with the mask a constant in the code.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long read_at(char kind, uintptr_t addr)
{
    switch (kind) {
    case 'b':
        return *(volatile uint8_t *)addr;
    case 'h':
        return *(volatile uint16_t *)addr;
    default:
        return *(volatile uint32_t *)addr;
    }
}

static void poll(const char *spec)
{
    char *end;
    uintptr_t addr = strtoul(spec, &end, 0);
    uint32_t mask = *end == ':' ? strtoul(end + 1, NULL, 0) : 1;
    while (!(*(volatile uint32_t *)addr & mask))
        ;
    printf("ready\n");
}

int main(int argc, char **argv)
{
    /* the host's command line starts with the ELF's name (argv[1]) */
    int first = argc > 1 && !strchr(argv[1], ':') ? 2 : 1;
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "wait17")) {
            while (!(*(volatile uint32_t *)0x40100000u & (1u << 17)))
                ;
            printf("ready\n");
            continue;
        }
        if (!strncmp(arg, "poll:", 5)) {
            poll(arg + 5);
            continue;
        }
        if (strlen(arg) < 3 || arg[1] != ':' || !strchr("whb", arg[0])) {
            printf("usage: svdreset {w|h|b}:ADDR... [poll:ADDR:MASK]\n");
            return 2;
        }
        uintptr_t addr = strtoul(arg + 2, NULL, 0);
        printf("%c 0x%08lx 0x%lx\n", arg[0], (unsigned long)addr, read_at(arg[0], addr));
    }
    return 0;
}
