/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Guard regions (MADV_GUARD_INSTALL / MADV_GUARD_REMOVE, Linux 6.13; the
 * kernel's tools/testing/selftests/mm/guard-regions.c checks the same rules
 * on the host) on every back end: an access is -EFAULT (SIGSEGV) and counted
 * as one; install zaps what was mapped, a THP included; remove clears only
 * markers; MADV_DONTNEED, MADV_FREE, mprotect and PT_RECLAIM leave them;
 * mremap moves them, fork copies them (shared memory too), munmap drops them;
 * the releases before 6.13 and 6.15; pagemap. mmp_space_verify() after each
 * step. Run with a back end name to check only that one.
 */
#include <errno.h>
#include <string.h>

#include <mmprim/introspect.h>

#include "util.h"

#define NPAGES		64
#define PAGE		4096ULL
#define GUARD_PM	(MMP_PM_SWAP | MMP_PM_GUARD_REGION | (31 | 4 << 5))

struct g {
	struct mmp_phys *phys;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	const char *arch;
	uint64_t base;		/* a 2 MiB aligned window */
};

static void g_init(struct g *t, struct mmp_phys *phys, const char *arch)
{
	t->phys = phys;
	t->arch = arch;
	t->s = new_space(phys, arch);
	tap_require(mmp_cpu_attach(t->s, &t->cpu) == 0, "%s: attach a CPU", arch);
	t->base = (task_size(t->s) / 4) & ~((2 * MiB) - 1);
}

static void g_fini(struct g *t)
{
	mmp_cpu_detach(t->cpu);
	mmp_space_destroy(t->s);
}

static void verify(struct g *t, const char *step)
{
	tap_eq(mmp_space_verify(t->s), 0, "%s: verify after %s", t->arch, step);
}

static uint64_t map_fixed(struct g *t, uint64_t addr, uint64_t len)
{
	uint64_t out = 0;

	tap_require(mmp_mmap(t->s, addr, len, MMP_PROT_READ | MMP_PROT_WRITE, MMP_MAP_FIXED,
			     &out) == 0 && out == addr, "%s: map %#llx", t->arch,
		    (unsigned long long)addr);
	return out;
}

/* Page i of [a, a + n pages) holds byte i + 1. */
static void fill(struct g *t, uint64_t a, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		unsigned char b = (unsigned char)(i + 1);

		must(mmp_write(t->cpu, a + i * PAGE, &b, 1) == 0, "%s: write page %u", t->arch, i);
	}
}

/* The pages of [a, a + n) reading as fill() left them, the others counted apart. */
static unsigned int intact(struct g *t, uint64_t a, unsigned int first, unsigned int n)
{
	unsigned int ok = 0;

	for (unsigned int i = first; i < first + n; i++) {
		unsigned char b = 0;

		if (mmp_read(t->cpu, a + i * PAGE, &b, 1) == 0 && b == (unsigned char)(i + 1))
			ok++;
	}
	return ok;
}

/* How many of the n pages from a fault with -EFAULT on a read and on a write. */
static unsigned int guarded(struct g *t, uint64_t a, unsigned int n)
{
	unsigned int g = 0;

	for (unsigned int i = 0; i < n; i++) {
		unsigned char b = 0x5a;

		if (mmp_read(t->cpu, a + i * PAGE, &b, 1) == -EFAULT &&
		    mmp_write(t->cpu, a + i * PAGE, &b, 1) == -EFAULT)
			g++;
	}
	return g;
}

