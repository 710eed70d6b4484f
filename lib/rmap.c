/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The anonymous reverse map: a folio records its anon_vma and page index; a
 * VMA whose anon_vma lineage holds that anon_vma maps the folio at
 * vm_start + (index - vm_pgoff) pages, in any space on the phys (fork shares
 * folios). try_to_unmap_one() unmaps a lazyfree folio from one such VMA.
 */
#include "mm.h"
#include "mmap_lock.h"
#include "rcu.h"

/*
 * Could @a and @b (adjacent, @a first) share an anon_vma, as VMAs that would
 * merge but for their protections and sticky flags? (anon_vma_compatible)
 */
static bool anon_vma_compatible(const struct mmp_vma *a, const struct mmp_vma *b)
{
	return a->end == b->start && !((a->flags ^ b->flags) & ~(VM_ACCESS_FLAGS | VM_STICKY)) &&
	       b->pgoff == linear_page_index(a, b->start);
}

/* @old's anon_vma, if it links no other (a forked child's links its parents'). */
static struct anon_vma *reusable_anon_vma(const struct mmp_vma *old, const struct mmp_vma *a,
					  const struct mmp_vma *b)
{
	struct anon_vma *av = READ_ONCE(old->anon_vma);

	return anon_vma_compatible(a, b) && av && !av->parent ? av : NULL;
}

/*
 * find_mergeable_anon_vma: a neighbour's anon_vma that @vma may share, the
 * next one first, so that a later mprotect or mmap can merge them again.
 */
static struct anon_vma *find_mergeable_anon_vma(struct mmp_space *s, struct mmp_vma *vma)
{
	struct mmp_vma *next = vma->vm_next, *prev = vma->vm_prev;
	struct anon_vma *av = NULL;

	if (next)
		av = reusable_anon_vma(next, vma, next);
	if (!av && prev)
		av = reusable_anon_vma(prev, prev, vma);
	return av;
}

/* Give @vma an anon_vma before its first folio (anon_vma_prepare). mmap lock held. */
int anon_vma_prepare(struct mmp_space *s, struct mmp_vma *vma)
{
	struct anon_vma *av;

	if (likely(READ_ONCE(vma->anon_vma)))
		return 0;
	/* The array does not change under the mmap lock, and a neighbour's anon_vma lives while it does. */
	av = find_mergeable_anon_vma(s, vma);
	if (av)
		anon_vma_get(av);
	else
		av = anon_vma_alloc(NULL);
	if (!av)
		return -ENOMEM;
	spin_lock(&s->page_table_lock);
	if (!vma->anon_vma) {
		WRITE_ONCE(vma->anon_vma, av);
		av = NULL;
	}
	spin_unlock(&s->page_table_lock);
	anon_vma_put(av);
	return 0;
}

/*
 * vmf_anon_prepare's slow half, for a VMA without its anon_vma yet (the
 * inline check is in mm.h): under the VMA lock alone the neighbours
 * anon_vma_prepare looks at may be changing; it needs the mmap read lock,
 * taken if free, or the fault is retried under it.
 */
int __vmf_anon_prepare(struct vm_fault *vmf)
{
	struct mmp_space *s = vmf->s;
	bool vma_lock = vmf->flags & FAULT_FLAG_VMA_LOCK;
	int ret;

	if (vma_lock && !mmap_read_trylock(s))
		return VM_FAULT_RETRY;
	ret = anon_vma_prepare(s, vmf->vma) ? -ENOMEM : 0;
	if (vma_lock)
		mmap_read_unlock(s);
	return ret;
}

/*
 * rmap_walk_anon: call @fn for every VMA that may map @head, with the part of
 * the folio's range inside it. Other spaces are only trylocked: reclaim does
 * not wait for a busy mm (rwc->try_lock). Stops when @fn returns false.
 * Returns false when it stopped early or skipped a contended space.
 */
