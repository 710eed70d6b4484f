/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RISC-V page-table entries, the same in Sv39, Sv48 and Sv57: the real bit
 * layout (Svnapot included) and its static inline encode and decode, which
 * core mm compiles in (lib/format_dispatch.h) as the kernel's mm/ compiles in
 * asm/pgtable.h.
 */
#ifndef MMP_RISCV64_FORMAT_H
#define MMP_RISCV64_FORMAT_H

#include "arch.h"
#include "../shared/swp_entry.h"

#define RV_PAGE_V		(1ULL << 0)
#define RV_PAGE_R		(1ULL << 1)
#define RV_PAGE_W		(1ULL << 2)
#define RV_PAGE_X		(1ULL << 3)
#define RV_PAGE_U		(1ULL << 4)
#define RV_PAGE_G		(1ULL << 5)
#define RV_PAGE_A		(1ULL << 6)
#define RV_PAGE_D		(1ULL << 7)
#define RV_PAGE_SPECIAL	(1ULL << 8)	/* RSW bit 8 */
/* The kernel's choice: global is never set on user pages. */
#define RV_PAGE_PROT_NONE	RV_PAGE_G
#define RV_PAGE_NAPOT	(1ULL << 63)	/* Svnapot: N */
#define RV_PAGE_PFN_SHIFT	10
#define RV_PAGE_PFN_MASK	(((1ULL << 44) - 1) << RV_PAGE_PFN_SHIFT)
#define RV_PAGE_LEAF	(RV_PAGE_R | RV_PAGE_W | RV_PAGE_X)

/* Svnapot order 4 (NAPOT_CONT64KB_ORDER): 16 entries, ppn[3:0] = 1000b. */
#define NAPOT_ORDER	4
#define NAPOT_PTES	(1u << NAPOT_ORDER)
#define NAPOT_SIZE	(NAPOT_PTES * MMP_PAGE_SIZE)
#define NAPOT_MASK	(~(NAPOT_SIZE - 1))

static __always_inline uint64_t rv_ppn(mmp_pte_t pte)
{
	return (pte & RV_PAGE_PFN_MASK) >> RV_PAGE_PFN_SHIFT;
}

static __always_inline bool pte_napot(mmp_pte_t pte)
{
	return (pte & (RV_PAGE_V | RV_PAGE_NAPOT)) == (RV_PAGE_V | RV_PAGE_NAPOT);
}

/* The first pfn of a NAPOT run: its ppn with the size encoding cleared. */
static __always_inline uint64_t napot_base_pfn(mmp_pte_t pte)
{
	return rv_ppn(pte) & ~(uint64_t)(NAPOT_PTES - 1);
}

/* pte_mknapot: all 16 entries hold the same value; ppn[3:0] says the size. */
static __always_inline mmp_pte_t pte_mknapot(mmp_pte_t pte)
{
	uint64_t ppn = (rv_ppn(pte) & ~(uint64_t)(NAPOT_PTES - 1)) | (NAPOT_PTES >> 1);

	return (pte & ~RV_PAGE_PFN_MASK) | ppn << RV_PAGE_PFN_SHIFT | RV_PAGE_NAPOT;
}

static __always_inline mmp_pte_t riscv64_mk_entry(uint64_t pfn, unsigned int f, enum mmp_level level)
{
	mmp_pte_t e = (pfn << RV_PAGE_PFN_SHIFT) & RV_PAGE_PFN_MASK;

	if (f & MMP_E_TABLE)
		return e | RV_PAGE_V;
	if (f & MMP_E_PRESENT)
		e |= RV_PAGE_V;
	else if (f & MMP_E_PROTNONE)
		e |= RV_PAGE_PROT_NONE;
	/* Every user leaf is readable; write implies read (W without R is reserved). */
	e |= RV_PAGE_R;
	if (f & MMP_E_WRITE)
		e |= RV_PAGE_W;
	if (!(f & MMP_E_NOEXEC))
		e |= RV_PAGE_X;
	if (f & MMP_E_USER)
		e |= RV_PAGE_U;
	if (f & MMP_E_ACCESSED)
		e |= RV_PAGE_A;
	if (f & MMP_E_DIRTY)
		e |= RV_PAGE_D;
	if (f & MMP_E_SPECIAL)
		e |= RV_PAGE_SPECIAL;
	if (level == MMP_PTE && (f & MMP_E_CONT) && (f & MMP_E_PRESENT))
		e = pte_mknapot(e);
	return e;
}

static __always_inline unsigned int riscv64_entry_flags(mmp_pte_t e, enum mmp_level level)
{
	unsigned int f = 0;

	if (e & RV_PAGE_V) {
		f |= MMP_E_PRESENT;
		if (level > MMP_PTE && !(e & RV_PAGE_LEAF))
			return f | MMP_E_TABLE;
	} else if (e & RV_PAGE_PROT_NONE) {
		f |= MMP_E_PROTNONE;
	} else {
		return 0;
	}
	if (level > MMP_PTE)
		f |= MMP_E_LEAF;
	if (e & RV_PAGE_W)
		f |= MMP_E_WRITE;
	if (!(e & RV_PAGE_X))
		f |= MMP_E_NOEXEC;
	if (e & RV_PAGE_U)
		f |= MMP_E_USER;
	if (e & RV_PAGE_A)
		f |= MMP_E_ACCESSED;
	if (e & RV_PAGE_D)
		f |= MMP_E_DIRTY;
	if (e & RV_PAGE_SPECIAL)
		f |= MMP_E_SPECIAL;
	if (level == MMP_PTE && (e & RV_PAGE_NAPOT))
		f |= MMP_E_CONT;
	return f;
}

/* A NAPOT entry read raw names its run's first page; ptep_get gives each page's own. */
static __always_inline uint64_t riscv64_entry_pfn(mmp_pte_t e, enum mmp_level level)
{
	return level == MMP_PTE && pte_napot(e) ? napot_base_pfn(e) : rv_ppn(e);
}

/* The raw bit operations folio_pte_batch compares with (no soft-dirty bit). */
static __always_inline mmp_pte_t riscv64_pte_clear_flags(mmp_pte_t e, unsigned int f)
{
	/* One mask of @f alone: a loop clearing the same flags computes it once. */
	mmp_pte_t bits = (f & MMP_E_ACCESSED ? RV_PAGE_A : 0) | (f & MMP_E_DIRTY ? RV_PAGE_D : 0) |
			 (f & MMP_E_WRITE ? RV_PAGE_W : 0);

	return e & ~bits;
}

/* Core's entries are per page, never NAPOT-encoded: the ppn simply advances. */
static __always_inline mmp_pte_t riscv64_pte_advance_pfn(mmp_pte_t e, uint64_t nr)
{
	return e + (nr << RV_PAGE_PFN_SHIFT);
}

/*
 * Swap entries: V and R/W/X (bits 0-3) clear, bit 5 (PROT_NONE) clear, bit 6
 * exclusive, the type in bits 7-11, the offset from bit 12 up.
 */
#define RV_SWP_TYPE_SHIFT	7
#define RV_SWP_TYPE_MASK	0x1fULL
#define RV_SWP_OFFSET_SHIFT	12

DEFINE_SWP_ENTRY_OPS(riscv64, RV_SWP_TYPE_SHIFT, RV_SWP_TYPE_MASK, RV_SWP_OFFSET_SHIFT)

#endif /* MMP_RISCV64_FORMAT_H */
