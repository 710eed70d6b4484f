/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mmap lock and the per-VMA locks (include/linux/mmap_lock.h with
 * CONFIG_PER_VMA_LOCK). A fault looks its VMA up under RCU and read-locks
 * just that VMA; a writer, holding the mmap lock for writing, write-locks
 * each VMA it is about to change or remove (vma_start_write) by stamping it
 * with the space's mm_lock_seq. The stamp holds until mmap_write_unlock()
 * bumps mm_lock_seq, so a writer never unlocks VMAs one by one, and a reader
 * that finds the stamp current backs off to the mmap lock.
 */
#ifndef MMP_MMAP_LOCK_H
#define MMP_MMAP_LOCK_H

#include <sched.h>

#include "mm_types.h"
#include "vmstat.h"

/* vm_refcnt while a writer stamps the VMA: readers' trylock fails. */
#define VMA_LOCK_WRITER		(1u << 31)

/*
 * The mmap lock is an rwsem (rwsem.h): a writer that waits keeps new readers
 * out. Every acquisition counts (mmap_lock_read, mmap_lock_write), and one
 * that slept counts again (mmap_lock_*_wait: timing-dependent). A thread that
 * finds the lock taken reaches MMP_DEBUG_MMAP_LOCK_WAIT before it sleeps, and
 * a writer that has just got it reaches MMP_DEBUG_MMAP_WRITE_LOCKED, so a
 * test can hold a writer inside and see who waits for it.
 */
static inline void mmap_read_lock(struct mmp_space *s)
{
	count_inc(s, MMP_C_MMAP_LOCK_READ);
	if (likely(down_read_trylock(&s->mmap_lock)))
		return;
	debug_point(s, MMP_DEBUG_MMAP_LOCK_WAIT);
	if (rwsem_down_read_slowpath(&s->mmap_lock))
		count_inc(s, MMP_C_MMAP_LOCK_READ_WAIT);
}

static inline bool mmap_read_trylock(struct mmp_space *s)
{
	if (!down_read_trylock(&s->mmap_lock))
		return false;
	count_inc(s, MMP_C_MMAP_LOCK_READ);
	return true;
}

static inline void mmap_read_unlock(struct mmp_space *s)
{
	up_read(&s->mmap_lock);
}

static inline void mmap_write_lock(struct mmp_space *s)
{
	count_inc(s, MMP_C_MMAP_LOCK_WRITE);
	if (unlikely(!down_write_trylock(&s->mmap_lock))) {
		debug_point(s, MMP_DEBUG_MMAP_LOCK_WAIT);
		if (rwsem_down_write_slowpath(&s->mmap_lock))
			count_inc(s, MMP_C_MMAP_LOCK_WRITE_WAIT);
	}
	debug_point(s, MMP_DEBUG_MMAP_WRITE_LOCKED);
}

/* vma_end_write_all: every VMA this section stamped is unlocked at once. */
static inline void mmap_write_unlock(struct mmp_space *s)
{
	__atomic_store_n(&s->mm_lock_seq, s->mm_lock_seq + 1, __ATOMIC_RELEASE);
	up_write(&s->mmap_lock);
}

/*
 * Go on as a reader with no window for another writer (mmap_write_downgrade):
 * the VMAs this section stamped are unlocked as at a write unlock, and the
 * readers queued at the head come in.
 */
static inline void mmap_write_downgrade(struct mmp_space *s)
{
	__atomic_store_n(&s->mm_lock_seq, s->mm_lock_seq + 1, __ATOMIC_RELEASE);
	downgrade_write(&s->mmap_lock);
}

static inline void mmap_assert_locked(struct mmp_space *s)
{
	MMP_BUG_ON(!rwsem_is_locked(&s->mmap_lock));
}

static inline void mmap_assert_write_locked(struct mmp_space *s)
{
	MMP_BUG_ON(!rwsem_is_write_locked(&s->mmap_lock));
}

/* Set up and tear down a space's mmap lock (mm_init, mmdrop). */
static inline void mmap_init_lock(struct mmp_space *s)
{
	init_rwsem(&s->mmap_lock);
}

static inline void mmap_destroy_lock(struct mmp_space *s)
{
	rwsem_destroy(&s->mmap_lock);
}

static inline bool vma_write_locked(struct mmp_space *s, struct mmp_vma *vma)
{
	return __atomic_load_n(&vma->vm_lock_seq, __ATOMIC_RELAXED) ==
	       __atomic_load_n(&s->mm_lock_seq, __ATOMIC_ACQUIRE);
}

/*
 * A VMA born in this write section (vm_area_alloc + vma_start_write before
 * vma_link): no reader may use it before the section ends.
 */
static inline void vma_lock_init(struct mmp_space *s, struct mmp_vma *vma)
{
	vma->vm_refcnt = 0;
	vma->detached = false;
	vma->vm_lock_seq = s->mm_lock_seq;
}

/*
 * Write-lock @vma for the rest of this mmap write section: wait for the
 * readers inside it to leave (faults are short), then stamp it.
 */
static inline void vma_start_write(struct mmp_space *s, struct mmp_vma *vma)
{
	unsigned int zero = 0;

	if (vma->vm_lock_seq == s->mm_lock_seq)
		return;
	if (!__atomic_compare_exchange_n(&vma->vm_refcnt, &zero, VMA_LOCK_WRITER, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		debug_point(s, MMP_DEBUG_VMA_WRITE_WAIT);
		do {
			zero = 0;
			sched_yield();
		} while (!__atomic_compare_exchange_n(&vma->vm_refcnt, &zero, VMA_LOCK_WRITER,
						      false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
	}
	__atomic_store_n(&vma->vm_lock_seq, s->mm_lock_seq, __ATOMIC_RELAXED);
	__atomic_store_n(&vma->vm_refcnt, 0, __ATOMIC_RELEASE);
}

/* Out of the tree (vma_mark_detached): a reader that still locks it must look again. */
static inline void vma_mark_detached(struct mmp_space *s, struct mmp_vma *vma)
{
	MMP_BUG_ON(vma->vm_lock_seq != s->mm_lock_seq);
	__atomic_store_n(&vma->detached, true, __ATOMIC_RELAXED);
}

/* Read-lock @vma unless a writer has it (vma_start_read); false: use the mmap lock. */
static __always_inline bool vma_start_read(struct mmp_space *s, struct mmp_vma *vma)
{
	unsigned int c;

	if (vma_write_locked(s, vma))
		return false;
	c = __atomic_load_n(&vma->vm_refcnt, __ATOMIC_RELAXED);
	do {
		if (c & VMA_LOCK_WRITER)
			return false;
	} while (!__atomic_compare_exchange_n(&vma->vm_refcnt, &c, c + 1, true, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	/* A writer may have stamped it between the check and the count. */
	if (unlikely(vma_write_locked(s, vma))) {
		__atomic_fetch_sub(&vma->vm_refcnt, 1, __ATOMIC_RELEASE);
		return false;
	}
	return true;
}

static __always_inline void vma_end_read(struct mmp_vma *vma)
{
	__atomic_fetch_sub(&vma->vm_refcnt, 1, __ATOMIC_RELEASE);
}

#endif /* MMP_MMAP_LOCK_H */