static void check_basic(struct g *t)
{
	uint64_t a = map_fixed(t, t->base, NPAGES * PAGE), pm[NPAGES];
	uint64_t segv, rss0;
	unsigned char b;

	fill(t, a, NPAGES);
	rss0 = rss(t->s);
	tap_eq(mmp_madvise(t->s, a + 4 * PAGE, 8 * PAGE, MMP_MADV_GUARD_INSTALL), 0,
	       "%s: install over 8 mapped pages", t->arch);
	tap_eq(rss(t->s), rss0 - 8, "%s: install zapped the 8 pages", t->arch);
	segv = counter(t->s, MMP_C_FAULT_SIGSEGV);
	tap_eq(guarded(t, a + 4 * PAGE, 8), 8, "%s: reads and writes of the guard fault", t->arch);
	tap_eq(counter(t->s, MMP_C_FAULT_SIGSEGV) - segv, 16, "%s: each counted as SIGSEGV",
	       t->arch);
	tap_eq(intact(t, a, 0, 4) + intact(t, a, 12, NPAGES - 12), NPAGES - 8,
	       "%s: the pages around keep their data", t->arch);
	tap_eq(mmp_space_pagemap(t->s, a, NPAGES, pm), NPAGES, "%s: pagemap", t->arch);
	tap_ok(pm[4] == GUARD_PM && pm[11] == GUARD_PM && (pm[3] & MMP_PM_PRESENT) &&
	       (pm[12] & MMP_PM_PRESENT), "%s: pagemap: a marker reads %#llx (PM_SWAP, "
	       "PM_GUARD_REGION, type 31 offset 4), its neighbours present", t->arch,
	       (unsigned long long)pm[4]);
	tap_eq(mmp_madvise(t->s, a + 4 * PAGE, 8 * PAGE, MMP_MADV_GUARD_INSTALL), 0,
	       "%s: installing again over the markers", t->arch);
	verify(t, "install");

	tap_eq(mmp_madvise(t->s, a, NPAGES * PAGE, MMP_MADV_DONTNEED), 0, "%s: MADV_DONTNEED",
	       t->arch);
	tap_eq(guarded(t, a + 4 * PAGE, 8), 8, "%s: the guard survives MADV_DONTNEED", t->arch);
	fill(t, a, 4);
	tap_eq(mmp_madvise(t->s, a, NPAGES * PAGE, MMP_MADV_FREE), 0, "%s: MADV_FREE", t->arch);
	tap_eq(guarded(t, a + 4 * PAGE, 8), 8, "%s: ... and MADV_FREE", t->arch);
	tap_eq(mmp_mprotect(t->s, a, NPAGES * PAGE, MMP_PROT_READ), 0, "%s: mprotect read-only",
	       t->arch);
	tap_eq(mmp_mprotect(t->s, a, NPAGES * PAGE, MMP_PROT_READ | MMP_PROT_WRITE), 0,
	       "%s: mprotect read-write", t->arch);
	tap_eq(guarded(t, a + 4 * PAGE, 8), 8, "%s: ... and mprotect", t->arch);
	tap_eq(mmp_reclaim(t->s), 0, "%s: reclaim", t->arch);
	tap_eq(guarded(t, a + 4 * PAGE, 8), 8, "%s: ... and reclaim", t->arch);
	verify(t, "DONTNEED, FREE, mprotect, reclaim");

	/* Populate and GUP meet the marker as an access does. */
	tap_eq(mmp_madvise(t->s, a, 8 * PAGE, MMP_MADV_POPULATE_READ), -EFAULT,
	       "%s: MADV_POPULATE_READ over a guard: -EFAULT", t->arch);
	tap_eq(mmp_madvise(t->s, a, 8 * PAGE, MMP_MADV_POPULATE_WRITE), -EFAULT,
	       "%s: MADV_POPULATE_WRITE over a guard: -EFAULT", t->arch);

	/* Remove clears the markers of part of the guard only, and nothing else. */
	fill(t, a, 4);
	tap_eq(mmp_madvise(t->s, a, 8 * PAGE, MMP_MADV_GUARD_REMOVE), 0,
	       "%s: remove over 4 pages and 4 markers", t->arch);
	tap_eq(intact(t, a, 0, 4), 4, "%s: remove leaves the mapped pages alone", t->arch);
	b = 0xff;
	tap_ok(mmp_read(t->cpu, a + 4 * PAGE, &b, 1) == 0 && b == 0,
	       "%s: a removed marker reads as a never-touched page", t->arch);
	tap_eq(guarded(t, a + 8 * PAGE, 4), 4, "%s: the markers past the range stay", t->arch);
	verify(t, "remove");

	tap_eq(mmp_munmap(t->s, a, NPAGES * PAGE), 0, "%s: munmap", t->arch);
	verify(t, "munmap of a guard");
	a = map_fixed(t, t->base, NPAGES * PAGE);
	tap_eq(guarded(t, a + 8 * PAGE, 4), 0, "%s: munmap dropped the markers", t->arch);
	tap_eq(mmp_munmap(t->s, a, NPAGES * PAGE), 0, "%s: munmap again", t->arch);
}

