// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * PROCMAP_QUERY (fs/proc/task_mmu.c's do_procmap_query, Linux 6.11): the VMA
 * at an address, or with PROCMAP_QUERY_COVERING_OR_NEXT_VMA the first one
 * above it, that passes the query's filters (file-backed, and the permission
 * bits asked for), reported as start, end, permissions, page size, file
 * offset and file. Names, build IDs and devices are not modelled
 * (mmprim/introspect.h says what comes back instead).
 *
 * Locks, as query_vma_find_by_addr has them. Before 6.18 the whole query runs
 * under the mmap read lock. From 6.18 (RULE_PROCMAP_QUERY_VMA_LOCK: Suren
 * Baghdasaryan, "fs/proc/task_mmu: execute PROCMAP_QUERY ioctl under per-vma
 * locks") each VMA is looked up under RCU and read-locked alone, so a writer
 * elsewhere in the space neither waits for the query nor makes it wait; when
 * the VMA lock cannot be had (a writer has stamped the VMA) the query takes
 * the mmap read lock, and so waits for that writer, and finishes under it.
 * A COVERING_OR_NEXT query walks on past a hole to the next VMA under RCU
 * (lock_next_vma; vma_tree_lookup_next_rcu here). A query whose address, or
 * whose whole way up, is a hole needs no lock at all: the lookup's answer
 * (no VMA, at some instant) is the kernel's -ENOENT.
 */
#include "copy_struct.h"
#include "hugetlb.h"
#include "mm.h"
#include "mmap_lock.h"
#include "rcu.h"
#include "release.h"
#include "vma.h"
#include "vma_tree.h"

#define PROCMAP_VMA_FLAGS	(MMP_PROCMAP_VMA_READABLE | MMP_PROCMAP_VMA_WRITABLE |	\
				 MMP_PROCMAP_VMA_EXECUTABLE | MMP_PROCMAP_VMA_SHARED)
#define PROCMAP_VALID_FLAGS	(PROCMAP_VMA_FLAGS | MMP_PROCMAP_COVERING_OR_NEXT_VMA |	\
				 MMP_PROCMAP_FILE_BACKED_VMA)
/* The kernel reads at most a page of the argument, and needs it up to query_addr. */
#define PROCMAP_MAX_SIZE	4096
#define PROCMAP_MIN_SIZE	offsetof(struct mmp_procmap_query, vma_start)

_Static_assert(sizeof(struct mmp_procmap_query) == 104, "struct procmap_query of Linux 6.11");
_Static_assert(offsetof(struct mmp_procmap_query, vma_name_addr) == 88, "as struct procmap_query");

static uint64_t procmap_vma_flags(const struct mmp_vma *vma)
{
	uint64_t f = 0, vm = READ_ONCE(vma->flags);

	if (vm & VM_READ)
		f |= MMP_PROCMAP_VMA_READABLE;
	if (vm & VM_WRITE)
		f |= MMP_PROCMAP_VMA_WRITABLE;
	if (vm & VM_EXEC)
		f |= MMP_PROCMAP_VMA_EXECUTABLE;
	if (vm & VM_SHARED)
		f |= MMP_PROCMAP_VMA_SHARED;
	return f;
}

/* Does @vma pass the query's filters (query_matching_vma)? */
static bool procmap_vma_matches(const struct mmp_vma *vma, uint64_t flags)
{
	uint64_t want = flags & PROCMAP_VMA_FLAGS;

	if ((flags & MMP_PROCMAP_FILE_BACKED_VMA) && !vma->vm_file)
		return false;
	return (procmap_vma_flags(vma) & want) == want;
}

/* The out fields from @vma, locked one way or the other. */
static void procmap_fill(struct mmp_procmap_query *q, const struct mmp_vma *vma)
{
	q->vma_start = vma->start;
	q->vma_end = vma->end;
	q->vma_flags = procmap_vma_flags(vma);
	q->vma_page_size = is_vm_hugetlb_page(vma) ? huge_page_size(hstate_vma(vma)) : PAGE_SIZE;
	q->vma_offset = vma->vm_file ? vma->pgoff << PAGE_SHIFT : 0;
	q->inode = vma->vm_file ? vma->vm_file->id : 0;
	q->dev_major = q->dev_minor = 0;
	q->vma_name_size = 0;
	q->build_id_size = 0;
}

/* The query under the mmap read lock, from @addr on: find_vma, and on while filters refuse. */
static int procmap_query_mmap_locked(struct mmp_space *s, struct mmp_procmap_query *q,
				     uint64_t addr)
{
	struct mmp_vma *vma;
	int err = -ENOENT;

	mmap_read_lock(s);
	count_inc(s, MMP_C_MMAP_LOCK_PROCMAP);
	while (addr < TASK_SIZE(s) && (vma = vma_find_next(s, addr))) {
		if (procmap_vma_matches(vma, q->query_flags) &&
		    ((q->query_flags & MMP_PROCMAP_COVERING_OR_NEXT_VMA) || vma->start <= addr)) {
			procmap_fill(q, vma);
			err = 0;
			break;
		}
		if (!(q->query_flags & MMP_PROCMAP_COVERING_OR_NEXT_VMA))
			break;
		addr = vma->end;
	}
	mmap_read_unlock(s);
	return err;
}

