// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A host thread per CLONE_VM task: its simulated CPU must live on a thread of
 * its own, or the TLB shootdowns its space's other CPUs receive would be
 * local flushes and no IPI would be counted. The replay stays sequential: the
 * main thread hands one call over and waits for it.
 */
#include <pthread.h>
#include <stdlib.h>

#include "replay.h"

struct rp_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void (*fn)(void *);
	void *arg;
	bool busy, quit;
};

static void *worker_main(void *p)
{
	struct rp_worker *w = p;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->busy && !w->quit)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->quit)
			break;
		pthread_mutex_unlock(&w->lock);
		w->fn(w->arg);
		pthread_mutex_lock(&w->lock);
		w->busy = false;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct rp_worker *rp_worker_start(void)
{
	struct rp_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	if (pthread_create(&w->thread, NULL, worker_main, w)) {
		free(w);
		return NULL;
	}
	return w;
}

void rp_worker_run(struct rp_worker *w, void (*fn)(void *), void *arg)
{
	pthread_mutex_lock(&w->lock);
	w->fn = fn;
	w->arg = arg;
	w->busy = true;
	pthread_cond_broadcast(&w->cond);
	while (w->busy)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

void rp_worker_stop(struct rp_worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->quit = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
