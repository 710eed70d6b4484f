/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reclaim (shrink_folio_list) with no swap device, the default: a lazyfree
 * folio is unmapped through the rmap and freed if it stayed clean and
 * unreferenced; a swapbacked one (anonymous or shmem) cannot be written
 * anywhere, so it is activated and stays resident, as on a machine without
 * swap (a large anonymous one split first: split_to_swap). A file folio is
 * unmapped everywhere, written back if dirty, and dropped from the page
 * cache if nothing else holds it; its next fault reads it from the file
 * again. Written back synchronously: the kernel starts the write and frees
 * the folio on a later pass, once the write is done.
 */
#include <string.h>

#include "mm.h"
#include "rcu.h"

/* folio_mark_lazyfree: clean anonymous memory the owner no longer needs. */
void folio_mark_lazyfree(struct mmp_space *s, struct mmp_page *head)
{
	if (!page_flag_test(head, PG_anon) || !page_flag_test(head, PG_swapbacked))
		return;
	page_flag_clear(head, PG_swapbacked);
	page_flag_set(head, PG_lazyfree);
	count_add(s, MMP_C_LAZYFREE, folio_nr_pages(head));
}

/* Take a folio off the "LRU" for reclaim, holding a reference; false if already taken. */
bool folio_isolate(struct mmp_space *s, struct folio_list *list, uint32_t head_pfn)
{
	struct mmp_page *head = pfn_to_page(s->phys, head_pfn);

	if (__atomic_fetch_or(&head->flags, PG_isolated, __ATOMIC_ACQ_REL) & PG_isolated)
		return false;
	if (list->nr == list->cap) {
		unsigned int cap = MAX(64u, list->cap * 2);
		uint32_t *p = realloc(list->pfns, cap * sizeof(*p));

		if (!p) {
			page_flag_clear(head, PG_isolated);
			return false;
		}
		list->pfns = p;
		list->cap = cap;
	}
	folio_ref_add(head, 1);
	list->pfns[list->nr++] = head_pfn;
	count_inc(s, MMP_C_RECLAIM_ISOLATE);
	return true;
}

/* Put a folio back and drop reclaim's reference (folio_putback_lru). */
static void folio_putback(struct mmp_space *s, uint32_t head_pfn)
{
	page_flag_clear(pfn_to_page(s->phys, head_pfn), PG_isolated);
	folio_put_refs(s, head_pfn, 1);
}

/*
 * A clean, unmapped file folio leaves the page cache if reclaim's isolation
 * and the cache's own are its only references (__remove_mapping: freeze the
 * count, then delete from the cache). True when freed.
 */
static bool remove_mapping(struct mmp_space *s, struct mmp_file *f, uint32_t pfn)
{
	struct mmp_page *head = pfn_to_page(s->phys, pfn);
	unsigned int nr = folio_nr_pages(head);
	int expected = nr + 1;
	bool frozen;

	spin_lock(&f->mapping.i_pages_lock);
	frozen = !page_flag_test(head, PG_dirty) && head->mapping == f->id &&
		 __atomic_compare_exchange_n(&head->refcount, &expected, 0, false, __ATOMIC_ACQ_REL,
					     __ATOMIC_RELAXED);
	if (frozen)
		filemap_remove_folio_frozen(f, pfn);
	spin_unlock(&f->mapping.i_pages_lock);
	if (!frozen)
		return false;
	count_add(s, MMP_C_FILE_RECLAIMED, nr);
	count_inc(s, MMP_C_FOLIO_FREE);
	folio_free(s->phys, pfn);
	return true;
}

/*
 * A file folio: unmap, write back if dirty, drop. Folio lock and
 * invalidate_lock only tried: truncation holds them while it waits for
 * nothing of ours, but reclaim must not wait on it either.
 */
static void shrink_file_folio(struct mmp_space *s, uint32_t pfn)
{
	struct mmp_page *head = pfn_to_page(s->phys, pfn);
	struct mmp_file *f = folio_file(s->phys, head);
	bool freed = false;

	if (!f || (folio_mapcount(head) && !try_to_unmap(s, pfn)) || !folio_trylock(head)) {
		count_inc(s, MMP_C_RECLAIM_KEEP);
		folio_putback(s, pfn);
		return;
	}
	if (page_flag_test(head, PG_dirty) && mapping_can_writeback(f) &&
	    down_read_trylock(&f->mapping.invalidate_lock)) {
		folio_write_back(f, pfn);	/* pageout() */
		up_read(&f->mapping.invalidate_lock);
		count_add(s, MMP_C_FILE_WRITEBACK, folio_nr_pages(head));
	}
	if (!folio_mapcount(head))
		freed = remove_mapping(s, f, pfn);
	if (!freed) {
		folio_unlock(head);
		count_inc(s, MMP_C_RECLAIM_KEEP);
		folio_putback(s, pfn);
	}
}

struct swap_split {
	struct mmp_space *self;
	int err;
};

