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

/* Percentile bootstrap of the median of @v: the 2.5% and 97.5% points of the medians of resamples. */
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

void bench_ratio_ci(const double *base, const double *opt, size_t n, struct bench_ci *ci)
{
	double *r = malloc((n ? n : 1) * sizeof(*r));

	if (!r)
		abort();
	for (size_t i = 0; i < n; i++)
		r[i] = base[i] / opt[i];
	bench_median_ci(r, n, &ci->ratio, &ci->lo, &ci->hi);
	ci->samples = n;
	free(r);
}

double bench_percentile(double *v, size_t n, double pct)
{
	size_t rank;

	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	rank = (size_t)ceil(pct / 100.0 * n);
	return v[rank ? (rank < n ? rank : n) - 1 : 0];
}

/* A 97.5% order-statistic interval of the @pct percentile of sorted @v. */
static void pct_interval(const double *v, size_t n, double pct, double *lo, double *hi)
{
	const double z = 2.2414;	/* two-sided 97.5% */
	double np = n * pct / 100.0, sd = sqrt(np * (1 - pct / 100.0));
	long l = (long)floor(np - z * sd), h = (long)ceil(np + z * sd);

	l = l < 1 ? 1 : l > (long)n ? (long)n : l;
	h = h < 1 ? 1 : h > (long)n ? (long)n : h;
	*lo = v[l - 1];
	*hi = v[h - 1];
}

void bench_pct_ratio_ci(const double *base, size_t nb, const double *opt, size_t no,
			double pct, struct bench_ci *ci)
{
	double *b = dup_or_die(base, nb), *o = dup_or_die(opt, no), bl, bh, ol, oh;

	ci->samples = nb < no ? nb : no;
	if (!nb || !no) {
		ci->ratio = ci->lo = ci->hi = NAN;
		goto out;
	}
	ci->ratio = bench_percentile(b, nb, pct) / bench_percentile(o, no, pct);
	pct_interval(b, nb, pct, &bl, &bh);
	pct_interval(o, no, pct, &ol, &oh);
	ci->lo = bl / oh;
	ci->hi = bh / ol;
out:
	free(b);
	free(o);
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

enum bench_verdict bench_verdict_and(enum bench_verdict a, enum bench_verdict b)
{
	if (a == BENCH_NO_CLAIM)
		return b;
	if (b == BENCH_NO_CLAIM)
		return a;
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
	default:
		return "-";
	}
}

const char *bench_ci_str(const struct bench_ci *ci, char *buf, size_t len)
{
	snprintf(buf, len, "%.2fx [%.2f, %.2f]", ci->ratio, ci->lo, ci->hi);
	return buf;
}

void bench_pairs_init(struct bench_pairs *p, size_t min, size_t max, double budget_s,
		      double threshold)
{
	memset(p, 0, sizeof(*p));
	p->min = min < BENCH_MIN_SAMPLES ? BENCH_MIN_SAMPLES : min;
	p->max = max < p->min ? p->min : max;
	p->budget = budget_s;
	p->threshold = threshold;
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
	if (p->threshold > 0 && ci.lo < p->threshold && ci.hi >= p->threshold)
		return true;
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
