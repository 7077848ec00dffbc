/*
 * statemachine - a branch-dense guest for the emulation benchmark
 * (BENCHMARKS.md, issue 19): a table-driven tokenizer over a pseudo-random
 * text. Every input byte takes a class-table lookup, a transition-table
 * lookup and a switch on the transition's action, so the compiled code is
 * many short basic blocks ending in data-dependent branches — the case
 * where a simulator pays per block.
 *
 * Each pass fills the buffer from a 32-bit xorshift generator seeded by
 * the pass number, then tokenizes it inside one ARP kernel (section 1,
 * kernel; section 2 around all passes). The tokenizer keeps per-kind token
 * counts and a running 32-bit FNV-1a style hash over (kind, value) of each
 * emitted token; the program prints them. Everything is uint32_t
 * arithmetic, so a host build (-DARP_NONE, any C compiler) prints the same
 * lines (tests/tests/statemachine.rs checks it).
 *
 * PASSES (default 8) and LENGTH (bytes per pass, default 4096) are set by
 * example.toml; the -bench variants run long enough for the benchmark.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <atomium_rp.h>

#ifndef PASSES
#define PASSES 8
#endif
#ifndef LENGTH
#define LENGTH 4096
#endif

/* character classes */
enum { C_LETTER, C_DIGIT, C_SPACE, C_NEWLINE, C_QUOTE, C_OP, C_DOT, C_SLASH, NCLASS };

/* states */
enum { S_START, S_IDENT, S_NUMBER, S_FRACTION, S_STRING, S_OP, S_SLASH, S_COMMENT, NSTATE };

/* actions on a transition */
enum {
    A_NONE,        /* stay, nothing to do (white space) */
    A_BEGIN,       /* start a token with this byte */
    A_ADD,         /* add this byte to the token */
    A_EMIT_BEGIN,  /* emit the token, start a new one with this byte */
    A_EMIT,        /* emit the token, this byte starts nothing */
    A_LINE,        /* count a line (and emit a pending token) */
    A_DROP,        /* discard the token (end of a comment) */
    NACTION
};

/* token kinds (what a token was when emitted) */
enum { K_IDENT, K_NUMBER, K_REAL, K_STRING, K_OP, K_COMMENT, NKIND };

#define T(s, a) (uint8_t)((s) << 4 | (a))

/* next state and action for [state][class] */
static const uint8_t table[NSTATE][NCLASS] = {
    /*              letter               digit               space              newline            quote                op                   dot                  slash */
    [S_START]    = {T(S_IDENT, A_BEGIN), T(S_NUMBER, A_BEGIN), T(S_START, A_NONE), T(S_START, A_LINE), T(S_STRING, A_BEGIN), T(S_OP, A_BEGIN), T(S_OP, A_BEGIN), T(S_SLASH, A_BEGIN)},
    [S_IDENT]    = {T(S_IDENT, A_ADD), T(S_IDENT, A_ADD), T(S_START, A_EMIT), T(S_START, A_LINE), T(S_STRING, A_EMIT_BEGIN), T(S_OP, A_EMIT_BEGIN), T(S_OP, A_EMIT_BEGIN), T(S_SLASH, A_EMIT_BEGIN)},
    [S_NUMBER]   = {T(S_IDENT, A_EMIT_BEGIN), T(S_NUMBER, A_ADD), T(S_START, A_EMIT), T(S_START, A_LINE), T(S_STRING, A_EMIT_BEGIN), T(S_OP, A_EMIT_BEGIN), T(S_FRACTION, A_ADD), T(S_SLASH, A_EMIT_BEGIN)},
    [S_FRACTION] = {T(S_IDENT, A_EMIT_BEGIN), T(S_FRACTION, A_ADD), T(S_START, A_EMIT), T(S_START, A_LINE), T(S_STRING, A_EMIT_BEGIN), T(S_OP, A_EMIT_BEGIN), T(S_OP, A_EMIT_BEGIN), T(S_SLASH, A_EMIT_BEGIN)},
    [S_STRING]   = {T(S_STRING, A_ADD), T(S_STRING, A_ADD), T(S_STRING, A_ADD), T(S_START, A_LINE), T(S_START, A_EMIT), T(S_STRING, A_ADD), T(S_STRING, A_ADD), T(S_STRING, A_ADD)},
    [S_OP]       = {T(S_IDENT, A_EMIT_BEGIN), T(S_NUMBER, A_EMIT_BEGIN), T(S_START, A_EMIT), T(S_START, A_LINE), T(S_STRING, A_EMIT_BEGIN), T(S_OP, A_ADD), T(S_OP, A_ADD), T(S_SLASH, A_EMIT_BEGIN)},
    [S_SLASH]    = {T(S_IDENT, A_EMIT_BEGIN), T(S_NUMBER, A_EMIT_BEGIN), T(S_START, A_EMIT), T(S_START, A_LINE), T(S_STRING, A_EMIT_BEGIN), T(S_OP, A_ADD), T(S_OP, A_ADD), T(S_COMMENT, A_ADD)},
    [S_COMMENT]  = {T(S_COMMENT, A_NONE), T(S_COMMENT, A_NONE), T(S_COMMENT, A_NONE), T(S_START, A_DROP), T(S_COMMENT, A_NONE), T(S_COMMENT, A_NONE), T(S_COMMENT, A_NONE), T(S_COMMENT, A_NONE)},
};

