/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Compiler and language helpers, and BUG: the kernel's compiler.h and bug.h. */
#ifndef MMP_COMPILER_H
#define MMP_COMPILER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Inline whatever the size: the kernel's __always_inline. */
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define MMP_EXPORT __attribute__((visibility("default")))

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

#define READ_ONCE(x)	 __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* An internal contradiction: stop, naming the invariant. */
#define MMP_BUG_ON(cond)							\
	do {									\
		if (unlikely(cond))						\
			mmp_bug(__FILE__, __LINE__, #cond);			\
	} while (0)
_Noreturn void mmp_bug(const char *file, int line, const char *what);

/* Full barrier: a store before it is visible before any load after it. */
#define smp_mb()	__atomic_thread_fence(__ATOMIC_SEQ_CST)

#endif /* MMP_COMPILER_H */
