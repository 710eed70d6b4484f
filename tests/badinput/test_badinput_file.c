/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad inputs of the file calls (mmp_file_*, mmp_memfd_create, mmp_mmap_file,
 * mmp_msync), and running out of simulated memory in the page cache: each
 * gets its errno, loses nothing, and leaves spaces and files usable. The
 * kernel's own answers for a file mapping (EACCES, SIGBUS, ...) are in
 * tests/mm/test_file.c.
 */
#include <errno.h>
#include <string.h>

#include "util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define P	MMP_PAGE_SIZE

static void test_null(struct mmp_phys *phys)
{
	struct mmp_file *f = NULL, *g;
	struct mmp_file_stat st;
	struct mmp_space *s = new_space(phys, "x86_64");
	uint64_t size, addr;
	size_t n;
	char b = 0;

	tap_eq(mmp_file_create(NULL, 0, 0, &f), -EINVAL, "file_create: NULL phys");
	tap_eq(mmp_file_create(phys, 0, 0, NULL), -EINVAL, "file_create: NULL out");
	tap_eq(mmp_file_create(phys, 0, 0x80000000u, &f), -EINVAL, "file_create: unknown flag");
	tap_eq(mmp_file_create(phys, 0, MMP_FILE_SHMEM | MMP_FILE_NO_LARGE_FOLIOS, &f), -EINVAL,
	       "file_create: shmem has no such switch");
	tap_eq(mmp_file_create(phys, MMP_FILE_MAX_SIZE + 1, 0, &f), -EFBIG, "file_create: too big");
	tap_ok(f == NULL, "file_create: out untouched on error");
	tap_eq(mmp_memfd_create(NULL, 0, &g), -EINVAL, "memfd_create: NULL phys");
	tap_eq(mmp_memfd_create(phys, MMP_FILE_SHMEM, &g), -EINVAL, "memfd_create: SHMEM is implied");
	tap_eq(mmp_file_destroy(NULL), -EINVAL, "file_destroy: NULL");

	must(!mmp_file_create(phys, 4 * P, 0, &f), "a file");
	tap_eq(mmp_file_write(NULL, 0, &b, 1), -EINVAL, "file_write: NULL file");
	tap_eq(mmp_file_write(f, 0, NULL, 1), -EINVAL, "file_write: NULL buffer");
	tap_eq(mmp_file_write(f, 0, NULL, 0), 0, "file_write: nothing to write");
	tap_eq(mmp_file_read(NULL, 0, &b, 1, &n), -EINVAL, "file_read: NULL file");
	tap_eq(mmp_file_read(f, 0, &b, 1, NULL), -EINVAL, "file_read: NULL count");
	tap_eq(mmp_file_read(f, 0, NULL, 1, &n), -EINVAL, "file_read: NULL buffer");
	tap_ok(mmp_file_read(f, 100 * P, &b, 1, &n) == 0 && n == 0, "file_read: past the end reads 0");
	tap_eq(mmp_file_truncate(NULL, 0), -EINVAL, "file_truncate: NULL");
	tap_eq(mmp_file_size(NULL, &size), -EINVAL, "file_size: NULL file");
	tap_eq(mmp_file_size(f, NULL), -EINVAL, "file_size: NULL out");
	tap_eq(mmp_file_stat(NULL, &st), -EINVAL, "file_stat: NULL file");
	tap_eq(mmp_file_stat_sized(f, &st, 4), -EINVAL, "file_stat: too small");
	tap_eq(mmp_file_stat_sized(f, &st, 8), 0, "file_stat: the first field only");

	tap_eq(mmp_mmap_file(NULL, 0, P, RW, MMP_MAP_SHARED, f, 0, &addr), -EINVAL,
	       "mmap_file: NULL space");
	tap_eq(mmp_mmap_file(s, 0, P, RW, MMP_MAP_SHARED, f, 0, NULL), -EINVAL,
	       "mmap_file: NULL out");
	tap_eq(mmp_mmap_file(s, 0, P, 0x80, MMP_MAP_SHARED, f, 0, &addr), -EINVAL,
	       "mmap_file: unknown prot");
	tap_eq(mmp_mmap_file(s, 0, P, RW, MMP_MAP_SHARED | MMP_MAP_DROPPABLE, f, 0, &addr), -EINVAL,
	       "mmap_file: droppable files do not exist");
	tap_eq(mmp_mmap_file(s, 0, P, RW, MMP_MAP_SHARED | MMP_MAP_GROWSDOWN, f, 0, &addr), -EINVAL,
	       "mmap_file: nor do stacks of them");
	tap_eq(mmp_mmap_file(s, 0, ~0ULL, RW, MMP_MAP_SHARED, f, 0, &addr), -ENOMEM,
	       "mmap_file: longer than the task size");
	tap_eq(mmp_mmap_file(s, 1ULL << 30, P, RW, MMP_MAP_SHARED | MMP_MAP_FIXED, f, 0, &addr),
	       0, "mmap_file: fixed");
	tap_eq(mmp_mmap_file(s, 1ULL << 30, P, RW, MMP_MAP_SHARED | MMP_MAP_FIXED_NOREPLACE, f, 0,
			     &addr), -EEXIST, "mmap_file: NOREPLACE over it");
	tap_eq(mmp_mmap_file(s, 1ULL << 30, P, RW, MMP_MAP_FIXED_NOREPLACE, f, 0, &addr), -EEXIST,
	       "mmap_file: no type, but EEXIST first (the kernel's order)");
	tap_eq(mmp_mmap_file(s, 1ULL << 31, P, RW, MMP_MAP_FIXED, f, 0, &addr), -EINVAL,
	       "mmap_file: no type");
	tap_eq(mmp_msync(NULL, 0, P, 0), -EINVAL, "msync: NULL space");
	tap_eq(mmp_msync(s, 1ULL << 30, P, 0x40), -EINVAL, "msync: unknown flag");
	tap_eq(mmp_phys_destroy(phys), -EBUSY, "phys_destroy: a space and a file live");
	tap_eq(mmp_space_verify(s), 0, "the space verifies after all of it");
	mmp_space_destroy(s);
	tap_eq(mmp_phys_destroy(phys), -EBUSY, "phys_destroy: the file still lives");
	tap_eq(mmp_file_destroy(f), 0, "file_destroy");
}

