/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PAGEMAP_SCAN as mmp_space_pagemap_scan() on every back end: the categories
 * of written, zero-page, file, huge, guard and empty pages; category_mask,
 * _anyof_mask, _inverted and return_mask; ranges merged as the kernel
 * merges them; max_pages and a short vector with walk_end; the uffd-wp
 * flags refused or passed by; every argument error; the guard category
 * before 6.15. The same layout and scans run on the host, and the ranges
 * (as offsets from the layout) are compared. mmp_space_verify() after.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#include <mmprim/introspect.h>

#include "util.h"

#define PG	4096ULL
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define NPG	28	/* anon 16 pages, a 4-page hole, a shared memfd of 8 */

#define P_WRITTEN	MMP_PAGE_IS_WRITTEN
#define P_FILE		MMP_PAGE_IS_FILE
#define P_PRESENT	MMP_PAGE_IS_PRESENT
#define P_SWAPPED	MMP_PAGE_IS_SWAPPED
#define P_ZERO		MMP_PAGE_IS_PFNZERO
#define P_HUGE		MMP_PAGE_IS_HUGE
#define P_GUARD		MMP_PAGE_IS_GUARD

/* The scans run on both: masks, limits, and the ranges they must give (offsets in pages). */
struct scan {
	const char *what;
	uint64_t inverted, mask, anyof, ret, max_pages, vec_len;
};

static const struct scan scans[] = {
	{ "everything, no categories", 0, 0, 0, 0, 0, 16 },
	{ "everything, all categories", 0, 0, 0, ~0ULL >> 55, 0, 16 },
	{ "present pages", 0, P_PRESENT, 0, P_PRESENT | P_FILE | P_ZERO, 0, 16 },
	{ "present or guard", 0, 0, P_PRESENT | P_GUARD, P_PRESENT | P_GUARD, 0, 16 },
	{ "not present", P_PRESENT, P_PRESENT, 0, P_SWAPPED | P_GUARD, 0, 16 },
	{ "anonymous present, not zero", P_FILE | P_ZERO, P_PRESENT | P_FILE | P_ZERO, 0,
	  P_PRESENT, 0, 16 },
	{ "written, at most 3 pages", 0, P_WRITTEN, 0, P_PRESENT, 3, 16 },
	{ "written, two ranges at most", 0, P_WRITTEN, 0, P_PRESENT | P_FILE, 0, 2 },
	{ "zero pages only", 0, P_ZERO, 0, P_ZERO, 0, 16 },
};

/* The layout at @base: written anon pages 0-3, a read (zero page) 5, a guard 8; file pages 20, 21. */
struct result {
	long ret;
	uint64_t walk_end;
	struct mmp_page_region r[16];
};

static void lib_layout(struct mmp_space *s, struct mmp_cpu *cpu, struct mmp_file *f, uint64_t base)
{
	uint64_t out = 0;
	unsigned char b = 1;

	must(mmp_mmap(s, base, 16 * PG, RW, MMP_MAP_FIXED, &out) == 0, "map anon");
	must(mmp_mmap_file(s, base + 20 * PG, 8 * PG, RW, MMP_MAP_SHARED | MMP_MAP_FIXED, f, 0,
			   &out) == 0, "map memfd");
	for (int i = 0; i < 4; i++)
		must(mmp_write(cpu, base + i * PG, &b, 1) == 0, "write");
	must(mmp_read(cpu, base + 5 * PG, &b, 1) == 0, "read");
	must(mmp_madvise(s, base + 8 * PG, PG, MMP_MADV_GUARD_INSTALL) == 0, "guard");
	must(mmp_read(cpu, base + 20 * PG, &b, 1) == 0 && mmp_read(cpu, base + 21 * PG, &b, 1) == 0,
	     "read file");
}

static void lib_scan(struct mmp_space *s, uint64_t base, const struct scan *sc, struct result *res)
{
	struct mmp_pm_scan_arg a = { .size = sizeof(a), .start = base, .end = base + NPG * PG,
				     .vec = (uintptr_t)res->r, .vec_len = sc->vec_len,
				     .max_pages = sc->max_pages, .category_inverted = sc->inverted,
				     .category_mask = sc->mask, .category_anyof_mask = sc->anyof,
				     .return_mask = sc->ret };

	memset(res, 0, sizeof(*res));
	res->ret = mmp_space_pagemap_scan(s, &a);
	res->walk_end = a.walk_end - base;
	for (long i = 0; i < res->ret && i < 16; i++) {
		res->r[i].start -= base;
		res->r[i].end -= base;
	}
}

