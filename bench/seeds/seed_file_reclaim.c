/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "file-reclaim" (Baolin Wang, "mm: support batched checking of the
 * young flag and batched unmapping for file large folios", v6, merged for
 * 7.0): reclaim of clean, PTE-mapped large file folios. try_to_unmap_one
 * cleared and flushed the PTEs of a file folio one at a time; from 7.0
 * folio_unmap_pte_batch batches them like lazyfree anonymous folios, one
 * clear and one ranged flush per folio (per contpte block on arm64, which the
 * single-entry path must unfold first). The series reports, on a 32-core
 * arm64 reclaiming 8 of 10 GiB of clean file folios, 1.018 s -> 0.249 s for
 * the batched unmap (4.09x), and 50%+ on x86.
 *
 * Here: a regular file written in 64 KiB pieces (64 KiB page-cache folios)
 * and synced clean, mapped shared and read through (fault-around maps each
 * folio's 16 PTEs at once), then mmp_reclaim() is timed with
 * MMP_OPT_KERNEL_VERSION 6.18 (one PTE at a time) against 7.0 (batched),
 * alternating in one process on one phys. Reclaim drops every folio, so each
 * iteration writes the file again first (a fault would read it back in
 * order-0 folios: the model's read-around has no large-folio ramp). Not reproduced: the series' other half, the
 * batched young-flag checks (clear_flush_young_ptes: 1.518 -> 1.018 s), since
 * mmp_reclaim() takes the folios regardless of their references, as
 * MADV_PAGEOUT does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "seeds.h"

#define FR_BYTES	(64 * BENCH_MIB)
#define FR_BYTES_QUICK	(8 * BENCH_MIB)
#define FR_MIN_RUNS	10	/* per side, in pairs */
#define FR_MAX_RUNS	40
#define FR_BUDGET	10.0	/* seconds per back end; FR_MIN_RUNS pairs whatever they take */
#define FR_BUDGET_QUICK	0.3
#define FR_FOLIO	(64 * 1024)

/* The seed's figures for the batched unmap. */
#define SEED_ARM64_BEFORE	1.018
#define SEED_ARM64_AFTER	0.249
#define SEED_X86_TARGET		1.5	/* "50%+" read as 1.5x the speed */

struct fr_side {
	struct bench_env env;
	long version;
};

static char fr_buf[FR_FOLIO];

/*
 * Fill the page cache with clean 64 KiB folios, map them through the
 * mapping, then time one mmp_reclaim() of it.
 */
static int read_and_reclaim(struct fr_side *side, struct mmp_file *file, uint64_t addr,
			    uint64_t bytes, double *seconds, struct mmp_counters *delta)
{
	struct mmp_counters before, after;
	char b;
	double t0;
	int err, err2;

	err = bench_env_attach(&side->env);
	if (err)
		return err;
	for (uint64_t off = 0; off < bytes && !err; off += FR_FOLIO)
		err = mmp_file_write(file, off, fr_buf, FR_FOLIO);
	if (!err)
		err = mmp_msync(side->env.space, addr, bytes, MMP_MS_SYNC);
	for (uint64_t off = 0; off < bytes && !err; off += MMP_PAGE_SIZE)
		err = mmp_read(side->env.cpu, addr + off, &b, 1);
	if (!err) {
		mmp_space_counters(side->env.space, &before);
		t0 = bench_now();
		err = mmp_reclaim(side->env.space);
		*seconds = bench_now() - t0;
		mmp_space_counters(side->env.space, &after);
		bench_counters_sub(delta, &after, &before);
	}
	err2 = bench_env_detach(&side->env);
	return err ? err : err2;
}

static int side_init(struct fr_side *side, struct mmp_phys *phys, const char *arch, long version,
		     struct mmp_file *file, uint64_t bytes, uint64_t *addr)
{
	int err = bench_env_create(&side->env, phys, 0, arch, 0);

	if (err)
		return err;
	side->version = version;
	err = mmp_space_set_opt(side->env.space, MMP_OPT_KERNEL_VERSION, version);
	if (!err)
		err = mmp_mmap_file(side->env.space, 0, bytes, MMP_PROT_READ, MMP_MAP_SHARED, file, 0,
				    addr);
	if (!err)
		err = bench_env_detach(&side->env);
	if (err)
		bench_env_destroy(&side->env);
	return err;
}

static int file_reclaim_arch(const struct mmp_seed_opts *opts, const char *arch)
{
	const uint64_t bytes = opts->quick ? FR_BYTES_QUICK : FR_BYTES;
	const double folios = (double)bytes / FR_FOLIO;
	struct mmp_seed_result base = { .label = "6.18 one PTE" };
	struct mmp_seed_result opt = { .label = "7.0 batched" };
	struct mmp_seed_claim claim = { 0 };
	struct fr_side sides[2];
	struct bench_pairs pairs;
	struct mmp_file_stat st;
	struct mmp_file *file;
	struct mmp_phys *phys;
	uint64_t addr[2];
	struct bench_ci ci;
	double bs, os;
	char extra[512];
	bool arm64 = !strncmp(arch, "arm64", 5);
	int err;

	bench_pairs_init(&pairs, FR_MIN_RUNS, FR_MAX_RUNS,
			 opts->quick ? FR_BUDGET_QUICK : FR_BUDGET);
	err = bench_phys_create_warm(2 * bytes + 64 * BENCH_MIB, &phys);
	if (err)
		goto out_pairs;
	err = mmp_file_create(phys, 0, 0, &file);
	if (err)
		goto out_phys;
	memset(fr_buf, 0x5a, FR_FOLIO);
	/* 64 KiB writes make 64 KiB folios (write_begin's folio order follows the length). */
	for (uint64_t off = 0; off < bytes && !err; off += FR_FOLIO)
		err = mmp_file_write(file, off, fr_buf, FR_FOLIO);
	if (!err)
		err = mmp_file_stat(file, &st);
	if (!err && st.nr_folios[4] != bytes / FR_FOLIO)
		err = -EINVAL;	/* not the folios the seed is about */
	if (err)
		goto out_file;
	err = side_init(&sides[0], phys, arch, MMP_KERNEL_VERSION(6, 18, 0), file, bytes, &addr[0]);
	if (err)
		goto out_file;
	err = side_init(&sides[1], phys, arch, MMP_KERNEL_VERSION(7, 0, 0), file, bytes, &addr[1]);
	if (err)
		goto out_base;

	/* A warm-up each (the store read into the cache, the allocator's lists), then alternate. */
	err = read_and_reclaim(&sides[0], file, addr[0], bytes, &bs, &base.counters);
	if (!err)
		err = read_and_reclaim(&sides[1], file, addr[1], bytes, &os, &opt.counters);
	while (!err && bench_pairs_more(&pairs)) {
		int first = pairs.n % 2;

		err = read_and_reclaim(&sides[first], file, addr[first], bytes, first ? &os : &bs,
				       first ? &opt.counters : &base.counters);
		if (!err)
			err = read_and_reclaim(&sides[!first], file, addr[!first], bytes,
					       first ? &bs : &os,
					       first ? &base.counters : &opt.counters);
		if (!err)
			err = bench_pairs_add(&pairs, bs, os);
	}
	if (err)
		goto out_opt;
	bench_pairs_ci(&pairs, &ci);
	base.seconds = bench_median(pairs.base, pairs.n);
	opt.seconds = bench_median(pairs.opt, pairs.n);
	if (arm64) {
		claim.what = "time ratio >= 4.09x";
		claim.published = "4.09x (1.018 -> 0.249 s, 32-core arm64)";
		claim.verdict = bench_verdict_at_least(&ci, SEED_ARM64_BEFORE / SEED_ARM64_AFTER);
	} else if (!strncmp(arch, "x86_64", 6)) {
		claim.what = "time ratio >= 1.5x";
		claim.published = "50%+ (x86)";
		claim.verdict = bench_verdict_at_least(&ci, SEED_X86_TARGET);
	}
	if (!opts->json) {
		printf("file-reclaim [%s]%s: reclaim of %llu MiB of clean 64 KiB file folios, "
		       "PTE-mapped: %s %.4f s, %s %.4f s\n", arch, mmp_seed_quick_tag(opts),
		       (unsigned long long)(bytes / BENCH_MIB), base.label, base.seconds, opt.label,
		       opt.seconds);
		printf("  per folio: %.2f and %.2f ranged TLB flushes, %.2f and %.2f PTEs read, "
		       "%.2f and %.2f contpte unfolds (medians of %zu alternating runs per side; "
		       "counters of one run)\n",
		       base.counters.v[MMP_C_TLB_FLUSH_RANGE] / folios,
		       opt.counters.v[MMP_C_TLB_FLUSH_RANGE] / folios,
		       base.counters.v[MMP_C_PTE_READ] / folios, opt.counters.v[MMP_C_PTE_READ] / folios,
		       base.counters.v[MMP_C_CONTPTE_UNFOLD] / folios,
		       opt.counters.v[MMP_C_CONTPTE_UNFOLD] / folios, pairs.n);
	}
	snprintf(extra, sizeof(extra),
		 "\"bytes\":%llu,\"folio_kib\":64,\"runs\":%zu,"
		 "\"baseline_flushes_per_folio\":%.3f,\"optimized_flushes_per_folio\":%.3f",
		 (unsigned long long)bytes, pairs.n,
		 base.counters.v[MMP_C_TLB_FLUSH_RANGE] / folios,
		 opt.counters.v[MMP_C_TLB_FLUSH_RANGE] / folios);
	mmp_seed_report(opts, "file-reclaim", arch, NULL, &base, &opt, &ci, &claim, extra);
	if (!opts->json)
		putchar('\n');

out_opt:
	bench_env_destroy(&sides[1].env);
out_base:
	bench_env_destroy(&sides[0].env);
out_file:
	mmp_file_destroy(file);
out_phys:
	mmp_phys_destroy(phys);
out_pairs:
	bench_pairs_free(&pairs);
	return err;
}

static const char *const file_reclaim_archs[] = { "arm64", "x86_64", NULL };

const struct mmp_seed mmp_seed_file_reclaim = {
	.name = "file-reclaim",
	.title = "7.0 batched unmap of large file folios in reclaim: one PTE at a time vs batched",
	.archs = file_reclaim_archs,
	.run_arch = file_reclaim_arch,
};
