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
