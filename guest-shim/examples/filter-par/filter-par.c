/*
 * filter-par - the filter example of the ARP manual (section 2) with each
 * kernel loop split over NTHREADS threads, parallelised as manual 4.4
 * shows: every thread announces itself with arp_spawned(parent, tid),
 * enters the kernel with its own thread id and the start index of its
 * share of the loop (so the counter tuples continue where the previous
 * thread's share ends), and ends with arp_join(tid). Section ids are the
 * sequential program's (filter.c), so playback of its recording verifies.
 *
 * With -DWRONG_START_INDEX every thread enters with start index 0 (the
 * mistake 4.4 describes): playback then replays the first rows twice and
 * never the rest, and verification must fail.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <atomium_rp.h>
#include <simthread.h>

#define Height 200
#define Width 320
#ifndef nImages
#define nImages 4
#endif
#ifndef NTHREADS
#define NTHREADS 2
#endif

#ifdef WRONG_START_INDEX
#define START_INDEX(first_row) 0
#else
#define START_INDEX(first_row) (first_row)
#endif

static unsigned image_index;

/* Identical to filter.c, so the output is the same. */
static void input(char image[Height][Width])
{
    int x, y;
    unsigned t = image_index++;
    for (y = 0; y < Height; ++y)
        for (x = 0; x < Width; ++x)
            image[y][x] = (char)((x * 3u + y * 5u + t * 17u) ^ ((x + y * t) & 0x3fu));
}

static void output(char image[Height][Width])
{
    unsigned long hash = 2166136261ul;
    int x, y;
    for (y = 0; y < Height; ++y)
        for (x = 0; x < Width; ++x)
            hash = ((hash ^ (unsigned char)image[y][x]) * 16777619ul) & 0xfffffffful;
    printf("image %u checksum %08lx\n", image_index - 1, hash);
}

/* One thread's share of a filter: rows first_row .. last_row - 1. */
struct share {
    const char (*in)[Width];
    char (*out)[Width];
    int first_row, last_row;
    arp_tid tid;
};

/* The loops read the share into locals first, so the compiler keeps them
 * in registers and the kernels compile like the sequential ones. */
static void filter_rows_horizontally(void *arg)
{
    const struct share *s = arg;
    const char (*image_in)[Width] = s->in;
    char (*image_out)[Width] = s->out;
    const arp_tid tid = s->tid;
    const int first_row = s->first_row, last_row = s->last_row;
    int x, y;

    arp_spawned(1, tid);
    for (y = first_row; y < last_row; ++y)
    {
        arp_enter_kernel(tid, 1, START_INDEX(first_row));
ato_kernel_filter_line_hor:
        for (x = 0; x < Width; ++x)
        {
            char left = x > 0 ? image_in[y][x - 1] : image_in[y][x];
            char center = image_in[y][x];
            char right = x < Width - 1 ? image_in[y][x + 1] : image_in[y][x];

            image_out[y][x] = (left + 2 * center + right) / 4;
        }
        arp_leave_kernel(tid, 1);
    }
    arp_join(tid);
}

static void filter_rows_vertically(void *arg)
{
    const struct share *s = arg;
    const char (*image_in)[Width] = s->in;
    char (*image_out)[Width] = s->out;
    const arp_tid tid = s->tid;
    const int first_row = s->first_row, last_row = s->last_row;
    int x, y;

    arp_spawned(1, tid);
    for (y = first_row; y < last_row; ++y)
    {
        arp_enter_kernel(tid, 4, START_INDEX(first_row));
ato_kernel_filter_line_vert:
        for (x = 0; x < Width; ++x)
        {
            char top = y > 0 ? image_in[y - 1][x] : image_in[y][x];
            char center = image_in[y][x];
            char bottom = y < Height - 1 ? image_in[y + 1][x] : image_in[y][x];

            image_out[y][x] = (top + 2 * center + bottom) / 4;
        }
        arp_leave_kernel(tid, 4);
    }
    arp_join(tid);
}

/* Runs `rows` over NTHREADS threads with ids 2..NTHREADS+1. */
static void in_parallel(void (*rows)(void *), const char in[Height][Width], char out[Height][Width])
{
    struct share shares[NTHREADS];
    simthread_t threads[NTHREADS];
    int k;

    for (k = 0; k < NTHREADS; ++k)
    {
        shares[k].in = in;
        shares[k].out = out;
        shares[k].first_row = Height * k / NTHREADS;
        shares[k].last_row = Height * (k + 1) / NTHREADS;
        shares[k].tid = (arp_tid)(2 + k);
        if (simthread_create(&threads[k], rows, &shares[k]) != 0)
        {
            printf("cannot create thread %d\n", k);
            exit(1);
        }
    }
    for (k = 0; k < NTHREADS; ++k)
        simthread_join(threads[k]);
}

void filter_horizontally(const char image_in[200][320], char image_out[200][320])
{
    arp_enter_profiled(1, 2, 0);
ato_profile_filter_image_hor:
    in_parallel(filter_rows_horizontally, image_in, image_out);
    arp_leave_profiled(1, 2);
}

void filter_vertically(const char image_in[200][320], char image_out[200][320])
{
    arp_enter_profiled(1, 5, 0);
ato_profile_filter_image_vert:
    in_parallel(filter_rows_vertically, image_in, image_out);
    arp_leave_profiled(1, 5);
}

int main(void)
{
    int t;
    static char image_in[200][320], image_out[200][320], image_tmp[200][320];

    arp_add_callbacks(arp_long, enterCallback, leaveCallback, 0, 0, ISS);
    arp_start(1 + NTHREADS, 8, arp_record_average, 0, 0, 0, 0, 0);
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
