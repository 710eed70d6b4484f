/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad inputs of hugetlb beyond MMP_MAP_HUGETLB (test_badinput_map has those):
 * memfd with MMP_MFD_HUGETLB, its truncation, writes and mappings, and huge
 * page sizes a back end lacks. Each gets the host's errno in the host's
 * order, changes nothing in the pool, and leaves the space usable.
 */
#include "badinput.h"

#define HP	(2 * MiB)

static struct mmp_hugepages_stat pool_now(struct env *e)
{
	struct mmp_hugepages_stat st;

	must(!mmp_phys_hugepages(e->phys, HP, &st), "hugepages");
	return st;
}

static void pool_same(struct env *e, const struct mmp_hugepages_stat *st0, const char *what)
{
	struct mmp_hugepages_stat st = pool_now(e);

	tap_ok(!memcmp(&st, st0, sizeof(st)), "%s: %s: the pool as it was", e->arch, what);
}

static void test_memfd(struct env *e)
{
	struct mmp_hugepages_stat st0;
	struct mmp_file *f = NULL;
	uint64_t a = 0xdead, size = 0, at = 0x300000000ull;

	must(!mmp_phys_set_hugepages(e->phys, HP, 3), "pool");
	st0 = pool_now(e);
	tap_eq(mmp_memfd_create(e->phys, MMP_MFD_HUGE_2MB, &f), -EINVAL,
	       "%s: memfd: a MFD_HUGE size without MFD_HUGETLB", e->arch);
	tap_eq(mmp_memfd_create(e->phys, MMP_MFD_HUGETLB | MMP_FILE_HUGE_ALWAYS, &f), -EINVAL,
	       "%s: memfd: MFD_HUGETLB with a shmem huge= policy", e->arch);
	tap_eq(mmp_memfd_create(e->phys, MMP_MFD_HUGETLB | (20u << MMP_MFD_HUGE_SHIFT), &f),
	       -ENODEV, "%s: memfd: MFD_HUGETLB of 1 MiB, no such pool", e->arch);
	tap_eq(mmp_memfd_create(e->phys, MMP_MFD_HUGETLB, NULL), -EINVAL, "%s: memfd: NULL out",
	       e->arch);
	tap_ok(f == NULL, "%s: memfd: *out untouched on errors", e->arch);
	must(!mmp_memfd_create(e->phys, MMP_MFD_HUGETLB, &f), "memfd");
	tap_eq(mmp_file_truncate(f, PG), -EINVAL, "%s: hugetlbfs ftruncate: 4 KiB", e->arch);
	tap_eq(mmp_file_truncate(f, HP + PG), -EINVAL, "%s: hugetlbfs ftruncate: 2 MiB + 4 KiB",
	       e->arch);
	tap_eq(mmp_file_truncate(f, MMP_FILE_MAX_SIZE + PG), -EFBIG,
	       "%s: hugetlbfs ftruncate: past the largest size, EFBIG first", e->arch);
	tap_ok(!mmp_file_size(f, &size) && size == 0, "%s: ... the size stays 0", e->arch);
	tap_eq(mmp_file_write(f, 0, "x", 1), -EINVAL, "%s: hugetlbfs write", e->arch);
	must(!mmp_file_truncate(f, 2 * HP), "truncate");
	tap_eq(mmp_mmap_file(e->s, 0, HP, RW, MMP_MAP_SHARED, f, PG, &a), -EINVAL,
	       "%s: hugetlbfs mmap: offset 4 KiB", e->arch);
	tap_eq(mmp_mmap_file(e->s, 0, HP, RW, MMP_MAP_SHARED, f, HP / 2, &a), -EINVAL,
	       "%s: hugetlbfs mmap: offset 1 MiB", e->arch);
	tap_eq(mmp_mmap_file(e->s, 0, 8 * HP, RW, MMP_MAP_SHARED, f, HP / 2, &a), -EINVAL,
	       "%s: hugetlbfs mmap: offset 1 MiB, the pool short too: the offset first", e->arch);
	tap_eq(mmp_mmap_file(e->s, at + PG, HP, RW, MMP_MAP_SHARED | MMP_MAP_FIXED, f, 0, &a),
	       -EINVAL, "%s: hugetlbfs mmap: MAP_FIXED 4 KiB aligned", e->arch);
	tap_eq(mmp_mmap_file(e->s, 0, 0, RW, MMP_MAP_SHARED, f, 0, &a), -EINVAL,
	       "%s: hugetlbfs mmap: len 0", e->arch);
	tap_eq(mmp_mmap_file(e->s, 0, HP, RW, 0, f, 0, &a), -EINVAL,
	       "%s: hugetlbfs mmap: neither shared nor private", e->arch);
	tap_eq(mmp_mmap_file(e->s, 0, HP, RW, MMP_MAP_SHARED | MMP_MAP_HUGETLB, f, 0, &a), -EINVAL,
	       "%s: hugetlbfs mmap: MMP_MAP_HUGETLB is no file mapping flag here", e->arch);
	tap_eq(mmp_mmap_file(e->s, 0, 4 * HP, RW, MMP_MAP_SHARED, f, 0, &a), -ENOMEM,
	       "%s: hugetlbfs mmap: more than the pool can promise, shared", e->arch);
	tap_eq(mmp_mmap_file(e->s, 0, 4 * HP, RW, MMP_MAP_PRIVATE, f, 0, &a), -ENOMEM,
	       "%s: hugetlbfs mmap: more than the pool can promise, private", e->arch);
	tap_eq(mmp_mmap_file(e->s, e->canary, 4 * HP, RW, MMP_MAP_PRIVATE | MMP_MAP_FIXED, f, 0,
			     &a),
	       -ENOMEM, "%s: hugetlbfs mmap: MAP_FIXED over the canary, the pool short: the canary "
	       "stays", e->arch);
	tap_ok(a == 0xdead, "%s: hugetlbfs mmap: addr_out untouched on errors", e->arch);
	tap_ok(!mmp_file_size(f, &size) && size == 2 * HP,
	       "%s: ... a refused writable mapping does not grow the file", e->arch);
	pool_same(e, &st0, "bad memfd calls");
	still_works(e, "bad hugetlbfs calls");

	/* Mapped: part of a huge page is refused, the file stays as it was. */
	must(!mmp_mmap_file(e->s, at, 2 * HP, RW, MMP_MAP_SHARED | MMP_MAP_FIXED, f, 0, &a),
	     "memfd mmap");
	must(!mmp_write(e->cpu, a + HP, "y", 1), "memfd write");
	tap_eq(mmp_munmap(e->s, a + PG, HP), -EINVAL, "%s: memfd munmap from inside a huge page",
	       e->arch);
	tap_eq(mmp_mprotect(e->s, a, PG, MMP_PROT_READ), -EINVAL,
	       "%s: memfd mprotect of 4 KiB", e->arch);
	tap_eq(mmp_file_truncate(f, HP + PG), -EINVAL, "%s: ftruncate of a mapped memfd: 4 KiB past "
	       "a huge page", e->arch);
	tap_eq(mmp_file_destroy(f), -EBUSY, "%s: close a mapped memfd", e->arch);
	still_works(e, "bad calls on a mapped memfd");
	tap_eq(mmp_munmap(e->s, a, 2 * HP), 0, "%s: memfd munmap", e->arch);
	tap_eq(mmp_file_destroy(f), 0, "%s: memfd close", e->arch);
	pool_same(e, &st0, "the memfd gone");
	must(!mmp_phys_set_hugepages(e->phys, HP, 0), "pool");
}

