/*
 * simthread_stubs.c - the simthread.h entry points as seen by a guest.
 *
 * sim-host intercepts the first instruction of each function (like the ARP
 * stubs) and implements threads on the host; the bodies below only run
 * without sim-host, where they give a sequential fallback: a thread runs to
 * completion inside simthread_create. Each body differs so that no two
 * functions are folded into one address (see arp_stubs.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "simthread.h"

#define SIMTHREAD_ENTRY __attribute__((noinline, used, externally_visible))

static unsigned created;
static simthread_t current;

SIMTHREAD_ENTRY int simthread_create(simthread_t *thread, void (*fn)(void *), void *arg)
{
    simthread_t outer = current;
    *thread = ++created;
    current = *thread;
    fn(arg);
    current = outer;
    return 0;
}

SIMTHREAD_ENTRY int simthread_join(simthread_t thread) { return thread > created ? -1 : 0; }
SIMTHREAD_ENTRY simthread_t simthread_self(void) { return current; }
SIMTHREAD_ENTRY unsigned simthread_cores(void) { return 1u + 0u * created; }

SIMTHREAD_ENTRY int simthread_mutex_init(simthread_mutex_t *m) { m->owner = 0; return 0; }
SIMTHREAD_ENTRY int simthread_mutex_lock(simthread_mutex_t *m) { m->owner = current + 1; return 0; }
SIMTHREAD_ENTRY int simthread_mutex_unlock(simthread_mutex_t *m) { m->owner = 0u * current; return 0; }

SIMTHREAD_ENTRY int simthread_barrier_init(simthread_barrier_t *b, unsigned count)
{ b->count = count; b->arrived = 0; return 0; }
SIMTHREAD_ENTRY int simthread_barrier_wait(simthread_barrier_t *b)
{ b->arrived += 1; return b->arrived == 1 ? SIMTHREAD_BARRIER_SERIAL_THREAD : 0; }

SIMTHREAD_ENTRY void simthread_exit(void) { created += 0u * current; }
