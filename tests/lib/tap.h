/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiny TAP producer for meson's 'tap' protocol. Each check prints "ok N" or
 * "not ok N"; tap_done() prints the plan and returns the exit status.
 */
#ifndef MMP_TAP_H
#define MMP_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;
/* A program may take the results itself (a report) instead of printing TAP. */
static void (*tap_hook)(int ok, const char *msg);

__attribute__((format(printf, 2, 0), unused))
static int tap_vok(int cond, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	++tap_n;
	if (tap_hook)
		tap_hook(cond, msg);
	else
		printf("%s %d - %s\n", cond ? "ok" : "not ok", tap_n, msg);
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

__attribute__((format(printf, 2, 3), unused))
static int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vok(cond, fmt, ap);
	va_end(ap);
	return r;
}

static void tap_discard(int ok, const char *msg)
{
}

/* In a forked child: its checks must not print TAP into the parent's stream. */
__attribute__((unused))
static void tap_in_child(void)
{
	tap_hook = tap_discard;
}

__attribute__((format(printf, 4, 5), unused))
static int tap_eq_at(long long got, long long want, const char *expr, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vok(got == want, fmt, ap);
	va_end(ap);
	if (!r && !tap_hook)
		printf("#   got %lld, want %lld (%s)\n", got, want, expr);
	return r;
}

/* Compare two integers; on failure print both values. */
#define tap_eq(got, want, ...) tap_eq_at((long long)(got), (long long)(want), #got, __VA_ARGS__)

/* A precondition of the remaining checks: bail out of the whole test when false. */
#define tap_require(cond, ...)							\
	do {									\
		if (!tap_ok((cond), __VA_ARGS__)) {				\
			printf("Bail out! %s\n", #cond);			\
			exit(1);						\
		}								\
	} while (0)

__attribute__((unused))
static int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* MMP_TAP_H */
