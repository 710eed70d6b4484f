/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * get_user_pages: GUP-fast walks the tables with no lock, with IRQs off, which
 * is also a read-side section: RCU page-table freeing waits for it, and so do
 * the IPIs of a TLB shootdown and of semi RCU's single-table free; the locked
 * GUP faults in what is missing. Each pinned page holds one folio reference,
 * counted in phys->nr_pinned so that mmp_space_verify() can account for it.
 * A pin belongs to the phys, not to the space: it outlives the mappings and
 * the space itself (a process exiting with DMA in flight), and the phys cannot
 * go away before it is dropped. GUP-fast and fork meet on mm->write_protect_seq.
 */
#include <limits.h>
#include <sched.h>

#include "irqflags.h"
#include "mm.h"
#include "mmap_lock.h"
#include "rcu.h"

/* folio_try_get: a reference only if the folio is still alive. */
static bool folio_try_get(struct mmp_page *head)
{
	int ref = __atomic_load_n(&head->refcount, __ATOMIC_RELAXED);

	do {
		if (ref <= 0)
			return false;
	} while (!__atomic_compare_exchange_n(&head->refcount, &ref, ref + 1, false,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return true;
}

/*
 * Drop a speculative reference. The frame may have become anything since it
 * was read (a page table, another folio): the last reference frees it as what
 * it is now.
 */
static void put_speculative(struct mmp_space *s, uint32_t pfn)
{
	struct mmp_page *page = pfn_to_page(s->phys, pfn);

	if (__atomic_sub_fetch(&page->refcount, 1, __ATOMIC_ACQ_REL) == 0) {
		if (page->flags & PG_anon)
			count_inc(s, MMP_C_FOLIO_FREE);
		phys_free_pages(s->phys, pfn, page->order);
	}
}

/* Pin one more reference of a folio already referenced (try_grab_folio with FOLL_PIN). */
static void folio_pin(struct mmp_page *head)
{
	__atomic_fetch_add(&head->pincount, 1, __ATOMIC_RELAXED);
}

/*
 * A table a lockless walk reached must still be a live table: poison or a
 * recycled frame means it was freed under the walker (a missing grace period).
 */
static bool table_poisoned(struct mmp_space *s, mmp_pte_t e, const mmp_pte_t *table)
{
	uint64_t pfn = ((const uint8_t *)table - s->phys->base) >> PAGE_SHIFT;

	if (e != PT_POISON &&
	    (__atomic_load_n(&pfn_to_page(s->phys, pfn)->flags, __ATOMIC_ACQUIRE) & PG_table))
		return false;
	count_inc(s, MMP_C_PT_POISON_SEEN);
	return true;
}

static mmp_pte_t gup_read_leaf(struct mmp_space *s, mmp_pte_t *ep, enum mmp_level level)
{
	return level == MMP_PTE ? ptep_get_lockless(s, ep)
				: __atomic_load_n(ep, __ATOMIC_ACQUIRE);
}

/*
 * Pin one page through a leaf entry read locklessly at @ep. The folio is
 * grabbed speculatively (only if its count is not zero), then everything is
 * rechecked: that the frame is still a page of the same anonymous folio, that
 * the entry still maps it and, for a PTE, that the PMD @pmdp still holds
 * @pmd, the table it was read from: a collapse unlinks the table before it
 * checks the page references, and copies before it clears the PTEs, so only
 * the PMD tells that the page is on its way out (the kernel's recheck since
 * 70cbc3cc78a9, "fix the fast GUP race against THP collapse"). Otherwise
 * the grab is undone.
 */
static bool gup_fast_leaf(struct mmp_space *s, mmp_pte_t *pmdp, mmp_pte_t pmd, mmp_pte_t *ep,
			  enum mmp_level level, uint64_t addr, bool write, uint64_t *pfn_out)
{
	mmp_pte_t e = gup_read_leaf(s, ep, level);
	unsigned int f = entry_flags(s, e, level);
	uint64_t pfn;
	uint32_t head_pfn;
	struct mmp_page *head;

	if (e == PT_POISON) {
		count_inc(s, MMP_C_PT_POISON_SEEN);
		return false;
	}
	if (!(f & MMP_E_PRESENT) || (f & MMP_E_SPECIAL) || (write && !(f & MMP_E_WRITE)) ||
	    (level == MMP_PMD && !(f & MMP_E_LEAF)))
		return false;
	pfn = entry_pfn(s, e, level);
	if (level == MMP_PMD)
		pfn += level_index(addr, MMP_PTE);
	if (!phys_pfn_valid(s->phys, pfn))
		return false;
	head_pfn = folio_pfn(s->phys, pfn);
	head = pfn_to_page(s->phys, head_pfn);
	if (!folio_try_get(head))
		return false;
	/* Pairs with reclaim's clear, full barrier, read refcount: one of us sees the other. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* Pins of hugetlb pages are not modelled, as those of file pages are not. */
	if ((__atomic_load_n(&head->flags, __ATOMIC_ACQUIRE) &
	     (PG_head | PG_anon | PG_reserved | PG_hugetlb)) != (PG_head | PG_anon) ||
	    folio_pfn(s->phys, pfn) != head_pfn || gup_read_leaf(s, ep, level) != e ||
	    (level == MMP_PTE && __atomic_load_n(pmdp, __ATOMIC_ACQUIRE) != pmd)) {
		put_speculative(s, head_pfn);
		return false;
	}
	/* gup_must_unshare: a read pin of a shared page must go the slow way. */
	if (!write && !page_flag_test(pfn_to_page(s->phys, pfn), PG_anon_exclusive)) {
		put_speculative(s, head_pfn);
		return false;
	}
	folio_pin(head);
	*pfn_out = pfn;
	return true;
}

/*
 * Fault injection (MMP_DEBUG_PARK_GUP_FAST): stop here, the PTE table in
 * hand and IRQs off, until the test lets the walk go on.
 */
static void gup_fast_park(struct mmp_space *s)
{
	long armed = 1;

	if (!__atomic_compare_exchange_n(&s->debug[MMP_DEBUG_PARK_GUP_FAST], &armed, 2, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	while (__atomic_load_n(&s->debug[MMP_DEBUG_PARK_GUP_FAST], __ATOMIC_ACQUIRE) == 2)
		sched_yield();
}

/* The leaf entry for @addr, walked without locks; NULL when there is none. */
static mmp_pte_t *gup_fast_walk(struct mmp_space *s, uint64_t addr, enum mmp_level *level,
				mmp_pte_t **pmdp, mmp_pte_t *pmd)
{
	mmp_pte_t *table = space_table(s, s->pgd_pfn);

	for (enum mmp_level l = pgd_level(s); l > MMP_PTE; l--) {
		mmp_pte_t *ep = &table[level_index(addr, l)];
		mmp_pte_t e = __atomic_load_n(ep, __ATOMIC_ACQUIRE);
		unsigned int f = entry_flags(s, e, l);

		*pmdp = ep;	/* at the PMD level last: the table's entry */
		*pmd = e;

		if (l < pgd_level(s) && table_poisoned(s, e, table))
			return NULL;
		if (!(f & MMP_E_PRESENT))
			return NULL;
		if (f & MMP_E_LEAF) {
			*level = l;
			return l == MMP_PMD ? ep : NULL;
		}
		table = entry_table(s, e, l);
	}
	*level = MMP_PTE;
	debug_point(s, MMP_DEBUG_GUP_FAST_PMD);
	if (table_poisoned(s, 0, table))
		return NULL;
	if (unlikely(READ_ONCE(s->debug[MMP_DEBUG_PARK_GUP_FAST])))
		gup_fast_park(s);
	return &table[level_index(addr, MMP_PTE)];
}

/*
 * Counts are returned as int: a count that does not fit is refused rather than
 * turned negative.
 */
static int gup_check_range(struct mmp_space *s, uint64_t addr, unsigned int nr, uint64_t *pfns)
{
	if (!s || !pfns || (addr & (PAGE_SIZE - 1)) || nr > INT_MAX)
		return -EINVAL;
	if (addr >= TASK_SIZE(s) || nr > (TASK_SIZE(s) - addr) >> PAGE_SHIFT)
		return -EFAULT;
	return 0;
}

/* unpin_user_page: a pin must be there to drop (folio->_pincount). */
static bool folio_unpin(struct mmp_page *head)
{
	int pins = __atomic_load_n(&head->pincount, __ATOMIC_RELAXED);

	do {
		if (pins <= 0)
			return false;
	} while (!__atomic_compare_exchange_n(&head->pincount, &pins, pins - 1, false,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return true;
}

/* Give back pins GUP-fast took and never reported (not yet in phys->nr_pinned). */
static void gup_fast_unpin_user_pages(struct mmp_space *s, const uint64_t *pfns, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		uint32_t head_pfn = folio_pfn(s->phys, pfns[i]);

		MMP_BUG_ON(!folio_unpin(pfn_to_page(s->phys, head_pfn)));
		folio_put_refs(s, head_pfn, 1);
	}
}

MMP_EXPORT int mmp_gup_fast(struct mmp_space *s, uint64_t addr, unsigned int nr, bool write,
			    uint64_t *pfns)
{
	unsigned int got = 0, seq;
	int err = gup_check_range(s, addr, nr, pfns);
	uint64_t *irq;

	if (err)
		return err;
	/* A fork is write-protecting the tables: a pin now could be lost to COW. */
	if (!raw_seqcount_try_begin(&s->write_protect_seq, &seq)) {
		count_inc(s, MMP_C_GUP_FAST_BACKOFF);
		return 0;
	}
	/* local_irq_save: an RCU reader too, as the kernel's IRQs-off sections are. */
	rcu_read_lock();
	irq = local_irq_save(s);
	for (; got < nr; got++, addr += PAGE_SIZE) {
		enum mmp_level level;
		mmp_pte_t *pmdp = NULL, pmd = 0;
		mmp_pte_t *ep = gup_fast_walk(s, addr, &level, &pmdp, &pmd);

		if (!ep || !gup_fast_leaf(s, pmdp, pmd, ep, level, addr, write, &pfns[got])) {
			count_inc(s, MMP_C_GUP_FAST_BACKOFF);
			break;
		}
	}
	local_irq_restore(irq);
	rcu_read_unlock();
	/* Our pins are stored before the count is read again: pairs with copy_page_range. */
	smp_mb();
	if (got && read_seqcount_retry(&s->write_protect_seq, seq)) {
		/*
		 * A fork started: it may have missed our pins and shared the
		 * pages. Keep none; the caller falls back to mmp_gup(), which
		 * waits for the fork on the mmap lock.
		 */
		gup_fast_unpin_user_pages(s, pfns, got);
		count_inc(s, MMP_C_GUP_FAST_BACKOFF);
		return 0;
	}
	count_add(s, MMP_C_GUP_FAST, got);
	__atomic_fetch_add(&s->phys->nr_pinned, got, __ATOMIC_RELAXED);
	return got;
}

/* One page with the mmap lock held for reading: fault it in, then pin it under the PTL. */
static int gup_one(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr, bool write,
		   uint64_t *pfn)
{
	/*
	 * As __get_user_pages, look and fault until the page is there as asked:
	 * each fault makes it so, and only a concurrent zap (MADV_DONTNEED,
	 * reclaim) or split can undo that before we look again. The VMA cannot
	 * change under the mmap lock, so no error comes from trying again.
	 */
	for (;;) {
		mmp_pte_t *pmdp = pmd_offset(s, addr), *ptes, pte = 0;
		mmp_spinlock_t *ptl;
		unsigned int f;
		bool ok = false;
		int err;

		if (pmdp && entry_test(s, READ_ONCE(*pmdp), MMP_PMD, MMP_E_LEAF)) {
			spin_lock(&s->page_table_lock);
			pte = READ_ONCE(*pmdp);
			f = entry_flags(s, pte, MMP_PMD);
			if ((f & MMP_E_LEAF) && (f & MMP_E_PRESENT) && !(f & MMP_E_SPECIAL) &&
			    (!write || (f & MMP_E_WRITE)) &&
			    page_flag_test(pfn_to_page(s->phys, entry_pfn(s, pte, MMP_PMD)),
					   PG_anon_exclusive)) {
				*pfn = entry_pfn(s, pte, MMP_PMD) + level_index(addr, MMP_PTE);
				folio_ref_add(pfn_to_page(s->phys, entry_pfn(s, pte, MMP_PMD)), 1);
				folio_pin(pfn_to_page(s->phys, entry_pfn(s, pte, MMP_PMD)));
				ok = true;
			}
			spin_unlock(&s->page_table_lock);
		} else if (pmdp) {
			rcu_read_lock();
			ptes = pte_offset_map_lock(s, pmdp, &ptl);
			if (ptes) {
				pte = ptep_get(s, &ptes[level_index(addr, MMP_PTE)]);
				f = entry_flags(s, pte, MMP_PTE);
				if ((f & MMP_E_PRESENT) && !write &&
				    entry_pfn(s, pte, MMP_PTE) == s->phys->zero_pfn) {
					/*
					 * A read pin takes the shared zero page as it
					 * is mapped, with no reference: the zero page
					 * is never pinned (try_grab_folio, since 6.5).
					 * Only a long-term pin would unshare it.
					 */
					*pfn = s->phys->zero_pfn;
					ok = true;
				} else if ((f & MMP_E_PRESENT) && !(f & MMP_E_SPECIAL) &&
				    (!write || (f & MMP_E_WRITE)) &&
				    page_flag_test(pfn_to_page(s->phys, entry_pfn(s, pte, MMP_PTE)),
						   PG_anon_exclusive)) {
					*pfn = entry_pfn(s, pte, MMP_PTE);
					folio_ref_add(pfn_to_page(s->phys, folio_pfn(s->phys, *pfn)), 1);
					folio_pin(pfn_to_page(s->phys, folio_pfn(s->phys, *pfn)));
					ok = true;
				}
				spin_unlock(ptl);
			}
			rcu_read_unlock();
		}
		if (ok)
			return 0;
		/*
		 * Not there, read-only for a write pin, or shared (or the huge zero
		 * folio) for a read pin: fault like a user access, or unshare
		 * (FOLL_PIN, gup_must_unshare), so the pin and the mapping stay the
		 * same page.
		 */
		if (!write && pte)
			err = __handle_mm_fault(s, vma, addr, FAULT_FLAG_UNSHARE);
		else
			err = __handle_mm_fault(s, vma, addr, write ? FAULT_FLAG_WRITE : 0);
		mm_account_fault(s, err);
		if (err && err != VM_FAULT_FALLBACK)
			return err;
	}
}

/* The pins among @pfns that hold a folio: the shared zero page is handed out unpinned. */
static unsigned int real_pins(struct mmp_phys *phys, const uint64_t *pfns, unsigned int nr)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nr; i++)
		n += pfns[i] != phys->zero_pfn;
	return n;
}

MMP_EXPORT int mmp_gup(struct mmp_space *s, uint64_t addr, unsigned int nr, bool write,
		       uint64_t *pfns)
{
	unsigned int got = 0;
	int err = gup_check_range(s, addr, nr, pfns);

	if (err)
		return err;
	mmap_read_lock(s);
	count_inc(s, MMP_C_MMAP_LOCK_GUP);
	for (; got < nr; got++) {
		uint64_t va = addr + (uint64_t)got * PAGE_SIZE;
		struct mmp_vma *vma = find_vma(s, va);

		if (!vma || !(vma->flags & (write ? VM_WRITE : VM_READ | VM_WRITE))) {
			err = -EFAULT;
			break;
		}
		/* Pins of file and shared memory are not modelled (folios of no anon_vma). */
		if (!vma_is_anonymous(vma)) {
			err = -ENOTSUP;
			break;
		}
		err = gup_one(s, vma, va, write, &pfns[got]);
		if (err)
			break;
	}
	mmap_read_unlock(s);
	if (err) {
		/* All or nothing: give back what was taken. */
		__atomic_fetch_add(&s->phys->nr_pinned, real_pins(s->phys, pfns, got),
				   __ATOMIC_RELAXED);
		mmp_unpin(s, pfns, got);
		return err;
	}
	count_add(s, MMP_C_GUP_SLOW, got);
	__atomic_fetch_add(&s->phys->nr_pinned, real_pins(s->phys, pfns, got), __ATOMIC_RELAXED);
	return got;
}

/*
 * unpin_user_pages: all or nothing. Needs no mm, as a pin holds its folio
 * whatever happens to the mappings: @s, when there is one, only counts a folio
 * the last pin frees.
 */
static int unpin_user_pages(struct mmp_phys *phys, struct mmp_space *s, const uint64_t *pfns,
			    unsigned int nr)
{
	unsigned int i;

	if (!pfns && nr)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		struct mmp_page *head;

		if (pfns[i] == phys->zero_pfn)
			continue;	/* never pinned: nothing to drop (gup_put_folio) */
		if (!phys_pfn_valid(phys, pfns[i]))
			break;
		head = pfn_to_page(phys, folio_pfn(phys, pfns[i]));
		if (!(head->flags & PG_head) || (head->flags & PG_reserved) || !folio_unpin(head))
			break;
	}
	if (i < nr) {
		/* Refuse the whole call: put back the pins already taken off. */
		while (i-- > 0)
			if (pfns[i] != phys->zero_pfn)
				folio_pin(pfn_to_page(phys, folio_pfn(phys, pfns[i])));
		return -EINVAL;
	}
	for (i = 0; i < nr; i++) {
		if (pfns[i] != phys->zero_pfn &&
		    __folio_put_refs(phys, folio_pfn(phys, pfns[i]), 1) && s)
			count_inc(s, MMP_C_FOLIO_FREE);
	}
	__atomic_fetch_sub(&phys->nr_pinned, real_pins(phys, pfns, nr), __ATOMIC_RELAXED);
	return 0;
}

MMP_EXPORT int mmp_unpin(struct mmp_space *s, const uint64_t *pfns, unsigned int nr)
{
	if (!s)
		return -EINVAL;
	return unpin_user_pages(s->phys, s, pfns, nr);
}

MMP_EXPORT int mmp_phys_unpin(struct mmp_phys *phys, const uint64_t *pfns, unsigned int nr)
{
	if (!phys)
		return -EINVAL;
	return unpin_user_pages(phys, NULL, pfns, nr);
}
