/*
 * accuracy - kernels in the shapes compiled C takes, for the cycle model's
 * accuracy suite (issue 15). Kernel K runs n = N iterations under section
 * id K and n = 2N under id K + 10 (arp_enter_kernel / arp_leave_kernel,
 * arp_record_all), so the difference of the two samples is N times the
 * inner loop's cycles: tests/tests/accuracy.rs checks that number, derived
 * by hand below from the -O2 Thumb-2 disassembly
 * (arm-none-eabi-objdump -d target/guests/cortex-m4/accuracy.elf) and the
 * Cortex-M4 TRM rules as the target file prices them; for rv32imac from
 * riscv64-unknown-elf-objdump -d target/guests/rv32imac/accuracy.elf and
 * Hazard3's cycle counts (targets/rv32imac.toml: ALU, load, store 1, a
 * load followed by an instruction using its result +1, JAL/JALR 2, a
 * branch 1 or 2 taken, +1 for a jump to a 32-bit instruction at a
 * halfword address). If the compiler's output changes, re-derive from the
 * new disassembly.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <string.h>
#include <atomium_rp.h>

#define N 64
#define NOINLINE __attribute__((noinline))

/* 1: globals reached through literal pools: a small function that
 * updates globals, called in a loop (each call loads the globals' address
 * from its literal pool, LDR Rx,[PC,#imm]) */
uint32_t g_a, g_b;

NOINLINE void bump(uint32_t v)
{
    g_a += v;
    g_b ^= g_a;
}

/* Inner loop (one call of bump), Cortex-M4, from the disassembly:
 *   MOV r0,r4 1; ADDS 1; BL bump 1 + P(1) = 2                       4
 *   bump: LDR r3,[PC,#12] 2 + 1 (literal in the code's memory,
 *         3.3.2 "contention with the fetch unit")                    3
 *         LDRD 1 + N = 3; ADD 1; EORS 1; STRD 3; BX LR 1 + P(2) = 3  11
 *   CMP 1; BNE taken 1 + P(1) = 2                                    3
 *   = 21 cycles per iteration (20 before the literal rule)
 * rv32imac: C.MV 1, C.ADDI 1, C.JAL 2 + 1 (bump starts with a 32-bit LUI
 *   at a halfword address); bump: LUI, LW, LUI, LW, ADD, SW, XOR, SW 8
 *   (no LW is followed by its result's use), RET 2 + 1 (back to a 32-bit
 *   BNE at a halfword address); BNE taken 2 = 18 */
NOINLINE void k_globals(int n)
{
    for (int i = 0; i < n; ++i)
        bump(i);
}

/* 2: memcpy and memset of small blocks, as structure copies do */
uint32_t src[16], dst[16];

/* Inner loop, Cortex-M4 (gcc inlines the 64-byte memcpy as LDMIA/STMIA
 * pairs and calls picolibc's byte-wise memset):
 *   LDR r4,[PC,#48] 2 + 1 literal; ADD.W 1; 4 x (LDMIA {4} 1 + 4,
 *   STMIA {4} 1 + 4) = 40; MOV, MOVS, ADD.W, ADDS 4; BL 2            50
 *   memset(24): entry ADD, MOV, CMP, BNE 4 + taken 1 = 5;
 *     24 x (STRB.W [r3],#1 1 + B 1 + taken 1 + 1 for the 32-bit STRB.W
 *     at a halfword address, misaligned_target) = 96;
 *     24 x (CMP, BNE) 2 + 23 taken = 71; BX LR 1 + P(2) = 3         175
 *   CMP; BNE taken 3                                                 3
 *   = 228 cycles per iteration (227 before the literal rule)
 * rv32imac (gcc inlines both: a 16-byte LW/SW loop run 4 times, then 6
 *   SWs of the byte replicated by shifts): C.MV, C.MV 2; 4 x (4 LW, 4 SW,
 *   2 ADDI = 10) + 3 x BNE taken (2 + 1: back to a 32-bit LW at a
 *   halfword address) + BNE not taken 1 = 50; ZEXT.B, SLLI, ADD, SLLI,
 *   ADD 5; 6 x SW 6; ADDI 1; BNE taken 2 = 66 */
NOINLINE void k_memcpy(int n)
{
    for (int i = 0; i < n; ++i) {
        memcpy(dst, src, sizeof dst);
        memset(src, i, 24);
    }
}

/* 3: calls through a function pointer table */
static NOINLINE int op_add(int a) { return a + 3; }
static NOINLINE int op_xor(int a) { return a ^ 0x55; }
static int (*const ops[2])(int) = { op_add, op_xor };
volatile int fp_sink;

