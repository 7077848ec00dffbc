/*
 * {{NAME}}: a FIR filter over blocks of samples, instrumented with the
 * ATOMIUM Record & Playback API. Section 2 is the whole run; kernel 1 is
 * one block (its loop index is the block number), so the report shows the
 * cost of a block and data.arp holds it. Built with -DARP_SIM, the
 * simulator measures; with -DARP_NONE the calls vanish.
 */
#include <stdio.h>
#include <atomium_rp.h>

#define BLOCKS 8
#define BLOCK 256
#define TAPS 16

static int input[BLOCKS * BLOCK + TAPS];
static int output[BLOCKS * BLOCK];
static const int taps[TAPS] = {1, 3, 7, 12, 18, 23, 27, 29, 29, 27, 23, 18, 12, 7, 3, 1};

static void fir_block(int first)
{
    for (int i = first; i < first + BLOCK; ++i) {
        int acc = 0;
        for (int t = 0; t < TAPS; ++t)
            acc += taps[t] * input[i + t];
        output[i] = acc >> 8;
    }
}

int main(void)
{
    unsigned checksum = 0;
    for (int i = 0; i < BLOCKS * BLOCK + TAPS; ++i)
        input[i] = (i * 37) % 1024 - 512;

    arp_add_callbacks(arp_ullong, 0, 0, 0, 0, 0);
    arp_start(1, 2, arp_record_average, 0, 0, 0, 0, 0);
    arp_enter(1, 2, 0);
    for (int b = 0; b < BLOCKS; ++b) {
        arp_enter_kernel(1, 1, b);
        fir_block(b * BLOCK);
        arp_leave_kernel(1, 1);
    }
    arp_leave(1, 2);
    arp_finish();

    for (int i = 0; i < BLOCKS * BLOCK; ++i)
        checksum = checksum * 31u + (unsigned)output[i];
    printf("{{NAME}}: %d blocks filtered, checksum %08x\n", BLOCKS, checksum);
    return 0;
}
