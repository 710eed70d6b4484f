/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One cache-footprint trial of a COW of a 2 MiB page: a parent's page, cold;
 * fork; the child writes sub-page n; then the target sub-page is read and the
 * victim working set chased, and what it cost is the sample. A THP: as in
 * 6.18 the fault splits the child's PMD and copies sub-page n alone, with the
 * copy variant asked for; the order asked for has nothing to order. A hugetlb
 * page (the rig's @hugetlb): the fault copies all 512 sub-pages in the order
 * asked for (copy_user_large_folio), the target last for target-last.
 */
#ifndef MMP_BENCH_HUGE_COPY_H
#define MMP_BENCH_HUGE_COPY_H

#include <stdbool.h>
#include <stdint.h>

#include <mmprim/mmprim.h>

#include "cache.h"

#define HC_NR	512	/* sub-pages of a PMD folio */

struct hc_rig {
	struct mmp_phys *phys;
	struct mmp_space *parent;
	uint64_t addr;			/* the parent's page, PMD aligned */
	bool hugetlb;			/* a hugetlb page rather than a THP */
	/* Where flushing cannot be had (cachegrind ignores clflush): sweep this instead. */
	struct hc_buf *sweep;
};

/* A parent space of back end @arch with one populated THP, or hugetlb page (@hugetlb). */
int hc_rig_create(struct hc_rig *r, const char *arch, bool hugetlb);
void hc_rig_destroy(struct hc_rig *r);

struct hc_trial {
	int order;			/* enum mmp_huge_order */
	const char *variant;		/* copy variant name */
	long nbhd;			/* MMP_OPT_HUGE_NEIGHBOURHOOD, 0: the library's default */
	unsigned int n;			/* target sub-page */
	struct hc_victim *victim;	/* warmed before, chased after; may be NULL */
	/* Reads the target after the copy; NULL: hc_read4k_ns. Returns ns. */
	double (*read)(const void *page);
};

struct hc_sample {
	double copy_ns;			/* the child's write: the COW fault, split and copy */
	double read_ns;			/* reading the target 4 KiB right after */
	double victim_ns;		/* chasing the victim after that (NAN without) */
	struct mmp_counters counters;	/* of the child, over the trial */
};

/* Run one trial; 0 or a negative errno (-ENOTSUP: the variant does not run here). */
int hc_rig_trial(struct hc_rig *r, const struct hc_trial *t, struct hc_sample *out);

/* Register mmprim-bench's huge_copy/<order>/<variant> family (bench_huge_copy.c). */
/*
 * Register the huge_copy/ benches, @iterations each (fixed: every iteration
 * builds a cold THP outside the timed region, which Google Benchmark's
 * min_time does not see).
 */
int hc_register_benches(long iterations);

#endif /* MMP_BENCH_HUGE_COPY_H */
