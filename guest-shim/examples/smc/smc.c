/*
 * smc - self-modifying code: the guest writes a tiny function into RAM,
 * calls it, overwrites it with another and calls it again, in four ways
 * that matter to an emulator's translated-code cache (issue 19: stores
 * taken off the slow path must still invalidate translated code):
 *
 *  1. code written into a page that has only been written as data before;
 *  2. rewritten in place after it ran (the page now holds translated code);
 *  3. rewritten after many data stores to the same page between the calls;
 *  4. a fresh page: data stores first, then code, then a rewrite;
 *  5. after it ran, one data store to its page, then the rewrite, with no
 *     load or fetch of that page in between (an emulator that stops
 *     watching a page after a data store misses the rewrite).
 *
 * Each function returns a constant; the program prints the sum of what
 * every call returned and the number of calls that returned the constant
 * just written ("fresh"): a stale translation returns the previous one.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>

/* two pages of RAM per case, aligned so each case has pages of its own */
static uint32_t area[4][2048] __attribute__((aligned(4096)));
static volatile uint32_t noise;

typedef int (*fn_t)(void);

/* writes "return value;" at p and returns a callable pointer to it */
static fn_t write_function(uint32_t *p, unsigned value)
{
#if defined(__arm__)
    /* Thumb: movs r0, #value; bx lr */
    p[0] = (0x4770u << 16) | 0x2000u | (value & 0xffu);
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    return (fn_t)((uintptr_t)p | 1u);
#elif defined(__riscv)
    /* addi a0, zero, value; jalr zero, 0(ra) */
    p[0] = ((value & 0x7ffu) << 20) | (10u << 7) | 0x13u;
    p[1] = 0x00008067u;
    __asm__ volatile(".word 0x0000100f /* fence.i */" ::: "memory");
    return (fn_t)(uintptr_t)p;
#else
#error "smc needs an ARM or RISC-V target"
#endif
}

static unsigned sum, fresh, calls;

static void call(fn_t f, unsigned expected)
{
    unsigned got = (unsigned)f();
    sum += got;
    fresh += got == expected;
    calls += 1;
}

int main(void)
{
    unsigned i, round;
    /* 1: the page was data first */
    for (i = 0; i < 2048; ++i)
        area[0][i] = i;
    call(write_function(&area[0][16], 11), 11);
    /* 2: rewritten in place after it ran */
    call(write_function(&area[0][16], 22), 22);
    /* 3: data stores to the same page between rewrites */
    for (round = 0; round < 20; ++round) {
        fn_t f = write_function(&area[1][8], 30 + round);
        for (i = 64; i < 1024; ++i)
            area[1][i] += round + i;
        call(f, 30 + round);
        for (i = 64; i < 1024; ++i)
            noise += area[1][i];
        call(f, 30 + round);
    }
    /* 4: a fresh page, a data loop first, then code, then a rewrite */
    for (i = 0; i < 2048; ++i)
        area[2][i] = noise + i;
    call(write_function(&area[2][100], 77), 77);
    for (i = 0; i < 2048; ++i)
        area[2][i == 100 ? 0 : i] ^= 1;
    call(write_function(&area[2][100], 88), 88);
    /* 5: a data store to the page right before each rewrite */
    for (round = 0; round < 8; ++round) {
        fn_t f = write_function(&area[3][8], 50 + round);
        call(f, 50 + round);
        area[3][512 + round] = round;
        f = write_function(&area[3][8], 60 + round);
        call(f, 60 + round);
    }
    printf("smc: %u calls, %u fresh, sum %u\n", calls, fresh, sum);
    return fresh == calls ? 0 : 1;
}
