/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hugetlb pool on the host for the differential test: hugetlb mappings fail
 * at mmap unless the pool covers them (hugetlb_reserve_pages), and a host
 * boots with none. Run as root, the test grows the 2 MiB pool by as many
 * pages as every library space gets, so neither side runs short, and gives
 * them back at exit. Without root (or with a pool the kernel cannot grow),
 * hugetlb ops are left out, and the run says so.
 *
 * Several runs may share the host (meson runs the kdiff tests in parallel):
 * each adds its pages to nr_hugepages and takes them away again under one
 * lock, so no run ever writes back a count another run has changed. Pages
 * the host has reserved and leaked (6.18's mremap of a private hugetlb
 * mapping can leak a reservation) are not counted as free: "free" is
 * HugePages_Free less HugePages_Rsvd.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "kdiff.h"
#include "proc_field.h"

#define NR_HUGEPAGES	"/proc/sys/vm/nr_hugepages"
#define POOL_LOCK	"/dev/shm/mmprim-kdiff-hugetlb.lock"

static long added;		/* what this process added to nr_hugepages */

/*
 * HugePages_Free less HugePages_Rsvd: the 2 MiB pages a new reservation may
 * take. Below zero when leaked reservations hold surplus pages the pool has
 * since shrunk under; false only if the kernel has no hugetlb pool.
 */
static bool pool_available(long *avail)
{
	long free_pages = proc_field("/proc/meminfo", "HugePages_Free");
	long rsvd = proc_field("/proc/meminfo", "HugePages_Rsvd");

	*avail = free_pages - rsvd;
	return free_pages >= 0 && rsvd >= 0;
}

static int lock_pool(void)
{
	int fd = open(POOL_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd >= 0 && flock(fd, LOCK_EX)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Change nr_hugepages by @delta under the lock; false if the write was
 * refused. Growing it makes surplus pages (in use, or reserved and leaked)
 * persistent first: @with_surplus adds them too, so that @delta pages are
 * new, and returns in *@added what was written on top.
 */
static bool pool_adjust(long delta, bool with_surplus, long *added_now)
{
	int fd = lock_pool();
	long nr, surp = with_surplus ? proc_field("/proc/meminfo", "HugePages_Surp") : 0;
	bool ok;

	if (fd < 0)
		return false;
	nr = proc_number(NR_HUGEPAGES);
	if (surp > 0)
		delta += surp;
	if (nr + delta < 0)
		delta = -nr;
	ok = nr >= 0 && proc_number_write(NR_HUGEPAGES, nr + delta);
	if (ok && added_now)
		*added_now = delta;
	close(fd);
	return ok;
}

static void pool_release(void)
{
	if (added && pool_adjust(-added, false, NULL))
		added = 0;
}

bool kd_host_hugetlb_reserve(unsigned long nr, const char **why)
{
	long before, after;

	*why = NULL;
	if (geteuid() != 0) {
		*why = "not root: /proc/sys/vm/nr_hugepages is root's";
		return false;
	}
	if (!pool_available(&before)) {
		*why = "no hugetlb pool (CONFIG_HUGETLBFS off?)";
		return false;
	}
	if (!pool_adjust((long)nr, true, &added)) {
		*why = "/proc/sys/vm/nr_hugepages refused the write";
		return false;
	}
	kd_host_restore_at_exit(pool_release);
	/* Another run may take pages meanwhile: it added its own first, so ours stay. */
	if (!pool_available(&after) || after < before + (long)nr) {
		*why = "the kernel found too few free 2 MiB blocks";
		pool_release();
		return false;
	}
	return true;
}
