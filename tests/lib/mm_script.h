/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A script of memory calls on a window of pages, run in a host process (the
 * kernel as oracle) and on a space: each step's result and, after it, the
 * window's VMAs as smaps shows them ("0-2 rw- sl lo rss=8 locked=8", pages
 * from the window's start, sizes in KiB) are compared step by step, and each
 * result against the answer Linux 6.18 gave (so a host without the calls, or
 * a cross build's qemu-user, or another release, still checks the library;
 * the host is asked only when it is Linux 6.18). The host runs first,
 * in a child, before the test maps anything big: mlockall there locks only
 * the test's own few mappings.
 */
/* Includers define _GNU_SOURCE first (mremap, MAP_FIXED_NOREPLACE). */
#ifndef MMP_TEST_MM_SCRIPT_H
#define MMP_TEST_MM_SCRIPT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmprim/introspect.h>

#include "tap.h"
#include "util.h"

#define SCRIPT_PAGES	64
#define SCRIPT_PAGE	4096ULL
#define SCRIPT_LAYOUT	320
#define SCRIPT_MAX	128

enum script_kind {
	S_MMAP,		/* a, n, arg: prot, arg2: MMP_MAP_SHARED, _LOCKED or 0 (fixed, anonymous) */
	S_MMAP_NOREPLACE,
	S_MUNMAP,
	S_MPROTECT,	/* arg: prot */
	S_MSEAL,	/* arg: flags; n < 0: -n bytes past the page count (a raw length) */
	S_MREMAP,	/* a, n old pages, arg new pages, arg2 flags, b new address page */
	S_MADVISE,	/* arg: advice */
	S_PMADVISE,	/* process_madvise of one range */
	S_MSYNC,	/* arg: flags */
	S_MLOCK,
	S_MLOCK2,	/* arg: flags */
	S_MUNLOCK,
	S_MLOCKALL,	/* arg: flags */
	S_MUNLOCKALL,
	S_FILL,		/* page i of the window gets byte i + 1 */
	S_INTACT,	/* result: the pages of [a, a + n) still holding byte i + 1 */
	S_ZERO,		/* result: the pages of [a, a + n) reading 0 */
	S_RLIMIT,	/* RLIMIT_MEMLOCK to arg bytes (-1: none), without CAP_IPC_LOCK */
};

struct script_step {
	enum script_kind kind;
	int a;
	long n;
	long arg, arg2;
	int b;
	long want;		/* Linux 6.18's answer: 0 or -errno, or a count */
	const char *what;
};

struct script_result {
	int nr;
	bool ran;
	long r[SCRIPT_MAX];
	char layout[SCRIPT_MAX][SCRIPT_LAYOUT];
};

#define MSEAL_NR	462	/* every architecture's number for mseal */

/* ---- the host side ---------------------------------------------------- */

static void host_layout(char *base, char *out)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512], prot[5] = "";
	unsigned long a, b, rss = 0, locked = 0;
	bool in = false;
	size_t len = 0;

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' '), *dash = strchr(line, '-');

		if (sp && dash && dash < sp && sscanf(line, "%lx-%lx %4s", &a, &b, prot) == 3) {
			in = a < (unsigned long)base + SCRIPT_PAGES * SCRIPT_PAGE &&
			     b > (unsigned long)base;
			if (in)
				len += snprintf(out + len, SCRIPT_LAYOUT - len, "%s%lu-%lu %.3s",
						len ? " | " : "",
						(unsigned long)((a - (unsigned long)base) / SCRIPT_PAGE),
						(unsigned long)((b - (unsigned long)base) / SCRIPT_PAGE), prot);
		} else if (in && sscanf(line, "Rss: %lu", &rss) == 1) {
		} else if (in && sscanf(line, "Locked: %lu", &locked) == 1) {
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			len += snprintf(out + len, SCRIPT_LAYOUT - len, "%s%s%s rss=%lu locked=%lu",
					strstr(line, " sl") ? " sl" : "", strstr(line, " lo") ? " lo" : "",
					strstr(line, " lf") ? " lf" : "", rss, locked);
			if (len >= SCRIPT_LAYOUT)
				len = SCRIPT_LAYOUT - 1;
		}
	}
	fclose(f);
}

