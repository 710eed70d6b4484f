/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mlock, mlock2 (MLOCK_ONFAULT), munlock, mlockall (MCL_CURRENT, _FUTURE,
 * _ONFAULT), munlockall and MAP_LOCKED on every back end, each step against
 * a host process running the same calls (tests/lib/mm_script.h) and the
 * answers Linux 6.18 gave: populating (or not), splitting and merging on the
 * flag, holes, PROT_NONE and guard markers, the advices a locked VMA refuses
 * (MADV_DONTNEED, _FREE, _COLD, _PAGEOUT, _GUARD_INSTALL) and
 * MADV_DONTNEED_LOCKED, msync MS_INVALIDATE (EBUSY), mprotect populating a locked VMA made writable,
 * mremap growing and DONTUNMAP. Then what the host cannot show as a script:
 * reclaim keeps locked pages (lazyfree ones too) through both spaces of a
 * fork, a child's copy is unlocked, VmLck, bad input; and
 * MMP_OPT_CAP_SYS_RAWIO's mappings below mmap_min_addr. RLIMIT_MEMLOCK
 * (MMP_OPT_RLIMIT_MEMLOCK) is a script of its own, against a host process
 * that dropped CAP_IPC_LOCK. Run with a back end
 * name to check only it.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "mm_script.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define RO	MMP_PROT_READ
#define NONE	MMP_PROT_NONE

