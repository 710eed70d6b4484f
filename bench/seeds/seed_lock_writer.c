/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The case run of the lock seeds, a sampled call beside a writer (seed_lock_writer.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seed_lock_writer.h"

#define LW_BUDGET	1.0
#define LW_BUDGET_QUICK	0.1
#define LW_MIN_PAIRS	60
#define LW_MAX_PAIRS	400

/* One sample: the seed's calls between two counter reads, and their mean. */
static int lw_sample(const struct seed_lock_writer *d, struct seed_lock_side *side,
		     unsigned int items, struct mmp_counters *delta)
{
	struct mmp_space *s = side->env.space;
	struct mmp_counters c0, c1;
	int err = d->attach ? bench_env_attach(&side->env) : 0;

	if (err)
		return err;
	mmp_space_counters(s, &c0);
	err = d->sample(side, items);
	mmp_space_counters(s, &c1);
	bench_counters_sub(delta, &c1, &c0);
	side->secs = 0;
	for (unsigned int i = 0; i < items && !err; i++)
		side->secs += side->calls[i] / items;
	if (d->attach)
		bench_env_detach(&side->env);
	return err;
}

static int lw_side_setup(const struct seed_lock_writer *d, struct seed_lock_side *side,
			 struct mmp_phys *phys, const char *arch, long release,
			 unsigned int items)
{
	int err = bench_env_create(&side->env, phys, 0, arch, 0);

	if (err)
		return err;
	side->calls = calloc(items, sizeof(*side->calls));
	if (!side->calls)
		return -ENOMEM;
	err = mmp_space_set_opt(side->env.space, MMP_OPT_KERNEL_VERSION, release);
	if (!err)
		err = d->setup(side, items);
	if (!err)
		err = bench_env_detach(&side->env);
	return err;
}

static void lw_contended_json(const struct seed_lock_writer *d, char *buf, size_t len,
			      size_t *off, const char *side, const struct mmp_counters *c)
{
	bench_append(buf, len, off, "\"%s\":{", side);
	for (size_t i = 0; i < d->ncontended; i++)
		bench_append(buf, len, off, "%s\"%s\":%llu", i ? "," : "",
			     mmp_counter_name(d->contended[i]),
			     (unsigned long long)c->v[d->contended[i]]);
	bench_append(buf, len, off, "}");
}

static double lw_share(const struct seed_lock_writer *d, const struct mmp_counters *c)
{
	uint64_t ok = c->v[d->vma_ok], fb = c->v[d->vma_fallback];

	return ok + fb ? (double)ok / (ok + fb) : 0;
}

static void lw_print(const struct seed_lock_writer *d, const struct mmp_seed_opts *opts,
		     const char *arch, unsigned int items, const struct bench_pairs *pairs,
		     const struct bench_ci *ci, const struct mmp_seed_result *res,
		     const struct seed_lock_side *side, uint64_t writer_ops)
{
	char buf[64];

	printf("%s [%s]%s: %s%u%s, a writer mapping and unmapping 64 KiB beside; "
	       "%zu alternating pairs\n", d->seed, arch, mmp_seed_quick_tag(opts),
	       d->what_pre, items, d->what_post, pairs->n);
	printf("  a call (mean of a sample, median sample): %s %.2f us, %s %.2f us: %s\n",
	       res[0].label, res[0].seconds * 1e6, res[1].label, res[1].seconds * 1e6,
	       bench_ci_str(ci, buf, sizeof(buf)));
	for (int v = 0; v < 2; v++)
		printf("  under the writer, %s: VMA lock %llu, fallback %llu, mmap lock %llu, "
		       "read waits %llu, write waits %llu\n", res[v].label,
		       (unsigned long long)side[v].contended.v[d->vma_ok],
		       (unsigned long long)side[v].contended.v[d->vma_fallback],
		       (unsigned long long)side[v].contended.v[d->mmap_lock],
		       (unsigned long long)side[v].contended.v[MMP_C_MMAP_LOCK_READ_WAIT],
		       (unsigned long long)side[v].contended.v[MMP_C_MMAP_LOCK_WRITE_WAIT]);
	printf("  per-VMA share at %s: %.2f%%%s; writer: %llu mmap+munmap pairs\n",
	       res[1].label, 100 * lw_share(d, &side[1].contended), d->share_aside,
	       (unsigned long long)writer_ops);
	printf("  (counters below: one sample each with no writer, exact run to run)\n");
}

int seed_lock_writer_run(const struct seed_lock_writer *d, const struct mmp_seed_opts *opts,
			 const char *arch, struct mmp_phys *phys, const char *case_name)
{
	const unsigned int items = opts->quick ? d->items_quick : d->items;
	struct mmp_seed_result res[2] = { { .label = d->base_label }, { .label = d->opt_label } };
	struct mmp_seed_claim claim = { .published = d->published, .note = d->note };
	struct seed_writer w = { 0 };
	struct seed_lock_side side[2];
	struct bench_pairs pairs;
	struct bench_ci ci;
	char extra[1024];
	size_t off = 0;
	int err = 0;

	memset(side, 0, sizeof(side));
	bench_pairs_init(&pairs, opts->quick ? BENCH_MIN_SAMPLES : LW_MIN_PAIRS, LW_MAX_PAIRS,
			 opts->quick ? LW_BUDGET_QUICK : LW_BUDGET);
	for (int v = 0; v < 2 && !err; v++)
		err = lw_side_setup(d, &side[v], phys, arch,
				    v ? d->opt_release : d->base_release, items);
	/* The exact counters: one sample each, the writer not started yet. */
	for (int v = 0; v < 2 && !err; v++)
		err = lw_sample(d, &side[v], items, &side[v].exact);
	if (!err)
		err = seed_writer_start(&w);
	while (!err && bench_pairs_more(&pairs)) {
		for (int k = 0; k < 2 && !err; k++) {
			int v = k ^ (int)(pairs.n % 2);
			struct mmp_counters delta;

			err = seed_writer_switch(&w, &side[v].writer);
			if (!err)
				err = lw_sample(d, &side[v], items, &delta);
			for (size_t i = 0; i < d->ncontended && !err; i++)
				side[v].contended.v[d->contended[i]] += delta.v[d->contended[i]];
		}
		if (!err)
			err = bench_pairs_add(&pairs, side[0].secs, side[1].secs);
	}
	if (w.started) {
		int werr = seed_writer_stop(&w);

		err = err ? err : werr;
	}
	for (int v = 0; v < 2 && !err; v++)
		err = mmp_space_verify(side[v].env.space);
	if (err)
		goto out;

	bench_pairs_ci(&pairs, &ci);
	res[0].seconds = bench_median(pairs.base, pairs.n);
	res[1].seconds = bench_median(pairs.opt, pairs.n);
	res[0].counters = side[0].exact;
	res[1].counters = side[1].exact;
	if (!opts->json)
		lw_print(d, opts, arch, items, &pairs, &ci, res, side, w.ops);
	bench_append(extra, sizeof(extra), &off,
		     "\"%s\":%u,\"%s\":%llu,\"baseline_release\":\"%s\","
		     "\"optimized_release\":\"%s\",\"writer_ops\":%llu,"
		     "\"optimized_vma_lock_share\":%.4f,\"contended\":{", d->items_key, items,
		     d->bytes_key, (unsigned long long)d->item_bytes, d->base_label,
		     d->opt_label, (unsigned long long)w.ops, lw_share(d, &side[1].contended));
	lw_contended_json(d, extra, sizeof(extra), &off, "baseline", &side[0].contended);
	bench_append(extra, sizeof(extra), &off, ",");
	lw_contended_json(d, extra, sizeof(extra), &off, "optimized", &side[1].contended);
	bench_append(extra, sizeof(extra), &off, "}");
	mmp_seed_report(opts, d->seed, arch, case_name, &res[0], &res[1], &ci, &claim, extra);
out:
	for (int v = 0; v < 2; v++) {
		bench_env_destroy(&side[v].env);
		free(side[v].calls);
	}
	bench_pairs_free(&pairs);
	return err;
}
