/*
 * atomium_rp.h - the ATOMIUM Record & Playback (ARP) API.
 *
 * The API of the ARP User's and Reference Manual, section 6
 * (seeds/004_e4816c0084434776.txt), with the three compilation modes of
 * section 6.3:
 *
 *   default      every function is an ordinary external function; link
 *                natively with libarp (the `arpsim/libarp` crate).
 *   -DARP_SIM    arp_add_callbacks(...) becomes arpsim_add_callbacks() and
 *                arp_start(...) becomes arpsim_start(tid, sid, mode); the
 *                callback and context arguments are dropped. The simulator
 *                (sim-host) implements arpsim_* and intercepts every arp_*
 *                entry point (guest-shim/src/arp_stubs.c).
 *   -DARP_NONE   every arp_* call is removed by the preprocessor: the program
 *                compiles as if it were not instrumented.
 *
 * Deviations from the manual's text, all deliberate:
 *   - empty parameter lists are written `(void)` so that they are prototypes
 *     (the manual's `()` declares a function with unspecified arguments);
 *   - the manual's section 4.3 listing calls `arp_leave(1, 2, 0)` with three
 *     arguments; arp_leave takes two (section 6.1.2), which is what is
 *     declared here.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef ATOMIUM_RP_H
#define ATOMIUM_RP_H

#ifdef __cplusplus
extern "C" {
#endif

/* 6.1.1 Type definitions */

typedef unsigned short arp_tid; /* Thread ids */
typedef unsigned short arp_sid; /* Section ids */
typedef int arp_lidx;           /* Loop index */

typedef enum _arp_data_type {
    arp_char,  arp_uchar,
    arp_short, arp_ushort,
    arp_int,   arp_uint,
    arp_long,  arp_ulong,
    arp_llong, arp_ullong,
    arp_float, arp_double,
    arp_ldouble
} arp_data_type;

typedef enum _arp_mode {
    arp_record_average,
    arp_record_all,
    arp_record_histogram,
    arp_playback
} arp_mode;

typedef enum _arp_file_format {
    arp_ascii,
    arp_binary
} arp_file_format;

typedef enum _arp_error_t {
    arp_warning, arp_error_fatal, arp_error_non_fatal,
    arp_error_syntax, arp_error_io
} arp_error_t;

typedef void (*arp_enter_callback)(const arp_sid, void *data, void *context);
typedef void (*arp_leave_callback)(const arp_sid, void *data, void *context);

typedef void (*arp_lock_callback)(const void *, void *);
typedef void (*arp_unlock_callback)(const void *, void *);

typedef void (*arp_spawn_callback)(const arp_tid, void **contextp);
typedef void (*arp_join_callback)(const arp_tid, void **contextp);

typedef void (*arp_error_callback)(const arp_error_t, const char *msg, void *context);

/* 6.4 The Query API: the opaque trace handle. */
typedef void *arp_trace;

#if defined(ARP_NONE)

/* 6.3: "all arp function calls are effectively removed from the code". Each
 * macro evaluates to a void expression (or a zero of the function's return
 * type) so that every call site stays a valid statement or expression, and
 * no argument is evaluated. */
#define arp_enter(tid, sid, lidx) ((void)0)
#define arp_enter_kernel(tid, sid, lidx) ((void)0)
#define arp_enter_profiled(tid, sid, lidx) ((void)0)
#define arp_leave(tid, sid) ((void)0)
#define arp_leave_kernel(tid, sid) ((void)0)
#define arp_leave_profiled(tid, sid) ((void)0)
#define arp_spawned(parent, child) ((void)0)
#define arp_join(tid) ((void)0)
#define arp_add_callbacks(type, enter, leave, spawn, join, context) ((void)0)
#define arp_start(max_tid, max_sid, mode, error_cb, error_context, lock_cb, unlock_cb, lock_context) ((void)0)
#define arp_finish() ((void)0)
#define arp_set_file_name(name) ((void)0)
#define arp_set_output_file_format(format) ((void)0)
#define arp_load_data(file_name, cb, context) ((void)0)
#define arp_get_mode() ((arp_mode)arp_record_average)
#define arp_switch_mode(mode) ((void)0)
#define arp_free_data() ((void)0)
#define arp_get_data_mult() (0u)
#define arp_get_data_type(data_index) ((arp_data_type)arp_char)
#define arp_get_nTraces() (0u)
#define arp_get_trace(trace_no) ((arp_trace)0)
#define arp_free_trace(trace) ((void)0)
#define arp_trace_get_count(trace) (0u)
#define arp_trace_get_stack_length(trace) (0u)
#define arp_trace_get_stack_pos(trace, depth) ((arp_sid)0)
#define arp_trace_get_stack_index(trace, depth) ((arp_lidx)0)
#define arp_trace_get_value(trace, data_idx) ((const void *)0)

#else /* default mode and ARP_SIM */

/* 6.1.2 The record and playback API */

extern void arp_enter(const arp_tid, const arp_sid, const arp_lidx);
extern void arp_enter_kernel(const arp_tid, const arp_sid, const arp_lidx);
extern void arp_enter_profiled(const arp_tid, const arp_sid, const arp_lidx);
extern void arp_leave(const arp_tid, const arp_sid);
extern void arp_leave_kernel(const arp_tid, const arp_sid);
extern void arp_leave_profiled(const arp_tid, const arp_sid);

