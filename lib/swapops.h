/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Swap entries and PTE markers (the kernel's linux/swapops.h). A PTE that is
 * neither none nor present is a swap entry: a type and an offset, laid out in
 * each architecture's own bits (format_mk_swp_entry and friends). There is no
 * swap device in the model; the only swap entries the library writes are PTE
 * markers, type SWP_PTE_MARKER, whose offset holds the marker bits. A guard
 * region (MADV_GUARD_INSTALL, 6.13) is a run of PTE_MARKER_GUARD markers: an
 * access to one faults with SIGSEGV. Markers live in PTE tables only.
 */
#ifndef MMP_SWAPOPS_H
#define MMP_SWAPOPS_H

#include "entry.h"

/*
 * The last of the 2^MAX_SWAPFILES_SHIFT (32) types: the kernel counts it as
 * MAX_SWAPFILES plus the hwpoison, migration and device types, which together
 * with the marker's own take the top of the range whatever the configuration.
 */
#define SWP_PTE_MARKER		31u

#define PTE_MARKER_UFFD_WP	(1u << 0)
#define PTE_MARKER_POISONED	(1u << 1)
#define PTE_MARKER_GUARD	(1u << 2)	/* an access is SIGSEGV, as PROT_NONE */

/* make_pte_marker(): the PTE of marker @marker in format @fmt. */
static __always_inline mmp_pte_t format_make_pte_marker(enum mmp_format fmt, unsigned int marker)
{
	return format_mk_swp_entry(fmt, SWP_PTE_MARKER, marker);
}

static __always_inline mmp_pte_t make_pte_marker(const struct mmp_space *s, unsigned int marker)
{
	return format_make_pte_marker(s->format, marker);
}

/* is_swap_pte(): neither none nor present (PROT_NONE counts as present). */
static __always_inline bool format_is_swap_pte(enum mmp_format fmt, mmp_pte_t pte)
{
	return pte && !format_entry_test(fmt, pte, MMP_PTE, MMP_E_PRESENT | MMP_E_PROTNONE);
}

static __always_inline bool is_swap_pte(const struct mmp_space *s, mmp_pte_t pte)
{
	return format_is_swap_pte(s->format, pte);
}

/* The marker bits of a swap PTE, 0 when it is another kind of swap entry. */
static __always_inline unsigned int format_pte_marker_get(enum mmp_format fmt, mmp_pte_t pte)
{
	if (format_swp_type(fmt, pte) != SWP_PTE_MARKER)
		return 0;
	return format_swp_offset(fmt, pte) & (PTE_MARKER_UFFD_WP | PTE_MARKER_POISONED |
					      PTE_MARKER_GUARD);
}

/* is_guard_pte_marker(): @pte is a swap PTE holding a guard marker. */
static __always_inline bool format_is_guard_pte_marker(enum mmp_format fmt, mmp_pte_t pte)
{
	return format_is_swap_pte(fmt, pte) && (format_pte_marker_get(fmt, pte) & PTE_MARKER_GUARD);
}

static __always_inline bool is_guard_pte_marker(const struct mmp_space *s, mmp_pte_t pte)
{
	return format_is_guard_pte_marker(s->format, pte);
}

#endif /* MMP_SWAPOPS_H */
