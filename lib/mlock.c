/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mlock, mlock2, munlock, mlockall, munlockall (mm/mlock.c) and the populate
 * they and MAP_LOCKED ask for (__mm_populate). A locked VMA is VM_LOCKED
 * (VM_LOCKONFAULT too when it is not populated up front); what keeps its
 * pages resident is reclaim refusing to unmap a folio from it
 * (try_to_unmap_one) and the LRU advices refusing it (can_madv_lru_vma). The
 * kernel also moves such folios to the unevictable LRU; with no LRU lists
 * here the rmap check is the whole of it. RLIMIT_MEMLOCK is
 * MMP_OPT_RLIMIT_MEMLOCK, -1 (none) by default, as for a process with
 * CAP_IPC_LOCK; mm->locked_vm is what the VM_LOCKED VMAs span, summed when
 * asked (locking is rare; a count kept by every split, merge and unmap would
 * cost them all).
 */
#include "mm.h"
#include "mmap_lock.h"

#define MMP_MCL_ALL	(MMP_MCL_CURRENT | MMP_MCL_FUTURE | MMP_MCL_ONFAULT)

/* RLIMIT_MEMLOCK in pages, or UINT64_MAX for none. */
static uint64_t memlock_limit_pages(struct mmp_space *s)
{
	long limit = READ_ONCE(s->opts[MMP_OPT_RLIMIT_MEMLOCK]);

	return limit < 0 ? UINT64_MAX : (uint64_t)limit >> PAGE_SHIFT;
}

bool can_do_mlock(struct mmp_space *s)
{
	return READ_ONCE(s->opts[MMP_OPT_RLIMIT_MEMLOCK]) != 0;
}

/*
 * Pages of the VM_LOCKED VMAs in [start, end) (count_mm_mlocked_page_nr), or
 * in the whole space: mm->locked_vm. Under the mmap lock.
 */
static uint64_t mlocked_pages(struct mmp_space *s, uint64_t start, uint64_t end)
{
	uint64_t bytes = 0;

	for (struct mmp_vma *vma = vma_find_next(s, start); vma && vma->start < end;
	     vma = vma->vm_next)
		if (vma->flags & VM_LOCKED)
			bytes += MIN(end, vma->end) - MAX(start, vma->start);
	return bytes >> PAGE_SHIFT;
}

bool __mlock_future_ok(struct mmp_space *s, uint64_t bytes)
{
	uint64_t limit = memlock_limit_pages(s);

	if (limit == UINT64_MAX)
		return true;
	return (bytes >> PAGE_SHIFT) + mlocked_pages(s, 0, UINT64_MAX) <= limit;
}

/* total_vm: every page the space maps, which mlockall(MCL_CURRENT) would lock. */
static uint64_t total_vm_pages(struct mmp_space *s)
{
	uint64_t bytes = 0;

	for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next)
		bytes += vma->end - vma->start;
	return bytes >> PAGE_SHIFT;
}

/*
 * mlock_fixup's exceptions: hugetlb (VM_SPECIAL here too) and droppable
 * mappings are passed by, neither locked nor counted, without an error.
 */
static bool vma_lockable(const struct mmp_vma *vma)
{
	return !(vma->flags & (VM_SPECIAL | VM_DROPPABLE)) && !is_vm_hugetlb_page(vma);
}

static unsigned long mlock_flags(const struct mmp_vma *vma, void *arg)
{
	unsigned long want = *(unsigned long *)arg;

	if (!vma_lockable(vma))
		return vma->flags;
	return (vma->flags & ~VM_LOCKED_MASK) | want;
}

/*
 * __mm_populate over [start, end): each VMA as populate_vma_page_range
 * takes it, writable private memory for writing (breaking COW), the rest
 * for reading. A VM_LOCKONFAULT VMA is left alone; a PROT_NONE one (or a
 * guard marker, a fault that fails) is an error unless @ignore_errors, which
 * mmap and mlockall pass. Exec- or write-only memory the kernel reads with
 * FOLL_FORCE (the zero page) is left unpopulated here.
 */
int mm_populate(struct mmp_space *s, uint64_t start, uint64_t end, bool ignore_errors)
{
	uint64_t addr = start;

	while (addr < end) {
		struct mmp_vma *vma;
		unsigned long flags;
		uint64_t seg_end;
		int err = 0;

		mmap_read_lock(s);
		vma = vma_find_next(s, addr);
		if (!vma || vma->start >= end) {
			mmap_read_unlock(s);
			break;
		}
		addr = MAX(addr, vma->start);
		seg_end = MIN(end, vma->end);
		flags = vma->flags;
		mmap_read_unlock(s);
		if (flags & VM_LOCKONFAULT)
			;
		else if (!(flags & VM_ACCESS_FLAGS))
			err = -EFAULT;
		else if ((flags & (VM_WRITE | VM_SHARED)) == VM_WRITE)
			err = populate_range(s, addr, seg_end, true);
		else if (flags & VM_READ)
			err = populate_range(s, addr, seg_end, false);
		if (err && !ignore_errors)
			return err;
		addr = seg_end;
	}
	return 0;
}

/* __mlock_posix_error_return: what a failed populate means to mlock's caller. */
static int mlock_posix_error(int err)
{
	if (err == -EFAULT || err == -EIO)
		return -ENOMEM;
	if (err == -ENOMEM)
		return -EAGAIN;
	return err;
}

/*
 * apply_vma_lock_flags: the range must start in a VMA and have no hole
 * (-ENOMEM); the VMAs before a hole keep their new flags, as in Linux.
 */
