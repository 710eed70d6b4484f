/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Page-table entry bits as the architecture manuals and the kernel's software
 * bits define them, for tests only, and on purpose independent of the back
 * ends' own headers: tests that check a back end against these catch a bit in
 * the wrong place. Below the bits, the rules of the flag-changing entry
 * operations (pte_wrprotect, pte_mkclean, ..., mprotect's pte_modify) in
 * terms of those bits, keyed by entry format.
 *
 * Sources: Intel SDM vol. 3A 4.5 (4-level paging, tables 4-15..4-20) and the
 * kernel's arch/x86/include/asm/pgtable_types.h software bits; Arm ARM D8.3
 * (VMSAv8-64 descriptors, 4 KiB granule) and arch/arm64/include/asm/
 * pgtable-prot.h; RISC-V privileged spec 10.5 (Sv48) and 11 (Svnapot). The
 * operations: each architecture's asm/pgtable.h (pte_wrprotect, pte_mkclean,
 * pte_mkdirty, pte_mkwrite_novma, pte_modify) and its protection_map entries
 * (PAGE_NONE, PAGE_READONLY or PAGE_READ, PAGE_COPY, ..._EXEC), Linux 6.18.
 */
#ifndef MMP_TESTS_ARCH_BITS_H
#define MMP_TESTS_ARCH_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* enum mmp_format, and the neutral flags the generic format stores as they are. */
#include "arch.h"

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

/* LoongArch64 (the manual's PTE; Linux's software bits in pgtable-bits.h). */
#define LA_V		BIT(0)	/* valid; the kernel's _PAGE_ACCESSED */
#define LA_D		BIT(1)	/* hardware dirty: stores without a page-modify trap */
#define LA_PLV3		(BIT(2) | BIT(3))	/* privilege level 3: user */
#define LA_CC		BIT(4)	/* MAT 1: coherent cached */
#define LA_HUGE		BIT(6)	/* in a PMD: a huge page (in a PTE: G) */
#define LA_P		BIT(7)	/* _PAGE_PRESENT */
#define LA_W		BIT(8)	/* _PAGE_WRITE */
#define LA_M		BIT(9)	/* _PAGE_MODIFIED: pte_dirty() */
#define LA_PN		BIT(10)	/* _PAGE_PROTNONE */
#define LA_SP		BIT(11)	/* _PAGE_SPECIAL */
#define LA_NR		BIT(61)	/* no read */
#define LA_NX		BIT(62)	/* no execute */
#define LA_PFN(pfn)	((uint64_t)(pfn) << 12)	/* bits 12-47 */

static inline uint64_t a64_pfn(uint64_t desc)
{
	return (desc & 0x0000fffffffff000ULL) >> 12;
}

/* ---- the entry operations, by the manuals' bits ------------------------------------- */

/*
 * The operations that change the flags of one leaf entry, by the kernel's
 * names. tests/arch/test_format_kat.c applies the library's own (pte_clear_flags,
 * pte_set_flags, entry_set_flags, the table operations, mprotect) to entries
 * built from the bits above and compares the raw result with the rules below.
 */
enum kat_op {
	KAT_WRPROTECT,		/* pte_wrprotect */
	KAT_MKCLEAN,		/* pte_mkclean */
	KAT_MKOLD,		/* pte_mkold */
	KAT_CLEAR_SOFT_DIRTY,	/* pte_clear_soft_dirty */
	KAT_MKYOUNG,		/* pte_mkyoung */
	KAT_MKDIRTY,		/* pte_mkdirty */
	KAT_MKWRITE,		/* pte_mkwrite_novma */
	KAT_MKSPECIAL,		/* pte_mkspecial */
	KAT_NR_OPS,
};

/* mprotect's protections of a private anonymous mapping. */
enum kat_prot {
	KAT_PROT_NONE,
	KAT_PROT_R,
	KAT_PROT_RW,
	KAT_PROT_RX,
	KAT_PROT_RWX,
	KAT_NR_PROTS,
};

