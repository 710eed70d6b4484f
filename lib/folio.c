/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Folio lifetime: an anonymous folio's allocation, and the last reference's
 * free, back to the buddy allocator or to its hugetlb pool (mm/ keeps such
 * folio code apart from memory.c's faults too).
 */
#include "mm.h"

uint32_t folio_alloc_anon(struct mmp_space *s, unsigned int order)
{
	return __folio_alloc_anon(s, order);
}

void folio_free(struct mmp_phys *phys, uint32_t head_pfn)
{
	phys_free_pages(phys, head_pfn, pfn_to_page(phys, head_pfn)->order);
}

/*
 * Drop @nr references; the last one frees the folio (folios_put_refs). No
 * space needed: a pin may outlive the mm it was taken in. True when freed.
 */
bool __folio_put_refs(struct mmp_phys *phys, uint32_t head_pfn, unsigned int nr)
{
	struct mmp_page *head = pfn_to_page(phys, head_pfn);
	int left = folio_ref_sub_return(head, nr);

	MMP_BUG_ON(left < 0);
	if (left)
		return false;
	MMP_BUG_ON(folio_mapcount(head) != 0);
	if (unlikely(head->flags & PG_hugetlb))
		free_huge_folio(phys, head_pfn);	/* back to its pool */
	else
		folio_free(phys, head_pfn);
	return true;
}

/* The same, counted in @s. */
void folio_put_refs(struct mmp_space *s, uint32_t head_pfn, unsigned int nr)
{
	if (__folio_put_refs(s->phys, head_pfn, nr))
		count_inc(s, MMP_C_FOLIO_FREE);
}
