/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host's khugepaged, paused while the differential test runs. khugepaged
 * collapses the agents' VM_HUGEPAGE ranges in the background whenever its
 * timer fires; the library collapses only when asked (MADV_COLLAPSE), so a
 * collapse on the host alone shows up ops later as a divergence (more Rss,
 * AnonHugePages, a THP where the library has small pages), and its replay
 * repeats it or not by chance. Seen: with scan_sleep_millisecs at 100, a
 * 1967-op replay that agrees at the default 10000 diverged at op 1603.
 *
 * Run as root, the test sets scan_sleep_millisecs to a day and pages_to_scan
 * to one for as long as any run is alive, and the last run to end puts the
 * host's values back. The write wakes khugepaged for one pass, and a mm that
 * finds its list empty wakes it once more; with pages_to_scan at one, such a
 * pass looks at a single PMD range. Runs share the host (meson runs the
 * kdiff tests in parallel): each holds a shared lock on USERS while it runs,
 * and the saved values live in SAVED until the last one leaves, so a run
 * killed without its exit handlers leaves them for the next to restore.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

#include "kdiff.h"
#include "proc_field.h"

#define KHUGEPAGED	"/sys/kernel/mm/transparent_hugepage/khugepaged/"
#define SLEEP_MS	KHUGEPAGED "scan_sleep_millisecs"
#define PAGES		KHUGEPAGED "pages_to_scan"
#define LOCK		"/dev/shm/mmprim-kdiff-khugepaged.lock"
#define USERS		"/dev/shm/mmprim-kdiff-khugepaged.users"
#define SAVED		"/dev/shm/mmprim-kdiff-khugepaged.saved"

#define PAUSED_SLEEP_MS	86400000L	/* a day */
#define PAUSED_PAGES	1L

static int users_fd = -1;

/* Write only a change: every write of scan_sleep_millisecs wakes khugepaged for a pass. */
static bool set_number(const char *path, long v)
{
	return proc_number(path) == v || proc_number_write(path, v);
}

static int lock_file(const char *path, int how)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd >= 0 && flock(fd, how)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Under LOCK: the host's own values, saved once for all the runs that pause. */
static bool save_host_values(void)
{
	long sleep_ms, pages;
	FILE *f;
	bool ok;

	if (!access(SAVED, F_OK))
		return true;	/* paused already, by a live run or a killed one */
	sleep_ms = proc_number(SLEEP_MS);
	pages = proc_number(PAGES);
	if (sleep_ms < 0 || pages < 0)
		return false;
	f = fopen(SAVED, "w");
	if (!f)
		return false;
	ok = fprintf(f, "%ld %ld\n", sleep_ms, pages) > 0;
	return fclose(f) == 0 && ok;
}

/* Under LOCK, by the last run to leave: the saved values back, and SAVED gone. */
static void restore_host_values(void)
{
	long sleep_ms, pages;
	FILE *f = fopen(SAVED, "r");
	bool ok = f && fscanf(f, "%ld %ld", &sleep_ms, &pages) == 2;

	if (f)
		fclose(f);
	if (ok && set_number(PAGES, pages) && set_number(SLEEP_MS, sleep_ms))
		unlink(SAVED);
}

static void khugepaged_resume(void)
{
	int lock = lock_file(LOCK, LOCK_EX), last;

	if (lock < 0)
		return;
	/* LOCK_UN, not only close: forked agents share this open file, and its lock. */
	flock(users_fd, LOCK_UN);
	close(users_fd);
	users_fd = -1;
	last = lock_file(USERS, LOCK_EX | LOCK_NB);
	if (last >= 0) {
		restore_host_values();
		close(last);
	}
	close(lock);
}

bool kd_host_khugepaged_pause(const char **why)
{
	int lock;
	bool ok;

	*why = NULL;
	if (geteuid() != 0) {
		*why = "not root: khugepaged's settings are root's";
		return false;
	}
	if (access(SLEEP_MS, W_OK)) {
		*why = "no khugepaged (" KHUGEPAGED " not writable)";
		return false;
	}
	lock = lock_file(LOCK, LOCK_EX);
	if (lock < 0) {
		*why = "cannot take " LOCK;
		return false;
	}
	users_fd = lock_file(USERS, LOCK_SH);
	ok = users_fd >= 0 && save_host_values() && set_number(PAGES, PAUSED_PAGES) &&
	     set_number(SLEEP_MS, PAUSED_SLEEP_MS);
	close(lock);
	if (!ok) {
		*why = "khugepaged refused the settings";
		if (users_fd >= 0)
			khugepaged_resume();
		return false;
	}
	kd_host_restore_at_exit(khugepaged_resume);
	return true;
}
