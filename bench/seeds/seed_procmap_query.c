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
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mmprim/introspect.h>

#include "common.h"
#include "seed_writer.h"
#include "seeds.h"

#define PQ_CHUNK	(64 * BENCH_KIB)
#define PQ_VMAS		256
#define PQ_VMAS_QUICK	64
#define PQ_BUDGET	1.0
#define PQ_BUDGET_QUICK	0.1
#define PQ_MIN_PAIRS	60
#define PQ_MAX_PAIRS	400

#define REL(a, b)	MMP_KERNEL_VERSION(a, b, 0)

/* The counters the writer makes vary: reported apart from the exact table. */
static const enum mmp_counter pq_contended[] = {
	MMP_C_PROCMAP_VMA_LOCK_SUCCESS, MMP_C_PROCMAP_VMA_LOCK_FALLBACK, MMP_C_MMAP_LOCK_PROCMAP,
	MMP_C_MMAP_LOCK_READ_WAIT, MMP_C_MMAP_LOCK_WRITE_WAIT,
};

struct pq_side {
	struct bench_env env;
	uint64_t vmas;
	struct seed_writer_target writer;	/* a free range far from what is measured */
	struct mmp_counters exact;	/* the writer-less sample */
	struct mmp_counters contended;	/* summed over the timed samples */
	double *calls;			/* one sample's call times */
	double secs;			/* its mean call: waits count however few */
};

/* One sample: a query of each VMA, timed call by call, each answer checked. */
static int pq_sample(struct pq_side *side, unsigned int nvmas, struct mmp_counters *d)
{
	struct mmp_space *s = side->env.space;
	struct mmp_counters c0, c1;
	int err = 0;

	mmp_space_counters(s, &c0);
	for (unsigned int i = 0; i < nvmas && !err; i++) {
		uint64_t a = side->vmas + (uint64_t)i * PQ_CHUNK;
		struct mmp_procmap_query q = { .size = sizeof(q), .query_addr = a + PQ_CHUNK / 2 };
		double t0 = bench_now();

		err = mmp_space_procmap_query(s, &q);
		side->calls[i] = bench_now() - t0;
		if (!err && (q.vma_start != a || q.vma_end != a + PQ_CHUNK))
			err = -EIO;
	}
	mmp_space_counters(s, &c1);
	bench_counters_sub(d, &c1, &c0);
	side->secs = 0;
	for (unsigned int i = 0; i < nvmas && !err; i++)
		side->secs += side->calls[i] / nvmas;
	return err;
}

static int pq_side_setup(struct pq_side *side, struct mmp_phys *phys, const char *arch,
			 long release, unsigned int nvmas)
{
	uint64_t far = 0;
	int err = bench_env_create(&side->env, phys, 0, arch, 0);

	if (err)
		return err;
	side->calls = calloc(nvmas, sizeof(*side->calls));
	if (!side->calls)
		return -ENOMEM;
	err = mmp_space_set_opt(side->env.space, MMP_OPT_KERNEL_VERSION, release);
	if (!err)
		err = mmp_mmap(side->env.space, 0, (uint64_t)nvmas * PQ_CHUNK, RW, 0, &side->vmas);
	/* Every other chunk read-only: nvmas VMAs that do not merge. */
	for (unsigned int i = 1; i < nvmas && !err; i += 2)
		err = mmp_mprotect(side->env.space, side->vmas + (uint64_t)i * PQ_CHUNK, PQ_CHUNK,
				   MMP_PROT_READ);
	/*
	 * A place for the writer, kept free: mapped once to find it, then
	 * unmapped; the middle of three chunks, so that what the writer maps
	 * never merges with the queried VMAs (they would change under a query).
	 */
	if (!err)
		err = mmp_mmap(side->env.space, 0, 3 * PQ_CHUNK, RW, 0, &far);
	if (!err)
		err = mmp_munmap(side->env.space, far, 3 * PQ_CHUNK);
	side->writer = (struct seed_writer_target){ side->env.space, far + PQ_CHUNK, PQ_CHUNK };
	if (!err)
		err = bench_env_detach(&side->env);
	return err;
}

static void pq_contended_json(char *buf, size_t len, size_t *off, const char *side,
			      const struct mmp_counters *c)
{
	bench_append(buf, len, off, "\"%s\":{", side);
	for (size_t i = 0; i < sizeof(pq_contended) / sizeof(pq_contended[0]); i++)
		bench_append(buf, len, off, "%s\"%s\":%llu", i ? "," : "",
			     mmp_counter_name(pq_contended[i]),
			     (unsigned long long)c->v[pq_contended[i]]);
	bench_append(buf, len, off, "}");
}

static double pq_share(const struct mmp_counters *c)
{
	uint64_t ok = c->v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS], fb = c->v[MMP_C_PROCMAP_VMA_LOCK_FALLBACK];

	return ok + fb ? (double)ok / (ok + fb) : 0;
}

/* One case, named for the summary. */
static const char *const pq_cases[] = { "PROCMAP_QUERY beside a writer" };

