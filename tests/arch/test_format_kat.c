/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Known-answer tests of each back end's entry format, written from the
 * architecture manuals and the kernel's documented software bits, with no
 * back end header included: a bit in the wrong place fails here even where a
 * round trip through the back end's own encoder and decoder would pass.
 *
 * Each row: an entry the core asks for (pfn, MMP_E_* flags, level), the exact
 * 64-bit value the hardware (and the kernel) would find in the table, and what
 * decoding that value must give back.
 *
 * The bits come from tests/lib/arch_bits.h, which says where each is documented.
 */
#include <inttypes.h>
#include <string.h>

#include "arch_bits.h"
#include "entry_dispatch.h"
#include "mm.h"
#include "tap.h"

#define P	MMP_E_PRESENT
#define W	MMP_E_WRITE
#define U	MMP_E_USER
#define A	MMP_E_ACCESSED
#define D	MMP_E_DIRTY
#define SD	MMP_E_SOFT_DIRTY
#define SP	MMP_E_SPECIAL
#define NX	MMP_E_NOEXEC
#define PN	MMP_E_PROTNONE
#define T	MMP_E_TABLE
#define L	MMP_E_LEAF
#define C	MMP_E_CONT

struct kat {
	const char *arch;
	const char *what;
	enum mmp_level level;
	uint64_t pfn;
	unsigned int eflags;	/* what the core asks mk_entry for */
	uint64_t raw;		/* what the table holds */
	unsigned int decoded;	/* what entry_flags must say */
};

