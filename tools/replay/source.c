// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The lines of one trace in the order to replay them. One file is read as it
 * is. The per-process files of strace -ff are merged by timestamp when every
 * line has one (-t, -tt, -ttt), so threads interleave as they ran. Without
 * timestamps nothing orders the processes: a child's file is read whole
 * right where its parent's clone returned, which is exact for fork (the
 * spaces are separate from then on) and runs a thread's calls before the rest
 * of its process.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay.h"

struct rp_file {
	char *path;
	int pid;		/* -ff: from the file name; -1 for a single file */
	FILE *f;
	unsigned long lineno;
	bool started, done;
	/* Merging by time: the file's next line, read ahead. */
	char *peek;
	size_t peek_cap;
	bool has_peek;
	double peek_ts;
};

struct rp_source {
	char *name;
	int nr;
	struct rp_file *files;
	int *stack;		/* files being read, the innermost last */
	int depth;
	bool by_time;		/* -ff with timestamps on every line */
	char *buf;
	size_t cap;
};

static int cmp_pid(const void *a, const void *b)
{
	const struct rp_file *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static bool is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* PREFIX.PID files beside @prefix. */
static int find_ff_files(struct rp_source *src, const char *prefix)
{
	char *dup = strdup(prefix), *dup2 = strdup(prefix);
	const char *dir = dirname(dup), *base = basename(dup2);
	size_t blen = strlen(base);
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d) {
		err = -errno;
		goto out;
	}
	while ((de = readdir(d))) {
		const char *tail = de->d_name + blen;
		struct rp_file *nf;
		char *end;
		long pid;

		if (strncmp(de->d_name, base, blen) || *tail != '.' || !tail[1])
			continue;
		pid = strtol(tail + 1, &end, 10);
		if (*end || pid <= 0)
			continue;
		nf = realloc(src->files, (src->nr + 1) * sizeof(*nf));
		if (!nf) {
			err = -ENOMEM;
			break;
		}
		src->files = nf;
		memset(&nf[src->nr], 0, sizeof(*nf));
		nf[src->nr].pid = (int)pid;
		if (asprintf(&nf[src->nr].path, "%s/%s", dir, de->d_name) < 0) {
			err = -ENOMEM;
			break;
		}
		src->nr++;
	}
	closedir(d);
out:
	free(dup);
	free(dup2);
	return err;
}

struct rp_source *rp_source_open(char **paths, int nr_paths)
{
	struct rp_source *src = calloc(1, sizeof(*src));
	int err = 0;

	if (!src)
		return NULL;
	src->name = strdup(paths[0]);
	if (nr_paths == 1 && is_file(paths[0])) {
		src->files = calloc(1, sizeof(*src->files));
		if (src->files) {
			src->files[0].path = strdup(paths[0]);
			src->files[0].pid = -1;
			src->nr = 1;
		}
	} else if (nr_paths == 1) {
		err = find_ff_files(src, paths[0]);
	} else {
		/* PREFIX.PID files named one by one: the trace is called PREFIX. */
		char *dot = strrchr(src->name, '.');

		if (dot)
			*dot = 0;
		src->files = calloc(nr_paths, sizeof(*src->files));
		for (int i = 0; src->files && i < nr_paths; i++) {
			const char *d = strrchr(paths[i], '.');

			src->files[i].path = strdup(paths[i]);
			src->files[i].pid = d ? atoi(d + 1) : -1;
			src->nr++;
		}
	}
	if (err || !src->nr) {
		fprintf(stderr, "mmprim-replay: %s: %s\n", paths[0],
			err ? strerror(-err) : "no such file, nor -ff files PREFIX.PID");
		rp_source_close(src);
		return NULL;
	}
	qsort(src->files, src->nr, sizeof(*src->files), cmp_pid);
	src->stack = calloc(src->nr, sizeof(*src->stack));
	for (int i = 0; i < src->nr; i++) {
		src->files[i].f = src->stack ? fopen(src->files[i].path, "r") : NULL;
		if (!src->files[i].f) {
			fprintf(stderr, "mmprim-replay: %s: %s\n", src->files[i].path,
				strerror(errno));
			rp_source_close(src);
			return NULL;
		}
	}
	rp_source_rewind(src);
	return src;
}

