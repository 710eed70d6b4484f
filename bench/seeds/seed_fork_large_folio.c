/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "fork-large-folio" (David Hildenbrand): fork and munmap of memory
 * populated with PTE-mapped large folios of one size.
 *   - "mm/memory: optimize fork() with PTE-mapped THP" (6.9): copy_present_ptes
 *     takes a folio_pte_batch at a time; fork of 1 GiB of 64 KiB folios went
 *     from 14.05 to 10.44 ms, 512 KiB and larger -30%, 4 KiB -2% (Xeon Silver
 *     4210R).
 *   - "mm/rmap: minimize folio->_nr_pages_mapped updates when batching PTE
 *     (un)mapping" (6.12): munmap of 1 GiB faster by 10% (16 KiB folios) to
 *     27% (2 MiB, PTE-mapped), x86-64.
 *
 * Baseline is the library's per-PTE path (MMP_OPT_PTE_BATCH 0: each entry
 * read, copied or cleared, and its rmap updated, on its own), optimized the
 * batched one. Each sample maps and populates fresh memory in the parent,
 * times mmp_fork(), the child's exit (mmp_space_destroy) and then the munmap
 * of the parent's now exclusive folios, which frees them, as the seeds' own
 * benchmark unmapped memory "only mapped by a single process". 64 MiB (quick:
 * 8 MiB) instead of 1 GiB keeps a case under a second. The two paths are two
 * spaces on one phys, alternating sample by sample.
 *
 * The munmap comparison is not the 6.12 one. That patch left batching alone
 * and moved one atomic per page (_nr_pages_mapped) to one per batch. The
 * library keeps no _nr_pages_mapped; its folio-wide count is _large_mapcount,
 * updated once per rmap call, so per PTE unbatched and per batch batched, on
 * top of everything else batching saves. Its figures are therefore a lower
 * bound for ours, and the claims say "at least".
 *
 * 2 MiB folios are faulted in PMD-mapped and then split to PTEs (an mprotect
 * of one page and back), keeping the folio whole: the seed's "PTE-mapped THP".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "seeds.h"

#define FLF_ADDR	(1ULL << 30)
#define FLF_BYTES	(64 * BENCH_MIB)
#define FLF_BYTES_QUICK	(8 * BENCH_MIB)
#define FLF_MAX_PAIRS	60
#define FLF_BUDGET	0.3	/* seconds per case, after the minimum of pairs */
#define FLF_BUDGET_QUICK 0.03

/* What the seed published for one operation on one folio size. */
struct flf_claim {
	double at_least;	/* time ratio; 0: no claim */
	const char *what, *published;
};

struct flf_case {
	const char *name;
	unsigned int order;
	struct flf_claim fork, munmap;
};

static const struct flf_case flf_cases[] = {
	{ "4K", 0,
	  { 0.9, "no regression: fork time ratio >= 0.9x", "-2% (4K, Xeon 4210R)" },
	  { 0 } },
	{ "16K", 2,
	  { 0 },
	  { 1.10, "munmap time ratio >= 1.10x", "+10% (16K, 6.12 rmap only)" } },
	{ "64K", 4,
	  { 1.35, "fork time ratio >= 1.35x", "1.35x (14.05 -> 10.44 ms)" },
	  { 1.17, "munmap time ratio >= 1.17x", "+17% (64K, 6.12 rmap only)" } },
	{ "512K", 7,
	  { 1.43, "fork time ratio >= 1.43x", "1.43x (-30%, >= 512K)" },
	  { 1.22, "munmap time ratio >= 1.22x", "+22% (512K, 6.12 rmap only)" } },
	{ "2M PTE-mapped", MMP_PMD_ORDER,
	  { 1.43, "fork time ratio >= 1.43x", "1.43x (-30%, >= 512K)" },
	  { 1.27, "munmap time ratio >= 1.27x", "+27% (2M, 6.12 rmap only)" } },
};

enum { FLF_FORK, FLF_EXIT, FLF_MUNMAP, FLF_NR_OPS };

struct flf_side {
	struct bench_env env;
	double s[FLF_NR_OPS];			/* of the last sample */
	struct mmp_counters c[FLF_NR_OPS];	/* of the first measured sample; exit: none */
};

static int flf_counter_delta(struct mmp_space *s, const struct mmp_counters *before,
			     struct mmp_counters *out)
{
	struct mmp_counters now;
	int err = mmp_space_counters(s, &now);