extern void arp_spawned(const arp_tid, const arp_tid);
extern void arp_join(const arp_tid);

extern void arp_add_callbacks(const arp_data_type,
                              arp_enter_callback,
                              arp_leave_callback,
                              arp_spawn_callback,
                              arp_join_callback,
                              void *context);

extern void arp_start(const arp_tid, /* Maximum thread id */
                      const arp_sid, /* Maximum section id */
                      const arp_mode,
                      arp_error_callback,
                      void *error_context,
                      arp_lock_callback,
                      arp_unlock_callback,
                      void *lock_context);

extern void arp_finish(void);

extern void arp_set_file_name(const char *);
extern void arp_set_output_file_format(const arp_file_format);

/* 6.4 The Query API */

extern void arp_load_data(const char *file_name, arp_error_callback cb, void *context);

extern const arp_mode arp_get_mode(void);
extern void arp_switch_mode(const arp_mode mode);
extern void arp_free_data(void);

extern const unsigned arp_get_data_mult(void);
extern const arp_data_type arp_get_data_type(const unsigned dataIndex);

extern const unsigned arp_get_nTraces(void);

extern const arp_trace arp_get_trace(const unsigned traceNo);
extern void arp_free_trace(const arp_trace trace);

extern const unsigned arp_trace_get_count(const arp_trace trace);
extern const unsigned arp_trace_get_stack_length(const arp_trace trace);
extern const arp_sid arp_trace_get_stack_pos(const arp_trace trace, const unsigned depth);
extern const arp_lidx arp_trace_get_stack_index(const arp_trace trace, const unsigned depth);
extern const void *arp_trace_get_value(const arp_trace trace, const unsigned dataIdx);

/* 6.3 ARP_SIM: the simulator provides these two; the callback and context
 * arguments of arp_add_callbacks / arp_start are dropped. */
extern void arpsim_add_callbacks(void);
extern void arpsim_start(const arp_tid, const arp_sid, const arp_mode);

#if defined(ARP_SIM)
#define arp_add_callbacks(type, enter, leave, spawn, join, context) arpsim_add_callbacks()
#define arp_start(max_tid, max_sid, mode, error_cb, error_context, lock_cb, unlock_cb, lock_context) \
    arpsim_start((max_tid), (max_sid), (mode))
#endif

#endif /* ARP_NONE */

/* Section names that survive the optimiser (sim-host; not in the manual).
 *
 *   ARP_SECTION_NAME(sid, "name");
 *
 * names section `sid` "name" in every output of sim-host (report, JSON,
 * callgrind, trace events, suites, plots, `arp ... --elf`), before its
 * ato_kernel_* / ato_profile_* label and its function (file:line). A label
 * is only as good as the compiler keeps it: under -O2 GCC may give several
 * labels one address, and then they cannot tell their sections apart.
 * This macro instead writes (sid, name) into a section of the ELF file,
 * `.arp_names`, that is not loaded into the guest's memory: it costs no
 * code, no data and no cycle, no optimisation can merge or drop it, and
 * --gc-sections keeps it (it is not allocated and has no relocation).
 *
 * Usable at file scope or inside a function (inside a function it is kept
 * as long as that function's code is, so file scope is the safe place).
 * `sid` must be an integer literal or a macro expanding to one, 0..65535
 * (the assembler reads it: no enum constant, no `u` suffix); `name` a
 * string literal, without a NUL inside. Naming a section twice with the
 * same name is harmless; two different names for one id are reported.
 * Each record is the id (2 bytes, little-endian) followed by the name and
 * its NUL. With -DARP_NONE, or a compiler that does not produce ELF with
 * GNU inline assembly, the macro expands to nothing that reaches the
 * object file. */
#define ARP_SECTION_NAME_STR_(x) #x
#define ARP_SECTION_NAME_STR(x) ARP_SECTION_NAME_STR_(x)
#if !defined(ARP_NONE) && defined(__GNUC__) && defined(__ELF__)
/* "%progbits": ARM's assembler reads `@` as a comment; GNU as accepts `%`
 * for the section type on every ELF target (RISC-V and x86 included). */
#define ARP_SECTION_NAME(sid, name)                                     \
    __asm__(".pushsection .arp_names,\"\",%progbits\n\t"               \
            ".2byte " ARP_SECTION_NAME_STR(sid) "\n\t"                 \
            ".asciz " ARP_SECTION_NAME_STR(name) "\n\t"                \
            ".popsection")
#elif defined(__cplusplus)
#define ARP_SECTION_NAME(sid, name) static_assert(true, "ARP_SECTION_NAME")
#elif defined(__GNUC__)
/* a declaration that declares nothing, valid wherever the macro is;
 * __extension__ keeps -std=c99 -pedantic quiet about C11's keyword */
#define ARP_SECTION_NAME(sid, name) __extension__ _Static_assert(1, "ARP_SECTION_NAME")
#else
#define ARP_SECTION_NAME(sid, name) _Static_assert(1, "ARP_SECTION_NAME")
#endif

#ifdef __cplusplus
}
#endif

#endif /* ATOMIUM_RP_H */
