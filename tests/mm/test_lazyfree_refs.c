/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lazyfree folios that reclaim must not simply drop: a folio with an extra
 * reference (a pin) is kept, MAP_DROPPABLE pages are dropped even when dirty,
 * folios shared by fork are reclaimed through the reverse map from every
 * space, and the errors of the calls involved. The PTE and PMD reclaim rules
 * themselves: test_lazyfree.c. Run with a back end name to check only that one.
 */
#include "lazyfree_util.h"

/* ---- extra references ----------------------------------------------------------------- */

/*
 * A pinned page keeps its lazyfree folio mapped through MADV_PAGEOUT, and not
 * swapbacked (the reference may be GUP or speculative, not a write); after
 * the unpin it is discarded. @pmd: a THP, else two 64 KiB folios, one pinned.
 */
static void check_pin(const char *arch, bool pmd, bool fast, long lazyfree_pmd)
{
	const uint64_t len = pmd ? MMP_PMD_SIZE : 128 * KiB, n = len / PAGE_SIZE;
	const uint64_t pinned_len = pmd ? len : 64 * KiB, pn = pinned_len / PAGE_SIZE;
	uint64_t pfn = 0, a;
	char what[64];
	struct rstate st;
	struct lf t;
	int got;

	snprintf(what, sizeof(what), "%s pinned by %s%s", pmd ? "THP" : "64K folio",
		 fast ? "GUP-fast" : "GUP", pmd ? (lazyfree_pmd ? ", no-split" : ", split") : "");
	lf_init(&t, arch, lazyfree_pmd);
	if (!pmd)
		mmp_space_set_thp(t.s, 4, MMP_THP_ALWAYS);
	a = fixed_map(&t, BASE, len, 0);
	if (pmd)
		mmp_madvise(t.s, a, len, MMP_MADV_HUGEPAGE);
	fill(&t, a, len);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_FREE), 0, "%s: %s: MADV_FREE", arch, what);
	got = fast ? mmp_gup_fast(t.s, a + 3 * PAGE_SIZE, 1, false, &pfn)
		   : mmp_gup(t.s, a + 3 * PAGE_SIZE, 1, false, &pfn);
	tap_eq(got, 1, "%s: %s: one page pinned", arch, what);
	verify(&t, "the pin");

	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT", arch, what);
	EXPECT(&t, RECLAIM_KEEP, 1, what);
	EXPECT(&t, LAZYFREED, n - pn, what);
	EXPECT(&t, LAZYFREE_REDIRTIED, 0, what);
	EXPECT(&t, RECLAIM_ACTIVATE, 0, what);
	EXPECT(&t, PMD_SPLIT, pmd && !lazyfree_pmd ? 1 : 0, what);
	st = range_state(t.s, a, pinned_len);
	tap_ok(st.mapped == pn && st.lazyfree == pn,
	       "%s: %s: the pinned folio stays mapped and NOT swapbacked (mapped %u lazyfree %u)",
	       arch, what, st.mapped, st.lazyfree);
	tap_eq(st.pmd, pmd && lazyfree_pmd ? pn : 0, "%s: %s: mapped by %s", arch, what,
	       pmd && lazyfree_pmd ? "its PMD" : "PTEs");
	tap_eq(rss(t.s), pn, "%s: %s: RSS keeps only the pinned folio", arch, what);
	tap_eq(bad_pages(&t, a, pinned_len, false), 0, "%s: %s: its data is intact", arch, what);
	verify(&t, "MADV_PAGEOUT of a pinned folio");

	tap_eq(mmp_unpin(t.s, &pfn, 1), 0, "%s: %s: unpin", arch, what);
	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT after unpin",
	       arch, what);
	EXPECT(&t, LAZYFREED, pn, what);
	EXPECT(&t, FOLIO_FREE, 1, what);
	EXPECT(&t, RECLAIM_KEEP, 0, what);
	tap_eq(rss(t.s), 0, "%s: %s: RSS 0", arch, what);
	tap_eq(bad_pages(&t, a, len, true), 0, "%s: %s: reads zeroes", arch, what);
	verify(&t, "MADV_PAGEOUT after the unpin");
	lf_fini(&t);
}

