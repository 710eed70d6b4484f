/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Registration refuses a back end that contradicts itself, and only that one:
 * a deliberately wrong copy of a real back end, one rule broken at a time, is
 * refused by mmp_arch_register_extra() with -EINVAL and one line on stderr
 * naming it and the rule; a registry built from a list leaves its refused
 * entries out the same way and keeps the rest; and after every refusal the
 * library still creates spaces on every registered back end.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch_registry.h"
#include "geometry.h"
#include "util.h"

/* ---- stderr, captured ------------------------------------------------------------ */

static FILE *capture_file;
static int saved_stderr = -1;

static void capture_begin(void)
{
	fflush(stderr);
	capture_file = tmpfile();
	must(capture_file, "a temporary file for stderr");
	saved_stderr = dup(STDERR_FILENO);
	must(saved_stderr >= 0 && dup2(fileno(capture_file), STDERR_FILENO) >= 0,
	     "stderr redirected");
}

/* What was written to stderr since capture_begin(), in @buf. */
static void capture_end(char *buf, size_t len)
{
	size_t n;

	fflush(stderr);
	must(dup2(saved_stderr, STDERR_FILENO) >= 0, "stderr restored");
	close(saved_stderr);
	rewind(capture_file);
	n = fread(buf, 1, len - 1, capture_file);
	buf[n] = 0;
	fclose(capture_file);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/*
 * @msg is one line, the refusal of back end @name for breaking the rule of
 * field @field, and says @phrase (which part of the rule).
 */
static bool names_rule(const char *msg, const char *name, const char *field, const char *phrase)
{
	char head[256];

	snprintf(head, sizeof(head), "libmmprim: back end \"%s\" refused: %s: ", name, field);
	return count_lines(msg) == 1 && !strncmp(msg, head, strlen(head)) && strstr(msg, phrase);
}

/* ---- the wrong copies -------------------------------------------------------------- */

enum breakage {
	LEVELS_2, LEVELS_6, THREE_LEVELS_2_48, TASK_UNALIGNED, TASK_ZERO, TASK_AT_MIN_ADDR,
	WINDOW_ABOVE_TASK, WINDOW_UNALIGNED, WINDOW_AT_MIN_ADDR, LEAF_NO_PMD, LEAF_NO_PTE,
	LEAF_ABOVE_TOP, CONT_8K, CONT_PMD, CONT_PTES_8, CONT_TLB_NO_BLOCKS, AD_MODEL_PAST_END,
	FORMAT_PAST_END, FORMAT_NEGATIVE, NAME_NULL, NAME_EMPTY, NAME_TOO_LONG, NO_PRESENT,
	NO_WRITE, NO_PROTNONE, NO_TABLE, NO_LEAF,
};

static const struct bad {
	const char *base;	/* the real back end copied */
	enum breakage what;
	const char *tag;	/* the copy's name: base~tag */
	const char *field;	/* the rule's field, as the message names it */
	const char *phrase;	/* and the part of the rule */
} bads[] = {
	{ "x86_64", LEVELS_2, "2-levels", "levels", "3, 4 or 5" },
	{ "x86_64", LEVELS_6, "6-levels", "levels", "3, 4 or 5" },
	{ "arm64", THREE_LEVELS_2_48, "3-levels-2^48", "task_size", "3 levels span" },
	{ "riscv64", TASK_UNALIGNED, "task-unaligned", "task_size", "not page aligned" },
	{ "riscv64", TASK_ZERO, "task-0", "task_size", "MMP_MMAP_MIN_ADDR" },
	{ "x86_64", TASK_AT_MIN_ADDR, "task-min", "task_size", "MMP_MMAP_MIN_ADDR" },
	{ "x86_64-la57", WINDOW_ABOVE_TASK, "window-high", "map_window", "above task_size" },
	{ "riscv64-sv57", WINDOW_UNALIGNED, "window-unaligned", "map_window", "not page aligned" },
	{ "x86_64-la57", WINDOW_AT_MIN_ADDR, "window-min", "map_window", "MMP_MMAP_MIN_ADDR" },
	{ "x86_64", LEAF_NO_PMD, "no-pmd-leaf", "leaf_levels", "lacks PTE or PMD" },
	{ "riscv64", LEAF_NO_PTE, "no-pte-leaf", "leaf_levels", "lacks PTE or PMD" },
	{ "riscv64-sv39", LEAF_ABOVE_TOP, "leaf-p4d", "leaf_levels", "above the top level" },
	{ "arm64", CONT_8K, "cont-8k", "cont_shift", "16 pages" },
	{ "arm64-va39", CONT_PMD, "cont-2m", "cont_shift", "16 pages" },
	{ "riscv64", CONT_PTES_8, "napot-32k", "cont_ptes", "0 (no contiguous blocks) or 16" },
	{ "x86_64", CONT_TLB_NO_BLOCKS, "cont-tlb", "cont_shift", "without blocks" },
	{ "arm64", AD_MODEL_PAST_END, "ad-model", "ad_model", "hardware, software or switchable" },
	{ "x86_64", FORMAT_PAST_END, "format-end", "format", "out of range" },
	{ "arm64", FORMAT_NEGATIVE, "format-neg", "format", "out of range" },
	{ "x86_64", NAME_NULL, NULL, "name", "none given" },
	{ "x86_64", NAME_EMPTY, "", "name", "empty" },
	{ "x86_64", NAME_TOO_LONG, "long", "name", "longer than" },
	{ "x86_64", NO_PRESENT, "no-present", "eflags_unsupported", "PRESENT" },
	{ "arm64", NO_WRITE, "no-write", "eflags_unsupported", "WRITE" },
	{ "riscv64", NO_PROTNONE, "no-protnone", "eflags_unsupported", "PROTNONE" },
	{ "generic", NO_TABLE, "no-table", "eflags_unsupported", "TABLE" },
	{ "riscv64-sv39", NO_LEAF, "no-leaf", "eflags_unsupported", "LEAF" },
};

static void break_one(struct mmp_arch *a, enum breakage what)
{
	switch (what) {
	case LEVELS_2:		a->levels = 2; a->task_size = 1ULL << 30; a->leaf_levels = 3; break;
	case LEVELS_6:		a->levels = 6; break;
	case THREE_LEVELS_2_48:	a->levels = 3; break;
	case TASK_UNALIGNED:	a->task_size -= 1; break;
	case TASK_ZERO:		a->task_size = 0; break;
	case TASK_AT_MIN_ADDR:	a->task_size = MMP_MMAP_MIN_ADDR; break;
	case WINDOW_ABOVE_TASK:	a->map_window = a->task_size + PAGE_SIZE; break;
	case WINDOW_UNALIGNED:	a->map_window += 8; break;
	case WINDOW_AT_MIN_ADDR: a->map_window = MMP_MMAP_MIN_ADDR; break;
	case LEAF_NO_PMD:	a->leaf_levels &= ~(1u << MMP_PMD); break;
	case LEAF_NO_PTE:	a->leaf_levels &= ~(1u << MMP_PTE); break;
	case LEAF_ABOVE_TOP:	a->leaf_levels |= 1u << MMP_P4D; break;
	case CONT_8K:		a->cont_shift = PAGE_SHIFT + 1; break;
	case CONT_PMD:		a->cont_shift = PMD_SHIFT; break;
	case CONT_PTES_8:	a->cont_ptes = 8; break;
	case CONT_TLB_NO_BLOCKS: a->cont_shift = PAGE_SHIFT + 4; break;
	case AD_MODEL_PAST_END:	a->ad_model = (enum mmp_ad_model)(MMP_AD_SWITCHABLE + 1); break;
	case FORMAT_PAST_END:	a->format = MMP_NR_FORMATS; break;
	case FORMAT_NEGATIVE:	a->format = (enum mmp_format)-1; break;
	case NAME_NULL:		a->name = NULL; break;
	case NAME_EMPTY:	a->name = ""; break;
	case NAME_TOO_LONG:	break;	/* the name is the breakage */
	case NO_PRESENT:	a->eflags_unsupported |= MMP_E_PRESENT; break;
	case NO_WRITE:		a->eflags_unsupported |= MMP_E_WRITE; break;
	case NO_PROTNONE:	a->eflags_unsupported |= MMP_E_PROTNONE; break;
	case NO_TABLE:		a->eflags_unsupported |= MMP_E_TABLE; break;
	case NO_LEAF:		a->eflags_unsupported |= MMP_E_LEAF; break;
	}
}

/* The copy of @b->base with its rule broken; @name holds its name. */
static bool make_bad(const struct bad *b, struct mmp_arch *copy, char *name, size_t len)
{
	const struct mmp_arch *a = mmp_arch_find(b->base);

	if (!tap_ok(a != NULL, "%s: registered, to be copied", b->base))
		return false;
	*copy = *a;
	if (b->what == NAME_EMPTY)
		snprintf(name, len, "%s", "");
	else if (b->what == NAME_TOO_LONG)	/* 64 characters more than the tag */
		snprintf(name, len, "%s~%s-%064d", b->base, b->tag, 0);
	else
		snprintf(name, len, "%s~%s", b->base, b->tag ? b->tag : "");
	copy->name = name;
	break_one(copy, b->what);
	return true;
}

static void check_refused(const struct bad *b)
{
	struct mmp_arch copy;
	char name[128], msg[1024];
	int count = mmp_arch_count(), err;

	if (!make_bad(b, &copy, name, sizeof(name)))
		return;
	capture_begin();
	err = mmp_arch_register_extra(&copy);
	capture_end(msg, sizeof(msg));
	tap_eq(err, -EINVAL, "%s: %s refused by mmp_arch_register_extra", b->base, b->field);
	tap_ok(names_rule(msg, copy.name ? copy.name : "(unnamed)", b->field, b->phrase),
	       "%s: the refusal names the copy and \"%s: ... %s\"", b->base, b->field, b->phrase);
	/* The message itself, for the log: what a porter would read. */
	printf("#   stderr: %s%s", msg, strchr(msg, '\n') ? "" : "\n");
	tap_ok(!copy.name || !copy.name[0] || !mmp_arch_find(copy.name),
	       "%s: %s: the refused copy is not found", b->base, b->field);
	tap_eq(mmp_arch_count(), count, "%s: %s: the registry lists as many back ends", b->base,
	       b->field);
}

/* ---- what only a list or a filled struct reaches --------------------------------- */

/*
 * A registry built from a list with refused entries among valid ones: the
 * refused ones are left out, the others kept in list order, and each refusal
 * is one line naming the entry by the list's name, printed once per build.
 */
static void check_list(void)
{
	const struct mmp_arch *x86 = mmp_arch_find("x86_64"), *rv = mmp_arch_find("riscv64");
	struct mmp_arch deep, misnamed, out[4];
	const struct mmp_arch *list[4];
	const char *names[4] = { "x86_64", "riscv64-deep", "riscv64-sv99", "riscv64" };
	char msg[1024], first[512];
	const char *nl;
	unsigned int kept;

	if (!tap_ok(x86 && rv, "list: x86_64 and riscv64 to build it from"))
		return;
	deep = *rv;
	deep.name = "riscv64-deep";
	deep.levels = 6;
	misnamed = *rv;		/* a sibling whose struct kept its family's .name */
	list[0] = x86;
	list[1] = &deep;
	list[2] = &misnamed;
	list[3] = rv;
	capture_begin();
	kept = arch_fill_list(list, names, 4, out);
	capture_end(msg, sizeof(msg));
	tap_eq(kept, 2, "list: two of four kept");
	tap_ok(kept == 2 && !strcmp(out[0].name, "x86_64") && !strcmp(out[1].name, "riscv64"),
	       "list: the valid ones, in list order");
	tap_ok(kept >= 1 && out[0].cost && out[0].tlb_flush_ceiling,
	       "list: kept ones filled from the reference");
	tap_eq(count_lines(msg), 2, "list: one line per refused back end");
	nl = strchr(msg, '\n');
	snprintf(first, sizeof(first), "%.*s", nl ? (int)(nl - msg + 1) : 0, msg);
	if (!tap_ok(names_rule(first, "riscv64-deep", "levels", "3, 4 or 5"),
		    "list: the first refusal names riscv64-deep and its levels"))
		printf("#   stderr: %s", msg);
	tap_ok(strstr(msg, "libmmprim: back end \"riscv64-sv99\" refused: name: \"riscv64\" is not "
			   "\"riscv64-sv99\"") != NULL,
	       "list: a struct not carrying its listed name is refused, by the listed name");
}

/*
 * The settings the reference fills cannot be missing through
 * mmp_arch_register_extra (it fills them first): an unset flush ceiling or
 * cost table is taken, not refused. Missing after the fill they are refused,
 * which only a broken reference could cause.
 */
static void check_filled_rules(void)
{
	const struct mmp_arch *a = mmp_arch_find("x86_64");
	struct mmp_arch copy;
	char why[ARCH_WHY_MAX];
	int err;

	if (!tap_ok(a != NULL, "x86_64: registered, to be copied"))
		return;
	copy = *a;
	copy.name = "x86_64~unset";
	copy.tlb_flush_ceiling = 0;
	copy.cost = NULL;
	err = mmp_arch_register_extra(&copy);
	tap_eq(err, 0, "x86_64: a copy leaving the ceiling and costs unset is registered");
	if (!err) {
		const struct mmp_arch *got = mmp_arch_find("x86_64~unset");

		tap_ok(got && got->tlb_flush_ceiling == mmp_arch_generic.tlb_flush_ceiling &&
			       got->cost == mmp_arch_generic.cost,
		       "x86_64: ... and filled from the reference");
	}
	copy.name = "x86_64~ceiling-0";
	copy.cost = a->cost;
	tap_ok(arch_refusal(&copy, NULL, why) && !strncmp(why, "tlb_flush_ceiling: ", 19),
	       "x86_64: a ceiling still 0 after the fill is refused: %s", why);
	copy.tlb_flush_ceiling = a->tlb_flush_ceiling;
	copy.cost = NULL;
	tap_ok(arch_refusal(&copy, NULL, why) && !strncmp(why, "cost: ", 6),
	       "x86_64: no cost table after the fill is refused: %s", why);
	copy.cost = a->cost;
	tap_ok(arch_refusal(&copy, "x86_64", why) && !strncmp(why, "name: ", 6),
	       "x86_64: a name not the listed one is refused: %s", why);
}

/* ---- still usable ------------------------------------------------------------------- */

/* A space on @name maps, is written through a CPU, and verifies. */
static void check_usable(struct mmp_phys *phys, const char *name)
{
	struct mmp_space_config cfg = { .arch = name, .tlb_sanitizer = true };
	struct mmp_space *s = NULL;
	struct mmp_cpu *cpu = NULL;
	uint64_t addr = 0;
	char buf[6] = "";

	if (!tap_eq(mmp_space_create(phys, &cfg, &s), 0, "%s: a space is created", name))
		return;
	if (tap_eq(mmp_mmap(s, 0, 2 * MiB, MMP_PROT_READ | MMP_PROT_WRITE, 0, &addr), 0,
		   "%s: mmap", name) &&
	    tap_eq(mmp_cpu_attach(s, &cpu), 0, "%s: a CPU", name)) {
		tap_ok(!mmp_write(cpu, addr + 4096, "hello", 6) &&
			       !mmp_read(cpu, addr + 4096, buf, 6) && !strcmp(buf, "hello"),
		       "%s: written and read back", name);
		mmp_cpu_detach(cpu);
	}
	tap_eq(mmp_space_verify(s), 0, "%s: verify", name);
	mmp_space_destroy(s);
}

int main(void)
{
	struct mmp_arch copy;
	struct mmp_phys *phys;
	char msg[1024], why[ARCH_WHY_MAX];
	const char *name;
	int count;

	/* The first use builds the registry: every built-in back end is valid, nothing printed. */
	capture_begin();
	count = mmp_arch_count();
	capture_end(msg, sizeof(msg));
	tap_ok(!msg[0], "the built-in registry refuses nothing");
	if (msg[0])
		printf("#   stderr: %s", msg);
	tap_eq(mmp_arch_name(count - 1) ? strcmp(mmp_arch_name(count - 1), "generic") : -1, 0,
	       "the reference is last");
	for_each_arch(i, name) {
		const char *no = arch_refusal(mmp_arch_find(name), name, why);

		tap_ok(!no, "%s: keeps every rule%s%s", name, no ? ": " : "", no ? no : "");
	}

	for (size_t i = 0; i < ARRAY_SIZE(bads); i++)
		check_refused(&bads[i]);
	check_list();
	check_filled_rules();

	/* Refusals took no slot: a valid copy is still taken, and runs. */
	copy = *mmp_arch_find("riscv64-sv39");
	copy.name = "riscv64-sv39~valid";
	tap_eq(mmp_arch_register_extra(&copy), 0, "a valid copy is registered after the refusals");
	tap_eq(mmp_arch_register_extra(&copy), -EEXIST, "... once");

	tap_eq(mmp_arch_count(), count, "the registry lists as many back ends as at first");
	must(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, name)
		check_usable(phys, name);
	check_usable(phys, "riscv64-sv39~valid");
	tap_eq(mmp_phys_destroy(phys), 0, "phys released");
	return tap_done();
}
