/*
 * dsp - the signal-processing kernels engineers pick a microcontroller
 * for: a 16-tap FIR filter and a biquad (second-order IIR section), each in
 * Q15 fixed point and in single-precision float (issue 25). Kernel K runs
 * n = N output samples under section id K and n = 2N under id K + 10
 * (arp_enter_kernel / arp_leave_kernel, arp_record_all), so the
 * difference of the two samples is N times one output sample's cycles:
 * tests/tests/dsp.rs derives that number by hand for the float kernels on
 * the cores with an FPU (cortex-m4f, cortex-m7, cortex-m33), from their
 * -O2 disassembly and the cycle tables. On the other cores the float
 * kernels call the soft-float library (the MCU table in BENCHMARKS.md
 * shows what that costs). The program prints a checksum of every output,
 * the same on every core and under qemu.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <atomium_rp.h>

#define N 64
#define TAPS 16
#define NOINLINE __attribute__((noinline))

static int16_t xq[2 * N + TAPS], yq[2 * N];
static float xf[2 * N + TAPS], yf[2 * N];

/* a low-pass FIR, Q15 and float */
static const int16_t hq[TAPS] = {
    -180, -312, -270, 210, 1180, 2460, 3640, 4290,
    4290, 3640, 2460, 1180, 210, -270, -312, -180,
};
static float hf[TAPS];

/* 1: FIR, Q15: 32-bit accumulator, the result saturated to 16 bits */
NOINLINE void fir_q15(int n)
{
    for (int i = 0; i < n; ++i) {
        int32_t acc = 0;
        for (int k = 0; k < TAPS; ++k)
            acc += (int32_t)hq[k] * xq[i + k];
        acc >>= 15;
        yq[i] = acc > 32767 ? 32767 : acc < -32768 ? -32768 : (int16_t)acc;
    }
}

/* 2: FIR, float */
NOINLINE void fir_f32(int n)
{
    for (int i = 0; i < n; ++i) {
        float acc = 0.0f;
        for (int k = 0; k < TAPS; ++k)
            acc += hf[k] * xf[i + k];
        yf[i] = acc;
    }
}

/* a biquad: direct form I in Q14 coefficients (Q15 data), transposed
 * direct form II in float */
static const int16_t bq[5] = { 1448, 2896, 1448, -21544, 8860 }; /* b0 b1 b2 a1 a2, Q14 */
static int16_t sq[4];
static float sf[2];

/* 3: biquad, Q15 */
NOINLINE void biquad_q15(int n)
{
    int16_t x1 = sq[0], x2 = sq[1], y1 = sq[2], y2 = sq[3];
    for (int i = 0; i < n; ++i) {
        int16_t x0 = xq[i];
        int32_t acc = bq[0] * x0 + bq[1] * x1 + bq[2] * x2 - bq[3] * y1 - bq[4] * y2;
        acc >>= 14;
        int16_t y0 = acc > 32767 ? 32767 : acc < -32768 ? -32768 : (int16_t)acc;
        x2 = x1;
        x1 = x0;
        y2 = y1;
        y1 = y0;
        yq[i] = y0;
    }
    sq[0] = x1;
    sq[1] = x2;
    sq[2] = y1;
    sq[3] = y2;
}

static const float b0 = 0.0883883f, b1 = 0.1767767f, b2 = 0.0883883f;
static const float a1 = -1.3149f, a2 = 0.5407f;

/* 4: biquad, float */
NOINLINE void biquad_f32(int n)
{
    float s1 = sf[0], s2 = sf[1];
    for (int i = 0; i < n; ++i) {
        float x = xf[i];
        float y = b0 * x + s1;
        s1 = b1 * x - a1 * y + s2;
        s2 = b2 * x - a2 * y;
        yf[i] = y;
    }
    sf[0] = s1;
    sf[1] = s2;
}

typedef void (*kernel_fn)(int);
static const kernel_fn kernels[] = { fir_q15, fir_f32, biquad_q15, biquad_f32 };

/* a checksum of the outputs: float results by their bits */
static uint32_t checksum(void)
{
    uint32_t sum = 0;
    for (int i = 0; i < 2 * N; ++i) {
        union { float f; uint32_t u; } v = { yf[i] };
        sum = sum * 31u + (uint16_t)yq[i];
        sum = sum * 31u + v.u;
    }
    return sum;
}

int main(void)
{
    for (int i = 0; i < 2 * N + TAPS; ++i) {
        int v = ((i * 2654435761u) >> 20) % 16384 - 8192; /* a deterministic noise */
        xq[i] = (int16_t)v;
        xf[i] = (float)v / 32768.0f;
    }
    for (int k = 0; k < TAPS; ++k)
        hf[k] = (float)hq[k] / 32768.0f;
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 14, arp_record_all, 0, 0, 0, 0, 0);
    for (unsigned k = 0; k < sizeof kernels / sizeof kernels[0]; ++k) {
        arp_enter_kernel(1, k + 1, 0);
        kernels[k](N);
        arp_leave_kernel(1, k + 1);
        printf("kernel %u: %08lx\n", k + 1, (unsigned long)checksum());
        arp_enter_kernel(1, k + 11, 0);
        kernels[k](2 * N);
        arp_leave_kernel(1, k + 11);
        printf("kernel %u, 2N: %08lx\n", k + 1, (unsigned long)checksum());
    }
#ifdef REPEAT
    /* The float guest of the emulation benchmark (the -bench and -long
     * variants, BENCHMARKS.md): the two float kernels over 2N samples,
     * REPEAT times, the biquad's state carried on; the checksum of the
     * last outputs, and a trace of every repeat's last output. */
    uint32_t trace = 0;
    for (unsigned r = 0; r < REPEAT; ++r) {
        fir_f32(2 * N);
        biquad_f32(2 * N);
        union { float f; uint32_t u; } last = { yf[2 * N - 1] };
        trace = trace * 31u + last.u;
    }
    printf("float kernels x %u: %08lx %08lx\n", (unsigned)REPEAT,
           (unsigned long)checksum(), (unsigned long)trace);
#endif
    arp_finish();
    return 0;
}
