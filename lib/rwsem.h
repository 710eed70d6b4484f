/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A reader-writer semaphore with the kernel rwsem's observable rule
 * (kernel/locking/rwsem.c): once a writer waits, new readers queue behind it
 * instead of joining the readers inside, so a stream of readers cannot starve
 * a writer, as a glibc pthread_rwlock (reader-preferring by default) lets it.
 *
 * One word says who holds it: RWSEM_WRITER_LOCKED, or readers counted in
 * units of RWSEM_READER_BIAS; RWSEM_FLAG_WAITERS says the wait queue is not
 * empty, and turns every fast path away to the queue. The fast paths are a
 * compare-and-swap each; the queue is FIFO under a mutex, and a release hands
 * the semaphore to the waiter at its head directly: a writer, or, when the
 * head is a reader, every reader in the queue (the kernel's rwsem_mark_wake
 * wakes readers behind a writer too).
 *
 * What the kernel does and this does not: optimistic spinning on the owner
 * (a simulator's waits are long and its cores few: it would only burn them),
 * reader lock stealing when the semaphore is free but has waiters, the
 * writer handoff bit (the direct handoff here is always strict FIFO), and
 * the cap of MAX_READERS_WAKEUP (256) readers a wake lets in: every queued
 * reader goes in at once. Waiters sleep on one condition variable, so a
 * grant wakes them all to look at their own.
 */
#ifndef MMP_RWSEM_H
#define MMP_RWSEM_H

#include <pthread.h>
#include <stdbool.h>

#define RWSEM_WRITER_LOCKED	(1ul << 0)
#define RWSEM_FLAG_WAITERS	(1ul << 1)
#define RWSEM_READER_SHIFT	8
#define RWSEM_READER_BIAS	(1ul << RWSEM_READER_SHIFT)
#define RWSEM_READER_MASK	(~(RWSEM_READER_BIAS - 1))
#define RWSEM_LOCK_MASK		(RWSEM_WRITER_LOCKED | RWSEM_READER_MASK)

struct rwsem_waiter;

struct rw_semaphore {
	unsigned long count;		/* atomic: RWSEM_* above */
	pthread_mutex_t wait_lock;	/* the queue, and every grant from it */
	pthread_cond_t wait_cond;	/* a grant happened: waiters look at their own */
	struct rwsem_waiter *head, *tail;
	unsigned int nr_waiters;	/* under wait_lock: for tests that wait for a queue */
};

void init_rwsem(struct rw_semaphore *sem);
void rwsem_destroy(struct rw_semaphore *sem);

/* The slow paths: queue and sleep until granted; false when granted at once, with no sleep. */
bool rwsem_down_read_slowpath(struct rw_semaphore *sem);
bool rwsem_down_write_slowpath(struct rw_semaphore *sem);
/*
 * Grant the semaphore from the head of the queue as far as what holds it
 * allows: a writer when nothing does, readers when no writer does (after a
 * downgrade, the readers at the head join the one the writer became).
 */
void rwsem_wake(struct rw_semaphore *sem);
/* How many wait in the queue now. */
unsigned int rwsem_nr_waiters(struct rw_semaphore *sem);

static inline bool down_read_trylock(struct rw_semaphore *sem)
{
	unsigned long c = __atomic_load_n(&sem->count, __ATOMIC_RELAXED);

	while (!(c & (RWSEM_WRITER_LOCKED | RWSEM_FLAG_WAITERS)))
		if (__atomic_compare_exchange_n(&sem->count, &c, c + RWSEM_READER_BIAS, true,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return true;
	return false;
}

static inline bool down_write_trylock(struct rw_semaphore *sem)
{
	unsigned long c = 0;

	return __atomic_compare_exchange_n(&sem->count, &c, RWSEM_WRITER_LOCKED, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* down_read(), saying whether it slept (a writer was inside or queued). */
static inline bool down_read_waited(struct rw_semaphore *sem)
{
	if (__builtin_expect(down_read_trylock(sem), 1))
		return false;
	return rwsem_down_read_slowpath(sem);
}

static inline bool down_write_waited(struct rw_semaphore *sem)
{
	if (__builtin_expect(down_write_trylock(sem), 1))
		return false;
	return rwsem_down_write_slowpath(sem);
}

static inline void down_read(struct rw_semaphore *sem)
{
	down_read_waited(sem);
}

static inline void down_write(struct rw_semaphore *sem)
{
	down_write_waited(sem);
}

static inline void up_read(struct rw_semaphore *sem)
{
	unsigned long c = __atomic_sub_fetch(&sem->count, RWSEM_READER_BIAS, __ATOMIC_RELEASE);

	/* The last reader out, with a queue: hand it on. */
	if (__builtin_expect((c & (RWSEM_LOCK_MASK | RWSEM_FLAG_WAITERS)) == RWSEM_FLAG_WAITERS, 0))
		rwsem_wake(sem);
}

static inline void up_write(struct rw_semaphore *sem)
{
	unsigned long c = __atomic_and_fetch(&sem->count, ~RWSEM_WRITER_LOCKED, __ATOMIC_RELEASE);

	if (__builtin_expect(c & RWSEM_FLAG_WAITERS, 0))
		rwsem_wake(sem);
}

/* The writer keeps the semaphore as a reader, with no window for another writer. */
static inline void downgrade_write(struct rw_semaphore *sem)
{
	unsigned long c = __atomic_add_fetch(&sem->count, RWSEM_READER_BIAS - RWSEM_WRITER_LOCKED,
					     __ATOMIC_RELEASE);

	if (__builtin_expect(c & RWSEM_FLAG_WAITERS, 0))
		rwsem_wake(sem);
}

/* For assertions: held for writing, held at all. */
static inline bool rwsem_is_write_locked(struct rw_semaphore *sem)
{
	return __atomic_load_n(&sem->count, __ATOMIC_RELAXED) & RWSEM_WRITER_LOCKED;
}

static inline bool rwsem_is_locked(struct rw_semaphore *sem)
{
	return __atomic_load_n(&sem->count, __ATOMIC_RELAXED) & RWSEM_LOCK_MASK;
}

/* Does anyone wait in the queue? */
static inline bool rwsem_has_waiters(struct rw_semaphore *sem)
{
	return __atomic_load_n(&sem->count, __ATOMIC_RELAXED) & RWSEM_FLAG_WAITERS;
}

#endif /* MMP_RWSEM_H */
