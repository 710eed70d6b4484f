/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Looking inside a space: what maps an address (the entry at every level, the
 * folio, the contiguous block), per-VMA totals as /proc/PID/smaps shows them,
 * per-order mTHP statistics as /sys/kernel/mm/transparent_hugepage/
 * hugepages-<size>kB/stats names them, and /proc/PID/pagemap words.
 * Included by mmprim/mmprim.h; since libmmprim.so.1.2.
 *
 * None of these calls changes an entry's accessed or dirty bit or a TLB:
 * looking does not disturb what is looked at. The only counters they move are
 * the locks they take (mmap_lock_read; for mmp_space_procmap_query() its own
 * lock counters, docs/counters.md).
 *
 * Concurrency. Each call takes the locks a read-only walk of the kernel takes
 * (the mmap lock for reading, the page-table lock of each table it reads, RCU
 * around a PTE table as pte_offset_map_lock), so it may run beside faults,
 * munmap, mprotect or reclaim on other threads and never sees a torn entry or
 * a freed table. What one call reports of one page (its entries, its folio) is
 * one instant under that page's table lock; pages of different tables, and a
 * folio's counts changed from other spaces sharing it (fork), may be from
 * different instants. Writers that need the mmap write lock (mmap, munmap,
 * mprotect, mremap, fork) wait for the call, and the call for them.
 *
 * Cost: a query is one mmap read lock, one walk of the levels and one table
 * lock, about what a TLB-missing access pays; a VMA summary or smaps reads
 * every entry of the VMA once (docs/introspection.md has measured figures).
 */
#ifndef MMPRIM_INTROSPECT_H
#define MMPRIM_INTROSPECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mmp_space;

/* Levels of a table walk, counted from the leaf: [0] the PTE, [1] the PMD, ... up to five. */
#define MMP_NR_LEVELS		5
#define MMP_NO_PFN		UINT64_MAX

/* An entry decoded, the same bits on every back end (the raw entry is the architecture's). */
#define MMP_ENTRY_PRESENT	(1u << 0)  /* valid for the hardware */
#define MMP_ENTRY_WRITE		(1u << 1)
#define MMP_ENTRY_USER		(1u << 2)
#define MMP_ENTRY_ACCESSED	(1u << 3)  /* young */
#define MMP_ENTRY_DIRTY		(1u << 4)  /* hardware or software dirty */
#define MMP_ENTRY_SOFT_DIRTY	(1u << 5)
#define MMP_ENTRY_SPECIAL	(1u << 6)  /* no folio behind it: the zero page */
#define MMP_ENTRY_NOEXEC	(1u << 7)
#define MMP_ENTRY_PROTNONE	(1u << 8)  /* PROT_NONE: mapped, invalid for the hardware */
#define MMP_ENTRY_TABLE		(1u << 9)  /* points to the next level's table */
#define MMP_ENTRY_LEAF		(1u << 10) /* a leaf above the PTE level (huge PMD) */
#define MMP_ENTRY_CONT		(1u << 11) /* contiguous bit: arm64 PTE_CONT, riscv64 Svnapot */

/* A folio's state (struct folio flags). */
#define MMP_FOLIO_ANON		(1u << 0)
#define MMP_FOLIO_LAZYFREE	(1u << 1)  /* MADV_FREE'd and still clean as far as reclaim knows */
#define MMP_FOLIO_DIRTY		(1u << 2)
#define MMP_FOLIO_SWAPBACKED	(1u << 3)
#define MMP_FOLIO_PINNED	(1u << 4)  /* GUP pins held (folio_maybe_dma_pinned) */
#define MMP_FOLIO_ANON_EXCLUSIVE (1u << 5) /* this page: mapped by one mm, reusable on write */
#define MMP_FOLIO_ZERO		(1u << 6)  /* the shared (huge) zero page, no folio */
#define MMP_FOLIO_HUGETLB	(1u << 7)  /* a hugetlb page (since 1.4) */

