/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fault injection for tests: not part of the public API. The tests link the
 * library's objects and reach these directly; mmprim.h does not declare them.
 */
#ifndef MMP_DEBUG_H
#define MMP_DEBUG_H

#include <stdint.h>

struct mmp_space;

enum mmp_debug_opt {
	/* Skip the TLB flush of the next N zaps (the TLB sanitizer must see it). */
	MMP_DEBUG_SKIP_FLUSH,
	/* Free page tables with no grace period (the RCU stress test must see it). 0 or 1. */
	MMP_DEBUG_BROKEN_TABLE_FREE,
	/* A fault uses the VMA found under RCU without locking it (test_vma_lock must see it). 0 or 1. */
	MMP_DEBUG_SKIP_VMA_LOCK,
	/*
	 * A file fault maps the folio it looked up without checking, once it
	 * holds the folio lock, that truncation has not taken it out of the
	 * page cache meanwhile (test_file_stress must see it). 0 or 1.
	 */
	MMP_DEBUG_SKIP_TRUNCATE_RECHECK,
	/*
	 * MADV_COLLAPSE skips tlb_remove_table_sync_one(): a GUP-fast walker may
	 * still read the old PTE table once it is a deposit, and freed
	 * (test_collapse_stress must see it). 0 or 1.
	 */
	MMP_DEBUG_SKIP_COLLAPSE_SYNC,
	/*
	 * MADV_COLLAPSE skips the reference recheck of the isolated pages: a
	 * page GUP-fast pinned is copied and dropped, the pin left on a page no
	 * longer mapped (test_collapse_stress must see it). 0 or 1.
	 */
	MMP_DEBUG_SKIP_COLLAPSE_REFCHECK,
	/*
	 * IPIs do not wait for a CPU with IRQs off: neither a TLB shootdown's
	 * nor tlb_remove_table_sync_one's, so semi RCU's single table and the
	 * native free are freed under a GUP-fast walk (test_rcu must see it).
	 * 0 or 1.
	 */
	MMP_DEBUG_SKIP_IPI_WAIT,
	/*
	 * 1: the next GUP-fast walk of the space parks inside its IRQs-off
	 * section, holding the PTE table it reached, and sets this to 2; it
	 * walks on once the test sets 0. Lets a test free a table under a
	 * walker, or show that it cannot, with no timing involved.
	 */
	MMP_DEBUG_PARK_GUP_FAST,
	MMP_NR_DEBUG_OPTS
};

/*
 * Debug points: places where a test may hold the thread that reaches them, so
 * that a negative control meets its window every time instead of when a race
 * happens to be won. Each names the protection whose window it opens, and the
 * points where the other side would wait for the held thread (a protection at
 * work), so that the test can let it go there instead of deadlocking.
 */
