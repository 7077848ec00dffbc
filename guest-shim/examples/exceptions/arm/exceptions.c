/*
 * Cortex-M exceptions as the architecture defines them (issue 39): every
 * case prints the state ARMv6-M / ARMv7-M / ARMv8-M say the core is in
 * (EXC_RETURN, CONTROL, the banked stack pointers, the stacked frame, the
 * FP context), so the same ELF prints the same under qemu-system-arm and
 * under sim-host (tests/tests/exceptions.rs).
 *
 *   exceptions psp-start         an SVC handler starts a task on the process
 *                                stack (PSP at a prepared frame, EXC_RETURN
 *                                0xFFFFFFFD), as FreeRTOS starts its first task;
 *                                the task then takes a PendSV on the PSP
 *   exceptions nested            SVC pends a higher-priority PendSV: it preempts
 *   exceptions tailchain         SVC pends a lower-priority PendSV: tail-chained
 *   exceptions unpriv            an unprivileged thread on the PSP calls SVC; the
 *                                handler makes it privileged again
 *   exceptions realign           an exception with SP 4 mod 8 (xPSR bit 9)
 *   exceptions fp LSPEN HFP TFP  the FP context: FPCCR.LSPEN, whether the
 *                                handler and the thread use the FPU (0 or 1)
 *   exceptions fpcost L H T      the same round trip timed by DWT_CYCCNT
 *   exceptions bad-return X      the handler returns with EXC_RETURN X (hex)
 *   exceptions stack-at X        an exception with MSP at X (hex)
 *   exceptions wfi N             sleep in WFI until N SysTick interrupts
 *   exceptions sleep-forever     WFI with nothing armed to wake the core
 *   exceptions vtor              VTOR read, written and read again
 *   exceptions bad-vector X      PendSV through a table whose entry is X (hex)
 *   exceptions after-threads     a PendSV once a simthread thread was joined
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <simthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REG(a) (*(volatile uint32_t *)(a))
#define ICSR 0xE000ED04u
#define SHPR2 0xE000ED1Cu
#define SHPR3 0xE000ED20u
#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define FPCCR 0xE000EF34u
#define FPCAR 0xE000EF38u
#define PENDSVSET (1u << 28)

/* What a handler saw on entry. */
struct snap {
    uint32_t lr, control, msp, psp, sp, ipsr, stacked_pc, stacked_xpsr;
};
volatile struct snap snaps[8];
volatile uint32_t nsnap;
/* What the SVC handler does: 0 return, 1 start a task at start_frame,
 * 2 pend PendSV, 3 make the thread privileged, 4 return with bad_return. */
volatile uint32_t svc_action;
volatile uint32_t start_frame;
volatile uint32_t bad_return;
/* What the PendSV handler does: 0 return, 1 the FP case, 4 bad_return. */
volatile uint32_t pendsv_action;
volatile uint32_t systicks;

/* Records a snapshot (Thumb-1 only, so ARMv6-M runs it too), the frame
 * read from the stack EXC_RETURN names; clobbers r0-r2, which the frame
 * holds. */
#define SNAPSHOT                                                            \
    "ldr r0, =nsnap\n"                                                      \
    "ldr r1, [r0]\n"                                                        \
    "adds r2, r1, #1\n"                                                     \
    "str r2, [r0]\n"                                                        \
    "movs r2, #32\n"                                                        \
    "muls r1, r2, r1\n"                                                     \
    "ldr r0, =snaps\n"                                                      \
    "adds r0, r0, r1\n"                                                     \
    "mov r1, lr\n"                                                          \
    "str r1, [r0, #0]\n"                                                    \
    "mrs r1, control\n"                                                     \
    "str r1, [r0, #4]\n"                                                    \
    "mrs r1, msp\n"                                                         \
    "str r1, [r0, #8]\n"                                                    \
    "mrs r1, psp\n"                                                         \
    "str r1, [r0, #12]\n"                                                   \
    "mov r1, sp\n"                                                          \
    "str r1, [r0, #16]\n"                                                   \
    "mrs r1, ipsr\n"                                                        \
    "str r1, [r0, #20]\n"                                                   \
    "mov r1, lr\n"                                                          \
    "movs r2, #4\n"                                                         \
    "tst r1, r2\n"                                                          \
    "mrs r2, msp\n"                                                         \
    "beq 7f\n"                                                              \
    "mrs r2, psp\n"                                                         \
    "7: ldr r1, [r2, #24]\n"                                                \
    "str r1, [r0, #24]\n"                                                   \
    "ldr r1, [r2, #28]\n"                                                   \
    "str r1, [r0, #28]\n"

