/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/PID/clear_refs (fs/proc/task_mmu.c's clear_refs_write): 1, 2 and 3
 * make the pages of every VMA, of anonymous VMAs or of file VMAs old (the
 * accessed bit, as reclaim and smaps Referenced read it); 4 starts a new
 * soft-dirty round: VM_SOFTDIRTY and every entry's soft-dirty bit cleared,
 * the entries write-protected so that the next write faults and marks its
 * page again (do_wp_page's reuse makes it dirty and soft-dirty); 5 resets
 * VmHWM to the RSS now.
 */
#include "filemap.h"
#include "huge_mm.h"
#include "mm.h"
#include "mmap_lock.h"
#include "rcu.h"

enum clear_refs_types {
	CLEAR_REFS_ALL = 1,
	CLEAR_REFS_ANON,
	CLEAR_REFS_MAPPED,
	CLEAR_REFS_SOFT_DIRTY,
	CLEAR_REFS_MM_HIWATER_RSS,
	CLEAR_REFS_LAST,
};

struct clear_refs_walk {
	struct mmp_vma *vma;
	int type;
};

/*
 * pte_is_pinned: an anonymous page GUP may have pinned in a private mapping
 * keeps its write permission, or the next write would copy it away from the
 * pin (the kernel asks only once the mm ever pinned: the answer is the same).
 */
static bool pte_is_pinned(const struct mmp_vma *vma, const struct mmp_page *head)
{
	return !(vma->flags & VM_SHARED) && (head->flags & PG_anon) &&
	       READ_ONCE(head->pincount) > 0;
}

static void clear_refs_pte_range(struct mmp_space *s, struct clear_refs_walk *w, mmp_pte_t *pmdp,
				 uint64_t addr, uint64_t end)
{
	mmp_spinlock_t *ptl;
	mmp_pte_t *ptes, *ptep;

	rcu_read_lock();
	ptes = pte_offset_map_lock(s, pmdp, &ptl);
	if (!ptes)
		goto out;
	ptep = &ptes[level_index(addr, MMP_PTE)];
	for (; addr < end; addr += PAGE_SIZE, ptep++) {
		mmp_pte_t pte = ptep_get(s, ptep);
		unsigned int f = entry_flags(s, pte, MMP_PTE);
		struct mmp_page *head;

		if (!entry_present(f))
			continue;	/* a marker has no soft-dirty bit to clear here */
		if (f & MMP_E_SPECIAL) {
			/* The zero page: no folio to age, but its bits go as any entry's. */
			if (w->type == CLEAR_REFS_SOFT_DIRTY && (f & (MMP_E_WRITE | MMP_E_SOFT_DIRTY)))
				ptep_modify_counted(s, ptep, 0, MMP_E_WRITE | MMP_E_SOFT_DIRTY);
			continue;
		}
		head = pfn_to_page(s->phys, folio_pfn(s->phys, entry_pfn(s, pte, MMP_PTE)));
		if (w->type == CLEAR_REFS_SOFT_DIRTY) {
			if (pte_is_pinned(w->vma, head))
				continue;
			if (f & (MMP_E_WRITE | MMP_E_SOFT_DIRTY))
				ptep_modify_counted(s, ptep, 0, MMP_E_WRITE | MMP_E_SOFT_DIRTY);
			continue;
		}
		if (f & MMP_E_ACCESSED)
			ptep_test_and_clear_young(s, addr, ptep);
	}
	spin_unlock(ptl);
out:
	rcu_read_unlock();
}

static int clear_refs_pmd(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t addr, uint64_t end,
			  void *arg)
{
	struct clear_refs_walk *w = arg;
	mmp_pte_t pmd = READ_ONCE(*pmdp);
	unsigned int f = entry_flags(s, pmd, MMP_PMD);

	if (!pmd)
		return 0;
	if (f & MMP_E_LEAF) {
		spin_lock(&s->page_table_lock);
		pmd = READ_ONCE(*pmdp);
		f = entry_flags(s, pmd, MMP_PMD);
		if ((f & MMP_E_LEAF) && entry_present(f)) {
			unsigned int clear = w->type == CLEAR_REFS_SOFT_DIRTY ?
					     MMP_E_WRITE | MMP_E_SOFT_DIRTY : MMP_E_ACCESSED;

			/* The whole huge page, even when the walk covers only part of it. */
			if (f & clear) {
				ptep_modify(s, pmdp, MMP_PMD, 0, clear);
				count_inc(s, MMP_C_PMD_WRITE);
			}
			spin_unlock(&s->page_table_lock);
			return 0;
		}
		spin_unlock(&s->page_table_lock);
		if (f & MMP_E_LEAF)
			return 0;
	}
	clear_refs_pte_range(s, w, pmdp, addr, end);
	return 0;
}

/* The type's filter (clear_refs_test_walk). */
static bool clear_refs_skip(const struct mmp_vma *vma, int type)
{
	if (type == CLEAR_REFS_ANON && vma->vm_file)
		return true;
	if (type == CLEAR_REFS_MAPPED && !vma->vm_file)
		return true;
	return false;
}

MMP_EXPORT int mmp_space_clear_refs(struct mmp_space *s, int type)
{
	struct clear_refs_walk w = { .type = type };
	bool soft_dirty = type == CLEAR_REFS_SOFT_DIRTY;

	if (!s || type < CLEAR_REFS_ALL || type >= CLEAR_REFS_LAST)
		return -EINVAL;
	mmap_write_lock(s);
	if (type == CLEAR_REFS_MM_HIWATER_RSS) {
		reset_mm_hiwater_rss(s);
		goto out;
	}
	if (soft_dirty) {
		/* Without CONFIG_MEM_SOFT_DIRTY there is nothing to clear: only the flush. */
		if (!mm_soft_dirty(s))
			goto flush;
		for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next) {
			if (!(vma->flags & VM_SOFTDIRTY))
				continue;
			vma_start_write(s, vma);
			WRITE_ONCE(vma->flags, vma->flags & ~VM_SOFTDIRTY);
			/* A shared writable VMA now wants its writes noticed. */
			vma_set_page_prot(s, vma);
		}
		inc_tlb_flush_pending(s);
	}
	for (w.vma = s->vmas.first; w.vma; w.vma = w.vma->vm_next) {
		if (clear_refs_skip(w.vma, type))
			continue;
		/* hugetlb entries are not walked (the kernel has no hugetlb_entry here). */
		if (unlikely(is_vm_hugetlb_page(w.vma)))
			continue;
		walk_pmd_range(s, w.vma->start, w.vma->end, clear_refs_pmd, &w);
	}
flush:
	flush_tlb_mm(s);
	if (soft_dirty && mm_soft_dirty(s))
		dec_tlb_flush_pending(s);
out:
	WRITE_ONCE(s->last_op, "mmp_space_clear_refs");
	mmap_write_unlock(s);
	return 0;
}
