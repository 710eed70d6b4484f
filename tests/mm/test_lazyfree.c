/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MADV_FREE, MADV_PAGEOUT and mmp_reclaim of lazyfree folios, PTE and PMD
 * mapped, on generic, x86_64 and arm64 (block PMDs, contpte): the rules of
 * madvise_free_pte_range / madvise_free_huge_pmd, try_to_unmap_one and
 * __discard_anon_folio_pmd_locked ("Avoid splitting pmd for lazyfree
 * pmd-mapped THP in try_to_unmap"), checked through exact counters, the live
 * entries and the data, with mmp_space_verify() after every step. Extra
 * references, MAP_DROPPABLE, shared folios and errors: test_lazyfree_refs.c.
 * Run with a back end name to check only that one.
 */
#include "lazyfree_util.h"

/* ---- MADV_FREE and MADV_PAGEOUT of PTE-mapped folios ---------------------------- */

/*
 * 64 pages of order-@order folios: MADV_FREE keeps every entry mapped but old
 * and clean, the folios lazyfree; a read does not fault (software A/D takes its
 * access faults, which map nothing). Redirty the folios of
 * the second half (one byte each), MADV_PAGEOUT: the clean half is discarded
 * and reads back as zeroes, the redirtied half survives, swapbacked again; a
 * second MADV_PAGEOUT keeps it (no swap: activated).
 */
static void check_free_pte(const char *arch, unsigned int order)
{
	const unsigned int nr = 1u << order, npages = 64, nfolios = npages / nr;
	const uint64_t len = npages * PAGE_SIZE, half = len / 2;
	struct mmp_mthp_stats before, after;
	char what[64];
	struct rstate st;
	struct lf t;
	uint64_t a;

	lf_init(&t, arch, 1);
	if (order)
		mmp_space_set_thp(t.s, order, MMP_THP_ALWAYS);
	snprintf(what, sizeof(what), "%u KiB folios", 4u << order);
	a = fixed_map(&t, BASE, len, 0);
	fill(&t, a, len);
	tap_eq(counter(t.s, MMP_C_FOLIO_ALLOC_O0 + order), nfolios, "%s: %s: %u folios", arch,
	       what, nfolios);

	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_FREE), 0, "%s: %s: MADV_FREE", arch, what);
	EXPECT(&t, LAZYFREE, npages, what);
	EXPECT(&t, FOLIO_SPLIT, 0, what);
	EXPECT(&t, FOLIO_FREE, 0, what);
	EXPECT(&t, PMD_SPLIT, 0, what);
	st = range_state(t.s, a, len);
	tap_ok(st.mapped == npages && st.young == 0 && st.dirty == 0 && st.lazyfree == npages,
	       "%s: %s: every entry stays mapped, old and clean; every folio lazyfree "
	       "(mapped %u young %u dirty %u lazyfree %u)", arch, what, st.mapped, st.young,
	       st.dirty, st.lazyfree);
	tap_ok(order == 0 || st.large == npages, "%s: %s: the large folios stay whole", arch, what);
	tap_eq(rss(t.s), npages, "%s: %s: RSS unchanged", arch, what);
	verify(&t, "MADV_FREE");

	snap(&t);
	tap_eq(bad_pages(&t, a, len, false), 0, "%s: %s: the data is still there", arch, what);
	tap_eq(faults_since(&t), 0, "%s: %s: reading lazyfree memory does not fault", arch, what);
	tap_ok(ad_faults_as_declared(&t),
	       "%s: %s: ... but for the access faults of software A/D, as declared", arch, what);
	st = range_state(t.s, a, len);
	tap_ok(st.young == npages && st.dirty == 0 && st.lazyfree == npages,
	       "%s: %s: the read made the entries young, not dirty (young %u dirty %u)", arch,
	       what, st.young, st.dirty);

	snap(&t);
	for (uint64_t p = a + half; p < a + len; p += nr * PAGE_SIZE)
		redirty(&t, p);
	tap_eq(faults_since(&t), 0, "%s: %s: redirtying does not fault (writable, clean)", arch,
	       what);
	tap_eq(dirty_chunks(t.s, a + half, half, nr), nfolios / 2,
	       "%s: %s: the MMU marked each written folio's entry dirty", arch, what);
	tap_eq(range_state(t.s, a, half).dirty, 0, "%s: %s: the other half stays clean", arch,
	       what);
	st = range_state(t.s, a + half, half);
	tap_eq(st.lazyfree, half / PAGE_SIZE, "%s: %s: still lazyfree until reclaim looks", arch,
	       what);
	verify(&t, "redirty");

	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT", arch, what);
	EXPECT(&t, RECLAIM_ISOLATE, nfolios, what);
	EXPECT(&t, LAZYFREED, npages / 2, what);
	EXPECT(&t, FOLIO_FREE, nfolios / 2, what);
	EXPECT(&t, LAZYFREE_REDIRTIED, nfolios / 2, what);
	EXPECT(&t, RECLAIM_ACTIVATE, nfolios / 2, what);
	EXPECT(&t, RECLAIM_KEEP, 0, what);
	tap_eq(rss(t.s), npages / 2, "%s: %s: RSS lost the clean half", arch, what);
	st = range_state(t.s, a, half);
	tap_eq(st.none, npages / 2, "%s: %s: the clean half is unmapped", arch, what);
	st = range_state(t.s, a + half, half);
	tap_ok(st.mapped == npages / 2 && st.lazyfree == 0 && st.dirty == npages / 2,
	       "%s: %s: the redirtied half stays mapped, dirty, swapbacked again "
	       "(mapped %u dirty %u lazyfree %u)", arch, what, st.mapped, st.dirty, st.lazyfree);
	/*
	 * madvise_cold_or_pageout_pte_range clears young for MADV_COLD only
	 * ("!pageout && pte_young"); MADV_PAGEOUT leaves it and reclaim_pages
	 * ignores references. try_to_unmap restores what it cleared.
	 */
	tap_eq(st.young, npages / 2, "%s: %s: MADV_PAGEOUT leaves the kept entries young", arch,
	       what);
	verify(&t, "MADV_PAGEOUT");

	snap(&t);
	tap_eq(bad_pages(&t, a, half, true), 0, "%s: %s: the discarded half reads zeroes", arch,
	       what);
	EXPECT(&t, FAULT_ZERO, npages / 2, what);
	tap_eq(bad_pages(&t, a + half, half, false), 0, "%s: %s: the redirtied half kept its data",
	       arch, what);
	EXPECT(&t, FAULT_ANON, 0, what);

	/*
	 * Swapbacked now: with no swap device, a large folio is split to be
	 * swapped page by page (THP_SWPOUT_FALLBACK), and each page, written,
	 * is activated on its own.
	 */
	snap(&t);
	mmp_space_mthp_stats(t.s, &before);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT again", arch,
	       what);
	EXPECT(&t, RECLAIM_ISOLATE, nfolios / 2, what);
	EXPECT(&t, FOLIO_SPLIT, order ? nfolios / 2 : 0, what);
	EXPECT(&t, THP_SWPOUT_FALLBACK, 0, what);	/* PMD-sized THPs only */
	mmp_space_mthp_stats(t.s, &after);
	tap_eq(after.swpout_fallback[order] - before.swpout_fallback[order], order ? nfolios / 2 : 0,
	       "%s: %s: mTHP swpout_fallback counts each split", arch, what);
	EXPECT(&t, RECLAIM_ACTIVATE, npages / 2, what);
	EXPECT(&t, LAZYFREED, 0, what);
	EXPECT(&t, LAZYFREE_REDIRTIED, 0, what);
	tap_eq(rss(t.s), npages / 2, "%s: %s: swapbacked folios stay (no swap)", arch, what);
	tap_eq(bad_pages(&t, a + half, half, false), 0, "%s: %s: data intact", arch, what);
	verify(&t, "second MADV_PAGEOUT");
	lf_fini(&t);
}

