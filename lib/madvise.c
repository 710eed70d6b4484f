/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * madvise: MADV_DONTNEED zaps under the mmap read lock through an mmu_gather
 * (in a file mapping only the mapping goes: the page cache keeps the folio),
 * from 6.17 under the lock of the one VMA the range lies in, as MADV_FREE;
 * MADV_FREE makes exclusive anonymous folios lazyfree and refuses file and
 * shared memory; MADV_PAGEOUT isolates folios this mm maps alone and
 * reclaims them now; the advices that change VMA flags (MADV_HUGEPAGE, the
 * fork and KSM advices, ...) and MADV_REMOVE are in madvise_behavior.c;
 * MADV_COLLAPSE is khugepaged's (lib/khugepaged.c), guard regions are in
 * madvise_guard.c; mmp_process_madvise() takes a vector.
 */
#include <limits.h>

#include "mm.h"
#include "mmap_lock.h"
#include "rcu.h"

/* Is [start, end) fully mapped? madvise reports holes with -ENOMEM after acting. */
static bool range_has_hole_locked(struct mmp_space *s, uint64_t start, uint64_t end)
{
	uint64_t addr = start;

	mmap_assert_locked(s);
	for (struct mmp_vma *vma = vma_find_next(s, start); addr < end; vma = vma->vm_next) {
		if (!vma || vma->start > addr)
			return true;
		addr = vma->end;
	}
	return false;
}

/*
 * MADV_DONTNEED of [lo, hi) of @vma into @tlb (madvise_dontneed_single_vma),
 * under the mmap lock or @vma's own. A hugetlb VMA takes whole huge pages
 * only: its part of the range must start on one (-EINVAL, the VMAs before
 * keep the advice) and ends rounded down, so no more goes than was asked
 * (madvise_dontneed_free_valid_vma).
 */
static int madvise_dontneed_single_vma(struct mmp_gather *tlb, struct mmp_vma *vma, uint64_t lo,
				       uint64_t hi)
{
	if (unlikely(is_vm_hugetlb_page(vma))) {
		uint64_t sz = huge_page_size(hstate_vma(vma));

		if (lo & (sz - 1))
			return -EINVAL;
		hi &= ~(sz - 1);
		if (lo >= hi)
			return 0;
	}
	update_hiwater_rss(tlb->s);	/* zap_page_range_single_batched: before the RSS drops */
	unmap_single_vma(tlb, vma, lo, hi);
	return 0;
}

/* MADV_DONTNEED of [start, end) into @tlb, VMA by VMA, the mmap lock held. */
static int madvise_dontneed_range(struct mmp_gather *tlb, uint64_t start, uint64_t end)
{
	mmap_assert_locked(tlb->s);
	tlb->drop_markers = false;	/* guard markers stay */
	for (struct mmp_vma *vma = vma_find_next(tlb->s, start); vma && vma->start < end;
	     vma = vma->vm_next) {
		int err = madvise_dontneed_single_vma(tlb, vma, MAX(start, vma->start),
						      MIN(end, vma->end));

		if (err)
			return err;
	}
	return 0;
}

/* MADV_DONTNEED under the mmap read lock; *@hole says whether the range has one. */
static int madvise_dontneed(struct mmp_space *s, uint64_t start, uint64_t end, bool *hole)
{
	struct mmp_gather tlb;
	int err;

	mmap_read_lock(s);
	count_inc(s, MMP_C_MMAP_LOCK_MADVISE);
	*hole = range_has_hole_locked(s, start, end);
	tlb_gather_mmu(&tlb, s, false);
	tlb.reclaim_pt = true;	/* zap_details.reclaim_pt */
	err = madvise_dontneed_range(&tlb, start, end);
	tlb_finish_mmu(&tlb);
	WRITE_ONCE(s->last_op, "mmp_madvise(MADV_DONTNEED)");
	mmap_read_unlock(s);
	return err;
}

/*
 * Is every page of the folio in [page, page + nr) mapped by this mm alone?
 * An anonymous page says so itself (PG_anon_exclusive); a file folio is
 * taken as shared when anything beyond these @nr entries maps it
 * (folio_maybe_mapped_shared).
 */
static bool folio_range_exclusive(struct mmp_page *head, struct mmp_page *page, unsigned int nr)
{
	if (!(head->flags & PG_anon))
		return folio_mapcount(head) <= (int)nr;
	for (unsigned int i = 0; i < nr; i++)
		if (!page_flag_test(page + i, PG_anon_exclusive))
			return false;
	return true;
}