/* The page cache runs out of simulated memory: -ENOMEM, what was written stays written. */
static void test_oom(const char *arch)
{
	struct mmp_phys *phys;
	struct mmp_space *s;
	struct mmp_file *f;
	struct mmp_cpu *cpu;
	struct mmp_file_stat st;
	static uint8_t buf[16 << 20];
	uint64_t size, addr;
	uint8_t b[P];
	int err;

	tap_require(mmp_phys_create(8 * MiB, &phys) == 0, "an 8 MiB phys");
	s = new_space(phys, arch);
	mmp_cpu_attach(s, &cpu);
	tap_require(mmp_file_create(phys, 0, 0, &f) == 0, "a file");
	memset(buf, 0x3e, sizeof(buf));
	err = mmp_file_write(f, 0, buf, sizeof(buf));
	tap_eq(err, -ENOMEM, "%s: 16 MiB through an 8 MiB page cache: ENOMEM", arch);
	mmp_file_size(f, &size);
	mmp_file_stat(f, &st);
	tap_ok(size > 0 && size < sizeof(buf) && st.nrpages * P >= size,
	       "%s: the size covers what was written (%llu bytes)", arch, (unsigned long long)size);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	tap_eq(mmp_mmap_file(s, 0, 16 * MiB, MMP_PROT_READ, MMP_MAP_PRIVATE, f, 0, &addr), 0,
	       "%s: map it", arch);
	/* The cache holds nearly all memory (dirty: nothing to drop): a table may not fit. */
	err = mmp_read(cpu, addr, b, P);
	tap_ok(err == -ENOMEM || (!err && b[0] == 0x3e), "%s: a read with memory full: %s", arch,
	       mmp_strerror(err));
	tap_eq(mmp_file_truncate(f, MiB), 0, "%s: truncate to 1 MiB frees the rest of the cache",
	       arch);
	tap_ok(mmp_read(cpu, addr, b, P) == 0 && b[0] == 0x3e, "%s: now the first page reads", arch);
	tap_eq(mmp_read(cpu, addr + 2 * MiB, b, 1), -EIO, "%s: past the end: SIGBUS", arch);
	tap_eq(mmp_munmap(s, addr, 16 * MiB), 0, "%s: unmap", arch);
	tap_eq(mmp_file_write(f, 0, buf, 2 * MiB), 0, "%s: a smaller write fits again", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: nothing leaked", arch);
}

int main(void)
{
	struct mmp_phys *phys;
	const char *arch;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "create phys");
	test_null(phys);
	tap_eq(mmp_phys_destroy(phys), 0, "phys_destroy once the file is gone");
	for_each_arch(i, arch)
		test_oom(arch);
	return tap_done();
}