/* A VMA's flags beyond its protection (VmFlags in smaps). */
#define MMP_VMA_GROWSDOWN	(1u << 0)  /* gd */
#define MMP_VMA_ACCOUNT		(1u << 1)  /* ac */
#define MMP_VMA_HUGEPAGE	(1u << 2)  /* hg: MADV_HUGEPAGE */
#define MMP_VMA_NOHUGEPAGE	(1u << 3)  /* nh: MADV_NOHUGEPAGE */
#define MMP_VMA_DROPPABLE	(1u << 4)  /* MAP_DROPPABLE */
#define MMP_VMA_WIPEONFORK	(1u << 5)  /* wf */
#define MMP_VMA_HEAP		(1u << 6)  /* the brk heap ([heap]) */
#define MMP_VMA_SHARED		(1u << 7)  /* sh: MAP_SHARED (file, memfd, or shared anonymous) */
#define MMP_VMA_MAYWRITE	(1u << 8)  /* mw: may be made writable (not for a read-only file, shared) */
#define MMP_VMA_FILE		(1u << 9)  /* maps a file: file_id and pgoff say which, from where */
#define MMP_VMA_SHMEM_ANON	(1u << 10) /* MAP_SHARED|MAP_ANONYMOUS: its shmem object is its own */
#define MMP_VMA_MAYBE_GUARD	(1u << 11) /* gu: guard markers may be in it (from 6.19) */
#define MMP_VMA_SOFTDIRTY	(1u << 12) /* sd: soft-dirty as a whole (MMP_OPT_SOFT_DIRTY) */
/* Since libmmprim.so.1.4: */
#define MMP_VMA_HUGETLB		(1u << 13) /* ht: MMP_MAP_HUGETLB (and de: it never grows or merges) */
#define MMP_VMA_NORESERVE	(1u << 14) /* nr: MMP_MAP_NORESERVE */
#define MMP_VMA_DONTCOPY	(1u << 18) /* dc: MADV_DONTFORK */
#define MMP_VMA_MERGEABLE	(1u << 19) /* mg: MADV_MERGEABLE, PR_SET_MEMORY_MERGE */
#define MMP_VMA_SEQ_READ	(1u << 20) /* sr: MADV_SEQUENTIAL */
#define MMP_VMA_RAND_READ	(1u << 21) /* rr: MADV_RANDOM */
#define MMP_VMA_SEALED		(1u << 15) /* sl: mmp_mseal() */
#define MMP_VMA_LOCKED		(1u << 16) /* lo: mmp_mlock(), MMP_MAP_LOCKED, mmp_mlockall() */
#define MMP_VMA_LOCKONFAULT	(1u << 17) /* lf: locked as it faults in (MMP_MLOCK_ONFAULT) */

/* What maps one address: mmp_space_query(). */
struct mmp_addr_info {
	uint64_t addr;			/* the page asked about (the address rounded down) */
	uint64_t vma_start, vma_end;	/* the VMA holding it */
	uint32_t vma_prot;		/* MMP_PROT_* */
	uint32_t vma_flags;		/* MMP_VMA_* */
	uint32_t levels;		/* levels of the space's tables: 3, 4 or 5 */
	int32_t leaf_level;		/* level of the entry that maps it (0 PTE, 1 PMD), -1: none */
	/* The entry for addr at each level, [levels - 1] the top; 0 below the last table. */
	uint64_t entry[MMP_NR_LEVELS];		/* raw, in the back end's format */
	uint32_t entry_flags[MMP_NR_LEVELS];	/* decoded: MMP_ENTRY_* */
	uint32_t reserved0;			/* zero: no padding to guess at */
	uint64_t pfn;			/* frame mapped at addr, MMP_NO_PFN when none */
	uint64_t folio_pfn;		/* its folio's first frame, MMP_NO_PFN when none */
	uint32_t folio_order;		/* 0..9 */
	uint32_t folio_flags;		/* MMP_FOLIO_* */
	int32_t folio_mapcount;		/* every PTE and PMD mapping of the folio, all spaces */
	int32_t page_mapcount;		/* mappings of this page: its PTEs plus the folio's PMDs */
	int32_t refcount;		/* the folio's references (mappings, pins, in-flight work) */
	int32_t pincount;		/* GUP pins, part of refcount */
	/*
	 * The contiguous block (arm64 contpte, riscv64 Svnapot) that addr's
	 * entry belongs to: block_entries entries from block_start (0 when the
	 * format has none or addr is not PTE mapped), folded when they carry
	 * the contiguous bit (one TLB entry covers the block).
	 */
	uint32_t block_entries;
	uint32_t block_folded;
	uint64_t block_start;
	uint64_t reserved[4];		/* zero: room for swap entries and file pages */
};

/**
 * mmp_space_query_sized() - what maps @addr in @space, into @size bytes at
 * @info (see "Extensible structures" in mmprim.h).
 * Returns 0 (also for a page of a VMA that nothing maps yet: leaf_level -1,
 * pfn MMP_NO_PFN), -ENOMEM when no VMA holds @addr (a hole, or at or beyond
 * the task size: mincore(2)'s answer), -EINVAL for NULL pointers or @size
 * below 8.
 */
