/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "procmap-query" (Suren Baghdasaryan, "fs/proc/task_mmu: execute
 * PROCMAP_QUERY ioctl under per-vma locks", 6.18): a thread that asks
 * PROCMAP_QUERY about the VMAs of a space (a profiler symbolizing addresses,
 * as blazesym does) while another thread maps and unmaps elsewhere in it.
 * Before, each query takes the mmap read lock and queues behind the writer
 * (and, the lock being an rwsem, behind a writer that merely waits); from
 * 6.18 the query finds its VMA under RCU and reads it under that VMA's lock
 * alone. The series gives no figure (its cover letters, v3 and v4, say only
 * that it reduces mmap_lock contention and keeps queries from blocking
 * address-space updates), so there is no claim.
 *
 * Each variant is a space at its release (6.17, 6.18) with PQ_VMAS VMAs of
 * alternating protection (so they do not merge). A sample: one query of each
 * VMA, at an address inside it, timed call by call; its figure is the mean
 * call (a median hides the waits while fewer than half the calls wait). One
 * writer thread maps and unmaps 64 KiB far from those VMAs in the space being
 * sampled, all the time. The counters table is of one more sample per side
 * with the writer stopped, so that it repeats exactly; what the writer makes
 * vary (VMA-lock successes and fallbacks, the mmap lock's waits) is reported
 * apart, as "contended" figures of every timed sample.
 */
#include <errno.h>

#include <mmprim/introspect.h>

#include "common.h"
#include "seed_lock_writer.h"
#include "seeds.h"

#define PQ_CHUNK	(64 * BENCH_KIB)
#define PQ_VMAS		256
#define PQ_VMAS_QUICK	64

#define REL(a, b)	MMP_KERNEL_VERSION(a, b, 0)

/* The counters the writer makes vary: reported apart from the exact table. */
static const enum mmp_counter pq_contended[] = {
	MMP_C_PROCMAP_VMA_LOCK_SUCCESS, MMP_C_PROCMAP_VMA_LOCK_FALLBACK, MMP_C_MMAP_LOCK_PROCMAP,
	MMP_C_MMAP_LOCK_READ_WAIT, MMP_C_MMAP_LOCK_WRITE_WAIT,
};

/* One sample: a query of each VMA, timed call by call, each answer checked. */
static int pq_sample(struct seed_lock_side *side, unsigned int nvmas)
{
	int err = 0;

	for (unsigned int i = 0; i < nvmas && !err; i++) {
		uint64_t a = side->addr + (uint64_t)i * PQ_CHUNK;
		struct mmp_procmap_query q = { .size = sizeof(q), .query_addr = a + PQ_CHUNK / 2 };
		double t0 = bench_now();

		err = mmp_space_procmap_query(side->env.space, &q);
		side->calls[i] = bench_now() - t0;
		if (!err && (q.vma_start != a || q.vma_end != a + PQ_CHUNK))
			err = -EIO;
	}
	return err;
}

/* nvmas VMAs, then the writer's place. */
static int pq_setup(struct seed_lock_side *side, unsigned int nvmas)
{
	struct mmp_space *s = side->env.space;
	uint64_t far = 0;
	int err = mmp_mmap(s, 0, (uint64_t)nvmas * PQ_CHUNK, RW, 0, &side->addr);

	/* Every other chunk read-only: nvmas VMAs that do not merge. */
	for (unsigned int i = 1; i < nvmas && !err; i += 2)
		err = mmp_mprotect(s, side->addr + (uint64_t)i * PQ_CHUNK, PQ_CHUNK, MMP_PROT_READ);
	/*
	 * A place for the writer, kept free: mapped once to find it, then
	 * unmapped; the middle of three chunks, so that what the writer maps
	 * never merges with the queried VMAs (they would change under a query).
	 */
	if (!err)
		err = mmp_mmap(s, 0, 3 * PQ_CHUNK, RW, 0, &far);
	if (!err)
		err = mmp_munmap(s, far, 3 * PQ_CHUNK);
	side->writer = (struct seed_writer_target){ s, far + PQ_CHUNK, PQ_CHUNK };
	return err;
}

static const struct seed_lock_writer pq_desc = {
	.seed = "procmap-query",
	.base_release = REL(6, 17), .opt_release = REL(6, 18),
	.base_label = "6.17", .opt_label = "6.18",
	.items = PQ_VMAS, .items_quick = PQ_VMAS_QUICK,
	.item_bytes = PQ_CHUNK, .items_key = "vmas", .bytes_key = "vma_bytes",
	.contended = pq_contended,
	.ncontended = sizeof(pq_contended) / sizeof(pq_contended[0]),
	.vma_ok = MMP_C_PROCMAP_VMA_LOCK_SUCCESS, .vma_fallback = MMP_C_PROCMAP_VMA_LOCK_FALLBACK,
	.mmap_lock = MMP_C_MMAP_LOCK_PROCMAP,
	.what_pre = "PROCMAP_QUERY of each of ", .what_post = " VMAs a sample",
	.share_aside = "",
	.note = "no claim: the series gives no figure (it reduces mmap_lock contention, "
		"its cover letter says); the per-VMA share is optimized_vma_lock_share",
	.attach = false,	/* a query reads the tree, not memory: no CPU */
	.setup = pq_setup,
	.sample = pq_sample,
};

/* One case, named for the summary. */
static const char *const pq_cases[] = { "PROCMAP_QUERY beside a writer" };

static int pq_case_run(const struct mmp_seed_opts *opts, const char *arch,
		       struct mmp_phys *phys, const void *arg)
{
	return seed_lock_writer_run(&pq_desc, opts, arch, phys, *(const char *const *)arg);
}

const struct mmp_seed mmp_seed_procmap_query = {
	.name = "procmap-query",
	.title = "PROCMAP_QUERY beside a thread that maps and unmaps: the mmap lock (6.17) or the VMA's (6.18)",
	.archs = (const char *const[]){ "x86_64", "arm64", NULL },
	MMP_SEED_CASES(pq_cases),
	.phys_bytes = 32 * BENCH_MIB,
	.phys_bytes_quick = 32 * BENCH_MIB,
	.run_case = pq_case_run,
};
