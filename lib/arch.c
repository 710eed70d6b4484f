/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of back ends. The list is arch/meson.build's, one line per
 * back end; settings a back end leaves unset are taken from arch/generic once,
 * before the first space is created. A back end that contradicts itself (a
 * geometry no table can hold, a format that is not built in, ...) is refused:
 * left out of the registry and named on stderr with the rule it breaks, so
 * one bad port neither aborts every program linking the library nor hides.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arch_registry.h"
#include "geometry.h"

/* MMP_ARCH_LIST: MMP_ARCH(symbol, name) per line of arch/meson.build, generated. */
#include "mmp_arch_list.h"

#define MMP_ARCH(sym, name) extern const struct mmp_arch sym;
MMP_ARCH_LIST
#undef MMP_ARCH

#define MMP_ARCH(sym, name) &sym,
static const struct mmp_arch *const registered[] = {
	MMP_ARCH_LIST
	&mmp_arch_generic,	/* the reference, always built in, always last */
};
#undef MMP_ARCH

/* The names the list gives, which each struct must carry (the benches use the list's). */
#define MMP_ARCH(sym, name) name,
static const char *const listed_names[] = {
	MMP_ARCH_LIST
	"generic",
};
#undef MMP_ARCH

/* Back ends the tests add (mmp_arch_register_extra): found by name, never listed. */
#define MAX_EXTRA	4

/* The valid back ends of the list, filled, in list order: what the registry shows. */
static struct mmp_arch filled[ARRAY_SIZE(registered)];
static unsigned int nr_filled;
static pthread_once_t fill_once = PTHREAD_ONCE_INIT;

__attribute__((format(printf, 2, 3)))
static const char *refuse(char why[ARCH_WHY_MAX], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, ARCH_WHY_MAX, fmt, ap);
	va_end(ap);
	return why;
}

/*
 * The entry flags core mm cannot do without, so no format may declare them
 * unsupported: a page is mapped PRESENT and written through WRITE, mprotect
 * makes PROTNONE entries, every walk goes through TABLE entries and THP maps
 * PMD LEAF entries (which leaf_levels must list).
 */
static const struct {
	unsigned int flag;
	const char *name;
} core_flags[] = {
	{ MMP_E_PRESENT, "PRESENT" },
	{ MMP_E_WRITE, "WRITE" },
	{ MMP_E_PROTNONE, "PROTNONE" },
	{ MMP_E_TABLE, "TABLE" },
	{ MMP_E_LEAF, "LEAF" },
};

/*
 * The rules are what the core assumes of every back end without checking it
 * on its paths: a table of 512 entries per level, the top one spanning the
 * task size, user addresses above MMP_MMAP_MIN_ADDR, PTE and PMD leaves,
 * contiguous blocks of 16 pages and a TLB that caches them as one entry only
 * where the format forms them (the only block modelled: arm64 contpte with
 * 4 KiB pages, Svnapot 64 KiB; hw/cpu.c and lib/verify.c take its size from
 * cont_shift, the formats have it built in), an A/D model the core knows, a
 * flush ceiling and a cost table.
 */
const char *arch_refusal(const struct mmp_arch *a, const char *listed, char why[ARCH_WHY_MAX])
{
	const unsigned int pte_pmd = 1u << MMP_PTE | 1u << MMP_PMD;
	unsigned int missing = 0;
	uint64_t span;

	if (!a->name)
		return refuse(why, "name: none given");
	if (!a->name[0])
		return refuse(why, "name: empty");
	if (listed && strcmp(a->name, listed))
		return refuse(why, "name: \"%s\" is not \"%s\", the name arch/meson.build lists",
			      a->name, listed);
	if ((unsigned int)a->format >= MMP_NR_FORMATS)
		return refuse(why, "format: %u is out of range, 0 to %d are built in",
			      (unsigned int)a->format, MMP_NR_FORMATS - 1);
	if (a->levels < 3 || a->levels > MMP_MAX_LEVELS)
		return refuse(why, "levels: %u, where 3, 4 or 5 are possible", a->levels);
	if (a->task_size & (PAGE_SIZE - 1))
		return refuse(why, "task_size: %#llx is not page aligned",
			      (unsigned long long)a->task_size);
	if (a->task_size <= MMP_MMAP_MIN_ADDR)
		return refuse(why, "task_size: %#llx is not above MMP_MMAP_MIN_ADDR (%#llx)",
			      (unsigned long long)a->task_size, MMP_MMAP_MIN_ADDR);
	span = level_size((enum mmp_level)(a->levels - 1)) * PTRS_PER_TABLE;
	if (a->task_size > span)
		return refuse(why, "task_size: %#llx is beyond the %#llx that %u levels span",
			      (unsigned long long)a->task_size, (unsigned long long)span,
			      a->levels);
	if (a->map_window & (PAGE_SIZE - 1))
		return refuse(why, "map_window: %#llx is not page aligned",
			      (unsigned long long)a->map_window);
	if (a->map_window > a->task_size)
		return refuse(why, "map_window: %#llx is above task_size %#llx",
			      (unsigned long long)a->map_window, (unsigned long long)a->task_size);
	/* 0 means task_size; any other window is where mmap grows down from. */
	if (a->map_window && a->map_window <= MMP_MMAP_MIN_ADDR)
		return refuse(why, "map_window: %#llx is not above MMP_MMAP_MIN_ADDR (%#llx)",
			      (unsigned long long)a->map_window, MMP_MMAP_MIN_ADDR);
	if ((a->leaf_levels & pte_pmd) != pte_pmd)
		return refuse(why, "leaf_levels: %#x lacks PTE or PMD leaves, which THP needs",
			      a->leaf_levels);
	if (a->leaf_levels >> a->levels)
		return refuse(why, "leaf_levels: %#x has a leaf above the top level of %u levels",
			      a->leaf_levels, a->levels);
	if (a->cont_ptes && a->cont_ptes != 16)
		return refuse(why, "cont_ptes: %u, where 0 (no contiguous blocks) or 16 "
			      "(the only block the formats form) are possible", a->cont_ptes);
	if (a->cont_shift && a->cont_shift != PAGE_SHIFT + 4)
		return refuse(why, "cont_shift: %u, where 0 (no contiguous blocks) or %u "
			      "(16 pages, the only block modelled) are possible",
			      a->cont_shift, PAGE_SHIFT + 4);
	/* The TLB can cache a block as one entry only where the format forms blocks. */
	if (a->cont_shift && !a->cont_ptes)
		return refuse(why, "cont_shift: %u for a format without blocks (cont_ptes 0)",
			      a->cont_shift);
	/* MMP_AD_SWITCHABLE is the last model. */
	if ((unsigned int)a->ad_model > MMP_AD_SWITCHABLE)
		return refuse(why, "ad_model: %u, where hardware, software or switchable "
			      "are possible", (unsigned int)a->ad_model);
	if (!a->tlb_flush_ceiling)
		return refuse(why, "tlb_flush_ceiling: 0 after the reference's fill, "
			      "so every flush would flush the whole mm");
	if (!a->cost)
		return refuse(why, "cost: no cost table after the reference's fill");
	for (size_t i = 0; i < ARRAY_SIZE(core_flags); i++)
		if (a->eflags_unsupported & core_flags[i].flag)
			missing |= core_flags[i].flag;
	if (missing) {
		size_t len = snprintf(why, ARCH_WHY_MAX, "eflags_unsupported: %#x removes",
				      a->eflags_unsupported);

		for (size_t i = 0; i < ARRAY_SIZE(core_flags) && len < ARCH_WHY_MAX; i++)
			if (missing & core_flags[i].flag)
				len += snprintf(why + len, ARCH_WHY_MAX - len, " %s",
						core_flags[i].name);
		if (len < ARCH_WHY_MAX)
			snprintf(why + len, ARCH_WHY_MAX - len,
				 ", which the core cannot do without");
		return why;
	}
	return NULL;
}

