/*
 * simthread.h - threads for guests of sim-host's multi-core targets.
 *
 * A small thread API whose functions sim-host intercepts, like the ARP
 * entry points (DESIGN.md decision 1): under sim-host every thread gets its
 * own register context, stack (8 KiB by default, taken by the host from the top of the guest
 * heap, with an inaccessible guard page below it) and cycle clock, and the
 * threads run interleaved on the target's simulated cores (`--cores N`).
 * Blocking in join, on a mutex or at a barrier advances the waiting core's
 * clock to the release time.
 *
 * Without sim-host (on qemu or a board) the stubs in simthread_stubs.c run
 * each thread to completion when it is created; join, mutexes and barriers
 * then do nothing. Programs whose threads do not wait for each other (such
 * as the parallelised filter) give the same results either way.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef SIMTHREAD_H
#define SIMTHREAD_H

#ifdef __cplusplus
extern "C" {
#endif

/* A thread handle: 1, 2, ... in creation order; the main thread is 0. */
typedef unsigned simthread_t;

typedef struct {
    volatile unsigned owner; /* host bookkeeping; never read by the guest */
} simthread_mutex_t;

typedef struct {
    unsigned count;
    volatile unsigned arrived; /* host bookkeeping */
} simthread_barrier_t;

#define SIMTHREAD_BARRIER_SERIAL_THREAD 1

/* Starts fn(arg) in a new thread; its handle is stored in *thread.
 * Returns 0, or -1 when no more threads can be created. */
int simthread_create(simthread_t *thread, void (*fn)(void *), void *arg);
/* Waits until the thread has returned from its function. Returns 0. A
 * thread is joined once, as a POSIX thread is: sim-host stops the run with
 * a fault at a second join of it, or at a join of a thread never made. */
int simthread_join(simthread_t thread);
/* The calling thread's handle (0 for main). */
simthread_t simthread_self(void);
/* The number of simulated cores (1 without sim-host). */
unsigned simthread_cores(void);

int simthread_mutex_init(simthread_mutex_t *mutex);
int simthread_mutex_lock(simthread_mutex_t *mutex);
int simthread_mutex_unlock(simthread_mutex_t *mutex);

/* A barrier for `count` threads. simthread_barrier_wait returns
 * SIMTHREAD_BARRIER_SERIAL_THREAD in one of them and 0 in the others. */
int simthread_barrier_init(simthread_barrier_t *barrier, unsigned count);
int simthread_barrier_wait(simthread_barrier_t *barrier);

/* Where a thread's function returns to (the host ends the thread here). */
void simthread_exit(void);

#ifdef __cplusplus
}
#endif

#endif /* SIMTHREAD_H */
