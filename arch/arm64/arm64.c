/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64, 4 KiB granule, 4 levels, 48-bit VA. arm64-va39 (va39.c) is the same
 * family with three levels: the format, contpte and the MMU model described
 * here are both's (family.h). The format is the architecture's: VALID, AP[1]
 * (user), AP[2] (read-only), AF, DBM as the kernel's PTE_WRITE, CONT, PXN/UXN,
 * and the kernel's software bits (dirty 55, special 56; PROT_NONE is nG
 * without VALID, ARM64_PTE_PRESENT_INVALID).
 * Dirty is either software dirty or "hardware dirty": DBM set with AP[2]
 * clear. There is no soft-dirty bit (arm64 does not select HAVE_ARCH_SOFT_DIRTY).
 *
 * The MMU model is FEAT_HAFDBS: the walker sets AF and clears AP[2] of a DBM
 * entry on a write, per entry, so inside a contpte block A/D may sit on any of
 * its 16 entries. TLB invalidation is broadcast (TLBI ... IS), never an IPI.
 */
#include "family.h"

/*
 * Cycle costs for an Apple M-class or Neoverse core at 3 GHz. A broadcast
 * TLBI VALE1IS issues in tens of cycles but must complete on every core; the
 * DSB ISH that waits for it costs hundreds of cycles (the mremap batching
 * series attributes most of its gain to avoided TLBI+DSB pairs). A whole-ASID
 * TLBI plus DSB is similar to one DSB plus refills. The synchronous table
 * free (tlb_remove_table_sync_one) IPIs every CPU even here: about 2 us.
 */
static const struct mmp_cost_model arm64_cost = {
	ARM64_COSTS(4),
	.source = "arm64 big core: TLBI VALE1IS ~60 cycles each, DSB ISH ~500, no IPIs",
};

const struct mmp_arch mmp_arch_arm64 = {
	.name = "arm64",
	.description = "arm64 4K granule, 48-bit VA, FEAT_HAFDBS, transparent contpte (64 KiB blocks)",
	ARM64_FAMILY,
	.levels = 4,
	.task_size = 1ULL << 48,	/* VA_BITS 48: TTBR0 covers all of it */
	.leaf_levels = 1u << MMP_PTE | 1u << MMP_PMD | 1u << MMP_PUD,	/* page, level 2 and 1 blocks */
	.hugetlb_pud = true,	/* 1 GiB hugetlb pages */
	.cost = &arm64_cost,
};
