/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "process-madvise" (SeongJae Park, "mm/madvise: batch tlb flushes for
 * MADV_DONTNEED and MADV_FREE", 6.16): 256 MiB touched, then process_madvise
 * MADV_DONTNEED of every 4 KiB region, 128 ranges a call: 42.98 -> 25.05 ms
 * (-41.7%); 2 ranges a call: -6.9%.
 *
 * Each variant is a space at its release (MMP_OPT_KERNEL_VERSION 6.15: each
 * range a madvise of its own; 6.16: one mmu_gather over the call). The win is
 * in the flushes, so a second simulated CPU, on a thread of its own, has run
 * the space: every flush then costs an IPI where the back end has no
 * broadcast invalidation (x86_64). The memory is faulted back in, untimed,
 * between samples.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "seeds.h"

#define PM_ADDR		(1ULL << 30)
#define PM_BYTES	(32 * BENCH_MIB)	/* the seed: 256 MiB */
#define PM_BYTES_QUICK	(4 * BENCH_MIB)
#define PM_REGION	(4 * BENCH_KIB)
#define PM_BUDGET	0.8
#define PM_BUDGET_QUICK	0.05
#define PM_MAX_PAIRS	200

#define REL(a, b)	MMP_KERNEL_VERSION(a, b, 0)

struct pm_case {
	unsigned int vlen;	/* ranges per call */
	double target;		/* the x86_64 claim, time ratio at least */
	const char *what, *published;
};

static const struct pm_case pm_cases[] = {
	{ 128, 42.98 / 25.05, "time ratio >= 1.72x", "1.72x (42.98 -> 25.05 ms)" },
	{ 2, 1 / (1 - 0.069), "time ratio >= 1.07x", "1.07x (-6.9%)" },
};

/* The other CPU: attached to both spaces on a thread of its own, idle after one read each. */
struct pm_remote {
	pthread_t th;
	struct mmp_space *s[2];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state;		/* 0 starting, 1 attached, 2 asked to stop */
	int err;
	bool started;		/* the thread runs: pm_remote_stop() it */
};

static void *pm_remote_run(void *arg)
{
	struct pm_remote *r = arg;
	struct mmp_cpu *cpu[2] = { NULL, NULL };
	char byte;
	int err = 0;

	for (int v = 0; v < 2 && !err; v++) {
		err = mmp_cpu_attach(r->s[v], &cpu[v]);
		if (!err)
			err = mmp_read(cpu[v], PM_ADDR, &byte, 1);
	}
	pthread_mutex_lock(&r->lock);
	r->err = err;
	r->state = 1;
	pthread_cond_broadcast(&r->cond);
	while (r->state != 2)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	for (int v = 0; v < 2; v++)
		if (cpu[v])
			mmp_cpu_detach(cpu[v]);
	return NULL;
}

static int pm_remote_start(struct pm_remote *r, struct mmp_space *a, struct mmp_space *b)
{
	int err;

	memset(r, 0, sizeof(*r));
	r->s[0] = a;
	r->s[1] = b;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	err = -pthread_create(&r->th, NULL, pm_remote_run, r);
	if (err)
		return err;
	r->started = true;
	pthread_mutex_lock(&r->lock);
	while (r->state != 1)
		pthread_cond_wait(&r->cond, &r->lock);
	err = r->err;
	pthread_mutex_unlock(&r->lock);
	return err;
}

static void pm_remote_stop(struct pm_remote *r)
{
	if (!r->started)
		return;
	pthread_mutex_lock(&r->lock);
	r->state = 2;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->th, NULL);
	r->started = false;
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
}

struct pm_side {
	struct bench_env env;
	struct mmp_counters counters;	/* of the first counted sample */
	double secs;			/* of the last sample */
	long bytes_done;		/* of the last sample */
};

