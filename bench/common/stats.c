/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Intervals, verdicts and adaptive sampling for the seeds (stats.h).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double *dup_or_die(const double *v, size_t n)
{
	double *d = malloc((n ? n : 1) * sizeof(*d));

	if (!d)
		abort();
	if (n)
		memcpy(d, v, n * sizeof(*d));
	return d;
}

/* Median of sorted @v. */
static double sorted_median(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* xorshift64*: the same stream every time, so an interval repeats for given samples. */
static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dULL;
}

/* Percentile bootstrap of the median of @v: the 2.5% and 97.5% points of resample medians. */
static void bootstrap_median(const double *v, size_t n, double *lo, double *hi)
{
	double *med = malloc(BENCH_BOOTSTRAP * sizeof(*med)), *rs = malloc(n * sizeof(*rs));
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	if (!med || !rs)
		abort();
	for (int b = 0; b < BENCH_BOOTSTRAP; b++) {
		for (size_t i = 0; i < n; i++)
			rs[i] = v[next_rand(&x) % n];
		qsort(rs, n, sizeof(*rs), cmp_double);
		med[b] = sorted_median(rs, n);
	}
	qsort(med, BENCH_BOOTSTRAP, sizeof(*med), cmp_double);
	*lo = med[(size_t)(0.025 * BENCH_BOOTSTRAP)];
	*hi = med[(size_t)(0.975 * BENCH_BOOTSTRAP) - 1];
	free(med);
	free(rs);
}

void bench_median_ci(const double *v, size_t n, double *med, double *lo, double *hi)
{
	double *s;

	if (!n) {
		*med = *lo = *hi = NAN;
		return;
	}
	s = dup_or_die(v, n);
	qsort(s, n, sizeof(*s), cmp_double);
	*med = sorted_median(s, n);
	if (n < 2)
		*lo = *hi = *med;
	else
		bootstrap_median(s, n, lo, hi);
	free(s);
}

/* Add BENCH_WINDOW_SPREAD to each half-width of @ci, in quadrature and on a log scale. */
static void widen_by_window_spread(struct bench_ci *ci)
{
	const double s = log1p(BENCH_WINDOW_SPREAD);
	double below, above;

	if (!(ci->ratio > 0) || !(ci->lo > 0) || !(ci->hi > 0))
		return;
	below = log(ci->ratio / ci->lo);
	above = log(ci->hi / ci->ratio);
	ci->lo = ci->ratio * exp(-sqrt(below * below + s * s));
	ci->hi = ci->ratio * exp(sqrt(above * above + s * s));
}

void bench_ratio_ci(const double *base, const double *opt, size_t n, struct bench_ci *ci)
{
	double *r = malloc((n ? n : 1) * sizeof(*r));

	if (!r)
		abort();
	for (size_t i = 0; i < n; i++)
		r[i] = base[i] / opt[i];
	bench_median_ci(r, n, &ci->ratio, &ci->lo, &ci->hi);
	widen_by_window_spread(ci);
	ci->samples = n;
	free(r);
}

/* The @k-th smallest of @v (0-based), reordering @v: quickselect. */
static double select_kth(double *v, size_t n, size_t k)
{
	long lo = 0, hi = (long)n - 1;

	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		long i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];

				v[i++] = v[j];
				v[j--] = t;
			}
		}
		if ((long)k <= j)
			hi = j;
		else if ((long)k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

static double pct_of(double *v, size_t n, double pct)
{
	size_t rank = (size_t)ceil(pct / 100.0 * n);

	return select_kth(v, n, (rank ? (rank < n ? rank : n) : 1) - 1);
}

/* One side's blocks resampled with replacement into @out; the samples drawn. */
static size_t resample_blocks(const struct bench_blocks *b, double *out, uint64_t *x)
{
	size_t n = 0;

	for (size_t k = 0; k < b->nblocks; k++) {
		size_t blk = next_rand(x) % b->nblocks;
		size_t from = b->start[blk], to = blk + 1 < b->nblocks ? b->start[blk + 1] : b->n;

		memcpy(out + n, b->v + from, (to - from) * sizeof(*out));
		n += to - from;
	}
	return n;
}

void bench_block_pct_ratio_ci(const struct bench_blocks *base, const struct bench_blocks *opt,
			      double pct, struct bench_ci *ci)
{
	size_t cap[2] = { 0, 0 };
	const struct bench_blocks *side[2] = { base, opt };
	double *buf[2], *ratio = malloc(BENCH_BLOCK_BOOTSTRAP * sizeof(double));
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	ci->samples = base->nblocks < opt->nblocks ? base->nblocks : opt->nblocks;
	if (!ratio)
		abort();
	if (!base->n || !opt->n || !ci->samples) {
		ci->ratio = ci->lo = ci->hi = NAN;
		free(ratio);
		return;
	}
	/* A resample holds at most nblocks times the largest block. */
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < side[k]->nblocks; i++) {
			size_t to = i + 1 < side[k]->nblocks ? side[k]->start[i + 1] : side[k]->n;

			if (to - side[k]->start[i] > cap[k])
				cap[k] = to - side[k]->start[i];
		}
		cap[k] = cap[k] * side[k]->nblocks > side[k]->n ? cap[k] * side[k]->nblocks
								 : side[k]->n;
		buf[k] = malloc(cap[k] * sizeof(double));
		if (!buf[k])
			abort();
	}
	for (int k = 0; k < 2; k++)
		memcpy(buf[k], side[k]->v, side[k]->n * sizeof(double));
	ci->ratio = pct_of(buf[0], base->n, pct) / pct_of(buf[1], opt->n, pct);
	for (int r = 0; r < BENCH_BLOCK_BOOTSTRAP; r++) {
		size_t nb = resample_blocks(base, buf[0], &x);
		size_t no = resample_blocks(opt, buf[1], &x);

		ratio[r] = pct_of(buf[0], nb, pct) / pct_of(buf[1], no, pct);
	}
	qsort(ratio, BENCH_BLOCK_BOOTSTRAP, sizeof(*ratio), cmp_double);
	ci->lo = ratio[(size_t)(0.025 * BENCH_BLOCK_BOOTSTRAP)];
	ci->hi = ratio[(size_t)(0.975 * BENCH_BLOCK_BOOTSTRAP) - 1];
	widen_by_window_spread(ci);
	free(buf[0]);
	free(buf[1]);
	free(ratio);
}

