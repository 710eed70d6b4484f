/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reverse map and lazyfree (lib/rmap.c): from a folio to the entries that map it. */
#ifndef MMP_RMAP_H
#define MMP_RMAP_H

#include "fault.h"

int anon_vma_prepare(struct mmp_space *s, struct mmp_vma *vma);
int __vmf_anon_prepare(struct vm_fault *vmf);

/*
 * anon_vma_prepare for a fault: 0, -ENOMEM, or VM_FAULT_RETRY under the VMA
 * lock alone. Inline while the VMA has its anon_vma, as the kernel's
 * anon_vma_prepare() is.
 */
static __always_inline int vmf_anon_prepare(struct vm_fault *vmf)
{
	if (likely(READ_ONCE(vmf->vma->anon_vma)))
		return 0;
	return __vmf_anon_prepare(vmf);
}

typedef bool (*rmap_fn)(struct mmp_space *s, struct mmp_vma *vma, uint32_t head_pfn,
			uint64_t start, uint64_t end, void *arg);
bool rmap_walk_anon(struct mmp_space *self, uint32_t head_pfn, rmap_fn fn, void *arg);
bool rmap_walk_file(struct mmp_space *self, uint32_t head_pfn, rmap_fn fn, void *arg);
bool try_to_unmap(struct mmp_space *self, uint32_t head_pfn);
enum lazyfree_verdict { LAZYFREE_DISCARD, LAZYFREE_REDIRTIED, LAZYFREE_REFERENCED };
enum lazyfree_verdict lazyfree_check(struct mmp_space *s, struct mmp_vma *vma,
				     struct mmp_page *head, bool entry_dirty, bool mark);

/* The entries of the PTE table @ptes that map a page of the folio at @head_pfn. */
unsigned int folio_mapped_in_table(struct mmp_space *s, mmp_pte_t *ptes, uint32_t head_pfn);
/* Split a PTE-mapped large folio whose every mapping is in @ptes (PTL held). */
int split_folio_locked(struct mmp_space *s, const struct mmp_vma *vma, mmp_pte_t *ptes,
		       uint64_t table_addr, uint32_t head_pfn, int extra_refs);
/* Split a locked large page-cache folio into order-0 folios, unmapping it first. */
int split_file_folio(struct mmp_space *s, uint32_t head_pfn);
void folio_mark_lazyfree(struct mmp_space *s, struct mmp_page *head);

#endif /* MMP_RMAP_H */