static inline bool kat_prot_write(enum kat_prot p)
{
	return p == KAT_PROT_RW || p == KAT_PROT_RWX;
}

/*
 * Where the library's model knowingly differs from the kernel, a rule takes
 * @model: true gives what the library means to do, false what the kernel
 * does. The test requires the first and reports the second as a TAP TODO,
 * which turns into a failure (an unexpected pass) once the library does what
 * the kernel does, and the difference should go from here. Each place is
 * commented where it is; a format's same() allows what only differs in bits
 * that say nothing more (arm64's software dirty bit on a hardware-dirty
 * entry), and the kernel's exact bits are a TODO there too.
 */

/*
 * x86-64: each operation sets or clears one bit. pte_wrprotect keeps D:
 * only with user shadow stacks (X86_FEATURE_USER_SHSTK) does it move D to
 * SavedDirty (bit 58), so that Write=0,Dirty=1 never reads as a shadow-stack
 * page; the library models CPUs without them.
 */
static inline uint64_t x86_kat_op(uint64_t e, enum kat_op op, bool model)
{
	switch (op) {
	case KAT_WRPROTECT:
		return e & ~X86_RW;
	case KAT_MKCLEAN:
		return e & ~X86_D;
	case KAT_MKOLD:
		return e & ~X86_A;
	case KAT_CLEAR_SOFT_DIRTY:
		return e & ~X86_SW3;
	case KAT_MKYOUNG:
		return e | X86_A;
	case KAT_MKDIRTY:
		/*
		 * The kernel's pte_mkdirty sets _PAGE_SOFT_DIRTY with D
		 * (CONFIG_MEM_SOFT_DIRTY, which the library models: mremap
		 * sets it); the library's pte_set_flags sets D alone.
		 */
		return e | X86_D | (model ? 0 : X86_SW3);
	case KAT_MKWRITE:
		return e | X86_RW;
	case KAT_MKSPECIAL:
		return e | X86_SW1;
	default:
		return e;
	}
}

#define X86_ADDR_MASK	0x000ffffffffff000ULL

/* L1TF: an entry not present but not empty (PROT_NONE) holds its address inverted. */
static inline bool x86_inverted(uint64_t e)
{
	return e && !(e & X86_P);
}

/*
 * pte_modify keeps _PAGE_CHG_MASK (the address, A, D, soft-dirty, special)
 * and takes the rest from the protection: PAGE_NONE (G, the PROTNONE bit),
 * PAGE_READONLY and PAGE_COPY (P, US, NX), their _EXEC forms (P, US). When
 * the entry turns PROT_NONE or back, the address is inverted
 * (flip_protnone_guard). mprotect then makes an exclusive anonymous page
 * writable (pte_mkwrite) where the protection allows writes.
 */
static inline uint64_t x86_kat_modify(uint64_t e, enum kat_prot p, bool exclusive, bool model)
{
	const uint64_t chg = X86_ADDR_MASK | X86_SW1 | X86_A | X86_D | X86_SW3;
	uint64_t n;

	switch (p) {
	case KAT_PROT_NONE:
		n = X86_G;
		/* The library keeps US and sets NX on PROT_NONE; PAGE_NONE has neither. */
		if (model)
			n |= (e & X86_US) | X86_NX;
		break;
	case KAT_PROT_R:
	case KAT_PROT_RW:
		n = X86_P | X86_US | X86_NX;
		break;
	default:
		n = X86_P | X86_US;
		break;
	}
	n |= e & chg;
	if (x86_inverted(e) != x86_inverted(n))
		n ^= X86_ADDR_MASK;
	if (exclusive && kat_prot_write(p))
		n = x86_kat_op(n, KAT_MKWRITE, model);
	return n;
}

static inline uint64_t x86_kat_compose(uint64_t bits, uint64_t pfn)
{
	return bits | (x86_inverted(bits) ? X86_INV(pfn) : X86_ADDR(pfn));
}

