/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PTE batching on every back end: where folio_pte_batch must stop and what its
 * flags ignore or merge; that batched and unbatched munmap, MADV_DONTNEED,
 * fork and mremap leave the same observable state with 4 KiB, 64 KiB and PMD
 * sized folios (only the counters may differ); and that a batched mremap never
 * spreads one entry's write bit over the others.
 */
#include <string.h>

#include "rcu.h"
#include "pte_util.h"

#define P	PAGE_SIZE
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)

static struct mmp_phys *phys;
/* Does the back end under test report runs (pte_batch_hint > 1) for a mapped 64 KiB folio? */
static bool hint_runs;

static void populate(struct mmp_space *s, uint64_t addr, uint64_t len)
{
	must(populate_range(s, addr, addr + len, true) == 0, "populate %#llx",
	     (unsigned long long)addr);
}

/* ---- folio_pte_batch ------------------------------------------------------------------- */

/* A test-only PTE table, never linked: entries built by hand, then thrown away. */
struct tt {
	struct mmp_space *s;
	const char *arch;
	uint32_t tpfn;
	mmp_pte_t *t;
	uint64_t addr;		/* the (64 KiB aligned) address its entry 0 stands for */
};

/* Turn [pfn, pfn + 2^order) into an anonymous folio, as folio_alloc_anon does. */
static void make_folio(struct mmp_space *s, uint64_t pfn, unsigned int order)
{
	struct mmp_page *head = pfn_to_page(s->phys, pfn);

	for (unsigned int i = 0; i < (1u << order); i++) {
		memset(head + i, 0, sizeof(*head));
		if (i) {
			head[i].flags = PG_tail | PG_anon_exclusive;
			head[i].tail.head = pfn;
		}
	}
	head->order = order;
	head->flags = PG_head | PG_anon | PG_swapbacked | PG_anon_exclusive;
}

static uint64_t new_folio(struct tt *tt, unsigned int order)
{
	uint32_t pfn = phys_alloc_pages(tt->s->phys, order);

	must(pfn != NO_PFN, "an order-%u block", order);
	make_folio(tt->s, pfn, order);
	return pfn;
}

static void tt_clear(struct tt *tt)
{
	memset(tt->t, 0, PTRS_PER_TABLE * sizeof(*tt->t));
}

/*
 * Entries [0, n) map pfn + i with flags[i], written one at a time from the top
 * down so that arm64 never folds them: every entry keeps its own bits.
 */
static void tt_set_each(struct tt *tt, int n, uint64_t pfn, const unsigned int *flags)
{
	for (int i = n - 1; i >= 0; i--)
		if (flags[i])
			set_ptes(tt->s, tt->addr + i * P, &tt->t[i],
					      mk_entry(tt->s, pfn + i, flags[i], MMP_PTE), 1);
}

/* folio_pte_batch_flags from entry @i, as a caller does: read it, then batch. */
static unsigned int tt_batch(struct tt *tt, int i, unsigned int max_nr, unsigned int flags,
			     mmp_pte_t *ptep_out)
{
	mmp_pte_t pte = ptep_get(tt->s, &tt->t[i]);
	unsigned int nr = folio_pte_batch_flags(tt->s, &tt->t[i], &pte, max_nr, flags);

	if (ptep_out)
		*ptep_out = pte;
	return nr;
}

static void fill_flags(unsigned int *flags, int n, unsigned int f)
{
	for (int i = 0; i < n; i++)
		flags[i] = f;
}

