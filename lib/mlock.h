/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mlock (lib/mlock.c): what the rest of mm asks of it. */
#ifndef MMP_MLOCK_H
#define MMP_MLOCK_H

#include "mm_types.h"

/* __mm_populate VMA by VMA, for mlock, MAP_LOCKED and mlockall. */
int mm_populate(struct mmp_space *s, uint64_t start, uint64_t end, bool ignore_errors);

#endif /* MMP_MLOCK_H */
