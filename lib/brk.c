/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * brk: the heap, a private anonymous range from mm->start_brk to mm->brk that
 * grows and shrinks by whole pages while the break itself keeps the exact
 * byte address asked for (glibc's sbrk relies on it).
 *
 * Rules of the kernel's brk system call that we follow: a break below
 * start_brk is refused; a break in the same page only records the value;
 * shrinking always unmaps the pages above the new break, provided a mapping
 * lies there; growing needs the pages free, within the task size and one
 * page clear of the next mapping, and extends the heap VMA when the heap
 * already reaches the old break. Every refusal leaves the break unchanged.
 * RLIMIT_DATA and mlockall(MCL_FUTURE) are not modelled (unlimited, off).
 */
#include "mm.h"
#include "mmap_lock.h"

/* What brk memory is: data, read and write, charged to overcommit (do_brk_flags). */
#define VM_BRK_FLAGS	(VM_READ | VM_WRITE | VM_ACCOUNT)

MMP_EXPORT int mmp_brk_init(struct mmp_space *s, uint64_t start_brk)
{
	int err = 0;

	if (!s || (start_brk & (PAGE_SIZE - 1)) || start_brk < MMP_MMAP_MIN_ADDR ||
	    start_brk >= TASK_SIZE(s))
		return -EINVAL;
	mmap_write_lock(s);
	/* A heap in use stays where it is: moving start_brk would orphan it. */
	if (s->start_brk && s->brk != s->start_brk)
		err = -EBUSY;
	else
		s->start_brk = s->brk = start_brk;
	mmap_write_unlock(s);
	return err;
}

/* Shrink the heap from @oldbrk to @newbrk (both page aligned). */
static int brk_shrink(struct mmp_space *s, uint64_t newbrk, uint64_t oldbrk)
{
	/* Nothing mapped between the breaks: the heap is gone, the kernel refuses. */
	if (!find_vma_intersection(s, newbrk, oldbrk))
		return -ENOMEM;
	return do_munmap(s, newbrk, oldbrk);
}

/* Grow the heap from @oldbrk to @newbrk (both page aligned). */
static int brk_grow(struct mmp_space *s, uint64_t newbrk, uint64_t oldbrk)
{
	int err;

	/* check_brk_limits: the range must fit below the task size. */
	if (newbrk > TASK_SIZE(s))
		return -ENOMEM;
	/* One free page must stay between the heap and whatever lies above it. */
	if (find_vma_intersection(s, oldbrk, newbrk + PAGE_SIZE))
		return -ENOMEM;
	/* do_brk_flags, as do_mmap: only above the limit (it may take the count past it). */
	if (s->vmas.nr > MMP_MAX_MAP_COUNT)
		return -ENOMEM;
	err = vma_insert(s, oldbrk, newbrk,
			 ksm_vma_flags(s, VM_BRK_FLAGS | s->def_flags |
					  (mm_soft_dirty(s) ? VM_SOFTDIRTY : 0)),
			 oldbrk >> PAGE_SHIFT, NULL, NULL);
	if (err)
		return err;
	/*
	 * do_brk_flags extends only a VMA of the heap (one ending above
	 * start_brk), so the first growth never merges into the binary's bss.
	 */
	if (oldbrk > s->start_brk)
		vma_merge_range(s, oldbrk, newbrk);
	return 0;
}

MMP_EXPORT int mmp_brk(struct mmp_space *s, uint64_t brk, uint64_t *brk_out)
{
	uint64_t newbrk = 0, oldbrk = 0;
	bool populate = false;
	int err = 0;

	if (!s || !brk_out)
		return -EINVAL;
	mmap_write_lock(s);
	if (!s->start_brk) {
		err = -EINVAL;
		goto out;
	}
	if (!brk)		/* brk(NULL): read the break */
		goto out;
	if (brk < s->start_brk) {
		err = -EINVAL;
		goto out;
	}
	if (brk > TASK_SIZE(s)) {
		err = -ENOMEM;
		goto out;
	}
	newbrk = (brk + PAGE_SIZE - 1) & PAGE_MASK;
	oldbrk = (s->brk + PAGE_SIZE - 1) & PAGE_MASK;
	if (newbrk == oldbrk)
		err = 0;
	else if (brk <= s->brk)
		err = brk_shrink(s, newbrk, oldbrk);
	else if (!mlock_future_ok(s, s->def_flags, newbrk - oldbrk))
		err = -EAGAIN;	/* check_brk_limits: a locked heap's growth, past RLIMIT_MEMLOCK */
	else {
		err = brk_grow(s, newbrk, oldbrk);
		/* After mlockall(MCL_FUTURE) the heap's growth is populated (brk's mm_populate). */
		populate = !err && (s->def_flags & VM_LOCKED);
	}
	if (!err) {
		s->brk = brk;
		WRITE_ONCE(s->last_op, "mmp_brk");
	}
out:
	*brk_out = s->brk;
	mmap_write_unlock(s);
	if (populate)
		mm_populate(s, oldbrk, newbrk, true);
	return err;
}