static void check_folio_pte_batch(const char *arch)
{
	struct tt tt = { .arch = arch, .addr = 0x40000000 };
	unsigned int flags[32], f;
	struct mmp_counters c0, d;
	uint64_t pfn, a;
	mmp_pte_t pte, orig, *ptep;

	tt.s = new_space(phys, arch);
	tt.tpfn = pgtable_alloc(tt.s);
	must(tt.tpfn != NO_PFN, "a test-only table");
	tt.t = space_table(tt.s, tt.tpfn);

	/* Two 64 KiB folios with consecutive pfns: a batch stops at the folio end. */
	pfn = new_folio(&tt, 5);
	make_folio(tt.s, pfn, 4);
	make_folio(tt.s, pfn + 16, 4);
	set_ptes(tt.s, tt.addr, tt.t, mk_entry(tt.s, pfn, F_RW, MMP_PTE), 16);
	set_ptes(tt.s, tt.addr + 16 * P, tt.t + 16,
			     mk_entry(tt.s, pfn + 16, F_RW, MMP_PTE), 16);
	mmp_space_counters(tt.s, &c0);
	tap_eq(tt_batch(&tt, 0, 32, 0, NULL), 16,
	       "%s: folio_pte_batch stops at the folio end, even with the next pfn next", arch);
	counters_since(tt.s, &c0, &d);
	tap_eq(d.v[MMP_C_PTE_BATCH], 1, "%s: ... and counts one batch", arch);
	tap_eq(tt_batch(&tt, 16, 16, 0, NULL), 16, "%s: the second folio batches on its own", arch);
	tap_eq(tt_batch(&tt, 5, 27, 0, NULL), 11, "%s: from page 5 of a 64 KiB folio: 11", arch);
	tt_clear(&tt);
	phys_free_pages(tt.s->phys, pfn, 4);
	phys_free_pages(tt.s->phys, pfn + 16, 4);

	/* The caller's max_nr caps the batch (VMA end, table end). */
	pfn = new_folio(&tt, 5);
	set_ptes(tt.s, tt.addr, tt.t, mk_entry(tt.s, pfn, F_RW, MMP_PTE), 32);
	hint_runs = pte_batch_hint(tt.s, tt.t, ptep_get(tt.s, tt.t)) > 1;
	/* A run of contiguous blocks hints at whole blocks, as the back end declares. */
	tap_ok(mmp_arch_find(arch)->cont_ptes ? hint_runs : !hint_runs,
	       "%s: pte_batch_hint of a 64 KiB run is %s", arch, hint_runs ? "16" : "1");
	mmp_space_counters(tt.s, &c0);
	tap_eq(tt_batch(&tt, 0, 32, 0, NULL), 32, "%s: a whole 128 KiB folio is one batch", arch);
	counters_since(tt.s, &c0, &d);
	/* With runs (arm64 contpte) one compare per 16-entry run; otherwise one per entry. */
	tap_eq(d.v[MMP_C_PTEP_GET], hint_runs ? 2 : 32,
	       "%s: ... with %d ptep_get calls (the caller's included)", arch, hint_runs ? 2 : 32);
	tap_eq(tt_batch(&tt, 0, 5, 0, NULL), 5, "%s: max_nr 5 caps the batch at 5", arch);
	tap_eq(tt_batch(&tt, 3, 7, 0, NULL), 7, "%s: max_nr 7 from entry 3: 7", arch);
	tap_eq(tt_batch(&tt, 0, 1, 0, NULL), 1, "%s: max_nr 1: 1", arch);

	/* Two halves differing in dirty, then in write: only the RESPECT flags see it. */
	for (int i = 16; i < 32; i++)
		ptep_modify(tt.s, &tt.t[i], MMP_PTE, 0, MMP_E_DIRTY);
	tap_eq(tt_batch(&tt, 0, 32, 0, NULL), 32, "%s: dirty differs at 16: ignored by default",
	       arch);
	tap_eq(tt_batch(&tt, 0, 32, FPB_RESPECT_DIRTY, NULL), 16,
	       "%s: ... FPB_RESPECT_DIRTY stops at 16", arch);
	wrprotect_ptes(tt.s, tt.addr + 16 * P, tt.t + 16, 16);
	tap_eq(tt_batch(&tt, 0, 32, 0, NULL), 32, "%s: write differs at 16: ignored by default",
	       arch);
	tap_eq(tt_batch(&tt, 0, 32, FPB_RESPECT_WRITE, NULL), 16,
	       "%s: ... FPB_RESPECT_WRITE stops at 16", arch);
	tt_clear(&tt);
	folio_free(tt.s->phys, pfn);

	/* Bits that always end a batch, one entry at a time from entry 0 of a 64 KiB folio. */
	static const struct {
		int at;
		unsigned int set, clear;
		const char *what;
	} breaks[] = {
		{ 6, 0, MMP_E_NOEXEC, "an executable entry" },
		{ 6, MMP_E_SPECIAL, 0, "a special entry" },
		{ 6, MMP_E_PROTNONE, MMP_E_PRESENT, "a PROT_NONE entry" },
		{ 9, MMP_E_SOFT_DIRTY, 0, "a soft-dirty entry (without RESPECT_SOFT_DIRTY: none)" },
		{ 10, 0, ~0u, "a none entry" },
	};
	pfn = new_folio(&tt, 4);
	for (size_t k = 0; k < ARRAY_SIZE(breaks); k++) {
		unsigned int want = breaks[k].at;

		if (breaks[k].set == MMP_E_SOFT_DIRTY) {
			if (tt.s->arch->eflags_unsupported & MMP_E_SOFT_DIRTY)
				continue;
			want = 16;	/* soft-dirty is ignored unless respected */
		}
		fill_flags(flags, 16, F_RW);
		flags[breaks[k].at] = (F_RW | breaks[k].set) & ~breaks[k].clear;
		tt_set_each(&tt, 16, pfn, flags);
		tap_eq(tt_batch(&tt, 0, 16, 0, NULL), want, "%s: %s at %d: batch of %u", arch,
		       breaks[k].what, breaks[k].at, want);
		tt_clear(&tt);
	}

	/* A pfn out of sequence ends it too. */
	fill_flags(flags, 16, F_RW);
	tt_set_each(&tt, 16, pfn, flags);
	tt.t[7] = mk_entry(tt.s, pfn + 8, F_RW, MMP_PTE);
	tt.t[8] = mk_entry(tt.s, pfn + 7, F_RW, MMP_PTE);
	tap_eq(tt_batch(&tt, 0, 16, 0, NULL), 7, "%s: pfns 7 and 8 swapped: batch of 7", arch);
	tt_clear(&tt);

	/* Dirty and write are ignored unless respected, per entry (no contpte block). */
	fill_flags(flags, 16, F_RW & ~MMP_E_DIRTY);
	fill_flags(flags, 8, F_RW);
	tt_set_each(&tt, 16, pfn, flags);
	tap_eq(tt_batch(&tt, 0, 16, 0, NULL), 16, "%s: dirty 0..7, clean 8..15: 16", arch);
	tap_eq(tt_batch(&tt, 0, 16, FPB_RESPECT_DIRTY, NULL), 8,
	       "%s: ... with FPB_RESPECT_DIRTY: 8", arch);
	tt_clear(&tt);
	fill_flags(flags, 16, F_RW & ~MMP_E_WRITE);
	fill_flags(flags, 4, F_RW);
	tt_set_each(&tt, 16, pfn, flags);
	tap_eq(tt_batch(&tt, 0, 16, 0, NULL), 16, "%s: writable 0..3, read-only 4..15: 16", arch);
	tap_eq(tt_batch(&tt, 0, 16, FPB_RESPECT_WRITE, NULL), 4,
	       "%s: ... with FPB_RESPECT_WRITE: 4", arch);
	tt_clear(&tt);

	/* FPB_MERGE_WRITE: a read-only first entry becomes writable if any in the batch is. */
	fill_flags(flags, 16, F_RW & ~MMP_E_WRITE);
	flags[9] = F_RW;
	tt_set_each(&tt, 16, pfn, flags);
	orig = ptep_get(tt.s, tt.t);
	tap_ok(tt_batch(&tt, 0, 16, 0, &pte) == 16 && pte == orig,
	       "%s: without merge flags the first entry comes back unchanged", arch);
	tap_ok(tt_batch(&tt, 0, 16, FPB_MERGE_WRITE, &pte) == 16 &&
	       (entry_flags(tt.s, pte, MMP_PTE) & MMP_E_WRITE) &&
	       entry_pfn(tt.s, pte, MMP_PTE) == pfn,
	       "%s: FPB_MERGE_WRITE makes it writable (entry 9 is)", arch);
	tap_ok(tt_batch(&tt, 0, 5, FPB_MERGE_WRITE, &pte) == 5 &&
	       !(entry_flags(tt.s, pte, MMP_PTE) & MMP_E_WRITE),
	       "%s: ... but not from beyond max_nr", arch);
	tt_clear(&tt);

	/* FPB_MERGE_YOUNG_DIRTY: an old, clean first entry takes A/D from the batch. */
	fill_flags(flags, 16, F_RW & ~AD);
	flags[12] = F_RW;
	tt_set_each(&tt, 16, pfn, flags);
	orig = ptep_get(tt.s, tt.t);
	tap_ok(!(entry_flags(tt.s, orig, MMP_PTE) & AD), "%s: entry 0 is old and clean", arch);
	tap_ok(tt_batch(&tt, 0, 16, 0, &pte) == 16 && pte == orig,
	       "%s: without merge flags A/D are not merged", arch);
	f = tt_batch(&tt, 0, 16, FPB_MERGE_YOUNG_DIRTY, &pte);
	tap_ok(f == 16 && (entry_flags(tt.s, pte, MMP_PTE) & AD) == AD &&
	       entry_pfn(tt.s, pte, MMP_PTE) == pfn,
	       "%s: FPB_MERGE_YOUNG_DIRTY makes it young and dirty (entry 12 is)", arch);
	tt_clear(&tt);
	folio_free(tt.s->phys, pfn);
	pgtable_free(tt.s, tt.tpfn);

	/* A PROT_NONE part of a mapped folio, made by mprotect: the batch ends there. */
	mmp_space_set_thp(tt.s, 4, MMP_THP_ALWAYS);
	a = map(tt.s, 2 * MiB, RW);
	populate(tt.s, a, 16 * P);
	tap_eq(mmp_mprotect(tt.s, a + 8 * P, 8 * P, MMP_PROT_NONE), 0,
	       "%s: mprotect the upper half of a 64 KiB folio PROT_NONE", arch);
	ptep = ptep_at(tt.s, a);
	pte = ptep_get(tt.s, ptep);
	tap_eq(folio_pte_batch(tt.s, ptep, pte, 16), 8, "%s: a batch ends at the PROT_NONE part",
	       arch);
	pte = ptep_get(tt.s, ptep + 8);
	tap_eq(folio_pte_batch(tt.s, ptep + 8, pte, 8), 8,
	       "%s: the PROT_NONE entries batch among themselves", arch);
	tap_eq(mmp_space_verify(tt.s), 0, "%s: folio_pte_batch checks: verify", arch);
	mmp_space_destroy(tt.s);
}

