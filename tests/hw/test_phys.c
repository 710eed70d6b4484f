/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit test of simulated physical memory (lib/page_alloc.c): creation, the buddy
 * allocator, its BUG checks, destroy; and of the counter shard pool
 * (lib/vmstat.c) and names (lib/counters.c).
 */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mm.h"
#include "tap.h"

#define MiB		(1ull << 20)
#define PHYS_BYTES	(16 * MiB)
#define NR_PAGES	4096u
#define MAX_BLOCKS	NR_PAGES

struct block {
	uint32_t pfn;
	uint8_t order;
};

static uint64_t rng_state;

/* Test plumbing, not a check: bail out without adding a TAP point. */
static void must(bool cond, const char *what)
{
	if (!cond) {
		printf("Bail out! %s\n", what);
		exit(1);
	}
}

static unsigned int rng(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return rng_state >> 33;
}

static struct mmp_phys *new_phys(void)
{
	struct mmp_phys *phys = NULL;

	must(mmp_phys_create(PHYS_BYTES, &phys) == 0 && phys, "create 16 MiB phys");
	return phys;
}

static void get_stat(struct mmp_phys *phys, struct mmp_phys_stat *st)
{
	memset(st, 0xa5, sizeof(*st));
	must(mmp_phys_stat(phys, st) == 0, "phys_stat");
}

