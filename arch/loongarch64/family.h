/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every LoongArch64 back end shares: its format, A/D model, TLB and cost table. */
#ifndef MMP_LOONGARCH64_FAMILY_H
#define MMP_LOONGARCH64_FAMILY_H

#include "arch_api.h"
#include "format.h"

/*
 * Estimates, not measurements (no LoongArch host was at hand): a 2.5 GHz
 * LA464-class core. Entry accesses are L1 hits; an INVTLB of one page and
 * ASID some tens of cycles, a new ASID for a whole-mm flush a few hundred
 * plus refills; shootdowns are IPIs (flush_tlb_range calls every CPU of the
 * mm), priced as x86's; the refill is a software handler walking one level
 * per LDDIR, about 15 cycles a level.
 */
#define LOONGARCH64_COSTS(nr_levels)	\
	.ghz = 2.5,							\
	.entry_read = 4,						\
	.entry_write = 8,						\
	.tlbi_page = 40,						\
	.flush_op = 60,							\
	.flush_all = 400,						\
	.ipi = 6000,							\
	.page_walk = 15 * (nr_levels),					\
	.rcu_sync = 6000,						\
	.rcu_call = 200

/*
 * Software A/D (the kernel sets V, or V|D|MODIFIED, in the fault), IPI
 * shootdowns, and a range flush longer than about an eighth of a 2048-entry
 * STLB's page pairs drops the mm's ASID instead (local_flush_tlb_range):
 * 512 pages, an estimate.
 */
#define LOONGARCH64_FAMILY						\
	.format = MMP_FORMAT_loongarch64,				\
	.ad_model = MMP_AD_SOFTWARE,					\
	.tlbi_broadcast = false,					\
	.tlb_merge_vmas = true,						\
	.tlb_flush_ceiling = 512,					\
	.eflags_unsupported = MMP_E_SOFT_DIRTY

#endif /* MMP_LOONGARCH64_FAMILY_H */
