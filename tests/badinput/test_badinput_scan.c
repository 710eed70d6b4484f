/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad inputs of mmp_space_clear_refs(), mmp_space_pagemap_scan(),
 * mmp_space_procmap_query() and mmp_space_set_memory_merge(), with the errno Linux would give, in its
 * order; after each error mmp_space_verify() passes, data written before is
 * intact (soft-dirty write-protect and aging included) and the space still
 * maps, writes and reads.
 */
#include <mmprim/introspect.h>

#include "badinput.h"

static void test_clear_refs(struct env *e)
{
	static const int bad[] = { 0, -1, 6, 7, 1000, 1 << 30 };

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_eq(mmp_space_clear_refs(e->s, bad[i]), -EINVAL, "%s: clear_refs %d", e->arch,
		       bad[i]);
	tap_eq(mmp_space_clear_refs(NULL, 4), -EINVAL, "%s: clear_refs: NULL space", e->arch);
	still_works(e, "bad clear_refs types");
	for (int type = 1; type <= 5; type++)
		tap_eq(mmp_space_clear_refs(e->s, type), 0, "%s: clear_refs %d", e->arch, type);
	mmp_space_set_opt(e->s, MMP_OPT_SOFT_DIRTY, 1);
	tap_eq(mmp_space_clear_refs(e->s, 4), 0, "%s: clear_refs 4 with soft-dirty", e->arch);
	must(fill_pages(e->cpu, e->canary, 4, 1), "rewrite the canary");
	mmp_space_set_opt(e->s, MMP_OPT_SOFT_DIRTY, 0);
	still_works(e, "every clear_refs type");
}

static void test_pagemap_scan(struct env *e)
{
	struct mmp_page_region r[4];
	struct mmp_pm_scan_arg good = { .size = sizeof(good), .start = e->canary,
					.end = e->canary + 16 * PG, .vec = (uintptr_t)r,
					.vec_len = 4, .return_mask = MMP_PAGE_IS_PRESENT };
	struct mmp_pm_scan_arg a;

#define SCAN_WITH(field, value, want, what)						\
	do {										\
		a = good;								\
		a.field = (value);							\
		tap_eq(mmp_space_pagemap_scan(e->s, &a), want, "%s: pagemap_scan: %s",	\
		       e->arch, what);							\
	} while (0)

	SCAN_WITH(size, 0, -EINVAL, "size 0");
	SCAN_WITH(size, sizeof(good) + 8, -EINVAL, "size too large");
	SCAN_WITH(flags, 1ULL << 2, -EINVAL, "unknown flag");
	SCAN_WITH(flags, ~0ULL, -EINVAL, "every flag");
	SCAN_WITH(category_mask, 1ULL << 9, -EINVAL, "unknown category in the mask");
	SCAN_WITH(category_inverted, 1ULL << 63, -EINVAL, "unknown inverted category");
	SCAN_WITH(category_anyof_mask, 1ULL << 10, -EINVAL, "unknown any-of category");
	SCAN_WITH(return_mask, ~0ULL, -EINVAL, "unknown return category");
	SCAN_WITH(start, e->canary + 1, -EINVAL, "unaligned start");
	SCAN_WITH(end, e->canary - PG, -EFAULT, "end below start");
	SCAN_WITH(end, UINT64_MAX, -EFAULT, "end at the top of the address space");
	SCAN_WITH(vec, 0, -EINVAL, "no vector, a length");
	SCAN_WITH(vec_len, UINT64_MAX, -EFAULT, "a vector past the address space");
	SCAN_WITH(flags, MMP_PM_SCAN_CHECK_WPASYNC, -EPERM, "CHECK_WPASYNC without uffd-wp");
	/* Order: the size before the flags, the flags before the range. */
	a = good;
	a.size = 1;
	a.flags = 8;
	a.start = 1;
	tap_eq(mmp_space_pagemap_scan(e->s, &a), -EINVAL, "%s: pagemap_scan: size first", e->arch);
	a = good;
	a.start = 1;
	a.end = 0;
	tap_eq(mmp_space_pagemap_scan(e->s, &a), -EINVAL,
	       "%s: pagemap_scan: unaligned start before the range", e->arch);
	a = good;
	a.vec = 0;
	a.end = 0;
	tap_eq(mmp_space_pagemap_scan(e->s, &a), -EFAULT,
	       "%s: pagemap_scan: the range before the vector", e->arch);
	tap_eq(mmp_space_pagemap_scan(NULL, &good), -EINVAL, "%s: pagemap_scan: NULL space",
	       e->arch);
	tap_eq(mmp_space_pagemap_scan(e->s, NULL), -EFAULT, "%s: pagemap_scan: NULL arg", e->arch);
	a = good;
	tap_eq(mmp_space_pagemap_scan(e->s, &a), 1, "%s: pagemap_scan: the canary is present",
	       e->arch);
	still_works(e, "bad pagemap_scan arguments");
#undef SCAN_WITH
}

