/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files and their page cache (lib/filemap.c, the kernel's struct inode,
 * struct address_space and mm/filemap.c), shmem's folio policy
 * (lib/shmem.c) and truncation (lib/truncate.c).
 */
#ifndef MMP_FILEMAP_H
#define MMP_FILEMAP_H

#include "fault.h"
#include "folio.h"
#include "rwsem.h"

/* One node of the page-cache index (an XArray node): 64 slots per level. */
#define XA_CHUNK_SHIFT	6
#define XA_CHUNK_SIZE	(1u << XA_CHUNK_SHIFT)

struct xa_node {
	/* Inner levels: child nodes. The leaf level: head pfn + 1 of the folio there, 0 if none. */
	uintptr_t slots[XA_CHUNK_SIZE];
};

/*
 * An address_space: the folios of one file by page index, and the VMAs that
 * map it. A large folio fills every slot it covers (a multi-index entry).
 */
struct address_space {
	mmp_spinlock_t i_pages_lock;	/* xa_lock: the index and nrpages */
	struct xa_node *root;
	unsigned int height;		/* levels below root; 0: no node yet */
	uint64_t nrpages;

	struct rw_semaphore i_mmap_rwsem;	/* i_mmap: VMAs link and unlink under it for writing */
	struct mmp_vma *i_mmap;		/* list through vma->shared_next */
	uint64_t nr_mapped_vmas;

	/* Page-in and truncation exclude each other (mapping->invalidate_lock). */
	struct rw_semaphore invalidate_lock;
};

struct mmp_file {
	struct mmp_phys *phys;
	uint32_t id;			/* folio->mapping as the memmap stores it */
	unsigned int flags;		/* MMP_FILE_* */
	uint64_t i_size;		/* atomic */
	int refcount;			/* atomic: the user's handle, if open, and one per VMA */
	bool handle;			/* the user's handle is open */
	pthread_mutex_t i_rwsem;	/* writes and truncation take turns (inode->i_rwsem) */

	/* The backing store of a regular file: a host reservation as large as the largest size. */
	uint8_t *store;
	uint64_t store_bytes;
	uint64_t writeback_pages;	/* atomic */
	uint64_t verify_vmas;		/* mmp_space_verify's count of the VMAs it found mapping it */
	/* A hugetlbfs file: its page size, and what shared mappings reserved or instantiated. */
	struct hstate *hstate;
	struct resv_map *resv_map;

	struct address_space mapping;
};

static inline bool shmem_file(const struct mmp_file *f)
{
	return f->flags & MMP_FILE_SHMEM;
}

/* A hugetlbfs file (is_file_hugepages): huge folios, no backing store, never reclaimed. */
static inline bool is_file_hugepages(const struct mmp_file *f)
{
	return f->hstate;
}

/*
 * mapping_can_writeback: a regular file's dirty folios are written to its
 * store; shmem's cannot be written anywhere (no swap).
 */
static inline bool mapping_can_writeback(const struct mmp_file *f)
{
	return !shmem_file(f) && !is_file_hugepages(f);
}

/*
 * vma_wants_writenotify: a shared writable mapping of a file that tracks
 * dirty folios maps clean pages read-only, so the first write faults and
 * dirties the folio (page_mkwrite).
 */
/* vma_soft_dirty_enabled: tracking is on and clear_refs took the VMA's soft-dirty state. */
static inline bool vma_soft_dirty_enabled(const struct mmp_vma *vma)
{
	return mm_soft_dirty(vma->vm_mm) && !(vma->flags & VM_SOFTDIRTY);
}

static inline bool vma_wants_writenotify(const struct mmp_vma *vma)
{
	if ((vma->flags & (VM_SHARED | VM_WRITE)) != (VM_SHARED | VM_WRITE))
		return false;
	/* Soft-dirty tracking that clear_refs restarted wants each first write to fault. */
	if (vma_soft_dirty_enabled(vma) && !(vma->flags & VM_HUGETLB))
		return true;
	return mapping_can_writeback(vma->vm_file);
}

/* i_size in pages, rounded up: indices from here on are past the end (SIGBUS). */
static inline uint64_t file_size_pages(struct mmp_file *f)
{
	return (__atomic_load_n(&f->i_size, __ATOMIC_ACQUIRE) + PAGE_SIZE - 1) >> PAGE_SHIFT;
}

/* The counter a mapped page of @head is charged to (mm_counter). */
static inline enum mm_counter_type mm_counter(struct mmp_page *head)
{
	if (head->flags & PG_anon)
		return MM_ANONPAGES;
	return head->flags & PG_swapbacked ? MM_SHMEMPAGES : MM_FILEPAGES;
}

/* The file a page-cache folio belongs to (folio->mapping->host); NULL once truncated. */
struct mmp_file *folio_file(struct mmp_phys *phys, struct mmp_page *head);

/* The page-cache index (lib/filemap.c), under i_pages_lock. */
uint32_t xa_load(struct address_space *as, uint64_t index);
typedef void (*xa_fn)(struct address_space *as, uint64_t index, uint32_t head_pfn, void *arg);
void xa_for_each_folio(struct address_space *as, uint64_t start, xa_fn fn, void *arg);

