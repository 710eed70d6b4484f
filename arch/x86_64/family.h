/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64 page-table entries: the real bit layout, the same at every level and
 * with 4 or 5 levels. Shared by every x86-64 back end (x86_64.c, la57.c).
 */
#ifndef MMP_X86_64_FAMILY_H
#define MMP_X86_64_FAMILY_H

#include "arch_api.h"
#include "format.h"



/*
 * The cycle costs every x86_64 back end shares (x86_64.c says where they
 * come from). A TLB miss that misses the walk caches loads one entry per
 * level, so the walk costs 10 cycles a level: deeper tables, dearer walks.
 */
#define X86_64_COSTS(nr_levels)	\
	.ghz = 3.0,							\
	.entry_read = 4,						\
	.entry_write = 8,						\
	.tlbi_page = 150,						\
	.flush_op = 100,						\
	.flush_all = 500,						\
	.ipi = 6000,							\
	.page_walk = 10 * (nr_levels),					\
	.rcu_sync = 6000,						\
	.rcu_call = 200

/* Everything an x86-64 back end shares; it adds name, geometry and cost table. */
#define X86_64_FAMILY					\
	.format = MMP_FORMAT_x86_64,			\
	.tlbi_broadcast = false,			\
	.tlb_merge_vmas = true,				\
	.ad_model = MMP_AD_HARDWARE,			\
	.tlb_flush_ceiling = 33

#endif /* MMP_X86_64_FAMILY_H */