/* ---- batched and unbatched: the same state ------------------------------------------------- */

enum kind { K_4K, K_64K, K_2M, NR_KINDS };

static const char *const kind_name[NR_KINDS] = { "4 KiB", "64 KiB", "2 MiB THP" };

struct run {
	struct mmp_space *s, *c;	/* parent and child */
	struct mmp_counters moves;	/* summed over the mremaps that only move entries */
	int failed;			/* steps that did not do what they should */
	const char *first;
};

static void step(struct run *r, bool ok, const char *what)
{
	if (!ok && !r->failed++)
		r->first = what;
}

/* Every page: a byte pattern from @tag and its index, and its own address at offset 64. */
static void fill(struct run *r, struct mmp_cpu *cpu, uint64_t addr, uint64_t len, int tag)
{
	for (uint64_t off = 0; off < len; off += P) {
		uint64_t stamp = addr + off;

		step(r, mmp_memset(cpu, addr + off, (tag + (off >> PAGE_SHIFT)) & 0xff, P) == 0 &&
			mmp_write(cpu, addr + off + 64, &stamp, sizeof(stamp)) == 0, "fill");
	}
}

static uint64_t remap(struct run *r, struct mmp_space *s, bool move, uint64_t addr,
		      uint64_t old_len, uint64_t new_len, int flags, uint64_t to, const char *what)
{
	struct mmp_counters c0, d;
	uint64_t out = 0;
	int err;

	mmp_space_counters(s, &c0);
	err = mmp_mremap(s, addr, old_len, new_len, flags, to, &out);
	counters_since(s, &c0, &d);
	if (move)
		for (int c = 0; c < MMP_NR_COUNTERS; c++)
			r->moves.v[c] += d.v[c];
	if (err)
		printf("# %s: %s\n", what, mmp_strerror(err));	/* which step, and why */
	step(r, !err, what);
	return out;
}

