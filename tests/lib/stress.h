/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the tests that run for a while or on many threads share: a monotonic
 * clock in seconds, a xorshift generator, and diagnostic lines ("# ...") that
 * any thread may print whole, the first @max of a run only.
 */
#ifndef MMP_TEST_STRESS_H
#define MMP_TEST_STRESS_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC. */
static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Marsaglia's xorshift64 (13, 7, 17): advances *@state and returns it. */
static inline uint64_t xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

static pthread_mutex_t stress_note_lock = PTHREAD_MUTEX_INITIALIZER;
static int stress_nr_notes;

/*
 * "# @prefix<message>" as one line, from any thread; once @max lines were
 * asked for in this run, nothing more.
 */
__attribute__((format(printf, 3, 0), unused))
static void stress_vnote(int max, const char *prefix, const char *fmt, va_list ap)
{
	pthread_mutex_lock(&stress_note_lock);
	if (stress_nr_notes++ < max) {
		printf("# %s", prefix);
		vprintf(fmt, ap);
		printf("\n");
		fflush(stdout);
	}
	pthread_mutex_unlock(&stress_note_lock);
}

#endif /* MMP_TEST_STRESS_H */