	if (!err)
		bench_counters_sub(out, &now, before);
	return err;
}

/*
 * Map @bytes at FLF_ADDR populated with folios of @c's order, each PTE-mapped,
 * and check that it came out so: a fallback to smaller folios or a populate
 * that ran short would measure something else.
 */
static int flf_populate(struct mmp_space *s, const struct flf_case *c, uint64_t bytes)
{
	const uint64_t folios = bytes >> (MMP_PAGE_SHIFT + c->order);
	struct mmp_counters c0, d;
	struct mmp_space_stat st0, st;
	uint64_t addr = FLF_ADDR;
	int err;

	err = mmp_space_counters(s, &c0);
	if (!err)
		err = mmp_space_stat(s, &st0);
	if (!err)
		err = mmp_mmap(s, FLF_ADDR, bytes, RW, MMP_MAP_FIXED | MMP_MAP_POPULATE, &addr);
	/* The PMD-mapped THPs become PTE-mapped: one page read-only and back splits the PMD. */
	for (uint64_t a = addr; !err && c->order == MMP_PMD_ORDER && a < addr + bytes;
	     a += MMP_PMD_SIZE) {
		err = mmp_mprotect(s, a, MMP_PAGE_SIZE, MMP_PROT_READ);
		if (!err)
			err = mmp_mprotect(s, a, MMP_PAGE_SIZE, RW);
	}
	if (!err)
		err = flf_counter_delta(s, &c0, &d);
	if (!err)
		err = mmp_space_stat(s, &st);
	if (err)
		return err;
	if (d.v[MMP_C_FOLIO_ALLOC_O0 + c->order] != folios ||
	    st.rss_anon_pages - st0.rss_anon_pages != bytes / MMP_PAGE_SIZE ||
	    st.nr_vmas != st0.nr_vmas + 1 || d.v[MMP_C_FOLIO_SPLIT] ||
	    (c->order == MMP_PMD_ORDER && d.v[MMP_C_PMD_SPLIT] != bytes / MMP_PMD_SIZE)) {
		fprintf(stderr, "fork-large-folio: %s: populated %llu folios of order %u (want "
			"%llu), %llu PMD splits, %llu VMAs\n", c->name,
			(unsigned long long)d.v[MMP_C_FOLIO_ALLOC_O0 + c->order], c->order,
			(unsigned long long)folios, (unsigned long long)d.v[MMP_C_PMD_SPLIT],
			(unsigned long long)(st.nr_vmas - st0.nr_vmas));
		return -EPROTO;
	}
	return 0;
}

/* One sample on @side: populate, then fork, the child's exit, munmap, each timed. */
static int flf_sample(struct flf_side *side, const struct flf_case *c, uint64_t bytes,
		      bool count)
{
	struct mmp_space *s = side->env.space, *child = NULL;
	struct mmp_counters c0, cc, d;
	double t0, t1, t2, t3;
	int err, err2;

	err = flf_populate(s, c, bytes);
	if (!err)
		err = mmp_space_counters(s, &c0);
	if (err)
		return err;
	t0 = bench_now();
	err = mmp_fork(s, &child);
	t1 = bench_now();
	if (err)
		return err;
	/* The fork's work: reading and write-protecting the parent's entries, writing the child's. */
	err = flf_counter_delta(s, &c0, &d);
	if (!err)
		err = mmp_space_counters(child, &cc);
	t2 = bench_now();
	err2 = mmp_space_destroy(child);
	t3 = bench_now();
	if (err || err2)
		return err ? err : err2;
	side->s[FLF_FORK] = t1 - t0;
	side->s[FLF_EXIT] = t3 - t2;
	if (count)
		for (int k = 0; k < MMP_NR_COUNTERS; k++)
			side->c[FLF_FORK].v[k] = d.v[k] + cc.v[k];

	/* The child is gone: the parent maps every folio alone, and munmap frees them. */
	err = mmp_space_counters(s, &c0);
	if (err)
		return err;
	t0 = bench_now();
	err = mmp_munmap(s, FLF_ADDR, bytes);
	t1 = bench_now();
	if (!err && count)
		err = flf_counter_delta(s, &c0, &side->c[FLF_MUNMAP]);
	side->s[FLF_MUNMAP] = t1 - t0;
	return err;
}

