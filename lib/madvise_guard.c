/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Guard regions (Linux 6.13): MADV_GUARD_INSTALL writes a PTE marker
 * (PTE_MARKER_GUARD, swapops.h) into every PTE of the range, so that any
 * access faults with SIGSEGV (-EFAULT here) at no cost in VMAs;
 * MADV_GUARD_REMOVE clears the markers and nothing else. Install zaps what is
 * mapped in the range first, a PMD-mapped THP included (split when the range
 * covers part of it), and allocates the page tables the markers need; the
 * zap keeps markers already there. Both run under the mmap read lock.
 *
 * Which VMAs: 6.13 and 6.14 took anonymous private memory only; from 6.15
 * ("allow guard regions in file-backed and read-only mappings") any VMA that
 * is not VM_SPECIAL, hugetlb or (for install) mlocked, none of which the
 * library models. So that fork copies the VMA's page tables and with them
 * the markers, install gives the VMA an anon_vma (6.13 to 6.18); from 6.19
 * ("mm: set the VM_MAYBE_GUARD flag on guard region install", 49e14dabed7a)
 * it sets the VMA flag VM_MAYBE_GUARD under the read lock, which neither
 * blocks a merge nor is lost by one, and only an anonymous VMA still gets an
 * anon_vma. 6.18.y stable took the series (a 6.18.44 host shows "gu").
 */
#include "mm.h"
#include "mmap_lock.h"
#include "rcu.h"
#include "release.h"

static bool is_valid_guard_vma(struct mmp_space *s, struct mmp_vma *vma)
{
	/* Never hugetlb, whose entries are no PTEs to hold markers. */
	if (is_vm_hugetlb_page(vma))
		return false;
	return vma_is_anonymous(vma) || release_follows(s, RULE_GUARD_ANY_VMA);
}

/*
 * Install markers in the none PTEs of [addr, end), one PMD's worth. 0 when
 * every PTE now holds a guard marker, 1 when something is mapped there (a
 * THP, or a present or other PTE: the caller zaps and tries again), -ENOMEM
 * when a table could not be had.
 */
static int guard_install_pmd(struct mmp_space *s, uint64_t addr, uint64_t end)
{
	mmp_pte_t *pmdp = pmd_alloc(s, addr), *ptes, *ptep;
	mmp_pte_t marker = make_pte_marker(s, PTE_MARKER_GUARD);
	mmp_spinlock_t *ptl;
	int ret = 0;

	if (!pmdp)
		return -ENOMEM;
	for (;;) {
		mmp_pte_t pmd = READ_ONCE(*pmdp);

		if (pmd && entry_test(s, pmd, MMP_PMD, MMP_E_LEAF))
			return 1;	/* guard_install_pmd_entry: zap (or split) it first */
		if (!pmd && pte_alloc(s, pmdp))
			return -ENOMEM;
		rcu_read_lock();
		ptes = pte_offset_map_lock(s, pmdp, &ptl);
		if (ptes)
			break;
		rcu_read_unlock();	/* freed or replaced meanwhile: look again */
	}
	ptep = &ptes[level_index(addr, MMP_PTE)];
	for (; addr < end; addr += PAGE_SIZE, ptep++) {
		mmp_pte_t pte = ptep_get(s, ptep);

		if (!pte) {
			/* guard_install_set_pte: a none entry, so nothing to flush. */
			__atomic_store_n(ptep, marker, __ATOMIC_RELEASE);
			count_inc(s, MMP_C_PTE_WRITE);
		} else if (!is_guard_pte_marker(s, pte)) {
			ret = 1;
			break;
		}
	}
	spin_unlock(ptl);
	rcu_read_unlock();
	return ret;
}

static int guard_install_range(struct mmp_space *s, uint64_t start, uint64_t end)
{
	for (uint64_t addr = start, next; addr < end; addr = next) {
		int ret;

		next = level_addr_end(addr, end, MMP_PMD);
		ret = guard_install_pmd(s, addr, next);
		if (ret)
			return ret;
	}
	return 0;
}

