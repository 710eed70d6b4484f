/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Page-table pages (lib/pgtable.c, lib/pt_reclaim.c): allocation, free, walks, PT_RECLAIM. */
#ifndef MMP_PGALLOC_H
#define MMP_PGALLOC_H

#include "mmu_gather.h"
#include "spinlock.h"

uint32_t pgtable_alloc(struct mmp_space *s);
void pgtable_free(struct mmp_space *s, uint32_t pfn);
void pgtable_unlinked(struct mmp_space *s, uint32_t pfn);
void pgtable_release(struct mmp_space *s, uint32_t pfn, enum mmp_counter how);
void pgtable_put(struct mmp_space *s, uint32_t pfn);
/* The PUD entry for @addr, allocating the tables above it (pud_alloc), or NULL. */
mmp_pte_t *pud_alloc(struct mmp_space *s, uint64_t addr);
/* The same without allocating (pud_offset): NULL when a table above it is missing. */
mmp_pte_t *pud_offset(struct mmp_space *s, uint64_t addr);
mmp_pte_t *pmd_alloc(struct mmp_space *s, uint64_t addr);
mmp_pte_t *pmd_offset(struct mmp_space *s, uint64_t addr);
mmp_pte_t *pte_table(struct mmp_space *s, mmp_pte_t pmd);
/* Inside rcu_read_lock: the PTE table of *@pmdp, locked, rechecked; NULL if none. */
mmp_pte_t *pte_offset_map_lock(struct mmp_space *s, mmp_pte_t *pmdp, mmp_spinlock_t **ptlp);
/* PT_RECLAIM (lib/pt_reclaim.c): the pfn of the freed table, or NO_PFN. */
uint32_t try_to_free_pte_fast(struct mmp_space *s, mmp_pte_t *pmdp, mmp_pte_t *ptes);
uint32_t try_to_free_pte_slow(struct mmp_space *s, mmp_pte_t *pmdp, mmp_pte_t *ptes);
typedef int (*pmd_fn)(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t addr, uint64_t end,
		      void *arg);
int walk_pmd_range(struct mmp_space *s, uint64_t addr, uint64_t end, pmd_fn fn, void *arg);
void free_pgtables(struct mmp_gather *tlb, uint64_t start, uint64_t end, uint64_t floor,
		   uint64_t ceiling);

#endif /* MMP_PGALLOC_H */