static const struct script_step lock_steps[] = {
	{ S_MMAP, 1, 4, RW, 0, 0, 0, "map 1-4" },
	{ S_MLOCK, 1, 1, 0, 0, 0, 0, "mlock 1: split and populated" },
	{ S_MLOCK, 3, 3, 0, 0, 0, -ENOMEM, "mlock 3-5, 5 a hole: 3-4 locked" },
	{ S_MLOCK, 0, 2, 0, 0, 0, -ENOMEM, "mlock 0-1, 0 a hole: nothing" },
	{ S_MUNLOCK, 0, 6, 0, 0, 0, -ENOMEM, "munlock 0-5: nothing" },
	{ S_MLOCK2, 1, 2, 2, 0, 0, -EINVAL, "mlock2, bad flags" },
	{ S_MLOCK2, 1, 2, 1, 0, 0, 0, "mlock2 ONFAULT 1-2" },
	{ S_MLOCK, 1, 0, 0, 0, 0, 0, "mlock of 0 bytes" },
	{ S_MADVISE, 1, 1, MMP_MADV_DONTNEED, 0, 0, -EINVAL, "DONTNEED" },
	{ S_MADVISE, 1, 1, MMP_MADV_FREE, 0, 0, -EINVAL, "FREE" },
	{ S_MADVISE, 1, 1, MMP_MADV_COLD, 0, 0, -EINVAL, "COLD" },
	{ S_MADVISE, 1, 1, MMP_MADV_PAGEOUT, 0, 0, -EINVAL, "PAGEOUT" },
	{ S_MADVISE, 1, 1, MMP_MADV_GUARD_INSTALL, 0, 0, -EINVAL, "GUARD_INSTALL" },
	{ S_MADVISE, 1, 1, MMP_MADV_GUARD_REMOVE, 0, 0, 0, "GUARD_REMOVE" },
	{ S_PMADVISE, 1, 1, MMP_MADV_DONTNEED, 0, 0, -EINVAL, "process_madvise DONTNEED" },
	{ S_MADVISE, 0, 2, MMP_MADV_COLD, 0, 0, -EINVAL, "COLD over a hole and a locked VMA" },
	{ S_MSYNC, 1, 1, MMP_MS_INVALIDATE, 0, 0, -EBUSY, "msync MS_INVALIDATE of locked pages" },
	{ S_MSYNC, 0, 2, MMP_MS_SYNC | MMP_MS_INVALIDATE, 0, 0, -EBUSY,
	  "msync MS_INVALIDATE over a hole and locked pages: EBUSY first" },
	{ S_MSYNC, 0, 2, MMP_MS_SYNC, 0, 0, -ENOMEM, "msync MS_SYNC over a hole: ENOMEM" },
	{ S_MADVISE, 1, 1, MMP_MADV_DONTNEED_LOCKED, 0, 0, 0, "DONTNEED_LOCKED discards" },
	{ S_FILL, 3, 2, 0, 0, 0, 0, "fill 3-4" },
	{ S_MADVISE, 3, 2, MMP_MADV_PAGEOUT, 0, 0, -EINVAL, "PAGEOUT 3-4" },
	{ S_INTACT, 3, 2, 0, 0, 0, 2, "3-4 intact" },
	{ S_MPROTECT, 1, 1, RO, 0, 0, 0, "mprotect 1 read-only: stays locked" },
	{ S_MUNLOCK, 1, 4, 0, 0, 0, 0, "munlock 1-4" },
	{ S_MMAP, 10, 2, RO, 0, 0, 0, "map 10-11 read-only" },
	{ S_MLOCK, 10, 2, 0, 0, 0, 0, "mlock: the zero page, no Rss" },
	{ S_MPROTECT, 10, 1, RW, 0, 0, 0, "mprotect 10 writable: populated" },
	{ S_MMAP, 20, 2, NONE, 0, 0, 0, "map 20-21 PROT_NONE" },
	{ S_MLOCK, 20, 2, 0, 0, 0, -ENOMEM, "mlock PROT_NONE: locked, not populated" },
	{ S_MMAP, 24, 2, RW, MMP_MAP_LOCKED, 0, 0, "MAP_LOCKED: populated" },
	{ S_MMAP, 27, 2, NONE, MMP_MAP_LOCKED, 0, 0, "MAP_LOCKED PROT_NONE" },
	{ S_MLOCKALL, 0, 0, 0, 0, 0, -EINVAL, "mlockall 0" },
	{ S_MLOCKALL, 0, 0, MMP_MCL_ONFAULT, 0, 0, -EINVAL, "mlockall ONFAULT alone" },
	{ S_MLOCKALL, 0, 0, 8, 0, 0, -EINVAL, "mlockall, unknown flag" },
	{ S_MLOCKALL, 0, 0, MMP_MCL_FUTURE, 0, 0, 0, "mlockall FUTURE" },
	{ S_MMAP, 30, 2, RW, 0, 0, 0, "a new mapping: locked, populated" },
	{ S_MLOCKALL, 0, 0, MMP_MCL_FUTURE | MMP_MCL_ONFAULT, 0, 0, 0, "mlockall FUTURE|ONFAULT" },
	{ S_MMAP, 33, 2, RW, 0, 0, 0, "a new mapping: locked on fault" },
	{ S_MUNLOCKALL, 0, 0, 0, 0, 0, 0, "munlockall" },
	{ S_MMAP, 36, 2, RW, 0, 0, 0, "a new mapping: not locked" },
	{ S_MLOCKALL, 0, 0, MMP_MCL_CURRENT | MMP_MCL_ONFAULT, 0, 0, 0, "mlockall CURRENT|ONFAULT" },
	{ S_MUNLOCKALL, 0, 0, 0, 0, 0, 0, "munlockall" },
	{ S_MLOCKALL, 0, 0, MMP_MCL_CURRENT, 0, 0, 0, "mlockall CURRENT: populates" },
	{ S_MUNLOCKALL, 0, 0, 0, 0, 0, 0, "munlockall" },
	{ S_MMAP, 40, 1, RW, 0, 0, 0, "map 40" },
	{ S_MLOCK, 40, 1, 0, 0, 0, 0, "mlock 40" },
	{ S_MREMAP, 40, 1, 3, 0, 0, 0, "mremap it to 3 pages: populated" },
	{ S_MSEAL, 40, 3, 0, 0, 0, 0, "seal 40-42" },
	{ S_MUNLOCK, 40, 3, 0, 0, 0, 0, "munlock sealed memory" },
	{ S_MLOCK, 40, 3, 0, 0, 0, 0, "mlock sealed memory" },
	{ S_MMAP, 50, 4, RW, 0, 0, 0, "map 50-53" },
	{ S_MADVISE, 51, 1, MMP_MADV_GUARD_INSTALL, 0, 0, 0, "guard 51" },
	{ S_MLOCK, 50, 4, 0, 0, 0, -ENOMEM, "mlock over the guard: populated up to it" },
	{ S_MUNLOCK, 50, 4, 0, 0, 0, 0, "munlock over the guard" },
	{ S_MMAP, 44, 2, NONE, 0, 0, 0, "map 44-45 PROT_NONE" },
	{ S_MLOCK2, 44, 2, 1, 0, 0, 0, "mlock2 ONFAULT" },
	{ S_MPROTECT, 44, 2, RW, 0, 0, 0, "mprotect writable: ONFAULT, not populated" },
	{ S_MUNLOCK, 44, 2, 0, 0, 0, 0, "munlock" },
	{ S_MPROTECT, 44, 2, NONE, 0, 0, 0, "mprotect PROT_NONE again" },
	{ S_MLOCK, 44, 2, 0, 0, 0, -ENOMEM, "mlock PROT_NONE" },
	{ S_MPROTECT, 44, 2, RW, 0, 0, 0, "mprotect writable: populated" },
	{ S_MMAP, 47, 2, RW, 0, 0, 0, "map 47-48" },
	{ S_FILL, 47, 2, 0, 0, 0, 0, "fill them" },
	{ S_MLOCK, 48, 1, 0, 0, 0, 0, "mlock 48" },
	{ S_MADVISE, 47, 2, MMP_MADV_DONTNEED, 0, 0, -EINVAL, "DONTNEED 47-48: 47 zapped, 48 refuses" },
	{ S_ZERO, 47, 1, 0, 0, 0, 1, "47 zapped" },
	{ S_INTACT, 48, 1, 0, 0, 0, 1, "48 intact" },
	{ S_MUNMAP, 47, 2, 0, 0, 0, 0, "munmap a locked page with its neighbour" },
	{ S_MMAP, 50 + 0, 0, RW, 0, 0, -EINVAL, "map 0 bytes" },
	{ S_MMAP, 58, 2, RW, MMP_MAP_SHARED, 0, 0, "map 58-59 shared" },
	{ S_MLOCK, 58, 2, 0, 0, 0, 0, "mlock shared memory: populated by reads" },
	{ S_MADVISE, 58, 2, MMP_MADV_REMOVE, 0, 0, -EINVAL, "REMOVE of locked shared memory" },
	{ S_MUNLOCK, 59, 1, 0, 0, 0, 0, "munlock 59" },
	{ S_MADVISE, 59, 1, MMP_MADV_REMOVE, 0, 0, 0, "REMOVE of it: a hole punched" },
	{ S_MLOCK, 59, 1, 0, 0, 0, 0, "mlock 59 again" },
	{ S_MMAP, 62, 2, RO, MMP_MAP_SHARED | MMP_MAP_LOCKED, 0, 0, "MAP_LOCKED shared read-only" },
	{ S_MMAP, 54, 3, RW, 0, 0, 0, "map 54-56" },
	{ S_MLOCK, 54, 3, 0, 0, 0, 0, "mlock 54-56" },
	{ S_MREMAP, 55, 1, 1, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED | MMP_MREMAP_DONTUNMAP, 60, 0,
	  "mremap DONTUNMAP of 55 to 60: the lock moves, the old VMA, whole, is unlocked" },
	{ S_MMAP, 12, 2, RW, 0, 0, 0, "map 12-13" },
	{ S_MMAP, 14, 2, NONE, 0, 0, 0, "map 14-15 PROT_NONE" },
	{ S_MLOCK, 12, 5, 0, 0, 0, -ENOMEM, "mlock 12-16, 16 a hole: locked, nothing populated" },
	{ S_MPROTECT, 12, 4, RW, 0, 0, 0,
	  "mprotect 12-15 writable: only 14-15, read-only before, populated" },
};

