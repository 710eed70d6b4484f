/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON output shared by the tools and the benches.
 */
#include <inttypes.h>
#include <math.h>

#include "json.h"

void json_counters(FILE *f, const struct mmp_counters *c)
{
	int i;

	fputc('{', f);
	for (i = 0; i < MMP_NR_COUNTERS; i++) {
		if (i)
			fputc(',', f);
		json_string(f, mmp_counter_name(i));
		fprintf(f, ":%" PRIu64, c->v[i]);
	}
	fputc('}', f);
}

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void json_number(FILE *f, double v)
{
	/* JSON has no NaN or Infinity; a ratio over a zero time must still parse. */
	if (isfinite(v))
		fprintf(f, "%.9g", v);
	else
		fputs("null", f);
}
