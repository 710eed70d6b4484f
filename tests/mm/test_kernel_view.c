/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the kernel shows of a process, rule by rule, where the differential
 * test's comparison of smaps, status, pagemap and faults with the host found
 * the library apart from Linux 6.18:
 *  - THPeligible asks thp_vma_suitable_order(): a VMA no PMD-size folio fits
 *    in is not eligible, and a regular file's VMA never is (its large folios
 *    are the page cache's, not THP);
 *  - a write through a shared mapping dirties the folio, shmem's too
 *    (fault_dirty_shared_page);
 *  - a file fault installs its PTE table only with a page to map: SIGBUS past
 *    the end of the file leaves none (finish_fault's pmd_install);
 *  - populating (MAP_POPULATE, MADV_POPULATE_*) faults only what is not mapped
 *    as asked (__get_user_pages: follow_page_mask first), so a fault-around
 *    that mapped the rest costs no more faults;
 *  - min_flt counts each fault handled, GUP's too, not those that failed;
 *  - splitting a dirty PMD makes the folio dirty (__split_huge_pmd_locked);
 *  - a new anonymous THP's PMD is dirty even when a read fault made it in a
 *    read-only VMA (map_anon_folio_pmd's pmd_mkdirty), where a small page's
 *    PTE is dirty only if the VMA is writable (do_anonymous_page);
 *  - shrinking a shmem file dirties the folio it cuts in two (shmem_undo_range's
 *    folio_mark_dirty before truncate_inode_partial_folio), even when only
 *    read faults brought it in;
 *  - pagemap calls the huge zero page a file page (PM_FILE: pagemap_pmd_range
 *    takes the PMD's page as it is) and the small one nothing (vm_normal_page);
 *  - MADV_PAGEOUT unmaps a shmem folio even with no swap, which keeps a
 *    written one in the page cache and drops a clean one (nothing to write),
 *    and leaves anonymous memory mapped (add_to_swap fails before the unmap).
 */
#include <errno.h>
#include <string.h>

#include <mmprim/introspect.h>

#include "util.h"

#define PG	MMP_PAGE_SIZE
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)

static struct mmp_phys *phys;

/* @len bytes at a PMD boundary, with nothing else in their PMDs. */
static uint64_t map_pmd_aligned(struct mmp_space *s, uint64_t len)
{
	uint64_t a = map(s, len + 2 * MMP_PMD_SIZE, RW), got;

	must(mmp_munmap(s, a, len + 2 * MMP_PMD_SIZE) == 0, "munmap");
	a = (a + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
	must(mmp_mmap(s, a, len, RW, MMP_MAP_FIXED, &got) == 0, "mmap fixed");
	return a;
}

static void check_thp_eligible(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file *f;
	struct mmp_vma_info v;
	uint64_t a, got;

	a = map_pmd_aligned(s, 4 * MiB);
	must(mmp_madvise(s, a, 4 * MiB, MMP_MADV_HUGEPAGE) == 0, "MADV_HUGEPAGE");
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_ok(v.thp_orders & (1u << 9), "%s: a 4 MiB MADV_HUGEPAGE VMA is THPeligible", arch);
	/* Cut it to 1 MiB: no 2 MiB folio fits any more. */
	must(mmp_munmap(s, a + MiB, 3 * MiB) == 0, "munmap");
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_eq(v.thp_orders, 0, "%s: a 1 MiB MADV_HUGEPAGE VMA is not (thp_vma_suitable_order)", arch);
	must(mmp_munmap(s, a, MiB) == 0, "munmap");

	must(mmp_file_create(phys, 4 * MiB, 0, &f) == 0, "file");
	must(mmp_mmap_file(s, a, 4 * MiB, RW, MMP_MAP_SHARED | MMP_MAP_FIXED, f, 0, &got) == 0,
	     "mmap file");
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_eq(v.thp_orders, 0, "%s: a regular file's VMA is not THPeligible", arch);
	must(mmp_munmap(s, a, 4 * MiB) == 0, "munmap");
	must(mmp_file_destroy(f) == 0, "file destroy");
	tap_eq(mmp_space_verify(s), 0, "%s: THPeligible: verify", arch);
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_shared_write_dirties(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_addr_info q;
	struct mmp_vma_info v;
	struct mmp_cpu *cpu;
	struct mmp_file *f;
	uint8_t byte = 7;
	uint64_t a;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	must(mmp_memfd_create(phys, 0, &f) == 0, "memfd");
	must(mmp_file_truncate(f, 4 * PG) == 0, "ftruncate");
	must(mmp_mmap_file(s, 0, 4 * PG, RW, MMP_MAP_SHARED, f, 0, &a) == 0, "mmap memfd");
	must(mmp_read(cpu, a + PG, &byte, 1) == 0, "read");
	must(mmp_write(cpu, a, &byte, 1) == 0, "write");
	must(mmp_space_query(s, a, &q) == 0, "query");
	tap_ok(q.folio_flags & MMP_FOLIO_DIRTY, "%s: a write through a shared mapping dirties the "
	       "shmem folio", arch);
	must(mmp_space_query(s, a + PG, &q) == 0, "query");
	tap_ok(!(q.folio_flags & MMP_FOLIO_DIRTY), "%s: a read leaves its folio clean", arch);
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_ok(v.private_dirty == PG && v.private_clean == PG, "%s: smaps Private_Dirty %llu, "
	       "Private_Clean %llu", arch, (unsigned long long)v.private_dirty,
	       (unsigned long long)v.private_clean);
	/* A write populate of the page read dirties it too (a fault, or FOLL_TOUCH's set_page_dirty). */
	must(mmp_madvise(s, a + PG, PG, MMP_MADV_POPULATE_WRITE) == 0, "populate write");
	must(mmp_space_query(s, a + PG, &q) == 0, "query");
	tap_ok(q.folio_flags & MMP_FOLIO_DIRTY, "%s: MADV_POPULATE_WRITE dirties a page it finds",
	       arch);
	must(mmp_munmap(s, a, 4 * PG) == 0, "munmap");
	must(mmp_file_destroy(f) == 0, "memfd destroy");
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_sigbus_leaves_no_table(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_addr_info q;
	struct mmp_cpu *cpu;
	struct mmp_file *f;
	uint64_t a, got;
	uint8_t byte;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map_pmd_aligned(s, MMP_PMD_SIZE);
	must(mmp_munmap(s, a, MMP_PMD_SIZE) == 0, "munmap");
	must(mmp_memfd_create(phys, 0, &f) == 0, "memfd");
	must(mmp_file_truncate(f, PG) == 0, "ftruncate");
	must(mmp_mmap_file(s, a, 4 * PG, RW, MMP_MAP_SHARED | MMP_MAP_FIXED, f, 0, &got) == 0,
	     "mmap memfd");
	tap_eq(mmp_read(cpu, a + 2 * PG, &byte, 1), -EIO, "%s: a read past the end: SIGBUS", arch);
	must(mmp_space_query(s, a, &q) == 0, "query");
	tap_ok(q.leaf_level == -1 && q.entry[1] == 0,
	       "%s: the PMD stays empty: no PTE table for a fault that mapped nothing", arch);
	must(mmp_read(cpu, a, &byte, 1) == 0, "read in the file");
	must(mmp_space_query(s, a, &q) == 0, "query");
	tap_eq(q.leaf_level, 0, "%s: a fault that maps a page installs the table", arch);
	must(mmp_munmap(s, a, 4 * PG) == 0, "munmap");
	must(mmp_file_destroy(f) == 0, "memfd destroy");
	tap_eq(mmp_space_verify(s), 0, "%s: SIGBUS: verify", arch);
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_faults(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	static uint8_t buf[16 * 4096];
	struct mmp_cpu *cpu;
	struct mmp_file *f;
	uint64_t a, b, flt, pfns[2];
	uint8_t byte = 1;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map(s, 16 * PG, RW);
	flt = counter(s, MMP_C_MIN_FLT);
	must(mmp_madvise(s, a, 16 * PG, MMP_MADV_POPULATE_WRITE) == 0, "populate");
	tap_eq(counter(s, MMP_C_MIN_FLT) - flt, 16, "%s: MADV_POPULATE_WRITE of 16 pages: 16 faults",
	       arch);
	flt = counter(s, MMP_C_MIN_FLT);
	must(mmp_madvise(s, a, 16 * PG, MMP_MADV_POPULATE_READ) == 0, "populate");
	must(mmp_read(cpu, a, &byte, 1) == 0, "read");
	tap_eq(counter(s, MMP_C_MIN_FLT) - flt, 0, "%s: populating or reading mapped pages: none",
	       arch);
	must(mmp_mprotect(s, a, PG, MMP_PROT_READ) == 0, "mprotect");
	flt = counter(s, MMP_C_MIN_FLT);
	tap_eq(mmp_write(cpu, a, &byte, 1), -EFAULT, "%s: a write to a read-only page", arch);
	tap_eq(counter(s, MMP_C_MIN_FLT) - flt, 0, "%s: a fault that failed is not counted", arch);
	must(mmp_gup(s, a + PG, 1, true, pfns) == 1, "gup");
	must(mmp_unpin(s, pfns, 1) == 0, "unpin");
	b = map(s, 2 * PG, RW);
	flt = counter(s, MMP_C_MIN_FLT);
	must(mmp_gup(s, b, 2, true, pfns) == 2, "gup");
	tap_eq(counter(s, MMP_C_MIN_FLT) - flt, 2, "%s: GUP's faults count too", arch);
	must(mmp_unpin(s, pfns, 2) == 0, "unpin");

	/* A file in the page cache: one fault maps the 16 pages around it (fault-around). */
	memset(buf, 3, sizeof(buf));
	must(mmp_memfd_create(phys, 0, &f) == 0, "memfd");
	must(mmp_file_write(f, 0, buf, sizeof(buf)) == 0, "pwrite");
	flt = counter(s, MMP_C_MIN_FLT);
	must(mmp_mmap_file(s, 0, 16 * PG, MMP_PROT_READ, MMP_MAP_SHARED | MMP_MAP_POPULATE, f, 0,
			   &b) == 0, "mmap populate");
	tap_eq(counter(s, MMP_C_MIN_FLT) - flt, 1,
	       "%s: MAP_POPULATE of 16 cached file pages: one fault, the fault-around maps the rest",
	       arch);
	must(mmp_munmap(s, b, 16 * PG) == 0, "munmap");
	must(mmp_file_destroy(f) == 0, "memfd destroy");
	tap_eq(mmp_space_verify(s), 0, "%s: faults: verify", arch);
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_split_dirties(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_addr_info q;
	struct mmp_cpu *cpu;
	uint64_t a;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map_pmd_aligned(s, MMP_PMD_SIZE);
	must(mmp_madvise(s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE) == 0, "MADV_HUGEPAGE");
	must(mmp_memset(cpu, a, 1, PG) == 0, "write");
	must(mmp_space_query(s, a, &q) == 0 && q.leaf_level == 1, "a THP");
	tap_ok(!(q.folio_flags & MMP_FOLIO_DIRTY), "%s: a THP written through its PMD: the PMD is "
	       "dirty, the folio not yet", arch);
	/* mprotect of one page splits the PMD. */
	must(mmp_mprotect(s, a + PG, PG, MMP_PROT_READ) == 0, "mprotect");
	must(mmp_space_query(s, a + 2 * PG, &q) == 0 && q.leaf_level == 0, "split");
	tap_ok(q.folio_flags & MMP_FOLIO_DIRTY, "%s: splitting the dirty PMD dirtied the folio", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: split: verify", arch);
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_thp_read_fault_dirty(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_addr_info q;
	struct mmp_vma_info v;
	struct mmp_cpu *cpu;
	uint8_t byte;
	uint64_t a, b;

	/* With no zero page a read fault allocates: the THP and the small page both. */
	must(mmp_space_set_opt(s, MMP_OPT_FORBID_ZEROPAGE, 1) == 0, "FORBID_ZEROPAGE");
	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map_pmd_aligned(s, MMP_PMD_SIZE);
	must(mmp_madvise(s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE) == 0, "MADV_HUGEPAGE");
	must(mmp_mprotect(s, a, MMP_PMD_SIZE, MMP_PROT_READ) == 0, "mprotect read-only");
	must(mmp_read(cpu, a + 5 * PG, &byte, 1) == 0, "read");
	must(mmp_space_query(s, a, &q) == 0, "query");
	tap_eq(q.leaf_level, 1, "%s: a read fault in a read-only MADV_HUGEPAGE VMA maps a THP", arch);
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_ok(v.private_dirty == MMP_PMD_SIZE, "%s: and its PMD is dirty: smaps Private_Dirty "
	       "%llu kB", arch, (unsigned long long)v.private_dirty >> 10);
	b = map(s, 4 * PG, MMP_PROT_READ);
	must(mmp_read(cpu, b, &byte, 1) == 0, "read small");
	must(mmp_space_vma_info(s, b, &v) == 0, "vma_info");
	tap_ok(v.rss == PG && v.private_dirty == 0, "%s: a small page read in a read-only VMA is "
	       "clean: Rss %llu, Private_Dirty %llu", arch, (unsigned long long)v.rss,
	       (unsigned long long)v.private_dirty);
	tap_eq(mmp_space_verify(s), 0, "%s: THP read fault: verify", arch);
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_pageout(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file_stat st;
	struct mmp_vma_info v;
	uint64_t flt;
	struct mmp_cpu *cpu;
	struct mmp_file *f;
	uint64_t a, b;
	uint8_t byte = 9;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	must(mmp_memfd_create(phys, 0, &f) == 0, "memfd");
	must(mmp_file_truncate(f, 4 * PG) == 0, "ftruncate");
	must(mmp_mmap_file(s, 0, 4 * PG, RW, MMP_MAP_SHARED, f, 0, &a) == 0, "mmap memfd");
	must(mmp_memset(cpu, a, 9, 4 * PG) == 0, "write");
	b = map(s, 4 * PG, RW);
	must(mmp_memset(cpu, b, 5, 4 * PG) == 0, "write anon");
	must(mmp_madvise(s, a, 4 * PG, MMP_MADV_PAGEOUT) == 0, "pageout shmem");
	must(mmp_madvise(s, b, 4 * PG, MMP_MADV_PAGEOUT) == 0, "pageout anon");
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_eq(v.rss, 0, "%s: MADV_PAGEOUT unmaps shmem pages, with no swap too", arch);
	must(mmp_space_vma_info(s, b, &v) == 0, "vma_info");
	tap_eq(v.rss, 4 * PG, "%s: and leaves anonymous ones mapped (nowhere to swap)", arch);
	byte = 0;
	flt = counter(s, MMP_C_MIN_FLT);
	must(mmp_read(cpu, a + 3 * PG, &byte, 1) == 0, "read back");
	tap_eq(byte, 9, "%s: the shmem page stayed in the page cache", arch);
	/* Fault-around found the written pages in the cache: one fault mapped them all. */
	tap_eq(counter(s, MMP_C_MIN_FLT) - flt, 1, "%s: a written page back: one fault", arch);
	must(mmp_munmap(s, a, 4 * PG) == 0, "munmap");
	must(mmp_file_destroy(f) == 0, "memfd destroy");

	/*
	 * Clean shmem pages (read faults made them: zeroes) need no writeout:
	 * MADV_PAGEOUT drops them from the cache, and each read faults a new
	 * one in, with nothing for fault-around to map (a 6.18 host: 1 fault a
	 * page after the pageout, none after the first once they were written).
	 */
	must(mmp_memfd_create(phys, 0, &f) == 0, "memfd");
	must(mmp_file_truncate(f, 4 * PG) == 0, "ftruncate");
	must(mmp_mmap_file(s, 0, 4 * PG, RW, MMP_MAP_SHARED, f, 0, &a) == 0, "mmap memfd");
	for (int i = 0; i < 4; i++)
		must(mmp_read(cpu, a + i * PG, &byte, 1) == 0, "read");
	must(mmp_madvise(s, a, 4 * PG, MMP_MADV_PAGEOUT) == 0, "pageout clean shmem");
	must(mmp_file_stat(f, &st) == 0, "stat");
	tap_eq(st.nrpages, 0, "%s: clean shmem pages left the page cache", arch);
	flt = counter(s, MMP_C_MIN_FLT);
	must(mmp_read(cpu, a, &byte, 1) == 0 && mmp_read(cpu, a + PG, &byte, 1) == 0, "read");
	tap_eq(counter(s, MMP_C_MIN_FLT) - flt, 2, "%s: two clean pages back: two faults", arch);
	tap_eq(byte, 0, "%s: and they read as zeroes", arch);
	must(mmp_munmap(s, a, 4 * PG) == 0, "munmap");
	must(mmp_file_destroy(f) == 0, "memfd destroy");
	tap_eq(mmp_space_verify(s), 0, "%s: pageout: verify", arch);
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_shmem_truncate_dirties(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_addr_info q;
	struct mmp_vma_info v;
	struct mmp_file *f;
	uint64_t a;

	must(mmp_memfd_create(phys, 0, &f) == 0, "memfd");
	must(mmp_file_truncate(f, 4 * PG) == 0, "ftruncate");
	must(mmp_mmap_file(s, 0, 4 * PG, MMP_PROT_READ, MMP_MAP_SHARED | MMP_MAP_POPULATE, f, 0,
			   &a) == 0, "mmap memfd populated");
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_ok(v.rss == 4 * PG && v.private_dirty == 0, "%s: read-populated shmem is clean: Rss %llu, "
	       "Private_Dirty %llu", arch, (unsigned long long)v.rss,
	       (unsigned long long)v.private_dirty);
	tap_eq(mmp_file_truncate(f, PG + 100), 0, "%s: shrink the memfd into its second page", arch);
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_ok(v.rss == 2 * PG && v.private_dirty == PG, "%s: the cut page is dirty, the one below "
	       "is not: Rss %llu, Private_Dirty %llu (the host: 8 kB, 4 kB)", arch,
	       (unsigned long long)v.rss, (unsigned long long)v.private_dirty);
	must(mmp_space_query(s, a, &q) == 0, "query");
	tap_ok(!(q.folio_flags & MMP_FOLIO_DIRTY), "%s: the first page's folio stays clean", arch);
	tap_eq(mmp_file_truncate(f, PG), 0, "%s: shrink to a page boundary", arch);
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_ok(v.rss == PG && v.private_dirty == 0, "%s: a cut at a page boundary dirties nothing: "
	       "Rss %llu, Private_Dirty %llu", arch, (unsigned long long)v.rss,
	       (unsigned long long)v.private_dirty);
	must(mmp_munmap(s, a, 4 * PG) == 0, "munmap");
	must(mmp_file_destroy(f) == 0, "memfd destroy");
	tap_eq(mmp_space_verify(s), 0, "%s: shmem truncate: verify", arch);
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_zero_page_pagemap(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_addr_info q;
	struct mmp_cpu *cpu;
	uint64_t a, pm[2];
	uint8_t byte;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map_pmd_aligned(s, 2 * MMP_PMD_SIZE);
	must(mmp_madvise(s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE) == 0, "MADV_HUGEPAGE");
	must(mmp_madvise(s, a + MMP_PMD_SIZE, MMP_PMD_SIZE, MMP_MADV_NOHUGEPAGE) == 0,
	     "MADV_NOHUGEPAGE");
	must(mmp_read(cpu, a, &byte, 1) == 0, "read the THP range");
	must(mmp_read(cpu, a + MMP_PMD_SIZE, &byte, 1) == 0, "read the small-page range");
	must(mmp_space_query(s, a, &q) == 0, "query");
	tap_ok(q.leaf_level == 1 && (q.folio_flags & MMP_FOLIO_ZERO),
	       "%s: a read fault in a MADV_HUGEPAGE range maps the huge zero page", arch);
	must(mmp_space_pagemap(s, a, 1, &pm[0]) == 1, "pagemap");
	must(mmp_space_pagemap(s, a + MMP_PMD_SIZE, 1, &pm[1]) == 1, "pagemap");
	tap_ok((pm[0] & (MMP_PM_PRESENT | MMP_PM_FILE)) == (MMP_PM_PRESENT | MMP_PM_FILE),
	       "%s: pagemap calls the huge zero page present and a file page (%#llx)", arch,
	       (unsigned long long)pm[0]);
	tap_ok((pm[1] & (MMP_PM_PRESENT | MMP_PM_FILE)) == MMP_PM_PRESENT,
	       "%s: and the small zero page present, no file page (%#llx)", arch,
	       (unsigned long long)pm[1]);
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

int main(void)
{
	const char *arch;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		check_thp_eligible(arch);
		check_shared_write_dirties(arch);
		check_sigbus_leaves_no_table(arch);
		check_faults(arch);
		check_split_dirties(arch);
		check_thp_read_fault_dirty(arch);
		check_pageout(arch);
		check_shmem_truncate_dirties(arch);
		check_zero_page_pagemap(arch);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
