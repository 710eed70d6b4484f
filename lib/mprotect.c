/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mprotect: split the VMAs at the range ends, change the flags, rewrite every
 * entry (change_protection) and flush the range once, then merge again.
 */
#include "mm.h"
#include "mmap_lock.h"

struct change_prot {
	unsigned long vm_flags;
	bool writenotify;	/* a shared mapping whose clean pages stay read-only */
	unsigned long pages;	/* entries whose bits changed */
};

/*
 * May the entry be made writable right away (can_change_pte_writable)? An
 * exclusive anonymous page, or a page of a shared mapping that is dirty
 * already or whose writes need not be noticed (@shared: 1 for such a
 * mapping, 2 for one with write-notify).
 */
static __always_inline bool may_write(unsigned int shared, unsigned int f, bool exclusive)
{
	if (unlikely(shared))
		return shared == 1 || (f & MMP_E_DIRTY);
	return exclusive;
}

/* New bits for a present or PROT_NONE entry under @vm_flags (pte_modify). */
static unsigned int modify_flags(unsigned int f, unsigned long vm_flags, bool exclusive)
{
	f &= ~(MMP_E_PRESENT | MMP_E_PROTNONE | MMP_E_NOEXEC);
	f |= vm_flags & VM_ACCESS_FLAGS ? MMP_E_PRESENT : MMP_E_PROTNONE;
	if (!(vm_flags & VM_EXEC))
		f |= MMP_E_NOEXEC;
	if (!(vm_flags & VM_WRITE))
		f &= ~MMP_E_WRITE;
	else if (exclusive)
		f |= MMP_E_WRITE;	/* MM_CP_TRY_CHANGE_WRITABLE: an exclusive anon page */
	return f;
}

static __always_inline bool pte_page_exclusive(struct mmp_space *s, mmp_pte_t pte)
{
	return page_flag_test(pfn_to_page(s->phys, entry_pfn(s, pte, MMP_PTE)), PG_anon_exclusive);
}

/*
 * How many entries from @ptep change together (mprotect_folio_pte_batch): a
 * run of one large folio with the same write and soft-dirty bits.
 */
static unsigned int mprotect_folio_pte_batch(struct mmp_space *s, mmp_pte_t *ptep, mmp_pte_t pte,
					     unsigned int max_nr)
{
	uint64_t pfn = entry_pfn(s, pte, MMP_PTE);

	if (!pfn_to_page(s->phys, folio_pfn(s->phys, pfn))->order)
		return 1;
	/* Dirty bits may differ: modify_prot_start_ptes gathers them over the batch. */
	return folio_pte_batch_flags(s, ptep, &pte, max_nr,
				     FPB_RESPECT_WRITE | FPB_RESPECT_SOFT_DIRTY);
}

/*
 * One entry through modify_prot_start/commit (ptep_get_and_clear, set_ptes of
 * one): the path before 6.17 for every entry, and the small-folio branch after.
 * On arm64 the first entry of a contpte block unfolds it and the last folds it.
 */
static void change_one_pte(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
			   unsigned long vm_flags, bool write)
{
	mmp_pte_t old = ptep_get_and_clear(s, addr, ptep);
	unsigned int f = entry_flags(s, old, MMP_PTE);

	set_ptes(s, addr, ptep, mk_entry(s, entry_pfn(s, old, MMP_PTE),
					 modify_flags(f & ~MMP_E_CONT, vm_flags, write), MMP_PTE), 1);
}

/*
 * A batch of @nr entries of one folio (6.17): cleared together with A/D
 * gathered (modify_prot_start_ptes), then written back in runs of pages with
 * the same PG_anon_exclusive where a write may be granted to some of them
 * (commit_anon_folio_batch), in one set_ptes each: a contpte block is
 * rewritten without unfolding.
 */
