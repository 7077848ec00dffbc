/*
 * memsort - the parallel memory sort of the CHIP3S document (section 5):
 * N elements are split into P blocks, every block is quicksorted by its
 * own thread, then log2(P) bitonic merge stages combine the blocks: in
 * stage s (s = 1 .. log2 P) there are s phases; in each, block b and its
 * partner b ^ d (d = 2^(s-1), ..., 2, 1) exchange their blocks and merge:
 * one keeps the lower half of the union, the other the upper half
 * ("merge-split"). After the last stage the blocks, in order, are sorted.
 *
 *     memsort [N [P [T]]]    N elements (default 16384, at most 131072),
 *                            P blocks (power of two, 1..64, default 1),
 *                            T threads (divides P, default P)
 *
 * Thread t (ARP thread id 2 + t) owns blocks t*P/T .. (t+1)*P/T - 1. A
 * phase is: copy every partner block into a private receive buffer (the
 * exchange: what a message would carry on a distributed machine; in
 * shared memory, a copy), barrier, merge, barrier. With T = 1 a single
 * thread does all the work of P blocks: that is how the merge kernel is
 * measured on one core for calibration (STUDY.md). Without sim-host (on
 * qemu or a board) the simthread stubs run each thread to completion when
 * it is created and barriers do nothing, so only T = 1 sorts correctly
 * there: `memsort N P 1`.
 *
 * ARP sections (ids for chips-eval calibrate --section):
 *   1  plain   the whole sort (main thread: threads created .. joined)
 *   2  kernel  ato_kernel_sort   quicksort of one block of N/P elements
 *   3  kernel  ato_kernel_copy   copy of the partner's block (N/P elements)
 *   4  kernel  ato_kernel_merge  merge-split of two blocks, N/P outputs
 * Start indices (manual 4.4): sort of block b enters with b; copy and
 * merge of block b in phase k (0, 1, ... over all stages) with k*P + b, so
 * the counter tuples do not depend on T.
 *
 * Input: an LCG (Numerical Recipes constants) from seed 12345. Output: one
 * line `memsort N=.. P=.. T=.. sorted ok checksum XXXXXXXX` (the checksum
 * of the sorted array, sum of (i+1)*a[i] mod 2^32, which is the same for
 * every P and T), or `NOT SORTED at i` and exit status 1.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <atomium_rp.h>
#include <simthread.h>

#define NMAX 131072
#define PMAX 64
#define TMAX 16

typedef unsigned elem;

static elem store[2][NMAX];    /* each block's current and next contents */
static elem recv_buf[NMAX];    /* the partner's block, copied */
static unsigned char cur[PMAX]; /* which store[] holds block b now */
static unsigned nelem, nblocks, nthreads, bsize;
static simthread_barrier_t barrier;

