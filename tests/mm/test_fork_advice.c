/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The madvise advices that change VMA flags, and MADV_REMOVE, on every back
 * end: MADV_DONTFORK (the child has a hole there) and DOFORK, MADV_WIPEONFORK
 * (the child reads zeroes) and KEEPONFORK with what they refuse, the read
 * pattern advices and their readahead on a file fault, MADV_MERGEABLE and
 * PR_SET_MEMORY_MERGE (flags only: nothing is merged), MADV_REMOVE as a hole
 * punch, the memory-failure advices refused; VMAs split and merged back,
 * smaps VmFlags, holes and max_map_count. The errnos are checked against the
 * host kernel in the same run. mmp_space_verify() after each step.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mmprim/introspect.h>

#include "util.h"

#define PG	4096ULL
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)

struct t {
	struct mmp_phys *phys;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	const char *arch;
};

static void verify(struct mmp_space *s, const char *arch, const char *step)
{
	tap_eq(mmp_space_verify(s), 0, "%s: verify after %s", arch, step);
}

static uint32_t vflags(struct mmp_space *s, uint64_t addr)
{
	struct mmp_addr_info in;

	if (mmp_space_query(s, addr, &in))
		return 0;
	return in.vma_flags;
}

/* The VMA holding @addr: [*start, *end). */
static void vma_at(struct mmp_space *s, uint64_t addr, uint64_t *start, uint64_t *end)
{
	struct mmp_addr_info in;

	*start = *end = 0;
	if (!mmp_space_query(s, addr, &in)) {
		*start = in.vma_start;
		*end = in.vma_end;
	}
}

static void fill(struct mmp_cpu *cpu, uint64_t a, unsigned int n, unsigned char seed)
{
	for (unsigned int i = 0; i < n; i++) {
		unsigned char b = (unsigned char)(seed + i);

		must(mmp_write(cpu, a + i * PG, &b, 1) == 0, "write page %u", i);
	}
}

/* Pages of [a, a + n pages) reading fill()'s bytes. */
static unsigned int holds(struct mmp_cpu *cpu, uint64_t a, unsigned int n, unsigned char seed)
{
	unsigned int ok = 0;

	for (unsigned int i = 0; i < n; i++) {
		unsigned char b = 0;

		if (mmp_read(cpu, a + i * PG, &b, 1) == 0 && b == (unsigned char)(seed + i))
			ok++;
	}
	return ok;
}

static unsigned int zeroes(struct mmp_cpu *cpu, uint64_t a, unsigned int n)
{
	unsigned int ok = 0;

	for (unsigned int i = 0; i < n; i++) {
		unsigned char b = 1;

		if (mmp_read(cpu, a + i * PG, &b, 1) == 0 && b == 0)
			ok++;
	}
	return ok;
}

static bool smaps_has(struct mmp_space *s, const char *word)
{
	static char buf[1 << 16];

	if (mmp_space_smaps_buf(s, buf, sizeof(buf)) < 0)
		return false;
	for (char *p = buf; (p = strstr(p, "VmFlags:")); p++) {
		char *eol = strchr(p, '\n'), *w = strstr(p, word);

		if (w && (!eol || w < eol))
			return true;
	}
	return false;
}

