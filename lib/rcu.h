/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel RCU names over liburcu (lib/rcu.c). */
#ifndef MMP_RCU_H
#define MMP_RCU_H

#include <stdint.h>

#include <urcu/urcu-memb.h>

/* Explicit reader registration, nested: CPU attach and detach. */
void mmp_rcu_register(void);
void mmp_rcu_unregister(void);

/* Registers a thread without a CPU on its first read-side section (lib/rcu.c). */
void mmp_rcu_register_lazy(void);
/* This thread's registrations: 0 until it attaches a CPU or first reads. */
extern __thread int mmp_rcu_nesting __attribute__((tls_model("initial-exec")));

/*
 * Read-side sections cost a few instructions, as the kernel's do: liburcu's
 * fast path is inlined where lib/ is built with _LGPL_SOURCE (lib/meson.build)
 * and is a call into liburcu elsewhere.
 */
static __always_inline void rcu_read_lock(void)
{
	if (__builtin_expect(!mmp_rcu_nesting, 0))
		mmp_rcu_register_lazy();
	urcu_memb_read_lock();
}

static __always_inline void rcu_read_unlock(void)
{
	urcu_memb_read_unlock();
}

void synchronize_rcu(void);
void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));
void rcu_barrier(void);
/* rcu_barrier() calls so far, process wide: tests check who waits (atomic). */
extern uint64_t rcu_barrier_calls;

#endif /* MMP_RCU_H */
