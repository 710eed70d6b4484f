/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One "Name:   N [kB]" line of a /proc file (meminfo, status), as tests read the host's. */
#ifndef MMP_TEST_PROC_FIELD_H
#define MMP_TEST_PROC_FIELD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The number on @name's line of @path, or -1 without one. Read unsigned and
 * kept as the same bits: meminfo's HugePages_Rsvd is printed unsigned and may
 * have wrapped.
 */
static inline int64_t proc_field(const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	size_t nlen = strlen(name);
	char line[256];
	int64_t v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, nlen) && line[nlen] == ':')
			v = (int64_t)strtoull(line + nlen + 1, NULL, 10);
	fclose(f);
	return v;
}

#endif /* MMP_TEST_PROC_FIELD_H */