/* MADV_FREE of part of a 64 KiB folio splits it; only the covered pages become lazyfree. */
static void check_partial_mthp(const char *arch)
{
	const uint64_t len = 64 * KiB;
	struct rstate st;
	struct lf t;
	uint64_t a;

	lf_init(&t, arch, 1);
	mmp_space_set_thp(t.s, 4, MMP_THP_ALWAYS);
	a = fixed_map(&t, BASE, len, 0);
	fill(&t, a, len);
	snap(&t);
	tap_eq(mmp_madvise(t.s, a + 16 * KiB, 16 * KiB, MMP_MADV_FREE), 0,
	       "%s: MADV_FREE 16 KiB inside a 64 KiB folio", arch);
	EXPECT(&t, FOLIO_SPLIT, 1, "partial mTHP");
	EXPECT(&t, LAZYFREE, 4, "partial mTHP");
	EXPECT(&t, FOLIO_FREE, 0, "partial mTHP");
	st = range_state(t.s, a, len);
	tap_ok(st.mapped == 16 && st.large == 0 && st.lazyfree == 4,
	       "%s: 16 order-0 folios, 4 lazyfree (mapped %u large %u lazyfree %u)", arch,
	       st.mapped, st.large, st.lazyfree);
	st = range_state(t.s, a + 16 * KiB, 16 * KiB);
	tap_ok(st.lazyfree == 4 && st.dirty == 0, "%s: the covered pages, clean", arch);
	verify(&t, "partial MADV_FREE of an mTHP");
	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: MADV_PAGEOUT", arch);
	EXPECT(&t, LAZYFREED, 4, "partial mTHP");
	EXPECT(&t, RECLAIM_ACTIVATE, 12, "partial mTHP");
	tap_eq(rss(t.s), 12, "%s: RSS 12", arch);
	tap_eq(bad_pages(&t, a + 16 * KiB, 16 * KiB, true), 0, "%s: covered pages read zeroes",
	       arch);
	tap_ok(!bad_pages(&t, a, 16 * KiB, false) && !bad_pages(&t, a + 32 * KiB, 32 * KiB, false),
	       "%s: the rest kept its data", arch);
	verify(&t, "MADV_PAGEOUT");
	lf_fini(&t);
}

