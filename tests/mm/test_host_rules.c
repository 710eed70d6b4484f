/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rules of the kernel checked against the host kernel in the same run: one
 * scenario, written once over a small set of calls, runs in an unprivileged
 * host process and on every back end, and every return value and the final
 * layout must agree.
 *  - mmap_min_addr: a fixed mapping below it is EPERM for an unprivileged
 *    process (cap_mmap_addr), at it it is allowed;
 *  - stacks (MAP_GROWSDOWN): mprotect's PROT_GROWSDOWN and PROT_GROWSUP in
 *    do_mprotect_pkey's order of checks, the guard gap that placement keeps
 *    free below a stack (vm_start_gap), a fault below a stack growing it
 *    (expand_downwards), refused inside the guard gap of a mapping below and
 *    past RLIMIT_STACK.
 * The host's mmap_min_addr is its own sysctl (vm.mmap_min_addr); the
 * library's is MMP_MMAP_MIN_ADDR. Each side is asked at its own. With
 * --recorded (cross builds, run under qemu-user) the host side is what Linux
 * 6.18.44 answered, and a live 6.18 host is checked against that recording.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmprim/mmprim.h>

#include "host_fault.h"
#include "mm.h"
#include "util.h"

#define P		4096ULL
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define NR		MMP_MAP_FIXED_NOREPLACE
/*
 * 1 GiB: inside every back end's user space (riscv64-sv39: 256 GiB), free in a
 * host process, and in the low memory ASan leaves to the program (its shadow
 * gap covers 2 GiB to 2 TiB on x86-64).
 */
#define BASE		(1ULL << 30)
#define WINDOW		(64ULL << 20)
#define STACK_TOP	(BASE + 48 * MiB)
#define MAX_STEPS	64
#define MAX_VMAS	16

struct vma_rec {
	uint64_t start, end;
	int prot;
};

/* What a scenario may do; each call returns 0 or a negative errno. */
struct side {
	int (*mmap)(struct side *sd, uint64_t addr, uint64_t len, int prot, int flags,
		    uint64_t *out);
	int (*munmap)(struct side *sd, uint64_t addr, uint64_t len);
	int (*mprotect)(struct side *sd, uint64_t addr, uint64_t len, int prot);
	int (*touch)(struct side *sd, uint64_t addr);	/* read a byte: -EFAULT on SIGSEGV */
	int (*layout)(struct side *sd, struct vma_rec *v, int max);
	uint64_t min_addr;	/* this side's mmap_min_addr */
	struct mmp_space *s;
	struct mmp_cpu *cpu;
};

struct outcome {
	int64_t r[MAX_STEPS];
	int nr, nvmas;
	struct vma_rec vmas[MAX_VMAS];
};

static void note(struct outcome *o, int64_t r)
{
	if (o->nr < MAX_STEPS)
		o->r[o->nr++] = r;
}

/* Did the mapping land at its hint? 1 or 0, or the error. */
static int64_t at_hint(struct side *sd, uint64_t hint, uint64_t len)
{
	uint64_t got = 0;
	int err = sd->mmap(sd, hint, len, RW, 0, &got);

	if (err)
		return err;
	sd->munmap(sd, got, len);
	return got == hint;
}