/* Inner loop, Cortex-M4:
 *   LDR.W r3,[r6,r3,LSL #2] 2; ADDS 1; BLX r3 1 + P(2) = 3           6
 *   op_add: ADDS 1; BX LR 3 / op_xor: EOR.W 1; BX LR 3               4
 *   CMP 1; AND.W 1; BNE taken 2                                      4
 *   = 14 cycles per iteration
 * rv32imac: C.LW a5 1 + 1 (JALR a5 uses it); JALR 2; op_add: C.ADDI 1,
 *   RET 2 / op_xor: +1 (XORI is 32-bit at a halfword address), XORI 1,
 *   RET 2; ADDI, ANDI, SLLI, ADD 4; BNE taken 2
 *   = 13 (op_add) and 14 (op_xor), alternately */
NOINLINE void k_fnptr(int n)
{
    int acc = 0;
    for (int i = 0; i < n; ++i)
        acc = ops[i & 1](acc);
    fp_sink = acc;
}

/* 4: a table-driven state machine over an input string */
static const uint8_t next_state[4][4] = {
    { 1, 0, 2, 3 }, { 2, 3, 0, 1 }, { 3, 1, 1, 0 }, { 0, 2, 3, 2 },
};
static uint8_t input_syms[2 * N];
volatile int sm_sink;

/* Inner loop, Cortex-M4 (the loop starts with a 32-bit LDRB.W at a
 * halfword address):
 *   LDRB.W r1,[r2],#1 2; ADD.W 1; ADD 1; CMP 1; LDRB r3,[r3,#8] 2
 *   (not directly after the ADD that computed r3); BNE 1 + P(1) = 2;
 *   + 1 misaligned 32-bit branch target
 *   = 10 cycles per iteration
 * rv32imac: LBU 1; SLLI, ADD, ADD, ADDI 4; LBU 1 (the next, BNE, does not
 *   use it); BNE taken 2 (to a word-aligned LBU) = 8 */
NOINLINE void k_state_machine(int n)
{
    unsigned s = 0;
    for (int i = 0; i < n; ++i)
        s = next_state[s][input_syms[i]];
    sm_sink = s;
}

/* 5: block moves of 16-byte records with LDM/STM */
struct rec { uint32_t w[4]; };
struct rec recs_a[2 * N], recs_b[2 * N];

/* Inner loop, Cortex-M4 (the loop starts with a 32-bit ADD.W at a
 * halfword address):
 *   ADD.W 1; LDMIA {4} 1 + 4 = 5; ADD.W 1; ADD.W 1; CMP 1;
 *   STMIA.W {4} 5; BNE 1 + P(1) = 2; + 1 misaligned target
 *   = 17 cycles per iteration.
 * rv32imac: 4 x C.LW 4 (the first SW uses the first load, not the last);
 *   4 x C.SW 4; 2 x C.ADDI 2; BNE taken 2 = 12.
 * The attribute keeps the loop a loop of 16-byte copies (not one library
 * memcpy call). */
__attribute__((optimize("no-tree-loop-distribute-patterns")))
NOINLINE void k_block_move(int n)
{
    for (int i = 0; i < n; ++i)
        recs_b[i] = recs_a[i];
}

/* 6: a long run of 32-bit Thumb-2 ALU instructions (a mixing function
 * with high registers and rotates, which have no 16-bit encodings) */
volatile uint32_t mix_sink;

/* Inner loop, Cortex-M4: ADD.W, ADD.W, EOR.W, SUB.W, ADD.W, ADD.W (shifted
 * register operands), CMP, EOR.W: 8 x 1; BNE 1 + P(1) = 2
 *   = 10 cycles per iteration
 * rv32imac (no rotate instruction in RV32IMAC: each rotate is SLLI, SRLI,
 *   OR): 15 ALU instructions 15; BNE taken 2 (to a word-aligned SRLI)
 *   = 17 */
NOINLINE void k_alu32(int n)
{
    uint32_t a = 0x01234567, b = 0x89abcdef, c = 0xdeadbeef, d = 0x5a5a5a5a;
    for (int i = 0; i < n; ++i) {
        a += (b << 7) | (b >> 25);
        c ^= a + (d >> 3);
        d -= (c << 11) | (c >> 21);
        b ^= d + (a >> 13);
    }
    mix_sink = a ^ b ^ c ^ d;
}

typedef void (*kernel_fn)(int);
static const kernel_fn kernels[] = {
    k_globals, k_memcpy, k_fnptr, k_state_machine, k_block_move, k_alu32,
};

int main(void)
{
    for (int i = 0; i < 2 * N; ++i)
        input_syms[i] = (uint8_t)((i * 7 + (i >> 2)) & 3);
    arp_add_callbacks(arp_long, 0, 0, 0, 0, 0);
    arp_start(1, 16, arp_record_all, 0, 0, 0, 0, 0);
    for (unsigned k = 0; k < sizeof kernels / sizeof kernels[0]; ++k) {
        arp_enter_kernel(1, k + 1, 0);
        kernels[k](N);
        arp_leave_kernel(1, k + 1);
        arp_enter_kernel(1, k + 11, 0);
        kernels[k](2 * N);
        arp_leave_kernel(1, k + 11);
    }
    arp_finish();
    return 0;
}
