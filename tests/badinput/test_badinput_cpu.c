/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad inputs of CPUs, user accesses and pins: attaching past the limit, a CPU
 * used from another thread, accesses that would SIGSEGV, pins that are not
 * there; after each error the space is intact and still works.
 */
#include "badinput.h"

/* ---- CPUs and user accesses --------------------------------------------------------------- */

struct foreign {
	struct mmp_cpu *cpu;
	uint64_t addr;
	int r, w, m, d;
};

static void *foreign_thread(void *arg)
{
	struct foreign *f = arg;
	uint64_t v = 0;

	f->r = mmp_read(f->cpu, f->addr, &v, 8);
	f->w = mmp_write(f->cpu, f->addr, &v, 8);
	f->m = mmp_memset(f->cpu, f->addr, 0, 8);
	f->d = mmp_cpu_detach(f->cpu);
	return NULL;
}

static void test_cpu(struct env *e)
{
	struct mmp_cpu *cpus[64], *extra = (struct mmp_cpu *)0x1;
	struct foreign f = { .cpu = e->cpu, .addr = e->canary };
	pthread_t t;
	int n = 0, err = 0;

	tap_eq(mmp_cpu_attach(NULL, &extra), -EINVAL, "%s: cpu_attach: NULL space", e->arch);
	tap_eq(mmp_cpu_attach(e->s, NULL), -EINVAL, "%s: cpu_attach: NULL out", e->arch);
	/* One CPU is attached already: 63 more fill the space. */
	while (n < 64 && !(err = mmp_cpu_attach(e->s, &cpus[n])))
		n++;
	tap_eq(n, 63, "%s: 64 CPUs attach to one space", e->arch);
	tap_eq(err, -EBUSY, "%s: the 65th CPU: -EBUSY", e->arch);
	tap_eq(mmp_cpu_flush_tlb(e->cpu), 0, "%s: cpu_flush_tlb", e->arch);
	still_works(e, "65th cpu_attach");
	while (n) {
		n--;
		tap_eq(mmp_cpu_detach(cpus[n]), 0, "%s: cpu_detach %d", e->arch, n);
	}

	must(!pthread_create(&t, NULL, foreign_thread, &f), "pthread_create");
	pthread_join(t, NULL);
	tap_eq(f.r, -EINVAL, "%s: mmp_read on another thread's CPU", e->arch);
	tap_eq(f.w, -EINVAL, "%s: mmp_write on another thread's CPU", e->arch);
	tap_eq(f.m, -EINVAL, "%s: mmp_memset on another thread's CPU", e->arch);
	tap_eq(f.d, -EINVAL, "%s: mmp_cpu_detach of another thread's CPU", e->arch);
	still_works(e, "CPU use from a foreign thread");
}

