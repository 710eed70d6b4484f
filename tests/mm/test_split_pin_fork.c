/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Splits and pins across fork, on every back end: regression tests for bugs a
 * review found.
 *  - a split folio's pages stayed under one contpte/NAPOT block, so MADV_FREE
 *    of one page cleaned a redirtied neighbour and reclaim dropped its data;
 *  - a VMA split inside a THP left the huge PMD straddling two VMAs, and fork
 *    copied it twice;
 *  - fork shared an exclusive, pinned page, so the parent's next write moved
 *    away from the page the pin holds;
 *  - a read pin of a page already shared by fork pinned the shared page, so
 *    the parent's next write (a COW) moved away from it (gup_must_unshare).
 */
#include <string.h>

#include "util.h"

static struct mmp_phys *phys;

/* A setup step: its failure would make the checks after it meaningless. */
#define SETUP(call) tap_require((call) == 0, "%s: setup: %s", arch, #call)

static void check_split_unfolds(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	uint64_t a = map(s, 64 * KiB, MMP_PROT_READ | MMP_PROT_WRITE);
	unsigned char b = 0;

	SETUP(mmp_space_set_thp(s, 4, MMP_THP_ALWAYS));
	SETUP(mmp_memset(cpu, a, 7, 64 * KiB));
	SETUP(mmp_madvise(s, a, MMP_PAGE_SIZE, MMP_MADV_FREE));	/* splits the 64 KiB folio */
	SETUP(mmp_madvise(s, a + MMP_PAGE_SIZE, 15 * MMP_PAGE_SIZE, MMP_MADV_FREE));
	SETUP(mmp_memset(cpu, a + 5 * MMP_PAGE_SIZE, 9, MMP_PAGE_SIZE));	/* redirty page 5 */
	SETUP(mmp_madvise(s, a, MMP_PAGE_SIZE, MMP_MADV_FREE));	/* must not clean page 5 */
	tap_eq(mmp_reclaim(s), 0, "%s: reclaim after MADV_FREE of a split folio", arch);
	SETUP(mmp_read(cpu, a + 5 * MMP_PAGE_SIZE, &b, 1));
	tap_eq(b, 9, "%s: the redirtied page keeps its data", arch);
	SETUP(mmp_read(cpu, a + 6 * MMP_PAGE_SIZE, &b, 1));
	tap_eq(b, 0, "%s: a clean lazyfree neighbour was discarded", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_munmap(s, a, 64 * KiB));
	SETUP(mmp_space_set_thp(s, 4, MMP_THP_NEVER));
}

static void check_split_vma_inside_thp(const char *arch, struct mmp_space *s,
				       struct mmp_cpu *cpu)
{
	uint64_t a = map(s, 2 * MiB, MMP_PROT_READ | MMP_PROT_WRITE);
	struct mmp_space *c;
	struct mmp_space_stat st;

	SETUP(mmp_madvise(s, a, 2 * MiB, MMP_MADV_HUGEPAGE));
	SETUP(mmp_memset(cpu, a, 1, 2 * MiB));
	tap_eq(counter(s, MMP_C_FAULT_HUGE_ANON), 1, "%s: one THP", arch);
	SETUP(mmp_madvise(s, a + MiB, MiB, MMP_MADV_NOHUGEPAGE));
	tap_eq(counter(s, MMP_C_PMD_SPLIT), 1, "%s: splitting the VMA splits the PMD", arch);
	tap_eq(mmp_fork(s, &c), 0, "%s: fork", arch);
	SETUP(mmp_space_stat(c, &st));
	tap_eq(st.rss_anon_pages, 512, "%s: the child maps the 512 pages once", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify parent and child", arch);
	SETUP(mmp_space_destroy(c));
	SETUP(mmp_munmap(s, a, 2 * MiB));
}

static void check_fork_pinned(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu,
			      bool huge)
{
	uint64_t len = huge ? 2 * MiB : MMP_PAGE_SIZE;
	uint64_t a = map(s, len, MMP_PROT_READ | MMP_PROT_WRITE), pfn = 0, now = 0;
	struct mmp_space *c;
	struct mmp_cpu *cc;
	unsigned char b = 0;

	if (huge)
		SETUP(mmp_madvise(s, a, len, MMP_MADV_HUGEPAGE));
	SETUP(mmp_memset(cpu, a, 1, len));
	tap_eq(mmp_gup(s, a, 1, true, &pfn), 1, "%s%s: pin a page", arch, huge ? " THP" : "");
	tap_eq(mmp_fork(s, &c), 0, "%s%s: fork with the pin held", arch, huge ? " THP" : "");
	SETUP(mmp_memset(cpu, a, 2, MMP_PAGE_SIZE));
	tap_eq(mmp_gup_fast(s, a, 1, false, &now), 1, "%s%s: look the page up again", arch,
	       huge ? " THP" : "");
	tap_eq(now, pfn, "%s%s: the parent's write went to the pinned page", arch,
	       huge ? " THP" : "");
	SETUP(mmp_cpu_attach(c, &cc));
	SETUP(mmp_read(cc, a, &b, 1));
	tap_eq(b, 1, "%s%s: the child has its own copy of the old data", arch, huge ? " THP" : "");
	SETUP(mmp_cpu_detach(cc));
	SETUP(mmp_unpin(s, &now, 1));
	SETUP(mmp_unpin(s, &pfn, 1));
	tap_eq(mmp_space_verify(s), 0, "%s%s: verify", arch, huge ? " THP" : "");
	SETUP(mmp_space_destroy(c));
	SETUP(mmp_munmap(s, a, len));
}

static void check_read_pin_after_fork(const char *arch, struct mmp_space *s,
				      struct mmp_cpu *cpu)
{
	uint64_t a = map(s, MMP_PAGE_SIZE, MMP_PROT_READ | MMP_PROT_WRITE), pfn = 0, now = 0;
	struct mmp_space *c;

	SETUP(mmp_memset(cpu, a, 1, MMP_PAGE_SIZE));
	tap_eq(mmp_fork(s, &c), 0, "%s: fork, the page is now shared", arch);
	tap_eq(mmp_gup_fast(s, a, 1, false, &pfn), 0,
	       "%s: GUP-fast will not read-pin a shared page", arch);
	tap_eq(mmp_gup(s, a, 1, false, &pfn), 1, "%s: the slow path unshares and pins", arch);
	SETUP(mmp_memset(cpu, a, 2, MMP_PAGE_SIZE));
	tap_eq(mmp_gup_fast(s, a, 1, false, &now), 1, "%s: look the page up again", arch);
	tap_eq(now, pfn, "%s: the parent's write went to the read-pinned page", arch);
	SETUP(mmp_unpin(s, &now, 1));
	SETUP(mmp_unpin(s, &pfn, 1));
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_space_destroy(c));
	SETUP(mmp_munmap(s, a, MMP_PAGE_SIZE));
}

int main(void)
{
	const char *arch;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		struct mmp_space *s = new_space(phys, arch);
		struct mmp_cpu *cpu;

		SETUP(mmp_cpu_attach(s, &cpu));
		check_split_unfolds(arch, s, cpu);
		check_split_vma_inside_thp(arch, s, cpu);
		check_fork_pinned(arch, s, cpu, false);
		check_fork_pinned(arch, s, cpu, true);
		check_read_pin_after_fork(arch, s, cpu);
		SETUP(mmp_cpu_detach(cpu));
		SETUP(mmp_space_destroy(s));
	}
	tap_eq(mmp_phys_destroy(phys), 0, "all: phys destroyed");
	return tap_done();
}