int mmp_space_query_sized(struct mmp_space *space, uint64_t addr, struct mmp_addr_info *info,
			  size_t size);

static inline int mmp_space_query(struct mmp_space *space, uint64_t addr,
				  struct mmp_addr_info *info)
{
	return mmp_space_query_sized(space, addr, info, sizeof(*info));
}

/* One VMA as /proc/PID/smaps reports it: mmp_space_vma_info(). Sizes in bytes. */
struct mmp_vma_info {
	uint64_t start, end;
	uint32_t prot;			/* MMP_PROT_* */
	uint32_t flags;			/* MMP_VMA_* */
	/* Folio orders a fault may allocate here now (bit o for order o); THPeligible: any. */
	uint32_t thp_orders;
	uint32_t reserved0;
	uint64_t rss;			/* Rss: resident pages (not the zero pages: no struct page counts them) */
	uint64_t pss;			/* Pss: each page divided by its mapcount, bytes rounded down */
	uint64_t pss_dirty;
	uint64_t shared_clean, shared_dirty, private_clean, private_dirty;
	uint64_t referenced;		/* entries young */
	uint64_t anonymous;		/* anonymous folios (not the zero page) */
	uint64_t lazyfree;		/* LazyFree: not swapbacked (MADV_FREE'd) and clean */
	uint64_t anon_huge_pages;	/* AnonHugePages: PMD-mapped anonymous THPs */
	uint64_t swap;			/* Swap: 0, the model has no swap device yet */
	uint64_t locked;		/* Locked: the Pss of a VM_LOCKED VMA (MMP_VMA_LOCKED), else 0 */
	/* Anonymous bytes mapped from folios of each order (the mTHP breakdown smaps lacks). */
	uint64_t anon_by_order[10];
	uint64_t pgoff;			/* MMP_VMA_FILE: the file page at start, else 0 */
	uint64_t file_id;		/* MMP_VMA_FILE: the file's number on the phys, else 0 */
	uint64_t reserved[6];		/* zero: room for RssFile, RssShmem per VMA, Swap, ... */
	/* Since libmmprim.so.1.4: */
	uint64_t page_size;		/* KernelPageSize and MMUPageSize: 4 KiB, or the hugetlb size */
	/* Shared_Hugetlb, Private_Hugetlb: hugetlb pages mapped more than once, and once. */
	uint64_t shared_hugetlb, private_hugetlb;
};

/**
 * mmp_space_vma_info_sized() - the first VMA of @space that ends above @addr
 * (find_vma), summed as smaps does, into @size bytes at @info. Iterate with
 * @addr = @info->end. Returns 0, -ENOMEM when no VMA ends above @addr (the end
 * of the list), -EINVAL for NULL pointers or @size below 8.
 */
int mmp_space_vma_info_sized(struct mmp_space *space, uint64_t addr, struct mmp_vma_info *info,
			     size_t size);

static inline int mmp_space_vma_info(struct mmp_space *space, uint64_t addr,
				     struct mmp_vma_info *info)
{
	return mmp_space_vma_info_sized(space, addr, info, sizeof(*info));
}

/*
 * Per-order anonymous THP statistics of a space, indexed by folio order
 * (order 4 is hugepages-64kB: mmp_thp_size_name()), named as the kernel's
 * /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats files. The
 * kernel counts for the whole system; these count for one space.
 *  - anon_fault_alloc, anon_fault_fallback, split: events since the space was
 *    created, counted in the space that faulted or split (a mmp_fork() child
 *    starts at 0; mmp_space_reset_counters() leaves them, as the kernel's are
 *    never reset). fallback: the allocation of that order failed, and the
 *    fault tried the next enabled order below.
 *  - nr_anon, nr_anon_partially_mapped: now, from a walk of the space's
 *    tables: anonymous folios of the order the space maps (a folio counted
 *    once per run of addresses mapping it; a folio two spaces map counts in
 *    each), and those of them the kernel has found partially mapped (a page
 *    lost its last mapping while others kept theirs, no PMD maps it) and put
 *    on the deferred split queue.
 *  - split_deferred (since 1.3): events, as the first three: folios found
 *    partially mapped, counted by the space whose unmap found it (for order 9
 *    also the counter thp_deferred_split_page).
 *  - swpout_fallback (since 1.5): events, as the first three: folios reclaim
 *    split to swap them out page by page, as no swap space was had for them
 *    whole (for order 9 also the counter thp_swpout_fallback).
 * Orders 0 and 1 stay 0 (no THP of those orders).
 */