/* madvise_guard_install for [start, end) of @vma, mmap read lock held. */
static int madvise_guard_install_vma(struct mmp_space *s, struct mmp_vma *vma, uint64_t start,
				     uint64_t end)
{
	int ret;

	if (!is_valid_guard_vma(s, vma))
		return -EINVAL;
	if (release_follows(s, RULE_GUARD_VMA_FLAG))
		__atomic_or_fetch(&vma->flags, VM_MAYBE_GUARD, __ATOMIC_RELAXED);
	/* An anonymous VMA with page tables has an anon_vma, from 6.19 too. */
	if ((vma_is_anonymous(vma) || !release_follows(s, RULE_GUARD_VMA_FLAG)) &&
	    anon_vma_prepare(s, vma))
		return -ENOMEM;
	WRITE_ONCE(s->has_pte_markers, true);
	/*
	 * Optimistically install; where something is mapped, zap the range
	 * (markers stay) and try again. The kernel gives up after a few racing
	 * faults and restarts the system call; here the loop is that restart.
	 */
	while ((ret = guard_install_range(s, start, end)) > 0) {
		struct mmp_gather tlb;

		update_hiwater_rss(s);
		tlb_gather_mmu(&tlb, s, false);
		tlb.drop_markers = false;
		unmap_page_range(&tlb, start, end);
		tlb_finish_mmu(&tlb);
	}
	return ret;
}

/* guard_remove_pte_entry over one PTE table: clear the guard markers only. */
static int guard_remove_pmd(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t addr, uint64_t end,
			    void *arg)
{
	mmp_spinlock_t *ptl;
	mmp_pte_t *ptes, *ptep;

	(void)arg;
	if (!READ_ONCE(*pmdp))
		return 0;
	rcu_read_lock();
	/* A huge PMD holds no markers: pte_offset_map_lock finds no table. */
	ptes = pte_offset_map_lock(s, pmdp, &ptl);
	if (!ptes) {
		rcu_read_unlock();
		return 0;
	}
	ptep = &ptes[level_index(addr, MMP_PTE)];
	for (; addr < end; addr += PAGE_SIZE, ptep++)
		if (is_guard_pte_marker(s, ptep_get(s, ptep)))
			ptep_get_and_clear(s, addr, ptep);	/* not present: no flush */
	spin_unlock(ptl);
	rcu_read_unlock();
	return 0;
}

/*
 * MADV_GUARD_INSTALL / MADV_GUARD_REMOVE over [start, end): VMA by VMA, the
 * first error stops it (the VMAs before keep what was done); a hole is
 * reported with -ENOMEM after the mapped parts were done. Before 6.13 the
 * advices do not exist: -EINVAL.
 */
int madvise_guard(struct mmp_space *s, uint64_t start, uint64_t end, bool install)
{
	uint64_t addr = start;
	bool hole = false;
	int err = 0;

	if (!release_follows(s, RULE_GUARD_REGIONS))
		return -EINVAL;
	mmap_read_lock(s);
	count_inc(s, MMP_C_MMAP_LOCK_MADVISE);
	for (struct mmp_vma *vma = vma_find_next(s, start); addr < end; vma = vma->vm_next) {
		uint64_t lo, hi;

		if (!vma || vma->start >= end) {
			hole = true;
			break;
		}
		if (vma->start > addr)
			hole = true;
		lo = MAX(addr, vma->start);
		hi = MIN(end, vma->end);
		if (install)
			err = madvise_guard_install_vma(s, vma, lo, hi);
		else if (!is_valid_guard_vma(s, vma))
			err = -EINVAL;
		else
			walk_pmd_range(s, lo, hi, guard_remove_pmd, NULL);
		if (err)
			break;
		addr = hi;
	}
	WRITE_ONCE(s->last_op, install ? "mmp_madvise(MADV_GUARD_INSTALL)" :
					 "mmp_madvise(MADV_GUARD_REMOVE)");
	mmap_read_unlock(s);
	return err ? err : hole ? -ENOMEM : 0;
}
