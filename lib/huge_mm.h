/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Transparent huge pages mapped by a PMD (lib/huge_memory.c). */
#ifndef MMP_HUGE_MM_H
#define MMP_HUGE_MM_H

#include "entry.h"
#include "fault.h"
#include "mmu_gather.h"

/* mm->thp_disable: what PR_SET_THP_DISABLE set. */
enum thp_disable {
	THP_DISABLE_NONE,
	THP_DISABLE_COMPLETELY,		/* MMF_DISABLE_THP_COMPLETELY */
	THP_DISABLE_EXCEPT_ADVISED,	/* MMF_DISABLE_THP_EXCEPT_ADVISED (6.18) */
};

static inline bool is_huge_zero_pmd(struct mmp_space *s, mmp_pte_t pmd)
{
	return entry_pfn(s, pmd, MMP_PMD) == READ_ONCE(s->phys->huge_zero_pfn) &&
	       entry_test(s, pmd, MMP_PMD, MMP_E_SPECIAL);
}

/*
 * vma_thp_disabled: VM_NOHUGEPAGE, or PR_SET_THP_DISABLE for the whole
 * process; with PR_THP_DISABLE_EXCEPT_ADVISED (6.18) a MADV_HUGEPAGE VMA,
 * or a forced collapse (MADV_COLLAPSE, itself the advice), still may.
 */
static inline bool vma_thp_disabled(const struct mmp_vma *vma, bool forced_collapse)
{
	uint8_t mode;

	if (vma->flags & VM_NOHUGEPAGE)
		return true;
	mode = READ_ONCE(vma->vm_mm->thp_disable);
	if (likely(mode == THP_DISABLE_NONE))
		return false;
	return mode == THP_DISABLE_COMPLETELY ||
	       (!(vma->flags & VM_HUGEPAGE) && !forced_collapse);
}

/* The folio orders THP allows in @vma, bit o for order o (thp_vma_allowable_orders). */
static __always_inline uint32_t thp_vma_allowable_orders(struct mmp_space *s,
							 struct mmp_vma *vma)
{
	uint32_t orders;

	if (vma->flags & VM_NOHUGEPAGE)
		return 0;
	orders = READ_ONCE(s->thp_orders_always) |
		 (vma->flags & VM_HUGEPAGE ? READ_ONCE(s->thp_orders_madvise) : 0);
	/* PR_SET_THP_DISABLE is asked only when the policy allows something. */
	if (unlikely(orders && READ_ONCE(s->thp_disable)) && vma_thp_disabled(vma, false))
		return 0;
	return orders;
}

bool vma_thp_allowed(struct mmp_space *s, struct mmp_vma *vma, unsigned int order);
int do_huge_pmd_anonymous_page(struct vm_fault *vmf);
int do_huge_pmd_wp_page(struct vm_fault *vmf);
void huge_pmd_set_accessed(struct vm_fault *vmf);
void split_huge_pmd_locked(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t haddr);
void split_huge_pmd(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t haddr);
int zap_huge_pmd(struct mmp_gather *tlb, mmp_pte_t *pmdp, uint64_t addr);
int copy_huge_pmd(struct mmp_space *dst, struct mmp_space *src, mmp_pte_t *dst_pmdp,
		  mmp_pte_t *src_pmdp, uint64_t addr);
uint32_t huge_zero_folio(struct mmp_phys *phys);
void pgtable_trans_huge_deposit(struct mmp_space *s, mmp_pte_t *pmdp, uint32_t pgtable);
uint32_t pgtable_trans_huge_withdraw(struct mmp_space *s, mmp_pte_t *pmdp);

/* @old: the rule before the seed (any dirt refuses, without setting swapbacked). */
bool unmap_huge_pmd_locked(struct mmp_space *s, struct mmp_vma *vma, mmp_pte_t *pmdp,
			   uint64_t haddr, uint32_t head_pfn, bool old);
bool madvise_free_huge_pmd(struct mmp_gather *tlb, struct mmp_vma *vma, mmp_pte_t *pmdp,
			   uint64_t addr, uint64_t next);

#endif /* MMP_HUGE_MM_H */
