/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PT_RECLAIM: MADV_DONTNEED of a whole PTE table frees the table it emptied.
 * The caller puts the table through the mmu_gather, so it is freed only after
 * the TLB flush and a grace period: lockless walkers and faults that looked
 * the table up under rcu_read_lock may still be reading it.
 */
#include "mm.h"

/*
 * The PTL is held and every entry was just zapped: if the PMD lock can be had
 * without waiting, unlink the table now.
 */
uint32_t try_to_free_pte_fast(struct mmp_space *s, mmp_pte_t *pmdp, mmp_pte_t *ptes)
{
	uint32_t pfn = NO_PFN;

	if (!pt_reclaim_enabled(s) || !spin_trylock(&s->page_table_lock))
		return NO_PFN;
	if (pte_table(s, READ_ONCE(*pmdp)) == ptes) {
		pfn = entry_pfn(s, __atomic_exchange_n(pmdp, 0, __ATOMIC_ACQ_REL), MMP_PMD);
		count_inc(s, MMP_C_PMD_WRITE);
		count_inc(s, MMP_C_PT_RECLAIM_FAST);
	}
	spin_unlock(&s->page_table_lock);
	return pfn;
}

/*
 * The slow path: PMD lock first, then the PTL, and a rescan, since a fault may
 * have filled an entry since the zap dropped the PTL.
 */
uint32_t try_to_free_pte_slow(struct mmp_space *s, mmp_pte_t *pmdp, mmp_pte_t *ptes)
{
	mmp_spinlock_t *ptl = pte_lockptr(s, ptes);
	uint32_t pfn = NO_PFN;
	bool empty = true;

	if (!pt_reclaim_enabled(s))
		return NO_PFN;
	spin_lock(&s->page_table_lock);
	if (pte_table(s, READ_ONCE(*pmdp)) != ptes)
		goto out;	/* someone else freed or replaced it */
	spin_lock(ptl);
	for (unsigned int i = 0; i < PTRS_PER_TABLE && empty; i++)
		empty = !READ_ONCE(ptes[i]);
	count_add(s, MMP_C_PTE_READ, PTRS_PER_TABLE);
	if (empty) {
		pfn = entry_pfn(s, __atomic_exchange_n(pmdp, 0, __ATOMIC_ACQ_REL), MMP_PMD);
		count_inc(s, MMP_C_PMD_WRITE);
		count_inc(s, MMP_C_PT_RECLAIM_SLOW);
	}
	spin_unlock(ptl);
out:
	spin_unlock(&s->page_table_lock);
	return pfn;
}
