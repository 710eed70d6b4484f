/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A test-and-test-and-set spinlock, for the short sections the kernel takes spinlocks for. */
#ifndef MMP_SPINLOCK_H
#define MMP_SPINLOCK_H

#include "compiler.h"

typedef struct {
	int v;
} mmp_spinlock_t;

static __always_inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

static __always_inline void spin_lock(mmp_spinlock_t *l)
{
	while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED))
			cpu_relax();
}

static __always_inline bool spin_trylock(mmp_spinlock_t *l)
{
	return !__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE);
}

static __always_inline void spin_unlock(mmp_spinlock_t *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

static __always_inline bool spin_is_locked(mmp_spinlock_t *l)
{
	return __atomic_load_n(&l->v, __ATOMIC_RELAXED);
}

#endif /* MMP_SPINLOCK_H */
