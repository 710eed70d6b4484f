/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * folio_pte_batch: how many PTEs from a present one map the following pages of
 * the same large folio with equal bits, so zap, fork and mremap can act on
 * them with one batched primitive. A batch never leaves the folio, and callers
 * cap @max_nr at the end of the VMA and of the page table.
 */
#include "mm.h"

unsigned int folio_pte_batch_flags(struct mmp_space *s, mmp_pte_t *ptep, mmp_pte_t *ptentp,
				   unsigned int max_nr, unsigned int flags)
{
	mmp_pte_t pte = *ptentp, expected;
	unsigned int ignore = MMP_E_ACCESSED, merged = 0, nr;
	bool merge = flags & (FPB_MERGE_WRITE | FPB_MERGE_YOUNG_DIRTY);
	uint64_t pfn = entry_pfn(s, pte, MMP_PTE), head = folio_pfn(s->phys, pfn);
	uint64_t left = head + folio_nr_pages(pfn_to_page(s->phys, head)) - pfn;

	if (!(flags & FPB_RESPECT_DIRTY))
		ignore |= MMP_E_DIRTY;
	if (!(flags & FPB_RESPECT_SOFT_DIRTY))
		ignore |= MMP_E_SOFT_DIRTY;
	if (!(flags & FPB_RESPECT_WRITE))
		ignore |= MMP_E_WRITE;
	max_nr = MIN((uint64_t)max_nr, left);

	/*
	 * As the kernel compares: each entry with the ignored bits cleared must
	 * be the first one's, advanced to its page; one comparison per granule
	 * the architecture reports (a whole contpte block).
	 */
	expected = pte_clear_flags(s, pte, ignore);
	nr = pte_batch_hint(s, ptep, pte);
	/* Two copies of the loop: the one without merging carries no test for it. */
	if (nr < max_nr && merge)
		nr = folio_pte_scan(s, ptep, expected, ignore, nr, max_nr, true, &merged);
	else if (nr < max_nr)
		nr = folio_pte_scan(s, ptep, expected, ignore, nr, max_nr, false, NULL);
	nr = MIN(nr, max_nr);

	if (merge) {
		unsigned int set = 0, f0 = entry_flags(s, pte, MMP_PTE);

		if (flags & FPB_MERGE_WRITE)
			set |= merged & MMP_E_WRITE;
		if (flags & FPB_MERGE_YOUNG_DIRTY)
			set |= merged & (MMP_E_ACCESSED | MMP_E_DIRTY);
		if (set & ~f0)
			*ptentp = entry_set_flags(s, pte, MMP_PTE, set, 0);
	}
	if (nr > 1)
		count_inc(s, MMP_C_PTE_BATCH);
	return nr;
}

unsigned int folio_pte_batch(struct mmp_space *s, mmp_pte_t *ptep, mmp_pte_t pte,
			     unsigned int max_nr)
{
	return folio_pte_batch_flags(s, ptep, &pte, max_nr, 0);
}
