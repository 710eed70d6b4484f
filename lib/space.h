/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An address space's life (lib/space.c): creation, exit_mmap, mmgrab and mmdrop, munmap and populate. */
#ifndef MMP_SPACE_H
#define MMP_SPACE_H

#include "mmu_gather.h"

/* Zap [start, end) of one VMA into @tlb, then tlb_end_vma (its flush where VMAs do not merge). */
void unmap_page_range(struct mmp_gather *tlb, uint64_t start, uint64_t end);
/* The same for @vma, hugetlb or not (unmap_single_vma). */
void unmap_single_vma(struct mmp_gather *tlb, struct mmp_vma *vma, uint64_t start, uint64_t end);
/* munmap's unmap_region: zap, free tables between the neighbours, flush. */
void unmap_region(struct mmp_space *s, uint64_t start, uint64_t end);
void unmap_vmas_and_remove(struct mmp_space *s, uint64_t start, uint64_t end);
int do_munmap(struct mmp_space *s, uint64_t start, uint64_t end);

int populate_range(struct mmp_space *s, uint64_t start, uint64_t end, bool write);
/* __mm_populate VMA by VMA, for mlock, MAP_LOCKED and mlockall (lib/mlock.c). */
int mm_populate(struct mmp_space *s, uint64_t start, uint64_t end, bool ignore_errors);
/* Sealing (lib/mseal.c): the first sealed VMA of a range, and madvise's refusal. */
struct mmp_vma *range_first_sealed(struct mmp_space *s, uint64_t start, uint64_t end);
bool madvise_seal_refuses(const struct mmp_vma *vma, int advice);
/* MADV_GUARD_INSTALL (@install) or MADV_GUARD_REMOVE over [start, end) (lib/madvise_guard.c). */
int madvise_guard(struct mmp_space *s, uint64_t start, uint64_t end, bool install);
/* The VMA-flag advices and MADV_REMOVE over [start, end) (lib/madvise_behavior.c). */
int madvise_behavior(struct mmp_space *s, uint64_t start, uint64_t end, int advice, bool *hole);
int madvise_remove(struct mmp_space *s, uint64_t start, uint64_t end, bool *hole);
/* A new VMA's flags with VM_MERGEABLE where PR_SET_MEMORY_MERGE asks for it. */
unsigned long ksm_vma_flags(const struct mmp_space *s, unsigned long vm_flags);
void exit_mmap(struct mmp_space *s);
int space_alloc(struct mmp_phys *phys, const struct mmp_arch *arch, struct mmp_space **out);
void space_link(struct mmp_space *s);
void __mmdrop(struct mmp_space *s);

/* Keep the struct of @s (not its mappings) alive past its users' exit. */
static inline void mmgrab(struct mmp_space *s)
{
	__atomic_fetch_add(&s->mm_count, 1, __ATOMIC_RELAXED);
}

/* Drop a reference from mmgrab or the users'; the last one frees the struct. */
static inline void mmdrop(struct mmp_space *s)
{
	if (__atomic_sub_fetch(&s->mm_count, 1, __ATOMIC_ACQ_REL) == 0)
		__mmdrop(s);
}

#endif /* MMP_SPACE_H */
