/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * riscv64's entry operations: reads of an entry outside any Svnapot run stay
 * inline; the rest calls napot.c directly, which folds and unfolds runs.
 * The inline paths count exactly what napot.c would have counted.
 */
#ifndef MMP_RISCV64_ENTRY_OPS_H
#define MMP_RISCV64_ENTRY_OPS_H

#include "../shared/cont_block.h"
#include "family.h"

#define __HAVE_ARCH_PTEP_GET
static __always_inline mmp_pte_t riscv64_ptep_get(struct mmp_space *s, mmp_pte_t *ptep)
{
	return cont_ptep_get_inline(s, ptep, pte_napot, napot_ptep_get);
}

#define __HAVE_ARCH_PTEP_GET_LOCKLESS
static __always_inline mmp_pte_t riscv64_ptep_get_lockless(struct mmp_space *s, mmp_pte_t *ptep)
{
	return cont_ptep_get_lockless_inline(s, ptep, pte_napot, napot_ptep_get_lockless);
}

/* Verify's raw read of a run, before any lockless gather (napot.c). */
#define __HAVE_ARCH_CONT_BLOCK_READ
#define riscv64_cont_block_read	napot_block_read

/* Core's entries are normalized: whether a run starts here is in the table itself. */
#define __HAVE_ARCH_PTE_BATCH_HINT
static __always_inline unsigned int riscv64_pte_batch_hint(mmp_pte_t *ptep, mmp_pte_t pte)
{
	mmp_pte_t raw = __atomic_load_n(ptep, __ATOMIC_ACQUIRE);

	return cont_batch_hint(ptep, pte_napot(raw), NAPOT_PTES);
}

/* The rest is napot.c's, called directly (the kernel's #define set_ptes set_ptes). */
#define __HAVE_ARCH_SET_PTES
#define riscv64_set_ptes	napot_set_ptes

#define __HAVE_ARCH_PTEP_GET_AND_CLEAR
#define riscv64_ptep_get_and_clear	napot_ptep_get_and_clear

#define __HAVE_ARCH_GET_AND_CLEAR_FULL_PTES
#define riscv64_get_and_clear_full_ptes	napot_get_and_clear_full_ptes

#define __HAVE_ARCH_CLEAR_FULL_PTES
#define riscv64_clear_full_ptes	napot_clear_full_ptes

#define __HAVE_ARCH_WRPROTECT_PTES
#define riscv64_wrprotect_ptes	napot_wrprotect_ptes

#define __HAVE_ARCH_PTEP_TEST_AND_CLEAR_YOUNG
#define riscv64_ptep_test_and_clear_young	napot_ptep_test_and_clear_young

#define __HAVE_ARCH_CLEAR_YOUNG_DIRTY_PTES
#define riscv64_clear_young_dirty_ptes	napot_clear_young_dirty_ptes

#define __HAVE_ARCH_PTEP_SET_ACCESS_FLAGS
#define riscv64_ptep_set_access_flags	napot_ptep_set_access_flags

/*
 * The walker. Svadu sets A, and D on a store, atomically on the entry it used
 * (inside a NAPOT run, that one entry). Svade faults instead. The leaf is
 * returned as core mm reads it: for a NAPOT run, a plain entry of this page.
 */
#define __HAVE_ARCH_HW_UPDATE_LEAF
static __always_inline mmp_pte_t riscv64_hw_update_leaf(struct mmp_space *s, mmp_pte_t *ep,
							 enum mmp_level level, unsigned int access)
{
	mmp_pte_t old = __atomic_load_n(ep, __ATOMIC_ACQUIRE), new;
	mmp_pte_t need = RV_PAGE_A | (access == MMP_ACCESS_WRITE ? RV_PAGE_D : 0);

	for (;;) {
		if (!(old & RV_PAGE_V) || !(old & RV_PAGE_LEAF))
			return 0;
		if (access == MMP_ACCESS_WRITE && !(old & RV_PAGE_W))
			return 0;
		new = old | need;
		if (new == old)
			break;
		if (!space_hw_ad(s))
			return 0;	/* Svade: the kernel sets A/D in the fault */
		if (__atomic_compare_exchange_n(ep, &old, new, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			count_inc(s, MMP_C_HW_AD_UPDATE);
			break;
		}
	}
	/* (The TLB then caches this page alone: caching the whole run is optional.) */
	return level == MMP_PTE && pte_napot(new) ? napot_normalize(new, ep) : new;
}

#endif /* MMP_RISCV64_ENTRY_OPS_H */
