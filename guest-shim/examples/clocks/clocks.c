/*
 * clocks - the core's own clocks and exceptions, driven by sim-host's
 * simulated cycle count (issue 26). The first argument picks the case:
 *
 *   clocks dwt          DWT_CYCCNT around a 100-iteration loop (ARMv7-M)
 *   clocks systick      SYST_CVR around the same loop (Cortex-M)
 *   clocks cycle        RISC-V `cycle` around the same loop
 *   clocks instret      RISC-V `instret` around the same loop
 *   clocks tick R N     SysTick interrupts with reload R over N iterations
 *   clocks mtick P N    RISC-V machine timer interrupts every P cycles over
 *                       N iterations (RP2350's SIO mtime, FULLSPEED)
 *   clocks pendsv       two tasks switched by PendSV (ARMv7-M)
 *   clocks svc          the counter around an SVC with an empty handler
 *   clocks tailchain    the same, the SVC handler pending PendSV
 *   clocks harness      an Embench/CoreMark-style start/stop timer
 *   clocks cpuid        prints CPUID
 *   clocks mpu          enables the MPU (refused by sim-host)
 *   clocks idpfr        reads ID_PFR0 (not modelled by sim-host)
 *   clocks reset        asks for a system reset (AIRCR.SYSRESETREQ)
 *
 * The measured stretches are inline assembly between the ARP enter and
 * leave calls, so the test can derive by hand what the counter must read.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <atomium_rp.h>

#define REG(a) (*(volatile uint32_t *)(a))

static volatile uint32_t t0, t1;

#if defined(__arm__)
#define DEMCR 0xE000EDFCu
#define DWT_CTRL 0xE0001000u
#define DWT_CYCCNT 0xE0001004u
#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define ICSR 0xE000ED04u
#define AIRCR 0xE000ED0Cu
#define SHPR3 0xE000ED20u
#define CPUID 0xE000ED00u

/* t0, t1 = the word at `counter` read right after arp_enter_kernel(1, 1,
 * 0) returns and right before arp_leave_kernel(1, 1) is called, around
 * 100 iterations of subs/bne. Thumb-1 encodings: the same code on every
 * Cortex-M. */
