/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "huge-copy" (Huang Ying, "mm, huge page: Copy to access sub-page last
 * when copy huge page", 2018): a COW fault on a 2 MiB THP copies 512 sub-pages;
 * copying the one the fault is about last leaves it cache hot for the access
 * that follows. That was the THP COW of its day; since 5.8, and so in the 6.18
 * the library models, the child's write splits the PMD and copies the target
 * 4 KiB alone, whatever the order. The THP trial below is that COW: it still
 * runs every order, variant and target, and shows the split (pmd_split 1,
 * subpage_copy 1), but claims nothing: "no claim: 6.18 splits THP on COW;
 * measured on hugetlb". The hugetlb trial ("hugetlb/" cases) is where 6.18
 * copies a whole 2 MiB page in process_huge_page's order (hugetlb_wp,
 * copy_user_large_folio: fault_hugetlb_cow 1, subpage_copy 512): those cases
 * carry the seed's claim. For each copy variant and sub-page order, and with and without
 * a thread sweeping the shared LLC from another core: the COW fault time, the
 * time to read the target 4 KiB right after (classed L1/L2/L3/DRAM against a
 * calibration in the same run), and how much of an L2-sized victim working set,
 * warm before the fault, is still in L2 after it.
 *
 * MMPRIM_HUGE_NEIGHBOURHOOD (sub-pages) and MMPRIM_VICTIM_KIB override the
 * neighbourhood (L2 / 16 KiB) and the victim size (L2) for experiments.
 *
 * --deterministic runs one trial per order and target with no timing claims,
 * reading each target in its own function (hc_read_<order>_n<target>), so that
 *   valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL=1048576,8,64 \
 *       --cachegrind-out-file=hc.cg mmprim-seeds huge-copy --deterministic
 *   cg_annotate hc.cg | grep hc_read_
 * counts the target-read misses (D1mr, DLmr), identical run to run.
 * MMPRIM_HUGE_VARIANT names the copy variant of that run (default generic).
 *
 * Whether the target is hot is decided from counts where the machine has
 * them, as a latency moves with the neighbours' load on shared vCPUs:
 *   1. perf: the thread's L1D read misses (perf_event_open, user space only)
 *      around each target read, the median over runs per target;
 *   2. cachegrind: the run re-executes itself --deterministic under valgrind
 *      once per copy variant valgrind can run and reads hc_read_* D1mr from
 *      the output file. A simulated cache sees neither another core's
 *      pressure nor non-temporal stores (it fills on them), so it decides the
 *      quiet cases of temporal variants only;
 *   3. the latency classes of the calibration, for everything else.
 * MMPRIM_HUGE_DECIDE=perf|cachegrind|latency starts the list lower down.
 * Each case says which decided ("decided_by" in JSON).
 *
 * A non-temporal copy variant ("-nt", "stnp") writes around the caches: no
 * order makes the target hot with it, and the kernel's copy_user_highpage
 * copies with ordinary stores, so target-last makes no claim there.
 * Neighbourhood-last hands the target's neighbourhood to the temporal
 * sibling, so its claim stands.
 *
 * This file: the seed's definition, its parameters (set-up) and a run per
 * page kind. The rest, sharing bench/seeds/seed_huge_copy.h:
 *   bench/seeds/seed_huge_copy_measure.c  the trials and their medians;
 *   bench/seeds/seed_huge_copy_decide.c   whether the target is hot: perf,
 *                                         cachegrind or latency classes;
 *   bench/seeds/seed_huge_copy_report.c   text, JSON cases and --csv.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "seed_huge_copy.h"

#define HC_DET_NBHD	64		/* fixed in deterministic mode: 512 KiB of footprint */
#define HC_PRESSURE_MIN	(8 * BENCH_MIB)
#define HC_PRESSURE_MAX	(64 * BENCH_MIB)

/* ---- set-up -------------------------------------------------------------------------------- */

/* The variants to measure: every usable one, two when quick, generic when deterministic. */
static void pick_variants(struct hc_run *h)
{
	const char *nt = NULL;

	h->nr_variants = 0;
	if (h->opts->deterministic) {
		const char *env = getenv("MMPRIM_HUGE_VARIANT");

		h->variants[h->nr_variants++] = env && *env ? env : "generic";
		return;
	}
	for (int i = 0; i < mmp_copy_variant_count() && h->nr_variants < HC_MAX_VARIANTS; i++) {
		const char *name = mmp_copy_variant_name(i);

		if (mmp_space_set_copy(h->rig.parent, name))
			continue;	/* this CPU cannot run it */
		if (!nt && hc_variant_nt(name))
			nt = name;
		if (!h->opts->quick || !h->nr_variants)
			h->variants[h->nr_variants++] = name;
	}
	if (h->opts->quick && nt)
		h->variants[h->nr_variants++] = nt;
}