/*
 * One scripted workload: mmap and fill, partial mremap of every kind, partial
 * munmap and MADV_DONTNEED, mprotect, fork, writes on both sides, moves of
 * shared folios. Every address depends only on the script, so two runs that
 * differ in MMP_OPT_PTE_BATCH make the same calls.
 */
static void workload(struct run *r, const char *arch, enum kind kind, long batch)
{
	const uint64_t K = KiB, M = MiB;
	const int MM = MMP_MREMAP_MAYMOVE, FX = MMP_MREMAP_FIXED, DU = MMP_MREMAP_DONTUNMAP;
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu, *ccpu;
	uint64_t A, B, C, H, D, E, F, G, out;
	char ch;

	memset(r, 0, sizeof(*r));
	r->s = s;
	mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, batch);
	if (kind == K_64K)
		mmp_space_set_thp(s, 4, MMP_THP_ALWAYS);
	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	A = map(s, 4 * M, RW);
	B = map(s, 2 * M, RW);
	C = map(s, 2 * M, RW);
	H = map(s, 2 * M, RW);
	if (kind == K_2M) {
		step(r, mmp_madvise(s, A, 4 * M, MMP_MADV_HUGEPAGE) == 0, "madvise A");
		step(r, mmp_madvise(s, B, 2 * M, MMP_MADV_HUGEPAGE) == 0, "madvise B");
		step(r, mmp_madvise(s, C, 2 * M, MMP_MADV_HUGEPAGE) == 0, "madvise C");
		step(r, mmp_madvise(s, H, 2 * M, MMP_MADV_HUGEPAGE) == 0, "madvise H");
	}
	fill(r, cpu, A, 4 * M, 0x10);
	fill(r, cpu, B, 2 * M, 0x20);
	fill(r, cpu, C, 2 * M, 0x30);
	fill(r, cpu, H, 2 * M, 0x40);

	/*
	 * Whole PMDs first, while H and C are whole: H (a THP with
	 * MADV_HUGEPAGE), then C made a PTE table by a partial zap.
	 */
	G = remap(r, s, true, H, 2 * M, 4 * M, MM, 0, "move H");
	step(r, mmp_madvise(s, C + M + 64 * K, 64 * K, MMP_MADV_DONTNEED) == 0, "dontneed C");
	F = remap(r, s, true, C, 2 * M, 4 * M, MM, 0, "move C");
	step(r, G % (2 * M) == 0 && F % (2 * M) == 0, "PMD-aligned destinations");

	/* Shrink (a folio partly unmapped), then grow in place and touch the new part. */
	step(r, remap(r, s, false, A, 4 * M, 4 * M - 96 * K, 0, 0, "shrink") == A,
	     "shrink in place");
	step(r, remap(r, s, false, A, 4 * M - 96 * K, 4 * M - 32 * K, 0, 0, "grow") == A,
	     "grow in place");
	step(r, mmp_read(cpu, A + 4 * M - 64 * K, &ch, 1) == 0 && !ch, "read the grown part");
	step(r, mmp_memset(cpu, A + 4 * M - 40 * K, 0x77, 100) == 0, "write the grown part");

	/* Move a middle part, growing it: in step with 64 KiB blocks at both ends. */
	D = remap(r, s, true, A + 200 * K, 296 * K, 568 * K, MM, 0, "move and grow");
	/* FIXED into the middle of B, out of step; then into C, in step. */
	remap(r, s, false, A + M + 48 * K, 256 * K, 256 * K, MM | FX, B + 512 * K + 16 * K,
	      "fixed, unaligned");
	remap(r, s, false, A + 2 * M + 128 * K, 192 * K, 192 * K, MM | FX, F + M, "fixed, aligned");
	/* DONTUNMAP: the old range stays, empty; both sides are used again. */
	E = remap(r, s, true, A + M + 512 * K, 128 * K, 128 * K, MM | DU, 0, "dontunmap");
	step(r, mmp_read(cpu, A + M + 516 * K, &ch, 1) == 0 && !ch, "read the old range");
	step(r, mmp_memset(cpu, A + M + 576 * K + 100, 0x78, 200) == 0, "write the old range");
	step(r, mmp_memset(cpu, E + 8 * K, 0x79, 300) == 0, "write the new range");

	step(r, mmp_munmap(s, A + 72 * K, 40 * K) == 0, "munmap 1");
	step(r, mmp_munmap(s, A + 3 * M + 8 * K, 24 * K) == 0, "munmap 2");
	step(r, mmp_madvise(s, B + 100 * K, 200 * K, MMP_MADV_DONTNEED) == 0, "dontneed 1");
	step(r, mmp_madvise(s, A + 2 * M + 512 * K, 64 * K, MMP_MADV_DONTNEED) == 0, "dontneed 2");
	step(r, mmp_madvise(s, D + 8 * K, 100 * K, MMP_MADV_DONTNEED) == 0, "dontneed 3");
	step(r, mmp_mprotect(s, A + 3 * M + 128 * K, 24 * K, MMP_PROT_READ) == 0, "mprotect");

	/* fork, and both sides write: COW of small, mTHP and PMD folios. */
	step(r, mmp_fork(s, &r->c) == 0, "fork");
	if (!r->c)
		return;
	must(mmp_cpu_attach(r->c, &ccpu) == 0, "child cpu");
	step(r, mmp_memset(ccpu, A + 3 * M + 200 * K, 0xc1, 16 * K) == 0, "child write 1");
	step(r, mmp_memset(ccpu, B + 700 * K, 0xc2, 8 * K) == 0, "child write 2");
	step(r, mmp_memset(ccpu, D + 4 * K, 0xc3, 4 * K) == 0, "child write 3");
	step(r, mmp_memset(ccpu, G + 4 * K, 0xc4, 4 * K) == 0, "child write 4");
	step(r, mmp_memset(cpu, A + 3 * M + 300 * K, 0xd1, 16 * K) == 0, "parent write 1");
	step(r, mmp_memset(cpu, E + 12 * K, 0xd2, 4 * K) == 0, "parent write 2");
	step(r, mmp_memset(cpu, F + 12 * K, 0xd3, 4 * K) == 0, "parent write 3");
	/* Moves and zaps of folios both sides map. */
	remap(r, s, true, A + 3 * M + 512 * K, 128 * K, 192 * K, MM, 0, "move shared");
	step(r, mmp_mremap(r->c, A + 3 * M + 640 * K, 64 * K, 128 * K, MM, 0, &out) == 0,
	     "child move shared");
	step(r, mmp_munmap(s, A + 3 * M + 700 * K, 12 * K) == 0, "munmap shared");
	step(r, mmp_madvise(r->c, A + 3 * M + 760 * K, 64 * K, MMP_MADV_DONTNEED) == 0,
	     "child dontneed shared");
	mmp_cpu_detach(ccpu);
	mmp_cpu_detach(cpu);
}

