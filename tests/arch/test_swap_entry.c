/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Known answers for swap entries and PTE markers in each entry format,
 * written from the kernel's documented swap-PTE layouts (the comments above
 * __swp_entry in arch/x86/include/asm/pgtable_64.h, arch/arm64/include/asm/
 * pgtable.h, arch/riscv/include/asm/pgtable.h, arch/loongarch/include/asm/
 * pgtable.h) with no back end header included:
 *  x86-64:    type in bits 59-63, offset inverted (L1TF) in bits 9-58; bits
 *             0-8 clear (P, PSE and G/PROTNONE among them);
 *  arm64:     bits 0-1 clear, type in 6-10, bit 11 (PTE_PRESENT_INVALID)
 *             clear, offset in 12-61;
 *  riscv64:   V and R/W/X (bits 0-3) and bit 5 (PROT_NONE) clear, type in
 *             7-11, offset from 12;
 *  loongarch: bits 0-15 clear, type in 16-22, offset from 24;
 *  generic:   every flag bit (0-11) clear, type in 12-16, offset from 17.
 * A guard marker is type SWP_PTE_MARKER (31) with offset PTE_MARKER_GUARD (4).
 * Each must decode as neither present nor PROT_NONE, and not none (its other
 * decoded flags mean nothing: x86-64's inverted offset sets many of them).
 */
#include <inttypes.h>
#include <string.h>

#include "mm.h"
#include "tap.h"

struct swp_layout {
	const char *name;
	enum mmp_format fmt;
	uint64_t guard;		/* the guard marker's raw value */
	uint64_t must_clear;	/* bits every swap entry leaves clear */
	uint64_t (*expect)(unsigned int type, uint64_t offset);
};

static uint64_t x86_expect(unsigned int type, uint64_t offset)
{
	uint64_t off_bits = ((1ULL << 50) - 1) << 9;

	return (uint64_t)type << 59 | ((~offset << 9) & off_bits);
}

static uint64_t arm64_expect(unsigned int type, uint64_t offset)
{
	return (uint64_t)type << 6 | offset << 12;
}

static uint64_t riscv_expect(unsigned int type, uint64_t offset)
{
	return (uint64_t)type << 7 | offset << 12;
}

static uint64_t la_expect(unsigned int type, uint64_t offset)
{
	return (uint64_t)type << 16 | offset << 24;
}

static uint64_t generic_expect(unsigned int type, uint64_t offset)
{
	return (uint64_t)type << 12 | offset << 17;
}

static const struct swp_layout layouts[] = {
	{ "x86_64", MMP_FORMAT_x86_64, 0xfffffffffffff600ULL, 0x1ffULL, x86_expect },
	{ "arm64", MMP_FORMAT_arm64, 0x47c0ULL, 0x803ULL, arm64_expect },
	{ "riscv64", MMP_FORMAT_riscv64, 0x4f80ULL, 0x2fULL, riscv_expect },
	{ "loongarch64", MMP_FORMAT_loongarch64, 0x41f0000ULL, 0xffffULL, la_expect },
	{ "generic", MMP_FORMAT_generic, 0x9f000ULL, 0xfffULL, generic_expect },
};

static void check(const struct swp_layout *l)
{
	static const struct { unsigned int type; uint64_t offset; } cases[] = {
		{ 0, 1 }, { 1, 0x12345 }, { 17, 0xabcdef }, { 30, 1ULL << 38 }, { 31, 4 },
	};
	mmp_pte_t m = format_make_pte_marker(l->fmt, PTE_MARKER_GUARD);

	tap_ok(m == l->guard, "%s: the guard marker is %#" PRIx64 " (got %#" PRIx64 ")", l->name,
	       l->guard, m);
	tap_ok(!(format_entry_flags(l->fmt, m, MMP_PTE) & (MMP_E_PRESENT | MMP_E_PROTNONE)),
	       "%s: a marker decodes as neither present nor PROT_NONE", l->name);
	tap_ok(format_is_swap_pte(l->fmt, m) && format_is_guard_pte_marker(l->fmt, m),
	       "%s: is_swap_pte and is_guard_pte_marker", l->name);
	tap_ok(!format_is_guard_pte_marker(l->fmt, format_make_pte_marker(l->fmt, PTE_MARKER_POISONED)),
	       "%s: a poison marker is not a guard", l->name);
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mmp_pte_t e = format_mk_swp_entry(l->fmt, cases[i].type, cases[i].offset);

		tap_ok(e == l->expect(cases[i].type, cases[i].offset) && !(e & l->must_clear),
		       "%s: swap entry type %u offset %#" PRIx64 " is %#" PRIx64, l->name,
		       cases[i].type, cases[i].offset, e);
		tap_ok(format_swp_type(l->fmt, e) == cases[i].type &&
		       format_swp_offset(l->fmt, e) == cases[i].offset,
		       "%s: ... and decodes back", l->name);
		tap_ok(format_is_swap_pte(l->fmt, e), "%s: ... as a swap PTE", l->name);
	}
	/* A present entry and PROT_NONE are never swap PTEs; none is not either. */
	tap_ok(!format_is_swap_pte(l->fmt, format_mk_entry(l->fmt, 5, MMP_E_PRESENT | MMP_E_USER,
							       MMP_PTE)) &&
	       !format_is_swap_pte(l->fmt, format_mk_entry(l->fmt, 5, MMP_E_PROTNONE | MMP_E_USER,
							       MMP_PTE)) &&
	       !format_is_swap_pte(l->fmt, 0), "%s: present, PROT_NONE and none are not swap PTEs",
	       l->name);
}

int main(void)
{
	for (unsigned int i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		check(&layouts[i]);
	return tap_done();
}
