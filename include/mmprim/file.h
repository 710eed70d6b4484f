/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmmprim: simulated files, their page cache, and mappings of them.
 *
 * A file is an inode with a size and an address_space: folios indexed by page
 * offset, shared by every space on the phys. A regular file keeps its data in
 * a backing store (the "disk"): a folio is read from it when first needed and
 * written back to it when reclaim takes a dirty folio. A shmem file (memfd,
 * tmpfs, MAP_SHARED|MAP_ANONYMOUS) has no store: its folios are its data, and
 * with no swap device reclaim keeps them.
 *
 * Included by mmprim.h; not meant to be included on its own.
 */
#ifndef MMPRIM_FILE_H
#define MMPRIM_FILE_H

#ifdef __cplusplus
extern "C" {
#endif

struct mmp_file;

/* mmp_file_create() flags. */
#define MMP_FILE_SHMEM		0x1	/* shmem/tmpfs: no backing store, swap-backed folios */
#define MMP_FILE_RDONLY		0x2	/* the handle is open read-only (O_RDONLY) */
#define MMP_FILE_NO_LARGE_FOLIOS 0x4	/* regular file: the page cache holds order-0 folios only */
/*
 * shmem huge= policy (the tmpfs mount option and shmem_enabled): PMD-size
 * folios always, only where the file's size covers the whole folio, or only
 * in MADV_HUGEPAGE mappings. Without one: never.
 */
#define MMP_FILE_HUGE_ALWAYS	0x10
#define MMP_FILE_HUGE_WITHIN_SIZE 0x20
#define MMP_FILE_HUGE_ADVISE	0x40

/* The largest file size (MAX_LFS_FILESIZE is larger; the model stops at 64 TiB). */
#define MMP_FILE_MAX_SIZE	(1ULL << 46)

/**
 * mmp_file_create() - a new file of @size zero bytes on @phys.
 * @flags: MMP_FILE_*.
 *
 * Returns 0, -EINVAL (NULL, unknown or contradictory flags: huge= on a
 * regular file, two huge= policies), -EFBIG (@size above MMP_FILE_MAX_SIZE),
 * -ENOMEM (the backing store cannot be reserved), -ENFILE (MMP_MAX_FILES,
 * 65536, files live on the phys; mmp_mmap(MMP_MAP_SHARED) makes one too).
 */
int mmp_file_create(struct mmp_phys *phys, uint64_t size, unsigned int flags,
		    struct mmp_file **out);

/*
 * mmp_memfd_create() flag (since libmmprim.so.1.4): memfd_create's
 * MFD_HUGETLB, a hugetlbfs file whose pages come from the phys's pool of the
 * size in the MMP_MFD_HUGE_* bits (log2 of the size, as MFD_HUGE_SHIFT
 * encodes it; 0 is 2 MiB).
 */
#define MMP_MFD_HUGETLB		0x1000
#define MMP_MFD_HUGE_SHIFT	26
#define MMP_MFD_HUGE_MASK	0x3f
#define MMP_MFD_HUGE_64KB	(16u << MMP_MFD_HUGE_SHIFT)
#define MMP_MFD_HUGE_2MB	(21u << MMP_MFD_HUGE_SHIFT)
#define MMP_MFD_HUGE_32MB	(25u << MMP_MFD_HUGE_SHIFT)
#define MMP_MFD_HUGE_1GB	(30u << MMP_MFD_HUGE_SHIFT)

/**
 * mmp_memfd_create() - memfd_create(2): an empty shmem file, as
 * mmp_file_create(phys, 0, MMP_FILE_SHMEM | @flags).
 *
 * With MMP_MFD_HUGETLB (and no MMP_FILE_* flag), a hugetlbfs file instead:
 * its page cache holds huge pages from the pool (mmprim/hugetlb.h), its size
 * is whole huge pages (mmp_file_truncate() to anything else: -EINVAL),
 * mmp_file_write() is -EINVAL as write(2) is, a hole reads as zeroes.
 * mmp_mmap_file() maps it shared or private at a huge-page aligned offset
 * (else -EINVAL) and reserves its pages as MMP_MAP_HUGETLB does (-ENOMEM
 * when the pool cannot cover them, unless MMP_MAP_NORESERVE); a writable
 * mapping past the end grows the file to cover it. A space whose back end
 * cannot map the size gets -EINVAL from mmp_mmap_file().
 * Returns 0, -EINVAL (NULL, unknown flags, MMP_MFD_HUGE_* bits without
 * MMP_MFD_HUGETLB), -ENODEV (a size the phys has no pool of), -ENFILE.
 */
int mmp_memfd_create(struct mmp_phys *phys, unsigned int flags, struct mmp_file **out);

/**
 * mmp_file_destroy() - close the user's handle and free the file.
 * Returns 0, -EINVAL (NULL), -EBUSY (a VMA still maps it: nothing is freed
 * and the handle stays open; munmap the mappings first). The file is gone
 * after a 0: calling again is a use after free, as close(2) twice is a bug.
 */
int mmp_file_destroy(struct mmp_file *file);

/**
 * mmp_file_write() - pwrite(2): @len bytes of @buf at @offset through the
 * page cache, growing the file if they reach past its end. Mappings of the
 * file see the bytes at once (private ones until they copy the page).
 * Returns 0, -EINVAL (NULL), -EBADF (read-only handle), -EFBIG (past
 * MMP_FILE_MAX_SIZE), -ENOMEM (no memory for the page cache: bytes before
 * the page that failed are written and the size covers them).
 */
int mmp_file_write(struct mmp_file *file, uint64_t offset, const void *buf, size_t len);

/**
 * mmp_file_read() - pread(2): up to @len bytes at @offset, stopping at the
 * end of the file; *@nread says how many. Returns 0, -EINVAL, -ENOMEM.
 */
int mmp_file_read(struct mmp_file *file, uint64_t offset, void *buf, size_t len, size_t *nread);

/**
 * mmp_file_truncate() - ftruncate(2). Shrinking unmaps the pages past the new
 * end from every mapping, private copies included (truncate_pagecache), drops
 * them from the page cache and zeroes the tail of the last page. Returns 0,
 * -EINVAL (NULL, or a read-only handle, as ftruncate(2)), -EFBIG.
 */
int mmp_file_truncate(struct mmp_file *file, uint64_t size);

/** mmp_file_size() - i_size into *@size; -EINVAL for NULL. */
int mmp_file_size(struct mmp_file *file, uint64_t *size);

struct mmp_file_stat {
	uint64_t size;			/* i_size */
	uint64_t nrpages;		/* pages in the page cache */
	uint64_t nr_dirty;		/* of them, in dirty folios */
	uint64_t nr_mapped_vmas;	/* VMAs in i_mmap */
	uint64_t nr_folios[10];		/* page-cache folios by order, 0 to 9 */
	uint64_t writeback_pages;	/* pages written to the backing store so far */
};

/** mmp_file_stat_sized() - the page cache of @file now; -EINVAL for NULL or @size below 8. */
int mmp_file_stat_sized(struct mmp_file *file, struct mmp_file_stat *st, size_t size);

static inline int mmp_file_stat(struct mmp_file *file, struct mmp_file_stat *st)
{
	return mmp_file_stat_sized(file, st, sizeof(*st));
}

/**
 * mmp_mmap_file() - mmap(2) of @file from @offset.
 * @flags: MMP_MAP_SHARED or MMP_MAP_PRIVATE, with MMP_MAP_FIXED,
 *         MMP_MAP_FIXED_NOREPLACE or MMP_MAP_POPULATE.
 *
 * A private mapping reads the file's folios and copies a page on its first
 * write (do_cow_fault, or do_wp_page on a page already mapped). A shared
 * mapping maps the page-cache folio itself: writes dirty it, every other
 * mapping and mmp_file_read() see them. The length may run past the end of
 * the file: an access to a page wholly past it fails with -EIO (SIGBUS).
 *
 * A hugetlbfs file (mmp_memfd_create() with MMP_MFD_HUGETLB) also takes
 * MMP_MAP_NORESERVE.
 *
 * Errors as mmap(2): -EINVAL (NULL, @offset not page aligned, len 0, neither
 * or both of SHARED and PRIVATE, unknown flags), -EACCES (a shared writable
 * mapping of a read-only handle), -EOVERFLOW (the offset's pages run past
 * the largest index), and those of mmp_mmap().
 */
int mmp_mmap_file(struct mmp_space *space, uint64_t hint, uint64_t len, int prot, int flags,
		  struct mmp_file *file, uint64_t offset, uint64_t *addr_out);

#define MMP_MS_ASYNC		1
#define MMP_MS_INVALIDATE	2
#define MMP_MS_SYNC		4

/**
 * mmp_msync() - msync(2) of [addr, addr + len). The page cache is the
 * file here and every read goes through it, so there is nothing to make
 * visible; MMP_MS_SYNC writes the range's dirty folios of regular files to
 * their backing store. Unlike the kernel it does not write-protect their
 * pages (folio_mkclean): a write through the mapping after it leaves the
 * folio clean and its entry dirty, so a later MMP_MS_SYNC does not see it;
 * reclaim, which takes the entries' dirty bits as it unmaps, still writes it
 * back, so nothing is lost.
 * Returns 0, -EINVAL (unaligned, bad flags, ASYNC with SYNC), -ENOMEM (part
 * of the range is not mapped; the rest is synced).
 */
int mmp_msync(struct mmp_space *space, uint64_t addr, uint64_t len, int flags);

#ifdef __cplusplus
}
#endif

#endif /* MMPRIM_FILE_H */