static void check_dontfork(struct t *t)
{
	uint64_t a = map(t->s, 16 * PG, RW), lo, hi, b;
	struct mmp_space *child;
	struct mmp_cpu *ccpu;

	fill(t->cpu, a, 16, 1);
	tap_eq(mmp_madvise(t->s, a + 4 * PG, 4 * PG, MMP_MADV_DONTFORK), 0,
	       "%s: MADV_DONTFORK of 4 pages inside a VMA", t->arch);
	vma_at(t->s, a + 4 * PG, &lo, &hi);
	tap_ok(lo == a + 4 * PG && hi == a + 8 * PG, "%s: DONTFORK split its range out", t->arch);
	tap_ok(vflags(t->s, a + 4 * PG) & MMP_VMA_DONTCOPY, "%s: MMP_VMA_DONTCOPY set", t->arch);
	tap_ok(!(vflags(t->s, a) & MMP_VMA_DONTCOPY), "%s: not before it", t->arch);
	tap_ok(smaps_has(t->s, " dc"), "%s: smaps VmFlags dc", t->arch);
	verify(t->s, t->arch, "DONTFORK");
	tap_require(mmp_fork(t->s, &child) == 0, "%s: fork", t->arch);
	tap_require(mmp_cpu_attach(child, &ccpu) == 0, "%s: attach to the child", t->arch);
	tap_eq(mmp_space_query(child, a + 4 * PG, &(struct mmp_addr_info){ 0 }), -ENOMEM,
	       "%s: the child has a hole where DONTFORK was", t->arch);
	tap_eq(mmp_read(ccpu, a + 5 * PG, &(char){ 0 }, 1), -EFAULT,
	       "%s: the child's access there faults", t->arch);
	tap_eq(holds(ccpu, a, 4, 1) + holds(ccpu, a + 8 * PG, 8, 9), 12,
	       "%s: the child has the rest", t->arch);
	/* The hole is the child's own: it can map there. */
	b = 0;
	tap_eq(mmp_mmap(child, a + 4 * PG, 4 * PG, RW, MMP_MAP_FIXED_NOREPLACE, &b), 0,
	       "%s: the child maps into the hole", t->arch);
	verify(child, t->arch, "fork with DONTFORK");
	mmp_cpu_detach(ccpu);
	mmp_space_destroy(child);
	tap_eq(holds(t->cpu, a, 16, 1), 16, "%s: the parent keeps every page", t->arch);
	tap_eq(mmp_madvise(t->s, a, 16 * PG, MMP_MADV_DOFORK), 0, "%s: MADV_DOFORK", t->arch);
	vma_at(t->s, a + 4 * PG, &lo, &hi);
	tap_ok(lo == a && hi == a + 16 * PG, "%s: DOFORK merged the VMAs back", t->arch);
	tap_require(mmp_fork(t->s, &child) == 0, "%s: fork again", t->arch);
	tap_require(mmp_cpu_attach(child, &ccpu) == 0, "%s: attach to the child", t->arch);
	tap_eq(holds(ccpu, a, 16, 1), 16, "%s: after DOFORK the child has it all", t->arch);
	verify(child, t->arch, "fork after DOFORK");
	mmp_cpu_detach(ccpu);
	mmp_space_destroy(child);
	mmp_munmap(t->s, a, 16 * PG);
	verify(t->s, t->arch, "DOFORK");
}

static void check_wipeonfork(struct t *t)
{
	uint64_t a = map(t->s, 8 * PG, RW), sh = 0, dr = 0, fp = 0, lo, hi;
	struct mmp_space *child;
	struct mmp_cpu *ccpu;
	struct mmp_file *f;

	fill(t->cpu, a, 8, 40);
	tap_eq(mmp_madvise(t->s, a, 2 * PG, MMP_MADV_WIPEONFORK), 0, "%s: MADV_WIPEONFORK",
	       t->arch);
	tap_ok(vflags(t->s, a) & MMP_VMA_WIPEONFORK, "%s: wf set", t->arch);
	tap_ok(smaps_has(t->s, " wf"), "%s: smaps VmFlags wf", t->arch);
	tap_require(mmp_fork(t->s, &child) == 0, "%s: fork", t->arch);
	tap_require(mmp_cpu_attach(child, &ccpu) == 0, "%s: attach to the child", t->arch);
	tap_eq(zeroes(ccpu, a, 2), 2, "%s: the child reads zeroes where WIPEONFORK was", t->arch);
	tap_eq(holds(ccpu, a + 2 * PG, 6, 42), 6, "%s: and the rest as written", t->arch);
	tap_ok(vflags(child, a) & MMP_VMA_WIPEONFORK, "%s: the child's VMA keeps wf", t->arch);
	verify(child, t->arch, "fork with WIPEONFORK");
	mmp_cpu_detach(ccpu);
	mmp_space_destroy(child);
	tap_eq(holds(t->cpu, a, 8, 40), 8, "%s: the parent keeps its pages", t->arch);
	tap_eq(mmp_madvise(t->s, a, 8 * PG, MMP_MADV_KEEPONFORK), 0, "%s: MADV_KEEPONFORK",
	       t->arch);
	vma_at(t->s, a, &lo, &hi);
	tap_ok(lo == a && hi == a + 8 * PG && !(vflags(t->s, a) & MMP_VMA_WIPEONFORK),
	       "%s: KEEPONFORK cleared it and merged back", t->arch);

	/* What they refuse. */
	tap_require(mmp_mmap(t->s, 0, 4 * PG, RW, MMP_MAP_SHARED, &sh) == 0, "%s: shared anon",
		    t->arch);
	tap_eq(mmp_madvise(t->s, sh, PG, MMP_MADV_WIPEONFORK), -EINVAL,
	       "%s: WIPEONFORK of shared anonymous memory: -EINVAL", t->arch);
	tap_eq(mmp_madvise(t->s, sh, PG, MMP_MADV_KEEPONFORK), 0,
	       "%s: KEEPONFORK of shared memory: 0", t->arch);
	tap_require(mmp_mmap(t->s, 0, 4 * PG, RW, MMP_MAP_DROPPABLE, &dr) == 0, "%s: droppable",
		    t->arch);
	tap_eq(mmp_madvise(t->s, dr, PG, MMP_MADV_KEEPONFORK), -EINVAL,
	       "%s: KEEPONFORK of droppable memory: -EINVAL", t->arch);
	tap_eq(mmp_madvise(t->s, dr, PG, MMP_MADV_WIPEONFORK), 0,
	       "%s: WIPEONFORK of droppable memory: 0", t->arch);
	tap_require(mmp_memfd_create(t->phys, 0, &f) == 0 && mmp_file_truncate(f, 4 * PG) == 0,
		    "%s: memfd", t->arch);
	tap_require(mmp_mmap_file(t->s, 0, 4 * PG, RW, MMP_MAP_PRIVATE, f, 0, &fp) == 0,
		    "%s: private file mapping", t->arch);
	tap_eq(mmp_madvise(t->s, fp, PG, MMP_MADV_WIPEONFORK), -EINVAL,
	       "%s: WIPEONFORK of a private file mapping: -EINVAL", t->arch);
	mmp_munmap(t->s, fp, 4 * PG);
	mmp_munmap(t->s, sh, 4 * PG);
	mmp_munmap(t->s, dr, 4 * PG);
	mmp_file_destroy(f);

	/* A range over an anonymous VMA, then a shared one: the first keeps the advice. */
	tap_require(mmp_mmap(t->s, a + 8 * PG, 4 * PG, RW, MMP_MAP_SHARED | MMP_MAP_FIXED, &sh) == 0,
		    "%s: shared anon after the private one", t->arch);
	tap_eq(mmp_madvise(t->s, a + 4 * PG, 8 * PG, MMP_MADV_WIPEONFORK), -EINVAL,
	       "%s: WIPEONFORK over private then shared: -EINVAL", t->arch);
	tap_ok(vflags(t->s, a + 4 * PG) & MMP_VMA_WIPEONFORK,
	       "%s: the private part took it before the error", t->arch);
	verify(t->s, t->arch, "WIPEONFORK errors");
	mmp_munmap(t->s, a, 12 * PG);
}

