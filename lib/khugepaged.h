/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Collapsing PTE-mapped ranges into PMD-mapped THPs (lib/khugepaged.c). */
#ifndef MMP_KHUGEPAGED_H
#define MMP_KHUGEPAGED_H

#include "mm_types.h"

/* MADV_COLLAPSE over [start, end): 0 or the errno of madvise(2). Takes the mmap lock itself. */
int madvise_collapse(struct mmp_space *s, uint64_t start, uint64_t end);

#endif /* MMP_KHUGEPAGED_H */
