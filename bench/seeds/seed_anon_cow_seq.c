/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "anon-cow-seq" (vm-scalability's case-anon-cow-seq, the benchmark of
 * Huang Ying's "copy target sub-page last"): a parent populates THP memory and
 * forks N children; each child writes its own region from begin to end, so
 * every huge page is copied on write once, the fault at its first sub-page,
 * and the child then writes the rest of it. The seed measured +16.6% throughput
 * with 36 processes on a 2-socket Xeon E5-2699 v3 (36 cores, 72 threads).
 *
 * Here N goes from 1 to the cores hwloc reports, one child per core (pinned),
 * each a simulated process on its own host thread; throughput is the bytes the
 * children wrote over the wall time from the common start to the last finish.
 * The parent's memory is flushed from the caches before each fork ("populated
 * long ago").
 *
 * The seed ran on a kernel whose THP COW copied the whole 2 MiB folio. Since
 * 5.8, and so in the 6.18 the library models, the first write splits the
 * child's PMD and copies one 4 KiB page, and each later write of the child
 * copies its own page: no huge copy, so no sub-page order to compare. The
 * THP cases still run, and say so instead of claiming the seed's gain.
 *
 * The whole copy, and the claim, are hugetlb's in 6.18: the "hugetlb/" cases
 * are vm-scalability's anon-cow-seq-hugetlb, the same run on MAP_HUGETLB
 * memory (a pool as large as the parent's memory and the children's copies).
 * Each child's first write to a huge page copies all 512 sub-pages
 * (hugetlb_wp, copy_user_large_folio) in the order asked for: the fault is at
 * sub-page 0, so target-last sweeps down and leaves the start hot for the
 * writes that follow. Ascending is before the seed, target-last after it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "common.h"
#include "seeds.h"
#include "topo.h"

#define ACS_REGION		(64 * BENCH_MIB)	/* per child */
#define ACS_REGION_QUICK	(8 * BENCH_MIB)
#define ACS_RUNS		15	/* at least */
#define ACS_RUNS_QUICK		10
#define ACS_MAX_RUNS		48
#define ACS_BUDGET		20.0	/* seconds per process count; ACS_RUNS whatever they take */
#define ACS_BUDGET_QUICK	0.5
#define ACS_SEED_RATIO		1.166	/* +16.6% throughput, of a whole-THP copy */
#define ACS_NO_CLAIM		"no claim: 6.18 splits THP on COW; measured on hugetlb"
#define ACS_HUGETLB_NOTE	"no claim: the seed's order is target-last, against ascending"
#define ACS_MAX_CHILDREN	64

struct acs_child {
	struct bench_topo *topo;
	struct mmp_space *space;
	pthread_barrier_t *start;
	uint64_t addr, len;
	int pu, err;
	uint64_t t0, t1;
};

static void *acs_child_run(void *arg)
{
	struct acs_child *c = arg;
	struct mmp_cpu *cpu = NULL;

	if (c->pu >= 0)
		bench_topo_pin(c->topo, c->pu);
	c->err = mmp_cpu_attach(c->space, &cpu);
	pthread_barrier_wait(c->start);
	c->t0 = bench_now_ns();
	/* usemem: store to every byte from begin to end; each THP faults at sub-page 0. */
	if (!c->err)
		c->err = mmp_memset(cpu, c->addr, 0x77, c->len);
	c->t1 = bench_now_ns();
	if (cpu)
		mmp_cpu_detach(cpu);
	return NULL;
}

/*
 * Evict the parent's memory from the host caches, a huge page at a time: a
 * hugetlb page's frames looked up (GUP of hugetlb pages is not modelled).
 */
static void acs_make_cold(struct mmp_space *parent, struct mmp_phys *phys, uint64_t addr,
			  uint64_t len, bool hugetlb)
{
	uint64_t pfns[512];

	for (uint64_t off = 0; off < len; off += MMP_PMD_SIZE) {
		struct mmp_addr_info info;
		int n;

		if (hugetlb) {
			if (!mmp_space_query(parent, addr + off, &info) && info.pfn != MMP_NO_PFN)
				hc_flush(mmp_page_address(phys, info.folio_pfn), MMP_PMD_SIZE);
			continue;
		}
		n = mmp_gup_fast(parent, addr + off, 512, false, pfns);

		if (n > 0) {
			hc_flush(mmp_page_address(phys, pfns[0]), (size_t)n * MMP_PAGE_SIZE);
			mmp_unpin(parent, pfns, n);
		}
	}
}

/* One round: fork @n children of @parent, let them write, return the wall seconds. */
static int acs_round(struct bench_topo *topo, struct mmp_phys *phys, struct mmp_space *parent,
		     uint64_t addr, uint64_t region, int n, bool hugetlb, double *seconds,
		     struct mmp_counters *counters)
{
	struct acs_child child[ACS_MAX_CHILDREN];
	pthread_t thread[ACS_MAX_CHILDREN];
	pthread_barrier_t start;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int err = 0, i, started = 0;

	acs_make_cold(parent, phys, addr, region * n, hugetlb);
	memset(child, 0, sizeof(child));
	for (i = 0; i < n && !err; i++) {
		child[i] = (struct acs_child){
			.topo = topo, .start = &start, .addr = addr + region * i, .len = region,
			.pu = topo ? bench_topo_core_pu(topo, i) : -1,
		};
		err = mmp_fork(parent, &child[i].space);
	}
	if (err)
		goto out;
	pthread_barrier_init(&start, NULL, n);
	for (i = 0; i < n && !err; i++) {
		err = -pthread_create(&thread[i], NULL, acs_child_run, &child[i]);
		if (!err)
			started++;
	}
	/* A child that could not start would leave the others at the barrier. */
	if (err)
		abort();
	for (i = 0; i < started; i++)
		pthread_join(thread[i], NULL);
	pthread_barrier_destroy(&start);
	for (i = 0; i < n; i++) {
		err = err ? err : child[i].err;
		t0 = child[i].t0 < t0 ? child[i].t0 : t0;
		t1 = child[i].t1 > t1 ? child[i].t1 : t1;
	}
	*seconds = (t1 - t0) * 1e-9;
	mmp_space_counters(child[0].space, counters);
out:
	for (i = 0; i < n; i++)
		if (child[i].space)
			mmp_space_destroy(child[i].space);
	return err;
}

static int acs_processes(const struct mmp_seed_opts *opts, const char *arch,
			 struct bench_topo *topo, int n, bool hugetlb)
{
	const uint64_t region = opts->quick ? ACS_REGION_QUICK : ACS_REGION;
	const double budget = opts->quick ? ACS_BUDGET_QUICK : ACS_BUDGET;
	double secs[MMP_NR_HUGE_ORDERS][ACS_MAX_RUNS], med[MMP_NR_HUGE_ORDERS];
	struct bench_pairs pairs[MMP_NR_HUGE_ORDERS];	/* ascending against each order */
	struct bench_ci ci[MMP_NR_HUGE_ORDERS];
	struct mmp_counters counters[MMP_NR_HUGE_ORDERS];
	struct mmp_space_config cfg = { .arch = arch };
	struct mmp_space *parent = NULL;
	struct mmp_phys *phys = NULL;
	struct mmp_cpu *cpu = NULL;
	uint64_t a, addr, phys_bytes;
	double mib = (double)region * n / BENCH_MIB;
	char buf[64];
	int err, runs = 0;

	for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++)
		bench_pairs_init(&pairs[o], opts->quick ? ACS_RUNS_QUICK : ACS_RUNS, ACS_MAX_RUNS,
				 budget);
	/* The parent's memory, each child's copy of its region, tables; in 4 MiB blocks. */
	phys_bytes = (2 * region * n + 16 * BENCH_MIB + 4 * BENCH_MIB - 1) & ~(4 * BENCH_MIB - 1);
	err = bench_phys_create_warm(phys_bytes, &phys);
	if (!err)
		err = mmp_space_create(phys, &cfg, &parent);
	/* hugetlb: a pool for the parent's pages and one copy of each in the children. */
	if (!err && hugetlb)
		err = mmp_phys_set_hugepages(phys, MMP_PMD_SIZE, 2 * region * n / MMP_PMD_SIZE);
	if (!err && hugetlb)
		err = mmp_mmap(parent, 0, region * n, RW, MMP_MAP_HUGETLB, &addr);
	else if (!err)
		err = mmp_mmap(parent, 0, region * n + MMP_PMD_SIZE, RW, 0, &a);
	if (err)
		goto out;
	if (!hugetlb) {
		addr = (a + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
		err = mmp_madvise(parent, addr, region * n, MMP_MADV_HUGEPAGE);
	}
	/* As in huge-copy: the library's default neighbourhood unless the environment says. */
	if (!err && getenv("MMPRIM_HUGE_NEIGHBOURHOOD"))
		err = mmp_space_set_opt(parent, MMP_OPT_HUGE_NEIGHBOURHOOD,
					strtol(getenv("MMPRIM_HUGE_NEIGHBOURHOOD"), NULL, 0));
	if (!err)
		err = mmp_cpu_attach(parent, &cpu);
	if (!err)
		err = mmp_memset(cpu, addr, 0x11, region * n);	/* populate */
	if (cpu)
		mmp_cpu_detach(cpu);
	/* A warm-up round: the children's first copies, the allocator's lists. */
	if (!err)
		err = acs_round(topo, phys, parent, addr, region, n, hugetlb, &secs[0][0],
				&counters[0]);
	/*
	 * Orders alternate within each run, starting with each in turn, so that
	 * host drift hits them alike; a ratio inside one run cancels slow drift.
	 */
	while (!err && (bench_pairs_more(&pairs[MMP_HUGE_ORDER_TARGET_LAST]) ||
			bench_pairs_more(&pairs[MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST]))) {
		for (int k = 0; k < MMP_NR_HUGE_ORDERS && !err; k++) {
			int o = (k + runs) % MMP_NR_HUGE_ORDERS;

			err = mmp_space_set_opt(parent, MMP_OPT_HUGE_ORDER, o);
			if (!err)
				err = acs_round(topo, phys, parent, addr, region, n, hugetlb,
						&secs[o][runs], &counters[o]);
		}
		for (int o = MMP_HUGE_ORDER_TARGET_LAST; o < MMP_NR_HUGE_ORDERS && !err; o++)
			err = bench_pairs_add(&pairs[o], secs[MMP_HUGE_ORDER_ASCENDING][runs],
					      secs[o][runs]);
		runs++;
	}
	if (err)
		goto out;

	for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++) {
		med[o] = bench_median(secs[o], runs);
		if (o != MMP_HUGE_ORDER_ASCENDING)
			bench_pairs_ci(&pairs[o], &ci[o]);
	}
	if (!opts->json) {
		printf("anon-cow-seq [%s] %s, %d process%s x %llu MiB, variant %s%s: ", arch,
		       hugetlb ? "hugetlb" : "THP", n, n > 1 ? "es" : "",
		       (unsigned long long)(region / BENCH_MIB), mmp_space_copy(parent),
		       mmp_seed_quick_tag(opts));
		for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++)
			printf("%s%s %.0f MiB/s", o ? ", " : "", mmp_huge_order_name(o), mib / med[o]);
		printf("\n  time ratio ascending / order (= throughput gain + 1), median of the %d "
		       "per-run ratios [95%%]:", runs);
		for (int o = MMP_HUGE_ORDER_TARGET_LAST; o < MMP_NR_HUGE_ORDERS; o++)
			printf(" %s %s", mmp_huge_order_name(o), bench_ci_str(&ci[o], buf, sizeof(buf)));
		if (hugetlb)
			printf("\n  (seed: +16.6%%, 1.166x, with 36 processes on a 2-socket Xeon, "
			       "copying whole THPs; here each first write copies a whole hugetlb "
			       "page in the order, as 6.18 does)\n");
		else
			printf("\n  (seed: +16.6%%, 1.166x, with 36 processes on a 2-socket Xeon, "
			       "copying whole THPs; here each write copies 4 KiB, whatever the "
			       "order)\n  %s\n", ACS_NO_CLAIM);
	}
	for (int o = MMP_HUGE_ORDER_TARGET_LAST; o < MMP_NR_HUGE_ORDERS; o++) {
		struct mmp_seed_result base = { .label = "ascending", .seconds = med[0],
						.counters = counters[0] };
		struct mmp_seed_result opt = { .label = mmp_huge_order_name(o), .seconds = med[o],
					       .counters = counters[o] };
		struct mmp_seed_claim claim = { .note = hugetlb ? ACS_HUGETLB_NOTE : ACS_NO_CLAIM };
		char extra[512], name[64];

		if (o == MMP_HUGE_ORDER_TARGET_LAST)
			claim.published = "1.166x (36 processes)";
		/* The whole copy in the seed's order: its gain is claimed where 6.18 copies. */
		if (hugetlb && o == MMP_HUGE_ORDER_TARGET_LAST) {
			claim.what = "the seed's gain: time ratio >= 1.166x";
			claim.verdict = bench_verdict_at_least(&ci[o], ACS_SEED_RATIO);
			claim.note = NULL;
		}
		snprintf(name, sizeof(name), "%s%dp/%s", hugetlb ? "hugetlb/" : "", n,
			 mmp_huge_order_name(o));
		snprintf(extra, sizeof(extra),
			 "\"hugetlb\":%s,\"processes\":%d,\"order\":\"%s\",\"variant\":\"%s\","
			 "\"region_bytes\":%llu,\"runs\":%d,\"baseline_mib_per_s\":%.1f,"
			 "\"optimized_mib_per_s\":%.1f,\"paired_gain\":%.4f",
			 hugetlb ? "true" : "false", n, mmp_huge_order_name(o), mmp_space_copy(parent),
			 (unsigned long long)region, runs, mib / med[0], mib / med[o],
			 ci[o].ratio - 1);
		if (!opts->json)
			printf("  [%d process%s] seconds to write everything (wall); counters of "
			       "child 0:\n", n, n > 1 ? "es" : "");
		mmp_seed_report(opts, "anon-cow-seq", arch, name, &base, &opt, &ci[o], &claim,
				extra);
	}
	if (!opts->json)
		putchar('\n');