/*
 * The pages one read fault at page 40 brings into the cache of a fresh
 * 128-page regular file, mapped with @advice.
 */
static uint64_t pages_read_in(struct t *t, int advice)
{
	struct mmp_file_stat st = { 0 };
	struct mmp_file *f;
	uint64_t fa = 0;
	char b;

	tap_require(mmp_file_create(t->phys, 128 * PG, MMP_FILE_NO_LARGE_FOLIOS, &f) == 0,
		    "%s: a regular file", t->arch);
	tap_require(mmp_mmap_file(t->s, 0, 128 * PG, MMP_PROT_READ, MMP_MAP_PRIVATE, f, 0, &fa) == 0,
		    "%s: map it", t->arch);
	tap_eq(mmp_madvise(t->s, fa, 128 * PG, advice), 0, "%s: advice %d", t->arch, advice);
	tap_eq(mmp_read(t->cpu, fa + 40 * PG, &b, 1), 0, "%s: a read fault", t->arch);
	mmp_file_stat(f, &st);
	verify(t->s, t->arch, "a file read fault");
	mmp_munmap(t->s, fa, 128 * PG);
	mmp_file_destroy(f);
	return st.nrpages;
}

static void check_read_pattern(struct t *t)
{
	uint64_t a = map(t->s, 8 * PG, RW);
	static const struct {
		int advice;
		uint64_t want;		/* pages cached after one read fault at page 40 */
	} ra[] = {
		{ MMP_MADV_NORMAL, 32 },	/* read-around: 16 pages below, 16 from it */
		{ MMP_MADV_RANDOM, 1 },		/* only the page */
		{ MMP_MADV_SEQUENTIAL, 32 },	/* forward from it */
	};

	tap_eq(mmp_madvise(t->s, a, 2 * PG, MMP_MADV_RANDOM), 0, "%s: MADV_RANDOM", t->arch);
	tap_ok((vflags(t->s, a) & (MMP_VMA_RAND_READ | MMP_VMA_SEQ_READ)) == MMP_VMA_RAND_READ,
	       "%s: rr alone", t->arch);
	tap_ok(smaps_has(t->s, " rr"), "%s: smaps VmFlags rr", t->arch);
	tap_eq(mmp_madvise(t->s, a, 2 * PG, MMP_MADV_SEQUENTIAL), 0, "%s: MADV_SEQUENTIAL",
	       t->arch);
	tap_ok((vflags(t->s, a) & (MMP_VMA_RAND_READ | MMP_VMA_SEQ_READ)) == MMP_VMA_SEQ_READ,
	       "%s: sr replaces rr", t->arch);
	tap_ok(smaps_has(t->s, " sr"), "%s: smaps VmFlags sr", t->arch);
	tap_eq(mmp_madvise(t->s, a, 8 * PG, MMP_MADV_NORMAL), 0, "%s: MADV_NORMAL", t->arch);
	tap_ok(!(vflags(t->s, a) & (MMP_VMA_RAND_READ | MMP_VMA_SEQ_READ)),
	       "%s: NORMAL clears both", t->arch);
	mmp_munmap(t->s, a, 8 * PG);
	verify(t->s, t->arch, "read pattern flags");

	for (unsigned int i = 0; i < sizeof(ra) / sizeof(ra[0]); i++)
		tap_eq(pages_read_in(t, ra[i].advice), ra[i].want,
		       "%s: advice %d: %llu pages read in", t->arch, ra[i].advice,
		       (unsigned long long)ra[i].want);
}

