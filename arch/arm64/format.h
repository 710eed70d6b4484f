/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64 page-table entries (4 KiB granule, any number of levels): the real bit
 * layout and its static inline encode and decode, which core mm compiles in
 * (lib/format_dispatch.h) as the kernel's mm/ compiles in asm/pgtable.h.
 */
#ifndef MMP_ARM64_FORMAT_H
#define MMP_ARM64_FORMAT_H

#include "arch.h"

#define PTE_VALID	(1ULL << 0)
#define PTE_TYPE_BIT	(1ULL << 1)	/* page at level 3, table above; clear: block */
#define PTE_USER	(1ULL << 6)	/* AP[1] */
#define PTE_RDONLY	(1ULL << 7)	/* AP[2] */
#define PTE_SHARED	(3ULL << 8)	/* inner shareable */
#define PTE_AF		(1ULL << 10)
#define PTE_NG		(1ULL << 11)
#define PTE_ADDR_MASK	0x0000fffffffff000ULL
#define PTE_DBM		(1ULL << 51)	/* hardware dirty bit modifier: PTE_WRITE */
#define PTE_CONT	(1ULL << 52)
#define PTE_PXN		(1ULL << 53)
#define PTE_UXN		(1ULL << 54)
/* Software bits. */
#define PTE_DIRTY	(1ULL << 55)
#define PTE_SPECIAL	(1ULL << 56)
/*
 * Without PTE_VALID, nG (set on every user entry) says "present to software":
 * PROT_NONE, or a PMD made invalid for a split. The kernel's
 * PTE_PRESENT_INVALID since 6.10; bit 58 (PTE_PROT_NONE) before.
 */
#define PTE_PRESENT_INVALID	PTE_NG
#define PTE_WRITE	PTE_DBM

static __always_inline uint64_t arm64_pte_pfn(mmp_pte_t pte)
{
	return (pte & PTE_ADDR_MASK) >> MMP_PAGE_SHIFT;
}

static __always_inline bool pte_valid_cont(mmp_pte_t pte)
{
	return (pte & (PTE_VALID | PTE_CONT)) == (PTE_VALID | PTE_CONT);
}

static __always_inline bool arm64_pte_dirty(mmp_pte_t pte)
{
	return (pte & PTE_DIRTY) || ((pte & PTE_DBM) && !(pte & PTE_RDONLY));
}

static __always_inline mmp_pte_t arm64_pte_mkdirty(mmp_pte_t pte)
{
	pte |= PTE_DIRTY;
	return pte & PTE_WRITE ? pte & ~PTE_RDONLY : pte;
}

static __always_inline mmp_pte_t arm64_mk_entry(uint64_t pfn, unsigned int f, enum mmp_level level)
{
	mmp_pte_t e = (pfn << MMP_PAGE_SHIFT) & PTE_ADDR_MASK;

	if (f & MMP_E_TABLE)
		return e | PTE_VALID | PTE_TYPE_BIT;
	e |= PTE_SHARED | PTE_NG | PTE_PXN;
	if (level == MMP_PTE)
		e |= PTE_TYPE_BIT;
	if (f & MMP_E_PRESENT)
		e |= PTE_VALID;
	else if (f & MMP_E_PROTNONE)
		e |= PTE_PRESENT_INVALID;
	if (f & MMP_E_USER)
		e |= PTE_USER;
	if (f & MMP_E_ACCESSED)
		e |= PTE_AF;
	if (f & MMP_E_NOEXEC)
		e |= PTE_UXN;
	if (f & MMP_E_SPECIAL)
		e |= PTE_SPECIAL;
	/* Contiguous pages, and level 2 blocks (hugetlb's CONT_PMD): the same bit. */
	if (level <= MMP_PMD && (f & MMP_E_CONT))
		e |= PTE_CONT;
	/* pte_mkwrite / pte_mkdirty: writable and dirty is DBM with AP[2] clear. */
	e |= PTE_RDONLY;
	if (f & MMP_E_WRITE)
		e |= PTE_WRITE;
	if (f & MMP_E_DIRTY)
		e = arm64_pte_mkdirty(e);
	return e;
}

