/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* madvise behaviours in files of their own (lib/madvise_guard.c, lib/madvise_behavior.c). */
#ifndef MMP_MADVISE_H
#define MMP_MADVISE_H

#include "mm_types.h"

/* MADV_GUARD_INSTALL (@install) or MADV_GUARD_REMOVE over [start, end) (lib/madvise_guard.c). */
int madvise_guard(struct mmp_space *s, uint64_t start, uint64_t end, bool install);
/* The VMA-flag advices and MADV_REMOVE over [start, end) (lib/madvise_behavior.c). */
int madvise_behavior(struct mmp_space *s, uint64_t start, uint64_t end, int advice, bool *hole);
int madvise_remove(struct mmp_space *s, uint64_t start, uint64_t end, bool *hole);
/* vma_ksm_compatible: what KSM passes by (of the kernel's list, what is modelled). */
static inline bool ksm_compatible(unsigned long vm_flags)
{
	return !(vm_flags & (VM_SHARED | VM_DONTEXPAND | VM_HUGETLB | VM_DROPPABLE));
}

/* A new VMA's flags, VM_MERGEABLE where PR_SET_MEMORY_MERGE asks for it (every mmap asks). */
static inline unsigned long ksm_vma_flags(const struct mmp_space *s, unsigned long vm_flags)
{
	if (READ_ONCE(s->merge_any) && ksm_compatible(vm_flags))
		vm_flags |= VM_MERGEABLE;
	return vm_flags;
}

#endif /* MMP_MADVISE_H */