/* Fault the memory back (untimed), then MADV_DONTNEED it in calls of @vlen 4 KiB ranges. */
static int pm_sample(struct pm_side *side, struct mmp_iovec *vec, uint64_t bytes,
		     unsigned int vlen, bool count)
{
	struct mmp_space *s = side->env.space;
	const unsigned int ranges = bytes / PM_REGION;
	struct mmp_counters c0, c1;
	double t0;
	int err = bench_env_attach(&side->env);

	if (!err)
		err = mmp_memset(side->env.cpu, PM_ADDR, 0x5a, bytes);
	if (err)
		goto out;
	side->bytes_done = 0;
	mmp_space_counters(s, &c0);
	t0 = bench_now();
	for (unsigned int i = 0; i < ranges; i += vlen) {
		long done = mmp_process_madvise(s, vec + i, BENCH_MIN(vlen, ranges - i),
						MMP_MADV_DONTNEED, 0);

		if (done < 0) {
			err = (int)done;
			break;
		}
		side->bytes_done += done;
	}
	side->secs = bench_now() - t0;
	mmp_space_counters(s, &c1);
	if (count)
		bench_counters_sub(&side->counters, &c1, &c0);
	if (!err && side->bytes_done != (long)bytes)
		err = -EIO;
out:
	bench_env_detach(&side->env);
	return err;
}

