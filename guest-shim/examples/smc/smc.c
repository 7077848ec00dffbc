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
 * The -prices variants first call a short function, then a longer one
 * written over it (-prices-same) or beside it (-prices-apart): the same
 * instructions run in both, so their cycle counts must be equal.
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

#ifdef PRICE_APART
/* writes "return value;" with four NOPs before the return: the same
 * result as write_function, four instructions longer */
static fn_t write_long_function(uint32_t *p, unsigned value)
{
#if defined(__arm__)
    /* movs r0, #value; nop; nop; nop; nop; bx lr */
    p[0] = (0xbf00u << 16) | 0x2000u | (value & 0xffu);
    p[1] = (0xbf00u << 16) | 0xbf00u;
    p[2] = (0x4770u << 16) | 0xbf00u;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    return (fn_t)((uintptr_t)p | 1u);
#elif defined(__riscv)
    /* addi a0, zero, value; 4 x addi zero, zero, 0; jalr zero, 0(ra) */
    p[0] = ((value & 0x7ffu) << 20) | (10u << 7) | 0x13u;
    p[1] = p[2] = p[3] = p[4] = 0x00000013u;
    p[5] = 0x00008067u;
    __asm__ volatile(".word 0x0000100f /* fence.i */" ::: "memory");
    return (fn_t)(uintptr_t)p;
#endif
}

/* Where the longer function goes: 0 words after the short one (it
 * rewrites it) or PRICE_APART words (a fresh address). The two variants
 * differ only in this datum, so they execute the same instructions, and
 * a simulator that prices rewritten code anew counts the same cycles for
 * both (tests/tests/smc.rs). */
static volatile unsigned apart __attribute__((section(".data"))) = PRICE_APART;
#endif

static unsigned sum, fresh, calls;

static void call(fn_t f, unsigned expected)
{
    unsigned got = (unsigned)f();
    sum += got;
    fresh += got == expected;
    calls += 1;
}

#ifdef PRICE_APART
static void call(fn_t f, unsigned expected);

/* a short function called 100 times, then a longer one 100 times */
static void prices(void)
{
    unsigned i;
    fn_t f = write_function(&area[0][16], 5);
    for (i = 0; i < 100; ++i)
        call(f, 5);
    f = write_long_function(&area[0][16 + apart], 6);
    for (i = 0; i < 100; ++i)
        call(f, 6);
}
#endif

int main(void)
{
    unsigned i, round;
#ifdef PRICE_APART
    prices();
#endif
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
