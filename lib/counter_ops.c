/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Counters by name, and printing the ones that moved (mmprim/counters.h). */
#include <string.h>

#include "vmstat.h"

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