/* One sample of each side, in turn first; their times go to @pairs. */
static int flf_pair(struct flf_side *side, const struct flf_case *c, uint64_t bytes, bool count,
		    struct bench_pairs *pairs)
{
	int err = 0;

	for (int k = 0; k < 2 && !err; k++)
		err = flf_sample(&side[k ^ (int)(pairs[0].n % 2)], c, bytes, count);
	for (int op = 0; op < FLF_NR_OPS && !err; op++)
		err = bench_pairs_add(&pairs[op], side[0].s[op], side[1].s[op]);
	return err;
}

/* Calls of the rmap helpers: one per PTE unbatched, one per batch batched (large folios). */
static uint64_t flf_rmap_calls(const struct mmp_counters *c, unsigned int order, uint64_t pages,
			       bool batched)
{
	return batched && order ? c->v[MMP_C_PTE_BATCH] : pages;
}

static void flf_report(const struct mmp_seed_opts *opts, const char *arch,
		       const struct flf_case *c, int op, struct flf_side *side,
		       const struct bench_pairs *pairs, uint64_t bytes)
{
	const struct flf_claim *cl = op == FLF_FORK ? &c->fork : &c->munmap;
	struct mmp_seed_result base = { .label = "per PTE" }, opt = { .label = "batched" };
	struct mmp_seed_claim claim = { 0 };
	struct bench_ci ci, exit_ci;
	const uint64_t pages = bytes / MMP_PAGE_SIZE;
	uint64_t rmap[2];
	double model[2];
	char name[48], extra[768], buf[64];

	bench_pairs_ci(&pairs[op], &ci);
	bench_pairs_ci(&pairs[FLF_EXIT], &exit_ci);
	base.seconds = bench_median(pairs[op].base, pairs[op].n);
	opt.seconds = bench_median(pairs[op].opt, pairs[op].n);
	base.counters = side[0].c[op];
	opt.counters = side[1].c[op];
	for (int v = 0; v < 2; v++) {
		model[v] = bench_modeled_s(side[v].env.space, &side[v].c[op]);
		rmap[v] = flf_rmap_calls(&side[v].c[op], c->order, pages, v);
	}
	if (cl->what) {
		claim.what = cl->what;
		claim.published = cl->published;
		claim.verdict = bench_verdict_at_least(&ci, cl->at_least);
	}
	snprintf(name, sizeof(name), "%s %s", c->name, op == FLF_FORK ? "fork" : "munmap");

	if (!opts->json) {
		printf("fork-large-folio [%s, %s folios, %s of %llu MiB]%s: %zu alternating "
		       "samples a side\n", arch, c->name, op == FLF_FORK ? "fork" : "munmap",
		       (unsigned long long)(bytes / BENCH_MIB), mmp_seed_quick_tag(opts),
		       pairs[op].n);
		printf("  %-7s per PTE %.3f ms, batched %.3f ms: %s   modeled %.3f -> %.3f ms\n",
		       op == FLF_FORK ? "fork:" : "munmap:", base.seconds * 1e3, opt.seconds * 1e3,
		       bench_ci_str(&ci, buf, sizeof(buf)), model[0] * 1e3, model[1] * 1e3);
		if (op == FLF_FORK)
			printf("  child exit: per PTE %.3f ms, batched %.3f ms: %s\n",
			       bench_median(pairs[FLF_EXIT].base, pairs[FLF_EXIT].n) * 1e3,
			       bench_median(pairs[FLF_EXIT].opt, pairs[FLF_EXIT].n) * 1e3,
			       bench_ci_str(&exit_ci, buf, sizeof(buf)));
		printf("  rmap calls %llu -> %llu: each one update of the folio-wide "
		       "_large_mapcount (small folios: none), beside %llu per-page _mapcount "
		       "updates on either side\n", (unsigned long long)rmap[0],
		       (unsigned long long)rmap[1], (unsigned long long)pages);
	}
	snprintf(extra, sizeof(extra),
		 "\"op\":\"%s\",\"folio_kib\":%lu,\"bytes\":%llu,"
		 "\"seconds_is\":\"median of one %s\","
		 "\"baseline_rmap_calls\":%llu,\"optimized_rmap_calls\":%llu,"
		 "\"baseline_modeled_seconds\":%.6g,\"optimized_modeled_seconds\":%.6g",
		 op == FLF_FORK ? "fork" : "munmap", bench_order_kib(c->order),
		 (unsigned long long)bytes, op == FLF_FORK ? "mmp_fork" : "mmp_munmap",
		 (unsigned long long)rmap[0], (unsigned long long)rmap[1], model[0], model[1]);
	if (op == FLF_FORK) {
		size_t off = strlen(extra);

		bench_append(extra, sizeof(extra), &off,
			     ",\"baseline_exit_seconds\":%.6g,\"optimized_exit_seconds\":%.6g,"
			     "\"exit_ratio\":%.6g,\"exit_ratio_ci\":[%.6g,%.6g]",
			     bench_median(pairs[FLF_EXIT].base, pairs[FLF_EXIT].n),
			     bench_median(pairs[FLF_EXIT].opt, pairs[FLF_EXIT].n),
			     exit_ci.ratio, exit_ci.lo, exit_ci.hi);
	}
	mmp_seed_report(opts, "fork-large-folio", arch, name, &base, &opt, &ci, &claim, extra);
}