/*
 * A page-cache folio that MADV_COLD or MADV_PAGEOUT covers in part is split
 * when this table holds its every mapping (folio_maybe_mapped_shared is
 * false; a mapping of it in another table of this mm counts as another mm's
 * here): the PTL is dropped for split_folio, which unmaps it everywhere,
 * then the walk starts again where it was (a 6.18 host: 2 pages of a clean
 * 64-page ext4 folio given to MADV_PAGEOUT leave all 64 unmapped, in the
 * cache as order-0 folios; a dirty one does not split). 1 if not tried (the PTL still held), else what the
 * split returned, the PTL dropped.
 */
static int file_folio_split(struct mmp_space *s, mmp_pte_t *ptes, mmp_spinlock_t *ptl,
			    uint32_t head_pfn)
{
	struct mmp_page *head = pfn_to_page(s->phys, head_pfn);
	int err;

	if (folio_mapped_in_table(s, ptes, head_pfn) != (unsigned int)folio_mapcount(head) ||
	    !folio_trylock(head))
		return 1;
	folio_ref_add(head, 1);
	spin_unlock(ptl);
	rcu_read_unlock();
	err = split_file_folio(s, head_pfn);
	folio_unlock(head);
	folio_put_refs(s, head_pfn, 1);
	return err;
}

enum walk_kind { WALK_FREE, WALK_COLD, WALK_PAGEOUT, WALK_RECLAIM };

struct madv_walk {
	struct mmp_gather *tlb;
	struct mmp_vma *vma;
	enum walk_kind kind;
	struct folio_list list;
};

/*
 * The PTE level of MADV_FREE (madvise_free_pte_range) and MADV_PAGEOUT
 * (madvise_cold_or_pageout_pte_range). A large folio only partly in the range
 * is split first if this mm maps it alone; shared folios are left as they are
 * (whole-space reclaim takes them, the rmap finds every mapping).
 */
static void madvise_pte_range(struct madv_walk *w, mmp_pte_t *pmdp, uint64_t addr, uint64_t end)
{
	struct mmp_space *s = w->tlb->s;
	mmp_spinlock_t *ptl;
	mmp_pte_t *ptes, *ptep;
	unsigned int nr;

restart:
	rcu_read_lock();
	ptes = pte_offset_map_lock(s, pmdp, &ptl);
	if (!ptes)
		goto out;
	ptep = &ptes[level_index(addr, MMP_PTE)];
	for (; addr < end; addr += nr * PAGE_SIZE, ptep += nr) {
		mmp_pte_t pte = ptep_get(s, ptep);
		unsigned int f = entry_flags(s, pte, MMP_PTE), ad = 0;
		uint64_t pfn = entry_pfn(s, pte, MMP_PTE);
		uint32_t head_pfn;
		struct mmp_page *head;

		nr = 1;
		if (!entry_present(f) || (f & MMP_E_SPECIAL))
			continue;
		head_pfn = folio_pfn(s->phys, pfn);
		head = pfn_to_page(s->phys, head_pfn);
		if (head->order) {
			nr = folio_pte_batch_flags(s, ptep, &pte, (end - addr) >> PAGE_SHIFT,
						   FPB_MERGE_YOUNG_DIRTY);
			if (nr < folio_nr_pages(head) && w->kind != WALK_RECLAIM) {
				/* Partly covered: split it if it is ours alone, then look again. */
				if ((head->flags & PG_anon) &&
				    folio_range_exclusive(head, pfn_to_page(s->phys, pfn), nr) &&
				    !split_folio_locked(s, w->vma, ptes, addr & PMD_MASK, head_pfn, 0)) {
					nr = 0;
					continue;
				}
				if (!(head->flags & PG_anon)) {
					int err = file_folio_split(s, ptes, ptl, head_pfn);

					if (err > 0)
						continue;
					/* Split: look at the range again; else go past the batch. */
					if (err)
						addr += (uint64_t)nr * PAGE_SIZE;
					goto restart;
				}
				continue;
			}
		}
		if (w->kind != WALK_RECLAIM &&
		    !folio_range_exclusive(head, pfn_to_page(s->phys, pfn), nr))
			continue;
		ad = entry_test(s, pte, MMP_PTE, MMP_E_ACCESSED | MMP_E_DIRTY);
		if (w->kind == WALK_COLD) {
			/* madvise_cold: old, so reclaim would take it first (no LRU to move it on). */
			if (ad & MMP_E_ACCESSED) {
				clear_young_dirty_ptes(s, addr, ptep, nr, MMP_E_ACCESSED);
				tlb_remove_tlb_entries(w->tlb, addr, (uint64_t)nr * PAGE_SIZE);
			}
		} else if (w->kind == WALK_FREE) {
			page_flag_clear(head, PG_dirty);
			if (ad) {
				clear_young_dirty_ptes(s, addr, ptep, nr, ad);
				tlb_remove_tlb_entries(w->tlb, addr, (uint64_t)nr * PAGE_SIZE);
			}
			folio_mark_lazyfree(s, head);
		} else {
			/* Pageout ignores references (reclaim_pages): young stays as it is. */
			folio_isolate(s, &w->list, head_pfn);
		}
	}
	spin_unlock(ptl);
out:
	rcu_read_unlock();
}

