/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats.c: the intervals and verdicts the seeds decide with. Intervals
 * must contain their point estimate, repeat for the same samples, narrow with
 * more samples down to the spread between windows of time; sampling stops on
 * the width alone; verdicts must never decide from fewer than 10 samples a side.
 * And calib.c's cache classes: strictly increasing, merged when the
 * noise cannot tell two levels apart.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../tests/lib/tap.h"
#include "cache.h"
#include "stats.h"

static uint64_t rng = 88172645463325252ULL;

/* Uniform in [0, 1), our own stream. */
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng >> 11) * (1.0 / 9007199254740992.0);
}

/* Paired samples whose true ratio is @ratio, with +-@noise of multiplicative noise. */
static void pairs(double *base, double *opt, size_t n, double ratio, double noise)
{
	for (size_t i = 0; i < n; i++) {
		double drift = 1 + 0.5 * uniform();	/* shared by the pair: cancels */

		opt[i] = drift * (1 + noise * (uniform() - 0.5));
		base[i] = ratio * drift * (1 + noise * (uniform() - 0.5));
	}
}

static void check_paired(void)
{
	double base[200], opt[200];
	struct bench_ci a, b, wide, narrow;

	pairs(base, opt, 200, 3.0, 0.1);
	bench_ratio_ci(base, opt, 200, &a);
	bench_ratio_ci(base, opt, 200, &b);
	tap_ok(a.lo <= a.ratio && a.ratio <= a.hi, "the interval holds its median (%.3f [%.3f, %.3f])",
	       a.ratio, a.lo, a.hi);
	tap_ok(a.lo < 3.0 && 3.0 < a.hi, "and the true ratio 3");
	tap_ok(a.lo == b.lo && a.hi == b.hi && a.ratio == b.ratio,
	       "the same samples give the same interval");
	tap_eq(a.samples, 200, "samples are pairs");
	tap_ok(fabs(a.ratio - 3.0) < 0.05, "the median ratio is near 3 (%.3f): drift cancels",
	       a.ratio);

	bench_ratio_ci(base, opt, 12, &wide);
	bench_ratio_ci(base, opt, 200, &narrow);
	tap_ok(narrow.hi - narrow.lo < wide.hi - wide.lo,
	       "more pairs, a narrower interval (%.3f < %.3f)", narrow.hi - narrow.lo,
	       wide.hi - wide.lo);

	bench_ratio_ci(base, opt, 1, &a);
	tap_ok(fabs(a.lo * (1 + BENCH_WINDOW_SPREAD) - a.ratio) < 1e-9 &&
	       fabs(a.ratio * (1 + BENCH_WINDOW_SPREAD) - a.hi) < 1e-9,
	       "one pair: the spread between windows alone");

	/* No noise in the window: the interval is the spread between windows, too wide for 1%. */
	for (int i = 0; i < 200; i++) {
		base[i] = 1.34;
		opt[i] = 1.0;
	}
	bench_ratio_ci(base, opt, 200, &a);
	tap_ok(fabs(a.lo * (1 + BENCH_WINDOW_SPREAD) - 1.34) < 1e-9 &&
	       fabs(1.34 * (1 + BENCH_WINDOW_SPREAD) - a.hi) < 1e-9,
	       "identical pairs: 1.34 widened by the spread between windows ([%.3f, %.3f])",
	       a.lo, a.hi);
	tap_eq(bench_verdict_at_least(&a, 1.35), BENCH_INCONCLUSIVE,
	       "a claim within that spread is inconclusive");
}

/*
 * The stop does not look at any claim: samples from a ratio that sits on a
 * claim stop as they would for any other claim, so no claim can be decided by
 * choosing when to stop.
 */
static void check_stopping(void)
{
	struct bench_pairs p;
	struct bench_ci ci;
	double base[60], opt[60];

	pairs(base, opt, 60, 1.35, 0.2);
	bench_pairs_init(&p, 0, 60, 1e9);
	tap_eq(p.min, BENCH_MIN_SAMPLES, "at least %d pairs", BENCH_MIN_SAMPLES);
	for (int i = 0; i < 60 && bench_pairs_more(&p); i++)
		if (bench_pairs_add(&p, base[i], opt[i]))
			break;
	bench_pairs_ci(&p, &ci);
	tap_ok(p.n == p.max || ci.hi - ci.lo <= BENCH_WIDTH * ci.ratio,
	       "stopped at %zu pairs: at the maximum or once the interval was narrow", p.n);
	bench_pairs_free(&p);
}