static void test_access(struct env *e)
{
	const uint64_t top = task_size(e->s);
	uint64_t a, ro, none, v = 0;
	uint8_t big[2 * PG];

	tap_eq(mmp_read(NULL, e->canary, &v, 8), -EINVAL, "%s: read: NULL cpu", e->arch);
	tap_eq(mmp_write(NULL, e->canary, &v, 8), -EINVAL, "%s: write: NULL cpu", e->arch);
	tap_eq(mmp_memset(NULL, e->canary, 0, 8), -EINVAL, "%s: memset: NULL cpu", e->arch);
	tap_eq(mmp_read(e->cpu, e->canary, NULL, 8), -EINVAL, "%s: read: NULL buf", e->arch);
	tap_eq(mmp_write(e->cpu, e->canary, NULL, 8), -EINVAL, "%s: write: NULL buf", e->arch);
	tap_eq(mmp_read(e->cpu, e->canary, NULL, 0), 0, "%s: read: NULL buf, len 0", e->arch);
	tap_eq(mmp_write(e->cpu, e->canary, &v, 0), 0, "%s: write: len 0", e->arch);
	tap_eq(mmp_memset(e->cpu, e->canary, 0, 0), 0, "%s: memset: len 0", e->arch);
	tap_eq(mmp_read(e->cpu, 0, &v, 0), 0, "%s: read: len 0 at address 0", e->arch);
	tap_eq(mmp_read(e->cpu, MMP_MMAP_MIN_ADDR, &v, 8), -EFAULT, "%s: read: unmapped", e->arch);
	tap_eq(mmp_write(e->cpu, MMP_MMAP_MIN_ADDR, &v, 8), -EFAULT, "%s: write: unmapped",
	       e->arch);
	tap_eq(mmp_memset(e->cpu, MMP_MMAP_MIN_ADDR, 0, 8), -EFAULT, "%s: memset: unmapped",
	       e->arch);
	tap_eq(mmp_read(e->cpu, 0, &v, 8), -EFAULT, "%s: read: address 0", e->arch);
	tap_eq(mmp_read(e->cpu, top, &v, 8), -EFAULT, "%s: read: at TASK_SIZE", e->arch);
	tap_eq(mmp_write(e->cpu, top - 4, &v, 8), -EFAULT, "%s: write: across TASK_SIZE",
	       e->arch);
	tap_eq(mmp_read(e->cpu, UINT64_MAX - 3, &v, 8), -EFAULT, "%s: read: addr + len wraps",
	       e->arch);
	tap_eq(mmp_memset(e->cpu, e->canary, 0, SIZE_MAX), -EFAULT,
	       "%s: memset: len SIZE_MAX wraps", e->arch);
	tap_eq(mmp_write(e->cpu, e->canary, big, SIZE_MAX - e->canary + 2), -EFAULT,
	       "%s: write: addr + len wraps to a small address", e->arch);
	still_works(e, "bad user accesses");

	/* [rw][ro][none]: permissions of each part. */
	a = map_scratch(e, 3);
	must(fill_pages(e->cpu, a, 3, 8), "fill");
	ro = a + PG;
	none = a + 2 * PG;
	must(!mmp_mprotect(e->s, ro, PG, MMP_PROT_READ), "mprotect ro");
	must(!mmp_mprotect(e->s, none, PG, MMP_PROT_NONE), "mprotect none");
	tap_eq(mmp_write(e->cpu, ro, &v, 8), -EFAULT, "%s: write: PROT_READ", e->arch);
	tap_eq(mmp_memset(e->cpu, ro, 0, 8), -EFAULT, "%s: memset: PROT_READ", e->arch);
	tap_eq(mmp_read(e->cpu, ro, &v, 8), 0, "%s: read: PROT_READ", e->arch);
	tap_ok(v == stamp(8, 1), "%s: PROT_READ page holds its data", e->arch);
	tap_eq(mmp_read(e->cpu, none, &v, 8), -EFAULT, "%s: read: PROT_NONE", e->arch);
	tap_eq(mmp_write(e->cpu, none, &v, 8), -EFAULT, "%s: write: PROT_NONE", e->arch);
	/* Across rw -> ro: the rw page is written, nothing past the faulting page. */
	memset(big, 0xee, sizeof(big));
	tap_eq(mmp_write(e->cpu, a, big, sizeof(big)), -EFAULT, "%s: write: rw then ro", e->arch);
	mmp_read(e->cpu, a + PG - 8, &v, 8);
	tap_ok(v == 0xeeeeeeeeeeeeeeeeull, "%s: write: the rw part was written", e->arch);
	tap_ok(range_holds(e->cpu, a, 1, 1, 8), "%s: write: the ro page is unchanged", e->arch);
	tap_eq(mmp_read(e->cpu, ro, big, sizeof(big)), -EFAULT, "%s: read: ro then none", e->arch);
	tap_eq(mmp_mprotect(e->s, a, 3 * PG, RW), 0, "%s: mprotect all back to rw", e->arch);
	tap_ok(range_holds(e->cpu, a, 1, 2, 8), "%s: ro and PROT_NONE pages kept their data",
	       e->arch);
	tap_eq(mmp_munmap(e->s, a, 3 * PG), 0, "%s: munmap", e->arch);
	tap_eq(mmp_write(e->cpu, a, &v, 8), -EFAULT, "%s: write after munmap", e->arch);
	still_works(e, "permission faults");
}


