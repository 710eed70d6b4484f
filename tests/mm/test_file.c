/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files, the page cache and shared memory, on every back end: private
 * mappings read the file and copy on write; shared mappings write the file's
 * own folios, which other spaces and mmp_file_read() see; shared anonymous
 * memory and memfds are shared across fork and outlive the space that made
 * them; truncation unmaps and gives SIGBUS; reclaim writes dirty file folios
 * back, drops clean ones and reads them in again; the counters say which
 * path ran, exactly; every call leaves a space that verifies.
 */
#include <errno.h>
#include <string.h>

#include "util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define P	MMP_PAGE_SIZE

static struct mmp_phys *phys;

/* Fill @len bytes with a pattern of @seed that differs on every page. */
static void pattern(uint8_t *buf, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 131 + i / P * 7 + i);
}

static struct mmp_file *new_file(uint64_t size, unsigned int flags, unsigned int seed)
{
	struct mmp_file *f = NULL;
	uint8_t *buf = malloc(size ? size : 1);

	tap_require(buf && mmp_file_create(phys, 0, flags, &f) == 0, "create a file");
	pattern(buf, size, seed);
	tap_require(mmp_file_write(f, 0, buf, size) == 0, "write %llu bytes",
		    (unsigned long long)size);
	free(buf);
	return f;
}

static bool read_is(struct mmp_cpu *cpu, uint64_t addr, const uint8_t *want, size_t len)
{
	uint8_t *got = malloc(len);
	bool same = got && mmp_read(cpu, addr, got, len) == 0 && !memcmp(got, want, len);

	free(got);
	return same;
}

static bool file_is(struct mmp_file *f, uint64_t off, const uint8_t *want, size_t len)
{
	uint8_t *got = malloc(len);
	size_t n = 0;
	bool same = got && mmp_file_read(f, off, got, len, &n) == 0 && n == len &&
		    !memcmp(got, want, len);

	free(got);
	return same;
}

static struct mmp_space_stat stat_of(struct mmp_space *s)
{
	struct mmp_space_stat st;

	mmp_space_stat(s, &st);
	return st;
}

/* A private mapping reads the file, maps around the fault, and copies on write. */
static void test_private(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file *f = new_file(64 * P, MMP_FILE_NO_LARGE_FOLIOS, 1);
	uint8_t want[64 * P], page[P];
	struct mmp_counters before, d;
	struct mmp_cpu *cpu;
	uint64_t addr;

	pattern(want, sizeof(want), 1);
	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_mmap_file(s, 0, 64 * P, RW, MMP_MAP_PRIVATE, f, 0, &addr), 0,
	       "%s: private file mapping", arch);
	mmp_space_counters(s, &before);
	tap_ok(read_is(cpu, addr + 5 * P, want + 5 * P, P), "%s: a read sees the file", arch);
	counters_since(s, &before, &d);
	/* The cache holds every page (the write put them there): fault-around maps 16. */
	tap_eq(d.v[MMP_C_FAULT_FILE], 1, "%s: one file fault", arch);
	tap_eq(d.v[MMP_C_FAULT_AROUND], 15, "%s: fault-around mapped the rest of its 64 KiB", arch);
	tap_eq(d.v[MMP_C_PGCACHE_ADD], 0, "%s: nothing read in", arch);
	tap_eq(stat_of(s).rss_file_pages, 16, "%s: 16 pages count as RssFile", arch);

	memset(page, 0xab, P);
	mmp_space_counters(s, &before);
	tap_eq(mmp_write(cpu, addr + 5 * P, page, P), 0, "%s: write a mapped page", arch);
	tap_eq(mmp_write(cpu, addr + 40 * P, page, P), 0, "%s: write an unmapped page", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_FAULT_FILE_COW], 2, "%s: both writes copied the file page", arch);
	tap_ok(file_is(f, 0, want, sizeof(want)), "%s: the file did not change", arch);
	tap_ok(read_is(cpu, addr + 40 * P, page, P), "%s: the copy holds the write", arch);
	tap_eq(stat_of(s).rss_anon_pages, 2, "%s: two anonymous pages", arch);
	tap_eq(stat_of(s).rss_file_pages, 15, "%s: one file page fewer", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);

	/* A write through the file shows through the pages not copied. */
	memset(page, 0x5c, P);
	tap_eq(mmp_file_write(f, 6 * P, page, P), 0, "%s: write the file", arch);
	tap_ok(read_is(cpu, addr + 6 * P, page, P), "%s: the mapping sees it", arch);
	tap_eq(mmp_file_destroy(f), -EBUSY, "%s: a mapped file cannot go", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	tap_eq(mmp_file_destroy(f), 0, "%s: unmapped, it can", arch);
}

