/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Page-table entry operations under the kernel's names (ptep_get, set_ptes,
 * get_and_clear_full_ptes, ...): the role of include/linux/pgtable.h. Each
 * arch folder defines the ones it does differently, static inline, in its
 * entry_ops.h (arm64: contpte; riscv64: Svnapot), calling its out-of-line
 * code directly only where a contiguous block needs it; arch/generic/
 * entry_ops.h supplies the rest for each folder. A call below picks the
 * space's folder by its format number, a direct branch the host predicts for
 * the space's lifetime, so the fast paths carry no call at all.
 */
#ifndef MMP_ENTRY_DISPATCH_H
#define MMP_ENTRY_DISPATCH_H

#include "arch_api.h"

/* One read and one write of an entry, rewritten by compare-and-swap (pte_update). */
static inline mmp_pte_t ptep_modify_counted(struct mmp_space *s, mmp_pte_t *ptep,
					    unsigned int set, unsigned int clear)
{
	count_add2(s, MMP_C_PTE_READ, MMP_C_PTE_WRITE, 1);
	return ptep_modify(s, ptep, MMP_PTE, set, clear);
}

#define __MMP_PASTE(a, b)	a##_##b
#define MMP_PASTE(a, b)		__MMP_PASTE(a, b)
/* The name of operation @op of the folder being instantiated (MMP_ARCH). */
#define MMP_OP(op)		MMP_PASTE(MMP_ARCH, op)

/* Every folder's own operations, then the generic ones it lacks (generated). */
#include "mmp_entry_ops.h"

#define MMP_DISPATCH(s)		MMP_DISPATCH_FORMAT((s)->format)
#define MMP_DISPATCH_FORMAT(fmt)					\
	switch (fmt) {							\
	MMP_FORMATS							\
	default:							\
		__builtin_unreachable();				\
	}

/*
 * A few operations also come as format_<op>(fmt, ...), for a hot loop compiled
 * once per format (fmt a constant there: no dispatch left at all), like
 * lib/format_dispatch.h's format_entry_test(). Such a path is entered the same way:
 * MMP_DISPATCH_FORMAT(s->format) with MMP_FORMAT(f) calling its body with
 * MMP_FORMAT_##f (page_walk, pmd_walk, zap_pte_range, __handle_mm_fault).
 */

/* ---- reading ---- */

/* The entry as core mm understands it (contpte: A/D gathered over its block). PTL held. */
static __always_inline mmp_pte_t format_ptep_get(const enum mmp_format fmt, struct mmp_space *s,
						 mmp_pte_t *ptep)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_ptep_get(s, ptep);
	MMP_DISPATCH_FORMAT(fmt)
#undef MMP_FORMAT
}

static __always_inline mmp_pte_t ptep_get(struct mmp_space *s, mmp_pte_t *ptep)
{
	return format_ptep_get(s->format, s, ptep);
}

/* The same without the PTL (GUP-fast, verify, the TLB sanitizer): retries a racing fold. */
static __always_inline mmp_pte_t ptep_get_lockless(struct mmp_space *s, mmp_pte_t *ptep)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_ptep_get_lockless(s, ptep);
	MMP_DISPATCH(s)
#undef MMP_FORMAT
}

/* How many entries from @ptep share a mapping granule (arm64 contpte: to the block's end). */
static __always_inline unsigned int pte_batch_hint(struct mmp_space *s, mmp_pte_t *ptep,
						   mmp_pte_t pte)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_pte_batch_hint(ptep, pte);
	MMP_DISPATCH(s)
#undef MMP_FORMAT
}

/*
 * The contiguous block at @first read entry by entry into @out, and whether
 * ptep_get_lockless would take it; if not, what breaks it (mmp_space_verify).
 */
static inline bool cont_block_read(struct mmp_space *s, mmp_pte_t *first, mmp_pte_t *out,
				   struct cont_block_fault *fault)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_cont_block_read(s, first, out, fault);
	MMP_DISPATCH(s)
#undef MMP_FORMAT
}

/* folio_pte_batch's loop, per folder (arch/generic/entry_ops.h). */
static __always_inline unsigned int folio_pte_scan(struct mmp_space *s, mmp_pte_t *ptep,
						   mmp_pte_t expected, unsigned int ignore,
						   unsigned int nr, unsigned int max_nr,
						   const bool merge, unsigned int *merged)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f:						\
	return f##_folio_pte_scan(s, ptep, expected, ignore, nr, max_nr, merge, merged);
	MMP_DISPATCH(s)
#undef MMP_FORMAT
}

/* ---- writing (PTL held; @nr entries map consecutive pages of one folio in one table) ---- */

/* Map @nr pages, pfn advancing; @nr > 1 needs none targets. */
static __always_inline void format_set_ptes(const enum mmp_format fmt, struct mmp_space *s,
					    uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte,
					    unsigned int nr)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: f##_set_ptes(s, addr, ptep, pte, nr); return;
	MMP_DISPATCH_FORMAT(fmt)
#undef MMP_FORMAT
}

static __always_inline void set_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				     mmp_pte_t pte, unsigned int nr)
{
	format_set_ptes(s->format, s, addr, ptep, pte, nr);
}

/* Clear one entry and return it, atomically against the hardware walker. */
static __always_inline mmp_pte_t ptep_get_and_clear(struct mmp_space *s, uint64_t addr,
						    mmp_pte_t *ptep)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_ptep_get_and_clear(s, addr, ptep);
	MMP_DISPATCH(s)
#undef MMP_FORMAT
}