static bool stat_eq(const struct mmp_phys_stat *a, const struct mmp_phys_stat *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* Whether the descriptors of a fresh block are all zero but head->order. */
static bool block_clean(struct mmp_phys *phys, uint32_t pfn, unsigned int order)
{
	struct mmp_page want = { .order = order }, zero = { 0 };

	if (memcmp(pfn_to_page(phys, pfn), &want, sizeof(want)))
		return false;
	for (uint32_t i = 1; i < 1u << order; i++)
		if (memcmp(pfn_to_page(phys, pfn + i), &zero, sizeof(zero)))
			return false;
	return true;
}

/* Leave descriptors as an owner would: the allocator must clean up on free. */
static void dirty_block(struct mmp_phys *phys, uint32_t pfn, unsigned int order)
{
	struct mmp_page *head = pfn_to_page(phys, pfn);

	head->flags = PG_head | PG_anon | PG_dirty;
	head->refcount = 1;
	head->mapcount = 3;
	head->folio.large_mapcount = 7;
	for (uint32_t i = 1; i < 1u << order; i++) {
		pfn_to_page(phys, pfn + i)->flags = PG_tail | PG_anon_exclusive;
		pfn_to_page(phys, pfn + i)->tail.head = pfn;
	}
}

static void test_bad_sizes(void)
{
	struct mmp_phys *phys = NULL;

	tap_eq(mmp_phys_create(0, &phys), -EINVAL, "create: 0 bytes");
	tap_eq(mmp_phys_create(MiB, &phys), -EINVAL, "create: 1 MiB (below one block)");
	tap_eq(mmp_phys_create(4 * MiB + 4096, &phys), -EINVAL, "create: not a multiple of 4 MiB");
	tap_eq(mmp_phys_create(6 * MiB, &phys), -EINVAL, "create: 6 MiB");
	tap_eq(mmp_phys_create(4 * MiB, NULL), -EINVAL, "create: NULL out");
	tap_eq(mmp_phys_create(((1ull << 32) + 1024) << 12, &phys), -EINVAL,
	       "create: more than 2^32 frames");
	tap_eq(mmp_phys_create((1ull << 32) << 12, &phys), -EINVAL,
	       "create: 2^32 frames (the last pfn would be NO_PFN)");
	tap_ok(phys == NULL, "failed creates leave *out alone");
	tap_eq(mmp_phys_destroy(NULL), -EINVAL, "destroy(NULL)");
	tap_eq(mmp_phys_stat(NULL, NULL), -EINVAL, "stat(NULL)");
}

static void test_fresh(struct mmp_phys_stat *initial)
{
	struct mmp_phys *phys = new_phys();
	struct mmp_page *zp;
	const uint8_t *data;
	bool zeroed = true;
	bool ok = true;
	struct mmp_phys_stat st;

	tap_eq(mmp_phys_stat(phys, NULL), -EINVAL, "stat(phys, NULL)");
	get_stat(phys, &st);
	tap_eq(st.total_pages, NR_PAGES, "16 MiB is 4096 pages");
	tap_eq(st.free_pages, NR_PAGES - 1, "all free but the zero page");
	for (unsigned int o = 0; o < MMP_MAX_ORDER; o++)
		ok &= st.free_blocks[o] == 1;
	tap_ok(ok, "splitting for the zero page left one block of each order 0..9");
	tap_eq(st.free_blocks[MMP_MAX_ORDER], 3, "and three order-10 blocks");

	tap_ok(phys_pfn_valid(phys, phys->zero_pfn), "zero pfn valid");
	zp = pfn_to_page(phys, phys->zero_pfn);
	tap_eq(zp->flags, PG_reserved, "zero page is PG_reserved");
	tap_eq(zp->refcount, 1, "zero page refcount 1");
	tap_ok(!phys_pfn_is_free(phys, phys->zero_pfn), "zero page is not free");
	data = pfn_to_virt(phys, phys->zero_pfn);
	for (unsigned int i = 0; i < PAGE_SIZE; i++)
		zeroed &= data[i] == 0;
	tap_ok(zeroed, "zero page reads zero");
	tap_eq(phys->huge_zero_pfn, NO_PFN, "no huge zero folio yet");
	tap_ok(phys->spaces == NULL && phys->next_space_id == 1, "no spaces, ids from 1");
	tap_ok(phys_pfn_valid(phys, NR_PAGES - 1) && !phys_pfn_valid(phys, NR_PAGES),
	       "pfn_valid bounds");
	tap_ok(!phys_pfn_is_free(phys, NR_PAGES), "pfn_is_free(out of range) is false");
	tap_eq(phys_alloc_pages(phys, MMP_MAX_ORDER + 1), NO_PFN, "order 11 refused");
	*initial = st;
	tap_eq(mmp_phys_destroy(phys), 0, "destroy fresh phys");
}

static void test_all_orders(const struct mmp_phys_stat *initial)
{
	struct mmp_phys *phys = new_phys();
	uint32_t pfn[MMP_MAX_ORDER + 1];
	bool aligned = true, clean = true, disjoint = true, used = true;
	struct mmp_phys_stat st;

	for (unsigned int o = 0; o <= MMP_MAX_ORDER; o++) {
		pfn[o] = phys_alloc_pages(phys, o);
		must(pfn[o] != NO_PFN, "allocate one block of each order");
		aligned &= (pfn[o] & ((1u << o) - 1)) == 0 && pfn[o] + (1u << o) <= NR_PAGES;
		clean &= block_clean(phys, pfn[o], o);
	}
	for (unsigned int a = 0; a <= MMP_MAX_ORDER; a++) {
		uint32_t zero = phys->zero_pfn;

		disjoint &= zero < pfn[a] || zero >= pfn[a] + (1u << a);
		for (unsigned int b = a + 1; b <= MMP_MAX_ORDER; b++)
			disjoint &= pfn[a] + (1u << a) <= pfn[b] || pfn[b] + (1u << b) <= pfn[a];
		for (uint32_t i = 0; i < 1u << a; i++)
			used &= !phys_pfn_is_free(phys, pfn[a] + i);
	}
	tap_ok(aligned, "every block is aligned to its order and in range");
	tap_ok(clean, "every block comes out with clean descriptors");
	tap_ok(disjoint, "blocks do not overlap each other or the zero page");
	tap_ok(used, "no allocated frame reads as free");
	get_stat(phys, &st);
	tap_eq(st.free_pages, NR_PAGES - 1 - 2047, "free_pages dropped by 2047");

	for (unsigned int o = 0; o <= MMP_MAX_ORDER; o++)
		phys_free_pages(phys, pfn[o], o);
	get_stat(phys, &st);
	tap_ok(stat_eq(&st, initial), "freeing all orders merges back to the initial state");
	tap_eq(mmp_phys_destroy(phys), 0, "destroy");
}

/* Allocate random orders until nothing is left; check the blocks as they come. */
static unsigned int exhaust(struct mmp_phys *phys, struct block *blocks, uint8_t *owner,
			    bool *ok_clean, bool *ok_disjoint)
{
	unsigned int nr = 0;

	memset(owner, 0, NR_PAGES);
	owner[phys->zero_pfn] = 1;
	for (;;) {
		/* Skewed towards small orders, so there are many blocks to free. */
		int order = rng() % (rng() % (MMP_MAX_ORDER + 1) + 1);
		uint32_t pfn = NO_PFN;

		for (; order >= 0 && pfn == NO_PFN; order--)
			pfn = phys_alloc_pages(phys, order);
		if (pfn == NO_PFN)
			break;
		order++;
		*ok_clean &= block_clean(phys, pfn, order) && !(pfn & ((1u << order) - 1));
		for (uint32_t i = 0; i < 1u << order; i++) {
			*ok_disjoint &= pfn + i < NR_PAGES && !owner[pfn + i];
			if (pfn + i < NR_PAGES)
				owner[pfn + i] = 1;
		}
		blocks[nr].pfn = pfn;
		blocks[nr].order = order;
		nr++;
	}
	return nr;
}

static void test_exhaust(const struct mmp_phys_stat *initial)
{
	static struct block blocks[MAX_BLOCKS];
	static uint8_t owner[NR_PAGES];
	struct mmp_phys *phys = new_phys();
	bool clean = true, disjoint = true, all = true, data_ok = true, free_ok = true;
	struct mmp_phys_stat before, after;
	unsigned int nr, frames = 0;

	rng_state = 1;
	nr = exhaust(phys, blocks, owner, &clean, &disjoint);
	for (unsigned int i = 0; i < nr; i++)
		frames += 1u << blocks[i].order;
	for (unsigned int p = 0; p < NR_PAGES; p++)
		all &= owner[p] && !phys_pfn_is_free(phys, p);
	tap_ok(clean, "random allocations: aligned, clean descriptors");
	tap_ok(disjoint, "random allocations never overlap");
	tap_eq(frames, NR_PAGES - 1, "exhaustion hands out every frame but the zero page");
	tap_ok(all, "no frame is free when exhausted");

	get_stat(phys, &before);
	tap_eq(before.free_pages, 0, "free_pages is 0");
	tap_eq(phys_alloc_pages(phys, 0), NO_PFN, "order 0 fails when exhausted");
	tap_eq(phys_alloc_pages(phys, MMP_MAX_ORDER), NO_PFN, "order 10 fails when exhausted");
	get_stat(phys, &after);
	tap_ok(stat_eq(&before, &after), "failed allocations leave phys_stat alone");

	/* Each frame gets its own pattern; any aliasing shows up on read back. */
	for (unsigned int i = 0; i < nr; i++)
		for (uint32_t p = blocks[i].pfn; p < blocks[i].pfn + (1u << blocks[i].order); p++)
			memset(pfn_to_virt(phys, p), (int)(p * 7 + 1), PAGE_SIZE);
	for (unsigned int i = 0; i < nr; i++) {
		for (uint32_t p = blocks[i].pfn; p < blocks[i].pfn + (1u << blocks[i].order); p++) {
			const uint8_t *d = pfn_to_virt(phys, p);

			data_ok &= d[0] == (uint8_t)(p * 7 + 1) && d[PAGE_SIZE - 1] == d[0] &&
				   d[PAGE_SIZE / 2] == d[0];
		}
		dirty_block(phys, blocks[i].pfn, blocks[i].order);
	}
	tap_ok(data_ok, "frame data is writable and distinct per frame");
	tap_ok((uint8_t *)pfn_to_virt(phys, 1) - (uint8_t *)pfn_to_virt(phys, 0) == PAGE_SIZE,
	       "frames are PAGE_SIZE apart");

	/* Free every other block, then check pfn_is_free against the expectation. */
	for (unsigned int i = 0; i < nr; i += 2) {
		phys_free_pages(phys, blocks[i].pfn, blocks[i].order);
		memset(owner + blocks[i].pfn, 0, 1u << blocks[i].order);
	}
	for (unsigned int p = 0; p < NR_PAGES; p++)
		free_ok &= phys_pfn_is_free(phys, p) == !owner[p];
	tap_ok(free_ok, "pfn_is_free matches after freeing half the blocks");
	for (unsigned int i = 1; i < nr; i += 2)
		phys_free_pages(phys, blocks[i].pfn, blocks[i].order);
	get_stat(phys, &after);
	tap_ok(stat_eq(&after, initial), "freeing everything merges back to the initial blocks");

	/* The second round reuses descriptors dirty_block() scribbled on. */
	clean = disjoint = true;
	rng_state = 2;
	nr = exhaust(phys, blocks, owner, &clean, &disjoint);
	tap_ok(clean && disjoint, "reallocation after dirty frees comes out clean");
	for (unsigned int i = 0; i < nr; i++)
		phys_free_pages(phys, blocks[i].pfn, blocks[i].order);
	get_stat(phys, &after);
	tap_ok(stat_eq(&after, initial), "second round frees back to the initial blocks");
	tap_eq(mmp_phys_destroy(phys), 0, "destroy");
}

static void test_bulk(const struct mmp_phys_stat *initial)
{
	static struct block blocks_a[MAX_BLOCKS], blocks_b[MAX_BLOCKS];
	static uint8_t owner[NR_PAGES];
	static uint32_t pfns[MAX_BLOCKS];
	static uint8_t orders[MAX_BLOCKS];
	struct mmp_phys *a = new_phys(), *b = new_phys();
	struct mmp_phys_stat sa, sb;
	unsigned int nr_a, nr_b, nr = 0;
	bool ok = true, same = true;

	/* The allocator is deterministic: the same requests give the same blocks. */
	rng_state = 3;
	nr_a = exhaust(a, blocks_a, owner, &ok, &ok);
	rng_state = 3;
	nr_b = exhaust(b, blocks_b, owner, &ok, &ok);
	tap_require(ok && nr_a == nr_b && !memcmp(blocks_a, blocks_b, nr_a * sizeof(blocks_a[0])),
		    "two physes allocate identically");

	/* Free a pseudo-random subset: one by one on a, in one bulk call on b. */
	for (unsigned int i = 0; i < nr_a; i++) {
		if (rng() % 3 == 0)
			continue;
		phys_free_pages(a, blocks_a[i].pfn, blocks_a[i].order);
		pfns[nr] = blocks_b[i].pfn;
		orders[nr] = blocks_b[i].order;
		nr++;
		blocks_a[i].order = 0xff;	/* freed */
	}
	phys_free_pages_bulk(b, pfns, orders, nr);
	phys_free_pages_bulk(b, pfns, orders, 0);
	get_stat(a, &sa);
	get_stat(b, &sb);
	tap_ok(stat_eq(&sa, &sb), "bulk free leaves the same stat as single frees (%u blocks)", nr);
	for (unsigned int p = 0; p < NR_PAGES; p++)
		same &= phys_pfn_is_free(a, p) == phys_pfn_is_free(b, p);
	for (unsigned int o = 0; o <= MMP_MAX_ORDER; o++)
		same &= a->free_list[o] == b->free_list[o];
	tap_ok(same, "and the same free frames and list heads");

	nr = 0;
	for (unsigned int i = 0; i < nr_a; i++) {
		if (blocks_a[i].order == 0xff)
			continue;
		pfns[nr] = blocks_a[i].pfn;
		orders[nr] = blocks_a[i].order;
		nr++;
	}
	phys_free_pages_bulk(a, pfns, orders, nr);
	phys_free_pages_bulk(b, pfns, orders, nr);
	get_stat(a, &sa);
	get_stat(b, &sb);
	tap_ok(stat_eq(&sa, initial) && stat_eq(&sb, initial), "bulk free of the rest merges back");
	tap_eq(mmp_phys_destroy(a), 0, "destroy a");
	tap_eq(mmp_phys_destroy(b), 0, "destroy b");
}

/* Run @fn in a child; it must abort with the BUG message on stderr. */
static void expect_bug(void (*fn)(struct mmp_phys *), struct mmp_phys *phys, const char *what)
{
	char buf[512] = "";
	int fds[2], status = 0;
	ssize_t n, len = 0;
	pid_t pid;

	must(pipe(fds) == 0, "pipe");
	fflush(stdout);
	pid = fork();
	must(pid >= 0, "fork");
	if (pid == 0) {
		tap_in_child();
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		fn(phys);
		_exit(0);
	}
	close(fds[1]);
	while (len < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
	       strstr(buf, "libmmprim: BUG at ") && strstr(buf, "page_alloc.c:"), "BUG: %s", what);
}

static void bug_double_free(struct mmp_phys *phys)
{
	uint32_t pfn = phys_alloc_pages(phys, 0);

	phys_free_pages(phys, pfn, 0);
	phys_free_pages(phys, pfn, 0);
}

static void bug_inside_free_block(struct mmp_phys *phys)
{
	/* pfn 1024 heads a free order-10 block on a fresh phys: 1025 is inside it. */
	phys_free_pages(phys, 1025, 0);
}

static void bug_free_part_free(struct mmp_phys *phys)
{
	uint32_t pfn = phys_alloc_pages(phys, 2);

	phys_free_pages(phys, pfn + 2, 1);
	phys_free_pages(phys, pfn, 2);
}

static void bug_misaligned(struct mmp_phys *phys)
{
	phys_free_pages(phys, phys_alloc_pages(phys, 3) + 1, 3);
}

static void bug_out_of_range(struct mmp_phys *phys)
{
	phys_free_pages(phys, NR_PAGES, 0);
}

static void bug_bulk(struct mmp_phys *phys)
{
	uint32_t pfns[2] = { phys_alloc_pages(phys, 0) };
	uint8_t orders[2] = { 0, 0 };

	pfns[1] = pfns[0];
	phys_free_pages_bulk(phys, pfns, orders, 2);
}

static void test_bugs(void)
{
	struct mmp_phys *phys = new_phys();

	expect_bug(bug_double_free, phys, "double free");
	expect_bug(bug_inside_free_block, phys, "free of a frame inside a free block");
	expect_bug(bug_free_part_free, phys, "free of a block whose upper half is free");
	expect_bug(bug_misaligned, phys, "misaligned free");
	expect_bug(bug_out_of_range, phys, "free beyond the last frame");
	expect_bug(bug_bulk, phys, "double free within one bulk call");
	tap_eq(mmp_phys_destroy(phys), 0, "destroy");
}

static void test_destroy_busy(void)
{
	struct mmp_phys *phys = new_phys();

	phys->spaces = (struct mmp_space *)(uintptr_t)0x1000;
	tap_eq(mmp_phys_destroy(phys), -EBUSY, "destroy with a space attached: -EBUSY");
	phys->spaces = NULL;
	tap_eq(mmp_phys_destroy(phys), 0, "destroy once no space is left");
}

/* A thread that brings its own list of @phys online: one frame allocated and freed. */
struct pcp_thread {
	pthread_t tid;
	struct mmp_phys *phys;
	pthread_barrier_t *barrier;	/* alive together: distinct shards */
	int shard;
};

static void *pcp_thread_fn(void *arg)
{
	struct pcp_thread *t = arg;

	t->shard = counter_shard();
	phys_free_pages(t->phys, phys_alloc_pages(t->phys, 0), 0);
	pthread_barrier_wait(t->barrier);
	return NULL;
}

/*
 * The per-CPU lists are sized and tuned as the kernel's: high between the
 * low watermark and an eighth of memory split over the lists online,
 * refills that double while no free comes between, drains as long as the run
 * of frees; a list coming online splits the bounds anew (zone_pcp_update).
 */
static void test_pcp(void)
{
	static const unsigned int refills[] = { 63, 126, 252, 504, 1008, 1985, 1985 };
	static uint32_t pfns[6000];
	struct pcp_thread t[3];
	struct mmp_phys_stat initial, after;
	struct mmp_phys *phys = NULL;
	struct mmp_pcp *pcp;
	pthread_barrier_t barrier;
	unsigned int nr = 0, most = 0, least = ~0u;
	bool sizes = true, ascending = true, distinct = true;
	uint32_t last;

	must(mmp_phys_create(64 * MiB, &phys) == 0, "create 64 MiB phys");
	get_stat(phys, &initial);
	pcp = &phys->pcp[counter_shard()];
	/* 64 MiB: min_free_kbytes 1024, low watermark 320 pages; 16384 pages / 8. */
	tap_eq(phys->pcp_nr_online, 0, "no list is online before its first use");
	tap_eq(phys->pcp_high_min, 320, "64 MiB, one list: high_min is the low watermark");
	tap_eq(phys->pcp_high_max, 2048, "one list: high_max is an eighth of memory");
	tap_eq(phys->pcp_ring_mask, 4095, "the ring holds one list's high_max frames");

	for (unsigned int r = 0; r < sizeof(refills) / sizeof(refills[0]); r++) {
		unsigned int got;

		pfns[nr++] = phys_alloc_pages(phys, 0);
		got = pcp->count + 1;
		sizes &= got == refills[r];
		while (pcp->count)
			pfns[nr++] = phys_alloc_pages(phys, 0);
		if (!sizes)
			printf("# refill %u took %u frames, want %u\n", r, got, refills[r]);
	}
	tap_eq(phys->pcp_nr_online, 1, "the first allocation brings this thread's list online");
	tap_ok(sizes, "refills in a row double from a batch up to high_max - batch");
	for (unsigned int i = 0; i < nr; i++)
		ascending &= pfns[i] == i + 1;
	/* Fresh buddy lists: page-at-a-time allocation hands out 1, 2, 3, ... (0 is the zero page). */
	tap_ok(ascending, "frames go out in the buddy allocator's order, whole blocks or split");
	tap_eq(pcp->high, 2048, "and raise high to high_max");
	tap_eq(pcp->alloc_factor, 5, "alloc_factor stops where a batch no longer fits");
	phys_free_pages(phys, pfns[--nr], 0);
	tap_eq(pcp->alloc_factor, 2, "a free halves alloc_factor");

	/* A long run of frees: the list stays under high_max and keeps a batch when it drains. */
	for (unsigned int i = 0; i < nr; i++) {
		unsigned int before = pcp->count;

		phys_free_pages(phys, pfns[i], 0);
		most = MAX(most, pcp->count);
		if (pcp->count < before)
			least = MIN(least, pcp->count);
	}
	tap_ok(most <= phys->pcp_high_max && most > 4 * PCP_BATCH,
	       "a run of frees grows the list past high_min, never past high_max (%u)", most);
	tap_ok(least >= PCP_BATCH && least != ~0u, "a drain leaves at least a batch (%u)", least);
	tap_eq(pcp->free_count, PCP_BATCH << PCP_BATCH_SCALE_MAX, "free_count saturates");
	last = phys_alloc_pages(phys, 0);
	tap_eq(pcp->free_count, (PCP_BATCH << PCP_BATCH_SCALE_MAX) / 2, "an allocation halves it");
	phys_free_pages(phys, last, 0);

	/* Three more threads, alive together: four lists online split the bounds four ways. */
	pthread_barrier_init(&barrier, NULL, 3);
	for (int i = 0; i < 3; i++) {
		t[i] = (struct pcp_thread){ .phys = phys, .barrier = &barrier };
		must(pthread_create(&t[i].tid, NULL, pcp_thread_fn, &t[i]) == 0, "pthread_create");
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i].tid, NULL);
	pthread_barrier_destroy(&barrier);
	for (int i = 0; i < 3; i++)
		distinct &= t[i].shard != counter_shard() && t[i].shard < MMP_COUNTER_SHARDS - 1 &&
			    t[i].shard != t[(i + 1) % 3].shard;
	must(distinct, "three threads alive together have shards of their own");
	tap_eq(phys->pcp_nr_online, 4, "each thread's first use brings its list online");
	tap_eq(phys->pcp_high_max, 512, "four lists: high_max is a quarter of an eighth of memory");
	tap_eq(phys->pcp_high_min, 4 * PCP_BATCH, "and high_min at least four batches");
	tap_eq(pcp->high, 512, "a list online already has its high clamped to the new high_max");

	get_stat(phys, &after);
	tap_ok(stat_eq(&after, &initial), "draining the lists merges back to the initial blocks");
	tap_eq(mmp_phys_destroy(phys), 0, "destroy");
}

