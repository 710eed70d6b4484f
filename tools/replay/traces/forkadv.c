// SPDX-License-Identifier: LGPL-2.1-or-later
/* Fork with MADV_DONTFORK and MADV_WIPEONFORK ranges: the children's address
 * spaces lack the first and get the second empty; the advice undone, a second
 * fork copies both. Also what those advices refuse, and MADV_REMOVE. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096UL

static int child(char *keep, char *nofork, char *wipe)
{
	/* The DONTFORK range is a hole here: the child can map into it. */
	char *p = mmap(nofork, 4 * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p != nofork || keep[0] != 1 || wipe[0] != 0)
		return 1;
	memset(p, 5, 4 * PG);
	memset(wipe, 6, PG);
	return madvise(nofork, 4 * PG, MADV_DONTNEED) ? 1 : 0;
}

static int run_child(char *keep, char *nofork, char *wipe)
{
	int status = 1;
	pid_t pid = fork();

	if (pid == 0)
		_exit(child(keep, nofork, wipe));
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(void)
{
	char *base = mmap(NULL, 24 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *shared = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *keep = base, *nofork = base + 8 * PG, *wipe = base + 16 * PG;
	int bad = 0;

	memset(base, 1, 24 * PG);
	memset(shared, 2, 8 * PG);
	bad |= madvise(nofork, 4 * PG, MADV_DONTFORK);
	bad |= madvise(wipe, 4 * PG, MADV_WIPEONFORK);
	/* Refused: shared memory cannot be wiped. */
	bad |= madvise(shared, PG, MADV_WIPEONFORK) != -1;
	bad |= madvise(shared, 2 * PG, MADV_DONTFORK);
	bad |= madvise(keep, 2 * PG, MADV_RANDOM);
	bad |= madvise(keep, 8 * PG, MADV_NORMAL);
	bad |= madvise(shared + 4 * PG, 4 * PG, MADV_REMOVE);
	bad |= madvise(keep, PG, MADV_REMOVE) != -1;
	bad |= run_child(keep, nofork, wipe);
	bad |= run_child(keep, nofork, wipe);
	/* Undone: the next child gets both copied. */
	bad |= madvise(base, 24 * PG, MADV_DOFORK);
	bad |= madvise(base, 24 * PG, MADV_KEEPONFORK);
	if (fork() == 0)
		_exit(nofork[0] == 1 && wipe[0] == 1 ? 0 : 1);
	wait(NULL);
	munmap(shared, 8 * PG);
	munmap(base, 24 * PG);
	printf("%s\n", bad ? "bad" : "ok");
	return bad;
}
