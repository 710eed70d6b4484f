/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Sealing (lib/mseal.c): what munmap, mremap and madvise ask of it. */
#ifndef MMP_MSEAL_H
#define MMP_MSEAL_H

#include "mm_types.h"

/* The first sealed VMA from @vma on that starts below @end, or NULL. */
struct mmp_vma *range_first_sealed(struct mmp_vma *vma, uint64_t end);
/* Does a seal on @vma refuse @advice (can_madvise_modify)? */
bool madvise_seal_refuses(const struct mmp_vma *vma, int advice);

#endif /* MMP_MSEAL_H */
