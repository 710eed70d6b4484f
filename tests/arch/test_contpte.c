/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64 contpte: when 16 PTEs fold into one 64 KiB block and when they
 * unfold, and what a fold or unfold costs in entry accesses and TLB flushes.
 * Internal calls build the states faults do not make: clean blocks, order-0
 * folios with consecutive pfns, entries written out of order. Accessed and
 * dirty, range operations and the TLB: test_contpte_ad.c.
 */
#include "contpte_util.h"

/* ---- fold ------------------------------------------------------------------------ */

/* Account a mapping the way folio_add_rmap_ptes and the RSS counter would. */
static void rmap_one(struct mmp_space *s, uint64_t pfn)
{
	struct mmp_page *head = pfn_to_page(s->phys, folio_pfn(s->phys, pfn));

	folio_ref_add(head, 1);
	folio_add_rmap_ptes(s, head, pfn_to_page(s->phys, pfn), 1);
	rss_add(s, 1);
}

/* Map entry @i of the block at @blk with one set_ptes(nr = 1), as core mm does page by page. */
static void map_one(struct mmp_space *s, uint64_t blk, int i, uint64_t pfn, unsigned int f)
{
	set_ptes(s, blk + i * P, ptep_at(s, blk) + i, mk_entry(s, pfn, f, MMP_PTE), 1);
	rmap_one(s, pfn);
}

/* Record where the folio at @pfn sits (its page 0 at @addr), as a fault does for the rmap. */
static void set_anon(struct mmp_space *s, uint64_t pfn, uint64_t addr)
{
	struct mmp_vma *vma = find_vma(s, addr);

	must(vma && anon_vma_prepare(s, vma) == 0, "an anon_vma");
	__folio_set_anon(pfn_to_page(s->phys, pfn), vma, addr);
}

/* Turn an order-4 block into 16 order-0 folios: consecutive pfns, one folio each. */
static void split_order0(struct mmp_space *s, uint64_t pfn, uint64_t addr)
{
	for (int i = 0; i < A64_CONT_PTES; i++) {
		struct mmp_page *page = pfn_to_page(s->phys, pfn + i);

		memset(page, 0, sizeof(*page));
		page->flags = PG_head | PG_anon | PG_swapbacked | PG_anon_exclusive;
		set_anon(s, pfn + i, addr + i * P);
	}
}

/*
 * Write the 16 entries of block @blk in @seq order (entry seq[k] maps pfns[..]),
 * counting folds; @early is set if one happened before the last write.
 */
static uint64_t write_block(struct mmp_space *s, uint64_t blk, const uint64_t *pfns,
			    const unsigned int *flags, const int *seq, int n, bool *early)
{
	struct mmp_counters c0, d;

	mmp_space_counters(s, &c0);
	*early = false;
	for (int k = 0; k < n; k++) {
		map_one(s, blk, seq[k], pfns[seq[k]], flags[seq[k]]);
		counters_since(s, &c0, &d);
		if (k < n - 1 && d.v[MMP_C_CONTPTE_FOLD])
			*early = true;
	}
	counters_since(s, &c0, &d);
	return d.v[MMP_C_CONTPTE_FOLD];
}

static void check_fold(void)
{
	static const int in_order[A64_CONT_PTES] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	};
	static const int last_first[A64_CONT_PTES] = {
		15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
	};
	static const int skip_14[A64_CONT_PTES - 1] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15,
	};
	uint64_t a, pfns[A64_CONT_PTES], pfn, blk;
	unsigned int flags[A64_CONT_PTES];
	struct mmp_space *s = contpte_space(phys, 0, &a);
	struct mmp_counters c0, d;
	mmp_pte_t *ptep, *pmdp;
	bool early, ok;
	int n = 0;

	pmdp = pmd_alloc(s, a);
	must(pmdp && pte_alloc(s, pmdp) == 0, "a PTE table for the fold checks");