/* The folio holding @index with a reference for the caller; NO_PFN if none. */
uint32_t filemap_get_folio(struct mmp_file *f, uint64_t index);
/*
 * The same, reading one in if none (filemap_fault's page-in): a folio of up
 * to 2^@order pages around @index, as far as the index has room and not past
 * page @limit. NO_PFN with *@err -ENOMEM, or -EIO when @index is at or past
 * @limit. @s (may be NULL) counts the allocation. Caller holds
 * invalidate_lock for reading.
 */
uint32_t filemap_grab_folio(struct mmp_file *f, uint64_t index, unsigned int order,
			    uint64_t limit, struct mmp_space *s, int *err);
/* Read folios around @index into the cache for a fault in @vma (do_sync_mmap_readahead). */
void filemap_readahead(struct mmp_space *s, struct mmp_vma *vma, uint64_t index);
/* Put the new folio @pfn at @index: 0, -EEXIST, -ENOMEM (hugetlb_add_to_page_cache). */
int filemap_add_folio(struct mmp_file *f, uint32_t pfn, uint64_t index);
/* Take @head out of the page cache, dropping its references (filemap_remove_folio). Folio locked. */
void filemap_remove_folio(struct mmp_file *f, uint32_t head_pfn);
/* The same with i_pages_lock held and the references already frozen at 0 (__filemap_remove_folio). */
void filemap_remove_folio_frozen(struct mmp_file *f, uint32_t head_pfn);
/*
 * The @nr pages from @index, one folio at @head_pfn until now, each its own
 * order-0 folio in the index (a split's xas stores). i_pages_lock held.
 */
void filemap_split_folio_frozen(struct mmp_file *f, uint32_t head_pfn, uint64_t index,
				unsigned int nr);
/* Drop every folio from page @start on out of the cache (truncate_inode_pages_range's part). */
void filemap_remove_from(struct mmp_file *f, uint64_t start);
void filemap_remove_range(struct mmp_file *f, uint64_t start, uint64_t end, bool even_cows);
/* A hole punched in the pages [first, end) of @f (lib/truncate.c). */
int file_punch_hole(struct mmp_file *f, uint64_t first, uint64_t end);
/* A new file with one reference: the user's handle, or (@handle false) the caller's. */
int file_alloc(struct mmp_phys *phys, uint64_t size, unsigned int flags, bool handle,
	       struct mmp_file **out);
/* Make a regular file's store hold @size bytes; invalidate_lock held for writing. */
int store_reserve(struct mmp_file *f, uint64_t size);
/* Zero bytes [from, to) where the page cache holds them (folio_zero_range). */
void filemap_zero_range(struct mmp_file *f, uint64_t from, uint64_t to);
/* A regular file grows from @old_size: zero the rest of its old last page (ext4's partial block). */
void filemap_zero_eof(struct mmp_file *f, uint64_t old_size);
/* Write a dirty folio to the file's store and mark it clean (writepage). Folio locked. */
void folio_write_back(struct mmp_file *f, uint32_t head_pfn);
/* The largest page-cache folio order @f may get for @index in @vma (mapping_max_folio_order, shmem huge=). */
unsigned int filemap_max_order(struct mmp_file *f, struct mmp_vma *vma, uint64_t index);

/* The folio lock, a bit in the flags: faults and truncation take it. */
static inline bool folio_trylock(struct mmp_page *head)
{
	return !(__atomic_fetch_or(&head->flags, PG_locked, __ATOMIC_ACQUIRE) & PG_locked);
}

void folio_lock(struct mmp_page *head);

static inline void folio_unlock(struct mmp_page *head)
{
	__atomic_fetch_and(&head->flags, ~PG_locked, __ATOMIC_RELEASE);
}

/* The file's i_mmap (lib/filemap.c): VMAs link on creation, unlink on removal. */
void get_file(struct mmp_file *f);
void fput(struct mmp_file *f);
void vma_link_file(struct mmp_vma *vma);
void vma_unlink_file(struct mmp_vma *vma);
void __vma_unlink_file(struct mmp_vma *vma);

/*
 * Unmap the pages of [first, last] (page indices) of @f from every mapping,
 * private copies too (unmap_mapping_range with even_cows, lib/truncate.c).
 */
void unmap_mapping_range(struct mmp_file *f, uint64_t first, uint64_t last);
/* The same, private copies left alone unless @even_cows. */
void unmap_mapping_pages(struct mmp_file *f, uint64_t first, uint64_t last, bool even_cows);

/*
 * shmem (lib/shmem.c): the shmem file behind a MAP_SHARED|MAP_ANONYMOUS
 * mapping (shmem_zero_setup), with one reference for the caller to drop
 * once the VMA holds its own.
 */
int shmem_zero_setup(struct mmp_phys *phys, uint64_t size, struct mmp_file **out);
/* The order shmem's huge= policy gives a new folio at @index of @f in @vma (shmem_allowable_huge_orders). */
unsigned int shmem_huge_order(struct mmp_file *f, struct mmp_vma *vma, uint64_t index);

#endif /* MMP_FILEMAP_H */