/*
 * RLIMIT_MEMLOCK of four pages, for a process without CAP_IPC_LOCK: what is
 * locked plus what a call would lock, a range's locked part counted once
 * (mlock: ENOMEM, MAP_LOCKED and mremap growth: EAGAIN, mlockall
 * MCL_CURRENT: ENOMEM for all that is mapped); then a limit of 0 (EPERM
 * before anything, a zero length too) and none. No MCL_FUTURE with a limit:
 * the host's own allocations (reading /proc/self/maps) would be locked too.
 */
static const struct script_step limit_steps[] = {
	{ S_RLIMIT, 0, 0, 4 * SCRIPT_PAGE, 0, 0, 0, "RLIMIT_MEMLOCK 4 pages" },
	{ S_MMAP, 1, 8, RW, 0, 0, 0, "map 1-8" },
	{ S_MLOCK, 1, 3, 0, 0, 0, 0, "mlock 1-3" },
	{ S_MLOCK, 2, 3, 0, 0, 0, 0, "mlock 2-4: 2-3 counted once, 4 pages" },
	{ S_MLOCK, 5, 1, 0, 0, 0, -ENOMEM, "mlock 5: a fifth page" },
	{ S_MLOCK2, 5, 1, 1, 0, 0, -ENOMEM, "mlock2 ONFAULT 5" },
	{ S_MLOCK, 1, 4, 0, 0, 0, 0, "mlock 1-4 again: nothing new" },
	{ S_MUNLOCK, 1, 1, 0, 0, 0, 0, "munlock 1" },
	{ S_MMAP, 10, 2, RW, MMP_MAP_LOCKED, 0, -EAGAIN, "MAP_LOCKED of two: five" },
	{ S_MMAP, 10, 1, RW, MMP_MAP_LOCKED, 0, 0, "MAP_LOCKED of one: four" },
	{ S_MREMAP, 10, 1, 2, 0, 0, -EAGAIN, "grow the locked 10 in place: five" },
	{ S_MUNLOCK, 2, 3, 0, 0, 0, 0, "munlock 2-4" },
	{ S_MREMAP, 10, 1, 2, 0, 0, 0, "grow it now: two" },
	{ S_MLOCKALL, 0, 0, MMP_MCL_CURRENT, 0, 0, -ENOMEM, "mlockall CURRENT: all of it" },
	{ S_RLIMIT, 0, 0, 0, 0, 0, 0, "RLIMIT_MEMLOCK 0" },
	{ S_MLOCK, 1, 1, 0, 0, 0, -EPERM, "mlock" },
	{ S_MLOCK, 1, 0, 0, 0, 0, -EPERM, "mlock of 0 bytes" },
	{ S_MLOCK2, 1, 1, 1, 0, 0, -EPERM, "mlock2" },
	{ S_MUNLOCK, 10, 2, 0, 0, 0, 0, "munlock: never refused" },
	{ S_MMAP, 14, 1, RW, MMP_MAP_LOCKED, 0, -EPERM, "MAP_LOCKED" },
	{ S_MLOCKALL, 0, 0, MMP_MCL_FUTURE, 0, 0, -EPERM, "mlockall FUTURE" },
	{ S_RLIMIT, 0, 0, -1, 0, 0, 0, "no RLIMIT_MEMLOCK" },
	{ S_MLOCK, 1, 8, 0, 0, 0, 0, "mlock 1-8" },
	{ S_MUNLOCK, 1, 8, 0, 0, 0, 0, "munlock 1-8" },
};

