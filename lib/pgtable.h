/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The walk down to a PMD entry and a PTE table's allocation, inline as the
 * kernel's pmd_alloc() and pte_alloc() are (include/linux/mm.h): only a
 * missing table costs a call, to table_install(). The walk compiles at a
 * constant level per step, and per format inside a path that is itself
 * compiled per format (__handle_mm_fault).
 */
#ifndef MMP_PGTABLE_H
#define MMP_PGTABLE_H

#include "entry_dispatch.h"

/*
 * Point the empty entry @ep of @level at a new table (__pmd_alloc,
 * __pte_alloc): 0, also when another thread got there first; -ENOMEM.
 */
int table_install(struct mmp_space *s, mmp_pte_t *ep, enum mmp_level level);

/*
 * One step down from upper level @l (a constant, so its decode folds): the
 * table under @table's entry for @addr, allocated when @alloc and the entry is
 * empty; NULL when there is none, or no memory.
 */
static __always_inline mmp_pte_t *upper_table(struct mmp_space *s, mmp_pte_t *table,
					      uint64_t addr, const enum mmp_level l, bool alloc,
					      const enum mmp_format fmt)
{
	mmp_pte_t *ep = &table[level_index(addr, l)];
	mmp_pte_t e = __atomic_load_n(ep, __ATOMIC_ACQUIRE);

	if (!e && alloc) {
		if (table_install(s, ep, l))
			return NULL;
		e = __atomic_load_n(ep, __ATOMIC_ACQUIRE);
	} else if (!alloc && !format_entry_test(fmt, e, l, MMP_E_TABLE)) {
		return NULL;
	}
	return format_entry_table(fmt, s, e, l);
}

/*
 * The table of PUD entries for @addr from the top, level by level as the
 * kernel's p4d_alloc/pud_alloc (or p4d_offset/pud_offset): each level's step
 * compiles at its own constant level, for format @fmt. With three levels the
 * top table is the PUD table.
 */
static __always_inline mmp_pte_t *pud_table_fmt(struct mmp_space *s, uint64_t addr, bool alloc,
						const enum mmp_format fmt)
{
	mmp_pte_t *table = space_table(s, s->pgd_pfn);

	switch (pgd_level(s)) {
	case MMP_PGD5:
		table = upper_table(s, table, addr, MMP_PGD5, alloc, fmt);
		if (!table)
			return NULL;
		/* fall through */
	case MMP_P4D:
		table = upper_table(s, table, addr, MMP_P4D, alloc, fmt);
		/* fall through */
	default:
		break;
	}
	return table;
}

/* The PUD entry for @addr (pud_alloc, pud_offset): hugetlb's 1 GiB leaves sit there. */
static __always_inline mmp_pte_t *pud_walk_fmt(struct mmp_space *s, uint64_t addr, bool alloc,
					       const enum mmp_format fmt)
{
	mmp_pte_t *table = pud_table_fmt(s, addr, alloc, fmt);

	return table ? &table[level_index(addr, MMP_PUD)] : NULL;
}

/* The PMD entry for @addr (pmd_alloc, pmd_offset): one step below the PUD table. */
static __always_inline mmp_pte_t *pmd_walk_fmt(struct mmp_space *s, uint64_t addr, bool alloc,
					       const enum mmp_format fmt)
{
	mmp_pte_t *table = pud_table_fmt(s, addr, alloc, fmt);

	if (table)	/* every space has three levels at least */
		table = upper_table(s, table, addr, MMP_PUD, alloc, fmt);
	return table ? &table[level_index(addr, MMP_PMD)] : NULL;
}

static __always_inline mmp_pte_t *pud_walk(struct mmp_space *s, uint64_t addr, bool alloc)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return pud_walk_fmt(s, addr, alloc, MMP_FORMAT_##f);
	MMP_DISPATCH_FORMAT(s->format)
#undef MMP_FORMAT
}

/* pmd_walk_fmt() for the space's format: a copy per format (pmd_alloc, pmd_offset). */
static __always_inline mmp_pte_t *pmd_walk(struct mmp_space *s, uint64_t addr, bool alloc)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return pmd_walk_fmt(s, addr, alloc, MMP_FORMAT_##f);
	MMP_DISPATCH_FORMAT(s->format)
#undef MMP_FORMAT
}

/* pmd_alloc() in a path compiled per format. */
static __always_inline mmp_pte_t *format_pmd_alloc(const enum mmp_format fmt,
						   struct mmp_space *s, uint64_t addr)
{
	return pmd_walk_fmt(s, addr, true, fmt);
}

/* Give an empty PMD entry a PTE table (pte_alloc); 0 when one is there already. */
static inline int pte_alloc(struct mmp_space *s, mmp_pte_t *pmdp)
{
	if (likely(READ_ONCE(*pmdp)))
		return 0;
	return table_install(s, pmdp, MMP_PMD);
}

#endif /* MMP_PGTABLE_H */