/*
 * Read-around takes the device's read_ahead_kb (the bdi's ra_pages), half of
 * it below the fault, and stops at the end of the file: a virtio disk's 8192
 * reads a whole 128-page file from one fault at page 40, 64 KiB 16 pages, 0
 * the page alone (do_sync_mmap_readahead, !ra->ra_pages).
 */
static void check_read_ahead_kb(struct t *t)
{
	static const struct {
		long kb;
		uint64_t want;	/* pages cached after a fault at page 40 */
	} ra[] = { { 8192, 128 }, { 64, 16 }, { 0, 1 }, { 128, 32 } };

	for (unsigned int k = 0; k < sizeof(ra) / sizeof(ra[0]); k++) {
		tap_eq(mmp_space_set_opt(t->s, MMP_OPT_READ_AHEAD_KB, ra[k].kb), 0,
		       "%s: read_ahead_kb %ld", t->arch, ra[k].kb);
		tap_eq(pages_read_in(t, MMP_MADV_NORMAL), ra[k].want,
		       "%s: read_ahead_kb %ld: %llu pages read in", t->arch, ra[k].kb,
		       (unsigned long long)ra[k].want);
	}
	tap_eq(mmp_space_set_opt(t->s, MMP_OPT_READ_AHEAD_KB, -1), -EINVAL,
	       "%s: read_ahead_kb -1: -EINVAL", t->arch);
}

static void check_ksm(struct t *t)
{
	uint64_t a = map(t->s, 8 * PG, RW), sh = 0, b, lo, hi;
	struct mmp_space *child;

	tap_eq(mmp_madvise(t->s, a, 4 * PG, MMP_MADV_MERGEABLE), 0, "%s: MADV_MERGEABLE", t->arch);
	tap_ok(vflags(t->s, a) & MMP_VMA_MERGEABLE, "%s: mg set", t->arch);
	tap_ok(!(vflags(t->s, a + 4 * PG) & MMP_VMA_MERGEABLE), "%s: only in the range", t->arch);
	tap_ok(smaps_has(t->s, " mg"), "%s: smaps VmFlags mg", t->arch);
	tap_eq(mmp_madvise(t->s, a, 8 * PG, MMP_MADV_UNMERGEABLE), 0, "%s: MADV_UNMERGEABLE",
	       t->arch);
	vma_at(t->s, a, &lo, &hi);
	tap_ok(lo == a && hi == a + 8 * PG && !(vflags(t->s, a) & MMP_VMA_MERGEABLE),
	       "%s: cleared and merged back", t->arch);
	tap_require(mmp_mmap(t->s, 0, 4 * PG, RW, MMP_MAP_SHARED, &sh) == 0, "%s: shared anon",
		    t->arch);
	tap_eq(mmp_madvise(t->s, sh, 4 * PG, MMP_MADV_MERGEABLE), 0,
	       "%s: MERGEABLE of shared memory: 0", t->arch);
	tap_ok(!(vflags(t->s, sh) & MMP_VMA_MERGEABLE), "%s: but passed by", t->arch);

	/* PR_SET_MEMORY_MERGE: every eligible VMA, now and later, no split. */
	tap_eq(mmp_space_set_memory_merge(t->s, 1), 0, "%s: PR_SET_MEMORY_MERGE 1", t->arch);
	tap_ok(vflags(t->s, a) & MMP_VMA_MERGEABLE, "%s: an existing VMA is mg", t->arch);
	tap_ok(!(vflags(t->s, sh) & MMP_VMA_MERGEABLE), "%s: shared memory is not", t->arch);
	b = map(t->s, 4 * PG, RW);
	tap_ok(vflags(t->s, b) & MMP_VMA_MERGEABLE, "%s: a new mapping is mg", t->arch);
	tap_require(mmp_fork(t->s, &child) == 0, "%s: fork", t->arch);
	tap_ok(vflags(child, a) & MMP_VMA_MERGEABLE, "%s: the child's copy is mg", t->arch);
	b = map(child, 4 * PG, RW);
	tap_ok(vflags(child, b) & MMP_VMA_MERGEABLE, "%s: the child inherits the setting",
	       t->arch);
	verify(child, t->arch, "fork with memory merge");
	mmp_space_destroy(child);
	tap_eq(mmp_space_set_memory_merge(t->s, 0), 0, "%s: PR_SET_MEMORY_MERGE 0", t->arch);
	tap_ok(!(vflags(t->s, a) & MMP_VMA_MERGEABLE), "%s: every VMA loses mg", t->arch);
	tap_eq(mmp_space_set_memory_merge(NULL, 1), -EINVAL, "%s: NULL space", t->arch);
	verify(t->s, t->arch, "memory merge");
	mmp_munmap(t->s, a, 8 * PG);
	mmp_munmap(t->s, sh, 4 * PG);
}

