/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64 contpte: when 16 PTEs fold into one 64 KiB block and when they
 * unfold, what a fold or unfold costs in TLB flushes, that the block's
 * accessed and dirty state is never lost, and how the simulated TLB caches a
 * block. Internal calls build the states faults do not make: clean blocks,
 * order-0 folios with consecutive pfns, entries written out of order.
 */
#include <string.h>

#include "rcu.h"
#include "pte_util.h"
#include "arch_bits.h"

#define P	PAGE_SIZE
#define BLOCK	((uint64_t)A64_CONT_PTES * PAGE_SIZE)
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)

static struct mmp_phys *phys;

static int nr_cont(const mmp_pte_t *ptep, int n)
{
	int cont = 0;

	for (int i = 0; i < n; i++)
		cont += !!(ptep[i] & A64_CONT);
	return cont;
}

/* Every entry but @skip is what it was, minus A64_CONT: same pfn, same bits. */
static bool others_kept(const mmp_pte_t *now, const mmp_pte_t *before, int n, int skip)
{
	for (int i = 0; i < n; i++)
		if (i != skip && now[i] != (before[i] & ~A64_CONT))
			return false;
	return true;
}

/* An arm64 space with @order mTHP always on (0: none) and a 2 MiB read-write mapping. */
static struct mmp_space *arm64_space(struct mmp_phys *ph, unsigned int order, uint64_t *a)
{
	struct mmp_space *s = new_space(ph, "arm64");

	if (order)
		must(mmp_space_set_thp(s, order, MMP_THP_ALWAYS) == 0, "mTHP order %u", order);
	*a = map(s, 2 * MiB, RW);
	must(*a % (2 * MiB) == 0, "a 2 MiB mapping is PMD aligned");
	return s;
}

/* Write faults over [addr, addr + len) with no CPU: no TLB entry can go stale later. */
static void populate(struct mmp_space *s, uint64_t addr, uint64_t len)
{
	must(populate_range(s, addr, addr + len, true) == 0, "populate %#llx",
	     (unsigned long long)addr);
}

/* Make every entry of a folded block old and clean (writable clean: DBM with AP[2] set). */
static void clean_block(mmp_pte_t *ptep)
{
	for (int i = 0; i < A64_CONT_PTES; i++)
		ptep[i] = (ptep[i] & ~(A64_AF | A64_SW_DIRTY)) | A64_AP2_RDONLY;
}

/* ---- fold ------------------------------------------------------------------------ */

/* Account a mapping the way folio_add_rmap_ptes and the RSS counter would. */
static void rmap_one(struct mmp_space *s, uint64_t pfn)
{
	struct mmp_page *head = pfn_to_page(s->phys, folio_pfn(s->phys, pfn));

	folio_ref_add(head, 1);
	folio_add_rmap_ptes(head, pfn_to_page(s->phys, pfn), 1);
	rss_add(s, 1);
}

/* Map entry @i of the block at @blk with one set_ptes(nr = 1), as core mm does page by page. */
static void map_one(struct mmp_space *s, uint64_t blk, int i, uint64_t pfn, unsigned int f)
{
	s->arch->set_ptes(s, blk + i * P, ptep_at(s, blk) + i, mk_entry(s, pfn, f, MMP_PTE), 1);
	rmap_one(s, pfn);
}