__attribute__((naked)) void arm_svc_isr(void)
{
    __asm volatile(
        ".syntax unified\n" SNAPSHOT
        "ldr r0, =svc_action\n"
        "ldr r0, [r0]\n"
        "cmp r0, #1\n"
        "beq 1f\n"
        "cmp r0, #2\n"
        "beq 2f\n"
        "cmp r0, #3\n"
        "beq 3f\n"
        "cmp r0, #4\n"
        "beq 4f\n"
        "bx lr\n"
        /* 1: start a task on the process stack */
        "1: ldr r0, =start_frame\n"
        "ldr r0, [r0]\n"
        "msr psp, r0\n"
        "mov r0, lr\n"
        "movs r1, #0xd\n"
        "orrs r0, r1\n"
        "bx r0\n"
        /* 2: pend PendSV, then look again */
        "2: ldr r0, =0xE000ED04\n"
        "ldr r1, =0x10000000\n"
        "str r1, [r0]\n"
        "dsb\n"
        "isb\n" SNAPSHOT
        "bx lr\n"
        /* 3: the thread returned to is privileged */
        "3: mrs r0, control\n"
        "movs r1, #1\n"
        "bics r0, r1\n"
        "msr control, r0\n"
        "isb\n"
        "bx lr\n"
        "4: ldr r0, =bad_return\n"
        "ldr r0, [r0]\n"
        "bx r0\n");
}

#ifdef __ARM_FP
/* the FP case's handler: the FP context registers before and after the
 * handler's first FP instruction, and the frame's FP area */
volatile uint32_t handler_fp, fpccr_before, fpccr_after, fpcar_seen;
volatile uint32_t frame_fp[18];
volatile uint32_t handler_fpscr;

__attribute__((noinline)) void fp_handler_body(uint32_t frame)
{
    fpccr_before = REG(FPCCR);
    fpcar_seen = REG(FPCAR);
    if (handler_fp) {
        uint32_t fpscr;
        __asm volatile("vmrs %0, fpscr\n"
                       "vmov s0, %0\n"
                       "vmov s1, %0\n"
                       "vmov s2, %0\n"
                       "vmov s3, %0\n"
                       "vmov s4, %0\n"
                       "vmov s5, %0\n"
                       "vmov s6, %0\n"
                       "vmov s7, %0\n"
                       "vmov s8, %0\n"
                       "vmov s9, %0\n"
                       "vmov s10, %0\n"
                       "vmov s11, %0\n"
                       "vmov s12, %0\n"
                       "vmov s13, %0\n"
                       "vmov s14, %0\n"
                       "vmov s15, %0\n"
                       : "=r"(fpscr)
                       :
                       : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",
                         "s10", "s11", "s12", "s13", "s14", "s15");
        handler_fpscr = fpscr;
        __asm volatile("vmsr fpscr, %0" ::"r"(0x03000000u));
    }
    fpccr_after = REG(FPCCR);
    for (int i = 0; i < 18; i++)
        frame_fp[i] = ((volatile uint32_t *)frame)[8 + i];
}
#endif

__attribute__((naked)) void arm_pendsv_isr(void)
{
    __asm volatile(
        ".syntax unified\n" SNAPSHOT
        "ldr r0, =pendsv_action\n"
        "ldr r0, [r0]\n"
        "cmp r0, #4\n"
        "beq 4f\n"
#ifdef __ARM_FP
        "cmp r0, #1\n"
        "bne 9f\n"
        "push {r4, lr}\n"
        "add r0, sp, #8\n"
        "bl fp_handler_body\n"
        "pop {r4, lr}\n"
#endif
        "9: bx lr\n"
        "4: ldr r0, =bad_return\n"
        "ldr r0, [r0]\n"
        "bx r0\n");
}

void arm_systick_isr(void)
{
    systicks++;
}

static void print_snaps(void)
{
    for (uint32_t i = 0; i < nsnap; i++) {
        volatile struct snap *s = &snaps[i];
        printf("  handler %lu: exc_return=%08lx control=%lx msp=%08lx psp=%08lx sp=%08lx "
               "stacked pc=%08lx xpsr=%08lx\n",
               (unsigned long)s->ipsr, (unsigned long)s->lr, (unsigned long)s->control,
               (unsigned long)s->msp, (unsigned long)s->psp, (unsigned long)s->sp,
               (unsigned long)s->stacked_pc, (unsigned long)s->stacked_xpsr);
    }
    nsnap = 0;
}