/* A shared mapping writes the file: the file, other spaces and fork see it. */
static void test_shared(const char *arch)
{
	struct mmp_space *a = new_space(phys, arch), *b = new_space(phys, arch);
	struct mmp_file *f = new_file(32 * P, 0, 2);
	uint8_t want[32 * P], page[P];
	struct mmp_counters before, d;
	struct mmp_cpu *ca, *cb;
	uint64_t x, y;

	pattern(want, sizeof(want), 2);
	mmp_cpu_attach(a, &ca);
	mmp_cpu_attach(b, &cb);
	tap_eq(mmp_mmap_file(a, 0, 32 * P, RW, MMP_MAP_SHARED, f, 0, &x), 0, "%s: map shared", arch);
	tap_eq(mmp_mmap_file(b, 0, 16 * P, MMP_PROT_READ, MMP_MAP_SHARED, f, 16 * P, &y), 0,
	       "%s: map the second half read-only in another space", arch);
	tap_ok(read_is(ca, x + 20 * P, want + 20 * P, P), "%s: read", arch);
	mmp_space_counters(a, &before);
	memset(page, 0x77, P);
	tap_eq(mmp_write(ca, x + 20 * P, page, P), 0, "%s: write a clean mapped page", arch);
	counters_since(a, &before, &d);
	tap_eq(d.v[MMP_C_FAULT_MKWRITE], 1, "%s: page_mkwrite dirtied it in place", arch);
	tap_eq(d.v[MMP_C_FAULT_FILE_COW], 0, "%s: no copy", arch);
	tap_ok(file_is(f, 20 * P, page, P), "%s: the file has the write", arch);
	tap_ok(read_is(cb, y + 4 * P, page, P), "%s: the other space sees it", arch);
	mmp_space_counters(a, &before);
	tap_eq(mmp_write(ca, x + 2 * P, page, P), 0, "%s: write an unmapped page", arch);
	counters_since(a, &before, &d);
	tap_eq(d.v[MMP_C_FAULT_FILE], 1, "%s: do_shared_fault mapped it", arch);
	tap_eq(d.v[MMP_C_FAULT_MKWRITE], 0, "%s: already writable", arch);

	struct mmp_file_stat st;

	mmp_file_stat(f, &st);
	tap_eq(st.nr_mapped_vmas, 2, "%s: two VMAs in i_mmap", arch);
	tap_eq(st.nr_dirty, 32, "%s: the folio written through the file is dirty", arch);

	/* fork: the child's shared VMA is not copied; its faults find the same folios. */
	struct mmp_space *c;
	struct mmp_cpu *cc;

	mmp_space_counters(a, &before);
	tap_eq(mmp_fork(a, &c), 0, "%s: fork", arch);
	tap_eq(stat_of(c).rss_file_pages, 0, "%s: copy_page_range skipped the shared VMA", arch);
	mmp_cpu_attach(c, &cc);
	memset(page, 0x99, P);
	tap_eq(mmp_write(cc, x + 3 * P, page, P), 0, "%s: the child writes", arch);
	tap_ok(read_is(ca, x + 3 * P, page, P), "%s: the parent sees the child's write", arch);
	tap_eq(mmp_space_verify(a), 0, "%s: verifies", arch);
	mmp_cpu_detach(cc);
	mmp_space_destroy(c);
	mmp_cpu_detach(ca);
	mmp_space_destroy(a);
	memset(page, 0x77, P);
	tap_ok(read_is(cb, y + 4 * P, page, P), "%s: the write outlives the writer", arch);
	mmp_cpu_detach(cb);
	mmp_space_destroy(b);
	tap_eq(mmp_file_destroy(f), 0, "%s: destroy", arch);
}

/* MAP_SHARED|MAP_ANONYMOUS and a memfd: shared across fork, alive while mapped. */
static void test_shared_anon(const char *arch)
{
	struct mmp_space *p = new_space(phys, arch), *c;
	struct mmp_cpu *cp, *cc;
	uint8_t page[P], got[P];
	uint64_t addr;

	mmp_cpu_attach(p, &cp);
	tap_eq(mmp_mmap(p, 0, 8 * P, RW, MMP_MAP_SHARED, &addr), 0, "%s: shared anonymous", arch);
	tap_eq(mmp_fork(p, &c), 0, "%s: fork", arch);
	mmp_cpu_attach(c, &cc);
	memset(page, 0x42, P);
	tap_eq(mmp_write(cc, addr + P, page, P), 0, "%s: the child writes", arch);
	tap_ok(read_is(cp, addr + P, page, P), "%s: the parent reads it", arch);
	tap_eq(stat_of(c).rss_shmem_pages, 1, "%s: RssShmem in the child", arch);
	tap_eq(stat_of(p).rss_shmem_pages, 1, "%s: and in the parent", arch);
	mmp_cpu_detach(cc);
	tap_eq(mmp_space_destroy(c), 0, "%s: the child exits", arch);
	tap_ok(read_is(cp, addr + P, page, P), "%s: the write outlives it", arch);
	tap_eq(mmp_madvise(p, addr, 8 * P, MMP_MADV_FREE), -EINVAL,
	       "%s: MADV_FREE of shared memory is EINVAL", arch);
	tap_eq(mmp_madvise(p, addr, 8 * P, MMP_MADV_DONTNEED), 0, "%s: MADV_DONTNEED", arch);
	tap_ok(read_is(cp, addr + P, page, P), "%s: the shmem folio kept the data", arch);
	tap_eq(mmp_reclaim(p), 0, "%s: reclaim", arch);
	tap_ok(read_is(cp, addr + P, page, P), "%s: shmem stays resident without swap", arch);

	/* memfd: the file handle, two spaces, the creator gone. */
	struct mmp_file *m;
	struct mmp_space *q = new_space(phys, arch);
	struct mmp_cpu *cq;
	uint64_t a1, a2;

	tap_eq(mmp_memfd_create(phys, 0, &m), 0, "%s: memfd", arch);
	tap_eq(mmp_file_truncate(m, 4 * P), 0, "%s: ftruncate", arch);
	mmp_cpu_attach(q, &cq);
	tap_eq(mmp_mmap_file(p, 0, 4 * P, RW, MMP_MAP_SHARED, m, 0, &a1), 0, "%s: map it", arch);
	tap_eq(mmp_mmap_file(q, 0, 4 * P, RW, MMP_MAP_SHARED, m, 0, &a2), 0, "%s: map it again",
	       arch);
	memset(page, 0x17, P);
	tap_eq(mmp_write(cp, a1 + 2 * P, page, P), 0, "%s: write", arch);
	mmp_cpu_detach(cp);
	mmp_space_destroy(p);
	tap_ok(read_is(cq, a2 + 2 * P, page, P), "%s: the other space sees it after exit", arch);
	memset(got, 0, P);
	tap_ok(mmp_read(cq, a2 + 3 * P, got, P) == 0 && !got[0] && !got[P - 1],
	       "%s: a hole reads zeroes", arch);
	tap_eq(mmp_file_destroy(m), -EBUSY, "%s: still mapped", arch);
	tap_eq(mmp_space_verify(q), 0, "%s: verifies", arch);
	mmp_cpu_detach(cq);
	mmp_space_destroy(q);
	tap_eq(mmp_file_destroy(m), 0, "%s: destroy the memfd", arch);
}