/* Record where the folio at @pfn sits (its page 0 at @addr), as a fault does for the rmap. */
static void set_anon(struct mmp_space *s, uint64_t pfn, uint64_t addr)
{
	struct mmp_vma *vma = find_vma(s, addr);

	must(vma && anon_vma_prepare(s, vma) == 0, "an anon_vma");
	folio_set_anon(pfn_to_page(s->phys, pfn), vma, addr);
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
	struct mmp_space *s = arm64_space(phys, 0, &a);
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

			s->arch->set_ptes(s, a + i * P, &t[i], mk_entry(s, p, f, MMP_PTE), 1);
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
	struct mmp_space *s = arm64_space(phys, 4, &a);
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
		s->arch->wrprotect_ptes(s, blk, ptep, A64_CONT_PTES);
		must(nr_cont(ptep, A64_CONT_PTES) == A64_CONT_PTES,
		     "whole-block wrprotect keeps it folded");
		must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	}
	memcpy(before, ptep, sizeof(before));

	mmp_space_counters(s, &c0);
	switch (op) {
	case OP_GET_AND_CLEAR:
		old = s->arch->ptep_get_and_clear(s, e_addr, ptep + idx);
		entry_ok = !ptep[idx] && a64_pfn(old) == a64_pfn(before[idx]);
		break;
	case OP_SET_ONE:
		s->arch->set_ptes(s, e_addr, ptep + idx, before[idx] & ~A64_CONT, 1);
		entry_ok = ptep[idx] == (before[idx] & ~A64_CONT);
		break;
	case OP_WRPROTECT_ONE:
		s->arch->wrprotect_ptes(s, e_addr, ptep + idx, 1);
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
		s->arch->set_ptes(s, e_addr, ptep + idx, old, 1);	/* put the mapping back */
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
	struct mmp_space *s = arm64_space(phys, 4, &a);
	struct mmp_counters c0, d;
	mmp_pte_t *ptep;

	populate(s, a, BLOCK);
	ptep = ptep_at(s, a);
	mmp_space_counters(s, &c0);
	s->arch->set_ptes(s, a + 15 * P, ptep + 15, ptep[15] & ~A64_CONT, 1);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_CONTPTE_UNFOLD] == 1 && d.v[MMP_C_CONTPTE_FOLD] == 1 &&
	       nr_cont(ptep, A64_CONT_PTES) == A64_CONT_PTES,
	       "set_ptes(nr = 1) over entry 15 unfolds, then folds the block again");

	/* A fault that only sets accessed/dirty keeps the block: the write bit did not change. */
	mmp_space_counters(s, &c0);
	s->arch->ptep_set_access_flags(s, a + 3 * P, ptep + 3, MMP_E_ACCESSED | MMP_E_DIRTY);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_CONTPTE_UNFOLD] == 0 && nr_cont(ptep, A64_CONT_PTES) == A64_CONT_PTES,
	       "ptep_set_access_flags without a write-bit change does not unfold");
	tap_eq(mmp_space_verify(s), 0, "refold: verify");
	mmp_space_destroy(s);
}

/* ---- accessed and dirty ------------------------------------------------------------------ */

static bool young_dirty(struct mmp_space *s, mmp_pte_t pte)
{
	return (entry_flags(s, pte, MMP_PTE) & AD) == AD;
}

static void check_access_dirty(void)
{
	uint64_t a, blk;
	struct mmp_space *s = arm64_space(phys, 4, &a);
	struct mmp_counters c0, d;
	mmp_pte_t *ptep, pte, ret;
	bool ok;

	/* A/D set on two arbitrary entries of an otherwise clean and old block. */
	blk = a;
	populate(s, blk, BLOCK);
	ptep = ptep_at(s, blk);
	mmp_space_counters(s, &c0);
	pte = s->arch->ptep_get(s, ptep);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_PTEP_GET] == 1 && d.v[MMP_C_PTE_READ] >= 2 && d.v[MMP_C_PTE_READ] <= 17,
	       "ptep_get of a young, dirty CONT entry: 1 call, %llu entry reads (2..17)",
	       (unsigned long long)d.v[MMP_C_PTE_READ]);
	clean_block(ptep);
	ptep[12] |= A64_AF;
	ptep[3] &= ~A64_AP2_RDONLY;	/* hardware dirty: DBM with AP[2] clear */
	must(!young_dirty(s, ptep[0]) && (entry_flags(s, ptep[3], MMP_PTE) & MMP_E_DIRTY),
	     "A/D sit on entries 3 and 12 only");
	ok = true;
	mmp_space_counters(s, &c0);
	for (int i = 0; i < A64_CONT_PTES; i++)
		ok &= young_dirty(s, s->arch->ptep_get(s, ptep + i));
	counters_since(s, &c0, &d);
	tap_ok(ok, "A/D: ptep_get of every entry of the block reports young and dirty");
	tap_ok(d.v[MMP_C_PTEP_GET] == A64_CONT_PTES && d.v[MMP_C_PTE_READ] >= 2 * A64_CONT_PTES &&
	       d.v[MMP_C_PTE_READ] <= 17 * A64_CONT_PTES,
	       "A/D: each ptep_get counts once and reads at most 17 entries (%llu for 16)",
	       (unsigned long long)d.v[MMP_C_PTE_READ]);
	pte = s->arch->ptep_get(s, ptep);
	tap_ok(s->arch->ptep_get_lockless(s, ptep) == pte && young_dirty(s, pte),
	       "A/D: ptep_get_lockless of a stable block returns the gathered value");

	/* Whole-block clear: the returned entry carries the block's A/D. */
	mmp_space_counters(s, &c0);
	ret = s->arch->get_and_clear_full_ptes(s, blk, ptep, A64_CONT_PTES, 0);
	counters_since(s, &c0, &d);
	tap_ok(young_dirty(s, ret) && a64_pfn(ret) == a64_pfn(pte),
	       "A/D: get_and_clear_full_ptes over the block: the first pfn, young and dirty");
	tap_eq(d.v[MMP_C_CONTPTE_UNFOLD], 0, "A/D: ... without unfolding");
	s->arch->set_ptes(s, blk, ptep, ret & ~A64_CONT, A64_CONT_PTES);
	must(nr_cont(ptep, A64_CONT_PTES) == A64_CONT_PTES, "set_ptes(16) maps the block folded again");

	/* An unfold hands the gathered A/D to every entry. */
	clean_block(ptep);
	ptep[9] |= A64_AF;
	ptep[14] &= ~A64_AP2_RDONLY;
	s->arch->wrprotect_ptes(s, blk, ptep, 1);
	ok = nr_cont(ptep, A64_CONT_PTES) == 0;
	for (int i = 0; i < A64_CONT_PTES; i++)
		ok &= young_dirty(s, ptep[i]);
	tap_ok(ok, "A/D: after an unfold every entry carries the block's young and dirty");
	tap_eq(mmp_space_verify(s), 0, "A/D: verify");
	mmp_space_destroy(s);
}

