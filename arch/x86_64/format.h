/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64 page-table entries, the same at every level and with 4 or 5 levels:
 * the real bit layout and its static inline encode and decode, which core mm
 * compiles in (lib/format_dispatch.h) as the kernel's mm/ compiles in asm/pgtable.h.
 */
#ifndef MMP_X86_64_FORMAT_H
#define MMP_X86_64_FORMAT_H

#include "arch.h"

#define X86_PAGE_PRESENT	(1ULL << 0)
#define X86_PAGE_RW	(1ULL << 1)
#define X86_PAGE_USER	(1ULL << 2)
#define X86_PAGE_ACCESSED	(1ULL << 5)
#define X86_PAGE_DIRTY	(1ULL << 6)
#define X86_PAGE_PSE	(1ULL << 7)
#define X86_PAGE_PROTNONE	(1ULL << 8)
#define X86_PAGE_SOFTW1	(1ULL << 9)	/* _PAGE_SPECIAL (riscv's is bit 8) */
#define X86_PAGE_SOFT_DIRTY (1ULL << 11)
#define X86_PAGE_NX	(1ULL << 63)
#define X86_PTE_PFN_MASK	0x000ffffffffff000ULL


/* What a table entry holds: X86_PAGE_TABLE (the kernel also sets A and D on it). */
#define X86_PAGE_TABLE	(X86_PAGE_PRESENT | X86_PAGE_RW | X86_PAGE_USER | X86_PAGE_ACCESSED | \
			 X86_PAGE_DIRTY)

/*
 * L1TF: an entry that is not present but still holds a pfn (PROT_NONE)
 * stores the pfn inverted, so a speculative walk through it reaches no real
 * memory (the kernel's protnone_mask(), since 4.19).
 */
static __always_inline uint64_t protnone_mask(mmp_pte_t e)
{
	return e && !(e & X86_PAGE_PRESENT) ? X86_PTE_PFN_MASK : 0;
}

static __always_inline mmp_pte_t x86_64_mk_entry(uint64_t pfn, unsigned int f, enum mmp_level level)
{
	mmp_pte_t e = (pfn << MMP_PAGE_SHIFT) & X86_PTE_PFN_MASK;

	if (f & MMP_E_TABLE)
		return e | X86_PAGE_TABLE;
	if (f & MMP_E_PRESENT)
		e |= X86_PAGE_PRESENT;
	else if (f & MMP_E_PROTNONE)
		e |= X86_PAGE_PROTNONE;
	if (f & MMP_E_WRITE)
		e |= X86_PAGE_RW;
	if (f & MMP_E_USER)
		e |= X86_PAGE_USER;
	if (f & MMP_E_ACCESSED)
		e |= X86_PAGE_ACCESSED;
	if (f & MMP_E_DIRTY)
		e |= X86_PAGE_DIRTY;
	if (f & MMP_E_SPECIAL)
		e |= X86_PAGE_SOFTW1;
	if (f & MMP_E_SOFT_DIRTY)
		e |= X86_PAGE_SOFT_DIRTY;
	if (f & MMP_E_NOEXEC)
		e |= X86_PAGE_NX;
	if (level > MMP_PTE && (f & MMP_E_LEAF))
		e |= X86_PAGE_PSE;
	return e ^ protnone_mask(e);
}

static __always_inline unsigned int x86_64_entry_flags(mmp_pte_t e, enum mmp_level level)
{
	bool present = e & X86_PAGE_PRESENT, pse = level > MMP_PTE && (e & X86_PAGE_PSE);

	/* A table entry says only that: its other bits are for the walk. */
	if (present && level > MMP_PTE && !pse)
		return MMP_E_PRESENT | MMP_E_TABLE;
	/*
	 * One expression of independent bits (zero for a none entry): a caller
	 * testing some of them (entry_test) lets the compiler drop the rest.
	 */
	return (present ? MMP_E_PRESENT : e & X86_PAGE_PROTNONE ? MMP_E_PROTNONE : 0) |
	       (pse ? MMP_E_LEAF : 0) |
	       (e & X86_PAGE_RW ? MMP_E_WRITE : 0) |
	       (e & X86_PAGE_USER ? MMP_E_USER : 0) |
	       (e & X86_PAGE_ACCESSED ? MMP_E_ACCESSED : 0) |
	       (e & X86_PAGE_DIRTY ? MMP_E_DIRTY : 0) |
	       (e & X86_PAGE_SOFTW1 ? MMP_E_SPECIAL : 0) |
	       (e & X86_PAGE_SOFT_DIRTY ? MMP_E_SOFT_DIRTY : 0) |
	       (e & X86_PAGE_NX ? MMP_E_NOEXEC : 0);
}

static __always_inline uint64_t x86_64_entry_pfn(mmp_pte_t e, enum mmp_level level)
{
	return ((e ^ protnone_mask(e)) & X86_PTE_PFN_MASK) >> MMP_PAGE_SHIFT;
}

/*
 * The raw bit operations folio_pte_batch compares with (pte_mkold,
 * pte_mkclean, pte_clear_soft_dirty, pte_wrprotect; pte_advance_pfn).
 */
static __always_inline mmp_pte_t x86_64_pte_clear_flags(mmp_pte_t e, unsigned int f)
{
	/* One mask of @f alone: a loop clearing the same flags computes it once. */
	mmp_pte_t bits = (f & MMP_E_ACCESSED ? X86_PAGE_ACCESSED : 0) |
			 (f & MMP_E_DIRTY ? X86_PAGE_DIRTY : 0) |
			 (f & MMP_E_SOFT_DIRTY ? X86_PAGE_SOFT_DIRTY : 0) |
			 (f & MMP_E_WRITE ? X86_PAGE_RW : 0);

	return e & ~bits;
}

/* A PROT_NONE entry holds its pfn inverted (L1TF): it advances the other way. */
static __always_inline mmp_pte_t x86_64_pte_advance_pfn(mmp_pte_t e, uint64_t nr)
{
	uint64_t step = e & X86_PAGE_PRESENT ? MMP_PAGE_SIZE : -(uint64_t)MMP_PAGE_SIZE;

	return e + nr * step;
}

/*
 * Swap entries (pte_none() false, pte_present() false): the type in bits
 * 59-63, the offset inverted in bits 9-58 (L1TF: a speculative walk through
 * it reaches no real memory), P, PROTNONE (G) and PSE clear; bits 1-3 are the
 * swap soft-dirty, uffd-wp and exclusive flags, outside type and offset.
 */
#define X86_SWP_TYPE_BITS	5
#define X86_SWP_OFFSET_FIRST_BIT 9
#define X86_SWP_OFFSET_SHIFT	(X86_SWP_OFFSET_FIRST_BIT + X86_SWP_TYPE_BITS)

static __always_inline mmp_pte_t x86_64_mk_swp_entry(unsigned int type, uint64_t offset)
{
	return (~offset << X86_SWP_OFFSET_SHIFT >> X86_SWP_TYPE_BITS) |
	       (uint64_t)type << (64 - X86_SWP_TYPE_BITS);
}

static __always_inline unsigned int x86_64_swp_type(mmp_pte_t e)
{
	return e >> (64 - X86_SWP_TYPE_BITS);
}

static __always_inline uint64_t x86_64_swp_offset(mmp_pte_t e)
{
	return ~e << X86_SWP_TYPE_BITS >> X86_SWP_OFFSET_SHIFT;
}

#endif /* MMP_X86_64_FORMAT_H */