enum procmap_lookup { PROCMAP_LOCKED, PROCMAP_HOLE, PROCMAP_MMAP_LOCK };

/*
 * The VMA holding @addr (with @next, else the first above it), read-locked,
 * found under RCU (lock_vma_under_rcu, lock_next_vma, without the fault
 * path's counters): PROCMAP_LOCKED with *@vmap; PROCMAP_HOLE when a
 * consistent lookup found none; PROCMAP_MMAP_LOCK when the lookup or the lock
 * could not be had.
 */
static enum procmap_lookup procmap_lock_vma_rcu(struct mmp_space *s, uint64_t addr, bool next,
						struct mmp_vma **vmap)
{
	struct mmp_vma *vma;
	bool found;

retry:
	rcu_read_lock();
	found = next ? vma_tree_lookup_next_rcu(&s->vmas, addr, &vma) :
		       vma_tree_lookup_rcu(&s->vmas, addr, &vma);
	if (!found)
		goto mmap_lock;
	if (!vma) {
		rcu_read_unlock();
		return PROCMAP_HOLE;
	}
	if (!vma_start_read(s, vma))
		goto mmap_lock;
	/* Changed since the lookup: no longer the VMA for @addr. */
	if (unlikely((!next && addr < READ_ONCE(vma->start)) || addr >= READ_ONCE(vma->end))) {
		vma_end_read(vma);
		goto mmap_lock;
	}
	if (unlikely(__atomic_load_n(&vma->detached, __ATOMIC_RELAXED))) {
		vma_end_read(vma);
		rcu_read_unlock();
		goto retry;
	}
	rcu_read_unlock();
	*vmap = vma;
	return PROCMAP_LOCKED;
mmap_lock:
	rcu_read_unlock();
	return PROCMAP_MMAP_LOCK;
}

/* From 6.18: each VMA under its own read lock; the mmap read lock when one cannot be had. */
static int procmap_query_vma_locked(struct mmp_space *s, struct mmp_procmap_query *q)
{
	bool next = q->query_flags & MMP_PROCMAP_COVERING_OR_NEXT_VMA;
	uint64_t addr = q->query_addr;
	struct mmp_vma *vma;

	for (;;) {
		switch (procmap_lock_vma_rcu(s, addr, next, &vma)) {
		case PROCMAP_HOLE:
			count_inc(s, MMP_C_PROCMAP_VMA_LOCK_SUCCESS);
			return -ENOENT;
		case PROCMAP_MMAP_LOCK:
			count_inc(s, MMP_C_PROCMAP_VMA_LOCK_FALLBACK);
			return procmap_query_mmap_locked(s, q, addr);
		case PROCMAP_LOCKED:
			break;
		}
		if (procmap_vma_matches(vma, q->query_flags)) {
			procmap_fill(q, vma);
			vma_end_read(vma);
			count_inc(s, MMP_C_PROCMAP_VMA_LOCK_SUCCESS);
			return 0;
		}
		addr = READ_ONCE(vma->end);
		vma_end_read(vma);
		if (!next) {
			count_inc(s, MMP_C_PROCMAP_VMA_LOCK_SUCCESS);
			return -ENOENT;
		}
	}
}

MMP_EXPORT int mmp_space_procmap_query(struct mmp_space *s, struct mmp_procmap_query *arg)
{
	struct mmp_procmap_query q;
	uint64_t usize;
	int err;

	if (!s)
		return -EINVAL;
	if (!arg)
		return -EFAULT;		/* the kernel's copy_from_user of the size */
	usize = arg->size;
	if (usize > PROCMAP_MAX_SIZE)
		return -E2BIG;
	err = copy_struct_from_caller(&q, sizeof(q), arg, usize, PROCMAP_MIN_SIZE);
	if (err)
		return err;
	if (q.query_flags & ~PROCMAP_VALID_FLAGS)
		return -EINVAL;
	if (!!q.vma_name_size != !!q.vma_name_addr || !!q.build_id_size != !!q.build_id_addr)
		return -EINVAL;
	if (release_follows(s, RULE_PROCMAP_QUERY_VMA_LOCK) && READ_ONCE(s->opts[MMP_OPT_PER_VMA_LOCK]))
		err = procmap_query_vma_locked(s, &q);
	else
		err = procmap_query_mmap_locked(s, &q, q.query_addr);
	if (err)
		return err;
	copy_struct_to_caller(arg, usize, &q, sizeof(q));
	return 0;
}