static void scenario(struct side *sd, struct outcome *o)
{
	uint64_t got, stack = STACK_TOP - 4 * P;

	/* mmap_min_addr */
	note(o, sd->mmap(sd, sd->min_addr - P, P, RW, NR, &got));
	note(o, sd->mmap(sd, sd->min_addr, P, RW, NR, &got));
	note(o, sd->munmap(sd, sd->min_addr, P));

	/* A stack of four pages, and a plain mapping above it. */
	note(o, sd->mmap(sd, stack, 4 * P, RW, NR | MMP_MAP_GROWSDOWN, &got));
	note(o, sd->mmap(sd, STACK_TOP + 64 * P, 2 * P, RW, NR, &got));
	/* Placement keeps the guard gap below the stack free. */
	note(o, at_hint(sd, stack - 2 * P, P));
	note(o, at_hint(sd, stack - 256 * P - P, P));

	/* mprotect: the order of its checks, and GROWSDOWN's reach. */
	note(o, sd->mprotect(sd, stack + P, P, MMP_PROT_READ | MMP_PROT_GROWSDOWN |
			     MMP_PROT_GROWSUP));
	note(o, sd->mprotect(sd, stack + 2 * P + 1, P, MMP_PROT_READ | MMP_PROT_GROWSDOWN));
	note(o, sd->mprotect(sd, BASE + P, P, MMP_PROT_READ | MMP_PROT_GROWSDOWN));
	note(o, sd->mprotect(sd, BASE + P, P, MMP_PROT_READ | MMP_PROT_GROWSUP));
	note(o, sd->mprotect(sd, stack + P, P, MMP_PROT_READ | MMP_PROT_GROWSUP));
	note(o, sd->mprotect(sd, STACK_TOP + 64 * P, P, MMP_PROT_READ | MMP_PROT_GROWSDOWN));
	note(o, sd->mprotect(sd, stack + 2 * P, 0, MMP_PROT_READ | MMP_PROT_GROWSDOWN));
	note(o, sd->mprotect(sd, stack + 2 * P, P, MMP_PROT_READ | MMP_PROT_GROWSDOWN));
	note(o, sd->mprotect(sd, stack, 4 * P, RW));

	/* Faults below the stack grow it... */
	note(o, sd->touch(sd, stack - P));
	note(o, sd->touch(sd, stack - 40 * P));
	/* ...but not into the guard gap above an accessible mapping below, */
	note(o, sd->mmap(sd, stack - 300 * P, P, RW, NR, &got));
	note(o, sd->touch(sd, stack - 100 * P));
	note(o, sd->mprotect(sd, stack - 300 * P, P, MMP_PROT_NONE));
	note(o, sd->touch(sd, stack - 100 * P));
	note(o, sd->munmap(sd, stack - 300 * P, P));
	/* ...nor past RLIMIT_STACK (8 MiB). */
	note(o, sd->touch(sd, STACK_TOP - 8 * MiB - P));
	note(o, sd->touch(sd, STACK_TOP - 8 * MiB));
	o->nvmas = sd->layout(sd, o->vmas, MAX_VMAS);
}

/* ---- the host: an unprivileged child process -------------------------------------- */

static int host_touch(struct side *sd, uint64_t addr)
{
	uint8_t v;

	return guarded_copy(&v, (const void *)addr, 1) ? 0 : -EFAULT;
}

static int host_mmap(struct side *sd, uint64_t addr, uint64_t len, int prot, int flags,
		     uint64_t *out)
{
	void *p = mmap((void *)addr, len, prot, flags | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	*out = (uint64_t)p;
	return 0;
}

static int host_munmap(struct side *sd, uint64_t addr, uint64_t len)
{
	return munmap((void *)addr, len) ? -errno : 0;
}

static int host_mprotect(struct side *sd, uint64_t addr, uint64_t len, int prot)
{
	return mprotect((void *)addr, len, prot) ? -errno : 0;
}

static int host_layout(struct side *sd, struct vma_rec *v, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perms[8];
	unsigned long long start, end;
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && n < max) {
		if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3 ||
		    end <= BASE || start >= BASE + WINDOW)
			continue;
		v[n++] = (struct vma_rec){ start, end, (perms[0] == 'r' ? MMP_PROT_READ : 0) |
							(perms[1] == 'w' ? MMP_PROT_WRITE : 0) };
	}
	fclose(f);
	return n;
}

static uint64_t host_min_addr(void)
{
	FILE *f = fopen("/proc/sys/vm/mmap_min_addr", "r");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* Run the scenario in a child without privileges; its outcome comes back through a pipe. */
static bool host_outcome(struct outcome *o)
{
	struct side sd = { host_mmap, host_munmap, host_mprotect, host_touch, host_layout,
			   host_min_addr() };
	int fds[2], status;
	pid_t pid;

	if (sd.min_addr < P || pipe(fds))
		return false;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 8 << 20, 8 << 20 };
		struct outcome ho = { .nr = 0 };

		close(fds[0]);
		host_fault_catch();
		/* Root holds CAP_SYS_RAWIO: become nobody, as the simulated process is. */
		if ((geteuid() == 0 && setresuid(65534, 65534, 65534)) ||
		    setrlimit(RLIMIT_STACK, &rl))
			_exit(1);
		scenario(&sd, &ho);
		_exit(write(fds[1], &ho, sizeof(ho)) == sizeof(ho) ? 0 : 1);
	}
	close(fds[1]);
	status = pid > 0 && read(fds[0], o, sizeof(*o)) == sizeof(*o);
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return status;
}

/* ---- the library -------------------------------------------------------------------- */

static int lib_mmap(struct side *sd, uint64_t addr, uint64_t len, int prot, int flags,
		    uint64_t *out)
{
	return mmp_mmap(sd->s, addr, len, prot, flags, out);
}

static int lib_munmap(struct side *sd, uint64_t addr, uint64_t len)
{
	return mmp_munmap(sd->s, addr, len);
}

static int lib_mprotect(struct side *sd, uint64_t addr, uint64_t len, int prot)
{
	return mmp_mprotect(sd->s, addr, len, prot);
}