static void print_result(char *buf, size_t size, const struct result *res)
{
	size_t n = (size_t)snprintf(buf, size, "%ld ranges, walk_end %llu:", res->ret,
				    (unsigned long long)(res->walk_end / PG));

	for (long i = 0; i < res->ret && i < 16 && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, " [%llu,%llu)%#llx",
				      (unsigned long long)(res->r[i].start / PG),
				      (unsigned long long)(res->r[i].end / PG),
				      (unsigned long long)res->r[i].categories);
}

static bool same_result(const struct result *a, const struct result *b)
{
	if (a->ret != b->ret || a->walk_end != b->walk_end)
		return false;
	for (long i = 0; i < a->ret && i < 16; i++)
		if (a->r[i].start != b->r[i].start || a->r[i].end != b->r[i].end ||
		    a->r[i].categories != b->r[i].categories)
			return false;
	return true;
}

static bool has_range(const struct result *res, uint64_t start, uint64_t end, uint64_t cats)
{
	for (long i = 0; i < res->ret && i < 16; i++)
		if (res->r[i].start == start * PG && res->r[i].end == end * PG &&
		    res->r[i].categories == cats)
			return true;
	return false;
}

static void check_arch(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	uint64_t base = (task_size(s) / 4) & ~(2 * MiB - 1), thp;
	struct mmp_pm_scan_arg a;
	struct mmp_page_region r[4];
	struct result res;
	struct mmp_cpu *cpu;
	struct mmp_file *f;
	unsigned char b = 3;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	must(mmp_memfd_create(phys, 0, &f) == 0 && mmp_file_truncate(f, 8 * PG) == 0, "memfd");
	lib_layout(s, cpu, f, base);

	lib_scan(s, base, &scans[1], &res);
	tap_ok(res.ret == 8 && has_range(&res, 0, 4, P_WRITTEN | P_PRESENT) &&
		       has_range(&res, 4, 5, P_WRITTEN) &&
		       has_range(&res, 5, 6, P_WRITTEN | P_PRESENT | P_ZERO) &&
		       has_range(&res, 6, 8, P_WRITTEN) &&
		       has_range(&res, 8, 9, P_WRITTEN | P_SWAPPED | P_GUARD) &&
		       has_range(&res, 9, 16, P_WRITTEN) &&
		       has_range(&res, 20, 22, P_WRITTEN | P_PRESENT | P_FILE) &&
		       has_range(&res, 22, 28, P_WRITTEN),
	       "%s: each kind of page in its own range, empty ones written", arch);
	if (res.ret != 8) {
		char buf[512];

		print_result(buf, sizeof(buf), &res);
		printf("#   %s\n", buf);
	}
	lib_scan(s, base, &scans[0], &res);
	tap_ok(res.ret == 2 && has_range(&res, 0, 16, 0) && has_range(&res, 20, 28, 0),
	       "%s: no return mask: one range a VMA, none for the hole", arch);
	lib_scan(s, base, &scans[6], &res);
	tap_ok(res.ret == 1 && has_range(&res, 0, 3, P_PRESENT) && res.walk_end == 3 * PG,
	       "%s: max_pages cuts the range, walk_end after it", arch);
	lib_scan(s, base, &scans[7], &res);
	tap_ok(res.ret == 2 && has_range(&res, 0, 4, P_PRESENT) && has_range(&res, 4, 5, 0) &&
		       res.walk_end == 5 * PG, "%s: a full vector stops the walk at the next range",
	       arch);

	/* A THP: one range, HUGE. */
	thp = base + 2 * MiB;
	must(mmp_mmap(s, thp, 2 * MiB, RW, MMP_MAP_FIXED, &(uint64_t){ 0 }) == 0, "map thp");
	must(mmp_madvise(s, thp, 2 * MiB, MMP_MADV_HUGEPAGE) == 0, "hugepage");
	must(mmp_write(cpu, thp, &b, 1) == 0, "write thp");
	{
		struct mmp_addr_info in;

		must(mmp_space_query(s, thp, &in) == 0, "query");
		memset(&a, 0, sizeof(a));
		a = (struct mmp_pm_scan_arg){ .size = sizeof(a), .start = thp, .end = thp + 2 * MiB,
					      .vec = (uintptr_t)r, .vec_len = 4,
					      .return_mask = P_HUGE | P_PRESENT };
		tap_eq(mmp_space_pagemap_scan(s, &a), 1, "%s: a THP is one range", arch);
		tap_eq(r[0].categories, in.leaf_level == 1 ? P_HUGE | P_PRESENT : P_PRESENT,
		       "%s: HUGE when PMD mapped (%d)", arch, in.leaf_level);
		a.start = thp + 4 * PG;
		a.end = thp + 8 * PG;
		tap_ok(mmp_space_pagemap_scan(s, &a) == 1 && r[0].start == thp + 4 * PG &&
			       r[0].end == thp + 8 * PG, "%s: part of a THP: that part", arch);
	}

	/* Arguments. */
	a = (struct mmp_pm_scan_arg){ .size = sizeof(a), .start = base, .end = base + NPG * PG,
				      .vec = (uintptr_t)r, .vec_len = 4 };
	a.size = 88;
	tap_eq(mmp_space_pagemap_scan(s, &a), -EINVAL, "%s: size 88", arch);
	a.size = sizeof(a);
	a.flags = 4;
	tap_eq(mmp_space_pagemap_scan(s, &a), -EINVAL, "%s: unknown flag", arch);
	a.flags = 0;
	a.return_mask = 1ULL << 9;
	tap_eq(mmp_space_pagemap_scan(s, &a), -EINVAL, "%s: unknown category", arch);
	a.return_mask = 0;
	a.start = base + 1;
	tap_eq(mmp_space_pagemap_scan(s, &a), -EINVAL, "%s: unaligned start", arch);
	a.start = base;
	a.end = base - PG;
	tap_eq(mmp_space_pagemap_scan(s, &a), -EFAULT, "%s: end below start", arch);
	a.end = task_size(s) + PG;
	tap_eq(mmp_space_pagemap_scan(s, &a), -EFAULT, "%s: end past the task size", arch);
	a.end = base + NPG * PG;
	a.vec = 0;
	tap_eq(mmp_space_pagemap_scan(s, &a), -EINVAL, "%s: vec NULL with vec_len", arch);
	a.vec_len = 0;
	a.walk_end = 1;
	tap_eq(mmp_space_pagemap_scan(s, &a), 0, "%s: no vector: nothing output", arch);
	tap_eq(a.walk_end, base + NPG * PG, "%s: walk_end the end", arch);
	a.vec = (uintptr_t)r;
	a.vec_len = UINT64_MAX / 8;
	tap_eq(mmp_space_pagemap_scan(s, &a), -EFAULT, "%s: a vector too long to address", arch);
	a.vec_len = 4;
	a.flags = MMP_PM_SCAN_CHECK_WPASYNC;
	tap_eq(mmp_space_pagemap_scan(s, &a), -EPERM, "%s: CHECK_WPASYNC without uffd-wp: -EPERM",
	       arch);
	a.flags = MMP_PM_SCAN_WP_MATCHING;
	tap_eq(mmp_space_pagemap_scan(s, &a), 0, "%s: WP_MATCHING passes every VMA by", arch);
	a.flags = 0;
	a.category_mask = MMP_PAGE_IS_WPALLOWED;
	tap_eq(mmp_space_pagemap_scan(s, &a), 0, "%s: WPALLOWED: no page", arch);
	a.category_mask = 0;
	a.end = base + 5 * PG + 1;
	tap_ok(mmp_space_pagemap_scan(s, &a) == 1 && r[0].end == base + 6 * PG,
	       "%s: end rounded up", arch);
	tap_eq(mmp_space_pagemap_scan(NULL, &a), -EINVAL, "%s: NULL space", arch);
	tap_eq(mmp_space_pagemap_scan(s, NULL), -EFAULT, "%s: NULL arg", arch);
	a.end = base + NPG * PG;

	/* Before 6.15: no GUARD category; a guard marker is a swap entry. */
	mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(6, 14, 0));
	a.return_mask = P_GUARD;
	tap_eq(mmp_space_pagemap_scan(s, &a), -EINVAL, "%s: 6.14: GUARD is unknown", arch);
	{
		static const struct scan swapped = { "swapped", 0, P_SWAPPED, 0, ~0ULL >> 56, 0, 16 };

		lib_scan(s, base, &swapped, &res);
		tap_ok(res.ret == 1 && has_range(&res, 8, 9, P_SWAPPED | P_WRITTEN),
		       "%s: 6.14: the guard page is a swap entry only", arch);
	}
	mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_MODELED);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the scans", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);
}

