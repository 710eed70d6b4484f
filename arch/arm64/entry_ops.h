/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64's entry operations, inline as arch/arm64/include/asm/pgtable.h has
 * them: an entry outside any contpte block is read, written and cleared right
 * here, and only a block (or a write that may complete one) calls out of line
 * into contpte.c, directly. The inline paths count exactly what contpte.c
 * would have counted for the same entry, read of the unfold check included.
 */
#ifndef MMP_ARM64_ENTRY_OPS_H
#define MMP_ARM64_ENTRY_OPS_H

#include "../shared/cont_block.h"
#include "family.h"

#define __HAVE_ARCH_PTEP_GET
static __always_inline mmp_pte_t arm64_ptep_get(struct mmp_space *s, mmp_pte_t *ptep)
{
	return cont_ptep_get_inline(s, ptep, pte_valid_cont, contpte_ptep_get);
}

#define __HAVE_ARCH_PTEP_GET_LOCKLESS
static __always_inline mmp_pte_t arm64_ptep_get_lockless(struct mmp_space *s, mmp_pte_t *ptep)
{
	return cont_ptep_get_lockless_inline(s, ptep, pte_valid_cont, contpte_ptep_get_lockless);
}

/* Verify's raw read of a block, before any lockless gather (contpte.c). */
#define __HAVE_ARCH_CONT_BLOCK_READ
#define arm64_cont_block_read	contpte_block_read

#define __HAVE_ARCH_PTE_BATCH_HINT
static __always_inline unsigned int arm64_pte_batch_hint(mmp_pte_t *ptep, mmp_pte_t pte)
{
	return cont_batch_hint(ptep, pte_valid_cont(pte), CONT_PTES);
}

/* One entry outside a block that cannot complete one: no unfold, no fold. */
#define __HAVE_ARCH_SET_PTES
static __always_inline void arm64_set_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					   mmp_pte_t pte, unsigned int nr)
{
	pte &= ~ARM64_PTE_CONT;
	if (likely(nr == 1) && !pte_valid_cont(__atomic_load_n(ptep, __ATOMIC_ACQUIRE)) &&
	    !cont_completes_block(addr, arm64_pte_pfn(pte), CONT_PTES)) {
		/* The unfold check's read and the write, counted as raw_set() would. */
		count_add2(s, MMP_C_PTE_READ, MMP_C_PTE_WRITE, 1);
		__atomic_store_n(ptep, pte, __ATOMIC_RELEASE);
		return;
	}
	contpte_set_ptes(s, addr, ptep, pte, nr);
}

#define __HAVE_ARCH_PTEP_GET_AND_CLEAR
static __always_inline mmp_pte_t arm64_ptep_get_and_clear(struct mmp_space *s, uint64_t addr,
							  mmp_pte_t *ptep)
{
	if (unlikely(pte_valid_cont(__atomic_load_n(ptep, __ATOMIC_ACQUIRE))))
		return contpte_ptep_get_and_clear(s, addr, ptep);
	count_inc(s, MMP_C_PTE_READ);
	return raw_get_and_clear(s, ptep);
}

#define __HAVE_ARCH_GET_AND_CLEAR_FULL_PTES
static __always_inline mmp_pte_t arm64_get_and_clear_full_ptes(struct mmp_space *s,
							       uint64_t addr, mmp_pte_t *ptep,
							       unsigned int nr, int full)
{
	if (likely(nr == 1))
		return arm64_ptep_get_and_clear(s, addr, ptep);
	return contpte_get_and_clear_full_ptes(s, addr, ptep, nr, full);
}

#define __HAVE_ARCH_CLEAR_FULL_PTES
static __always_inline void arm64_clear_full_ptes(struct mmp_space *s, uint64_t addr,
						  mmp_pte_t *ptep, unsigned int nr, int full)
{
	if (likely(nr == 1))
		arm64_ptep_get_and_clear(s, addr, ptep);
	else
		contpte_clear_full_ptes(s, addr, ptep, nr, full);
}

/* The rest is contpte.c's, called directly (the kernel's #define set_ptes set_ptes). */
#define __HAVE_ARCH_WRPROTECT_PTES
#define arm64_wrprotect_ptes	contpte_wrprotect_ptes

#define __HAVE_ARCH_PTEP_TEST_AND_CLEAR_YOUNG
#define arm64_ptep_test_and_clear_young	contpte_ptep_test_and_clear_young

#define __HAVE_ARCH_CLEAR_YOUNG_DIRTY_PTES
#define arm64_clear_young_dirty_ptes	contpte_clear_young_dirty_ptes

#define __HAVE_ARCH_PTEP_SET_ACCESS_FLAGS
#define arm64_ptep_set_access_flags	contpte_ptep_set_access_flags

/*
 * pte_mkyoung, pte_mkspecial, pte_mkwrite (DBM; AP[2] cleared when already
 * dirty) and pte_mkdirty (the software bit; AP[2] cleared when writable).
 */
#define __HAVE_ARCH_PTE_SET_FLAGS
static __always_inline mmp_pte_t arm64_pte_set_flags(mmp_pte_t e, unsigned int f)
{
	if (f & MMP_E_ACCESSED)
		e |= ARM64_PTE_AF;
	if (f & MMP_E_SPECIAL)
		e |= ARM64_PTE_SPECIAL;
	if (f & MMP_E_WRITE) {
		e |= ARM64_PTE_WRITE;
		if (e & ARM64_PTE_DIRTY)
			e &= ~ARM64_PTE_RDONLY;
	}
	if (f & MMP_E_DIRTY)
		e = arm64_pte_mkdirty(e);
	return e;
}

/*
 * FEAT_HAFDBS: set AF on any access; on a write, a DBM entry gets AP[2]
 * cleared (hardware dirty) and a non-DBM read-only entry faults. One entry at
 * a time, with an atomic update, as the hardware does.
 */
#define __HAVE_ARCH_HW_UPDATE_LEAF
static __always_inline mmp_pte_t arm64_hw_update_leaf(struct mmp_space *s, mmp_pte_t *ep,
						       enum mmp_level level, unsigned int access)
{
	mmp_pte_t old = __atomic_load_n(ep, __ATOMIC_ACQUIRE), new;

	for (;;) {
		if (!(old & ARM64_PTE_VALID) || (level > MMP_PTE && (old & ARM64_PTE_TYPE_BIT)))
			return 0;
		new = old | ARM64_PTE_AF;
		if (access == MMP_ACCESS_WRITE && (old & ARM64_PTE_RDONLY)) {
			if (!(old & ARM64_PTE_DBM))
				return 0;
			new &= ~ARM64_PTE_RDONLY;
		}
		if (new == old)
			return old;
		if (__atomic_compare_exchange_n(ep, &old, new, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			count_inc(s, MMP_C_HW_AD_UPDATE);
			return new;
		}
	}
}

#endif /* MMP_ARM64_ENTRY_OPS_H */
