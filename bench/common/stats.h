/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Statistics of the seeds: a 95% interval for every time ratio, verdicts with
 * three outcomes, and sampling that goes on until the interval decides or a
 * time budget is spent.
 *
 * Convention: a time ratio is baseline / optimized, > 1 when the optimization
 * is faster. Paired samples (the two variants alternate, one of each per pair)
 * give the median of the per-pair ratios, with a percentile bootstrap of that
 * median (BENCH_BOOTSTRAP resamples drawn by a fixed-seed PRNG, so the same
 * samples always give the same interval). Percentiles of two unpaired samples
 * (latency distributions) get a block bootstrap: the samples of one turn of a
 * variant are resampled together. Either interval of a time ratio is then
 * widened by BENCH_WINDOW_SPREAD.
 */
#ifndef MMP_BENCH_STATS_H
#define MMP_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* Nothing is decided from fewer samples per side. */
#define BENCH_MIN_SAMPLES	10
#define BENCH_BOOTSTRAP		2000
/* No p99 from fewer samples: report the maximum instead. */
#define BENCH_MIN_P99		100
/* No verdict on a p99 unless 10 samples a side lie beyond it. */
#define BENCH_DECIDE_P99	1000
/*
 * A case takes all its samples within one window of time, tens of
 * milliseconds to a few seconds, and a bootstrap sees only the noise inside
 * that window. On a shared host the ratio itself moves from window to window
 * with the neighbours' load: fork-large-folio's 64K fork (quick) gave case
 * medians from 1.27x to 1.39x over 64 cases in 8 processes, while one case's
 * interval was often +-1%, so runs minutes apart decided one claim both ways.
 * Every interval of a time ratio is therefore widened by this much (95%,
 * relative, added in quadrature to the bootstrap's half-widths): about twice
 * the spread between windows left once each window's own noise is taken out.
 */
#define BENCH_WINDOW_SPREAD	0.03

/* A time ratio with its interval. */
struct bench_ci {
	double ratio;		/* point estimate */
	double lo, hi;		/* 95% interval */
	size_t samples;		/* per side (pairs, for paired samples) */
};

/**
 * bench_ratio_ci() - median of @base[i] / @opt[i] over @n pairs and its 95%
 * bootstrap interval, widened by BENCH_WINDOW_SPREAD. Deterministic for given
 * samples.
 */
void bench_ratio_ci(const double *base, const double *opt, size_t n, struct bench_ci *ci);

/**
 * bench_median_ci() - median of @n values and a 95% bootstrap interval of it.
 */
void bench_median_ci(const double *v, size_t n, double *med, double *lo, double *hi);

/* Samples taken in blocks (a variant's turn): @v[start[k] ..] is block k. */
struct bench_blocks {
	const double *v;
	size_t n;
	const size_t *start;
	size_t nblocks;
};

#define BENCH_BLOCK_BOOTSTRAP	500

/**
 * bench_block_pct_ratio_ci() - the @pct percentile (nearest rank) of @base's
 * samples over that of @opt's, two independent sets of blocks, with a 95%
 * interval from a block bootstrap: whole blocks are resampled on each side, so
 * that samples of one block (one load, one drift) count as one unit. Widened
 * by BENCH_WINDOW_SPREAD. @ci->samples is the smaller block count.
 */
void bench_block_pct_ratio_ci(const struct bench_blocks *base, const struct bench_blocks *opt,
			      double pct, struct bench_ci *ci);

enum bench_verdict {
	BENCH_NO_CLAIM,		/* nothing to decide */
	BENCH_INCONCLUSIVE,	/* the interval spans the threshold, or too few samples */
	BENCH_MET,
	BENCH_NOT_MET,
	/*
	 * Refused: the samples do not hold what the claim is about (the
	 * mechanism is too rare in them), whatever the interval says.
	 */
	BENCH_NO_VERDICT,
};

/* The claim "time ratio >= @threshold", decided on @ci. */
enum bench_verdict bench_verdict_at_least(const struct bench_ci *ci, double threshold);
/* The claim "@lo..@hi (an interval of a value) stays below @limit". */
enum bench_verdict bench_verdict_below(double lo, double hi, size_t samples, double limit);
/* Both claims: not met when one is not, met when both are. */
enum bench_verdict bench_verdict_and(enum bench_verdict a, enum bench_verdict b);
/* The claim "time ratio within [@lo, @hi]" (no change): met inside, not met wholly outside. */
enum bench_verdict bench_verdict_within(const struct bench_ci *ci, double lo, double hi);
/* "met", "not met", "inconclusive", "no verdict", "-" */
const char *bench_verdict_name(enum bench_verdict v);

/* "3.12x [2.95, 3.30]" into @buf. */
const char *bench_ci_str(const struct bench_ci *ci, char *buf, size_t len);

/*
 * Paired samples taken until the interval is narrow. Take at least @min pairs;
 * after that stop when the budget is spent, @max pairs are in, or the interval
 * is narrower than BENCH_WIDTH of the ratio. Never on where the interval lies
 * against a claim: sampling on while it spans the claim and stopping once it
 * clears it picks the moment it does, and decides a ratio that sits on the
 * claim about twice as often as a 95% interval should.
 */
#define BENCH_WIDTH	0.10

struct bench_pairs {
	double *base, *opt;
	size_t n, cap, min, max;
	double t0, budget;
};

void bench_pairs_init(struct bench_pairs *p, size_t min, size_t max, double budget_s);
/* 0 or -ENOMEM. */
int bench_pairs_add(struct bench_pairs *p, double base, double opt);
/* Should another pair be taken? */
bool bench_pairs_more(const struct bench_pairs *p);
void bench_pairs_ci(const struct bench_pairs *p, struct bench_ci *ci);
void bench_pairs_free(struct bench_pairs *p);

#endif /* MMP_BENCH_STATS_H */