#define NR(a) ((int)(sizeof(a) / sizeof((a)[0])))

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN	1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN	0
#endif

static uint64_t locked_bytes(struct mmp_space *s)
{
	struct mmp_space_stat st = { 0 };

	mmp_space_stat(s, &st);
	return st.locked_bytes;
}

/* Reclaim leaves locked memory, lazyfree included, in the parent and through the child. */
static void check_reclaim(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *child = NULL;
	uint64_t a = map(s, 8 * SCRIPT_PAGE, RW);
	unsigned char b[8] = { 0 };
	struct mmp_cpu *cpu;

	tap_require(mmp_cpu_attach(s, &cpu) == 0, "%s: attach", arch);
	for (int i = 0; i < 8; i++)
		must(!mmp_write(cpu, a + i * SCRIPT_PAGE, "x", 1), "write");
	tap_eq(mmp_madvise(s, a, 8 * SCRIPT_PAGE, MMP_MADV_FREE), 0, "%s: MADV_FREE", arch);
	tap_eq(mmp_mlock(s, a, 4 * SCRIPT_PAGE), 0, "%s: mlock the first half", arch);
	tap_eq(locked_bytes(s), 4 * SCRIPT_PAGE, "%s: VmLck 16 KiB", arch);
	tap_eq(mmp_reclaim(s), 0, "%s: reclaim", arch);
	for (int i = 0; i < 8; i++)
		mmp_read(cpu, a + i * SCRIPT_PAGE, &b[i], 1);
	tap_ok(!memcmp(b, "xxxx\0\0\0\0", 8), "%s: the locked half kept its lazyfree pages, "
	       "the other half was reclaimed", arch);
	tap_eq(mmp_fork(s, &child), 0, "%s: fork", arch);
	tap_eq(locked_bytes(child), 0, "%s: the child locks nothing", arch);
	tap_eq(mmp_reclaim(child), 0, "%s: reclaim through the child", arch);
	memset(b, 0, sizeof(b));
	for (int i = 0; i < 4; i++)
		mmp_read(cpu, a + i * SCRIPT_PAGE, &b[i], 1);
	tap_ok(!memcmp(b, "xxxx", 4), "%s: the parent's locked pages stay", arch);
	tap_eq(mmp_space_verify(child), 0, "%s: verify the child", arch);
	mmp_space_destroy(child);
	{
		char *buf = malloc(1 << 16);

		tap_ok(!mmp_mlock2(s, a + 6 * SCRIPT_PAGE, SCRIPT_PAGE, MMP_MLOCK_ONFAULT) &&
			       mmp_space_smaps_buf(s, buf, 1 << 16) > 0 &&
			       strstr(buf, "Locked:               16 kB\n") &&
			       strstr(buf, "VmFlags: rd wr mr mw me lo ac \n") &&
			       strstr(buf, "VmFlags: rd wr mr mw me lo lf ac \n"),
		       "%s: smaps: Locked: and VmFlags lo, lf as the kernel prints them", arch);
		free(buf);
	}
	tap_eq(mmp_munlock(s, a, 8 * SCRIPT_PAGE), 0, "%s: munlock", arch);
	tap_eq(locked_bytes(s), 0, "%s: VmLck 0", arch);
	/* Bad input. */
	tap_eq(mmp_mlock(NULL, a, 1), -EINVAL, "%s: mlock NULL space", arch);
	tap_eq(mmp_mlock2(s, a, 1, 2), -EINVAL, "%s: mlock2 flags 2", arch);
	tap_eq(mmp_mlock(s, a + SCRIPT_PAGE, -2 * SCRIPT_PAGE), -EINVAL, "%s: a range that wraps",
	       arch);
	tap_eq(mmp_mlock(s, a, ~0ULL), 0, "%s: a length rounding to 0 is nothing", arch);
	tap_eq(mmp_mlock(s, a + 100, 10), 0, "%s: an unaligned start takes its page", arch);
	tap_eq(locked_bytes(s), SCRIPT_PAGE, "%s: VmLck one page", arch);
	tap_eq(mmp_munlock(s, a + SCRIPT_PAGE - 1, 2), 0, "%s: munlock 2 bytes over 2 pages", arch);
	tap_eq(locked_bytes(s), 0, "%s: VmLck 0 again", arch);
	tap_eq(mmp_mlockall(NULL, MMP_MCL_CURRENT), -EINVAL, "%s: mlockall NULL", arch);
	tap_eq(mmp_munlockall(NULL), -EINVAL, "%s: munlockall NULL", arch);
	tap_eq(mmp_munlock(NULL, a, 1), -EINVAL, "%s: munlock NULL", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* CAP_SYS_RAWIO: fixed mappings below mmap_min_addr, page 0 included. */
static void check_rawio(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *child = NULL;
	uint64_t out = 1, a = map(s, SCRIPT_PAGE, RW);
	struct mmp_cpu *cpu;
	unsigned char b = 0;
	long v = -1;

	tap_require(mmp_cpu_attach(s, &cpu) == 0, "%s: attach", arch);
	tap_eq(mmp_mmap(s, 0, SCRIPT_PAGE, RW, MMP_MAP_FIXED, &out), -EPERM,
	       "%s: unprivileged: no page 0", arch);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_CAP_SYS_RAWIO, 2), -EINVAL, "%s: the option takes 0 or 1",
	       arch);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_CAP_SYS_RAWIO, 1), 0, "%s: CAP_SYS_RAWIO", arch);
	tap_eq(mmp_mmap(s, 0, SCRIPT_PAGE, RW, MMP_MAP_FIXED, &out), 0, "%s: map page 0", arch);
	tap_eq(out, 0, "%s: at 0", arch);
	tap_eq(mmp_write(cpu, 0, "z", 1), 0, "%s: write address 0", arch);
	tap_ok(!mmp_read(cpu, 0, &b, 1) && b == 'z', "%s: read it back", arch);
	tap_eq(mmp_mremap(s, a, SCRIPT_PAGE, SCRIPT_PAGE, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED,
			  0x8000, &out), 0, "%s: mremap to 32 KiB", arch);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_CAP_SYS_RAWIO, 0), -EBUSY,
	       "%s: the privilege stays while mappings lie below mmap_min_addr", arch);
	tap_eq(mmp_fork(s, &child), 0, "%s: fork", arch);
	tap_ok(!mmp_space_get_opt(child, MMP_OPT_CAP_SYS_RAWIO, &v) && v == 1,
	       "%s: the child is privileged too", arch);
	tap_eq(mmp_space_verify(child), 0, "%s: verify the child", arch);
	mmp_space_destroy(child);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	tap_eq(mmp_munmap(s, 0, 0x10000), 0, "%s: unmap below 64 KiB", arch);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_CAP_SYS_RAWIO, 0), 0, "%s: privilege dropped", arch);
	tap_eq(mmp_mmap(s, 0x1000, SCRIPT_PAGE, RW, MMP_MAP_FIXED, &out), -EPERM,
	       "%s: unprivileged again", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

int main(int argc, char **argv)
{
	static struct script_result host, host_limit;
	struct mmp_phys *phys;
	const char *arch;

	/*
	 * mlockall on the host as root only: RLIMIT_MEMLOCK would refuse it
	 * otherwise; and only root may lower and raise the limit again.
	 */
	if (!geteuid() && host_oracle("mlock and RLIMIT_MEMLOCK")) {
		/* Its mlockall(MCL_CURRENT) would populate AddressSanitizer's shadow. */
		if (!UNDER_ASAN)
			script_host(lock_steps, NR(lock_steps), &host);
		else
			printf("# mlock: under AddressSanitizer, the recorded answers only\n");
		script_host(limit_steps, NR(limit_steps), &host_limit);
	}
	script_check_host("mlock", lock_steps, NR(lock_steps), &host);
	script_check_host("RLIMIT_MEMLOCK", limit_steps, NR(limit_steps), &host_limit);
	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		if (argc > 1 && strcmp(argv[1], arch))
			continue;
		script_lib(phys, arch, "mlock", lock_steps, NR(lock_steps), &host);
		script_lib(phys, arch, "RLIMIT_MEMLOCK", limit_steps, NR(limit_steps), &host_limit);
		check_reclaim(phys, arch);
		check_rawio(phys, arch);
	}
	mmp_phys_destroy(phys);
	return tap_done();
}