/*
 * A huge PMD that MADV_COLD and MADV_PAGEOUT leave as it is over part of it
 * as over the whole (madvise_cold_or_pageout_pte_range): the huge zero page,
 * and an anonymous folio another mm maps too. Nothing is split for them.
 */
static bool huge_pmd_left_alone(struct mmp_space *s, mmp_pte_t *pmdp)
{
	struct mmp_page *head;
	mmp_pte_t pmd;
	bool alone;

	spin_lock(&s->page_table_lock);
	pmd = READ_ONCE(*pmdp);
	alone = entry_test(s, pmd, MMP_PMD, MMP_E_LEAF) && is_huge_zero_pmd(s, pmd);
	if (!alone && entry_test(s, pmd, MMP_PMD, MMP_E_LEAF) &&
	    entry_present(entry_flags(s, pmd, MMP_PMD))) {
		head = pfn_to_page(s->phys, entry_pfn(s, pmd, MMP_PMD));
		alone = (head->flags & PG_anon) && !page_flag_test(head, PG_anon_exclusive);
	}
	spin_unlock(&s->page_table_lock);
	return alone;
}

static int madvise_pmd(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t addr, uint64_t end,
		       void *arg)
{
	struct madv_walk *w = arg;
	mmp_pte_t pmd = READ_ONCE(*pmdp);
	unsigned int f = entry_flags(s, pmd, MMP_PMD);
	bool whole = addr == (addr & PMD_MASK) && end - addr == PMD_SIZE;

	if (!pmd)
		return 0;
	if (f & MMP_E_LEAF) {
		if (w->kind == WALK_FREE && madvise_free_huge_pmd(w->tlb, w->vma, pmdp, addr, end))
			return 0;
		if (whole && w->kind == WALK_COLD) {
			/* An exclusive THP gets old on its PMD; a shared one is left alone. */
			spin_lock(&s->page_table_lock);
			pmd = READ_ONCE(*pmdp);
			f = entry_flags(s, pmd, MMP_PMD);
			if ((f & MMP_E_LEAF) && (f & MMP_E_ACCESSED) && !(f & MMP_E_SPECIAL) &&
			    page_flag_test(pfn_to_page(s->phys, entry_pfn(s, pmd, MMP_PMD)),
					   PG_anon_exclusive)) {
				ptep_modify(s, pmdp, MMP_PMD, 0, MMP_E_ACCESSED);
				count_inc(s, MMP_C_PMD_WRITE);
				tlb_remove_tlb_entries(w->tlb, addr, PMD_SIZE);
			}
			spin_unlock(&s->page_table_lock);
			return 0;
		}
		if (whole && w->kind != WALK_FREE && w->kind != WALK_COLD) {
			/* Under the PMD lock: a racing zap cannot free the folio meanwhile. */
			spin_lock(&s->page_table_lock);
			pmd = READ_ONCE(*pmdp);
			f = entry_flags(s, pmd, MMP_PMD);
			if ((f & MMP_E_LEAF) && entry_present(f) && !(f & MMP_E_SPECIAL) &&
			    (w->kind == WALK_RECLAIM ||
			     page_flag_test(pfn_to_page(s->phys, entry_pfn(s, pmd, MMP_PMD)),
					    PG_anon_exclusive)))
				folio_isolate(s, &w->list, entry_pfn(s, pmd, MMP_PMD));
			spin_unlock(&s->page_table_lock);
			return 0;
		}
		if ((w->kind == WALK_COLD || w->kind == WALK_PAGEOUT) && huge_pmd_left_alone(s, pmdp))
			return 0;
		split_huge_pmd(s, pmdp, addr & PMD_MASK);
	}
	madvise_pte_range(w, pmdp, addr, end);
	return 0;
}