/* Truncation: pages past the end go from every mapping; access there is SIGBUS. */
static void test_truncate(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file *f = new_file(4 * P, MMP_FILE_NO_LARGE_FOLIOS, 3);
	uint8_t want[4 * P], got[P], page[P];
	struct mmp_cpu *cpu;
	uint64_t sh, pr;

	pattern(want, sizeof(want), 3);
	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_mmap_file(s, 0, 4 * P, RW, MMP_MAP_SHARED, f, 0, &sh), 0, "%s: shared", arch);
	tap_eq(mmp_mmap_file(s, 0, 4 * P, RW, MMP_MAP_PRIVATE, f, 0, &pr), 0, "%s: private", arch);
	memset(page, 0xee, P);
	tap_eq(mmp_write(cpu, pr + 3 * P, page, P), 0, "%s: a private copy past the new end", arch);
	tap_ok(read_is(cpu, sh + 3 * P, want + 3 * P, P), "%s: map the last page shared", arch);
	tap_eq(mmp_file_truncate(f, P + P / 2), 0, "%s: truncate to 1.5 pages", arch);
	tap_eq(mmp_read(cpu, sh + 2 * P, got, 1), -EIO, "%s: past the end: SIGBUS", arch);
	tap_eq(mmp_read(cpu, pr + 3 * P, got, 1), -EIO, "%s: the private copy went too", arch);
	tap_ok(mmp_read(cpu, sh + P, got, P) == 0 && !memcmp(got, want + P, P / 2) &&
	       !got[P / 2] && !got[P - 1], "%s: the last page's tail reads zero", arch);
	tap_eq(counter(s, MMP_C_FAULT_SIGBUS), 2, "%s: two SIGBUS faults", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	tap_eq(mmp_file_truncate(f, 4 * P), 0, "%s: grow back", arch);
	tap_ok(mmp_read(cpu, sh + 3 * P, got, P) == 0 && !got[0], "%s: new pages read zero", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);
}

/*
 * A read fault past the end of the file is SIGBUS, but only after
 * fault-around: do_read_fault calls do_fault_around before ->fault, and
 * filemap_map_pages maps the cached pages of the window that lie inside
 * i_size. A 4-page file, an 8-page private mapping, a read of page 6.
 */
static void test_sigbus_fault_around(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file *f = new_file(4 * P, MMP_FILE_NO_LARGE_FOLIOS, 5);
	struct mmp_counters before, d;
	struct mmp_cpu *cpu;
	uint8_t got[1];
	uint64_t addr;

	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_mmap_file(s, 0, 8 * P, MMP_PROT_READ, MMP_MAP_PRIVATE, f, 0, &addr), 0,
	       "%s: 8 pages of a 4-page file", arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_read(cpu, addr + 6 * P, got, 1), -EIO, "%s: page 6: SIGBUS", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_FAULT_SIGBUS], 1, "%s: one SIGBUS fault", arch);
	tap_eq(d.v[MMP_C_FAULT_AROUND], 4, "%s: fault-around mapped the 4 pages of the file first",
	       arch);
	tap_eq(stat_of(s).rss_file_pages, 4, "%s: 4 pages count as RssFile", arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_read(cpu, addr + 3 * P, got, 1), 0, "%s: page 3 reads", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_FAULT_FILE], 0, "%s: ... without a fault", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);
}