#ifndef PAGEMAP_SCAN
#define PAGEMAP_SCAN	_IOWR('f', 16, struct mmp_pm_scan_arg)
#endif

/* The same layout and scans on the host and on x86_64. */
static void check_host(struct mmp_phys *phys)
{
	int fd = open("/proc/self/pagemap", O_RDONLY), mfd = memfd_create("scan", 0);
	struct mmp_space *s = new_space(phys, "x86_64");
	uint64_t lbase = (task_size(s) / 4) & ~(2 * MiB - 1);
	unsigned char *h = mmap(NULL, NPG * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	struct mmp_cpu *cpu;
	struct mmp_file *f;

	tap_require(fd >= 0 && mfd >= 0 && ftruncate(mfd, 8 * PG) == 0 && h != MAP_FAILED,
		    "host layout");
	munmap(h + 16 * PG, 12 * PG);
	tap_require(mmap(h + 20 * PG, 8 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, mfd,
			 0) == h + 20 * PG, "host memfd");
	/* Small pages only: the host's THP settings are its own. */
	madvise(h, 16 * PG, MADV_NOHUGEPAGE);
	for (int i = 0; i < 4; i++)
		h[i * PG] = 1;
	(void)*(volatile unsigned char *)&h[5 * PG];
	if (madvise(h + 8 * PG, PG, 102) != 0) {
		tap_ok(1, "# SKIP the host has no guard regions");
		goto out;
	}
	(void)*(volatile unsigned char *)&h[20 * PG];
	(void)*(volatile unsigned char *)&h[21 * PG];

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	must(mmp_memfd_create(phys, 0, &f) == 0 && mmp_file_truncate(f, 8 * PG) == 0, "memfd");
	lib_layout(s, cpu, f, lbase);
	must(mmp_madvise(s, lbase, 16 * PG, MMP_MADV_NOHUGEPAGE) == 0, "nohugepage");
	for (unsigned int i = 0; i < sizeof(scans) / sizeof(scans[0]); i++) {
		const struct scan *sc = &scans[i];
		struct result hr = { 0 }, lr;
		struct mmp_pm_scan_arg a = { .size = sizeof(a), .start = (uintptr_t)h,
					     .end = (uintptr_t)h + NPG * PG, .vec = (uintptr_t)hr.r,
					     .vec_len = sc->vec_len, .max_pages = sc->max_pages,
					     .category_inverted = sc->inverted,
					     .category_mask = sc->mask, .category_anyof_mask = sc->anyof,
					     .return_mask = sc->ret };
		char hb[512], lb[512];

		hr.ret = ioctl(fd, PAGEMAP_SCAN, &a);
		if (hr.ret < 0)
			hr.ret = -errno;
		hr.walk_end = a.walk_end - (uintptr_t)h;
		for (long k = 0; k < hr.ret && k < 16; k++) {
			hr.r[k].start -= (uintptr_t)h;
			hr.r[k].end -= (uintptr_t)h;
		}
		lib_scan(s, lbase, sc, &lr);
		print_result(hb, sizeof(hb), &hr);
		print_result(lb, sizeof(lb), &lr);
		tap_ok(same_result(&hr, &lr), "host: %s: %s", sc->what, lb);
		if (!same_result(&hr, &lr))
			printf("#   the host's: %s\n", hb);
	}
	tap_eq(mmp_space_verify(s), 0, "host: verify");
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);
	s = NULL;
out:
	if (s)
		mmp_space_destroy(s);
	munmap(h, NPG * PG);
	close(mfd);
	close(fd);
}

int main(int argc, char **argv)
{
	struct mmp_phys *phys;
	const char *arch;

	tap_require(mmp_phys_create(128 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		if (argc > 1 && strcmp(argv[1], arch))
			continue;
		check_arch(phys, arch);
	}
	if (argc == 1 && host_oracle("PAGEMAP_SCAN"))
		check_host(phys);
	mmp_phys_destroy(phys);
	return tap_done();
}
