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
 * Then every operation that changes an entry's flags, raw: from starting
 * entries built from the manual's bits (writable dirty young, clean, old,
 * read-only, PROT_NONE, the zero page, a contiguous block where the format has
 * one), pte_wrprotect, pte_mkclean, pte_mkold, pte_clear_soft_dirty,
 * pte_mkyoung, pte_mkdirty, pte_mkwrite and pte_mkspecial by each path the
 * library has for them (pte_clear_flags or pte_set_flags, entry_set_flags, the
 * table operations), and mprotect to each protection (pte_modify), must give
 * the raw value the manual's rule gives. Rows and rules are the format's, so
 * every back end of a format is checked against them, whatever its depth.
 *
 * The bits and the rules come from tests/lib/arch_bits.h, which says where
 * each is documented.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "arch_bits.h"
#include "entry_dispatch.h"
#include "mm.h"
#include "pte_util.h"

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

/* A row holds for every back end of its format, whatever its depth (for the levels it has). */
struct kat {
	enum mmp_format format;
	const char *what;
	enum mmp_level level;
	uint64_t pfn;
	unsigned int eflags;	/* what the core asks mk_entry for */
	uint64_t raw;		/* what the table holds */
	unsigned int decoded;	/* what entry_flags must say */
};

static const struct kat kats[] = {
	/* x86-64 */
	{ MMP_FORMAT_x86_64, "rw user page, young, dirty, NX", MMP_PTE, 0x12345,
	  P | W | U | A | D | NX,
	  X86_NX | X86_ADDR(0x12345) | X86_D | X86_A | X86_US | X86_RW | X86_P,
	  P | W | U | A | D | NX },
	{ MMP_FORMAT_x86_64, "read-only user page, old, clean, executable", MMP_PTE, 0x12345, P | U,
	  X86_ADDR(0x12345) | X86_US | X86_P, P | U },
	{ MMP_FORMAT_x86_64, "zero page (special)", MMP_PTE, 0x7, P | U | A | SP | NX,
	  X86_NX | X86_ADDR(0x7) | X86_SW1 | X86_A | X86_US | X86_P, P | U | A | SP | NX },
	{ MMP_FORMAT_x86_64, "soft-dirty", MMP_PTE, 0x12345, P | W | U | SD,
	  X86_ADDR(0x12345) | X86_SW3 | X86_US | X86_RW | X86_P, P | W | U | SD },
	{ MMP_FORMAT_x86_64, "PROT_NONE, pfn inverted (L1TF)", MMP_PTE, 0x12345, PN | U | A | NX,
	  X86_NX | X86_INV(0x12345) | X86_G | X86_A | X86_US, PN | U | A | NX },
	{ MMP_FORMAT_x86_64, "2 MiB page", MMP_PMD, 0x12200, P | W | U | A | D | NX | L,
	  X86_NX | X86_ADDR(0x12200) | X86_PS | X86_D | X86_A | X86_US | X86_RW | X86_P,
	  P | W | U | A | D | NX | L },
	{ MMP_FORMAT_x86_64, "PROT_NONE 2 MiB page", MMP_PMD, 0x12200, PN | U | A | L,
	  X86_INV(0x12200) | X86_G | X86_PS | X86_A | X86_US, PN | U | A | L },
	{ MMP_FORMAT_x86_64, "PMD -> PTE table", MMP_PMD, 0x4321, T,
	  X86_ADDR(0x4321) | X86_D | X86_A | X86_US | X86_RW | X86_P, P | T },
	{ MMP_FORMAT_x86_64, "PUD -> PMD table", MMP_PUD, 0xabcdef, T,
	  X86_ADDR(0xabcdef) | X86_D | X86_A | X86_US | X86_RW | X86_P, P | T },
	{ MMP_FORMAT_x86_64, "PGD -> PUD table", MMP_P4D, 0xfffffffff, T,
	  X86_ADDR(0xfffffffff) | X86_D | X86_A | X86_US | X86_RW | X86_P, P | T },
	{ MMP_FORMAT_x86_64, "LA57 PGD -> P4D table", MMP_PGD5, 0x54321, T,
	  X86_ADDR(0x54321) | X86_D | X86_A | X86_US | X86_RW | X86_P, P | T },

	/* arm64, 4 KiB granule */
	{ MMP_FORMAT_arm64, "rw user page, young, dirty, UXN", MMP_PTE, 0x12345,
	  P | W | U | A | D | NX,
	  A64_USER_BASE | A64_OA(0x12345) | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER | A64_AF |
		  A64_DBM | A64_UXN | A64_SW_DIRTY,
	  P | W | U | A | D | NX },
	{ MMP_FORMAT_arm64, "writable clean page: DBM with AP[2] read-only", MMP_PTE, 0x12345,
	  P | W | U | A,
	  A64_USER_BASE | A64_OA(0x12345) | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER |
		  A64_AP2_RDONLY | A64_AF | A64_DBM,
	  P | W | U | A },
	{ MMP_FORMAT_arm64, "read-only user page, old, executable", MMP_PTE, 0x12345, P | U,
	  A64_USER_BASE | A64_OA(0x12345) | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER |
		  A64_AP2_RDONLY,
	  P | U },
	{ MMP_FORMAT_arm64, "zero page (special)", MMP_PTE, 0x7, P | U | A | SP | NX,
	  A64_USER_BASE | A64_OA(0x7) | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER |
		  A64_AP2_RDONLY | A64_AF | A64_UXN | A64_SW_SPECIAL,
	  P | U | A | SP | NX },
	{ MMP_FORMAT_arm64, "contiguous rw page", MMP_PTE, 0x12340, P | W | U | A | D | NX | C,
	  A64_USER_BASE | A64_OA(0x12340) | A64_VALID | A64_TABLE_PAGE | A64_AP1_USER | A64_AF |
		  A64_DBM | A64_CONT | A64_UXN | A64_SW_DIRTY,
	  P | W | U | A | D | NX | C },
	{ MMP_FORMAT_arm64, "PROT_NONE: nG without VALID (PTE_PRESENT_INVALID)", MMP_PTE, 0x12345,
	  PN | A | NX,
	  A64_USER_BASE | A64_OA(0x12345) | A64_TABLE_PAGE | A64_AP2_RDONLY | A64_AF | A64_UXN,
	  PN | A | NX },
	{ MMP_FORMAT_arm64, "2 MiB block", MMP_PMD, 0x12200, P | W | U | A | D | NX | L,
	  A64_USER_BASE | A64_OA(0x12200) | A64_VALID | A64_AP1_USER | A64_AF | A64_DBM |
		  A64_UXN | A64_SW_DIRTY,
	  P | W | U | A | D | NX | L },
	{ MMP_FORMAT_arm64, "PMD -> PTE table", MMP_PMD, 0x4321, T,
	  A64_OA(0x4321) | A64_TABLE_PAGE | A64_VALID, P | T },
	{ MMP_FORMAT_arm64, "PUD -> PMD table", MMP_PUD, 0xabcdef, T,
	  A64_OA(0xabcdef) | A64_TABLE_PAGE | A64_VALID, P | T },
	{ MMP_FORMAT_arm64, "PGD -> PUD table", MMP_P4D, 0xfffffffff, T,
	  A64_OA(0xfffffffff) | A64_TABLE_PAGE | A64_VALID, P | T },

	/* riscv64, Sv48 */
	{ MMP_FORMAT_riscv64, "rw user page, young, dirty, no X", MMP_PTE, 0x12345,
	  P | W | U | A | D | NX,
	  RV_PPN(0x12345) | RV_D | RV_A | RV_U | RV_W | RV_R | RV_V, P | W | U | A | D | NX },
	{ MMP_FORMAT_riscv64, "read-only executable user page", MMP_PTE, 0x12345, P | U,
	  RV_PPN(0x12345) | RV_U | RV_X | RV_R | RV_V, P | U },
	{ MMP_FORMAT_riscv64, "zero page (special)", MMP_PTE, 0x7, P | U | A | SP | NX,
	  RV_PPN(0x7) | RV_RSW0 | RV_A | RV_U | RV_R | RV_V, P | U | A | SP | NX },
	{ MMP_FORMAT_riscv64, "PROT_NONE: G without V", MMP_PTE, 0x12345, PN | U | A | NX,
	  RV_PPN(0x12345) | RV_A | RV_G | RV_U | RV_R, PN | U | A | NX },
	{ MMP_FORMAT_riscv64, "64 KiB NAPOT page: ppn[3:0] = 1000", MMP_PTE, 0x12340,
	  P | W | U | A | D | NX | C,
	  RV_N | RV_PPN(0x12348) | RV_D | RV_A | RV_U | RV_W | RV_R | RV_V,
	  P | W | U | A | D | NX | C },
	{ MMP_FORMAT_riscv64, "2 MiB megapage", MMP_PMD, 0x12200, P | W | U | A | D | NX | L,
	  RV_PPN(0x12200) | RV_D | RV_A | RV_U | RV_W | RV_R | RV_V, P | W | U | A | D | NX | L },
	{ MMP_FORMAT_riscv64, "PMD -> PTE table: V only", MMP_PMD, 0x4321, T,
	  RV_PPN(0x4321) | RV_V, P | T },
	{ MMP_FORMAT_riscv64, "PUD -> PMD table", MMP_PUD, 0xabcdef, T,
	  RV_PPN(0xabcdef) | RV_V, P | T },
	{ MMP_FORMAT_riscv64, "PGD -> PUD table", MMP_P4D, 0xfffffffff, T,
	  RV_PPN(0xfffffffff) | RV_V, P | T },
	{ MMP_FORMAT_riscv64, "Sv57 PGD -> P4D table", MMP_PGD5, 0x54321, T,
	  RV_PPN(0x54321) | RV_V, P | T },
	/* LoongArch64: V is young, MODIFIED dirty, D only on a writable dirty page. */
	{ MMP_FORMAT_loongarch64, "rw user page, young, dirty, NX", MMP_PTE, 0x12345,
	  P | W | U | A | D | NX,
	  LA_PFN(0x12345) | LA_NX | LA_M | LA_W | LA_P | LA_CC | LA_PLV3 | LA_D | LA_V,
	  P | W | U | A | D | NX },
	{ MMP_FORMAT_loongarch64, "rw user page, old, clean: invalid to the TLB", MMP_PTE, 0x12345,
	  P | W | U | NX, LA_PFN(0x12345) | LA_NX | LA_W | LA_P | LA_CC | LA_PLV3, P | W | U | NX },
	{ MMP_FORMAT_loongarch64, "read-only, dirty: MODIFIED without D", MMP_PTE, 0x12345,
	  P | U | A | D | NX, LA_PFN(0x12345) | LA_NX | LA_M | LA_P | LA_CC | LA_PLV3 | LA_V,
	  P | U | A | D | NX },
	{ MMP_FORMAT_loongarch64, "read-only executable user page", MMP_PTE, 0x12345, P | U,
	  LA_PFN(0x12345) | LA_P | LA_CC | LA_PLV3, P | U },
	{ MMP_FORMAT_loongarch64, "zero page (special)", MMP_PTE, 0x7, P | U | A | SP | NX,
	  LA_PFN(0x7) | LA_NX | LA_SP | LA_P | LA_CC | LA_PLV3 | LA_V, P | U | A | SP | NX },
	{ MMP_FORMAT_loongarch64, "PROT_NONE: PROTNONE and NR, no PRESENT", MMP_PTE, 0x12345,
	  PN | U | NX, LA_PFN(0x12345) | LA_NX | LA_NR | LA_PN | LA_CC | LA_PLV3, PN | U | NX },
	{ MMP_FORMAT_loongarch64, "2 MiB huge page", MMP_PMD, 0x12200, P | W | U | A | D | NX | L,
	  LA_PFN(0x12200) | LA_NX | LA_M | LA_W | LA_P | LA_HUGE | LA_CC | LA_PLV3 | LA_D | LA_V,
	  P | W | U | A | D | NX | L },
	{ MMP_FORMAT_loongarch64, "PMD -> PTE table: the address alone", MMP_PMD, 0x4321, T,
	  LA_PFN(0x4321), P | T },
	{ MMP_FORMAT_loongarch64, "PUD -> PMD table", MMP_PUD, 0xabcdef, T, LA_PFN(0xabcdef),
	  P | T },
	{ MMP_FORMAT_loongarch64, "PGD -> PUD table", MMP_P4D, 0xfffffff, T, LA_PFN(0xfffffff),
	  P | T },

	/* generic: the neutral format, each MMP_E_* flag at its own bit, pfn at bit 12 */
	{ MMP_FORMAT_generic, "rw user page", MMP_PTE, 0x12345, P | W | U | A | D | NX,
	  (0x12345ULL << 12) | P | W | U | A | D | NX, P | W | U | A | D | NX },
	{ MMP_FORMAT_generic, "table", MMP_PMD, 0x4321, T, (0x4321ULL << 12) | T | P, P | T },
};

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
		mmp_pte_t without = format_mk_entry(fmt, k->pfn, k->eflags & ~sub, MMP_PTE);

		got = format_pte_set_flags(fmt, without, sub);
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
	tap_eq(format_entry_flags(arch->format, k->raw, k->level), k->decoded,
	       "%s: %s: decoded flags", name, k->what);
	tap_eq(format_entry_pfn(arch->format, k->raw, k->level), k->pfn, "%s: %s: decoded pfn",
	       name, k->what);
	tap_eq(format_entry_flags(arch->format, 0, k->level), 0, "%s: %s: zero is pte_none", name,
	       k->what);
	if (k->level == MMP_PTE && (k->eflags & (P | PN)))
		check_prot_ops(arch->format, k, name);
}