static void check_remove(struct t *t)
{
	uint64_t sh = 0, pr = 0, a = map(t->s, 4 * PG, RW), ro = 0;
	unsigned char buf[PG];
	struct mmp_file *f;
	size_t n = 0;
	bool zero = true;

	tap_require(mmp_memfd_create(t->phys, 0, &f) == 0 && mmp_file_truncate(f, 8 * PG) == 0,
		    "%s: memfd", t->arch);
	tap_require(mmp_mmap_file(t->s, 0, 8 * PG, RW, MMP_MAP_SHARED, f, 0, &sh) == 0,
		    "%s: shared mapping", t->arch);
	tap_require(mmp_mmap_file(t->s, 0, 8 * PG, RW, MMP_MAP_PRIVATE, f, 0, &pr) == 0,
		    "%s: private mapping", t->arch);
	fill(t->cpu, sh, 8, 70);
	fill(t->cpu, pr, 2, 90);	/* private copies of pages 0 and 1 */
	tap_eq(holds(t->cpu, pr + 2 * PG, 6, 72), 6, "%s: the private mapping reads the file",
	       t->arch);
	tap_eq(mmp_madvise(t->s, sh, 4 * PG, MMP_MADV_REMOVE), 0, "%s: MADV_REMOVE of 4 pages",
	       t->arch);
	tap_eq(zeroes(t->cpu, sh, 4), 4, "%s: the hole reads zeroes", t->arch);
	tap_eq(holds(t->cpu, sh + 4 * PG, 4, 74), 4, "%s: the rest is kept", t->arch);
	tap_eq(holds(t->cpu, pr, 2, 90), 2, "%s: private copies outlive the hole", t->arch);
	tap_eq(zeroes(t->cpu, pr + 2 * PG, 2), 2, "%s: private views of the file see it", t->arch);
	mmp_file_read(f, 0, buf, PG, &n);
	for (size_t i = 0; i < n; i++)
		zero &= !buf[i];
	tap_ok(n == PG && zero, "%s: read(2) sees the hole", t->arch);
	verify(t->s, t->arch, "MADV_REMOVE");
	tap_eq(mmp_madvise(t->s, a, PG, MMP_MADV_REMOVE), -EINVAL,
	       "%s: REMOVE of private anonymous memory: -EINVAL", t->arch);
	tap_eq(mmp_madvise(t->s, pr, PG, MMP_MADV_REMOVE), -EACCES,
	       "%s: REMOVE of a private file mapping: -EACCES", t->arch);
	mmp_munmap(t->s, pr, 8 * PG);
	mmp_munmap(t->s, sh, 8 * PG);
	mmp_file_destroy(f);

	/* A regular file: the store reads zeroes too. */
	tap_require(mmp_file_create(t->phys, 4 * PG, 0, &f) == 0, "%s: a regular file", t->arch);
	tap_require(mmp_mmap_file(t->s, 0, 4 * PG, RW, MMP_MAP_SHARED, f, 0, &sh) == 0,
		    "%s: shared mapping", t->arch);
	fill(t->cpu, sh, 4, 5);
	tap_eq(mmp_msync(t->s, sh, 4 * PG, MMP_MS_SYNC), 0, "%s: written back", t->arch);
	tap_eq(mmp_madvise(t->s, sh + PG, 2 * PG, MMP_MADV_REMOVE), 0,
	       "%s: MADV_REMOVE in a regular file", t->arch);
	tap_eq(zeroes(t->cpu, sh + PG, 2) + holds(t->cpu, sh, 1, 5) + holds(t->cpu, sh + 3 * PG, 1, 8),
	       4, "%s: the hole reads zeroes, the rest is kept", t->arch);
	/* A shared mapping of a read-only handle may not punch. */
	mmp_munmap(t->s, sh, 4 * PG);
	mmp_file_destroy(f);
	tap_require(mmp_file_create(t->phys, 4 * PG, MMP_FILE_RDONLY, &f) == 0, "%s: read-only",
		    t->arch);
	tap_require(mmp_mmap_file(t->s, 0, 4 * PG, MMP_PROT_READ, MMP_MAP_SHARED, f, 0, &ro) == 0,
		    "%s: shared read-only mapping", t->arch);
	tap_eq(mmp_madvise(t->s, ro, PG, MMP_MADV_REMOVE), -EACCES,
	       "%s: REMOVE through a read-only handle: -EACCES", t->arch);
	mmp_munmap(t->s, ro, 4 * PG);
	mmp_file_destroy(f);
	mmp_munmap(t->s, a, 4 * PG);
	verify(t->s, t->arch, "MADV_REMOVE errors");
}