/* ---- PMD-mapped THPs: both reclaim paths ------------------------------------------ */

/* What a PMD run ends in, for comparing MMP_OPT_LAZYFREE_PMD 1 against 0. */
struct pmd_outcome {
	uint64_t rss, pgtable_bytes;
	struct rstate st;
	unsigned int bad;
};

/*
 * Three THPs: MADV_FREE makes the PMDs old and clean and the folios lazyfree
 * with no split. THP 1 is redirtied. MADV_PAGEOUT discards THPs 0 and 2 on
 * their PMDs; THP 1 becomes swapbacked again: with @lazyfree_pmd it keeps its
 * PMD (no split, no table), without it the PMD is split first (the base line).
 */
static void check_free_pmd(const char *arch, long lazyfree_pmd, struct pmd_outcome *out)
{
	const uint64_t len = 3 * MMP_PMD_SIZE, t1 = BASE + MMP_PMD_SIZE;
	struct mmp_space_stat ss;
	char what[48];
	struct rstate st;
	struct lf t;
	uint64_t a;

	snprintf(what, sizeof(what), "THP, LAZYFREE_PMD %ld", lazyfree_pmd);
	lf_init(&t, arch, lazyfree_pmd);
	a = fixed_map(&t, BASE, len, 0);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_HUGEPAGE), 0, "%s: MADV_HUGEPAGE", arch);
	fill(&t, a, len);
	tap_eq(counter(t.s, MMP_C_FAULT_HUGE_ANON), 3, "%s: %s: three THPs", arch, what);

	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_FREE), 0, "%s: %s: MADV_FREE", arch, what);
	EXPECT(&t, LAZYFREE, 3 * NPMD, what);
	EXPECT(&t, PMD_SPLIT, 0, what);
	EXPECT(&t, FOLIO_SPLIT, 0, what);
	EXPECT(&t, PGTABLE_ALLOC, 0, what);
	st = range_state(t.s, a, len);
	tap_ok(st.pmd == 3 * NPMD && st.young == 0 && st.dirty == 0 && st.lazyfree == 3 * NPMD,
	       "%s: %s: PMDs stay mapped, old and clean, folios lazyfree "
	       "(pmd %u young %u dirty %u lazyfree %u)", arch, what, st.pmd, st.young, st.dirty,
	       st.lazyfree);
	verify(&t, "MADV_FREE of THPs");

	snap(&t);
	tap_eq(bad_pages(&t, a, len, false), 0, "%s: %s: data still there", arch, what);
	tap_eq(faults_since(&t), 0, "%s: %s: reading does not fault", arch, what);
	st = range_state(t.s, a, len);
	tap_ok(st.young == 3 * NPMD && st.dirty == 0, "%s: %s: the PMDs are young, still clean",
	       arch, what);
	redirty(&t, t1 + 7 * PAGE_SIZE);
	st = range_state(t.s, t1, MMP_PMD_SIZE);
	tap_ok(st.dirty == NPMD && st.lazyfree == NPMD, "%s: %s: THP 1 has a dirty PMD", arch,
	       what);

	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT", arch, what);
	EXPECT(&t, RECLAIM_ISOLATE, 3, what);
	EXPECT(&t, LAZYFREED, 2 * NPMD, what);
	EXPECT(&t, FOLIO_FREE, 2, what);
	EXPECT(&t, LAZYFREE_REDIRTIED, 1, what);
	EXPECT(&t, RECLAIM_ACTIVATE, 1, what);
	EXPECT(&t, RECLAIM_KEEP, 0, what);
	EXPECT(&t, FOLIO_SPLIT, 0, what);
	EXPECT(&t, PMD_SPLIT, lazyfree_pmd ? 0 : 1, what);
	/* The split takes the deposited table: no allocation either way. */
	EXPECT(&t, PGTABLE_ALLOC, 0, what);
	EXPECT(&t, PGTABLE_FREE, 2, what);
	tap_eq(rss(t.s), NPMD, "%s: %s: RSS 512", arch, what);
	tap_ok(range_state(t.s, a, MMP_PMD_SIZE).none == NPMD &&
	       range_state(t.s, a + 2 * MMP_PMD_SIZE, MMP_PMD_SIZE).none == NPMD,
	       "%s: %s: the clean THPs are gone", arch, what);
	st = range_state(t.s, t1, MMP_PMD_SIZE);
	tap_ok(st.mapped == NPMD && st.dirty == NPMD && st.lazyfree == 0 && st.large == NPMD,
	       "%s: %s: THP 1 mapped, dirty, swapbacked again, whole (mapped %u dirty %u "
	       "lazyfree %u)", arch, what, st.mapped, st.dirty, st.lazyfree);
	tap_eq(st.pmd, lazyfree_pmd ? NPMD : 0, "%s: %s: THP 1 is %s", arch, what,
	       lazyfree_pmd ? "still PMD-mapped" : "PTE-mapped after the split");
	verify(&t, "MADV_PAGEOUT of THPs");

	snap(&t);
	tap_eq(bad_pages(&t, a, MMP_PMD_SIZE, true) + bad_pages(&t, a + 2 * MMP_PMD_SIZE,
								 MMP_PMD_SIZE, true), 0,
	       "%s: %s: the discarded THPs read zeroes", arch, what);
	EXPECT(&t, FAULT_HUGE_ZERO, 2, what);
	tap_eq(bad_pages(&t, t1, MMP_PMD_SIZE, false), 0, "%s: %s: THP 1 kept its data", arch,
	       what);

	mmp_space_stat(t.s, &ss);
	out->rss = rss(t.s);
	out->pgtable_bytes = ss.pgtable_bytes;
	out->st = range_state(t.s, a, len);
	out->bad = bad_pages(&t, t1, MMP_PMD_SIZE, false);

	/*
	 * THP 1 is swapbacked now: with no swap device, reclaim splits it to
	 * swap it page by page (THP_SWPOUT_FALLBACK), and each of its 512
	 * pages, all written, is activated on its own.
	 */
	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT again", arch,
	       what);
	EXPECT(&t, RECLAIM_ISOLATE, 1, what);
	EXPECT(&t, FOLIO_SPLIT, 1, what);
	EXPECT(&t, THP_SWPOUT_FALLBACK, 1, what);
	EXPECT(&t, PMD_SPLIT, lazyfree_pmd ? 1 : 0, what);
	EXPECT(&t, RECLAIM_ACTIVATE, NPMD, what);
	EXPECT(&t, LAZYFREED, 0, what);
	EXPECT(&t, LAZYFREE_REDIRTIED, 0, what);
	st = range_state(t.s, t1, MMP_PMD_SIZE);
	tap_ok(rss(t.s) == NPMD && st.mapped == NPMD && st.large == 0,
	       "%s: %s: THP 1 is 512 order-0 folios, all kept (mapped %u large %u)", arch, what,
	       st.mapped, st.large);
	tap_eq(bad_pages(&t, t1, MMP_PMD_SIZE, false), 0, "%s: %s: and keeps its data", arch,
	       what);
	verify(&t, "second MADV_PAGEOUT of THPs");

	/* The survivors can be made lazyfree again, and then they go. */
	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_FREE), 0, "%s: %s: MADV_FREE again", arch, what);
	EXPECT(&t, LAZYFREE, NPMD, what);
	tap_eq(range_state(t.s, t1, MMP_PMD_SIZE).lazyfree, NPMD, "%s: %s: THP 1 lazyfree again",
	       arch, what);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT", arch, what);
	EXPECT(&t, LAZYFREED, NPMD, what);
	EXPECT(&t, FOLIO_FREE, NPMD, what);
	EXPECT(&t, PMD_SPLIT, 0, what);
	tap_eq(rss(t.s), 0, "%s: %s: RSS 0", arch, what);
	tap_eq(bad_pages(&t, t1, MMP_PMD_SIZE, true), 0, "%s: %s: THP 1 reads zeroes", arch, what);
	verify(&t, "the second lazyfree round");
	lf_fini(&t);
}

