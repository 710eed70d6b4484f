/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hugetlbfs file (fs/hugetlbfs/inode.c): the anonymous one behind a
 * MAP_HUGETLB mapping and a memfd of MFD_HUGETLB. Its page cache holds huge
 * folios from the pool; it has no backing store and nothing reclaims it.
 *
 *  - Its size is whole huge pages: ftruncate to anything else is EINVAL.
 *    Growing it reserves nothing (mmap does); shrinking it unmaps the pages
 *    past the new end from every mapping, private copies too
 *    (hugetlb_vmdelete_list), drops them from the page cache and gives back
 *    the reservations of the indices it no longer has
 *    (remove_inode_hugepages, hugetlb_unreserve_pages).
 *  - A writable mapping that reaches past the end grows the file to cover it
 *    (hugetlbfs_file_mmap), read-only and PROT_NONE ones do not.
 *  - write(2) is not supported (EINVAL); a read of a hole reads zeroes.
 */
#include <stdlib.h>

#include "mm.h"

int hugetlb_file_setup(struct mmp_phys *phys, struct hstate *h, uint64_t size, bool handle,
		       struct mmp_file **out)
{
	struct resv_map *map = resv_map_alloc();
	struct mmp_file *f;
	int err;

	if (!map)
		return -ENOMEM;
	/* Created empty, so no backing store is reserved for it. */
	err = file_alloc(phys, 0, 0, handle, &f);
	if (err) {
		resv_map_put(map);
		return err;
	}
	f->resv_map = map;
	f->hstate = h;
	__atomic_store_n(&f->i_size, size, __ATOMIC_RELEASE);
	*out = f;
	return 0;
}

/*
 * Zap huge pages from index @first on in every VMA mapping @f, whichever
 * space it is in, anonymous copies of private mappings too
 * (hugetlb_vmdelete_list). i_mmap keeps the VMAs and their tables.
 */
static void hugetlb_vmdelete_list(struct mmp_file *f, uint64_t first)
{
	struct hstate *h = f->hstate;
	uint64_t first_pg = first << h->order;

	down_read(&f->mapping.i_mmap_rwsem);
	for (struct mmp_vma *vma = f->mapping.i_mmap; vma; vma = vma->shared_next) {
		uint64_t vlast = vma->pgoff + ((vma->end - vma->start) >> PAGE_SHIFT);
		uint64_t start = first_pg > vma->pgoff ?
					 vma->start + ((first_pg - vma->pgoff) << PAGE_SHIFT) :
					 vma->start;
		struct mmp_gather tlb;

		if (first_pg >= vlast)
			continue;
		tlb_gather_mmu(&tlb, vma->vm_mm, false);
		unmap_hugepage_range(&tlb, vma, start, vma->end, NO_PFN);
		tlb_end_vma(&tlb);
		tlb_finish_mmu(&tlb);
	}
	up_read(&f->mapping.i_mmap_rwsem);
}

/* The page-cache folios from an index on: their indices in pages, in order. */
struct cached_folios {
	uint64_t *index;
	uint64_t nr, max;
};

static void note_cached(struct address_space *as, uint64_t index, uint32_t pfn, void *arg)
{
	struct cached_folios *c = arg;

	if (c->index && c->nr < c->max)
		c->index[c->nr] = index;
	c->nr++;
}

/*
 * Faults that found the old size may still be adding pages: wait for each
 * fault mutex once. Any fault after that sees the new size (the kernel gets
 * there with the hugetlb VMA lock).
 */
static void hugetlb_wait_faults(struct mmp_phys *phys)
{
	for (unsigned int i = 0; i < HUGETLB_FAULT_MUTEXES; i++) {
		pthread_mutex_lock(&phys->hugetlb_fault_mutex[i]);
		pthread_mutex_unlock(&phys->hugetlb_fault_mutex[i]);
	}
}

