/*
 * itstate - the Thumb IT state across a stop and resume inside a block
 * (issue 43 M01).
 *
 * Each probe runs an ITTE NE block whose first instruction loads from (or
 * stores to) an address, then the same arithmetic as the C below it:
 *
 *     r4 = 0x11; if (cond) { access; r4 += 0x22; } else { r4 -= 0x10; }
 *     r5 = 0x55 + 1;          (after the IT block: unconditional)
 *
 * The emulator restores the guest state to the accessing instruction when
 * the access is a page's first (a TLB fill) or reaches a device: the IT
 * bits of that instruction must not outlive the IT block. A probe is run
 * with the access first on its page, then again, with cond 1 and 0, in
 * three shapes: straight-line code after the block, a call right after
 * it, and a call as the block's last instruction.
 *
 * `cross` pends PendSV by a store inside an IT block that crosses a page
 * boundary: the exception is taken where the next block starts, inside
 * the IT block, and the handler's return must resume it.
 *
 * `itstate peripheral` probes the first APB peripheral instead (run it
 * with --peripherals ignore).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define DWT_CYCCNT 0xE0001004u
#define SCB_CPUID 0xE000ED00u
#define SCB_ICSR 0xE000ED04u
#define SCB_SHPR3 0xE000ED20u
#define PENDSVSET (1u << 28)
/* the first APB peripheral of every ARM preset (read as 0 and writes
 * dropped with --peripherals ignore; QEMU's MPS2 CMSDK timer 0) */
#define PERIPHERAL 0x40000000u

static int failures;

/* r4 and r5 after a probe, and whether its call ran */
static uint32_t seen[2];
static volatile uint32_t called;

void it_marker(void)
{
    called++;
}

/* straight-line code after the IT block, then a return */
__attribute__((noinline)) static void load_then_code(uint32_t addr, uint32_t cond)
{
    __asm__ volatile("movs r4, #0x11\n\t"
                     "movs r5, #0x55\n\t"
                     "cmp %[c], #0\n\t"
                     "itte ne\n\t"
                     "ldrne r7, [%[a]]\n\t"
                     "addne r4, r4, #0x22\n\t"
                     "subeq r4, r4, #0x10\n\t"
                     "adds r5, r5, #1\n\t"
                     "str r4, [%[s], #0]\n\t"
                     "str r5, [%[s], #4]\n\t"
                     :
                     : [c] "r"(cond), [a] "r"(addr), [s] "r"(seen)
                     : "r4", "r5", "r7", "cc", "memory");
}

/* the same with a store: the value the address holds is written back */
__attribute__((noinline)) static void store_then_code(uint32_t addr, uint32_t value, uint32_t cond)
{
    __asm__ volatile("movs r4, #0x11\n\t"
                     "movs r5, #0x55\n\t"
                     "cmp %[c], #0\n\t"
                     "itte ne\n\t"
                     "strne %[v], [%[a]]\n\t"
                     "addne r4, r4, #0x22\n\t"
                     "subeq r4, r4, #0x10\n\t"
                     "adds r5, r5, #1\n\t"
                     "str r4, [%[s], #0]\n\t"
                     "str r5, [%[s], #4]\n\t"
                     :
                     : [c] "r"(cond), [a] "r"(addr), [v] "r"(value), [s] "r"(seen)
                     : "r4", "r5", "r7", "cc", "memory");
}

/* a call right after the IT block (a direct branch leaves the block) */
__attribute__((noinline)) static void load_then_call(uint32_t addr, uint32_t cond)
{
    __asm__ volatile("movs r4, #0x11\n\t"
                     "movs r5, #0x55\n\t"
                     "cmp %[c], #0\n\t"
                     "itte ne\n\t"
                     "ldrne r7, [%[a]]\n\t"
                     "addne r4, r4, #0x22\n\t"
                     "subeq r4, r4, #0x10\n\t"
                     "bl it_marker\n\t"
                     "adds r5, r5, #1\n\t"
                     "str r4, [%[s], #0]\n\t"
                     "str r5, [%[s], #4]\n\t"
                     :
                     : [c] "r"(cond), [a] "r"(addr), [s] "r"(seen)
                     : "r0", "r1", "r2", "r3", "r4", "r5", "r7", "r12", "lr", "cc", "memory");
}

/* a call as the IT block's last instruction: taken only when cond */
__attribute__((noinline)) static void load_then_conditional_call(uint32_t addr, uint32_t cond)
{
    __asm__ volatile("movs r4, #0x11\n\t"
                     "movs r5, #0x55\n\t"
                     "cmp %[c], #0\n\t"
                     "ite ne\n\t"
                     "ldrne r7, [%[a]]\n\t"
                     "subeq r4, r4, #0x10\n\t"
                     "cmp %[c], #0\n\t"
                     "itt ne\n\t"
                     "addne r4, r4, #0x22\n\t"
                     "blne it_marker\n\t"
                     "adds r5, r5, #1\n\t"
                     "str r4, [%[s], #0]\n\t"
                     "str r5, [%[s], #4]\n\t"
                     :
                     : [c] "r"(cond), [a] "r"(addr), [s] "r"(seen)
                     : "r0", "r1", "r2", "r3", "r4", "r5", "r7", "r12", "lr", "cc", "memory");
}