bool rmap_walk_anon(struct mmp_space *self, uint32_t head_pfn, rmap_fn fn, void *arg)
{
	struct mmp_phys *phys = self->phys;
	struct mmp_page *head = pfn_to_page(phys, head_pfn);
	uint64_t nr = folio_nr_pages(head), index = head->index;
	uint32_t id = head->anon_vma;
	bool ok = true;

	if (pthread_mutex_trylock(&phys->spaces_lock))
		return false;
	for (struct mmp_space *s = phys->spaces; s && ok; s = s->phys_next) {
		if (s != self && !mmap_read_trylock(s)) {
			ok = false;
			break;
		}
		for (struct mmp_vma *vma = s->vmas.first; vma && ok; vma = vma->vm_next) {
			uint64_t vnr = (vma->end - vma->start) >> PAGE_SHIFT, first, last;

			if (!anon_vma_covers(vma->anon_vma, id))
				continue;
			/* The folio's pages [index, index + nr) against the VMA's [pgoff, pgoff + vnr). */
			first = MAX(index, vma->pgoff);
			last = MIN(index + nr, vma->pgoff + vnr);
			if (first >= last)
				continue;
			ok = fn(s, vma, head_pfn, vma->start + ((first - vma->pgoff) << PAGE_SHIFT),
				vma->start + ((last - vma->pgoff) << PAGE_SHIFT), arg);
		}
		if (s != self)
			mmap_read_unlock(s);
	}
	pthread_mutex_unlock(&phys->spaces_lock);
	return ok;
}

/* ---- try_to_unmap_one: lazyfree folios ------------------------------------------- */

static bool pfn_in_folio(uint64_t pfn, uint32_t head_pfn, unsigned int nr)
{
	return pfn >= head_pfn && pfn < (uint64_t)head_pfn + nr;
}

/* Does [start, end) of @vma map a page of the folio at @head_pfn (page_vma_mapped_walk finds one)? */
static bool vma_maps_folio(struct mmp_space *s, uint64_t start, uint64_t end, uint32_t head_pfn)
{
	unsigned int nr = folio_nr_pages(pfn_to_page(s->phys, head_pfn));
	bool found = false;

	rcu_read_lock();
	for (uint64_t addr = start; addr < end && !found; addr += PAGE_SIZE) {
		mmp_pte_t *pmdp = pmd_offset(s, addr), *ptes, pmd, pte;

		if (!pmdp || !(pmd = READ_ONCE(*pmdp)))
			continue;
		if (entry_test(s, pmd, MMP_PMD, MMP_E_LEAF)) {
			found = entry_pfn(s, pmd, MMP_PMD) == head_pfn;
			continue;
		}
		ptes = pte_table(s, pmd);
		pte = ptes ? READ_ONCE(ptes[level_index(addr, MMP_PTE)]) : 0;
		found = pte && (entry_flags(s, pte, MMP_PTE) & MMP_E_PRESENT) &&
			pfn_in_folio(entry_pfn(s, pte, MMP_PTE), head_pfn, nr);
	}
	rcu_read_unlock();
	return found;
}

/*
 * The decision on a lazyfree folio whose entries were just cleared and
 * flushed (shared by the PTE path and __discard_anon_folio_pmd_locked). The
 * full barrier pairs with GUP-fast's "grab, then recheck the entry": either it
 * sees the cleared entry, or we see its reference. Dirty and not droppable:
 * swapbacked again (unless @mark is false, the pre-seed PMD rule). Any reference
 * beyond the mappings and reclaim's isolation: keep it, not as swapbacked.
 */
enum lazyfree_verdict lazyfree_check(struct mmp_space *s, struct mmp_vma *vma,
				     struct mmp_page *head, bool entry_dirty, bool mark)
{
	int ref, map;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ref = folio_ref_count(head);
	map = folio_mapcount(head);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (entry_dirty)
		page_flag_set(head, PG_dirty);
	if (page_flag_test(head, PG_dirty) && !(vma->flags & VM_DROPPABLE)) {
		if (mark) {
			folio_set_swapbacked(head);
			count_inc(s, MMP_C_LAZYFREE_REDIRTIED);
		}
		return LAZYFREE_REDIRTIED;
	}
	return ref == map + 1 ? LAZYFREE_DISCARD : LAZYFREE_REFERENCED;
}

