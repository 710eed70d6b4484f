/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reference back end's format, the neutral one: each MMP_E_* flag is one
 * bit and the pfn sits at bit 12. Static inline, as every format is.
 */
#ifndef MMP_GENERIC_FORMAT_H
#define MMP_GENERIC_FORMAT_H

#include "arch.h"
#include "../shared/swp_entry.h"

#define GENERIC_PFN_SHIFT	12
#define GENERIC_PFN_MASK	((1ULL << 40) - 1)
#define GENERIC_FLAGS_MASK	((1u << 12) - 1)

static __always_inline mmp_pte_t generic_mk_entry(uint64_t pfn, unsigned int eflags, enum mmp_level level)
{
	if (eflags & MMP_E_TABLE)
		eflags = MMP_E_TABLE | MMP_E_PRESENT;
	return (pfn & GENERIC_PFN_MASK) << GENERIC_PFN_SHIFT | (eflags & GENERIC_FLAGS_MASK);
}

static __always_inline unsigned int generic_entry_flags(mmp_pte_t e, enum mmp_level level)
{
	return e & GENERIC_FLAGS_MASK;
}

static __always_inline uint64_t generic_entry_pfn(mmp_pte_t e, enum mmp_level level)
{
	return (e >> GENERIC_PFN_SHIFT) & GENERIC_PFN_MASK;
}

/* The raw bit operations folio_pte_batch compares with: here, the flags themselves. */
static __always_inline mmp_pte_t generic_pte_clear_flags(mmp_pte_t e, unsigned int f)
{
	return e & ~(mmp_pte_t)f;
}

static __always_inline mmp_pte_t generic_pte_advance_pfn(mmp_pte_t e, uint64_t nr)
{
	return e + (nr << GENERIC_PFN_SHIFT);
}

/*
 * Swap entries: no flag bit set (so neither present nor PROT_NONE), the type
 * in bits 12-16 and the offset from bit 17 up, in the pfn's place.
 */
#define GENERIC_SWP_TYPE_SHIFT	GENERIC_PFN_SHIFT
#define GENERIC_SWP_TYPE_MASK	0x1fULL
#define GENERIC_SWP_OFFSET_SHIFT (GENERIC_PFN_SHIFT + 5)

DEFINE_SWP_ENTRY_OPS(generic, GENERIC_SWP_TYPE_SHIFT, GENERIC_SWP_TYPE_MASK,
		     GENERIC_SWP_OFFSET_SHIFT)

#endif /* MMP_GENERIC_FORMAT_H */