/* Reclaim: clean file folios dropped, dirty ones written back first, nothing lost. */
static void test_reclaim(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file *f = new_file(32 * P, MMP_FILE_NO_LARGE_FOLIOS, 4);
	uint8_t want[32 * P], page[P];
	struct mmp_counters before, d;
	struct mmp_file_stat st;
	struct mmp_cpu *cpu;
	uint64_t addr;

	pattern(want, sizeof(want), 4);
	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_mmap_file(s, 0, 32 * P, RW, MMP_MAP_SHARED, f, 0, &addr), 0, "%s: map", arch);
	for (int i = 0; i < 32; i++)
		must(read_is(cpu, addr + i * P, want + i * P, P), "%s: read page %d", arch, i);
	memset(page, 0x3c, P);
	tap_eq(mmp_write(cpu, addr + 7 * P, page, P), 0, "%s: dirty one page", arch);
	memcpy(want + 7 * P, page, P);
	mmp_space_counters(s, &before);
	tap_eq(mmp_reclaim(s), 0, "%s: reclaim", arch);
	counters_since(s, &before, &d);
	/* The file's own write left all 32 dirty: each is written, then dropped. */
	tap_eq(d.v[MMP_C_FILE_WRITEBACK], 32, "%s: 32 pages written back", arch);
	tap_eq(d.v[MMP_C_FILE_RECLAIMED], 32, "%s: 32 pages dropped", arch);
	mmp_file_stat(f, &st);
	tap_eq(st.nrpages, 0, "%s: the page cache is empty", arch);
	tap_eq(stat_of(s).rss_file_pages, 0, "%s: nothing mapped", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	mmp_space_counters(s, &before);
	tap_ok(read_is(cpu, addr, want, sizeof(want)), "%s: every byte comes back", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_PGCACHE_ADD], 32, "%s: read in again", arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_reclaim(s), 0, "%s: reclaim again", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_FILE_WRITEBACK], 0, "%s: clean: nothing to write", arch);
	tap_eq(d.v[MMP_C_FILE_RECLAIMED], 32, "%s: all dropped", arch);
	tap_eq(mmp_madvise(s, addr, 32 * P, MMP_MADV_FREE), -EINVAL, "%s: MADV_FREE: EINVAL", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);
}

