/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Page-table entry bits as the architecture manuals and the kernel's software
 * bits define them, for tests only, and on purpose independent of the back
 * ends' own headers: tests that check a back end against these catch a bit in
 * the wrong place.
 *
 * Sources: Intel SDM vol. 3A 4.5 (4-level paging, tables 4-15..4-20) and the
 * kernel's arch/x86/include/asm/pgtable_types.h software bits; Arm ARM D8.3
 * (VMSAv8-64 descriptors, 4 KiB granule) and arch/arm64/include/asm/
 * pgtable-prot.h; RISC-V privileged spec 10.5 (Sv48) and 11 (Svnapot).
 */
#ifndef MMP_TESTS_ARCH_BITS_H
#define MMP_TESTS_ARCH_BITS_H

#include <stdint.h>

#define BIT(n)	(1ULL << (n))

/* x86-64 4-level paging. */
#define X86_P		BIT(0)
#define X86_RW		BIT(1)
#define X86_US		BIT(2)
#define X86_A		BIT(5)
#define X86_D		BIT(6)
#define X86_PS		BIT(7)	/* leaf at PMD level (2 MiB page) */
#define X86_G		BIT(8)	/* the kernel's _PAGE_PROTNONE when P is clear */
#define X86_SW1		BIT(9)	/* _PAGE_SPECIAL */
#define X86_SW3		BIT(11)	/* _PAGE_SOFT_DIRTY */
#define X86_NX		BIT(63)
#define X86_ADDR(pfn)	((uint64_t)(pfn) << 12)	/* bits 12-51 */
/* L1TF: a PROT_NONE entry stores its address bits inverted (bits 12-51). */
#define X86_INV(pfn)	(~X86_ADDR(pfn) & 0x000ffffffffff000ULL)

/* arm64 VMSAv8-64 stage 1, 4 KiB granule. */
#define A64_VALID	BIT(0)
#define A64_TABLE_PAGE	BIT(1)	/* table above level 3, page at level 3; clear: block */
#define A64_AP1_USER	BIT(6)
#define A64_AP2_RDONLY	BIT(7)
#define A64_SH_INNER	(BIT(8) | BIT(9))
#define A64_AF		BIT(10)
#define A64_NG		BIT(11)	/* also PTE_PRESENT_INVALID when VALID is clear */
#define A64_DBM		BIT(51)	/* the kernel's PTE_WRITE */
#define A64_CONT	BIT(52)
#define A64_PXN		BIT(53)
#define A64_UXN		BIT(54)
#define A64_SW_DIRTY	BIT(55)	/* PTE_DIRTY */
#define A64_SW_SPECIAL	BIT(56)	/* PTE_SPECIAL */
#define A64_OA(pfn)	((uint64_t)(pfn) << 12)	/* bits 12-47 */
/* Every user leaf the kernel writes: inner shareable, not global, never kernel-executable. */
#define A64_USER_BASE	(A64_SH_INNER | A64_NG | A64_PXN)

/* RISC-V Sv48. */
#define RV_V		BIT(0)
#define RV_R		BIT(1)
#define RV_W		BIT(2)
#define RV_X		BIT(3)
#define RV_U		BIT(4)
#define RV_G		BIT(5)	/* the kernel's _PAGE_PROT_NONE when V is clear */
#define RV_A		BIT(6)
#define RV_D		BIT(7)
#define RV_RSW0		BIT(8)	/* _PAGE_SPECIAL */
#define RV_N		BIT(63)	/* Svnapot */
#define RV_PPN(pfn)	((uint64_t)(pfn) << 10)	/* bits 10-53 */
#define A64_CONT_PTES	16	/* entries in a contiguous run, 4 KiB granule */

static inline uint64_t a64_pfn(uint64_t desc)
{
	return (desc & 0x0000fffffffff000ULL) >> 12;
}

#endif /* MMP_TESTS_ARCH_BITS_H */
