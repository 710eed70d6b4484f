/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The space's event counters and RSS, sharded per host thread (lib/vmstat.c). */
#ifndef MMP_VMSTAT_H
#define MMP_VMSTAT_H

#include "mm_types.h"

extern __thread int mmp_thread_shard __attribute__((tls_model("initial-exec")));
/* The same shard as a byte offset into a space's counters, UINT32_MAX while unassigned. */
extern __thread uint32_t mmp_thread_counter_off __attribute__((tls_model("initial-exec")));
int mmp_thread_shard_slow(void);

static __always_inline int counter_shard(void)
{
	int s = mmp_thread_shard;

	return likely(s >= 0) ? s : mmp_thread_shard_slow();
}

void count_add_slow(struct mmp_space *s, enum mmp_counter c, uint64_t n);

static __always_inline void count_add(struct mmp_space *s, enum mmp_counter c, uint64_t n)
{
	/* Unassigned (UINT32_MAX) and the shared shard fail the test: the slow path. */
	uint32_t off = mmp_thread_counter_off;
	uint64_t *v;

	if (unlikely(off >= (MMP_COUNTER_SHARDS - 1) * sizeof(struct mmp_counter_shard))) {
		count_add_slow(s, c, n);
		return;
	}
	/*
	 * Only this thread writes its shard, so a plain add suffices, as the
	 * kernel's this_cpu_add() on a per-CPU counter: the compiler may keep a
	 * count in a register within a call and add to memory in one
	 * instruction. A reader on another thread (relaxed loads, summing the
	 * shards) may see a count late, never torn: the slot is an aligned
	 * 64-bit word.
	 */
	v = &((struct mmp_counter_shard *)((char *)s->counters + off))->v[c];
	*v += n;
}

/* This thread's count of @c so far: the difference around a call is what the call did. */
static __always_inline uint64_t count_this_thread(struct mmp_space *s, enum mmp_counter c)
{
	int shard = counter_shard();

	return __atomic_load_n(&s->counters[MIN(shard, MMP_COUNTER_SHARDS - 1)].v[c],
			       __ATOMIC_RELAXED);
}

static __always_inline void count_inc(struct mmp_space *s, enum mmp_counter c)
{
	count_add(s, c, 1);
}

/* @n more of two counters that move together (a ptep_get is a PTE read): one shard lookup. */
static __always_inline void count_add2(struct mmp_space *s, enum mmp_counter a,
					enum mmp_counter b, uint64_t n)
{
	uint32_t off = mmp_thread_counter_off;
	uint64_t *v;

	if (unlikely(off >= (MMP_COUNTER_SHARDS - 1) * sizeof(struct mmp_counter_shard))) {
		count_add_slow(s, a, n);
		count_add_slow(s, b, n);
		return;
	}
	v = ((struct mmp_counter_shard *)((char *)s->counters + off))->v;
	v[a] += n;
	v[b] += n;
}

/* add_mm_counter: this thread's shard, summed by get_mm_counter. */
static __always_inline void add_mm_counter(struct mmp_space *s, enum mm_counter_type t, int64_t nr)
{
	int shard = counter_shard();

	if (likely(shard < MMP_COUNTER_SHARDS - 1))
		__atomic_store_n(&s->rss[shard].count[t],
				 __atomic_load_n(&s->rss[shard].count[t], __ATOMIC_RELAXED) + nr,
				 __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&s->rss[MMP_COUNTER_SHARDS - 1].count[t], nr, __ATOMIC_RELAXED);
}

/* add_mm_counter(MM_ANONPAGES), the common case. */
static __always_inline void rss_add(struct mmp_space *s, int64_t nr)
{
	add_mm_counter(s, MM_ANONPAGES, nr);
}

/*
 * The shards a count may be in: the private ones ever handed out (no thread
 * has counted above them) and the shared one, the last.
 */
extern uint32_t mmp_shards_used;

static inline int64_t get_mm_counter(struct mmp_space *s, enum mm_counter_type t)
{
	int n = __atomic_load_n(&mmp_shards_used, __ATOMIC_ACQUIRE);
	int64_t sum = __atomic_load_n(&s->rss[MMP_COUNTER_SHARDS - 1].count[t], __ATOMIC_RELAXED);

	for (int i = 0; i < n; i++)
		sum += __atomic_load_n(&s->rss[i].count[t], __ATOMIC_RELAXED);
	return sum;
}

static inline int64_t get_mm_rss(struct mmp_space *s)
{
	return get_mm_counter(s, MM_ANONPAGES) + get_mm_counter(s, MM_FILEPAGES) +
	       get_mm_counter(s, MM_SHMEMPAGES);
}

/*
 * VmHWM: the peak RSS, brought up to date only before the RSS drops
 * (update_hiwater_rss at munmap, MADV_DONTNEED, reclaim), so the peak is
 * the larger of it and the RSS now (get_mm_hiwater_rss).
 */
static inline void update_hiwater_rss(struct mmp_space *s)
{
	int64_t rss = get_mm_rss(s);

	if (__atomic_load_n(&s->hiwater_rss, __ATOMIC_RELAXED) < rss)
		__atomic_store_n(&s->hiwater_rss, rss, __ATOMIC_RELAXED);
}

static inline int64_t get_mm_hiwater_rss(struct mmp_space *s)
{
	int64_t rss = get_mm_rss(s), hw = __atomic_load_n(&s->hiwater_rss, __ATOMIC_RELAXED);

	return hw > rss ? hw : rss;
}

/* clear_refs 5: the peak starts again from the RSS now. */
static inline void reset_mm_hiwater_rss(struct mmp_space *s)
{
	__atomic_store_n(&s->hiwater_rss, get_mm_rss(s), __ATOMIC_RELAXED);
}

#endif /* MMP_VMSTAT_H */
