/*
 * The image filter of the ARP manual (sections 1-2, listing of 2.4),
 * instrumented by hand with sections 1..8, linked natively with libarp.
 *
 * Callbacks are counter based (manual 2.3 with the ISS replaced by a
 * pixel counter), so the recorded values are deterministic: a kernel
 * line costs Width ticks, a profiled image pass Height * Width.
 *
 * usage: image_filter MODE FILE
 *   all | average | histogram | binary   record in that mode into FILE
 *   playback                             play FILE back and check values
 *   threads                              record_all, y-loops split over two
 *                                        pthreads with start indices 0 and
 *                                        Height/2 (manual 4.4)
 *   query                                print FILE through the query API
 *   errors                               break the rules, with an error callback
 *   fatal                                break a rule without an error callback
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <atomium_rp.h>

#define Height 4
#define Width 8
#define nImages 3

static unsigned long ticks; /* the "simulator": one tick per pixel */
static int playback, played, mismatches, lock_calls, spawn_calls, join_calls;
static int threaded;

static void enterCallback(const arp_sid sid, void *data, void *context)
{
    long *area = (long *)data;
    if (playback) {
        long expected = (sid == 1 || sid == 4) ? Width : Height * Width;
        played++;
        if (*area != expected)
            mismatches++;
    }
    *area = (long)*(unsigned long *)context;
}

static void leaveCallback(const arp_sid sid, void *data, void *context)
{
    long *area = (long *)data;
    (void)sid;
    *area = (long)*(unsigned long *)context - *area;
}

/* Manual section 1: the system clock as a second callback set. */
static void clockEnter(const arp_sid sid, void *data, void *context)
{
    (void)sid;
    (void)context;
    *(double *)data = (double)clock();
}

static void clockLeave(const arp_sid sid, void *data, void *context)
{
    (void)sid;
    (void)context;
    *(double *)data = (double)clock() - *(double *)data;
}

static void spawnCallback(const arp_tid tid, void **contextp)
{
    (void)tid;
    (void)contextp;
    spawn_calls++;
}

static void joinCallback(const arp_tid tid, void **contextp)
{
    (void)tid;
    (void)contextp;
    join_calls++;
}

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

static void lockCallback(const void *data, void *context)
{
    (void)data;
    lock_calls++;
    pthread_mutex_lock((pthread_mutex_t *)context);
}

static void unlockCallback(const void *data, void *context)
{
    (void)data;
    pthread_mutex_unlock((pthread_mutex_t *)context);
}

static void errorCallback(const arp_error_t type, const char *msg, void *context)
{
    (void)context;
    printf("ERROR %d %s\n", (int)type, msg);
}

static char image_in[Height][Width], image_tmp[Height][Width], image_out[Height][Width];

static void filter_line_hor(arp_tid tid, int y)
{
    int x;
    arp_enter_kernel(tid, 1, y);
ato_kernel_filter_line_hor:
    for (x = 0; x < Width; ++x) {
        char left = x > 0 ? image_in[y][x - 1] : image_in[y][x];
        char center = image_in[y][x];
        char right = x < Width - 1 ? image_in[y][x + 1] : image_in[y][x];
        image_tmp[y][x] = (left + 2 * center + right) / 4;
        __atomic_add_fetch(&ticks, 1, __ATOMIC_RELAXED);
    }
    arp_leave_kernel(tid, 1);
}

struct half { arp_tid tid; int from, to; };

static void *hor_thread(void *arg)
{
    struct half *h = arg;
    int y;
    arp_spawned(1, h->tid);
    for (y = h->from; y < h->to; ++y)
        filter_line_hor(h->tid, h->from); /* start index: the first line */
    arp_join(h->tid);
    return NULL;
}

static void filter_horizontally(void)
{
    int y;
    arp_enter_profiled(1, 2, 0);
ato_profile_filter_image_hor:
    if (threaded) {
        struct half a = {2, 0, Height / 2}, b = {3, Height / 2, Height};
        pthread_t ta, tb;
        pthread_create(&ta, NULL, hor_thread, &a);
        pthread_create(&tb, NULL, hor_thread, &b);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
    } else {
        for (y = 0; y < Height; ++y)
            filter_line_hor(1, 0);
    }
    arp_leave_profiled(1, 2);
}