static int flf_case_run(const struct mmp_seed_opts *opts, const char *arch,
			struct mmp_phys *phys, const void *arg)
{
	const struct flf_case *c = arg;
	const uint64_t bytes = opts->quick ? FLF_BYTES_QUICK : FLF_BYTES;
	const double budget = opts->quick ? FLF_BUDGET_QUICK : FLF_BUDGET;
	struct bench_pairs pairs[FLF_NR_OPS];
	struct flf_side side[2];	/* 0: per PTE, 1: batched */
	int err = 0;

	memset(side, 0, sizeof(side));
	for (int op = 0; op < FLF_NR_OPS; op++)
		bench_pairs_init(&pairs[op], 0, FLF_MAX_PAIRS, budget);
	/* Neither path needs a CPU: populate, fork and munmap are calls on the space. */
	for (int v = 0; v < 2 && !err; v++) {
		err = bench_env_create(&side[v].env, phys, 0, arch,
				       c->order ? BENCH_THP(c->order) : 0);
		if (!err)
			err = mmp_space_set_opt(side[v].env.space, MMP_OPT_PTE_BATCH, v);
		if (!err)
			err = bench_env_detach(&side[v].env);
	}
	/* A warm-up pair, uncounted, and both spaces sound after it. */
	if (!err)
		err = flf_pair(side, c, bytes, false, pairs);
	for (int v = 0; v < 2 && !err; v++)
		err = mmp_space_verify(side[v].env.space);
	for (int op = 0; op < FLF_NR_OPS; op++) {
		pairs[op].n = 0;
		pairs[op].t0 = bench_now();
	}
	while (!err && (bench_pairs_more(&pairs[FLF_FORK]) || bench_pairs_more(&pairs[FLF_MUNMAP])))
		err = flf_pair(side, c, bytes, pairs[0].n == 0, pairs);
	if (!err) {
		flf_report(opts, arch, c, FLF_FORK, side, pairs, bytes);
		if (!opts->json)
			putchar('\n');
		flf_report(opts, arch, c, FLF_MUNMAP, side, pairs, bytes);
	}
	for (int v = 0; v < 2; v++)
		bench_env_destroy(&side[v].env);
	for (int op = 0; op < FLF_NR_OPS; op++)
		bench_pairs_free(&pairs[op]);
	return err;
}

extern const struct mmp_seed mmp_seed_fork_large_folio;

/* The cases, under a line saying what the two sides are. */
static int flf_arch(const struct mmp_seed_opts *opts, const char *arch)
{
	if (!opts->json)
		printf("fork-large-folio [%s]: per PTE (MMP_OPT_PTE_BATCH 0) against batched "
		       "folio_pte_batch; times are medians of one call\n\n", arch);
	return mmp_seed_run_cases(&mmp_seed_fork_large_folio, opts, arch);
}

const struct mmp_seed mmp_seed_fork_large_folio = {
	.name = "fork-large-folio",
	.title = "fork and munmap of PTE-mapped large folios, batched against one PTE at a time",
	.archs = (const char *const[]){ "x86_64", "arm64", NULL },
	.run_arch = flf_arch,
	MMP_SEED_CASES(flf_cases),
	/* One side's mapping and the child's tables at a time, and room for 2 MiB blocks. */
	.phys_bytes = 2 * FLF_BYTES + 16 * BENCH_MIB,
	.phys_bytes_quick = 2 * FLF_BYTES_QUICK + 16 * BENCH_MIB,
	.run_case = flf_case_run,
};