enum mmp_debug_point {
	/*
	 * filemap_fault() holds a reference on the folio it looked up (or just
	 * read in) and has not locked it yet: a truncation now takes it out of
	 * the page cache, which only the recheck under the folio lock sees
	 * (MMP_DEBUG_SKIP_TRUNCATE_RECHECK). No lock held; not inside RCU.
	 */
	MMP_DEBUG_FILE_FAULT_LOOKUP,
	/*
	 * A fault has its VMA and has not handled it yet: read-locked under
	 * the per-VMA lock, so that a writer must wait for it
	 * (MMP_DEBUG_VMA_WRITE_WAIT), or with MMP_DEBUG_SKIP_VMA_LOCK not
	 * locked at all, only kept allocated by rcu_read_lock. Not reached on
	 * the mmap-lock fallback.
	 */
	MMP_DEBUG_FAULT_VMA,
	/*
	 * vma_start_write() found readers on the VMA and is about to wait for
	 * them to leave. The mmap lock is held for writing.
	 */
	MMP_DEBUG_VMA_WRITE_WAIT,
	/*
	 * A grace period is about to be waited for so that lockless walkers
	 * let go of a table: tlb_remove_table_sync_one() of MADV_COLLAPSE, and
	 * each table freed by the synchronous base line. Not reached with the
	 * wait removed (MMP_DEBUG_SKIP_COLLAPSE_SYNC, MMP_DEBUG_BROKEN_TABLE_FREE).
	 */
	MMP_DEBUG_GRACE_PERIOD,
	/*
	 * GUP-fast has read a PMD that points to a PTE table and has not read
	 * the table yet, inside its read-side section: a table freed now with
	 * no grace period is read after its free (MMP_DEBUG_BROKEN_TABLE_FREE).
	 */
	MMP_DEBUG_GUP_FAST_PMD,
	/*
	 * MADV_COLLAPSE has scanned a PMD range and holds no lock before it
	 * allocates and locks for the collapse: a GUP-fast pin taken now is
	 * caught only by the reference recheck of the isolated pages
	 * (MMP_DEBUG_SKIP_COLLAPSE_REFCHECK).
	 */
	MMP_DEBUG_COLLAPSE_SCANNED,
	/*
	 * A shootdown's IPI, or tlb_remove_table_sync_one()'s, is about to wait
	 * for a CPU (or a walker with no CPU) whose IRQs are off: a GUP-fast walk
	 * that may still read what was unlinked. Not reached with the wait
	 * removed (MMP_DEBUG_SKIP_IPI_WAIT).
	 */
	MMP_DEBUG_IPI_WAIT,
	/*
	 * mmap_write_lock() has just taken the mmap lock: the thread holds it
	 * for writing, and no VMA is write-locked yet. Held here, it keeps
	 * out every mmap-lock reader (a fault's fallback, madvise before 6.17)
	 * while VMA-lock readers go on.
	 */
	MMP_DEBUG_MMAP_WRITE_LOCKED,
	/*
	 * A thread wants the mmap lock, for reading or writing, and found it
	 * taken (or a writer queued): it is about to queue and sleep. Nothing
	 * held. The point where a held writer's protection is seen at work.
	 */
	MMP_DEBUG_MMAP_LOCK_WAIT,
	MMP_NR_DEBUG_POINTS
};

/* Called on the thread that reaches @point of @space; it may block there. */
typedef void (*mmp_debug_hook_fn)(struct mmp_space *space, enum mmp_debug_point point, void *arg);

/*
 * Call @fn(@space, point, @arg) at every debug point @space reaches, or at
 * none with @fn NULL; 0, or -EINVAL for a NULL @space. Set it while no other
 * thread uses @space. @fn runs with what the point holds (see each point) and
 * must not call into @space on that thread; other threads may, which is how a
 * test makes its interleaving.
 */
int mmp_debug_set_hook(struct mmp_space *space, mmp_debug_hook_fn fn, void *arg);

/* Set fault injection @opt of @space; 0 or -EINVAL for a bad value. */
int mmp_debug_set(struct mmp_space *space, enum mmp_debug_opt opt, long value);
/* Read it back; -EINVAL for an unknown @opt. */
int mmp_debug_get(struct mmp_space *space, enum mmp_debug_opt opt, long *value);

/*
 * The PTE that maps @addr in @space, raw, in the back end's own format: 0, or
 * -EINVAL for a bad argument, -ENOENT when no PTE table covers @addr (a huge
 * PMD maps it, or nothing does).
 */
int mmp_debug_get_pte(struct mmp_space *space, uint64_t addr, uint64_t *raw);
/*
 * Overwrite that PTE with @raw, as a bug would: no fold or unfold of a
 * contiguous block, no TLB flush, no counter, no folio accounting. For tests
 * that corrupt a table on purpose and put it back. Same errors as above.
 */
int mmp_debug_set_pte(struct mmp_space *space, uint64_t addr, uint64_t raw);

/*
 * The sub-page order of the huge clears and copies @space makes from now on
 * (folio_zero_user, copy_user_large_folio): each sub-page index in the order
 * processed, appended at @t->order[@t->n++] while @t->n < @t->cap. NULL stops
 * it. 0, or -EINVAL for a NULL @space.
 */
struct mmp_huge_trace {
	unsigned int *order;
	unsigned int cap, n;
};
int mmp_debug_trace_huge(struct mmp_space *space, struct mmp_huge_trace *t);

#endif /* MMP_DEBUG_H */
