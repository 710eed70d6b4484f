/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Contiguous-block mechanics, shared by the back ends that map a naturally
 * aligned run of PTEs through one TLB entry: arm64 contpte and RISC-V Svnapot.
 * Here: counted raw entry access, block geometry, the folio check before a
 * fold, and the shapes of the entry operations (the A/D gather, which ends
 * unfold, which widen, how a run is written). What a folded entry looks like,
 * how A/D gather and when a block folds stay with each architecture, in its
 * struct cont_block_ops and the fold and unfold it points to.
 */
#ifndef MMP_ARCH_CONT_BLOCK_H
#define MMP_ARCH_CONT_BLOCK_H

#include "arch_api.h"

/* ---- raw entries, as the hardware walker sees them, counted ---- */

static __always_inline mmp_pte_t raw_get(struct mmp_space *s, mmp_pte_t *ptep)
{
	count_inc(s, MMP_C_PTE_READ);
	return __atomic_load_n(ptep, __ATOMIC_ACQUIRE);
}

static __always_inline mmp_pte_t raw_get_and_clear(struct mmp_space *s, mmp_pte_t *ptep)
{
	count_add2(s, MMP_C_PTE_READ, MMP_C_PTE_WRITE, 1);
	return __atomic_exchange_n(ptep, 0, __ATOMIC_ACQ_REL);
}

/* @nr entries cleared, counted once for the run. */
static __always_inline void raw_clear_range(struct mmp_space *s, mmp_pte_t *ptep, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		__atomic_exchange_n(ptep + i, 0, __ATOMIC_ACQ_REL);
	count_add2(s, MMP_C_PTE_READ, MMP_C_PTE_WRITE, nr);
}

static __always_inline void raw_set(struct mmp_space *s, mmp_pte_t *ptep, mmp_pte_t pte)
{
	count_inc(s, MMP_C_PTE_WRITE);
	__atomic_store_n(ptep, pte, __ATOMIC_RELEASE);
}

/* Clear @bits, keeping what the walker sets meanwhile; the old value. */
static __always_inline mmp_pte_t raw_clear_bits(struct mmp_space *s, mmp_pte_t *ptep,
						 mmp_pte_t bits)
{
	count_add2(s, MMP_C_PTE_READ, MMP_C_PTE_WRITE, 1);
	return __atomic_fetch_and(ptep, ~bits, __ATOMIC_ACQ_REL);
}

/* ---- geometry: blocks of @nr entries (a power of two), naturally aligned ---- */

static __always_inline mmp_pte_t *cont_align_down(mmp_pte_t *ptep, unsigned int nr)
{
	return (mmp_pte_t *)((uintptr_t)ptep & ~(uintptr_t)(nr * sizeof(mmp_pte_t) - 1));
}

/* Entries from @ptep to the end of its block (pte_batch_hint of a folded entry). */
static __always_inline unsigned int cont_entries_left(const mmp_pte_t *ptep, unsigned int nr)
{
	return nr - (((uintptr_t)ptep / sizeof(mmp_pte_t)) & (nr - 1));
}

/* Does one folio cover the @nr pages from @base_pfn? A block must not span two. */
static __always_inline bool folio_covers_block(struct mmp_space *s, uint64_t base_pfn,
						unsigned int nr)
{
	uint64_t head = folio_pfn(s->phys, base_pfn);
	struct mmp_page *page = pfn_to_page(s->phys, head);

	return (page->flags & PG_head) && !(page->flags & PG_reserved) &&
	       base_pfn + nr <= head + folio_nr_pages(page);
}

/*
 * Is the entry at @ptep for @addr the last of its block, mapping the last page
 * of an aligned run? Core writes low to high, so only then can a fold complete
 * (contpte_try_fold).
 */
static __always_inline bool cont_completes_block(uint64_t addr, uint64_t pfn, unsigned int nr)
{
	return ((addr >> PAGE_SHIFT) & (nr - 1)) == nr - 1 && (pfn & (nr - 1)) == nr - 1;
}

