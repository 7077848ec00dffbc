/*
 * traps - RISC-V synchronous traps and the machine timer's interrupts
 * (issue 39), driven from riscv/traps.S. The first argument picks the
 * case:
 *
 *   traps                    every synchronous trap kind in a loop of 100
 *                            and 200 (sections 1-16), then what each
 *                            handler saw: mcause, mepc, mtval, mstatus
 *   traps tick-ecall T P N   ecalls in a loop with timer T (sio: RP2350's
 *                            SIO counting cycles, clint: the FE310's
 *                            CLINT) interrupting every P ticks (section 20)
 *   traps nested T P N       the same, the timer handler making an ecall
 *   traps pending T          the timer made pending inside an ecall
 *                            handler: taken after its mret
 *   traps software N         the CLINT's machine software interrupt N
 *                            times (section 21)
 *   traps mtvec-zero         an ecall with mtvec 0
 *   traps mtvec-data         an ecall with mtvec not code
 *   traps timer-mtvec-zero T the timer interrupt with mtvec 0
 *   traps storm              a handler that traps itself, forever
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <atomium_rp.h>

#define REG(a) (*(volatile uint32_t *)(a))

struct trap_rec {
    uint32_t cause, epc, tval, status;
};
extern volatile struct trap_rec trap_rec;
extern volatile uint32_t counts[4];
extern volatile uint32_t misaligned[2];

extern void run_ecall(void), run_ebreak(void), run_cebreak(void), run_illegal(void);
extern void run_cunimp(void), run_unimp(void), run_amo(void), run_lr(void);
extern const char t_ecall[], t_ebreak[], t_cebreak[], t_illegal[];
extern const char t_cunimp[], t_unimp[], t_amo[], t_lr[], t_pending[];
extern void h_mixed(void), h_nested(void);
extern void tick_ecall(uint32_t mtimecmp, uint32_t mtime, uint32_t period, uint32_t n,
                       void (*handler)(void));
extern void pending_in_handler(uint32_t mtimecmp);
extern void software(uint32_t msip, uint32_t n);
extern void ecall_mtvec_zero(void), ecall_mtvec_data(void), storm(void);
extern void timer_mtvec_zero(uint32_t mtimecmp);

/* RP2350 SIO (datasheet 3.1.8) and the FE310-G002 CLINT (manual ch. 9) */
#define SIO_MTIME_CTRL 0xd00001a4u
#define SIO_MTIME 0xd00001b0u
#define SIO_MTIMECMP 0xd00001b8u
#define CLINT_MSIP 0x02000000u
#define CLINT_MTIMECMP 0x02004000u
#define CLINT_MTIME 0x0200bff8u

/* An address as the kernels' symbols name it. */
static const char *place(uint32_t value, const char *site, char *buf)
{
    uint32_t at = (uint32_t)(uintptr_t)site;
    uint32_t word = (uint32_t)(uintptr_t)misaligned;
    if (value == at)
        return "site";
    if (value > at && value - at < 16)
        sprintf(buf, "site+%lu", (unsigned long)(value - at));
    else if (value >= word && value - word < 8)
        sprintf(buf, "misaligned+%lu", (unsigned long)(value - word));
    else
        sprintf(buf, "%08lx", (unsigned long)value);
    return buf;
}

static void report(const char *kind, const char *site)
{
    char epc[32], tval[32];
    uint32_t s = trap_rec.status;
    printf("%s mcause=%lu mepc=%s mtval=%s mpp=%lu mpie=%lu mie=%lu\n", kind,
           (unsigned long)trap_rec.cause, place(trap_rec.epc, site, epc),
           place(trap_rec.tval, site, tval), (unsigned long)((s >> 11) & 3),
           (unsigned long)((s >> 7) & 1), (unsigned long)((s >> 3) & 1));
}

static void synchronous(void)
{
    static const struct {
        const char *kind;
        void (*run)(void);
        const char *site;
    } cases[] = {
        {"ecall", run_ecall, t_ecall},       {"ebreak", run_ebreak, t_ebreak},
        {"c.ebreak", run_cebreak, t_cebreak}, {"illegal", run_illegal, t_illegal},
        {"c.unimp", run_cunimp, t_cunimp},   {"unimp", run_unimp, t_unimp},
        {"amo", run_amo, t_amo},             {"lr", run_lr, t_lr},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cases[i].run();
        report(cases[i].kind, cases[i].site);
    }
    printf("misaligned %08lx %08lx\n", (unsigned long)misaligned[0], (unsigned long)misaligned[1]);
}

/* Timer T's mtimecmp and mtime, the SIO's counting core cycles. */
static void timer(const char *name, uint32_t *mtimecmp, uint32_t *mtime)
{
    if (strcmp(name, "clint") == 0) {
        *mtimecmp = CLINT_MTIMECMP;
        *mtime = CLINT_MTIME;
    } else {
        REG(SIO_MTIME_CTRL) = 3; /* EN | FULLSPEED */
        *mtimecmp = SIO_MTIMECMP;
        *mtime = SIO_MTIME;
    }
}

/* The command word: the first argument that is one (Debian's picolibc
 * passes the program name on as argv[1]). */
static int command(int argc, char **argv)
{
    static const char *const words[] = {"tick-ecall", "nested",     "pending",
                                        "software",   "mtvec-zero", "mtvec-data",
                                        "timer-mtvec-zero", "storm"};
    for (int i = 1; i < argc; ++i)
        for (unsigned w = 0; w < sizeof words / sizeof words[0]; ++w)
            if (strcmp(argv[i], words[w]) == 0)
                return i;
    return 0;
}

int main(int argc, char **argv)
{
    arp_add_callbacks(arp_ullong, 0, 0, 0, 0, 0);
    arp_start(1, 21, arp_record_all, 0, 0, 0, 0, 0);
    int at = command(argc, argv);
    const char *what = at ? argv[at] : "";
    const char *arg1 = at + 1 < argc ? argv[at + 1] : "sio";
    uint32_t mtimecmp, mtime;
    if (!at) {
        synchronous();
    } else if ((!strcmp(what, "tick-ecall") || !strcmp(what, "nested")) && at + 3 < argc) {
        timer(arg1, &mtimecmp, &mtime);
        tick_ecall(mtimecmp, mtime, strtoul(argv[at + 2], 0, 0), strtoul(argv[at + 3], 0, 0),
                   strcmp(what, "nested") ? h_mixed : h_nested);
        printf("ecalls %lu ticks %lu\n", (unsigned long)counts[0], (unsigned long)counts[1]);
    } else if (!strcmp(what, "pending")) {
        char epc[32];
        timer(arg1, &mtimecmp, &mtime);
        pending_in_handler(mtimecmp);
        printf("timer mepc=%s inside=%lu\n", place(counts[0], t_pending, epc),
               (unsigned long)counts[1]);
    } else if (!strcmp(what, "software") && at + 1 < argc) {
        software(CLINT_MSIP, strtoul(argv[at + 1], 0, 0));
        printf("software %lu mcause=%08lx\n", (unsigned long)counts[0],
               (unsigned long)counts[1]);
    } else if (!strcmp(what, "mtvec-zero")) {
        ecall_mtvec_zero();
    } else if (!strcmp(what, "mtvec-data")) {
        ecall_mtvec_data();
    } else if (!strcmp(what, "timer-mtvec-zero")) {
        timer(arg1, &mtimecmp, &mtime);
        timer_mtvec_zero(mtimecmp);
    } else if (!strcmp(what, "storm")) {
        storm();
    }
    arp_finish();
    return 0;
}