struct mmp_mthp_stats {
	uint64_t anon_fault_alloc[10];
	uint64_t anon_fault_fallback[10];
	uint64_t split[10];
	uint64_t nr_anon[10];
	uint64_t nr_anon_partially_mapped[10];
	uint64_t split_deferred[10];
	uint64_t swpout_fallback[10];
};

/** mmp_space_mthp_stats_sized() - into @size bytes at @st; -EINVAL for NULL or @size below 8. */
int mmp_space_mthp_stats_sized(struct mmp_space *space, struct mmp_mthp_stats *st, size_t size);

static inline int mmp_space_mthp_stats(struct mmp_space *space, struct mmp_mthp_stats *st)
{
	return mmp_space_mthp_stats_sized(space, st, sizeof(*st));
}

/*
 * /proc/PID/pagemap words (Documentation/admin-guide/mm/pagemap.rst): bits
 * 0-54 the pfn when present, 55 soft-dirty, 56 exclusively mapped (this page
 * has one mapping), 57 uffd-wp (never set), 61 file page or shared anonymous
 * (a page-cache page: file or shmem), 58 guard region (a guard marker,
 * MMP_MADV_GUARD_INSTALL; reported from Linux 6.15), 62 swap entry (the only
 * ones are guard markers: bits 0-4 the swap type, 5-54 the offset, 31 and 4
 * for a guard marker), 63 present. The zero page reads present with its pfn,
 * as for a process with CAP_SYS_ADMIN (the pfn is not hidden).
 */
#define MMP_PM_PFN_MASK		((1ULL << 55) - 1)
#define MMP_PM_SOFT_DIRTY	(1ULL << 55)
#define MMP_PM_MMAP_EXCLUSIVE	(1ULL << 56)
#define MMP_PM_UFFD_WP		(1ULL << 57)
#define MMP_PM_GUARD_REGION	(1ULL << 58)
#define MMP_PM_FILE		(1ULL << 61)
#define MMP_PM_SWAP		(1ULL << 62)
#define MMP_PM_PRESENT		(1ULL << 63)

/**
 * mmp_space_pagemap() - the pagemap words of the @nr pages from @addr into
 * @out, as a read of /proc/PID/pagemap at @addr / 4096 * 8: a page no VMA
 * holds, or nothing maps, reads 0. Like that read it stops at the task size:
 * returns the number of words written (fewer than @nr when the range passes
 * the task size, 0 from there on), or -EINVAL for NULL pointers, an unaligned
 * @addr or @nr above INT_MAX.
 */
int mmp_space_pagemap(struct mmp_space *space, uint64_t addr, unsigned int nr, uint64_t *out);

/*
 * Text forms. Each writes to @f, or (the _buf forms) to @size bytes at @buf,
 * always NUL-terminated when @size > 0, as snprintf(3) does. They return the
 * length of the whole text, without the NUL: a result of @size or more means
 * @buf was too small and holds a prefix; call again with the result + 1.
 * Errors: -EINVAL (NULL @space or @f, NULL @buf with a nonzero @size),
 * -ENOMEM, -EIO (@f failed).
 */

/**
 * mmp_space_smaps() - /proc/PID/smaps of @space: per VMA the header line
 * (start-end perms offset dev inode [heap]), then Size, KernelPageSize,
 * MMUPageSize, Rss, Pss, Pss_Dirty, Shared_Clean, Shared_Dirty, Private_Clean,
 * Private_Dirty, Referenced, Anonymous, KSM, LazyFree, AnonHugePages,
 * ShmemPmdMapped, FilePmdMapped, Shared_Hugetlb, Private_Hugetlb (a hugetlb
 * mapping counts only in these two and Size, as the kernel's), Swap,
 * SwapPss, Locked, THPeligible and VmFlags, in the kernel's format, and one
 * line the kernel lacks, "AnonMTHP:", the anonymous kB per mTHP size.
 */
int mmp_space_smaps(struct mmp_space *space, FILE *f);
int mmp_space_smaps_buf(struct mmp_space *space, char *buf, size_t size);

/**
 * mmp_space_pagemap_print() - one line per page of [@addr, @addr + @len),
 * holes left out: the address, the pagemap word in hex, and what
 * mmp_space_query() says of it (pfn, folio order and mapcount, flags, and
 * the contiguous block, folded or not). @addr and @len page aligned (-EINVAL).
 */