/* What one page looks like from outside: its entry and its folio's counts. */
struct pstate {
	unsigned int level;	/* 0 none, 1 PTE, 2 PMD */
	unsigned int flags;	/* entry flags but accessed and CONT */
	unsigned int order, index;
	int ref, map, large, entire;
	uint64_t pfn;
};

static void page_state(struct mmp_space *s, uint64_t va, struct pstate *ps)
{
	mmp_pte_t *pmdp = pmd_offset(s, va), *ptes, e;
	struct mmp_page *head, *page;
	uint64_t hpfn;

	memset(ps, 0, sizeof(*ps));
	if (!pmdp || !*pmdp)
		return;
	if (entry_flags(s, *pmdp, MMP_PMD) & MMP_E_LEAF) {
		ps->level = 2;
		ps->flags = entry_flags(s, *pmdp, MMP_PMD) & ~MMP_E_LEAF;
		ps->pfn = entry_pfn(s, *pmdp, MMP_PMD) + level_index(va, MMP_PTE);
	} else {
		ptes = pte_table(s, *pmdp);
		e = ptes ? ptep_get(s, &ptes[level_index(va, MMP_PTE)]) : 0;
		if (!e)
			return;
		ps->level = 1;
		ps->flags = entry_flags(s, e, MMP_PTE);
		ps->pfn = entry_pfn(s, e, MMP_PTE);
	}
	ps->flags &= ~(MMP_E_ACCESSED | MMP_E_CONT);
	if (ps->flags & MMP_E_SPECIAL)
		return;
	hpfn = folio_pfn(s->phys, ps->pfn);
	head = pfn_to_page(s->phys, hpfn);
	page = pfn_to_page(s->phys, ps->pfn);
	ps->order = head->order;
	ps->index = ps->pfn - hpfn;
	ps->ref = head->refcount;
	ps->map = page->mapcount;
	if (head->order) {
		ps->large = head->folio.large_mapcount;
		ps->entire = head->folio.entire_mapcount;
	}
}

