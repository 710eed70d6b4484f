/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The space's event counters, sharded per host thread (lib/vmstat.h).
 *
 * Each host thread that counts gets a private shard index the first time it
 * counts and gives it back when it exits, so a long-running program that keeps
 * creating threads does not run out of private shards. Threads beyond the pool
 * share the last shard, which count_add() updates atomically.
 */
#include <limits.h>

#include "vmstat.h"

#define NR_PRIVATE_SHARDS	(MMP_COUNTER_SHARDS - 1)
#define SHARED_SHARD		(MMP_COUNTER_SHARDS - 1)
#define ALL_PRIVATE		((1ull << NR_PRIVATE_SHARDS) - 1)

_Static_assert(NR_PRIVATE_SHARDS >= 1 && NR_PRIVATE_SHARDS < 64, "the pool is one word");

__thread int mmp_thread_shard __attribute__((tls_model("initial-exec"))) = -1;
__thread uint32_t mmp_thread_counter_off __attribute__((tls_model("initial-exec"))) = UINT32_MAX;

/* Bit i set: private shard i belongs to a live thread. Lock-free: pool misses repeat. */
static uint64_t shard_pool;
/* One more than the highest private shard ever handed out: none above holds a count. */
uint32_t mmp_shards_used;
static pthread_key_t shard_key;
static pthread_once_t shard_once = PTHREAD_ONCE_INIT;
static bool shard_key_ok;

static void shard_release(int shard)
{
	__atomic_fetch_and(&shard_pool, ~(1ull << shard), __ATOMIC_RELEASE);
}

static void shard_thread_exit(void *arg)
{
	shard_release((int)((uintptr_t)arg - 1));
	/* Later destructors may still count: send them to the shared shard, never to a slot. */
	mmp_thread_shard = SHARED_SHARD;
	mmp_thread_counter_off = SHARED_SHARD * (uint32_t)sizeof(struct mmp_counter_shard);
}

static void shard_key_init(void)
{
	shard_key_ok = pthread_key_create(&shard_key, shard_thread_exit) == 0;
}

static int shard_grab(void)
{
	uint64_t used = __atomic_load_n(&shard_pool, __ATOMIC_RELAXED);

	for (;;) {
		int shard;

		if ((used & ALL_PRIVATE) == ALL_PRIVATE)
			return -1;
		shard = __builtin_ctzll(~used);
		if (__atomic_compare_exchange_n(&shard_pool, &used, used | (1ull << shard), false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			uint32_t was = __atomic_load_n(&mmp_shards_used, __ATOMIC_RELAXED);

			/* Raised before the thread can count in the shard. */
			while (was < (uint32_t)shard + 1 &&
			       !__atomic_compare_exchange_n(&mmp_shards_used, &was, shard + 1, true,
							    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
				;
			return shard;
		}
	}
}

int mmp_thread_shard_slow(void)
{
	int shard;

	pthread_once(&shard_once, shard_key_init);
	/* Without the key a slot could never come back: stay on the shared shard. */
	if (!shard_key_ok)
		return SHARED_SHARD;
	shard = shard_grab();
	if (shard < 0)
		return SHARED_SHARD;	/* not cached: a later call may find a free slot */
	if (pthread_setspecific(shard_key, (void *)(uintptr_t)(shard + 1))) {
		shard_release(shard);
		return SHARED_SHARD;
	}
	mmp_thread_shard = shard;
	mmp_thread_counter_off = shard * (uint32_t)sizeof(struct mmp_counter_shard);
	return shard;
}

/* count_add() for a thread without a private shard yet, or with none to be had. */
void count_add_slow(struct mmp_space *s, enum mmp_counter c, uint64_t n)
{
	int shard = counter_shard();

	if (shard < SHARED_SHARD)
		__atomic_store_n(&s->counters[shard].v[c],
				 __atomic_load_n(&s->counters[shard].v[c], __ATOMIC_RELAXED) + n,
				 __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&s->counters[SHARED_SHARD].v[c], n, __ATOMIC_RELAXED);
}