static void test_procmap_query(struct env *e)
{
	const struct mmp_procmap_query good = { .size = sizeof(good), .query_addr = e->canary };
	struct mmp_procmap_query a;
	uint64_t big[PG / 8] = { 0 };	/* a page: the most the kernel reads */
	char name[16];

#define QUERY_WITH(field, value, want, what)						\
	do {										\
		a = good;								\
		a.field = (value);							\
		tap_eq(mmp_space_procmap_query(e->s, &a), want, "%s: procmap_query: %s",	\
		       e->arch, what);							\
	} while (0)

	QUERY_WITH(size, 0, -EINVAL, "size 0");
	QUERY_WITH(size, 16, -EINVAL, "size below query_addr's end");
	QUERY_WITH(size, PG + 1, -E2BIG, "size above a page");
	QUERY_WITH(size, UINT64_MAX, -E2BIG, "size ~0");
	QUERY_WITH(query_flags, 1ULL << 6, -EINVAL, "unknown flag");
	QUERY_WITH(query_flags, ~0ULL, -EINVAL, "every flag");
	QUERY_WITH(vma_name_size, sizeof(name), -EINVAL, "a name size without an address");
	QUERY_WITH(vma_name_addr, (uintptr_t)name, -EINVAL, "a name address without a size");
	QUERY_WITH(build_id_size, 20, -EINVAL, "a build-ID size without an address");
	QUERY_WITH(build_id_addr, (uintptr_t)name, -EINVAL, "a build-ID address without a size");
	QUERY_WITH(query_addr, e->canary - PG, -ENOENT, "an address in a hole");
	QUERY_WITH(query_addr, UINT64_MAX, -ENOENT, "the top address");
	QUERY_WITH(query_addr, task_size(e->s), -ENOENT, "the task size");
	/* Order: the size before the flags, the flags before the buffers. */
	a = good;
	a.size = 8;
	a.query_flags = 1ULL << 7;
	tap_eq(mmp_space_procmap_query(e->s, &a), -EINVAL, "%s: procmap_query: size first",
	       e->arch);
	a = good;
	a.query_flags = 1ULL << 7;
	a.vma_name_size = 4;
	tap_eq(mmp_space_procmap_query(e->s, &a), -EINVAL, "%s: procmap_query: flags, then buffers",
	       e->arch);
	/* A larger structure: zeros beyond the 104 bytes pass, anything else is -E2BIG. */
	memcpy(big, &good, sizeof(good));
	big[0] = sizeof(big);
	tap_eq(mmp_space_procmap_query(e->s, (struct mmp_procmap_query *)big), 0,
	       "%s: procmap_query: a larger structure of zeros", e->arch);
	big[0] = sizeof(big);
	big[sizeof(good) / 8 + 3] = 1;
	tap_eq(mmp_space_procmap_query(e->s, (struct mmp_procmap_query *)big), -E2BIG,
	       "%s: procmap_query: nonzero beyond what the library knows", e->arch);
	tap_eq(mmp_space_procmap_query(NULL, &a), -EINVAL, "%s: procmap_query: NULL space", e->arch);
	tap_eq(mmp_space_procmap_query(e->s, NULL), -EFAULT, "%s: procmap_query: NULL arg", e->arch);
	a = good;
	tap_ok(mmp_space_procmap_query(e->s, &a) == 0 && a.vma_start <= e->canary &&
	       a.vma_end > e->canary, "%s: procmap_query: the canary's VMA", e->arch);
	still_works(e, "bad procmap_query arguments");
#undef QUERY_WITH
}

static void test_memory_merge(struct env *e)
{
	tap_eq(mmp_space_set_memory_merge(NULL, 1), -EINVAL, "%s: memory merge: NULL space",
	       e->arch);
	tap_eq(mmp_space_set_memory_merge(e->s, 2), 0, "%s: memory merge: any non-zero is on",
	       e->arch);
	tap_eq(mmp_space_set_memory_merge(e->s, 1), 0, "%s: memory merge: on twice", e->arch);
	tap_eq(mmp_space_set_memory_merge(e->s, 0), 0, "%s: memory merge: off", e->arch);
	tap_eq(mmp_space_set_memory_merge(e->s, 0), 0, "%s: memory merge: off twice", e->arch);
	still_works(e, "memory merge");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < mmp_arch_count(); i++) {
		const char *arch = mmp_arch_name(i);
		struct env e;

		printf("# back end %s\n", arch);
		env_init(&e, arch, 64 * MiB);
		test_clear_refs(&e);
		test_pagemap_scan(&e);
		test_procmap_query(&e);
		test_memory_merge(&e);
		tap_eq(mmp_space_verify(e.s), 0, "%s: verify at the end", arch);
		env_fini(&e);
	}
	return tap_done();
}
