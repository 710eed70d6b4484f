/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The release table inside the library: each rule a bit, a space's bits
 * worked out once from its release and back end (space_apply_release), so a
 * hot path asks one load and one test.
 */
#ifndef MMP_RELEASE_H
#define MMP_RELEASE_H

#include "mm_types.h"

enum release_rule {
	RULE_GUARD_REGIONS,		/* MADV_GUARD_INSTALL and _REMOVE exist */
	RULE_GUARD_ANY_VMA,		/* guard regions in file, shared and read-only mappings */
	RULE_PAGEMAP_GUARD_REGION,	/* pagemap bit 58 marks a guard marker */
	RULE_GUARD_VMA_FLAG,		/* guard install sets VM_MAYBE_GUARD (sticky) */
	RULE_PT_RECLAIM,		/* MADV_DONTNEED frees the PTE tables it empties */
	RULE_PROCESS_MADVISE_ANY_ADVICE, /* process_madvise of itself takes every advice */
	RULE_PROCESS_MADVISE_LOCK_ONCE,	/* one mmap lock over a process_madvise vector */
	RULE_PROCESS_MADVISE_TLB_BATCH,	/* one mmu_gather over a process_madvise vector */
	RULE_MREMAP_MULTI_VMA,		/* a same-size MREMAP_FIXED move spans VMAs and gaps */
	RULE_MREMAP_ALIGN_FIRST,	/* lengths rounded to pages before they are checked */
	RULE_MPROTECT_PTE_BATCH,	/* change_pte_range batches a large folio's PTEs */
	RULE_CONTPTE_GET_EARLY_EXIT,	/* arm64 contpte ptep_get stops at young and dirty */
	RULE_CLEAR_SEQUENTIAL,		/* folio_zero_user clears in MMP_HUGE_ORDER_SEQUENTIAL */
	RULE_FILE_BATCHED_UNMAP,	/* reclaim unmaps a large file folio in batches */
	RULE_MPROTECT_SMALL_FOLIO,	/* change_pte_range's own branch for a small folio */
	RULE_WP_REUSE_LARGE_ANON,	/* do_wp_page reuses a page of a large folio one space owns */
	RULE_HUGE_ZERO_WP_THP,		/* a write to the huge zero page maps a new THP */
	RULE_TABLE_FREE_RCU,		/* every table by RCU, the single one on its own rcu_head */
	RULE_MADVISE_VMA_LOCK,		/* MADV_DONTNEED/FREE in one VMA under its lock alone */
	RULE_PROCMAP_QUERY_VMA_LOCK,	/* PROCMAP_QUERY under the found VMA's lock alone */
	RULE_THP_DISABLE_EXCEPT_ADVISED, /* PR_SET_THP_DISABLE takes PR_THP_DISABLE_EXCEPT_ADVISED */
	RULE_COLLAPSE_PAST_EMPTY_PMD,	/* MADV_COLLAPSE goes on past a PMD with no table */
	NR_RELEASE_RULES
};
_Static_assert(NR_RELEASE_RULES <= 32, "a space keeps its rules in one word");

/* Work out @s's rules from its release and back end; again whenever the release changes. */
void space_apply_release(struct mmp_space *s);

/* Does @s follow @rule, by its release and back end? Switches it drives are read apart. */
static __always_inline bool release_follows(const struct mmp_space *s, enum release_rule rule)
{
	return READ_ONCE(s->release_rules) & (1u << rule);
}

/*
 * Does MADV_DONTNEED free the PTE tables it empties? As MMP_OPT_PT_RECLAIM
 * says, or, left at -1, as the release and the back end say.
 */
static inline bool pt_reclaim_enabled(const struct mmp_space *s)
{
	long v = READ_ONCE(s->opts[MMP_OPT_PT_RECLAIM]);

	return v >= 0 ? v : release_follows(s, RULE_PT_RECLAIM);
}

/*
 * The order folio_zero_user clears a huge folio in: MMP_OPT_HUGE_CLEAR_ORDER,
 * or, left at -1, 7.0's sequential order from 7.0 and the copy order before.
 */
static __always_inline enum mmp_huge_order huge_clear_order(const struct mmp_space *s)
{
	long v = READ_ONCE(s->opts[MMP_OPT_HUGE_CLEAR_ORDER]);

	if (v >= 0)
		return (enum mmp_huge_order)v;
	if (release_follows(s, RULE_CLEAR_SEQUENTIAL))
		return MMP_HUGE_ORDER_SEQUENTIAL;
	return (enum mmp_huge_order)READ_ONCE(s->opts[MMP_OPT_HUGE_ORDER]);
}

/* Does change_pte_range give a small folio its own branch? The switch, or the release. */
static __always_inline bool mprotect_small_folio_branch(const struct mmp_space *s)
{
	long v = READ_ONCE(s->opts[MMP_OPT_MPROTECT_SMALL_FOLIO]);

	return v >= 0 ? v : release_follows(s, RULE_MPROTECT_SMALL_FOLIO);
}

/*
 * How unlinked tables are freed (enum mmp_table_free): MMP_OPT_RCU_TABLE_FREE,
 * or, left at -1, what the release and the back end had (space_apply_release).
 */
static __always_inline enum mmp_table_free table_free_mode(const struct mmp_space *s)
{
	long v = READ_ONCE(s->opts[MMP_OPT_RCU_TABLE_FREE]);

	return v >= 0 ? (enum mmp_table_free)v : (enum mmp_table_free)READ_ONCE(s->table_free_default);
}

#endif /* MMP_RELEASE_H */