int mmp_space_pagemap_print(struct mmp_space *space, uint64_t addr, uint64_t len, FILE *f);
int mmp_space_pagemap_print_buf(struct mmp_space *space, uint64_t addr, uint64_t len, char *buf,
				size_t size);

/*
 * mTHP sizes by the kernel's names. Order o is the folio of 4 KiB << o, whose
 * sysfs directory is /sys/kernel/mm/transparent_hugepage/hugepages-<4 << o>kB:
 * order 2 hugepages-16kB, 3 -32kB, 4 -64kB, 5 -128kB, 6 -256kB, 7 -512kB,
 * 8 -1024kB, 9 -2048kB (the PMD size).
 */

/** mmp_thp_size_name() - "hugepages-64kB" for order 4; NULL outside 2..9. */
const char *mmp_thp_size_name(unsigned int order);

/**
 * mmp_thp_order() - the order of a size named "hugepages-64kB", "64kB", "64K"
 * or "65536" (bytes); -EINVAL for NULL or a name that is no mTHP size (a power
 * of two from 16 KiB to 2 MiB).
 */
int mmp_thp_order(const char *name);

/*
 * PAGEMAP_SCAN (the ioctl on /proc/PID/pagemap, Linux 6.7), since 1.5: the
 * pages of a range by category, as page_region ranges.
 */
#define MMP_PAGE_IS_WPALLOWED	(1ULL << 0) /* uffd-wp async: never here (no userfaultfd) */
#define MMP_PAGE_IS_WRITTEN	(1ULL << 1) /* not uffd write-protected: every page here */
#define MMP_PAGE_IS_FILE	(1ULL << 2) /* a page-cache page (file, shmem) */
#define MMP_PAGE_IS_PRESENT	(1ULL << 3)
#define MMP_PAGE_IS_SWAPPED	(1ULL << 4) /* a swap entry: here a guard marker */
#define MMP_PAGE_IS_PFNZERO	(1ULL << 5) /* the (huge) zero page */
#define MMP_PAGE_IS_HUGE	(1ULL << 6) /* a THP's PMD, or a hugetlb page */
#define MMP_PAGE_IS_SOFT_DIRTY	(1ULL << 7) /* entry or VMA soft-dirty (MMP_OPT_SOFT_DIRTY) */
#define MMP_PAGE_IS_GUARD	(1ULL << 8) /* a guard marker (6.15; before: -EINVAL in a mask) */

#define MMP_PM_SCAN_WP_MATCHING	(1ULL << 0) /* write-protect what matches: needs uffd-wp */
#define MMP_PM_SCAN_CHECK_WPASYNC (1ULL << 1) /* fail where uffd-wp async is off: -EPERM */

/* One output range (struct page_region): [start, end), every page of it in @categories. */
struct mmp_page_region {
	uint64_t start;
	uint64_t end;
	uint64_t categories;		/* MMP_PAGE_IS_*, as return_mask leaves them */
};

/* struct pm_scan_arg, field for field. */
struct mmp_pm_scan_arg {
	uint64_t size;			/* sizeof(struct mmp_pm_scan_arg), 96: else -EINVAL */
	uint64_t flags;			/* MMP_PM_SCAN_* */
	uint64_t start, end;		/* start page aligned; end rounded up */
	uint64_t walk_end;		/* out: where the walk stopped (end when it did not) */
	uint64_t vec;			/* (uintptr_t) an array of vec_len struct mmp_page_region */
	uint64_t vec_len;
	uint64_t max_pages;		/* at most this many pages reported; 0: no limit */
	uint64_t category_inverted;	/* categories tested as their complement */
	uint64_t category_mask;		/* a page must have all of these... */
	uint64_t category_anyof_mask;	/* ...and one of these, if any */
	uint64_t return_mask;		/* the categories a region reports */
};

