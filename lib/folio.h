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

/* Allocate and free (lib/memory.c). */
uint32_t folio_alloc_anon(struct mmp_space *s, unsigned int order);
bool __folio_put_refs(struct mmp_phys *phys, uint32_t head_pfn, unsigned int nr);
void folio_put_refs(struct mmp_space *s, uint32_t head_pfn, unsigned int nr);
void folio_free(struct mmp_phys *phys, uint32_t head_pfn);

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

/*
 * A new folio's first mapping (folio_add_new_anon_rmap): @nr PTEs of @vma from
 * @addr map pages [0, nr), or one PMD maps it all; no table maps it yet. Its
 * anon_vma and index come first (__folio_set_anon). A stale lockless read may
 * still reach the recycled frame, but GUP-fast's folio_try_get fails while the
 * count is 0, which it is until the last store.
 */
static __always_inline void folio_add_new_anon_rmap(struct mmp_page *head,
						    struct mmp_vma *vma, uint64_t addr,
						    int nr, bool pmd)
{
	/* MAP_DROPPABLE memory is never swapbacked: reclaim may always drop it. */
	if (unlikely(vma->flags & VM_DROPPABLE))
		page_flag_clear(head, PG_swapbacked);
	__folio_set_anon(head, vma, addr);
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

/* Map/unmap @nr PTEs of pages [page, page + nr) of folio @head. */
static inline void folio_add_rmap_ptes(struct mmp_page *head, struct mmp_page *page, int nr)
{
	for (int i = 0; i < nr; i++)
		__atomic_fetch_add(&page[i].mapcount, 1, __ATOMIC_RELAXED);
	if (head->order)
		__atomic_fetch_add(&head->folio.large_mapcount, nr, __ATOMIC_RELAXED);
}

static inline void folio_remove_rmap_ptes(struct mmp_page *head, struct mmp_page *page, int nr)
{
	for (int i = 0; i < nr; i++)
		__atomic_fetch_sub(&page[i].mapcount, 1, __ATOMIC_RELAXED);
	if (head->order)
		__atomic_fetch_sub(&head->folio.large_mapcount, nr, __ATOMIC_RELAXED);
}

static inline void folio_add_rmap_pmd(struct mmp_page *head)
{
	__atomic_fetch_add(&head->folio.entire_mapcount, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&head->folio.large_mapcount, 1, __ATOMIC_RELAXED);
}

static inline void folio_remove_rmap_pmd(struct mmp_page *head)
{
	__atomic_fetch_sub(&head->folio.entire_mapcount, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&head->folio.large_mapcount, 1, __ATOMIC_RELAXED);
}

/* A lazyfree folio found dirty goes back to being swap-backed anonymous memory. */
static inline void folio_set_swapbacked(struct mmp_page *head)
{
	__atomic_fetch_or(&head->flags, PG_swapbacked, __ATOMIC_RELAXED);
	__atomic_fetch_and(&head->flags, ~PG_lazyfree, __ATOMIC_RELAXED);
}

#endif /* MMP_FOLIO_H */