/* ---- MAP_DROPPABLE ------------------------------------------------------------------------ */

/* Droppable memory is never swapbacked; reclaim drops it even dirty, on both paths. */
static void check_droppable(const char *arch, long lazyfree_pmd)
{
	const uint64_t small = BASE + 4 * MMP_PMD_SIZE, slen = 64 * KiB;
	struct rstate st;
	char what[48];
	struct lf t;
	uint64_t a;

	snprintf(what, sizeof(what), "droppable, LAZYFREE_PMD %ld", lazyfree_pmd);
	lf_init(&t, arch, lazyfree_pmd);
	a = filled_thp_and_small(&t, small, slen, MMP_MAP_DROPPABLE);
	st = range_state(t.s, a, MMP_PMD_SIZE);
	tap_ok(st.pmd == NPMD && st.dirty == NPMD && st.lazyfree == NPMD,
	       "%s: %s: a dirty THP, not swapbacked", arch, what);
	st = range_state(t.s, small, slen);
	tap_ok(st.mapped == 16 && st.dirty == 16 && st.lazyfree == 16,
	       "%s: %s: 16 dirty pages, not swapbacked", arch, what);
	verify(&t, "faults in droppable memory");

	snap(&t);
	tap_eq(mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT THP",
	       arch, what);
	tap_eq(mmp_madvise(t.s, small, slen, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT pages",
	       arch, what);
	EXPECT(&t, LAZYFREED, NPMD + 16, what);
	EXPECT(&t, FOLIO_FREE, 17, what);
	EXPECT(&t, LAZYFREE_REDIRTIED, 0, what);
	EXPECT(&t, RECLAIM_ACTIVATE, 0, what);
	EXPECT(&t, RECLAIM_KEEP, 0, what);
	EXPECT(&t, LAZYFREE, 0, what);
	EXPECT(&t, PMD_SPLIT, lazyfree_pmd ? 0 : 1, what);
	tap_eq(rss(t.s), 0, "%s: %s: all dropped, dirty as they were", arch, what);
	tap_ok(!bad_pages(&t, a, MMP_PMD_SIZE, true) && !bad_pages(&t, small, slen, true),
	       "%s: %s: reads zeroes", arch, what);
	verify(&t, "MADV_PAGEOUT of droppable memory");
	lf_fini(&t);
}

/* MAP_DROPPABLE implies VM_WIPEONFORK (do_mmap): the child starts with it empty. */
static void check_droppable_fork(const char *arch)
{
	const uint64_t len = 64 * KiB;
	struct mmp_space *child;
	struct lf t;

	lf_init(&t, arch, 1);
	fixed_map(&t, BASE, len, MMP_MAP_DROPPABLE);
	fill(&t, BASE, len);
	tap_eq(mmp_fork(t.s, &child), 0, "%s: fork with droppable memory", arch);
	tap_eq(rss(child), 0, "%s: the child's droppable mapping is empty (wipe on fork)", arch);
	tap_eq(rss(t.s), 16, "%s: the parent keeps its pages", arch);
	verify(&t, "fork of droppable memory");
	tap_eq(mmp_space_destroy(child), 0, "%s: destroy the child", arch);
	lf_fini(&t);
}

/* ---- shared folios and the reverse map ---------------------------------------------------- */

/* MADV_FREE and MADV_PAGEOUT leave folios shared with a child alone; mmp_reclaim keeps them. */
static void check_shared(const char *arch)
{
	const uint64_t small = BASE + MMP_PMD_SIZE, slen = 64 * KiB;
	struct mmp_space *child;
	struct rstate st;
	struct lf t;
	uint64_t a;

	lf_init(&t, arch, 1);
	a = filled_thp_and_small(&t, small, slen, 0);
	tap_eq(mmp_fork(t.s, &child), 0, "%s: fork", arch);

	snap(&t);
	tap_eq(mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_FREE), 0, "%s: MADV_FREE a shared THP",
	       arch);
	tap_eq(mmp_madvise(t.s, small, slen, MMP_MADV_FREE), 0, "%s: MADV_FREE shared pages", arch);
	EXPECT(&t, LAZYFREE, 0, "shared");
	EXPECT(&t, PMD_SPLIT, 0, "shared");
	st = range_state(t.s, a, MMP_PMD_SIZE);
	tap_ok(st.pmd == NPMD && st.dirty == NPMD && st.lazyfree == 0,
	       "%s: the shared THP's PMD keeps its dirty bit, the folio swapbacked", arch);
	st = range_state(t.s, small, slen);
	tap_ok(st.mapped == 16 && st.dirty == 16 && st.lazyfree == 0,
	       "%s: the shared pages are left as they were", arch);
	verify(&t, "MADV_FREE of shared folios");

	snap(&t);
	tap_eq(mmp_madvise(t.s, BASE, small + slen - BASE, MMP_MADV_PAGEOUT), 0,
	       "%s: MADV_PAGEOUT of shared folios", arch);
	EXPECT(&t, RECLAIM_ISOLATE, 0, "shared");
	tap_eq(mmp_reclaim(t.s), 0, "%s: mmp_reclaim", arch);
	EXPECT(&t, RECLAIM_ISOLATE, 17, "shared");
	EXPECT(&t, RECLAIM_ACTIVATE, 17, "shared");
	EXPECT(&t, LAZYFREED, 0, "shared");
	tap_ok(rss(t.s) == NPMD + 16 && rss(child) == NPMD + 16, "%s: both keep everything",
	       arch);
	tap_ok(!bad_pages(&t, a, MMP_PMD_SIZE, false) && !bad_pages(&t, small, slen, false),
	       "%s: data intact", arch);
	verify(&t, "reclaim of shared swapbacked folios");
	tap_eq(mmp_space_destroy(child), 0, "%s: destroy the child", arch);
	lf_fini(&t);
}

