/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Folios: references, mapcounts, flags and the anonymous reverse-map fields (linux/mm.h's folio part). */
#ifndef MMP_FOLIO_H
#define MMP_FOLIO_H

#include "page_alloc.h"
#include "vmstat.h"

/* The pfn of the folio head that @pfn belongs to (compound_head). */
static __always_inline uint64_t folio_pfn(struct mmp_phys *phys, uint64_t pfn)
{
	struct mmp_page *p = pfn_to_page(phys, pfn);

	return unlikely(p->flags & PG_tail) ? p->tail.head : pfn;
}

static __always_inline unsigned int folio_nr_pages(struct mmp_page *head)
{
	return 1u << head->order;
}

/* Allocate and free (lib/folio.c). */
uint32_t folio_alloc_anon(struct mmp_space *s, unsigned int order);
bool __folio_put_refs(struct mmp_phys *phys, uint32_t head_pfn, unsigned int nr);
void folio_put_refs(struct mmp_space *s, uint32_t head_pfn, unsigned int nr);
void folio_free(struct mmp_phys *phys, uint32_t head_pfn);

/*
 * A new anonymous folio of 2^order pages, not yet mapped; NO_PFN when out of
 * memory. Inline in the anonymous fault; folio_alloc_anon() elsewhere.
 */
static __always_inline uint32_t __folio_alloc_anon(struct mmp_space *s, unsigned int order)
{
	uint32_t pfn = phys_alloc_pages(s->phys, order);
	struct mmp_page *head;

	if (pfn == NO_PFN) {
		count_inc(s, MMP_C_FOLIO_ALLOC_FAIL);
		return NO_PFN;
	}
	head = pfn_to_page(s->phys, pfn);
	for (unsigned int i = 1; i < (1u << order); i++) {
		head[i].flags = PG_tail | PG_anon_exclusive;
		head[i].tail.head = pfn;
	}
	head->order = order;
	head->flags = PG_head | PG_anon | PG_swapbacked | PG_anon_exclusive;
	head->refcount = 0;
	count_inc(s, MMP_C_FOLIO_ALLOC_O0 + order);
	return pfn;
}

/* Folio references and mappings, kept where folio_add/remove_rmap would. */
static inline void folio_ref_add(struct mmp_page *head, int nr)
{
	__atomic_fetch_add(&head->refcount, nr, __ATOMIC_RELAXED);
}

static inline int folio_ref_sub_return(struct mmp_page *head, int nr)
{
	return __atomic_sub_fetch(&head->refcount, nr, __ATOMIC_ACQ_REL);
}

static inline int folio_ref_count(struct mmp_page *head)
{
	return __atomic_load_n(&head->refcount, __ATOMIC_ACQUIRE);
}

/*
 * Mapcounts as the kernel keeps them: a small folio has only its page's
 * _mapcount; a large one also has _large_mapcount (every PTE and PMD mapping)
 * and _entire_mapcount (PMD mappings).
 */
static inline int folio_mapcount(struct mmp_page *head)
{
	return head->order ? __atomic_load_n(&head->folio.large_mapcount, __ATOMIC_RELAXED)
			   : __atomic_load_n(&head->mapcount, __ATOMIC_RELAXED);
}

static inline void page_flag_set(struct mmp_page *p, uint32_t f)
{
	__atomic_fetch_or(&p->flags, f, __ATOMIC_RELAXED);
}

static inline void page_flag_clear(struct mmp_page *p, uint32_t f)
{
	__atomic_fetch_and(&p->flags, ~f, __ATOMIC_RELAXED);
}

static inline bool page_flag_test(struct mmp_page *p, uint32_t f)
{
	return __atomic_load_n(&p->flags, __ATOMIC_RELAXED) & f;
}

/* folio->mapping and folio->index of a new folio whose first page maps at @addr. */
static __always_inline void __folio_set_anon(struct mmp_page *head, struct mmp_vma *vma,
					     uint64_t addr)
{
	head->anon_vma = vma->anon_vma->id;
	head->index = linear_page_index(vma, addr);
}

/* ---- the spaces that map an anonymous large folio (CONFIG_MM_ID) ------------------ */

/*
 * head[1].tail.mm_ids: MM_IDS_SHARED says the folio may be mapped by more
 * than one space, MM_IDS_LOCKED guards the slots (folio_lock_large_mapcount).
 * Two slots name a space each and count the mappings it made since it took
 * the slot; a third space maps without one. The bit is set when a second
 * space maps, and cleared only when one slot's count is every mapping, so it
 * may stay set after the others left (a slot undercounts its space when that
 * space mapped before it had a slot), never the other way: a folio without
 * it is mapped by one space alone. do_wp_page reuses a page on that.
 */
#define MM_IDS_SHARED	(1u << 0)
#define MM_IDS_LOCKED	(1u << 1)

/* A space's owner id: never 0, the free slot; ids repeat after 2^32 - 1 spaces. */
static __always_inline uint32_t space_mm_id(const struct mmp_space *s)
{
	return (uint32_t)(s->id % UINT32_MAX) + 1;
}

/* hugetlb folios are not tracked: hugetlb_add_anon_rmap counts mappings alone. */
static __always_inline bool folio_mm_tracked(struct mmp_page *head)
{
	return head->order &&
	       (__atomic_load_n(&head->flags, __ATOMIC_RELAXED) & (PG_anon | PG_hugetlb)) == PG_anon;
}

static inline void folio_lock_large_mapcount(struct mmp_page *head)
{
	uint32_t *w = &head[1].tail.mm_ids;

	while (__atomic_fetch_or(w, MM_IDS_LOCKED, __ATOMIC_ACQUIRE) & MM_IDS_LOCKED)
		while (__atomic_load_n(w, __ATOMIC_RELAXED) & MM_IDS_LOCKED)
			cpu_relax();
}

static inline void folio_unlock_large_mapcount(struct mmp_page *head)
{
	__atomic_fetch_and(&head[1].tail.mm_ids, ~MM_IDS_LOCKED, __ATOMIC_RELEASE);
}

/* folio_maybe_mapped_shared() for a tracked folio. */
static inline bool folio_mm_shared(struct mmp_page *head)
{
	return __atomic_load_n(&head[1].tail.mm_ids, __ATOMIC_RELAXED) & MM_IDS_SHARED;
}

/* @diff more mappings of @head by @s; the new total. */
static inline int folio_add_large_mapcount(struct mmp_space *s, struct mmp_page *head, int diff)
{
	struct mmp_page *t = head + 1;
	uint32_t id = space_mm_id(s);
	int total;

	if (!folio_mm_tracked(head))
		return __atomic_add_fetch(&head->folio.large_mapcount, diff, __ATOMIC_RELAXED);
	folio_lock_large_mapcount(head);
	total = __atomic_add_fetch(&head->folio.large_mapcount, diff, __ATOMIC_RELAXED);
	if (t->mm_id[0] == id) {
		t->mm_id_mapcount[0] += diff;
	} else if (t->mm_id[1] == id) {
		t->mm_id_mapcount[1] += diff;
	} else if (!t->mm_id[0]) {
		t->mm_id[0] = id;
		t->mm_id_mapcount[0] = diff;
		if (total != diff)	/* others mapped it already */
			__atomic_fetch_or(&t->tail.mm_ids, MM_IDS_SHARED, __ATOMIC_RELAXED);
	} else if (!t->mm_id[1]) {
		t->mm_id[1] = id;
		t->mm_id_mapcount[1] = diff;
		__atomic_fetch_or(&t->tail.mm_ids, MM_IDS_SHARED, __ATOMIC_RELAXED);
	}
	folio_unlock_large_mapcount(head);
	return total;
}

/* @diff fewer mappings of @head by @s; the new total. */
static inline int folio_sub_large_mapcount(struct mmp_space *s, struct mmp_page *head, int diff)
{
	struct mmp_page *t = head + 1;
	uint32_t id = space_mm_id(s);
	int total;

	if (!folio_mm_tracked(head))
		return __atomic_sub_fetch(&head->folio.large_mapcount, diff, __ATOMIC_RELAXED);
	folio_lock_large_mapcount(head);
	total = __atomic_sub_fetch(&head->folio.large_mapcount, diff, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++) {
		if (t->mm_id[i] != id)
			continue;
		t->mm_id_mapcount[i] -= diff;
		if (t->mm_id_mapcount[i] > 0)
			goto out;
		/* Gone, or it mapped before it had the slot: free it either way. */
		t->mm_id_mapcount[i] = 0;
		t->mm_id[i] = 0;
		break;
	}
	if (t->mm_id_mapcount[0] == total || t->mm_id_mapcount[1] == total)
		__atomic_fetch_and(&t->tail.mm_ids, ~MM_IDS_SHARED, __ATOMIC_RELAXED);
out:
	folio_unlock_large_mapcount(head);
	return total;
}

/* Queue a partially mapped anonymous large folio for the deferred split (huge_memory.c). */
void deferred_split_folio(struct mmp_space *s, struct mmp_page *head);

/*
 * A new folio's first mapping (folio_add_new_anon_rmap): @nr PTEs of @vma from
 * @addr map pages [0, nr), or one PMD maps it all; no table maps it yet. Its
 * anon_vma and index come first (__folio_set_anon). A stale lockless read may
 * still reach the recycled frame, but GUP-fast's folio_try_get fails while the
 * count is 0, which it is until the last store. A large one is owned by the
 * VMA's space alone (folio_set_large_mapcount).
 */
static __always_inline void folio_add_new_anon_rmap(struct mmp_page *head,
						    struct mmp_vma *vma, uint64_t addr,
						    int nr, bool pmd)
{
	/* MAP_DROPPABLE memory is never swapbacked: reclaim may always drop it. */
	if (unlikely(vma->flags & VM_DROPPABLE))
		page_flag_clear(head, PG_swapbacked);
	__folio_set_anon(head, vma, addr);
	if (head->order) {
		head[1].tail.mm_ids = 0;
		head[1].mm_id[0] = space_mm_id(vma->vm_mm);
		head[1].mm_id_mapcount[0] = pmd ? 1 : nr;
		head[1].mm_id[1] = 0;
		head[1].mm_id_mapcount[1] = 0;
	}
	if (pmd) {
		head->folio.entire_mapcount = 1;
		head->folio.large_mapcount = 1;
		head->refcount = 1;
		return;
	}
	for (int i = 0; i < nr; i++)
		head[i].mapcount = 1;
	if (head->order)
		head->folio.large_mapcount = nr;
	head->refcount = nr;
}

/* @s maps @nr PTEs of pages [page, page + nr) of folio @head. */
static inline void folio_add_rmap_ptes(struct mmp_space *s, struct mmp_page *head,
				       struct mmp_page *page, int nr)
{
	for (int i = 0; i < nr; i++)
		__atomic_fetch_add(&page[i].mapcount, 1, __ATOMIC_RELAXED);
	if (head->order)
		folio_add_large_mapcount(s, head, nr);
}

/*
 * @s unmaps them. As __folio_remove_rmap with per-page mapcounts
 * (CONFIG_PAGE_MAPCOUNT): an anonymous folio a page of which lost its last
 * mapping, still mapped elsewhere and by no PMD, is partially mapped. A batch
 * that takes a whole folio at once never is, which is why zap batches.
 */
static inline void folio_remove_rmap_ptes(struct mmp_space *s, struct mmp_page *head,
					  struct mmp_page *page, int nr)
{
	int last = 0;

	/* The folio's count first: a zap of the whole folio need not look at each page's. */
	if (!head->order || !folio_sub_large_mapcount(s, head, nr) || !(head->flags & PG_anon) ||
	    __atomic_load_n(&head->folio.entire_mapcount, __ATOMIC_RELAXED)) {
		for (int i = 0; i < nr; i++)
			__atomic_fetch_sub(&page[i].mapcount, 1, __ATOMIC_RELAXED);
		return;
	}
	for (int i = 0; i < nr; i++)
		last += !__atomic_sub_fetch(&page[i].mapcount, 1, __ATOMIC_RELAXED);
	if (last)
		deferred_split_folio(s, head);
}

static inline void folio_add_rmap_pmd(struct mmp_space *s, struct mmp_page *head)
{
	__atomic_fetch_add(&head->folio.entire_mapcount, 1, __ATOMIC_RELAXED);
	folio_add_large_mapcount(s, head, 1);
}

/*
 * The last PMD going from a folio that PTEs still map in part (a split in
 * another space, then some of its PTEs gone) leaves it partially mapped. A
 * split maps the PTEs before it drops the PMD, so it never does.
 */
static inline void folio_remove_rmap_pmd(struct mmp_space *s, struct mmp_page *head)
{
	int entire = __atomic_sub_fetch(&head->folio.entire_mapcount, 1, __ATOMIC_RELAXED);
	int total = folio_sub_large_mapcount(s, head, 1);
	unsigned int nr = folio_nr_pages(head), mapped = 0;

	if (likely(entire || total <= 0) || !(head->flags & PG_anon))
		return;
	for (unsigned int i = 0; i < nr; i++)
		mapped += __atomic_load_n(&head[i].mapcount, __ATOMIC_RELAXED) > 0;
	if (mapped < nr)
		deferred_split_folio(s, head);
}

/* A lazyfree folio found dirty goes back to being swap-backed anonymous memory. */
static inline void folio_set_swapbacked(struct mmp_page *head)
{
	__atomic_fetch_or(&head->flags, PG_swapbacked, __ATOMIC_RELAXED);
	__atomic_fetch_and(&head->flags, ~PG_lazyfree, __ATOMIC_RELAXED);
}

#endif /* MMP_FOLIO_H */
