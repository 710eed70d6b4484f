/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RISC-V Sv57: five levels, 64 PiB of user space (half the 57-bit space).
 * Like the kernel (DEFAULT_MAP_WINDOW is the Sv48 size), the stack and mmap
 * stay below 47 bits unless a hint lies above; MAP_FIXED may use it all.
 * Format, Svnapot and the walker are riscv64's (family.h).
 */
#include "family.h"

static const struct mmp_cost_model riscv64_sv57_cost = {
	RISCV64_COSTS(5),
	.source = "riscv64 figures; the walk for 5 levels (12.5 cycles a level), scaled, not measured",
};

const struct mmp_arch mmp_arch_riscv64_sv57 = {
	.name = "riscv64-sv57",
	.description = "RISC-V Sv57 (5 levels), mmap below 47 bits unless hinted above, Svnapot",
	RISCV64_FAMILY,
	.levels = 5,
	.task_size = 1ULL << 56,
	.map_window = 1ULL << 47,	/* DEFAULT_MAP_WINDOW: the Sv48 size */
	.leaf_levels = 0x1f,	/* any level: page up to petapage */
	.hugetlb_pud = true,	/* 1 GiB hugetlb pages */
	.cost = &riscv64_sv57_cost,
};