/*
 * The host kernel is the oracle: for each zone of /proc/zoneinfo with
 * per-CPU lists (6.7+ prints high_min and high_max), pcp_highsize() given the
 * zone's managed pages, low watermark, CPUs and batch must give the host's
 * bounds. A zone whose watermark is boosted just now is left out: the bounds
 * were set from the unboosted one.
 */
struct zone_info {
	char name[48];
	uint64_t managed, low, boost;
	unsigned int cpus, batch;
	long high_min, high_max;	/* of the first CPU; -1: not printed */
};

static void check_zone(const struct zone_info *z, int *checked)
{
	uint32_t high_min, high_max;

	if (!z->cpus || !z->managed || z->high_max < 0 || z->boost)
		return;
	pcp_highsize(z->managed, z->low, z->cpus, z->batch, &high_min, &high_max);
	tap_ok(high_min == z->high_min && high_max == z->high_max,
	       "host zone %s (%llu pages, low %llu, %u CPUs, batch %u): high_min %u = %ld, "
	       "high_max %u = %ld", z->name, (unsigned long long)z->managed,
	       (unsigned long long)z->low, z->cpus, z->batch, high_min, z->high_min, high_max,
	       z->high_max);
	(*checked)++;
}

static void test_pcp_host(void)
{
	FILE *frac = fopen("/proc/sys/vm/percpu_pagelist_high_fraction", "r");
	FILE *f = fopen("/proc/zoneinfo", "r");
	struct zone_info z = { .high_min = -1, .high_max = -1 };
	char line[256];
	int checked = 0, fraction = 0;
	bool in_zone = false;

	/* A fraction set by sysctl replaces both bounds' defaults: not what the library models. */
	if (frac) {
		if (fscanf(frac, "%d", &fraction) != 1)
			fraction = 0;
		fclose(frac);
	}
	if (fraction) {
		if (f)
			fclose(f);
		tap_ok(1, "host per-CPU list bounds # SKIP percpu_pagelist_high_fraction is %d",
		       fraction);
		return;
	}
	if (!f) {
		tap_ok(1, "host per-CPU list bounds # SKIP no /proc/zoneinfo");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[32];
		unsigned long long v;
		long lv;
		int node;

		if (sscanf(line, "Node %d, zone %31s", &node, name) == 2) {
			if (in_zone)
				check_zone(&z, &checked);
			z = (struct zone_info){ .high_min = -1, .high_max = -1 };
			snprintf(z.name, sizeof(z.name), "%d/%s", node, name);
			in_zone = true;
		} else if (sscanf(line, " boost %llu", &v) == 1) {
			z.boost = v;
		} else if (sscanf(line, " low %llu", &v) == 1) {
			z.low = v;
		} else if (sscanf(line, " managed %llu", &v) == 1) {
			z.managed = v;
		} else if (sscanf(line, " cpu: %llu", &v) == 1) {
			z.cpus++;
		} else if (z.cpus == 1 && sscanf(line, " batch: %llu", &v) == 1) {
			z.batch = (unsigned int)v;
		} else if (z.cpus == 1 && sscanf(line, " high_min: %ld", &lv) == 1) {
			z.high_min = lv;
		} else if (z.cpus == 1 && sscanf(line, " high_max: %ld", &lv) == 1) {
			z.high_max = lv;
		}
	}
	if (in_zone)
		check_zone(&z, &checked);
	fclose(f);
	if (!checked)
		tap_ok(1, "host per-CPU list bounds # SKIP the host kernel prints no high_min "
		       "(before 6.7)");
}