/* The bad input of files and file mappings, each with the space left valid. */
static void test_errors(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file *ro, *f = new_file(4 * P, 0, 5);
	uint64_t addr;

	tap_eq(mmp_file_create(phys, 0, MMP_FILE_RDONLY, &ro), 0, "%s: a read-only handle", arch);
	tap_eq(mmp_mmap_file(s, 0, P, RW, MMP_MAP_SHARED, f, 100, &addr), -EINVAL,
	       "%s: unaligned offset", arch);
	tap_eq(mmp_mmap_file(s, 0, P, RW, 0, f, 0, &addr), -EINVAL, "%s: neither type", arch);
	tap_eq(mmp_mmap_file(s, 0, P, RW, MMP_MAP_SHARED | MMP_MAP_PRIVATE, f, 0, &addr), -EINVAL,
	       "%s: both types", arch);
	tap_eq(mmp_mmap_file(s, 0, 0, RW, MMP_MAP_SHARED, f, 0, &addr), -EINVAL, "%s: len 0", arch);
	tap_eq(mmp_mmap_file(s, 0, P, RW, MMP_MAP_SHARED, NULL, 0, &addr), -EINVAL, "%s: no file",
	       arch);
	tap_eq(mmp_mmap_file(s, 0, P, RW, MMP_MAP_SHARED, ro, 0, &addr), -EACCES,
	       "%s: shared writable of a read-only handle", arch);
	tap_eq(mmp_mmap_file(s, 0, P, RW, MMP_MAP_PRIVATE, ro, 0, &addr), 0,
	       "%s: private writable of it is fine", arch);
	tap_eq(mmp_mmap_file(s, 0, P, MMP_PROT_READ, MMP_MAP_SHARED, ro, 0, &addr), 0,
	       "%s: shared read-only of it is fine", arch);
	tap_eq(mmp_mprotect(s, addr, P, RW), -EACCES, "%s: but not made writable", arch);
	tap_eq(mmp_mmap_file(s, 0, P, MMP_PROT_READ, MMP_MAP_SHARED, f, MMP_FILE_MAX_SIZE, &addr),
	       -EOVERFLOW, "%s: offset past the largest file", arch);
	tap_eq(mmp_file_write(ro, 0, "x", 1), -EBADF, "%s: write a read-only handle", arch);
	tap_eq(mmp_file_truncate(ro, P), -EINVAL, "%s: truncate it", arch);
	tap_eq(mmp_file_truncate(f, MMP_FILE_MAX_SIZE + 1), -EFBIG, "%s: too large", arch);
	tap_eq(mmp_file_write(f, MMP_FILE_MAX_SIZE, "x", 1), -EFBIG, "%s: write past the limit",
	       arch);
	tap_eq(mmp_file_create(phys, 0, MMP_FILE_HUGE_ALWAYS, &ro), -EINVAL,
	       "%s: huge= on a regular file", arch);
	tap_eq(mmp_memfd_create(phys, MMP_FILE_HUGE_ALWAYS | MMP_FILE_HUGE_ADVISE, &ro), -EINVAL,
	       "%s: two huge= policies", arch);
	tap_eq(mmp_msync(s, 1, P, MMP_MS_SYNC), -EINVAL, "%s: msync unaligned", arch);
	tap_eq(mmp_msync(s, addr, P, MMP_MS_SYNC | MMP_MS_ASYNC), -EINVAL, "%s: msync both", arch);
	tap_eq(mmp_msync(s, addr, P, MMP_MS_SYNC), 0, "%s: msync", arch);
	tap_eq(mmp_msync(s, addr + 64 * P, P, MMP_MS_SYNC), -ENOMEM, "%s: msync a hole", arch);
	tap_eq(mmp_mmap(s, 0, P, RW, MMP_MAP_SHARED | MMP_MAP_DROPPABLE, &addr), -EINVAL,
	       "%s: shared droppable", arch);
	tap_eq(mmp_mmap(s, 0, P, RW, MMP_MAP_SHARED | MMP_MAP_GROWSDOWN, &addr), -EINVAL,
	       "%s: a shared stack", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies after all of it", arch);
	mmp_space_destroy(s);
	tap_eq(mmp_file_destroy(f), 0, "%s: destroy", arch);
	tap_eq(mmp_file_destroy(ro), 0, "%s: destroy the read-only one", arch);
}

/*
 * Large page-cache folios: what a write makes, what readahead makes, how
 * fault-around maps them, what truncation keeps of one it cuts, and how
 * reclaim unmaps one: one PTE at a time up to 6.18, in batches from 7.0.
 */
static void test_large(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file *f = new_file(4 * MiB, 0, 6);
	struct mmp_counters before, d;
	struct mmp_file_stat st;
	struct mmp_cpu *cpu;
	uint8_t page[P];
	uint64_t addr;

	mmp_file_stat(f, &st);
	tap_eq(st.nr_folios[9], 2, "%s: a 4 MiB write makes two PMD-size folios", arch);
	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_mmap_file(s, 0, 4 * MiB, RW, MMP_MAP_SHARED, f, 0, &addr), 0, "%s: map", arch);
	tap_eq(addr % MMP_PMD_SIZE, 0, "%s: placed PMD aligned (thp_get_unmapped_area)", arch);
	mmp_space_counters(s, &before);
	tap_ok(mmp_read(cpu, addr + 20 * P, page, P) == 0, "%s: read", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_FAULT_AROUND], 15, "%s: fault-around mapped 16 pages of the folio", arch);
	tap_eq(stat_of(s).rss_file_pages, 16, "%s: RssFile 16", arch);

	/*
	 * Reclaim unmaps the 16 PTEs one at a time (6.18; on arm64 the first
	 * clear unfolds the contpte block that fault-around folded, one more
	 * flush)...
	 */
	tap_eq(mmp_madvise(s, addr, 4 * MiB, MMP_MADV_HUGEPAGE), 0, "%s: MADV_HUGEPAGE", arch);
	mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(6, 18, 0));
	mmp_space_counters(s, &before);
	tap_eq(mmp_reclaim(s), 0, "%s: reclaim under 6.18", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_TLB_FLUSH_RANGE], 16 + d.v[MMP_C_CONTPTE_UNFOLD],
	       "%s: 6.18: one flush per PTE", arch);
	tap_eq(d.v[MMP_C_FILE_RECLAIMED], 512, "%s: the mapped folio went", arch);
	mmp_file_stat(f, &st);
	tap_eq(st.nrpages, 512, "%s: the folio no space mapped stays cached", arch);

	/* A cold read in a MADV_HUGEPAGE mapping reads two PMD folios ahead. */
	mmp_space_counters(s, &before);
	tap_ok(mmp_read(cpu, addr + 5 * P, page, P) == 0, "%s: cold read", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_PGCACHE_ADD], 512, "%s: one PMD folio read in (the other was cached)",
	       arch);
	tap_eq(d.v[MMP_C_FOLIO_ALLOC_O9], 1, "%s: of order 9", arch);
	tap_eq(d.v[MMP_C_FAULT_AROUND], 0, "%s: fault-around found nothing cached yet", arch);
	mmp_file_stat(f, &st);
	tap_eq(st.nr_folios[9], 2, "%s: both halves cached as PMD folios", arch);
	mmp_space_counters(s, &before);
	tap_ok(mmp_read(cpu, addr + 9 * P, page, P) == 0, "%s: read a neighbour", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_FAULT_AROUND], 14, "%s: fault-around maps the other 14 of its window",
	       arch);

	/* ...and in one batch from 7.0. */
	mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(7, 0, 0));
	mmp_space_counters(s, &before);
	tap_eq(mmp_reclaim(s), 0, "%s: reclaim under 7.0", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_TLB_FLUSH_RANGE], 1, "%s: 7.0: one flush for the batch", arch);
	tap_eq(d.v[MMP_C_CONTPTE_UNFOLD], 0, "%s: 7.0: no unfold", arch);
	tap_ok(mmp_read(cpu, addr + 5 * P, page, P) == 0, "%s: read it in again", arch);

	/* Truncation into the middle of a PMD folio keeps it, zeroed past the end. */
	tap_eq(mmp_file_truncate(f, MiB + 100), 0, "%s: truncate to 1 MiB + 100", arch);
	mmp_file_stat(f, &st);
	tap_eq(st.nr_folios[9], 1, "%s: the folio past the end went, the straddling one stayed",
	       arch);
	tap_eq(st.nrpages, 512, "%s: 512 pages cached", arch);
	tap_ok(mmp_read(cpu, addr + MiB + 100, page, 1) == 0 && page[0] == 0,
	       "%s: the byte past the end reads zero", arch);
	tap_eq(mmp_read(cpu, addr + MiB + P, page, 1), -EIO, "%s: the next page is SIGBUS", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);

	/* Read-around in order-0 folios: 32 pages from 16 below the fault. */
	s = new_space(phys, arch);
	mmp_cpu_attach(s, &cpu);
	f = new_file(0, 0, 0);
	tap_eq(mmp_file_truncate(f, 256 * P), 0, "%s: a sparse file", arch);
	tap_eq(mmp_mmap_file(s, 0, 256 * P, MMP_PROT_READ, MMP_MAP_PRIVATE, f, 0, &addr), 0,
	       "%s: map", arch);
	mmp_space_counters(s, &before);
	tap_ok(mmp_read(cpu, addr + 100 * P, page, 1) == 0 && page[0] == 0, "%s: read", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_PGCACHE_ADD], 32, "%s: 32 pages read around", arch);
	tap_eq(d.v[MMP_C_FOLIO_ALLOC_O0], 32, "%s: order-0 folios", arch);
	tap_eq(d.v[MMP_C_FAULT_AROUND], 0, "%s: the first fault finds nothing to map around", arch);
	mmp_space_counters(s, &before);
	tap_ok(mmp_read(cpu, addr + 97 * P, page, 1) == 0, "%s: read a neighbour", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_FAULT_AROUND], 14, "%s: now fault-around maps the 14 pages not yet mapped",
	       arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);
}