/* ---- entry operations, raw, against the manual's rules (arch_bits.h) --------------- */

/* The frame the operation checks put in their entries: 16-aligned, so that a block starts there. */
#define OP_PFN		0x1230ULL
/* The scratch table of the table operations maps here: one entry at index 1, a block at 16. */
#define OP_ADDR		0x40000000ULL
#define OP_ONE		1
#define OP_BLOCK	16
#define BLOCK_PTES	16

static struct mmp_phys *phys;

/* The single operations, then two a path does together. */
enum {
	OPS_CLEAR_ALL = KAT_NR_OPS,	/* folio_pte_batch's pte_clear_flags of all it ignores */
	OPS_DIRTY_WRITE,		/* a write fault's pte_mkwrite(pte_mkdirty()) */
	NR_OP_CHECKS,
};

static const char *const op_names[NR_OP_CHECKS] = {
	[KAT_WRPROTECT] = "pte_wrprotect",
	[KAT_MKCLEAN] = "pte_mkclean",
	[KAT_MKOLD] = "pte_mkold",
	[KAT_CLEAR_SOFT_DIRTY] = "pte_clear_soft_dirty",
	[KAT_MKYOUNG] = "pte_mkyoung",
	[KAT_MKDIRTY] = "pte_mkdirty",
	[KAT_MKWRITE] = "pte_mkwrite",
	[KAT_MKSPECIAL] = "pte_mkspecial",
	[OPS_CLEAR_ALL] = "pte_wrprotect, pte_mkclean, pte_mkold and pte_clear_soft_dirty at once",
	[OPS_DIRTY_WRITE] = "pte_mkwrite(pte_mkdirty())",
};

