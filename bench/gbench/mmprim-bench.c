/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmprim-bench: Google Benchmark runs of the core paths, on every back end
 * (`mmprim-bench --help` prints the list below and the options).
 *
 *   page_fault1/<arch>/<folio KiB>  will-it-scale page_fault1: fault 128 MiB in,
 *                                   one byte per 4 KiB page (time: the faults only)
 *   munmap/<arch>/<folio KiB>       munmap of 128 MiB populated (time: the munmap only)
 *   mmap_munmap/<arch>              mmap + munmap of 1 MiB never touched
 *   move_ptes/<arch>/<folio KiB>/<batch>
 *                                   mremap of 1 MiB populated to the next MiB (the
 *                                   seed's loop body), PTE batching off or on
 *   zap/<arch>/<folio KiB>/<batch>  munmap of 16 MiB populated, batching off or on
 *   huge_copy/<order>/<variant>/<n>/<pressure>
 *                                   COW of a cold 2 MiB THP at sub-page n (bench_huge_copy.c)
 *   fault_budget/<arch>/<folio KiB>  fault and munmap per page against the time
 *                                   budgets: the fault above a memset floor, with intervals
 *                                   (bench_fault_budget.c)
 *   vma_scale/..., page_fault_threads/...
 *                                   VMA calls at 1k-65k VMAs, faults from 1 and 2 CPUs
 *                                   (bench_vma.c)
 *
 * Each row carries the library counters per iteration as user counters;
 * --benchmark_format=json gives them as keys of the row.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mmprim/mmprim.h>

#include "bench_fault_budget.h"
#include "bench_vma.h"
#include "common.h"
#include "huge_copy.h"
#include "shim.h"

#define PHYS_BYTES	(512 * BENCH_MIB)
#define FAULT_BYTES	(128 * BENCH_MIB)
#define MMAP_BYTES	(1 * BENCH_MIB)

/* huge_copy iterations at Google Benchmark's default min_time (0.5 s), scaled down for less. */
#define HC_ITERATIONS		40
#define HC_MIN_ITERATIONS	2

static const char usage_text[] =
	"usage: mmprim-bench [--help] [Google Benchmark options]\n"
	"\n"
	"Google Benchmark runs of the core paths, baseline and optimized, on every back end.\n"
	"Each row carries the library's counters per iteration as user counters.\n"
	"\n"
	"BENCHMARKS (name/arguments; select with --benchmark_filter=REGEX)\n"
	"  page_fault1/ARCH/KIB        will-it-scale page_fault1: fault 128 MiB in, one byte per\n"
	"                              4 KiB page, in folios of KIB KiB (time: the faults only)\n"
	"  munmap/ARCH/KIB             munmap of 128 MiB populated in KIB KiB folios\n"
	"  mmap_munmap/ARCH            mmap + munmap of 1 MiB never touched\n"
	"  move_ptes/ARCH/KIB/BATCH    mremap of 1 MiB populated to the next MiB (the mremap\n"
	"                              seed's loop body); BATCH 0 = PTE batching off, 1 = on\n"
	"  zap/ARCH/KIB/BATCH          munmap of 16 MiB populated, batching off or on\n"
	"  huge_copy/ORDER/VARIANT/N/PRESSURE\n"
	"                              COW of a cold 2 MiB THP at sub-page N (0..511, 512 =\n"
	"                              random) with sub-page ORDER (ascending, target-last,\n"
	"                              neighbourhood-last) and copy VARIANT; PRESSURE 1 = a\n"
	"                              sibling core streams through the LLC meanwhile. 40\n"
	"                              iterations each, fewer with --benchmark_min_time below 0.5\n"
	"  fault_budget/ARCH/KIB       x86_64 and arm64: a 4 KiB fault's time above the floor of\n"
	"                              clearing as many cold frames (memset; the space clears\n"
	"                              with the same), and munmap per page, as medians with 95%\n"
	"                              intervals against the time budgets (150 ns above the\n"
	"                              floor; munmap 30 ns with 4 KiB folios, 15 ns with 64 KiB)\n"
	"  vma_scale/...               map, protect-split, unmap and lookup at 1k-65k VMAs\n"
	"  page_fault_threads/...      faults from 1 and 2 CPUs on disjoint halves of one space\n"
	"ARCH is a back end (";

/* One phys for the whole process: creating it is not what we measure. */
static struct mmp_phys *phys;

static void skip(struct mmp_bench_state *st, const char *what, int err)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "%s: %s", what, mmp_strerror(err));
	mmp_bench_skip_with_error(st, msg);
}