/* mremap moves the markers, fork copies them; the child's remove is its own. */
static void check_mremap_fork(struct g *t)
{
	uint64_t a = map_fixed(t, t->base, NPAGES * PAGE), to = t->base + 8 * MiB, got = 0;
	struct mmp_space *child = NULL;
	struct mmp_cpu *ccpu = NULL;
	unsigned char b = 0;

	fill(t, a, NPAGES);
	must(mmp_madvise(t->s, a + 10 * PAGE, 2 * PAGE, MMP_MADV_GUARD_INSTALL) == 0,
	     "%s: install", t->arch);
	tap_eq(mmp_mremap(t->s, a, NPAGES * PAGE, NPAGES * PAGE,
			  MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, to, &got), 0, "%s: mremap",
	       t->arch);
	tap_eq(guarded(t, to + 10 * PAGE, 2), 2, "%s: the markers moved with the range", t->arch);
	tap_eq(intact(t, to, 0, 10) + intact(t, to, 12, NPAGES - 12), NPAGES - 2,
	       "%s: ... and the pages too", t->arch);
	verify(t, "mremap");

	tap_eq(mmp_fork(t->s, &child), 0, "%s: fork", t->arch);
	must(child && mmp_cpu_attach(child, &ccpu) == 0, "%s: a CPU in the child", t->arch);
	tap_ok(mmp_read(ccpu, to + 10 * PAGE, &b, 1) == -EFAULT &&
	       mmp_read(ccpu, to + 11 * PAGE, &b, 1) == -EFAULT,
	       "%s: fork copied the markers", t->arch);
	tap_eq(mmp_madvise(child, to, NPAGES * PAGE, MMP_MADV_GUARD_REMOVE), 0,
	       "%s: the child removes its guard", t->arch);
	tap_ok(mmp_read(ccpu, to + 10 * PAGE, &b, 1) == 0 && b == 0,
	       "%s: ... and reads a zero page there", t->arch);
	tap_eq(guarded(t, to + 10 * PAGE, 2), 2, "%s: the parent's guard stays", t->arch);
	tap_eq(mmp_space_verify(child), 0, "%s: verify the child", t->arch);
	mmp_cpu_detach(ccpu);
	mmp_space_destroy(child);
	verify(t, "fork");
	tap_eq(mmp_munmap(t->s, to, NPAGES * PAGE), 0, "%s: munmap", t->arch);
}

/*
 * A THP: a guard over part of it splits it, over all of it zaps it. A PTE
 * table holding a marker is not freed by PT_RECLAIM; an emptied one is.
 */
