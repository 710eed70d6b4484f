/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RISC-V page-table entries: the real bit layout, the same in Sv39, Sv48 and
 * Sv57, shared by the format (riscv64.c), the Svnapot policy (napot.c) and
 * every riscv64 back end.
 */
#ifndef MMP_RISCV64_FAMILY_H
#define MMP_RISCV64_FAMILY_H

#include "arch_api.h"
#include "format.h"



/* A NAPOT entry as core mm sees it at @ptep: a plain entry for this very page. */
static __always_inline mmp_pte_t napot_normalize(mmp_pte_t pte, const mmp_pte_t *ptep)
{
	uint64_t pfn = napot_base_pfn(pte) + (((uintptr_t)ptep >> 3) & (NAPOT_PTES - 1));

	return (pte & ~(RV_PAGE_PFN_MASK | RV_PAGE_NAPOT)) | pfn << RV_PAGE_PFN_SHIFT;
}

/* Everything that must match across a block, A/D aside. */
static __always_inline mmp_pte_t rv_prot_noad(mmp_pte_t pte)
{
	return pte & ~(RV_PAGE_PFN_MASK | RV_PAGE_A | RV_PAGE_D | RV_PAGE_NAPOT);
}

mmp_pte_t napot_ptep_get(struct mmp_space *s, mmp_pte_t *ptep);
mmp_pte_t napot_ptep_get_lockless(struct mmp_space *s, mmp_pte_t *ptep);
bool napot_block_read(struct mmp_space *s, mmp_pte_t *first, mmp_pte_t *out,
		      struct cont_block_fault *fault);
void napot_set_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte,
		    unsigned int nr);
mmp_pte_t napot_ptep_get_and_clear(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep);
mmp_pte_t napot_get_and_clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					unsigned int nr, int full);
void napot_clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, unsigned int nr,
			   int full);
void napot_wrprotect_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, unsigned int nr);
int napot_ptep_test_and_clear_young(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep);
int napot_ptep_set_access_flags(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				unsigned int eflags);
void napot_clear_young_dirty_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				  unsigned int nr, unsigned int eflags);

/* riscv64.c: the format and the walker, shared by Sv39, Sv48 and Sv57. */

/*
 * The cycle costs every riscv64 back end shares (riscv64.c says where they
 * come from). A TLB miss that misses the walk caches loads one entry per
 * level, so the walk costs 12.5 cycles a level: deeper tables, dearer walks.
 */
#define RISCV64_COSTS(nr_levels)	\
	.ghz = 2.0,							\
	.entry_read = 4,						\
	.entry_write = 8,						\
	.tlbi_page = 80,						\
	.flush_op = 200,						\
	.flush_all = 600,						\
	.ipi = 10000,							\
	.page_walk = 12.5 * (nr_levels),				\
	.rcu_sync = 10000,						\
	.rcu_call = 200

/* Everything a riscv64 back end shares; it adds name, geometry and cost table. */
#define RISCV64_FAMILY							\
	.format = MMP_FORMAT_riscv64,					\
	.tlbi_broadcast = false,					\
	.ad_model = MMP_AD_SWITCHABLE,	/* Svadu, or Svade: MMP_OPT_HW_AD */ \
	.cont_ptes = NAPOT_PTES,	/* Svnapot 64 KiB runs */	\
	.tlb_flush_ceiling = 64,	/* tlb_flush_all_threshold */	\
	.eflags_unsupported = MMP_E_SOFT_DIRTY

#endif /* MMP_RISCV64_FAMILY_H */