static inline uint64_t x86_kat_pfn(uint64_t e)
{
	return ((x86_inverted(e) ? ~e : e) & X86_ADDR_MASK) >> 12;
}

static inline bool x86_kat_young(uint64_t e)
{
	return e & X86_A;
}

/*
 * arm64 keeps "writable" in DBM and "hardware dirty" as AP[2] clear on a DBM
 * entry, which is what makes the page writable to the MMU; the software bit
 * PTE_DIRTY keeps dirtiness while AP[2] is set.
 */
static inline bool a64_hw_dirty(uint64_t e)
{
	return (e & A64_DBM) && !(e & A64_AP2_RDONLY);
}

static inline uint64_t a64_kat_op(uint64_t e, enum kat_op op, bool model)
{
	switch (op) {
	case KAT_WRPROTECT:
		/* AP[2] set and DBM clear; hardware dirtiness moves to the software bit. */
		if (a64_hw_dirty(e))
			e |= A64_SW_DIRTY;
		return (e & ~A64_DBM) | A64_AP2_RDONLY;
	case KAT_MKCLEAN:
		/* Neither kind of dirty: the software bit clear, AP[2] set. */
		return (e & ~A64_SW_DIRTY) | A64_AP2_RDONLY;
	case KAT_MKOLD:
		return e & ~A64_AF;
	case KAT_MKYOUNG:
		return e | A64_AF;
	case KAT_MKDIRTY:
		/* The software bit, and AP[2] clear when writable. */
		e |= A64_SW_DIRTY;
		return e & A64_DBM ? e & ~A64_AP2_RDONLY : e;
	case KAT_MKWRITE:
		/* DBM; AP[2] cleared only if dirty: a clean page stays read-only to the MMU. */
		e |= A64_DBM;
		return e & A64_SW_DIRTY ? e & ~A64_AP2_RDONLY : e;
	case KAT_MKSPECIAL:
		return e | A64_SW_SPECIAL;
	default:
		return e;	/* no soft-dirty bit */
	}
}

/*
 * pte_modify takes AP[1], PXN, UXN, AP[2], PTE_PRESENT_INVALID (nG), VALID and
 * DBM from the protection and keeps the rest, hardware dirtiness saved in the
 * software bit first and restored after (pte_mkdirty). PAGE_NONE: AP[2], nG,
 * PXN, UXN, no VALID; PAGE_READONLY (and PAGE_COPY): VALID, AP[1], AP[2], nG,
 * PXN, UXN; PAGE_READONLY_EXEC: the same without UXN.
 */
static inline uint64_t a64_kat_modify(uint64_t e, enum kat_prot p, bool exclusive, bool model)
{
	const uint64_t mask = A64_AP1_USER | A64_PXN | A64_UXN | A64_AP2_RDONLY | A64_NG |
			      A64_VALID | A64_DBM;
	uint64_t n;

	switch (p) {
	case KAT_PROT_NONE:
		n = A64_AP2_RDONLY | A64_NG | A64_PXN | A64_UXN;
		/* The library keeps AP[1] on a PROT_NONE entry; PAGE_NONE has it clear. */
		if (model)
			n |= e & A64_AP1_USER;
		break;
	case KAT_PROT_R:
	case KAT_PROT_RW:
		n = A64_VALID | A64_AP1_USER | A64_AP2_RDONLY | A64_NG | A64_PXN | A64_UXN;
		break;
	default:
		n = A64_VALID | A64_AP1_USER | A64_AP2_RDONLY | A64_NG | A64_PXN;
		break;
	}
	if (a64_hw_dirty(e))
		e |= A64_SW_DIRTY;
	n |= e & ~mask;
	if (n & A64_SW_DIRTY)
		n = a64_kat_op(n, KAT_MKDIRTY, model);
	if (exclusive && kat_prot_write(p))
		n = a64_kat_op(n, KAT_MKWRITE, model);
	return n;
}

