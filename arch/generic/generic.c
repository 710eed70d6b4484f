/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reference back end. Its format is the neutral one (each MMP_E_* flag is
 * one bit, the pfn sits at bit 12), and every hook works one entry at a time.
 * Other back ends get these hooks for whatever they leave out, so each one is
 * written only in terms of the owning back end's format hooks.
 */
#include "arch_api.h"

extern const struct mmp_cost_model mmp_cost_x86_64;

const struct mmp_arch mmp_arch_generic = {
	.name = "generic",
	.description = "reference back end: neutral format, one entry at a time",
	.format = MMP_FORMAT_generic,
	.levels = 4,
	.task_size = 1ULL << 47,
	.leaf_levels = 1u << MMP_PTE | 1u << MMP_PMD,
	.tlbi_broadcast = false,
	.tlb_flush_ceiling = 33,
	.cost = &mmp_cost_x86_64,
};

#define FILL(hook)					\
	do {						\
		if (!arch->hook)			\
			arch->hook = mmp_arch_generic.hook; \
	} while (0)

void mmp_arch_fill_generic(struct mmp_arch *arch)
{
	FILL(cost);
	if (!arch->tlb_flush_ceiling)
		arch->tlb_flush_ceiling = mmp_arch_generic.tlb_flush_ceiling;
}