/*
 * The walk of [start, end) of @w->vma, under the mmap lock or, for MADV_FREE,
 * the VMA's own: MADV_FREE and MADV_COLD leave the VMA as tlb_end_vma says;
 * MADV_PAGEOUT and reclaim flush and reclaim what it gave before the next
 * (reclaim_pages per range).
 */
static int madvise_walk_vma(struct madv_walk *w, uint64_t start, uint64_t end)
{
	struct mmp_gather *tlb = w->tlb;
	struct mmp_space *s = tlb->s;
	enum walk_kind kind = w->kind;

	/* madvise_free_single_vma: anonymous private memory only; the VMAs before keep it. */
	if (kind == WALK_FREE && !vma_is_anonymous(w->vma))
		return -EINVAL;
	/* Reclaim leaves mlock'd memory alone (try_to_unmap_one would refuse it anyway). */
	if (kind == WALK_RECLAIM && (w->vma->flags & VM_LOCKED))
		return 0;
	/* can_madv_lru_vma: hugetlb pages are on no LRU; reclaim passes them by. */
	if (unlikely(is_vm_hugetlb_page(w->vma)))
		return kind == WALK_RECLAIM ? 0 : -EINVAL;
	walk_pmd_range(s, MAX(start, w->vma->start), MIN(end, w->vma->end), madvise_pmd, w);
	if (kind == WALK_FREE || kind == WALK_COLD) {
		tlb_end_vma(tlb);
		return 0;
	}
	tlb_flush_mmu(tlb);
	reclaim_pages(s, &w->list, kind == WALK_PAGEOUT);
	return 0;
}

/* The walk of [start, end) into @tlb, VMA by VMA, the mmap lock held. */
static int madvise_walk_range(struct mmp_gather *tlb, uint64_t start, uint64_t end,
			      enum walk_kind kind)
{
	struct madv_walk w = { .tlb = tlb, .kind = kind };
	int err = 0;

	mmap_assert_locked(tlb->s);
	for (w.vma = vma_find_next(tlb->s, start); w.vma && w.vma->start < end && !err;
	     w.vma = w.vma->vm_next)
		err = madvise_walk_vma(&w, start, end);
	free(w.list.pfns);
	return err;
}

static const char *madvise_op_name(enum walk_kind kind)
{
	return kind == WALK_FREE ? "mmp_madvise(MADV_FREE)" :
	       kind == WALK_COLD ? "mmp_madvise(MADV_COLD)" :
	       kind == WALK_PAGEOUT ? "mmp_madvise(MADV_PAGEOUT)" : "mmp_reclaim";
}

/*
 * MADV_FREE, MADV_COLD, MADV_PAGEOUT, or (@kind WALK_RECLAIM) every folio of
 * the space, under the mmap read lock; *@hole says whether the range has one.
 */
static int madvise_walk(struct mmp_space *s, uint64_t start, uint64_t end, enum walk_kind kind,
			bool *hole)
{
	struct mmp_gather tlb;
	int err;

	mmap_read_lock(s);
	/* Reclaim is no madvise, and has no range to report holes in. */
	if (kind != WALK_RECLAIM)
		count_inc(s, MMP_C_MMAP_LOCK_MADVISE);
	*hole = kind != WALK_RECLAIM && range_has_hole_locked(s, start, end);
	tlb_gather_mmu(&tlb, s, false);
	err = madvise_walk_range(&tlb, start, end, kind);
	tlb_finish_mmu(&tlb);
	WRITE_ONCE(s->last_op, madvise_op_name(kind));
	mmap_read_unlock(s);
	return err;
}

/*
 * 6.17's get_lock_mode: MADV_DONTNEED, MADV_DONTNEED_LOCKED and MADV_FREE try
 * the lock of the one VMA a range lies in before the mmap lock.
 */
static bool madvise_vma_lock_mode(struct mmp_space *s, int advice)
{
	return (advice == MMP_MADV_DONTNEED || advice == MMP_MADV_DONTNEED_LOCKED ||
		advice == MMP_MADV_FREE) &&
	       release_follows(s, RULE_MADVISE_VMA_LOCK) && READ_ONCE(s->opts[MMP_OPT_PER_VMA_LOCK]);
}