/* Dirty from one CPU write to one page survives fork and mremap, batched or not. */
static void check_dirty_fork_mremap(long batch)
{
	static const char msg[] = "dirty!";
	uint64_t a, blk, dst = 0, off = 9 * P + 100;
	struct mmp_space *s = arm64_space(phys, 4, &a), *c;
	struct mmp_cpu *cpu, *ccpu;
	mmp_pte_t *ptep;
	char out[sizeof(msg)];

	mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, batch);
	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	blk = a + 2 * BLOCK;
	populate(s, blk, BLOCK);
	ptep = ptep_at(s, blk);
	clean_block(ptep);
	mmp_cpu_flush_tlb(cpu);
	must(mmp_write(cpu, blk + off, msg, sizeof(msg)) == 0, "write through the CPU");
	/* Later accesses walk again: see check_tlb_dirty_hit for why. */
	mmp_cpu_flush_tlb(cpu);
	tap_ok((entry_flags(s, ptep[9], MMP_PTE) & MMP_E_DIRTY) &&
	       !(entry_flags(s, ptep[0], MMP_PTE) & MMP_E_DIRTY) && nr_cont(ptep, 16) == 16,
	       "A/D (batch %ld): the MMU set hardware dirty on the written entry only", batch);

	must(mmp_fork(s, &c) == 0, "fork");
	tap_ok(entry_flags(s, s->arch->ptep_get(s, ptep), MMP_PTE) & MMP_E_DIRTY,
	       "A/D (batch %ld): after fork the parent's block is still dirty", batch);
	tap_ok(entry_flags(c, c->arch->ptep_get(c, ptep_at(c, blk)), MMP_PTE) & MMP_E_DIRTY,
	       "A/D (batch %ld): the child's copy of the block is dirty", batch);
	must(mmp_cpu_attach(c, &ccpu) == 0, "child cpu");
	memset(out, 0, sizeof(out));
	tap_ok(mmp_read(ccpu, blk + off, out, sizeof(out)) == 0 && !memcmp(out, msg, sizeof(msg)),
	       "A/D (batch %ld): the child reads the data", batch);
	mmp_cpu_detach(ccpu);
	tap_eq(mmp_space_verify(s), 0, "A/D (batch %ld): verify after fork", batch);
	mmp_space_destroy(c);

	tap_eq(mmp_mremap(s, blk, BLOCK, BLOCK, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, a + MiB,
			  &dst), 0, "A/D (batch %ld): mremap the block", batch);
	tap_ok(dst == a + MiB &&
	       (entry_flags(s, s->arch->ptep_get(s, ptep_at(s, dst)), MMP_PTE) & MMP_E_DIRTY),
	       "A/D (batch %ld): after mremap the moved block is dirty", batch);
	memset(out, 0, sizeof(out));
	tap_ok(mmp_read(cpu, dst + off, out, sizeof(out)) == 0 && !memcmp(out, msg, sizeof(msg)),
	       "A/D (batch %ld): the moved block holds the data", batch);
	tap_eq(mmp_space_verify(s), 0, "A/D (batch %ld): verify after mremap", batch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* ---- whole-block range operations --------------------------------------------------- */

enum range_op { R_CLEAR, R_GET_AND_CLEAR, R_WRPROTECT, NR_RANGE_OPS };

static void check_range_ops(void)
{
	static const char *const name[NR_RANGE_OPS] = {
		"clear_full_ptes", "get_and_clear_full_ptes", "wrprotect_ptes",
	};
	static const struct {
		int start, nr, unfolds;
		const char *what;
	} ranges[] = {
		{ 0, 16, 0, "exactly one aligned block" },
		{ 0, 24, 1, "24 entries from a block boundary" },
		{ 8, 16, 2, "16 entries from mid-block (two partial blocks)" },
	};
	uint64_t a;
	struct mmp_space *s = arm64_space(phys, 5, &a);
	int region = 0;

	for (int op = 0; op < NR_RANGE_OPS; op++) {
		for (size_t r = 0; r < ARRAY_SIZE(ranges); r++) {
			uint64_t base = a + (uint64_t)region++ * 2 * BLOCK;
			int start = ranges[r].start, nr = ranges[r].nr, end = start + nr;
			uint64_t addr = base + start * P;
			mmp_pte_t before[2 * A64_CONT_PTES], *ptep, ret = 0;
			struct mmp_counters c0, d;
			bool ok = true;

			populate(s, base, 2 * BLOCK);
			ptep = ptep_at(s, base);
			must(nr_cont(ptep, 2 * A64_CONT_PTES) == 2 * A64_CONT_PTES,
			     "an order-5 folio maps as two folded blocks");
			memcpy(before, ptep, sizeof(before));
			mmp_space_counters(s, &c0);
			ptep += start;
			if (op == R_CLEAR)
				s->arch->clear_full_ptes(s, addr, ptep, nr, 0);
			else if (op == R_GET_AND_CLEAR)
				ret = s->arch->get_and_clear_full_ptes(s, addr, ptep, nr, 0);
			else
				s->arch->wrprotect_ptes(s, addr, ptep, nr);
			ptep -= start;
			counters_since(s, &c0, &d);
			tap_eq(d.v[MMP_C_CONTPTE_UNFOLD], ranges[r].unfolds,
			       "%s over %s: %d unfold(s)", name[op], ranges[r].what,
			       ranges[r].unfolds);
			if (!ranges[r].unfolds)
				tap_eq(d.v[MMP_C_TLB_FLUSH_RANGE], 0,
				       "%s over %s: no TLB flush (the caller's gather flushes)",
				       name[op], ranges[r].what);

			for (int i = 0; i < 2 * A64_CONT_PTES; i++) {
				int lo = i / A64_CONT_PTES * A64_CONT_PTES, hi = lo + A64_CONT_PTES;
				bool inside = i >= start && i < end;
				/* A block stays folded unless the range covers it in part. */
				bool whole = start <= lo && end >= hi;
				bool touched = start < hi && end > lo;
				bool cont = !touched || whole;
				unsigned int f = entry_flags(s, ptep[i], MMP_PTE);

				if (inside && op != R_WRPROTECT) {
					ok &= !ptep[i];
					continue;
				}
				ok &= a64_pfn(ptep[i]) == a64_pfn(before[i]);
				ok &= !!(ptep[i] & A64_CONT) == cont;
				ok &= !!(f & MMP_E_WRITE) == !inside;
				ok &= (f & MMP_E_DIRTY) != 0;
			}
			tap_ok(ok, "%s over %s: entries cleared or write-protected, folded "
			       "where the block was covered whole or not at all", name[op],
			       ranges[r].what);
			if (op == R_GET_AND_CLEAR)
				tap_ok(a64_pfn(ret) == a64_pfn(before[start]) &&
				       young_dirty(s, ret),
				       "%s over %s: returns the first entry, young and dirty",
				       name[op], ranges[r].what);
			if (op != R_WRPROTECT)	/* map them again, so the rmap still agrees */
				s->arch->set_ptes(s, addr, ptep + start,
						  before[start] & ~A64_CONT, nr);
		}
	}
	tap_eq(mmp_space_verify(s), 0, "range ops: verify");
	mmp_space_destroy(s);
}

/* ---- pte_batch_hint ------------------------------------------------------------------------ */

static void check_batch_hint(void)
{
	uint64_t a;
	struct mmp_space *s = arm64_space(phys, 4, &a);
	mmp_pte_t *ptep;
	bool ok = true;

	populate(s, a + 4 * BLOCK, 2 * BLOCK);
	ptep = ptep_at(s, a + 4 * BLOCK);
	for (int i = 0; i < 2 * A64_CONT_PTES; i++)
		ok &= s->arch->pte_batch_hint(ptep + i, ptep[i]) ==
		      (unsigned int)(A64_CONT_PTES - i % A64_CONT_PTES);
	tap_ok(ok, "pte_batch_hint of a CONT entry is 16 minus its index in the block");
	s->arch->wrprotect_ptes(s, a + 4 * BLOCK, ptep, 1);	/* unfolds the first block */
	ok = true;
	for (int i = 0; i < A64_CONT_PTES; i++)
		ok &= s->arch->pte_batch_hint(ptep + i, ptep[i]) == 1;
	tap_ok(ok, "pte_batch_hint of a non-CONT entry is 1");
	tap_eq(s->arch->pte_batch_hint(ptep + A64_CONT_PTES + 3, ptep[A64_CONT_PTES + 3]), 13,
	       "pte_batch_hint: the next block is still folded");
	tap_eq(mmp_space_verify(s), 0, "pte_batch_hint: verify");
	mmp_space_destroy(s);
}

/* ---- TLB ---------------------------------------------------------------------------------- */

static void check_tlb(long bbml2)
{
	uint64_t a, blk;
	struct mmp_space *s = arm64_space(phys, 4, &a);
	struct mmp_counters c0, d;
	struct mmp_cpu *cpu;
	char ch;
	bool ok = true;

	mmp_space_set_opt(s, MMP_OPT_BBML2_NOABORT, bbml2);
	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	blk = a + 5 * BLOCK;
	must(mmp_memset(cpu, blk, 0x5a, BLOCK) == 0, "fill a 64 KiB folio");
	mmp_cpu_flush_tlb(cpu);
	must(mmp_read(cpu, blk, &ch, 1) == 0, "read page 0");
	mmp_space_counters(s, &c0);
	for (int i = 1; i < A64_CONT_PTES; i++)
		ok &= mmp_read(cpu, blk + i * P + 7, &ch, 1) == 0 && ch == 0x5a;
	counters_since(s, &c0, &d);
	tap_ok(ok, "tlb (bbml2 %ld): the other 15 pages read back", bbml2);
	tap_eq(d.v[MMP_C_TLB_HIT], 15, "tlb (bbml2 %ld): 15 TLB hits on one 64 KiB translation",
	       bbml2);
	tap_eq(d.v[MMP_C_PAGE_WALK], 0, "tlb (bbml2 %ld): no page walk", bbml2);

	mmp_space_counters(s, &c0);
	tap_eq(mmp_munmap(s, blk + 5 * P, P), 0, "tlb (bbml2 %ld): munmap one page of the block",
	       bbml2);
	counters_since(s, &c0, &d);
	tap_eq(d.v[MMP_C_CONTPTE_UNFOLD], 1, "tlb (bbml2 %ld): the block was unfolded", bbml2);
	mmp_space_counters(s, &c0);
	tap_ok(mmp_read(cpu, blk + 6 * P, &ch, 1) == 0 && ch == 0x5a,
	       "tlb (bbml2 %ld): its neighbour still reads", bbml2);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_PAGE_WALK] == 1 && d.v[MMP_C_TLB_HIT] == 0,
	       "tlb (bbml2 %ld): the 64 KiB translation is gone: the neighbour walks", bbml2);
	tap_eq(mmp_read(cpu, blk + 5 * P, &ch, 1), -EFAULT,
	       "tlb (bbml2 %ld): the unmapped page faults", bbml2);
	tap_eq(counter(s, MMP_C_TLB_SANITIZER), 0, "tlb (bbml2 %ld): no stale translation used",
	       bbml2);
	tap_eq(mmp_space_verify(s), 0, "tlb (bbml2 %ld): verify", bbml2);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/*
 * The MMU may set dirty on any one entry of a block and cache the block with
 * it; a later write to another page of the block through that translation is
 * legitimate even though that page's own entry is clean (the block's dirty
 * state is the OR of its 16 entries). Own phys: a sanitizer report here must
 * not fail verify elsewhere.
 */
