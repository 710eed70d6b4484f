/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * msync (mm/msync.c). Reads of a file go through the page cache, which
 * mappings share, so nothing needs making visible; MS_SYNC writes the dirty
 * folios of a shared file mapping to the file's store (vfs_fsync_range).
 * Unlike the kernel's writeback this does not write-protect the pages
 * (folio_mkclean): a later write through the mapping leaves the PTE dirty,
 * and reclaim takes that dirty bit when it unmaps, so nothing is lost.
 */
#include "filemap.h"
#include "mm.h"
#include "mmap_lock.h"

#define MMP_MS_ALL	(MMP_MS_ASYNC | MMP_MS_INVALIDATE | MMP_MS_SYNC)

static void sync_folio(struct mmp_file *f, uint64_t index, uint64_t *next)
{
	uint32_t pfn = filemap_get_folio(f, index);
	struct mmp_page *head;

	*next = index + 1;
	if (pfn == NO_PFN)
		return;
	head = pfn_to_page(f->phys, pfn);
	/* invalidate_lock before the folio lock, as faults and truncation take them. */
	down_read(&f->mapping.invalidate_lock);
	folio_lock(head);
	if (head->mapping == f->id && page_flag_test(head, PG_dirty))
		folio_write_back(f, pfn);
	*next = head->index + folio_nr_pages(head);
	folio_unlock(head);
	up_read(&f->mapping.invalidate_lock);
	__folio_put_refs(f->phys, pfn, 1);
}

MMP_EXPORT int mmp_msync(struct mmp_space *s, uint64_t start, uint64_t len, int flags)
{
	uint64_t end, addr;
	int err = 0;

	if (!s || (flags & ~MMP_MS_ALL) || (start & (PAGE_SIZE - 1)))
		return -EINVAL;
	if ((flags & MMP_MS_ASYNC) && (flags & MMP_MS_SYNC))
		return -EINVAL;
	end = start + ((len + PAGE_SIZE - 1) & PAGE_MASK);
	if (end < start)
		return -ENOMEM;
	mmap_read_lock(s);
	addr = start;
	for (struct mmp_vma *vma = vma_find_next(s, start); addr < end; vma = vma->vm_next) {
		if (!vma || vma->start >= end) {
			err = -ENOMEM;	/* unmapped_error: the rest still synced */
			break;
		}
		if (vma->start > addr)
			err = -ENOMEM;
		addr = MAX(addr, vma->start);
		/* Invalidating locked pages is refused at once, a hole before it or not. */
		if ((flags & MMP_MS_INVALIDATE) && (vma->flags & VM_LOCKED)) {
			err = -EBUSY;
			break;
		}
		if ((flags & MMP_MS_SYNC) && (vma->flags & VM_SHARED) && vma->vm_file &&
		    mapping_can_writeback(vma->vm_file)) {
			uint64_t first = linear_page_index(vma, addr);
			uint64_t last = linear_page_index(vma, MIN(end, vma->end));

			for (uint64_t index = first; index < last; )
				sync_folio(vma->vm_file, index, &index);
		}
		addr = vma->end;
	}
	mmap_read_unlock(s);
	return err;
}