/*
 * The library writes a dirty entry with both kinds of dirty whenever it
 * encodes one (decode and encode again: entry_set_flags, ptep_modify, a
 * mprotect that changes the flags) and leaves an entry alone when its flags
 * do not change; the kernel's operations set PTE_DIRTY only where
 * pte_mkdirty, pte_wrprotect or pte_modify put it. On a hardware-dirty entry
 * PTE_DIRTY says nothing more (pte_dirty is true either way, and every
 * operation that ends hardware dirtiness saves it first), so such entries
 * are the same; the kernel's exact bits are a TODO.
 */
static inline bool a64_kat_same(uint64_t got, uint64_t want)
{
	return got == want ||
	       ((got ^ want) == A64_SW_DIRTY && a64_hw_dirty(got) && a64_hw_dirty(want));
}

static inline uint64_t a64_kat_compose(uint64_t bits, uint64_t pfn)
{
	return bits | A64_OA(pfn);
}

static inline uint64_t a64_kat_pfn(uint64_t e)
{
	return a64_pfn(e);
}

static inline bool a64_kat_young(uint64_t e)
{
	return e & A64_AF;
}

/* RISC-V: each operation sets or clears one bit (W 2, A 6, D 7, RSW bit 8). */
static inline uint64_t rv_kat_op(uint64_t e, enum kat_op op, bool model)
{
	switch (op) {
	case KAT_WRPROTECT:
		return e & ~RV_W;
	case KAT_MKCLEAN:
		return e & ~RV_D;
	case KAT_MKOLD:
		return e & ~RV_A;
	case KAT_MKYOUNG:
		return e | RV_A;
	case KAT_MKDIRTY:
		return e | RV_D;
	case KAT_MKWRITE:
		return e | RV_W;
	case KAT_MKSPECIAL:
		return e | RV_RSW0;
	default:
		return e;	/* no soft-dirty bit */
	}
}

/*
 * pte_modify keeps all but V, R, W, X, U and G (_PAGE_CHG_MASK) and ORs in
 * the protection: PAGE_NONE is G (the kernel's PROT_NONE bit) and R;
 * PAGE_READ (and PAGE_COPY) V, A, U, R; PAGE_READ_EXEC adds X. The A of
 * _PAGE_BASE makes every accessible entry young.
 */
static inline uint64_t rv_kat_modify(uint64_t e, enum kat_prot p, bool exclusive, bool model)
{
	const uint64_t chg = ~(RV_V | RV_R | RV_W | RV_X | RV_U | RV_G);
	uint64_t n;

	switch (p) {
	case KAT_PROT_NONE:
		n = RV_G | RV_R;
		/* The library keeps U on a PROT_NONE entry; PAGE_NONE has it clear. */
		if (model)
			n |= e & RV_U;
		break;
	case KAT_PROT_R:
	case KAT_PROT_RW:
		n = RV_V | RV_A | RV_U | RV_R;
		break;
	default:
		n = RV_V | RV_A | RV_U | RV_R | RV_X;
		break;
	}
	/* The library keeps the entry's A; the kernel's protection sets it. */
	if (model && p != KAT_PROT_NONE)
		n &= ~RV_A;
	n |= e & chg;
	if (exclusive && kat_prot_write(p))
		n = rv_kat_op(n, KAT_MKWRITE, model);
	return n;
}

/* A NAPOT entry names its 64 KiB run: ppn[3:0] = 1000, the run's first pfn above. */
static inline uint64_t rv_kat_compose(uint64_t bits, uint64_t pfn)
{
	return bits | RV_PPN(bits & RV_N ? (pfn & ~15ULL) | 8 : pfn);
}

static inline uint64_t rv_kat_pfn(uint64_t e)
{
	uint64_t ppn = (e >> 10) & ((1ULL << 44) - 1);

	return e & RV_N ? ppn & ~15ULL : ppn;
}

static inline bool rv_kat_young(uint64_t e)
{
	return e & RV_A;
}

