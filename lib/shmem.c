/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * shmem (mm/shmem.c's policy part): the folio order a huge= mode gives, and
 * the shmem object behind shared anonymous memory. shmem folios live in a
 * page cache like a file's but have no store: they are swap-backed, and with
 * no swap device reclaim keeps them.
 */
#include "filemap.h"
#include "mm.h"

/*
 * shmem_allowable_huge_orders for PMD size (the per-size hugepages-*kB/
 * shmem_enabled files are not modelled: PMD or order 0). always: any PMD-
 * aligned index; within_size: only a folio the file's size covers entirely;
 * advise: only in a MADV_HUGEPAGE mapping. A VMA must also hold the whole
 * PMD-aligned range, or the folio could not be mapped by one PMD.
 */
unsigned int shmem_huge_order(struct mmp_file *f, struct mmp_vma *vma, uint64_t index)
{
	uint64_t start = index & ~(uint64_t)(HPAGE_PMD_NR - 1);
	bool huge;

	if (vma && vma_thp_disabled(vma, false))
		return 0;
	if (f->flags & MMP_FILE_HUGE_ALWAYS)
		huge = true;
	else if (f->flags & MMP_FILE_HUGE_WITHIN_SIZE)
		huge = start + HPAGE_PMD_NR <= file_size_pages(f);
	else if (f->flags & MMP_FILE_HUGE_ADVISE)
		huge = vma && (vma->flags & VM_HUGEPAGE);
	else
		huge = false;
	if (huge && vma) {
		uint64_t haddr = vma->start + ((start - vma->pgoff) << PAGE_SHIFT);

		huge = start >= vma->pgoff && (haddr & ~PMD_MASK) == 0 &&
		       haddr + PMD_SIZE <= vma->end;
	}
	return huge ? HPAGE_PMD_ORDER : 0;
}

int shmem_zero_setup(struct mmp_phys *phys, uint64_t size, struct mmp_file **out)
{
	return file_alloc(phys, size, MMP_FILE_SHMEM, false, out);
}