static void check_thp_reclaim(struct g *t)
{
	uint64_t a, reclaimed;
	unsigned char b = 0;

	mmp_space_set_thp(t->s, 9, MMP_THP_ALWAYS);
	a = map_fixed(t, t->base, 4 * MiB);
	fill(t, a, 1024);
	tap_eq(counter(t->s, MMP_C_FOLIO_ALLOC_O0 + 9), 2, "%s: two THPs", t->arch);
	tap_eq(mmp_madvise(t->s, a + 5 * PAGE, PAGE, MMP_MADV_GUARD_INSTALL), 0,
	       "%s: guard one page of the first THP", t->arch);
	tap_eq(counter(t->s, MMP_C_PMD_SPLIT), 1, "%s: the THP was split", t->arch);
	tap_eq(guarded(t, a + 5 * PAGE, 1), 1, "%s: the page is a guard", t->arch);
	tap_eq(intact(t, a, 0, 5) + intact(t, a, 6, 506), 511, "%s: the rest keeps its data",
	       t->arch);
	tap_eq(mmp_madvise(t->s, a + 2 * MiB, 2 * MiB, MMP_MADV_GUARD_INSTALL), 0,
	       "%s: guard the whole second THP", t->arch);
	tap_eq(counter(t->s, MMP_C_PMD_SPLIT), 1, "%s: zapped whole, not split", t->arch);
	tap_eq(guarded(t, a + 2 * MiB, 512), 512, "%s: all 512 pages are guards", t->arch);
	verify(t, "guard over THPs");

	mmp_space_set_opt(t->s, MMP_OPT_PT_RECLAIM, 1);
	reclaimed = counter(t->s, MMP_C_PT_RECLAIM_FAST) + counter(t->s, MMP_C_PT_RECLAIM_SLOW);
	tap_eq(mmp_madvise(t->s, a, 4 * MiB, MMP_MADV_DONTNEED), 0, "%s: MADV_DONTNEED", t->arch);
	tap_eq(counter(t->s, MMP_C_PT_RECLAIM_FAST) + counter(t->s, MMP_C_PT_RECLAIM_SLOW) -
	       reclaimed, 0, "%s: PT_RECLAIM keeps the tables holding markers", t->arch);
	tap_eq(guarded(t, a + 5 * PAGE, 1) + guarded(t, a + 2 * MiB + 100 * PAGE, 1), 2,
	       "%s: the markers are there", t->arch);
	tap_eq(mmp_madvise(t->s, a, 4 * MiB, MMP_MADV_GUARD_REMOVE), 0, "%s: remove", t->arch);
	mmp_space_set_thp(t->s, 9, MMP_THP_NEVER);
	tap_ok(mmp_read(t->cpu, a + 5 * PAGE, &b, 1) == 0 && b == 0, "%s: read after remove",
	       t->arch);
	tap_eq(mmp_madvise(t->s, a, 4 * MiB, MMP_MADV_DONTNEED), 0, "%s: MADV_DONTNEED again",
	       t->arch);
	tap_ok(counter(t->s, MMP_C_PT_RECLAIM_FAST) + counter(t->s, MMP_C_PT_RECLAIM_SLOW) >
	       reclaimed, "%s: without markers the emptied table is freed", t->arch);
	verify(t, "PT_RECLAIM");
	mmp_space_set_opt(t->s, MMP_OPT_PT_RECLAIM, -1);
	tap_eq(mmp_munmap(t->s, a, 4 * MiB), 0, "%s: munmap", t->arch);
}

