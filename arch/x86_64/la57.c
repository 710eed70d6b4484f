/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64 with LA57 (5-level paging, 57-bit VA; current Xeon and EPYC): a PGD
 * above the P4D, 64 PiB of user space. As the kernel does (arch_get_mmap_end,
 * DEFAULT_MAP_WINDOW), the stack and mmap stay below 47 bits unless a hint
 * lies above that window: old programs that keep tags in the high pointer
 * bits keep working. MAP_FIXED may use the whole space. Format and MMU are
 * x86-64's (pgtable.h).
 */
#include "pgtable.h"

/*
 * x86-64's figures (x86_64.c) but for the walk: a TLB miss that misses the
 * paging-structure caches loads one entry per level, so five levels cost
 * 5/4 of the 4-level 40 cycles. Scaled, not measured.
 */
static const struct mmp_cost_model x86_64_la57_cost = {
	.ghz = 3.0,
	.entry_read = 4,
	.entry_write = 8,
	.tlbi_page = 150,
	.flush_op = 100,
	.flush_all = 500,
	.ipi = 6000,
	.page_walk = 50,
	.rcu_sync = 6000,
	.rcu_call = 200,
	.source = "x86-64 figures; walk scaled to 5 levels (5/4 of 40 cycles), not measured",
};

const struct mmp_arch mmp_arch_x86_64_la57 = {
	.name = "x86_64-la57",
	.description = "x86-64 5-level paging (LA57), mmap below 47 bits unless hinted above",
	X86_64_FAMILY,
	.levels = 5,
	.task_size = (1ULL << 56) - PAGE_SIZE,		/* TASK_SIZE_MAX with LA57 */
	.map_window = (1ULL << 47) - PAGE_SIZE,	/* DEFAULT_MAP_WINDOW */
	.leaf_levels = 1u << MMP_PTE | 1u << MMP_PMD | 1u << MMP_PUD,	/* 4K, 2M, 1G */
	.cost = &x86_64_la57_cost,
};