static void check_verdicts(void)
{
	struct bench_ci ci = { .ratio = 3.0, .lo = 2.9, .hi = 3.1, .samples = 10 };

	tap_eq(bench_verdict_at_least(&ci, 2.0), BENCH_MET, "interval above the target: met");
	tap_eq(bench_verdict_at_least(&ci, 4.0), BENCH_NOT_MET, "below: not met");
	tap_eq(bench_verdict_at_least(&ci, 3.0), BENCH_INCONCLUSIVE, "spanning: inconclusive");
	ci.samples = 9;
	tap_eq(bench_verdict_at_least(&ci, 2.0), BENCH_INCONCLUSIVE,
	       "9 samples never decide, however clear");
	tap_eq(bench_verdict_at_least(&ci, 4.0), BENCH_INCONCLUSIVE, "not even not met");
	ci.samples = 10;
	ci.lo = NAN;
	tap_eq(bench_verdict_at_least(&ci, 2.0), BENCH_INCONCLUSIVE, "no interval: inconclusive");
	tap_eq(bench_verdict_below(100, 150, 10, 200), BENCH_MET, "below a limit: met");
	tap_eq(bench_verdict_below(250, 300, 10, 200), BENCH_NOT_MET, "above it: not met");
	tap_eq(bench_verdict_below(150, 250, 10, 200), BENCH_INCONCLUSIVE, "across: inconclusive");
	tap_eq(bench_verdict_and(BENCH_MET, BENCH_NOT_MET), BENCH_NOT_MET, "met and not met");
	tap_eq(bench_verdict_and(BENCH_MET, BENCH_INCONCLUSIVE), BENCH_INCONCLUSIVE,
	       "met and inconclusive");
	tap_eq(bench_verdict_and(BENCH_NO_CLAIM, BENCH_MET), BENCH_MET, "no claim and met");
	tap_eq(bench_verdict_and(BENCH_NO_VERDICT, BENCH_MET), BENCH_NO_VERDICT,
	       "a refused verdict stays refused");
	ci = (struct bench_ci){ .ratio = 1.0, .lo = 0.95, .hi = 1.05, .samples = 10 };
	tap_eq(bench_verdict_within(&ci, 0.9, 1.1), BENCH_MET, "inside a band: met");
	tap_eq(bench_verdict_within(&ci, 0.97, 1.1), BENCH_INCONCLUSIVE,
	       "across its edge: inconclusive");
	ci = (struct bench_ci){ .ratio = 1.3, .lo = 1.2, .hi = 1.4, .samples = 10 };
	tap_eq(bench_verdict_within(&ci, 0.9, 1.1), BENCH_NOT_MET, "wholly above: not met");
	ci.samples = 9;
	tap_eq(bench_verdict_within(&ci, 0.9, 1.1), BENCH_INCONCLUSIVE, "9 samples: inconclusive");
}

/* Percentiles of blocks against a sort; intervals that widen when blocks disagree. */
static void check_blocks(void)
{
	enum { N = 1000, BLOCKS = 10 };
	static double v[N], w[N];
	size_t start[BLOCKS];
	struct bench_blocks a = { .v = v, .n = N, .start = start, .nblocks = BLOCKS };
	struct bench_blocks b = { .v = w, .n = N, .start = start, .nblocks = BLOCKS };
	struct bench_ci even, uneven;

	for (int k = 0; k < BLOCKS; k++)
		start[k] = (size_t)k * (N / BLOCKS);
	/* v = 1..1000 shuffled by a stride, w = v / 2: every percentile ratio is 2. */
	for (int i = 0; i < N; i++) {
		v[i] = 1 + (i * 7919) % N;
		w[i] = v[i] / 2;
	}
	bench_block_pct_ratio_ci(&a, &b, 50, &even);
	tap_ok(fabs(even.ratio - 2) < 1e-9, "p50 ratio of v to v/2 is 2 (%.6f)", even.ratio);
	bench_block_pct_ratio_ci(&a, &b, 99, &even);
	tap_ok(fabs(even.ratio - 2) < 1e-9, "p99 ratio too (%.6f)", even.ratio);
	tap_eq(even.samples, BLOCKS, "samples are blocks");
	tap_ok(even.lo <= even.ratio && even.ratio <= even.hi, "the interval holds it [%.3f, %.3f]",
	       even.lo, even.hi);

	/* One block of the optimized side ten times slower: a load burst. */
	for (int i = 0; i < N / BLOCKS; i++)
		w[i] *= 10;
	bench_block_pct_ratio_ci(&a, &b, 50, &uneven);
	bench_block_pct_ratio_ci(&a, &b, 99, &even);
	tap_ok(even.lo < 1 && even.hi >= 2,
	       "a slow block makes the p99 interval span 1x to 2x ([%.3f, %.3f])", even.lo, even.hi);
	tap_ok(uneven.hi > 1.5, "p50 stays near 2 within its interval ([%.3f, %.3f])", uneven.lo,
	       uneven.hi);
}

static void check_median_ci(void)
{
	double v[101], m, lo, hi;

	for (int i = 0; i < 101; i++)
		v[i] = 100 - i;
	bench_median_ci(v, 101, &m, &lo, &hi);
	tap_ok(m == 50, "median of 0..100 is 50 (%.1f)", m);
	tap_ok(lo < 50 && hi > 50 && lo > 35 && hi < 65, "its interval is about +-10 ([%.0f, %.0f])",
	       lo, hi);
	tap_ok(v[0] == 100, "the samples are left as they were");
}

