/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON output shared by the tools and the benches: mmprim-seeds and
 * mmprim-replay print strings, numbers and counters one way, so that one
 * reader takes both.
 */
#ifndef MMP_TOOLS_JSON_H
#define MMP_TOOLS_JSON_H

#include <stdio.h>

#include <mmprim/mmprim.h>

/* {"fault_anon":N,...} over every counter, no newline. */
void json_counters(FILE *f, const struct mmp_counters *c);
/* @s as a JSON string, quotes included. */
void json_string(FILE *f, const char *s);
/* @v as a JSON number, or null when it is not finite. */
void json_number(FILE *f, double v);

#endif /* MMP_TOOLS_JSON_H */
