/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A writer held inside the mmap write lock while the test's thread makes a
 * call: an mmp_mmap() of a free page, parked right after it took the lock
 * (MMP_DEBUG_MMAP_WRITE_LOCKED). The park lets it go when the call reaches
 * MMP_DEBUG_MMAP_LOCK_WAIT (it found the lock taken and would sleep), so a
 * call that waits for the writer finishes rather than hangs, and is seen to
 * have waited; a call under a lock of its own finishes with the writer
 * still inside. The lock tests of madvise and PROCMAP_QUERY use it.
 */
#ifndef MMP_TEST_HELD_WRITER_H
#define MMP_TEST_HELD_WRITER_H

#include <pthread.h>
#include <stdbool.h>

#include <mmprim/mmprim.h>

#include "park.h"

struct held_writer {
	struct mmp_space *s;
	uint64_t far;		/* a free page for the writer's mapping */
	int err;		/* its mmp_mmap()'s result */
	bool parked;		/* it was held */
	int waited;		/* the call reached the wait, which let the writer go */
	int timeouts;		/* the writer gave up waiting to be let go */
};

static void *held_writer_fn(void *arg)
{
	struct held_writer *h = arg;
	uint64_t out;

	h->err = mmp_mmap(h->s, h->far, MMP_PAGE_SIZE, MMP_PROT_READ | MMP_PROT_WRITE,
			  MMP_MAP_FIXED, &out);
	return NULL;
}

/* Run @call(@arg) on this thread with @h's writer held; the call's result. */
static inline int held_writer_call(struct held_writer *h, int (*call)(void *), void *arg)
{
	struct park park;
	pthread_t th;
	int err;

	park_init(&park, h->s);
	park_arm(&park, MMP_DEBUG_MMAP_WRITE_LOCKED, PARK_AT(MMP_DEBUG_MMAP_LOCK_WAIT));
	pthread_create(&th, NULL, held_writer_fn, h);
	h->parked = park_wait_parked(&park);
	err = call(arg);
	pthread_mutex_lock(&park.lock);
	h->waited = park.waited;
	pthread_mutex_unlock(&park.lock);
	park_release(&park);
	pthread_join(th, NULL);
	h->timeouts = park.timeouts;
	park_fini(&park, h->s);
	return err;
}

#endif /* MMP_TEST_HELD_WRITER_H */