/*
 * LoongArch64: accessed is V and dirty is MODIFIED, in software; the hardware
 * D follows them: pte_mkdirty sets D only on a writable entry, pte_mkwrite
 * only on a modified one, pte_wrprotect clears WRITE and D (the entry stays
 * dirty), pte_mkclean clears MODIFIED and D, pte_mkold clears V alone.
 */
static inline uint64_t la_kat_op(uint64_t e, enum kat_op op, bool model)
{
	switch (op) {
	case KAT_WRPROTECT:
		return e & ~(LA_W | LA_D);
	case KAT_MKCLEAN:
		return e & ~(LA_M | LA_D);
	case KAT_MKOLD:
		return e & ~LA_V;
	case KAT_MKYOUNG:
		return e | LA_V;
	case KAT_MKDIRTY:
		return e | LA_M | (e & LA_W ? LA_D : 0);
	case KAT_MKWRITE:
		return e | LA_W | (e & LA_M ? LA_D : 0);
	case KAT_MKSPECIAL:
		return e | LA_SP;
	default:
		return e;	/* no soft-dirty bit */
	}
}

/*
 * pte_modify keeps MODIFIED, SPECIAL, the address, MAT and PLV
 * (_PAGE_CHG_MASK) and takes the rest from the protection: PAGE_NONE is
 * PROTNONE, NR, NX with user PLV and MAT; a private readable protection
 * (protection_map) V, PRESENT, PLV and MAT, with NX unless executable.
 */
static inline uint64_t la_kat_modify(uint64_t e, enum kat_prot p, bool exclusive, bool model)
{
	const uint64_t chg = LA_M | LA_SP | LA_PFN((1ULL << 36) - 1) | (LA_CC | BIT(5)) | LA_PLV3;
	uint64_t n;

	switch (p) {
	case KAT_PROT_NONE:
		n = LA_CC | LA_PLV3 | LA_PN | LA_NR | LA_NX;
		break;
	case KAT_PROT_R:
	case KAT_PROT_RW:
		n = LA_CC | LA_V | LA_PLV3 | LA_P | LA_NX;
		break;
	default:
		n = LA_CC | LA_V | LA_PLV3 | LA_P;
		break;
	}
	/* The library keeps the entry's accessed (V), PROT_NONE included; the kernel's protection decides it. */
	if (model)
		n = (n & ~LA_V) | (e & LA_V);
	n |= e & chg;
	if (exclusive && kat_prot_write(p))
		n = la_kat_op(n, KAT_MKWRITE, model);
	return n;
}

static inline uint64_t la_kat_compose(uint64_t bits, uint64_t pfn)
{
	return bits | LA_PFN(pfn);
}

static inline uint64_t la_kat_pfn(uint64_t e)
{
	return (e >> 12) & ((1ULL << 36) - 1);
}

static inline bool la_kat_young(uint64_t e)
{
	return e & LA_V;
}

/*
 * The generic format, the library's neutral one: each MMP_E_* flag is its
 * own bit and the pfn sits at bit 12. Its rules are that definition: an
 * operation sets or clears its flag, mprotect sets PRESENT or PROTNONE,
 * NOEXEC and WRITE by the protection and keeps the rest.
 */
#define GEN_PFN_SHIFT	12
#define GEN_PFN_MASK	((1ULL << 40) - 1)

static inline uint64_t gen_kat_op(uint64_t e, enum kat_op op, bool model)
{
	switch (op) {
	case KAT_WRPROTECT:
		return e & ~(uint64_t)MMP_E_WRITE;
	case KAT_MKCLEAN:
		return e & ~(uint64_t)MMP_E_DIRTY;
	case KAT_MKOLD:
		return e & ~(uint64_t)MMP_E_ACCESSED;
	case KAT_CLEAR_SOFT_DIRTY:
		return e & ~(uint64_t)MMP_E_SOFT_DIRTY;
	case KAT_MKYOUNG:
		return e | MMP_E_ACCESSED;
	case KAT_MKDIRTY:
		return e | MMP_E_DIRTY;
	case KAT_MKWRITE:
		return e | MMP_E_WRITE;
	case KAT_MKSPECIAL:
		return e | MMP_E_SPECIAL;
	default:
		return e;
	}
}