void rp_source_close(struct rp_source *src)
{
	if (!src)
		return;
	for (int i = 0; i < src->nr; i++) {
		if (src->files[i].f)
			fclose(src->files[i].f);
		free(src->files[i].path);
		free(src->files[i].peek);
	}
	free(src->files);
	free(src->stack);
	free(src->buf);
	free(src->name);
	free(src);
}

/* Read @f's next line into its peek buffer; false at its end. */
static bool peek(struct rp_file *f)
{
	if (f->has_peek)
		return true;
	if (f->done || getline(&f->peek, &f->peek_cap, f->f) < 0) {
		f->done = true;
		return false;
	}
	f->has_peek = true;
	/* A line without a time (a blank one) keeps the file's last. */
	rp_line_time(f->peek, &f->peek_ts);
	return true;
}

void rp_source_rewind(struct rp_source *src)
{
	src->by_time = src->nr > 1;
	for (int i = 0; i < src->nr; i++) {
		struct rp_file *f = &src->files[i];
		double ts;

		rewind(f->f);
		f->lineno = 0;
		f->started = f->done = f->has_peek = false;
		f->peek_ts = 0;
		/* Every file's first line must carry a time to merge by it. */
		if (src->by_time && (!peek(f) || !rp_line_time(f->peek, &ts)))
			src->by_time = false;
	}
	for (int i = 0; i < src->nr && !src->by_time; i++) {
		rewind(src->files[i].f);
		src->files[i].done = src->files[i].has_peek = false;
	}
	src->depth = 0;
}

const char *rp_source_name(struct rp_source *src)
{
	return src->name;
}

static void push(struct rp_source *src, int i)
{
	src->files[i].started = true;
	src->stack[src->depth++] = i;
}

/* The earliest next line of all files: ties go to the lower pid. */
static bool next_by_time(struct rp_source *src, char **line, int *default_pid, const char **file,
			 unsigned long *lineno)
{
	struct rp_file *best = NULL;

	for (int i = 0; i < src->nr; i++) {
		struct rp_file *f = &src->files[i];

		if (peek(f) && (!best || f->peek_ts < best->peek_ts))
			best = f;
	}
	if (!best)
		return false;
	/* Hand the line out; the next call reads ahead into the other buffer. */
	{
		char *tmp = src->buf;
		size_t cap = src->cap;

		src->buf = best->peek;
		src->cap = best->peek_cap;
		best->peek = tmp;
		best->peek_cap = cap;
	}
	best->has_peek = false;
	best->lineno++;
	*line = src->buf;
	*default_pid = best->pid;
	*file = best->path;
	*lineno = best->lineno;
	return true;
}

bool rp_source_next(struct rp_source *src, char **line, int *default_pid, const char **file,
		    unsigned long *lineno)
{
	if (src->by_time)
		return next_by_time(src, line, default_pid, file, lineno);
	for (;;) {
		struct rp_file *f;

		if (!src->depth) {
			/* The root (lowest pid) first, then any file no clone led to. */
			int i;

			for (i = 0; i < src->nr && src->files[i].started; i++)
				;
			if (i == src->nr)
				return false;
			push(src, i);
		}
		f = &src->files[src->stack[src->depth - 1]];
		if (getline(&src->buf, &src->cap, f->f) < 0) {
			f->done = true;
			src->depth--;
			continue;
		}
		f->lineno++;
		*line = src->buf;
		*default_pid = f->pid;
		*file = f->path;
		*lineno = f->lineno;
		return true;
	}
}

void rp_source_child(struct rp_source *src, int parent, int child)
{
	(void)parent;
	if (src->nr < 2 || src->by_time)
		return;
	for (int i = 0; i < src->nr; i++)
		if (src->files[i].pid == child && !src->files[i].started)
			push(src, i);
}