/*
 * Readahead's large folios stop at the first page already cached, and the
 * rest of the window is read in order-0 folios (page_cache_ra_order falls back
 * to do_page_cache_ra); they are not made smaller to fit between cached
 * pages. A 6.18 host, ext4: with pages 224 on cached, a read at index 0 of a
 * MADV_HUGEPAGE mapping caches 0-223 as order-0 folios; with nothing cached,
 * as two PMD-size ones.
 */
static void test_readahead_fallback(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file *f = new_file(0, 0, 0);
	struct mmp_counters before, d;
	struct mmp_file_stat st;
	struct mmp_cpu *cpu;
	uint64_t plain, huge, large = 0;
	uint8_t byte;

	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_file_truncate(f, 4 * MiB), 0, "%s: a sparse 4 MiB file", arch);
	tap_eq(mmp_mmap_file(s, 0, 4 * MiB, MMP_PROT_READ, MMP_MAP_SHARED, f, 0, &plain), 0,
	       "%s: map it", arch);
	tap_ok(mmp_read(cpu, plain + 300 * P, &byte, 1) == 0, "%s: read-around at page 300", arch);
	mmp_file_stat(f, &st);
	tap_eq(st.nrpages, 32, "%s: pages 284-315 cached", arch);

	tap_eq(mmp_mmap_file(s, 0, 4 * MiB, MMP_PROT_READ, MMP_MAP_PRIVATE, f, 0, &huge), 0,
	       "%s: map it again", arch);
	tap_eq(mmp_madvise(s, huge, 4 * MiB, MMP_MADV_HUGEPAGE), 0, "%s: MADV_HUGEPAGE", arch);
	mmp_space_counters(s, &before);
	tap_ok(mmp_read(cpu, huge, &byte, 1) == 0, "%s: read page 0 there", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_PGCACHE_ADD], 1024 - 32, "%s: the two PMD ranges read in", arch);
	tap_eq(d.v[MMP_C_FOLIO_ALLOC_O0], 1024 - 32, "%s: all in order-0 folios", arch);
	mmp_file_stat(f, &st);
	for (unsigned int o = 1; o <= 9; o++)
		large += st.nr_folios[o];
	tap_eq(large, 0, "%s: no large folio cached", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);
}

/*
 * Private file memory through fork, DONTNEED, PAGEOUT and mremap; shmem's
 * huge=always policy.
 */
static void test_private_paths(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *c;
	struct mmp_file *f = new_file(16 * P, MMP_FILE_NO_LARGE_FOLIOS, 7);
	uint8_t want[16 * P], page[P];
	struct mmp_counters before, d;
	struct mmp_file_stat st;
	struct mmp_cpu *cpu, *cc;
	uint64_t addr, moved;

	pattern(want, sizeof(want), 7);
	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_mmap_file(s, 0, 16 * P, RW, MMP_MAP_PRIVATE, f, 0, &addr), 0, "%s: map", arch);
	memset(page, 0x31, P);
	tap_eq(mmp_write(cpu, addr + 2 * P, page, P), 0, "%s: a private copy", arch);
	tap_ok(read_is(cpu, addr + 3 * P, want + 3 * P, P), "%s: a file page mapped", arch);

	/* fork copies the private file VMA's entries: the copy and the file page both. */
	tap_eq(mmp_fork(s, &c), 0, "%s: fork", arch);
	tap_eq(stat_of(c).rss_anon_pages, 1, "%s: the child maps the private copy", arch);
	tap_ok(stat_of(c).rss_file_pages >= 1, "%s: and file pages", arch);
	mmp_cpu_attach(c, &cc);
	tap_ok(read_is(cc, addr + 2 * P, page, P), "%s: the child reads the copy", arch);
	mmp_space_counters(c, &before);
	tap_eq(mmp_write(cc, addr + 2 * P, want, P), 0, "%s: the child writes it", arch);
	counters_since(c, &before, &d);
	tap_eq(d.v[MMP_C_FAULT_COW], 1, "%s: an anonymous COW, not a file one", arch);
	tap_ok(read_is(cpu, addr + 2 * P, page, P), "%s: the parent keeps its copy", arch);
	mmp_cpu_detach(cc);
	mmp_space_destroy(c);

	/* DONTNEED drops the copy: the file shows through again; the cache keeps its folios. */
	mmp_file_stat(f, &st);
	tap_eq(mmp_madvise(s, addr, 16 * P, MMP_MADV_DONTNEED), 0, "%s: MADV_DONTNEED", arch);
	tap_ok(read_is(cpu, addr + 2 * P, want + 2 * P, P), "%s: the file's page is back", arch);
	tap_eq(stat_of(s).rss_anon_pages, 0, "%s: no anonymous page left", arch);
	{
		struct mmp_file_stat st2;

		mmp_file_stat(f, &st2);
		tap_eq(st2.nrpages, st.nrpages, "%s: the page cache kept every folio", arch);
	}
	/* PAGEOUT of pages this space alone maps: written back, dropped, read in again. */
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, addr, 16 * P, MMP_MADV_PAGEOUT), 0, "%s: MADV_PAGEOUT", arch);
	counters_since(s, &before, &d);
	tap_ok(d.v[MMP_C_FILE_RECLAIMED] > 0, "%s: file pages dropped", arch);
	tap_ok(read_is(cpu, addr, want, sizeof(want)), "%s: and read back whole", arch);

	/* mremap moves a file mapping with its offset. */
	tap_eq(mmp_mremap(s, addr + 4 * P, 4 * P, 8 * P, MMP_MREMAP_MAYMOVE, 0, &moved), 0,
	       "%s: mremap part of it elsewhere, grown", arch);
	tap_ok(read_is(cpu, moved, want + 4 * P, 4 * P), "%s: the moved part is the same bytes", arch);
	tap_ok(read_is(cpu, moved + 4 * P, want + 8 * P, 4 * P),
	       "%s: the grown part maps the file on from there", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);

	/* tmpfs huge=always: a PMD-size shmem folio, mapped by PTEs. */
	struct mmp_file *m;

	s = new_space(phys, arch);
	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_memfd_create(phys, MMP_FILE_HUGE_ALWAYS, &m), 0, "%s: memfd, huge=always", arch);
	tap_eq(mmp_file_truncate(m, 4 * MiB), 0, "%s: 4 MiB", arch);
	tap_eq(mmp_mmap_file(s, 0, 4 * MiB, RW, MMP_MAP_SHARED, m, 0, &addr), 0, "%s: map", arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_write(cpu, addr + 3 * P, page, P), 0, "%s: write", arch);
	counters_since(s, &before, &d);
	tap_eq(d.v[MMP_C_FOLIO_ALLOC_O9], 1, "%s: a PMD-size shmem folio", arch);
	tap_eq(stat_of(s).rss_shmem_pages, 1, "%s: one page of it mapped", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(m);
}

