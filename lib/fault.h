/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Page faults (lib/memory.c): what the simulated CPUs enter mm through. */
#ifndef MMP_FAULT_H
#define MMP_FAULT_H

#include "mm_types.h"
#include "vmstat.h"

#define FAULT_FLAG_WRITE	0x1
/* Make a shared anonymous page (or the zero page) exclusive without making it writable. */
#define FAULT_FLAG_UNSHARE	0x2
/* The fault holds only its VMA's lock, not the mmap lock. */
#define FAULT_FLAG_VMA_LOCK	0x4

struct vm_fault {
	struct mmp_space *s;
	struct mmp_vma *vma;
	uint64_t address;
	unsigned int flags;
	mmp_pte_t *pmdp;
	mmp_pte_t orig_pmd;
	mmp_pte_t pmdval;	/* the PMD its PTE table was found through (pte_offset_map) */
};

/* Returns 0 (handled, or nothing to do), -EFAULT (SIGSEGV), -ENOMEM (OOM), or VM_FAULT_FALLBACK. */
#define VM_FAULT_FALLBACK	1
/* Under the VMA lock only: this fault needs the mmap lock, try again under it. */
#define VM_FAULT_RETRY		2
int handle_mm_fault(struct mmp_space *s, uint64_t addr, unsigned int flags);
/* File and shared memory (lib/file_fault.c); -EIO is SIGBUS: past the end of the file. */
int do_fault(struct vm_fault *vmf);
void wp_page_shared(struct vm_fault *vmf, mmp_pte_t *ptes);
int __handle_mm_fault(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr, unsigned int flags);
/*
 * The VMA holding @addr, read-locked, found without the mmap lock; NULL when
 * the mmap lock must do (vma_lock_abort counts it). Unlock with vma_end_read().
 */
struct mmp_vma *lock_vma_under_rcu(struct mmp_space *s, uint64_t addr);

/* mm_account_fault: a fault handled counts in the task's min_flt; one that failed does not. */
static inline void mm_account_fault(struct mmp_space *s, int ret)
{
	if (ret == 0 || ret == VM_FAULT_FALLBACK)
		count_inc(s, MMP_C_MIN_FLT);
}

/* mm_forbids_zeropage(): a read fault allocates, as on s390 with storage keys. */
static inline bool mm_forbids_zeropage(const struct mmp_space *s)
{
	return READ_ONCE(s->opts[MMP_OPT_FORBID_ZEROPAGE]);
}

/* CONFIG_MEM_SOFT_DIRTY, which a kernel can have only where the format has the bit. */
static __always_inline bool mm_soft_dirty(const struct mmp_space *s)
{
	return READ_ONCE(s->opts[MMP_OPT_SOFT_DIRTY]) &&
	       !(s->arch->eflags_unsupported & MMP_E_SOFT_DIRTY);
}

/* What pte_mkdirty() sets: dirty, and soft-dirty where the kernel tracks it. */
static inline unsigned int pte_mkdirty_flags(const struct mmp_space *s)
{
	return MMP_E_DIRTY | (mm_soft_dirty(s) ? MMP_E_SOFT_DIRTY : 0);
}

#endif /* MMP_FAULT_H */
