/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mlock (lib/mlock.c): what the rest of mm asks of it. */
#ifndef MMP_MLOCK_H
#define MMP_MLOCK_H

#include "mm_types.h"

/* __mm_populate VMA by VMA, for mlock, MAP_LOCKED and mlockall. */
int mm_populate(struct mmp_space *s, uint64_t start, uint64_t end, bool ignore_errors);

/* can_do_mlock: RLIMIT_MEMLOCK of 0 forbids locking (no CAP_IPC_LOCK here). */
bool can_do_mlock(struct mmp_space *s);

bool __mlock_future_ok(struct mmp_space *s, uint64_t bytes);

/*
 * mlock_future_ok: may @bytes more be mapped with @vm_flags under
 * RLIMIT_MEMLOCK? Only a locked mapping asks the limit: every mmap calls this.
 */
static inline bool mlock_future_ok(struct mmp_space *s, unsigned long vm_flags, uint64_t bytes)
{
	return !(vm_flags & VM_LOCKED) || __mlock_future_ok(s, bytes);
}

#endif /* MMP_MLOCK_H */