static int pq_case_run(const struct mmp_seed_opts *opts, const char *arch,
		       struct mmp_phys *phys, const void *arg)
{
	const char *name = *(const char *const *)arg;
	const unsigned int nvmas = opts->quick ? PQ_VMAS_QUICK : PQ_VMAS;
	struct mmp_seed_result base = { .label = "6.17" }, opt = { .label = "6.18" };
	struct mmp_seed_claim claim = { 0 };
	struct seed_writer w = { 0 };
	struct pq_side side[2];
	struct bench_pairs pairs;
	struct bench_ci ci;
	char buf[64], extra[1024];
	size_t off = 0;
	int err = 0;

	memset(side, 0, sizeof(side));
	bench_pairs_init(&pairs, opts->quick ? BENCH_MIN_SAMPLES : PQ_MIN_PAIRS, PQ_MAX_PAIRS,
			 opts->quick ? PQ_BUDGET_QUICK : PQ_BUDGET);
	for (int v = 0; v < 2 && !err; v++)
		err = pq_side_setup(&side[v], phys, arch, v ? REL(6, 18) : REL(6, 17), nvmas);
	/* The exact counters: one sample each, the writer not started yet. */
	for (int v = 0; v < 2 && !err; v++)
		err = pq_sample(&side[v], nvmas, &side[v].exact);
	if (!err)
		err = seed_writer_start(&w);
	while (!err && bench_pairs_more(&pairs)) {
		for (int k = 0; k < 2 && !err; k++) {
			int v = k ^ (int)(pairs.n % 2);
			struct mmp_counters d;

			err = seed_writer_switch(&w, &side[v].writer);
			if (!err)
				err = pq_sample(&side[v], nvmas, &d);
			for (size_t i = 0; i < sizeof(pq_contended) / sizeof(pq_contended[0]); i++)
				side[v].contended.v[pq_contended[i]] += d.v[pq_contended[i]];
		}
		if (!err)
			err = bench_pairs_add(&pairs, side[0].secs, side[1].secs);
	}
	if (w.started) {
		int werr = seed_writer_stop(&w);

		err = err ? err : werr;
	}
	for (int v = 0; v < 2 && !err; v++)
		err = mmp_space_verify(side[v].env.space);
	if (err)
		goto out;

	bench_pairs_ci(&pairs, &ci);
	base.seconds = bench_median(pairs.base, pairs.n);
	opt.seconds = bench_median(pairs.opt, pairs.n);
	base.counters = side[0].exact;
	opt.counters = side[1].exact;
	claim.note = "no claim: the series gives no figure (it reduces mmap_lock contention, "
		     "its cover letter says); the per-VMA share is optimized_vma_lock_share";

	if (!opts->json) {
		printf("procmap-query [%s]%s: PROCMAP_QUERY of each of %u VMAs a sample, "
		       "a writer mapping and unmapping 64 KiB beside; %zu alternating pairs\n",
		       arch, mmp_seed_quick_tag(opts), nvmas, pairs.n);
		printf("  a call (mean of a sample, median sample): 6.17 %.2f us, 6.18 %.2f us: %s\n",
		       base.seconds * 1e6, opt.seconds * 1e6, bench_ci_str(&ci, buf, sizeof(buf)));
		for (int v = 0; v < 2; v++)
			printf("  under the writer, %s: VMA lock %llu, fallback %llu, mmap lock %llu, "
			       "read waits %llu, write waits %llu\n", v ? opt.label : base.label,
			       (unsigned long long)side[v].contended.v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS],
			       (unsigned long long)side[v].contended.v[MMP_C_PROCMAP_VMA_LOCK_FALLBACK],
			       (unsigned long long)side[v].contended.v[MMP_C_MMAP_LOCK_PROCMAP],
			       (unsigned long long)side[v].contended.v[MMP_C_MMAP_LOCK_READ_WAIT],
			       (unsigned long long)side[v].contended.v[MMP_C_MMAP_LOCK_WRITE_WAIT]);
		printf("  per-VMA share at 6.18: %.2f%%; writer: %llu mmap+munmap pairs\n",
		       100 * pq_share(&side[1].contended), (unsigned long long)w.ops);
		printf("  (counters below: one sample each with no writer, exact run to run)\n");
	}
	bench_append(extra, sizeof(extra), &off,
		     "\"vmas\":%u,\"vma_bytes\":%llu,\"baseline_release\":\"6.17\","
		     "\"optimized_release\":\"6.18\",\"writer_ops\":%llu,"
		     "\"optimized_vma_lock_share\":%.4f,\"contended\":{", nvmas,
		     (unsigned long long)PQ_CHUNK, (unsigned long long)w.ops,
		     pq_share(&side[1].contended));
	pq_contended_json(extra, sizeof(extra), &off, "baseline", &side[0].contended);
	bench_append(extra, sizeof(extra), &off, ",");
	pq_contended_json(extra, sizeof(extra), &off, "optimized", &side[1].contended);
	bench_append(extra, sizeof(extra), &off, "}");
	mmp_seed_report(opts, "procmap-query", arch, name, &base, &opt, &ci, &claim, extra);
out:
	for (int v = 0; v < 2; v++) {
		bench_env_destroy(&side[v].env);
		free(side[v].calls);
	}
	bench_pairs_free(&pairs);
	return err;
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
