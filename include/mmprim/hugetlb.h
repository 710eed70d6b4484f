/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmmprim: hugetlb pools (since libmmprim.so.1.4).
 *
 * A phys keeps a pool of huge pages per size, as the kernel's hstates do:
 * /proc/sys/vm/nr_hugepages and nr_overcommit_hugepages set it, /proc/meminfo's
 * HugePages_Total, _Free, _Rsvd and _Surp report it. mmp_mmap() with
 * MMP_MAP_HUGETLB maps it; every space on the phys draws from the same pool.
 *
 * Sizes. Every phys has a pool of each of 2 MiB (a PMD leaf, on every back
 * end: the default size of MMP_MAP_HUGETLB), 1 GiB (a PUD leaf: x86_64,
 * arm64 4K, riscv64) and arm64's 64 KiB and 32 MiB (16 contiguous PTEs or
 * PMDs). mmp_hugetlb_sizes() says which a back end maps; a size it lacks is
 * -EINVAL at mmap, as on a kernel without that hstate. A memfd of
 * MMP_MFD_HUGETLB (mmprim/file.h) draws from the same pools.
 *
 * Included by mmprim.h; not meant to be included on its own.
 */
#ifndef MMPRIM_HUGETLB_H
#define MMPRIM_HUGETLB_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * mmp_hugetlb_sizes() - the huge page sizes back end @arch maps with
 * MMP_MAP_HUGETLB, as a mask: bit n set means 1 << n bytes (bit 21: 2 MiB).
 * Returns 0, -EINVAL for NULL, -ENOENT for a back end that is not built in.
 */
int mmp_hugetlb_sizes(const char *arch, uint64_t *mask);

/**
 * mmp_phys_set_hugepages() - /proc/sys/vm/nr_hugepages for pages of @size
 * bytes: grow the persistent pool to @nr pages, taking them from free memory
 * (surplus pages in use become persistent first), or shrink it, freeing
 * pages that are neither in use nor reserved; what cannot be freed yet
 * becomes surplus and goes back to free memory when released. As the sysctl
 * write, it succeeds when memory runs short: HugePages_Total tells what the
 * pool got. Returns 0, -EINVAL (NULL, a size that is not a pool's).
 */
int mmp_phys_set_hugepages(struct mmp_phys *phys, uint64_t size, uint64_t nr);

/**
 * mmp_phys_set_overcommit_hugepages() - /proc/sys/vm/nr_overcommit_hugepages:
 * how many surplus pages beyond the persistent pool a reservation or a fault
 * may take from free memory (0, the default: none). Returns 0 or -EINVAL.
 */
int mmp_phys_set_overcommit_hugepages(struct mmp_phys *phys, uint64_t size, uint64_t nr);

/* The pool of one size, as /proc/meminfo and /sys/kernel/mm/hugepages/hugepages-<size>kB/. */
struct mmp_hugepages_stat {
	uint64_t size;		/* bytes per page */
	uint64_t total;		/* HugePages_Total: pages in the pool, surplus included */
	uint64_t free;		/* HugePages_Free: not in use */
	/*
	 * HugePages_Rsvd: promised to mappings, not yet faulted in. As the
	 * kernel's counter (an unsigned long), it can wrap below zero for a
	 * while: a process that unmaps private pages a child still maps gives
	 * up their reservations at once, and 6.18 hands them back only when the
	 * child frees the pages (seen on a 6.18 host as 18446744073709551614).
	 */
	uint64_t rsvd;
	uint64_t surp;		/* HugePages_Surp: pages above nr_hugepages */
	uint64_t nr_overcommit;	/* nr_overcommit_hugepages */
};

/** mmp_phys_hugepages_sized() - the pool of @size into @ssize bytes at @st; -EINVAL as above. */
int mmp_phys_hugepages_sized(struct mmp_phys *phys, uint64_t size, struct mmp_hugepages_stat *st,
			     size_t ssize);

static inline int mmp_phys_hugepages(struct mmp_phys *phys, uint64_t size,
				     struct mmp_hugepages_stat *st)
{
	return mmp_phys_hugepages_sized(phys, size, st, sizeof(*st));
}

#ifdef __cplusplus
}
#endif

#endif /* MMPRIM_HUGETLB_H */
