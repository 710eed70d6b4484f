/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64 with LA57 (5-level paging, 57-bit VA; current Xeon and EPYC): a PGD
 * above the P4D, 64 PiB of user space. As the kernel does (arch_get_mmap_end,
 * DEFAULT_MAP_WINDOW), the stack and mmap stay below 47 bits unless a hint
 * lies above that window: old programs that keep tags in the high pointer
 * bits keep working. MAP_FIXED may use the whole space. Format and MMU are
 * x86-64's (family.h).
 */
#include "family.h"

static const struct mmp_cost_model x86_64_la57_cost = {
	X86_64_COSTS(5),
	.source = "x86-64 figures; the walk for 5 levels (10 cycles a level), scaled, not measured",
};

const struct mmp_arch mmp_arch_x86_64_la57 = {
	.name = "x86_64-la57",
	.description = "x86-64 5-level paging (LA57), mmap below 47 bits unless hinted above",
	X86_64_FAMILY,
	.levels = 5,
	.task_size = (1ULL << 56) - PAGE_SIZE,		/* TASK_SIZE_MAX with LA57 */
	.map_window = (1ULL << 47) - PAGE_SIZE,	/* DEFAULT_MAP_WINDOW */
	.leaf_levels = 1u << MMP_PTE | 1u << MMP_PMD | 1u << MMP_PUD,	/* 4K, 2M, 1G */
	.hugetlb_pud = true,	/* 1 GiB pages: declared whatever the host CPU has (PDPE1GB) */
	.cost = &x86_64_la57_cost,
};