/*
 * 6.17's try_vma_read_lock: in madvise_vma_lock_mode(), a range inside one
 * VMA takes that VMA's read lock and no mmap lock, so a writer elsewhere in
 * the space (mmap, munmap, mprotect) neither waits for it nor makes it wait.
 * NULL: take the mmap read lock instead, as when the VMA lock cannot be had
 * (no VMA at @start, a writer has it) or the range goes past the VMA. A
 * uffd-armed VMA would fall back too (no userfaultfd here), as would another
 * process's mm (process_madvise here is always of the caller's own).
 */
static struct mmp_vma *madvise_try_vma_read_lock(struct mmp_space *s, uint64_t start,
						 uint64_t end, int advice)
{
	struct mmp_vma *vma;

	if (!madvise_vma_lock_mode(s, advice))
		return NULL;
	vma = lock_vma_under_rcu(s, start);
	if (vma && end > READ_ONCE(vma->end)) {
		vma_end_read(vma);
		vma = NULL;
	}
	count_inc(s, vma ? MMP_C_MADV_VMA_LOCK_SUCCESS : MMP_C_MADV_VMA_LOCK_FALLBACK);
	return vma;
}

/* MADV_DONTNEED or MADV_FREE of [start, end) in @vma into @tlb, under its read lock alone. */
static int madvise_single_vma_locked(struct mmp_gather *tlb, struct mmp_vma *vma, uint64_t start,
				     uint64_t end, int advice)
{
	struct madv_walk w = { .tlb = tlb, .kind = WALK_FREE, .vma = vma };
	int err;

	if (advice != MMP_MADV_FREE) {
		tlb->drop_markers = false;	/* guard markers stay */
		return madvise_dontneed_single_vma(tlb, vma, start, end);
	}
	err = madvise_walk_vma(&w, start, end);
	free(w.list.pfns);
	return err;
}

/* madvise() of [start, end) in @vma, under its read lock alone, which it drops. */
static int madvise_vma_locked(struct mmp_space *s, struct mmp_vma *vma, uint64_t start,
			      uint64_t end, int advice)
{
	struct mmp_gather tlb;
	int err;

	tlb_gather_mmu(&tlb, s, false);
	tlb.reclaim_pt = advice != MMP_MADV_FREE;	/* zap_details.reclaim_pt */
	err = madvise_single_vma_locked(&tlb, vma, start, end, advice);
	tlb_finish_mmu(&tlb);
	WRITE_ONCE(s->last_op, advice == MMP_MADV_FREE ? "mmp_madvise(MADV_FREE)" :
		   "mmp_madvise(MADV_DONTNEED)");
	vma_end_read(vma);
	return err;
}

MMP_EXPORT int mmp_reclaim(struct mmp_space *s)
{
	bool hole;

	if (!s)
		return -EINVAL;
	return madvise_walk(s, 0, USER_TOP(s), WALK_RECLAIM, &hole);
}

/*
 * MADV_WILLNEED: a regular file's range is read into the page cache
 * (vfs_fadvise's readahead), up to its end; anonymous memory and shmem (no
 * swap to read from) have nothing to read.
 */
static int madvise_willneed(struct mmp_space *s, uint64_t start, uint64_t end, bool *hole)
{
	mmap_read_lock(s);
	count_inc(s, MMP_C_MMAP_LOCK_MADVISE);
	*hole = range_has_hole_locked(s, start, end);
	for (struct mmp_vma *vma = vma_find_next(s, start); vma && vma->start < end;
	     vma = vma->vm_next) {
		struct mmp_file *f = vma->vm_file;
		uint64_t first, last;

		if (!f || shmem_file(f) || is_file_hugepages(f))
			continue;
		first = linear_page_index(vma, MAX(start, vma->start));
		last = MIN(linear_page_index(vma, MIN(end, vma->end)), file_size_pages(f));
		down_read(&f->mapping.invalidate_lock);
		for (uint64_t index = first; index < last; ) {
			int err;
			uint32_t pfn = filemap_grab_folio(f, index, 0, last, s, &err);

			if (pfn == NO_PFN)
				break;
			index = pfn_to_page(s->phys, pfn)->index + folio_nr_pages(pfn_to_page(s->phys, pfn));
			folio_put_refs(s, pfn, 1);
		}
		up_read(&f->mapping.invalidate_lock);
	}
	mmap_read_unlock(s);
	return 0;
}

/*
 * MADV_POPULATE_READ/WRITE (madvise_populate): fault the range in, VMA by
 * VMA, as GUP would; a hole ends it with -ENOMEM, a VMA that does not allow
 * the access with -EINVAL (GUP's check_vma_flags), a fault that would be
 * SIGBUS with -EFAULT; what came before stays populated.
 */