/* The mapping of the folio in @split->self: split its PMD, then the folio. */
static bool split_to_swap_one(struct mmp_space *s, struct mmp_vma *vma, uint32_t head_pfn,
			      uint64_t start, uint64_t end, void *arg)
{
	struct swap_split *split = arg;
	mmp_pte_t *pmdp = pmd_offset(s, start), *ptes, pmd;
	mmp_spinlock_t *ptl;

	if (s != split->self || !pmdp || !(pmd = READ_ONCE(*pmdp)))
		return true;
	if (entry_test(s, pmd, MMP_PMD, MMP_E_LEAF)) {
		if (entry_pfn(s, pmd, MMP_PMD) != head_pfn)
			return true;
		split_huge_pmd(s, pmdp, start & PMD_MASK);
	}
	rcu_read_lock();
	ptes = pte_offset_map_lock(s, pmdp, &ptl);
	if (ptes) {
		/* Reclaim's isolation is the one reference beside the mappings. */
		split->err = split_folio_locked(s, vma, ptes, start & PMD_MASK, head_pfn, 1);
		spin_unlock(ptl);
	}
	rcu_read_unlock();
	return false;
}

/*
 * With no swap device, folio_alloc_swap fails for a large anonymous folio
 * as well, and shrink_folio_list splits it to swap it page by page
 * (THP_SWPOUT_FALLBACK): the split maps the sub-pages of zeroes to the zero
 * page and frees them, and each page left fails its own allocation and is
 * activated. A 6.18 host without swap: MADV_PAGEOUT of a THP with two pages
 * written leaves 8 kB of Rss, thp_split_pmd +1, thp_swpout_fallback +1. The
 * folio is one that @s alone maps whole (MADV_PAGEOUT isolates no other
 * anonymous folio, and splits one partly mapped itself: the kernel's reclaim
 * would split that one without counting a fallback); one that cannot be
 * split is activated whole. True if split, with the order-0 folios left in
 * *@left.
 */
static bool split_to_swap(struct mmp_space *s, uint32_t head_pfn, unsigned int *left)
{
	struct mmp_page *head = pfn_to_page(s->phys, head_pfn);
	unsigned int nr = folio_nr_pages(head), order = head->order;
	struct swap_split split = { .self = s, .err = -EAGAIN };

	rmap_walk_anon(s, head_pfn, split_to_swap_one, &split);
	if (split.err)
		return false;
	if (order >= HPAGE_PMD_ORDER)
		count_inc(s, MMP_C_THP_SWPOUT_FALLBACK);
	count_mthp_stat(s, order, MTHP_STAT_SWPOUT_FALLBACK);
	*left = 0;
	for (unsigned int i = 0; i < nr; i++)
		*left += head[i].mapcount > 0;
	return true;
}

/* shrink_folio_list over @list; the caller holds @s's mmap lock for reading. */
void reclaim_pages(struct mmp_space *s, struct folio_list *list, bool pageout)
{
	for (unsigned int i = 0; i < list->nr; i++) {
		uint32_t pfn = list->pfns[i];
		struct mmp_page *head = pfn_to_page(s->phys, pfn);
		unsigned int nr = folio_nr_pages(head);

		if (page_flag_test(head, PG_swapbacked)) {
			unsigned int left;

			/*
			 * No swap device: nowhere to write it (activate_locked).
			 * An anonymous folio stays mapped (add_to_swap failed
			 * first), a large one split first; a shmem one given to
			 * MADV_PAGEOUT is unmapped before its writeout finds no
			 * swap, and stays in the page cache, unless it is clean
			 * (never written: zeroes) and so needs no writeout:
			 * __remove_mapping drops it as it drops a clean file
			 * folio, and the next access faults in a new one, page by
			 * page (a 6.18 host, no swap).
			 */
			if (pageout && page_flag_test(head, PG_anon) && head->order &&
			    split_to_swap(s, pfn, &left)) {
				count_add(s, MMP_C_RECLAIM_ACTIVATE, left);
				folio_putback(s, pfn);
				continue;
			}
			if (pageout && !page_flag_test(head, PG_anon)) {
				struct mmp_file *f = folio_file(s->phys, head);

				if (folio_mapcount(head))
					try_to_unmap(s, pfn);
				if (f && !folio_mapcount(head) && !page_flag_test(head, PG_dirty) &&
				    folio_trylock(head)) {
					if (remove_mapping(s, f, pfn))
						continue;
					folio_unlock(head);
				}
			}
			count_inc(s, MMP_C_RECLAIM_ACTIVATE);
			folio_putback(s, pfn);
			continue;
		}
		if (!page_flag_test(head, PG_anon)) {
			shrink_file_folio(s, pfn);
			continue;
		}
		if (folio_mapcount(head) && !try_to_unmap(s, pfn)) {
			if (page_flag_test(head, PG_swapbacked))
				count_inc(s, MMP_C_RECLAIM_ACTIVATE);	/* redirtied */
			else
				count_inc(s, MMP_C_RECLAIM_KEEP);	/* pinned, or contended */
			folio_putback(s, pfn);
			continue;
		}
		/*
		 * Unmapped lazyfree folio: free it if reclaim's reference is the
		 * only one left (folio_ref_freeze(folio, 1)).
		 */
		int one = 1;

		if (__atomic_compare_exchange_n(&head->refcount, &one, 0, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			count_add(s, MMP_C_LAZYFREED, nr);
			count_inc(s, MMP_C_FOLIO_FREE);
			folio_free(s->phys, pfn);
		} else {
			count_inc(s, MMP_C_RECLAIM_KEEP);
			folio_putback(s, pfn);
		}
	}
	list->nr = 0;
}