/* Both reclaim paths end alike but for the granularity of THP 1's mapping. */
static void check_pmd_paths(const char *arch)
{
	struct pmd_outcome o[2];

	check_free_pmd(arch, 1, &o[1]);
	check_free_pmd(arch, 0, &o[0]);
	tap_ok(o[0].rss == o[1].rss && o[0].bad == 0 && o[1].bad == 0 &&
	       o[0].st.mapped == o[1].st.mapped && o[0].st.lazyfree == o[1].st.lazyfree &&
	       o[0].st.dirty == o[1].st.dirty && o[0].st.zero == o[1].st.zero &&
	       o[0].st.none == o[1].st.none && o[0].st.large == o[1].st.large,
	       "%s: split and no-split end in the same data, RSS and folio state", arch);
	tap_eq(o[0].pgtable_bytes, o[1].pgtable_bytes,
	       "%s: ... and the same page-table memory (the split used the deposit)", arch);
	tap_ok(o[1].st.pmd == NPMD && o[0].st.pmd == 0,
	       "%s: ... but the split path leaves THP 1 PTE-mapped", arch);
}

/* ---- partial MADV_FREE of a THP ------------------------------------------------------ */

static void check_partial_pmd(const char *arch)
{
	const uint64_t off = 64 * KiB, flen = 256 * KiB, n = flen / PAGE_SIZE;
	struct rstate st;
	struct lf t;
	uint64_t a;

	lf_init(&t, arch, 1);
	a = filled_thp(&t);
	snap(&t);
	tap_eq(mmp_madvise(t.s, a + off, flen, MMP_MADV_FREE), 0,
	       "%s: MADV_FREE 256 KiB inside a THP", arch);
	EXPECT(&t, PMD_SPLIT, 1, "partial THP");
	EXPECT(&t, FOLIO_SPLIT, 1, "partial THP");
	EXPECT(&t, LAZYFREE, n, "partial THP");
	EXPECT(&t, FOLIO_FREE, 0, "partial THP");
	EXPECT(&t, PGTABLE_ALLOC, 0, "partial THP");
	st = range_state(t.s, a, MMP_PMD_SIZE);
	tap_ok(st.mapped == NPMD && st.pmd == 0 && st.large == 0 && st.lazyfree == n,
	       "%s: 512 order-0 folios, only the %llu covered lazyfree (pmd %u large %u "
	       "lazyfree %u)", arch, (unsigned long long)n, st.pmd, st.large, st.lazyfree);
	st = range_state(t.s, a + off, flen);
	tap_ok(st.lazyfree == n && st.dirty == 0 && st.young == 0,
	       "%s: the covered entries are old and clean", arch);
	st = range_state(t.s, a + off + flen, MMP_PMD_SIZE - off - flen);
	tap_ok(st.lazyfree == 0 && st.dirty == NPMD - n - off / PAGE_SIZE,
	       "%s: the others keep their dirty bit and stay swapbacked", arch);
	tap_eq(rss(t.s), NPMD, "%s: RSS unchanged", arch);
	verify(&t, "partial MADV_FREE of a THP");

	snap(&t);
	tap_eq(mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_PAGEOUT), 0, "%s: MADV_PAGEOUT", arch);
	EXPECT(&t, RECLAIM_ISOLATE, NPMD, "partial THP");
	EXPECT(&t, LAZYFREED, n, "partial THP");
	EXPECT(&t, FOLIO_FREE, n, "partial THP");
	EXPECT(&t, RECLAIM_ACTIVATE, NPMD - n, "partial THP");
	EXPECT(&t, LAZYFREE_REDIRTIED, 0, "partial THP");
	tap_eq(rss(t.s), NPMD - n, "%s: RSS lost the covered pages", arch);
	tap_eq(bad_pages(&t, a + off, flen, true), 0, "%s: they read zeroes", arch);
	tap_ok(!bad_pages(&t, a, off, false) &&
	       !bad_pages(&t, a + off + flen, MMP_PMD_SIZE - off - flen, false),
	       "%s: the rest kept its data", arch);
	verify(&t, "MADV_PAGEOUT after a partial MADV_FREE");
	lf_fini(&t);
}

