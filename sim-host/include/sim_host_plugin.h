/*
 * sim_host_plugin.h - the C ABI of sim-host callback plugins.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * `sim-host run prog.elf --plugin PATH.so[:ARGS]` loads a shared library
 * that measures ARP sections with its own callback sets, exactly like a
 * program's `arp_add_callbacks` (ARP manual 2.3, 6.1.2): each set has a data
 * type and enter/leave callbacks that receive the section id, the set's data
 * area for this execution of the section, and the set's context pointer.
 * What the leave callback leaves in the data area is recorded in data.arp as
 * a further callback set, after the host's own sets (cycles, instructions).
 *
 * A plugin exports:
 *
 *   const uint32_t sim_host_plugin_abi_version = SIM_HOST_PLUGIN_ABI_VERSION;
 *   int  sim_host_plugin_init(const sim_host_api *api, const char *args);
 *   void sim_host_plugin_finish(void);            (optional)
 *
 * Build with: gcc -shared -fPIC -I<sim-host>/include -o myplugin.so myplugin.c
 *
 * Rules:
 * - sim_host_plugin_init is called once, before the guest runs, with the
 *   text after the first ':' of the --plugin argument ("" when none). It
 *   registers one or more callback sets with api->add_callbacks and returns
 *   0; any other value fails the load (the run does not start), with the
 *   message given to api->set_error, if any.
 * - All callbacks run on the simulator's thread, one at a time, while the
 *   guest is stopped at an ARP call. The guest-state functions of the API
 *   (cycles, instructions, registers, memory, current_tid) answer only
 *   inside a callback; elsewhere they return 0 / -1.
 * - The `api` pointer and everything it points to stay valid until
 *   sim_host_plugin_finish returns; it is called once, if init returned 0,
 *   after data.arp was written and before the library is unloaded.
 * - A plugin runs inside sim-host: it must not crash, exit, longjmp or
 *   throw out of a callback, and must not keep `api` beyond finish.
 * - The ABI version changes whenever anything here changes incompatibly.
 *   Within a version, fields are only ever appended to sim_host_api, and
 *   api->size tells how many the host provides.
 */
#ifndef SIM_HOST_PLUGIN_H
#define SIM_HOST_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_HOST_PLUGIN_ABI_VERSION 1u

/* The data type of a callback set: the numbering of arp_data_type (ARP
 * manual 6.1.1), which is also the type code of the data.arp header. The
 * data area is 16 bytes, aligned to 16, and holds one value of the type
 * (`long` is the host's C long; `long double` is recorded as a double). */
enum sim_host_data_type {
    SIM_HOST_CHAR = 0,
    SIM_HOST_UCHAR = 1,
    SIM_HOST_SHORT = 2,
    SIM_HOST_USHORT = 3,
    SIM_HOST_INT = 4,
    SIM_HOST_UINT = 5,
    SIM_HOST_LONG = 6,
    SIM_HOST_ULONG = 7,
    SIM_HOST_LLONG = 8,
    SIM_HOST_ULLONG = 9,
    SIM_HOST_FLOAT = 10,
    SIM_HOST_DOUBLE = 11,
    SIM_HOST_LDOUBLE = 12
};

typedef unsigned short sim_host_tid; /* = arp_tid */
typedef unsigned short sim_host_sid; /* = arp_sid */

/* The manual's callback signatures (6.1.1): a callback written for
 * arp_add_callbacks works unchanged. The thread id of the call is
 * api->current_tid(api->host). */
typedef void (*sim_host_enter_callback)(const sim_host_sid sid, void *data, void *context);
typedef void (*sim_host_leave_callback)(const sim_host_sid sid, void *data, void *context);
/* Manual 3.1: called with the child's tid and the address of the child's
 * copy of the context pointer, which the callback may change; the join
 * callback likewise before the thread's copy is dropped. */
typedef void (*sim_host_spawn_callback)(const sim_host_tid tid, void **contextp);
typedef void (*sim_host_join_callback)(const sim_host_tid tid, void **contextp);

typedef struct sim_host_api sim_host_api;

struct sim_host_api {
    /* SIM_HOST_PLUGIN_ABI_VERSION of the host. */
    uint32_t abi_version;
    /* sizeof(sim_host_api) in the host. */
    uint32_t size;
    /* Opaque; the first argument of every function below. */
    void *host;

    /* --- during sim_host_plugin_init only --- */

    /* Registers a callback set (arp_add_callbacks). enter and leave are
     * required; spawn and join may be NULL. Sets are called in the order
     * they were registered, after the host's own sets. Returns 0, or -1
     * when the data type is unknown, enter or leave is NULL, or it is
     * called outside init (the load then fails with the reason). */
    int (*add_callbacks)(void *host, int data_type, sim_host_enter_callback enter,
                         sim_host_leave_callback leave, sim_host_spawn_callback spawn,
                         sim_host_join_callback join, void *context);
    /* The message to report when init returns non-zero (copied). */
    void (*set_error)(void *host, const char *message);

    /* --- at any time --- */

    /* Prints "plugin NAME: message" on stderr. */
    void (*log)(void *host, const char *message);
    /* The target's clock in Hz (also outside callbacks). */
    uint64_t (*clock_hz)(void *host);

    /* --- inside callbacks only (else 0 / -1) --- */

    /* The running core's cycle and instruction counters at the ARP call
     * (the guest thread's clock; in playback, the played-back clock). */
    uint64_t (*cycles)(void *host);
    uint64_t (*instructions)(void *host);
    /* The thread id given to the ARP call being handled. */
    sim_host_tid (*current_tid)(void *host);
    /* Architectural register n of the calling guest thread: ARM r0..r15
     * (13 = sp, 14 = lr, 15 = pc), RISC-V x0..x31 and 32 = pc. Returns 0
     * and stores the value, or -1 for an unknown register. */
    int (*read_register)(void *host, uint32_t n, uint64_t *value);
    /* Copies len bytes of guest memory at addr into buf. Returns 0, or -1
     * if any byte is unmapped (buf is then unspecified). */
    int (*read_memory)(void *host, uint64_t addr, void *buf, size_t len);
};

/* What the plugin exports (declared here so the compiler checks them). */
extern const uint32_t sim_host_plugin_abi_version;
int sim_host_plugin_init(const sim_host_api *api, const char *args);
void sim_host_plugin_finish(void);

#ifdef __cplusplus
}
#endif

#endif /* SIM_HOST_PLUGIN_H */
