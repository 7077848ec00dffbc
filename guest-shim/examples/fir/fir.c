/*
 * fir - a FIR filter over blocks of samples, built two ways: with its
 * inner loop unrolled by four (-DLOOPUNROLL, as CMSIS-DSP's
 * ARM_MATH_LOOPUNROLL does) or not (the -rolled variant). Both compute
 * the same output; they cost different cycles. The example of sim-host's
 * cycle gates (arp diff, suite --baseline and budget; tests/tests/gates.rs,
 * docs/ci.md).
 *
 *   id  kind      where
 *    2  plain     main, around every block (no label: named after main
 *                 and the line of its enter call)
 *    1  kernel    ato_kernel_fir, one block (loop index: the block)
 *    3  profiled  main, around the checksum (no label); the same code in
 *                 both variants, and recorded in data.arp (a plain
 *                 section is not)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <atomium_rp.h>

#define TAPS 16
#define BLOCK 64
#define BLOCKS 8

static const int32_t coefficients[TAPS] = {
    1, 3, 7, 12, 18, 23, 27, 29, 29, 27, 23, 18, 12, 7, 3, 1,
};
static int32_t samples[BLOCKS * BLOCK + TAPS];
static int32_t filtered[BLOCKS * BLOCK];

/* One block: out[i] is the sum of in[i + k] * coefficients[k], scaled. */
static void __attribute__((noinline)) fir_block(const int32_t *in, int32_t *out)
{
    for (int i = 0; i < BLOCK; ++i) {
        const int32_t *x = in + i;
        int32_t acc = 0;
#ifdef LOOPUNROLL
        for (int k = 0; k < TAPS; k += 4)
            acc += x[k] * coefficients[k] + x[k + 1] * coefficients[k + 1]
                 + x[k + 2] * coefficients[k + 2] + x[k + 3] * coefficients[k + 3];
#else
        for (int k = 0; k < TAPS; ++k)
            acc += x[k] * coefficients[k];
#endif
        out[i] = acc >> 8;
    }
}

int main(void)
{
    uint32_t checksum = 0;

    for (int i = 0; i < BLOCKS * BLOCK + TAPS; ++i)
        samples[i] = (int32_t)((i * 37u) % 1024u) - 512;
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 3, arp_record_average, 0, 0, 0, 0, 0);
    arp_enter(1, 2, 0);
    for (int b = 0; b < BLOCKS; ++b) {
        arp_enter_kernel(1, 1, b);
ato_kernel_fir:
        fir_block(samples + b * BLOCK, filtered + b * BLOCK);
        arp_leave_kernel(1, 1);
    }
    arp_leave(1, 2);
    arp_enter_profiled(1, 3, 0);
    for (int i = 0; i < BLOCKS * BLOCK; ++i)
        checksum = checksum * 31u + (uint32_t)filtered[i];
    arp_leave_profiled(1, 3);
    arp_finish();
    printf("fir: %d blocks filtered, checksum %08lx\n", BLOCKS, (unsigned long)checksum);
    return 0;
}