static const struct kat kats[] = {
	/* x86-64 */
	{ "x86_64", "rw user page, young, dirty, NX", MMP_PTE, 0x12345, P | W | U | A | D | NX,
	  X86_NX | X86_ADDR(0x12345) | X86_D | X86_A | X86_US | X86_RW | X86_P,
	  P | W | U | A | D | NX },
	{ "x86_64", "read-only user page, old, clean, executable", MMP_PTE, 0x12345, P | U,
	  X86_ADDR(0x12345) | X86_US | X86_P, P | U },
	{ "x86_64", "zero page (special)", MMP_PTE, 0x7, P | U | A | SP | NX,
	  X86_NX | X86_ADDR(0x7) | X86_SW1 | X86_A | X86_US | X86_P, P | U | A | SP | NX },
	{ "x86_64", "soft-dirty", MMP_PTE, 0x12345, P | W | U | SD,
	  X86_ADDR(0x12345) | X86_SW3 | X86_US | X86_RW | X86_P, P | W | U | SD },
	{ "x86_64", "PROT_NONE, pfn inverted (L1TF)", MMP_PTE, 0x12345, PN | U | A | NX,
	  X86_NX | X86_INV(0x12345) | X86_G | X86_A | X86_US, PN | U | A | NX },
	{ "x86_64", "2 MiB page", MMP_PMD, 0x12200, P | W | U | A | D | NX | L,
	  X86_NX | X86_ADDR(0x12200) | X86_PS | X86_D | X86_A | X86_US | X86_RW | X86_P,
	  P | W | U | A | D | NX | L },
	{ "x86_64", "PROT_NONE 2 MiB page", MMP_PMD, 0x12200, PN | U | A | L,
	  X86_INV(0x12200) | X86_G | X86_PS | X86_A | X86_US, PN | U | A | L },
	{ "x86_64", "PMD -> PTE table", MMP_PMD, 0x4321, T,
	  X86_ADDR(0x4321) | X86_D | X86_A | X86_US | X86_RW | X86_P, P | T },
	{ "x86_64", "PUD -> PMD table", MMP_PUD, 0xabcdef, T,
	  X86_ADDR(0xabcdef) | X86_D | X86_A | X86_US | X86_RW | X86_P, P | T },
	{ "x86_64", "PGD -> PUD table", MMP_P4D, 0xfffffffff, T,
	  X86_ADDR(0xfffffffff) | X86_D | X86_A | X86_US | X86_RW | X86_P, P | T },
	{ "x86_64", "LA57 PGD -> P4D table", MMP_PGD5, 0x54321, T,
	  X86_ADDR(0x54321) | X86_D | X86_A | X86_US | X86_RW | X86_P, P | T },

	/* arm64, 4 KiB granule */
	{ "arm64", "rw user page, young, dirty, UXN", MMP_PTE, 0x12345, P | W | U | A | D | NX,
	  A64_USER_BASE | A64_OA(0x12345) | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER | A64_AF |
		  A64_DBM | A64_UXN | A64_SW_DIRTY,
	  P | W | U | A | D | NX },
	{ "arm64", "writable clean page: DBM with AP[2] read-only", MMP_PTE, 0x12345, P | W | U | A,
	  A64_USER_BASE | A64_OA(0x12345) | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER |
		  A64_AP2_RDONLY | A64_AF | A64_DBM,
	  P | W | U | A },
	{ "arm64", "read-only user page, old, executable", MMP_PTE, 0x12345, P | U,
	  A64_USER_BASE | A64_OA(0x12345) | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER |
		  A64_AP2_RDONLY,
	  P | U },
	{ "arm64", "zero page (special)", MMP_PTE, 0x7, P | U | A | SP | NX,
	  A64_USER_BASE | A64_OA(0x7) | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER |
		  A64_AP2_RDONLY | A64_AF | A64_UXN | A64_SW_SPECIAL,
	  P | U | A | SP | NX },
	{ "arm64", "contiguous rw page", MMP_PTE, 0x12340, P | W | U | A | D | NX | C,
	  A64_USER_BASE | A64_OA(0x12340) | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER | A64_AF |
		  A64_DBM | A64_CONT | A64_UXN | A64_SW_DIRTY,
	  P | W | U | A | D | NX | C },
	{ "arm64", "PROT_NONE: nG without VALID (PTE_PRESENT_INVALID)", MMP_PTE, 0x12345,
	  PN | A | NX,
	  A64_USER_BASE | A64_OA(0x12345) | A64_TABLE_PAGE | A64_AP2_RDONLY | A64_AF | A64_UXN,
	  PN | A | NX },
	{ "arm64", "2 MiB block", MMP_PMD, 0x12200, P | W | U | A | D | NX | L,
	  A64_USER_BASE | A64_OA(0x12200) | A64_VALID | A64_AP1_USER | A64_AF | A64_DBM |
		  A64_UXN | A64_SW_DIRTY,
	  P | W | U | A | D | NX | L },
	{ "arm64", "PMD -> PTE table", MMP_PMD, 0x4321, T,
	  A64_OA(0x4321) | A64_TABLE_PAGE | A64_VALID, P | T },
	{ "arm64", "PUD -> PMD table", MMP_PUD, 0xabcdef, T,
	  A64_OA(0xabcdef) | A64_TABLE_PAGE | A64_VALID, P | T },
	{ "arm64", "PGD -> PUD table", MMP_P4D, 0xfffffffff, T,
	  A64_OA(0xfffffffff) | A64_TABLE_PAGE | A64_VALID, P | T },

	/* riscv64, Sv48 */
	{ "riscv64", "rw user page, young, dirty, no X", MMP_PTE, 0x12345, P | W | U | A | D | NX,
	  RV_PPN(0x12345) | RV_D | RV_A | RV_U | RV_W | RV_R | RV_V, P | W | U | A | D | NX },
	{ "riscv64", "read-only executable user page", MMP_PTE, 0x12345, P | U,
	  RV_PPN(0x12345) | RV_U | RV_X | RV_R | RV_V, P | U },
	{ "riscv64", "zero page (special)", MMP_PTE, 0x7, P | U | A | SP | NX,
	  RV_PPN(0x7) | RV_RSW0 | RV_A | RV_U | RV_R | RV_V, P | U | A | SP | NX },
	{ "riscv64", "PROT_NONE: G without V", MMP_PTE, 0x12345, PN | U | A | NX,
	  RV_PPN(0x12345) | RV_A | RV_G | RV_U | RV_R, PN | U | A | NX },
	{ "riscv64", "64 KiB NAPOT page: ppn[3:0] = 1000", MMP_PTE, 0x12340,
	  P | W | U | A | D | NX | C,
	  RV_N | RV_PPN(0x12348) | RV_D | RV_A | RV_U | RV_W | RV_R | RV_V,
	  P | W | U | A | D | NX | C },
	{ "riscv64", "2 MiB megapage", MMP_PMD, 0x12200, P | W | U | A | D | NX | L,
	  RV_PPN(0x12200) | RV_D | RV_A | RV_U | RV_W | RV_R | RV_V, P | W | U | A | D | NX | L },
	{ "riscv64", "PMD -> PTE table: V only", MMP_PMD, 0x4321, T, RV_PPN(0x4321) | RV_V, P | T },
	{ "riscv64", "PUD -> PMD table", MMP_PUD, 0xabcdef, T, RV_PPN(0xabcdef) | RV_V, P | T },
	{ "riscv64", "PGD -> PUD table", MMP_P4D, 0xfffffffff, T, RV_PPN(0xfffffffff) | RV_V, P | T },
	{ "riscv64", "Sv57 PGD -> P4D table", MMP_PGD5, 0x54321, T, RV_PPN(0x54321) | RV_V, P | T },

	/* generic: the neutral format, each MMP_E_* flag at its own bit, pfn at bit 12 */
	{ "generic", "rw user page", MMP_PTE, 0x12345, P | W | U | A | D | NX,
	  (0x12345ULL << 12) | P | W | U | A | D | NX, P | W | U | A | D | NX },
	{ "generic", "table", MMP_PMD, 0x4321, T, (0x4321ULL << 12) | T | P, P | T },
};