/* The folio size the bench was registered with, as a THP mask for bench_env_create(). */
static int folio_thp_mask(struct mmp_bench_state *st, unsigned int *mask)
{
	int order = bench_kib_order(mmp_bench_range(st, 0));

	if (order < 0 || order == 1 || order > MMP_PMD_ORDER)
		return -EINVAL;
	*mask = order ? BENCH_THP(order) : 0;
	return 0;
}

/* Report every counter that moved, averaged per iteration. */
static void report_counters(struct mmp_bench_state *st, const struct mmp_counters *delta)
{
	int i;

	for (i = 0; i < MMP_NR_COUNTERS; i++)
		if (delta->v[i])
			mmp_bench_counter_avg(st, mmp_counter_name(i), delta->v[i]);
}

static void bm_page_fault1(struct mmp_bench_state *st, void *arg)
{
	static const char one = 1;
	struct mmp_counters before, after, delta;
	uint64_t addr, off, pages = 0;
	struct bench_env env;
	double fault_s = 0;
	unsigned int mask;
	int err;

	err = folio_thp_mask(st, &mask);
	if (!err)
		err = bench_env_create(&env, phys, 0, arg, mask);
	if (err) {
		skip(st, "setup", err);
		return;
	}
	mmp_space_counters(env.space, &before);

	while (mmp_bench_keep_running(st)) {
		double t0, t;

		err = mmp_mmap(env.space, 0, FAULT_BYTES, RW, 0, &addr);
		if (err) {
			skip(st, "mmap", err);
			break;
		}
		t0 = bench_now();
		for (off = 0; off < FAULT_BYTES && !err; off += MMP_PAGE_SIZE)
			err = mmp_write(env.cpu, addr + off, &one, 1);
		t = bench_now() - t0;
		if (err) {
			skip(st, "write", err);
			mmp_munmap(env.space, addr, FAULT_BYTES);
			break;
		}
		err = mmp_munmap(env.space, addr, FAULT_BYTES);
		if (err) {
			skip(st, "munmap", err);
			break;
		}
		mmp_bench_set_iteration_time(st, t);
		fault_s += t;
		pages += FAULT_BYTES / MMP_PAGE_SIZE;
	}

	/* Counters cover the whole page_fault1 cycle, munmap included, as in will-it-scale. */
	mmp_space_counters(env.space, &after);
	bench_counters_sub(&delta, &after, &before);
	if (pages) {
		uint64_t faults = delta.v[MMP_C_FAULT_ANON] + delta.v[MMP_C_FAULT_HUGE_ANON];

		report_counters(st, &delta);
		/* Per page touched compares folio sizes; per fault is what one fault costs. */
		mmp_bench_counter(st, "ns_per_page", fault_s * 1e9 / pages);
		if (faults)
			mmp_bench_counter(st, "ns_per_fault", fault_s * 1e9 / faults);
	}
	bench_env_destroy(&env);
}

static void bm_munmap(struct mmp_bench_state *st, void *arg)
{
	struct mmp_counters before, after, delta, sum = { { 0 } };
	struct bench_env env;
	double unmap_s = 0;
	uint64_t addr, pages = 0;
	unsigned int mask;
	int err, i;

	err = folio_thp_mask(st, &mask);
	if (!err)
		err = bench_env_create(&env, phys, 0, arg, mask);
	if (err) {
		skip(st, "setup", err);
		return;
	}

	while (mmp_bench_keep_running(st)) {
		double t0, t;

		err = mmp_mmap(env.space, 0, FAULT_BYTES, RW, MMP_MAP_POPULATE, &addr);
		if (err) {
			skip(st, "mmap", err);
			break;
		}
		mmp_space_counters(env.space, &before);
		t0 = bench_now();
		err = mmp_munmap(env.space, addr, FAULT_BYTES);
		t = bench_now() - t0;
		if (err) {
			skip(st, "munmap", err);
			break;
		}
		mmp_space_counters(env.space, &after);
		bench_counters_sub(&delta, &after, &before);
		for (i = 0; i < MMP_NR_COUNTERS; i++)
			sum.v[i] += delta.v[i];
		mmp_bench_set_iteration_time(st, t);
		unmap_s += t;
		pages += FAULT_BYTES / MMP_PAGE_SIZE;
	}

	/* Counters of the timed munmap only; populating is set-up. */
	if (pages) {
		report_counters(st, &sum);
		mmp_bench_counter(st, "ns_per_page", unmap_s * 1e9 / pages);
	}
	bench_env_destroy(&env);
}

