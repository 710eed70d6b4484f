/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Page-table pages: allocation, population of the upper levels, the walk down
 * to a PMD, and the free_pgtables() pass after an unmap.
 */
#include <string.h>

#include "mm.h"

/* A zeroed table page (pte_alloc_one / pmd_alloc_one). NO_PFN when out of memory. */
uint32_t pgtable_alloc(struct mmp_space *s)
{
	uint32_t pfn = phys_alloc_pages(s->phys, 0);
	struct mmp_page *page;

	if (pfn == NO_PFN)
		return NO_PFN;
	page = pfn_to_page(s->phys, pfn);
	page->flags = PG_table;
	page->refcount = 1;
	page->pt.deposit = NO_PFN;
	memset(pfn_to_virt(s->phys, pfn), 0, PAGE_SIZE);
	__atomic_fetch_add(&s->nr_pgtables, 1, __ATOMIC_RELAXED);
	count_inc(s, MMP_C_PGTABLE_ALLOC);
	return pfn;
}

/* Free a table no walker has ever seen (a lost install race, an unused deposit). */
void pgtable_free(struct mmp_space *s, uint32_t pfn)
{
	pgtable_unlinked(s, pfn);
	pgtable_release(s, pfn, MMP_C_PGTABLE_FREE);
}

/* The table left the tree: out of VmPTE now, awaiting its free (mm_dec_nr_ptes). */
void pgtable_unlinked(struct mmp_space *s, uint32_t pfn)
{
	struct mmp_page *page = pfn_to_page(s->phys, pfn);

	MMP_BUG_ON(!(page->flags & PG_table) || (page->flags & PG_pt_freeing));
	page_flag_set(page, PG_pt_freeing);
	__atomic_fetch_sub(&s->nr_pgtables, 1, __ATOMIC_RELAXED);
}

/*
 * Give an unlinked table back to the allocator, poisoned so that a walker
 * reading it afterwards sees PT_POISON instead of plausible entries. Counts
 * nothing: the caller counted the free where it was decided.
 */
