/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "page-fault": will-it-scale page_fault1 with 4 KiB folios against 64 KiB
 * mTHP folios. A run maps 128 MiB, writes one byte per 4 KiB page, unmaps; a
 * large folio maps 16 pages per fault, so 1/16 of the faults do the work.
 */
#include <errno.h>
#include <stdio.h>

#include "common.h"
#include "seeds.h"

#define PF_BYTES	(128 * BENCH_MIB)
#define PF_BYTES_QUICK	(16 * BENCH_MIB)
#define PF_MIN_RUNS	10	/* per side, in pairs */
#define PF_MAX_RUNS	40
#define PF_BUDGET	8.0	/* seconds per back end; PF_MIN_RUNS pairs whatever they take */
#define PF_BUDGET_QUICK	0.3
#define PF_OPT_ORDER	4	/* 64 KiB */

/* One page_fault1 iteration: the seconds of mmap + faults + munmap, and its counters. */
static int page_fault1(struct bench_env *env, uint64_t bytes, double *seconds,
		       struct mmp_counters *delta)
{
	static const char one = 1;
	struct mmp_counters before, after;
	uint64_t addr, off;
	double t0;
	int err, err2;

	err = bench_env_attach(env);
	if (err)
		return err;
	mmp_space_counters(env->space, &before);
	t0 = bench_now();
	err = mmp_mmap(env->space, 0, bytes, RW, 0, &addr);
	if (err)
		goto out;
	for (off = 0; off < bytes && !err; off += MMP_PAGE_SIZE)
		err = mmp_write(env->cpu, addr + off, &one, 1);
	err2 = mmp_munmap(env->space, addr, bytes);
	*seconds = bench_now() - t0;
	err = err ? err : err2;
	mmp_space_counters(env->space, &after);
	bench_counters_sub(delta, &after, &before);
out:
	/* One simulated CPU per thread at a time: the other variant attaches next. */
	err2 = bench_env_detach(env);
	return err ? err : err2;
}

static int page_fault_arch(const struct mmp_seed_opts *opts, const char *arch)
{
	const uint64_t bytes = opts->quick ? PF_BYTES_QUICK : PF_BYTES;
	const double pages = bytes / MMP_PAGE_SIZE;
	struct mmp_seed_result base = { .label = "4K folios" };
	struct mmp_seed_result opt = { .label = "64K folios" };
	struct bench_env base_env, opt_env;
	struct bench_pairs pairs;
	struct mmp_phys *phys;
	struct bench_ci ci;
	double faults[2], bs, os;
	char extra[512];
	int err;

	bench_pairs_init(&pairs, PF_MIN_RUNS, PF_MAX_RUNS,
			 opts->quick ? PF_BUDGET_QUICK : PF_BUDGET);
	/* Room for one mapping at a time plus its tables, whatever the folio size. */
	err = bench_phys_create_warm(2 * bytes, &phys);
	if (err)
		goto out_pairs;
	err = bench_env_create(&base_env, phys, 0, arch, 0);
	if (err)
		goto out_phys;
	err = bench_env_create(&opt_env, phys, 0, arch, BENCH_THP(PF_OPT_ORDER));
	if (err)
		goto out_base;
	bench_env_detach(&base_env);
	bench_env_detach(&opt_env);

	/*
	 * A warm-up run each first (caches, the allocator's lists). Then
	 * alternate the variants, in turn first in a pair, so that drift of the
	 * host hits both alike.
	 */
	err = page_fault1(&base_env, bytes, &bs, &base.counters);
	if (!err)
		err = page_fault1(&opt_env, bytes, &os, &opt.counters);
	while (!err && bench_pairs_more(&pairs)) {
		if (pairs.n % 2) {
			err = page_fault1(&opt_env, bytes, &os, &opt.counters);
			if (!err)
				err = page_fault1(&base_env, bytes, &bs, &base.counters);
		} else {
			err = page_fault1(&base_env, bytes, &bs, &base.counters);
			if (!err)
				err = page_fault1(&opt_env, bytes, &os, &opt.counters);
		}
		if (!err)
			err = bench_pairs_add(&pairs, bs, os);
	}
	if (err)
		goto out_opt;
	bench_pairs_ci(&pairs, &ci);
	base.seconds = bench_median(pairs.base, pairs.n);
	opt.seconds = bench_median(pairs.opt, pairs.n);
	/* A 64 KiB folio maps 16 pages per fault: per page touched and per fault differ. */
	faults[0] = base.counters.v[MMP_C_FAULT_ANON] + base.counters.v[MMP_C_FAULT_HUGE_ANON];
	faults[1] = opt.counters.v[MMP_C_FAULT_ANON] + opt.counters.v[MMP_C_FAULT_HUGE_ANON];

	if (!opts->json) {
		printf("page-fault [%s]%s: %s %.4f s (%.0f ns per page touched, %.0f ns per fault), "
		       "%s %.4f s (%.0f ns per page touched, %.0f ns per fault)\n", arch,
		       mmp_seed_quick_tag(opts), base.label, base.seconds,
		       base.seconds * 1e9 / pages, base.seconds * 1e9 / faults[0], opt.label,
		       opt.seconds, opt.seconds * 1e9 / pages, opt.seconds * 1e9 / faults[1]);
		printf("  (%llu MiB mapped, one write per 4 KiB page, unmapped; medians of %zu "
		       "alternating runs per side; %.0f and %.0f faults per run; counters of one "
		       "run)\n", (unsigned long long)(bytes / BENCH_MIB), pairs.n, faults[0],
		       faults[1]);
	}
	snprintf(extra, sizeof(extra),
		 "\"bytes\":%llu,\"runs\":%zu,\"baseline_folio_kib\":4,\"optimized_folio_kib\":%lu,"
		 "\"baseline_ns_per_page\":%.1f,\"optimized_ns_per_page\":%.1f,"
		 "\"baseline_ns_per_fault\":%.1f,\"optimized_ns_per_fault\":%.1f",
		 (unsigned long long)bytes, pairs.n, bench_order_kib(PF_OPT_ORDER),
		 base.seconds * 1e9 / pages, opt.seconds * 1e9 / pages,
		 base.seconds * 1e9 / faults[0], opt.seconds * 1e9 / faults[1]);
	mmp_seed_report(opts, "page-fault", arch, NULL, &base, &opt, &ci, NULL, extra);
	if (!opts->json)
		putchar('\n');

out_opt:
	bench_env_destroy(&opt_env);
out_base:
	bench_env_destroy(&base_env);
out_phys:
	mmp_phys_destroy(phys);
out_pairs:
	bench_pairs_free(&pairs);
	return err;
}

const struct mmp_seed mmp_seed_page_fault = {
	.name = "page-fault",
	.title = "will-it-scale page_fault1: 4 KiB against 64 KiB (mTHP) folios",
	.archs = NULL,		/* every registered back end */
	.run_arch = page_fault_arch,
};
