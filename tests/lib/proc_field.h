/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Numbers of the host's /proc and /sys files as tests read them: one
 * "Name:   N [kB]" line of meminfo or status, or a file that holds one
 * number (a sysctl, a sysfs knob).
 */
#ifndef MMP_TEST_PROC_FIELD_H
#define MMP_TEST_PROC_FIELD_H

#include <stdbool.h>
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

/* The number a one-number file holds, or -1 when it cannot be read. */
static inline long proc_number(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Writes @v to a one-number file; false if the kernel refused it. */
static inline bool proc_number_write(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	ok = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) == 0 && ok;
}

#endif /* MMP_TEST_PROC_FIELD_H */
