/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The VMA index (lib/vma_tree.c): an AVL tree of VMAs keyed by start, each
 * node knowing the largest free gap below any VMA of its subtree, plus the
 * address-ordered list of the same VMAs. What the kernel's maple tree gives
 * mm_struct: O(log n) lookup, insert, erase and top-down gap search.
 *
 * Writers hold the mmap lock. Lockless readers (the fault path, under
 * rcu_read_lock) use vma_tree_lookup_rcu(): the sequence counts of the VMAs
 * on their path tell them whether the walk saw a consistent path, so a change
 * elsewhere never fails it, and erased VMAs are freed only after a grace
 * period, so a walk never touches freed memory.
 */
#ifndef MMP_VMA_TREE_H
#define MMP_VMA_TREE_H

#include "mm_types.h"

/* Insert @vma (its range free, [start, end) set) into the tree and the list. */
void vma_tree_insert(struct vma_tree *t, struct mmp_vma *vma);
/* Take @vma out of the tree and the list. */
void vma_tree_erase(struct vma_tree *t, struct mmp_vma *vma);
/* Give @vma a new range that keeps it between its neighbours. */
void vma_tree_set_range(struct vma_tree *t, struct mmp_vma *vma, uint64_t start, uint64_t end);

/* The first VMA ending above @addr (the kernel's find_vma), or NULL. Writers and mmap readers. */
struct mmp_vma *vma_tree_find(const struct vma_tree *t, uint64_t addr);

/*
 * Lockless lookup of the VMA containing @addr, inside rcu_read_lock. Returns
 * false when no consistent walk was had (writers kept re-linking its path);
 * true with *@vmap the VMA or NULL as of some instant. The VMA may change
 * right after: the caller locks it and checks again (lock_vma_under_rcu).
 */
bool vma_tree_lookup_rcu(const struct vma_tree *t, uint64_t addr, struct mmp_vma **vmap);

/*
 * The same for the first VMA ending above @addr (find_vma; the maple tree's
 * walk on to the next entry, as lock_next_vma takes it): the VMA holding
 * @addr, else the first one above it, or NULL.
 */
bool vma_tree_lookup_next_rcu(const struct vma_tree *t, uint64_t addr, struct mmp_vma **vmap);

/* The free gap below @vma: from the previous VMA's end, or the tree's floor, to @vma's start. */
static inline uint64_t vma_gap(const struct vma_tree *t, const struct mmp_vma *vma)
{
	uint64_t below = vma->vm_prev ? vma->vm_prev->end : t->floor;

	return vma->start > below ? vma->start - below : 0;
}

/* The last VMA at or before @vma (in address order) whose gap is at least @len, or NULL. */
struct mmp_vma *vma_tree_gap_at_or_before(const struct vma_tree *t, struct mmp_vma *vma,
					  uint64_t len);

/* Check order, links, balance, gaps and count; NULL if sound, else what is wrong. */
const char *vma_tree_check(const struct vma_tree *t);

#endif /* MMP_VMA_TREE_H */