/* The flag each operation clears or sets, as the library's helpers take it. */
static const unsigned int op_flag[KAT_NR_OPS] = {
	[KAT_WRPROTECT] = W,
	[KAT_MKCLEAN] = D,
	[KAT_MKOLD] = A,
	[KAT_CLEAR_SOFT_DIRTY] = SD,
	[KAT_MKYOUNG] = A,
	[KAT_MKDIRTY] = D,
	[KAT_MKWRITE] = W,
	[KAT_MKSPECIAL] = SP,
};

static bool op_clears(enum kat_op op)
{
	return op <= KAT_CLEAR_SOFT_DIRTY;
}

/*
 * The kernel's exact bits, over the starting entries of one operation or
 * protection: where the library's model knowingly differs (arch_bits.h says
 * where), one TAP TODO per back end and operation, so that it is seen without
 * failing the suite, until the library does it and meson reports the
 * unexpected pass.
 */
struct todo {
	int checked;		/* checks of the operation */
	int divergent;		/* of those, where the kernel's bits are not simply the model's */
	int differ;		/* of those, checks where the library did not give them */
	char example[96];	/* the first of those */
};

static void todo_note(struct todo *t, bool divergent, bool differ, const char *example)
{
	t->checked++;
	if (!divergent)
		return;
	t->divergent++;
	if (differ && !t->differ++)
		snprintf(t->example, sizeof(t->example), "%s", example);
}