static inline uint64_t gen_kat_modify(uint64_t e, enum kat_prot p, bool exclusive, bool model)
{
	uint64_t n = e & ~(uint64_t)(MMP_E_PRESENT | MMP_E_PROTNONE | MMP_E_WRITE | MMP_E_NOEXEC);

	switch (p) {
	case KAT_PROT_NONE:
		return n | MMP_E_PROTNONE | MMP_E_NOEXEC;
	case KAT_PROT_R:
	case KAT_PROT_RW:
		n |= MMP_E_PRESENT | MMP_E_NOEXEC;
		break;
	default:
		n |= MMP_E_PRESENT;
		break;
	}
	if (exclusive && kat_prot_write(p))
		n |= MMP_E_WRITE;
	return n;
}

static inline uint64_t gen_kat_compose(uint64_t bits, uint64_t pfn)
{
	return bits | (pfn & GEN_PFN_MASK) << GEN_PFN_SHIFT;
}

static inline uint64_t gen_kat_pfn(uint64_t e)
{
	return (e >> GEN_PFN_SHIFT) & GEN_PFN_MASK;
}

static inline bool gen_kat_young(uint64_t e)
{
	return e & MMP_E_ACCESSED;
}

/* A starting entry of the operation checks, without its address (the format's compose adds it). */
struct kat_start {
	const char *what;
	uint64_t bits;
	unsigned int kind;
};

#define KAT_S_BLOCK	(1u << 0)	/* in a contiguous block: checked as 16 entries */
#define KAT_S_SPECIAL	(1u << 1)	/* the zero page: no folio, never exclusive */
#define KAT_S_PROTNONE	(1u << 2)	/* PROT_NONE: present to software only */

/* What the operation checks need of one entry format, from the manual. */
struct kat_format {
	enum mmp_format format;
	const struct kat_start *starts;
	unsigned int nr_starts;
	bool soft_dirty;	/* the format has a soft-dirty bit */
	/* The vm_page_prot of a private read-write mapping (PAGE_COPY), without its address. */
	uint64_t copy_prot;
	uint64_t (*compose)(uint64_t bits, uint64_t pfn);
	/* Whether the library's @got is the rule's @want; NULL: bit for bit. */
	bool (*same)(uint64_t got, uint64_t want);
	uint64_t (*pfn)(uint64_t e);
	bool (*young)(uint64_t e);
	uint64_t (*op)(uint64_t e, enum kat_op op, bool model);
	uint64_t (*modify)(uint64_t e, enum kat_prot p, bool exclusive, bool model);
};

#define KAT_DATA	static const __attribute__((unused))

KAT_DATA struct kat_start x86_kat_starts[] = {
	{ "writable, dirty, young", X86_NX | X86_D | X86_A | X86_US | X86_RW | X86_P, 0 },
	{ "writable, clean, young", X86_NX | X86_A | X86_US | X86_RW | X86_P, 0 },
	{ "writable, dirty, old", X86_NX | X86_D | X86_US | X86_RW | X86_P, 0 },
	{ "read-only, clean, young (PAGE_COPY)", X86_NX | X86_A | X86_US | X86_P, 0 },
	{ "read-only, clean, old, executable", X86_US | X86_P, 0 },
	{ "read-only, dirty", X86_NX | X86_D | X86_A | X86_US | X86_P, 0 },
	{ "writable, dirty, soft-dirty", X86_NX | X86_SW3 | X86_D | X86_A | X86_US | X86_RW | X86_P,
	  0 },
	{ "zero page", X86_NX | X86_SW1 | X86_A | X86_US | X86_P, KAT_S_SPECIAL },
	{ "PROT_NONE, dirty, young", X86_NX | X86_G | X86_D | X86_A | X86_US, KAT_S_PROTNONE },
};

