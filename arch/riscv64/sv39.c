/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RISC-V Sv39: three levels, the PUD folded into the PGD, 256 GiB of user
 * space (half the 39-bit space, TASK_SIZE_64). Format, Svnapot and the
 * walker are riscv64's (pgtable.h).
 */
#include "pgtable.h"

/*
 * riscv64's figures (riscv64.c) but for the walk: one entry load per level
 * on a miss of the walk caches, so 3/4 of the Sv48 50 cycles. Scaled, not
 * measured.
 */
static const struct mmp_cost_model riscv64_sv39_cost = {
	.ghz = 2.0,
	.entry_read = 4,
	.entry_write = 8,
	.tlbi_page = 80,
	.flush_op = 200,
	.flush_all = 600,
	.ipi = 10000,
	.page_walk = 37.5,
	.rcu_sync = 10000,
	.rcu_call = 200,
	.source = "riscv64 figures; walk scaled to 3 levels (3/4 of 50 cycles), not measured",
};

const struct mmp_arch mmp_arch_riscv64_sv39 = {
	.name = "riscv64-sv39",
	.description = "RISC-V Sv39 (3 levels, 256 GiB), Svnapot, Svadu or Svade",
	RISCV64_FAMILY,
	.levels = 3,
	.task_size = 1ULL << 38,
	.leaf_levels = 0x7,	/* any level: page, mega-, gigapage */
	.cost = &riscv64_sv39_cost,
};
