/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * madvise: MADV_DONTNEED zaps under the mmap read lock through an mmu_gather;
 * MADV_HUGEPAGE / MADV_NOHUGEPAGE change VMA flags under the write lock.
 */
#include "internal.h"
#include "mm.h"

static int madvise_dontneed(struct mmp_space *s, uint64_t start, uint64_t end)
{
	struct mmp_gather tlb;
	int err = 0;

	pthread_rwlock_rdlock(&s->mmap_lock);
	tlb_gather_mmu(&tlb, s, false);
	tlb.reclaim_pt = true;	/* zap_details.reclaim_pt */
	for (int i = vma_index(s, start); i < (int)s->nr_vmas && s->vmas[i].start < end; i++) {
		struct mmp_vma *vma = &s->vmas[i];

		unmap_page_range(&tlb, MAX(start, vma->start), MIN(end, vma->end));
	}
	tlb_finish_mmu(&tlb);
	s->last_op = "mmp_madvise(MADV_DONTNEED)";
	pthread_rwlock_unlock(&s->mmap_lock);
	return err;
}

static int madvise_hugepage(struct mmp_space *s, uint64_t start, uint64_t end, int advice)
{
	unsigned long set = advice == MMP_MADV_HUGEPAGE ? VM_HUGEPAGE : VM_NOHUGEPAGE;
	unsigned long clear = advice == MMP_MADV_HUGEPAGE ? VM_NOHUGEPAGE : VM_HUGEPAGE;
	int err;

	pthread_rwlock_wrlock(&s->mmap_lock);
	if (s->nr_vmas + vma_splits_needed(s, start, end) > MMP_MAX_MAP_COUNT) {
		err = -ENOMEM;
		goto out;
	}
	err = vma_split(s, start);
	if (!err)
		err = vma_split(s, end);
	if (err)
		goto out;
	for (int i = vma_index(s, start); i < (int)s->nr_vmas && s->vmas[i].start < end; i++)
		s->vmas[i].flags = (s->vmas[i].flags & ~clear) | set;
	vma_merge_range(s, start, end);
out:
	pthread_rwlock_unlock(&s->mmap_lock);
	return err;
}

/* Is [start, end) fully mapped? madvise reports holes with -ENOMEM after acting. */
static bool range_has_hole(struct mmp_space *s, uint64_t start, uint64_t end)
{
	uint64_t addr = start;
	bool hole = false;

	pthread_rwlock_rdlock(&s->mmap_lock);
	for (int i = vma_index(s, start); addr < end; i++) {
		if (i >= (int)s->nr_vmas || s->vmas[i].start > addr) {
			hole = true;
			break;
		}
		addr = s->vmas[i].end;
	}
	pthread_rwlock_unlock(&s->mmap_lock);
	return hole;
}

MMP_EXPORT int mmp_madvise(struct mmp_space *s, uint64_t start, uint64_t len, int advice)
{
	uint64_t end;
	bool hole;
	int err;

	if (!s || (start & (PAGE_SIZE - 1)))
		return -EINVAL;
	if (advice != MMP_MADV_DONTNEED && advice != MMP_MADV_HUGEPAGE &&
	    advice != MMP_MADV_NOHUGEPAGE)
		return -EINVAL;
	end = start + ((len + PAGE_SIZE - 1) & PAGE_MASK);
	if ((len && end == start) || end < start)
		return -EINVAL;
	if (end == start)
		return 0;
	hole = range_has_hole(s, start, end);
	if (advice == MMP_MADV_DONTNEED)
		err = madvise_dontneed(s, start, end);
	else
		err = madvise_hugepage(s, start, end, advice);
	if (!err && hole)
		err = -ENOMEM;
	return err;
}