#define NEXT_BLOCK()	(blk = a + (uint64_t)n++ * BLOCK, ptep = ptep_at(s, blk))
#define FOLIO(order)							\
	do {								\
		pfn = folio_alloc_anon(s, order);			\
		must(pfn != NO_PFN, "an order-%d folio", order);	\
		set_anon(s, pfn, blk);					\
		for (int i = 0; i < A64_CONT_PTES; i++)			\
			pfns[i] = pfn + i, flags[i] = F_RW;		\
	} while (0)

	/* The rule itself: 16 pages of one aligned order-4 folio, written low to high. */
	NEXT_BLOCK();
	FOLIO(4);
	mmp_space_counters(s, &c0);
	tap_eq(write_block(s, blk, pfns, flags, in_order, A64_CONT_PTES, &early), 1,
	       "fold: writing entries 0..15 one at a time folds once");
	counters_since(s, &c0, &d);
	tap_ok(!early, "fold: ... only when the last entry (index 15) is written");
	tap_eq(nr_cont(ptep, A64_CONT_PTES), A64_CONT_PTES, "fold: all 16 entries carry A64_CONT");
	ok = true;
	for (int i = 0; i < A64_CONT_PTES; i++)
		ok &= a64_pfn(ptep[i]) == pfn + i;
	tap_ok(ok, "fold: the folded entries keep their consecutive pfns");
	tap_eq(d.v[MMP_C_TLB_FLUSH_RANGE], 1, "fold: contpte_convert flushes one range");
	tap_eq(d.v[MMP_C_TLB_FLUSH_PAGE], 16, "fold: ... of the block's 16 pages");

	/* With BBML2_NOABORT the fold is not flushed at all. */
	NEXT_BLOCK();
	FOLIO(4);
	mmp_space_set_opt(s, MMP_OPT_BBML2_NOABORT, 1);
	mmp_space_counters(s, &c0);
	write_block(s, blk, pfns, flags, in_order, A64_CONT_PTES, &early);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_CONTPTE_FOLD] == 1 && d.v[MMP_C_TLB_FLUSH_RANGE] == 0 &&
	       d.v[MMP_C_TLB_FLUSH_PAGE] == 0,
	       "fold with BBML2_NOABORT: folds without a TLB flush");
	mmp_space_set_opt(s, MMP_OPT_BBML2_NOABORT, 0);

	NEXT_BLOCK();
	FOLIO(4);
	tap_eq(write_block(s, blk, pfns, flags, last_first, A64_CONT_PTES, &early), 0,
	       "fold: writing index 15 first, then 0..14, does not fold");
	tap_eq(nr_cont(ptep, A64_CONT_PTES), 0, "fold: ... and no entry carries A64_CONT");

	NEXT_BLOCK();
	FOLIO(4);
	split_order0(s, pfn, blk);
	tap_eq(write_block(s, blk, pfns, flags, in_order, A64_CONT_PTES, &early), 0,
	       "fold: 16 order-0 folios with consecutive aligned pfns do not fold");

	NEXT_BLOCK();
	FOLIO(5);
	set_anon(s, pfn, blk - 8 * P);
	for (int i = 0; i < A64_CONT_PTES; i++)
		pfns[i] = pfn + 8 + i;
	tap_eq(write_block(s, blk, pfns, flags, in_order, A64_CONT_PTES, &early), 0,
	       "fold: consecutive pfns of one folio that are not 16-aligned do not fold");

	NEXT_BLOCK();
	FOLIO(4);
	tap_eq(write_block(s, blk, pfns, flags, skip_14, A64_CONT_PTES - 1, &early), 0,
	       "fold: a none entry in the block (14 never written) prevents the fold");

	NEXT_BLOCK();
	FOLIO(4);
	flags[4] &= ~MMP_E_WRITE;
	tap_eq(write_block(s, blk, pfns, flags, in_order, A64_CONT_PTES, &early), 0,
	       "fold: one read-only entry among writable ones prevents the fold");

	NEXT_BLOCK();
	FOLIO(4);
	flags[4] &= ~MMP_E_NOEXEC;
	tap_eq(write_block(s, blk, pfns, flags, in_order, A64_CONT_PTES, &early), 0,
	       "fold: one executable entry among non-exec ones prevents the fold");

	/* Accessed and dirty do not matter; the fold gathers them into all 16. */
	NEXT_BLOCK();
	FOLIO(4);
	for (int i = 0; i < A64_CONT_PTES; i++)
		flags[i] &= ~AD;
	flags[7] |= MMP_E_ACCESSED;
	flags[11] |= MMP_E_DIRTY;
	tap_eq(write_block(s, blk, pfns, flags, in_order, A64_CONT_PTES, &early), 1,
	       "fold: entries differing only in accessed/dirty fold");
	ok = true;
	for (int i = 0; i < A64_CONT_PTES; i++)
		ok &= (entry_flags(s, ptep[i], MMP_PTE) & AD) == AD;
	tap_ok(ok, "fold: ... and every entry of the block is now young and dirty");
	tap_eq(mmp_space_verify(s), 0, "fold: the hand-built mappings verify");

	/*
	 * On a test-only table (the rmap could not find these): special entries,
	 * entries not valid (PROT_NONE), pfns out of order.
	 */
	static const char *const odd[] = {
		"16 special entries do not fold",
		"16 PROT_NONE (not valid) entries do not fold",
		"non-consecutive pfns (7 and 8 swapped) do not fold",
	};
	for (size_t kind = 0; kind < ARRAY_SIZE(odd); kind++) {
		uint32_t tpfn = pgtable_alloc(s);
		mmp_pte_t *t;

		must(tpfn != NO_PFN, "a test-only table");
		t = space_table(s, tpfn);
		pfn = folio_alloc_anon(s, 4);
		must(pfn != NO_PFN, "an order-4 folio");
		mmp_space_counters(s, &c0);
		for (int i = 0; i < A64_CONT_PTES; i++) {
			unsigned int f = F_RW;

			if (kind == 0)
				f |= MMP_E_SPECIAL;
			else if (kind == 1)
				f = (f & ~MMP_E_PRESENT) | MMP_E_PROTNONE;
			uint64_t p = pfn + (kind == 2 && (i == 7 || i == 8) ? 15 - i : i);

			set_ptes(s, a + i * P, &t[i], mk_entry(s, p, f, MMP_PTE), 1);
		}
		counters_since(s, &c0, &d);
		tap_ok(d.v[MMP_C_CONTPTE_FOLD] == 0 && nr_cont(t, A64_CONT_PTES) == 0, "fold: %s",
		       odd[kind]);
		memset(t, 0, A64_CONT_PTES * sizeof(*t));
		pgtable_free(s, tpfn);
		folio_free(s->phys, pfn);
	}
