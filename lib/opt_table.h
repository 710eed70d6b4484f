/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every switch of enum mmp_opt in one row, the one place a switch is
 * declared beside its number in mmprim.h (the numbers are ABI) and its code:
 *
 *   X(ID, name, default, min, max, rule, doc)
 *
 * ID       MMP_OPT_<ID>
 * name     its name in mmprim-replay's --opt NAME=VALUE and in the docs
 * default  a new space's value; -1: as the release (and the back end) say
 * min, max what mmp_space_set_opt() accepts; the few checks beyond a range
 *          (a native table free on broadcast TLBI, a release that exists)
 *          stay in space.c
 * rule     the release rule whose row drives its default (lib/release.c,
 *          the README), or NULL; test_release holds the two to each other
 * doc      one line
 *
 * space.c takes defaults and ranges from it, mmprim-replay its names,
 * test_badinput the ranges it probes, test_release the README's switch
 * column. Only public names appear in it, so tools can include it.
 */
#ifndef MMP_OPT_TABLE_H
#define MMP_OPT_TABLE_H

#include <limits.h>

#include <mmprim/mmprim.h>
#include <mmprim/release.h>

#define MMP_OPT_TABLE(X)							\
	X(TLB_SANITIZER, "tlb_sanitizer", 0, 0, 1, NULL,			\
	  "check each TLB hit against the tables (mmp_space_config sets it)")	\
	X(HUGE_ORDER, "huge_order", MMP_HUGE_ORDER_TARGET_LAST, 0,		\
	  MMP_NR_HUGE_ORDERS - 1, NULL,						\
	  "the sub-page order of huge copies and clears (enum mmp_huge_order)")	\
	X(PTE_BATCH, "pte_batch", 1, 0, 1, NULL,				\
	  "batch a large folio's PTEs (folio_pte_batch)")			\
	X(BBML2_NOABORT, "bbml2_noabort", 0, 0, 1, NULL,			\
	  "arm64: contpte_convert skips its middle TLBI")			\
	X(RCU_TABLE_FREE, "rcu_table_free", -1, -1, MMP_NR_TABLE_FREE - 1,	\
	  "table_free_rcu", "how unlinked tables are freed (enum mmp_table_free)") \
	X(PT_RECLAIM, "pt_reclaim", -1, -1, 1, "pt_reclaim",			\
	  "MADV_DONTNEED frees the PTE tables it empties")			\
	X(LAZYFREE_PMD, "lazyfree_pmd", 1, 0, 1, NULL,				\
	  "reclaim decides a lazyfree PMD THP on the PMD")			\
	X(HW_AD, "hw_ad", 1, 0, 1, NULL,					\
	  "the MMU sets accessed and dirty itself")				\
	X(HUGE_NEIGHBOURHOOD, "huge_neighbourhood", 0, 0, 1L << MMP_MAX_ORDER,	\
	  NULL, "sub-pages done last around the target; 0: from the L2 size")	\
	X(KERNEL_VERSION, "kernel_version", MMP_KERNEL_MODELED, MMP_KERNEL_OLDEST, \
	  MMP_KERNEL_NEWEST | 0xff, NULL,					\
	  "the release modelled (MMP_KERNEL_VERSION(a, b, c))")			\
	X(PER_VMA_LOCK, "per_vma_lock", 1, 0, 1, NULL,				\
	  "faults and, from 6.17, madvise of one VMA take just its lock")	\
	X(HUGE_CLEAR_ORDER, "huge_clear_order", -1, -1, MMP_NR_HUGE_ORDERS - 1,	\
	  "clear_sequential", "the order folio_zero_user clears in")		\
	X(MPROTECT_SMALL_FOLIO, "mprotect_small_folio", -1, -1, 1,		\
	  "mprotect_small_folio", "change_pte_range's own branch for a small folio") \
	X(FORBID_ZEROPAGE, "forbid_zeropage", 0, 0, 1, NULL,			\
	  "no zero page: a read fault maps a folio")				\
	X(SOFT_DIRTY, "soft_dirty", 0, 0, 1, NULL,				\
	  "track soft-dirty (CONFIG_MEM_SOFT_DIRTY)")				\
	X(TABLE_BATCH_FAIL, "table_batch_fail", 0, 0, LONG_MAX, NULL,		\
	  "every Nth table batch page cannot be had (0: never)")		\
	X(CAP_SYS_RAWIO, "cap_sys_rawio", 0, 0, 1, NULL,			\
	  "privileged: fixed mappings below mmap_min_addr, page 0 included") \
	X(RLIMIT_MEMLOCK, "rlimit_memlock", -1, -1, LONG_MAX, NULL,		\
	  "RLIMIT_MEMLOCK in bytes (-1: none, as with CAP_IPC_LOCK)")		\
	X(READ_AHEAD_KB, "read_ahead_kb", 128, 0, 1 << 20, NULL,		\
	  "the files' device's read_ahead_kb: what a missing file fault reads")

/* One entry per switch, indexed by enum mmp_opt. */
struct mmp_opt_desc {
	const char *name;
	long def, min, max;
	const char *rule;
	const char *doc;
};

#define MMP_OPT_DESC(id, n, d, lo, hi, r, text)					\
	[MMP_OPT_##id] = { .name = n, .def = d, .min = lo, .max = hi, .rule = r, .doc = text },

static const struct mmp_opt_desc mmp_opt_descs[MMP_NR_OPTS] = { MMP_OPT_TABLE(MMP_OPT_DESC) };

#undef MMP_OPT_DESC

/* Every switch of the enum has a row: count the rows. */
#define MMP_OPT_COUNT(...)	+1
_Static_assert(0 MMP_OPT_TABLE(MMP_OPT_COUNT) == MMP_NR_OPTS,
	       "each switch of enum mmp_opt has one row of MMP_OPT_TABLE");
#undef MMP_OPT_COUNT

#endif /* MMP_OPT_TABLE_H */
