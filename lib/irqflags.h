/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * IRQs off on a simulated CPU, and the IPIs that wait for them (linux/irqflags.h).
 * GUP-fast walks the tables with IRQs off: an IPI sent meanwhile (a TLB
 * shootdown, tlb_remove_table_sync_one) is only taken when the walk is done,
 * and its sender waits for that. Here a walk says so in a word its IPIs read:
 * its CPU's, or, for a thread with no CPU of the space, one the space keeps for
 * all such threads. The low 32 bits count the walks in flight, the high ones
 * are a generation that moves each time the count drops to 0: a sender that
 * saw walks in flight waits for the next generation.
 */
#ifndef MMP_IRQFLAGS_H
#define MMP_IRQFLAGS_H

#include "mm_types.h"
#include "spinlock.h"

#define IRQS_OFF_COUNT		0xffffffffULL
#define IRQS_OFF_GEN		(1ULL << 32)

/* The space and word of the calling thread's CPU (mmp_cpu_attach); NULL without one. */
extern __thread struct mmp_space *mmp_irq_space __attribute__((tls_model("initial-exec")));
extern __thread uint64_t *mmp_irq_word __attribute__((tls_model("initial-exec")));

/* IRQs off for a lockless walk of @s; hand the result to local_irq_restore(). */
static __always_inline uint64_t *local_irq_save(struct mmp_space *s)
{
	uint64_t *w = mmp_irq_space == s ? mmp_irq_word : &s->irqs_off_nocpu;

	__atomic_fetch_add(w, 1, __ATOMIC_SEQ_CST);
	/* Before any table is read: pairs with the sender's unlink, fence, read of @w. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return w;
}

static __always_inline void local_irq_restore(uint64_t *w)
{
	uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), new;

	do {
		new = old - 1;
		if (!(new & IRQS_OFF_COUNT))
			new += IRQS_OFF_GEN;
	} while (!__atomic_compare_exchange_n(w, &old, new, false, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

#endif /* MMP_IRQFLAGS_H */