enum bench_verdict bench_verdict_at_least(const struct bench_ci *ci, double threshold)
{
	if (ci->samples < BENCH_MIN_SAMPLES || isnan(ci->lo) || isnan(ci->hi))
		return BENCH_INCONCLUSIVE;
	if (ci->lo >= threshold)
		return BENCH_MET;
	if (ci->hi < threshold)
		return BENCH_NOT_MET;
	return BENCH_INCONCLUSIVE;
}

enum bench_verdict bench_verdict_below(double lo, double hi, size_t samples, double limit)
{
	if (samples < BENCH_MIN_SAMPLES || isnan(lo) || isnan(hi))
		return BENCH_INCONCLUSIVE;
	if (hi < limit)
		return BENCH_MET;
	if (lo >= limit)
		return BENCH_NOT_MET;
	return BENCH_INCONCLUSIVE;
}

enum bench_verdict bench_verdict_within(const struct bench_ci *ci, double lo, double hi)
{
	if (ci->samples < BENCH_MIN_SAMPLES || isnan(ci->lo) || isnan(ci->hi))
		return BENCH_INCONCLUSIVE;
	if (ci->lo >= lo && ci->hi <= hi)
		return BENCH_MET;
	if (ci->hi < lo || ci->lo > hi)
		return BENCH_NOT_MET;
	return BENCH_INCONCLUSIVE;
}

enum bench_verdict bench_verdict_and(enum bench_verdict a, enum bench_verdict b)
{
	if (a == BENCH_NO_CLAIM)
		return b;
	if (b == BENCH_NO_CLAIM)
		return a;
	if (a == BENCH_NO_VERDICT || b == BENCH_NO_VERDICT)
		return BENCH_NO_VERDICT;
	if (a == BENCH_NOT_MET || b == BENCH_NOT_MET)
		return BENCH_NOT_MET;
	if (a == BENCH_MET && b == BENCH_MET)
		return BENCH_MET;
	return BENCH_INCONCLUSIVE;
}

const char *bench_verdict_name(enum bench_verdict v)
{
	switch (v) {
	case BENCH_INCONCLUSIVE:
		return "inconclusive";
	case BENCH_MET:
		return "met";
	case BENCH_NOT_MET:
		return "not met";
	case BENCH_NO_VERDICT:
		return "no verdict";
	default:
		return "-";
	}
}

const char *bench_ci_str(const struct bench_ci *ci, char *buf, size_t len)
{
	snprintf(buf, len, "%.2fx [%.2f, %.2f]", ci->ratio, ci->lo, ci->hi);
	return buf;
}

void bench_pairs_init(struct bench_pairs *p, size_t min, size_t max, double budget_s)
{
	memset(p, 0, sizeof(*p));
	p->min = min < BENCH_MIN_SAMPLES ? BENCH_MIN_SAMPLES : min;
	p->max = max < p->min ? p->min : max;
	p->budget = budget_s;
	p->t0 = bench_now();
}

int bench_pairs_add(struct bench_pairs *p, double base, double opt)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 32;
		double *b = realloc(p->base, cap * sizeof(*b)), *o;

		if (!b)
			return -ENOMEM;
		p->base = b;
		o = realloc(p->opt, cap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		p->opt = o;
		p->cap = cap;
	}
	p->base[p->n] = base;
	p->opt[p->n++] = opt;
	return 0;
}

bool bench_pairs_more(const struct bench_pairs *p)
{
	struct bench_ci ci;

	if (p->n < p->min)
		return true;
	if (p->n >= p->max || bench_now() - p->t0 >= p->budget)
		return false;
	bench_pairs_ci(p, &ci);
	return ci.hi - ci.lo > BENCH_WIDTH * ci.ratio;
}

void bench_pairs_ci(const struct bench_pairs *p, struct bench_ci *ci)
{
	bench_ratio_ci(p->base, p->opt, p->n, ci);
}

void bench_pairs_free(struct bench_pairs *p)
{
	free(p->base);
	free(p->opt);
	p->base = p->opt = NULL;
	p->n = p->cap = 0;
}
