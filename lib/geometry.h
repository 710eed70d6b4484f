/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Page and table geometry shared by every back end: sizes, levels, indices. */
#ifndef MMP_GEOMETRY_H
#define MMP_GEOMETRY_H

#include <mmprim/mmprim.h>

#include "compiler.h"
#include "arch.h"

#define PAGE_SHIFT	MMP_PAGE_SHIFT
#define PAGE_SIZE	MMP_PAGE_SIZE
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define PMD_SHIFT	MMP_PMD_SHIFT
#define PMD_SIZE	MMP_PMD_SIZE
#define PMD_MASK	(~(PMD_SIZE - 1))
#define PTRS_PER_TABLE	512
#define HPAGE_PMD_ORDER	MMP_PMD_ORDER
#define HPAGE_PMD_NR	(1u << HPAGE_PMD_ORDER)

static __always_inline unsigned int level_shift(enum mmp_level level)
{
	return PAGE_SHIFT + 9 * level;
}

static __always_inline uint64_t level_size(enum mmp_level level)
{
	return 1ULL << level_shift(level);
}

static __always_inline unsigned int level_index(uint64_t addr, enum mmp_level level)
{
	return (addr >> level_shift(level)) & (PTRS_PER_TABLE - 1);
}

/* End of the @level entry's span that contains @addr, capped at @end (pmd_addr_end & co). */
static __always_inline uint64_t level_addr_end(uint64_t addr, uint64_t end, enum mmp_level level)
{
	uint64_t next = (addr + level_size(level)) & ~(level_size(level) - 1);

	return next - 1 < end - 1 ? next : end;
}

#endif /* MMP_GEOMETRY_H */