static void insertion_sort(elem *a, int n)
{
    int i, j;
    for (i = 1; i < n; ++i) {
        elem v = a[i];
        for (j = i; j > 0 && a[j - 1] > v; --j)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Quicksort, median of three, insertion sort below 16 elements; recurses
 * into the smaller part so the depth stays below log2(n). */
static void quicksort(elem *a, int n)
{
    while (n > 16) {
        int i = 0, j = n - 1, m = n / 2;
        elem t, pivot;
        if (a[m] < a[0]) { t = a[m]; a[m] = a[0]; a[0] = t; }
        if (a[j] < a[0]) { t = a[j]; a[j] = a[0]; a[0] = t; }
        if (a[j] < a[m]) { t = a[j]; a[j] = a[m]; a[m] = t; }
        pivot = a[m];
        for (;;) {
            while (a[i] < pivot) ++i;
            while (a[j] > pivot) --j;
            if (i >= j) break;
            t = a[i]; a[i] = a[j]; a[j] = t;
            ++i; --j;
        }
        /* a[0..j] <= pivot <= a[j+1..n-1] */
        if (j + 1 < n - j - 1) {
            quicksort(a, j + 1);
            a += j + 1;
            n -= j + 1;
        } else {
            quicksort(a + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    insertion_sort(a, n);
}

/* The n smallest of the sorted a[0..n) and b[0..n), ascending, into out. */
static void merge_low(const elem *a, const elem *b, elem *out, int n)
{
    int i = 0, j = 0, k;
    for (k = 0; k < n; ++k)
        out[k] = a[i] <= b[j] ? a[i++] : b[j++];
}

/* The n largest of the sorted a[0..n) and b[0..n), ascending, into out. */
static void merge_high(const elem *a, const elem *b, elem *out, int n)
{
    int i = n - 1, j = n - 1, k;
    for (k = n - 1; k >= 0; --k)
        out[k] = a[i] >= b[j] ? a[i--] : b[j--];
}

/* A word-by-word copy (picolibc's memcpy, built for size, copies bytes);
 * kept a loop, not turned into a memcpy call. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
static void copy_block(elem *restrict dst, const elem *restrict src, int n)
{
    int i;
    for (i = 0; i + 4 <= n; i += 4) {
        dst[i] = src[i];
        dst[i + 1] = src[i + 1];
        dst[i + 2] = src[i + 2];
        dst[i + 3] = src[i + 3];
    }
    for (; i < n; ++i)
        dst[i] = src[i];
}

static elem *block(unsigned which, unsigned b)
{
    return &store[which][b * bsize];
}

static void worker(void *arg)
{
    const unsigned t = (unsigned)(unsigned long)arg;
    const arp_tid tid = (arp_tid)(2 + t);
    const unsigned first = t * nblocks / nthreads, last = (t + 1) * nblocks / nthreads;
    const int n = (int)bsize;
    unsigned b, k, d, phase = 0;

    arp_spawned(1, tid);
    for (b = first; b < last; ++b) {
        elem *a = block(cur[b], b);
        arp_enter_kernel(tid, 2, b);
ato_kernel_sort:
        quicksort(a, n);
        arp_leave_kernel(tid, 2);
    }
    simthread_barrier_wait(&barrier);

    /* bitonic merge over blocks: k = 2, 4, .. P is the stage's sequence length */
    for (k = 2; k <= nblocks; k *= 2) {
        for (d = k / 2; d > 0; d /= 2, ++phase) {
            for (b = first; b < last; ++b) {
                const elem *src = block(cur[b ^ d], b ^ d);
                elem *dst = &recv_buf[b * bsize];
                arp_enter_kernel(tid, 3, phase * nblocks + b);
ato_kernel_copy:
                copy_block(dst, src, n);
                arp_leave_kernel(tid, 3);
            }
            simthread_barrier_wait(&barrier);
            for (b = first; b < last; ++b) {
                const unsigned partner = b ^ d;
                const int ascending = (b & k) == 0;
                const elem *mine = block(cur[b], b), *theirs = &recv_buf[b * bsize];
                elem *out = block(cur[b] ^ 1u, b);
                arp_enter_kernel(tid, 4, phase * nblocks + b);
ato_kernel_merge:
                if ((b < partner) == ascending)
                    merge_low(mine, theirs, out, n);
                else
                    merge_high(mine, theirs, out, n);
                arp_leave_kernel(tid, 4);
                cur[b] ^= 1u;
            }
            simthread_barrier_wait(&barrier);
        }
    }
    arp_join(tid);
}

static int is_number(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; ++s)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* The numeric arguments, in order (the semihosting command line starts
 * with the program name, which Debian's picolibc passes as argv[1]). */
static void arguments(int argc, char **argv)
{
    unsigned values[3] = {16384, 1, 0};
    int i, got = 0;
    for (i = 1; i < argc && got < 3; ++i)
        if (is_number(argv[i]))
            values[got++] = (unsigned)strtoul(argv[i], 0, 10);
    nelem = values[0];
    nblocks = values[1];
    nthreads = values[2] ? values[2] : nblocks;
    if (nblocks == 0 || nblocks > PMAX || (nblocks & (nblocks - 1)) != 0 || nthreads == 0
        || nthreads > TMAX || nblocks % nthreads != 0 || nelem == 0 || nelem > NMAX
        || nelem % nblocks != 0) {
        printf("usage: memsort [N [P [T]]]: N <= %u a multiple of P, P a power of two <= %u, "
               "T <= %u divides P\n", NMAX, PMAX, TMAX);
        exit(2);
    }
    bsize = nelem / nblocks;
}

int main(int argc, char **argv)
{
    simthread_t threads[TMAX];
    unsigned i, t, b;
    unsigned long x = 12345, sum = 0;
    elem prev = 0;

    arguments(argc, argv);
    for (i = 0; i < nelem; ++i) {
        x = (x * 1664525ul + 1013904223ul) & 0xfffffffful;
        store[0][i] = (elem)x;
    }
    memset(cur, 0, sizeof cur);
    simthread_barrier_init(&barrier, nthreads);

    arp_add_callbacks(arp_long, enterCallback, leaveCallback, 0, 0, ISS);
    arp_start(1 + nthreads, 4, arp_record_all, 0, 0, 0, 0, 0);
    arp_enter(1, 1, 0);
    for (t = 0; t < nthreads; ++t)
        if (simthread_create(&threads[t], worker, (void *)(unsigned long)t) != 0) {
            printf("cannot create thread %u\n", t);
            exit(1);
        }
    for (t = 0; t < nthreads; ++t)
        simthread_join(threads[t]);
    arp_leave(1, 1);
    arp_finish();

    for (b = 0, i = 0; b < nblocks; ++b) {
        const elem *a = block(cur[b], b);
        unsigned j;
        for (j = 0; j < bsize; ++j, ++i) {
            if (a[j] < prev) {
                printf("memsort N=%u P=%u T=%u NOT SORTED at %u\n", nelem, nblocks, nthreads, i);
                return 1;
            }
            prev = a[j];
            sum = (sum + (unsigned long)(i + 1) * a[j]) & 0xfffffffful;
        }
    }
    printf("memsort N=%u P=%u T=%u sorted ok checksum %08lx\n", nelem, nblocks, nthreads, sum);
    return 0;
}
