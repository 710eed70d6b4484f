/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sequence counters: readers retry what a writer changed meanwhile (linux/seqlock.h). */
#ifndef MMP_SEQLOCK_H
#define MMP_SEQLOCK_H

#include "compiler.h"

/* seqcount_t: odd while a writer is inside; writers are serialized by a lock of theirs. */
typedef struct {
	unsigned int sequence;
} seqcount_t;

static __always_inline void raw_write_seqcount_begin(seqcount_t *s)
{
	__atomic_store_n(&s->sequence, s->sequence + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);	/* smp_wmb: odd before the section's stores */
}

static __always_inline void raw_write_seqcount_end(seqcount_t *s)
{
	/* smp_wmb, then even: the section's stores before the count says it is over. */
	__atomic_store_n(&s->sequence, s->sequence + 1, __ATOMIC_RELEASE);
}

/* Start a read section unless a writer is inside: false (and no section) when it is odd. */
static __always_inline bool raw_seqcount_try_begin(const seqcount_t *s, unsigned int *start)
{
	*start = __atomic_load_n(&s->sequence, __ATOMIC_ACQUIRE);
	return !(*start & 1);
}

/* Did a writer enter since @start? Then what was read may be stale. */
static __always_inline bool read_seqcount_retry(const seqcount_t *s, unsigned int start)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* smp_rmb: the section's loads first */
	return __atomic_load_n(&s->sequence, __ATOMIC_RELAXED) != start;
}

#endif /* MMP_SEQLOCK_H */