__attribute__((format(printf, 2, 3)))
static void tap_todo(int cond, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("%s %d - %s # TODO the library's model differs from the kernel here "
	       "(tests/lib/arch_bits.h)\n", cond ? "ok" : "not ok", ++tap_n, msg);
	fflush(stdout);
}

static void todo_report(const struct todo *t, const char *name, const char *what)
{
	if (!t->divergent)
		return;
	tap_todo(!t->differ, "%s: %s, as the kernel has it: %d of %d starting entries differ%s%s%s",
		 name, what, t->differ, t->checked, t->differ ? " (first: " : "", t->example,
		 t->differ ? ")" : "");
}

static bool same(const struct kat_format *k, uint64_t got, uint64_t want)
{
	return k->same ? k->same(got, want) : got == want;
}

/* One raw entry: the library's must be the model's, and the kernel's is noted in @t. */
static void check_raw(const struct kat_format *k, struct todo *t, const char *name,
		      const char *what, mmp_pte_t got, uint64_t kernel, uint64_t model)
{
	bool ok = same(k, got, model);

	if (!tap_ok(ok, "%s: %s", name, what))
		printf("#   got 0x%016" PRIx64 ", want 0x%016" PRIx64 " (xor 0x%016" PRIx64 ")\n",
		       got, model, got ^ model);
	/* A failure above is no difference of the model's: not a TODO. */
	todo_note(t, kernel != model || (ok && got != kernel), got != kernel, what);
}

