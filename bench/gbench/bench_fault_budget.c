/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fault_budget/<arch>/<folio KiB>: the simulator's own cost per 4 KiB page,
 * measured against the floor no simulator can go under. Each round faults
 * 128 MiB in (one byte per page; time: the faults), unmaps it (time: the
 * munmap), then clears with memset (the "generic" clear variant the space
 * also uses) the very frames the faults got, in the order they got them
 * (time: the floor; the per-CPU lists hand frames out last-freed first, and
 * a clear's speed depends on that order; with 64 KiB folios the fault clears
 * each folio's sub-pages target-last, the floor in address order). 128 MiB
 * of other host memory is written, untimed, before each timed part, so each
 * starts cold. Reported as
 * medians with 95% intervals: the fault time above the floor, and munmap per
 * page, each against its time budget (FB_FAULT_NS, munmap_budget()), met,
 * not met or inconclusive: readings beside the host's own costs (mmprim-probes);
 * the criterion is the instruction budgets, counted by scripts/icount.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mmprim/mmprim.h>

#include "bench_fault_budget.h"
#include "common.h"
#include "shim.h"
#include "stats.h"

#define FB_BYTES	(128 * BENCH_MIB)
#define FB_PAGES	(FB_BYTES / MMP_PAGE_SIZE)
#define FB_ROUNDS	15
#define FB_FAULT_NS	150.0	/* above the floor, per 4 KiB fault */

static struct mmp_phys *fb_phys;

/* Budgets per page of munmap: 4 KiB folios, 64 KiB folios. */
static double munmap_budget(long kib)
{
	return kib == 4 ? 30.0 : 15.0;
}

struct fb_round {
	double floor_ns, fault_ns, munmap_ns;	/* per page */
};

/* Push what the last timed part touched out of the caches: 128 MiB of other memory. */
static void evict(uint8_t *cold)
{
	memset(cold, 1, FB_BYTES);
}

/* Clear @frames, the round's, in the order its faults got them: they are free now, and cold. */
static double floor_round(void **frames)
{
	double t0 = bench_now();

	for (size_t i = 0; i < FB_PAGES; i++)
		memset(frames[i], 0, MMP_PAGE_SIZE);
	return (bench_now() - t0) * 1e9 / FB_PAGES;
}

/* The host memory of each page of [addr, addr + FB_BYTES), in address order. */
static int record_frames(struct bench_env *env, uint64_t addr, uint64_t *pfns, void **frames)
{
	int got = mmp_gup(env->space, addr, FB_PAGES, false, pfns);

	if (got < 0)
		return got;
	for (size_t i = 0; i < FB_PAGES; i++)
		frames[i] = mmp_page_address(env->phys, pfns[i]);
	return mmp_unpin(env->space, pfns, FB_PAGES);
}

static int fault_round(struct bench_env *env, struct fb_round *r, uint64_t *pfns, void **frames,
		       uint8_t *cold)
{
	static const char one = 1;
	uint64_t addr;
	double t0;
	int err;

	err = mmp_mmap(env->space, 0, FB_BYTES, RW, 0, &addr);
	if (err)
		return err;
	t0 = bench_now();
	for (uint64_t off = 0; off < FB_BYTES && !err; off += MMP_PAGE_SIZE)
		err = mmp_write(env->cpu, addr + off, &one, 1);
	r->fault_ns = (bench_now() - t0) * 1e9 / FB_PAGES;
	if (!err)
		err = record_frames(env, addr, pfns, frames);
	/* The record walked the tables and the memmap: munmap must not find them warm. */
	evict(cold);
	t0 = bench_now();
	if (!err)
		err = mmp_munmap(env->space, addr, FB_BYTES);
	else
		mmp_munmap(env->space, addr, FB_BYTES);
	r->munmap_ns = (bench_now() - t0) * 1e9 / FB_PAGES;
	return err;
}

static void bm_fault_budget(struct mmp_bench_state *st, void *arg)
{
	long kib = mmp_bench_range(st, 0);
	struct fb_round rounds[FB_ROUNDS];
	double above[FB_ROUNDS], floor[FB_ROUNDS], unmap[FB_ROUNDS];
	double a_med, a_lo, a_hi, f_med, f_lo, f_hi, u_med, u_lo, u_hi;
	enum bench_verdict va, vu;
	struct bench_env env;
	uint64_t *pfns = malloc(FB_PAGES * sizeof(*pfns));
	void **frames = malloc(FB_PAGES * sizeof(*frames));
	uint8_t *cold;
	char label[200];
	int err = 0, n = 0;

	cold = mmap(NULL, FB_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		    MAP_POPULATE, -1, 0);
	if (cold == MAP_FAILED || !pfns || !frames)
		err = -ENOMEM;
	else
		err = bench_env_create(&env, fb_phys, 0, arg, kib == 64 ? BENCH_THP(4) : 0);
	if (!err) {
		err = mmp_space_set_copy(env.space, "generic");
		/* A round first, untimed: per-CPU lists and page tables reach their steady state. */
		if (!err)
			err = fault_round(&env, &rounds[0], pfns, frames, cold);
		while (!err && mmp_bench_keep_running(st)) {
			double t0 = bench_now();

			for (n = 0; n < FB_ROUNDS && !err; n++) {
				evict(cold);
				err = fault_round(&env, &rounds[n], pfns, frames, cold);
				evict(cold);
				rounds[n].floor_ns = floor_round(frames);
			}
			mmp_bench_set_iteration_time(st, bench_now() - t0);
		}
		bench_env_destroy(&env);
	}
	if (cold != MAP_FAILED)
		munmap(cold, FB_BYTES);
	free(pfns);
	free(frames);
	if (err) {
		mmp_bench_skip_with_error(st, mmp_strerror(err));
		return;
	}
	for (int i = 0; i < n; i++) {
		floor[i] = rounds[i].floor_ns;
		above[i] = rounds[i].fault_ns - rounds[i].floor_ns;
		unmap[i] = rounds[i].munmap_ns;
	}
	bench_median_ci(floor, n, &f_med, &f_lo, &f_hi);
	bench_median_ci(above, n, &a_med, &a_lo, &a_hi);
	bench_median_ci(unmap, n, &u_med, &u_lo, &u_hi);
	va = kib == 4 ? bench_verdict_below(a_lo, a_hi, n, FB_FAULT_NS) : BENCH_NO_CLAIM;
	vu = bench_verdict_below(u_lo, u_hi, n, munmap_budget(kib));
	mmp_bench_counter(st, "floor_ns", f_med);
	mmp_bench_counter(st, "above_floor_ns", a_med);
	mmp_bench_counter(st, "above_floor_lo", a_lo);
	mmp_bench_counter(st, "above_floor_hi", a_hi);
	mmp_bench_counter(st, "munmap_ns", u_med);
	mmp_bench_counter(st, "munmap_lo", u_lo);
	mmp_bench_counter(st, "munmap_hi", u_hi);
	if (kib == 4)
		snprintf(label, sizeof(label),
			 "fault above floor (%.0f ns): %.0f ns [%.0f, %.0f] <= %.0f: %s; "
			 "munmap %.1f ns [%.1f, %.1f] <= %.0f: %s",
			 f_med, a_med, a_lo, a_hi, FB_FAULT_NS, bench_verdict_name(va), u_med, u_lo,
			 u_hi, munmap_budget(kib), bench_verdict_name(vu));
	else
		snprintf(label, sizeof(label), "munmap %.1f ns/page [%.1f, %.1f] <= %.0f: %s", u_med,
			 u_lo, u_hi, munmap_budget(kib), bench_verdict_name(vu));
	mmp_bench_set_label(st, label);
}

int fault_budget_register_benches(struct mmp_phys *phys)
{
	static const char *const archs[] = { "x86_64", "arm64" };

	fb_phys = phys;
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		char name[64];
		struct mmp_bench *b;

		snprintf(name, sizeof(name), "fault_budget/%s", archs[i]);
		b = mmp_bench_register(name, bm_fault_budget, (void *)archs[i]);
		if (!b)
			return -ENOMEM;
		mmp_bench_arg(b, 4);
		mmp_bench_arg(b, 64);
		mmp_bench_iterations(b, 1);
		mmp_bench_unit(mmp_bench_use_manual_time(b), MMP_BENCH_MS);
	}
	return 0;
}
