/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed reproductions: each seed (seed_<id>.c) reruns the measurement of the
 * kernel patch it comes from, baseline and optimized in one process, and prints
 * the seed's kind of output beside a side-by-side table.
 *
 * Adding a seed: one file defining `const struct mmp_seed mmp_seed_<id>`, one
 * X(<id>) line in seeds.c, one file name in meson.build. A seed of the common
 * shape, a table of cases run on one warm phys per back end, gives its table
 * (MMP_SEED_CASES), the phys size and run_case; any other gives run_arch.
 */
#ifndef MMP_BENCH_SEEDS_H
#define MMP_BENCH_SEEDS_H

#include <stdbool.h>

#include <mmprim/mmprim.h>

#include "stats.h"

struct mmp_seed_opts {
	const char *arch;	/* NULL: each default back end of the seed */
	bool quick;		/* smaller sizes, the same statistics: indicative, marked "quick" */
	bool json;		/* one JSON object per line on stdout, nothing else */
	bool deterministic;	/* a fixed tiny workload for cachegrind, no timing claims */
	const char *csv;	/* write every sample to this file, for plotting (NULL: none) */
};

/* Options only some seeds take (struct mmp_seed.takes); elsewhere they are an error. */
#define MMP_SEED_TAKES_CSV		(1u << 0)
#define MMP_SEED_TAKES_DETERMINISTIC	(1u << 1)

struct mmp_seed {
	const char *name;	/* command-line name, e.g. "page-fault" */
	const char *title;	/* one line for `mmprim-seeds list` */
	unsigned int takes;	/* MMP_SEED_TAKES_* */
	/*
	 * The back ends it runs on when --arch names none, NULL-terminated; NULL:
	 * every registered one. A name this build lacks is skipped with a note.
	 */
	const char *const *archs;
	/*
	 * One back end: 0, -ENOTSUP when it cannot run on @arch, or another
	 * negative errno. NULL: mmp_seed_run_cases() with the fields below.
	 */
	int (*run_arch)(const struct mmp_seed_opts *opts, const char *arch);

	/* A seed of cases: its table, set with MMP_SEED_CASES(table). */
	const void *cases;
	size_t nr_cases, case_size;
	/* Bytes of the warm phys the cases share, in a full and a --quick run. */
	uint64_t phys_bytes, phys_bytes_quick;
	/* One case, @c an entry of the table; its text ends with the table of mmp_seed_report(). */
	int (*run_case)(const struct mmp_seed_opts *opts, const char *arch, struct mmp_phys *phys,
			const void *c);
};

/* In a struct mmp_seed initializer: the case table @table, a static array. */
#define MMP_SEED_CASES(table)							\
	.cases = (table), .nr_cases = sizeof(table) / sizeof((table)[0]),		\
	.case_size = sizeof((table)[0])

/**
 * mmp_seed_run_cases() - run each case of @seed on @arch, in table order.
 *
 * One warm phys of @seed->phys_bytes (or _quick) for all of them; in text mode
 * a blank line after each case. Stops at and returns the first error.
 */
int mmp_seed_run_cases(const struct mmp_seed *seed, const struct mmp_seed_opts *opts,
		       const char *arch);

/* One measured variant. */
struct mmp_seed_result {
	const char *label;	/* column title, e.g. "4K folios" */
	double seconds;		/* the seed's figure of merit, lower is better */
	struct mmp_counters counters;	/* of one run; identical run to run */
};

/* What the seed claims of this case, and whether this run bears it out. */
struct mmp_seed_claim {
	const char *what;	/* e.g. "time ratio >= 3.4x"; NULL: no claim */
	const char *published;	/* the seed's own figure, e.g. "1.58x (Apple M3)"; NULL: none */
	enum bench_verdict verdict;
	/* Why no verdict (BENCH_NO_VERDICT), or how the verdict was decided; NULL: nothing to add. */
	const char *note;
};

/**
 * mmp_seed_report() - print @base against @opt, and keep a row for the summary.
 * @case_name: tells the cases of one seed and arch apart, or NULL.
 * @ci: the time ratio baseline / optimized with its interval.
 * @claim: the seed's claim for this case, or NULL.
 * @extra_json: seed-specific fields `"key":value,...` (no braces) added to the
 *	JSON object, or NULL.
 *
 * Text mode: the table (seconds, ratio with interval, claim, counters non-zero
 * on either side); the seed prints its own lines before. JSON mode: exactly one
 * line, the object {"seed","arch","case","quick","baseline":{"seconds",
 * "counters"},"optimized":{...},"ratio","ratio_ci":[lo,hi],"samples","claim",
 * "published","verdict","verdict_note",...}; "verdict_note" only when
 * @claim has a note.
 */
void mmp_seed_report(const struct mmp_seed_opts *opts, const char *seed, const char *arch,
		     const char *case_name, const struct mmp_seed_result *base,
		     const struct mmp_seed_result *opt, const struct bench_ci *ci,
		     const struct mmp_seed_claim *claim, const char *extra_json);

/* " [quick]" in quick mode, "" otherwise: for the seeds' headlines. */
const char *mmp_seed_quick_tag(const struct mmp_seed_opts *opts);

#endif /* MMP_BENCH_SEEDS_H */