static void print_thread(const char *what)
{
    uint32_t control, sp, psp, msp;
    __asm volatile("mrs %0, control\n"
                   "mov %1, sp\n"
                   "mrs %2, psp\n"
                   "mrs %3, msp\n"
                   : "=r"(control), "=r"(sp), "=r"(psp), "=r"(msp));
    printf("%s: control=%lx sp=%s msp=%08lx psp=%08lx\n", what, (unsigned long)control,
           sp == psp ? "psp" : sp == msp ? "msp" : "neither", (unsigned long)msp,
           (unsigned long)psp);
}

static void svc(uint32_t action)
{
    svc_action = action;
    __asm volatile("svc #0" ::: "r0", "r1", "r2", "r3", "r12", "lr", "memory", "cc");
}

/* Pends PendSV from Thread mode with r0-r3 and r12 holding known values;
 * prints what they hold after the return. */
static void pendsv_keeps_registers(void)
{
    uint32_t after[5];
    __asm volatile(".syntax unified\n"
                   "ldr r4, =0xE000ED04\n"
                   "ldr r5, =0x10000000\n"
                   "ldr r0, =0x11111111\n"
                   "ldr r1, =0x22222222\n"
                   "ldr r2, =0x33333333\n"
                   "ldr r3, =0xcccccccc\n"
                   "mov r12, r3\n"
                   "ldr r3, =0x44444444\n"
                   "str r5, [r4]\n"
                   "dsb\n"
                   "isb\n"
                   "mov r4, %0\n"
                   "str r0, [r4, #0]\n"
                   "str r1, [r4, #4]\n"
                   "str r2, [r4, #8]\n"
                   "str r3, [r4, #12]\n"
                   "mov r0, r12\n"
                   "str r0, [r4, #16]\n"
                   :
                   : "r"(after)
                   : "r0", "r1", "r2", "r3", "r4", "r5", "r12", "memory", "cc");
    printf("  registers after PendSV: %08lx %08lx %08lx %08lx r12=%08lx\n",
           (unsigned long)after[0], (unsigned long)after[1], (unsigned long)after[2],
           (unsigned long)after[3], (unsigned long)after[4]);
}

static uint32_t task_stack[256] __attribute__((aligned(8)));

static void task_main(void)
{
    print_thread("task");
    print_snaps();
    pendsv_keeps_registers();
    print_snaps();
    print_thread("task after PendSV");
    exit(0);
}

static void psp_start(void)
{
    uint32_t *frame = task_stack + 256 - 8;
    memset(frame, 0, 8 * sizeof *frame);
    frame[6] = (uint32_t)task_main & ~1u;
    frame[7] = 1u << 24; /* xPSR.T */
    start_frame = (uint32_t)frame;
    print_thread("main");
    svc(1);
    puts("psp-start: the SVC returned to main");
    exit(1);
}

/* SVC and PendSV priorities: SHPR2[31:24] and SHPR3[23:16] (word
 * accesses, as ARMv6-M requires) */
static void priorities(uint32_t svc_priority, uint32_t pendsv_priority)
{
    REG(SHPR2) = svc_priority << 24;
    REG(SHPR3) = (REG(SHPR3) & ~(0xffu << 16)) | pendsv_priority << 16;
}

static void pend_in_svc(uint32_t svc_priority, uint32_t pendsv_priority)
{
    priorities(svc_priority, pendsv_priority);
    print_thread("main");
    svc(2);
    print_snaps();
    print_thread("main after");
}

/* Thread mode unprivileged on the process stack calls SVC twice: the
 * first handler returns, the second makes Thread mode privileged again
 * (only a handler can); then back to the main stack. One asm block: the
 * stack changes under it. */