/* Errors, releases, and file and shared mappings. */
static void check_rules(struct g *t)
{
	uint64_t a = map_fixed(t, t->base, 8 * PAGE), fa = 0, pm = 0;
	struct mmp_space *child = NULL;
	struct mmp_cpu *ccpu = NULL;
	struct mmp_file *f = NULL;
	unsigned char b = 0;

	tap_eq(mmp_madvise(t->s, a + 1, PAGE, MMP_MADV_GUARD_INSTALL), -EINVAL,
	       "%s: unaligned: -EINVAL", t->arch);
	tap_eq(mmp_madvise(t->s, a + 6 * PAGE, 4 * PAGE, MMP_MADV_GUARD_INSTALL), -ENOMEM,
	       "%s: into a hole: -ENOMEM", t->arch);
	tap_eq(guarded(t, a + 6 * PAGE, 2), 2, "%s: ... after guarding the mapped part", t->arch);
	tap_eq(mmp_madvise(t->s, a + 6 * PAGE, 4 * PAGE, MMP_MADV_GUARD_REMOVE), -ENOMEM,
	       "%s: remove into a hole: -ENOMEM", t->arch);
	tap_eq(guarded(t, a + 6 * PAGE, 2), 0, "%s: ... after removing from the mapped part",
	       t->arch);
	verify(t, "errors");

	mmp_space_set_opt(t->s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(6, 12, 0));
	tap_eq(mmp_madvise(t->s, a, PAGE, MMP_MADV_GUARD_INSTALL), -EINVAL,
	       "%s: 6.12 has no guard regions", t->arch);
	tap_eq(mmp_madvise(t->s, a, PAGE, MMP_MADV_GUARD_REMOVE), -EINVAL, "%s: ... nor removal",
	       t->arch);
	mmp_space_set_opt(t->s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(6, 14, 0));
	tap_eq(mmp_madvise(t->s, a, PAGE, MMP_MADV_GUARD_INSTALL), 0, "%s: 6.14: anonymous",
	       t->arch);
	tap_ok(mmp_space_pagemap(t->s, a, 1, &pm) == 1 && pm == (GUARD_PM & ~MMP_PM_GUARD_REGION),
	       "%s: 6.14's pagemap has no guard bit", t->arch);

	must(mmp_file_create(t->phys, 16 * PAGE, MMP_FILE_SHMEM, &f) == 0, "%s: a shmem file",
	     t->arch);
	must(mmp_mmap_file(t->s, t->base + 4 * MiB, 16 * PAGE, MMP_PROT_READ | MMP_PROT_WRITE,
			   MMP_MAP_SHARED | MMP_MAP_FIXED, f, 0, &fa) == 0, "%s: map it shared",
	     t->arch);
	fill(t, fa, 16);
	tap_eq(mmp_madvise(t->s, fa, PAGE, MMP_MADV_GUARD_INSTALL), -EINVAL,
	       "%s: 6.14: not in shared memory", t->arch);
	mmp_space_set_opt(t->s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(6, 18, 0));
	tap_eq(mmp_madvise(t->s, fa + 2 * PAGE, 2 * PAGE, MMP_MADV_GUARD_INSTALL), 0,
	       "%s: 6.18: shared memory takes it", t->arch);
	tap_eq(guarded(t, fa + 2 * PAGE, 2), 2, "%s: ... and faults", t->arch);
	tap_eq(mmp_fork(t->s, &child), 0, "%s: fork", t->arch);
	must(child && mmp_cpu_attach(child, &ccpu) == 0, "%s: a CPU in the child", t->arch);
	tap_ok(mmp_read(ccpu, fa + 2 * PAGE, &b, 1) == -EFAULT,
	       "%s: the child has the shared mapping's markers (its anon_vma)", t->arch);
	b = 0x77;
	tap_ok(mmp_write(ccpu, fa + 5 * PAGE, &b, 1) == 0, "%s: the child writes the shared page",
	       t->arch);
	b = 0;
	tap_ok(mmp_read(t->cpu, fa + 5 * PAGE, &b, 1) == 0 && b == 0x77,
	       "%s: ... and the parent sees it (still shared)", t->arch);
	tap_eq(mmp_space_verify(child), 0, "%s: verify the child", t->arch);
	mmp_cpu_detach(ccpu);
	mmp_space_destroy(child);
	tap_eq(mmp_madvise(t->s, fa, 16 * PAGE, MMP_MADV_GUARD_REMOVE), 0, "%s: remove", t->arch);
	tap_ok(mmp_read(t->cpu, fa + 2 * PAGE, &b, 1) == 0 && b == 3,
	       "%s: the shared page was never lost: the page cache kept it", t->arch);
	verify(t, "shared memory");
	tap_eq(mmp_munmap(t->s, fa, 16 * PAGE), 0, "%s: munmap the file", t->arch);
	tap_eq(mmp_file_destroy(f), 0, "%s: close the file", t->arch);
	tap_eq(mmp_munmap(t->s, a, 8 * PAGE), 0, "%s: munmap", t->arch);
}

int main(int argc, char **argv)
{
	struct mmp_phys *phys;
	const char *arch;

	tap_require(mmp_phys_create(256 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		struct g t;

		if (argc > 1 && strcmp(argv[1], arch))
			continue;
		g_init(&t, phys, arch);
		check_basic(&t);
		check_mremap_fork(&t);
		check_thp_reclaim(&t);
		check_rules(&t);
		g_fini(&t);
	}
	mmp_phys_destroy(phys);
	return tap_done();
}
