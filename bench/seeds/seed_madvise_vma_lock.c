/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "madvise-vma-lock" (Barry Song, "mm: use per_vma lock for
 * MADV_DONTNEED", 6.17): a heap thread that frees memory with MADV_DONTNEED
 * while another thread maps and unmaps elsewhere in the space. Before, each
 * DONTNEED takes the mmap read lock and queues behind the writer (and, the
 * lock being an rwsem, behind a writer that merely waits); from 6.17 a range
 * inside one VMA takes that VMA's lock alone. The series gives no time: its
 * figure is the share of calls that took the per-VMA path on Android, 217,735
 * of 218,966 (HeapTaskDaemon), so there is no claim, and this run's share is
 * printed beside it.
 *
 * Each variant is a space at its release (6.16, 6.17). A sample: the heap
 * thread writes each 64 KiB chunk of its heap (untimed) and DONTNEEDs it
 * (timed, call by call); its figure is the mean call (a median hides the
 * waits while fewer than half the calls wait). One writer thread
 * maps and unmaps 64 KiB far from the heap in the space being sampled, all
 * the time. The counters table is of one more sample per side with the
 * writer stopped, so that it repeats exactly; what the writer makes vary
 * (VMA-lock successes and fallbacks, the mmap lock's waits) is reported
 * apart, as "contended" figures of every timed sample.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "seed_writer.h"
#include "seeds.h"

#define ML_CHUNK	(64 * BENCH_KIB)
#define ML_CHUNKS	64		/* 4 MiB of heap */
#define ML_CHUNKS_QUICK	16
#define ML_BUDGET	1.0
#define ML_BUDGET_QUICK	0.1
#define ML_MIN_PAIRS	60
#define ML_MAX_PAIRS	400

#define REL(a, b)	MMP_KERNEL_VERSION(a, b, 0)

/* The counters the writer makes vary: reported apart from the exact table. */
static const enum mmp_counter ml_contended[] = {
	MMP_C_MADV_VMA_LOCK_SUCCESS, MMP_C_MADV_VMA_LOCK_FALLBACK, MMP_C_MMAP_LOCK_MADVISE,
	MMP_C_MMAP_LOCK_READ_WAIT, MMP_C_MMAP_LOCK_WRITE_WAIT, MMP_C_VMA_LOCK_ABORT,
};

struct ml_side {
	struct bench_env env;
	uint64_t heap;
	struct seed_writer_target writer;	/* a free range far from what is measured */
	struct mmp_counters exact;	/* the writer-less sample */
	struct mmp_counters contended;	/* summed over the timed samples */
	double *calls;			/* one sample's call times */
	double secs;			/* its mean call: waits count however few */
};

/* One sample: each chunk written (untimed), then DONTNEEDed (timed). */
static int ml_sample(struct ml_side *side, unsigned int chunks, struct mmp_counters *d)
{
	struct mmp_space *s = side->env.space;
	struct mmp_counters c0, c1;
	int err = bench_env_attach(&side->env);

	if (err)
		return err;
	mmp_space_counters(s, &c0);
	for (unsigned int i = 0; i < chunks && !err; i++) {
		uint64_t a = side->heap + (uint64_t)i * ML_CHUNK;
		double t0;

		err = mmp_memset(side->env.cpu, a, 0x5a, ML_CHUNK);
		if (err)
			break;
		t0 = bench_now();
		err = mmp_madvise(s, a, ML_CHUNK, MMP_MADV_DONTNEED);
		side->calls[i] = bench_now() - t0;
	}
	mmp_space_counters(s, &c1);
	bench_counters_sub(d, &c1, &c0);
	side->secs = 0;
	for (unsigned int i = 0; i < chunks && !err; i++)
		side->secs += side->calls[i] / chunks;
	bench_env_detach(&side->env);
	return err;
}

static int ml_side_setup(struct ml_side *side, struct mmp_phys *phys, const char *arch,
			 long release, unsigned int chunks)
{
	uint64_t far = 0;
	int err = bench_env_create(&side->env, phys, 0, arch, 0);

	if (err)
		return err;
	side->calls = calloc(chunks, sizeof(*side->calls));
	if (!side->calls)
		return -ENOMEM;
	err = mmp_space_set_opt(side->env.space, MMP_OPT_KERNEL_VERSION, release);
	if (!err)
		err = mmp_mmap(side->env.space, 0, chunks * ML_CHUNK, RW, 0, &side->heap);
	/* A place for the writer, kept free: mapped once to find it, then unmapped. */
	if (!err)
		err = mmp_mmap(side->env.space, 0, ML_CHUNK, RW, 0, &far);
	if (!err)
		err = mmp_munmap(side->env.space, far, ML_CHUNK);
	side->writer = (struct seed_writer_target){ side->env.space, far, ML_CHUNK };
	if (!err)
		err = bench_env_detach(&side->env);
	return err;
}

static void ml_contended_json(char *buf, size_t len, size_t *off, const char *side,
			      const struct mmp_counters *c)
{
	bench_append(buf, len, off, "\"%s\":{", side);
	for (size_t i = 0; i < sizeof(ml_contended) / sizeof(ml_contended[0]); i++)
		bench_append(buf, len, off, "%s\"%s\":%llu", i ? "," : "",
			     mmp_counter_name(ml_contended[i]),
			     (unsigned long long)c->v[ml_contended[i]]);
	bench_append(buf, len, off, "}");
}

static double ml_share(const struct mmp_counters *c)
{
	uint64_t ok = c->v[MMP_C_MADV_VMA_LOCK_SUCCESS], fb = c->v[MMP_C_MADV_VMA_LOCK_FALLBACK];

	return ok + fb ? (double)ok / (ok + fb) : 0;
}

/* One case, named for the summary. */
static const char *const ml_cases[] = { "DONTNEED beside a writer" };

static int ml_case_run(const struct mmp_seed_opts *opts, const char *arch,
		       struct mmp_phys *phys, const void *arg)
{
	const char *name = *(const char *const *)arg;
	const unsigned int chunks = opts->quick ? ML_CHUNKS_QUICK : ML_CHUNKS;
	struct mmp_seed_result base = { .label = "6.16" }, opt = { .label = "6.17" };
	struct mmp_seed_claim claim = { 0 };
	struct seed_writer w = { 0 };
	struct ml_side side[2];
	struct bench_pairs pairs;
	struct bench_ci ci;
	char buf[64], extra[1024];
	size_t off = 0;
	int err = 0;

	memset(side, 0, sizeof(side));
	bench_pairs_init(&pairs, opts->quick ? BENCH_MIN_SAMPLES : ML_MIN_PAIRS, ML_MAX_PAIRS,
			 opts->quick ? ML_BUDGET_QUICK : ML_BUDGET);
	for (int v = 0; v < 2 && !err; v++)
		err = ml_side_setup(&side[v], phys, arch, v ? REL(6, 17) : REL(6, 16), chunks);
	/* The exact counters: one sample each, the writer not started yet. */
	for (int v = 0; v < 2 && !err; v++)
		err = ml_sample(&side[v], chunks, &side[v].exact);
	if (!err)
		err = seed_writer_start(&w);
	while (!err && bench_pairs_more(&pairs)) {
		for (int k = 0; k < 2 && !err; k++) {
			int v = k ^ (int)(pairs.n % 2);
			struct mmp_counters d;

			err = seed_writer_switch(&w, &side[v].writer);
			if (!err)
				err = ml_sample(&side[v], chunks, &d);
			for (size_t i = 0; i < sizeof(ml_contended) / sizeof(ml_contended[0]); i++)
				side[v].contended.v[ml_contended[i]] += d.v[ml_contended[i]];
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
	claim.published = "99.4% of calls on the per-VMA path (217,735 of 218,966, Android)";
	claim.note = "no claim: the series gives no time; its figure is the per-VMA share "
		     "(optimized_vma_lock_share)";

	if (!opts->json) {
		printf("madvise-vma-lock [%s]%s: MADV_DONTNEED of %u chunks of 64 KiB a sample, "
		       "a writer mapping and unmapping 64 KiB beside; %zu alternating pairs\n",
		       arch, mmp_seed_quick_tag(opts), chunks, pairs.n);
		printf("  a call (mean of a sample, median sample): 6.16 %.2f us, 6.17 %.2f us: %s\n",
		       base.seconds * 1e6,
		       opt.seconds * 1e6, bench_ci_str(&ci, buf, sizeof(buf)));
		for (int v = 0; v < 2; v++)
			printf("  under the writer, %s: VMA lock %llu, fallback %llu, mmap lock %llu, "
			       "read waits %llu, write waits %llu\n", v ? opt.label : base.label,
			       (unsigned long long)side[v].contended.v[MMP_C_MADV_VMA_LOCK_SUCCESS],
			       (unsigned long long)side[v].contended.v[MMP_C_MADV_VMA_LOCK_FALLBACK],
			       (unsigned long long)side[v].contended.v[MMP_C_MMAP_LOCK_MADVISE],
			       (unsigned long long)side[v].contended.v[MMP_C_MMAP_LOCK_READ_WAIT],
			       (unsigned long long)side[v].contended.v[MMP_C_MMAP_LOCK_WRITE_WAIT]);
		printf("  per-VMA share at 6.17: %.2f%% (the series: 99.44%%); writer: %llu "
		       "mmap+munmap pairs\n", 100 * ml_share(&side[1].contended),
		       (unsigned long long)w.ops);
		printf("  (counters below: one sample each with no writer, exact run to run)\n");
	}
	bench_append(extra, sizeof(extra), &off,
		     "\"chunks\":%u,\"chunk_bytes\":%llu,\"baseline_release\":\"6.16\","
		     "\"optimized_release\":\"6.17\",\"writer_ops\":%llu,"
		     "\"optimized_vma_lock_share\":%.4f,\"contended\":{", chunks,
		     (unsigned long long)ML_CHUNK, (unsigned long long)w.ops,
		     ml_share(&side[1].contended));
	ml_contended_json(extra, sizeof(extra), &off, "baseline", &side[0].contended);
	bench_append(extra, sizeof(extra), &off, ",");
	ml_contended_json(extra, sizeof(extra), &off, "optimized", &side[1].contended);
	bench_append(extra, sizeof(extra), &off, "}");
	mmp_seed_report(opts, "madvise-vma-lock", arch, name, &base, &opt, &ci, &claim, extra);
out:
	for (int v = 0; v < 2; v++) {
		bench_env_destroy(&side[v].env);
		free(side[v].calls);
	}
	bench_pairs_free(&pairs);
	return err;
}

const struct mmp_seed mmp_seed_madvise_vma_lock = {
	.name = "madvise-vma-lock",
	.title = "MADV_DONTNEED beside a thread that maps and unmaps: the mmap lock (6.16) or the VMA's (6.17)",
	.archs = (const char *const[]){ "x86_64", "arm64", NULL },
	MMP_SEED_CASES(ml_cases),
	.phys_bytes = 32 * BENCH_MIB,
	.phys_bytes_quick = 32 * BENCH_MIB,
	.run_case = ml_case_run,
};