/* One differing page: what each of the two spaces holds there. */
static void print_diff(uint64_t va, const struct pstate *x, const struct pstate *y)
{
	const struct pstate *ps[2] = { x, y };

	for (int i = 0; i < 2; i++)
		printf("#   %#llx %s: level %u flags %#x order %u index %u ref %d map %d "
		       "large %d entire %d\n", (unsigned long long)va, i ? "unbatched" : "batched",
		       ps[i]->level, ps[i]->flags, ps[i]->order, ps[i]->index, ps[i]->ref,
		       ps[i]->map, ps[i]->large, ps[i]->entire);
}

static void print_counters(const char *label, const struct mmp_counters *c)
{
	char line[4096];
	int n = snprintf(line, sizeof(line), "# %s:", label);

	for (int i = 0; i < MMP_NR_COUNTERS && n < (int)sizeof(line) - 64; i++)
		if (c->v[i])
			n += snprintf(line + n, sizeof(line) - n, " %s=%llu", mmp_counter_name(i),
				      (unsigned long long)c->v[i]);
	puts(line);
}

/* Compare two spaces that ran the same script; @what names the pair. */
static void compare_spaces(struct mmp_space *x, struct mmp_space *y, const char *what)
{
	struct mmp_space_stat sx, sy;
	unsigned long entries = 0, counts = 0, data = 0, pages = 0;
	bool vmas = x->vmas.nr == y->vmas.nr;

	for (struct mmp_vma *a = x->vmas.first, *b = y->vmas.first; vmas && a;
	     a = a->vm_next, b = b->vm_next)
		vmas = a->start == b->start && a->end == b->end && a->flags == b->flags;
	tap_ok(vmas, "%s: the same VMAs (%u)", what, x->vmas.nr);
	mmp_space_stat(x, &sx);
	mmp_space_stat(y, &sy);
	tap_ok(sx.rss_anon_pages == sy.rss_anon_pages,
	       "%s: the same RSS (%llu and %llu pages)", what,
	       (unsigned long long)sx.rss_anon_pages, (unsigned long long)sy.rss_anon_pages);
	tap_ok(sx.pgtable_bytes == sy.pgtable_bytes, "%s: the same page-table bytes (%llu, %llu)",
	       what, (unsigned long long)sx.pgtable_bytes, (unsigned long long)sy.pgtable_bytes);
	if (!vmas)
		return;

	for (struct mmp_vma *vma = x->vmas.first; vma; vma = vma->vm_next) {
		for (uint64_t va = vma->start; va < vma->end; va += P) {
			struct pstate px, py;

			page_state(x, va, &px);
			page_state(y, va, &py);
			pages++;
			if (px.level != py.level || px.flags != py.flags) {
				if (!entries++)
					print_diff(va, &px, &py);
				continue;
			}
			if (!px.level || (px.flags & MMP_E_SPECIAL))
				continue;
			if (px.order != py.order || px.index != py.index || px.ref != py.ref ||
			    px.map != py.map || px.large != py.large || px.entire != py.entire) {
				if (!counts++)
					print_diff(va, &px, &py);
			}
			if (memcmp(pfn_to_virt(x->phys, px.pfn), pfn_to_virt(y->phys, py.pfn), P))
				data++;
		}
	}
	tap_ok(!entries, "%s: the same present/writable/dirty state in every page (%lu pages, "
	       "%lu differ)", what, pages, entries);
	tap_ok(!counts, "%s: the same folio order, refcount and mapcount pattern (%lu differ)",
	       what, counts);
	tap_ok(!data, "%s: the same data, byte for byte (%lu pages differ)", what, data);
}