static int madvise_populate(struct mmp_space *s, uint64_t start, uint64_t end, bool write)
{
	uint64_t addr = start;

	while (addr < end) {
		struct mmp_vma *vma;
		uint64_t seg_end;
		int err;

		mmap_read_lock(s);
		count_inc(s, MMP_C_MMAP_LOCK_MADVISE);
		vma = vma_find_next(s, addr);
		if (!vma || vma->start > addr) {
			mmap_read_unlock(s);
			return -ENOMEM;
		}
		seg_end = MIN(end, vma->end);
		if (!(vma->flags & (write ? VM_WRITE : VM_READ))) {
			mmap_read_unlock(s);
			return -EINVAL;
		}
		mmap_read_unlock(s);
		err = populate_range(s, addr, seg_end, write);
		if (err)
			return err == -EIO ? -EFAULT : err;
		addr = seg_end;
	}
	return 0;
}

/*
 * What madvise_vma_behavior refuses of a VMA before the advice acts on it:
 * a discard of sealed read-only anonymous memory (-EPERM, can_madvise_modify),
 * then what a locked VMA does not take (-EINVAL): MADV_DONTNEED and _FREE
 * (madvise_dontneed_free_valid_vma), _COLD and _PAGEOUT (can_madv_lru_vma),
 * guard markers (is_valid_guard_vma), MADV_REMOVE (madvise_remove, first).
 */
static int madvise_vma_refusal(const struct mmp_vma *vma, int advice)
{
	if (madvise_seal_refuses(vma, advice))
		return -EPERM;
	if ((vma->flags & VM_LOCKED) &&
	    (advice == MMP_MADV_DONTNEED || advice == MMP_MADV_FREE || advice == MMP_MADV_COLD ||
	     advice == MMP_MADV_PAGEOUT || advice == MMP_MADV_GUARD_INSTALL ||
	     advice == MMP_MADV_REMOVE))
		return -EINVAL;
	return 0;
}

/*
 * The first VMA of [start, end) that refuses @advice: its error, its start
 * in *@stop. The mmap lock held. madvise goes VMA by VMA, so what comes
 * before it takes the advice, and its error wins over a hole's -ENOMEM.
 */
static int madvise_first_refusal(struct mmp_space *s, uint64_t start, uint64_t end, int advice,
				 uint64_t *stop)
{
	for (struct mmp_vma *vma = vma_find_next(s, start); vma && vma->start < end;
	     vma = vma->vm_next) {
		int err = madvise_vma_refusal(vma, advice);

		if (err) {
			*stop = MAX(start, vma->start);
			return err;
		}
	}
	return 0;
}