static int apply_vma_lock_flags(struct mmp_space *s, uint64_t start, uint64_t end,
				unsigned long want)
{
	struct mmp_vma *vma = find_vma(s, start);
	uint64_t addr = start;
	int err;

	if (!vma)
		return -ENOMEM;
	if (want)
		WRITE_ONCE(s->madvise_may_refuse, true);
	for (; vma && vma->start <= addr && addr < end; vma = vma->vm_next)
		addr = vma->end;
	err = vma_modify_flags(s, start, MIN(addr, end), mlock_flags, NULL, &want);
	if (err)
		return err;
	return addr < end ? -ENOMEM : 0;
}

/* do_mlock and munlock: the range rounded out to pages; 0 bytes is nothing to do. */
static int do_mlock(struct mmp_space *s, uint64_t start, uint64_t len, unsigned long want)
{
	uint64_t end;
	int err;

	if (!s)
		return -EINVAL;
	/* Before anything else, a zero length included. */
	if (want && !can_do_mlock(s))
		return -EPERM;
	len += start & (PAGE_SIZE - 1);
	start &= PAGE_MASK;
	len = (len + PAGE_SIZE - 1) & PAGE_MASK;	/* wraps to 0 for the top page: nothing */
	end = start + len;
	mmap_write_lock(s);
	/*
	 * The limit first (any length, a wrapping one too): what the space
	 * locked plus the range, what of the range already is counted once.
	 */
	if (want && memlock_limit_pages(s) != UINT64_MAX &&
	    (len >> PAGE_SHIFT) + mlocked_pages(s, 0, UINT64_MAX) -
	    mlocked_pages(s, start, end < start ? UINT64_MAX : end) > memlock_limit_pages(s))
		err = -ENOMEM;
	else if (end < start)
		err = -EINVAL;
	else if (end == start)
		err = 0;
	else
		err = apply_vma_lock_flags(s, start, end, want);
	WRITE_ONCE(s->last_op, want ? "mmp_mlock" : "mmp_munlock");
	mmap_write_unlock(s);
	/*
	 * Populated whatever the flags: mm_populate passes VM_LOCKONFAULT VMAs
	 * by, but not those mlock left unlocked (hugetlb), which a PROT_NONE
	 * one then fails with -ENOMEM, as on the host.
	 */
	if (err || !(want & VM_LOCKED) || end == start)
		return err;
	return mlock_posix_error(mm_populate(s, start, end, false));
}

MMP_EXPORT int mmp_mlock(struct mmp_space *s, uint64_t addr, uint64_t len)
{
	return do_mlock(s, addr, len, VM_LOCKED);
}

MMP_EXPORT int mmp_mlock2(struct mmp_space *s, uint64_t addr, uint64_t len, unsigned int flags)
{
	if (flags & ~MMP_MLOCK_ONFAULT)
		return -EINVAL;
	return do_mlock(s, addr, len, VM_LOCKED | (flags & MMP_MLOCK_ONFAULT ? VM_LOCKONFAULT : 0));
}

MMP_EXPORT int mmp_munlock(struct mmp_space *s, uint64_t addr, uint64_t len)
{
	return do_mlock(s, addr, len, 0);
}

/* apply_mlockall_flags: the future's flags in def_flags, then (MCL_CURRENT) every VMA. */
static int apply_mlockall_flags(struct mmp_space *s, int flags)
{
	unsigned long want = 0;

	if (flags)
		WRITE_ONCE(s->madvise_may_refuse, true);
	s->def_flags &= ~VM_LOCKED_MASK;
	if (flags & MMP_MCL_FUTURE) {
		s->def_flags |= VM_LOCKED;
		if (flags & MMP_MCL_ONFAULT)
			s->def_flags |= VM_LOCKONFAULT;
		if (!(flags & MMP_MCL_CURRENT))
			return 0;
	}
	if (flags & MMP_MCL_CURRENT) {
		want = VM_LOCKED;
		if (flags & MMP_MCL_ONFAULT)
			want |= VM_LOCKONFAULT;
	}
	/* A failed split leaves the VMAs before it changed, as mlockall's loop does. */
	return vma_modify_flags(s, 0, USER_TOP(s), mlock_flags, NULL, &want);
}

MMP_EXPORT int mmp_mlockall(struct mmp_space *s, int flags)
{
	bool over;

	if (!s || !flags || (flags & ~MMP_MCL_ALL) || flags == MMP_MCL_ONFAULT)
		return -EINVAL;
	if (!can_do_mlock(s))
		return -EPERM;
	mmap_write_lock(s);
	/* Only MCL_CURRENT locks what is mapped: the whole of it must fit. */
	over = (flags & MMP_MCL_CURRENT) && total_vm_pages(s) > memlock_limit_pages(s);
	if (!over)
		apply_mlockall_flags(s, flags);
	WRITE_ONCE(s->last_op, "mmp_mlockall");
	mmap_write_unlock(s);
	if (over)
		return -ENOMEM;
	/* mm_populate: errors ignored, as the kernel ignores them here; ONFAULT VMAs passed by. */
	if (flags & MMP_MCL_CURRENT)
		mm_populate(s, 0, USER_TOP(s), true);
	return 0;
}

MMP_EXPORT int mmp_munlockall(struct mmp_space *s)
{
	if (!s)
		return -EINVAL;
	mmap_write_lock(s);
	apply_mlockall_flags(s, 0);
	WRITE_ONCE(s->last_op, "mmp_munlockall");
	mmap_write_unlock(s);
	return 0;
}
