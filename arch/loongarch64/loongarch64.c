/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LoongArch64 with 4 KiB pages: four levels (PGD, PUD, PMD, PTE), 48-bit user
 * space, 2 MiB huge pages in the PMD. Accessed and dirty are set by the fault
 * handler, not the MMU (format.h): the generic walker follows the family's
 * MMP_AD_SOFTWARE declaration, so no entry operation of its own is needed.
 */
#include "family.h"

static const struct mmp_cost_model loongarch64_cost = {
	LOONGARCH64_COSTS(4),
	.source = "estimates for a 2.5 GHz LA464-class core: INVTLB ~40 cycles, new ASID ~400, "
		  "IPI ~2 us, software refill ~15 cycles a level",
};

const struct mmp_arch mmp_arch_loongarch64 = {
	.name = "loongarch64",
	.description = "LoongArch64 4-level paging, 4 KiB pages, software A/D, IPI shootdowns",
	LOONGARCH64_FAMILY,
	.levels = 4,
	.task_size = 1ULL << 48,
	.leaf_levels = 1u << MMP_PTE | 1u << MMP_PMD,
	.cost = &loongarch64_cost,
};
