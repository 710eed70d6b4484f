// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * strace's output, one line at a time:
 *   [PID |[pid PID] ][TIMESTAMP ]name(arg, arg, ...) = RET [ERRNO (text)] [<seconds>]
 *   [PID ]name(arg, ... <unfinished ...>
 *   [PID ]<... name resumed>..., arg) = RET
 *   [PID ]+++ exited with 0 +++      [PID ]--- SIGCHLD {...} ---
 * Arguments hold strings, arrays and structures: commas split them only
 * outside quotes and brackets.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static char *skip_spaces(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* -ttt "1700000000.123456", -t/-tt "12:34:56[.123456]". */
static bool is_timestamp(const char *s, size_t n, double *ts)
{
	size_t i = 0, digits = 0;
	bool dot = false, colon = false;

	for (; i < n; i++) {
		if (isdigit((unsigned char)s[i]))
			digits++;
		else if (s[i] == '.' && !dot)
			dot = true;
		else if (s[i] == ':')
			colon = true;
		else
			return false;
	}
	if (!digits || (!dot && !colon))
		return false;
	if (colon) {
		unsigned int h = 0, m = 0;
		double sec = 0;

		if (sscanf(s, "%u:%u:%lf", &h, &m, &sec) != 3)
			return false;
		*ts = h * 3600.0 + m * 60.0 + sec;
	} else {
		*ts = strtod(s, NULL);
	}
	return true;
}

static size_t name_len(const char *s)
{
	size_t n = 0;

	while (islower((unsigned char)s[n]) || isdigit((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

/*
 * Calls an older strace prints by number (strace 6.1, Debian 12, knows no
 * mseal): the same number on every architecture since the unified table.
 */
static const struct {
	const char *number, *name;
} numbered_calls[] = {
	{ "syscall_0x1ce", "mseal" },
};

static void set_name(struct rp_line *out, const char *s, size_t n)
{
	if (n >= RP_NAME_LEN)
		n = RP_NAME_LEN - 1;
	memcpy(out->name, s, n);
	out->name[n] = 0;
	for (size_t i = 0; i < sizeof(numbered_calls) / sizeof(numbered_calls[0]); i++)
		if (!strcmp(out->name, numbered_calls[i].number))
			snprintf(out->name, RP_NAME_LEN, "%s", numbered_calls[i].name);
}

/*
 * strace prints a value it has no name for followed by a C comment with the
 * name it guessed (0x8, a comment holding MAP_???, then |MAP_ANONYMOUS): drop
 * the comments, and the spaces around them, outside quoted strings.
 */
static char *drop_comment(char *s)
{
	char *r = s, *w = s, *e;
	bool quote = false;

	while (*r) {
		if (quote && *r == '\\' && r[1]) {
			*w++ = *r++;
		} else if (*r == '"') {
			quote = !quote;
		} else if (!quote && r[0] == '/' && r[1] == '*' && (e = strstr(r + 2, "*/"))) {
			while (w > s && w[-1] == ' ')
				w--;
			r = e + 2;
			while (*r == ' ')
				r++;
			continue;
		}
		*w++ = *r++;
	}
	*w = 0;
	return s;
}

static void bad(struct rp_line *out, const char *why)
{
	out->kind = RP_BAD;
	out->why = why;
}

static char *trim(char *s)
{
	char *e;

	s = skip_spaces(s);
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = 0;
	return s;
}

void rp_parse_call(char *s, struct rp_line *out)
{
	size_t n = name_len(s);
	int depth = 0;
	bool quote = false;
	char *p, *arg;

	out->nargs = 0;
	out->has_ret = false;
	out->ret = 0;
	out->err[0] = 0;
	if (!n || s[n] != '(') {
		bad(out, "not a system call");
		return;
	}
	set_name(out, s, n);
	out->kind = RP_CALL;
	arg = p = s + n + 1;
	for (;; p++) {
		char c = *p;

		if (!c) {
			bad(out, "truncated call: no closing parenthesis");
			return;
		}
		if (quote) {
			if (c == '\\' && p[1])
				p++;
			else if (c == '"')
				quote = false;
			continue;
		}
		if (c == '"') {
			quote = true;
		} else if (c == '(' || c == '[' || c == '{') {
			depth++;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
		} else if (c == ')') {
			if (depth-- > 0)
				continue;
			*p = 0;
			break;
		} else if (c == ',' && !depth) {
			*p = 0;
			if (out->nargs < RP_MAX_ARGS)
				out->args[out->nargs++] = trim(drop_comment(arg));
			arg = p + 1;
		}
	}
	arg = trim(drop_comment(arg));
	/* "f()" has no argument, "f(a)" has one. */
	if (*arg || out->nargs)
		if (out->nargs < RP_MAX_ARGS)
			out->args[out->nargs++] = arg;
	p = skip_spaces(p + 1);
	if (*p != '=') {
		bad(out, "truncated call: no return value");
		return;
	}
	p = skip_spaces(p + 1);
	if (*p == '?')
		return;
	{
		char *end;
		bool neg = *p == '-';
		uint64_t v = strtoull(neg ? p + 1 : p, &end, 0);

		if (end == p || end == p + neg) {
			bad(out, "return value is not a number");
			return;
		}
		out->has_ret = true;
		out->ret = neg ? -(int64_t)v : (int64_t)v;
		p = skip_spaces(end);
	}
	if (isupper((unsigned char)*p)) {
		size_t e = 0;

		while (isupper((unsigned char)p[e]) || isdigit((unsigned char)p[e]) || p[e] == '_')
			e++;
		if (e >= RP_NAME_LEN)
			e = RP_NAME_LEN - 1;
		memcpy(out->err, p, e);
		out->err[e] = 0;
	}
}

void rp_parse_line(char *s, int default_pid, struct rp_line *out)
{
	static const char unfinished[] = " <unfinished ...>";
	size_t len, tok;
	char *p;

	memset(out, 0, sizeof(*out));
	out->pid = default_pid;
	len = strlen(s);
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		s[--len] = 0;
	p = skip_spaces(s);
	if (!*p) {
		out->kind = RP_BLANK;
		return;
	}
	/* "[pid  123] " (strace -f to a terminal) or "123 " (strace -f -o). */
	if (!strncmp(p, "[pid", 4)) {
		char *end;

		out->pid = (int)strtol(p + 4, &end, 10);
		if (*end != ']') {
			bad(out, "malformed [pid N] prefix");
			return;
		}
		p = skip_spaces(end + 1);
	} else {
		tok = strcspn(p, " ");
		if (p[tok] == ' ' && all_digits(p, tok)) {
			out->pid = (int)strtol(p, NULL, 10);
			p = skip_spaces(p + tok);
		}
	}
	tok = strcspn(p, " ");
	if (p[tok] == ' ' && is_timestamp(p, tok, &out->ts)) {
		out->has_ts = true;
		p = skip_spaces(p + tok);
	}
	if (!strncmp(p, "+++ ", 4)) {
		out->kind = RP_EXIT;
		return;
	}
	if (!strncmp(p, "--- ", 4)) {
		out->kind = RP_SIGNAL;
		return;
	}
	if (!strncmp(p, "<... ", 5)) {
		char *r = strstr(p, " resumed>");

		if (!r) {
			bad(out, "malformed resumed line");
			return;
		}
		set_name(out, p + 5, (size_t)(r - (p + 5)));
		out->kind = RP_RESUMED;
		out->text = r + strlen(" resumed>");
		return;
	}
	len = strlen(p);
	if (len >= sizeof(unfinished) - 1 &&
	    !strcmp(p + len - (sizeof(unfinished) - 1), unfinished)) {
		size_t n = name_len(p);

		if (!n || p[n] != '(') {
			bad(out, "not a system call");
			return;
		}
		p[len - (sizeof(unfinished) - 1)] = 0;
		set_name(out, p, n);
		out->kind = RP_UNFINISHED;
		out->text = p;
		return;
	}
	{
		int pid = out->pid;
		bool has_ts = out->has_ts;
		double ts = out->ts;

		rp_parse_call(p, out);
		out->pid = pid;
		out->has_ts = has_ts;
		out->ts = ts;
	}
}

bool rp_line_time(const char *s, double *ts)
{
	size_t tok;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!strncmp(s, "[pid", 4)) {
		s = strchr(s, ']');
		if (!s)
			return false;
		s++;
	} else {
		tok = strcspn(s, " ");
		if (s[tok] == ' ' && all_digits(s, tok))
			s += tok;
	}
	while (*s == ' ')
		s++;
	tok = strcspn(s, " ");
	return s[tok] == ' ' && is_timestamp(s, tok, ts);
}

bool rp_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	bool neg;

	if (!strcmp(s, "NULL")) {
		*v = 0;
		return true;
	}
	neg = *s == '-';
	if (!isdigit((unsigned char)s[neg]))
		return false;
	errno = 0;
	*v = strtoull(s + neg, &end, s[neg] == '0' && (s[neg + 1] == 'x' || s[neg + 1] == 'X') ? 16 : 10);
	if (*end || errno)
		return false;
	if (neg)
		*v = -*v;
	return true;
}

/* "N<<NAME" with NAME a shift the table names (MAP_HUGE_SHIFT), or a number. */
static bool shifted_flag(char *tok, const struct rp_flag *names, uint64_t *v)
{
	char *sh = strstr(tok, "<<");
	uint64_t n, shift;
	int i;

	*sh = 0;
	if (!rp_parse_u64(tok, &n))
		return false;
	for (i = 0; names[i].name; i++)
		if (!strcmp(names[i].name, sh + 2))
			break;
	if (names[i].name)
		shift = names[i].value;
	else if (!rp_parse_u64(sh + 2, &shift))
		return false;
	if (shift >= 64)
		return false;
	*v = n << shift;
	return true;
}

bool rp_parse_flags(const char *s, const struct rp_flag *names, uint64_t *v, const char **unknown)
{
	*v = 0;
	while (*s) {
		size_t n = strcspn(s, "|");
		char tok[64];
		uint64_t x;
		int i;

		if (!n || n >= sizeof(tok)) {
			*unknown = s;
			return false;
		}
		memcpy(tok, s, n);
		tok[n] = 0;
		for (i = 0; names[i].name; i++)
			if (!strcmp(names[i].name, tok))
				break;
		if (names[i].name)
			*v |= names[i].value;
		else if (strstr(tok, "<<") && shifted_flag(tok, names, &x))
			*v |= x;	/* "21<<MAP_HUGE_SHIFT": the table holds the shift */
		else if (rp_parse_u64(tok, &x))
			*v |= x;
		else {
			*unknown = s;
			return false;
		}
		s += n;
		if (*s == '|')
			s++;
	}
	return true;
}