static void check_batched_same_state(const char *arch, enum kind kind)
{
	struct run on, off;
	struct mmp_counters con, coff;
	char label[128];
	bool blocks = mmp_arch_find(arch)->cont_ptes;	/* contpte, Svnapot */

	workload(&on, arch, kind, 1);
	workload(&off, arch, kind, 0);
	tap_ok(!on.failed && !off.failed, "%s, %s: the script ran batched and unbatched (%s)", arch,
	       kind_name[kind], on.failed ? on.first : off.failed ? off.first : "every step");

	mmp_space_counters(on.s, &con);
	mmp_space_counters(off.s, &coff);
	snprintf(label, sizeof(label), "%s, %s, batched, parent", arch, kind_name[kind]);
	print_counters(label, &con);
	snprintf(label, sizeof(label), "%s, %s, unbatched, parent", arch, kind_name[kind]);
	print_counters(label, &coff);
	snprintf(label, sizeof(label), "%s, %s, batched, moving mremaps", arch, kind_name[kind]);
	print_counters(label, &on.moves);
	snprintf(label, sizeof(label), "%s, %s, unbatched, moving mremaps", arch, kind_name[kind]);
	print_counters(label, &off.moves);

	if (!hint_runs) {
		tap_eq(on.moves.v[MMP_C_PTE_BATCH], 0,
		       "%s, %s: mremap never batches (pte_batch_hint is 1)", arch, kind_name[kind]);
	} else if (blocks && kind == K_64K) {
		const struct mmp_counters *b = &on.moves, *u = &off.moves;

		tap_ok(b->v[MMP_C_PTE_BATCH] > 0,
		       "%s, %s: the batched mremaps batch (%llu batches)", arch, kind_name[kind],
		       (unsigned long long)b->v[MMP_C_PTE_BATCH]);
		tap_ok(b->v[MMP_C_PTEP_GET] < u->v[MMP_C_PTEP_GET],
		       "%s, %s: batched mremap calls ptep_get less (%llu < %llu)", arch,
		       kind_name[kind], (unsigned long long)b->v[MMP_C_PTEP_GET],
		       (unsigned long long)u->v[MMP_C_PTEP_GET]);
		tap_ok(b->v[MMP_C_CONTPTE_UNFOLD] + b->v[MMP_C_CONTPTE_FOLD] <
		       u->v[MMP_C_CONTPTE_UNFOLD] + u->v[MMP_C_CONTPTE_FOLD],
		       "%s, %s: ... unfolds and folds less (%llu + %llu < %llu + %llu)", arch,
		       kind_name[kind], (unsigned long long)b->v[MMP_C_CONTPTE_UNFOLD],
		       (unsigned long long)b->v[MMP_C_CONTPTE_FOLD],
		       (unsigned long long)u->v[MMP_C_CONTPTE_UNFOLD],
		       (unsigned long long)u->v[MMP_C_CONTPTE_FOLD]);
		uint64_t fb = b->v[MMP_C_TLB_FLUSH_RANGE] + b->v[MMP_C_TLB_FLUSH_ALL];
		uint64_t fu = u->v[MMP_C_TLB_FLUSH_RANGE] + u->v[MMP_C_TLB_FLUSH_ALL];

		tap_ok(fb < fu, "%s, %s: ... and flushes the TLB less (%llu < %llu)", arch,
		       kind_name[kind], (unsigned long long)fb, (unsigned long long)fu);
	}

	snprintf(label, sizeof(label), "%s, %s, parents", arch, kind_name[kind]);
	compare_spaces(on.s, off.s, label);
	if (on.c && off.c) {
		snprintf(label, sizeof(label), "%s, %s, children", arch, kind_name[kind]);
		compare_spaces(on.c, off.c, label);
	}
	tap_eq(mmp_space_verify(on.s), 0, "%s, %s: verify both runs", arch, kind_name[kind]);
	tap_eq(counter(on.s, MMP_C_TLB_SANITIZER) + counter(off.s, MMP_C_TLB_SANITIZER), 0,
	       "%s, %s: no stale translation used", arch, kind_name[kind]);
	if (on.c)
		mmp_space_destroy(on.c);
	if (off.c)
		mmp_space_destroy(off.c);
	mmp_space_destroy(on.s);
	mmp_space_destroy(off.s);
}

