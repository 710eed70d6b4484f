/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64, 4 KiB granule, 39-bit VA (CONFIG_ARM64_VA_BITS_39, common on Android
 * and embedded kernels): three levels, the PUD folded into the PGD, whose
 * 1 GiB entries may be level 1 blocks. 512 GiB of user space. Format, contpte
 * and the MMU are arm64's (family.h).
 */
#include "family.h"

static const struct mmp_cost_model arm64_va39_cost = {
	ARM64_COSTS(3),
	.source = "arm64 figures; the walk for 3 levels (10 cycles a level), scaled, not measured",
};

const struct mmp_arch mmp_arch_arm64_va39 = {
	.name = "arm64-va39",
	.description = "arm64 4K granule, 39-bit VA (3 levels), FEAT_HAFDBS, contpte",
	ARM64_FAMILY,
	.levels = 3,
	.task_size = 1ULL << 39,	/* VA_BITS 39 */
	.leaf_levels = 1u << MMP_PTE | 1u << MMP_PMD | 1u << MMP_PUD,	/* page, level 2 and 1 blocks */
	.hugetlb_pud = true,	/* 1 GiB hugetlb pages */
	.cost = &arm64_va39_cost,
};
