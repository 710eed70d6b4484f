// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Seals, locks and forks, for mmprim-replay: mlock, mlock2 (MLOCK_ONFAULT),
 * munlock, MAP_LOCKED, mlockall (MCL_FUTURE | MCL_ONFAULT) and munlockall;
 * mseal (by number: strace 6.1 prints it as syscall_0x1ce) and every call it
 * refuses on a sealed mapping; the advices a locked mapping refuses and
 * MADV_DONTNEED_LOCKED; msync, whose MS_INVALIDATE a locked mapping refuses;
 * process_madvise; prctl(PR_SET_MEMORY_MERGE), once with a bad argument;
 * prctl(PR_SET_THP_DISABLE) both ways, once refused, and PR_GET_THP_DISABLE; a
 * forked child that finds the seal kept and the locks gone; the numbers
 * strace 6.1 has no names for (MAP_DROPPABLE, MADV_GUARD_INSTALL, prctl's
 * 0x43) and a MAP_HUGETLB | MAP_HUGE_2MB.
 * Every result is what Linux 6.18 answers; the program checks none of them.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define P 4096UL

static long seal(void *a, unsigned long len)
{
	return syscall(462, a, len, 0);
}

int main(void)
{
	char *a = mmap(NULL, 9 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *b = mmap(NULL, 4 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED,
		       -1, 0);
	char *r, *d, *h;
	struct iovec v;
	pid_t pid;
	int pidfd;

	munmap(a + 8 * P, P);				/* a hole above */
	memset(a, 1, 8 * P);
	mlock(a, 2 * P);
	mlock2(a + 2 * P, 2 * P, MLOCK_ONFAULT);
	munlock(a, P);
	madvise(a + P, P, MADV_DONTNEED);		/* EINVAL: locked */
	madvise(a + P, P, MADV_PAGEOUT);		/* EINVAL */
	madvise(a + P, P, MADV_DONTNEED_LOCKED);
	msync(a, 2 * P, MS_SYNC);
	msync(a + P, P, MS_INVALIDATE);			/* EBUSY: locked */
	madvise(a + 2 * P, P, 102);			/* guard install: EINVAL, locked */
	madvise(a + 6 * P, 2 * P, MADV_COLD);
	madvise(a + 4 * P, 2 * P, MADV_POPULATE_WRITE);
	madvise(a + 4 * P, P, MADV_PAGEOUT);
	madvise(a + 5 * P, P, 102);			/* guard install */
	madvise(a + 5 * P, P, 103);			/* guard remove */
	madvise(b, P, MADV_FREE);			/* EINVAL: MAP_LOCKED */
	mlockall(MCL_FUTURE | MCL_ONFAULT);
	r = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munlockall();
	munlock(b, 4 * P);

	/* Seal two read-only pages and try everything on them. */
	mprotect(a + 6 * P, 2 * P, PROT_READ);
	seal(a + 6 * P, 2 * P);
	munmap(a + 6 * P, P);				/* EPERM */
	munmap(a + 5 * P, 2 * P);			/* EPERM, nothing unmapped */
	mprotect(a + 6 * P, P, PROT_READ | PROT_WRITE);	/* EPERM */
	madvise(a + 6 * P, P, MADV_DONTNEED);		/* EPERM */
	madvise(a + 6 * P, P, MADV_FREE);		/* EPERM */
	madvise(a + 6 * P, P, MADV_WILLNEED);
	mremap(a + 6 * P, P, 4 * P, MREMAP_MAYMOVE);	/* EPERM */
	mmap(a + 6 * P, P, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0); /* EPERM */
	mlock(a + 6 * P, 2 * P);			/* locking is allowed */
	seal(a + 7 * P, 2 * P);				/* ENOMEM: the hole */
	seal(a + 1, P);					/* EINVAL */

	prctl(67, 1, 0, 0, 0);				/* PR_SET_MEMORY_MERGE: 0x43 to strace 6.1 */
	prctl(67, 1, 1, 0, 0);				/* EINVAL: a third argument */
	prctl(67, 0, 0, 0, 0);
	prctl(PR_SET_THP_DISABLE, 1, 1 << 1, 0, 0);	/* except advised (6.18) */
	prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);		/* 3 */
	prctl(PR_SET_THP_DISABLE, 0, 1 << 1, 0, 0);	/* EINVAL: a flag when enabling */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);		/* 1 */
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);

	v.iov_base = b;
	v.iov_len = 2 * P;
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	syscall(SYS_process_madvise, pidfd, &v, 1, MADV_COLD, 0);
	syscall(SYS_process_madvise, pidfd, &v, 1, MADV_DONTNEED, 0);

	/* Numbers strace 6.1 cannot name, and a huge page size it prints as a shift. */
	d = mmap(NULL, 2 * P, PROT_READ | PROT_WRITE, 0x08 | MAP_ANONYMOUS, -1, 0);
	if (d != MAP_FAILED)
		munmap(d, 2 * P);
	h = mmap(NULL, 2UL << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (21 << MAP_HUGE_SHIFT), -1, 0);
	if (h != MAP_FAILED)
		munmap(h, 2UL << 20);

	mlock(a + 4 * P, 2 * P);
	pid = fork();
	if (pid == 0) {
		/* The seal is inherited, the locks are not. */
		munmap(a + 6 * P, 2 * P);		/* EPERM */
		madvise(a + 4 * P, P, MADV_DONTNEED);	/* not locked here */
		mlock(a + 3 * P, P);
		munmap(a, 4 * P);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	madvise(a + 4 * P, P, MADV_DONTNEED);		/* EINVAL: still locked in the parent */
	munlock(a, 8 * P);
	munmap(a, 6 * P);
	munmap(b, 4 * P);
	munmap(r, 2 * P);
	return 0;
}
