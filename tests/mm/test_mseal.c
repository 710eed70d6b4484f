/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mseal (Linux 6.10; 6.18's rules) on every back end, each step against a
 * host process running the same calls (tests/lib/mm_script.h) and the
 * answers Linux 6.18 gave: bad input; sealing splits and merges; munmap,
 * mremap, fixed mmap and mprotect refused with -EPERM on a sealed VMA, the
 * data intact after each refusal (and a munmap's split at its start left as
 * Linux leaves it); the discarding madvise advices refused on read-only
 * private anonymous memory only, VMA by VMA; process_madvise. Then what the
 * host cannot show as a script: fork keeps the seal, smaps says "sl",
 * mmp_space_verify() after each. Run with a back end name to check only it.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "mm_script.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define RO	MMP_PROT_READ

static const struct script_step seal_steps[] = {
	{ S_MMAP, 1, 4, RW, 0, 0, 0, "map 4 pages at 1" },
	{ S_FILL, 1, 4, 0, 0, 0, 0, "fill them" },
	{ S_MSEAL, 1, 1, 1, 0, 0, -EINVAL, "flags 1" },
	{ S_MMAP, 20, 1, RW, 0, 0, 0, "map page 20" },
	{ S_MSEAL, 20, -1, 0, 0, 0, 0, "seal 1 byte: the page" },
	{ S_MUNMAP, 20, 1, 0, 0, 0, -EPERM, "munmap the sealed page" },
	{ S_MSEAL, 1, 0, 0, 0, 0, 0, "length 0" },
	{ S_MSEAL, 1, -(long)(~0UL >> 1), 0, 0, 0, -ENOMEM, "a huge length: a hole" },
	{ S_MSEAL, 2, 4, 0, 0, 0, -ENOMEM, "a hole at the end" },
	{ S_MSEAL, 0, 2, 0, 0, 0, -ENOMEM, "a hole at the start" },
	{ S_MSEAL, 25, 1, 0, 0, 0, -ENOMEM, "nothing mapped" },
	{ S_MSEAL, 3, 2, 0, 0, 0, 0, "pages 3-4" },
	{ S_MUNMAP, 2, 2, 0, 0, 0, -EPERM, "munmap 2-3: the split at 2 stays" },
	{ S_INTACT, 1, 4, 0, 0, 0, 4, "data intact" },
	{ S_MUNMAP, 3, 1, 0, 0, 0, -EPERM, "munmap inside the seal" },
	{ S_MPROTECT, 1, 4, RO, 0, 0, -EPERM, "mprotect 1-4: 1-2 change, then the seal" },
	{ S_MPROTECT, 3, 1, RW, 0, 0, -EPERM, "mprotect to the same protection" },
	{ S_MPROTECT, 3, 1, 0x100, 0, 0, -EINVAL, "mprotect, bad protection" },
	{ S_MPROTECT, 3, 0, RO, 0, 0, 0, "mprotect of 0 bytes" },
	{ S_MREMAP, 3, 1, 2, 1, 0, -EPERM, "mremap grow, may move" },
	{ S_MREMAP, 3, 2, 1, 0, 0, -EPERM, "mremap shrink" },
	{ S_MREMAP, 3, 2, 2, 0, 0, -EPERM, "mremap to the same size" },
	{ S_MREMAP, 3, 0, 1, 1, 0, -EPERM, "mremap of old length 0" },
	{ S_MREMAP, 3, 1, 1, 0x80, 0, -EINVAL, "mremap, bad flags" },
	{ S_MREMAP, 3, 1, 1, 3, 30, -EPERM, "mremap fixed away" },
	{ S_MMAP, 30, 2, RW, 0, 0, 0, "map 2 pages at 30" },
	{ S_MREMAP, 30, 2, 2, 3, 2, -EPERM, "mremap fixed onto 2-3 (3 sealed)" },
	{ S_MMAP, 2, 2, RO, 0, 0, -EPERM, "mmap fixed over 2-3" },
	{ S_MMAP_NOREPLACE, 3, 1, RO, 0, 0, -EEXIST, "mmap fixed_noreplace over 3" },
	{ S_INTACT, 3, 2, 0, 0, 0, 2, "sealed data intact" },
	{ S_MSEAL, 1, 1, 0, 0, 0, 0, "seal page 1" },
	{ S_MPROTECT, 2, 1, RW, 0, 0, 0, "page 2 writable again" },
	{ S_MSEAL, 2, 1, 0, 0, 0, 0, "seal page 2: one VMA 2-4 (1 is read-only)" },
	{ S_MADVISE, 2, 3, MMP_MADV_DONTNEED, 0, 0, 0, "DONTNEED on writable sealed memory" },
	{ S_ZERO, 2, 3, 0, 0, 0, 3, "zapped" },
	/* Read-only sealed memory. */
	{ S_MMAP, 10, 4, RW, 0, 0, 0, "map 10-13" },
	{ S_FILL, 10, 4, 0, 0, 0, 0, "fill them" },
	{ S_MPROTECT, 12, 2, RO, 0, 0, 0, "12-13 read-only" },
	{ S_MSEAL, 12, 2, 0, 0, 0, 0, "seal 12-13" },
	{ S_MADVISE, 12, 2, MMP_MADV_DONTNEED, 0, 0, -EPERM, "DONTNEED" },
	{ S_MADVISE, 12, 2, MMP_MADV_FREE, 0, 0, -EPERM, "FREE" },
	{ S_MADVISE, 12, 2, MMP_MADV_DONTNEED_LOCKED, 0, 0, -EPERM, "DONTNEED_LOCKED" },
	{ S_MADVISE, 12, 2, MMP_MADV_GUARD_INSTALL, 0, 0, -EPERM, "GUARD_INSTALL" },
	{ S_MADVISE, 12, 2, MMP_MADV_DONTFORK, 0, 0, -EPERM, "DONTFORK" },
	{ S_MADVISE, 12, 2, MMP_MADV_WIPEONFORK, 0, 0, -EPERM, "WIPEONFORK" },
	{ S_MADVISE, 12, 2, MMP_MADV_REMOVE, 0, 0, -EPERM, "REMOVE: the seal before the mapping type" },
	{ S_MADVISE, 12, 2, MMP_MADV_DOFORK, 0, 0, 0, "DOFORK" },
	{ S_MADVISE, 12, 2, MMP_MADV_KEEPONFORK, 0, 0, 0, "KEEPONFORK" },
	{ S_MADVISE, 12, 2, MMP_MADV_RANDOM, 0, 0, 0, "RANDOM" },
	{ S_MADVISE, 12, 2, MMP_MADV_GUARD_REMOVE, 0, 0, 0, "GUARD_REMOVE" },
	{ S_MADVISE, 12, 2, MMP_MADV_COLD, 0, 0, 0, "COLD" },
	{ S_MADVISE, 12, 2, MMP_MADV_PAGEOUT, 0, 0, 0, "PAGEOUT" },
	{ S_MADVISE, 12, 2, MMP_MADV_WILLNEED, 0, 0, 0, "WILLNEED" },
	{ S_MADVISE, 12, 2, MMP_MADV_POPULATE_READ, 0, 0, 0, "POPULATE_READ" },
	{ S_MADVISE, 12, 2, MMP_MADV_NOHUGEPAGE, 0, 0, 0, "NOHUGEPAGE" },
	{ S_MADVISE, 12, 2, 999, 0, 0, -EINVAL, "an unknown advice" },
	{ S_PMADVISE, 12, 2, MMP_MADV_DONTNEED, 0, 0, -EPERM, "process_madvise DONTNEED" },
	{ S_INTACT, 12, 2, 0, 0, 0, 2, "data intact" },
	{ S_MADVISE, 10, 4, MMP_MADV_DONTNEED, 0, 0, -EPERM, "DONTNEED 10-13: 10-11 zapped" },
	{ S_ZERO, 10, 2, 0, 0, 0, 2, "10-11 zapped" },
	{ S_INTACT, 12, 2, 0, 0, 0, 2, "12-13 intact" },
	{ S_MADVISE, 13, 2, MMP_MADV_DONTNEED, 0, 0, -EPERM, "DONTNEED of sealed and a hole" },
	{ S_PMADVISE, 10, 4, MMP_MADV_FREE, 0, 0, -EPERM, "process_madvise FREE" },
	/* A munmap over a hole and unsealed VMAs ending in a seal removes nothing. */
	{ S_MMAP, 40, 1, RW, 0, 0, 0, "map 40" },
	{ S_MMAP, 42, 2, RW, 0, 0, 0, "map 42-43" },
	{ S_MSEAL, 43, 1, 0, 0, 0, 0, "seal 43" },
	{ S_FILL, 40, 1, 0, 0, 0, 0, "fill 40" },
	{ S_MUNMAP, 40, 4, 0, 0, 0, -EPERM, "munmap 40-43" },
	{ S_INTACT, 40, 1, 0, 0, 0, 1, "40 intact" },
	{ S_MUNMAP, 42, 1, 0, 0, 0, 0, "munmap 42 beside the seal" },
	/* A move of several VMAs (6.17) moves those before the seal, then stops. */
	{ S_MMAP, 50, 4, RW, 0, 0, 0, "map 50-53" },
	{ S_MPROTECT, 52, 2, RO, 0, 0, 0, "52-53 read-only" },
	{ S_MSEAL, 52, 2, 0, 0, 0, 0, "seal 52-53" },
	{ S_MREMAP, 50, 4, 4, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, 56, -EPERM,
	  "move 50-53 to 56: 50-51 move, the seal stops it" },
};

#define NR(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Fork keeps the seal, smaps says "sl", and a sealed heap does not shrink. */
static void check_fork_smaps(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *child = NULL;
	uint64_t a = map(s, 4 * SCRIPT_PAGE, RW), brk = 0;
	char *buf = malloc(1 << 16);

	tap_eq(mmp_mseal(s, a, 2 * SCRIPT_PAGE, 0), 0, "%s: seal half", arch);
	tap_eq(mmp_fork(s, &child), 0, "%s: fork", arch);
	tap_eq(mmp_munmap(child, a, SCRIPT_PAGE), -EPERM, "%s: the child's copy is sealed", arch);
	tap_eq(mmp_munmap(child, a + 2 * SCRIPT_PAGE, 2 * SCRIPT_PAGE), 0,
	       "%s: the child unmaps the unsealed half", arch);
	tap_eq(mmp_space_verify(child), 0, "%s: verify the child", arch);
	mmp_space_destroy(child);
	tap_ok(mmp_space_smaps_buf(s, buf, 1 << 16) > 0 && strstr(buf, " ac sl \n"),
	       "%s: smaps VmFlags ends in sl", arch);
	tap_eq(mmp_mseal(NULL, a, SCRIPT_PAGE, 0), -EINVAL, "%s: NULL space", arch);
	tap_eq(mmp_mseal(s, a + 1, SCRIPT_PAGE, 0), -EINVAL, "%s: unaligned", arch);
	tap_eq(mmp_mseal(s, a, ~0ULL, 0), -EINVAL, "%s: a length that wraps when rounded", arch);
	tap_eq(mmp_mseal(s, a + SCRIPT_PAGE, -2 * SCRIPT_PAGE, 0), -EINVAL,
	       "%s: a range that wraps", arch);
	tap_eq(mmp_mseal(s, task_size(s), SCRIPT_PAGE, 0), -ENOMEM, "%s: past the task size", arch);
	/* A heap sealed where it stands: brk cannot shrink it. */
	must(!mmp_brk_init(s, a + 64 * MiB), "brk_init");
	must(!mmp_brk(s, a + 64 * MiB + 2 * SCRIPT_PAGE, &brk), "grow the heap");
	tap_eq(mmp_mseal(s, a + 64 * MiB, 2 * SCRIPT_PAGE, 0), 0, "%s: seal the heap", arch);
	tap_eq(mmp_brk(s, a + 64 * MiB, &brk), -EPERM, "%s: brk does not shrink a sealed heap",
	       arch);
	tap_eq(brk, a + 64 * MiB + 2 * SCRIPT_PAGE, "%s: the break stays", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	free(buf);
	mmp_space_destroy(s);
}

int main(int argc, char **argv)
{
	static struct script_result host;
	struct mmp_phys *phys;
	const char *arch;

	script_host(seal_steps, NR(seal_steps), &host);
	script_check_host("mseal", seal_steps, NR(seal_steps), &host);
	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		if (argc > 1 && strcmp(argv[1], arch))
			continue;
		script_lib(phys, arch, "mseal", seal_steps, NR(seal_steps), &host);
		check_fork_smaps(phys, arch);
	}
	mmp_phys_destroy(phys);
	return tap_done();
}