static void bm_mmap_munmap(struct mmp_bench_state *st, void *arg)
{
	struct mmp_counters before, after, delta;
	struct bench_env env;
	uint64_t addr;
	int err;

	err = bench_env_create(&env, phys, 0, arg, 0);
	if (err) {
		skip(st, "setup", err);
		return;
	}
	mmp_space_counters(env.space, &before);

	while (mmp_bench_keep_running(st)) {
		err = mmp_mmap(env.space, 0, MMAP_BYTES, RW, 0, &addr);
		if (!err)
			err = mmp_munmap(env.space, addr, MMAP_BYTES);
		if (err) {
			skip(st, "mmap/munmap", err);
			break;
		}
	}

	mmp_space_counters(env.space, &after);
	bench_counters_sub(&delta, &after, &before);
	report_counters(st, &delta);
	bench_env_destroy(&env);
}

/* A space for the batching benches: folio size from range 0, MMP_OPT_PTE_BATCH from range 1. */
static int batch_env(struct mmp_bench_state *st, struct bench_env *env, const char *arch)
{
	unsigned int mask;
	int err = folio_thp_mask(st, &mask);

	if (!err)
		err = bench_env_create(env, phys, 0, arch, mask);
	if (!err)
		err = mmp_space_set_opt(env->space, MMP_OPT_PTE_BATCH, mmp_bench_range(st, 1));
	return err;
}

/*
 * One timed operation per iteration over a populated mapping: @move moves it
 * with mremap (move_ptes), otherwise munmap zaps it (zap_pte_range).
 */
static void bm_batch(struct mmp_bench_state *st, const char *arch, uint64_t bytes, bool move)
{
	const uint64_t base = 1ULL << 30;
	struct mmp_counters before, after, delta, sum = { { 0 } };
	struct bench_env env;
	uint64_t addr, moved;
	int err, i;

	err = batch_env(st, &env, arch);
	if (err) {
		skip(st, "setup", err);
		return;
	}
	while (mmp_bench_keep_running(st)) {
		double t0, t;

		err = mmp_mmap(env.space, base, bytes, RW, MMP_MAP_FIXED | MMP_MAP_POPULATE, &addr);
		if (err) {
			skip(st, "mmap", err);
			break;
		}
		mmp_space_counters(env.space, &before);
		t0 = bench_now();
		if (move)
			err = mmp_mremap(env.space, addr, bytes, bytes,
					 MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, addr + bytes, &moved);
		else
			err = mmp_munmap(env.space, addr, bytes);
		t = bench_now() - t0;
		mmp_space_counters(env.space, &after);
		if (!err && move)
			err = mmp_munmap(env.space, moved, bytes);
		if (err) {
			skip(st, move ? "mremap" : "munmap", err);
			break;
		}
		bench_counters_sub(&delta, &after, &before);
		for (i = 0; i < MMP_NR_COUNTERS; i++)
			sum.v[i] += delta.v[i];
		mmp_bench_set_iteration_time(st, t);
	}
	report_counters(st, &sum);
	bench_env_destroy(&env);
}

static void bm_move_ptes(struct mmp_bench_state *st, void *arg)
{
	bm_batch(st, arg, MMAP_BYTES, true);
}

static void bm_zap(struct mmp_bench_state *st, void *arg)
{
	bm_batch(st, arg, 16 * BENCH_MIB, false);
}

