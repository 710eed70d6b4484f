/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "mprotect-batch" (Dev Jain, "mm: Optimize mprotect() by PTE-batching",
 * 6.17, cac1db8c3aad): 1 GiB toggled read-only and read-write 40 times on an
 * Apple M3, 64K mTHP 2.0 -> 0.7 s, PTE-mapped THP 2.1 -> 0.65 s, 4K pages
 * 1.0 -> 1.1 s. The 4K slowdown, measured on AMD Milan from 6.16 to 6.17 (Luke
 * Yang), ns per mprotect call: 400 KiB 3,453 -> 5,993, 4000 KiB 18,804 ->
 * 44,116; the fix that takes a small folio's entry through a branch of its own
 * (Pedro Falcato, 7.1 in the release table) 85,967 -> 73,374 ns.
 *
 * Each variant is a space at its release (MMP_OPT_KERNEL_VERSION): 6.16 one
 * entry at a time, 6.17 batched, 7.1 with the small-folio branch. Samples of
 * the two alternate. Beside the time ratios, the instruction ratios of the same
 * releases from bench/icount/icount-baseline.txt (callgrind, deterministic),
 * where that file and phase are found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "seeds.h"

#define MB_ADDR		(1ULL << 30)	/* PMD aligned, for the THPs */
#define MB_PMD		(2 * BENCH_MIB)
#define MB_BUDGET	0.4		/* seconds per case, beyond BENCH_MIN_SAMPLES pairs */
#define MB_BUDGET_QUICK	0.04
#define MB_MAX_PAIRS	400

#ifndef MMP_ICOUNT_BASELINE
#define MMP_ICOUNT_BASELINE	"bench/icount/icount-baseline.txt"
#endif

#define REL(a, b)	MMP_KERNEL_VERSION(a, b, 0)

enum mb_kind { MB_4K, MB_64K, MB_PTE_THP };

struct mb_case {
	const char *name;
	enum mb_kind kind;
	uint64_t bytes, bytes_quick;
	int toggles, toggles_quick;	/* read-only + read-write calls per sample */
	long base_rel, opt_rel;
	bool below;			/* the claim is a regression: ratio < target */
	double target;
	const char *what, *published;
	const char *icount_base, *icount_opt;	/* phases of icount-baseline.txt, or NULL */
};

static const struct mb_case mb_cases[] = {
	{ "64K mTHP, 6.16 -> 6.17", MB_64K, 32 * BENCH_MIB, 8 * BENCH_MIB, 4, 2,
	  REL(6, 16), REL(6, 17), false, 2.0 / 0.7, "time ratio >= 2.86x",
	  "2.86x (M3, 2.0 -> 0.7 s)", "mprotect_6_16-64k", "mprotect-64k" },
	{ "PTE-mapped THP, 6.16 -> 6.17", MB_PTE_THP, 32 * BENCH_MIB, 8 * BENCH_MIB, 4, 2,
	  REL(6, 16), REL(6, 17), false, 2.1 / 0.65, "time ratio >= 3.23x",
	  "3.23x (M3, 2.1 -> 0.65 s)", NULL, NULL },
	{ "4K, 6.16 -> 6.17", MB_4K, 32 * BENCH_MIB, 8 * BENCH_MIB, 4, 2,
	  REL(6, 16), REL(6, 17), true, 1.0, "regression: time ratio < 1.0x",
	  "0.91x (M3, 1.0 -> 1.1 s)", "mprotect_6_16-4k", "mprotect-4k" },
	{ "4K 400 KiB calls, 6.16 -> 6.17", MB_4K, 400 * BENCH_KIB, 400 * BENCH_KIB, 100, 20,
	  REL(6, 16), REL(6, 17), true, 3453.0 / 5993, "regression: time ratio < 0.58x",
	  "0.58x (Milan, 3,453 -> 5,993 ns)", "mprotect_6_16-4k", "mprotect-4k" },
	{ "4K 4000 KiB calls, 6.16 -> 6.17", MB_4K, 4000 * BENCH_KIB, 4000 * BENCH_KIB, 10, 2,
	  REL(6, 16), REL(6, 17), true, 18804.0 / 44116, "regression: time ratio < 0.43x",
	  "0.43x (Milan, 18,804 -> 44,116 ns)", "mprotect_6_16-4k", "mprotect-4k" },
	{ "4K, 6.17 -> 7.1", MB_4K, 32 * BENCH_MIB, 8 * BENCH_MIB, 4, 2,
	  REL(6, 17), REL(7, 1), false, 1.0, "the fix is faster: time ratio > 1.0x",
	  "1.17x (85,967 -> 73,374 ns)", "mprotect-4k", "mprotect_7_1-4k" },
};

