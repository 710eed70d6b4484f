/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The counters' names and docs, lookup by name, and printing the ones that moved (mmprim/counters.h). */
#include <string.h>

#include "vmstat.h"

static const char *const counter_names[MMP_NR_COUNTERS] = {
#define MMP_COUNTER_NAME(id, name, doc) [MMP_C_##id] = name,
	MMP_COUNTER_LIST(MMP_COUNTER_NAME)
#undef MMP_COUNTER_NAME
};

static const char *const counter_docs[MMP_NR_COUNTERS] = {
#define MMP_COUNTER_DOC(id, name, doc) [MMP_C_##id] = doc,
	MMP_COUNTER_LIST(MMP_COUNTER_DOC)
#undef MMP_COUNTER_DOC
};

MMP_EXPORT int mmp_counter_count(void)
{
	return MMP_NR_COUNTERS;
}

MMP_EXPORT const char *mmp_counter_name(int c)
{
	return c >= 0 && c < MMP_NR_COUNTERS ? counter_names[c] : NULL;
}

MMP_EXPORT const char *mmp_counter_doc(int c)
{
	return c >= 0 && c < MMP_NR_COUNTERS ? counter_docs[c] : NULL;
}

MMP_EXPORT int mmp_counter_by_name(const char *name)
{
	if (!name)
		return -EINVAL;
	for (int c = 0; c < MMP_NR_COUNTERS; c++)
		if (!strcmp(mmp_counter_name(c), name))
			return c;
	return -ENOENT;
}

MMP_EXPORT int mmp_counters_print_sized(FILE *f, const struct mmp_counters *c, size_t size,
					const char *prefix)
{
	size_t known = MIN(size / sizeof(uint64_t), (size_t)MMP_NR_COUNTERS);
	int lines = 0;

	if (!f || !c || size < sizeof(uint64_t))
		return -EINVAL;
	for (size_t i = 0; i < known; i++) {
		if (!c->v[i])
			continue;
		if (fprintf(f, "%s%-20s %llu\n", prefix ? prefix : "", mmp_counter_name((int)i),
			    (unsigned long long)c->v[i]) < 0)
			return -EIO;
		lines++;
	}
	return lines;
}
