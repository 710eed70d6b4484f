/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The list of back ends. A port adds one line here; hooks it leaves out are
 * filled from arch/generic once, before the first space is created.
 */
#include <string.h>

#include "internal.h"

extern const struct mmp_arch mmp_arch_x86_64;
extern const struct mmp_arch mmp_arch_arm64;
extern const struct mmp_arch mmp_arch_riscv64;
extern const struct mmp_arch mmp_arch_x86_64_la57;
extern const struct mmp_arch mmp_arch_arm64_va39;
extern const struct mmp_arch mmp_arch_riscv64_sv39;
extern const struct mmp_arch mmp_arch_riscv64_sv57;

static const struct mmp_arch *const registered[] = {
	&mmp_arch_x86_64,
	&mmp_arch_arm64,
	&mmp_arch_riscv64,
	&mmp_arch_x86_64_la57,
	&mmp_arch_arm64_va39,
	&mmp_arch_riscv64_sv39,
	&mmp_arch_riscv64_sv57,
	&mmp_arch_generic,
};

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

		MMP_BUG_ON(!a->name || !a->mk_entry || !a->entry_flags || !a->entry_pfn);
		MMP_BUG_ON(!geometry_valid(a));
		filled[i] = *a;
		mmp_arch_fill_generic(&filled[i]);
	}
}

const struct mmp_arch *mmp_arch_find(const char *name)
{
	pthread_once(&fill_once, fill_all);
	for (size_t i = 0; i < ARRAY_SIZE(filled); i++)
		if (!strcmp(filled[i].name, name))
			return &filled[i];
	return NULL;
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
