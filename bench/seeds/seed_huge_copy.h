/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "huge-copy" (bench/seeds/seed_huge_copy.c): what its files share. The
 * run, struct hc_run, with every sample of it; the targets; how a target is
 * decided hot (seed_huge_copy_decide.c); the measurement and its medians
 * (seed_huge_copy_measure.c); the report (seed_huge_copy_report.c).
 */
#ifndef MMP_BENCH_SEED_HUGE_COPY_H
#define MMP_BENCH_SEED_HUGE_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cache.h"
#include "common.h"
#include "huge_copy.h"
#include "seeds.h"
#include "topo.h"

#define HC_RUNS		12
#define HC_RUNS_QUICK	BENCH_MIN_SAMPLES	/* every claim needs this many per target */
#define HC_TARGETS	4		/* n = 0, 255, 511, random */
#define HC_MAX_VARIANTS	16

/*
 * Counted decisions: hot when at most a quarter of the target's lines miss
 * L1D, cold when half or more do. Both leave room for the lines the
 * counter's own enable (a system call) or the simulator's page-table work
 * between the copy and the read may displace.
 */
#define HC_HOT_MISSES	0.25
#define HC_COLD_MISSES	0.5

enum hc_decide { HC_DECIDE_PERF, HC_DECIDE_CACHEGRIND, HC_DECIDE_LATENCY, HC_NR_DECIDE };

/* Each method's name ("decided_by" in JSON) and what it counts (seed_huge_copy_decide.c). */
extern const char *const hc_decide_names[HC_NR_DECIDE];
extern const char *const hc_decide_what[HC_NR_DECIDE];

/* The targets n: their names, and the sub-page of each (rand's in --deterministic). */
extern const char *const hc_target_names[HC_TARGETS];
extern const unsigned int hc_target_fixed[HC_TARGETS];

struct hc_run {
	const struct mmp_seed_opts *opts;
	const char *arch;
	bool hugetlb;		/* the trial's page is a hugetlb page, copied whole: the claims */
	struct bench_topo topo;
	bool have_topo;
	struct hc_rig rig;
	struct hc_buf evict;
	struct hc_victim victim, evictor;
	bool have_victim;
	const char *variants[HC_MAX_VARIANTS];
	int nr_variants, nr_press, runs;
	long nbhd;
	size_t pressure_bytes;
	struct hc_calib calib[2];
	struct hc_sample *s;	/* [press][variant][order][target][run] */
	unsigned int *n;	/* the target of each sample */
	double *miss;		/* perf: L1D read misses of each sample's target read */
	uint64_t rng;
	FILE *csv;
	enum hc_decide decide;	/* the best method this machine offers */
	/* cachegrind: D1mr of each (variant, order, target) read, when cg_ok[variant] */
	bool cg_ok[HC_MAX_VARIANTS];
	double cg_d1mr[HC_MAX_VARIANTS][MMP_NR_HUGE_ORDERS][HC_TARGETS];
};

/* Where the samples of (pressure @p, variant @v, order @o, target @t) begin in h->s, n, miss. */
static inline size_t cell(const struct hc_run *h, int p, int v, int o, int t)
{
	return (((size_t)p * h->nr_variants + v) * MMP_NR_HUGE_ORDERS + o) * HC_TARGETS + t;
}

static inline struct hc_sample *sample(const struct hc_run *h, int p, int v, int o, int t, int r)
{
	return &h->s[cell(h, p, v, o, t) * h->runs + r];
}

/* ---- seed_huge_copy_decide.c: is the target hot ---------------------------------------- */

/* --deterministic: the read of target t after order o, a function of its own for cachegrind. */
extern double (*const hc_det_read[MMP_NR_HUGE_ORDERS][HC_TARGETS])(const void *);
/* hc_trial.read where perf counts: the target read, its L1D misses left in hc_perf_last_misses. */
double hc_read_perf(const void *p);
extern double hc_perf_last_misses;

bool hc_variant_nt(const char *name);
void hc_pick_decide(struct hc_run *h);
enum hc_decide hc_case_decide(const struct hc_run *h, int p, int v);
double hc_misses_per_line(const struct hc_run *h, int p, int v, int o, int t, enum hc_decide how);
enum bench_verdict hc_decide_hot(const struct hc_run *h, int p, int v, int o, enum hc_decide how,
				 char *miss, size_t len);
bool hc_claim_applies(const struct hc_run *h, int v, int o);

/* ---- seed_huge_copy_measure.c: the trials, and what their samples say ------------------- */

int hc_measure(struct hc_run *h, int p);
int hc_values(const struct hc_run *h, int p, int v, int o, int t, int what, double *vals);
double hc_med(const struct hc_run *h, int p, int v, int o, int t, int what);
void hc_copy_ci(const struct hc_run *h, int p, int v, int o, struct bench_ci *ci);

/* ---- seed_huge_copy_report.c ------------------------------------------------------------ */

int hc_report(struct hc_run *h);

#endif /* MMP_BENCH_SEED_HUGE_COPY_H */
