/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64 stage-1 descriptors, 4 KiB granule: the real bit layout, shared by the
 * format (arm64.c), the contpte policy (contpte.c) and every arm64 back end,
 * whatever its VA size (the descriptor format does not depend on it).
 */
#ifndef MMP_ARM64_FAMILY_H
#define MMP_ARM64_FAMILY_H

#include "arch_api.h"
#include "format.h"


#define CONT_PTES	16
#define CONT_PTE_SIZE	(CONT_PTES * PAGE_SIZE)
#define CONT_PTE_MASK	(~(CONT_PTE_SIZE - 1))


/* pte_mkold(pte_mkclean(pte)) without the pfn: what must match across a contpte block. */
static __always_inline mmp_pte_t arm64_pte_prot_noad(mmp_pte_t pte)
{
	return ((pte & ~(ARM64_PTE_AF | ARM64_PTE_DIRTY)) | ARM64_PTE_RDONLY) &
	       ~ARM64_PTE_ADDR_MASK;
}

/* contpte.c: the out-of-line halves of arm64's contiguous-PTE operations (entry_ops.h). */
mmp_pte_t contpte_ptep_get(struct mmp_space *s, mmp_pte_t *ptep);
mmp_pte_t contpte_ptep_get_lockless(struct mmp_space *s, mmp_pte_t *ptep);
bool contpte_block_read(struct mmp_space *s, mmp_pte_t *first, mmp_pte_t *out,
			struct cont_block_fault *fault);
void contpte_set_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte,
		      unsigned int nr);
mmp_pte_t contpte_ptep_get_and_clear(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep);
mmp_pte_t contpte_get_and_clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					  unsigned int nr, int full);
void contpte_clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
			     unsigned int nr, int full);
void contpte_wrprotect_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
			    unsigned int nr);
int contpte_ptep_test_and_clear_young(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep);
int contpte_ptep_set_access_flags(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				  unsigned int eflags);
void contpte_clear_young_dirty_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				    unsigned int nr, unsigned int eflags);

/* arm64.c: the format and the MMU, shared by every 4 KiB-granule back end. */

/*
 * The cycle costs every arm64 back end shares (arm64.c says where they
 * come from). A TLB miss that misses the walk caches loads one entry per
 * level, so the walk costs 10 cycles a level: deeper tables, dearer walks.
 */
#define ARM64_COSTS(nr_levels)	\
	.ghz = 3.0,							\
	.entry_read = 4,						\
	.entry_write = 8,						\
	.tlbi_page = 60,						\
	.flush_op = 500,						\
	.flush_all = 800,						\
	.ipi = 0,							\
	.page_walk = 10 * (nr_levels),					\
	.rcu_sync = 6000,						\
	.rcu_call = 200

/*
 * Everything an arm64 back end shares: format, contpte policy, MMU, TLB. A
 * back end adds its name, geometry and cost table (arm64.c, va39.c).
 */
#define ARM64_FAMILY							\
	.format = MMP_FORMAT_arm64,					\
	.tlbi_broadcast = true,						\
	.ad_model = MMP_AD_HARDWARE,	/* FEAT_HAFDBS */		\
	.tlb_flush_ceiling = 511,	/* 512 pages (MAX_DVM_OPS) flush the whole ASID */ \
	.cont_shift = PAGE_SHIFT + 4,					\
	.cont_ptes = 16,		/* contpte blocks */		\
	/* hugetlb: 64 KiB as 16 PTEs, 32 MiB as 16 PMDs (CONT_PTE_SIZE, CONT_PMD_SIZE) */ \
	.hugetlb_cont_levels = 1u << MMP_PTE | 1u << MMP_PMD,		\
	.eflags_unsupported = MMP_E_SOFT_DIRTY

#endif /* MMP_ARM64_FAMILY_H */