out:
	for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++)
		bench_pairs_free(&pairs[o]);
	if (parent)
		mmp_space_destroy(parent);
	if (phys)
		mmp_phys_destroy(phys);
	return err;
}

static int anon_cow_seq_arch(const struct mmp_seed_opts *opts, const char *arch)
{
	struct bench_topo topo;
	int err, cores, n;

	err = bench_topo_init(&topo);
	if (err)
		return err;
	cores = topo.nr_cores > 0 ? topo.nr_cores : 1;
	if (cores > ACS_MAX_CHILDREN)
		cores = ACS_MAX_CHILDREN;
	bench_topo_pin(&topo, topo.main_pu);
	/* 1, 2, 4, ... and the core count; quick: 1 and the core count. */
	for (n = 1; n <= cores && !err; n = n * 2 > cores && n < cores ? cores : n * 2) {
		if (opts->quick && n > 1 && n < cores)
			continue;
		err = acs_processes(opts, arch, &topo, n, false);
		if (!err)
			err = acs_processes(opts, arch, &topo, n, true);
	}
	bench_topo_destroy(&topo);
	return err;
}

const struct mmp_seed mmp_seed_anon_cow_seq = {
	.name = "anon-cow-seq",
	.title = "vm-scalability anon-cow-seq: forked children COW-write THP memory (split since "
		 "5.8), and anon-cow-seq-hugetlb (copied whole)",
	/* Data movement is host code: one back end shows it; --arch picks another. */
	.archs = (const char *const[]){ "x86_64", NULL },
	.run_arch = anon_cow_seq_arch,
};