static void check_tlb_dirty_hit(void)
{
	struct mmp_phys *ph;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	mmp_pte_t *ptep;
	uint64_t a;
	char ch = 1;

	must(mmp_phys_create(16 * MiB, &ph) == 0, "a phys of its own");
	s = arm64_space(ph, 4, &a);
	populate(s, a, BLOCK);
	ptep = ptep_at(s, a);
	clean_block(ptep);
	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	must(mmp_write(cpu, a + 9 * P, &ch, 1) == 0, "write page 9 of a clean block");
	must(mmp_write(cpu, a + 3 * P, &ch, 1) == 0 && mmp_read(cpu, a + 4 * P, &ch, 1) == 0,
	     "access pages 3 and 4 through the cached block");
	tap_eq(counter(s, MMP_C_TLB_SANITIZER), 0,
	       "tlb: a dirty block translation used for a page whose own entry is clean is no "
	       "sanitizer report");
	tap_eq(mmp_space_verify(s), 0,
	       "tlb: verify after writes through a dirty block translation");
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_phys_destroy(ph);
}

/*
 * mprotect batches a whole block through modify_prot_start/commit_ptes: no
 * unfold and no fold, the block stays CONT; one entry at a time unfolds each
 * block and refolds it at its last entry. Both end with the same data.
 */
