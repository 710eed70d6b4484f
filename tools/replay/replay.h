/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmprim-replay: the memory system calls of a real program, recorded with
 * strace, replayed into simulated spaces. parse.c reads strace's lines,
 * source.c orders the lines of one trace (a file, or -ff per-process files),
 * engine.c replays the calls, worker.c runs a thread's calls on a host thread
 * of its own, output.c prints what happened.
 */
#ifndef MMP_REPLAY_H
#define MMP_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <mmprim/mmprim.h>

#define RP_MAX_ARGS	8
#define RP_NAME_LEN	32

/* ---- one line of strace output (parse.c) ---- */

enum rp_kind {
	RP_CALL,	/* name(args) = ret */
	RP_UNFINISHED,	/* name(args <unfinished ...> */
	RP_RESUMED,	/* <... name resumed>rest */
	RP_EXIT,	/* +++ exited with N +++, +++ killed by SIG +++, +++ superseded +++ */
	RP_SIGNAL,	/* --- SIGCHLD {...} --- */
	RP_BLANK,
	RP_BAD,		/* @why says what is wrong */
};

struct rp_line {
	enum rp_kind kind;
	int pid;		/* -1: the line has none */
	bool has_ts;
	double ts;
	char name[RP_NAME_LEN];
	/* RP_CALL: the arguments, pointing into the line (which parsing cuts up). */
	int nargs;
	char *args[RP_MAX_ARGS];
	bool has_ret;		/* false for "= ?" */
	int64_t ret;
	char err[RP_NAME_LEN];	/* "ENOMEM" when the call failed, else "" */
	/* RP_UNFINISHED: the call so far; RP_RESUMED: what follows "resumed>". */
	char *text;
	const char *why;
};

/* Parse @s (modified in place); @default_pid for -ff files, whose lines carry none. */
void rp_parse_line(char *s, int default_pid, struct rp_line *out);
/* The timestamp (-t, -tt, -ttt) of line @s, which is left as it is. */
bool rp_line_time(const char *s, double *ts);
/* Parse a whole call "name(args) = ret" (an unfinished start joined with its rest). */
void rp_parse_call(char *s, struct rp_line *out);

/* Numbers and flag sets of an argument; false when @s is not one. */
bool rp_parse_u64(const char *s, uint64_t *v);
/* "A|B|0x10": OR of the named bits in @names (NULL-terminated pairs), false on unknown names. */
struct rp_flag {
	const char *name;
	uint64_t value;
};
bool rp_parse_flags(const char *s, const struct rp_flag *names, uint64_t *v, const char **unknown);

/* ---- the lines of one trace, in replay order (source.c) ---- */

struct rp_source;

/*
 * Open a trace: one file (strace -f -o FILE, or a single process), or the
 * per-process files of strace -ff -o PREFIX (PREFIX.PID, given as PREFIX or
 * as all the files), merged by timestamp when every line has one. Returns
 * NULL with a message on error.
 */
struct rp_source *rp_source_open(char **paths, int nr_paths);
void rp_source_close(struct rp_source *src);
void rp_source_rewind(struct rp_source *src);
const char *rp_source_name(struct rp_source *src);
/*
 * The next line: false at the end. @file and @lineno say where it is. @line
 * is valid until the next call.
 */
bool rp_source_next(struct rp_source *src, char **line, int *default_pid, const char **file,
		    unsigned long *lineno);
/* A clone-like call of @parent returned @child: -ff reads @child's file next. */
void rp_source_child(struct rp_source *src, int parent, int child);

/* ---- replay settings ---- */

enum rp_touch { RP_TOUCH_NONE, RP_TOUCH_FIRST, RP_TOUCH_ALL };

#define RP_MAX_SETS	16

struct rp_config {
	const char *arch;
	char label[128];	/* "x86_64 pte_batch=0" */
	int nr_opts;
	int opt[RP_MAX_SETS];
	long value[RP_MAX_SETS];
	int thp;		/* enum mmp_thp_mode of PMD-size folios, -1: library default */
	bool thp_all_orders;	/* mTHP orders 2..8 too (thp=always-all) */
};

struct rp_settings {
	enum rp_touch touch;
	uint64_t phys_bytes;
	bool quiet;		/* no input messages (already printed for an earlier config) */
	FILE *csv;		/* per-call VMA count, RSS and VmPTE, or NULL */
	FILE *smaps;		/* each process's smaps as it exits, or NULL */
};

/* Name of an option, and the enum mmp_opt of a name (-1 if unknown). */
const char *rp_opt_name(int opt);
int rp_opt_parse(const char *name);

/* ---- one replay and what it measured (engine.c) ---- */

#define RP_MAX_REASONS		64
#define RP_MAX_MISMATCHES	20

struct rp_reason {
	char what[96];
	uint64_t n;
};

struct rp_mismatch {
	char where[160];	/* file:line */
	char what[200];
};

struct rp_result {
	const char *trace;
	const struct rp_config *cfg;
	uint64_t lines, calls, replayed, skipped, mismatches, bad_input;
	uint64_t processes, threads, inferred, inferred_bytes, stood_in, touched_pages;
	uint64_t inferred_execs;	/* execs a trace without %process does not show */
	int nr_reasons;
	struct rp_reason reasons[RP_MAX_REASONS];	/* skipped, by reason */
	int nr_notes;
	struct rp_reason notes[RP_MAX_REASONS];	/* replayed, but note how */
	int nr_shown;
	struct rp_mismatch shown[RP_MAX_MISMATCHES];
	uint64_t vmas_peak, vmas_end, rss_peak, rss_end, pte_peak, pte_end;	/* bytes, VMAs */
	struct mmp_counters counters;
	double modeled_ns, host_s;
	int verify;		/* 0, or the first error of mmp_space_verify() */
	int error;		/* a set-up error (phys, space): the replay did not run */
	/* file:line of a moved break no exec explains: the replay stopped there. */
	char no_exec[160];
};

/* Replay @src under @cfg; 0, or a negative errno when it could not start. */
int rp_replay(struct rp_source *src, const struct rp_config *cfg, const struct rp_settings *set,
	      struct rp_result *res);

/* Count @n under @what (skips or notes). */
void rp_count(struct rp_reason *tab, int *nr, const char *what, uint64_t n);

/* ---- host threads for the CPUs of CLONE_VM tasks (worker.c) ---- */

struct rp_worker;

struct rp_worker *rp_worker_start(void);
/* Run fn(arg) on the worker's thread and wait for it. */
void rp_worker_run(struct rp_worker *w, void (*fn)(void *), void *arg);
void rp_worker_stop(struct rp_worker *w);

/* ---- output (output.c) ---- */

void rp_print_table(FILE *f, const char *trace, struct rp_result *res, int n);
void rp_print_json(FILE *f, struct rp_result *res, int n, bool *first);
void rp_csv_header(FILE *f);

#endif /* MMP_REPLAY_H */