/* ---- the inline reads of entry_ops.h ---- */

/* Is @raw, read from the table, part of a folded block? */
typedef bool cont_folded_fn(mmp_pte_t raw);
/* The out-of-line read of a folded entry's block. */
typedef mmp_pte_t cont_block_get_fn(struct mmp_space *s, mmp_pte_t *ptep);

/*
 * ptep_get outside any block, read and counted here as @block_get would
 * count it; a folded entry goes to @block_get, out of line.
 */
static __always_inline mmp_pte_t cont_ptep_get_inline(struct mmp_space *s, mmp_pte_t *ptep,
						       cont_folded_fn *folded,
						       cont_block_get_fn *block_get)
{
	mmp_pte_t raw = __atomic_load_n(ptep, __ATOMIC_ACQUIRE);

	if (unlikely(folded(raw)))
		return block_get(s, ptep);
	count_add2(s, MMP_C_PTE_READ, MMP_C_PTEP_GET, 1);
	return raw;
}

/* ptep_get_lockless: counts nothing, as the out-of-line block read does not. */
static __always_inline mmp_pte_t cont_ptep_get_lockless_inline(struct mmp_space *s,
								mmp_pte_t *ptep,
								cont_folded_fn *folded,
								cont_block_get_fn *block_get)
{
	mmp_pte_t raw = __atomic_load_n(ptep, __ATOMIC_ACQUIRE);

	return unlikely(folded(raw)) ? block_get(s, ptep) : raw;
}

/* pte_batch_hint: a folded entry's block is one batch to its end. */
static __always_inline unsigned int cont_batch_hint(const mmp_pte_t *ptep, bool folded,
						     unsigned int nr)
{
	return folded ? cont_entries_left(ptep, nr) : 1;
}

/* ---- the back end's policy ---- */

/*
 * What differs between contpte and Svnapot, as one static const per arch. The
 * shapes below are always inline and take it by address, so each callback
 * folds to a direct call the compiler inlines: no indirect call per entry.
 */
struct cont_block_ops {
	unsigned int nr;	/* entries in a block, a power of two */
	cont_folded_fn *folded;
	/* Unfold the block holding @ptep if @raw (read from it) is folded. */
	void (*try_unfold)(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t raw);
	/* Fold the block if @pte, just written at @ptep, completed it. */
	void (*try_fold)(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte);
	/* May core's @pte be part of a block (valid, not special)? */
	bool (*may_fold)(mmp_pte_t pte);
	uint64_t (*pfn)(mmp_pte_t pte);
	mmp_pte_t (*advance_pfn)(mmp_pte_t pte, uint64_t nr);
	/* Entry @i of a run written from core's @pte, part of a block or not. */
	mmp_pte_t (*run_entry)(mmp_pte_t pte, unsigned int i, bool block);
	/* @pte with the A/D of raw entry @e added. */
	mmp_pte_t (*gather)(mmp_pte_t pte, mmp_pte_t e);
	/* Does @pte show young and dirty both, so no sibling can add to it? */
	bool (*gathered_all)(mmp_pte_t pte);
	/* Folded @raw, read at @ptep, as core reads it. */
	mmp_pte_t (*for_core)(mmp_pte_t raw, const mmp_pte_t *ptep);
	/* Does @e, entry @i of a block, belong with @ref, its entry @ref_i, but for A/D? */
	bool (*fits)(mmp_pte_t e, unsigned int i, mmp_pte_t ref, unsigned int ref_i);
	mmp_pte_t young;	/* the bit test_and_clear_young clears */
};

static __always_inline uint64_t cont_size(const struct cont_block_ops *ops)
{
	return (uint64_t)ops->nr * PAGE_SIZE;
}

/* ---- reads ---- */

/*
 * ptep_get: a folded entry gathers A/D over its block, stopping, if
 * @stop_early, once both show.
 */
