/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Zapping page ranges (lib/memory.c): the kernel's unmap_page_range and unmap_region. */
#ifndef MMP_MEMORY_H
#define MMP_MEMORY_H

#include "mmu_gather.h"

/* Zap [start, end) of one VMA into @tlb, then tlb_end_vma (its flush where VMAs do not merge). */
void unmap_page_range(struct mmp_gather *tlb, uint64_t start, uint64_t end);
/* The same for @vma, hugetlb or not (unmap_single_vma). */
void unmap_single_vma(struct mmp_gather *tlb, struct mmp_vma *vma, uint64_t start, uint64_t end);
/* munmap's unmap_region: zap, free tables between the neighbours, flush. */
void unmap_region(struct mmp_space *s, uint64_t start, uint64_t end);
void unmap_vmas_and_remove(struct mmp_space *s, uint64_t start, uint64_t end);

#endif /* MMP_MEMORY_H */