/* Huge page sizes: a size the back end lacks is EINVAL, one the pool cannot cover ENOMEM. */
static void test_sizes(struct env *e)
{
	const uint64_t k64 = 64 * KiB, g1 = 1ull << 30, at = 0x300000000ull;
	struct mmp_hugepages_stat st0;
	struct mmp_file *f;
	uint64_t sizes = 0, a = 0xdead, p;

	must(!mmp_hugetlb_sizes(e->arch, &sizes), "sizes");
	must(!mmp_phys_set_hugepages(e->phys, k64, 2), "64 KiB pool");
	st0 = pool_now(e);
	if (!(sizes & k64)) {
		tap_eq(mmp_mmap(e->s, 0, k64, RW, MMP_MAP_HUGETLB | (16 << MMP_MAP_HUGE_SHIFT), &a),
		       -EINVAL, "%s: MAP_HUGE_64KB: no such size here", e->arch);
		tap_eq(mmp_mmap(e->s, 0, 32 * MiB, RW, MMP_MAP_HUGETLB | (25 << MMP_MAP_HUGE_SHIFT),
				&a),
		       -EINVAL, "%s: MAP_HUGE_32MB: no such size here", e->arch);
		must(!mmp_memfd_create(e->phys, MMP_MFD_HUGETLB | MMP_MFD_HUGE_64KB, &f), "memfd");
		must(!mmp_file_truncate(f, k64), "truncate");
		tap_eq(mmp_mmap_file(e->s, 0, k64, RW, MMP_MAP_SHARED, f, 0, &a), -EINVAL,
		       "%s: a 64 KiB memfd: EINVAL at mmap", e->arch);
		must(!mmp_file_destroy(f), "close");
	} else {
		tap_eq(mmp_mmap(e->s, 0, 3 * k64, RW, MMP_MAP_HUGETLB | (16 << MMP_MAP_HUGE_SHIFT),
				&a),
		       -ENOMEM, "%s: 3 pages of 64 KiB, 2 in the pool: ENOMEM", e->arch);
		tap_eq(mmp_mmap(e->s, at + 4 * KiB, k64, RW,
				MMP_MAP_HUGETLB | MMP_MAP_FIXED | (16 << MMP_MAP_HUGE_SHIFT), &a),
		       -EINVAL, "%s: 64 KiB at a 4 KiB aligned MAP_FIXED address", e->arch);
		tap_eq(mmp_mmap(e->s, 0, 32 * MiB, RW, MMP_MAP_HUGETLB | (25 << MMP_MAP_HUGE_SHIFT),
				&a),
		       -ENOMEM, "%s: 32 MiB with an empty 32 MiB pool: ENOMEM", e->arch);
		must(!mmp_mmap(e->s, at, k64, RW,
			       MMP_MAP_HUGETLB | MMP_MAP_FIXED | (16 << MMP_MAP_HUGE_SHIFT), &p),
		     "64 KiB mmap");
		must(!mmp_write(e->cpu, p + 4 * KiB, "z", 1), "64 KiB write");
		tap_eq(mmp_munmap(e->s, p, 4 * KiB), -EINVAL, "%s: munmap 4 KiB of a 64 KiB page",
		       e->arch);
		tap_eq(mmp_mprotect(e->s, p + 4 * KiB, 4 * KiB, MMP_PROT_READ), -EINVAL,
		       "%s: mprotect 4 KiB inside a 64 KiB page", e->arch);
		tap_eq(mmp_madvise(e->s, p + 4 * KiB, 4 * KiB, MMP_MADV_DONTNEED), -EINVAL,
		       "%s: MADV_DONTNEED from inside a 64 KiB page", e->arch);
		still_works(e, "bad calls on a 64 KiB page");
		tap_eq(mmp_munmap(e->s, p, k64), 0, "%s: munmap the 64 KiB page", e->arch);
	}
	tap_ok(a == 0xdead, "%s: sizes: addr_out untouched on errors", e->arch);
	pool_same(e, &st0, "bad sizes");
	tap_eq(mmp_mmap(e->s, 0, g1, RW, MMP_MAP_HUGETLB | MMP_MAP_HUGE_1GB, &a),
	       sizes & g1 ? -ENOMEM : -EINVAL,
	       "%s: MAP_HUGE_1GB: %s", e->arch,
	       sizes & g1 ? "ENOMEM, the 1 GiB pool is empty" : "EINVAL, no PUD leaves");
	tap_eq(mmp_mmap(e->s, 0, g1, RW, MMP_MAP_HUGETLB | (31 << MMP_MAP_HUGE_SHIFT), &a), -EINVAL,
	       "%s: 2 GiB pages: EINVAL", e->arch);
	still_works(e, "bad huge page sizes");
	must(!mmp_phys_set_hugepages(e->phys, k64, 0), "64 KiB pool");
}

int main(void)
{
	struct env e;
	const char *arch;

	for (int i = 0; i < mmp_arch_count() && (arch = mmp_arch_name(i)); i++) {
		env_init(&e, arch, 64 * MiB);
		test_memfd(&e);
		test_sizes(&e);
		env_fini(&e);
	}
	return tap_done();
}