/*
 * folio_unmap_pte_batch: a lazyfree large folio unmaps its PTEs in batches
 * (within one VMA and one table), and since 7.0 so does a large file folio
 * ("mm: rmap: support batched unmapping for file large folios"); anything
 * else one at a time.
 */
static unsigned int folio_unmap_pte_batch(struct mmp_space *s, struct mmp_page *head,
					  mmp_pte_t *ptep, mmp_pte_t pte, unsigned int max_nr)
{
	if (!head->order || page_flag_test(head, PG_swapbacked) || !pte_batching(s))
		return 1;
	if (!(head->flags & PG_anon) && !release_follows(s, RULE_FILE_BATCHED_UNMAP))
		return 1;
	return folio_pte_batch(s, ptep, pte, max_nr);
}

/*
 * The PTEs of [addr, end) that map @head_pfn's folio, in one table. Each batch
 * is cleared and flushed; for a lazyfree folio lazyfree_check then decides:
 * discard, or restore and abort the walk. A file folio takes the entries'
 * dirty bit and lets them go.
 */
static bool try_to_unmap_ptes(struct mmp_space *s, struct mmp_vma *vma, mmp_pte_t *pmdp,
			      uint32_t head_pfn, uint64_t addr, uint64_t end)
{
	struct mmp_page *head = pfn_to_page(s->phys, head_pfn);
	unsigned int nr_pages = folio_nr_pages(head), nr;
	mmp_spinlock_t *ptl;
	mmp_pte_t *ptes, *ptep;
	bool ret = true;

	rcu_read_lock();
	ptes = pte_offset_map_lock(s, pmdp, &ptl);
	if (!ptes) {
		rcu_read_unlock();
		return true;
	}
	ptep = &ptes[level_index(addr, MMP_PTE)];
	for (; addr < end && ret; addr += nr * PAGE_SIZE, ptep += nr) {
		mmp_pte_t pte = ptep_get(s, ptep);
		unsigned int f = entry_flags(s, pte, MMP_PTE);
		uint64_t pfn = entry_pfn(s, pte, MMP_PTE);

		nr = 1;
		if (!entry_present(f) || (f & MMP_E_SPECIAL) || !pfn_in_folio(pfn, head_pfn, nr_pages))
			continue;
		nr = folio_unmap_pte_batch(s, head, ptep, pte, (end - addr) >> PAGE_SHIFT);
		pte = get_and_clear_full_ptes(s, addr, ptep, nr, 0);
		inc_tlb_flush_pending(s);
		flush_tlb_range(s, addr, addr + (uint64_t)nr * PAGE_SIZE, PAGE_SHIFT);
		dec_tlb_flush_pending(s);
		if (!(head->flags & PG_anon)) {
			if (entry_test(s, pte, MMP_PTE, MMP_E_DIRTY))
				page_flag_set(head, PG_dirty);
		} else if (lazyfree_check(s, vma, head, entry_test(s, pte, MMP_PTE, MMP_E_DIRTY),
					  true) != LAZYFREE_DISCARD) {
			set_ptes(s, addr, ptep, pte, nr);	/* restore, walk_abort */
			ret = false;
			continue;
		}
		folio_remove_rmap_ptes(s, head, pfn_to_page(s->phys, pfn), nr);
		add_mm_counter(s, mm_counter(head), -(int64_t)nr);
		folio_put_refs(s, head_pfn, nr);
	}
	spin_unlock(ptl);
	rcu_read_unlock();
	return ret;
}

