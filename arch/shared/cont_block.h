/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Contiguous-block mechanics, shared by the back ends that map a naturally
 * aligned run of PTEs through one TLB entry: arm64 contpte and RISC-V Svnapot.
 * Here: counted raw entry access, block geometry, the folio check before a
 * fold, and the shapes of the range operations (which ends unfold, which
 * widen). What a folded entry looks like, how A/D are gathered and how a block
 * is rewritten stay with each architecture.
 *
 * Everything is static inline and the callbacks are functions known at each
 * call site, so the compiler calls them directly: no indirect call per entry.
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

/* ---- range shapes ---- */

/* Unfold the block holding @ptep if @raw (read from it) is folded. */
typedef void cont_unfold_fn(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t raw);

/* Unfold the first and last blocks of [@addr, +@nr pages) where the range covers them in part. */
static inline void cont_unfold_partial_ends(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					    unsigned int nr, uint64_t block_size,
					    cont_unfold_fn *unfold)
{
	uint64_t last = addr + (uint64_t)(nr - 1) * PAGE_SIZE;

	if (addr & (block_size - 1))
		unfold(s, addr, ptep, raw_get(s, ptep));
	if ((last + PAGE_SIZE) & (block_size - 1))
		unfold(s, last, ptep + nr - 1, raw_get(s, ptep + nr - 1));
}

/* clear_full_ptes: whole blocks cleared in place, partially covered ends unfolded first. */
static inline void cont_clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					unsigned int nr, uint64_t block_size,
					cont_unfold_fn *unfold)
{
	if (nr == 1)
		unfold(s, addr, ptep, raw_get(s, ptep));
	else
		cont_unfold_partial_ends(s, addr, ptep, nr, block_size, unfold);
	raw_clear_range(s, ptep, nr);
}

/* Is @raw a folded entry? */
typedef bool cont_folded_fn(mmp_pte_t raw);

/*
 * Widen [*@addr, *@end) at @*ptep to whole blocks at either end that is
 * folded: A/D belong to the block, so clearing them never unfolds.
 */
static inline void cont_widen_to_blocks(struct mmp_space *s, uint64_t *addr, uint64_t *end,
					mmp_pte_t **ptep, uint64_t block_size,
					cont_folded_fn *folded)
{
	if (folded(raw_get(s, *ptep))) {
		*ptep -= (*addr & (block_size - 1)) >> PAGE_SHIFT;
		*addr &= ~(block_size - 1);
	}
	if (folded(raw_get(s, *ptep + ((*end - *addr) >> PAGE_SHIFT) - 1)))
		*end = (*end + block_size - 1) & ~(block_size - 1);
}

#endif /* MMP_ARCH_CONT_BLOCK_H */
