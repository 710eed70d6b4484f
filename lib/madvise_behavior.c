/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The madvise advices that set or clear VMA flags (madvise_vma_behavior's
 * second half): the read pattern (VM_SEQ_READ, VM_RAND_READ, which file
 * faults read ahead by, lib/filemap.c), fork's (VM_DONTCOPY, VM_WIPEONFORK,
 * lib/fork.c), KSM's VM_MERGEABLE and PR_SET_MEMORY_MERGE; and MADV_REMOVE,
 * a hole punched through a shared mapping, and the memory-failure injection
 * advices an unprivileged process is refused.
 *
 * KSM here is the flags only: no ksmd scans VM_MERGEABLE memory and no page
 * is ever merged, so MADV_UNMERGEABLE has nothing to break out.
 */
#include "filemap.h"
#include "mm.h"
#include "mmap_lock.h"

/*
 * The flags @advice gives @vma into *@flags, or the error that ends the walk
 * there (the VMAs before keep the advice).
 */
static int madvise_new_flags(const struct mmp_vma *vma, int advice, unsigned long *flags)
{
	unsigned long f = vma->flags;

	switch (advice) {
	case MMP_MADV_NORMAL:
		f &= ~(VM_RAND_READ | VM_SEQ_READ);
		break;
	case MMP_MADV_SEQUENTIAL:
		f = (f & ~VM_RAND_READ) | VM_SEQ_READ;
		break;
	case MMP_MADV_RANDOM:
		f = (f & ~VM_SEQ_READ) | VM_RAND_READ;
		break;
	case MMP_MADV_DONTFORK:
		f |= VM_DONTCOPY;
		break;
	case MMP_MADV_DOFORK:
		/* VM_IO (a driver's mapping) would refuse with -EINVAL; none is modelled. */
		f &= ~VM_DONTCOPY;
		break;
	case MMP_MADV_WIPEONFORK:
		/* Only private anonymous memory: a shared or file page cannot be wiped. */
		if (vma->vm_file || (f & VM_SHARED))
			return -EINVAL;
		f |= VM_WIPEONFORK;
		break;
	case MMP_MADV_KEEPONFORK:
		/* Droppable memory is always wiped on fork. */
		if (f & VM_DROPPABLE)
			return -EINVAL;
		f &= ~VM_WIPEONFORK;
		break;
	case MMP_MADV_MERGEABLE:
		/* ksm_madvise: an incompatible VMA is passed by, not refused. */
		if (ksm_compatible(f))
			f |= VM_MERGEABLE;
		break;
	case MMP_MADV_UNMERGEABLE:
		f &= ~VM_MERGEABLE;	/* nothing was merged: nothing to break out */
		break;
	case MMP_MADV_HUGEPAGE:
		f = (f & ~VM_NOHUGEPAGE) | VM_HUGEPAGE;
		break;
	case MMP_MADV_NOHUGEPAGE:
		f = (f & ~VM_HUGEPAGE) | VM_NOHUGEPAGE;
		break;
	default:
		return -EINVAL;
	}
	*flags = f;
	return 0;
}

static unsigned long given_flags(const struct mmp_vma *vma, void *arg)
{
	(void)vma;
	return *(unsigned long *)arg;
}

/*
 * A VMA-flag advice over [start, end), VMA by VMA under the mmap write lock
 * (madvise_update_vma): each piece split out, changed, merged back; *@hole
 * says whether the walk met one, for the caller to report after acting. A
 * split the map count or memory refuses is -EAGAIN:
 * madvise says a kernel resource is short rather than -ENOMEM, which means a
 * hole (as the host shows at max_map_count).
 */
int madvise_behavior(struct mmp_space *s, uint64_t start, uint64_t end, int advice, bool *hole)
{
	int err = 0;

	*hole = false;
	mmap_write_lock(s);
	for (uint64_t addr = start; addr < end; ) {
		struct mmp_vma *vma = find_vma_intersection(s, addr, end);
		uint64_t piece_end;
		unsigned long flags;

		if (!vma || vma->start > addr)
			*hole = true;
		if (!vma)
			break;
		addr = MAX(addr, vma->start);
		piece_end = MIN(end, vma->end);
		err = madvise_new_flags(vma, advice, &flags);
		if (err)
			break;
		err = vma_modify_flags(s, addr, piece_end, given_flags, NULL, &flags);
		if (err) {
			if (err == -ENOMEM)
				err = -EAGAIN;
			break;
		}
		addr = piece_end;
	}
	WRITE_ONCE(s->last_op, "mmp_madvise");
	mmap_write_unlock(s);
	return err;
}

/*
 * MADV_REMOVE (madvise_remove): per VMA, a file mapped shared and writable,
 * else -EINVAL (no file: anonymous private memory) or -EACCES; then the hole
 * is punched with the mmap lock dropped, as vfs_fallocate is called. hugetlbfs
 * punching (whole huge pages, partial ones zeroed) is not modelled.
 */
int madvise_remove(struct mmp_space *s, uint64_t start, uint64_t end, bool *hole)
{
	int err = 0;

	*hole = false;
	mmap_read_lock(s);
	for (uint64_t addr = start; addr < end; ) {
		struct mmp_vma *vma = find_vma_intersection(s, addr, end);
		struct mmp_file *f;
		uint64_t lo, hi, first;

		if (!vma || vma->start > addr)
			*hole = true;
		if (!vma)
			break;
		lo = MAX(addr, vma->start);
		hi = MIN(end, vma->end);
		f = vma->vm_file;
		if (!f) {
			err = -EINVAL;
			break;
		}
		if ((vma->flags & (VM_SHARED | VM_MAYWRITE)) != (VM_SHARED | VM_MAYWRITE)) {
			err = -EACCES;
			break;
		}
		if (is_file_hugepages(f)) {
			err = -EOPNOTSUPP;
			break;
		}
		first = linear_page_index(vma, lo);
		get_file(f);
		mmap_read_unlock(s);
		err = file_punch_hole(f, first, first + ((hi - lo) >> PAGE_SHIFT));
		fput(f);
		mmap_read_lock(s);
		if (err)
			break;
		addr = hi;
	}
	WRITE_ONCE(s->last_op, "mmp_madvise(MADV_REMOVE)");
	mmap_read_unlock(s);
	return err;
}

/*
 * PR_SET_MEMORY_MERGE (ksm_enable_merge_any, ksm_disable_merge_any): the
 * existing VMAs change in place, no split, no merge; later mappings take
 * the flag as they are made (ksm_vma_flags).
 */
MMP_EXPORT int mmp_space_set_memory_merge(struct mmp_space *s, int on)
{
	if (!s)
		return -EINVAL;
	mmap_write_lock(s);
	if (!!on != READ_ONCE(s->merge_any)) {
		WRITE_ONCE(s->merge_any, !!on);
		for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next) {
			unsigned long flags = on ? ksm_vma_flags(s, vma->flags) :
						   vma->flags & ~VM_MERGEABLE;

			if (flags == vma->flags)
				continue;
			vma_start_write(s, vma);
			WRITE_ONCE(vma->flags, flags);
		}
	}
	WRITE_ONCE(s->last_op, "mmp_space_set_memory_merge");
	mmap_write_unlock(s);
	return 0;
}