/*
 * A split to order 0 maps the sub-pages that hold only zeroes to the shared
 * zero page and frees them (6.12, b1f202060afe: try_to_map_unused_to_zeropage),
 * whatever asked for the split; a 6.18 host does it for a partial MADV_FREE.
 * The first 32 pages of a THP are zeroed again, then MADV_FREE covers pages
 * 16-79: pages 0-31 become the zero page, 32-79 lazyfree, the rest stay. Not
 * where the mm has no zero page (mm_forbids_zeropage).
 */
static void check_split_zero_pages(const char *arch, bool forbid)
{
	const uint64_t zeroed = 32 * PAGE_SIZE, off = 64 * KiB, flen = 256 * KiB;
	const unsigned int nz = forbid ? 0 : 32, nfree = forbid ? 64 : 48;
	const char *what = forbid ? "split, no zero page" : "split of zeroed pages";
	struct rstate st;
	struct lf t;
	uint64_t a;
	unsigned char b;

	lf_init(&t, arch, 1);
	must(mmp_space_set_opt(t.s, MMP_OPT_FORBID_ZEROPAGE, forbid) == 0, "FORBID_ZEROPAGE");
	a = filled_thp(&t);
	tap_eq(mmp_memset(t.cpu, a, 0, zeroed), 0, "%s: %s: zero the first 32 pages", arch, what);
	snap(&t);
	tap_eq(mmp_madvise(t.s, a + off, flen, MMP_MADV_FREE), 0, "%s: %s: MADV_FREE 256 KiB",
	       arch, what);
	EXPECT(&t, FOLIO_SPLIT, 1, what);
	EXPECT(&t, SPLIT_ZERO_PAGE, nz, what);
	EXPECT(&t, FOLIO_FREE, nz, what);
	EXPECT(&t, LAZYFREE, nfree, what);
	tap_eq(rss(t.s), NPMD - nz, "%s: %s: RSS less the zero-filled pages", arch, what);
	st = range_state(t.s, a, zeroed);
	tap_ok(st.zero == nz && st.mapped == 32 - nz,
	       "%s: %s: the zeroed pages map the zero page (zero %u mapped %u)", arch, what,
	       st.zero, st.mapped);
	st = range_state(t.s, a + zeroed, MMP_PMD_SIZE - zeroed);
	tap_ok(st.mapped == NPMD - 32 && st.large == 0,
	       "%s: %s: the pages with data stay mapped, order 0", arch, what);
	tap_eq(bad_pages(&t, a, zeroed, true), 0, "%s: %s: the zeroed pages read zeroes", arch,
	       what);
	tap_ok(!bad_pages(&t, a + zeroed, MMP_PMD_SIZE - zeroed, false),
	       "%s: %s: the rest keeps its data", arch, what);
	verify(&t, what);

	/* The zero page is read-only: a write takes a page of its own. */
	snap(&t);
	b = 0x5a;
	tap_eq(mmp_write(t.cpu, a, &b, 1), 0, "%s: %s: write the first page", arch, what);
	tap_eq(faults_since(&t), forbid ? 0 : 1, "%s: %s: ... which faults only on the zero page",
	       arch, what);
	tap_eq(rss(t.s), NPMD - nz + (forbid ? 0 : 1), "%s: %s: ... and counts again", arch, what);
	verify(&t, "a write to a page split to the zero page");
	lf_fini(&t);
}