#define A64_PAGE	(A64_USER_BASE | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER)

KAT_DATA struct kat_start a64_kat_starts[] = {
	{ "writable, dirty, young", A64_PAGE | A64_AF | A64_DBM | A64_UXN | A64_SW_DIRTY, 0 },
	{ "writable, hardware-dirty only, young", A64_PAGE | A64_AF | A64_DBM | A64_UXN, 0 },
	{ "writable, clean, young", A64_PAGE | A64_AP2_RDONLY | A64_AF | A64_DBM | A64_UXN, 0 },
	{ "writable, dirty, old", A64_PAGE | A64_DBM | A64_UXN | A64_SW_DIRTY, 0 },
	{ "read-only, clean, young (PAGE_COPY)", A64_PAGE | A64_AP2_RDONLY | A64_AF | A64_UXN, 0 },
	{ "read-only, clean, old, executable", A64_PAGE | A64_AP2_RDONLY, 0 },
	{ "read-only, dirty", A64_PAGE | A64_AP2_RDONLY | A64_AF | A64_UXN | A64_SW_DIRTY, 0 },
	{ "zero page", A64_PAGE | A64_AP2_RDONLY | A64_AF | A64_UXN | A64_SW_SPECIAL,
	  KAT_S_SPECIAL },
	{ "PROT_NONE, dirty, young",
	  A64_USER_BASE | A64_TABLE_PAGE | A64_AP1_USER | A64_AP2_RDONLY | A64_AF | A64_UXN |
		  A64_SW_DIRTY,
	  KAT_S_PROTNONE },
	{ "contiguous, writable, dirty, young",
	  A64_PAGE | A64_AF | A64_DBM | A64_CONT | A64_UXN | A64_SW_DIRTY, KAT_S_BLOCK },
	{ "contiguous, writable, clean, old",
	  A64_PAGE | A64_AP2_RDONLY | A64_DBM | A64_CONT | A64_UXN, KAT_S_BLOCK },
};

KAT_DATA struct kat_start rv_kat_starts[] = {
	{ "writable, dirty, young", RV_D | RV_A | RV_U | RV_W | RV_R | RV_V, 0 },
	{ "writable, clean, young", RV_A | RV_U | RV_W | RV_R | RV_V, 0 },
	{ "writable, dirty, old", RV_D | RV_U | RV_W | RV_R | RV_V, 0 },
	{ "read-only, clean, young (PAGE_COPY)", RV_A | RV_U | RV_R | RV_V, 0 },
	{ "read-only, clean, old, executable", RV_U | RV_X | RV_R | RV_V, 0 },
	{ "read-only, dirty", RV_D | RV_A | RV_U | RV_R | RV_V, 0 },
	{ "zero page", RV_RSW0 | RV_A | RV_U | RV_R | RV_V, KAT_S_SPECIAL },
	{ "PROT_NONE, dirty, young", RV_D | RV_A | RV_G | RV_U | RV_R, KAT_S_PROTNONE },
	{ "NAPOT, writable, dirty, young", RV_N | RV_D | RV_A | RV_U | RV_W | RV_R | RV_V,
	  KAT_S_BLOCK },
	{ "NAPOT, writable, clean, old", RV_N | RV_U | RV_W | RV_R | RV_V, KAT_S_BLOCK },
};

#define LA_PAGE	(LA_P | LA_PLV3 | LA_CC)

KAT_DATA struct kat_start la_kat_starts[] = {
	{ "writable, dirty, young", LA_PAGE | LA_W | LA_M | LA_D | LA_V | LA_NX, 0 },
	{ "writable, clean, young", LA_PAGE | LA_W | LA_V | LA_NX, 0 },
	{ "writable, dirty, old", LA_PAGE | LA_W | LA_M | LA_D | LA_NX, 0 },
	{ "read-only, clean, young (PAGE_COPY)", LA_PAGE | LA_V | LA_NX, 0 },
	{ "read-only, clean, old, executable", LA_PAGE, 0 },
	{ "read-only, dirty", LA_PAGE | LA_M | LA_V | LA_NX, 0 },
	{ "zero page", LA_PAGE | LA_SP | LA_V | LA_NX, KAT_S_SPECIAL },
	{ "PROT_NONE, dirty, young", LA_PN | LA_NR | LA_PLV3 | LA_CC | LA_M | LA_V | LA_NX,
	  KAT_S_PROTNONE },
};