static void unpriv(void)
{
    uint32_t c1, c2, c3;
    svc_action = 0;
    __asm volatile(".syntax unified\n"
                   "msr psp, %3\n"
                   "movs r0, #3\n"
                   "msr control, r0\n"
                   "isb\n"
                   "mrs %0, control\n"
                   "svc #0\n"
                   "mrs %1, control\n"
                   "ldr r0, =svc_action\n"
                   "movs r1, #3\n"
                   "str r1, [r0]\n"
                   "svc #0\n"
                   "mrs %2, control\n"
                   "movs r0, #0\n"
                   "msr control, r0\n"
                   "isb\n"
                   : "=&r"(c1), "=&r"(c2), "=&r"(c3)
                   : "r"(task_stack + 256)
                   : "r0", "r1", "r2", "r3", "r12", "lr", "memory", "cc");
    printf("unprivileged: control %lx, after an SVC %lx, after the SVC that clears nPRIV %lx\n",
           (unsigned long)c1, (unsigned long)c2, (unsigned long)c3);
    print_snaps();
    print_thread("main after");
}

static void realign(void)
{
    __asm volatile(".syntax unified\n"
                   "mov r5, sp\n"
                   "movs r4, #4\n"
                   "subs r4, r5, r4\n"
                   "mov sp, r4\n"
                   "ldr r4, =0xE000ED04\n"
                   "ldr r0, =0x10000000\n"
                   "str r0, [r4]\n"
                   "dsb\n"
                   "isb\n"
                   "mov sp, r5\n" ::
                       : "r0", "r4", "r5", "memory", "cc");
    print_snaps();
    print_thread("main after");
}

#ifdef __ARM_FP
static void fp_case(uint32_t lspen, uint32_t hfp, uint32_t tfp)
{
    REG(FPCCR) = (REG(FPCCR) & ~(1u << 30)) | lspen << 30;
    handler_fp = hfp;
    pendsv_action = 1;
    uint32_t s[16], fpscr, control, *out = s;
    if (tfp) {
        __asm volatile("vmsr fpscr, %5\n"
                       "vmov s0, %6\n"
                       "vadd.f32 s1, s0, s0\n"
                       "vadd.f32 s2, s1, s0\n"
                       "vadd.f32 s3, s2, s0\n"
                       "vadd.f32 s4, s3, s0\n"
                       "vadd.f32 s5, s4, s0\n"
                       "vadd.f32 s6, s5, s0\n"
                       "vadd.f32 s7, s6, s0\n"
                       "vadd.f32 s8, s7, s0\n"
                       "vadd.f32 s9, s8, s0\n"
                       "vadd.f32 s10, s9, s0\n"
                       "vadd.f32 s11, s10, s0\n"
                       "vadd.f32 s12, s11, s0\n"
                       "vadd.f32 s13, s12, s0\n"
                       "vadd.f32 s14, s13, s0\n"
                       "vadd.f32 s15, s14, s0\n"
                       "mrs %0, control\n"
                       "str %3, [%2]\n"
                       "dsb\n"
                       "isb\n"
                       "vstmia %4, {s0-s15}\n"
                       "vmrs %1, fpscr\n"
                       : "=&r"(control), "=&r"(fpscr)
                       : "r"(ICSR), "r"(PENDSVSET), "r"(out), "r"(0x00400000u), "r"(0x3f800000u)
                       : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10",
                         "s11", "s12", "s13", "s14", "s15", "memory");
    } else {
        /* no FP context: CONTROL.FPCA clear, as after reset */
        __asm volatile("mrs %0, control\n"
                       "bic %0, %0, #4\n"
                       "msr control, %0\n"
                       "isb\n"
                       "mrs %0, control\n"
                       "str %3, [%2]\n"
                       "dsb\n"
                       "isb\n"
                       "vstmia %4, {s0-s15}\n"
                       "vmrs %1, fpscr\n"
                       : "=&r"(control), "=&r"(fpscr)
                       : "r"(ICSR), "r"(PENDSVSET), "r"(out)
                       : "memory");
    }
    __asm volatile("vmsr fpscr, %0" ::"r"(0u));
    printf("fp lspen=%lu handler_fp=%lu thread_fp=%lu: control before=%lx\n",
           (unsigned long)lspen, (unsigned long)hfp, (unsigned long)tfp,
           (unsigned long)control);
    print_snaps();
    printf("  fpccr in handler %08lx, after its FP use %08lx, fpcar-sp %ld, handler fpscr %08lx\n",
           (unsigned long)fpccr_before, (unsigned long)fpccr_after,
           (long)(fpcar_seen - snaps[0].sp), (unsigned long)handler_fpscr);
    if (tfp && (hfp || !lspen)) {
        printf("  frame fp:");
        for (int i = 0; i < 17; i++)
            printf(" %08lx", (unsigned long)frame_fp[i]);
        printf("\n");
    }
    printf("  thread s0-s15 after:");
    for (int i = 0; i < 16; i++)
        printf(" %08lx", (unsigned long)s[i]);
    printf(" fpscr %08lx\n", (unsigned long)fpscr);
    print_thread("main after");
}
#endif