/* Clear @nr entries; return the first with A/D ORed from all. */
static __always_inline mmp_pte_t get_and_clear_full_ptes(struct mmp_space *s, uint64_t addr,
							 mmp_pte_t *ptep, unsigned int nr,
							 int full)
{
#define MMP_FORMAT(f)							\
	case MMP_FORMAT_##f: return f##_get_and_clear_full_ptes(s, addr, ptep, nr, full);
	MMP_DISPATCH(s)
#undef MMP_FORMAT
}

static __always_inline void format_clear_full_ptes(const enum mmp_format fmt, struct mmp_space *s,
						   uint64_t addr, mmp_pte_t *ptep, unsigned int nr,
						   int full)
{
#define MMP_FORMAT(f)							\
	case MMP_FORMAT_##f: f##_clear_full_ptes(s, addr, ptep, nr, full); return;
	MMP_DISPATCH_FORMAT(fmt)
#undef MMP_FORMAT
}

static __always_inline void clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					    unsigned int nr, int full)
{
	format_clear_full_ptes(s->format, s, addr, ptep, nr, full);
}

static __always_inline void wrprotect_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					   unsigned int nr)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: f##_wrprotect_ptes(s, addr, ptep, nr); return;
	MMP_DISPATCH(s)
#undef MMP_FORMAT
}

/* ---- age and permission ---- */

static __always_inline int ptep_test_and_clear_young(struct mmp_space *s, uint64_t addr,
						     mmp_pte_t *ptep)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_ptep_test_and_clear_young(s, addr, ptep);
	MMP_DISPATCH(s)
#undef MMP_FORMAT
}

/* MADV_FREE / aging: clear @eflags (young, dirty) on @nr entries of one folio. */
static __always_inline void clear_young_dirty_ptes(struct mmp_space *s, uint64_t addr,
						   mmp_pte_t *ptep, unsigned int nr,
						   unsigned int eflags)
{
#define MMP_FORMAT(f)							\
	case MMP_FORMAT_##f: f##_clear_young_dirty_ptes(s, addr, ptep, nr, eflags); return;
	MMP_DISPATCH(s)
#undef MMP_FORMAT
}

/*
 * A fault made a present entry more permissive: set @eflags (write, dirty,
 * young) where the walker will look for them. Nonzero if an entry changed, 0
 * for a spurious fault.
 */
static __always_inline int ptep_set_access_flags(struct mmp_space *s, uint64_t addr,
						 mmp_pte_t *ptep, unsigned int eflags)
{
#define MMP_FORMAT(f)							\
	case MMP_FORMAT_##f: return f##_ptep_set_access_flags(s, addr, ptep, eflags);
	MMP_DISPATCH(s)
#undef MMP_FORMAT
}

/* ---- the hardware walker ---- */

/*
 * The walker reached leaf @ep at @level for @access: set accessed/dirty the
 * way this MMU does. The leaf as the TLB will cache it, or 0 when the access
 * faults.
 */
static __always_inline mmp_pte_t format_hw_update_leaf(const enum mmp_format fmt,
						       struct mmp_space *s, mmp_pte_t *ep,
						       enum mmp_level level, unsigned int access)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_hw_update_leaf(s, ep, level, access);
	MMP_DISPATCH_FORMAT(fmt)
#undef MMP_FORMAT
}

static __always_inline mmp_pte_t hw_update_leaf(struct mmp_space *s, mmp_pte_t *ep,
						enum mmp_level level, unsigned int access)
{
	return format_hw_update_leaf(s->format, s, ep, level, access);
}

/* The PTE of @pfn with the attributes of @prot, a PTE of pfn 0 (pfn_pte; vm_page_prot). */
static __always_inline mmp_pte_t format_pfn_pte(const enum mmp_format fmt, uint64_t pfn,
						mmp_pte_t prot)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_pfn_pte(pfn, prot);
	MMP_DISPATCH_FORMAT(fmt)
#undef MMP_FORMAT
}

/*
 * A present PTE with @eflags added, raw (pte_mkyoung, pte_mkwrite,
 * pte_mkdirty, pte_mkspecial): those four flags only, all a back end's own
 * pte_set_flags need handle. Callers pass constants, so the check costs nothing.
 */
static __always_inline mmp_pte_t format_pte_set_flags(const enum mmp_format fmt, mmp_pte_t e,
						      unsigned int eflags)
{
	MMP_BUG_ON(eflags & ~(MMP_E_ACCESSED | MMP_E_WRITE | MMP_E_DIRTY | MMP_E_SPECIAL));
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_pte_set_flags(e, eflags);
	MMP_DISPATCH_FORMAT(fmt)
#undef MMP_FORMAT
}

/* ---- the tables ---- */

/* The table that table entry @e at upper level @level points to (pmd_page_vaddr). */
static __always_inline mmp_pte_t *format_entry_table(const enum mmp_format fmt,
						     struct mmp_space *s, mmp_pte_t e,
						     enum mmp_level level)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return space_table(s, f##_table_pfn(e, level));
	MMP_DISPATCH_FORMAT(fmt)
#undef MMP_FORMAT
}

static __always_inline mmp_pte_t *entry_table(struct mmp_space *s, mmp_pte_t e,
					      enum mmp_level level)
{
	return format_entry_table(s->format, s, e, level);
}

/* pte_table() (lib/pgtable.c) for a path compiled per format. */
static __always_inline mmp_pte_t *format_pte_table(const enum mmp_format fmt, struct mmp_space *s,
						  mmp_pte_t pmd)
{
	if (!format_entry_test(fmt, pmd, MMP_PMD, MMP_E_TABLE))
		return NULL;
	return format_entry_table(fmt, s, pmd, MMP_PMD);
}

#undef MMP_DISPATCH

#endif /* MMP_ENTRY_DISPATCH_H */