/* <what>/<arch>/<folio KiB>/<batch> for 4 and 64 KiB folios, batching off and on. */
static int register_batch(const char *what, void (*fn)(struct mmp_bench_state *, void *),
			  const char *arch)
{
	char name[128];
	struct mmp_bench *b;

	snprintf(name, sizeof(name), "%s/%s", what, arch);
	b = mmp_bench_register(name, fn, (void *)arch);
	if (!b)
		return -ENOMEM;
	for (long kib = 4; kib <= 64; kib *= 16)
		for (long batch = 0; batch <= 1; batch++)
			mmp_bench_args(b, kib, batch);
	mmp_bench_unit(mmp_bench_use_manual_time(b), MMP_BENCH_US);
	return 0;
}

static int register_arch(const char *arch)
{
	char name[128];
	struct mmp_bench *b;

	snprintf(name, sizeof(name), "page_fault1/%s", arch);
	b = mmp_bench_register(name, bm_page_fault1, (void *)arch);
	if (!b)
		return -ENOMEM;
	mmp_bench_unit(mmp_bench_use_manual_time(mmp_bench_arg(mmp_bench_arg(b, 4), 64)),
		       MMP_BENCH_MS);

	snprintf(name, sizeof(name), "munmap/%s", arch);
	b = mmp_bench_register(name, bm_munmap, (void *)arch);
	if (!b)
		return -ENOMEM;
	mmp_bench_unit(mmp_bench_use_manual_time(mmp_bench_arg(mmp_bench_arg(b, 4), 64)),
		       MMP_BENCH_US);

	if (register_batch("move_ptes", bm_move_ptes, arch) || register_batch("zap", bm_zap, arch))
		return -ENOMEM;

	snprintf(name, sizeof(name), "mmap_munmap/%s", arch);
	b = mmp_bench_register(name, bm_mmap_munmap, (void *)arch);
	if (!b)
		return -ENOMEM;
	mmp_bench_unit(b, MMP_BENCH_NS);
	return 0;
}

static void usage(void)
{
	printf("%s", usage_text);
	for (int i = 0; i < mmp_arch_count(); i++)
		printf("%s%s", i ? ", " : "", mmp_arch_name(i));
	printf("); KIB a folio size.\n\nGoogle Benchmark's options follow.\n\n");
	fflush(stdout);
}

/*
 * huge_copy iterations for this run: every iteration sets up a cold THP out of
 * the timed region, so Google Benchmark's min_time cannot bound the run; a
 * --benchmark_min_time below the default asks for proportionally fewer.
 */
static long huge_copy_iterations(int argc, char **argv)
{
	static const char flag[] = "--benchmark_min_time=";
	long n = HC_ITERATIONS;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], flag, sizeof(flag) - 1)) {
			double t = atof(argv[i] + sizeof(flag) - 1);

			if (t > 0 && t < 0.5)
				n = BENCH_MAX((long)(HC_ITERATIONS * t / 0.5), HC_MIN_ITERATIONS);
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	int err, ret, i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage();
			/* Google Benchmark prints its own flags and exits. */
			argv[i] = (char *)"--help";
			return mmp_bench_main(argc, argv);
		}
	}

	/* No host page fault inside a timed iteration, the first page_fault1 included. */
	err = bench_phys_create_warm(PHYS_BYTES, &phys);
	if (err) {
		fprintf(stderr, "mmprim-bench: phys of %llu MiB: %s\n", PHYS_BYTES / BENCH_MIB,
			mmp_strerror(err));
		return 1;
	}
	/* Back end names are static strings of the library: they outlive registration. */
	for (i = 0; i < mmp_arch_count(); i++) {
		if (register_arch(mmp_arch_name(i))) {
			fprintf(stderr, "mmprim-bench: cannot register benches\n");
			return 1;
		}
	}

	if (hc_register_benches(huge_copy_iterations(argc, argv))) {
		fprintf(stderr, "mmprim-bench: cannot register the huge_copy benches\n");
		return 1;
	}

	if (fault_budget_register_benches(phys)) {
		fprintf(stderr, "mmprim-bench: cannot register the fault_budget benches\n");
		return 1;
	}
	if (vma_register_benches(phys)) {
		fprintf(stderr, "mmprim-bench: cannot register the VMA benches\n");
		return 1;
	}

	ret = mmp_bench_main(argc, argv);

	err = mmp_phys_destroy(phys);
	if (err) {
		fprintf(stderr, "mmprim-bench: destroying phys: %s\n", mmp_strerror(err));
		ret = 1;
	}
	return ret;
}
