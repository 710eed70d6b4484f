/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64 page-table entries: the real bit layout, the same at every level and
 * with 4 or 5 levels. Shared by every x86-64 back end (x86_64.c, la57.c).
 */
#ifndef MMP_X86_64_PGTABLE_H
#define MMP_X86_64_PGTABLE_H

#include "internal.h"

#define _PAGE_PRESENT	(1ULL << 0)
#define _PAGE_RW	(1ULL << 1)
#define _PAGE_USER	(1ULL << 2)
#define _PAGE_ACCESSED	(1ULL << 5)
#define _PAGE_DIRTY	(1ULL << 6)
#define _PAGE_PSE	(1ULL << 7)
#define _PAGE_PROTNONE	(1ULL << 8)
#define _PAGE_SPECIAL	(1ULL << 9)
#define _PAGE_SOFT_DIRTY (1ULL << 11)
#define _PAGE_NX	(1ULL << 63)
#define PTE_PFN_MASK	0x000ffffffffff000ULL

/* What a table entry holds: _PAGE_TABLE (the kernel also sets A and D on it). */
#define _PAGE_TABLE	(_PAGE_PRESENT | _PAGE_RW | _PAGE_USER | _PAGE_ACCESSED | _PAGE_DIRTY)

/* x86_64.c: the format, shared by every x86-64 back end. */
mmp_pte_t x86_mk_entry(uint64_t pfn, unsigned int f, enum mmp_level level);
unsigned int x86_entry_flags(mmp_pte_t e, enum mmp_level level);
uint64_t x86_entry_pfn(mmp_pte_t e, enum mmp_level level);
mmp_pte_t x86_ptep_get_and_clear(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep);

/*
 * The cycle costs every x86_64 back end shares (x86_64.c says where they
 * come from). A TLB miss that misses the walk caches loads one entry per
 * level, so the walk costs 10 cycles a level: deeper tables, dearer walks.
 */
#define X86_64_COSTS(nr_levels)	\
	.ghz = 3.0,							\
	.entry_read = 4,						\
	.entry_write = 8,						\
	.tlbi_page = 150,						\
	.flush_op = 100,						\
	.flush_all = 500,						\
	.ipi = 6000,							\
	.page_walk = 10 * (nr_levels),					\
	.rcu_sync = 6000,						\
	.rcu_call = 200

/* Everything an x86-64 back end shares; it adds name, geometry and cost table. */
#define X86_64_FAMILY					\
	.mk_entry = x86_mk_entry,			\
	.entry_flags = x86_entry_flags,			\
	.entry_pfn = x86_entry_pfn,			\
	.ptep_get_and_clear = x86_ptep_get_and_clear,	\
	.tlbi_broadcast = false,			\
	.tlb_flush_ceiling = 33

#endif /* MMP_X86_64_PGTABLE_H */