void pgtable_put(struct mmp_space *s, uint32_t pfn)
{
	struct mmp_page *page = pfn_to_page(s->phys, pfn);
	mmp_pte_t *t = space_table(s, pfn);

	MMP_BUG_ON(!(page->flags & PG_pt_freeing));
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++)
		__atomic_store_n(&t[i], PT_POISON, __ATOMIC_RELAXED);
	/*
	 * No longer a table, nor in flight. Only PG_pt_freeing stays: should a
	 * speculative GUP-fast grab hold the frame past our put, verify sees a
	 * released table waiting for that put, not a leak.
	 */
	__atomic_store_n(&page->flags, PG_pt_freeing, __ATOMIC_RELEASE);
	/* put_page: a speculative GUP-fast grab on the frame defers the free to its put. */
	if (__atomic_sub_fetch(&page->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		phys_free_pages(s->phys, pfn, 0);
}

/* Free an unlinked table now, counted as @how. */
void pgtable_release(struct mmp_space *s, uint32_t pfn, enum mmp_counter how)
{
	count_inc(s, how);
	pgtable_put(s, pfn);
}

/*
 * pmd_install: the table is allocated outside the lock and published under
 * page_table_lock unless another thread won the race; release order makes
 * the zeroed table visible before the entry.
 */
int table_install(struct mmp_space *s, mmp_pte_t *ep, enum mmp_level level)
{
	uint32_t pfn = pgtable_alloc(s);

	if (pfn == NO_PFN)
		return -ENOMEM;
	spin_lock(&s->page_table_lock);
	if (!READ_ONCE(*ep)) {
		__atomic_store_n(ep, mk_entry(s, pfn, MMP_E_TABLE, level), __ATOMIC_RELEASE);
		pfn = NO_PFN;
	}
	spin_unlock(&s->page_table_lock);
	if (pfn != NO_PFN)
		pgtable_free(s, pfn);
	return 0;
}

/* The PMD entry for @addr, allocating the upper tables on the way (pmd_alloc). */
mmp_pte_t *pmd_alloc(struct mmp_space *s, uint64_t addr)
{
	return pmd_walk(s, addr, true);
}

/* The PMD entry for @addr if the upper tables exist, else NULL (pmd_off without allocation). */
mmp_pte_t *pmd_offset(struct mmp_space *s, uint64_t addr)
{
	return pmd_walk(s, addr, false);
}

mmp_pte_t *pud_alloc(struct mmp_space *s, uint64_t addr)
{
	return pud_walk(s, addr, true);
}

mmp_pte_t *pud_offset(struct mmp_space *s, uint64_t addr)
{
	return pud_walk(s, addr, false);
}

/* The PTE table a PMD entry points to, or NULL when the entry is none or a leaf. */
mmp_pte_t *pte_table(struct mmp_space *s, mmp_pte_t pmd)
{
	return format_pte_table(s->format, s, pmd);
}

mmp_pte_t *pte_offset_map_lock(struct mmp_space *s, mmp_pte_t *pmdp, mmp_spinlock_t **ptlp)
{
	for (;;) {
		mmp_pte_t pmd = __atomic_load_n(pmdp, __ATOMIC_ACQUIRE);
		mmp_pte_t *ptes = pte_table(s, pmd);
		mmp_spinlock_t *ptl;

		if (!ptes)
			return NULL;
		ptl = pte_lockptr(s, ptes);
		spin_lock(ptl);
		if (READ_ONCE(*pmdp) == pmd) {
			*ptlp = ptl;
			return ptes;
		}
		spin_unlock(ptl);
	}
}

/* Rewrite one entry's flags with a compare-and-swap, keeping concurrent A/D updates. */
mmp_pte_t ptep_modify(struct mmp_space *s, mmp_pte_t *ep, enum mmp_level level, unsigned int set,
		      unsigned int clear)
{
	mmp_pte_t old = READ_ONCE(*ep), new;

	do {
		if (!old)
			return 0;
		new = entry_set_flags(s, old, level, set, clear);
	} while (!__atomic_compare_exchange_n(ep, &old, new, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	return old;
}

/*
 * Call @fn for every PMD entry slot in [addr, end) whose upper tables exist
 * (walk_page_range at PMD granularity). Stops at the first non-zero return.
 */
int walk_pmd_range(struct mmp_space *s, uint64_t addr, uint64_t end, pmd_fn fn, void *arg)
{
	while (addr < end) {
		mmp_pte_t *pmdp = pmd_offset(s, addr);
		uint64_t next;
		int err;

		if (!pmdp) {
			/* No PMD table here: skip to the next PUD span. */
			next = level_addr_end(addr, end, MMP_PUD);
			addr = next;
			continue;
		}
		next = level_addr_end(addr, end, MMP_PMD);
		err = fn(s, pmdp, addr, next, arg);
		if (err)
			return err;
		addr = next;
	}
	return 0;
}

/*
 * Free the tables below @table whose whole span lies in [floor, ceiling): no
 * VMA lives there, so they hold no entries (free_pgd_range). Each goes through
 * the gather, which flushes the TLB before the table is reused.
 */
static void free_table_range(struct mmp_gather *tlb, mmp_pte_t *table, enum mmp_level level,
			     uint64_t addr, uint64_t end, uint64_t floor, uint64_t ceiling)
{
	struct mmp_space *s = tlb->s;

	while (addr < end) {
		uint64_t base = addr & ~(level_size(level) - 1);
		uint64_t next = level_addr_end(addr, end, level);
		mmp_pte_t *ep = &table[level_index(addr, level)];
		mmp_pte_t e = READ_ONCE(*ep);

		if (entry_test(s, e, level, MMP_E_TABLE)) {
			if (level - 1 > MMP_PTE)
				free_table_range(tlb, entry_table(s, e, level), level - 1, addr, next,
						 floor, ceiling);
			if (base >= floor && base + level_size(level) <= ceiling) {
				spin_lock(&s->page_table_lock);
				WRITE_ONCE(*ep, 0);
				spin_unlock(&s->page_table_lock);
				tlb_remove_table(tlb, entry_pfn(s, e, level), base,
						 base + level_size(level));
			}
		}
		addr = next;
	}
}

void free_pgtables(struct mmp_gather *tlb, uint64_t start, uint64_t end, uint64_t floor,
		   uint64_t ceiling)
{
	free_table_range(tlb, space_table(tlb->s, tlb->s->pgd_pfn), pgd_level(tlb->s), start, end, floor,
			 ceiling);
}
