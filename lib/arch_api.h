/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What arch/ code may use of the core, and all it includes: the back end
 * interface (arch.h), the formats (format.h), the space, its counters and
 * switches, frames and folios (internal.h), TLB flushes (tlbflush.h) and the
 * entry rewrite below. Faults, VMAs, the mmu_gather, reclaim and the CPUs'
 * TLBs (mm.h, cpu.h) are the core's own.
 */
#ifndef MMP_ARCH_API_H
#define MMP_ARCH_API_H

#include "internal.h"
#include "tlbflush.h"

/* Rewrite one entry's flags by compare-and-swap, keeping what the walker sets meanwhile. */
mmp_pte_t ptep_modify(struct mmp_space *s, mmp_pte_t *ep, enum mmp_level level, unsigned int set,
		      unsigned int clear);

#endif /* MMP_ARCH_API_H */