static void test_gup(const char *arch)
{
	struct mmp_space *child;
	struct mmp_phys_stat pst;
	uint64_t pfns[8], bad[2], a, top;
	struct env e;
	int err;

	env_init(&e, arch, 16 * MiB);
	must(!mmp_phys_stat(e.phys, &pst), "phys_stat");
	top = task_size(e.s);
	a = map_scratch(&e, 8);
	must(fill_pages(e.cpu, a, 4, 20), "fill");
	tap_eq(mmp_gup_fast(NULL, a, 1, false, pfns), -EINVAL, "%s: gup_fast: NULL space", arch);
	tap_eq(mmp_gup_fast(e.s, a, 1, false, NULL), -EINVAL, "%s: gup_fast: NULL pfns", arch);
	tap_eq(mmp_gup_fast(e.s, a + 8, 1, false, pfns), -EINVAL, "%s: gup_fast: unaligned", arch);
	tap_eq(mmp_gup_fast(e.s, top, 1, false, pfns), -EFAULT, "%s: gup_fast: at TASK_SIZE",
	       arch);
	tap_eq(mmp_gup_fast(e.s, top - PG, 2, false, pfns), -EFAULT,
	       "%s: gup_fast: across TASK_SIZE", arch);
	tap_eq(mmp_gup_fast(e.s, 0xfffffffffffff000ull, 2, false, pfns), -EFAULT,
	       "%s: gup_fast: wrapping range", arch);
	tap_eq(mmp_gup_fast(e.s, a, 0, false, pfns), 0, "%s: gup_fast: nr 0", arch);
	tap_eq(mmp_gup_fast(e.s, MMP_MMAP_MIN_ADDR, 1, false, pfns), 0,
	       "%s: gup_fast: unmapped pins nothing", arch);
	tap_eq(mmp_gup_fast(e.s, a + 4 * PG, 2, false, pfns), 0,
	       "%s: gup_fast: not faulted in pins nothing", arch);
	tap_eq(mmp_gup(NULL, a, 1, false, pfns), -EINVAL, "%s: gup: NULL space", arch);
	tap_eq(mmp_gup(e.s, a, 1, false, NULL), -EINVAL, "%s: gup: NULL pfns", arch);
	tap_eq(mmp_gup(e.s, a + 8, 1, false, pfns), -EINVAL, "%s: gup: unaligned", arch);
	tap_eq(mmp_gup(e.s, top, 1, false, pfns), -EFAULT, "%s: gup: at TASK_SIZE", arch);
	tap_eq(mmp_gup(e.s, MMP_MMAP_MIN_ADDR, 1, false, pfns), -EFAULT, "%s: gup: unmapped", arch);
	tap_eq(mmp_gup(e.s, a + 6 * PG, 4, true, pfns), -EFAULT,
	       "%s: gup: range running past the mapping", arch);
	must(!mmp_mprotect(e.s, a, PG, MMP_PROT_READ), "mprotect ro");
	must(!mmp_mprotect(e.s, a + PG, PG, MMP_PROT_NONE), "mprotect none");
	tap_eq(mmp_gup(e.s, a, 1, true, pfns), -EFAULT, "%s: gup: write pin of PROT_READ", arch);
	tap_eq(mmp_gup(e.s, a + PG, 1, false, pfns), -EFAULT, "%s: gup: PROT_NONE", arch);
	tap_eq(mmp_gup_fast(e.s, a, 1, true, pfns), 0, "%s: gup_fast: write pin of PROT_READ",
	       arch);
	tap_eq(mmp_gup(e.s, a, 4, true, pfns), -EFAULT,
	       "%s: gup: all or nothing when a later page fails", arch);
	must(!mmp_mprotect(e.s, a, 2 * PG, RW), "mprotect back");
	still_works(&e, "refused pins");

	/* Pins keep frames alive past munmap; the host address shows their data. */
	tap_eq(mmp_gup(e.s, a, 2, true, pfns), 2, "%s: gup: pin 2 pages", arch);
	tap_ok(mmp_page_address(NULL, pfns[0]) == NULL &&
		       mmp_page_address(e.phys, pst.total_pages) == NULL &&
		       mmp_page_address(e.phys, UINT64_MAX) == NULL,
	       "%s: page_address: NULL for no frame", arch);
	tap_ok(mmp_page_address(e.phys, pfns[1]) &&
		       *(uint64_t *)mmp_page_address(e.phys, pfns[1]) == stamp(20, 1),
	       "%s: page_address: a pinned frame holds its data", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify with pins", arch);
	tap_eq(mmp_munmap(e.s, a, 8 * PG), 0, "%s: munmap pinned pages", arch);
	tap_ok(*(uint64_t *)mmp_page_address(e.phys, pfns[1]) == stamp(20, 1),
	       "%s: a pinned frame outlives its mapping", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify with pins of unmapped pages", arch);
	tap_eq(mmp_unpin(NULL, pfns, 2), -EINVAL, "%s: unpin: NULL space", arch);
	tap_eq(mmp_unpin(e.s, NULL, 2), -EINVAL, "%s: unpin: NULL pfns", arch);
	tap_eq(mmp_unpin(e.s, NULL, 0), 0, "%s: unpin: nothing", arch);
	bad[0] = pfns[0];
	bad[1] = UINT64_MAX;
	tap_eq(mmp_unpin(e.s, bad, 2), -EINVAL, "%s: unpin: a pfn out of range", arch);
	bad[1] = pst.total_pages;
	tap_eq(mmp_unpin(e.s, bad, 2), -EINVAL, "%s: unpin: the pfn past the last frame", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: refused unpins dropped nothing", arch);
	tap_eq(mmp_unpin(e.s, pfns, 2), 0, "%s: unpin", arch);
	tap_eq(mmp_unpin(e.s, pfns, 1), -EINVAL, "%s: unpin of a freed frame", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify after unpin", arch);

	/*
	 * An unpin without a pin must be refused: it would drop a mapping's
	 * reference. A fork keeps a second mapping, so a wrong drop cannot free
	 * the folio; if it happens, a new pin puts the reference back.
	 */
	a = map_scratch(&e, 1);
	must(fill_pages(e.cpu, a, 1, 21), "fill");
	must(!mmp_fork(e.s, &child), "fork");
	tap_eq(mmp_gup(e.s, a, 1, false, pfns), 1, "%s: pin a shared page", arch);
	tap_eq(mmp_unpin(e.s, pfns, 1), 0, "%s: unpin it", arch);
	err = mmp_unpin(e.s, pfns, 1);
	tap_eq(err, -EINVAL, "%s: unpin of a page that is no longer pinned", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify after the extra unpin", arch);
	if (!err)
		must(mmp_gup(e.s, a, 1, false, pfns) == 1, "repair the dropped reference");
	tap_ok(pages_hold(e.cpu, a, 1, 21), "%s: the page keeps its data", arch);
	must(!mmp_space_destroy(child), "destroy child");
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify", arch);
	must(!mmp_munmap(e.s, a, PG), "munmap");
	env_fini(&e);
}


int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < mmp_arch_count(); i++) {
		const char *arch = mmp_arch_name(i);
		struct env e;

		printf("# back end %s\n", arch);
		env_init(&e, arch, 64 * MiB);
		test_cpu(&e);
		test_access(&e);
		tap_eq(mmp_space_verify(e.s), 0, "%s: verify at the end", arch);
		env_fini(&e);
		test_gup(arch);
	}
	return tap_done();
}