/**
 * mmp_space_pagemap_scan() - ioctl(PAGEMAP_SCAN) on @space's pagemap: walk
 * the VMAs of [start, end) and report the pages whose categories (xor
 * category_inverted) hold every bit of category_mask and, when it is not 0,
 * one of category_anyof_mask, as ranges in vec: adjacent pages with the same
 * categories (after return_mask) share a range; pages with no entry in a
 * VMA have its categories (VM_SOFTDIRTY: SOFT_DIRTY), holes between VMAs
 * none and are never reported. The walk stops when vec is full or
 * max_pages are reported (a range cut short), walk_end saying where.
 * Returns the number of ranges; -EINVAL (size, unknown flags or
 * categories, start not page aligned, vec NULL with vec_len), -EFAULT (a
 * NULL @arg, [start, end) past the task size or wrapping, vec_len too long
 * to address), -EPERM for MMP_PM_SCAN_CHECK_WPASYNC at the first VMA (no
 * VMA has uffd-wp async); MMP_PM_SCAN_WP_MATCHING passes every VMA by, as
 * on a kernel where none has it. -EINVAL for a NULL @space.
 */
long mmp_space_pagemap_scan(struct mmp_space *space, struct mmp_pm_scan_arg *arg);

/*
 * PROCMAP_QUERY (the ioctl on /proc/PID/maps, Linux 6.11), since 1.5: the VMA
 * at an address, or the next one, chosen by the query flags. Flags as
 * include/uapi/linux/fs.h numbers them; the four VMA_* bits are both filters
 * of the query (the VMA must have each one asked for) and what vma_flags
 * reports.
 */
#define MMP_PROCMAP_VMA_READABLE	(1ULL << 0)
#define MMP_PROCMAP_VMA_WRITABLE	(1ULL << 1)
#define MMP_PROCMAP_VMA_EXECUTABLE	(1ULL << 2)
#define MMP_PROCMAP_VMA_SHARED		(1ULL << 3) /* MAP_SHARED (the kernel's VM_MAYSHARE) */
#define MMP_PROCMAP_COVERING_OR_NEXT_VMA (1ULL << 4) /* the VMA at query_addr, else the next */
#define MMP_PROCMAP_FILE_BACKED_VMA	(1ULL << 5) /* only VMAs that map a file (shmem too) */

/*
 * struct procmap_query, field for field (104 bytes). What is not modelled:
 * names and build IDs (a buffer may be passed, as the kernel requires, with
 * its address and size both set or both 0; nothing is written to it and its
 * size comes back 0, as for an anonymous VMA without a name and a file
 * without a build ID), devices (dev_major, dev_minor 0). inode is the file's
 * number on the phys (mmp_vma_info's file_id), 0 for anonymous memory.
 */
struct mmp_procmap_query {
	uint64_t size;			/* in: sizeof, from 24 (up to query_addr) to 4096 */
	uint64_t query_flags;		/* in: MMP_PROCMAP_* */
	uint64_t query_addr;		/* in */
	uint64_t vma_start, vma_end;	/* out */
	uint64_t vma_flags;		/* out: MMP_PROCMAP_VMA_* */
	uint64_t vma_page_size;		/* out: 4 KiB, or the hugetlb page size */
	uint64_t vma_offset;		/* out: a file VMA's offset in bytes (pgoff), else 0 */
	uint64_t inode;			/* out: the file's id, else 0 */
	uint32_t dev_major, dev_minor;	/* out: 0 */
	uint32_t vma_name_size;		/* in/out: out 0 */
	uint32_t build_id_size;		/* in/out: out 0 */
	uint64_t vma_name_addr;		/* in: not written to */
	uint64_t build_id_addr;		/* in: not written to */
};

/**
 * mmp_space_procmap_query() - ioctl(PROCMAP_QUERY) on @space's maps: the
 * first VMA ending above query_addr that passes the flag filters
 * (FILE_BACKED_VMA, the VMA_* bits), which must hold query_addr unless
 * COVERING_OR_NEXT_VMA is set (then the first such VMA at or above it).
 * Fills the out fields of @arg's first size bytes (arg->size, as the kernel
 * reads it: at most 4096, and nonzero bytes beyond the 104 this library knows
 * are -E2BIG). Returns 0; -ENOENT when no VMA matches; -EINVAL for a NULL
 * @space, size below 24, unknown flags, a name or build-ID buffer with only
 * one of address and size; -E2BIG as said; -EFAULT for a NULL @arg. The
 * kernel's order: size, flags, buffers.
 * Locks: the mmap read lock before Linux 6.18; from 6.18 (release rule
 * procmap_query_vma_lock) the found VMA's read lock alone, found under RCU,
 * and the mmap read lock when that cannot be had (counters
 * procmap_vma_lock_success, procmap_vma_lock_fallback, mmap_lock_procmap).
 */
int mmp_space_procmap_query(struct mmp_space *space, struct mmp_procmap_query *arg);

#ifdef __cplusplus
}
#endif

#endif /* MMPRIM_INTROSPECT_H */