/*
 * A THP of zeroes that an mprotect split across two VMAs (the first half
 * PROT_NONE), then MADV_FREE of part of the second: the split remaps the
 * second half to the zero page with that VMA's protection. The first half
 * keeps its pages: the kernel's rmap walk would remap them too, with
 * PROT_NONE, but the walk here may hold no lock on that VMA (docs/design.md).
 */
static void check_split_zero_pages_two_vmas(const char *arch)
{
	const uint64_t half = MMP_PMD_SIZE / 2;
	const char *what = "split across two VMAs";
	struct rstate st;
	struct lf t;
	uint64_t a;

	lf_init(&t, arch, 1);
	a = filled_thp(&t);
	tap_eq(mmp_memset(t.cpu, a, 0, MMP_PMD_SIZE), 0, "%s: %s: zero the THP", arch, what);
	tap_eq(mmp_mprotect(t.s, a, half, MMP_PROT_NONE), 0, "%s: %s: first half PROT_NONE", arch,
	       what);
	snap(&t);
	tap_eq(mmp_madvise(t.s, a + half + 64 * KiB, 64 * KiB, MMP_MADV_FREE), 0,
	       "%s: %s: MADV_FREE 64 KiB of the second half", arch, what);
	EXPECT(&t, FOLIO_SPLIT, 1, what);
	EXPECT(&t, SPLIT_ZERO_PAGE, NPMD / 2, what);
	st = range_state(t.s, a + half, half);
	tap_eq(st.zero, NPMD / 2, "%s: %s: the second half maps the zero page", arch, what);
	st = range_state(t.s, a, half);
	tap_eq(st.mapped, NPMD / 2, "%s: %s: the first half keeps its pages", arch, what);
	tap_eq(rss(t.s), NPMD / 2, "%s: %s: RSS", arch, what);
	verify(&t, "a split of a folio across two VMAs");
	lf_fini(&t);
}

