/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64 page-table entries (4 KiB granule, any number of levels): the real bit
 * layout and its static inline encode and decode, which core mm compiles in
 * (lib/format_dispatch.h) as the kernel's mm/ compiles in asm/pgtable.h.
 */
#ifndef MMP_ARM64_FORMAT_H
#define MMP_ARM64_FORMAT_H

#include "arch.h"

#define ARM64_PTE_VALID	(1ULL << 0)
#define ARM64_PTE_TYPE_BIT	(1ULL << 1)	/* page at level 3, table above; clear: a block */
#define ARM64_PTE_USER	(1ULL << 6)	/* AP[1] */
#define ARM64_PTE_RDONLY	(1ULL << 7)	/* AP[2] */
#define ARM64_PTE_SHARED	(3ULL << 8)	/* inner shareable */
#define ARM64_PTE_AF		(1ULL << 10)
#define ARM64_PTE_NG		(1ULL << 11)
#define ARM64_PTE_ADDR_MASK	0x0000fffffffff000ULL
#define ARM64_PTE_DBM		(1ULL << 51)	/* dirty bit modifier: the kernel's PTE_WRITE */
#define ARM64_PTE_CONT	(1ULL << 52)
#define ARM64_PTE_PXN		(1ULL << 53)
#define ARM64_PTE_UXN		(1ULL << 54)
/* Software bits. */
#define ARM64_PTE_DIRTY	(1ULL << 55)
#define ARM64_PTE_SPECIAL	(1ULL << 56)
/*
 * Without ARM64_PTE_VALID, nG (set on every user entry) says "present to software":
 * PROT_NONE, or a PMD made invalid for a split. The kernel's
 * ARM64_PTE_PRESENT_INVALID since 6.10; bit 58 (ARM64_PTE_PROT_NONE) before.
 */
#define ARM64_PTE_PRESENT_INVALID	ARM64_PTE_NG
#define ARM64_PTE_WRITE	ARM64_PTE_DBM

static __always_inline uint64_t arm64_pte_pfn(mmp_pte_t pte)
{
	return (pte & ARM64_PTE_ADDR_MASK) >> MMP_PAGE_SHIFT;
}

static __always_inline bool pte_valid_cont(mmp_pte_t pte)
{
	return (pte & (ARM64_PTE_VALID | ARM64_PTE_CONT)) == (ARM64_PTE_VALID | ARM64_PTE_CONT);
}

static __always_inline bool arm64_pte_dirty(mmp_pte_t pte)
{
	return (pte & ARM64_PTE_DIRTY) || ((pte & ARM64_PTE_DBM) && !(pte & ARM64_PTE_RDONLY));
}

static __always_inline mmp_pte_t arm64_pte_mkdirty(mmp_pte_t pte)
{
	pte |= ARM64_PTE_DIRTY;
	return pte & ARM64_PTE_WRITE ? pte & ~ARM64_PTE_RDONLY : pte;
}

static __always_inline mmp_pte_t arm64_mk_entry(uint64_t pfn, unsigned int f, enum mmp_level level)
{
	mmp_pte_t e = (pfn << MMP_PAGE_SHIFT) & ARM64_PTE_ADDR_MASK;

	if (f & MMP_E_TABLE)
		return e | ARM64_PTE_VALID | ARM64_PTE_TYPE_BIT;
	e |= ARM64_PTE_SHARED | ARM64_PTE_NG | ARM64_PTE_PXN;
	if (level == MMP_PTE)
		e |= ARM64_PTE_TYPE_BIT;
	if (f & MMP_E_PRESENT)
		e |= ARM64_PTE_VALID;
	else if (f & MMP_E_PROTNONE)
		e |= ARM64_PTE_PRESENT_INVALID;
	if (f & MMP_E_USER)
		e |= ARM64_PTE_USER;
	if (f & MMP_E_ACCESSED)
		e |= ARM64_PTE_AF;
	if (f & MMP_E_NOEXEC)
		e |= ARM64_PTE_UXN;
	if (f & MMP_E_SPECIAL)
		e |= ARM64_PTE_SPECIAL;
	/* Contiguous pages, and level 2 blocks (hugetlb's CONT_PMD): the same bit. */
	if (level <= MMP_PMD && (f & MMP_E_CONT))
		e |= ARM64_PTE_CONT;
	/* pte_mkwrite / pte_mkdirty: writable and dirty is DBM with AP[2] clear. */
	e |= ARM64_PTE_RDONLY;
	if (f & MMP_E_WRITE)
		e |= ARM64_PTE_WRITE;
	if (f & MMP_E_DIRTY)
		e = arm64_pte_mkdirty(e);
	return e;
}

static __always_inline unsigned int arm64_entry_flags(mmp_pte_t e, enum mmp_level level)
{
	bool valid = e & ARM64_PTE_VALID;

	/* Neither valid nor PROT_NONE (none, or a swap entry): no flags at all. */
	if (!valid && !(e & ARM64_PTE_PRESENT_INVALID))
		return 0;
	if (valid && level > MMP_PTE && (e & ARM64_PTE_TYPE_BIT))
		return MMP_E_PRESENT | MMP_E_TABLE;
	/*
	 * One expression of independent bits: a caller testing some of them
	 * (entry_test) lets the compiler drop the rest.
	 */
	return (valid ? MMP_E_PRESENT : MMP_E_PROTNONE) |
	       (level > MMP_PTE ? MMP_E_LEAF : 0) |
	       (e & ARM64_PTE_USER ? MMP_E_USER : 0) |
	       (e & ARM64_PTE_AF ? MMP_E_ACCESSED : 0) |
	       (e & ARM64_PTE_WRITE ? MMP_E_WRITE : 0) |
	       (arm64_pte_dirty(e) ? MMP_E_DIRTY : 0) |
	       (e & ARM64_PTE_SPECIAL ? MMP_E_SPECIAL : 0) |
	       (e & ARM64_PTE_UXN ? MMP_E_NOEXEC : 0) |
	       (level <= MMP_PMD && (e & ARM64_PTE_CONT) ? MMP_E_CONT : 0);
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
		if ((e & ARM64_PTE_DBM) && !(e & ARM64_PTE_RDONLY))
			e |= ARM64_PTE_DIRTY;
		e = (e & ~ARM64_PTE_WRITE) | ARM64_PTE_RDONLY;
	}
	if (f & MMP_E_DIRTY)
		e = (e & ~ARM64_PTE_DIRTY) | ARM64_PTE_RDONLY;
	if (f & MMP_E_ACCESSED)
		e &= ~ARM64_PTE_AF;
	return e;
}

static __always_inline mmp_pte_t arm64_pte_advance_pfn(mmp_pte_t e, uint64_t nr)
{
	return e + (nr << MMP_PAGE_SHIFT);
}

/*
 * Swap entries: bits 0-1 clear (not valid), bit 2 exclusive, bit 3 uffd-wp,
 * the type in bits 6-10, bit 11 (ARM64_PTE_PRESENT_INVALID) clear, the offset in
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