/*
 * try_to_unmap_one for a lazyfree anonymous folio in one VMA. A PMD mapping
 * is decided on the PMD itself (optimized), or split into 512 PTEs and walked
 * (the base line, as the kernel did before "Avoid splitting pmd for lazyfree
 * pmd-mapped THP in try_to_unmap").
 */
static bool try_to_unmap_one(struct mmp_space *s, struct mmp_vma *vma, uint32_t head_pfn,
			     uint64_t start, uint64_t end, void *arg)
{
	/* An mlock'd VMA that maps it keeps the folio: the walk is aborted (TTU without IGNORE_MLOCK). */
	if ((vma->flags & VM_LOCKED) && vma_maps_folio(s, start, end, head_pfn))
		return false;
	update_hiwater_rss(s);	/* before the RSS drops */
	for (uint64_t addr = start; addr < end; ) {
		uint64_t next = level_addr_end(addr, end, MMP_PMD);
		mmp_pte_t *pmdp = pmd_offset(s, addr), pmd;
		unsigned int f;

		if (!pmdp || !(pmd = READ_ONCE(*pmdp))) {
			addr = next;
			continue;
		}
		f = entry_flags(s, pmd, MMP_PMD);
		if ((f & MMP_E_LEAF) && entry_pfn(s, pmd, MMP_PMD) == head_pfn) {
			if (READ_ONCE(s->opts[MMP_OPT_LAZYFREE_PMD])) {
				/* walk_done on true, walk_abort on false */
				if (!unmap_huge_pmd_locked(s, vma, pmdp, addr & PMD_MASK, head_pfn, false))
					return false;
				addr = next;
				continue;
			}
			/* Before the seed: only a clean one is discarded on the PMD. */
			if (unmap_huge_pmd_locked(s, vma, pmdp, addr & PMD_MASK, head_pfn, true)) {
				addr = next;
				continue;
			}
			split_huge_pmd(s, pmdp, addr & PMD_MASK);	/* TTU_SPLIT_HUGE_PMD */
		}
		if (!try_to_unmap_ptes(s, vma, pmdp, head_pfn, addr, next))
			return false;
		addr = next;
	}
	return true;
}

/*
 * rmap_walk_file: every VMA of the folio's file that maps a page of it, in
 * whichever space, found through i_mmap. The spaces' mmap locks are not taken
 * (see unmap_mapping_range). False if @fn stopped the walk.
 */
bool rmap_walk_file(struct mmp_space *self, uint32_t head_pfn, rmap_fn fn, void *arg)
{
	struct mmp_page *head = pfn_to_page(self->phys, head_pfn);
	struct mmp_file *f = folio_file(self->phys, head);
	uint64_t nr = folio_nr_pages(head), index = head->index;
	bool ok = true;

	if (!f)
		return true;	/* truncated: what mapped it is gone or going */
	down_read(&f->mapping.i_mmap_rwsem);
	for (struct mmp_vma *vma = f->mapping.i_mmap; vma && ok; vma = vma->shared_next) {
		uint64_t vnr = (vma->end - vma->start) >> PAGE_SHIFT;
		uint64_t first = MAX(index, vma->pgoff), last = MIN(index + nr, vma->pgoff + vnr);

		if (first >= last)
			continue;
		ok = fn(vma->vm_mm, vma, head_pfn, vma->start + ((first - vma->pgoff) << PAGE_SHIFT),
			vma->start + ((last - vma->pgoff) << PAGE_SHIFT), arg);
	}
	up_read(&f->mapping.i_mmap_rwsem);
	return ok;
}

/* Unmap a lazyfree or file folio everywhere; true if no mapping is left. */
bool try_to_unmap(struct mmp_space *self, uint32_t head_pfn)
{
	if (page_flag_test(pfn_to_page(self->phys, head_pfn), PG_anon))
		rmap_walk_anon(self, head_pfn, try_to_unmap_one, NULL);
	else
		rmap_walk_file(self, head_pfn, try_to_unmap_one, NULL);
	return folio_mapcount(pfn_to_page(self->phys, head_pfn)) == 0;
}