/* MADV_PAGEOUT of part of a lazyfree THP splits it and discards only that part. */
static void check_partial_pageout(const char *arch)
{
	const uint64_t off = 64 * KiB, plen = 256 * KiB, n = plen / PAGE_SIZE;
	struct rstate st;
	struct lf t;
	uint64_t a;

	lf_init(&t, arch, 1);
	a = filled_thp(&t);
	tap_eq(mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_FREE), 0, "%s: MADV_FREE a THP", arch);
	snap(&t);
	tap_eq(mmp_madvise(t.s, a + off, plen, MMP_MADV_PAGEOUT), 0,
	       "%s: MADV_PAGEOUT 256 KiB of a lazyfree THP", arch);
	EXPECT(&t, PMD_SPLIT, 1, "partial pageout");
	EXPECT(&t, FOLIO_SPLIT, 1, "partial pageout");
	EXPECT(&t, RECLAIM_ISOLATE, n, "partial pageout");
	EXPECT(&t, LAZYFREED, n, "partial pageout");
	EXPECT(&t, FOLIO_FREE, n, "partial pageout");
	tap_eq(rss(t.s), NPMD - n, "%s: RSS lost the 64 pages", arch);
	st = range_state(t.s, a, MMP_PMD_SIZE);
	tap_ok(st.none == n && st.mapped == NPMD - n && st.lazyfree == NPMD - n,
	       "%s: the rest stays mapped and lazyfree (none %u mapped %u lazyfree %u)", arch,
	       st.none, st.mapped, st.lazyfree);
	tap_ok(!bad_pages(&t, a, off, false) && !bad_pages(&t, a + off + plen,
							   MMP_PMD_SIZE - off - plen, false),
	       "%s: and keeps its data", arch);
	verify(&t, "partial MADV_PAGEOUT of a THP");
	snap(&t);
	tap_eq(mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_PAGEOUT), 0, "%s: MADV_PAGEOUT the rest",
	       arch);
	EXPECT(&t, LAZYFREED, NPMD - n, "partial pageout");
	tap_eq(rss(t.s), 0, "%s: RSS 0", arch);
	verify(&t, "MADV_PAGEOUT of the rest");
	lf_fini(&t);
}

