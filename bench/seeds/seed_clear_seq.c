/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "clear-seq" (Ankur Arora, "mm: folio_zero_user: clear pages
 * sequentially", merged for 7.0 through mm-stable-2026-02-11, commit
 * 9890ecab6ad9, and "cache neighbouring pages"): a first-touch fault on a THP
 * clears its 512 sub-pages in ascending runs, each an extent the CPU sees
 * whole, the faulting page and two each side last, where 6.18 clears them in
 * process_huge_page's target-last order one page at a time. Copies keep
 * target-last. The series measured demand-fault clearing of 2 MiB pages:
 *   AMD Genoa  11.76 -> 23.58 GB/s (LLC miss rate 10.96% -> 0.73%);
 *   AMD Milan  12.92 -> 17.03 GB/s (v8 cover letter);
 *   no change on Intel Icelake-X or Arm Neoverse-N1.
 * (This project's anon-cow-seq runs on AMD EPYC found target-last copies at
 * 0.67-0.85x of ascending: the same preference for sequential sweeps there.)
 *
 * Here one space with THPs always maps a region, writes one byte per 4 KiB
 * page from begin to end (each THP faults at sub-page 0, so target-last is a
 * descending sweep of single pages), and unmaps it untimed; baseline the
 * space at 6.18 (clears target-last), optimized at 7.0 (the release table's
 * clear_sequential: MMP_OPT_HUGE_CLEAR_ORDER left to the release clears in
 * MMP_HUGE_ORDER_SEQUENTIAL: 3..511 as one run, then 0..2). Throughput is bytes over the time of the touching loop.
 *
 * The claim follows this CPU: an AMD Zen (family 17h or later) should clear
 * faster sequentially (the Milan figure, the smaller of the two), anything
 * else should see no change (Icelake-X, Neoverse-N1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "seeds.h"

/* 4 GiB: inside every back end's space, PMD aligned, far below the mmap base. */
#define CS_ADDR		0x100000000ULL
#define CS_BYTES	(256 * BENCH_MIB)
#define CS_BYTES_QUICK	(32 * BENCH_MIB)
#define CS_MIN_PAIRS	BENCH_MIN_SAMPLES
#define CS_MAX_PAIRS	40
#define CS_BUDGET	4.0	/* seconds per back end; CS_MIN_PAIRS whatever they take */
#define CS_BUDGET_QUICK	0.3
/* AMD Zen: sequential at least this much faster (Milan 12.92 -> 17.03 GB/s is 1.32x). */
#define CS_ZEN_RATIO	1.2
/* Elsewhere, "no change": the ratio within [1 / CS_SAME, CS_SAME]. */
#define CS_SAME		1.1

struct cs_cpu {
	char vendor[32], model[96];
	unsigned int family;
	bool zen;	/* AMD family 17h or later */
};

/* The host CPU from /proc/cpuinfo (x86 fields; elsewhere the implementer, "other"). */
static void cs_cpu_read(struct cs_cpu *c)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	memset(c, 0, sizeof(*c));
	snprintf(c->vendor, sizeof(c->vendor), "unknown");
	snprintf(c->model, sizeof(c->model), "unknown CPU");
	while (f && fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		v += 1 + (v[1] == ' ');
		v[strcspn(v, "\n")] = 0;
		if (!strncmp(line, "vendor_id", 9) || !strncmp(line, "CPU implementer", 15))
			snprintf(c->vendor, sizeof(c->vendor), "%s", v);
		else if (!strncmp(line, "model name", 10))
			snprintf(c->model, sizeof(c->model), "%s", v);
		else if (!strncmp(line, "cpu family", 10))
			c->family = (unsigned int)strtoul(v, NULL, 10);
		else if (!strcmp(line, "\n"))
			break;	/* the first processor is enough */
	}
	if (f)
		fclose(f);
	c->zen = !strcmp(c->vendor, "AuthenticAMD") && c->family >= 0x17;
}

/*
 * One run: map @bytes at CS_ADDR, write one byte per 4 KiB page (the
 * first-touch faults clear each THP in @order), then unmap untimed.
 */
static int cs_run(struct bench_env *env, uint64_t bytes, int order, double *seconds,
		  struct mmp_counters *delta)
{
	static const char one = 1;
	long release = order == MMP_HUGE_ORDER_SEQUENTIAL ? MMP_KERNEL_VERSION(7, 0, 0) :
							   MMP_KERNEL_VERSION(6, 18, 0);
	struct mmp_counters before, after;
	uint64_t addr, off;
	long clear_order = -1;
	double t0;
	int err, err2;