static void change_pte_batch(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
			     unsigned int nr, unsigned long vm_flags, unsigned int shared)
{
	mmp_pte_t old = get_and_clear_full_ptes(s, addr, ptep, nr, 0);
	unsigned int f = entry_flags(s, old, MMP_PTE) & ~MMP_E_CONT;
	uint64_t pfn = entry_pfn(s, old, MMP_PTE);
	struct mmp_page *page = pfn_to_page(s->phys, pfn);
	bool by_page = !shared && (vm_flags & VM_WRITE) && !(f & MMP_E_WRITE);
	unsigned int i = 0, len;

	do {
		bool exclusive = shared ? may_write(shared, f, false) :
			by_page && page_flag_test(page + i, PG_anon_exclusive);

		for (len = 1; by_page && i + len < nr; len++)
			if (page_flag_test(page + i + len, PG_anon_exclusive) != exclusive)
				break;
		if (!by_page)
			len = nr;
		set_ptes(s, addr + ((uint64_t)i << PAGE_SHIFT), ptep + i,
			 mk_entry(s, pfn + i, modify_flags(f, vm_flags, exclusive), MMP_PTE), len);
		i += len;
	} while (i < nr);
}

/*
 * change_pte_range, as three releases have it:
 *  - before 6.17, one entry at a time; the page is read only to decide
 *    whether a write may be granted (can_change_pte_writable);
 *  - 6.17, every present entry's folio is looked up and its run batched
 *    (mprotect_folio_pte_batch), a small folio's run of one included;
 *  - from 7.1 (MMP_OPT_MPROTECT_SMALL_FOLIO), a small folio's entry takes
 *    the one-entry path again, its folio still looked up.
 */
static void change_pte_range(struct mmp_space *s, mmp_pte_t *ptes, uint64_t addr, uint64_t end,
			     struct change_prot *cp)
{
	mmp_spinlock_t *ptl = pte_lockptr(s, ptes);
	mmp_pte_t *ptep = &ptes[level_index(addr, MMP_PTE)];
	unsigned long vm_flags = cp->vm_flags, pages = 0;
	unsigned int shared = vm_flags & VM_SHARED ? 1 + cp->writenotify : 0;
	bool batch = pte_batching(s) && release_follows(s, RULE_MPROTECT_PTE_BATCH);
	bool small_branch = !batch || mprotect_small_folio_branch(s);
	unsigned int nr;

	spin_lock(ptl);
	for (; addr < end; addr += nr * PAGE_SIZE, ptep += nr) {
		mmp_pte_t old = ptep_get(s, ptep);
		bool exclusive = false;
		unsigned int f;

		nr = 1;
		if (!old)
			continue;
		f = entry_flags(s, old, MMP_PTE);
		if (unlikely(!entry_present(f)))
			continue;	/* a guard marker: mprotect leaves it */
		if (!(f & MMP_E_SPECIAL)) {
			if (batch)
				nr = mprotect_folio_pte_batch(s, ptep, old, (end - addr) >> PAGE_SHIFT);
			if (batch || (!shared && (vm_flags & VM_WRITE) && !(f & MMP_E_WRITE)))
				exclusive = pte_page_exclusive(s, old);
		}
		if (modify_flags(f, vm_flags, may_write(shared, f, exclusive)) == f && nr == 1)
			continue;
		if (nr == 1 && small_branch)
			change_one_pte(s, addr, ptep, vm_flags, may_write(shared, f, exclusive));
		else
			change_pte_batch(s, addr, ptep, nr, vm_flags, shared);
		pages += nr;
	}
	spin_unlock(ptl);
	cp->pages += pages;
}