/*
 * MADV_PAGEOUT (or MADV_COLD) over part of a large page-cache folio that one
 * space alone maps splits it first (madvise_cold_or_pageout_pte_range:
 * split_folio), and the split of a file folio unmaps it everywhere and maps
 * nothing back. A 6.18 host, a 256 KiB write to an ext4 file: one order-6
 * folio; with its 64 pages mapped and the file written back, MADV_PAGEOUT of
 * 2 of them left none mapped and all 64 cached as order-0 folios. A folio
 * another space maps too is left whole (folio_maybe_mapped_shared), and so
 * is a dirty one, whose buffers cannot be released (filemap_release_folio:
 * split_failed on the host, the folio whole and mapped).
 */
static void test_partial_pageout(const char *arch, int advice)
{
	struct mmp_space *s = new_space(phys, arch), *other = new_space(phys, arch);
	struct mmp_file *f = new_file(64 * P, 0, 9);
	struct mmp_counters before, d;
	struct mmp_mthp_stats m0, m1;
	struct mmp_cpu *cpu, *ocpu;
	struct mmp_file_stat st;
	uint64_t addr, oaddr;
	uint8_t want[64 * P];

	pattern(want, sizeof(want), 9);
	mmp_file_stat(f, &st);
	tap_ok(st.nrpages == 64 && st.nr_folios[6] == 1, "%s: one order-6 folio in the cache", arch);
	mmp_cpu_attach(s, &cpu);
	mmp_cpu_attach(other, &ocpu);
	tap_eq(mmp_mmap_file(s, 0, 64 * P, MMP_PROT_READ, MMP_MAP_SHARED, f, 0, &addr), 0,
	       "%s: map it", arch);
	tap_ok(read_is(cpu, addr, want, sizeof(want)), "%s: read all 64 pages", arch);
	tap_eq(stat_of(s).rss_file_pages, 64, "%s: all mapped", arch);

	/* Another space maps a page of it: left whole, and mapped. */
	tap_eq(mmp_mmap_file(other, 0, P, MMP_PROT_READ, MMP_MAP_SHARED, f, 0, &oaddr), 0,
	       "%s: another space maps its first page", arch);
	tap_ok(read_is(ocpu, oaddr, want, P), "%s: and reads it", arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, addr + 4 * P, 2 * P, advice), 0, "%s: advice %d over 2 pages", arch,
	       advice);
	counters_since(s, &before, &d);
	tap_ok(d.v[MMP_C_FOLIO_SPLIT] == 0 && stat_of(s).rss_file_pages == 64,
	       "%s: a shared folio is not split, and stays mapped", arch);
	tap_eq(mmp_munmap(other, oaddr, P), 0, "%s: the other space unmaps it", arch);

	/* Ours alone now, but dirty from the write. */
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, addr + 4 * P, 2 * P, advice), 0, "%s: advice %d, dirty", arch, advice);
	counters_since(s, &before, &d);
	tap_ok(d.v[MMP_C_FOLIO_SPLIT] == 0 && stat_of(s).rss_file_pages == 64,
	       "%s: a dirty folio is not split, and stays mapped", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);

	/* Written back: split, and unmapped whole. */
	tap_eq(mmp_msync(s, addr, 64 * P, MMP_MS_SYNC), 0, "%s: msync writes it back", arch);
	mmp_space_counters(s, &before);
	mmp_space_mthp_stats(s, &m0);
	tap_eq(mmp_madvise(s, addr + 4 * P, 2 * P, advice), 0, "%s: advice %d again", arch, advice);
	counters_since(s, &before, &d);
	mmp_space_mthp_stats(s, &m1);
	tap_eq(d.v[MMP_C_FOLIO_SPLIT], 1, "%s: the folio split", arch);
	tap_eq(m1.split[6] - m0.split[6], 1, "%s: mTHP split counted at order 6", arch);
	tap_eq(stat_of(s).rss_file_pages, 0, "%s: none of its pages stays mapped", arch);
	mmp_file_stat(f, &st);
	tap_ok(st.nrpages == 64 && st.nr_folios[0] == 64 && st.nr_folios[6] == 0,
	       "%s: all 64 cached, order 0 (%llu order-0 folios)", arch,
	       (unsigned long long)st.nr_folios[0]);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);

	/* The next access maps back what fault-around finds: order-0 folios now. */
	tap_ok(read_is(cpu, addr + 20 * P, want + 20 * P, P), "%s: page 20 reads the same", arch);
	tap_eq(stat_of(s).rss_file_pages, 16, "%s: fault-around maps 16 pages", arch);
	tap_ok(read_is(cpu, addr, want, sizeof(want)), "%s: and every page reads the same", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies after", arch);
	mmp_cpu_detach(ocpu);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(other);
	mmp_space_destroy(s);
	mmp_file_destroy(f);
}

