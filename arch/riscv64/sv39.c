/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RISC-V Sv39: three levels, the PUD folded into the PGD, 256 GiB of user
 * space (half the 39-bit space, TASK_SIZE_64). Format, Svnapot and the
 * walker are riscv64's (family.h).
 */
#include "family.h"

static const struct mmp_cost_model riscv64_sv39_cost = {
	RISCV64_COSTS(3),
	.source = "riscv64 figures; the walk for 3 levels (12.5 cycles a level), scaled, not measured",
};

const struct mmp_arch mmp_arch_riscv64_sv39 = {
	.name = "riscv64-sv39",
	.description = "RISC-V Sv39 (3 levels, 256 GiB), Svnapot, Svadu or Svade",
	RISCV64_FAMILY,
	.levels = 3,
	.task_size = 1ULL << 38,
	.leaf_levels = 0x7,	/* any level: page, mega-, gigapage */
	.hugetlb_pud = true,	/* 1 GiB hugetlb pages */
	.cost = &riscv64_sv39_cost,
};
