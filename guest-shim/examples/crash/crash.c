/*
 * crash - a guest that misbehaves on request, for sim-host's fault, limit
 * and interruption handling. It records a few kernel samples first, so a
 * test can check they survive in the partial data.arp.
 *
 *   crash unmapped   read of unmapped memory
 *   crash flash      write to read-only code memory
 *   crash undef      undefined instruction
 *   crash stack      unbounded recursion: the stack runs out of RAM
 *   crash loop       never ends (for --max-cycles, --timeout, Ctrl-C)
 *   crash exit N     exits with status N
 *   crash stdin      waits for a line on stdin (for --timeout and signals)
 *   crash name FILE  names its data file FILE (arp_set_file_name)
 *   crash files      opens the host file `f` until the host refuses, then
 *                    says how many it got (needs --fs-root holding `f`)
 *   crash readcode   reads the host file `f` into its own code (SYS_READ
 *                    into read-only memory)
 *   crash armstate   (ARM) branches to an even address: ARM state, which a
 *                    Thumb-only core cannot enter
 *   crash readprint ADDR
 *                    reads the word at ADDR (hex) and, in the same basic
 *                    block, prints through semihosting: a read that stops
 *                    the run must stop it before the print
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <atomium_rp.h>

static volatile unsigned sink;

void __attribute__((noinline)) work(unsigned n)
{
    unsigned i;
    for (i = 0; i < n; ++i)
        sink += i * i;
}

static unsigned __attribute__((noinline)) recurse(unsigned depth)
{
    volatile unsigned frame[16];
    frame[depth % 16] = depth;
    if (depth == sink) /* never true while sink is 0; keeps gcc from calling it infinite */
        return 0;
    return recurse(depth + 1) + frame[depth % 16];
}

/* Reads the word at `addr`, then prints `message` with the semihosting
 * call SYS_WRITE0, with no branch between: one translated block. */
static void __attribute__((noinline)) read_then_print(unsigned addr, const char *message)
{
#if defined(__arm__)
    __asm__ volatile("ldr r3, [%0]\n"
                     "movs r0, #4\n"
                     "mov r1, %1\n"
                     "bkpt 0xab\n"
                     :
                     : "r"(addr), "r"(message)
                     : "r0", "r1", "r3", "memory");
#else
    __asm__ volatile(".option push\n"
                     ".option norvc\n"
                     "lw t0, 0(%0)\n"
                     "li a0, 4\n"
                     "mv a1, %1\n"
                     ".balign 4\n"
                     "slli x0, x0, 0x1f\n"
                     "ebreak\n"
                     "srai x0, x0, 7\n"
                     ".option pop\n"
                     :
                     : "r"(addr), "r"(message)
                     : "a0", "a1", "t0", "memory");
#endif
}

/* The command word: the first argument that is one. (The semihosting
 * command line starts with the program name, as the ARM specification
 * says; Debian's picolibc passes it on as argv[1].) */
static int command(int argc, char **argv)
{
    static const char *const words[] = {"unmapped", "flash", "undef", "stack", "loop",
                                        "exit",     "stdin", "name",  "files", "readcode",
                                        "armstate", "readprint"};
    int i;
    unsigned w;
    for (i = 1; i < argc; ++i)
        for (w = 0; w < sizeof words / sizeof words[0]; ++w)
            if (strcmp(argv[i], words[w]) == 0)
                return i;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned k;
    int at = command(argc, argv);
    const char *what = at ? argv[at] : "";

    if (strcmp(what, "name") == 0 && at + 1 < argc)
        arp_set_file_name(argv[at + 1]);
    arp_add_callbacks(arp_uint, 0, 0, 0, 0, 0);
    arp_start(1, 2, arp_record_all, 0, 0, 0, 0, 0);
    arp_enter(1, 2, 0);
    for (k = 0; k < 3; ++k) {
        arp_enter_kernel(1, 1, 0);
        work(100);
        arp_leave_kernel(1, 1);
    }
    printf("recorded 3 samples, now: %s\n", what);
    fflush(stdout);

    if (strcmp(what, "unmapped") == 0)
        sink = *(volatile unsigned *)0x90000000u;
    else if (strcmp(what, "flash") == 0)
        *(volatile unsigned *)(void *)&work = 0;
    else if (strcmp(what, "undef") == 0)
        __builtin_trap();
    else if (strcmp(what, "stack") == 0)
        sink = recurse(1);
    else if (strcmp(what, "loop") == 0)
        for (;;)
            work(1000);
    else if (strcmp(what, "exit") == 0 && at + 1 < argc)
        exit(atoi(argv[at + 1]));
    else if (strcmp(what, "stdin") == 0) {
        char line[32];
        printf("read: %s\n", fgets(line, sizeof line, stdin) ? line : "(end of input)");
    } else if (strcmp(what, "files") == 0) {
        int n = 0;
        while (n < 1000 && open("f", O_RDONLY) >= 0)
            ++n;
        printf("opened %d files\n", n);
    } else if (strcmp(what, "armstate") == 0) {
#if defined(__arm__)
        volatile unsigned target = (unsigned)&work & ~1u; /* bit 0 clear: ARM state */
        ((void (*)(unsigned))target)(1);
#endif
    } else if (strcmp(what, "readprint") == 0 && at + 1 < argc) {
        read_then_print((unsigned)strtoul(argv[at + 1], 0, 16), "printed after the read\n");
    } else if (strcmp(what, "readcode") == 0) {
        int fd = open("f", O_RDONLY);
        printf("read into code: %d\n", (int)read(fd, (void *)&work, 4));
    }

    arp_leave(1, 2);
    arp_finish();
    return 0;
}
