/*
 * hostile - the third audit's hostile guests (issue 30), one command word
 * and a count each, so a test can scale them: every shape that once made
 * the host's memory or time grow without bound.
 *
 *   hostile print N       prints N lines of 100 bytes (console output)
 *   hostile nest N        arp_enter nested N deep, then left again
 *   hostile paths N       N distinct section paths (two levels)
 *   hostile spawn N       arp_start with max_sid 65535, then N threads
 *                         spawned, each entering section 65535, none joined
 *   hostile names N       N arp_set_file_name calls the host refuses
 *   hostile kernels N     N kernel enter/leave pairs (playback samples,
 *                         trace events)
 *   hostile smc N         rewrites a function in RAM N times, calling it
 *                         after each rewrite
 *   hostile calls N       (ARM) N calls that never return: `bl` to the
 *                         next instruction, then a branch back
 *   hostile threads N     creates and joins N threads, one after another
 *   hostile handle WHERE  simthread_create with the handle pointer in
 *                         read-only memory: `vector` (the vector table),
 *                         `flash` (code)
 *   hostile open NAME     opens the host file NAME (beneath --fs-root) for
 *                         reading, then says what became of it
 *   hostile exit          exits at once (a run whose set-up is the point)
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <atomium_rp.h>
#include <simthread.h>

static volatile unsigned sink;

static void __attribute__((noinline)) work(void *arg)
{
    sink += (unsigned)(uintptr_t)arg;
}

static unsigned long count_arg(int argc, char **argv, int at)
{
    return at + 1 < argc ? strtoul(argv[at + 1], 0, 10) : 0;
}

static void print(unsigned long n)
{
    static const char line[] = "0123456789012345678901234567890123456789"
                               "0123456789012345678901234567890123456789"
                               "0123456789012345678\n"; /* 100 bytes */
    unsigned long i;
    for (i = 0; i < n; ++i)
        fwrite(line, 1, sizeof line - 1, stdout);
    fflush(stdout);
}

static void start(unsigned max_sid)
{
    arp_add_callbacks(arp_uint, 0, 0, 0, 0, 0);
    arp_start(65535, max_sid, arp_record_average, 0, 0, 0, 0, 0);
}

static void nest(unsigned long n)
{
    unsigned long i;
    start(65535);
    for (i = 0; i < n; ++i)
        arp_enter(1, (arp_sid)(1 + i % 65534), 0);
    arp_enter_kernel(1, 65535, 0);
    arp_leave_kernel(1, 65535);
    for (i = n; i-- > 0;)
        arp_leave(1, (arp_sid)(1 + i % 65534));
    arp_finish();
}

static void paths(unsigned long n)
{
    unsigned long i;
    start(65535);
    for (i = 0; i < n; ++i) {
        arp_enter(1, (arp_sid)(1 + i / 65000), 0);
        arp_enter_kernel(1, (arp_sid)(1 + i % 65000), 0);
        arp_leave_kernel(1, (arp_sid)(1 + i % 65000));
        arp_leave(1, (arp_sid)(1 + i / 65000));
    }
    arp_finish();
}

static void spawn(unsigned long n)
{
    unsigned long i;
    start(65535);
    for (i = 0; i < n && i < 65534; ++i) {
        arp_spawned(1, (arp_tid)(2 + i));
        arp_enter_kernel((arp_tid)(2 + i), 65535, 0);
        arp_leave_kernel((arp_tid)(2 + i), 65535);
    }
    printf("spawned %lu\n", i);
}

static void names(unsigned long n)
{
    unsigned long i;
    for (i = 0; i < n; ++i)
        arp_set_file_name("/elsewhere/data.arp");
    printf("named %lu\n", n);
}

static void kernels(unsigned long n)
{
    unsigned long i;
    arp_add_callbacks(arp_uint, 0, 0, 0, 0, 0);
    arp_start(1, 2, arp_record_all, 0, 0, 0, 0, 0);
    for (i = 0; i < n; ++i) {
        arp_enter_kernel(1, 1, 0);
        sink += i;
        arp_leave_kernel(1, 1);
    }
    arp_finish();
    printf("kernels %lu\n", n);
}