static void check_errors(struct t *t)
{
	uint64_t a = map(t->s, 8 * PG, RW), lo, hi;

	tap_eq(mmp_madvise(t->s, a, PG, MMP_MADV_HWPOISON), -EPERM, "%s: MADV_HWPOISON: -EPERM",
	       t->arch);
	tap_eq(mmp_madvise(t->s, a, PG, MMP_MADV_SOFT_OFFLINE), -EPERM,
	       "%s: MADV_SOFT_OFFLINE: -EPERM", t->arch);
	tap_eq(mmp_madvise(t->s, a, 0, MMP_MADV_HWPOISON), -EPERM,
	       "%s: MADV_HWPOISON of nothing: -EPERM", t->arch);
	tap_eq(mmp_madvise(t->s, a + 1, PG, MMP_MADV_HWPOISON), -EINVAL,
	       "%s: MADV_HWPOISON unaligned: -EINVAL first", t->arch);
	tap_eq(mmp_madvise(t->s, a + 1, PG, MMP_MADV_DONTFORK), -EINVAL,
	       "%s: DONTFORK unaligned", t->arch);
	tap_eq(mmp_madvise(t->s, a, 0, MMP_MADV_DONTFORK), 0, "%s: DONTFORK len 0", t->arch);
	/* A hole: the mapped parts take it, then -ENOMEM. */
	mmp_munmap(t->s, a + 3 * PG, PG);
	tap_eq(mmp_madvise(t->s, a + 2 * PG, 3 * PG, MMP_MADV_DONTFORK), -ENOMEM,
	       "%s: DONTFORK over a hole: -ENOMEM", t->arch);
	tap_ok((vflags(t->s, a + 2 * PG) & vflags(t->s, a + 4 * PG)) & MMP_VMA_DONTCOPY,
	       "%s: both sides took it", t->arch);
	vma_at(t->s, a + 4 * PG, &lo, &hi);
	tap_ok(lo == a + 4 * PG && hi == a + 5 * PG, "%s: only the range", t->arch);
	verify(t->s, t->arch, "error paths");
	mmp_munmap(t->s, a, 8 * PG);
}

/* At max_map_count a split is refused with -EAGAIN, the space as it was (one back end: slow). */
static void check_map_count(struct t *t)
{
	uint64_t n = 32768, a = map(t->s, 2 * n * PG, RW), i, lo, hi;

	for (i = 0; i < n; i++)
		if (mmp_mprotect(t->s, a + 2 * i * PG, PG, MMP_PROT_READ))
			break;
	tap_ok(i < n, "%s: the map count reached its limit after %llu splits", t->arch,
	       (unsigned long long)i);
	for (int adv = 0; adv < 4; adv++) {
		static const int advs[] = { MMP_MADV_DONTFORK, MMP_MADV_WIPEONFORK,
					    MMP_MADV_RANDOM, MMP_MADV_MERGEABLE };

		tap_eq(mmp_madvise(t->s, a + 2 * (n - 4) * PG, PG, advs[adv]), -EAGAIN,
		       "%s: advice %d splitting past max_map_count: -EAGAIN", t->arch, advs[adv]);
	}
	vma_at(t->s, a + 2 * (n - 4) * PG, &lo, &hi);
	tap_ok(!(vflags(t->s, lo) & (MMP_VMA_DONTCOPY | MMP_VMA_WIPEONFORK | MMP_VMA_MERGEABLE)),
	       "%s: nothing changed", t->arch);
	verify(t->s, t->arch, "max_map_count");
	mmp_munmap(t->s, a, 2 * n * PG);
}