/* A moved VMA keeps its page index and anon_vma: reclaim still finds the folios. */
static void check_mremap(const char *arch)
{
	const uint64_t small = BASE + MMP_PMD_SIZE, slen = 64 * KiB;
	const uint64_t to = BASE + 16 * MiB, sto = BASE + 32 * MiB;
	struct rstate st;
	struct lf t;
	uint64_t a, got;

	lf_init(&t, arch, 1);
	mmp_space_set_thp(t.s, 4, MMP_THP_ALWAYS);
	a = filled_thp_and_small(&t, small, slen, 0);
	tap_eq(mmp_madvise(t.s, BASE, small + slen - BASE, MMP_MADV_FREE), 0, "%s: MADV_FREE",
	       arch);
	tap_eq(mmp_mremap(t.s, a, MMP_PMD_SIZE, MMP_PMD_SIZE,
			  MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, to, &got), 0,
	       "%s: mremap the lazyfree THP", arch);
	tap_eq(mmp_mremap(t.s, small, slen, slen, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, sto,
			  &got), 0, "%s: mremap the lazyfree 64 KiB folio", arch);
	st = range_state(t.s, to, MMP_PMD_SIZE);
	tap_ok(st.pmd == NPMD && st.lazyfree == NPMD && st.dirty == 0,
	       "%s: the THP moved with its PMD, still lazyfree and clean", arch);
	verify(&t, "mremap of lazyfree folios");
	snap(&t);
	tap_eq(mmp_madvise(t.s, to, MMP_PMD_SIZE, MMP_MADV_PAGEOUT), 0,
	       "%s: MADV_PAGEOUT at the new place", arch);
	tap_eq(mmp_madvise(t.s, sto, slen, MMP_MADV_PAGEOUT), 0, "%s: ... both", arch);
	EXPECT(&t, LAZYFREED, NPMD + 16, "moved");
	EXPECT(&t, RECLAIM_KEEP, 0, "moved");
	tap_eq(rss(t.s), 0, "%s: RSS 0: the rmap found the moved mappings", arch);
	verify(&t, "MADV_PAGEOUT of moved lazyfree folios");
	lf_fini(&t);
}

/*
 * PROT_NONE entries are present to the kernel (pte_present / pmd_present hold
 * for protnone): MADV_FREE and MADV_PAGEOUT act on them as on any other.
 */
static void check_protnone(const char *arch)
{
	const uint64_t small = BASE + MMP_PMD_SIZE, slen = 64 * KiB, len = small + slen - BASE;
	struct lf t;

	lf_init(&t, arch, 1);
	filled_thp_and_small(&t, small, slen, 0);
	tap_eq(mmp_mprotect(t.s, BASE, len, MMP_PROT_NONE), 0, "%s: mprotect PROT_NONE", arch);
	snap(&t);
	tap_eq(mmp_madvise(t.s, BASE, len, MMP_MADV_FREE), 0, "%s: MADV_FREE of PROT_NONE", arch);
	EXPECT(&t, LAZYFREE, NPMD + 16, "PROT_NONE");
	verify(&t, "MADV_FREE of PROT_NONE memory");
	tap_eq(mmp_mprotect(t.s, BASE, len, RW), 0, "%s: mprotect back", arch);
	tap_eq(mmp_madvise(t.s, BASE, len, MMP_MADV_FREE), 0, "%s: MADV_FREE", arch);
	tap_eq(mmp_mprotect(t.s, BASE, len, MMP_PROT_NONE), 0, "%s: mprotect PROT_NONE again",
	       arch);
	tap_eq(range_state(t.s, BASE, len).lazyfree, NPMD + 16,
	       "%s: lazyfree folios behind PROT_NONE entries", arch);
	snap(&t);
	tap_eq(mmp_madvise(t.s, BASE, len, MMP_MADV_PAGEOUT), 0, "%s: MADV_PAGEOUT of PROT_NONE",
	       arch);
	EXPECT(&t, LAZYFREED, NPMD + 16, "PROT_NONE");
	tap_eq(rss(t.s), 0, "%s: PROT_NONE lazyfree memory is discarded", arch);
	verify(&t, "MADV_PAGEOUT of PROT_NONE memory");
	lf_fini(&t);
}


static void run(const char *arch)
{
	check_free_pte(arch, 0);
	check_free_pte(arch, 4);
	check_partial_mthp(arch);
	check_pmd_paths(arch);
	check_partial_pmd(arch);
	check_split_zero_pages(arch, false);
	check_split_zero_pages(arch, true);
	check_split_zero_pages_two_vmas(arch);
	check_partial_pageout(arch);
	check_mremap(arch);
	check_protnone(arch);
}

int main(int argc, char **argv)
{
	return lf_main(argc, argv, run);
}
