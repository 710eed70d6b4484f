/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RISC-V Sv57: five levels, 64 PiB of user space (half the 57-bit space).
 * Like the kernel (DEFAULT_MAP_WINDOW is the Sv48 size), the stack and mmap
 * stay below 47 bits unless a hint lies above; MAP_FIXED may use it all.
 * Format, Svnapot and the walker are riscv64's (pgtable.h).
 */
#include "pgtable.h"

/*
 * riscv64's figures (riscv64.c) but for the walk: one entry load per level
 * on a miss of the walk caches, so 5/4 of the Sv48 50 cycles. Scaled, not
 * measured.
 */
static const struct mmp_cost_model riscv64_sv57_cost = {
	.ghz = 2.0,
	.entry_read = 4,
	.entry_write = 8,
	.tlbi_page = 80,
	.flush_op = 200,
	.flush_all = 600,
	.ipi = 10000,
	.page_walk = 62.5,
	.rcu_sync = 10000,
	.rcu_call = 200,
	.source = "riscv64 figures; walk scaled to 5 levels (5/4 of 50 cycles), not measured",
};

const struct mmp_arch mmp_arch_riscv64_sv57 = {
	.name = "riscv64-sv57",
	.description = "RISC-V Sv57 (5 levels), mmap below 47 bits unless hinted above, Svnapot",
	RISCV64_FAMILY,
	.levels = 5,
	.task_size = 1ULL << 56,
	.map_window = 1ULL << 47,	/* DEFAULT_MAP_WINDOW: the Sv48 size */
	.leaf_levels = 0x1f,	/* any level: page up to petapage */
	.cost = &riscv64_sv57_cost,
};
