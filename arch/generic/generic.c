/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reference back end. Its format is the neutral one (each MMP_E_* flag is
 * one bit, the pfn sits at bit 12), and every entry operation works one entry
 * at a time (arch/generic/entry_ops.h, which other folders get for what they
 * leave out). Its settings fill what a back end leaves unset: a cost table,
 * the flush ceiling.
 */
#include "arch_api.h"

/*
 * A plain machine with no hardware of its own to measure: the figures of a
 * 4-level x86-64 walk, IPI shootdowns and one flush per range, so that its
 * modeled times compare with the x86_64 back end's.
 */
static const struct mmp_cost_model generic_cost = {
	.ghz = 3.0,
	.entry_read = 4,
	.entry_write = 8,
	.tlbi_page = 150,
	.flush_op = 100,
	.flush_all = 500,
	.ipi = 6000,
	.page_walk = 10 * 4,
	.rcu_sync = 6000,
	.rcu_call = 200,
	.source = "reference machine: the x86-64 figures (invlpg ~150 cycles, IPI ~2 us)",
};

const struct mmp_arch mmp_arch_generic = {
	.name = "generic",
	.description = "reference back end: neutral format, one entry at a time",
	.format = MMP_FORMAT_generic,
	.levels = 4,
	.task_size = 1ULL << 47,
	.leaf_levels = 1u << MMP_PTE | 1u << MMP_PMD,
	.tlbi_broadcast = false,
	.ad_model = MMP_AD_HARDWARE,
	.tlb_flush_ceiling = 33,
	.cost = &generic_cost,
};

/* Settings @arch leaves unset take the reference's, once, before its first space. */
void mmp_arch_fill_generic(struct mmp_arch *arch)
{
	if (!arch->cost)
		arch->cost = mmp_arch_generic.cost;
	if (!arch->tlb_flush_ceiling)
		arch->tlb_flush_ceiling = mmp_arch_generic.tlb_flush_ceiling;
}
