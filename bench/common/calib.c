/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Calibration of 4 KiB read latency per cache level, in the same run and on the
 * same PU as the trials it classes. Samples pool over rounds until each level's
 * median is known within HC_STABLE; levels that cannot be told apart merge into
 * one class, so that classes increase strictly and a read is never put in "L3"
 * because L2 happened to calibrate faster than L1.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "common.h"
#include "stats.h"

#define LINE	64

static int set_grow(struct hc_calib_set *s, size_t want)
{
	size_t cap = s->cap ? s->cap : 16;

	if (want <= s->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	for (int i = 0; i < HC_NR_CLASSES + 2; i++) {
		double *p = realloc(s->v[i], cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->v[i] = p;
	}
	s->cap = cap;
	return 0;
}

int hc_calib_collect(struct hc_calib_set *s, const struct bench_topo *t, struct hc_buf *evict,
		     struct hc_victim *evictor, struct hc_victim *v, int reps)
{
	unsigned long l1d = t->l1d ? t->l1d : 32 << 10;
	struct hc_buf page;
	uint8_t *pg;
	int err;

	err = set_grow(s, s->n + reps);
	if (!err)
		err = hc_buf_alloc(&page, 64 << 10, false);
	if (err)
		return err;
	/* Out of L2 but not out of an L3 at least twice the chase. */
	s->absent[HC_L3] = !(t->llc_level >= 3 && t->llc >= 2 * evictor->nr_lines * LINE);
	s->absent[HC_DRAM] = !hc_can_flush();
	s->victim = v;
	pg = page.p + (16 << 10);
	for (int r = 0; r < reps; r++, s->n++) {
		hc_read4k_ns(pg);
		s->v[HC_L1][s->n] = hc_read4k_ns(pg);
		hc_read4k_ns(pg);
		hc_sweep(evict, 4 * l1d);
		s->v[HC_L2][s->n] = hc_read4k_ns(pg);
		hc_read4k_ns(pg);
		hc_victim_chase_ns(evictor);
		s->v[HC_L3][s->n] = hc_read4k_ns(pg);
		hc_read4k_ns(pg);
		hc_flush(pg, 4096);
		s->v[HC_DRAM][s->n] = hc_read4k_ns(pg);
		if (v) {
			hc_victim_chase_ns(v);
			s->v[HC_NR_CLASSES][s->n] = hc_victim_chase_ns(v);
			hc_victim_chase_ns(evictor);
			s->v[HC_NR_CLASSES + 1][s->n] = hc_victim_chase_ns(v);
		} else {
			s->v[HC_NR_CLASSES][s->n] = s->v[HC_NR_CLASSES + 1][s->n] = NAN;
		}
	}
	hc_buf_free(&page);
	return 0;
}

void hc_calib_set_free(struct hc_calib_set *s)
{
	for (int i = 0; i < HC_NR_CLASSES + 2; i++)
		free(s->v[i]);
	memset(s, 0, sizeof(*s));
}

/*
 * Walk up the levels: a level opens a new class only when its whole interval
 * lies above every level of the class below and its median is HC_MERGE times
 * theirs; otherwise the noise cannot tell it apart, and it joins that class.
 */
static void calib_group(struct hc_calib *c)
{
	int top = -1;		/* the level of the current class with the highest median */

	for (int i = 0; i < HC_NR_CLASSES; i++) {
		c->group[i] = i;
		if (isnan(c->read_ns[i]))
			continue;
		if (top >= 0 && !(c->read_lo[i] > c->read_hi[top] &&
				  c->read_ns[i] >= HC_MERGE * c->read_ns[top])) {
			c->group[i] = c->group[top];
			if (c->read_ns[i] > c->read_ns[top])
				top = i;
			continue;
		}
		top = i;
	}
}

void hc_calib_finish(struct hc_calib *c, const struct hc_calib_set *s)
{
	memset(c, 0, sizeof(*c));
	c->reps = (int)s->n;
	c->stable = true;
	for (int i = 0; i < HC_NR_CLASSES; i++) {
		if (s->absent[i] || !s->n) {
			c->read_ns[i] = c->read_lo[i] = c->read_hi[i] = NAN;
			continue;
		}
		bench_median_ci(s->v[i], s->n, &c->read_ns[i], &c->read_lo[i], &c->read_hi[i]);
		if (c->read_hi[i] - c->read_lo[i] > 2 * HC_STABLE * c->read_ns[i])
			c->stable = false;
	}
	calib_group(c);
	c->victim_hot_ns = c->victim_evicted_ns = NAN;
	if (s->victim && s->n) {
		c->victim_hot_ns = bench_median(s->v[HC_NR_CLASSES], s->n);
		c->victim_evicted_ns = bench_median(s->v[HC_NR_CLASSES + 1], s->n);
	}
}

int hc_calibrate(struct hc_calib *c, const struct bench_topo *t, struct hc_buf *evict,
		 struct hc_victim *evictor, struct hc_victim *v, int reps)
{
	struct hc_calib_set s = { 0 };
	int err = hc_calib_collect(&s, t, evict, evictor, v, reps);

	if (!err)
		hc_calib_finish(c, &s);
	hc_calib_set_free(&s);
	return err;
}

/* A class's typical read: the geometric mean of its levels' medians. */
static double class_ns(const struct hc_calib *c, int g)
{
	double sum = 0;
	int n = 0;

	for (int i = 0; i < HC_NR_CLASSES; i++) {
		if (c->group[i] != g || isnan(c->read_ns[i]) || c->read_ns[i] <= 0)
			continue;
		sum += log(c->read_ns[i]);
		n++;
	}
	return n ? exp(sum / n) : NAN;
}

enum hc_class hc_classify(const struct hc_calib *c, double ns)
{
	enum hc_class best = HC_L1;
	double dist = INFINITY;

	for (int i = 0; i < HC_NR_CLASSES; i++) {
		double d, at;

		if (c->group[i] != i || isnan(at = class_ns(c, i)))
			continue;
		d = fabs(log(ns / at));
		if (d < dist) {
			dist = d;
			best = i;
		}
	}
	return best;
}

const char *hc_class_name(enum hc_class c)
{
	static const char *const names[HC_NR_CLASSES] = { "L1", "L2", "L3", "DRAM" };

	return (unsigned int)c < HC_NR_CLASSES ? names[c] : "?";
}

const char *hc_calib_class_name(const struct hc_calib *c, enum hc_class k, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < HC_NR_CLASSES; i++)
		if (c->group[i] == c->group[k] && !isnan(c->read_ns[i]))
			bench_append(buf, len, &off, "%s%s", off ? "/" : "", hc_class_name(i));
	if (!buf[0])
		snprintf(buf, len, "%s", hc_class_name(k));
	return buf;
}

/* The slowest median of the class of L2 (of L1 when L2 is absent); -INFINITY when none. */
static double hot_top(const struct hc_calib *c, int *hot)
{
	double top = -INFINITY;

	*hot = isnan(c->read_ns[HC_L2]) ? c->group[HC_L1] : c->group[HC_L2];
	for (int i = 0; i < HC_NR_CLASSES; i++)
		if (!isnan(c->read_ns[i]) && c->group[i] == *hot)
			top = fmax(top, c->read_ns[i]);
	return top;
}

double hc_hot_limit(const struct hc_calib *c)
{
	int hot;
	double top = hot_top(c, &hot), next = INFINITY;

	for (int i = 0; i < HC_NR_CLASSES; i++)
		if (!isnan(c->read_ns[i]) && c->group[i] > hot)
			next = fmin(next, class_ns(c, c->group[i]));
	if (!isfinite(top) || !isfinite(next))
		return NAN;
	return sqrt(top * next);
}

/*
 * The lowest end of an upper level's interval alone is no proof: an L3 read
 * sometimes still finds lines in L2, and its interval can reach down to the
 * hot limit (a calibration of L1/L2 160 ns, L3 381 [240, 541] ns put both
 * limits at 247 ns, under hot targets read at 250-290 ns in other runs).
 */
double hc_cold_limit(const struct hc_calib *c)
{
	int hot;
	double top = hot_top(c, &hot), limit = hc_hot_limit(c), lo = INFINITY;

	for (int i = 0; i < HC_NR_CLASSES; i++)
		if (!isnan(c->read_ns[i]) && c->group[i] > hot)
			lo = fmin(lo, c->read_lo[i]);
	return isnan(limit) ? NAN : fmax(fmax(limit, lo), HC_COLD_RATIO * top);
}

static void json_num(char *buf, size_t len, size_t *off, double v)
{
	if (!isfinite(v))
		bench_append(buf, len, off, "null");
	else
		bench_append(buf, len, off, "%.1f", v);
}

size_t hc_calib_json(const struct hc_calib *c, char *buf, size_t len)
{
	size_t off = 0;
	char name[32];

#define ADD(...)	bench_append(buf, len, &off, __VA_ARGS__)
#define NUM(v)		json_num(buf, len, &off, (v))
	ADD("{\"samples\":%d,\"stable\":%s,\"levels\":{", c->reps, c->stable ? "true" : "false");
	for (int i = 0; i < HC_NR_CLASSES; i++) {
		ADD("%s\"%s\":{\"ns\":", i ? "," : "", hc_class_name(i));
		NUM(c->read_ns[i]);
		ADD(",\"ci\":[");
		NUM(c->read_lo[i]);
		ADD(",");
		NUM(c->read_hi[i]);
		ADD("],\"class\":\"%s\"}", isnan(c->read_ns[i]) ? "absent" :
			hc_calib_class_name(c, i, name, sizeof(name)));
	}
	ADD("},\"hot_limit_ns\":");
	NUM(hc_hot_limit(c));
	ADD(",\"cold_limit_ns\":");
	NUM(hc_cold_limit(c));
	ADD("}");
#undef ADD
#undef NUM
	return off;
}

double hc_victim_kept(const struct hc_calib *c, double chase_ns)
{
	double span = c->victim_evicted_ns - c->victim_hot_ns, kept;

	/* An L2 the sweep could not empty, or no victim: no answer. */
	if (!(span > 0.05 * c->victim_hot_ns))
		return NAN;
	kept = (c->victim_evicted_ns - chase_ns) / span;
	return kept < 0 ? 0 : kept > 1 ? 1 : kept;
}
