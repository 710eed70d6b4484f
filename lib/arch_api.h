/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What arch/ code may use of the core, and all it includes: the back end
 * interface (arch.h), the entry formats (format_dispatch.h), page and table
 * geometry, the types of mm and folios, the counters, TLB flushes, the release
 * rules an operation may follow (release_follows) and the entry rewrite below.
 * Faults, VMAs, the mmu_gather, reclaim and the simulated CPUs are the core's
 * own: no arch header reaches them. A format.h, compiled into the core below
 * this header (format_dispatch.h), includes arch.h alone; any other file under
 * arch/ includes of lib/ this header only (scripts/check-arch-includes.py).
 */
#ifndef MMP_ARCH_API_H
#define MMP_ARCH_API_H

#include "arch.h"
#include "entry.h"
#include "folio.h"
#include "format_dispatch.h"
#include "geometry.h"
#include "mm_types.h"
#include "release.h"
#include "tlbflush.h"
#include "vmstat.h"

/* Rewrite one entry's flags by compare-and-swap, keeping what the walker sets meanwhile. */
mmp_pte_t ptep_modify(struct mmp_space *s, mmp_pte_t *ep, enum mmp_level level, unsigned int set,
		      unsigned int clear);

/*
 * A contiguous block (arm64 contpte, riscv Svnapot) read entry by entry for
 * mmp_space_verify() (<folder>_cont_block_read), and what breaks one: a block
 * that stays inconsistent would make ptep_get_lockless retry forever.
 */
#define MMP_CONT_PTES_MAX	16

enum cont_block_fault_kind {
	CONT_FAULT_NOT_CONT,	/* an entry is none, invalid or lacks the contiguous bit */
	CONT_FAULT_PFN,		/* an entry maps another page than its slot's */
	CONT_FAULT_ATTRS,	/* an entry differs in more than the per-entry A/D */
};

struct cont_block_fault {
	const char *name;		/* "contpte block", "Svnapot run" */
	enum cont_block_fault_kind kind;
	unsigned int entry;		/* the first entry that breaks the block */
	unsigned int ref;		/* the entry it is held against: the one most agree with */
	unsigned int nr_bad;		/* entries that disagree with @ref */
	mmp_pte_t raw, ref_raw;		/* both, as read */
	mmp_pte_t attrs;		/* CONT_FAULT_ATTRS: the raw bits they differ in */
	uint64_t pfn, expected_pfn;	/* CONT_FAULT_PFN: the page @entry maps, its slot's */
};

#endif /* MMP_ARCH_API_H */