MMP_EXPORT int mmp_madvise(struct mmp_space *s, uint64_t start, uint64_t len, int advice)
{
	struct mmp_vma *vma;
	uint64_t end, stop = 0;
	int err, refused;
	bool hole;

	if (!s || (start & (PAGE_SIZE - 1)))
		return -EINVAL;
	switch (advice) {
	case MMP_MADV_DONTNEED: case MMP_MADV_DONTNEED_LOCKED: case MMP_MADV_FREE:
	case MMP_MADV_PAGEOUT: case MMP_MADV_COLD: case MMP_MADV_WILLNEED:
	case MMP_MADV_HUGEPAGE: case MMP_MADV_NOHUGEPAGE:
	case MMP_MADV_POPULATE_READ: case MMP_MADV_POPULATE_WRITE:
	case MMP_MADV_COLLAPSE:
	case MMP_MADV_GUARD_INSTALL: case MMP_MADV_GUARD_REMOVE:
	case MMP_MADV_NORMAL: case MMP_MADV_RANDOM: case MMP_MADV_SEQUENTIAL:
	case MMP_MADV_DONTFORK: case MMP_MADV_DOFORK:
	case MMP_MADV_WIPEONFORK: case MMP_MADV_KEEPONFORK:
	case MMP_MADV_MERGEABLE: case MMP_MADV_UNMERGEABLE: case MMP_MADV_REMOVE:
	case MMP_MADV_HWPOISON: case MMP_MADV_SOFT_OFFLINE:
		break;
	default:
		return -EINVAL;
	}
	end = start + ((len + PAGE_SIZE - 1) & PAGE_MASK);
	/*
	 * No upper bound but wrapping: the walk reports the holes. (On a host,
	 * a range past the window meets the process's own file and vDSO
	 * mappings, which MADV_FREE and MADV_PAGEOUT refuse with EINVAL.)
	 */
	if ((len && end == start) || end < start)
		return -EINVAL;
	/* madvise_inject_error: CAP_SYS_ADMIN first, whatever the range. */
	if (advice == MMP_MADV_HWPOISON || advice == MMP_MADV_SOFT_OFFLINE)
		return -EPERM;
	if (end == start)
		return 0;
	/* Inside one VMA, under its lock: no hole to report; its refusal is the call's. */
	vma = madvise_try_vma_read_lock(s, start, end, advice);
	if (vma) {
		refused = madvise_vma_refusal(vma, advice);
		if (!refused)
			return madvise_vma_locked(s, vma, start, end, advice);
		vma_end_read(vma);
		return refused;
	}
	/*
	 * A VMA that refuses the advice stops it there, its error winning over a
	 * hole's. The kernel finds it as its walk reaches it; here a space that
	 * ever locked or sealed a VMA looks for it first under a read lock of
	 * its own, so the lock counts of every other space stay the kernel's.
	 */
	refused = 0;
	if (READ_ONCE(s->madvise_may_refuse)) {
		mmap_read_lock(s);
		refused = madvise_first_refusal(s, start, end, advice, &stop);
		mmap_read_unlock(s);
	}
	if (refused) {
		err = stop > start ? mmp_madvise(s, start, stop - start, advice) : 0;
		return err && err != -ENOMEM ? err : refused;
	}
	if (advice == MMP_MADV_POPULATE_READ || advice == MMP_MADV_POPULATE_WRITE)
		return madvise_populate(s, start, end, advice == MMP_MADV_POPULATE_WRITE);
	if (advice == MMP_MADV_COLLAPSE)
		return madvise_collapse(s, start, end);	/* lib/khugepaged.c: holes too */
	if (advice == MMP_MADV_GUARD_INSTALL || advice == MMP_MADV_GUARD_REMOVE)
		return madvise_guard(s, start, end, advice == MMP_MADV_GUARD_INSTALL);
	/* Holes are looked for under the lock the advice is taken under, once. */
	if (advice == MMP_MADV_DONTNEED || advice == MMP_MADV_DONTNEED_LOCKED)
		err = madvise_dontneed(s, start, end, &hole);
	else if (advice == MMP_MADV_COLD)
		err = madvise_walk(s, start, end, WALK_COLD, &hole);
	else if (advice == MMP_MADV_WILLNEED)
		err = madvise_willneed(s, start, end, &hole);
	else if (advice == MMP_MADV_FREE)
		err = madvise_walk(s, start, end, WALK_FREE, &hole);
	else if (advice == MMP_MADV_PAGEOUT)
		err = madvise_walk(s, start, end, WALK_PAGEOUT, &hole);
	else if (advice == MMP_MADV_REMOVE)
		err = madvise_remove(s, start, end, &hole);
	else
		err = madvise_behavior(s, start, end, advice, &hole);
	if (!err && hole)
		err = -ENOMEM;
	return err;
}

/*
 * One range of a batched process_madvise (MADV_DONTNEED or MADV_FREE) into
 * the vector's @tlb, under the mmap read lock (*@mmap_locked, taken here
 * when needed) or the lock of the one VMA the range lies in; mmp_madvise's
 * checks and errors.
 */
static int madvise_vector_one(struct mmp_gather *tlb, uint64_t start, uint64_t len, int advice,
			      bool *mmap_locked)
{
	uint64_t end = start + ((len + PAGE_SIZE - 1) & PAGE_MASK), stop = 0;
	struct mmp_space *s = tlb->s;
	struct mmp_vma *vma;
	int err = 0, refused;
	bool hole;

	if ((start & (PAGE_SIZE - 1)) || (len && end == start) || end < start)
		return -EINVAL;
	if (end == start)
		return 0;
	/*
	 * From 6.17 each range first tries its VMA's lock (madvise_walk_vmas);
	 * the first that cannot takes the mmap read lock, which the rest of
	 * the vector keeps (its lock_mode stays MADVISE_MMAP_READ_LOCK).
	 */
	if (!*mmap_locked) {
		vma = madvise_try_vma_read_lock(s, start, end, advice);
		if (vma) {
			refused = madvise_vma_refusal(vma, advice);
			if (!refused)
				err = madvise_single_vma_locked(tlb, vma, start, end, advice);
			vma_end_read(vma);
			return refused ? refused : err;
		}
		mmap_read_lock(s);
		count_inc(s, MMP_C_MMAP_LOCK_MADVISE);
		*mmap_locked = true;
	}
	refused = madvise_first_refusal(s, start, end, advice, &stop);
	if (refused)
		end = stop;
	hole = range_has_hole_locked(s, start, end);
	if (end == start)
		;
	else if (advice == MMP_MADV_FREE)
		err = madvise_walk_range(tlb, start, end, WALK_FREE);
	else
		err = madvise_dontneed_range(tlb, start, end);
	if (refused)
		return err && err != -ENOMEM ? err : refused;
	return !err && hole ? -ENOMEM : err;
}