/*
 * Operations @ops[0..@n) done one after the other on the entries of one
 * starting state, by every path the library has for them: each path's raw
 * entries must be the manual's model. @nr entries: 1, or the 16 of a block.
 */
struct outcome {
	const struct kat_format *k;
	unsigned int nr;
	uint64_t start[BLOCK_PTES], model[BLOCK_PTES], kernel[BLOCK_PTES];
	char paths[192];
	int bad, kernel_bad;
};

static void outcome_init(struct outcome *o, const struct kat_format *k,
			 const struct kat_start *st, const enum kat_op *ops, int n)
{
	o->k = k;
	o->nr = st->kind & KAT_S_BLOCK ? BLOCK_PTES : 1;
	for (unsigned int i = 0; i < o->nr; i++) {
		o->start[i] = o->model[i] = o->kernel[i] = k->compose(st->bits, OP_PFN + i);
		for (int j = 0; j < n; j++) {
			o->model[i] = k->op(o->model[i], ops[j], true);
			o->kernel[i] = k->op(o->kernel[i], ops[j], false);
		}
	}
	o->paths[0] = 0;
	o->bad = o->kernel_bad = 0;
}

static void outcome_path(struct outcome *o, const char *path, const mmp_pte_t *got)
{
	size_t len = strlen(o->paths);

	snprintf(o->paths + len, sizeof(o->paths) - len, "%s%s", len ? ", " : "", path);
	for (unsigned int i = 0; i < o->nr; i++) {
		if (!same(o->k, got[i], o->model[i])) {
			printf("#   %s, entry %u of %u: got 0x%016" PRIx64 ", want 0x%016" PRIx64
			       " (xor 0x%016" PRIx64 ")\n", path, i, o->nr, got[i], o->model[i],
			       got[i] ^ o->model[i]);
			o->bad++;
			break;
		}
	}
	for (unsigned int i = 0; i < o->nr; i++) {
		if (got[i] != o->kernel[i]) {
			o->kernel_bad++;
			break;
		}
	}
}

/* A path's return value, which must be @want. */
static void outcome_ret(struct outcome *o, const char *path, int got, int want)
{
	if (got != want) {
		printf("#   %s returned %d, want %d\n", path, got, want);
		o->bad++;
	}
}

static void outcome_done(struct outcome *o, struct todo *t, const char *name, const char *start,
			 const char *what)
{
	tap_ok(!o->bad, "%s: %s: %s (%s)", name, start, what, o->paths);
	/* A failure above is no difference of the model's: not a TODO. */
	todo_note(t, memcmp(o->model, o->kernel, o->nr * sizeof(o->model[0])) ||
			     (!o->bad && o->kernel_bad),
		  o->kernel_bad, start);
}

struct op_ctx {
	const char *name;
	const struct mmp_arch *arch;
	const struct kat_format *k;
	struct mmp_space *s;
	mmp_pte_t *table;
};