#undef NEXT_BLOCK
#undef FOLIO

	/* A fault on a 64 KiB-folio region maps the block with set_ptes(16): CONT, no fold. */
	mmp_space_set_thp(s, 4, MMP_THP_ALWAYS);
	blk = a + 1 * MiB;
	mmp_space_counters(s, &c0);
	populate(s, blk + 5 * P, P);
	counters_since(s, &c0, &d);
	ptep = ptep_at(s, blk);
	tap_eq(d.v[MMP_C_FOLIO_ALLOC_O4], 1, "mTHP fault: one 64 KiB folio");
	tap_eq(nr_cont(ptep, A64_CONT_PTES), A64_CONT_PTES,
	       "mTHP fault: the block is mapped with A64_CONT");
	tap_eq(d.v[MMP_C_CONTPTE_FOLD], 0, "mTHP fault: ... directly, without a fold");
	tap_eq(d.v[MMP_C_PTE_WRITE], A64_CONT_PTES,
	       "mTHP fault: one set_ptes writes the 16 entries once");
	tap_eq(mmp_space_verify(s), 0, "fold: verify");
	mmp_space_destroy(s);
}

/* ---- unfold ---------------------------------------------------------------------- */

enum unfold_op {
	OP_GET_AND_CLEAR,
	OP_SET_ONE,
	OP_WRPROTECT_ONE,
	OP_WRITE_FAULT,
	OP_MPROTECT,
	OP_MUNMAP,
	OP_DONTNEED,
	NR_UNFOLD_OPS
};

