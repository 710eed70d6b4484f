/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "mremap" (Dev Jain, "mm: Optimize mremap() by PTE batching"): map 1 MiB
 * at a fixed address, memset it, mremap it to addr + 1 MiB, munmap, 10,000
 * times; on Apple M3 with 64 KiB folios the loop went from 1.9 s to 1.2 s.
 * Baseline is move_ptes one entry at a time (MMP_OPT_PTE_BATCH 0), optimized is
 * mremap_folio_pte_batch. Both run in one process on one phys, alternating in
 * slices. Also with 4 KiB folios (the seed saw no regression) and PMD THPs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "seeds.h"

#define MR_ADDR		(1ULL << 30)
#define MR_ITERS	10000
#define MR_ITERS_QUICK	200
#define MR_SLICES	10
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)

struct mr_case {
	const char *name;	/* folio configuration */
	unsigned int thp;	/* BENCH_THP() mask */
	uint64_t size;		/* bytes mapped and moved */
	bool hugepage;		/* MADV_HUGEPAGE the mapping */
};

static const struct mr_case mr_cases[] = {
	{ "64K folios", BENCH_THP(4), 1 * BENCH_MIB, false },
	{ "4K folios", 0, 1 * BENCH_MIB, false },
	{ "PMD THP", 0, 2 * BENCH_MIB, true },
};

struct mr_side {
	struct bench_env env;
	double loop_s, mremap_s;
	struct mmp_counters loop, mremap;	/* totals over every iteration */
};

/* @n iterations of the seed's loop body on @side. */
static int mr_iterations(struct mr_side *side, const struct mr_case *c, int n)
{
	struct mmp_space *s = side->env.space;
	struct mmp_counters l0, l1, m0, m1, d;
	uint64_t addr, moved;
	double t0, t1, t2;
	int err = 0;

	mmp_space_counters(s, &l0);
	t0 = bench_now();
	for (int i = 0; i < n && !err; i++) {
		err = mmp_mmap(s, MR_ADDR, c->size, RW, MMP_MAP_FIXED, &addr);
		if (!err && c->hugepage)
			err = mmp_madvise(s, addr, c->size, MMP_MADV_HUGEPAGE);
		if (!err)
			err = mmp_memset(side->env.cpu, addr, 0xaa, c->size);
		if (err)
			break;
		mmp_space_counters(s, &m0);
		t1 = bench_now();
		err = mmp_mremap(s, addr, c->size, c->size, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED,
				 addr + c->size, &moved);
		t2 = bench_now();
		mmp_space_counters(s, &m1);
		side->mremap_s += t2 - t1;
		bench_counters_sub(&d, &m1, &m0);
		for (int k = 0; k < MMP_NR_COUNTERS; k++)
			side->mremap.v[k] += d.v[k];
		if (!err)
			err = mmp_munmap(s, moved, c->size);
	}
	side->loop_s += bench_now() - t0;
	mmp_space_counters(s, &l1);
	bench_counters_sub(&d, &l1, &l0);
	for (int k = 0; k < MMP_NR_COUNTERS; k++)
		side->loop.v[k] += d.v[k];
	return err;
}

static double modeled_s(struct mmp_space *s, const struct mmp_counters *c)
{
	double ns = 0;

	mmp_modeled_ns(s, c, &ns);
	return ns * 1e-9;
}