static void check(const char *what, uint32_t cond, uint32_t calls_before, uint32_t calls_wanted)
{
    uint32_t want_r4 = cond ? 0x33 : 0x01;
    uint32_t calls = called - calls_before;
    if (seen[0] == want_r4 && seen[1] == 0x56 && calls == calls_wanted) {
        printf("%s cond=%lu: ok\n", what, (unsigned long)cond);
        return;
    }
    failures++;
    printf("%s cond=%lu: r4=%#lx r5=%#lx calls=%lu, want r4=%#lx r5=0x56 calls=%lu\n", what,
           (unsigned long)cond, (unsigned long)seen[0], (unsigned long)seen[1],
           (unsigned long)calls, (unsigned long)want_r4, (unsigned long)calls_wanted);
}

/* every shape on `addr`, the first access to its page first */
static void probe(const char *name, uint32_t addr, int writable)
{
    char what[64];
    for (uint32_t round = 0; round < 2; round++) {
        const char *when = round ? "again" : "first";
        for (uint32_t cond = 1; cond != ~0u; cond--) {
            uint32_t before = called;
            snprintf(what, sizeof what, "%s %s load", name, when);
            load_then_code(addr, cond);
            check(what, cond, before, 0);
            snprintf(what, sizeof what, "%s %s load+call", name, when);
            before = called;
            load_then_call(addr, cond);
            check(what, cond, before, 1);
            snprintf(what, sizeof what, "%s %s load+conditional call", name, when);
            before = called;
            load_then_conditional_call(addr, cond);
            check(what, cond, before, cond);
            if (writable) {
                uint32_t value = *(volatile uint32_t *)addr;
                snprintf(what, sizeof what, "%s %s store", name, when);
                before = called;
                store_then_code(addr, value, cond);
                check(what, cond, before, 0);
            }
        }
    }
}

/* pages of RAM no one has touched: their first access fills the TLB */
static uint32_t fresh_ram[2][256] __attribute__((aligned(1024)));

/* ---- an exception pended inside an IT block that crosses a page ---- */

static volatile uint32_t pendsv_taken, stacked_xpsr;

/* PendSV: records the stacked xPSR (its IT bits) and clobbers the flags
 * the interrupted IT block depends on */
__attribute__((naked)) void arm_pendsv_isr(void)
{
    __asm__ volatile("tst lr, #4\n\t"
                     "ite eq\n\t"
                     "mrseq r0, msp\n\t"
                     "mrsne r0, psp\n\t"
                     "ldr r1, [r0, #28]\n\t"
                     "ldr r2, =stacked_xpsr\n\t"
                     "str r1, [r2]\n\t"
                     "ldr r2, =pendsv_taken\n\t"
                     "ldr r1, [r2]\n\t"
                     "adds r1, r1, #1\n\t"
                     "str r1, [r2]\n\t"
                     "movs r0, #0\n\t"
                     "cmp r0, #0\n\t" /* Z set: NE would fail */
                     "bx lr\n\t");
}

/* it_cross(icsr, PENDSVSET, cond, seen): ITTE NE whose store to ICSR is
 * the last halfword of a 1 KiB page and whose next instruction starts the
 * next page */
__asm__(".section .text.it_cross,\"ax\",%progbits\n"
        ".balign 1024\n"
        ".thumb_func\n"
        ".global it_cross\n"
        "it_cross:\n"
        "    push {r4, r5}\n"
        "    movs r4, #0x11\n"
        "    movs r5, #0x55\n"
        "    b 1f\n"
        "    .balign 1024\n"
        "    .space 1024 - 6\n"
        "1:  cmp r2, #0\n"       /* page end - 6 */
        "    itte ne\n"          /* page end - 4 */
        "    strne r1, [r0]\n"   /* page end - 2: pends PendSV */
        "    addne r4, r4, #0x22\n" /* the next page: a new block */
        "    subeq r4, r4, #0x10\n"
        "    adds r5, r5, #1\n"
        "    str r4, [r3, #0]\n"
        "    str r5, [r3, #4]\n"
        "    pop {r4, r5}\n"
        "    bx lr\n"
        ".text\n");
void it_cross(uint32_t icsr, uint32_t set, uint32_t cond, uint32_t *out);

static void cross(void)
{
    for (uint32_t cond = 1; cond != ~0u; cond--) {
        uint32_t before = pendsv_taken;
        it_cross(SCB_ICSR, cond ? PENDSVSET : 0, cond, seen);
        check("cross", cond, called, 0);
        if (pendsv_taken - before != cond)
            printf("cross cond=%lu: PendSV taken %lu time(s)\n", (unsigned long)cond,
                   (unsigned long)(pendsv_taken - before));
        else if (cond)
            printf("cross: PendSV taken inside the IT block, stacked IT bits %#lx\n",
                   (unsigned long)(stacked_xpsr & 0x0600fc00u));
    }
}

int main(int argc, char **argv)
{
    /* `itstate peripheral`: a --peripherals ignore range (else a fault) */
    if (argc > 1 && strcmp(argv[argc - 1], "peripheral") == 0) {
        probe("peripheral", PERIPHERAL, 1);
        printf("%d failure(s)\n", failures);
        return failures != 0;
    }
    *(volatile uint32_t *)SYST_RVR = 100000;
    *(volatile uint32_t *)SYST_CSR = 5; /* enabled on the core clock, no interrupt */
    probe("ram", (uint32_t)&fresh_ram[0][3], 1);
    probe("systick", SYST_CVR, 1);
    probe("dwt", DWT_CYCCNT, 0);
    probe("scb", SCB_CPUID, 0);
    probe("scb-shpr3", SCB_SHPR3, 1);
    probe("ram-2", (uint32_t)&fresh_ram[1][7], 1);
    cross();
    printf("%d failure(s)\n", failures);
    return failures != 0;
}
