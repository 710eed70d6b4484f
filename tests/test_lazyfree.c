/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MADV_FREE, MADV_PAGEOUT and mmp_reclaim of lazyfree folios, PTE and PMD
 * mapped, on generic, x86_64 and arm64 (block PMDs, contpte): the rules of
 * madvise_free_pte_range / madvise_free_huge_pmd, try_to_unmap_one and
 * __discard_anon_folio_pmd_locked ("Avoid splitting pmd for lazyfree
 * pmd-mapped THP in try_to_unmap"), checked through exact counters, the live
 * entries and the data, with mmp_space_verify() after every step. Run with a
 * back end name to check only that one.
 */
#include <string.h>

#include "internal.h"
#include "mm.h"
#include "util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define BASE	0x40000000ULL	/* PMD aligned, far from mmap_base */
#define NPMD	(MMP_PMD_SIZE / MMP_PAGE_SIZE)

static const char *const arches[] = { "generic", "x86_64", "arm64" };

static struct mmp_phys *phys;

/* ---- helpers ------------------------------------------------------------------- */

struct lf {
	const char *arch;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	struct mmp_counters c0;	/* counters at the last snap() */
};

static void lf_init(struct lf *t, const char *arch, long lazyfree_pmd)
{
	t->arch = arch;
	t->s = new_space(phys, arch);
	tap_require(mmp_space_set_opt(t->s, MMP_OPT_LAZYFREE_PMD, lazyfree_pmd) == 0,
		    "%s: MMP_OPT_LAZYFREE_PMD %ld", arch, lazyfree_pmd);
	tap_require(mmp_cpu_attach(t->s, &t->cpu) == 0, "%s: attach a CPU", arch);
}

static void lf_fini(struct lf *t)
{
	if (t->cpu)
		mmp_cpu_detach(t->cpu);
	tap_eq(counter(t->s, MMP_C_TLB_SANITIZER), 0, "%s: no stale TLB hit in the whole run",
	       t->arch);
	tap_eq(mmp_space_destroy(t->s), 0, "%s: destroy", t->arch);
}

static void snap(struct lf *t)
{
	mmp_space_counters(t->s, &t->c0);
}

/* How much counter @c moved since the last snap(). */
static long long since(struct lf *t, enum mmp_counter c)
{
	return (long long)(counter(t->s, c) - t->c0.v[c]);
}

static long long faults_since(struct lf *t)
{
	long long n = 0;

	for (int c = MMP_C_FAULT_ANON; c <= MMP_C_FAULT_SIGSEGV; c++)
		n += since(t, c);
	return n;
}

static uint64_t fixed_map(struct lf *t, uint64_t addr, uint64_t len, int flags)
{
	uint64_t got = 0;

	tap_require(mmp_mmap(t->s, addr, len, RW, MMP_MAP_FIXED | flags, &got) == 0 && got == addr,
		    "%s: mmap %llu KiB at %#llx", t->arch, (unsigned long long)(len / KiB),
		    (unsigned long long)addr);
	return addr;
}

/*
 * The leaf entry for @addr; 0 if none. A PTE is read with ptep_get: on arm64
 * the MMU sets young and dirty on one entry of a contpte block, and ptep_get
 * gathers them over the block, as the kernel sees it.
 */
static mmp_pte_t leaf_of(struct mmp_space *s, uint64_t addr, enum mmp_level *level)
{
	mmp_pte_t *pmdp = pmd_offset(s, addr), pmd, *ptes;

	*level = MMP_PTE;
	if (!pmdp)
		return 0;
	pmd = READ_ONCE(*pmdp);
	if (entry_flags(s, pmd, MMP_PMD) & MMP_E_LEAF) {
		*level = MMP_PMD;
		return pmd;
	}
	ptes = pte_table(s, pmd);
	return ptes ? s->arch->ptep_get(s, &ptes[level_index(addr, MMP_PTE)]) : 0;
}

/* The folio head mapped at @addr, NULL for none or the zero page. */
static struct mmp_page *folio_at(struct mmp_space *s, uint64_t addr)
{
	enum mmp_level l;
	mmp_pte_t e = leaf_of(s, addr, &l);
	uint64_t pfn;

	if (!e || (entry_flags(s, e, l) & MMP_E_SPECIAL))
		return NULL;
	pfn = entry_pfn(s, e, l) + (l == MMP_PMD ? level_index(addr, MMP_PTE) : 0);
	return pfn_to_page(s->phys, folio_pfn(s->phys, pfn));
}

/* Lazyfree as the kernel sees it: anonymous and not swapbacked. */
static bool folio_lazyfree(const struct mmp_page *head)
{
	return (head->flags & PG_anon) && !(head->flags & PG_swapbacked);
}

/* Per 4 KiB page of a range: what maps it and with which bits. */
struct rstate {
	unsigned int none, zero;	/* unmapped, zero page (small or huge) */
	unsigned int mapped, pmd;	/* by a folio; of those through a huge PMD */
	unsigned int young, dirty;	/* of the mapped, from their live entries */
	unsigned int lazyfree;		/* of the mapped, in a lazyfree folio */
	unsigned int large;		/* of the mapped, in a folio of order > 0 */
};

static struct rstate range_state(struct mmp_space *s, uint64_t addr, uint64_t len)
{
	struct rstate st = { 0 };

	for (uint64_t a = addr; a < addr + len; a += PAGE_SIZE) {
		enum mmp_level l;
		mmp_pte_t e = leaf_of(s, a, &l);
		unsigned int f = entry_flags(s, e, l);
		struct mmp_page *head;

		if (!e) {
			st.none++;
			continue;
		}
		if (f & MMP_E_SPECIAL) {
			st.zero++;
			continue;
		}
		head = folio_at(s, a);
		st.mapped++;
		st.pmd += l == MMP_PMD;
		st.young += !!(f & MMP_E_ACCESSED);
		st.dirty += !!(f & MMP_E_DIRTY);
		st.lazyfree += folio_lazyfree(head);
		st.large += head->order > 0;
	}
	return st;
}

/* How many @nr-page chunks of [addr, addr + len) have a dirty entry. */
static unsigned int dirty_chunks(struct mmp_space *s, uint64_t addr, uint64_t len, unsigned int nr)
{
	unsigned int n = 0;

	for (uint64_t c = addr; c < addr + len; c += (uint64_t)nr * PAGE_SIZE)
		n += range_state(s, c, (uint64_t)nr * PAGE_SIZE).dirty > 0;
	return n;
}

/* Page i of a filled range holds this byte everywhere. */
static unsigned char pattern(uint64_t addr)
{
	return (unsigned char)(((addr >> PAGE_SHIFT) * 7) % 251 + 1);
}

static void fill(struct lf *t, uint64_t addr, uint64_t len)
{
	int err = 0;

	for (uint64_t a = addr; a < addr + len && !err; a += PAGE_SIZE)
		err = mmp_memset(t->cpu, a, pattern(a), PAGE_SIZE);
	tap_require(err == 0, "%s: fill %llu KiB at %#llx", t->arch,
		    (unsigned long long)(len / KiB), (unsigned long long)addr);
}

/* Write one byte, the value it already has, into page @addr: a redirty, data unchanged. */
static void redirty(struct lf *t, uint64_t addr)
{
	unsigned char b = pattern(addr);

	if (mmp_write(t->cpu, addr + 1, &b, 1))
		tap_require(0, "%s: redirty %#llx", t->arch, (unsigned long long)addr);
}

/* Pages of [addr, addr + len) whose content is not the fill pattern (or zero when @zero). */
static unsigned int bad_pages(struct lf *t, uint64_t addr, uint64_t len, bool zero)
{
	static unsigned char buf[PAGE_SIZE];
	unsigned int bad = 0;

	for (uint64_t a = addr; a < addr + len; a += PAGE_SIZE) {
		unsigned char want = zero ? 0 : pattern(a);

		if (mmp_read(t->cpu, a, buf, PAGE_SIZE)) {
			bad++;
			continue;
		}
		for (unsigned int i = 0; i < PAGE_SIZE; i++) {
			if (buf[i] != want) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

static void verify(struct lf *t, const char *what)
{
	tap_eq(mmp_space_verify(t->s), 0, "%s: verify after %s", t->arch, what);
}

#define EXPECT(t, c, want, what)						\
	tap_eq(since(t, MMP_C_##c), (want), "%s: %s: " #c " += %lld", (t)->arch, what,	\
	       (long long)(want))

/* ---- MADV_FREE and MADV_PAGEOUT of PTE-mapped folios ---------------------------- */

/*
 * 64 pages of order-@order folios: MADV_FREE keeps every entry mapped but old
 * and clean, the folios lazyfree; a read does not fault. Redirty the folios of
 * the second half (one byte each), MADV_PAGEOUT: the clean half is discarded
 * and reads back as zeroes, the redirtied half survives, swapbacked again; a
 * second MADV_PAGEOUT keeps it (no swap: activated).
 */
static void check_free_pte(const char *arch, unsigned int order)
{
	const unsigned int nr = 1u << order, npages = 64, nfolios = npages / nr;
	const uint64_t len = npages * PAGE_SIZE, half = len / 2;
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

	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT again", arch,
	       what);
	EXPECT(&t, RECLAIM_ISOLATE, nfolios / 2, what);
	EXPECT(&t, RECLAIM_ACTIVATE, nfolios / 2, what);
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

	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT again", arch,
	       what);
	EXPECT(&t, RECLAIM_ISOLATE, 1, what);
	EXPECT(&t, RECLAIM_ACTIVATE, 1, what);
	EXPECT(&t, LAZYFREED, 0, what);
	EXPECT(&t, LAZYFREE_REDIRTIED, 0, what);
	EXPECT(&t, PMD_SPLIT, 0, what);
	verify(&t, "second MADV_PAGEOUT of THPs");

	mmp_space_stat(t.s, &ss);
	out->rss = rss(t.s);
	out->pgtable_bytes = ss.pgtable_bytes;
	out->st = range_state(t.s, a, len);
	out->bad = bad_pages(&t, t1, MMP_PMD_SIZE, false);

	/* The survivor can be made lazyfree again, and then it goes (PTE- or PMD-mapped). */
	snap(&t);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_FREE), 0, "%s: %s: MADV_FREE again", arch, what);
	EXPECT(&t, LAZYFREE, NPMD, what);
	tap_eq(range_state(t.s, t1, MMP_PMD_SIZE).lazyfree, NPMD, "%s: %s: THP 1 lazyfree again",
	       arch, what);
	tap_eq(mmp_madvise(t.s, a, len, MMP_MADV_PAGEOUT), 0, "%s: %s: MADV_PAGEOUT", arch, what);
	EXPECT(&t, LAZYFREED, NPMD, what);
	EXPECT(&t, FOLIO_FREE, 1, what);
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
	a = fixed_map(&t, BASE, MMP_PMD_SIZE, 0);
	mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	fill(&t, a, MMP_PMD_SIZE);
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

/* MADV_PAGEOUT of part of a lazyfree THP splits it and discards only that part. */
static void check_partial_pageout(const char *arch)
{
	const uint64_t off = 64 * KiB, plen = 256 * KiB, n = plen / PAGE_SIZE;
	struct rstate st;
	struct lf t;
	uint64_t a;

	lf_init(&t, arch, 1);
	a = fixed_map(&t, BASE, MMP_PMD_SIZE, 0);
	mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	fill(&t, a, MMP_PMD_SIZE);
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
	a = fixed_map(&t, BASE, MMP_PMD_SIZE, 0);
	mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	fixed_map(&t, small, slen, 0);
	fill(&t, a, MMP_PMD_SIZE);
	fill(&t, small, slen);
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
	uint64_t a;

	lf_init(&t, arch, 1);
	a = fixed_map(&t, BASE, MMP_PMD_SIZE, 0);
	mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	fixed_map(&t, small, slen, 0);
	fill(&t, a, MMP_PMD_SIZE);
	fill(&t, small, slen);
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
	a = fixed_map(&t, BASE, MMP_PMD_SIZE, MMP_MAP_DROPPABLE);
	mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	fixed_map(&t, small, slen, MMP_MAP_DROPPABLE);
	fill(&t, a, MMP_PMD_SIZE);
	fill(&t, small, slen);
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
	a = fixed_map(&t, BASE, MMP_PMD_SIZE, 0);
	mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	fixed_map(&t, small, slen, 0);
	fill(&t, a, MMP_PMD_SIZE);
	fill(&t, small, slen);
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
	a = fixed_map(&t, BASE, MMP_PMD_SIZE, 0);
	mmp_madvise(t.s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	fixed_map(&t, small, slen, 0);
	fill(&t, a, MMP_PMD_SIZE);
	fill(&t, small, slen);
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

int main(int argc, char **argv)
{
	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for (size_t i = 0; i < ARRAY_SIZE(arches); i++) {
		const char *arch = arches[i];

		if (argc > 1 && strcmp(argv[1], arch))
			continue;
		check_free_pte(arch, 0);
		check_free_pte(arch, 4);
		check_partial_mthp(arch);
		check_pmd_paths(arch);
		check_partial_pmd(arch);
		check_partial_pageout(arch);
		check_mremap(arch);
		check_protnone(arch);
		check_pin(arch, false, false, 1);
		check_pin(arch, true, true, 1);
		check_pin(arch, true, false, 0);
		check_droppable(arch, 1);
		check_droppable(arch, 0);
		check_droppable_fork(arch);
		check_shared(arch);
		check_fork_reclaim(arch, 1);
		check_fork_reclaim(arch, 0);
		check_errnos(arch);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
