/*
 * core_portme.h - sim-host's port layer for EEMBC CoreMark, written for
 * scripts/public-benchmarks (CoreMark itself is never in this repository:
 * ./run takes the path of a checkout).
 *
 * Single context, seeds from volatile variables (the performance run's
 * 0, 0, 0x66), the 2000-byte data block on the stack, printf from
 * picolibc. Ticks are cycles, counted as if at 1 MHz: the "Iterations/Sec"
 * CoreMark prints is then its CoreMark/MHz (on cores with a DWT cycle
 * counter; the script reads sim-host's own count either way).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef CORE_PORTME_H
#define CORE_PORTME_H

#include <stddef.h>
#include <stdint.h>

#define HAS_FLOAT 1
#define HAS_TIME_H 0
#define USE_CLOCK 0
#define HAS_STDIO 1
#define HAS_PRINTF 1

#ifndef COMPILER_VERSION
#define COMPILER_VERSION "GCC" __VERSION__
#endif
#ifndef FLAGS_STR
#define FLAGS_STR "(not given)"
#endif
#define COMPILER_FLAGS FLAGS_STR
#define MEM_LOCATION "STACK"

typedef int16_t ee_s16;
typedef uint16_t ee_u16;
typedef int32_t ee_s32;
typedef double ee_f32;
typedef uint8_t ee_u8;
typedef uint32_t ee_u32;
typedef uintptr_t ee_ptr_int;
typedef size_t ee_size_t;

/* round a pointer up to a 32-bit boundary (the matrix's blocks) */
#define align_mem(x) (void *)(4 + (((ee_ptr_int)(x)-1) & ~3))

#define CORETIMETYPE ee_u32
typedef ee_u32 CORE_TICKS;

#define SEED_METHOD SEED_VOLATILE
#define MEM_METHOD MEM_STACK
#define MULTITHREAD 1
#define USE_PTHREAD 0
#define USE_FORK 0
#define USE_SOCKET 0
#define MAIN_HAS_NOARGC 0
#define MAIN_HAS_NORETURN 0

#if !defined(PROFILE_RUN) && !defined(PERFORMANCE_RUN) && !defined(VALIDATION_RUN)
#define PERFORMANCE_RUN 1
#endif

extern ee_u32 default_num_contexts;

typedef struct CORE_PORTABLE_S {
    ee_u8 portable_id;
} core_portable;

void portable_init(core_portable *p, int *argc, char *argv[]);
void portable_fini(core_portable *p);

#endif