KAT_DATA struct kat_start gen_kat_starts[] = {
	{ "writable, dirty, young",
	  MMP_E_PRESENT | MMP_E_WRITE | MMP_E_USER | MMP_E_ACCESSED | MMP_E_DIRTY | MMP_E_NOEXEC,
	  0 },
	{ "read-only, clean, young (PAGE_COPY)",
	  MMP_E_PRESENT | MMP_E_USER | MMP_E_ACCESSED | MMP_E_NOEXEC, 0 },
	{ "read-only, clean, old, executable", MMP_E_PRESENT | MMP_E_USER, 0 },
	{ "writable, dirty, soft-dirty",
	  MMP_E_PRESENT | MMP_E_WRITE | MMP_E_USER | MMP_E_ACCESSED | MMP_E_DIRTY |
		  MMP_E_SOFT_DIRTY | MMP_E_NOEXEC,
	  0 },
	{ "zero page",
	  MMP_E_PRESENT | MMP_E_USER | MMP_E_ACCESSED | MMP_E_SPECIAL | MMP_E_NOEXEC,
	  KAT_S_SPECIAL },
	{ "PROT_NONE, dirty, young",
	  MMP_E_PROTNONE | MMP_E_USER | MMP_E_ACCESSED | MMP_E_DIRTY | MMP_E_NOEXEC,
	  KAT_S_PROTNONE },
};

#define KAT_STARTS(a)	(a), sizeof(a) / sizeof((a)[0])

KAT_DATA struct kat_format kat_formats[] = {
	{ MMP_FORMAT_x86_64, KAT_STARTS(x86_kat_starts), true,
	  X86_NX | X86_A | X86_US | X86_P,
	  x86_kat_compose, NULL, x86_kat_pfn, x86_kat_young, x86_kat_op, x86_kat_modify },
	{ MMP_FORMAT_arm64, KAT_STARTS(a64_kat_starts), false,
	  A64_PAGE | A64_AP2_RDONLY | A64_AF | A64_UXN,
	  a64_kat_compose, a64_kat_same, a64_kat_pfn, a64_kat_young, a64_kat_op, a64_kat_modify },
	{ MMP_FORMAT_riscv64, KAT_STARTS(rv_kat_starts), false,
	  RV_A | RV_U | RV_R | RV_V,
	  rv_kat_compose, NULL, rv_kat_pfn, rv_kat_young, rv_kat_op, rv_kat_modify },
	{ MMP_FORMAT_loongarch64, KAT_STARTS(la_kat_starts), false,
	  LA_PAGE | LA_V | LA_NX,
	  la_kat_compose, NULL, la_kat_pfn, la_kat_young, la_kat_op, la_kat_modify },
	{ MMP_FORMAT_generic, KAT_STARTS(gen_kat_starts), true,
	  MMP_E_PRESENT | MMP_E_USER | MMP_E_ACCESSED | MMP_E_NOEXEC,
	  gen_kat_compose, NULL, gen_kat_pfn, gen_kat_young, gen_kat_op, gen_kat_modify },
};

/* The manual's rules for entry format @format, or NULL when none are written yet. */
static inline const struct kat_format *kat_format(enum mmp_format format)
{
	for (unsigned int i = 0; i < sizeof(kat_formats) / sizeof(kat_formats[0]); i++)
		if (kat_formats[i].format == format)
			return &kat_formats[i];
	return NULL;
}

#endif /* MMP_TESTS_ARCH_BITS_H */