#ifdef __ARM_FP
/* The cost of one PendSV round trip as DWT_CYCCNT counts it, with the FP
 * context in each state: FPCCR.LSPEN, a handler that uses the FPU or
 * not, a thread with an FP context or not. The handler is alone in a
 * vector table in RAM (VTOR), so the round trips differ only by what the
 * exception model charges (tests/tests/exceptions.rs derives them). */
static uint32_t cost_vectors[48] __attribute__((aligned(256)));
extern void *__interrupt_vector[];

__attribute__((naked)) static void handler_plain(void)
{
    __asm volatile("bx lr");
}

__attribute__((naked)) static void handler_with_fp(void)
{
    __asm volatile("vmov s1, r0\n"
                   "bx lr");
}

static void fp_cost(uint32_t lspen, uint32_t hfp, uint32_t tfp)
{
    memcpy(cost_vectors, __interrupt_vector, sizeof cost_vectors);
    cost_vectors[14] = (uint32_t)(hfp ? handler_with_fp : handler_plain);
    REG(0xE000ED08u) = (uint32_t)cost_vectors; /* VTOR */
    REG(FPCCR) = (REG(FPCCR) & ~(1u << 30)) | lspen << 30;
    REG(0xE000EDFCu) |= 1u << 24; /* DEMCR.TRCENA */
    if ((REG(0xE000ED00u) >> 4 & 0xfff) == 0xC27)
        REG(0xE0001FB0u) = 0xC5ACCE55u; /* Cortex-M7: unlock the DWT */
    REG(0xE0001000u) |= 1;          /* DWT_CTRL.CYCCNTENA */
    uint32_t t0, t1;
    __asm volatile(".syntax unified\n"
                   "mrs r0, control\n"
                   "bic r0, r0, #4\n"
                   "msr control, r0\n" /* no FP context */
                   "isb\n"
                   "cmp %2, #0\n"
                   "beq 1f\n"
                   "vmov s0, r0\n" /* an FP context: CONTROL.FPCA set */
                   "1: ldr r4, =0xE0001004\n"
                   "ldr r5, =0xE000ED04\n"
                   "ldr r6, =0x10000000\n"
                   "isb\n"
                   "ldr %0, [r4]\n"
                   "str r6, [r5]\n"
                   "dsb\n"
                   "isb\n"
                   "ldr %1, [r4]\n"
                   : "=&r"(t0), "=&r"(t1)
                   : "r"(tfp)
                   : "r0", "r4", "r5", "r6", "s0", "memory", "cc");
    printf("fpcost lspen=%lu handler_fp=%lu thread_fp=%lu: %lu\n", (unsigned long)lspen,
           (unsigned long)hfp, (unsigned long)tfp, (unsigned long)(t1 - t0));
}
#endif

static void bad(uint32_t value, int in_svc)
{
    bad_return = value;
    if (in_svc) {
        svc(4);
    } else {
        pendsv_action = 4;
        REG(ICSR) = PENDSVSET;
        __asm volatile("dsb\nisb" ::: "memory");
    }
    printf("returned from the handler with %08lx\n", (unsigned long)value);
}

static void stack_at(uint32_t msp)
{
    __asm volatile("mov r5, sp\n"
                   "mov sp, %0\n"
                   "ldr r4, =0xE000ED04\n"
                   "ldr r0, =0x10000000\n"
                   "str r0, [r4]\n"
                   "dsb\n"
                   "isb\n"
                   "mov sp, r5\n" ::"r"(msp)
                   : "r0", "r4", "r5", "memory", "cc");
    puts("the exception was taken");
}

/* VTOR after writing an aligned table address: ARMv6-M makes its
 * implemented bits IMPLEMENTATION DEFINED, unimplemented bits RAZ/WI (the
 * Cortex-M0 implements none). */
static void vtor(void)
{
    uint32_t before = REG(0xE000ED08u);
    REG(0xE000ED08u) = 0x200u;
    uint32_t after = REG(0xE000ED08u);
    REG(0xE000ED08u) = before;
    printf("vtor %08lx, after writing 0x200 %08lx\n", (unsigned long)before,
           (unsigned long)after);
}