/* what kind of token each state holds when it is emitted */
static const uint8_t kind_of[NSTATE] = {
    [S_START] = K_OP, [S_IDENT] = K_IDENT, [S_NUMBER] = K_NUMBER, [S_FRACTION] = K_REAL,
    [S_STRING] = K_STRING, [S_OP] = K_OP, [S_SLASH] = K_OP, [S_COMMENT] = K_COMMENT,
};

/* the 16 bytes the generator draws from, weighted towards letters */
static const char alphabet[16] = {'a', 'q', 'z', 'k', 'e', 'x', '0', '7', '3', ' ', ' ', '\n', '"', '+', '.', '/'};

static uint8_t class_of[256];
static char text[LENGTH];

struct stats {
    uint32_t hash;
    uint32_t lines;
    uint32_t count[NKIND];
};

static void init_classes(void)
{
    unsigned c;
    for (c = 0; c < 256; ++c)
        class_of[c] = C_OP;
    for (c = 'a'; c <= 'z'; ++c)
        class_of[c] = C_LETTER;
    for (c = '0'; c <= '9'; ++c)
        class_of[c] = C_DIGIT;
    class_of[' '] = C_SPACE;
    class_of['\n'] = C_NEWLINE;
    class_of['"'] = C_QUOTE;
    class_of['.'] = C_DOT;
    class_of['/'] = C_SLASH;
}

static void fill(uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1u;
    unsigned i;
    for (i = 0; i < LENGTH; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        text[i] = alphabet[(x >> 7) & 15];
    }
}

static void emit(struct stats *st, unsigned kind, uint32_t value)
{
    st->count[kind] += 1;
    st->hash = (st->hash ^ (kind << 24 ^ value)) * 16777619u;
}

static void tokenize(const char *p, unsigned n, struct stats *st)
{
    unsigned state = S_START;
    uint32_t value = 0;
    unsigned i;
    for (i = 0; i < n; ++i) {
        unsigned char c = (unsigned char)p[i];
        unsigned t = table[state][class_of[c]];
        switch (t & 15) {
        case A_NONE:
            break;
        case A_BEGIN:
            value = c;
            break;
        case A_ADD:
            value = value * 31u + c;
            break;
        case A_EMIT_BEGIN:
            emit(st, kind_of[state], value);
            value = c;
            break;
        case A_EMIT:
            emit(st, kind_of[state], value);
            break;
        case A_LINE:
            if (state != S_START)
                emit(st, kind_of[state], value);
            st->lines += 1;
            break;
        case A_DROP:
            emit(st, K_COMMENT, 0);
            st->lines += 1;
            break;
        }
        state = t >> 4;
    }
    if (state != S_START && state != S_COMMENT)
        emit(st, kind_of[state], value);
}

int main(void)
{
    struct stats st = {2166136261u, 0, {0}};
    unsigned pass;
    init_classes();
    arp_add_callbacks(arp_ullong, 0, 0, 0, 0, 0);
    arp_start(1, 2, arp_record_average, 0, 0, 0, 0, 0);
    arp_enter(1, 2, 0);
    for (pass = 0; pass < PASSES; ++pass) {
        fill(pass);
        arp_enter_kernel(1, 1, 0);
        tokenize(text, LENGTH, &st);
        arp_leave_kernel(1, 1);
    }
    arp_leave(1, 2);
    arp_finish();
    printf("statemachine: %u passes of %u bytes, %lu lines\n", (unsigned)PASSES,
           (unsigned)LENGTH, (unsigned long)st.lines);
    printf("tokens: ident %lu number %lu real %lu string %lu op %lu comment %lu\n",
           (unsigned long)st.count[K_IDENT], (unsigned long)st.count[K_NUMBER],
           (unsigned long)st.count[K_REAL], (unsigned long)st.count[K_STRING],
           (unsigned long)st.count[K_OP], (unsigned long)st.count[K_COMMENT]);
    printf("checksum %08lx\n", (unsigned long)st.hash);
    return 0;
}
