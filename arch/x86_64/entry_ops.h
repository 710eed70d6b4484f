/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86_64's entry operations where they differ from the generic ones: the
 * walker's accessed/dirty update, which the hardware does on the raw bits with
 * a locked compare-and-exchange (no decode and re-encode of the entry), bits
 * set on a present entry, and a table entry's pfn, which L1TF never inverts.
 */
#ifndef MMP_X86_64_ENTRY_OPS_H
#define MMP_X86_64_ENTRY_OPS_H

#include "format.h"

#define __HAVE_ARCH_HW_UPDATE_LEAF
static __always_inline mmp_pte_t x86_64_hw_update_leaf(struct mmp_space *s, mmp_pte_t *ep,
						       enum mmp_level level, unsigned int access)
{
	mmp_pte_t old = __atomic_load_n(ep, __ATOMIC_ACQUIRE);
	mmp_pte_t need = X86_PAGE_ACCESSED | (access == MMP_ACCESS_WRITE ? X86_PAGE_DIRTY : 0);

	for (;;) {
		/* Not present (PROT_NONE included), or a table: no leaf to update. */
		if (!(old & X86_PAGE_PRESENT) || (level > MMP_PTE && !(old & X86_PAGE_PSE)))
			return 0;
		if (access == MMP_ACCESS_WRITE && !(old & X86_PAGE_RW))
			return 0;
		if ((old & need) == need)
			return old;
		if (__atomic_compare_exchange_n(ep, &old, old | need, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			count_inc(s, MMP_C_HW_AD_UPDATE);
			return old | need;
		}
	}
}

/*
 * The pfn field of @prot is 0, or all ones for PROT_NONE (0 inverted), so an
 * exclusive or puts @pfn in either way (pfn_pte's protnone_mask()).
 */
#define __HAVE_ARCH_PFN_PTE
static __always_inline mmp_pte_t x86_64_pfn_pte(uint64_t pfn, mmp_pte_t prot)
{
	return prot ^ ((pfn << MMP_PAGE_SHIFT) & X86_PTE_PFN_MASK);
}

/* Present: only bits to set (pte_mkyoung, pte_mkdirty, pte_mkwrite, pte_mkspecial). */
#define __HAVE_ARCH_PTE_SET_FLAGS
static __always_inline mmp_pte_t x86_64_pte_set_flags(mmp_pte_t e, unsigned int f)
{
	return e | (f & MMP_E_ACCESSED ? X86_PAGE_ACCESSED : 0) |
	       (f & MMP_E_DIRTY ? X86_PAGE_DIRTY : 0) | (f & MMP_E_WRITE ? X86_PAGE_RW : 0) |
	       (f & MMP_E_SPECIAL ? X86_PAGE_SOFTW1 : 0);
}

/* A table entry is present: its address bits as they are (pmd_page_vaddr()). */
#define __HAVE_ARCH_TABLE_PFN
static __always_inline uint64_t x86_64_table_pfn(mmp_pte_t e, enum mmp_level level)
{
	return (e & X86_PTE_PFN_MASK) >> MMP_PAGE_SHIFT;
}

#endif /* MMP_X86_64_ENTRY_OPS_H */