static int change_pmd(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t addr, uint64_t end, void *arg)
{
	struct change_prot *cp = arg;
	mmp_pte_t pmd = READ_ONCE(*pmdp);

	if (!pmd)
		return 0;
	if (entry_test(s, pmd, MMP_PMD, MMP_E_LEAF)) {
		if (addr == (addr & PMD_MASK) && end - addr == PMD_SIZE) {
			unsigned int f = entry_flags(s, pmd, MMP_PMD), nf;
			bool exclusive = !(f & MMP_E_SPECIAL) &&
					 page_flag_test(pfn_to_page(s->phys, entry_pfn(s, pmd, MMP_PMD)),
							PG_anon_exclusive);

			spin_lock(&s->page_table_lock);
			nf = modify_flags(f, cp->vm_flags, exclusive);
			if (nf != f) {
				ptep_modify(s, pmdp, MMP_PMD, nf & ~f, f & ~nf);
				count_inc(s, MMP_C_PMD_WRITE);
				cp->pages += HPAGE_PMD_NR;
			}
			spin_unlock(&s->page_table_lock);
			return 0;
		}
		split_huge_pmd(s, pmdp, addr & PMD_MASK);
		pmd = READ_ONCE(*pmdp);
	}
	if (pte_table(s, pmd))
		change_pte_range(s, pte_table(s, pmd), addr, end, cp);
	return 0;
}

/*
 * What one mprotect asks, and the pieces it must populate afterwards: those
 * that were locked, private and not writable and turn writable. There are as
 * many as locked read-only VMAs in the range; an allocation that fails leaves
 * a piece unpopulated, as populate_vma_page_range's errors are ignored too.
 */
struct mprotect_walk {
	unsigned long vm_flags;
	struct populate_piece {
		uint64_t start, end;
	} *pieces;
	size_t nr, cap;
};

static void populate_later(struct mprotect_walk *w, uint64_t start, uint64_t end)
{
	if (w->nr && w->pieces[w->nr - 1].end == start) {
		w->pieces[w->nr - 1].end = end;
		return;
	}
	if (w->nr == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 4;
		struct populate_piece *p = realloc(w->pieces, cap * sizeof(*p));

		if (!p)
			return;
		w->pieces = p;
		w->cap = cap;
	}
	w->pieces[w->nr++] = (struct populate_piece){ start, end };
}

/*
 * The VMA's new flags (mprotect_fixup): private memory turning writable is
 * charged from now on (not hugetlb or MAP_NORESERVE memory); anonymous memory never faulted in is uncharged when it
 * turns read-only (a file mapping keeps its charge). The charge is a VMA flag,
 * so it decides merges.
 */
static unsigned long mprotect_flags(const struct mmp_vma *vma, void *arg)
{
	unsigned long vm_flags = ((struct mprotect_walk *)arg)->vm_flags;
	unsigned long flags = (vma->flags & ~VM_ACCESS_FLAGS) | vm_flags;

	if (flags == vma->flags)
		return flags;	/* nothing changes, not even the charge */
	if ((vm_flags & VM_WRITE) &&
	    !(vma->flags & (VM_ACCOUNT | VM_WRITE | VM_DROPPABLE | VM_SHARED | VM_HUGETLB |
			    VM_NORESERVE)))
		flags |= VM_ACCOUNT;
	else if (!(vm_flags & VM_WRITE) && !vma->anon_vma && vma_is_anonymous(vma))
		flags &= ~VM_ACCOUNT;
	return flags;
}

/* Rewrite every entry of @vma for @flags (change_protection) and flush once. */
static void mprotect_fixup(struct mmp_space *s, struct mmp_vma *vma, unsigned long flags,
			   void *arg)
{
	struct change_prot cp = { .vm_flags = flags };

	/*
	 * A locked private VMA made writable is populated, so that its pages
	 * stay resident through the COW a write would do; one already
	 * writable is left as it is, populated or not (a failed mlock).
	 */
	if ((vma->flags & (VM_WRITE | VM_SHARED | VM_LOCKED)) == VM_LOCKED && (flags & VM_WRITE))
		populate_later(arg, vma->start, vma->end);

	/* The flags are not the VMA's yet: ask as if they were. */
	cp.writenotify = (flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE) &&
			 mapping_can_writeback(vma->vm_file);

	inc_tlb_flush_pending(s);
	if (unlikely(is_vm_hugetlb_page(vma))) {
		/* hugetlb_change_protection, then flush_hugetlb_tlb_range at its page size. */
		if (hugetlb_change_protection(s, vma, flags))
			flush_tlb_range(s, vma->start, vma->end, level_shift(hstate_vma(vma)->level));
		dec_tlb_flush_pending(s);
		return;
	}
	walk_pmd_range(s, vma->start, vma->end, change_pmd, &cp);
	if (cp.pages)
		flush_tlb_range(s, vma->start, vma->end, PAGE_SHIFT);
	dec_tlb_flush_pending(s);
}

