/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * LoongArch64 page-table entries, from the architecture manual and the bit
 * positions Linux uses (arch/loongarch pgtable-bits): V (hardware valid, which
 * the kernel also uses as "accessed"), D (hardware dirty: a store with D clear
 * traps), PLV (privilege level, 3 for user), MAT (memory type, coherent cached
 * for ordinary memory), G/HUGE (bit 6: global in a PTE, huge in a PMD), and
 * software bits for present, write, modified (the kernel's dirty), PROT_NONE
 * and special, NR (no read) and NX (no execute) at the top.
 *
 * Accessed and dirty are software's: the TLB refill loads an entry unchanged,
 * an access to one with V clear takes a page-invalid exception, a store to one
 * with D clear a page-modify exception, and the kernel then sets V, or V, D
 * and MODIFIED. D is only ever set together with WRITE and MODIFIED.
 * A directory entry holds the next table's address alone; zero is empty at
 * every level.
 *
 * The names carry LA_: every back end's format.h is compiled into one
 * translation unit, so the kernel's own _PAGE_* names would clash.
 */
#ifndef MMP_LOONGARCH64_FORMAT_H
#define MMP_LOONGARCH64_FORMAT_H

#include "arch.h"
#include "../shared/swp_entry.h"

#define LA_PAGE_VALID		(1ULL << 0)	/* V: the TLB may use it; also "young" */
#define LA_PAGE_DIRTY		(1ULL << 1)	/* D: stores allowed without a trap */
#define LA_PAGE_PLV_USER	(3ULL << 2)	/* PLV 3 */
#define LA_PAGE_MAT_CC		(1ULL << 4)	/* MAT 1: coherent cached */
#define LA_PAGE_HUGE		(1ULL << 6)	/* in a PMD: a leaf (in a PTE: G) */
#define LA_PAGE_PRESENT		(1ULL << 7)	/* software */
#define LA_PAGE_WRITE		(1ULL << 8)	/* software: the mapping is writable */
#define LA_PAGE_MODIFIED	(1ULL << 9)	/* software: pte_dirty() */
#define LA_PAGE_PROTNONE	(1ULL << 10)	/* software */
#define LA_PAGE_SPECIAL		(1ULL << 11)	/* software */
#define LA_PAGE_PFN_SHIFT	12
#define LA_PAGE_PFN_MASK	(((1ULL << 48) - 1) & ~((1ULL << LA_PAGE_PFN_SHIFT) - 1))
#define LA_PAGE_NO_READ		(1ULL << 61)	/* NR */
#define LA_PAGE_NO_EXEC		(1ULL << 62)	/* NX */

static __always_inline mmp_pte_t loongarch64_mk_entry(uint64_t pfn, unsigned int f,
						      enum mmp_level level)
{
	mmp_pte_t e = (pfn << LA_PAGE_PFN_SHIFT) & LA_PAGE_PFN_MASK;

	/* A directory entry is the next table's address and nothing else. */
	if (f & MMP_E_TABLE)
		return e;
	if (f & MMP_E_PRESENT)
		e |= LA_PAGE_PRESENT;
	else if (f & MMP_E_PROTNONE)
		e |= LA_PAGE_PROTNONE | LA_PAGE_NO_READ;	/* PAGE_NONE */
	e |= LA_PAGE_MAT_CC;
	if (level > MMP_PTE)
		e |= LA_PAGE_HUGE;
	if (f & MMP_E_USER)
		e |= LA_PAGE_PLV_USER;
	/* Young is V; a PROT_NONE entry may be young too: NR still makes it trap. */
	if (f & MMP_E_ACCESSED)
		e |= LA_PAGE_VALID;
	if (f & MMP_E_WRITE)
		e |= LA_PAGE_WRITE;
	if (f & MMP_E_DIRTY)
		e |= LA_PAGE_MODIFIED;
	/* pte_mkdirty, pte_mkwrite: hardware D exactly on a writable, modified entry. */
	if ((f & (MMP_E_WRITE | MMP_E_DIRTY)) == (MMP_E_WRITE | MMP_E_DIRTY))
		e |= LA_PAGE_DIRTY;
	if (f & MMP_E_NOEXEC)
		e |= LA_PAGE_NO_EXEC;
	if (f & MMP_E_SPECIAL)
		e |= LA_PAGE_SPECIAL;
	return e;
}

static __always_inline unsigned int loongarch64_entry_flags(mmp_pte_t e, enum mmp_level level)
{
	unsigned int f = 0;

	if (!e)
		return 0;
	if (level > MMP_PTE && !(e & LA_PAGE_HUGE))
		return MMP_E_PRESENT | MMP_E_TABLE;
	if (e & LA_PAGE_PRESENT)
		f |= MMP_E_PRESENT;
	else if (e & LA_PAGE_PROTNONE)
		f |= MMP_E_PROTNONE;
	else
		return 0;
	if (level > MMP_PTE)
		f |= MMP_E_LEAF;
	if ((e & LA_PAGE_PLV_USER) == LA_PAGE_PLV_USER)
		f |= MMP_E_USER;
	if (e & LA_PAGE_VALID)
		f |= MMP_E_ACCESSED;
	if (e & LA_PAGE_WRITE)
		f |= MMP_E_WRITE;
	if (e & LA_PAGE_MODIFIED)
		f |= MMP_E_DIRTY;
	if (e & LA_PAGE_NO_EXEC)
		f |= MMP_E_NOEXEC;
	if (e & LA_PAGE_SPECIAL)
		f |= MMP_E_SPECIAL;
	return f;
}

static __always_inline uint64_t loongarch64_entry_pfn(mmp_pte_t e, enum mmp_level level)
{
	return (e & LA_PAGE_PFN_MASK) >> LA_PAGE_PFN_SHIFT;
}

/*
 * The raw bit operations folio_pte_batch compares with (no soft-dirty bit):
 * old clears V (pte_mkold); clean clears MODIFIED and D (pte_mkclean);
 * write-protect clears WRITE and D (pte_wrprotect), so a write-protected dirty
 * entry stays dirty but traps on a store.
 */
static __always_inline mmp_pte_t loongarch64_pte_clear_flags(mmp_pte_t e, unsigned int f)
{
	mmp_pte_t bits = (f & MMP_E_ACCESSED ? LA_PAGE_VALID : 0) |
			 (f & MMP_E_DIRTY ? LA_PAGE_MODIFIED | LA_PAGE_DIRTY : 0) |
			 (f & MMP_E_WRITE ? LA_PAGE_WRITE | LA_PAGE_DIRTY : 0);

	return e & ~bits;
}

static __always_inline mmp_pte_t loongarch64_pte_advance_pfn(mmp_pte_t e, uint64_t nr)
{
	return e + (nr << LA_PAGE_PFN_SHIFT);
}

/*
 * Swap entries: bits 0-15 clear (PRESENT and PROTNONE among them), the type
 * in bits 16-22, bit 23 exclusive, the offset from bit 24 up.
 */
#define LA_SWP_TYPE_SHIFT	16
#define LA_SWP_TYPE_MASK	0x7fULL
#define LA_SWP_OFFSET_SHIFT	24

DEFINE_SWP_ENTRY_OPS(loongarch64, LA_SWP_TYPE_SHIFT, LA_SWP_TYPE_MASK, LA_SWP_OFFSET_SHIFT)

#endif /* MMP_LOONGARCH64_FORMAT_H */
