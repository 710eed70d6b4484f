/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel RCU names over liburcu (lib/rcu.c). */
#ifndef MMP_RCU_H
#define MMP_RCU_H

#include <stdint.h>

#include <urcu/urcu-memb.h>

/* Explicit reader registration, nested: CPU attach and detach. */
void mmp_rcu_register(void);
void mmp_rcu_unregister(void);

void rcu_read_lock(void);
void rcu_read_unlock(void);
void synchronize_rcu(void);
void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));
void rcu_barrier(void);
/* rcu_barrier() calls so far, process wide: tests check who waits (atomic). */
extern uint64_t rcu_barrier_calls;

#endif /* MMP_RCU_H */