/* The starting entries written raw into the scratch table: where they are, and their address. */
static mmp_pte_t *table_load(struct op_ctx *c, const struct outcome *o, uint64_t *addr)
{
	unsigned int idx = o->nr > 1 ? OP_BLOCK : OP_ONE;

	for (unsigned int i = 0; i < o->nr; i++)
		WRITE_ONCE(c->table[idx + i], o->start[i]);
	*addr = OP_ADDR + idx * PAGE_SIZE;
	return &c->table[idx];
}

/* What the table holds after an operation; the table is left empty. */
static void table_take(const struct outcome *o, mmp_pte_t *ptep, mmp_pte_t *got)
{
	for (unsigned int i = 0; i < o->nr; i++) {
		got[i] = READ_ONCE(ptep[i]);
		WRITE_ONCE(ptep[i], 0);
	}
}

/*
 * The table operations the kernel names after one operation: wrprotect_ptes
 * (fork), ptep_test_and_clear_young and clear_young_dirty_ptes (reclaim,
 * MADV_FREE), ptep_set_access_flags (a fault). On a block they act on all 16
 * entries, as arm64 contpte and Svnapot keep a block uniform.
 */
static void table_ops(struct op_ctx *c, struct outcome *o, const struct kat_start *st,
		      enum kat_op op)
{
	mmp_pte_t got[BLOCK_PTES], *ptep;
	int ret, want = 0;
	uint64_t addr;

	switch (op) {
	case KAT_WRPROTECT:
		ptep = table_load(c, o, &addr);
		wrprotect_ptes(c->s, addr, ptep, o->nr);
		table_take(o, ptep, got);
		outcome_path(o, "wrprotect_ptes", got);
		break;
	case KAT_MKOLD:
		for (unsigned int i = 0; i < o->nr; i++)
			want |= c->k->young(o->start[i]);
		ptep = table_load(c, o, &addr);
		ret = ptep_test_and_clear_young(c->s, addr, ptep);
		table_take(o, ptep, got);
		outcome_path(o, "ptep_test_and_clear_young", got);
		outcome_ret(o, "ptep_test_and_clear_young", ret, want);
		/* fall through - clear_young_dirty_ptes(A) too */
	case KAT_MKCLEAN:
		ptep = table_load(c, o, &addr);
		clear_young_dirty_ptes(c->s, addr, ptep, o->nr, op_flag[op]);
		table_take(o, ptep, got);
		outcome_path(o, "clear_young_dirty_ptes", got);
		break;
	case KAT_MKWRITE:
		/* A write fault makes a block or the zero page writable by replacing it. */
		if (o->nr > 1 || (st->kind & KAT_S_SPECIAL))
			break;
		/* fall through */
	case KAT_MKYOUNG:
	case KAT_MKDIRTY:
		if (st->kind & KAT_S_PROTNONE)
			break;
		for (unsigned int i = 0; i < o->nr; i++)
			want |= !same(c->k, o->start[i], o->model[i]);
		ptep = table_load(c, o, &addr);
		ret = ptep_set_access_flags(c->s, addr, ptep, op_flag[op]);
		table_take(o, ptep, got);
		outcome_path(o, "ptep_set_access_flags", got);
		outcome_ret(o, "ptep_set_access_flags", ret, want);
		break;
	default:
		break;
	}
}

/*
 * @ops done on the entries of @st by the raw helper (pte_clear_flags, what
 * folio_pte_batch compares; pte_set_flags, what a fault builds), by
 * entry_set_flags (ptep_modify's decode and encode) and, for one operation,
 * by the table operations.
 */