static __always_inline mmp_pte_t cont_ptep_get(struct mmp_space *s, mmp_pte_t *ptep,
						bool stop_early, const struct cont_block_ops *ops)
{
	mmp_pte_t pte = raw_get(s, ptep), *first;

	count_inc(s, MMP_C_PTEP_GET);
	if (!ops->folded(pte))
		return pte;
	first = cont_align_down(ptep, ops->nr);
	for (unsigned int i = 0; i < ops->nr; i++) {
		pte = ops->gather(pte, raw_get(s, first + i));
		if (stop_early && ops->gathered_all(pte))
			break;
	}
	return ops->for_core(pte, ptep);
}

/*
 * Without the PTL (GUP-fast) the block may be folded or unfolded under us:
 * retry until every entry fits the one at @ptep. Counts nothing.
 */
static __always_inline mmp_pte_t cont_ptep_get_lockless(mmp_pte_t *ptep,
							 const struct cont_block_ops *ops)
{
	for (;;) {
		mmp_pte_t orig = __atomic_load_n(ptep, __ATOMIC_ACQUIRE), pte = orig, *first;
		unsigned int at;
		bool stable = true;

		if (!ops->folded(orig))
			return orig;
		first = cont_align_down(ptep, ops->nr);
		at = ptep - first;
		for (unsigned int i = 0; i < ops->nr && stable; i++) {
			mmp_pte_t e = __atomic_load_n(first + i, __ATOMIC_ACQUIRE);

			stable = ops->fits(e, i, orig, at);
			pte = ops->gather(pte, e);
		}
		if (stable)
			return ops->for_core(pte, ptep);
		cpu_relax();
	}
}

/* ---- writes ---- */

/* Clear the block at @first, adding the A/D of its entries to @pte: a rewrite's first half. */
static __always_inline mmp_pte_t cont_clear_block(struct mmp_space *s, mmp_pte_t *first,
						  mmp_pte_t pte, const struct cont_block_ops *ops)
{
	for (unsigned int i = 0; i < ops->nr; i++)
		pte = ops->gather(pte, raw_get_and_clear(s, first + i));
	return pte;
}

/*
 * set_ptes: one entry unfolds a block it lands in and may complete a fold; a
 * run writes each sub-range that is a whole, VA- and PA-aligned block as one.
 */
static __always_inline void cont_set_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					  mmp_pte_t pte, unsigned int nr,
					  const struct cont_block_ops *ops)
{
	uint64_t end = addr + (uint64_t)nr * PAGE_SIZE, size = cont_size(ops);

	if (nr == 1) {
		ops->try_unfold(s, addr, ptep, raw_get(s, ptep));
		raw_set(s, ptep, pte);
		ops->try_fold(s, addr, ptep, pte);
		return;
	}
	while (addr < end) {
		uint64_t next = MIN((addr + size) & ~(size - 1), end);
		unsigned int n = (next - addr) >> PAGE_SHIFT;
		bool block = ((addr | next | ops->pfn(pte) << PAGE_SHIFT) & (size - 1)) == 0 &&
			     ops->may_fold(pte);

		for (unsigned int i = 0; i < n; i++)
			raw_set(s, ptep + i, ops->run_entry(pte, i, block));
		pte = ops->advance_pfn(pte, n);
		ptep += n;
		addr = next;
	}
}

/* ---- range shapes ---- */

/* Unfold the first and last blocks of [@addr, +@nr pages) where the range covers them in part. */
static __always_inline void cont_unfold_partial_ends(struct mmp_space *s, uint64_t addr,
						     mmp_pte_t *ptep, unsigned int nr,
						     const struct cont_block_ops *ops)
{
	uint64_t last = addr + (uint64_t)(nr - 1) * PAGE_SIZE, size = cont_size(ops);

	if (addr & (size - 1))
		ops->try_unfold(s, addr, ptep, raw_get(s, ptep));
	if ((last + PAGE_SIZE) & (size - 1))
		ops->try_unfold(s, last, ptep + nr - 1, raw_get(s, ptep + nr - 1));
}