/* Drop huge page @idx under its fault mutex, if cached (remove_inode_single_folio): whether it was. */
static bool remove_inode_single_folio(struct mmp_file *f, uint64_t idx)
{
	pthread_mutex_t *mutex = hugetlb_fault_mutex(f->phys, f, idx);
	uint32_t pfn;

	pthread_mutex_lock(mutex);
	pfn = filemap_get_folio(f, idx << f->hstate->order);
	if (pfn != NO_PFN) {
		struct mmp_page *head = pfn_to_page(f->phys, pfn);

		folio_lock(head);
		if (folio_mapcount(head))
			hugetlb_vmdelete_list(f, idx);
		filemap_remove_folio(f, pfn);
		folio_unlock(head);
		__folio_put_refs(f->phys, pfn, 1);
	}
	pthread_mutex_unlock(mutex);
	return pfn != NO_PFN;
}

/*
 * Drop the huge pages from index @first on (remove_inode_hugepages): the
 * cached ones alone, found first, since a sparse file may reach far (2^30
 * indices of 64 KiB pages). Nothing joins the cache past @first meanwhile
 * (i_size is below it and the faults that found the old size are done) and
 * nothing else leaves it (i_rwsem). Returns the pages taken from the cache.
 */
static uint64_t remove_inode_hugepages(struct mmp_file *f, uint64_t first)
{
	uint64_t start = first << f->hstate->order, freed = 0, nr;
	struct cached_folios c = { 0 };

	spin_lock(&f->mapping.i_pages_lock);
	xa_for_each_folio(&f->mapping, start, note_cached, &c);
	spin_unlock(&f->mapping.i_pages_lock);
	nr = c.nr;
	if (!nr)
		return 0;
	c = (struct cached_folios){ .index = malloc(nr * sizeof(*c.index)), .max = nr };
	if (!c.index) {
		/* No room for the list: index by index, until all are found. */
		for (uint64_t idx = first; freed < nr; idx++)
			freed += remove_inode_single_folio(f, idx);
		return freed;
	}
	spin_lock(&f->mapping.i_pages_lock);
	xa_for_each_folio(&f->mapping, start, note_cached, &c);
	spin_unlock(&f->mapping.i_pages_lock);
	MMP_BUG_ON(c.nr != nr);
	for (uint64_t i = 0; i < nr; i++)
		freed += remove_inode_single_folio(f, c.index[i] >> f->hstate->order);
	free(c.index);
	return freed;
}

int hugetlbfs_truncate(struct mmp_file *f, uint64_t size)
{
	struct hstate *h = f->hstate;
	uint64_t old, first, freed;

	if (size & (huge_page_size(h) - 1))
		return -EINVAL;
	pthread_mutex_lock(&f->i_rwsem);
	down_write(&f->mapping.invalidate_lock);
	old = f->i_size;
	__atomic_store_n(&f->i_size, size, __ATOMIC_RELEASE);
	if (size < old) {
		first = size >> (PAGE_SHIFT + h->order);
		hugetlb_wait_faults(f->phys);
		/* The mappings first, then the cache, then racily copied private pages again. */
		hugetlb_vmdelete_list(f, first);
		freed = remove_inode_hugepages(f, first);
		hugetlb_vmdelete_list(f, first);
		hugetlb_unreserve_pages(f, first, freed);
	}
	up_write(&f->mapping.invalidate_lock);
	pthread_mutex_unlock(&f->i_rwsem);
	return 0;
}

void hugetlbfs_mmap_extend(struct mmp_file *f, uint64_t end)
{
	pthread_mutex_lock(&f->i_rwsem);
	if (end > f->i_size)
		__atomic_store_n(&f->i_size, end, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&f->i_rwsem);
}

int hugetlbfs_mmap_check(struct mmp_space *s, struct mmp_file *f, uint64_t offset)
{
	/* A size the space's back end has no leaf for is an hstate its kernel would lack. */
	if (!(hugetlb_arch_sizes(s->arch) & huge_page_size(f->hstate)))
		return -EINVAL;
	return offset & (huge_page_size(f->hstate) - 1) ? -EINVAL : 0;
}