/* ---- counters -------------------------------------------------------------------------- */

struct shard_thread {
	pthread_t tid;
	pthread_barrier_t *barrier;	/* keep threads alive together */
	sem_t release;			/* holders: exit when posted */
	bool hold;
	int slot, cached;
};

static void *shard_thread_fn(void *arg)
{
	struct shard_thread *t = arg;

	t->slot = mmp_thread_shard_slow();
	t->cached = mmp_thread_shard;
	if (t->barrier)
		pthread_barrier_wait(t->barrier);
	if (t->hold)
		sem_wait(&t->release);
	return NULL;
}

static void start(struct shard_thread *t, pthread_barrier_t *barrier, bool hold)
{
	t->barrier = barrier;
	t->hold = hold;
	sem_init(&t->release, 0, 0);
	must(pthread_create(&t->tid, NULL, shard_thread_fn, t) == 0, "pthread_create");
}

static void finish(struct shard_thread *t)
{
	if (t->hold)
		sem_post(&t->release);
	pthread_join(t->tid, NULL);
	sem_destroy(&t->release);
}

static void test_shards(void)
{
	static struct shard_thread t[MMP_COUNTER_SHARDS];
	const int shared = MMP_COUNTER_SHARDS - 1;
	pthread_barrier_t barrier;
	bool ok = true;
	int s;

	pthread_barrier_init(&barrier, NULL, 2);
	start(&t[0], &barrier, false);
	start(&t[1], &barrier, false);
	finish(&t[0]);
	finish(&t[1]);
	pthread_barrier_destroy(&barrier);
	tap_ok(t[0].slot >= 0 && t[0].slot < shared && t[1].slot >= 0 && t[1].slot < shared,
	       "two threads get private shards (%d, %d)", t[0].slot, t[1].slot);
	tap_ok(t[0].slot != t[1].slot, "live threads get distinct shards");
	tap_ok(t[0].cached == t[0].slot && t[1].cached == t[1].slot, "the shard is cached in TLS");

	start(&t[2], NULL, false);
	finish(&t[2]);
	tap_ok(t[2].slot == t[0].slot || t[2].slot == t[1].slot,
	       "a shard is reused after its thread exits (%d)", t[2].slot);

	/* Fill the pool: the main thread then gets the shared shard, uncached. */
	pthread_barrier_init(&barrier, NULL, shared + 1);
	for (int i = 0; i < shared; i++)
		start(&t[i], &barrier, true);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < shared; i++)
		for (int j = i + 1; j < shared; j++)
			ok &= t[i].slot != t[j].slot && t[i].slot < shared && t[i].slot >= 0;
	tap_ok(ok, "%d live threads hold %d distinct private shards", shared, shared);
	tap_eq(mmp_thread_shard_slow(), shared, "pool empty: the shared shard");
	tap_eq(mmp_thread_shard, -1, "the shared shard is not cached");
	tap_eq(counter_shard(), shared, "counter_shard() agrees");

	finish(&t[5]);
	s = mmp_thread_shard_slow();
	tap_eq(s, t[5].slot, "once a holder exits, the next call gets its shard");
	tap_eq(mmp_thread_shard, s, "and caches it");
	tap_eq(counter_shard(), s, "counter_shard() uses the cached shard");
	for (int i = 0; i < shared; i++)
		if (i != 5)
			finish(&t[i]);
	pthread_barrier_destroy(&barrier);
}

