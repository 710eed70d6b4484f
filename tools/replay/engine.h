/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The replay engine's state, shared by engine.c (tasks, processes) and calls.c (system calls). */
#ifndef MMP_REPLAY_ENGINE_H
#define MMP_REPLAY_ENGINE_H

#include "replay.h"

/* Address ranges, unsorted: the mappings a process has that the replay skipped. */
struct rp_ranges {
	struct { uint64_t start, end; } *v;
	int nr, cap;
};

/* A process: one simulated space, shared by its threads. */
struct rp_proc {
	struct mmp_space *space;
	uint64_t id;			/* the replay's own number for it: never reused */
	int nr_tasks;
	bool has_heap;			/* brk's start is known */
	struct rp_ranges skipped;	/* MAP_SHARED, hugetlb, ...: not in the space */
	struct mmp_space_stat last;	/* as last added into the engine's totals */
};

/* A task (thread or process) of the trace, by pid. */
struct rp_task {
	int pid;
	struct rp_proc *proc;
	struct mmp_cpu *cpu;
	struct rp_worker *worker;	/* NULL: its CPU runs on the main thread */
	/* An <unfinished ...> call waiting for its <... resumed> rest. */
	char *pending;
	char pending_name[RP_NAME_LEN];
	const char *pending_file;
	unsigned long pending_line;
	int early_child;		/* the pending clone's child, created when it first showed up */
	/* An exec the trace does not show (engine.c, exec_unseen()). */
	int loader_ago;			/* calls since ld.so mapped an object, -1: none */
	int exec_window;		/* calls left for ld.so to confirm an inferred exec */
	const char *exec_file;		/* where its brk(NULL) was */
	unsigned long exec_line;
};

struct rp_file;

struct rp_engine {
	const struct rp_config *cfg;
	const struct rp_settings *set;
	struct rp_result *res;
	struct rp_source *src;
	struct mmp_phys *phys;
	struct rp_task **tasks;
	int nr_tasks, cap_tasks;
	struct rp_task *last_task;	/* lookup cache */
	bool seen_root;
	uint64_t tot_vmas, tot_rss, tot_pte;
	const char *file;		/* where the current call is */
	unsigned long line;
	uint64_t seq;
	int verify_budget;		/* mmp_space_verify() calls left for mismatches */
	bool in_call;			/* the line is a call: an input error skips it */
	bool process_events;		/* execve, clone, exit_group, ... seen: no guessing */
	bool stop;			/* the trace cannot be replayed further (res->no_exec) */
	struct rp_task *cur;		/* whose call it is */
	/* The files the trace maps (files.c); calls of several task threads look them up. */
	pthread_mutex_t files_lock;
	struct rp_file *files;
	int nr_files, cap_files;
	uint64_t next_proc_id;
};

/* The call being replayed, handed to the task's thread. */
struct rp_ctx {
	struct rp_engine *e;
	struct rp_task *t;
	struct rp_line *l;
};

/* engine.c */
void rp_input_error(struct rp_engine *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rp_mismatch(struct rp_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rp_skip(struct rp_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rp_note(struct rp_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* files.c: the trace's files by path (strace -y) or by process and fd. */
enum rp_file_kind { RP_FILE_REGULAR, RP_FILE_SHMEM, RP_FILE_ZERO, RP_FILE_SPECIAL };
enum rp_file_kind rp_file_kind(const char *arg, char *path, size_t size, bool *has_path);
struct mmp_file *rp_file_get(struct rp_engine *e, struct rp_proc *proc, const char *arg,
			     uint64_t end, const char **why);
void rp_files_free(struct rp_engine *e);

/* calls.c: each runs on the task's thread; false when @name is not theirs. */
bool rp_memory_call(struct rp_ctx *c);
/* Is @name a call rp_memory_call() replays on the caller's space? */
bool rp_is_memory_call(const char *name);
/* The task the trace knows by @pid, or NULL. */
struct rp_task *rp_task_find(struct rp_engine *e, int pid);
bool rp_brk_moved(struct rp_ctx *c);
bool rp_ranges_overlap(const struct rp_ranges *r, uint64_t start, uint64_t end);
void rp_ranges_free(struct rp_ranges *r);

#endif /* MMP_REPLAY_ENGINE_H */
