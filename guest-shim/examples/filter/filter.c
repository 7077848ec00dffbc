/*
 * filter - the image-filter program of the ARP manual, section 2
 * (seeds/004_e4816c0084434776.txt), instrumented exactly as the listing of
 * section 2.4 shows: the same section ids (1..8), kinds, nesting and the
 * arp_add_callbacks / arp_start / arp_finish calls.
 *
 *   id  kind      where
 *    8  plain     main, around the image loop
 *    7  plain     one iteration of the image loop
 *    3  plain     around the call of filter_horizontally
 *    2  profiled  ato_profile_filter_image_hor (the y loop)
 *    1  kernel    ato_kernel_filter_line_hor (the x loop, once per line)
 *    6  plain     around the call of filter_vertically
 *    5  profiled  ato_profile_filter_image_vert
 *    4  kernel    ato_kernel_filter_line_vert
 *
 * What the manual leaves to "some source" is made checkable: input()
 * generates a deterministic image per index and output() prints a checksum
 * (32-bit FNV-1a) of each filtered image.
 *
 * Build with -DARP_SIM for sim-host, -DARP_NONE for an uninstrumented
 * reference, or natively against libarp (the callbacks below then measure
 * with clock(), as in manual section 1).
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <atomium_rp.h>

#define Height 200
#define Width 320
#ifndef nImages
#define nImages 4
#endif

#if !defined(ARP_SIM) && !defined(ARP_NONE)
#include <time.h>
/* Manual section 1, callbacks.c: the system clock as the measurement. */
static void enterCallback(const arp_sid sid, void *data, void *context)
{
    (void)sid; (void)context;
    *(long *)data = (long)clock();
}
static void leaveCallback(const arp_sid sid, void *data, void *context)
{
    (void)sid; (void)context;
    long enterTime = *(long *)data;
    *(long *)data = (long)clock() - enterTime;
}
#define ISS 0
#endif

static unsigned image_index;

/* A deterministic test image: a gradient with a moving diagonal pattern. */
static void input(char image[Height][Width])
{
    int x, y;
    unsigned t = image_index++;
    for (y = 0; y < Height; ++y)
        for (x = 0; x < Width; ++x)
            image[y][x] = (char)((x * 3u + y * 5u + t * 17u) ^ ((x + y * t) & 0x3fu));
}

/* Prints the 32-bit FNV-1a hash of the image, one line per image. */
static void output(char image[Height][Width])
{
    unsigned long hash = 2166136261ul;
    int x, y;
    for (y = 0; y < Height; ++y)
        for (x = 0; x < Width; ++x)
            hash = ((hash ^ (unsigned char)image[y][x]) * 16777619ul) & 0xfffffffful;
    printf("image %u checksum %08lx\n", image_index - 1, hash);
}

void filter_horizontally(const char image_in[200][320], char image_out[200][320])
{
    int x, y;

    arp_enter_profiled(1, 2, 0);
ato_profile_filter_image_hor:
    for (y = 0; y < Height; ++y)
    {
        arp_enter_kernel(1, 1, 0);
ato_kernel_filter_line_hor:
        for (x = 0; x < Width; ++x)
        {
            char left = x > 0 ? image_in[y][x - 1] : image_in[y][x];
            char center = image_in[y][x];
            char right = x < Width - 1 ? image_in[y][x + 1] : image_in[y][x];

            image_out[y][x] = (left + 2 * center + right) / 4;
        }
        arp_leave_kernel(1, 1);
    }
    arp_leave_profiled(1, 2);
}

void filter_vertically(const char image_in[200][320], char image_out[200][320])
{
    int x, y;

    arp_enter_profiled(1, 5, 0);
ato_profile_filter_image_vert:
    for (y = 0; y < Height; ++y)
    {
        arp_enter_kernel(1, 4, 0);
ato_kernel_filter_line_vert:
        for (x = 0; x < Width; ++x)
        {
            char top = y > 0 ? image_in[y - 1][x] : image_in[y][x];
            char center = image_in[y][x];
            char bottom = y < Height - 1 ? image_in[y + 1][x] : image_in[y][x];

            image_out[y][x] = (top + 2 * center + bottom) / 4;
        }
        arp_leave_kernel(1, 4);
    }
    arp_leave_profiled(1, 5);
}

int main(void)
{
    int t;
    char image_in[200][320], image_out[200][320], image_tmp[200][320];

    arp_add_callbacks(arp_long, enterCallback, leaveCallback, 0, 0, ISS);
    arp_start(1, 8, arp_record_average, 0, 0, 0, 0, 0);
    arp_enter(1, 8, 0);
    for (t = 0; t < nImages; ++t)
    {
        arp_enter(1, 7, 0);
        input(image_in);
        arp_enter(1, 3, 0);
        filter_horizontally(image_in, image_tmp);
        arp_leave(1, 3);
        arp_enter(1, 6, 0);
        filter_vertically(image_tmp, image_out);
        arp_leave(1, 6);
        output(image_out);
        arp_leave(1, 7);
    }
    arp_leave(1, 8);
    arp_finish();
    return 0;
}
