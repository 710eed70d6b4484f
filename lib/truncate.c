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
void unmap_mapping_pages(struct mmp_file *f, uint64_t first, uint64_t last, bool even_cows)
{
	struct address_space *as = &f->mapping;

	down_read(&as->i_mmap_rwsem);
	for (struct mmp_vma *vma = as->i_mmap; vma; vma = vma->shared_next) {
		uint64_t vfirst = vma->pgoff, vlast = vma->pgoff + ((vma->end - vma->start) >> PAGE_SHIFT) - 1;
		uint64_t lo = MAX(first, vfirst), hi = MIN(last, vlast);
		struct mmp_gather tlb;

		if (lo > hi)
			continue;
		tlb_gather_mmu(&tlb, vma->vm_mm, false);
		tlb.drop_markers = false;	/* guard regions outlive truncation */
		tlb.keep_anon = !even_cows;
		unmap_page_range(&tlb, vma->start + ((lo - vfirst) << PAGE_SHIFT),
				 vma->start + ((hi - vfirst + 1) << PAGE_SHIFT));
		tlb_finish_mmu(&tlb);
	}
	up_read(&as->i_mmap_rwsem);
}

void unmap_mapping_range(struct mmp_file *f, uint64_t first, uint64_t last)
{
	unmap_mapping_pages(f, first, last, true);
}

/*
 * The store past @size: the partial page zeroed, whole pages given back to
 * the host (they read as zeroes again), so even a huge shrink costs little.
 */
static void store_truncate(struct mmp_file *f, uint64_t old, uint64_t size)
{
	uint64_t end = MIN(old, f->store_bytes), page = (size + PAGE_SIZE - 1) & PAGE_MASK;

	if (!f->store || size >= end)
		return;
	memset(f->store + size, 0, MIN(page, end) - size);
	if (page < end)
		madvise(f->store + page, ((end + PAGE_SIZE - 1) & PAGE_MASK) - page, MADV_DONTNEED);
}

/* truncate_pagecache: the file is now @size bytes, down from @old. */
static void truncate_pagecache(struct mmp_file *f, uint64_t old, uint64_t size)
{
	uint64_t first = (size + PAGE_SIZE - 1) >> PAGE_SHIFT;
	uint32_t pfn;

	unmap_mapping_range(f, first, UINT64_MAX);
	filemap_remove_from(f, first);
	/*
	 * Again: a fault that copied a page into a private mapping before its
	 * folio went may have installed the copy since (the kernel's second
	 * unmap_mapping_range, for "racily COWed private pages").
	 */
	unmap_mapping_range(f, first, UINT64_MAX);
	/*
	 * The partial last page, and the pages past the end of a large folio
	 * that straddles it, the only folio left past @size (the kernel splits
	 * such a folio when it can and zeroes it when it cannot; here it is
	 * always zeroed).
	 */
	pfn = filemap_get_folio(f, size >> PAGE_SHIFT);
	if (pfn != NO_PFN) {
		struct mmp_page *head = pfn_to_page(f->phys, pfn);
		uint64_t end = (head->index + folio_nr_pages(head)) << PAGE_SHIFT;

		/* shmem_undo_range dirties it: its zeroed tail exists nowhere else. */
		if (shmem_file(f))
			page_flag_set(head, PG_dirty);
		__folio_put_refs(f->phys, pfn, 1);
		filemap_zero_range(f, size, MIN(old, end));
	}
	store_truncate(f, old, size);
}

/*
 * fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) of the pages [first,
 * end) (shmem_fallocate, and a disk file system's the same way): every
 * mapping of them goes but private copies (unmap_mapping_range without
 * even_cows), the folios inside the hole leave the page cache, a large folio
 * straddling an edge has its part zeroed (the kernel splits it when it can),
 * and the store reads zeroes there. The size stays.
 */
int file_punch_hole(struct mmp_file *f, uint64_t first, uint64_t end)
{
	pthread_mutex_lock(&f->i_rwsem);
	down_write(&f->mapping.invalidate_lock);
	unmap_mapping_pages(f, first, end - 1, false);
	filemap_remove_range(f, first, end, false);
	filemap_zero_range(f, first << PAGE_SHIFT, end << PAGE_SHIFT);
	if (f->store && first < f->store_bytes >> PAGE_SHIFT) {
		uint64_t from = first << PAGE_SHIFT;
		uint64_t to = MIN(end << PAGE_SHIFT, f->store_bytes & PAGE_MASK);

		/* Whole pages back to the host: they read as zeroes again. */
		if (from < to)
			madvise(f->store + from, to - from, MADV_DONTNEED);
		if (to < MIN(end << PAGE_SHIFT, f->store_bytes))
			memset(f->store + to, 0, f->store_bytes - to);
	}
	up_write(&f->mapping.invalidate_lock);
	pthread_mutex_unlock(&f->i_rwsem);
	return 0;
}

MMP_EXPORT int mmp_file_truncate(struct mmp_file *f, uint64_t size)
{
	uint64_t old;
	int err = 0;

	if (!f || (f->flags & MMP_FILE_RDONLY))
		return -EINVAL;
	if (size > MMP_FILE_MAX_SIZE)
		return -EFBIG;
	if (is_file_hugepages(f))
		return hugetlbfs_truncate(f, size);
	pthread_mutex_lock(&f->i_rwsem);
	down_write(&f->mapping.invalidate_lock);
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
	up_write(&f->mapping.invalidate_lock);
	pthread_mutex_unlock(&f->i_rwsem);
	return err;
}
