/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64 stage-1 descriptors, 4 KiB granule, 48-bit VA: the real bit layout,
 * shared by the format (arm64.c) and the contpte policy (contpte.c).
 */
#ifndef MMP_ARM64_PGTABLE_H
#define MMP_ARM64_PGTABLE_H

#include "internal.h"

#define PTE_VALID	(1ULL << 0)
#define PTE_TYPE_BIT	(1ULL << 1)	/* page at level 3, table above; clear: block */
#define PTE_USER	(1ULL << 6)	/* AP[1] */
#define PTE_RDONLY	(1ULL << 7)	/* AP[2] */
#define PTE_SHARED	(3ULL << 8)	/* inner shareable */
#define PTE_AF		(1ULL << 10)
#define PTE_NG		(1ULL << 11)
#define PTE_ADDR_MASK	0x0000fffffffff000ULL
#define PTE_DBM		(1ULL << 51)	/* hardware dirty bit modifier: PTE_WRITE */
#define PTE_CONT	(1ULL << 52)
#define PTE_PXN		(1ULL << 53)
#define PTE_UXN		(1ULL << 54)
/* Software bits. */
#define PTE_DIRTY	(1ULL << 55)
#define PTE_SPECIAL	(1ULL << 56)
/*
 * Without PTE_VALID, nG (set on every user entry) says "present to software":
 * PROT_NONE, or a PMD made invalid for a split. The kernel's
 * PTE_PRESENT_INVALID since 6.10; bit 58 (PTE_PROT_NONE) before.
 */
#define PTE_PRESENT_INVALID	PTE_NG
#define PTE_WRITE	PTE_DBM

#define CONT_PTES	16
#define CONT_PTE_SIZE	(CONT_PTES * PAGE_SIZE)
#define CONT_PTE_MASK	(~(CONT_PTE_SIZE - 1))

static inline uint64_t arm64_pte_pfn(mmp_pte_t pte)
{
	return (pte & PTE_ADDR_MASK) >> PAGE_SHIFT;
}

static inline bool pte_valid_cont(mmp_pte_t pte)
{
	return (pte & (PTE_VALID | PTE_CONT)) == (PTE_VALID | PTE_CONT);
}

static inline bool arm64_pte_dirty(mmp_pte_t pte)
{
	return (pte & PTE_DIRTY) || ((pte & PTE_DBM) && !(pte & PTE_RDONLY));
}

static inline mmp_pte_t arm64_pte_mkdirty(mmp_pte_t pte)
{
	pte |= PTE_DIRTY;
	return pte & PTE_WRITE ? pte & ~PTE_RDONLY : pte;
}

/* pte_mkold(pte_mkclean(pte)) without the pfn: what must match across a contpte block. */
static inline mmp_pte_t arm64_pte_prot_noad(mmp_pte_t pte)
{
	return ((pte & ~(PTE_AF | PTE_DIRTY)) | PTE_RDONLY) & ~PTE_ADDR_MASK;
}

/* contpte.c: the hooks arm64 overrides for its contiguous-PTE policy. */
mmp_pte_t contpte_ptep_get(struct mmp_space *s, mmp_pte_t *ptep);
mmp_pte_t contpte_ptep_get_lockless(struct mmp_space *s, mmp_pte_t *ptep);
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
unsigned int contpte_pte_batch_hint(mmp_pte_t *ptep, mmp_pte_t pte);
void contpte_clear_young_dirty_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				    unsigned int nr, unsigned int eflags);

#endif /* MMP_ARM64_PGTABLE_H */
