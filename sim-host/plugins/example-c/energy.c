/*
 * energy.c - example sim-host callback plugin in C.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Set 1 (double): an energy estimate of each section in nanojoules,
 *   E = cycles * pj_per_cycle + instructions * pj_per_insn  (/ 1000),
 *   from the running core's counters at enter and leave.
 * Set 2 (int, only with `watch=ADDR`): how much the 32-bit guest word at
 *   ADDR changed between enter and leave (read through the memory API),
 *   e.g. a global counter the guest increments.
 *
 * The per-thread enter counters of set 1 live in the context (manual 3.1
 * style), keyed by api->current_tid, so nested sections work. The data
 * area of set 1 carries nothing between enter and leave (a double could
 * not hold both counters).
 *
 * Arguments, comma-separated: pj_per_cycle=F, pj_per_insn=F, watch=ADDR,
 * fail (init fails: for tests).
 *
 * gcc -shared -fPIC -O2 -I sim-host/include -o energy.so energy.c
 */
#include "sim_host_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const uint32_t sim_host_plugin_abi_version = SIM_HOST_PLUGIN_ABI_VERSION;

#define MAX_TIDS 1024 /* tids above are not measured (value 0) */
#define MAX_DEPTH 64

struct start {
    uint64_t cycles, instructions;
};

struct energy {
    const sim_host_api *api;
    double pj_per_cycle, pj_per_insn;
    /* Enter counters per thread, as a stack of open sections. */
    struct start (*open)[MAX_DEPTH];
    unsigned char *depth;
};

static struct energy energy;
static uint64_t watch_addr;

static void energy_enter(const sim_host_sid sid, void *data, void *context)
{
    struct energy *e = context;
    sim_host_tid tid = e->api->current_tid(e->api->host);
    unsigned d;
    (void)sid;
    (void)data;
    if (tid >= MAX_TIDS)
        return;
    d = e->depth[tid];
    if (d < MAX_DEPTH) {
        e->open[tid][d].cycles = e->api->cycles(e->api->host);
        e->open[tid][d].instructions = e->api->instructions(e->api->host);
    }
    if (d < 255)
        e->depth[tid] = d + 1;
}

static void energy_leave(const sim_host_sid sid, void *data, void *context)
{
    struct energy *e = context;
    sim_host_tid tid = e->api->current_tid(e->api->host);
    unsigned d;
    (void)sid;
    if (tid >= MAX_TIDS)
        return;
    d = e->depth[tid];
    if (d == 0)
        return;
    e->depth[tid] = --d;
    if (d < MAX_DEPTH) {
        uint64_t cycles = e->api->cycles(e->api->host) - e->open[tid][d].cycles;
        uint64_t insns = e->api->instructions(e->api->host) - e->open[tid][d].instructions;
        *(double *)data = (cycles * e->pj_per_cycle + insns * e->pj_per_insn) / 1000.0;
    }
}

/* Manual 2.3's pattern: the enter value goes into the data area, the leave
 * callback stores the difference. */
static int32_t read_watched(const sim_host_api *api)
{
    int32_t word = 0;
    if (api->read_memory(api->host, watch_addr, &word, sizeof word) != 0)
        api->log(api->host, "watched address is not readable");
    return word;
}

static void watch_enter(const sim_host_sid sid, void *data, void *context)
{
    (void)sid;
    *(int *)data = read_watched(context);
}

static void watch_leave(const sim_host_sid sid, void *data, void *context)
{
    (void)sid;
    *(int *)data = read_watched(context) - *(int *)data;
}

int sim_host_plugin_init(const sim_host_api *api, const char *args)
{
    char *copy, *item, *save = NULL;
    int watch = 0;

    if (api->abi_version != SIM_HOST_PLUGIN_ABI_VERSION) {
        return -1;
    }
    energy.api = api;
    energy.pj_per_cycle = 10.0;
    energy.pj_per_insn = 5.0;
    copy = strdup(args);
    if (!copy)
        return -1;
    for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (strncmp(item, "pj_per_cycle=", 13) == 0) {
            energy.pj_per_cycle = strtod(item + 13, NULL);
        } else if (strncmp(item, "pj_per_insn=", 12) == 0) {
            energy.pj_per_insn = strtod(item + 12, NULL);
        } else if (strncmp(item, "watch=", 6) == 0) {
            watch_addr = strtoull(item + 6, NULL, 0);
            watch = 1;
        } else if (strcmp(item, "fail") == 0) {
            api->set_error(api->host, "asked to fail");
            free(copy);
            return 3;
        } else {
            char msg[200];
            snprintf(msg, sizeof msg, "unknown argument `%s` (known: pj_per_cycle=, pj_per_insn=, watch=, fail)", item);
            api->set_error(api->host, msg);
            free(copy);
            return 2;
        }
    }
    free(copy);
    energy.open = calloc(MAX_TIDS, sizeof *energy.open);
    energy.depth = calloc(MAX_TIDS, 1);
    if (!energy.open || !energy.depth) {
        api->set_error(api->host, "out of memory");
        return -1;
    }
    if (api->add_callbacks(api->host, SIM_HOST_DOUBLE, energy_enter, energy_leave, NULL, NULL, &energy) != 0)
        return -1;
    if (watch &&
        api->add_callbacks(api->host, SIM_HOST_INT, watch_enter, watch_leave, NULL, NULL, (void *)api) != 0)
        return -1;
    return 0;
}

void sim_host_plugin_finish(void)
{
    free(energy.open);
    free(energy.depth);
    energy.open = NULL;
    energy.depth = NULL;
}