static long host_ret(long r)
{
	return r < 0 ? -errno : r;
}

/*
 * RLIMIT_MEMLOCK's soft limit to @bytes (-1: the hard one, which need not be
 * raised: a sandbox's root may lack CAP_SYS_RESOURCE), and CAP_IPC_LOCK
 * dropped from this (root) process, which would pass every limit by.
 */
static long host_memlock(long bytes)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[2];
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return -errno;
	rl.rlim_cur = bytes < 0 || (rlim_t)bytes > rl.rlim_max ? rl.rlim_max : (rlim_t)bytes;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return -errno;
	if (syscall(SYS_capget, &hdr, caps))
		return -errno;
	caps[0].effective &= ~(1u << CAP_IPC_LOCK);
	caps[0].permitted &= ~(1u << CAP_IPC_LOCK);
	return host_ret(syscall(SYS_capset, &hdr, caps));
}

static long host_step(char *base, const struct script_step *st)
{
	char *a = base + st->a * SCRIPT_PAGE;
	size_t len = st->n >= 0 ? st->n * SCRIPT_PAGE : (size_t)-st->n;
	long r = 0;

	switch (st->kind) {
	case S_MMAP:
	case S_MMAP_NOREPLACE: {
		int fl = (st->arg2 & MMP_MAP_SHARED ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS |
			 (st->kind == S_MMAP ? MAP_FIXED : MAP_FIXED_NOREPLACE) |
			 (st->arg2 & MMP_MAP_LOCKED ? MAP_LOCKED : 0);
		void *p = mmap(a, len, (int)st->arg, fl, -1, 0);

		return p == MAP_FAILED ? -errno : 0;
	}
	case S_MUNMAP:
		return host_ret(munmap(a, len));
	case S_MPROTECT:
		return host_ret(mprotect(a, len, (int)st->arg));
	case S_MSEAL:
		return host_ret(syscall(MSEAL_NR, a, len, st->arg));
	case S_MREMAP: {
		void *p = mremap(a, len, st->arg * SCRIPT_PAGE, (int)st->arg2,
				 base + st->b * SCRIPT_PAGE);

		return p == MAP_FAILED ? -errno : 0;
	}
	case S_MADVISE:
		return host_ret(madvise(a, len, (int)st->arg));
	case S_PMADVISE: {
		struct iovec v = { a, len };
		int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);

		r = host_ret(syscall(SYS_process_madvise, pidfd, &v, 1, (int)st->arg, 0));
		close(pidfd);
		return r;
	}
	case S_MSYNC:
		return host_ret(msync(a, len, (int)st->arg));
	/* System calls, not libc's: AddressSanitizer's interceptors make these do nothing. */
	case S_MLOCK:
		return host_ret(syscall(SYS_mlock, a, len));
	case S_MLOCK2:
		return host_ret(syscall(SYS_mlock2, a, len, st->arg));
	case S_MUNLOCK:
		return host_ret(syscall(SYS_munlock, a, len));
	case S_MLOCKALL:
		return host_ret(syscall(SYS_mlockall, (int)st->arg));
	case S_MUNLOCKALL:
		return host_ret(syscall(SYS_munlockall));
	case S_FILL:
		for (int i = st->a; i < st->a + st->n; i++)
			base[i * SCRIPT_PAGE] = (char)(i + 1);
		return 0;
	case S_INTACT:
	case S_ZERO:
		for (int i = st->a; i < st->a + st->n; i++)
			r += base[i * SCRIPT_PAGE] == (st->kind == S_ZERO ? 0 : (char)(i + 1));
		return r;
	case S_RLIMIT:
		return host_memlock(st->arg);
	}
	return -ENOSYS;
}

