/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RCU through liburcu's memb flavor, standing in for kernel RCU. A thread is
 * registered as a reader when it attaches a CPU, or lazily on its first
 * read-side section, and unregistered when its last CPU detaches or when it
 * exits. fork() is made safe for call_rcu with pthread_atfork handlers; a
 * child must not inherit a thread that was inside a read-side section.
 */
#include <urcu/urcu-memb.h>

#include "compiler.h"
#include "rcu.h"

__thread int mmp_rcu_nesting __attribute__((tls_model("initial-exec")));
static pthread_key_t rcu_exit_key;
static pthread_once_t rcu_once = PTHREAD_ONCE_INIT;

static void rcu_thread_exit(void *arg)
{
	if (mmp_rcu_nesting) {
		urcu_memb_unregister_thread();
		mmp_rcu_nesting = 0;
	}
}

static void rcu_setup(void)
{
	MMP_BUG_ON(pthread_key_create(&rcu_exit_key, rcu_thread_exit));
	/* call_rcu's worker threads and the grace-period machinery survive fork() this way. */
	pthread_atfork(urcu_memb_call_rcu_before_fork, urcu_memb_call_rcu_after_fork_parent,
		       urcu_memb_call_rcu_after_fork_child);
}

void mmp_rcu_register(void)
{
	pthread_once(&rcu_once, rcu_setup);
	if (mmp_rcu_nesting++ == 0) {
		urcu_memb_register_thread();
		pthread_setspecific(rcu_exit_key, (void *)1);
	}
}

void mmp_rcu_unregister(void)
{
	MMP_BUG_ON(mmp_rcu_nesting <= 0);
	if (--mmp_rcu_nesting == 0) {
		urcu_memb_unregister_thread();
		pthread_setspecific(rcu_exit_key, NULL);
	}
}

/* A thread without a CPU (populate from mmap, say) reads: register it for good. */
void mmp_rcu_register_lazy(void)
{
	mmp_rcu_register();
	mmp_rcu_nesting++;	/* never dropped: the thread-exit hook unregisters */
}

void synchronize_rcu(void)
{
	MMP_BUG_ON(mmp_rcu_nesting && urcu_memb_read_ongoing());
	urcu_memb_synchronize_rcu();
}

void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	pthread_once(&rcu_once, rcu_setup);
	urcu_memb_call_rcu(head, func);
}

uint64_t rcu_barrier_calls;

/* Wait for every callback queued so far; never from inside a read-side section. */
void rcu_barrier(void)
{
	MMP_BUG_ON(mmp_rcu_nesting && urcu_memb_read_ongoing());
	__atomic_fetch_add(&rcu_barrier_calls, 1, __ATOMIC_RELAXED);
	urcu_memb_barrier();
}