static void test_names(void)
{
	const char *tlb_hit = mmp_counter_name(MMP_C_TLB_HIT);
	bool ok = true;

	tap_ok(tlb_hit && !strcmp(tlb_hit, "tlb_hit"), "counter name of MMP_C_TLB_HIT is tlb_hit");
	tap_ok(!strcmp(mmp_counter_name(0), "fault_anon"), "counter 0 is fault_anon");
	for (int c = 0; c < MMP_NR_COUNTERS; c++)
		ok &= mmp_counter_name(c) && mmp_counter_doc(c) && *mmp_counter_doc(c);
	tap_ok(ok, "every counter has a name and a doc");
	tap_ok(!mmp_counter_name(-1) && !mmp_counter_name(MMP_NR_COUNTERS),
	       "names out of range: NULL");
	tap_ok(!mmp_counter_doc(-1) && !mmp_counter_doc(MMP_NR_COUNTERS),
	       "docs out of range: NULL");

	tap_ok(!strcmp(mmp_strerror(-EINVAL), "EINVAL"), "strerror(-EINVAL)");
	tap_ok(!strcmp(mmp_strerror(-EUCLEAN), "EUCLEAN"), "strerror(-EUCLEAN)");
	tap_ok(!strcmp(mmp_strerror(-ENOTSUP), "ENOTSUP"), "strerror(-ENOTSUP)");
	tap_ok(!strcmp(mmp_strerror(-12345), "unknown error"), "strerror(unknown)");
}

int main(void)
{
	struct mmp_phys_stat initial;

	/* First: the page allocator's per-CPU lists give this thread a shard too. */
	test_shards();
	test_bad_sizes();
	test_fresh(&initial);
	test_all_orders(&initial);
	test_exhaust(&initial);
	test_bulk(&initial);
	test_bugs();
	test_destroy_busy();
	test_pcp();
	test_pcp_host();
	test_names();
	return tap_done();
}
