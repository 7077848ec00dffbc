/*
 * rvcounters - RISC-V's counter CSRs (cycle, instret, mcycle, minstret,
 * time and their h halves) read and written by one routine run from three
 * places (issue 43, M05): flash, a copy in `.data` (RAM from the start) and
 * a copy the program writes into RAM at run time. Every counter must be the
 * simulated one wherever its instruction is.
 *
 *   rvcounters [N]   runs the routine with N > 0 loop iterations (default 1000)
 *                    from each place, and prints its readings
 *
 * The routine (`BODY`) is position-independent assembly, so the copies run
 * the same instructions:
 *   csrr cycle, instret, mcycle, minstret, time     <- the "before" reads
 *   mv t5, a1 ; 1: addi t5, -1 ; bnez t5, 1b        <- N iterations
 *   csrr cycle, instret, mcycle, minstret, time     <- the "after" reads
 *   (stores)
 *   csrr cycleh, instreth
 *   csrw mcycle, a2 ; csrr cycle, cycleh, mcycle     <- a2 = 0xfffffffe
 *   csrw minstret, a2 ; csrr minstret, instreth, timeh
 * CSR numbers as signed 12-bit immediates of `.insn` (-march=rv32imac has
 * no Zicsr names): cycle 0xc00 = -1024, time -1023, instret -1022,
 * cycleh 0xc80 = -896, timeh -895, instreth -894, mcycle 0xb00 = -1280,
 * minstret -1278.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BODY(name)                                                     \
    ".balign 4\n"                                                      \
    ".globl " name "\n"                                                \
    ".type " name ", @function\n" name ":\n"                           \
    ".insn i 0x73, 2, t0, x0, -1024\n"                                 \
    ".insn i 0x73, 2, t1, x0, -1022\n"                                 \
    ".insn i 0x73, 2, t2, x0, -1280\n"                                 \
    ".insn i 0x73, 2, t3, x0, -1278\n"                                 \
    ".insn i 0x73, 2, t4, x0, -1023\n"                                 \
    "mv t5, a1\n"                                                      \
    "1: addi t5, t5, -1\n"                                             \
    "bnez t5, 1b\n"                                                    \
    ".insn i 0x73, 2, a3, x0, -1024\n"                                 \
    ".insn i 0x73, 2, a4, x0, -1022\n"                                 \
    ".insn i 0x73, 2, a5, x0, -1280\n"                                 \
    ".insn i 0x73, 2, a6, x0, -1278\n"                                 \
    ".insn i 0x73, 2, a7, x0, -1023\n"                                 \
    "sw t0, 0(a0)\n"                                                   \
    "sw t1, 4(a0)\n"                                                   \
    "sw t2, 8(a0)\n"                                                   \
    "sw t3, 12(a0)\n"                                                  \
    "sw t4, 16(a0)\n"                                                  \
    "sw a3, 20(a0)\n"                                                  \
    "sw a4, 24(a0)\n"                                                  \
    "sw a5, 28(a0)\n"                                                  \
    "sw a6, 32(a0)\n"                                                  \
    "sw a7, 36(a0)\n"                                                  \
    ".insn i 0x73, 2, t0, x0, -896\n"                                  \
    ".insn i 0x73, 2, t1, x0, -894\n"                                  \
    ".insn i 0x73, 1, x0, a2, -1280\n"                                 \
    ".insn i 0x73, 2, t2, x0, -1024\n"                                 \
    ".insn i 0x73, 2, t3, x0, -896\n"                                  \
    ".insn i 0x73, 2, t4, x0, -1280\n"                                 \
    ".insn i 0x73, 1, x0, a2, -1278\n"                                 \
    ".insn i 0x73, 2, t5, x0, -1278\n"                                 \
    ".insn i 0x73, 2, t6, x0, -894\n"                                  \
    ".insn i 0x73, 2, a3, x0, -895\n"                                  \
    "sw t0, 40(a0)\n"                                                  \
    "sw t1, 44(a0)\n"                                                  \
    "sw t2, 48(a0)\n"                                                  \
    "sw t3, 52(a0)\n"                                                  \
    "sw t4, 56(a0)\n"                                                  \
    "sw t5, 60(a0)\n"                                                  \
    "sw t6, 64(a0)\n"                                                  \
    "sw a3, 68(a0)\n"                                                  \
    "ret\n"                                                            \
    ".globl " name "_end\n" name "_end:\n"

__asm__(".section .text.work_flash, \"ax\", @progbits\n" BODY("work_flash") ".previous\n");
__asm__(".section .data.work_data, \"awx\", @progbits\n" BODY("work_data") ".previous\n");

#define READINGS 18
typedef void work_fn(uint32_t *readings, uint32_t n, uint32_t set);
extern work_fn work_flash, work_data;
extern const char work_flash_end[];

/* the run-time copy: written by memcpy, then fence.i */
static uint32_t ram_code[128] __attribute__((aligned(4)));

static void show(const char *place, work_fn *work, uint32_t n)
{
    uint32_t r[READINGS];
    memset(r, 0, sizeof r);
    work(r, n, 0xfffffffeu);
    printf("%s", place);
    for (int i = 0; i < READINGS; i++)
        printf(" %lu", (unsigned long)r[i]);
    printf("\n");
}

int main(int argc, char **argv)
{
#ifdef SIO_MTIME_FULLSPEED
    /* RP2350 SIO MTIME_CTRL = EN | FULLSPEED: mtime counts core cycles */
    *(volatile uint32_t *)0xd00001a4u = 3;
#endif
    /* the last argument if it is a number (Debian's picolibc passes the
     * semihosting command line's program name on as argv[1]) */
    const char *last = argv[argc - 1];
    uint32_t n = argc > 1 && last[0] >= '1' && last[0] <= '9' ? (uint32_t)strtoul(last, 0, 10) : 1000;
    size_t size = (size_t)(work_flash_end - (const char *)work_flash);
    if (size > sizeof ram_code) {
        printf("the routine is %u bytes, more than the copy's room\n", (unsigned)size);
        return 1;
    }
    memcpy(ram_code, (const void *)work_flash, size);
    __asm volatile(".insn i 0x0f, 1, x0, x0, 0" ::: "memory"); /* fence.i */
    show("flash", work_flash, n);
    show("data", work_data, n);
    show("ram", (work_fn *)(void *)ram_code, n);
    return 0;
}