static void refused(const char *name, const char *why)
{
	fprintf(stderr, "libmmprim: back end \"%s\" refused: %s\n", name ? name : "(unnamed)", why);
}

unsigned int arch_fill_list(const struct mmp_arch *const *list, const char *const *names,
			    unsigned int n, struct mmp_arch *out)
{
	char why[ARCH_WHY_MAX];
	unsigned int kept = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct mmp_arch a = *list[i];

		mmp_arch_fill_generic(&a);
		if (arch_refusal(&a, names[i], why)) {
			/* The list's name when the struct's own is missing or wrong. */
			refused(names[i], why);
			continue;
		}
		out[kept++] = a;
	}
	return kept;
}

static void fill_all(void)
{
	nr_filled = arch_fill_list(registered, listed_names, ARRAY_SIZE(registered), filled);
}

static struct mmp_arch extra[MAX_EXTRA];
static char extra_names[MAX_EXTRA][64];
static unsigned int nr_extra;
static pthread_mutex_t extra_lock = PTHREAD_MUTEX_INITIALIZER;

const struct mmp_arch *mmp_arch_find(const char *name)
{
	const struct mmp_arch *found = NULL;

	pthread_once(&fill_once, fill_all);
	for (unsigned int i = 0; i < nr_filled; i++)
		if (!strcmp(filled[i].name, name))
			return &filled[i];
	pthread_mutex_lock(&extra_lock);
	for (unsigned int i = 0; i < nr_extra && !found; i++)
		if (!strcmp(extra[i].name, name))
			found = &extra[i];
	pthread_mutex_unlock(&extra_lock);
	return found;
}

/*
 * Checked like a listed back end: a broken copy for a test must still be a
 * possible one (a valid geometry, only not the architecture's), which the
 * conformance checks must then tell apart. An impossible one is refused the
 * listed way, with its rule on stderr.
 */
int mmp_arch_register_extra(const struct mmp_arch *arch)
{
	char why[ARCH_WHY_MAX];
	struct mmp_arch a;
	const char *no;
	int err = 0;

	if (!arch)
		return -EINVAL;
	a = *arch;
	mmp_arch_fill_generic(&a);
	no = arch_refusal(&a, NULL, why);
	if (!no && strlen(a.name) >= sizeof(extra_names[0]))
		no = refuse(why, "name: longer than the %zu characters a test's back end may have",
			    sizeof(extra_names[0]) - 1);
	if (no) {
		refused(a.name, why);
		return -EINVAL;
	}
	if (mmp_arch_find(a.name))
		return -EEXIST;
	pthread_mutex_lock(&extra_lock);
	if (nr_extra == MAX_EXTRA) {
		err = -ENOSPC;
	} else {
		/* The caller's name may not outlive the call. */
		strcpy(extra_names[nr_extra], a.name);
		extra[nr_extra] = a;
		extra[nr_extra].name = extra_names[nr_extra];
		nr_extra++;
	}
	pthread_mutex_unlock(&extra_lock);
	return err;
}

MMP_EXPORT int mmp_arch_count(void)
{
	pthread_once(&fill_once, fill_all);
	return nr_filled;
}

MMP_EXPORT const char *mmp_arch_name(int index)
{
	pthread_once(&fill_once, fill_all);
	if (index < 0 || index >= (int)nr_filled)
		return NULL;
	return filled[index].name;
}
