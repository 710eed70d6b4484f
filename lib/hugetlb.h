/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hugetlb (the kernel's linux/hugetlb.h): the pool of each huge page size
 * (lib/hugetlb.c), reservations (lib/hugetlb_resv.c), faults and copy-on-write
 * (lib/hugetlb_fault.c), and what munmap, fork, mprotect and mremap do to
 * hugetlb entries (lib/hugetlb_vma.c).
 *
 * A hugetlb VMA maps a hugetlbfs file, as in the kernel: an mmap with
 * MAP_HUGETLB makes an anonymous one (hugetlb_file_setup). Shared mappings
 * map its page cache; private ones map anonymous copies. Entries are leaves
 * at the level of the huge page size (a PMD for 2 MiB), never split, with no
 * table deposited beside them, and their pages count in hugetlb_usage, not
 * in RSS.
 */
#ifndef MMP_HUGETLB_H
#define MMP_HUGETLB_H

#include <pthread.h>

#include "fault.h"
#include "mmu_gather.h"

struct mmp_file;

/*
 * The sizes modelled, each phys has a pool of every one: 2 MiB (a PMD leaf,
 * the default), 64 KiB and 32 MiB (16 contiguous PTEs or PMDs, arm64), and
 * 1 GiB (a PUD leaf). Which a space maps is its back end's (mmp_hugetlb_sizes).
 */
#define HUGE_MAX_HSTATE		4
/* Faults on one huge page take turns (hugetlb_fault_mutex_table), hashed by file and index. */
#define HUGETLB_FAULT_MUTEXES	64

struct hstate {
	unsigned int order;
	enum mmp_level level;		/* where its entries are leaves */
	unsigned int ncontig;		/* entries per page: 1, or 16 with the contiguous bit */
	uint64_t nr_huge_pages;		/* HugePages_Total, surplus included */
	uint64_t free_huge_pages;	/* HugePages_Free */
	uint64_t resv_huge_pages;	/* HugePages_Rsvd: may wrap below zero, as the kernel's */
	uint64_t surplus_huge_pages;	/* HugePages_Surp */
	uint64_t nr_overcommit_huge_pages;
	/*
	 * Reservations no mapping will give back: 6.18 drops the reserve map of
	 * a private mapping that mremap moves part of, so the pieces left behind
	 * never return theirs (seen on a 6.18 host). Only verify reads it.
	 */
	uint64_t resv_leaked;
	uint32_t free_list;		/* free pages, through page->buddy.next */
};

/* One [from, to) run of huge-page indices in a reserve map (struct file_region). */
struct file_region {
	uint64_t from, to;
};

/*
 * A reserve map (struct resv_map): for a shared mapping, on the file, the
 * indices reserved or instantiated; for a private one, on its owner's VMAs,
 * the indices whose reservation a fault has consumed. Sorted, disjoint runs.
 */
struct resv_map {
	mmp_spinlock_t lock;
	int refcount;			/* atomic: the owner's VMA pieces, or the file */
	uint32_t nr, cap;
	struct file_region *rg;
};

/* vma->resv_flags (the low bits of the kernel's vm_private_data). */
#define HPAGE_RESV_OWNER	(1u << 0)	/* the mapping the reservations were made for */
#define HPAGE_RESV_UNMAPPED	(1u << 1)	/* the owner's COW took pages back: SIGBUS */

static __always_inline bool is_vm_hugetlb_page(const struct mmp_vma *vma)
{
	return vma->flags & VM_HUGETLB;
}

static inline uint64_t huge_page_size(const struct hstate *h)
{
	return PAGE_SIZE << h->order;
}

static inline unsigned int pages_per_huge_page(const struct hstate *h)
{
	return 1u << h->order;
}

/* The hstate of a hugetlb VMA: its hugetlbfs file's (hstate_file). */
struct hstate *hstate_vma(const struct mmp_vma *vma);

/* The index of @addr in @vma's file, in huge pages (vma_hugecache_offset). */
static inline uint64_t vma_hugecache_offset(const struct hstate *h, const struct mmp_vma *vma,
					    uint64_t addr)
{
	return ((addr - vma->start) >> (PAGE_SHIFT + h->order)) + (vma->pgoff >> h->order);
}

/* ---- the pool (lib/hugetlb.c) ---- */

void hugetlb_init(struct mmp_phys *phys);
/* The sizes back end @a maps, a mask of 1 << log2(size) (mmp_hugetlb_sizes). */
uint64_t hugetlb_arch_sizes(const struct mmp_arch *a);
/* The hstate of pages of @size bytes, NULL if the phys has none (size_to_hstate). */
struct hstate *size_to_hstate(struct mmp_phys *phys, uint64_t size);
/* The hstate of log2 size @shift, 0 meaning the default 2 MiB (hstate_sizelog). */
struct hstate *hstate_sizelog(struct mmp_phys *phys, unsigned int shift);
/*
 * A huge page for a fault at @addr of @vma, from the free pages or as a new
 * surplus one, consuming the reservation there unless @avoid_reserve; its
 * reference is the caller's, who commits the reservation once the page is in
 * place (vma_commit_reservation) or, freeing it, gets it back. NO_PFN when
 * the pool has none (SIGBUS).
 */
uint32_t alloc_hugetlb_folio(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr,
			     bool avoid_reserve);
/* The last reference went: back to the pool, or to free memory if surplus (free_huge_folio). */
void free_huge_folio(struct mmp_phys *phys, uint32_t pfn);
/* Promise @delta more pages (or give back -@delta): 0 or -ENOMEM (hugetlb_acct_memory). */
int hugetlb_acct_memory(struct mmp_phys *phys, struct hstate *h, int64_t delta);

static inline void hugetlb_count_add(struct mmp_space *s, int64_t pages)
{
	__atomic_fetch_add(&s->hugetlb_usage, pages, __ATOMIC_RELAXED);
}

/* ---- reservations (lib/hugetlb_resv.c) ---- */

struct resv_map *resv_map_alloc(void);
void resv_map_get(struct resv_map *map);
void resv_map_put(struct resv_map *map);
/* Indices in [from, to) the map holds (region_count). */
uint64_t region_count(struct resv_map *map, uint64_t from, uint64_t to);
/*
 * mmap's reservation of pages [from, to) of @f's file for @vma_flags
 * (hugetlb_reserve_pages): a private mapping gets a new reserve map in
 * *@owner_map. 0, -ENOMEM.
 */
int hugetlb_reserve_pages(struct mmp_file *f, uint64_t from, uint64_t to, unsigned long vma_flags,
			  struct resv_map **owner_map);
/* Give back what a reserved range promised but never used, as hugetlb_vm_op_close does. */
void hugetlb_unreserve_private(struct mmp_phys *phys, struct hstate *h, struct resv_map *map,
			       uint64_t from, uint64_t to);
/* Does a fault at @addr need a page beyond the reservations? 1, 0, or -ENOMEM. */
int vma_needs_reservation(struct hstate *h, struct mmp_vma *vma, uint64_t addr);
void vma_commit_reservation(struct hstate *h, struct mmp_vma *vma, uint64_t addr);
/* A zapped private page's reservation comes back (vma_add_reservation): 1, 0, or -ENOMEM. */
int vma_add_reservation(struct hstate *h, struct mmp_vma *vma, uint64_t addr);
/* The VMA operations: a split or fork copy (open), a VMA going away (close), a split check. */
void hugetlb_vm_op_open(struct mmp_vma *vma);
void hugetlb_vm_op_close(struct mmp_space *s, struct mmp_vma *vma);
int hugetlb_vm_op_split(struct mmp_vma *vma, uint64_t addr);
/* mremap moved [addr, addr + len) of @old to @new: the reserve map goes with it. */
void hugetlb_mremap_resv(struct mmp_space *s, struct mmp_vma *old, struct mmp_vma *new,
			 uint64_t addr, uint64_t len);
/* fork: the child's copy of a private mapping owns no reservations (hugetlb_dup_vma_private). */
void hugetlb_dup_vma_private(struct mmp_vma *vma);
/*
 * Indices from @first on leave @f's reserve map, @freed pages of them taken
 * from its cache: what the rest promised goes back (hugetlb_unreserve_pages).
 */
void hugetlb_unreserve_pages(struct mmp_file *f, uint64_t first, uint64_t freed);
/* The hugetlbfs file's last reference went with @freed pages: its reservations go (unreserve). */
void hugetlb_file_release(struct mmp_file *f, uint64_t freed);

/* ---- faults (lib/hugetlb_fault.c) ---- */

int hugetlb_fault(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr, unsigned int flags);
/* The mutex of huge page @idx of @f (hugetlb_fault_mutex_hash): faults and truncation take turns. */
pthread_mutex_t *hugetlb_fault_mutex(struct mmp_phys *phys, struct mmp_file *f, uint64_t idx);

/* ---- the hugetlbfs file (lib/hugetlbfs.c) ---- */

/*
 * A hugetlbfs file of @size bytes and pages of @h (hugetlb_file_setup): with
 * the user's handle for a memfd (@handle), else the caller's reference for
 * the anonymous file behind a MAP_HUGETLB mapping.
 */
int hugetlb_file_setup(struct mmp_phys *phys, struct hstate *h, uint64_t size, bool handle,
		       struct mmp_file **out);
/* ftruncate of a hugetlbfs file (hugetlbfs_setattr): 0, -EINVAL (not whole pages). */
int hugetlbfs_truncate(struct mmp_file *f, uint64_t size);
/* hugetlbfs_file_mmap's refusals: an unaligned @offset, a size @s's back end lacks. 0, -EINVAL. */
int hugetlbfs_mmap_check(struct mmp_space *s, struct mmp_file *f, uint64_t offset);
/* A writable mapping reaching past i_size grows the file to @end (hugetlbfs_file_mmap). */
void hugetlbfs_mmap_extend(struct mmp_file *f, uint64_t end);

/* ---- page tables (lib/hugetlb_vma.c) ---- */

/*
 * Zap the huge entries of [start, end) of @vma (__unmap_hugepage_range); with
 * @ref_pfn (else NO_PFN) only those mapping that folio, marking the VMA
 * HPAGE_RESV_UNMAPPED. Returns the entries zapped.
 */
uint64_t unmap_hugepage_range(struct mmp_gather *tlb, struct mmp_vma *vma, uint64_t start,
			      uint64_t end, uint32_t ref_pfn);
/* fork: share @src_vma's pages with the child, write-protected when private. 0, -ENOMEM. */
int copy_hugetlb_page_range(struct mmp_space *dst, struct mmp_space *src, struct mmp_vma *src_vma);
/* mprotect: @vma's entries for @newflags; pages changed (hugetlb_change_protection). */
uint64_t hugetlb_change_protection(struct mmp_space *s, struct mmp_vma *vma,
				   unsigned long newflags);
/* mremap: move the entries of [old, old + len) to @new (move_hugetlb_page_tables). 0, -ENOMEM. */
int move_hugetlb_page_tables(struct mmp_space *s, struct mmp_vma *vma, uint64_t old, uint64_t new,
			     uint64_t len);
/* The (first) leaf entry for @addr at @h's level, allocating the tables above it when @alloc. */
mmp_pte_t *huge_pte_offset(struct mmp_space *s, struct hstate *h, uint64_t addr, bool alloc);
/*
 * The entries of one huge page, one or @h->ncontig with the contiguous bit
 * (arm64's hugetlbpage.c): read with the young and dirty bits of all of them
 * gathered in the first's (huge_ptep_get); written all, each mapping its
 * part of the page (set_huge_pte_at); cleared all, gathering the same way
 * (huge_ptep_get_and_clear); flags changed in all (huge_ptep_modify).
 * page_table_lock held for all but the read.
 */
mmp_pte_t huge_ptep_get(struct mmp_space *s, struct hstate *h, mmp_pte_t *ptep);
/* The same, uncounted: the fault's first look, as the kernel's huge_ptep_get there. */
mmp_pte_t __huge_ptep_get(struct mmp_space *s, struct hstate *h, mmp_pte_t *ptep);
void set_huge_pte_at(struct mmp_space *s, struct hstate *h, mmp_pte_t *ptep, mmp_pte_t e);
mmp_pte_t huge_ptep_get_and_clear(struct mmp_space *s, struct hstate *h, mmp_pte_t *ptep);
void huge_ptep_modify(struct mmp_space *s, struct hstate *h, mmp_pte_t *ptep, unsigned int set,
		      unsigned int clear);

#endif /* MMP_HUGETLB_H */