static int huge_copy_setup(struct hc_run *h)
{
	const char *env = getenv("MMPRIM_HUGE_NEIGHBOURHOOD");
	unsigned long l2;
	int err;

	if (!h->opts->deterministic) {
		err = bench_topo_init(&h->topo);
		if (err)
			return err;
		h->have_topo = true;
		bench_topo_pin(&h->topo, h->topo.main_pu);
	}
	l2 = h->topo.l2 ? h->topo.l2 : BENCH_MIB;
	/* The library's own default, L2 / 16 KiB, made explicit so that it is printed. */
	h->nbhd = h->opts->deterministic ? HC_DET_NBHD : (long)(l2 / (16 * BENCH_KIB));
	if (env && !h->opts->deterministic)
		h->nbhd = strtol(env, NULL, 0);
	h->nbhd = h->nbhd < 1 ? 1 : h->nbhd > HC_NR ? HC_NR : h->nbhd;
	h->runs = h->opts->deterministic ? 1 : h->opts->quick ? HC_RUNS_QUICK : HC_RUNS;
	h->nr_press = !h->opts->deterministic && h->topo.pressure_pu >= 0 ? 2 : 1;
	h->pressure_bytes = 2 * h->topo.llc;
	if (h->pressure_bytes < HC_PRESSURE_MIN)
		h->pressure_bytes = HC_PRESSURE_MIN;
	if (h->pressure_bytes > HC_PRESSURE_MAX)
		h->pressure_bytes = HC_PRESSURE_MAX;
	h->rng = 0x2545f4914f6cdd1dULL;

	err = hc_rig_create(&h->rig, h->arch, h->hugetlb);
	if (err)
		return err;
	/* 4 x L1d for calibration; 8 MiB stands in for a flush under cachegrind (LL 1 MiB). */
	err = hc_buf_alloc(&h->evict, h->opts->deterministic ? 8 * BENCH_MIB : 4 * l2, true);
	if (err)
		return err;
	if (h->opts->deterministic)
		h->rig.sweep = &h->evict;
	if (!h->opts->deterministic) {
		/* L2-sized by default; MMPRIM_VICTIM_KIB for experiments. */
		size_t vbytes = getenv("MMPRIM_VICTIM_KIB") ?
					strtoul(getenv("MMPRIM_VICTIM_KIB"), NULL, 0) * BENCH_KIB : l2;

		err = hc_victim_init(&h->victim, vbytes, 42);
		if (err)
			return err;
		h->have_victim = true;
		err = hc_victim_init(&h->evictor, 2 * l2, 43);
		if (err)
			return err;
	}
	pick_variants(h);
	hc_pick_decide(h);
	h->s = calloc((size_t)h->nr_press * h->nr_variants * MMP_NR_HUGE_ORDERS * HC_TARGETS *
			      h->runs, sizeof(*h->s));
	h->n = calloc((size_t)h->nr_press * h->nr_variants * MMP_NR_HUGE_ORDERS * HC_TARGETS *
			      h->runs, sizeof(*h->n));
	h->miss = calloc((size_t)h->nr_press * h->nr_variants * MMP_NR_HUGE_ORDERS * HC_TARGETS *
				 h->runs, sizeof(*h->miss));
	return h->s && h->n && h->miss ? 0 : -ENOMEM;
}

static void huge_copy_teardown(struct hc_run *h)
{
	free(h->s);
	free(h->n);
	free(h->miss);
	if (h->have_victim) {
		hc_victim_free(&h->victim);
		hc_victim_free(&h->evictor);
	}
	hc_buf_free(&h->evict);
	if (h->rig.parent)
		hc_rig_destroy(&h->rig);
	if (h->have_topo)
		bench_topo_destroy(&h->topo);
}

/* One page kind: THP (split, no claim) or hugetlb (copied whole, the seed's claims). */
static int huge_copy_mode(const struct mmp_seed_opts *opts, const char *arch, bool hugetlb)
{
	struct hc_run h = { .opts = opts, .arch = arch, .hugetlb = hugetlb };
	int err;

	err = huge_copy_setup(&h);
	for (int p = 0; p < h.nr_press && !err; p++)
		err = hc_measure(&h, p);
	if (!err)
		err = hc_report(&h);
	huge_copy_teardown(&h);
	return err;
}

/*
 * THP, then hugetlb. --deterministic runs one kind (hugetlb unless
 * MMPRIM_HUGE_HUGETLB=0), as its read functions count the misses of one.
 */
static int huge_copy_arch(const struct mmp_seed_opts *opts, const char *arch)
{
	const char *env = getenv("MMPRIM_HUGE_HUGETLB");
	int err = 0;

	if (opts->deterministic)
		return huge_copy_mode(opts, arch, !env || strcmp(env, "0"));
	for (int hugetlb = 0; hugetlb < 2 && !err; hugetlb++)
		err = huge_copy_mode(opts, arch, hugetlb);
	return err;
}

const struct mmp_seed mmp_seed_huge_copy = {
	.name = "huge-copy",
	.takes = MMP_SEED_TAKES_CSV | MMP_SEED_TAKES_DETERMINISTIC,
	.title = "COW of a 2 MiB page, THP (split since 5.8) and hugetlb (copied whole): "
		 "target-read latency per order and variant",
	/* Data movement is host code: one back end shows it; --arch picks another. */
	.archs = (const char *const[]){ "x86_64", NULL },
	.run_arch = huge_copy_arch,
};