static void check_ops_on(struct op_ctx *c, struct todo *t, const struct kat_start *st,
			 const enum kat_op *ops, int n, const char *what)
{
	const enum mmp_format fmt = c->arch->format;
	unsigned int set = 0, clear = 0;
	mmp_pte_t got[BLOCK_PTES];
	struct outcome o;

	for (int j = 0; j < n; j++) {
		if (op_clears(ops[j]))
			clear |= op_flag[ops[j]];
		else
			set |= op_flag[ops[j]];
	}
	/* Bits are set on present entries only (pte_set_flags' contract, and the kernel's use). */
	if (set && (st->kind & KAT_S_PROTNONE))
		return;
	outcome_init(&o, c->k, st, ops, n);
	for (unsigned int i = 0; i < o.nr; i++)
		got[i] = set ? format_pte_set_flags(fmt, o.start[i], set) :
			       format_pte_clear_flags(fmt, o.start[i], clear);
	outcome_path(&o, set ? "pte_set_flags" : "pte_clear_flags", got);
	for (unsigned int i = 0; i < o.nr; i++)
		got[i] = entry_set_flags(c->s, o.start[i], MMP_PTE, set, clear);
	outcome_path(&o, "entry_set_flags", got);
	if (n == 1)
		table_ops(c, &o, st, ops[0]);
	outcome_done(&o, t, c->name, st->what, what);
}

static void check_ops(const char *name, const struct kat_format *k)
{
	static const enum kat_op clear_all[] = {
		KAT_WRPROTECT, KAT_MKCLEAN, KAT_MKOLD, KAT_CLEAR_SOFT_DIRTY,
	};
	static const enum kat_op dirty_write[] = { KAT_MKDIRTY, KAT_MKWRITE };
	struct op_ctx c = { .name = name, .arch = mmp_arch_find(name), .k = k };
	struct todo todo[NR_OP_CHECKS] = { 0 };
	uint32_t tpfn;

	c.s = new_space(phys, name);
	tpfn = pgtable_alloc(c.s);
	c.table = space_table(c.s, tpfn);
	tap_eq(!(c.arch->eflags_unsupported & SD), k->soft_dirty,
	       "%s: soft-dirty supported as the manual has it", name);
	for (unsigned int i = 0; i < k->nr_starts; i++) {
		const struct kat_start *st = &k->starts[i];

		for (enum kat_op op = 0; op < KAT_NR_OPS; op++) {
			if (op == KAT_CLEAR_SOFT_DIRTY && !k->soft_dirty)
				continue;
			check_ops_on(&c, &todo[op], st, &op, 1, op_names[op]);
		}
		/* Without a soft-dirty bit, all but pte_clear_soft_dirty. */
		check_ops_on(&c, &todo[OPS_CLEAR_ALL], st, clear_all, k->soft_dirty ? 4 : 3,
			     op_names[OPS_CLEAR_ALL]);
		check_ops_on(&c, &todo[OPS_DIRTY_WRITE], st, dirty_write, 2,
			     op_names[OPS_DIRTY_WRITE]);
	}
	for (int op = 0; op < NR_OP_CHECKS; op++)
		todo_report(&todo[op], name, op_names[op]);
	pgtable_free(c.s, tpfn);
	mmp_space_destroy(c.s);
}

/* ---- mprotect's pte_modify, on a real space ---------------------------------------- */

static const int prot_bits[KAT_NR_PROTS] = {
	[KAT_PROT_NONE] = MMP_PROT_NONE,
	[KAT_PROT_R] = MMP_PROT_READ,
	[KAT_PROT_RW] = MMP_PROT_READ | MMP_PROT_WRITE,
	[KAT_PROT_RX] = MMP_PROT_READ | MMP_PROT_EXEC,
	[KAT_PROT_RWX] = MMP_PROT_READ | MMP_PROT_WRITE | MMP_PROT_EXEC,
};

static const char *const prot_names[KAT_NR_PROTS] = {
	"mprotect none", "mprotect r", "mprotect rw", "mprotect rx", "mprotect rwx",
};

/*
 * A written page (an exclusive anonymous folio) and a read one (the zero
 * page), each entry set raw to a starting state, then mprotect: the entries
 * must be pte_modify of the protection (with pte_mkwrite for the exclusive
 * page where it may write). The VMA is first given another protection, so
 * that the one asked for is a change and every entry is looked at.
 */