static int pm_case_run(const struct mmp_seed_opts *opts, const char *arch, struct mmp_phys *phys,
		       const void *arg)
{
	const struct pm_case *c = arg;
	const uint64_t bytes = opts->quick ? PM_BYTES_QUICK : PM_BYTES;
	const unsigned int ranges = bytes / PM_REGION, calls = (ranges + c->vlen - 1) / c->vlen;
	struct mmp_seed_result base = { .label = "6.15" }, opt = { .label = "6.16" };
	struct mmp_seed_claim claim = { 0 };
	struct pm_remote remote;
	struct pm_side side[2];
	struct bench_pairs pairs;
	struct mmp_iovec *vec;
	struct bench_ci ci;
	char name[48], buf[64], extra[512];
	bool x86 = !strncmp(arch, "x86_64", 6);
	int err = 0;

	memset(side, 0, sizeof(side));
	vec = calloc(ranges, sizeof(*vec));
	if (!vec)
		return -ENOMEM;
	for (unsigned int i = 0; i < ranges; i++)
		vec[i] = (struct mmp_iovec){ PM_ADDR + (uint64_t)i * PM_REGION, PM_REGION };
	bench_pairs_init(&pairs, BENCH_MIN_SAMPLES, PM_MAX_PAIRS,
			 opts->quick ? PM_BUDGET_QUICK : PM_BUDGET);
	for (int v = 0; v < 2 && !err; v++) {
		uint64_t addr;

		err = bench_env_create(&side[v].env, phys, 0, arch, 0);
		if (!err)
			err = mmp_space_set_opt(side[v].env.space, MMP_OPT_KERNEL_VERSION,
						v ? REL(6, 16) : REL(6, 15));
		if (!err)
			err = mmp_mmap(side[v].env.space, PM_ADDR, bytes, RW, MMP_MAP_FIXED, &addr);
		if (!err)
			err = mmp_memset(side[v].env.cpu, PM_ADDR, 0x5a, bytes);
		if (!err)
			err = bench_env_detach(&side[v].env);
	}
	remote.started = false;
	if (!err)
		err = pm_remote_start(&remote, side[0].env.space, side[1].env.space);
	for (int v = 0; v < 2 && !err; v++)
		err = pm_sample(&side[v], vec, bytes, c->vlen, false);
	while (!err && bench_pairs_more(&pairs)) {
		for (int k = 0; k < 2 && !err; k++) {
			int v = k ^ (int)(pairs.n % 2);

			err = pm_sample(&side[v], vec, bytes, c->vlen, pairs.n == 0);
		}
		if (!err)
			err = bench_pairs_add(&pairs, side[0].secs, side[1].secs);
	}
	pm_remote_stop(&remote);
	if (err)
		goto out;

	bench_pairs_ci(&pairs, &ci);
	base.seconds = bench_median(pairs.base, pairs.n);
	opt.seconds = bench_median(pairs.opt, pairs.n);
	base.counters = side[0].counters;
	opt.counters = side[1].counters;
	/*
	 * The patch's machine flushes by IPI and merges the VMAs of a gather
	 * (MMU_GATHER_MERGE_VMAS): the claim is x86_64's. arm64 broadcasts its
	 * TLBIs and flushes at the end of each range's walk either way.
	 */
	if (x86) {
		claim.what = c->what;
		claim.published = c->published;
		claim.verdict = bench_verdict_at_least(&ci, c->target);
	} else {
		uint64_t fl[2];

		for (int v = 0; v < 2; v++)
			fl[v] = side[v].counters.v[MMP_C_TLB_FLUSH_RANGE] +
				side[v].counters.v[MMP_C_TLB_FLUSH_ALL];
		claim.published = c->published;
		if (!strncmp(arch, "arm64", 5) && fl[0] == fl[1] &&
		    !side[0].counters.v[MMP_C_TLB_IPI] && !side[1].counters.v[MMP_C_TLB_IPI])
			claim.note = "no claim: no MMU_GATHER_MERGE_VMAS, a flush per range either "
				     "way (broadcast TLBI)";
		else
			claim.note = "no claim: the patch's figures are x86_64's";
	}
	snprintf(name, sizeof(name), "%u ranges a call", c->vlen);

	if (!opts->json) {
		const struct mmp_counters *k[2] = { &base.counters, &opt.counters };

		printf("process-madvise [%s, %s]%s: MADV_DONTNEED of %llu MiB in %u ranges of "
		       "4 KiB, %u calls a sample, another CPU on the space; %zu alternating pairs\n",
		       arch, name, mmp_seed_quick_tag(opts), (unsigned long long)(bytes / BENCH_MIB),
		       ranges, calls, pairs.n);
		printf("  a sample: 6.15 %.3f ms, 6.16 %.3f ms: %s\n", base.seconds * 1e3,
		       opt.seconds * 1e3, bench_ci_str(&ci, buf, sizeof(buf)));
		for (int v = 0; v < 2; v++)
			printf("  per call, %s: tlb_flush_range %.1f, tlb_flush_all %.1f, tlb_ipi %.1f, "
			       "gather_flush %.1f\n", v ? opt.label : base.label,
			       (double)k[v]->v[MMP_C_TLB_FLUSH_RANGE] / calls,
			       (double)k[v]->v[MMP_C_TLB_FLUSH_ALL] / calls,
			       (double)k[v]->v[MMP_C_TLB_IPI] / calls,
			       (double)k[v]->v[MMP_C_GATHER_FLUSH] / calls);
		printf("  (seconds: one sample, the median; counters of the first sample)\n");
	}
	snprintf(extra, sizeof(extra),
		 "\"bytes\":%llu,\"ranges\":%u,\"ranges_per_call\":%u,\"calls\":%u,\"cpus\":2,"
		 "\"baseline_release\":\"6.15\",\"optimized_release\":\"6.16\"",
		 (unsigned long long)bytes, ranges, c->vlen, calls);
	mmp_seed_report(opts, "process-madvise", arch, name, &base, &opt, &ci, &claim, extra);
out:
	for (int v = 0; v < 2; v++)
		bench_env_destroy(&side[v].env);
	bench_pairs_free(&pairs);
	free(vec);
	return err;
}

const struct mmp_seed mmp_seed_process_madvise = {
	.name = "process-madvise",
	.title = "process_madvise MADV_DONTNEED of 4 KiB ranges, a flush per range (6.15) or per call (6.16)",
	.archs = (const char *const[]){ "x86_64", "arm64", NULL },
	MMP_SEED_CASES(pm_cases),
	.phys_bytes = 96 * BENCH_MIB,
	.phys_bytes_quick = 32 * BENCH_MIB,
	.run_case = pm_case_run,
};
