/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64, 4-level paging (x86_64-la57 in la57.c shares this file with five).
 * Entries use the real bit layout: P, RW, U/S, A, D,
 * PSE (a huge leaf in a PMD), SPECIAL (software bit 9), SOFT_DIRTY (software
 * bit 11), NX (bit 63). PROT_NONE entries clear P and set the PROTNONE bit,
 * which is the global bit's position (never used for user pages).
 *
 * The MMU sets accessed and dirty itself with locked updates (the generic
 * walker model); TLB shootdowns are IPIs to the CPUs in mm_cpumask, and a range
 * of more than 33 pages flushes the whole mm (tlb_single_page_flush_ceiling).
 */
#include "family.h"

/*
 * Cycle costs for a recent x86-64 server core at 3 GHz. Entry accesses are L1
 * hits (4-5 cycles; an atomic xchg costs about 20). invlpg of a user page
 * costs about 100-250 cycles; a full flush (CR3 reload with PCID) about 500
 * plus refills. A shootdown IPI costs the sender a few microseconds round
 * trip: 2 to 4 us is what flush_tlb_multi is commonly measured at, so 6000.
 * Freeing a table synchronously (tlb_remove_table_sync_one) is one such
 * broadcast IPI and wait; queueing a batch on call_rcu costs a few hundred.
 */
const struct mmp_cost_model mmp_cost_x86_64 = {
	X86_64_COSTS(4),
	.source = "x86-64 server core: invlpg ~150 cycles, CR3 reload ~500, IPI round trip ~2 us",
};

const struct mmp_arch mmp_arch_x86_64 = {
	.name = "x86_64",
	.description = "x86-64 4-level paging, hardware A/D, IPI shootdowns",
	X86_64_FAMILY,
	.levels = 4,
	.task_size = (1ULL << 47) - PAGE_SIZE,	/* TASK_SIZE_MAX: the last page is a guard */
	.leaf_levels = 1u << MMP_PTE | 1u << MMP_PMD | 1u << MMP_PUD,	/* 4K, 2M, 1G */
	.hugetlb_pud = true,	/* 1 GiB pages: declared whatever the host CPU has (PDPE1GB) */
	.cost = &mmp_cost_x86_64,
};