static void filter_vertically(void)
{
    int x, y;
    arp_enter_profiled(1, 5, 0);
ato_profile_filter_image_vert:
    for (y = 0; y < Height; ++y) {
        arp_enter_kernel(1, 4, 0);
    ato_kernel_filter_line_vert:
        for (x = 0; x < Width; ++x) {
            char top = y > 0 ? image_tmp[y - 1][x] : image_tmp[y][x];
            char center = image_tmp[y][x];
            char bottom = y < Height - 1 ? image_tmp[y + 1][x] : image_tmp[y][x];
            image_out[y][x] = (top + 2 * center + bottom) / 4;
            ticks++;
        }
        arp_leave_kernel(1, 4);
    }
    arp_leave_profiled(1, 5);
}

static void input(int t)
{
    memset(image_in, t * 7, sizeof image_in);
}

static int query(const char *file)
{
    unsigned i, d, n;
    arp_load_data(file, errorCallback, NULL);
    n = arp_get_nTraces();
    printf("mode %d mult %u type0 %d traces %u\n", (int)arp_get_mode(), arp_get_data_mult(),
           (int)arp_get_data_type(0), n);
    for (i = 0; i < n && i < 2; ++i) {
        arp_trace tr = arp_get_trace(i);
        printf("trace %u count %u:", i, arp_trace_get_count(tr));
        for (d = 0; d < arp_trace_get_stack_length(tr); ++d)
            printf(" %u@%d", (unsigned)arp_trace_get_stack_pos(tr, d), (int)arp_trace_get_stack_index(tr, d));
        printf(" = %ld\n", *(const long *)arp_trace_get_value(tr, 0));
        arp_free_trace(tr);
    }
    arp_switch_mode(arp_record_average);
    {
        arp_trace tr = arp_get_trace(0);
        printf("average traces %u first count %u mean %ld\n", arp_get_nTraces(), arp_trace_get_count(tr),
               *(const long *)arp_trace_get_value(tr, 0));
        arp_free_trace(tr);
    }
    arp_switch_mode(arp_record_all); /* refused: reported to the callback */
    arp_free_data();
    return 0;
}

static int break_rules(const char *file, int with_callback)
{
    arp_add_callbacks(arp_long, enterCallback, leaveCallback, 0, 0, &ticks);
    arp_set_file_name(file);
    arp_start(1, 8, arp_record_all, with_callback ? errorCallback : 0, 0, 0, 0, 0);
    arp_enter(1, 8, 0);
    arp_leave(1, 7);              /* leave without enter */
    arp_enter_kernel(1, 1, 0);
    arp_enter_kernel(1, 4, 0);    /* kernels nested */
    arp_enter(2, 9, 0);           /* tid and sid above the maxima */
    arp_enter(1, 9, 0);           /* sid above the maximum */
    arp_leave(1, 8);              /* does not match the innermost (1) */
    arp_leave_kernel(1, 1);
    arp_start(1, 8, arp_record_all, 0, 0, 0, 0, 0); /* started twice */
    arp_finish();                 /* section 8 still open: saved as partial */
    printf("done\n");
    return 0;
}

int main(int argc, char **argv)
{
    int t;
    arp_mode mode = arp_record_all;
    const char *what = argc > 1 ? argv[1] : "all";
    const char *file = argc > 2 ? argv[2] : "data.arp";

    if (!strcmp(what, "query"))
        return query(file);
    if (!strcmp(what, "errors"))
        return break_rules(file, 1);
    if (!strcmp(what, "fatal"))
        return break_rules(file, 0);
    if (!strcmp(what, "average"))
        mode = arp_record_average;
    else if (!strcmp(what, "histogram"))
        mode = arp_record_histogram;
    else if (!strcmp(what, "playback"))
        mode = arp_playback, playback = 1;
    else if (!strcmp(what, "binary"))
        arp_set_output_file_format(arp_binary);
    else if (!strcmp(what, "threads"))
        threaded = 1;

    arp_add_callbacks(arp_long, enterCallback, leaveCallback, spawnCallback, joinCallback, &ticks);
    arp_add_callbacks(arp_double, clockEnter, clockLeave, 0, 0, 0);
    arp_set_file_name(file);
    arp_start(3, 8, mode, 0, 0, lockCallback, unlockCallback, &mutex);
    arp_enter(1, 8, 0);
    for (t = 0; t < nImages; ++t) {
        arp_enter(1, 7, 0);
        input(t);
        arp_enter(1, 3, 0);
        filter_horizontally();
        arp_leave(1, 3);
        arp_enter(1, 6, 0);
        filter_vertically();
        arp_leave(1, 6);
        arp_leave(1, 7);
    }
    arp_leave(1, 8);
    arp_finish();
    printf("ticks %lu played %d mismatches %d locks %d spawns %d joins %d\n", ticks, played, mismatches,
           lock_calls, spawn_calls, join_calls);
    return 0;
}
