/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The writer thread of the lock seeds (seed_writer.h). */
#include <errno.h>
#include <sched.h>

#include "seed_writer.h"

static void *seed_writer_run(void *arg)
{
	struct seed_writer *w = arg;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		const struct seed_writer_target *t = __atomic_load_n(&w->cur, __ATOMIC_ACQUIRE);
		uint64_t out;
		int err;

		if (!t) {
			sched_yield();
			continue;
		}
		err = mmp_mmap(t->space, t->addr, t->len, MMP_PROT_READ | MMP_PROT_WRITE,
			       MMP_MAP_FIXED, &out);
		if (!err)
			err = mmp_munmap(t->space, t->addr, t->len);
		if (err) {
			__atomic_store_n(&w->err, err, __ATOMIC_RELEASE);
			break;
		}
		__atomic_fetch_add(&w->ops, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int seed_writer_start(struct seed_writer *w)
{
	int err = -pthread_create(&w->th, NULL, seed_writer_run, w);

	w->started = !err;
	return err;
}

int seed_writer_switch(struct seed_writer *w, const struct seed_writer_target *t)
{
	uint64_t ops;

	__atomic_store_n(&w->cur, t, __ATOMIC_RELEASE);
	/* An op in flight may be the other space's: two more are surely this one's. */
	ops = __atomic_load_n(&w->ops, __ATOMIC_ACQUIRE);
	while (__atomic_load_n(&w->ops, __ATOMIC_ACQUIRE) < ops + 2) {
		int err = __atomic_load_n(&w->err, __ATOMIC_ACQUIRE);

		if (err)
			return err;
		sched_yield();
	}
	return 0;
}

int seed_writer_stop(struct seed_writer *w)
{
	if (!w->started)
		return 0;
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	pthread_join(w->th, NULL);
	w->started = false;
	return __atomic_load_n(&w->err, __ATOMIC_ACQUIRE);
}