/* A calibration whose level l reads around ns[l] with +-@noise; NAN: absent. */
static void calib_of(struct hc_calib *c, const double *ns, double noise)
{
	struct hc_calib_set set = { 0 };
	enum { N = 40 };

	for (int i = 0; i < HC_NR_CLASSES + 2; i++) {
		set.v[i] = malloc(N * sizeof(double));
		if (!set.v[i])
			abort();
	}
	for (int r = 0; r < N; r++) {
		for (int l = 0; l < HC_NR_CLASSES; l++)
			set.v[l][r] = ns[l] * (1 + noise * (uniform() - 0.5));
		set.v[HC_NR_CLASSES][r] = set.v[HC_NR_CLASSES + 1][r] = NAN;
	}
	for (int l = 0; l < HC_NR_CLASSES; l++)
		set.absent[l] = isnan(ns[l]);
	set.n = set.cap = N;
	hc_calib_finish(c, &set);
	hc_calib_set_free(&set);
}

static void check_calibration(void)
{
	/* The run: L1 171 ns, L2 160 ns, then a 130 ns read was classed L3. */
	const double odd[HC_NR_CLASSES] = { 171, 160, 400, 600 };
	const double close[HC_NR_CLASSES] = { 50, 65, 450, 480 };
	const double no_l3[HC_NR_CLASSES] = { 50, 65, NAN, 600 };
	const double low_l3[HC_NR_CLASSES] = { 160, 160, 300, 700 };
	struct hc_calib c;
	char name[32];
	double prev = 0;

	calib_of(&c, odd, 0.05);
	tap_ok(c.group[HC_L2] == c.group[HC_L1], "L2 faster than L1: one class, %s",
	       hc_calib_class_name(&c, HC_L2, name, sizeof(name)));
	tap_ok(c.group[HC_L3] == HC_L3 && c.group[HC_DRAM] == HC_DRAM, "L3 and DRAM stay apart");
	tap_eq(hc_classify(&c, 130), HC_L1, "a 130 ns read is L1/L2, not L3");
	tap_eq(hc_classify(&c, 390), HC_L3, "a 390 ns read is L3");
	tap_ok(hc_hot_limit(&c) > 171 && hc_hot_limit(&c) < 400, "hot below %.0f ns, between L1/L2 "
	       "and L3", hc_hot_limit(&c));
	tap_ok(hc_cold_limit(&c) >= hc_hot_limit(&c), "cold above %.0f ns, not below the hot limit",
	       hc_cold_limit(&c));
	for (int l = 0; l < HC_NR_CLASSES; l++) {
		if (c.group[l] != l)
			continue;
		tap_ok(c.read_ns[l] > prev, "class %s above the one below (%.0f > %.0f)",
		       hc_class_name(l), c.read_ns[l], prev);
		prev = c.read_ns[l];
	}
	tap_ok(c.stable, "5%% noise, 40 samples: stable");

	calib_of(&c, close, 0.05);
	tap_ok(c.group[HC_L1] != c.group[HC_L2], "L1 50 and L2 65 ns apart: two classes");
	tap_ok(c.group[HC_DRAM] == c.group[HC_L3], "L3 450 and DRAM 480 ns: merged (%s)",
	       hc_calib_class_name(&c, HC_DRAM, name, sizeof(name)));

	calib_of(&c, no_l3, 0.05);
	tap_ok(isnan(c.read_ns[HC_L3]), "an absent L3 stays absent");
	tap_ok(hc_hot_limit(&c) > 65 && hc_hot_limit(&c) < 600, "hot limit between L2 and DRAM");

	/* L3 calibrated barely apart from L1/L2: its interval alone would put cold near hot. */
	calib_of(&c, low_l3, 0.05);
	tap_ok(c.group[HC_L3] == HC_L3, "L3 300 ns over L1/L2 160 ns: a class of its own (%s)",
	       hc_calib_class_name(&c, HC_L3, name, sizeof(name)));
	tap_ok(c.read_lo[HC_L3] < 2 * c.read_ns[HC_L2], "its interval starts below 2x L1/L2 (%.0f)",
	       c.read_lo[HC_L3]);
	tap_ok(hc_cold_limit(&c) >= HC_COLD_RATIO * c.read_ns[HC_L2] &&
	       hc_cold_limit(&c) >= HC_COLD_RATIO * c.read_ns[HC_L1],
	       "cold not below %.1fx L1/L2 all the same (%.0f ns)", HC_COLD_RATIO, hc_cold_limit(&c));
	tap_ok(hc_hot_limit(&c) < 2 * c.read_ns[HC_L2], "hot limit left where it was (%.0f ns)",
	       hc_hot_limit(&c));

	calib_of(&c, odd, 1.5);
	tap_ok(!c.stable, "150%% noise: not stable");
}

int main(void)
{
	check_paired();
	check_stopping();
	check_verdicts();
	check_blocks();
	check_median_ci();
	check_calibration();
	return tap_done();
}
