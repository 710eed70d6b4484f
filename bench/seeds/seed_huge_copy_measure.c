/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "huge-copy" (bench/seeds/seed_huge_copy.c): the measurement loop. Each
 * run alternates copy variants, sub-page orders and targets, one COW trial
 * each, and recalibrates the cache classes under the same load, with a thread
 * sweeping the LLC from another core for the pressure cases; then the samples'
 * medians and copy-time ratios that the verdicts and the report read.
 */
#include <math.h>
#include <stddef.h>

#include "seed_huge_copy.h"

#define HC_CALIB_REPS	3		/* per run, interleaved with the trials */
#define HC_CALIB_EXTRA	20		/* rounds of HC_CALIB_REPS more, at most, until stable */

const char *const hc_target_names[HC_TARGETS] = { "0", "255", "511", "rand" };
const unsigned int hc_target_fixed[HC_TARGETS] = { 0, 255, 511, 137 };

static unsigned int next_random(struct hc_run *h)
{
	h->rng ^= h->rng << 13;
	h->rng ^= h->rng >> 7;
	h->rng ^= h->rng << 17;
	return h->rng % HC_NR;
}

/*
 * Every trial of pressure @p (0 quiet, 1 with the LLC swept from another core)
 * into h->s, n and miss, and its calibration into h->calib[p]: 0 or -errno.
 */
int hc_measure(struct hc_run *h, int p)
{
	struct hc_calib_set cal = { 0 };
	struct hc_pressure pr = { 0 };
	int err = 0;

	if (p) {
		err = hc_pressure_start(&pr, &h->topo, h->topo.pressure_pu, h->pressure_bytes);
		if (err)
			return err;
	}
	/* One warm-up trial: caches, branch predictors, the allocator's lists. */
	{
		struct hc_trial t = { .order = 0, .variant = h->variants[0], .nbhd = h->nbhd };
		struct hc_sample s;

		err = hc_rig_trial(&h->rig, &t, &s);
	}
	/*
	 * Variants, orders and targets alternate within each run, against drift and
	 * noise; each run calibrates too, so that the classes see the same load.
	 */
	for (int r = 0; r < h->runs && !err; r++) {
		if (!h->opts->deterministic)
			err = hc_calib_collect(&cal, &h->topo, &h->evict, &h->evictor,
					       h->have_victim ? &h->victim : NULL, HC_CALIB_REPS);
		for (int v = 0; v < h->nr_variants && !err; v++) {
			for (int o = 0; o < MMP_NR_HUGE_ORDERS && !err; o++) {
				for (int ti = 0; ti < HC_TARGETS && !err; ti++) {
					struct hc_trial t = {
						.order = o,
						.variant = h->variants[v],
						.nbhd = h->nbhd,
						.n = ti == 3 && !h->opts->deterministic ?
							     next_random(h) : hc_target_fixed[ti],
						.victim = h->have_victim ? &h->victim : NULL,
						.read = h->opts->deterministic ?
								hc_det_read[o][ti] :
							h->decide == HC_DECIDE_PERF ? hc_read_perf : NULL,
					};
					size_t at = cell(h, p, v, o, ti) * h->runs + r;

					hc_perf_last_misses = NAN;
					err = hc_rig_trial(&h->rig, &t, sample(h, p, v, o, ti, r));
					h->n[at] = t.n;
					h->miss[at] = hc_perf_last_misses;
				}
			}
		}
	}
	/* Calibrate on until every level's median is known within HC_STABLE, or give up. */
	if (h->opts->deterministic)
		hc_calib_finish(&h->calib[p], &cal);	/* none: every level absent */
	for (int extra = 0; !err && !h->opts->deterministic; extra++) {
		hc_calib_finish(&h->calib[p], &cal);
		if (h->calib[p].stable ||
		    extra == (h->opts->quick ? HC_CALIB_EXTRA / 4 : HC_CALIB_EXTRA))
			break;
		err = hc_calib_collect(&cal, &h->topo, &h->evict, &h->evictor,
				       h->have_victim ? &h->victim : NULL, HC_CALIB_REPS);
	}
	if (p)
		hc_pressure_stop(&pr);
	hc_calib_set_free(&cal);
	return err;
}

/* ---- the samples: medians and ratios --------------------------------------------------- */

/*
 * The samples over runs (and targets when @t < 0) of one (pressure, variant,
 * order) into @vals: copy ns (@what 0), read ns (1), victim kept (2). Their
 * count, or -1 when one is missing (NAN).
 */
int hc_values(const struct hc_run *h, int p, int v, int o, int t, int what, double *vals)
{
	int k = 0;

	for (int tt = t < 0 ? 0 : t; tt < (t < 0 ? HC_TARGETS : t + 1); tt++) {
		for (int r = 0; r < h->runs; r++) {
			const struct hc_sample *s = sample(h, p, v, o, tt, r);

			if (what == 0)
				vals[k++] = s->copy_ns;
			else if (what == 1)
				vals[k++] = s->read_ns;
			else if (h->have_victim)
				vals[k++] = hc_victim_kept(&h->calib[p], s->victim_ns);
		}
	}
	for (int i = 0; i < k; i++)
		if (isnan(vals[i]))
			return -1;
	return k;
}

/* Medians over runs (and targets when @t < 0) of one (pressure, variant, order). */
double hc_med(const struct hc_run *h, int p, int v, int o, int t, int what)
{
	double vals[HC_RUNS * HC_TARGETS];
	int k = hc_values(h, p, v, o, t, what, vals);

	return k < 0 ? NAN : bench_median(vals, k);
}

/* Copy time ratio ascending / order, paired by target and run. */
void hc_copy_ci(const struct hc_run *h, int p, int v, int o, struct bench_ci *ci)
{
	double a[HC_RUNS * HC_TARGETS], b[HC_RUNS * HC_TARGETS];
	int na = hc_values(h, p, v, MMP_HUGE_ORDER_ASCENDING, -1, 0, a);
	int nb = hc_values(h, p, v, o, -1, 0, b);
	int n = na < nb ? na : nb;

	bench_ratio_ci(a, b, n < 0 ? 0 : (size_t)n, ci);
}
