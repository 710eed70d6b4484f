// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The rwsem's wait queue (rwsem.h): FIFO, granted by whoever leaves the
 * semaphore free for its head, under wait_lock. While the queue is not empty
 * RWSEM_FLAG_WAITERS is set and no fast path takes the semaphore, so what
 * holds it only shrinks outside wait_lock, and a grant decided under it
 * stands.
 */
#include "compiler.h"
#include "rwsem.h"

struct rwsem_waiter {
	struct rwsem_waiter *next;
	bool write;
	bool granted;
};

void init_rwsem(struct rw_semaphore *sem)
{
	sem->count = 0;
	pthread_mutex_init(&sem->wait_lock, NULL);
	pthread_cond_init(&sem->wait_cond, NULL);
	sem->head = sem->tail = NULL;
	sem->nr_waiters = 0;
}

void rwsem_destroy(struct rw_semaphore *sem)
{
	MMP_BUG_ON(sem->head || __atomic_load_n(&sem->count, __ATOMIC_RELAXED));
	pthread_cond_destroy(&sem->wait_cond);
	pthread_mutex_destroy(&sem->wait_lock);
}

/* Take @w out of the queue; @prev is the waiter before it, or NULL at the head. */
static void rwsem_unlink(struct rw_semaphore *sem, struct rwsem_waiter *prev,
			 struct rwsem_waiter *w)
{
	if (prev)
		prev->next = w->next;
	else
		sem->head = w->next;
	if (sem->tail == w)
		sem->tail = prev;
	sem->nr_waiters--;
	w->granted = true;
}

/*
 * rwsem_mark_wake: a writer at the head gets it when nothing holds it; a
 * reader at the head, when no writer does, and with it every reader queued
 * behind, past any writer. wait_lock held.
 */
static void rwsem_grant(struct rw_semaphore *sem)
{
	unsigned long c = __atomic_load_n(&sem->count, __ATOMIC_ACQUIRE);
	struct rwsem_waiter *w = sem->head, *prev = NULL, *next;
	bool any = false;

	if (!w)
		return;
	if (w->write) {
		if (c & RWSEM_LOCK_MASK)
			return;
		__atomic_fetch_or(&sem->count, RWSEM_WRITER_LOCKED, __ATOMIC_ACQUIRE);
		rwsem_unlink(sem, NULL, w);
		any = true;
	} else {
		if (c & RWSEM_WRITER_LOCKED)
			return;
		for (; w; w = next) {
			next = w->next;
			if (w->write) {
				prev = w;
				continue;
			}
			__atomic_fetch_add(&sem->count, RWSEM_READER_BIAS, __ATOMIC_ACQUIRE);
			rwsem_unlink(sem, prev, w);
			any = true;
		}
	}
	if (!sem->head)
		__atomic_fetch_and(&sem->count, ~RWSEM_FLAG_WAITERS, __ATOMIC_RELAXED);
	if (any)
		pthread_cond_broadcast(&sem->wait_cond);
}

/* Queue as a reader or a writer and sleep until granted; false if granted at once. */
static bool rwsem_wait(struct rw_semaphore *sem, bool write)
{
	struct rwsem_waiter w = { .write = write };
	bool slept;

	pthread_mutex_lock(&sem->wait_lock);
	if (sem->tail)
		sem->tail->next = &w;
	else
		sem->head = &w;
	sem->tail = &w;
	sem->nr_waiters++;
	__atomic_fetch_or(&sem->count, RWSEM_FLAG_WAITERS, __ATOMIC_SEQ_CST);
	/* What held it may have left between the fast path and the flag. */
	rwsem_grant(sem);
	slept = !w.granted;
	while (!w.granted)
		pthread_cond_wait(&sem->wait_cond, &sem->wait_lock);
	pthread_mutex_unlock(&sem->wait_lock);
	return slept;
}

bool rwsem_down_read_slowpath(struct rw_semaphore *sem)
{
	return rwsem_wait(sem, false);
}

bool rwsem_down_write_slowpath(struct rw_semaphore *sem)
{
	return rwsem_wait(sem, true);
}

void rwsem_wake(struct rw_semaphore *sem)
{
	pthread_mutex_lock(&sem->wait_lock);
	rwsem_grant(sem);
	pthread_mutex_unlock(&sem->wait_lock);
}

unsigned int rwsem_nr_waiters(struct rw_semaphore *sem)
{
	unsigned int n;

	pthread_mutex_lock(&sem->wait_lock);
	n = sem->nr_waiters;
	pthread_mutex_unlock(&sem->wait_lock);
	return n;
}
