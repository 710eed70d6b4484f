/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One page-table entry in its space's format: decode, encode, rewrite, its lock. */
#ifndef MMP_ENTRY_H
#define MMP_ENTRY_H

#include "format_dispatch.h"
#include "page_alloc.h"

static __always_inline void *space_table(struct mmp_space *s, uint64_t pfn)
{
	return pfn_to_virt(s->phys, pfn);
}

/* MMP_E_* flags of @e (0 for pte_none: every format decodes 0 as none). */
static __always_inline unsigned int entry_flags(const struct mmp_space *s, mmp_pte_t e,
						enum mmp_level l)
{
	return format_entry_flags(s->format, e, l);
}

/* entry_flags(s, e, l) & @mask, computing only the bits of @mask. */
static __always_inline unsigned int entry_test(const struct mmp_space *s, mmp_pte_t e,
					       enum mmp_level l, unsigned int mask)
{
	return format_entry_test(s->format, e, l, mask);
}

static __always_inline uint64_t entry_pfn(const struct mmp_space *s, mmp_pte_t e, enum mmp_level l)
{
	return format_entry_pfn(s->format, e, l);
}

static __always_inline mmp_pte_t mk_entry(const struct mmp_space *s, uint64_t pfn,
					  unsigned int f, enum mmp_level l)
{
	return format_mk_entry(s->format, pfn, f, l);
}

/* Present leaf PTEs in raw form: attributes cleared, the pfn advanced (folio_pte_batch). */
static __always_inline mmp_pte_t pte_clear_flags(const struct mmp_space *s, mmp_pte_t e,
						 unsigned int eflags)
{
	return format_pte_clear_flags(s->format, e, eflags);
}

static __always_inline mmp_pte_t pte_advance_pfn(const struct mmp_space *s, mmp_pte_t e,
						 uint64_t nr)
{
	return format_pte_advance_pfn(s->format, e, nr);
}

/* Rewrite the flags of entry @e (pte_modify, pte_mkold, pte_wrprotect, ...). */
static __always_inline mmp_pte_t entry_set_flags(const struct mmp_space *s, mmp_pte_t e,
						 enum mmp_level l, unsigned int set,
						 unsigned int clear)
{
	unsigned int f = format_entry_flags(s->format, e, l);

	return format_mk_entry(s->format, format_entry_pfn(s->format, e, l), (f | set) & ~clear, l);
}

static __always_inline mmp_spinlock_t *pte_lockptr(struct mmp_space *s, mmp_pte_t *pte_table)
{
	uint64_t pfn = ((uint8_t *)pte_table - s->phys->base) >> PAGE_SHIFT;

	return &pfn_to_page(s->phys, pfn)->pt.ptl;
}

/* pte_present(): mapped, even if PROT_NONE makes it invalid for the hardware. */
static inline bool entry_present(unsigned int eflags)
{
	return eflags & (MMP_E_PRESENT | MMP_E_PROTNONE);
}

#endif /* MMP_ENTRY_H */
