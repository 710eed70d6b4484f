/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A lock beside a writer: the case run of the seeds that time one call per
 * item (a chunk DONTNEEDed, a VMA queried) while seed_writer.h's thread maps
 * and unmaps in the same space, at two releases. Per side: one writer-less
 * sample for the exact counters table, then alternating pairs with the writer
 * switched to the side being sampled, the counters it makes vary summed apart
 * and printed as "contended" figures, with the per-VMA share. A seed gives
 * what it maps, what one sample does and its words; the rest is here.
 */
#ifndef MMP_SEED_LOCK_WRITER_H
#define MMP_SEED_LOCK_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "seed_writer.h"
#include "seeds.h"

/* One release's space, what is measured in it and its figures. */
struct seed_lock_side {
	struct bench_env env;
	uint64_t addr;				/* what is measured: the setup's to map */
	struct seed_writer_target writer;	/* a free range far from it: the setup's */
	struct mmp_counters exact;		/* the writer-less sample */
	struct mmp_counters contended;		/* summed over the timed samples */
	double *calls;				/* one sample's call times, one per item */
	double secs;				/* its mean call: waits count however few */
};

struct seed_lock_writer {
	const char *seed;			/* its name: first word of the text, the report's */
	long base_release, opt_release;		/* MMP_KERNEL_VERSION() */
	const char *base_label, *opt_label;	/* the same, as printed: "6.16" */
	unsigned int items, items_quick;	/* calls a sample */
	uint64_t item_bytes;			/* what one call covers */
	const char *items_key, *bytes_key;	/* their JSON names: "chunks", "chunk_bytes" */
	/* What the writer makes vary: out of the exact table, in "contended". */
	const enum mmp_counter *contended;
	size_t ncontended;
	/* The share's successes and fallbacks, and the call's own mmap-lock count, as printed. */
	enum mmp_counter vma_ok, vma_fallback, mmap_lock;
	/* The headline: "<seed> [arch]: <what_pre><items><what_post>, a writer ... beside". */
	const char *what_pre, *what_post;
	const char *share_aside;		/* after the share: the series' own, or "" */
	const char *published, *note;		/* the claim; published may be NULL */
	bool attach;				/* a sample runs on the CPU: attach around it */
	/* Map what is measured (side->addr) and find the writer's range; attached. */
	int (*setup)(struct seed_lock_side *side, unsigned int items);
	/* One sample: @items calls, call i timed into side->calls[i]. */
	int (*sample)(struct seed_lock_side *side, unsigned int items);
};

/* A run_case body: @d's two sides beside the writer, printed and reported as @case_name. */
int seed_lock_writer_run(const struct seed_lock_writer *d, const struct mmp_seed_opts *opts,
			 const char *arch, struct mmp_phys *phys, const char *case_name);

#endif /* MMP_SEED_LOCK_WRITER_H */