__attribute__((noinline)) static void measure(volatile uint32_t *counter)
{
    __asm volatile(
        ".syntax unified\n"
        "mov r4, %0\n"
        "movs r0, #1\n"
        "movs r1, #1\n"
        "movs r2, #0\n"
        "bl arp_enter_kernel\n"
        "ldr r5, [r4]\n"
        "movs r3, #100\n"
        "1: subs r3, #1\n"
        "bne 1b\n"
        "ldr r6, [r4]\n"
        "movs r0, #1\n"
        "movs r1, #1\n"
        "bl arp_leave_kernel\n"
        "ldr r0, =t0\n"
        "str r5, [r0]\n"
        "ldr r0, =t1\n"
        "str r6, [r0]\n"
        :
        : "r"(counter)
        : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r12", "lr", "memory", "cc");
}

static volatile uint32_t ticks;

/* ticks++, written out so that the test can price the handler by hand */
__attribute__((naked)) void arm_systick_isr(void)
{
    __asm volatile(".syntax unified\n"
                   "ldr r0, =ticks\n"
                   "ldr r1, [r0]\n"
                   "adds r1, #1\n"
                   "str r1, [r0]\n"
                   "bx lr\n"
                   ".ltorg\n");
}

/* SysTick with reload `reload` and TICKINT enabled by the store right
 * after arp_enter_kernel returns, disabled by the store right before the
 * leave call's argument set-up: `n` iterations of subs/bne between. */
__attribute__((noinline)) static void tick(uint32_t reload, uint32_t n)
{
    REG(SYST_CSR) = 0;
    REG(SYST_RVR) = reload;
    REG(SYST_CVR) = 0;
    __asm volatile(
        ".syntax unified\n"
        "mov r4, %0\n"
        "mov r3, %1\n"
        "movs r5, #7\n"
        "movs r6, #0\n"
        "movs r0, #1\n"
        "movs r1, #1\n"
        "movs r2, #0\n"
        "bl arp_enter_kernel\n"
        "str r5, [r4]\n"
        "1: subs r3, #1\n"
        "bne 1b\n"
        "str r6, [r4]\n"
        "movs r0, #1\n"
        "movs r1, #1\n"
        "bl arp_leave_kernel\n"
        :
        : "r"((volatile uint32_t *)SYST_CSR), "r"(n)
        : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r12", "lr", "memory", "cc");
}

/* SVC handler: r0 = ICSR's address, r1 = PENDSVSET or 0 (set by the caller) */
#if __ARM_ARCH >= 7
__attribute__((naked)) static void pend_pendsv(void)
#else
/* ARMv6-M has no VTOR: picolibc's table names the SVC handler */
__attribute__((naked)) void arm_svc_isr(void)
#endif
{
    __asm volatile(".syntax unified\nstr r1, [r0]\nbx lr");
}

#if __ARM_ARCH >= 7
/* A vector table in RAM (VTOR; 48 entries: 256-byte alignment) whose SVC
 * and PendSV entries are set per case. */
static uint32_t vectors[48] __attribute__((aligned(256)));

__attribute__((naked)) static void bare_return(void)
{
    __asm volatile("bx lr");
}

/* picolibc's vector table (VTOR's reset value points to it) */
extern void *__interrupt_vector[];

static void use_vectors(void (*svc)(void), void (*pendsv)(void))
{
    memcpy(vectors, __interrupt_vector, sizeof vectors);
    vectors[11] = (uint32_t)svc;
    vectors[14] = (uint32_t)pendsv;
    REG(0xE000ED08u) = (uint32_t)vectors; /* VTOR */
    __asm volatile("dsb\nisb" ::: "memory");
}
#endif

/* t0, t1 = the word at `counter` before and after an SVC whose handler
 * may pend PendSV (r0 = ICSR, r1 = PENDSVSET). */
__attribute__((noinline)) static void measure_svc(volatile uint32_t *counter, uint32_t pend)
{
    __asm volatile(
        ".syntax unified\n"
        "mov r4, %0\n"
        "mov r0, %1\n"
        "mov r1, %2\n"
        "ldr r5, [r4]\n"
        "svc #0\n"
        "ldr r6, [r4]\n"
        "ldr r0, =t0\n"
        "str r5, [r0]\n"
        "ldr r0, =t1\n"
        "str r6, [r0]\n"
        :
        : "r"(counter), "r"(ICSR), "r"(pend)
        : "r0", "r1", "r4", "r5", "r6", "memory", "cc");
}

static void enable_dwt(void)
{
    REG(DEMCR) |= 1u << 24; /* TRCENA */
    /* Cortex-M7 (CPUID part 0xC27): the DWT ignores writes until its
     * CoreSight lock is opened (Cortex-M7 TRM, DWT_LAR) */
    if ((REG(CPUID) >> 4 & 0xfff) == 0xC27)
        REG(0xE0001FB0u) = 0xC5ACCE55u;
    REG(DWT_CYCCNT) = 0;
    REG(DWT_CTRL) |= 1; /* CYCCNTENA */
}

static void run_systick_free(void)
{
    REG(SYST_CSR) = 0;
    REG(SYST_RVR) = 0xffffff;
    REG(SYST_CVR) = 0;
    REG(SYST_CSR) = 5; /* ENABLE | CLKSOURCE */
}

#if __ARM_ARCH >= 7
/* Two tasks on their own process stacks, switched by PendSV: each prints
 * and yields; the handler saves r4-r11 on the outgoing task's stack and
 * restores the other's. */
static uint32_t stack_a[128] __attribute__((aligned(8)));
static uint32_t stack_b[128] __attribute__((aligned(8)));
uint32_t *task_sp[2];
uint32_t task_current;

__attribute__((naked)) void arm_pendsv_isr(void)
{
    __asm volatile(
        "mrs r0, psp\n"
        "stmdb r0!, {r4-r11}\n"
        "ldr r1, =task_current\n"
        "ldr r2, [r1]\n"
        "ldr r3, =task_sp\n"
        "str r0, [r3, r2, lsl #2]\n"
        "eor r2, r2, #1\n"
        "str r2, [r1]\n"
        "ldr r0, [r3, r2, lsl #2]\n"
        "ldmia r0!, {r4-r11}\n"
        "msr psp, r0\n"
        "bx lr\n");
}

static void yield(void)
{
    REG(ICSR) = 1u << 28; /* PENDSVSET */
    __asm volatile("dsb\nisb" ::: "memory");
}

static volatile int finished;

static void task(char name)
{
    for (int i = 0; i < 3; i++) {
        printf("%c%d\n", name, i);
        yield();
    }
    if (++finished == 2)
        exit(0);
    for (;;)
        yield();
}

static void task_a(void) { task('A'); }
static void task_b(void) { task('B'); }

/* A fresh task's stack: the exception frame it "returns" into (xPSR with
 * T, PC = entry, the rest 0) below r4-r11. */
static uint32_t *task_stack(uint32_t *top, void (*entry)(void))
{
    uint32_t *sp = top - 16;
    memset(sp, 0, 16 * sizeof *sp);
    sp[8 + 6] = (uint32_t)entry;
    sp[8 + 7] = 1u << 24;
    return sp;
}

static void pendsv(void)
{
    task_sp[1] = task_stack(stack_b + 128, task_b);
    task_current = 0;
    REG(SHPR3) |= 0xffu << 16; /* PendSV at the lowest priority */
    /* task A runs on the process stack in Thread mode */
    __asm volatile(
        "msr psp, %0\n"
        "movs r0, #2\n"
        "msr control, r0\n"
        "isb\n"
        :
        : "r"(stack_a + 128)
        : "r0", "memory");
    task_a();
}
#endif

static uint32_t start_cycles, stop_cycles;
#if __ARM_ARCH >= 7
/* the DWT cycle counter, as most Cortex-M board support times */
static void start_trigger(void) { start_cycles = REG(DWT_CYCCNT); }
static void stop_trigger(void) { stop_cycles = REG(DWT_CYCCNT); }
static void initialise_board(void) { enable_dwt(); }
#else
/* ARMv6-M has no cycle counter: SysTick counts down */
static void start_trigger(void) { start_cycles = -REG(SYST_CVR); }
static void stop_trigger(void) { stop_cycles = -REG(SYST_CVR); }
static void initialise_board(void) { run_systick_free(); }
#endif
#endif /* __arm__ */

#if defined(__riscv)
/* csrrs rd, CSR, x0 through .insn: -march=rv32imac has no Zicsr names. */
#define MEASURE(csr)                                                      \
    __asm volatile(                                                       \
        "li a0, 1\n"                                                      \
        "li a1, 1\n"                                                      \
        "li a2, 0\n"                                                      \
        "call arp_enter_kernel\n"                                         \
        ".insn i 0x73, 2, t0, x0, " csr "\n"                             \
        "li t2, 100\n"                                                    \
        "1: addi t2, t2, -1\n"                                            \
        "bnez t2, 1b\n"                                                   \
        ".insn i 0x73, 2, t1, x0, " csr "\n"                             \
        "li a0, 1\n"                                                      \
        "li a1, 1\n"                                                      \
        "call arp_leave_kernel\n"                                         \
        "la a0, t0\n"                                                     \
        "sw t0, 0(a0)\n"                                                  \
        "la a0, t1\n"                                                     \
        "sw t1, 0(a0)\n"                                                  \
        ::: "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "t0", "t1", \
            "t2", "t3", "t4", "t5", "t6", "ra", "memory")

/* RP2350 SIO: the RISC-V platform timer (datasheet 3.1.8) */
#define MTIME_CTRL 0xd00001a4u
#define MTIMECMP 0xd00001b8u
#define MTIMECMPH 0xd00001bcu

/* The machine timer handler: mtimecmp += t5, t6++ (t3 = &MTIMECMP; the
 * interrupted code leaves t3-t6 to it), written out so that the test can
 * price it by hand. */
__attribute__((naked, aligned(4))) void mtimer_isr(void)
{
    __asm volatile("lw t4, 0(t3)\n"
                   "add t4, t4, t5\n"
                   "sw t4, 0(t3)\n"
                   "addi t6, t6, 1\n"
                   "mret\n");
}

static volatile uint32_t mticks;

/* mtime counting core cycles; inside the section: mtimecmp = mtime +
 * period, mstatus.MIE set, `n` iterations of addi/bnez, MIE cleared. */
__attribute__((noinline)) static void mtick(uint32_t period, uint32_t n)
{
    REG(MTIME_CTRL) = 3; /* EN | FULLSPEED */
    REG(MTIMECMPH) = 0;
    __asm volatile(
        /* csrw mtvec, isr (direct); csrs mie, MTIE */
        ".insn i 0x73, 1, x0, %2, 0x305\n"
        "li t0, 0x80\n"
        ".insn i 0x73, 2, x0, t0, 0x304\n"
        "mv t5, %0\n"
        "mv t2, %1\n"
        "li t3, 0xd00001b8\n"
        "li t6, 0\n"
        "li a0, 1\n"
        "li a1, 1\n"
        "li a2, 0\n"
        "call arp_enter_kernel\n"
        "lw t4, -8(t3)\n"
        "add t4, t4, t5\n"
        "sw t4, 0(t3)\n"
        /* csrrsi x0, mstatus, 8 (the immediate sits in the rs1 field) */
        ".insn i 0x73, 6, x0, x8, 0x300\n"
        "1: addi t2, t2, -1\n"
        "bnez t2, 1b\n"
        ".insn i 0x73, 7, x0, x8, 0x300\n"
        "li a0, 1\n"
        "li a1, 1\n"
        "call arp_leave_kernel\n"
        "la a0, mticks\n"
        "sw t6, 0(a0)\n"
        :
        : "r"(period), "r"(n), "r"(mtimer_isr)
        : "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "t0", "t1", "t2", "t3", "t4", "t5",
          "t6", "ra", "memory");
}

/* cycle = 0xc00, instret = 0xc02 as signed 12-bit immediates */
__attribute__((noinline)) static void measure_cycle(void) { MEASURE("-1024"); }
__attribute__((noinline)) static void measure_instret(void) { MEASURE("-1022"); }

static uint32_t rdcycle(void)
{
    uint32_t v;
    __asm volatile(".insn i 0x73, 2, %0, x0, -1024" : "=r"(v));
    return v;
}

static uint32_t start_cycles, stop_cycles;
static void start_trigger(void) { start_cycles = rdcycle(); }
static void stop_trigger(void) { stop_cycles = rdcycle(); }
static void initialise_board(void) {}
#endif /* __riscv */

/* A benchmark of the shape Embench's and CoreMark's board support time. */
static volatile uint32_t sink;
__attribute__((noinline)) static void benchmark(void)
{
    uint32_t x = 1;
    for (int i = 0; i < 1000; i++)
        x = x * 1103515245u + 12345u;
    sink = x;
}

static void harness(void)
{
    initialise_board();
    start_trigger();
    arp_enter_kernel(1, 2, 0);
    benchmark();
    arp_leave_kernel(1, 2);
    stop_trigger();
    printf("harness %lu\n", (unsigned long)(stop_cycles - start_cycles));
}

/* The command word: the first argument that is one (the semihosting
 * command line starts with the program name, which Debian's picolibc
 * passes on as argv[1]); its arguments follow it. */
static int command(int argc, char **argv)
{
    static const char *const words[] = {"dwt",     "systick", "cycle", "instret", "tick",
                                        "pendsv",  "harness", "cpuid", "mpu",     "idpfr",
                                        "reset",   "svc",     "tailchain", "mtick"};
    for (int i = 1; i < argc; ++i)
        for (unsigned w = 0; w < sizeof words / sizeof words[0]; ++w)
            if (strcmp(argv[i], words[w]) == 0)
                return i;
    return 0;
}

int main(int argc, char **argv)
{
    arp_add_callbacks(arp_ullong, 0, 0, 0, 0, 0);
    arp_start(1, 2, arp_record_all, 0, 0, 0, 0, 0);
    int at = command(argc, argv);
    const char *what = at ? argv[at] : "";
    argc -= at;
    argv += at;
#if defined(__arm__)
    if (!strcmp(what, "dwt")) {
        enable_dwt();
        measure((volatile uint32_t *)DWT_CYCCNT);
        printf("dwt %lu\n", (unsigned long)(t1 - t0));
    } else if (!strcmp(what, "systick")) {
        run_systick_free();
        measure((volatile uint32_t *)SYST_CVR);
        printf("systick %lu\n", (unsigned long)((t0 - t1) & 0xffffff));
    } else if (!strcmp(what, "tick") && argc > 2) {
        tick(strtoul(argv[1], 0, 0), strtoul(argv[2], 0, 0));
        printf("ticks %lu\n", (unsigned long)ticks);
#if __ARM_ARCH >= 7
    } else if (!strcmp(what, "pendsv")) {
        pendsv();
#endif
    } else if (!strcmp(what, "svc") || !strcmp(what, "tailchain")) {
        uint32_t pend = strcmp(what, "svc") ? 1u << 28 : 0;
#if __ARM_ARCH >= 7
        use_vectors(pend ? pend_pendsv : bare_return, bare_return);
        enable_dwt();
        measure_svc((volatile uint32_t *)DWT_CYCCNT, pend);
        printf("%s %lu\n", what, (unsigned long)(t1 - t0));
#else
        run_systick_free();
        measure_svc((volatile uint32_t *)SYST_CVR, pend);
        printf("%s %lu\n", what, (unsigned long)((t0 - t1) & 0xffffff));
#endif
    } else if (!strcmp(what, "cpuid")) {
        printf("cpuid %08lx\n", (unsigned long)REG(CPUID));
    } else if (!strcmp(what, "mpu")) {
        REG(0xE000ED94u) = 1;
    } else if (!strcmp(what, "idpfr")) {
        printf("%lx\n", (unsigned long)REG(0xE000ED40u));
    } else if (!strcmp(what, "reset")) {
        REG(AIRCR) = (0x05fau << 16) | (1u << 2);
        for (;;)
            ;
    } else
#endif
#if defined(__riscv)
    if (!strcmp(what, "cycle")) {
        measure_cycle();
        printf("cycle %lu\n", (unsigned long)(t1 - t0));
    } else if (!strcmp(what, "instret")) {
        measure_instret();
        printf("instret %lu\n", (unsigned long)(t1 - t0));
    } else if (!strcmp(what, "mtick") && argc > 2) {
        mtick(strtoul(argv[1], 0, 0), strtoul(argv[2], 0, 0));
        printf("ticks %lu\n", (unsigned long)mticks);
    } else
#endif
    if (!strcmp(what, "harness")) {
        harness();
    } else {
        printf("usage: clocks dwt|systick|cycle|instret|tick R N|pendsv|harness|...\n");
        return 2;
    }
    arp_finish();
    return 0;
}