static void check_modify(const char *name, const struct kat_format *k)
{
	struct mmp_space *s = new_space(phys, name);
	struct mmp_cpu *cpu = NULL;
	uint64_t a = map(s, 2 * PAGE_SIZE, MMP_PROT_READ | MMP_PROT_WRITE), pfn, zpfn, e;
	struct todo faults = { 0 }, todo[KAT_NR_PROTS] = { 0 };
	mmp_pte_t *anon, *zero, zero_raw;
	char byte = 0;

	must(!mmp_cpu_attach(s, &cpu) && !mmp_write(cpu, a, "x", 1) &&
	     !mmp_read(cpu, a + PAGE_SIZE, &byte, 1), "%s: a page written and one read", name);
	mmp_cpu_detach(cpu);
	anon = ptep_at(s, a);
	zero = ptep_at(s, a + PAGE_SIZE);
	pfn = k->pfn(READ_ONCE(*anon));
	zpfn = k->pfn(READ_ONCE(*zero));

	/* The faults' own entries: pte_mkwrite(pte_mkdirty()) and pte_mkspecial() of PAGE_COPY. */
	e = k->compose(k->copy_prot, pfn);
	check_raw(k, &faults, name, "a write fault's entry", READ_ONCE(*anon),
		  k->op(k->op(e, KAT_MKDIRTY, false), KAT_MKWRITE, false),
		  k->op(k->op(e, KAT_MKDIRTY, true), KAT_MKWRITE, true));
	zero_raw = k->op(k->compose(k->copy_prot, zpfn), KAT_MKSPECIAL, true);
	check_raw(k, &faults, name, "a read fault's zero-page entry", READ_ONCE(*zero),
		  k->op(k->compose(k->copy_prot, zpfn), KAT_MKSPECIAL, false), zero_raw);
	todo_report(&faults, name, "the faults' entries");

	for (int p = 0; p < KAT_NR_PROTS; p++) {
		int other = p == KAT_PROT_NONE ? KAT_PROT_R : KAT_PROT_NONE;
		bool zero_checked = false;

		for (unsigned int i = 0; i < k->nr_starts; i++) {
			const struct kat_start *st = &k->starts[i];
			char what[160];

			if (st->kind & (KAT_S_BLOCK | KAT_S_SPECIAL))
				continue;
			e = k->compose(st->bits, pfn);
			must(!mmp_mprotect(s, a, 2 * PAGE_SIZE, prot_bits[other]), "%s: mprotect",
			     name);
			WRITE_ONCE(*anon, e);
			WRITE_ONCE(*zero, zero_raw);
			must(!mmp_mprotect(s, a, 2 * PAGE_SIZE, prot_bits[p]), "%s: mprotect",
			     name);
			snprintf(what, sizeof(what), "%s: %s (pte_modify)", st->what,
				 prot_names[p]);
			check_raw(k, &todo[p], name, what, READ_ONCE(*anon),
				  k->modify(e, p, true, false), k->modify(e, p, true, true));
			if (zero_checked)
				continue;
			zero_checked = true;
			snprintf(what, sizeof(what), "zero page: %s (pte_modify)", prot_names[p]);
			check_raw(k, &todo[p], name, what, READ_ONCE(*zero),
				  k->modify(zero_raw, p, false, false),
				  k->modify(zero_raw, p, false, true));
		}
		todo_report(&todo[p], name, prot_names[p]);
	}
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the mprotects", name);
	mmp_space_destroy(s);
}

int main(void)
{
	int covered = 0, with_ops = 0;

	must(mmp_phys_create(64 * MiB, &phys) == 0, "physical memory");
	/* Every registered back end has rows, so a new one cannot pass by having none. */
	for (int i = 0; i < mmp_arch_count(); i++) {
		const char *name = mmp_arch_name(i);
		const struct mmp_arch *arch = mmp_arch_find(name);
		const struct kat_format *k = kat_format(arch->format);
		int rows = 0;

		for (size_t r = 0; r < ARRAY_SIZE(kats); r++) {
			/* A level the back end's tables do not have is not asked of it. */
			if (kats[r].format != arch->format || kats[r].level >= arch->levels)
				continue;
			check(&kats[r], name);
			rows++;
		}
		covered += rows > 0;
		tap_ok(rows > 0, "%s: has known-answer rows (%d)", name, rows);
		if (!tap_ok(k != NULL, "%s: its format has the manual's operation rules", name))
			continue;
		check_ops(name, k);
		check_modify(name, k);
		with_ops++;
	}
	tap_eq(covered, mmp_arch_count(), "every back end covered");
	tap_eq(with_ops, mmp_arch_count(), "every back end's operations checked");
	tap_eq(mmp_phys_destroy(phys), 0, "physical memory released");
	return tap_done();
}