/*
 * MADV_FREE, MADV_COLD and MADV_PAGEOUT of part of a huge PMD they would not
 * touch whole split nothing: the huge zero page (madvise_free_huge_pmd and
 * madvise_cold_or_pageout_pte_range leave it before any split), and a THP a
 * child maps too (folio_maybe_mapped_shared). A 6.18 host counts no
 * thp_split_pmd for a MADV_FREE of 576 KiB across a child's huge zero PMD.
 */
static void check_partial_left_alone(const char *arch)
{
	static const int advice[] = { MMP_MADV_FREE, MMP_MADV_COLD, MMP_MADV_PAGEOUT };
	const uint64_t zero = BASE + MMP_PMD_SIZE, off = 64 * KiB, len = 256 * KiB;
	struct mmp_space *child;
	enum mmp_level level;
	struct rstate st;
	struct lf t;
	char byte;
	uint64_t a;

	lf_init(&t, arch, 1);
	a = filled_thp(&t);
	fixed_map(&t, zero, MMP_PMD_SIZE, 0);
	mmp_madvise(t.s, zero, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	tap_eq(mmp_read(t.cpu, zero + off, &byte, 1), 0, "%s: read a THP-sized hole", arch);
	st = range_state(t.s, zero, MMP_PMD_SIZE);
	tap_ok(st.zero == NPMD && leaf_of(t.s, zero, &level) && level == MMP_PMD,
	       "%s: the huge zero PMD maps it", arch);
	tap_eq(mmp_fork(t.s, &child), 0, "%s: fork", arch);
	for (unsigned int i = 0; i < sizeof(advice) / sizeof(advice[0]); i++) {
		snap(&t);
		tap_ok(!mmp_madvise(t.s, a + off, len, advice[i]) &&
		       !mmp_madvise(t.s, zero + off, len, advice[i]),
		       "%s: advice %d over 256 KiB of the shared THP and of the huge zero PMD",
		       arch, advice[i]);
		EXPECT(&t, PMD_SPLIT, 0, "left alone");
		EXPECT(&t, FOLIO_SPLIT, 0, "left alone");
		EXPECT(&t, LAZYFREE, 0, "left alone");
		EXPECT(&t, RECLAIM_ISOLATE, 0, "left alone");
		st = range_state(t.s, a, MMP_PMD_SIZE);
		tap_ok(st.pmd == NPMD && st.dirty == NPMD,
		       "%s: the shared THP keeps its dirty PMD (pmd %u dirty %u)", arch, st.pmd,
		       st.dirty);
		st = range_state(t.s, zero, MMP_PMD_SIZE);
		tap_ok(st.zero == NPMD && leaf_of(t.s, zero + off, &level) && level == MMP_PMD,
		       "%s: the huge zero PMD stays", arch);
		verify(&t, "partial advice left alone");
	}
	tap_eq(mmp_space_destroy(child), 0, "%s: destroy the child", arch);
	lf_fini(&t);
}

/*
 * Lazyfree before fork, so the child maps the same clean folios: mmp_reclaim
 * of the parent finds the child's mappings through the rmap and discards the
 * folios from both spaces.
 */
static void check_fork_reclaim(const char *arch, long lazyfree_pmd)
{
	const uint64_t small = BASE + MMP_PMD_SIZE, slen = 64 * KiB, n = NPMD + 16;
	struct mmp_space *child;
	struct mmp_cpu *ccpu;
	char what[48];
	struct rstate st;
	struct lf t;
	uint64_t a;

	snprintf(what, sizeof(what), "fork, LAZYFREE_PMD %ld", lazyfree_pmd);
	lf_init(&t, arch, lazyfree_pmd);
	a = filled_thp_and_small(&t, small, slen, 0);
	tap_eq(mmp_madvise(t.s, BASE, small + slen - BASE, MMP_MADV_FREE), 0, "%s: %s: MADV_FREE",
	       arch, what);
	tap_eq(mmp_fork(t.s, &child), 0, "%s: %s: fork", arch, what);
	st = range_state(child, BASE, small + slen - BASE);
	tap_ok(st.mapped == n && st.pmd == NPMD && st.dirty == 0 && st.young == 0 &&
	       st.lazyfree == n, "%s: %s: the child maps the lazyfree folios, old and clean",
	       arch, what);
	verify(&t, "fork of lazyfree folios");

	snap(&t);
	tap_eq(mmp_reclaim(t.s), 0, "%s: %s: mmp_reclaim of the parent", arch, what);
	EXPECT(&t, RECLAIM_ISOLATE, 17, what);
	EXPECT(&t, LAZYFREED, n, what);
	EXPECT(&t, FOLIO_FREE, 17, what);
	EXPECT(&t, RECLAIM_KEEP, 0, what);
	EXPECT(&t, PMD_SPLIT, 0, what);
	tap_eq(counter(child, MMP_C_PMD_SPLIT), 0, "%s: %s: no split in the child", arch, what);
	tap_eq(rss(t.s), 0, "%s: %s: parent RSS 0", arch, what);
	tap_eq(rss(child), 0, "%s: %s: child RSS 0 (found through the rmap)", arch, what);
	verify(&t, "mmp_reclaim across fork");
	tap_ok(!bad_pages(&t, a, MMP_PMD_SIZE, true) && !bad_pages(&t, small, slen, true),
	       "%s: %s: the parent reads zeroes", arch, what);
	mmp_cpu_detach(t.cpu);
	t.cpu = NULL;
	tap_require(mmp_cpu_attach(child, &ccpu) == 0, "%s: attach to the child", arch);
	{
		struct lf c = { .arch = arch, .s = child, .cpu = ccpu };

		tap_ok(!bad_pages(&c, a, MMP_PMD_SIZE, true) && !bad_pages(&c, small, slen, true),
		       "%s: %s: the child reads zeroes", arch, what);
	}
	mmp_cpu_detach(ccpu);
	tap_eq(counter(child, MMP_C_TLB_SANITIZER), 0, "%s: %s: no stale TLB hit in the child",
	       arch, what);
	tap_eq(mmp_space_destroy(child), 0, "%s: destroy the child", arch);
	lf_fini(&t);
}

/* ---- errors --------------------------------------------------------------------------------- */

static void check_errnos(const char *arch)
{
	const uint64_t len = 64 * KiB;
	struct lf t;

	lf_init(&t, arch, 1);
	fixed_map(&t, BASE, len, 0);
	fixed_map(&t, BASE + 2 * len, len, 0);
	fill(&t, BASE, len);
	fill(&t, BASE + 2 * len, len);

	snap(&t);
	tap_eq(mmp_madvise(t.s, BASE, 3 * len, MMP_MADV_FREE), -ENOMEM,
	       "%s: MADV_FREE over a hole: -ENOMEM", arch);
	EXPECT(&t, LAZYFREE, 32, "hole");
	verify(&t, "MADV_FREE over a hole");
	snap(&t);
	tap_eq(mmp_madvise(t.s, BASE, 3 * len, MMP_MADV_PAGEOUT), -ENOMEM,
	       "%s: MADV_PAGEOUT over a hole: -ENOMEM", arch);
	EXPECT(&t, LAZYFREED, 32, "hole");
	tap_eq(rss(t.s), 0, "%s: ... after acting on both sides of it", arch);
	verify(&t, "MADV_PAGEOUT over a hole");

	tap_eq(mmp_madvise(t.s, BASE + len, len, MMP_MADV_FREE), -ENOMEM,
	       "%s: MADV_FREE of nothing mapped: -ENOMEM", arch);
	tap_eq(mmp_madvise(t.s, BASE + len, len, MMP_MADV_PAGEOUT), -ENOMEM,
	       "%s: MADV_PAGEOUT of nothing mapped: -ENOMEM", arch);
	tap_eq(mmp_madvise(t.s, BASE + 1, PAGE_SIZE, MMP_MADV_FREE), -EINVAL,
	       "%s: MADV_FREE unaligned: -EINVAL", arch);
	tap_eq(mmp_madvise(t.s, BASE + 2048, PAGE_SIZE, MMP_MADV_PAGEOUT), -EINVAL,
	       "%s: MADV_PAGEOUT unaligned: -EINVAL", arch);
	tap_eq(mmp_madvise(t.s, BASE, ~0ULL, MMP_MADV_FREE), -EINVAL,
	       "%s: MADV_FREE with a length that wraps: -EINVAL", arch);
	tap_eq(mmp_madvise(t.s, BASE, 0, MMP_MADV_PAGEOUT), 0, "%s: MADV_PAGEOUT of 0 bytes: 0",
	       arch);
	tap_eq(mmp_reclaim(NULL), -EINVAL, "%s: mmp_reclaim(NULL): -EINVAL", arch);
	verify(&t, "bad calls");
	lf_fini(&t);
}


static void run(const char *arch)
{
	check_pin(arch, false, false, 1);
	check_pin(arch, true, true, 1);
	check_pin(arch, true, false, 0);
	check_droppable(arch, 1);
	check_droppable(arch, 0);
	check_droppable_fork(arch);
	check_shared(arch);
	check_partial_left_alone(arch);
	check_fork_reclaim(arch, 1);
	check_fork_reclaim(arch, 0);
	check_errnos(arch);
}

int main(int argc, char **argv)
{
	return lf_main(argc, argv, run);
}
