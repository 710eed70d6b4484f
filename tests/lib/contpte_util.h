/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the arm64 contpte tests share: an arm64 space with a 2 MiB mapping,
 * population without a CPU, and raw views of a block's 16 entries, read with
 * the manual's bits (arch_bits.h), not the back end's.
 */
#ifndef MMP_TESTS_CONTPTE_UTIL_H
#define MMP_TESTS_CONTPTE_UTIL_H

#include <string.h>

#include "rcu.h"
#include "pte_util.h"
#include "arch_bits.h"

#define P	PAGE_SIZE
#define BLOCK	((uint64_t)A64_CONT_PTES * PAGE_SIZE)
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)

static struct mmp_phys *phys;

static inline int nr_cont(const mmp_pte_t *ptep, int n)
{
	int cont = 0;

	for (int i = 0; i < n; i++)
		cont += !!(ptep[i] & A64_CONT);
	return cont;
}

/* Every entry but @skip is what it was, minus A64_CONT: same pfn, same bits. */
static inline bool others_kept(const mmp_pte_t *now, const mmp_pte_t *before, int n, int skip)
{
	for (int i = 0; i < n; i++)
		if (i != skip && now[i] != (before[i] & ~A64_CONT))
			return false;
	return true;
}

/*
 * The first back end whose TLB caches a contiguous-PTE block as one entry
 * (cont_shift: arm64's contpte), as it declares.
 */
static inline const char *contpte_arch(void)
{
	const char *arch;

	for_each_arch(i, arch)
		if (mmp_arch_find(arch)->cont_shift)
			return arch;
	tap_require(0, "a back end with contiguous-PTE blocks");
	return NULL;
}

/* A contpte space with @order mTHP always on (0: none) and a 2 MiB read-write mapping. */
static inline struct mmp_space *contpte_space(struct mmp_phys *ph, unsigned int order, uint64_t *a)
{
	struct mmp_space *s = new_space(ph, contpte_arch());

	if (order)
		must(mmp_space_set_thp(s, order, MMP_THP_ALWAYS) == 0, "mTHP order %u", order);
	*a = map(s, 2 * MiB, RW);
	must(*a % (2 * MiB) == 0, "a 2 MiB mapping is PMD aligned");
	return s;
}

/* Write faults over [addr, addr + len) with no CPU: no TLB entry can go stale later. */
static inline void populate(struct mmp_space *s, uint64_t addr, uint64_t len)
{
	must(populate_range(s, addr, addr + len, true) == 0, "populate %#llx",
	     (unsigned long long)addr);
}

/* Make every entry of a folded block old and clean (writable clean: DBM with AP[2] set). */
static inline void clean_block(mmp_pte_t *ptep)
{
	for (int i = 0; i < A64_CONT_PTES; i++)
		ptep[i] = (ptep[i] & ~(A64_AF | A64_SW_DIRTY)) | A64_AP2_RDONLY;
}


#endif /* MMP_TESTS_CONTPTE_UTIL_H */