static void check_mprotect_batch(int batch)
{
	uint64_t a;
	struct mmp_space *s = arm64_space(phys, 4, &a);
	struct mmp_cpu *cpu;
	uint64_t unfold, fold;
	unsigned char b = 0;
	mmp_pte_t *ptes;

	mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, batch);
	mmp_cpu_attach(s, &cpu);
	mmp_memset(cpu, a, 0x5a, 256 * KiB);	/* four 64 KiB folios, folded at fault */
	unfold = counter(s, MMP_C_CONTPTE_UNFOLD);
	fold = counter(s, MMP_C_CONTPTE_FOLD);
	tap_eq(mmp_mprotect(s, a, 256 * KiB, MMP_PROT_READ), 0, "mprotect batch %d: read-only", batch);
	tap_eq(counter(s, MMP_C_CONTPTE_UNFOLD) - unfold, batch ? 0 : 4,
	       "mprotect batch %d: %s", batch, batch ? "no block unfolds" : "each block unfolds");
	tap_eq(counter(s, MMP_C_CONTPTE_FOLD) - fold, batch ? 0 : 4,
	       "mprotect batch %d: %s", batch, batch ? "nothing to refold" : "each block refolds");
	ptes = pte_table(s, *pmd_offset(s, a));
	tap_ok((ptes[level_index(a, MMP_PTE)] & A64_CONT) && !(ptes[level_index(a, MMP_PTE)] & A64_DBM),
	       "mprotect batch %d: the block is still CONT and read-only", batch);
	tap_eq(mmp_write(cpu, a, "x", 1), -EFAULT, "mprotect batch %d: a write faults", batch);
	tap_eq(mmp_mprotect(s, a, 256 * KiB, MMP_PROT_READ | MMP_PROT_WRITE), 0,
	       "mprotect batch %d: read-write again", batch);
	tap_eq(mmp_write(cpu, a + 70000, "y", 1), 0, "mprotect batch %d: a write works", batch);
	mmp_read(cpu, a + 1000, &b, 1);
	tap_eq(b, 0x5a, "mprotect batch %d: data intact", batch);
	tap_eq(mmp_space_verify(s), 0, "mprotect batch %d: verify", batch);
	mmp_cpu_detach(cpu);
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
	check_access_dirty();
	check_dirty_fork_mremap(1);
	check_dirty_fork_mremap(0);
	check_range_ops();
	check_batch_hint();
	check_tlb(0);
	check_tlb(1);
	check_tlb_dirty_hit();
	check_mprotect_batch(1);
	check_mprotect_batch(0);
	rcu_barrier();	/* page tables come home after a grace period */
	mmp_phys_stat(phys, &st1);
	tap_eq(st1.free_pages, st0.free_pages, "every frame went back to the phys");
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