/* a function rewritten again and again; its page is code from then on */
static uint32_t area[2048] __attribute__((aligned(4096)));

typedef int (*fn_t)(void);

static fn_t write_function(uint32_t *p, unsigned value)
{
#if defined(__arm__)
    p[0] = (0x4770u << 16) | 0x2000u | (value & 0xffu); /* movs r0, #v; bx lr */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    return (fn_t)((uintptr_t)p | 1u);
#else
    p[0] = ((value & 0x7ffu) << 20) | (10u << 7) | 0x13u; /* addi a0, zero, v */
    p[1] = 0x00008067u;                                   /* ret */
    __asm__ volatile(".word 0x0000100f /* fence.i */" ::: "memory");
    return (fn_t)(uintptr_t)p;
#endif
}

static void smc(unsigned long n)
{
    unsigned long i, sum = 0;
    for (i = 0; i < n; ++i)
        /* a different address each time within the page: a new block */
        sum += (unsigned long)write_function(&area[2 * (i % 1000)], (unsigned)i)();
    printf("smc %lu\n", sum);
}

static void calls(unsigned long n)
{
#if defined(__arm__)
    /* each `bl 1f` is a call whose return address is the next
     * instruction, which branches back without returning */
    __asm__ volatile("1:  bl 2f\n"
                     "2:  subs %0, %0, #1\n"
                     "    bne 1b\n"
                     : "+r"(n)
                     :
                     : "lr", "cc", "memory");
#else
    (void)n;
#endif
    printf("calls done\n");
}

static void threads(unsigned long n)
{
    unsigned long i;
    for (i = 0; i < n; ++i) {
        simthread_t t;
        if (simthread_create(&t, work, (void *)i) != 0) {
            printf("create failed at %lu\n", i);
            return;
        }
        simthread_join(t);
    }
    printf("threads %lu\n", n);
}

static void handle(const char *where)
{
    simthread_t *p = strcmp(where, "vector") == 0 ? (simthread_t *)0x4 : (simthread_t *)(void *)&work;
    int r = simthread_create(p, work, 0);
    printf("created: %d\n", r);
}

static void open_file(const char *name)
{
    char buf[16];
    int fd = open(name, O_RDONLY);
    if (fd < 0) {
        printf("open %s: refused\n", name);
        return;
    }
    printf("open %s: read %d\n", name, (int)read(fd, buf, sizeof buf));
}

int main(int argc, char **argv)
{
    static const char *const words[] = {"print", "nest",  "paths", "spawn",  "names",  "kernels",
                                        "smc",   "calls", "threads", "handle", "open", "exit"};
    int i, at = 0;
    unsigned w;
    const char *what = "";
    for (i = 1; i < argc && !at; ++i)
        for (w = 0; w < sizeof words / sizeof words[0]; ++w)
            if (strcmp(argv[i], words[w]) == 0) {
                at = i;
                what = argv[i];
            }
    unsigned long n = count_arg(argc, argv, at);
    if (strcmp(what, "print") == 0)
        print(n);
    else if (strcmp(what, "nest") == 0)
        nest(n);
    else if (strcmp(what, "paths") == 0)
        paths(n);
    else if (strcmp(what, "spawn") == 0)
        spawn(n);
    else if (strcmp(what, "names") == 0)
        names(n);
    else if (strcmp(what, "kernels") == 0)
        kernels(n);
    else if (strcmp(what, "smc") == 0)
        smc(n);
    else if (strcmp(what, "calls") == 0)
        calls(n);
    else if (strcmp(what, "threads") == 0)
        threads(n);
    else if (strcmp(what, "handle") == 0 && at + 1 < argc)
        handle(argv[at + 1]);
    else if (strcmp(what, "open") == 0 && at + 1 < argc)
        open_file(argv[at + 1]);
    else if (strcmp(what, "exit") == 0)
        return 0;
    else {
        printf("hostile: unknown command\n");
        return 2;
    }
    return 0;
}