/* What the introspection calls say of file and shared mappings: smaps, pagemap, VMA info. */
static void test_introspect(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file *f = new_file(8 * P, MMP_FILE_NO_LARGE_FOLIOS, 8);
	struct mmp_vma_info info;
	struct mmp_cpu *cpu;
	uint64_t sh, pr, anon, pm[2];
	uint8_t page[P];
	static char text[1 << 16];
	char want[64];

	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_mmap_file(s, 0, 4 * P, RW, MMP_MAP_SHARED, f, 4 * P, &sh), 0, "%s: shared", arch);
	tap_eq(mmp_mmap_file(s, 0, 4 * P, RW, MMP_MAP_PRIVATE, f, 0, &pr), 0, "%s: private", arch);
	tap_eq(mmp_mmap(s, 0, 4 * P, RW, MMP_MAP_SHARED, &anon), 0, "%s: shared anonymous", arch);
	must(mmp_read(cpu, sh, page, 1) == 0 && mmp_write(cpu, pr, page, 1) == 0 &&
	     mmp_read(cpu, pr + P, page, 1) == 0 && mmp_write(cpu, anon, page, 1) == 0,
	     "%s: touch them", arch);
	tap_eq(mmp_space_vma_info(s, sh, &info), 0, "%s: vma_info of the shared one", arch);
	tap_ok((info.flags & (MMP_VMA_SHARED | MMP_VMA_FILE | MMP_VMA_MAYWRITE)) ==
	       (MMP_VMA_SHARED | MMP_VMA_FILE | MMP_VMA_MAYWRITE) && info.pgoff == 4 &&
	       info.file_id != 0 && info.anonymous == 0 && info.rss == 4 * P,
	       "%s: shared, file, page 4 on, no anonymous bytes, all 4 pages resident (fault-around)",
	       arch);
	tap_eq(mmp_space_vma_info(s, pr, &info), 0, "%s: vma_info of the private one", arch);
	tap_ok(!(info.flags & MMP_VMA_SHARED) && (info.flags & MMP_VMA_FILE) && info.pgoff == 0 &&
	       info.anonymous == P, "%s: private, one anonymous (copied) page", arch);
	tap_eq(mmp_space_pagemap(s, pr, 2, pm), 2, "%s: pagemap of two pages", arch);
	tap_ok((pm[0] & MMP_PM_PRESENT) && !(pm[0] & MMP_PM_FILE) && (pm[1] & MMP_PM_FILE),
	       "%s: the copy is anonymous, the file page PM_FILE", arch);
	tap_ok(mmp_space_smaps_buf(s, text, sizeof(text)) > 0, "%s: smaps", arch);
	snprintf(want, sizeof(want), "%08llx-%08llx rw-s 00004000", (unsigned long long)sh,
		 (unsigned long long)(sh + 4 * P));
	tap_ok(strstr(text, want) != NULL, "%s: smaps shows %s", arch, want);
	tap_ok(strstr(text, "/dev/zero (deleted)") && strstr(text, "mmp_file:") &&
	       strstr(text, "rd wr sh mr mw me ms"), "%s: smaps names the shared and file VMAs", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_file_destroy(f);
}

int main(void)
{
	const char *arch;

	tap_require(mmp_phys_create(256 * MiB, &phys) == 0, "create phys");
	for_each_arch(i, arch) {
		test_private(arch);
		test_shared(arch);
		test_shared_anon(arch);
		test_truncate(arch);
		test_sigbus_fault_around(arch);
		test_reclaim(arch);
		test_errors(arch);
		test_large(arch);
		test_readahead_fallback(arch);
		test_private_paths(arch);
		test_partial_pageout(arch, MMP_MADV_PAGEOUT);
		test_partial_pageout(arch, MMP_MADV_COLD);
		test_introspect(arch);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "nothing left on the phys");
	return tap_done();
}