/* Run @steps in a child process; false when the host lacks the calls (no result). */
static bool script_host(const struct script_step *steps, int nr, struct script_result *out)
{
	struct script_result *shared;
	struct utsname u;
	int status = 0;
	pid_t pid;

	/* The rules are 6.18's: another release may differ where it should. */
	if (uname(&u) || strncmp(u.release, "6.18.", 5)) {
		printf("# the host is not Linux 6.18: the recorded answers only\n");
		return false;
	}
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (shared == MAP_FAILED)
		return false;
	memset(shared, 0, sizeof(*shared));
	pid = fork();
	if (pid == 0) {
		char *base = mmap(NULL, (SCRIPT_PAGES + 2) * SCRIPT_PAGE, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (base == MAP_FAILED || syscall(MSEAL_NR, base, 0, 0))
			_exit(1);	/* no mseal: no oracle */
		base += SCRIPT_PAGE;
		munmap(base, SCRIPT_PAGES * SCRIPT_PAGE);
		for (int i = 0; i < nr; i++) {
			shared->r[i] = host_step(base, &steps[i]);
			host_layout(base, shared->layout[i]);
			shared->nr = i + 1;
		}
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		munmap(shared, sizeof(*shared));
		return false;
	}
	*out = *shared;
	out->ran = true;
	munmap(shared, sizeof(*shared));
	return true;
}

/* ---- the library side ------------------------------------------------- */

static void lib_layout(struct mmp_space *s, uint64_t base, char *out)
{
	struct mmp_vma_info v;
	size_t len = 0;

	out[0] = 0;
	for (uint64_t addr = base; !mmp_space_vma_info(s, addr, &v) &&
				   v.start < base + SCRIPT_PAGES * SCRIPT_PAGE; addr = v.end) {
		len += snprintf(out + len, SCRIPT_LAYOUT - len,
				"%s%llu-%llu %c%c%c%s%s%s rss=%llu locked=%llu", len ? " | " : "",
				(unsigned long long)((v.start - base) / SCRIPT_PAGE),
				(unsigned long long)((v.end - base) / SCRIPT_PAGE),
				v.prot & MMP_PROT_READ ? 'r' : '-', v.prot & MMP_PROT_WRITE ? 'w' : '-',
				v.prot & MMP_PROT_EXEC ? 'x' : '-',
				v.flags & MMP_VMA_SEALED ? " sl" : "", v.flags & MMP_VMA_LOCKED ? " lo" : "",
				v.flags & MMP_VMA_LOCKONFAULT ? " lf" : "",
				(unsigned long long)(v.rss / 1024), (unsigned long long)(v.locked / 1024));
		if (len >= SCRIPT_LAYOUT)
			len = SCRIPT_LAYOUT - 1;
	}
}

static long lib_step(struct mmp_space *s, struct mmp_cpu *cpu, uint64_t base,
		     const struct script_step *st)
{
	uint64_t a = base + st->a * SCRIPT_PAGE, out = 0;
	uint64_t len = st->n >= 0 ? st->n * SCRIPT_PAGE : (uint64_t)-st->n;
	long r = 0;

	switch (st->kind) {
	case S_MMAP:
	case S_MMAP_NOREPLACE:
		return mmp_mmap(s, a, len, (int)st->arg,
				(st->kind == S_MMAP ? MMP_MAP_FIXED : MMP_MAP_FIXED_NOREPLACE) |
					(int)st->arg2, &out);
	case S_MUNMAP:
		return mmp_munmap(s, a, len);
	case S_MPROTECT:
		return mmp_mprotect(s, a, len, (int)st->arg);
	case S_MSEAL:
		return mmp_mseal(s, a, len, (unsigned long)st->arg);
	case S_MREMAP:
		return mmp_mremap(s, a, len, st->arg * SCRIPT_PAGE, (int)st->arg2,
				  base + st->b * SCRIPT_PAGE, &out);
	case S_MADVISE:
		return mmp_madvise(s, a, len, (int)st->arg);
	case S_PMADVISE: {
		struct mmp_iovec v = { a, len };

		return mmp_process_madvise(s, &v, 1, (int)st->arg, 0);
	}
	case S_MSYNC:
		return mmp_msync(s, a, len, (int)st->arg);
	case S_MLOCK:
		return mmp_mlock(s, a, len);
	case S_MLOCK2:
		return mmp_mlock2(s, a, len, (unsigned int)st->arg);
	case S_MUNLOCK:
		return mmp_munlock(s, a, len);
	case S_MLOCKALL:
		return mmp_mlockall(s, (int)st->arg);
	case S_MUNLOCKALL:
		return mmp_munlockall(s);
	case S_FILL:
		for (int i = st->a; i < st->a + st->n; i++) {
			unsigned char b = (unsigned char)(i + 1);

			if (mmp_write(cpu, base + i * SCRIPT_PAGE, &b, 1))
				return -EFAULT;
		}
		return 0;
	case S_INTACT:
	case S_ZERO:
		for (int i = st->a; i < st->a + st->n; i++) {
			unsigned char b = 0xff;

			mmp_read(cpu, base + i * SCRIPT_PAGE, &b, 1);
			r += b == (st->kind == S_ZERO ? 0 : (unsigned char)(i + 1));
		}
		return r;
	case S_RLIMIT:
		return mmp_space_set_opt(s, MMP_OPT_RLIMIT_MEMLOCK, st->arg);
	}
	return -ENOSYS;
}

/*
 * Run @steps on a new space of @arch and compare with @host (when it ran)
 * and each step's recorded answer; mmp_space_verify() after every step.
 */
static void script_lib(struct mmp_phys *phys, const char *arch, const char *name,
		       const struct script_step *steps, int nr, const struct script_result *host)
{
	struct mmp_space *s = new_space(phys, arch);
	uint64_t base = (task_size(s) / 4) & ~((2 * MiB) - 1);
	char layout[SCRIPT_LAYOUT];
	struct mmp_cpu *cpu;
	int bad = 0;

	tap_require(mmp_cpu_attach(s, &cpu) == 0, "%s: attach", arch);
	for (int i = 0; i < nr; i++) {
		long r = lib_step(s, cpu, base, &steps[i]);

		lib_layout(s, base, layout);
		if (!tap_eq(r, steps[i].want, "%s: %s %d: %s", arch, name, i, steps[i].what))
			bad++;
		if (host->ran && i < host->nr &&
		    !tap_ok(!strcmp(layout, host->layout[i]), "%s: %s %d: the host's VMAs after it",
			    arch, name, i)) {
			printf("#   host: %s\n#   lib:  %s\n", host->layout[i], layout);
			bad++;
		}
		if (mmp_space_verify(s)) {
			tap_ok(0, "%s: %s %d: verify", arch, name, i);
			bad++;
		}
	}
	tap_ok(!bad, "%s: %s: %d steps as Linux", arch, name, nr);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* The host's answers against the recorded ones (a 6.18 host must still give them). */
static void script_check_host(const char *name, const struct script_step *steps, int nr,
			      const struct script_result *host)
{
	int bad = 0;

	if (!host->ran) {
		printf("# %s: no host oracle (no mseal here): the recorded answers only\n", name);
		return;
	}
	for (int i = 0; i < nr && i < host->nr; i++)
		if (host->r[i] != steps[i].want) {
			printf("# host %s %d (%s): %ld, recorded %ld\n", name, i, steps[i].what,
			       host->r[i], steps[i].want);
			bad++;
		}
	tap_ok(!bad && host->nr == nr, "host: %s answers as recorded", name);
}

#endif /* MMP_TEST_MM_SCRIPT_H */