	/* The release, not the order: check it comes to the order this side stands for. */
	err = mmp_space_set_opt(env->space, MMP_OPT_KERNEL_VERSION, release);
	if (!err)
		err = mmp_space_get_opt(env->space, MMP_OPT_HUGE_CLEAR_ORDER, &clear_order);
	if (!err && clear_order != order)
		err = -EINVAL;
	if (!err)
		err = mmp_mmap(env->space, CS_ADDR, bytes, RW, MMP_MAP_FIXED, &addr);
	if (err)
		return err;
	mmp_space_counters(env->space, &before);
	t0 = bench_now();
	for (off = 0; off < bytes && !err; off += MMP_PAGE_SIZE)
		err = mmp_write(env->cpu, addr + off, &one, 1);
	*seconds = bench_now() - t0;
	mmp_space_counters(env->space, &after);
	bench_counters_sub(delta, &after, &before);
	err2 = mmp_munmap(env->space, addr, bytes);
	return err ? err : err2;
}

/* One pair, @first_opt picking which side goes first. */
static int cs_pair(struct bench_env *env, uint64_t bytes, bool first_opt, double *bs, double *os,
		   struct mmp_seed_result *base, struct mmp_seed_result *opt)
{
	int err;

	if (first_opt) {
		err = cs_run(env, bytes, MMP_HUGE_ORDER_SEQUENTIAL, os, &opt->counters);
		if (!err)
			err = cs_run(env, bytes, MMP_HUGE_ORDER_TARGET_LAST, bs, &base->counters);
	} else {
		err = cs_run(env, bytes, MMP_HUGE_ORDER_TARGET_LAST, bs, &base->counters);
		if (!err)
			err = cs_run(env, bytes, MMP_HUGE_ORDER_SEQUENTIAL, os, &opt->counters);
	}
	return err;
}