static int mr_case_run(const struct mmp_seed_opts *opts, const char *arch, struct mmp_phys *phys,
		       const struct mr_case *c)
{
	const int iters = opts->quick ? MR_ITERS_QUICK : MR_ITERS;
	struct mr_side side[2];	/* 0: one entry at a time, 1: batched */
	struct mmp_seed_result base = { .label = "unbatched" }, opt = { .label = "batched" };
	char extra[1024], seed[64];
	double model[2], model_loop[2];
	int err = 0;

	memset(side, 0, sizeof(side));
	for (int v = 0; v < 2 && !err; v++) {
		err = bench_env_create(&side[v].env, phys, 0, arch, c->thp);
		if (!err)
			err = mmp_space_set_opt(side[v].env.space, MMP_OPT_PTE_BATCH, v);
		if (!err)
			err = bench_env_detach(&side[v].env);
	}
	/* Alternate slices of the loop so that drift of the host hits both alike. */
	for (int sl = 0; sl < MR_SLICES && !err; sl++) {
		for (int v = 0; v < 2 && !err; v++) {
			err = bench_env_attach(&side[v].env);
			if (!err)
				err = mr_iterations(&side[v], c, iters / MR_SLICES);
			bench_env_detach(&side[v].env);
		}
	}
	if (err)
		goto out;

	for (int v = 0; v < 2; v++) {
		model[v] = modeled_s(side[v].env.space, &side[v].mremap);
		model_loop[v] = modeled_s(side[v].env.space, &side[v].loop);
	}
	base.seconds = side[0].mremap_s;
	opt.seconds = side[1].mremap_s;
	base.counters = side[0].mremap;
	opt.counters = side[1].mremap;

	if (!opts->json) {
		printf("mremap [%s, %s]: %d x (mmap %llu KiB, memset, mremap to +%llu KiB, munmap)\n",
		       arch, c->name, iters, (unsigned long long)(c->size / BENCH_KIB),
		       (unsigned long long)(c->size / BENCH_KIB));
		printf("  whole loop:    unbatched %.3f s, batched %.3f s (%+.1f%%)   "
		       "modeled %.3f s -> %.3f s\n", side[0].loop_s, side[1].loop_s,
		       100.0 * (side[1].loop_s / side[0].loop_s - 1), model_loop[0], model_loop[1]);
		printf("  mremap calls:  unbatched %.3f s, batched %.3f s (%.2fx of the time)   "
		       "modeled %.4f s -> %.4f s\n", side[0].mremap_s, side[1].mremap_s,
		       side[1].mremap_s / side[0].mremap_s, model[0], model[1]);
		printf("  in move_ptes:  ptep_get %.1f -> %.1f, entries read %.1f -> %.1f per call; "
		       "TLB flush ops per mremap %.1f -> %.1f\n",
		       (double)side[0].mremap.v[MMP_C_MOVE_PTES_PTEP_GET] / iters,
		       (double)side[1].mremap.v[MMP_C_MOVE_PTES_PTEP_GET] / iters,
		       (double)side[0].mremap.v[MMP_C_MOVE_PTES_READ] / iters,
		       (double)side[1].mremap.v[MMP_C_MOVE_PTES_READ] / iters,
		       (double)(side[0].mremap.v[MMP_C_TLB_FLUSH_RANGE] +
				side[0].mremap.v[MMP_C_TLB_FLUSH_ALL]) / iters,
		       (double)(side[1].mremap.v[MMP_C_TLB_FLUSH_RANGE] +
				side[1].mremap.v[MMP_C_TLB_FLUSH_ALL]) / iters);
		printf("  (table: seconds in mmp_mremap over the loop; counters of the mremap calls)\n");
	}
	snprintf(seed, sizeof(seed), "mremap");
	snprintf(extra, sizeof(extra),
		 "\"case\":\"%s\",\"iterations\":%d,\"bytes\":%llu,"
		 "\"baseline_loop_seconds\":%.6f,\"optimized_loop_seconds\":%.6f,"
		 "\"baseline_modeled_seconds\":%.6f,\"optimized_modeled_seconds\":%.6f,"
		 "\"baseline_loop_modeled_seconds\":%.6f,\"optimized_loop_modeled_seconds\":%.6f",
		 c->name, iters, (unsigned long long)c->size, side[0].loop_s, side[1].loop_s,
		 model[0], model[1], model_loop[0], model_loop[1]);
	mmp_seed_report(opts, seed, arch, &base, &opt, extra);
	if (!opts->json)
		putchar('\n');
out:
	for (int v = 0; v < 2; v++)
		if (side[v].env.space)
			bench_env_destroy(&side[v].env);
	return err;
}

static int mremap_arch(const struct mmp_seed_opts *opts, const char *arch)
{
	struct mmp_phys *phys = NULL;
	int err = mmp_phys_create(64 * BENCH_MIB, &phys);

	for (size_t i = 0; !err && i < sizeof(mr_cases) / sizeof(mr_cases[0]); i++)
		err = mr_case_run(opts, arch, phys, &mr_cases[i]);
	if (phys)
		mmp_phys_destroy(phys);
	return err;
}

static int mremap_run(const struct mmp_seed_opts *opts)
{
	static const char *const defaults[] = { "arm64", "x86_64", NULL };

	return mmp_seed_for_each_arch(opts, defaults, mremap_arch);
}

const struct mmp_seed mmp_seed_mremap = {
	.name = "mremap",
	.title = "mremap of 1 MiB of 64K folios, batched move_ptes against one entry at a time",
	.run = mremap_run,
};
