/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Settings of the host the differential test changes for as long as it runs
 * (the hugetlb pool, khugepaged's pace), given back when it ends: at exit, or
 * on the signal that ends it (a test's timeout, ^C, an abort). Only the
 * process that changed them gives them back: forked agents inherit atexit.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "kdiff.h"

#define MAX_RESTORES	4

static void (*restores[MAX_RESTORES])(void);
static int nr_restores;
static pid_t owner;

static void restore_all(void)
{
	if (getpid() != owner)
		return;
	while (nr_restores > 0)
		restores[--nr_restores]();
}

static void restore_and_die(int sig)
{
	restore_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

int kd_host_restore_at_exit(void (*fn)(void))
{
	static const int fatal[] = { SIGTERM, SIGINT, SIGHUP, SIGABRT };

	if (nr_restores == MAX_RESTORES)
		return -1;
	if (!nr_restores && !owner) {
		owner = getpid();
		atexit(restore_all);
		for (unsigned int i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], restore_and_die);
	}
	restores[nr_restores++] = fn;
	return 0;
}
