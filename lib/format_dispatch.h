/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Entry encode and decode, compiled in: every arch folder's format.h is
 * included here and a space's format number picks one. The switch is a
 * direct branch the host predicts perfectly for a space's lifetime; the
 * accessors inline like the kernel's pte_pfn() and pte_young(), so core mm
 * pays no call per entry (docs/design.md, "The cost rule").
 */
#ifndef MMP_FORMAT_DISPATCH_H
#define MMP_FORMAT_DISPATCH_H

#include "arch.h"
#include "mmp_format_headers.h"

static __always_inline mmp_pte_t
format_mk_entry(enum mmp_format fmt, uint64_t pfn, unsigned int eflags, enum mmp_level l)
{
	switch (fmt) {
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_mk_entry(pfn, eflags, l);
	MMP_FORMATS
#undef MMP_FORMAT
	default:
		__builtin_unreachable();
	}
}

static __always_inline unsigned int
format_entry_flags(enum mmp_format fmt, mmp_pte_t e, enum mmp_level l)
{
	switch (fmt) {
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_entry_flags(e, l);
	MMP_FORMATS
#undef MMP_FORMAT
	default:
		__builtin_unreachable();
	}
}

/*
 * The flags of @mask only: each format's decode is inlined with the mask
 * applied, so the compiler computes just those bits (pte_present(),
 * pmd_leaf(), pte_write() cost a test or two, as in the kernel).
 */
static __always_inline unsigned int
format_entry_test(enum mmp_format fmt, mmp_pte_t e, enum mmp_level l, unsigned int mask)
{
	switch (fmt) {
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_entry_flags(e, l) & mask;
	MMP_FORMATS
#undef MMP_FORMAT
	default:
		__builtin_unreachable();
	}
}

static __always_inline uint64_t
format_entry_pfn(enum mmp_format fmt, mmp_pte_t e, enum mmp_level l)
{
	switch (fmt) {
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_entry_pfn(e, l);
	MMP_FORMATS
#undef MMP_FORMAT
	default:
		__builtin_unreachable();
	}
}

/* A present leaf PTE with the attributes of @eflags cleared, raw (pte_mkold, pte_mkclean, ...). */
static __always_inline mmp_pte_t
format_pte_clear_flags(enum mmp_format fmt, mmp_pte_t e, unsigned int eflags)
{
	switch (fmt) {
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_pte_clear_flags(e, eflags);
	MMP_FORMATS
#undef MMP_FORMAT
	default:
		__builtin_unreachable();
	}
}

/* The same present PTE @nr pages further (pte_advance_pfn). */
static __always_inline mmp_pte_t
format_pte_advance_pfn(enum mmp_format fmt, mmp_pte_t e, uint64_t nr)
{
	switch (fmt) {
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_pte_advance_pfn(e, nr);
	MMP_FORMATS
#undef MMP_FORMAT
	default:
		__builtin_unreachable();
	}
}

/*
 * Swap entries, the not-present and not-none PTEs (__swp_entry,
 * __swp_type, __swp_offset): the only ones the library makes are PTE
 * markers (swapops.h). The type and offset are the arch-independent ones.
 */
static __always_inline mmp_pte_t
format_mk_swp_entry(enum mmp_format fmt, unsigned int type, uint64_t offset)
{
	switch (fmt) {
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_mk_swp_entry(type, offset);
	MMP_FORMATS
#undef MMP_FORMAT
	default:
		__builtin_unreachable();
	}
}

static __always_inline unsigned int format_swp_type(enum mmp_format fmt, mmp_pte_t e)
{
	switch (fmt) {
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_swp_type(e);
	MMP_FORMATS
#undef MMP_FORMAT
	default:
		__builtin_unreachable();
	}
}

static __always_inline uint64_t format_swp_offset(enum mmp_format fmt, mmp_pte_t e)
{
	switch (fmt) {
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return f##_swp_offset(e);
	MMP_FORMATS
#undef MMP_FORMAT
	default:
		__builtin_unreachable();
	}
}

#endif /* MMP_FORMAT_DISPATCH_H */