/* Before 6.13 a process could ask only these of itself, as of another (process_madvise_behavior_valid). */
static bool process_madvise_remote_advice(int advice)
{
	return advice == MMP_MADV_COLD || advice == MMP_MADV_PAGEOUT ||
	       advice == MMP_MADV_WILLNEED || advice == MMP_MADV_COLLAPSE;
}

#define MAX_RW_COUNT	(INT_MAX & PAGE_MASK)	/* import_iovec caps the vector's total at it */

MMP_EXPORT long mmp_process_madvise(struct mmp_space *s, const struct mmp_iovec *vec,
				    unsigned int vlen, int advice, unsigned int flags)
{
	uint64_t left = MAX_RW_COUNT, done = 0;
	bool batch, one_gather, mmap_locked;
	struct mmp_gather tlb;
	unsigned int i;
	int err = 0;

	/* process_madvise's order: flags, then the vector (import_iovec), then the advice. */
	if (!s || flags || (vlen && !vec) || vlen > MMP_UIO_MAXIOV)
		return -EINVAL;
	for (i = 0; i < vlen; i++)
		if (vec[i].len > LONG_MAX)	/* a negative ssize_t */
			return -EINVAL;
	if (!release_follows(s, RULE_PROCESS_MADVISE_ANY_ADVICE) &&
	    !process_madvise_remote_advice(advice))
		return -EINVAL;
	/* An advice madvise() refuses: madvise of nothing says so, as it would of anything. */
	err = mmp_madvise(s, 0, 0, advice);
	if (err)
		return err;
	/*
	 * MADV_DONTNEED and MADV_FREE: from 6.15 one mmap read lock for the
	 * vector (from 6.17 taken at the first range that no VMA lock does
	 * for), from 6.16 one mmu_gather too, so the TLB is flushed once for
	 * it where the back end merges VMAs (x86, loongarch), once per range
	 * and VMA where it does not (tlb_end_vma); before, and for every other
	 * advice, each range is a madvise() of its own.
	 */
	batch = (advice == MMP_MADV_DONTNEED || advice == MMP_MADV_DONTNEED_LOCKED ||
		 advice == MMP_MADV_FREE) && release_follows(s, RULE_PROCESS_MADVISE_LOCK_ONCE);
	one_gather = release_follows(s, RULE_PROCESS_MADVISE_TLB_BATCH);
	if (!batch) {
		for (i = 0; i < vlen && left; i++) {
			uint64_t len = MIN(vec[i].len, left);

			err = mmp_madvise(s, vec[i].base, len, advice);
			if (err)
				break;
			done += len;
			left -= len;
		}
		return done ? (long)done : err;
	}
	/* madvise_lock: the mmap read lock now, or (6.17) per range, when a VMA lock will not do. */
	mmap_locked = !madvise_vma_lock_mode(s, advice);
	if (mmap_locked) {
		mmap_read_lock(s);
		count_inc(s, MMP_C_MMAP_LOCK_MADVISE);
	}
	for (i = 0; i < vlen && left; i++) {
		uint64_t len = MIN(vec[i].len, left);

		if (!i || !one_gather) {
			tlb_gather_mmu(&tlb, s, false);
			tlb.reclaim_pt = advice != MMP_MADV_FREE;	/* zap_details.reclaim_pt */
		}
		err = madvise_vector_one(&tlb, vec[i].base, len, advice, &mmap_locked);
		if (!one_gather)
			tlb_finish_mmu(&tlb);
		if (err)
			break;
		done += len;
		left -= len;
	}
	if (one_gather && vlen)
		tlb_finish_mmu(&tlb);
	WRITE_ONCE(s->last_op, "mmp_process_madvise");
	if (mmap_locked)
		mmap_read_unlock(s);
	return done ? (long)done : err;
}
