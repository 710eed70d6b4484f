/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of back ends. The list is arch/meson.build's, one line per
 * back end; settings a back end leaves unset are taken from arch/generic once,
 * before the first space is created.
 */
#include <pthread.h>
#include <string.h>

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

static struct mmp_arch filled[ARRAY_SIZE(registered)];
static pthread_once_t fill_once = PTHREAD_ONCE_INIT;

/* 3 to 5 levels whose top table spans the task size; THP needs PMD leaves. */
static bool geometry_valid(const struct mmp_arch *a)
{
	unsigned int need = 1u << MMP_PTE | 1u << MMP_PMD;

	if (a->levels < 3 || a->levels > MMP_MAX_LEVELS)
		return false;
	if (a->task_size <= MMP_MMAP_MIN_ADDR || (a->task_size & (PAGE_SIZE - 1)) ||
	    a->task_size > level_size((enum mmp_level)(a->levels - 1)) * PTRS_PER_TABLE)
		return false;
	if (a->map_window && (a->map_window > a->task_size || (a->map_window & (PAGE_SIZE - 1))))
		return false;
	return (a->leaf_levels & need) == need && !(a->leaf_levels >> a->levels);
}

static void fill_all(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(registered); i++) {
		const struct mmp_arch *a = registered[i];

		MMP_BUG_ON(!a->name || (unsigned int)a->format >= MMP_NR_FORMATS);
		MMP_BUG_ON(!geometry_valid(a));
		MMP_BUG_ON(strcmp(a->name, listed_names[i]));
		filled[i] = *a;
		mmp_arch_fill_generic(&filled[i]);
	}
}

static struct mmp_arch extra[MAX_EXTRA];
static char extra_names[MAX_EXTRA][64];
static unsigned int nr_extra;
static pthread_mutex_t extra_lock = PTHREAD_MUTEX_INITIALIZER;

const struct mmp_arch *mmp_arch_find(const char *name)
{
	const struct mmp_arch *found = NULL;

	pthread_once(&fill_once, fill_all);
	for (size_t i = 0; i < ARRAY_SIZE(filled); i++)
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
 * conformance checks must then tell apart.
 */
int mmp_arch_register_extra(const struct mmp_arch *arch)
{
	int err = 0;

	if (!arch || !arch->name || strlen(arch->name) >= sizeof(extra_names[0]) ||
	    (unsigned int)arch->format >= MMP_NR_FORMATS || !geometry_valid(arch))
		return -EINVAL;
	if (mmp_arch_find(arch->name))
		return -EEXIST;
	pthread_mutex_lock(&extra_lock);
	if (nr_extra == MAX_EXTRA) {
		err = -ENOSPC;
	} else {
		/* The caller's name may not outlive the call. */
		strcpy(extra_names[nr_extra], arch->name);
		extra[nr_extra] = *arch;
		extra[nr_extra].name = extra_names[nr_extra];
		mmp_arch_fill_generic(&extra[nr_extra]);
		nr_extra++;
	}
	pthread_mutex_unlock(&extra_lock);
	return err;
}

MMP_EXPORT int mmp_arch_count(void)
{
	return ARRAY_SIZE(registered);
}

MMP_EXPORT const char *mmp_arch_name(int index)
{
	if (index < 0 || index >= (int)ARRAY_SIZE(registered))
		return NULL;
	return registered[index]->name;
}
