/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Forced interleavings for negative controls, on lib/debug.h's debug points.
 * A park holds the first thread that reaches one point (or the test's own
 * thread, park_self()) until the test lets it go, and lets it go by itself
 * when another thread reaches a second point, where that thread would wait
 * for the held one: the protection at work, counted in ->waited. That second
 * point counts from park_arm() on, so that a thread that holds itself late
 * (park_self() after the other side began to wait) does not hold at all. So
 * a run with the protection removed meets its window every time, and a run
 * with it never deadlocks. A held thread gives up after PARK_TIMEOUT
 * seconds, counted in ->timeouts, so that a test fails instead of hanging.
 */
#ifndef MMP_TEST_PARK_H
#define MMP_TEST_PARK_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "debug.h"

#define PARK_TIMEOUT	60
/* A debug point in a release mask. */
#define PARK_AT(point)	(1u << (point))

struct park {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int at;			/* the debug point that holds, -1 for none */
	unsigned int release_mask;	/* PARK_AT() of the points that let it go */
	bool armed, parked, released;
	int waited;		/* a release point reached, armed and not yet released */
	int timeouts;
};

/* Wait on @p's condition until @done or the deadline; false on timeout. Lock held. */
static inline bool park_wait_until(struct park *p, const bool *done, const struct timespec *end)
{
	while (!*done)
		if (pthread_cond_timedwait(&p->cond, &p->lock, end) == ETIMEDOUT)
			return *done;
	return true;
}

static inline struct timespec park_deadline(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += PARK_TIMEOUT;
	return t;
}

/* Hold the calling thread until released. Lock held. */
static inline void park_hold(struct park *p)
{
	struct timespec end = park_deadline();

	p->parked = true;
	pthread_cond_broadcast(&p->cond);
	if (!park_wait_until(p, &p->released, &end))
		p->timeouts++;
	p->parked = false;
	pthread_cond_broadcast(&p->cond);
}

static inline void park_hook(struct mmp_space *s, enum mmp_debug_point point, void *arg)
{
	struct park *p = arg;

	(void)s;
	pthread_mutex_lock(&p->lock);
	if (p->armed && (int)point == p->at) {
		p->armed = false;
		park_hold(p);
	} else if ((p->release_mask & PARK_AT(point)) && !p->released) {
		p->waited++;
		p->released = true;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
}

/* Install @p as @s's hook; nothing is armed yet. */
static inline void park_init(struct park *p, struct mmp_space *s)
{
	pthread_condattr_t attr;

	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &attr);
	pthread_condattr_destroy(&attr);
	p->at = -1;
	p->release_mask = 0;
	p->armed = p->parked = p->released = false;
	p->waited = p->timeouts = 0;
	mmp_debug_set_hook(s, park_hook, p);
}

/* Remove the hook of @s (no thread held any more) and free @p's own state. */
static inline void park_fini(struct park *p, struct mmp_space *s)
{
	mmp_debug_set_hook(s, NULL, NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

/* Hold the next thread that reaches @at (-1: none); reaching a point of @release_mask lets it go. */
static inline void park_arm(struct park *p, int at, unsigned int release_mask)
{
	pthread_mutex_lock(&p->lock);
	p->at = at;
	p->release_mask = release_mask;
	p->armed = at >= 0;
	p->parked = p->released = false;
	p->waited = 0;
	pthread_mutex_unlock(&p->lock);
}

/* Wait until a thread is held; false when none came within PARK_TIMEOUT. */
static inline bool park_wait_parked(struct park *p)
{
	struct timespec end = park_deadline();
	bool ok;

	pthread_mutex_lock(&p->lock);
	ok = park_wait_until(p, &p->parked, &end);
	pthread_mutex_unlock(&p->lock);
	return ok;
}

/* Let the held thread go (or the next one to be held: it then passes). */
static inline void park_release(struct park *p)
{
	pthread_mutex_lock(&p->lock);
	p->released = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* The test's own thread holds itself at the window, until released as above. */
static inline void park_self(struct park *p)
{
	pthread_mutex_lock(&p->lock);
	p->armed = false;
	if (!p->released)
		park_hold(p);
	pthread_mutex_unlock(&p->lock);
}

#endif /* MMP_TEST_PARK_H */