/*
 * A row written for a family ("arm64") holds for each of its back ends
 * ("arm64-va39"): they share the format, whatever their depth.
 */
static bool in_family(const char *row_arch, const char *name)
{
	size_t n = strlen(row_arch);

	return !strncmp(row_arch, name, n) && (name[n] == 0 || name[n] == '-');
}

/*
 * A PTE made the fault's way: pfn_pte of the VMA's vm_page_prot (the entry of
 * pfn 0; a PROT_NONE one too), then, for a present one, pte_mkyoung /
 * pte_mkdirty / pte_mkwrite / pte_mkspecial of what is missing. Either way it
 * must be the manual's entry.
 */
static void check_prot_ops(enum mmp_format fmt, const struct kat *k, const char *name)
{
	const unsigned int settable = A | D | W | SP;
	unsigned int f = k->eflags & settable, bad = 0;
	mmp_pte_t got;

	got = format_pfn_pte(fmt, k->pfn, format_mk_entry(fmt, 0, k->eflags, MMP_PTE));
	if (!tap_ok(got == k->raw, "%s: %s: pfn_pte of its vm_page_prot", name, k->what))
		printf("#   got 0x%016" PRIx64 "\n", got);
	if (!(k->eflags & P))
		return;
	/* Every subset of the row's settable flags left out, then set. */
	for (unsigned int sub = f;; sub = (sub - 1) & f) {
		got = format_pte_set_flags(fmt, format_mk_entry(fmt, k->pfn, k->eflags & ~sub, MMP_PTE),
					   sub);
		if (got != k->raw) {
			printf("#   flags %#x set: got 0x%016" PRIx64 "\n", sub, got);
			bad++;
		}
		if (!sub)
			break;
	}
	tap_eq(bad, 0, "%s: %s: pte_set_flags of each subset of its young/dirty/write/special",
	       name, k->what);
}

static void check(const struct kat *k, const char *name)
{
	const struct mmp_arch *arch = mmp_arch_find(name);
	mmp_pte_t raw;

	if (!tap_ok(arch != NULL, "%s: registered", name))
		return;
	raw = format_mk_entry(arch->format, k->pfn, k->eflags, k->level);
	if (!tap_ok(raw == k->raw, "%s: %s: encoded as the manual says", name, k->what))
		printf("#   got 0x%016" PRIx64 ", want 0x%016" PRIx64 " (xor 0x%016" PRIx64 ")\n",
		       raw, k->raw, raw ^ k->raw);
	tap_eq(format_entry_flags(arch->format, k->raw, k->level), k->decoded, "%s: %s: decoded flags", name,
	       k->what);
	tap_eq(format_entry_pfn(arch->format, k->raw, k->level), k->pfn, "%s: %s: decoded pfn", name, k->what);
	tap_eq(format_entry_flags(arch->format, 0, k->level), 0, "%s: %s: zero is pte_none", name, k->what);
	if (k->level == MMP_PTE && (k->eflags & (P | PN)))
		check_prot_ops(arch->format, k, name);
}

int main(void)
{
	int covered = 0;

	/* Every registered back end has rows, so a new one cannot pass by having none. */
	for (int i = 0; i < mmp_arch_count(); i++) {
		const char *name = mmp_arch_name(i);
		int rows = 0;

		for (size_t k = 0; k < ARRAY_SIZE(kats); k++) {
			/* A level the back end's tables do not have is not asked of it. */
			if (!in_family(kats[k].arch, name) ||
			    kats[k].level >= mmp_arch_find(name)->levels)
				continue;
			check(&kats[k], name);
			rows++;
		}
		covered += rows > 0;
		tap_ok(rows > 0, "%s: has known-answer rows (%d)", name, rows);
	}
	tap_eq(covered, mmp_arch_count(), "every back end covered");
	return tap_done();
}