static int clear_seq_arch(const struct mmp_seed_opts *opts, const char *arch)
{
	const uint64_t bytes = opts->quick ? CS_BYTES_QUICK : CS_BYTES;
	const uint64_t thps = bytes / MMP_PMD_SIZE;
	struct mmp_seed_result base = { .label = "target-last" }, opt = { .label = "sequential" };
	struct mmp_seed_claim claim = { .published = NULL };
	struct bench_pairs pairs;
	struct bench_env env;
	struct bench_ci ci;
	struct cs_cpu cpu;
	const char *variant = "?";
	char extra[768], like[160], note[96], buf[64];
	double bs, os, gbs[2], mech;
	int err;

	cs_cpu_read(&cpu);
	if (cpu.zen) {
		snprintf(like, sizeof(like), "AMD Zen (family %xh): like Genoa and Milan, where "
			 "sequential clearing was faster", cpu.family);
		claim.what = "sequential clears faster: time ratio >= 1.2x";
		claim.published = "Milan 1.32x, Genoa 2.01x";
	} else {
		snprintf(like, sizeof(like), "%s: not AMD Zen, like Icelake-X and Neoverse-N1, "
			 "where nothing changed", cpu.vendor);
		claim.what = "no change: time ratio within 0.91x-1.10x";
		claim.published = "no change (Icelake-X, N1)";
	}
	bench_pairs_init(&pairs, CS_MIN_PAIRS, CS_MAX_PAIRS,
			 opts->quick ? CS_BUDGET_QUICK : CS_BUDGET);
	/* One mapping at a time; tables and the allocator's slack beside it. */
	err = bench_env_create(&env, NULL, bytes + 32 * BENCH_MIB, arch, BENCH_THP(MMP_PMD_ORDER));
	if (err)
		goto out_pairs;
	/* The library's default clear variant is the first this CPU runs: name it. */
	for (int i = 0; i < mmp_copy_variant_count(); i++) {
		if (!mmp_space_set_copy(env.space, mmp_copy_variant_name(i))) {
			variant = mmp_copy_variant_name(i);
			break;
		}
	}

	/* A warm-up of each order, then pairs, each in turn first, against drift. */
	err = cs_pair(&env, bytes, false, &bs, &os, &base, &opt);
	while (!err && bench_pairs_more(&pairs)) {
		err = cs_pair(&env, bytes, pairs.n % 2, &bs, &os, &base, &opt);
		if (!err)
			err = bench_pairs_add(&pairs, bs, os);
	}
	if (!err)
		err = mmp_space_verify(env.space);
	if (err)
		goto out_env;
	bench_pairs_ci(&pairs, &ci);
	base.seconds = bench_median(pairs.base, pairs.n);
	opt.seconds = bench_median(pairs.opt, pairs.n);
	gbs[0] = bytes / base.seconds / 1e9;
	gbs[1] = bytes / opt.seconds / 1e9;

	/*
	 * The mechanism is the clear of whole THPs on first touch: with a
	 * fallback to small folios there would be no huge clear to order.
	 */
	mech = BENCH_MIN((double)base.counters.v[MMP_C_FAULT_HUGE_ANON],
			 (double)opt.counters.v[MMP_C_FAULT_HUGE_ANON]) / thps;
	if (mech < 1.0) {
		snprintf(note, sizeof(note), "no verdict: mechanism in %.0f%% of samples < 100%%",
			 100 * mech);
		claim.verdict = BENCH_NO_VERDICT;
		claim.note = note;
	} else if (cpu.zen) {
		claim.verdict = bench_verdict_at_least(&ci, CS_ZEN_RATIO);
	} else {
		claim.verdict = bench_verdict_within(&ci, 1 / CS_SAME, CS_SAME);
	}

	if (!opts->json) {
		printf("clear-seq [%s]%s: first-touch clearing of 2 MiB THPs, target-last "
		       "(process_huge_page, 6.18) against sequential (7.0)\n", arch,
		       mmp_seed_quick_tag(opts));
		printf("  (Ankur Arora, 7.0: demand-fault 2 MiB clearing, AMD Genoa 11.76 -> 23.58 "
		       "GB/s, LLC miss rate 10.96%% -> 0.73%%; AMD Milan 12.92 -> 17.03 GB/s; no "
		       "change on Intel Icelake-X or Arm Neoverse-N1)\n");
		printf("  CPU: %s, %s\n", cpu.model, like);
		printf("  %llu MiB, %llu THPs, one write per 4 KiB page from begin to end; each THP "
		       "faults at sub-page 0, so target-last clears 511 down to 0, a page at a time, "
		       "and sequential clears 3 up to 511 as one extent, then 0 to 2; clear variant %s\n",
		       (unsigned long long)(bytes / BENCH_MIB), (unsigned long long)thps, variant);
		printf("  %-12s %8.2f GB/s\n  %-12s %8.2f GB/s\n  ratio %s (%zu alternating pairs; "
		       "THP faults %llu / %llu, sub-pages cleared %llu / %llu per run)\n",
		       "target-last", gbs[0], "sequential", gbs[1], bench_ci_str(&ci, buf, sizeof(buf)),
		       pairs.n, (unsigned long long)base.counters.v[MMP_C_FAULT_HUGE_ANON],
		       (unsigned long long)opt.counters.v[MMP_C_FAULT_HUGE_ANON],
		       (unsigned long long)base.counters.v[MMP_C_SUBPAGE_CLEAR],
		       (unsigned long long)opt.counters.v[MMP_C_SUBPAGE_CLEAR]);
	}
	snprintf(extra, sizeof(extra),
		 "\"bytes\":%llu,\"thps\":%llu,\"runs\":%zu,"
		 "\"seconds_is\":\"median time of the touching loop (faults and clears)\","
		 "\"baseline_order\":\"target-last\",\"optimized_order\":\"sequential\","
		 "\"variant\":\"%s\","
		 "\"baseline_gb_per_s\":%.3f,\"optimized_gb_per_s\":%.3f,"
		 "\"cpu_vendor\":\"%s\",\"cpu_family\":%u,\"cpu_like\":\"%s\","
		 "\"mechanism_share\":%.6g",
		 (unsigned long long)bytes, (unsigned long long)thps, pairs.n, variant, gbs[0], gbs[1],
		 cpu.vendor, cpu.family, cpu.zen ? "genoa-milan" : "icelake-n1", mech);
	mmp_seed_report(opts, "clear-seq", arch, NULL, &base, &opt, &ci, &claim, extra);
	if (!opts->json)
		putchar('\n');
out_env:
	bench_env_destroy(&env);
out_pairs:
	bench_pairs_free(&pairs);
	return err;
}

const struct mmp_seed mmp_seed_clear_seq = {
	.name = "clear-seq",
	.title = "first-touch clearing of 2 MiB THPs: target-last (6.18) against sequential (7.0)",
	/* Data movement is host code: one back end shows it; --arch picks another. */
	.archs = (const char *const[]){ "x86_64", NULL },
	.run_arch = clear_seq_arch,
};