static __always_inline unsigned int arm64_entry_flags(mmp_pte_t e, enum mmp_level level)
{
	bool valid = e & PTE_VALID;

	/* Neither valid nor PROT_NONE (none, or a swap entry): no flags at all. */
	if (!valid && !(e & PTE_PRESENT_INVALID))
		return 0;
	if (valid && level > MMP_PTE && (e & PTE_TYPE_BIT))
		return MMP_E_PRESENT | MMP_E_TABLE;
	/*
	 * One expression of independent bits: a caller testing some of them
	 * (entry_test) lets the compiler drop the rest.
	 */
	return (valid ? MMP_E_PRESENT : MMP_E_PROTNONE) |
	       (level > MMP_PTE ? MMP_E_LEAF : 0) |
	       (e & PTE_USER ? MMP_E_USER : 0) |
	       (e & PTE_AF ? MMP_E_ACCESSED : 0) |
	       (e & PTE_WRITE ? MMP_E_WRITE : 0) |
	       (arm64_pte_dirty(e) ? MMP_E_DIRTY : 0) |
	       (e & PTE_SPECIAL ? MMP_E_SPECIAL : 0) |
	       (e & PTE_UXN ? MMP_E_NOEXEC : 0) |
	       (level <= MMP_PMD && (e & PTE_CONT) ? MMP_E_CONT : 0);
}

static __always_inline uint64_t arm64_entry_pfn(mmp_pte_t e, enum mmp_level level)
{
	return arm64_pte_pfn(e);
}

/*
 * The raw bit operations folio_pte_batch compares with. pte_wrprotect keeps a
 * hardware-dirty entry dirty in the software bit; pte_mkclean clears both
 * kinds of dirty. No soft-dirty bit on arm64.
 */
static __always_inline mmp_pte_t arm64_pte_clear_flags(mmp_pte_t e, unsigned int f)
{
	if (f & MMP_E_WRITE) {
		if ((e & PTE_DBM) && !(e & PTE_RDONLY))
			e |= PTE_DIRTY;
		e = (e & ~PTE_WRITE) | PTE_RDONLY;
	}
	if (f & MMP_E_DIRTY)
		e = (e & ~PTE_DIRTY) | PTE_RDONLY;
	if (f & MMP_E_ACCESSED)
		e &= ~PTE_AF;
	return e;
}

static __always_inline mmp_pte_t arm64_pte_advance_pfn(mmp_pte_t e, uint64_t nr)
{
	return e + (nr << MMP_PAGE_SHIFT);
}

/*
 * Swap entries: bits 0-1 clear (not valid), bit 2 exclusive, bit 3 uffd-wp,
 * the type in bits 6-10, bit 11 (PTE_PRESENT_INVALID) clear, the offset in
 * bits 12-61.
 */
#define ARM64_SWP_TYPE_SHIFT	6
#define ARM64_SWP_TYPE_MASK	0x1fULL
#define ARM64_SWP_OFFSET_SHIFT	12
#define ARM64_SWP_OFFSET_MASK	((1ULL << 50) - 1)

static __always_inline mmp_pte_t arm64_mk_swp_entry(unsigned int type, uint64_t offset)
{
	return ((type & ARM64_SWP_TYPE_MASK) << ARM64_SWP_TYPE_SHIFT) |
	       (offset & ARM64_SWP_OFFSET_MASK) << ARM64_SWP_OFFSET_SHIFT;
}

static __always_inline unsigned int arm64_swp_type(mmp_pte_t e)
{
	return (e >> ARM64_SWP_TYPE_SHIFT) & ARM64_SWP_TYPE_MASK;
}

static __always_inline uint64_t arm64_swp_offset(mmp_pte_t e)
{
	return (e >> ARM64_SWP_OFFSET_SHIFT) & ARM64_SWP_OFFSET_MASK;
}

#endif /* MMP_ARM64_FORMAT_H */