MMP_EXPORT int mmp_mprotect(struct mmp_space *s, uint64_t start, uint64_t len, int prot)
{
	int grows = prot & (MMP_PROT_GROWSDOWN | MMP_PROT_GROWSUP);
	struct mprotect_walk w = { 0 };
	unsigned long vm_flags;
	uint64_t end, addr;
	struct mmp_vma *vma, *first;
	int err = 0, split;

	/* do_mprotect_pkey's order: both directions, alignment, length, then the protection. */
	prot &= ~grows;
	vm_flags = calc_vm_prot_bits(prot);
	if (!s || grows == (MMP_PROT_GROWSDOWN | MMP_PROT_GROWSUP))
		return -EINVAL;
	if (start & (PAGE_SIZE - 1))
		return -EINVAL;
	if (!len)
		return 0;
	len = (len + PAGE_SIZE - 1) & PAGE_MASK;
	end = start + len;
	/* No upper bound: the walk below stops at the hole past the last VMA. */
	if (!len || end <= start)
		return -ENOMEM;
	if (prot & ~MMP_PROT_ALL)
		return -EINVAL;

	mmap_write_lock(s);
	/*
	 * The first VMA of the range decides the direction flags: GROWSDOWN
	 * takes the range down to the start of a stack, GROWSUP would take it
	 * up to its end, but no VMA here grows up (VM_GROWSUP is parisc's).
	 */
	vma = vma_find_next(s, start);
	if (!vma || vma->start >= end) {
		err = -ENOMEM;
		goto out;
	}
	if (grows & MMP_PROT_GROWSDOWN) {
		if (!(vma->flags & VM_GROWSDOWN)) {
			err = -EINVAL;
			goto out;
		}
		start = vma->start;
	} else if (vma->start > start) {
		err = -ENOMEM;
		goto out;
	} else if (grows & MMP_PROT_GROWSUP) {
		err = -EINVAL;
		goto out;
	}
	first = vma;	/* the VMA at @start */
	/*
	 * The range must start in a VMA. VMAs are changed one after the other
	 * until a hole, which then fails the call with -ENOMEM, or a shared
	 * mapping of a file opened read-only asked to become writable
	 * (-EACCES): what came before keeps the new protection, as the kernel
	 * leaves it.
	 */
	for (addr = start, vma = first; addr < end; vma = vma->vm_next) {
		if (!vma || vma->start > addr)
			break;
		if ((vm_flags & VM_WRITE) && (vma->flags & VM_SHARED) && !(vma->flags & VM_MAYWRITE)) {
			err = -EACCES;
			break;
		}
		/* mprotect_fixup: a sealed VMA refuses, even the protection it has. */
		if (vma->flags & VM_SEALED) {
			err = -EPERM;
			break;
		}
		addr = vma->end;
	}
	if (addr == start) {
		err = err ? err : -ENOMEM;
		goto out;
	}
	if (addr < end) {
		err = err ? err : -ENOMEM;
		end = addr;
	}
	w.vm_flags = vm_flags;
	split = vma_modify_flags(s, start, end, mprotect_flags, mprotect_fixup, &w);
	if (split)
		err = split;
	WRITE_ONCE(s->last_op, "mmp_mprotect");
out:
	mmap_write_unlock(s);
	/* The kernel populates under the mmap lock; the faults here take it themselves. */
	for (size_t i = 0; i < w.nr; i++)
		mm_populate(s, w.pieces[i].start, w.pieces[i].end, true);
	free(w.pieces);
	return err;
}
