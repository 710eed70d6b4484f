// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The files a trace maps, as simulated files on the replay's phys. A file is
 * known by its path where strace printed one (-y: "3</usr/lib/libc.so.6>"),
 * so every process that maps a path maps the same file and shares its page
 * cache; without -y only the fd number is there, and the replay keeps one
 * file per process and fd number (a forked child's fd then names a file of
 * its own: the sharing through it is lost, and said so in a note).
 *
 * The trace does not carry the data or the size: a file holds zeros and
 * grows to cover every mapping made of it. Paths under /dev/shm and memfds
 * are shmem; /dev/zero maps anonymous memory, as the kernel's does; other
 * devices and special files (sockets, anon_inode:) are not modelled.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct rp_file {
	char key[160];
	struct mmp_file *f;
};

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * Split an fd argument into its path (NULL without -y) and classify it:
 * RP_FILE_REGULAR, _SHMEM, _ZERO (anonymous memory) or _SPECIAL (skip).
 */
enum rp_file_kind rp_file_kind(const char *arg, char *path, size_t size, bool *has_path)
{
	const char *lt = strchr(arg, '<'), *gt = strrchr(arg, '>');
	size_t n;

	*has_path = lt && gt && gt > lt;
	if (!*has_path)
		return RP_FILE_REGULAR;
	n = (size_t)(gt - lt - 1) < size - 1 ? (size_t)(gt - lt - 1) : size - 1;
	memcpy(path, lt + 1, n);
	path[n] = 0;
	if (!strcmp(path, "/dev/zero"))
		return RP_FILE_ZERO;
	if (starts(path, "/dev/shm/") || starts(path, "/memfd:") || starts(path, "memfd:"))
		return RP_FILE_SHMEM;
	if (starts(path, "/dev/") || starts(path, "socket:") || starts(path, "anon_inode:") ||
	    starts(path, "pipe:"))
		return RP_FILE_SPECIAL;
	return RP_FILE_REGULAR;
}

/*
 * The simulated file for fd argument @arg of @proc, grown to hold @end bytes;
 * NULL with a reason in *@why when it cannot be had.
 */
struct mmp_file *rp_file_get(struct rp_engine *e, struct rp_proc *proc, const char *arg,
			     uint64_t end, const char **why)
{
	char path[128], key[160];
	struct mmp_file *f = NULL;
	enum rp_file_kind kind;
	bool has_path;
	uint64_t size;

	kind = rp_file_kind(arg, path, sizeof(path), &has_path);
	if (has_path)
		snprintf(key, sizeof(key), "%s", path);
	else
		snprintf(key, sizeof(key), "fd %.20s of process %llu", arg,
			 (unsigned long long)proc->id);
	pthread_mutex_lock(&e->files_lock);
	for (int i = 0; i < e->nr_files; i++)
		if (!strcmp(e->files[i].key, key))
			f = e->files[i].f;
	if (!f) {
		struct rp_file *v = e->files;

		if (e->nr_files == e->cap_files) {
			v = realloc(e->files, (e->cap_files * 2 + 8) * sizeof(*v));
			if (v) {
				e->files = v;
				e->cap_files = e->cap_files * 2 + 8;
			}
		}
		if (v && !mmp_file_create(e->phys, 0, kind == RP_FILE_SHMEM ? MMP_FILE_SHMEM : 0, &f)) {
			snprintf(e->files[e->nr_files].key, sizeof(e->files[0].key), "%s", key);
			e->files[e->nr_files++].f = f;
		}
	}
	pthread_mutex_unlock(&e->files_lock);
	if (!f) {
		*why = "no memory for another simulated file";
		return NULL;
	}
	if (!mmp_file_size(f, &size) && size < end && mmp_file_truncate(f, end)) {
		*why = "the simulated file cannot grow that far";
		return NULL;
	}
	return f;
}

/* After every space is gone: nothing maps the files any more. */
void rp_files_free(struct rp_engine *e)
{
	for (int i = 0; i < e->nr_files; i++)
		mmp_file_destroy(e->files[i].f);
	free(e->files);
	e->files = NULL;
	e->nr_files = e->cap_files = 0;
}
