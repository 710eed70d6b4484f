/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mseal (mm/mseal.c, Linux 6.10; 6.18's rules). A sealed VMA (VM_SEALED)
 * may not be unmapped, moved, resized, replaced or reprotected, each refused
 * with -EPERM where that call meets it: do_munmap before it splits or
 * removes anything (so a fixed mmap or an mremap onto it fails whole),
 * mremap on its source, mprotect VMA by VMA (what came before keeps its new
 * protection), madvise VMA by VMA for the discarding advices on memory the
 * process could not write itself (madvise_seal_refuses). The flag merges
 * like any other: only sealed neighbours merge with a sealed VMA.
 */
#include "mm.h"
#include "mmap_lock.h"

/* is_discard: the advices that throw memory (or a child's copy of it) away. */
static bool madvise_discards(int advice)
{
	switch (advice) {
	case MMP_MADV_DONTNEED: case MMP_MADV_DONTNEED_LOCKED: case MMP_MADV_FREE:
	case MMP_MADV_GUARD_INSTALL:
	case MMP_MADV_REMOVE: case MMP_MADV_DONTFORK: case MMP_MADV_WIPEONFORK:
		return true;
	}
	return false;
}

/*
 * can_madvise_modify: a discard on a sealed VMA is refused only on private
 * anonymous memory without write permission, whose contents the process
 * could not have rewritten otherwise (a file's come back from the file).
 */
bool madvise_seal_refuses(const struct mmp_vma *vma, int advice)
{
	if (!(vma->flags & VM_SEALED) || !madvise_discards(advice))
		return false;
	if (vma->vm_file || (vma->flags & VM_SHARED))
		return false;
	return !(vma->flags & VM_WRITE);
}

/*
 * The first sealed VMA from @vma on that starts below @end, or NULL: what
 * do_munmap refuses, walking on from the VMA it found, as the kernel's gather.
 */
struct mmp_vma *range_first_sealed(struct mmp_vma *vma, uint64_t end)
{
	for (; vma && vma->start < end; vma = vma->vm_next)
		if (vma->flags & VM_SEALED)
			return vma;
	return NULL;
}

static unsigned long seal_flags(const struct mmp_vma *vma, void *arg)
{
	return vma->flags | VM_SEALED;
}

/* range_contains_unmapped: a seal over a hole would leave room for a mapping to come. */
static bool range_has_hole(struct mmp_space *s, uint64_t start, uint64_t end)
{
	uint64_t addr = start;

	for (struct mmp_vma *vma = vma_find_next(s, start); addr < end; vma = vma->vm_next) {
		if (!vma || vma->start > addr)
			return true;
		addr = vma->end;
	}
	return false;
}

MMP_EXPORT int mmp_mseal(struct mmp_space *s, uint64_t start, uint64_t len, unsigned long flags)
{
	uint64_t end, aligned;
	int err = 0;

	if (!s || flags || (start & (PAGE_SIZE - 1)))
		return -EINVAL;
	aligned = (len + PAGE_SIZE - 1) & PAGE_MASK;
	if (aligned < len)
		return -EINVAL;
	end = start + aligned;
	if (end < start)
		return -EINVAL;
	if (end == start)
		return 0;
	mmap_write_lock(s);
	WRITE_ONCE(s->madvise_may_refuse, true);
	if (range_has_hole(s, start, end))
		err = -ENOMEM;
	else
		err = vma_modify_flags(s, start, end, seal_flags, NULL, NULL);
	WRITE_ONCE(s->last_op, "mmp_mseal");
	mmap_write_unlock(s);
	return err;
}