/* ---- the write bit is never spread ---------------------------------------------------------- */

static void check_write_bit_kept(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	static const struct {
		int start, nr;		/* entries made read-only in a 32-entry folio */
		const char *what;
	} cases[] = {
		{ 16, 16, "writable first half, read-only second half" },
		{ 0, 16, "read-only first half, writable second half" },
		{ 5, 1, "one read-only entry" },
	};
	struct mmp_counters c0, d;
	uint64_t a;

	mmp_space_set_thp(s, 5, MMP_THP_ALWAYS);
	a = map(s, 2 * MiB, RW);
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		uint64_t src = a + k * 128 * KiB, dst = a + MiB + k * 128 * KiB, out = 0;
		bool want[32], ok = true;
		mmp_pte_t *ptep;

		populate(s, src, 128 * KiB);
		ptep = ptep_at(s, src);
		wrprotect_ptes(s, src + cases[k].start * P, ptep + cases[k].start,
					cases[k].nr);
		for (int i = 0; i < 32; i++)
			want[i] = entry_flags(s, ptep_get(s, ptep + i), MMP_PTE) &
				  MMP_E_WRITE;
		mmp_space_counters(s, &c0);
		tap_eq(mmp_mremap(s, src, 128 * KiB, 128 * KiB,
				  MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, dst, &out), 0,
		       "%s: mremap a 128 KiB folio, %s", arch, cases[k].what);
		counters_since(s, &c0, &d);
		ptep = ptep_at(s, dst);
		for (int i = 0; i < 32; i++)
			ok &= !!(entry_flags(s, ptep_get(s, ptep + i), MMP_PTE) &
				 MMP_E_WRITE) == want[i];
		tap_ok(ok, "%s: ... every entry keeps its own write bit (%llu batches)", arch,
		       (unsigned long long)d.v[MMP_C_PTE_BATCH]);
		if (mmp_arch_find(arch)->cont_ptes && cases[k].nr == 16)
			tap_ok(d.v[MMP_C_PTE_BATCH] >= 2,
			       "%s: ... in batches that stop where the write bit changes", arch);
	}
	tap_eq(mmp_space_verify(s), 0, "%s: write bits after mremap: verify", arch);
	mmp_space_destroy(s);
}

int main(int argc, char **argv)
{
	struct mmp_phys_stat st0, st1;
	const char *name;

	tap_require(mmp_phys_create(256 * MiB, &phys) == 0, "phys");
	mmp_phys_stat(phys, &st0);
	for_each_arch(i, name) {
		if (argc > 1 && strcmp(argv[1], name))
			continue;
		check_folio_pte_batch(name);
		check_write_bit_kept(name);
		for (int k = 0; k < NR_KINDS; k++)
			check_batched_same_state(name, k);
	}
	rcu_barrier();	/* page tables come home after a grace period */
	mmp_phys_stat(phys, &st1);
	/* The huge zero folio stays once made. */
	tap_ok(st0.free_pages - st1.free_pages <= HPAGE_PMD_NR,
	       "every frame went back to the phys");
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
