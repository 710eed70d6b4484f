/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "lazyfree" (Barry Song, "mm: Avoid splitting pmd for lazyfree
 * pmd-mapped THP in try_to_unmap", v4 4/4, Feb 2025): map 128 MiB of THPs,
 * memset, MADV_FREE, memset again (the folios are redirtied), time
 * MADV_PAGEOUT, munmap, in a loop. Reclaim used to split each PMD, walk 512
 * PTEs, find them dirty and restore them; now __discard_anon_folio_pmd_locked
 * sees the dirty PMD, marks the folio swapbacked and leaves the PMD alone:
 * 7.3 ms -> 2.1 ms per 128 MiB. Split is MMP_OPT_LAZYFREE_PMD 0, no-split 1;
 * both run in one process on one phys, iteration by iteration alternating.
 * Cases: "redirtied" (the seed), "clean" (no second memset: both discard on
 * the PMD) and "mixed" (every other THP redirtied). The seed timed with
 * clock(), CPU time; so do we (the thread's), which also keeps other work on
 * shared cores out of the figure; wall time is reported beside it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "seeds.h"

#define LF_BYTES	(128 * BENCH_MIB)
#define LF_BYTES_QUICK	(16 * BENCH_MIB)
#define LF_ITERS	20	/* at least, per side; the counter totals cover these */
#define LF_ITERS_QUICK	10
#define LF_MAX_ITERS	64
#define LF_BUDGET	10.0	/* seconds per case; LF_ITERS pairs whatever they take */
#define LF_BUDGET_QUICK	0.3

/* The seed's figures: clock() per MADV_PAGEOUT of 128 MiB, before and after. */
#define SEED_SPLIT_S	0.0073
#define SEED_NOSPLIT_S	0.0021
#define SEED_TARGET	3.4

enum lf_redirty { LF_NONE, LF_ALL, LF_HALF };

struct lf_case {
	const char *name;
	enum lf_redirty redirty;
	const char *what;	/* for the header line */
};

static const struct lf_case lf_cases[] = {
	{ "redirtied", LF_ALL, "memset, MADV_FREE, memset" },
	{ "clean", LF_NONE, "memset, MADV_FREE" },
	{ "mixed", LF_HALF, "memset, MADV_FREE, memset every other THP" },
};

struct lf_side {
	struct bench_env env;
	double secs[LF_MAX_ITERS];	/* CPU time of MADV_PAGEOUT, as the seed's clock() */
	double wall[LF_MAX_ITERS];
	struct mmp_counters one;	/* of one MADV_PAGEOUT (the last) */
	struct mmp_counters total;	/* over the first LF_ITERS (quick: _QUICK) iterations */
	bool stable;			/* every iteration counted the same */
	/* The mapping as smaps sums it before and after MADV_PAGEOUT (the last iteration). */
	struct mmp_vma_info smaps[2];
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One iteration of the seed's loop; the CPU and wall seconds and counters of MADV_PAGEOUT. */
static int lf_iteration(struct lf_side *side, const struct lf_case *c, uint64_t bytes,
			double *secs, double *wall, struct mmp_counters *delta)
{
	struct mmp_space *s;
	struct mmp_counters before, after;
	uint64_t addr;
	double t0, c0;
	int err, err2;

	err = bench_env_attach(&side->env);
	if (err)
		return err;
	s = side->env.space;
	err = mmp_mmap(s, 0, bytes, RW, 0, &addr);
	if (err)
		goto out;
	err = mmp_madvise(s, addr, bytes, MMP_MADV_HUGEPAGE);
	if (!err)
		err = mmp_memset(side->env.cpu, addr, 1, bytes);
	if (!err)
		err = mmp_madvise(s, addr, bytes, MMP_MADV_FREE);
	/* Redirty after MADV_FREE. */
	for (uint64_t off = 0; !err && c->redirty != LF_NONE && off < bytes; off += MMP_PMD_SIZE) {
		if (c->redirty == LF_HALF && (off / MMP_PMD_SIZE) % 2)
			continue;
		err = mmp_memset(side->env.cpu, addr + off, 1, MMP_PMD_SIZE);
	}
	/* Looking moves no counter and no A/D bit: outside the timed call, it changes nothing. */
	if (!err)
		err = mmp_space_vma_info(s, addr, &side->smaps[0]);
	if (!err) {
		mmp_space_counters(s, &before);
		t0 = bench_now();
		c0 = cpu_now();
		err = mmp_madvise(s, addr, bytes, MMP_MADV_PAGEOUT);
		*secs = cpu_now() - c0;
		*wall = bench_now() - t0;
		mmp_space_counters(s, &after);
		bench_counters_sub(delta, &after, &before);
	}
	if (!err)
		err = mmp_space_vma_info(s, addr, &side->smaps[1]);
	err2 = mmp_munmap(s, addr, bytes);
	err = err ? err : err2;
out:
	/* One simulated CPU per thread at a time: the other variant attaches next. */
	err2 = bench_env_detach(&side->env);
	return err ? err : err2;
}

static uint64_t written(const struct mmp_counters *c)
{
	return c->v[MMP_C_PTE_WRITE] + c->v[MMP_C_PMD_WRITE];
}

/* `"name":[x,y,...]` of @n seconds. */
static void json_array(char *buf, size_t len, size_t *off, const char *name, const double *v,
		       int n)
{
	bench_append(buf, len, off, "\"%s\":[", name);
	for (int i = 0; i < n; i++)
		bench_append(buf, len, off, "%s%.9f", i ? "," : "", v[i]);
	bench_append(buf, len, off, "]");
}

static void print_summary(const struct lf_side *side, const double *model, int iters, int counted,
			  const struct bench_ci *ci, const struct mmp_seed_claim *claim)
{
	static const char *const col[2] = { "split (LAZYFREE_PMD 0)", "no-split (LAZYFREE_PMD 1)" };
	const struct mmp_counters *a = &side[0].one, *b = &side[1].one;
	double med[2], wmed[2];
	struct bench_ci wci;
	char buf[64];

	printf("  %-46s %s\n", col[0], col[1]);
	for (int i = 0; i < iters; i++)
		printf("  Time taken by reclamation: %f seconds    "
		       "Time taken by reclamation: %f seconds\n", side[0].secs[i], side[1].secs[i]);
	for (int v = 0; v < 2; v++) {
		med[v] = bench_median(side[v].secs, iters);
		wmed[v] = bench_median(side[v].wall, iters);
	}
	printf("  median of %d: split %.6f s, no-split %.6f s; time ratio %s", iters, med[0],
	       med[1], bench_ci_str(ci, buf, sizeof(buf)));
	if (claim->what)
		printf(" (seed: %.4f s -> %.4f s, %.1fx; %s: %s)", SEED_SPLIT_S, SEED_NOSPLIT_S,
		       SEED_SPLIT_S / SEED_NOSPLIT_S, claim->what, bench_verdict_name(claim->verdict));
	bench_ratio_ci(side[0].wall, side[1].wall, iters, &wci);
	printf("\n  wall-clock median: split %.6f s, no-split %.6f s; time ratio %s\n", wmed[0],
	       wmed[1], bench_ci_str(&wci, buf, sizeof(buf)));
	printf("  modeled hardware time per MADV_PAGEOUT: split %.3f us, no-split %.3f us (%.0fx)\n",
	       model[0] * 1e6, model[1] * 1e6, model[0] / model[1]);
	printf("  per MADV_PAGEOUT, split -> no-split: PMD splits %llu -> %llu, PTE tables "
	       "allocated %llu -> %llu, entries written %llu -> %llu, TLB flushes %llu -> %llu,\n"
	       "    folios discarded %llu -> %llu, redirtied (swapbacked again) %llu -> %llu%s\n",
	       (unsigned long long)a->v[MMP_C_PMD_SPLIT], (unsigned long long)b->v[MMP_C_PMD_SPLIT],
	       (unsigned long long)a->v[MMP_C_PGTABLE_ALLOC],
	       (unsigned long long)b->v[MMP_C_PGTABLE_ALLOC],
	       (unsigned long long)written(a), (unsigned long long)written(b),
	       (unsigned long long)(a->v[MMP_C_TLB_FLUSH_RANGE] + a->v[MMP_C_TLB_FLUSH_ALL]),
	       (unsigned long long)(b->v[MMP_C_TLB_FLUSH_RANGE] + b->v[MMP_C_TLB_FLUSH_ALL]),
	       (unsigned long long)a->v[MMP_C_FOLIO_FREE], (unsigned long long)b->v[MMP_C_FOLIO_FREE],
	       (unsigned long long)a->v[MMP_C_LAZYFREE_REDIRTIED],
	       (unsigned long long)b->v[MMP_C_LAZYFREE_REDIRTIED],
	       side[0].stable && side[1].stable ? "" : " (counts varied between iterations)");
	printf("  over the first %d iterations: PMD splits %llu -> %llu, PTE tables allocated "
	       "%llu -> %llu\n", counted, (unsigned long long)side[0].total.v[MMP_C_PMD_SPLIT],
	       (unsigned long long)side[1].total.v[MMP_C_PMD_SPLIT],
	       (unsigned long long)side[0].total.v[MMP_C_PGTABLE_ALLOC],
	       (unsigned long long)side[1].total.v[MMP_C_PGTABLE_ALLOC]);
	printf("  (seconds: CPU time of mmp_madvise(MADV_PAGEOUT), median of %d; table: counters "
	       "of one MADV_PAGEOUT)\n", iters);
}

static int lf_case_run(const struct mmp_seed_opts *opts, const char *arch, struct mmp_phys *phys,
		       const void *arg)
{
	const struct lf_case *c = arg;
	const uint64_t bytes = opts->quick ? LF_BYTES_QUICK : LF_BYTES;
	const int counted = opts->quick ? LF_ITERS_QUICK : LF_ITERS;
	struct mmp_seed_result base = { .label = "split" }, opt = { .label = "no-split" };
	struct lf_side side[2];	/* 0: split (the base line), 1: no-split */
	struct mmp_seed_claim claim = { 0 };
	struct bench_pairs pairs;
	struct mmp_counters d;
	struct bench_ci ci;
	double model[2], warm, warm_wall;
	char extra[4096];
	size_t off = 0;
	int err = 0, iters;

	memset(side, 0, sizeof(side));
	bench_pairs_init(&pairs, counted, LF_MAX_ITERS, opts->quick ? LF_BUDGET_QUICK : LF_BUDGET);
	for (int v = 0; v < 2 && !err; v++) {
		side[v].stable = true;
		err = bench_env_create(&side[v].env, phys, 0, arch, 0);
		if (!err)
			err = mmp_space_set_opt(side[v].env.space, MMP_OPT_LAZYFREE_PMD, v);
		if (!err)
			err = bench_env_detach(&side[v].env);
	}
	/* A warm-up iteration each: caches and the allocator's lists. */
	for (int v = 0; v < 2 && !err; v++)
		err = lf_iteration(&side[v], c, bytes, &warm, &warm_wall, &d);
	/* Alternate, in turn first, so that drift of the host hits both alike. */
	while (!err && bench_pairs_more(&pairs)) {
		int i = (int)pairs.n;

		for (int k = 0; k < 2 && !err; k++) {
			int v = k ^ (i % 2);

			err = lf_iteration(&side[v], c, bytes, &side[v].secs[i], &side[v].wall[i],
					   &d);
			if (err)
				break;
			if (i && memcmp(&d, &side[v].one, sizeof(d)))
				side[v].stable = false;
			side[v].one = d;
			for (int k2 = 0; k2 < MMP_NR_COUNTERS && i < counted; k2++)
				side[v].total.v[k2] += d.v[k2];
		}
		if (!err)
			err = bench_pairs_add(&pairs, side[0].secs[i], side[1].secs[i]);
	}
	if (err)
		goto out;
	iters = (int)pairs.n;
	bench_pairs_ci(&pairs, &ci);
	if (c->redirty == LF_ALL) {
		claim.what = "time ratio >= 3.4x";
		claim.published = "3.5x (7.3 -> 2.1 ms)";
		claim.verdict = bench_verdict_at_least(&ci, SEED_TARGET);
	}

	for (int v = 0; v < 2; v++)
		model[v] = bench_modeled_s(side[v].env.space, &side[v].one);
	base.seconds = bench_median(side[0].secs, iters);
	opt.seconds = bench_median(side[1].secs, iters);
	base.counters = side[0].one;
	opt.counters = side[1].one;

	if (!opts->json) {
		printf("lazyfree [%s, %s]%s: %d x (mmap %llu MiB, MADV_HUGEPAGE, %s, "
		       "MADV_PAGEOUT timed, munmap)\n", arch, c->name, mmp_seed_quick_tag(opts),
		       iters, (unsigned long long)(bytes / BENCH_MIB), c->what);
		print_summary(side, model, iters, counted, &ci, &claim);
	}
	bench_append(extra, sizeof(extra), &off,
	       "\"iterations\":%d,\"totals_over_iterations\":%d,\"bytes\":%llu,\"thps\":%llu,"
	       "\"baseline_modeled_seconds\":%.9f,\"optimized_modeled_seconds\":%.9f,"
	       "\"baseline_pmd_splits\":%llu,\"optimized_pmd_splits\":%llu,"
	       "\"baseline_pgtable_alloc\":%llu,\"optimized_pgtable_alloc\":%llu,"
	       "\"baseline_entries_written\":%llu,\"optimized_entries_written\":%llu,"
	       "\"baseline_folios_discarded\":%llu,\"optimized_folios_discarded\":%llu,"
	       "\"baseline_folios_redirtied\":%llu,\"optimized_folios_redirtied\":%llu,"
	       "\"counters_stable\":%s,\"seed_baseline_seconds\":%.4f,"
	       "\"seed_optimized_seconds\":%.4f,\"target_ratio\":%.1f,"
	       "\"baseline_wall_seconds\":%.9f,\"optimized_wall_seconds\":%.9f,"
	       "\"baseline_pmd_splits_total\":%llu,\"optimized_pmd_splits_total\":%llu,"
	       "\"baseline_pgtable_alloc_total\":%llu,\"optimized_pgtable_alloc_total\":%llu,",
	       iters, counted, (unsigned long long)bytes,
	       (unsigned long long)(bytes / MMP_PMD_SIZE), model[0], model[1],
	       (unsigned long long)side[0].one.v[MMP_C_PMD_SPLIT],
	       (unsigned long long)side[1].one.v[MMP_C_PMD_SPLIT],
	       (unsigned long long)side[0].one.v[MMP_C_PGTABLE_ALLOC],
	       (unsigned long long)side[1].one.v[MMP_C_PGTABLE_ALLOC],
	       (unsigned long long)written(&side[0].one), (unsigned long long)written(&side[1].one),
	       (unsigned long long)side[0].one.v[MMP_C_FOLIO_FREE],
	       (unsigned long long)side[1].one.v[MMP_C_FOLIO_FREE],
	       (unsigned long long)side[0].one.v[MMP_C_LAZYFREE_REDIRTIED],
	       (unsigned long long)side[1].one.v[MMP_C_LAZYFREE_REDIRTIED],
	       side[0].stable && side[1].stable ? "true" : "false", SEED_SPLIT_S, SEED_NOSPLIT_S,
	       SEED_TARGET, bench_median(side[0].wall, iters), bench_median(side[1].wall, iters),
	       (unsigned long long)side[0].total.v[MMP_C_PMD_SPLIT],
	       (unsigned long long)side[1].total.v[MMP_C_PMD_SPLIT],
	       (unsigned long long)side[0].total.v[MMP_C_PGTABLE_ALLOC],
	       (unsigned long long)side[1].total.v[MMP_C_PGTABLE_ALLOC]);
	for (int v = 0; v < 2; v++) {
		bench_append(extra, sizeof(extra), &off, "\"%s_smaps\":{",
			     v ? "optimized" : "baseline");
		for (int w = 0; w < 2; w++) {
			const struct mmp_vma_info *m = &side[v].smaps[w];

			bench_append(extra, sizeof(extra), &off,
				     "%s\"%s_pageout\":{\"Rss\":%llu,\"AnonHugePages\":%llu,"
				     "\"LazyFree\":%llu,\"Private_Dirty\":%llu}", w ? "," : "",
				     w ? "after" : "before", (unsigned long long)m->rss >> 10,
				     (unsigned long long)m->anon_huge_pages >> 10,
				     (unsigned long long)m->lazyfree >> 10,
				     (unsigned long long)m->private_dirty >> 10);
		}
		bench_append(extra, sizeof(extra), &off, "},");
	}
	json_array(extra, sizeof(extra), &off, "baseline_iteration_seconds", side[0].secs, iters);
	bench_append(extra, sizeof(extra), &off, ",");
	json_array(extra, sizeof(extra), &off, "optimized_iteration_seconds", side[1].secs, iters);
	mmp_seed_report(opts, "lazyfree", arch, c->name, &base, &opt, &ci, &claim, extra);
out:
	for (int v = 0; v < 2; v++)
		bench_env_destroy(&side[v].env);
	bench_pairs_free(&pairs);
	return err;
}

const struct mmp_seed mmp_seed_lazyfree = {
	.name = "lazyfree",
	.title = "MADV_PAGEOUT of 128 MiB of redirtied lazyfree THPs, split PMD against no split",
	.archs = (const char *const[]){ "x86_64", "arm64", NULL },
	MMP_SEED_CASES(lf_cases),
	/* One mapping at a time, its tables, and room for a fallback to small pages. */
	.phys_bytes = 2 * LF_BYTES,
	.phys_bytes_quick = 2 * LF_BYTES_QUICK,
	.run_case = lf_case_run,
};