struct mb_side {
	struct bench_env env;
	uint64_t addr;
	uint64_t folios;		/* of the case's kind, faulted (and split) at setup */
	struct mmp_counters counters;	/* of the first counted sample */
	double secs;			/* of the last sample */
};

/*
 * Instructions per page of @phase on @arch from the icount baseline at @path:
 * 0, or -ENOENT when the file or the line is not there.
 */
static int mb_icount(const char *path, const char *arch, const char *phase, double *out)
{
	char line[256], a[64], p[64];
	FILE *f = fopen(path, "r");
	int err = -ENOENT;
	double v;

	if (!f)
		return -ENOENT;
	while (err && fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%63s %63s %lf", a, p, &v) == 3 && !strcmp(a, arch) &&
		    !strcmp(p, phase)) {
			*out = v;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

static const char *mb_icount_path(void)
{
	const char *env = getenv("MMPRIM_ICOUNT_BASELINE");

	return env && *env ? env : MMP_ICOUNT_BASELINE;
}

static const char *mb_release(long v, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u", (unsigned int)(v >> 16) & 0xff, (unsigned int)(v >> 8) & 0xff);
	return buf;
}

/* A space at @release with the case's memory mapped at MB_ADDR and faulted in. */
static int mb_side_setup(struct mb_side *side, struct mmp_phys *phys, const char *arch,
			 const struct mb_case *c, long release, uint64_t bytes)
{
	struct mmp_counters c0, c1;
	struct mmp_space *s;
	int err;

	err = bench_env_create(&side->env, phys, 0, arch, c->kind == MB_64K ? BENCH_THP(4) : 0);
	if (err)
		return err;
	s = side->env.space;
	err = mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, release);
	mmp_space_counters(s, &c0);
	if (!err)
		err = mmp_mmap(s, MB_ADDR, bytes, RW, MMP_MAP_FIXED, &side->addr);
	if (!err && c->kind == MB_PTE_THP)
		err = mmp_madvise(s, side->addr, bytes, MMP_MADV_HUGEPAGE);
	if (!err)
		err = mmp_memset(side->env.cpu, side->addr, 0x5a, bytes);
	/*
	 * A THP turns PTE-mapped when an mprotect covers part of it: one page
	 * read-only and back splits the PMD, keeps the folio whole, and the
	 * VMAs merge again.
	 */
	for (uint64_t off = 0; !err && c->kind == MB_PTE_THP && off < bytes; off += MB_PMD) {
		err = mmp_mprotect(s, side->addr + off, BENCH_KIB * 4, MMP_PROT_READ);
		if (!err)
			err = mmp_mprotect(s, side->addr + off, BENCH_KIB * 4, RW);
	}
	mmp_space_counters(s, &c1);
	if (c->kind == MB_PTE_THP) {
		uint64_t thps = c1.v[MMP_C_FAULT_HUGE_ANON] - c0.v[MMP_C_FAULT_HUGE_ANON];
		uint64_t split = c1.v[MMP_C_PMD_SPLIT] - c0.v[MMP_C_PMD_SPLIT];
		uint64_t whole = c1.v[MMP_C_FOLIO_SPLIT] - c0.v[MMP_C_FOLIO_SPLIT];
		struct mmp_space_stat st;

		/* Split to PTEs, the folios whole, one VMA again. */
		side->folios = whole ? 0 : BENCH_MIN(thps, split);
		if (!err && (mmp_space_stat(s, &st) || st.nr_vmas != 1))
			side->folios = 0;
	} else {
		side->folios = c1.v[c->kind == MB_64K ? MMP_C_FOLIO_ALLOC_O4 : MMP_C_FOLIO_ALLOC_O0] -
			       c0.v[c->kind == MB_64K ? MMP_C_FOLIO_ALLOC_O4 : MMP_C_FOLIO_ALLOC_O0];
	}
	if (!err)
		err = bench_env_detach(&side->env);
	return err;
}

/* One sample: @toggles times read-only then read-write, timed. */
static int mb_sample(struct mb_side *side, uint64_t bytes, int toggles, bool count)
{
	struct mmp_space *s = side->env.space;
	struct mmp_counters c0, c1;
	double t0;
	int err = bench_env_attach(&side->env);

	mmp_space_counters(s, &c0);
	t0 = bench_now();
	for (int i = 0; i < toggles && !err; i++) {
		err = mmp_mprotect(s, side->addr, bytes, MMP_PROT_READ);
		if (!err)
			err = mmp_mprotect(s, side->addr, bytes, RW);
	}
	side->secs = bench_now() - t0;
	mmp_space_counters(s, &c1);
	if (count)
		bench_counters_sub(&side->counters, &c1, &c0);
	bench_env_detach(&side->env);
	return err;
}

static int mb_case_run(const struct mmp_seed_opts *opts, const char *arch, struct mmp_phys *phys,
		       const void *arg)
{
	const struct mb_case *c = arg;
	const uint64_t bytes = opts->quick ? c->bytes_quick : c->bytes;
	const int toggles = opts->quick ? c->toggles_quick : c->toggles, calls = 2 * toggles;
	const uint64_t expect = bytes / (c->kind == MB_64K ? 64 * BENCH_KIB :
					c->kind == MB_PTE_THP ? MB_PMD : 4 * BENCH_KIB);
	char rb[16], ro[16], buf[64], note[160], extra[1536], icount_json[512];
	const char *icount_path = mb_icount_path();
	struct mmp_seed_result base = { 0 }, opt = { 0 };
	struct mmp_seed_claim claim = { 0 };
	struct mb_side side[2];
	struct bench_pairs pairs;
	struct bench_ci ci;
	double ins[2] = { 0, 0 }, ns[2];
	bool have_icount = false;
	int err = 0;

	memset(side, 0, sizeof(side));
	bench_pairs_init(&pairs, BENCH_MIN_SAMPLES, MB_MAX_PAIRS,
			 opts->quick ? MB_BUDGET_QUICK : MB_BUDGET);
	err = mb_side_setup(&side[0], phys, arch, c, c->base_rel, bytes);
	if (!err)
		err = mb_side_setup(&side[1], phys, arch, c, c->opt_rel, bytes);
	/* A warm-up sample of each, uncounted. */
	for (int v = 0; v < 2 && !err; v++)
		err = mb_sample(&side[v], bytes, toggles, false);
	/* Alternating, each pair started by the other side. */
	while (!err && bench_pairs_more(&pairs)) {
		for (int k = 0; k < 2 && !err; k++) {
			int v = k ^ (int)(pairs.n % 2);

			err = mb_sample(&side[v], bytes, toggles, pairs.n == 0);
		}
		if (!err)
			err = bench_pairs_add(&pairs, side[0].secs, side[1].secs);
	}
	if (err)
		goto out;

	bench_pairs_ci(&pairs, &ci);
	base.label = mb_release(c->base_rel, rb, sizeof(rb));
	opt.label = mb_release(c->opt_rel, ro, sizeof(ro));
	base.seconds = bench_median(pairs.base, pairs.n);
	opt.seconds = bench_median(pairs.opt, pairs.n);
	base.counters = side[0].counters;
	opt.counters = side[1].counters;
	ns[0] = base.seconds * 1e9 / calls;
	ns[1] = opt.seconds * 1e9 / calls;

	claim.what = c->what;
	claim.published = c->published;
	claim.verdict = c->below ? bench_verdict_below(ci.lo, ci.hi, ci.samples, c->target)
				 : bench_verdict_at_least(&ci, c->target);
	if (side[0].folios != expect || side[1].folios != expect) {
		snprintf(note, sizeof(note), "no verdict: %llu and %llu of the %llu folios the "
			 "case needs", (unsigned long long)side[0].folios,
			 (unsigned long long)side[1].folios, (unsigned long long)expect);
		claim.verdict = BENCH_NO_VERDICT;
		claim.note = note;
	}

	if (c->icount_base && !mb_icount(icount_path, arch, c->icount_base, &ins[0]) &&
	    !mb_icount(icount_path, arch, c->icount_opt, &ins[1]) && ins[1] > 0)
		have_icount = true;
	if (have_icount)
		snprintf(icount_json, sizeof(icount_json),
			 "\"icount_file\":\"%s\",\"baseline_icount_phase\":\"%s\","
			 "\"optimized_icount_phase\":\"%s\",\"baseline_instructions_per_page\":%.1f,"
			 "\"optimized_instructions_per_page\":%.1f,\"instruction_ratio\":%.4f",
			 icount_path, c->icount_base, c->icount_opt, ins[0], ins[1],
			 ins[0] / ins[1]);
	else
		snprintf(icount_json, sizeof(icount_json),
			 "\"icount_file\":null,\"instruction_ratio\":null");

	if (!opts->json) {
		printf("mprotect-batch [%s, %s]%s: %llu KiB, %d x (read-only, read-write) a sample, "
		       "%zu alternating pairs\n", arch, c->name, mmp_seed_quick_tag(opts),
		       (unsigned long long)(bytes / BENCH_KIB), toggles, pairs.n);
		printf("  per mprotect call: %s %.0f ns, %s %.0f ns: %s\n", base.label, ns[0],
		       opt.label, ns[1], bench_ci_str(&ci, buf, sizeof(buf)));
		printf("  per call: pte_batch %.1f -> %.1f, ptep_get %.0f -> %.0f, pte_read %.0f -> "
		       "%.0f, pte_write %.0f -> %.0f, contpte unfold %.1f -> %.1f, fold %.1f -> "
		       "%.1f, TLB flushes %.1f -> %.1f\n",
		       (double)base.counters.v[MMP_C_PTE_BATCH] / calls,
		       (double)opt.counters.v[MMP_C_PTE_BATCH] / calls,
		       (double)base.counters.v[MMP_C_PTEP_GET] / calls,
		       (double)opt.counters.v[MMP_C_PTEP_GET] / calls,
		       (double)base.counters.v[MMP_C_PTE_READ] / calls,
		       (double)opt.counters.v[MMP_C_PTE_READ] / calls,
		       (double)base.counters.v[MMP_C_PTE_WRITE] / calls,
		       (double)opt.counters.v[MMP_C_PTE_WRITE] / calls,
		       (double)base.counters.v[MMP_C_CONTPTE_UNFOLD] / calls,
		       (double)opt.counters.v[MMP_C_CONTPTE_UNFOLD] / calls,
		       (double)base.counters.v[MMP_C_CONTPTE_FOLD] / calls,
		       (double)opt.counters.v[MMP_C_CONTPTE_FOLD] / calls,
		       (double)(base.counters.v[MMP_C_TLB_FLUSH_RANGE] +
				base.counters.v[MMP_C_TLB_FLUSH_ALL]) / calls,
		       (double)(opt.counters.v[MMP_C_TLB_FLUSH_RANGE] +
				opt.counters.v[MMP_C_TLB_FLUSH_ALL]) / calls);
		if (have_icount)
			printf("  instructions per page (icount, read-only direction, 16 MiB): "
			       "%s %.1f, %s %.1f: %.2fx (%s)\n", c->icount_base, ins[0],
			       c->icount_opt, ins[1], ins[0] / ins[1], icount_path);
		else if (c->icount_base)
			printf("  instructions per page: %s has no %s/%s for %s\n", icount_path,
			       c->icount_base, c->icount_opt, arch);
		else
			printf("  instructions per page: no icount phase for this case\n");
		printf("  (seconds: one sample, the median; counters of the first sample)\n");
	}
	snprintf(extra, sizeof(extra),
		 "\"bytes\":%llu,\"calls_per_sample\":%d,\"baseline_release\":\"%s\","
		 "\"optimized_release\":\"%s\",\"baseline_ns_per_call\":%.1f,"
		 "\"optimized_ns_per_call\":%.1f,\"folios\":[%llu,%llu],\"folios_expected\":%llu,"
		 "\"folio_kind\":\"%s\",%s",
		 (unsigned long long)bytes, calls, base.label, opt.label, ns[0], ns[1],
		 (unsigned long long)side[0].folios, (unsigned long long)side[1].folios,
		 (unsigned long long)expect,
		 c->kind == MB_64K ? "64K" : c->kind == MB_PTE_THP ? "PTE-mapped THP" : "4K",
		 icount_json);
	mmp_seed_report(opts, "mprotect-batch", arch, c->name, &base, &opt, &ci, &claim, extra);
out:
	for (int v = 0; v < 2; v++)
		bench_env_destroy(&side[v].env);
	bench_pairs_free(&pairs);
	return err;
}

const struct mmp_seed mmp_seed_mprotect_batch = {
	.name = "mprotect-batch",
	.title = "mprotect toggles of 64K, PTE-mapped THP and 4K folios at 6.16, 6.17 and 7.1",
	.archs = (const char *const[]){ "x86_64", "arm64", NULL },
	MMP_SEED_CASES(mb_cases),
	.phys_bytes = 96 * BENCH_MIB,
	.phys_bytes_quick = 32 * BENCH_MIB,
	.run_case = mb_case_run,
};
