/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-order mTHP statistics (the kernel's count_mthp_stat, mm/huge_memory.c's mthp_stats). */
#ifndef MMP_MTHP_STAT_H
#define MMP_MTHP_STAT_H

#include "mm_types.h"

/*
 * Rare events (a large folio allocated, refused or split), so one atomic add
 * on the space beats a per-thread shard: no counter-sized cost on hot paths.
 */
static inline void count_mthp_stat(struct mmp_space *s, unsigned int order,
				   enum mthp_stat_item item)
{
	if (order > 1 && order <= HPAGE_PMD_ORDER)
		__atomic_fetch_add(&s->mthp_stat[item][order], 1, __ATOMIC_RELAXED);
}

#endif /* MMP_MTHP_STAT_H */
