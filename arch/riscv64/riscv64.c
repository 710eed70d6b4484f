/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RISC-V Sv48 (Sv39 and Sv57, in sv39.c and sv57.c, share this file): V R W X U G A D, RSW (bit 8 is the kernel's SPECIAL), PPN from
 * bit 10, N (Svnapot) at bit 63. A valid entry with R=W=X=0 points to the
 * next table; a leaf above level 0 is a megapage. PROT_NONE is G without V,
 * plus R (the kernel's PAGE_NONE). No soft-dirty bit is modelled.
 *
 * Accessed/dirty: with Svadu the walker sets them atomically (the default,
 * MMP_OPT_HW_AD 1); with Svade (MMP_OPT_HW_AD 0) an access to an entry with A
 * clear, or a store with D clear, faults and the kernel sets them.
 * TLB invalidation is an SBI remote fence, modelled as IPIs to the other harts.
 */
#include "family.h"

/*
 * Cycle costs for a RISC-V application core at 2 GHz. An sfence.vma is cheap
 * locally, but remote shootdowns go through SBI (an ecall into M-mode firmware
 * that IPIs the other harts): several microseconds, the costliest of the three
 * back ends; the synchronous table free is one such round.
 */
static const struct mmp_cost_model riscv64_cost = {
	RISCV64_COSTS(4),
	.source = "riscv64 core at 2 GHz: sfence.vma ~80 cycles, SBI remote fence ~5 us",
};

const struct mmp_arch mmp_arch_riscv64 = {
	.name = "riscv64",
	.description = "RISC-V Sv48, Svnapot 64 KiB runs for 64 KiB folios, Svadu or Svade",
	RISCV64_FAMILY,
	.levels = 4,
	.task_size = 1ULL << 47,	/* half the Sv48 space (TASK_SIZE_64) */
	.leaf_levels = 0xf,	/* any level: page, mega-, giga-, terapage */
	.hugetlb_pud = true,	/* 1 GiB hugetlb pages */
	.cost = &riscv64_cost,
};
