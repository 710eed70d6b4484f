/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A reader that keeps an RCU grace period from ending: a thread inside
 * rcu_read_lock() until released, so that whatever waits for a grace period
 * (call_rcu callbacks, rcu_barrier, synchronize_rcu) is held back meanwhile;
 * and what a test watches then: rcu_barrier calls, tables in flight.
 */
#ifndef MMP_TEST_GRACE_H
#define MMP_TEST_GRACE_H

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include "mm.h"
#include "rcu.h"
#include "tap.h"

struct grace_holder {
	pthread_t thread;
	sem_t ready, release;
};

static void *grace_holder_fn(void *arg)
{
	struct grace_holder *g = arg;
	struct timespec ts;

	rcu_read_lock();
	sem_post(&g->ready);
	/* Bounded: a call that waits for the grace period fails its test, it does not hang it. */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	while (sem_timedwait(&g->release, &ts) && errno == EINTR)
		;
	rcu_read_unlock();
	return NULL;
}

/* Returns once the reader is inside its read-side section. */
static inline void grace_hold(struct grace_holder *g)
{
	sem_init(&g->ready, 0, 0);
	sem_init(&g->release, 0, 0);
	tap_require(pthread_create(&g->thread, NULL, grace_holder_fn, g) == 0, "reader thread");
	while (sem_wait(&g->ready) && errno == EINTR)
		;
}

static inline void grace_release(struct grace_holder *g)
{
	sem_post(&g->release);
	pthread_join(g->thread, NULL);
	sem_destroy(&g->ready);
	sem_destroy(&g->release);
}

/* How many times rcu_barrier() ran in this process. */
static inline uint64_t rcu_barriers(void)
{
	return __atomic_load_n(&rcu_barrier_calls, __ATOMIC_RELAXED);
}

/* Page tables of @phys unlinked and waiting for their grace period to be freed. */
static inline int64_t tables_in_flight(struct mmp_phys *phys)
{
	return __atomic_load_n(&phys->nr_pt_rcu, __ATOMIC_RELAXED);
}

#endif /* MMP_TEST_GRACE_H */