/*
 * The same advices on the host: errno by mapping kind, and the VmFlags they
 * leave (MADV_HWPOISON is left out: as root it would poison a page).
 */
static void check_host(void)
{
	static const struct {
		const char *what;
		int kind;		/* 0 private anon, 1 shared anon, 2 private memfd, 3 shared memfd, 4 droppable */
		int advice;
	} cases[] = {
		{ "WIPEONFORK private", 0, MMP_MADV_WIPEONFORK },
		{ "WIPEONFORK shared", 1, MMP_MADV_WIPEONFORK },
		{ "WIPEONFORK private file", 2, MMP_MADV_WIPEONFORK },
		{ "KEEPONFORK droppable", 4, MMP_MADV_KEEPONFORK },
		{ "KEEPONFORK shared", 1, MMP_MADV_KEEPONFORK },
		{ "DONTFORK shared file", 3, MMP_MADV_DONTFORK },
		{ "DOFORK private", 0, MMP_MADV_DOFORK },
		{ "MERGEABLE shared", 1, MMP_MADV_MERGEABLE },
		{ "MERGEABLE droppable", 4, MMP_MADV_MERGEABLE },
		{ "MERGEABLE private file", 2, MMP_MADV_MERGEABLE },
		{ "UNMERGEABLE private", 0, MMP_MADV_UNMERGEABLE },
		{ "REMOVE private", 0, MMP_MADV_REMOVE },
		{ "REMOVE shared", 1, MMP_MADV_REMOVE },
		{ "REMOVE private file", 2, MMP_MADV_REMOVE },
		{ "REMOVE shared file", 3, MMP_MADV_REMOVE },
		{ "REMOVE droppable", 4, MMP_MADV_REMOVE },
		{ "RANDOM shared file", 3, MMP_MADV_RANDOM },
		{ "SEQUENTIAL private", 0, MMP_MADV_SEQUENTIAL },
	};
	struct mmp_phys *phys;
	struct mmp_space *s;
	struct mmp_file *lf;
	int fd = memfd_create("forkadv", 0);

	tap_require(fd >= 0 && ftruncate(fd, 4 * PG) == 0, "host memfd");
	tap_require(mmp_phys_create(16 * MiB, &phys) == 0, "phys");
	s = new_space(phys, mmp_arch_name(0));
	tap_require(mmp_memfd_create(phys, 0, &lf) == 0 && mmp_file_truncate(lf, 4 * PG) == 0,
		    "memfd");
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static const int hflags[] = { MAP_PRIVATE | MAP_ANONYMOUS, MAP_SHARED | MAP_ANONYMOUS,
					      MAP_PRIVATE, MAP_SHARED, 0x08 | MAP_ANONYMOUS };
		static const int lflags[] = { MMP_MAP_PRIVATE, MMP_MAP_SHARED, MMP_MAP_PRIVATE,
					      MMP_MAP_SHARED, MMP_MAP_DROPPABLE };
		int k = cases[i].kind, herr, lerr;
		void *h = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, hflags[k],
			       k == 2 || k == 3 ? fd : -1, 0);
		uint64_t l = 0;

		tap_require(h != MAP_FAILED, "host mmap %d", k);
		if (k == 2 || k == 3)
			tap_require(mmp_mmap_file(s, 0, 4 * PG, RW, lflags[k], lf, 0, &l) == 0,
				    "mmap file");
		else
			tap_require(mmp_mmap(s, 0, 4 * PG, RW, lflags[k], &l) == 0, "mmap");
		herr = madvise(h, PG, cases[i].advice) ? -errno : 0;
		lerr = mmp_madvise(s, l, PG, cases[i].advice);
		tap_eq(lerr, herr, "host: %s", cases[i].what);
		munmap(h, 4 * PG);
		mmp_munmap(s, l, 4 * PG);
	}
	tap_eq(mmp_space_verify(s), 0, "host: verify");
	close(fd);
	mmp_file_destroy(lf);
	mmp_space_destroy(s);
	mmp_phys_destroy(phys);
}

