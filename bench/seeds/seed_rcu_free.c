/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "rcu-free" (Qi Zheng, "x86: mm: free page table pages by RCU instead of
 * semi RCU", v2 6/7, Nov 2024; 718b13861d22 in 6.14): `stress-ng --mmap 1
 * --mmap-bytes 1G` with the latency of every munmap() in a bpftrace log2
 * histogram. The seed saw the bulk unchanged ([1K, 4K)) and fewer calls in the
 * [512K, 1M) tail (68 -> 29), and concluded "It doesn't seem to have much
 * effect on munmap": that is the claim here, the p50 ratio within RF_SAME of 1,
 * with the seed's two histograms printed beside this run's.
 *
 * Here each mmp_munmap() of the simulated space is timed, the kernel's before
 * against the patch (MMP_TABLE_FREE_RCU: every table by RCU, one that finds no
 * batch page by a call_rcu of its own). The kernel's before was one of two:
 *   - semi RCU (arm64, riscv64, and x86 guests whose TLB flush is a
 *     hypercall): batches to call_rcu, as after; a table that finds no batch
 *     page freed at once after an IPI to every CPU;
 *   - native (x86 on bare metal, PARAVIRT or not): tables freed with the
 *     pages right after the shootdown, whose IPIs wait for GUP-fast.
 * Both are judged against the seed's claim, batch pages being had as they
 * almost always are. Two more comparisons carry no claim: the single-table
 * path itself, every batch page refused (MMP_OPT_TABLE_BATCH_FAIL 1), semi
 * RCU's IPI and free against a call_rcu per table; and a synchronize_rcu per
 * table, a worst case no kernel had (the old base line of this seed), against
 * the patch. The workloads:
 *   - map 1 GiB (quick: 64 MiB), touch every page, munmap;
 *   - a loop of map 2 MiB, touch, munmap, for a time budget;
 *   - stress-ng's own order: map, touch, then munmap 4 KiB pages in random
 *     order, so only the last munmap of each 2 MiB span frees a table;
 * each alone and with reader CPUs (threads with an attached CPU) pinning and
 * unpinning pages of another region of the same space with mmp_gup_fast. The
 * claimed comparisons run every workload, the others the 2 MiB loop. The two
 * paths alternate in one space, so host drift hits both alike.
 *
 * Readers: one per online CPU but the one munmapping (1 to 3); MMPRIM_SEED_READERS=N
 * (up to 3) asks for N, more than the idle CPUs to see readers preempted inside
 * their read-side sections (or IRQs-off sections, which IPIs wait out).
 *
 * A claim is only decided where the samples hold the mechanism: a munmap that
 * freed a table its path's way. The p50 is of munmaps that did so only when at
 * least half of them did (RF_MECH_MIN) on each side; below, the case gets "no
 * verdict" and says in how many it was (with 4K random munmaps, 1 in 512: the
 * seed's own workload, where the p50 cannot see the change it is about).
 *
 * JSON: one object per (arch, case); "seconds" is the p50 munmap latency.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "seeds.h"
#include "stats.h"

/*
 * 4 GiB: inside every back end's space (a 3-level one has 256 GiB), far below
 * the mmap base; the readers, 4 GiB up, share no PMD table with it.
 */
#define RF_WORK		0x100000000ULL
#define RF_READERS	(RF_WORK + 4 * 1024 * BENCH_MIB)
#define RF_READER_LEN	(4 * BENCH_MIB)
#define RF_PIN		16
#define RF_MAX_READERS	3
#define RF_BUDGET	5.0		/* seconds of the 2 MiB loop per case: 1000s of munmaps */
#define RF_BUDGET_QUICK	0.15
/* "Not much effect": the p50 ratio within [1 / RF_SAME, RF_SAME]. */
#define RF_SAME		1.1
/* A claim on the p50 needs the mechanism in at least half the munmaps of each side. */
#define RF_MECH_MIN	0.5
#define RF_HIST_MAX	40		/* log2 buckets kept: [2^i, 2^(i+1)) ns, i <= 40 */

/*
 * The seed's histograms (bpftrace, 1 s of `stress-ng --mmap 1 --mmap-bytes 1G`),
 * by log2 bucket of ns: [512, 1K) is 9, [512K, 1M) is 19.
 */
static const uint64_t rf_seed_hist[2][RF_HIST_MAX + 1] = {
	/* without the patch */
	{ [10] = 99566, [11] = 77756, [12] = 32545, [13] = 442, [14] = 69, [15] = 1, [16] = 1,
	  [17] = 14, [18] = 14, [19] = 68 },
	/* with it */
	{ [9] = 69, [10] = 53921, [11] = 47088, [12] = 20583, [13] = 659, [14] = 93, [15] = 24,
	  [16] = 14, [17] = 6, [18] = 10, [19] = 29 },
};


enum rf_workload { RF_BIG, RF_LOOP, RF_STRESSNG, RF_NR_WORKLOADS };

/* One comparison: a way of freeing tables (the baseline) against the patch. */
struct rf_cmp {
	const char *name;		/* in the case's name */
	const char *label[2];		/* the two paths' column titles */
	long mode[2];			/* enum mmp_table_free of each */
	long fail;			/* MMP_OPT_TABLE_BATCH_FAIL, both sides */
	enum mmp_counter mech[2];	/* a munmap that moved it freed a table the path's way */
	bool claim;			/* the seed's finding is about it */
	bool loop_only;			/* the 2 MiB loop only: no claim, only the path's cost */
};

static const struct rf_cmp rf_cmps[] = {
	{ "semi RCU", { "semi RCU", "RCU" }, { MMP_TABLE_FREE_SEMI_RCU, MMP_TABLE_FREE_RCU }, 0,
	  { MMP_C_PGTABLE_FREE_BATCH, MMP_C_PGTABLE_FREE_BATCH }, true, false },
	{ "native", { "native", "RCU" }, { MMP_TABLE_FREE_NATIVE, MMP_TABLE_FREE_RCU }, 0,
	  { MMP_C_PGTABLE_FREE_NATIVE, MMP_C_PGTABLE_FREE_BATCH }, true, false },
	{ "single table", { "semi RCU: IPI, free", "RCU: call_rcu" },
	  { MMP_TABLE_FREE_SEMI_RCU, MMP_TABLE_FREE_RCU }, 1,
	  { MMP_C_PGTABLE_FREE_ONE_IPI, MMP_C_PGTABLE_FREE_ONE_RCU }, false, true },
	{ "worst case", { "synchronize_rcu each", "RCU" },
	  { MMP_TABLE_FREE_SYNC_EACH, MMP_TABLE_FREE_RCU }, 0,
	  { MMP_C_PGTABLE_FREE_SYNC, MMP_C_PGTABLE_FREE_BATCH }, false, true },
};
#define RF_NR_CMPS	(sizeof(rf_cmps) / sizeof(rf_cmps[0]))

static const char *const rf_workload_names[RF_NR_WORKLOADS] = {
	[RF_BIG] = "map-touch-munmap",
	[RF_LOOP] = "2MiB loop",
	[RF_STRESSNG] = "4K random munmap",
};

/* Everything one path saw in one workload and mode. */
struct rf_side {
	uint64_t *ns;		/* one latency per munmap */
	size_t n, cap;
	size_t *block;		/* where each turn of this path starts in ns */
	size_t nblocks, bcap;
	long mode, fail;	/* MMP_OPT_RCU_TABLE_FREE, MMP_OPT_TABLE_BATCH_FAIL */
	enum mmp_counter mech_c;	/* moved by a munmap that freed a table the path's way */
	size_t mech;		/* munmaps that did */
	double busy_s;		/* whole iterations: map, touch, munmap */
	uint64_t tables;	/* page tables unlinked by the munmaps (VmPTE drop) */
	struct mmp_counters c;	/* summed around each munmap */
	/*
	 * Of the first measured iteration: the loop runs for a time budget, so
	 * totals vary run to run, one iteration's counts do not.
	 */
	int iters;
	uint64_t one_tables;
	struct mmp_counters one;
};

struct rf_readers {
	struct mmp_space *s;
	pthread_t th[RF_MAX_READERS];
	int n, stop, errors, attached;
	uint64_t pins;
};

struct rf_ctx {
	const struct mmp_seed_opts *opts;
	const char *arch;
	struct bench_env env;
	uint64_t big_bytes, stressng_bytes, rng;
	uint32_t *order;	/* stress-ng: page indexes, shuffled */
};

static uint64_t rf_rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* ---- readers ------------------------------------------------------------------------ */

static void *rf_reader(void *arg)
{
	struct rf_readers *r = arg;
	uint64_t pfns[RF_PIN], rng = (uintptr_t)&pfns | 1, pins = 0;
	struct mmp_cpu *cpu;
	int errors = 0;

	if (mmp_cpu_attach(r->s, &cpu)) {
		__atomic_fetch_add(&r->errors, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&r->attached, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_fetch_add(&r->attached, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t page = rf_rnd(&rng) % (RF_READER_LEN / MMP_PAGE_SIZE - RF_PIN);
		int n = mmp_gup_fast(r->s, RF_READERS + page * MMP_PAGE_SIZE, RF_PIN, false, pfns);

		if (n < 0 || (n > 0 && mmp_unpin(r->s, pfns, n)))
			errors++;
		pins += n > 0 ? n : 0;
	}
	errors += !!mmp_cpu_detach(cpu);
	__atomic_fetch_add(&r->pins, pins, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->errors, errors, __ATOMIC_RELAXED);
	return NULL;
}

static int rf_readers_start(struct rf_readers *r, struct mmp_space *s, int n)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	for (r->n = 0; r->n < n; r->n++)
		if (pthread_create(&r->th[r->n], NULL, rf_reader, r))
			return -EAGAIN;
	/* Every reader's CPU attached before the first munmap: the IPIs it counts go to them. */
	while (__atomic_load_n(&r->attached, __ATOMIC_ACQUIRE) < n)
		usleep(100);
	return r->errors ? -EIO : 0;
}

static int rf_readers_stop(struct rf_readers *r)
{
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < r->n; i++)
		pthread_join(r->th[i], NULL);
	return r->errors ? -EIO : 0;
}

/* ---- one iteration ------------------------------------------------------------------- */

static int rf_side_add(struct rf_side *side, uint64_t ns)
{
	if (side->n == side->cap) {
		size_t cap = side->cap ? side->cap * 2 : 4096;
		uint64_t *p = realloc(side->ns, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		side->ns = p;
		side->cap = cap;
	}
	side->ns[side->n++] = ns;
	return 0;
}

static uint64_t rf_vmpte(struct mmp_space *s)
{
	struct mmp_space_stat st;

	mmp_space_stat(s, &st);
	return st.pgtable_bytes;
}

/* Time one munmap; its counters and the tables it unlinked go to @side. */
static int rf_munmap(struct rf_ctx *x, struct rf_side *side, uint64_t addr, uint64_t len)
{
	struct mmp_space *s = x->env.space;
	struct mmp_counters c0, c1;
	uint64_t pte0 = rf_vmpte(s), t0, t1;
	int err;

	mmp_space_counters(s, &c0);
	t0 = bench_now_ns();
	err = mmp_munmap(s, addr, len);
	t1 = bench_now_ns();
	mmp_space_counters(s, &c1);
	if (err)
		return err;
	for (int k = 0; k < MMP_NR_COUNTERS; k++)
		side->c.v[k] += c1.v[k] - c0.v[k];
	/* The mechanism: this munmap freed a table the path's way. */
	if (c1.v[side->mech_c] > c0.v[side->mech_c])
		side->mech++;
	side->tables += (pte0 - rf_vmpte(s)) / MMP_PAGE_SIZE;
	return rf_side_add(side, t1 - t0);
}

/* One iteration of @wl on the path @side stands for; @side NULL: a warm-up. */
static int rf_iteration(struct rf_ctx *x, enum rf_workload wl, struct rf_side *side)
{
	struct mmp_space *s = x->env.space;
	struct rf_side scratch = { 0 };
	uint64_t len = wl == RF_BIG ? x->big_bytes : wl == RF_LOOP ? 2 * BENCH_MIB
								   : x->stressng_bytes;
	uint64_t addr, pages = len / MMP_PAGE_SIZE;
	double t0 = bench_now();
	int err;

	err = mmp_mmap(s, RF_WORK, len, RW, MMP_MAP_FIXED, &addr);
	if (!err)
		err = mmp_memset(x->env.cpu, RF_WORK, 0x5a, len);
	if (err)
		return err;
	if (!side)
		side = &scratch;
	if (wl != RF_STRESSNG) {
		err = rf_munmap(x, side, RF_WORK, len);
	} else {
		/* Step 1 of stress-ng's mmap stressor: unmap every page in random order. */
		for (uint64_t i = 0; i < pages; i++)
			x->order[i] = i;
		for (uint64_t i = pages - 1; i > 0; i--) {
			uint64_t j = rf_rnd(&x->rng) % (i + 1), t = x->order[i];

			x->order[i] = x->order[j];
			x->order[j] = t;
		}
		for (uint64_t i = 0; i < pages && !err; i++)
			err = rf_munmap(x, side, RF_WORK + (uint64_t)x->order[i] * MMP_PAGE_SIZE,
					MMP_PAGE_SIZE);
	}
	side->busy_s += bench_now() - t0;
	if (!err && side->iters++ == 0) {
		side->one = side->c;
		side->one_tables = side->tables;
	}
	free(scratch.ns);
	return err;
}

/* ---- statistics and the bpftrace histogram -------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted @v. */
static uint64_t rf_pct(const uint64_t *v, size_t n, double p)
{
	size_t rank = (size_t)(p / 100.0 * n + 0.999999);

	if (!n)
		return 0;
	return v[rank ? BENCH_MIN(rank, n) - 1 : 0];
}

/* bpftrace's bucket labels: 512, 1K, 2K, ..., 1M. */
static void rf_label(char *buf, size_t size, unsigned int log2)
{
	static const char *const suffix[] = { "", "K", "M", "G", "T", "P" };
	unsigned int unit = log2 / 10;

	snprintf(buf, size, "%llu%s", 1ULL << (log2 - unit * 10), suffix[unit]);
}

/* Munmaps per log2 bucket of ns, bucket i = [2^i, 2^(i+1)), the last one open. */
static void rf_bucket(const uint64_t *v, size_t n, uint64_t *bucket)
{
	memset(bucket, 0, (RF_HIST_MAX + 1) * sizeof(*bucket));
	for (size_t i = 0; i < n; i++)
		bucket[BENCH_MIN(v[i] ? 63 - __builtin_clzll(v[i]) : 0, RF_HIST_MAX)]++;
}

/* `[c0,c1,...]`, RF_HIST_MAX + 1 buckets, appended at @buf + *@off. */
static void rf_hist_json(char *buf, size_t len, size_t *off, const uint64_t *bucket)
{
	bench_append(buf, len, off, "[");
	for (int b = 0; b <= RF_HIST_MAX; b++)
		bench_append(buf, len, off, "%s%llu", b ? "," : "", (unsigned long long)bucket[b]);
	bench_append(buf, len, off, "]");
}

/*
 * The seed's two histograms and this run's two side by side, one row per log2
 * bucket any of them has, as bpftrace's hist() labels them; counts with their
 * share of the column, and a bar for this run's paths (each @ is 1/RF_BAR_SIDE).
 */
#define RF_BAR_SIDE	16
static void rf_hist(const uint64_t *base, const uint64_t *opt, const size_t n[2],
		    const char *const label[2])
{
	const uint64_t *col[4] = { rf_seed_hist[0], rf_seed_hist[1], base, opt };
	uint64_t total[4] = { 0 };
	int first = RF_HIST_MAX + 1, last = -1;

	for (int c = 0; c < 4; c++) {
		for (int b = 0; b <= RF_HIST_MAX; b++) {
			total[c] += col[c][b];
			if (col[c][b]) {
				first = BENCH_MIN(first, b);
				last = BENCH_MAX(last, b);
			}
		}
	}
	printf("%-26s %19s %19s %19s%*s %19s\n", "@ns[munmap]:", "seed, without", "seed, with",
	       label[0], RF_BAR_SIDE + 3, "", label[1]);
	for (int b = first; b <= last; b++) {
		char lo[16], hi[16], head[40];

		rf_label(lo, sizeof(lo), b);
		rf_label(hi, sizeof(hi), b + 1);
		snprintf(head, sizeof(head), "[%s, %s)", lo, hi);
		printf("%-26s", head);
		for (int c = 0; c < 4; c++) {
			double share = total[c] ? (double)col[c][b] / total[c] : 0;

			printf(" %10llu (%5.1f%%)", (unsigned long long)col[c][b], 100 * share);
			if (c >= 2) {
				char bar[RF_BAR_SIDE + 1];
				int w = (int)lround(share * RF_BAR_SIDE);

				memset(bar, '@', w);
				bar[w] = 0;
				printf(" |%-*s|", RF_BAR_SIDE, bar);
			}
		}
		putchar('\n');
	}
	printf("%-26s %19llu %19llu %19zu%*s %19zu\n", "munmaps", (unsigned long long)total[0],
	       (unsigned long long)total[1], n[0], RF_BAR_SIDE + 3, "", n[1]);
}

static void rf_time(char *buf, size_t size, double ns)
{
	if (ns < 1e3)
		snprintf(buf, size, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, size, "%.1f us", ns / 1e3);
	else
		snprintf(buf, size, "%.2f ms", ns / 1e6);
}

/* Percentiles of one side, with the sample count they come from. */
struct rf_stats {
	uint64_t p50, p99, max;
	size_t n;
	bool have_p99;		/* n >= BENCH_MIN_P99 */
};

static struct rf_stats rf_stats(struct rf_side *side)
{
	qsort(side->ns, side->n, sizeof(side->ns[0]), cmp_u64);
	return (struct rf_stats){
		.p50 = rf_pct(side->ns, side->n, 50),
		.p99 = rf_pct(side->ns, side->n, 99),
		.max = side->n ? side->ns[side->n - 1] : 0,
		.n = side->n,
		.have_p99 = side->n >= BENCH_MIN_P99,
	};
}

/* A turn of this path begins at the next sample. */
static int rf_block(struct rf_side *side)
{
	if (side->nblocks == side->bcap) {
		size_t cap = side->bcap ? side->bcap * 2 : 64;
		size_t *p = realloc(side->block, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		side->block = p;
		side->bcap = cap;
	}
	side->block[side->nblocks++] = side->n;
	return 0;
}

/* The @pct percentile ratio baseline / optimized, with a block-bootstrap interval. */
static void rf_ci(const struct rf_side *side, double pct, struct bench_ci *ci)
{
	struct bench_blocks b[2];
	double *v[2];

	for (int k = 0; k < 2; k++) {
		v[k] = malloc((side[k].n ? side[k].n : 1) * sizeof(double));
		if (!v[k])
			abort();
		for (size_t i = 0; i < side[k].n; i++)
			v[k][i] = (double)side[k].ns[i];
		b[k] = (struct bench_blocks){ .v = v[k], .n = side[k].n, .start = side[k].block,
					      .nblocks = side[k].nblocks };
	}
	bench_block_pct_ratio_ci(&b[0], &b[1], pct, ci);
	free(v[0]);
	free(v[1]);
}

/* ---- one case: a workload, alone or with readers, both paths --------------------------- */

static void rf_row(const char *name, double base, double opt, bool time)
{
	char b[32], o[32];

	if (time) {
		rf_time(b, sizeof(b), base);
		rf_time(o, sizeof(o), opt);
	} else {
		snprintf(b, sizeof(b), "%.0f", base);
		snprintf(o, sizeof(o), "%.0f", opt);
	}
	printf("%-*s %*s %*s\n", BENCH_NAME_W, name, BENCH_VALUE_W, b, BENCH_VALUE_W, o);
}

/* The path @side stands for, from the next munmap on. */
static int rf_path(struct mmp_space *s, const struct rf_side *side)
{
	int err = mmp_space_set_opt(s, MMP_OPT_RCU_TABLE_FREE, side->mode);

	return err ? err : mmp_space_set_opt(s, MMP_OPT_TABLE_BATCH_FAIL, side->fail);
}

/* The counters that tell the paths apart, in the text table: the rest is in the JSON. */
static const enum mmp_counter rf_path_counters[] = {
	MMP_C_PGTABLE_FREE_BATCH, MMP_C_PGTABLE_FREE_ONE_IPI, MMP_C_PGTABLE_FREE_ONE_RCU,
	MMP_C_PGTABLE_FREE_NATIVE, MMP_C_PGTABLE_FREE_SYNC, MMP_C_RCU_CALL, MMP_C_RCU_SYNC,
	MMP_C_TABLE_BATCH_FAIL, MMP_C_TABLE_SYNC_IPI,
};

static int rf_case(struct rf_ctx *x, const struct rf_cmp *cmp, enum rf_workload wl,
		   int nr_readers)
{
	const struct mmp_seed_opts *opts = x->opts;
	struct mmp_space *s = x->env.space;
	struct mmp_seed_result base = { .label = cmp->label[0] }, opt = { .label = cmp->label[1] };
	struct rf_side side[2];
	const double budget = opts->quick ? RF_BUDGET_QUICK : RF_BUDGET;
	/* Turns per side, the units of the intervals: one iteration, 16 of the loop. */
	const size_t min_turns = BENCH_MIN_SAMPLES;
	struct rf_readers readers = { 0 };
	struct mmp_seed_claim claim = { 0 };
	struct bench_ci ci50, ci99;
	struct rf_stats st[2];
	uint64_t hist[2][RF_HIST_MAX + 1];
	char name[96], extra[4096], note[96], buf[64];
	double t0, share[2], mech;
	size_t off = 0;
	int err = 0, err2;

	for (int v = 0; v < 2; v++)
		side[v] = (struct rf_side){ .mode = cmp->mode[v], .fail = cmp->fail,
					    .mech_c = cmp->mech[v] };
	/* A warm-up of each path, and verify that it left the space sound. */
	for (int v = 0; v < 2 && !err; v++) {
		err = rf_path(s, &side[v]);
		if (!err)
			err = rf_iteration(x, wl, NULL);
	}
	if (!err)
		err = mmp_space_verify(s);
	if (nr_readers && !err)
		err = rf_readers_start(&readers, s, nr_readers);
	/*
	 * The paths alternate, in blocks (16 iterations of the 2 MiB loop), so
	 * that drift of the host hits both alike; at least min_turns each, and
	 * for the loop until the budget is spent.
	 */
	t0 = bench_now();
	for (int i = 0; !err; i++) {
		int v = i & 1;

		if (side[0].nblocks >= min_turns && side[1].nblocks >= min_turns && !v &&
		    (wl != RF_LOOP || bench_now() - t0 >= budget))
			break;
		err = rf_path(s, &side[v]);
		if (!err)
			err = rf_block(&side[v]);
		for (int k = 0; k < (wl == RF_LOOP ? 16 : 1) && !err; k++)
			err = rf_iteration(x, wl, &side[v]);
	}
	if (nr_readers) {
		err2 = rf_readers_stop(&readers);
		err = err ? err : err2;
	}
	/* The space is sound after both paths (verify does not wait for grace periods). */
	err2 = mmp_space_verify(s);
	err = err ? err : err2;
	if (err)
		goto out;

	/* Intervals first: rf_stats() sorts the samples out of their turns. */
	rf_ci(side, 50, &ci50);
	rf_ci(side, 99, &ci99);
	/* Readers' pins are no munmap's work, and how often they race depends on timing. */
	for (int v = 0; v < 2; v++) {
		side[v].one.v[MMP_C_GUP_FAST] = side[v].one.v[MMP_C_GUP_FAST_BACKOFF] = 0;
		side[v].c = side[v].one;
		side[v].tables = side[v].one_tables;
		st[v] = rf_stats(&side[v]);
	}
	/* The figure is the p50, which the claim is about; the p99 is beside it. */
	base.seconds = st[0].p50 * 1e-9;
	opt.seconds = st[1].p50 * 1e-9;
	base.counters = side[0].c;
	opt.counters = side[1].c;
	snprintf(name, sizeof(name), "%s %s, %s", rf_workload_names[wl],
		 nr_readers ? "with readers" : "alone", cmp->name);
	/*
	 * The seed's finding, "not much effect on munmap", decided on the p50 only
	 * where the p50 is of munmaps that free tables: the share that did on the
	 * side where fewer did.
	 */
	for (int v = 0; v < 2; v++)
		share[v] = side[v].n ? (double)side[v].mech / side[v].n : 0;
	mech = BENCH_MIN(share[0], share[1]);
	if (!cmp->claim) {
		/* The seed measured a kernel's before, with the batch pages it had. */
		claim.note = cmp->fail ? "no claim: the seed's munmaps had their batch pages"
				       : "no claim: no kernel freed tables this way";
	} else {
		claim.what = "p50 ratio within 0.91x-1.10x (not much effect)";
		claim.published = "not much effect (tail 68 -> 29)";
		if (mech < RF_MECH_MIN) {
			snprintf(note, sizeof(note),
				 "no verdict: mechanism in %.2g%% of samples < %.0f%%", 100 * mech,
				 100 * RF_MECH_MIN);
			claim.verdict = BENCH_NO_VERDICT;
			claim.note = note;
		} else {
			claim.verdict = bench_verdict_within(&ci50, 1 / RF_SAME, RF_SAME);
		}
	}

	if (!opts->json) {
		printf("rcu-free [%s, %s -> %s, %s", x->arch, cmp->label[0], cmp->label[1],
		       rf_workload_names[wl]);
		if (wl == RF_BIG)
			printf(" %llu MiB", (unsigned long long)(x->big_bytes / BENCH_MIB));
		if (wl == RF_STRESSNG)
			printf(" of %llu MiB", (unsigned long long)(x->stressng_bytes / BENCH_MIB));
		if (nr_readers)
			printf(", %d reader CPU%s pinning with mmp_gup_fast: %llu pins]%s\n",
			       nr_readers, nr_readers > 1 ? "s" : "",
			       (unsigned long long)readers.pins, mmp_seed_quick_tag(opts));
		else
			printf(", alone]%s\n", mmp_seed_quick_tag(opts));
	}
	for (int v = 0; v < 2; v++)
		rf_bucket(side[v].ns, side[v].n, hist[v]);
	if (!opts->json) {
		size_t n[2] = { side[0].n, side[1].n };

		rf_hist(hist[0], hist[1], n, cmp->label);
		printf("%-*s %*s %*s\n", BENCH_NAME_W, "munmap latency", BENCH_VALUE_W, "baseline",
		       BENCH_VALUE_W, "optimized");
		rf_row("p50", st[0].p50, st[1].p50, true);
		if (st[0].have_p99 && st[1].have_p99)
			rf_row("p99", st[0].p99, st[1].p99, true);
		else
			printf("%-*s %*s %*s\n", BENCH_NAME_W, "p99", BENCH_VALUE_W, "n/a",
			       BENCH_VALUE_W, "(< 100 samples)");
		rf_row("max", st[0].max, st[1].max, true);
		rf_row("munmaps (samples)", side[0].n, side[1].n, false);
		rf_row("iterations", side[0].iters, side[1].iters, false);
		rf_row("tables freed/iter", side[0].tables, side[1].tables, false);
		for (size_t k = 0; k < sizeof(rf_path_counters) / sizeof(rf_path_counters[0]); k++) {
			enum mmp_counter c = rf_path_counters[k];

			if (side[0].c.v[c] || side[1].c.v[c])
				rf_row(mmp_counter_name(c), side[0].c.v[c], side[1].c.v[c], false);
		}
		printf("%-*s %*.2f%% %*.2f%%\n", BENCH_NAME_W, "munmaps freeing a table",
		       BENCH_VALUE_W - 1, 100 * share[0], BENCH_VALUE_W - 1, 100 * share[1]);
		printf("p50 %s (n=%zu/%zu)", bench_ci_str(&ci50, buf, sizeof(buf)), st[0].n, st[1].n);
		if (st[0].have_p99 && st[1].have_p99)
			printf(", p99 %s", bench_ci_str(&ci99, buf, sizeof(buf)));
		printf(", max %.2fx (baseline / optimized)\n", (double)st[0].max / st[1].max);
		printf("(table: seconds = p50 of mmp_munmap; counters of the first iteration)\n");
	}
	bench_append(extra, sizeof(extra), &off,
		     "\"workload\":\"%s\",\"readers\":%d,\"reader_pins\":%llu,"
		     "\"seconds_is\":\"p50 of mmp_munmap latency\",\"bytes\":%llu,"
		     "\"baseline_munmaps\":%zu,\"optimized_munmaps\":%zu,"
		     "\"baseline_p50_ns\":%llu,\"optimized_p50_ns\":%llu,"
		     "\"p50_ratio\":%.6g,\"p50_ratio_ci\":[%.6g,%.6g],"
		     "\"baseline_max_ns\":%llu,\"optimized_max_ns\":%llu,"
		     "\"baseline_tables_freed\":%llu,\"optimized_tables_freed\":%llu,"
		     "\"comparison\":\"%s\",\"baseline_path\":\"%s\",\"optimized_path\":\"%s\","
		     "\"batch_fail\":%ld,\"baseline_mechanism_counter\":\"%s\","
		     "\"optimized_mechanism_counter\":\"%s\"",
		     rf_workload_names[wl], nr_readers, (unsigned long long)readers.pins,
		     (unsigned long long)(wl == RF_BIG ? x->big_bytes
			: wl == RF_LOOP ? 2 * BENCH_MIB : x->stressng_bytes),
		     side[0].n, side[1].n,
		     (unsigned long long)st[0].p50, (unsigned long long)st[1].p50,
		     ci50.ratio, ci50.lo, ci50.hi,
		     (unsigned long long)st[0].max, (unsigned long long)st[1].max,
		     (unsigned long long)side[0].tables, (unsigned long long)side[1].tables,
		     cmp->name, cmp->label[0], cmp->label[1], cmp->fail,
		     mmp_counter_name(cmp->mech[0]), mmp_counter_name(cmp->mech[1]));
	bench_append(extra, sizeof(extra), &off,
		     ",\"baseline_mechanism_munmaps\":%zu,\"optimized_mechanism_munmaps\":%zu,"
		     "\"mechanism_share\":%.6g,\"mechanism_min_share\":%.6g",
		     side[0].mech, side[1].mech, mech, RF_MECH_MIN);
	bench_append(extra, sizeof(extra), &off, ",\"baseline_log2_hist\":");
	rf_hist_json(extra, sizeof(extra), &off, hist[0]);
	bench_append(extra, sizeof(extra), &off, ",\"optimized_log2_hist\":");
	rf_hist_json(extra, sizeof(extra), &off, hist[1]);
	bench_append(extra, sizeof(extra), &off, ",\"seed_log2_hist\":{\"without\":");
	rf_hist_json(extra, sizeof(extra), &off, rf_seed_hist[0]);
	bench_append(extra, sizeof(extra), &off, ",\"with\":");
	rf_hist_json(extra, sizeof(extra), &off, rf_seed_hist[1]);
	bench_append(extra, sizeof(extra), &off, "}");
	if (st[0].have_p99 && st[1].have_p99)
		bench_append(extra, sizeof(extra), &off,
			     ",\"baseline_p99_ns\":%llu,\"optimized_p99_ns\":%llu,"
			     "\"p99_ratio\":%.6g,\"p99_ratio_ci\":[%.6g,%.6g]",
			     (unsigned long long)st[0].p99, (unsigned long long)st[1].p99,
			     ci99.ratio, ci99.lo, ci99.hi);
	mmp_seed_report(opts, "rcu-free", x->arch, name, &base, &opt, &ci50, &claim, extra);
	if (!opts->json)
		putchar('\n');
out:
	for (int v = 0; v < 2; v++) {
		free(side[v].ns);
		free(side[v].block);
	}
	return err;
}

static int rf_arch(const struct mmp_seed_opts *opts, const char *arch)
{
	struct rf_ctx x = {
		.opts = opts,
		.arch = arch,
		.big_bytes = (opts->quick ? 64 : 1024) * BENCH_MIB,
		.stressng_bytes = (opts->quick ? 8 : 64) * BENCH_MIB,
		.rng = 0x2545f4914f6cdd1dULL,
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *env = getenv("MMPRIM_SEED_READERS");
	int nr_readers = (int)BENCH_MAX(1, BENCH_MIN(RF_MAX_READERS, cpus - 1));
	uint64_t addr;
	int err;

	/* More readers than idle CPUs: readers get preempted inside their read-side sections. */
	if (env && atoi(env) > 0)
		nr_readers = BENCH_MIN(atoi(env), RF_MAX_READERS);
	/* One mapping at a time, its tables, the readers' region and room to spare. */
	err = bench_env_create(&x.env, NULL, x.big_bytes + 64 * BENCH_MIB, arch, 0);
	if (err)
		return err;
	x.order = malloc(x.stressng_bytes / MMP_PAGE_SIZE * sizeof(*x.order));
	err = x.order ? 0 : -ENOMEM;
	if (!err)
		err = mmp_mmap(x.env.space, RF_READERS, RF_READER_LEN, RW,
			       MMP_MAP_FIXED | MMP_MAP_POPULATE, &addr);
	if (!err && !opts->json)
		printf("rcu-free [%s]: munmap latency, the kernel's before against Qi Zheng's patch "
		       "(RCU): semi RCU (arm64, riscv64, x86 PV guests) and native (x86 bare metal) "
		       "with their batch pages, as the seed ran; without claim, the single-table "
		       "path (no batch page: semi RCU's IPI and free against a call_rcu each) and a "
		       "synchronize_rcu per table, a worst case no kernel had; %d reader CPU%s in "
		       "the 'with readers' cases\n\n", arch, nr_readers, nr_readers > 1 ? "s" : "");
	for (size_t c = 0; c < RF_NR_CMPS && !err; c++) {
		const struct rf_cmp *cmp = &rf_cmps[c];

		/* Native needs a shootdown that sends IPIs: the back end refuses it otherwise. */
		if (cmp->mode[0] == MMP_TABLE_FREE_NATIVE &&
		    mmp_space_set_opt(x.env.space, MMP_OPT_RCU_TABLE_FREE, cmp->mode[0]) == -EINVAL) {
			if (!opts->json)
				printf("rcu-free [%s]: no native case, TLB invalidations are broadcast\n\n",
				       arch);
			continue;
		}
		for (int wl = 0; wl < RF_NR_WORKLOADS && !err; wl++) {
			if (cmp->loop_only && wl != RF_LOOP)
				continue;
			for (int r = 0; r < 2 && !err; r++)
				err = rf_case(&x, cmp, wl, r ? nr_readers : 0);
		}
	}
	free(x.order);
	bench_env_destroy(&x.env);
	return err;
}

const struct mmp_seed mmp_seed_rcu_free = {
	.name = "rcu-free",
	.title = "munmap latency histogram: page tables freed by RCU against semi RCU and native",
	/* The RCU effect does not depend on the table format: one back end unless asked. */
	.archs = (const char *const[]){ "x86_64", NULL },
	.run_arch = rf_arch,
};