static int lib_touch(struct side *sd, uint64_t addr)
{
	uint8_t v;

	return mmp_read(sd->cpu, addr, &v, 1);
}

static int lib_layout(struct side *sd, struct vma_rec *v, int max)
{
	int n = 0;

	for (const struct mmp_vma *vma = sd->s->vmas.first; vma && n < max; vma = vma->vm_next) {
		if (vma->end <= BASE || vma->start >= BASE + WINDOW)
			continue;
		v[n++] = (struct vma_rec){ vma->start, vma->end,
					   (vma->flags & VM_READ ? MMP_PROT_READ : 0) |
					   (vma->flags & VM_WRITE ? MMP_PROT_WRITE : 0) };
	}
	return n;
}

static void check_arch(const char *arch, const struct outcome *host, struct mmp_phys *phys)
{
	struct side sd = { lib_mmap, lib_munmap, lib_mprotect, lib_touch, lib_layout,
			   MMP_MMAP_MIN_ADDR };
	struct outcome o = { .nr = 0 };
	int same = 0;

	sd.s = new_space(phys, arch);
	must(!mmp_cpu_attach(sd.s, &sd.cpu), "attach");
	scenario(&sd, &o);
	tap_eq(o.nr, host->nr, "%s: as many steps as the host", arch);
	for (int i = 0; i < o.nr && i < host->nr; i++) {
		if (o.r[i] == host->r[i]) {
			same++;
			continue;
		}
		tap_ok(0, "%s: step %d returns %lld, the host %lld", arch, i, (long long)o.r[i],
		       (long long)host->r[i]);
	}
	tap_eq(same, host->nr, "%s: every step returns what the host's does", arch);
	tap_eq(o.nvmas, host->nvmas, "%s: as many VMAs in the window as the host", arch);
	tap_ok(o.nvmas == host->nvmas && !memcmp(o.vmas, host->vmas, o.nvmas * sizeof(o.vmas[0])),
	       "%s: the same layout as the host (stack grown, protections)", arch);
	tap_eq(mmp_space_verify(sd.s), 0, "%s: verify", arch);
	mmp_cpu_detach(sd.cpu);
	tap_eq(mmp_space_destroy(sd.s), 0, "%s: destroy", arch);
}

/*
 * What Linux 6.18.44 answered (x86_64, vm.mmap_min_addr 4096, as nobody): the
 * reference where no kernel runs the host side, as under qemu-user, whose own
 * mmap and mprotect are not the kernel's (--recorded, set for cross builds).
 */
static const struct outcome recorded_6_18 = {
	.r = { -EPERM, 0, 0, 0, 0, 0, 1, -EINVAL, -EINVAL, -ENOMEM, -ENOMEM, -EINVAL, -EINVAL,
	       0, 0, 0, 0, 0, 0, -EFAULT, 0, 0, 0, -EFAULT, 0 },
	.nr = 25,
	.nvmas = 2,
	.vmas = { { STACK_TOP - 8 * MiB, STACK_TOP, MMP_PROT_READ | MMP_PROT_WRITE },
		  { STACK_TOP + 64 * P, STACK_TOP + 66 * P, MMP_PROT_READ | MMP_PROT_WRITE } },
};

int main(int argc, char **argv)
{
	bool recorded = argc > 1 && !strcmp(argv[1], "--recorded");
	struct outcome host = { .nr = 0 };
	struct mmp_phys *phys;
	const char *arch;

	if (recorded) {
		host = recorded_6_18;
		printf("# no kernel on the host side: the answers Linux 6.18.44 gave\n");
	} else {
		struct utsname u;

		tap_require(host_outcome(&host), "the scenario ran in an unprivileged host process");
		/* A 6.18 host must still answer as the recording says: it is what cross builds check. */
		if (!uname(&u) && !strncmp(u.release, "6.18.", 5))
			tap_ok(host.nr == recorded_6_18.nr &&
			       !memcmp(host.r, recorded_6_18.r, sizeof(host.r)) &&
			       host.nvmas == recorded_6_18.nvmas &&
			       !memcmp(host.vmas, recorded_6_18.vmas, sizeof(host.vmas)),
			       "the 6.18 host answers as recorded");
	}
	for (int i = 0; i < host.nr; i++)
		printf("# host step %d: %lld\n", i, (long long)host.r[i]);
	for (int i = 0; i < host.nvmas; i++)
		printf("# host VMA %d: BASE + %#llx - BASE + %#llx prot %d\n", i,
		       (unsigned long long)(host.vmas[i].start - BASE),
		       (unsigned long long)(host.vmas[i].end - BASE), host.vmas[i].prot);
	tap_require(!mmp_phys_create(64 * MiB, &phys), "phys");
	for_each_arch(i, arch)
		check_arch(arch, &host, phys);
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
