/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RISC-V page-table entries: the real bit layout, the same in Sv39, Sv48 and
 * Sv57, shared by the format (riscv64.c), the Svnapot policy (napot.c) and
 * every riscv64 back end.
 */
#ifndef MMP_RISCV64_PGTABLE_H
#define MMP_RISCV64_PGTABLE_H

#include "internal.h"

#define _PAGE_V		(1ULL << 0)
#define _PAGE_R		(1ULL << 1)
#define _PAGE_W		(1ULL << 2)
#define _PAGE_X		(1ULL << 3)
#define _PAGE_U		(1ULL << 4)
#define _PAGE_G		(1ULL << 5)
#define _PAGE_A		(1ULL << 6)
#define _PAGE_D		(1ULL << 7)
#define _PAGE_SPECIAL	(1ULL << 8)	/* RSW bit 8 */
#define _PAGE_PROT_NONE	_PAGE_G		/* the kernel's choice: global is never set on user pages */
#define _PAGE_NAPOT	(1ULL << 63)	/* Svnapot: N */
#define _PAGE_PFN_SHIFT	10
#define _PAGE_PFN_MASK	(((1ULL << 44) - 1) << _PAGE_PFN_SHIFT)
#define _PAGE_LEAF	(_PAGE_R | _PAGE_W | _PAGE_X)

/* Svnapot order 4 (NAPOT_CONT64KB_ORDER): 16 entries, ppn[3:0] = 1000b. */
#define NAPOT_ORDER	4
#define NAPOT_PTES	(1u << NAPOT_ORDER)
#define NAPOT_SIZE	(NAPOT_PTES * PAGE_SIZE)
#define NAPOT_MASK	(~(NAPOT_SIZE - 1))

static inline uint64_t rv_ppn(mmp_pte_t pte)
{
	return (pte & _PAGE_PFN_MASK) >> _PAGE_PFN_SHIFT;
}

static inline bool pte_napot(mmp_pte_t pte)
{
	return (pte & (_PAGE_V | _PAGE_NAPOT)) == (_PAGE_V | _PAGE_NAPOT);
}

/* The first pfn of a NAPOT run: its ppn with the size encoding cleared. */
static inline uint64_t napot_base_pfn(mmp_pte_t pte)
{
	return rv_ppn(pte) & ~(uint64_t)(NAPOT_PTES - 1);
}

/* pte_mknapot: all 16 entries hold the same value; ppn[3:0] says the size. */
static inline mmp_pte_t pte_mknapot(mmp_pte_t pte)
{
	uint64_t ppn = (rv_ppn(pte) & ~(uint64_t)(NAPOT_PTES - 1)) | (NAPOT_PTES >> 1);

	return (pte & ~_PAGE_PFN_MASK) | ppn << _PAGE_PFN_SHIFT | _PAGE_NAPOT;
}

/* A NAPOT entry as core mm sees it at @ptep: a plain entry for this very page. */
static inline mmp_pte_t napot_normalize(mmp_pte_t pte, const mmp_pte_t *ptep)
{
	uint64_t pfn = napot_base_pfn(pte) + (((uintptr_t)ptep >> 3) & (NAPOT_PTES - 1));

	return (pte & ~(_PAGE_PFN_MASK | _PAGE_NAPOT)) | pfn << _PAGE_PFN_SHIFT;
}

/* Everything that must match across a block, A/D aside. */
static inline mmp_pte_t rv_prot_noad(mmp_pte_t pte)
{
	return pte & ~(_PAGE_PFN_MASK | _PAGE_A | _PAGE_D | _PAGE_NAPOT);
}

mmp_pte_t napot_ptep_get(struct mmp_space *s, mmp_pte_t *ptep);
mmp_pte_t napot_ptep_get_lockless(struct mmp_space *s, mmp_pte_t *ptep);
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
unsigned int napot_pte_batch_hint(mmp_pte_t *ptep, mmp_pte_t pte);

/* riscv64.c: the format and the walker, shared by Sv39, Sv48 and Sv57. */
mmp_pte_t rv_mk_entry(uint64_t pfn, unsigned int f, enum mmp_level level);
unsigned int rv_entry_flags(mmp_pte_t e, enum mmp_level level);
uint64_t rv_entry_pfn(mmp_pte_t e, enum mmp_level level);
mmp_pte_t rv_hw_update_leaf(struct mmp_space *s, mmp_pte_t *ep, enum mmp_level level,
			    unsigned int access);

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
	.mk_entry = rv_mk_entry,					\
	.entry_flags = rv_entry_flags,					\
	.entry_pfn = rv_entry_pfn,					\
	.ptep_get = napot_ptep_get,					\
	.ptep_get_lockless = napot_ptep_get_lockless,			\
	.set_ptes = napot_set_ptes,					\
	.ptep_get_and_clear = napot_ptep_get_and_clear,			\
	.get_and_clear_full_ptes = napot_get_and_clear_full_ptes,	\
	.clear_full_ptes = napot_clear_full_ptes,			\
	.wrprotect_ptes = napot_wrprotect_ptes,				\
	.ptep_test_and_clear_young = napot_ptep_test_and_clear_young,	\
	.ptep_set_access_flags = napot_ptep_set_access_flags,		\
	.clear_young_dirty_ptes = napot_clear_young_dirty_ptes,		\
	.pte_batch_hint = napot_pte_batch_hint,				\
	.hw_update_leaf = rv_hw_update_leaf,				\
	.tlbi_broadcast = false,					\
	.tlb_flush_ceiling = 64,	/* tlb_flush_all_threshold */	\
	.eflags_unsupported = MMP_E_SOFT_DIRTY

#endif /* MMP_RISCV64_PGTABLE_H */