/* Before changing @nr entries in place: one entry unfolds its block, a range its partial ends. */
static __always_inline void cont_unfold_ends(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					     unsigned int nr, const struct cont_block_ops *ops)
{
	if (nr == 1)
		ops->try_unfold(s, addr, ptep, raw_get(s, ptep));
	else
		cont_unfold_partial_ends(s, addr, ptep, nr, ops);
}

/* ptep_get_and_clear: the other entries of a block keep their pages, so unfold first. */
static __always_inline mmp_pte_t cont_ptep_get_and_clear(struct mmp_space *s, uint64_t addr,
							  mmp_pte_t *ptep,
							  const struct cont_block_ops *ops)
{
	ops->try_unfold(s, addr, ptep, raw_get(s, ptep));
	return raw_get_and_clear(s, ptep);
}

/*
 * get_and_clear_full_ptes of @nr > 1 entries (one is ptep_get_and_clear, out
 * of line): the first entry as core reads it, with all @nr's A/D.
 */
static __always_inline mmp_pte_t cont_get_and_clear_full_ptes(struct mmp_space *s, uint64_t addr,
							       mmp_pte_t *ptep, unsigned int nr,
							       const struct cont_block_ops *ops)
{
	mmp_pte_t pte;

	cont_unfold_partial_ends(s, addr, ptep, nr, ops);
	pte = raw_get_and_clear(s, ptep);
	if (ops->folded(pte))
		pte = ops->for_core(pte, ptep);
	for (unsigned int i = 1; i < nr; i++)
		pte = ops->gather(pte, raw_get_and_clear(s, ptep + i));
	return pte;
}

/* clear_full_ptes: whole blocks cleared in place, partially covered ends unfolded first. */
static __always_inline void cont_clear_full_ptes(struct mmp_space *s, uint64_t addr,
						 mmp_pte_t *ptep, unsigned int nr,
						 const struct cont_block_ops *ops)
{
	/* One entry, a small folio's, is the common zap: lay it out first. */
	if (likely(nr == 1))
		ops->try_unfold(s, addr, ptep, raw_get(s, ptep));
	else
		cont_unfold_partial_ends(s, addr, ptep, nr, ops);
	raw_clear_range(s, ptep, nr);
}

/* Age the whole block: the folio's young state is the block's. */
static __always_inline int cont_test_and_clear_young(struct mmp_space *s, mmp_pte_t *ptep,
						      const struct cont_block_ops *ops)
{
	mmp_pte_t *first = ptep;
	unsigned int n = 1;
	int young = 0;

	if (ops->folded(raw_get(s, ptep))) {
		first = cont_align_down(ptep, ops->nr);
		n = ops->nr;
	}
	for (unsigned int i = 0; i < n; i++)
		young |= !!(raw_clear_bits(s, first + i, ops->young) & ops->young);
	return young;
}

/*
 * Widen [*@addr, *@end) at @*ptep to whole blocks at either end that is
 * folded: A/D belong to the block, so clearing them never unfolds.
 */
static __always_inline void cont_widen_to_blocks(struct mmp_space *s, uint64_t *addr,
						 uint64_t *end, mmp_pte_t **ptep,
						 const struct cont_block_ops *ops)
{
	uint64_t size = cont_size(ops);

	if (ops->folded(raw_get(s, *ptep))) {
		*ptep -= (*addr & (size - 1)) >> PAGE_SHIFT;
		*addr &= ~(size - 1);
	}
	if (ops->folded(raw_get(s, *ptep + ((*end - *addr) >> PAGE_SHIFT) - 1)))
		*end = (*end + size - 1) & ~(size - 1);
}

#endif /* MMP_ARCH_CONT_BLOCK_H */