static const char *const op_name[NR_UNFOLD_OPS] = {
	"ptep_get_and_clear of one entry", "set_ptes(nr = 1) over one entry",
	"wrprotect_ptes of one entry", "a write fault that makes one entry writable",
	"mprotect of one page", "munmap of one page", "MADV_DONTNEED of one page",
};

/* The ops that flush nothing but what the unfold itself flushes. */
static bool op_internal(enum unfold_op op)
{
	return op <= OP_WRITE_FAULT;
}

/*
 * Run @op on entry @idx of a freshly faulted, folded block; @d gets the counter
 * deltas. Checks what every single-entry change must do: unfold exactly the
 * one block, and leave the other 15 entries as they were but for A64_CONT.
 */
static void check_unfold_op(enum unfold_op op, long bbml2, struct mmp_counters *d)
{
	const int idx = 6;
	uint64_t a, blk, e_addr;
	struct mmp_space *s = contpte_space(phys, 4, &a);
	struct mmp_counters c0;
	struct mmp_cpu *cpu = NULL;
	mmp_pte_t before[A64_CONT_PTES], old = 0, *ptep;
	unsigned int f;
	bool entry_ok = false;

	mmp_space_set_opt(s, MMP_OPT_BBML2_NOABORT, bbml2);
	blk = a + 3 * BLOCK;
	e_addr = blk + idx * P;
	populate(s, blk, BLOCK);
	ptep = ptep_at(s, blk);
	must(nr_cont(ptep, A64_CONT_PTES) == A64_CONT_PTES, "the faulted block is folded");
	if (op == OP_WRITE_FAULT) {
		/* A folded, exclusive, read-only block: the next write reuses the page. */
		wrprotect_ptes(s, blk, ptep, A64_CONT_PTES);
		must(nr_cont(ptep, A64_CONT_PTES) == A64_CONT_PTES,
		     "whole-block wrprotect keeps it folded");
		must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	}
	memcpy(before, ptep, sizeof(before));

	mmp_space_counters(s, &c0);
	switch (op) {
	case OP_GET_AND_CLEAR:
		old = ptep_get_and_clear(s, e_addr, ptep + idx);
		entry_ok = !ptep[idx] && a64_pfn(old) == a64_pfn(before[idx]);
		break;
	case OP_SET_ONE:
		set_ptes(s, e_addr, ptep + idx, before[idx] & ~A64_CONT, 1);
		entry_ok = ptep[idx] == (before[idx] & ~A64_CONT);
		break;
	case OP_WRPROTECT_ONE:
		wrprotect_ptes(s, e_addr, ptep + idx, 1);
		f = entry_flags(s, ptep[idx], MMP_PTE);
		entry_ok = !(f & MMP_E_WRITE) && (f & MMP_E_DIRTY) && !(ptep[idx] & A64_CONT);
		break;
	case OP_WRITE_FAULT:
		entry_ok = mmp_write(cpu, e_addr, "w", 1) == 0;
		f = entry_flags(s, ptep[idx], MMP_PTE);
		entry_ok &= (f & MMP_E_WRITE) && !(ptep[idx] & A64_CONT) &&
			    counter(s, MMP_C_FAULT_WP_REUSE) == 1;
		break;
	case OP_MPROTECT:
		entry_ok = mmp_mprotect(s, e_addr, P, MMP_PROT_READ) == 0;
		f = entry_flags(s, ptep[idx], MMP_PTE);
		entry_ok &= (f & MMP_E_PRESENT) && !(f & MMP_E_WRITE) &&
			    a64_pfn(ptep[idx]) == a64_pfn(before[idx]);
		break;
	case OP_MUNMAP:
		entry_ok = mmp_munmap(s, e_addr, P) == 0 && !ptep[idx];
		break;
	case OP_DONTNEED:
		entry_ok = mmp_madvise(s, e_addr, P, MMP_MADV_DONTNEED) == 0 && !ptep[idx];
		break;
	default:
		break;
	}
	counters_since(s, &c0, d);

	tap_ok(entry_ok, "unfold (bbml2 %ld): %s does what it should to that entry", bbml2,
	       op_name[op]);
	tap_eq(d->v[MMP_C_CONTPTE_UNFOLD], 1, "unfold (bbml2 %ld): %s unfolds exactly one block",
	       bbml2, op_name[op]);
	tap_eq(d->v[MMP_C_CONTPTE_FOLD], 0, "unfold (bbml2 %ld): %s does not fold again", bbml2,
	       op_name[op]);
	tap_ok(others_kept(ptep, before, A64_CONT_PTES, idx),
	       "unfold (bbml2 %ld): %s: the other 15 entries keep pfn and bits, without A64_CONT",
	       bbml2, op_name[op]);
	if (op_internal(op)) {
		tap_eq(d->v[MMP_C_TLB_FLUSH_RANGE], bbml2 ? 0 : 1,
		       "unfold (bbml2 %ld): %s: %s", bbml2, op_name[op],
		       bbml2 ? "no TLB flush from the convert" : "one ranged TLB flush");
		tap_eq(d->v[MMP_C_TLB_FLUSH_PAGE], bbml2 ? 0 : 16,
		       "unfold (bbml2 %ld): %s: %s", bbml2, op_name[op],
		       bbml2 ? "no page invalidated" : "of 16 pages");
	}
	if (op == OP_GET_AND_CLEAR)
		set_ptes(s, e_addr, ptep + idx, old, 1);	/* put the mapping back */
	tap_eq(mmp_space_verify(s), 0, "unfold (bbml2 %ld): %s: verify", bbml2, op_name[op]);
	if (cpu)
		mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

static void check_unfold(void)
{
	for (int op = 0; op < NR_UNFOLD_OPS; op++) {
		struct mmp_counters off, on;

		check_unfold_op(op, 0, &off);
		check_unfold_op(op, 1, &on);
		if (op_internal(op))
			continue;
		/* Public calls flush for their own reasons: the unfold adds one 16-page range. */
		tap_eq(off.v[MMP_C_TLB_FLUSH_RANGE] - on.v[MMP_C_TLB_FLUSH_RANGE], 1,
		       "unfold: %s: the convert adds one ranged flush without BBML2", op_name[op]);
		tap_eq(off.v[MMP_C_TLB_FLUSH_PAGE] - on.v[MMP_C_TLB_FLUSH_PAGE], 16,
		       "unfold: %s: ... of 16 pages", op_name[op]);
	}
}

/* The last entry: set_ptes(nr = 1) unfolds, writes, and folds the block again. */
static void check_refold_last(void)
{
	uint64_t a;
	struct mmp_space *s = contpte_space(phys, 4, &a);
	struct mmp_counters c0, d;
	mmp_pte_t *ptep;

	populate(s, a, BLOCK);
	ptep = ptep_at(s, a);
	mmp_space_counters(s, &c0);
	set_ptes(s, a + 15 * P, ptep + 15, ptep[15] & ~A64_CONT, 1);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_CONTPTE_UNFOLD] == 1 && d.v[MMP_C_CONTPTE_FOLD] == 1 &&
	       nr_cont(ptep, A64_CONT_PTES) == A64_CONT_PTES,
	       "set_ptes(nr = 1) over entry 15 unfolds, then folds the block again");

	/* A fault that only sets accessed/dirty keeps the block: the write bit did not change. */
	mmp_space_counters(s, &c0);
	ptep_set_access_flags(s, a + 3 * P, ptep + 3, MMP_E_ACCESSED | MMP_E_DIRTY);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_CONTPTE_UNFOLD] == 0 && nr_cont(ptep, A64_CONT_PTES) == A64_CONT_PTES,
	       "ptep_set_access_flags without a write-bit change does not unfold");
	tap_eq(mmp_space_verify(s), 0, "refold: verify");
	mmp_space_destroy(s);
}


int main(void)
{
	struct mmp_phys_stat st0, st1;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	mmp_phys_stat(phys, &st0);
	check_fold();
	check_unfold();
	check_refold_last();
	rcu_barrier();	/* page tables come home after a grace period */
	mmp_phys_stat(phys, &st1);
	tap_eq(st1.free_pages, st0.free_pages, "every frame went back to the phys");
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