/* PendSV through a vector table in RAM whose PendSV entry is `entry`
 * (ARMv7-M: VTOR). */
static uint32_t bad_vectors[48] __attribute__((aligned(256)));
extern void *__interrupt_vector[];

static void bad_vector(uint32_t entry)
{
    memcpy(bad_vectors, __interrupt_vector, sizeof bad_vectors);
    bad_vectors[14] = entry;
    REG(0xE000ED08u) = (uint32_t)bad_vectors;
    REG(ICSR) = PENDSVSET;
    __asm volatile("dsb\nisb" ::: "memory");
    puts("the handler returned");
}

static void nothing(void *arg)
{
    (void)arg;
}

/* Exceptions are delivered to a single-threaded guest: once every
 * simthread thread has ended and been joined, a PendSV is taken again. */
static void after_threads(void)
{
    simthread_t t;
    simthread_create(&t, nothing, 0);
    simthread_join(t);
    REG(ICSR) = PENDSVSET;
    __asm volatile("dsb\nisb" ::: "memory");
    printf("PendSV taken after the thread ended: %s\n", nsnap == 1 ? "yes" : "no");
}

/* WFI with nothing armed to wake the core. */
static void sleep_forever(void)
{
    REG(SYST_CSR) = 0;
    __asm volatile("wfi");
    puts("woke");
}

static void wfi_ticks(uint32_t n)
{
    REG(SYST_RVR) = 999;
    REG(SYST_CVR) = 0;
    REG(SYST_CSR) = 7; /* ENABLE | TICKINT | CLKSOURCE */
    while (systicks < n)
        __asm volatile("wfi");
    REG(SYST_CSR) = 0;
    printf("woke %lu times\n", (unsigned long)systicks);
}

/* The command word: the first argument that is one (the semihosting
 * command line starts with the program name, which Debian's picolibc
 * passes on as argv[1]); its arguments follow it. */
static int command(int argc, char **argv)
{
    static const char *const words[] = {"psp-start", "nested",     "tailchain", "unpriv",
                                        "realign",   "fp",         "bad-return", "stack-at",
                                        "wfi",       "fpcost",     "sleep-forever", "vtor",
                                        "bad-vector", "after-threads"};
    for (int i = 1; i < argc; ++i)
        for (unsigned w = 0; w < sizeof words / sizeof words[0]; ++w)
            if (strcmp(argv[i], words[w]) == 0)
                return i;
    return 0;
}

int main(int argc, char **argv)
{
    int at = command(argc, argv);
    const char *what = at ? argv[at] : "";
    argc -= at;
    argv += at;
    uint32_t a = argc > 1 ? strtoul(argv[1], 0, 16) : 0;
    if (!strcmp(what, "psp-start")) {
        psp_start();
    } else if (!strcmp(what, "nested")) {
        pend_in_svc(0x80, 0x40);
    } else if (!strcmp(what, "tailchain")) {
        pend_in_svc(0x40, 0x80);
    } else if (!strcmp(what, "unpriv")) {
        unpriv();
    } else if (!strcmp(what, "realign")) {
        realign();
#ifdef __ARM_FP
    } else if (!strcmp(what, "fp") && argc > 3) {
        fp_case(a, strtoul(argv[2], 0, 10), strtoul(argv[3], 0, 10));
    } else if (!strcmp(what, "fpcost") && argc > 3) {
        fp_cost(a, strtoul(argv[2], 0, 10), strtoul(argv[3], 0, 10));
#endif
    } else if (!strcmp(what, "bad-return")) {
        bad(a, argc > 2);
    } else if (!strcmp(what, "stack-at")) {
        stack_at(a);
    } else if (!strcmp(what, "wfi")) {
        wfi_ticks(a);
    } else if (!strcmp(what, "sleep-forever")) {
        sleep_forever();
    } else if (!strcmp(what, "vtor")) {
        vtor();
    } else if (!strcmp(what, "bad-vector")) {
        bad_vector(a);
    } else if (!strcmp(what, "after-threads")) {
        after_threads();
    } else {
        printf("usage: exceptions psp-start|nested|tailchain|unpriv|realign|fp L H T|"
               "fpcost L H T|bad-return X [svc]|stack-at X|wfi N|sleep-forever|vtor\n");
        return 2;
    }
    return 0;
}