/*
 * Readahead on the host: a 128-page file out of the page cache, one read
 * fault at page 40 under MADV_RANDOM (the page alone, on both) and
 * MADV_SEQUENTIAL (nothing below the page on both; the host's ramp reads
 * further than the library's one window).
 */
static void check_host_readahead(struct mmp_phys *phys)
{
	static const int advs[] = { MADV_RANDOM, MADV_SEQUENTIAL };
	static char buf[PG];
	struct mmp_space *s = new_space(phys, mmp_arch_name(0));
	struct mmp_cpu *cpu;

	memset(buf, 1, sizeof(buf));
	tap_require(mmp_cpu_attach(s, &cpu) == 0, "attach");
	for (int k = 0; k < 2; k++) {
		int fd = open("/var/tmp/mmprim-forkadv-ra", O_RDWR | O_CREAT | O_TRUNC, 0600);
		unsigned int hn = 0, hlow = 0, ln = 0, llow = 0;
		unsigned char vec[128];
		struct mmp_file *f;
		uint64_t la = 0;
		char *h;
		char b;

		for (int i = 0; fd >= 0 && i < 128; i++)
			if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				break;
		if (fd < 0 || fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
			tap_ok(1, "# SKIP no file to read ahead on the host");
			if (fd >= 0)
				close(fd);
			continue;
		}
		h = mmap(NULL, 128 * PG, PROT_READ, MAP_PRIVATE, fd, 0);
		tap_require(h != MAP_FAILED, "host mmap");
		madvise(h, 128 * PG, advs[k]);
		(void)*(volatile char *)&h[40 * PG];
		mincore(h, 128 * PG, vec);
		for (int i = 0; i < 128; i++) {
			hn += vec[i] & 1;
			hlow += i < 40 && (vec[i] & 1);
		}
		munmap(h, 128 * PG);
		close(fd);
		unlink("/var/tmp/mmprim-forkadv-ra");

		tap_require(mmp_file_create(phys, 128 * PG, MMP_FILE_NO_LARGE_FOLIOS, &f) == 0, "file");
		tap_require(mmp_mmap_file(s, 0, 128 * PG, MMP_PROT_READ, MMP_MAP_PRIVATE, f, 0, &la) == 0,
			    "map");
		mmp_madvise(s, la, 128 * PG, advs[k]);
		mmp_read(cpu, la + 40 * PG, &b, 1);
		{
			struct mmp_file_stat st;
			struct mmp_addr_info in;

			mmp_file_stat(f, &st);
			ln = (unsigned int)st.nrpages;
			/* A second fault maps what the cache holds around it (fault-around): 39 if read. */
			mmp_read(cpu, la + 41 * PG, &b, 1);
			llow = !mmp_space_query(s, la + 39 * PG, &in) && in.pfn != MMP_NO_PFN;
		}
		if (advs[k] == MADV_RANDOM)
			tap_ok(hn == 1 && ln == 1, "host: MADV_RANDOM reads the faulting page alone "
			       "(host %u, library %u)", hn, ln);
		else
			tap_ok(hlow == 0 && llow == 0 && hn > 1 && ln > 1,
			       "host: MADV_SEQUENTIAL reads ahead from the page, nothing below "
			       "(host %u pages, library %u)", hn, ln);
		mmp_munmap(s, la, 128 * PG);
		mmp_file_destroy(f);
	}
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

int main(int argc, char **argv)
{
	struct mmp_phys *phys;
	const char *arch;
	bool first = true;

	tap_require(mmp_phys_create(512 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		struct t t = { .phys = phys, .arch = arch };

		if (argc > 1 && strcmp(argv[1], arch))
			continue;
		t.s = new_space(phys, arch);
		tap_require(mmp_cpu_attach(t.s, &t.cpu) == 0, "%s: attach a CPU", arch);
		check_dontfork(&t);
		check_wipeonfork(&t);
		check_read_pattern(&t);
		check_read_ahead_kb(&t);
		check_ksm(&t);
		check_remove(&t);
		check_errors(&t);
		if (first)
			check_map_count(&t);
		first = false;
		mmp_cpu_detach(t.cpu);
		mmp_space_destroy(t.s);
	}
	if (argc == 1 && host_oracle("the fork advices")) {
		check_host();
		check_host_readahead(phys);
	}
	mmp_phys_destroy(phys);
	return tap_done();
}
