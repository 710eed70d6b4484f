/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Truncation (mm/truncate.c): a file shrinks, every mapping of the pages past
 * its new end goes (private copies too: the kernel's even_cows), the page
 * cache lets them go, and the tail of the last page reads as zeroes.
 */
#include <string.h>
#include <sys/mman.h>

#include "filemap.h"
#include "mm.h"

/*
 * Zap the pages [first, last] of @f in every VMA of i_mmap, whichever space
 * it is in (unmap_mapping_range_tree). The spaces' mmap locks are not taken:
 * a VMA in i_mmap keeps its upper tables (it leaves i_mmap before they are
 * freed, and mremap moves tables under the i_mmap lock), and PTE tables are
 * reached under RCU and their lock, as every PTE walk does.
 */
void unmap_mapping_range(struct mmp_file *f, uint64_t first, uint64_t last)
{
	struct address_space *as = &f->mapping;

	pthread_rwlock_rdlock(&as->i_mmap_rwsem);
	for (struct mmp_vma *vma = as->i_mmap; vma; vma = vma->shared_next) {
		uint64_t vfirst = vma->pgoff, vlast = vma->pgoff + ((vma->end - vma->start) >> PAGE_SHIFT) - 1;
		uint64_t lo = MAX(first, vfirst), hi = MIN(last, vlast);
		struct mmp_gather tlb;

		if (lo > hi)
			continue;
		tlb_gather_mmu(&tlb, vma->vm_mm, false);
		unmap_page_range(&tlb, vma->start + ((lo - vfirst) << PAGE_SHIFT),
				 vma->start + ((hi - vfirst + 1) << PAGE_SHIFT));
		tlb_finish_mmu(&tlb);
	}
	pthread_rwlock_unlock(&as->i_mmap_rwsem);
}

/* truncate_pagecache: the file is now @size bytes, down from @old. */
static void truncate_pagecache(struct mmp_file *f, uint64_t old, uint64_t size)
{
	uint64_t first = (size + PAGE_SIZE - 1) >> PAGE_SHIFT;

	unmap_mapping_range(f, first, UINT64_MAX);
	filemap_remove_from(f, first);
	/*
	 * The partial last page, and the pages past the end of a large folio
	 * that straddles it (the kernel splits such a folio when it can and
	 * zeroes it when it cannot; here it is always zeroed).
	 */
	filemap_zero_range(f, size, old);
	if (f->store && size < f->store_bytes)
		memset(f->store + size, 0, MIN(old, f->store_bytes) - MIN(size, f->store_bytes));
}

MMP_EXPORT int mmp_file_truncate(struct mmp_file *f, uint64_t size)
{
	uint64_t old;
	int err = 0;

	if (!f || (f->flags & MMP_FILE_RDONLY))
		return -EINVAL;
	if (size > MMP_FILE_MAX_SIZE)
		return -EFBIG;
	pthread_mutex_lock(&f->i_rwsem);
	pthread_rwlock_wrlock(&f->mapping.invalidate_lock);
	old = f->i_size;
	if (size < old) {
		/* i_size first: a fault that locks a folio past it from now on gets SIGBUS. */
		__atomic_store_n(&f->i_size, size, __ATOMIC_RELEASE);
		truncate_pagecache(f, old, size);
	} else if (size > old) {
		err = store_reserve(f, size);
		if (!err) {
			filemap_zero_eof(f, old);
			__atomic_store_n(&f->i_size, size, __ATOMIC_RELEASE);
		}
	}
	pthread_rwlock_unlock(&f->mapping.invalidate_lock);
	pthread_mutex_unlock(&f->i_rwsem);
	return err;
}
