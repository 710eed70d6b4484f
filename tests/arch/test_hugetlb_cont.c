/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hugetlb pages made of contiguous entries, as arm64's hugetlbpage.c maps
 * them with the 4K granule: 64 KiB as 16 PTEs and 32 MiB as 16 PMDs, every
 * entry with the contiguous bit and its part of the page. A back end
 * declares them (hugetlb_cont_levels); MAP_HUGE_SHIFT 16 and 25 select them,
 * and a back end without them says EINVAL. The entries are written all at
 * once, read and cleared with the young and dirty bits of all gathered,
 * faulted, forked, copied (16 or 8192 sub-pages), write-protected, moved and
 * unmapped together, and seen by smaps, pagemap and verify.
 */
#include <string.h>

#include "debug.h"
#include "mm.h"
#include "util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define K64	(64 * KiB)
#define M32	(32 * MiB)
#define HUGE(shift)	(MMP_MAP_HUGETLB | (int)((unsigned int)(shift) << MMP_MAP_HUGE_SHIFT))

static struct mmp_phys *phys;

static uint64_t pool_free(uint64_t size)
{
	struct mmp_hugepages_stat st;

	must(mmp_phys_hugepages(phys, size, &st) == 0, "pool");
	return st.free;
}

static uint64_t pool_rsvd(uint64_t size)
{
	struct mmp_hugepages_stat st;

	must(mmp_phys_hugepages(phys, size, &st) == 0, "pool");
	return st.rsvd;
}

/* Every entry of the page at @a: at @level, contiguous, mapping page i of the folio. */
static bool entries_cont(struct mmp_space *s, uint64_t a, uint64_t size, int level,
			 unsigned int want_flags)
{
	uint64_t step = level ? MMP_PMD_SIZE : MMP_PAGE_SIZE, head = MMP_NO_PFN;
	struct mmp_addr_info ai;

	for (uint64_t off = 0; off < size; off += step) {
		if (mmp_space_query(s, a + off, &ai) || ai.leaf_level != level ||
		    !(ai.entry_flags[level] & MMP_ENTRY_CONT) ||
		    (ai.entry_flags[level] & want_flags) != want_flags ||
		    !(ai.folio_flags & MMP_FOLIO_HUGETLB))
			return false;
		if (head == MMP_NO_PFN)
			head = ai.folio_pfn;
		if (ai.folio_pfn != head || ai.pfn != head + off / MMP_PAGE_SIZE)
			return false;
	}
	return true;
}

static void check_64k(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *c;
	struct mmp_cpu *cpu, *cc;
	struct mmp_counters before, d;
	struct mmp_vma_info vi;
	struct hstate *h = size_to_hstate(phys, K64);
	uint64_t a, b, v = 0x6464, w = 0x7777, got = 0, pm[16];
	mmp_pte_t *ptep, e;
	bool ok = true;

	must(mmp_phys_set_hugepages(phys, K64, 8) == 0, "pool");
	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_mmap(s, 0, 2 * K64, RW, HUGE(16), &a), 0, "%s: MAP_HUGE_64KB", arch);
	tap_ok(!(a & (K64 - 1)) && pool_rsvd(K64) == 2, "%s: ... 64 KiB aligned, 2 reserved",
	       arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_write(cpu, a + 5 * MMP_PAGE_SIZE, &v, 8), 0, "%s: write page 5", arch);
	counters_since(s, &before, &d);
	tap_ok(d.v[MMP_C_FAULT_HUGETLB] == 1 && d.v[MMP_C_SUBPAGE_CLEAR] == 16 &&
		       d.v[MMP_C_PTE_WRITE] == 16 && d.v[MMP_C_PMD_WRITE] == 0,
	       "%s: ... one fault clears 16 sub-pages and writes 16 PTEs", arch);
	tap_ok(entries_cont(s, a, K64, 0, MMP_ENTRY_WRITE | MMP_ENTRY_DIRTY | MMP_ENTRY_ACCESSED),
	       "%s: ... 16 contiguous PTEs, writable, young, dirty, each its own sub-page", arch);
	tap_ok(pool_free(K64) == 7 && pool_rsvd(K64) == 1, "%s: ... one pool page used", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify", arch);
	ptep = huge_pte_offset(s, h, a, false);
	e = ptep[7];
	WRITE_ONCE(ptep[7], 0);
	tap_ok(mmp_space_verify(s) != 0, "%s: verify sees a 64 KiB page with entry 7 missing", arch);
	WRITE_ONCE(ptep[7], e);
	tap_ok(mmp_space_verify(s) == 0, "%s: ... and the block whole again", arch);

	/* get-and-clear and the read gather young and dirty from every entry. */
	ptep = huge_pte_offset(s, h, a, false);
	for (unsigned int i = 0; i < 16; i++)
		ptep_modify(s, &ptep[i], MMP_PTE, 0, MMP_E_DIRTY | (i == 9 ? 0 : MMP_E_ACCESSED));
	ptep_modify(s, &ptep[12], MMP_PTE, MMP_E_DIRTY, 0);
	e = huge_ptep_get(s, h, ptep);
	tap_ok(entry_test(s, e, MMP_PTE, MMP_E_DIRTY) && entry_test(s, e, MMP_PTE, MMP_E_ACCESSED) &&
		       !entry_test(s, READ_ONCE(ptep[0]), MMP_PTE, MMP_E_DIRTY),
	       "%s: huge_ptep_get: dirty from entry 12, young from entry 9, in entry 0's", arch);
	/* The whole mapping: part of a private one would leak its reservation, as 6.18 does. */
	tap_eq(mmp_mremap(s, a, 2 * K64, 2 * K64, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED,
			  a + 64 * K64, &b),
	       0, "%s: mremap the mapping", arch);
	tap_ok(entries_cont(s, b, K64, 0, MMP_ENTRY_DIRTY | MMP_ENTRY_ACCESSED),
	       "%s: ... get-and-clear gathered: all 16 moved entries young and dirty", arch);
	tap_ok(mmp_read(cpu, b + 5 * MMP_PAGE_SIZE, &got, 8) == 0 && got == v,
	       "%s: ... the data went along", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify", arch);

	tap_eq(mmp_space_vma_info(s, b, &vi), 0, "%s: vma_info", arch);
	tap_ok(vi.page_size == K64 && vi.private_hugetlb == K64 && vi.rss == 0,
	       "%s: ... KernelPageSize 64 kB, Private_Hugetlb 64 kB", arch);
	tap_eq(mmp_space_pagemap(s, b, 16, pm), 16, "%s: pagemap", arch);
	for (unsigned int i = 1; i < 16; i++)
		ok &= (pm[i] & MMP_PM_PFN_MASK) == (pm[0] & MMP_PM_PFN_MASK) + i &&
		      (pm[i] & MMP_PM_PRESENT);
	tap_ok(ok, "%s: ... a pfn per sub-page, in order", arch);

	/* fork and COW: the child copies 16 sub-pages into a page of its own. */
	tap_eq(mmp_fork(s, &c), 0, "%s: fork", arch);
	tap_ok(entries_cont(s, b, K64, 0, MMP_ENTRY_ACCESSED) &&
		       !entries_cont(s, b, K64, 0, MMP_ENTRY_WRITE),
	       "%s: ... the parent's 16 entries write-protected, still contiguous", arch);
	mmp_cpu_attach(c, &cc);
	mmp_space_counters(c, &before);
	tap_eq(mmp_write(cc, b + 3 * MMP_PAGE_SIZE, &w, 8), 0, "%s: the child writes", arch);
	counters_since(c, &before, &d);
	tap_ok(d.v[MMP_C_FAULT_HUGETLB_COW] == 1 && d.v[MMP_C_SUBPAGE_COPY] == 16 &&
		       d.v[MMP_C_PTE_WRITE] == 32,
	       "%s: ... one COW copies 16 sub-pages, clears and writes 16 PTEs", arch);
	tap_ok(entries_cont(c, b, K64, 0, MMP_ENTRY_WRITE | MMP_ENTRY_DIRTY),
	       "%s: ... its new page: 16 contiguous writable entries", arch);
	got = 0;
	tap_ok(mmp_read(cpu, b + 3 * MMP_PAGE_SIZE, &got, 8) == 0 && got == 0 &&
		       mmp_read(cc, b + 5 * MMP_PAGE_SIZE, &got, 8) == 0 && got == v,
	       "%s: ... the parent keeps its data, the child has a copy", arch);
	tap_ok(mmp_space_verify(s) == 0 && mmp_space_verify(c) == 0, "%s: verify both", arch);
	mmp_cpu_detach(cc);
	mmp_space_destroy(c);

	/* mprotect and munmap take whole 64 KiB pages. */
	tap_eq(mmp_mprotect(s, b, MMP_PAGE_SIZE, MMP_PROT_READ), -EINVAL,
	       "%s: mprotect 4 KiB of a 64 KiB page", arch);
	tap_eq(mmp_mprotect(s, b, K64, MMP_PROT_READ), 0, "%s: mprotect PROT_READ", arch);
	tap_ok(entries_cont(s, b, K64, 0, MMP_ENTRY_PRESENT) &&
		       !entries_cont(s, b, K64, 0, MMP_ENTRY_WRITE),
	       "%s: ... all 16 read-only", arch);
	tap_ok(mmp_write(cpu, b, &w, 8) != 0, "%s: ... a write faults", arch);
	tap_eq(mmp_munmap(s, b, MMP_PAGE_SIZE), -EINVAL, "%s: munmap 4 KiB of it", arch);
	tap_eq(mmp_munmap(s, b, K64), 0, "%s: munmap it", arch);
	tap_ok(pool_free(K64) == 8, "%s: ... the page goes back", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify", arch);
	mmp_munmap(s, b + K64, K64);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	tap_ok(pool_free(K64) == 8 && pool_rsvd(K64) == 0, "%s: the 64 KiB pool whole again", arch);
	must(mmp_phys_set_hugepages(phys, K64, 0) == 0, "pool");
}

static void check_32m(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_counters before, d;
	struct mmp_cpu *cpu;
	struct mmp_hugepages_stat st;
	uint64_t a, v = 0x3232, got = 0;
	mmp_pte_t *ptep, e;

	must(mmp_phys_set_hugepages(phys, M32, 1) == 0, "pool");
	tap_ok(mmp_phys_hugepages(phys, M32, &st) == 0 && st.total == 1,
	       "%s: a 32 MiB page for the pool (beyond the buddy allocator's largest block)", arch);
	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_mmap(s, 0, M32, RW, HUGE(25), &a), 0, "%s: MAP_HUGE_32MB", arch);
	tap_ok(!(a & (M32 - 1)), "%s: ... 32 MiB aligned", arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_write(cpu, a + 17 * MiB + 8, &v, 8), 0, "%s: write into its 9th PMD", arch);
	counters_since(s, &before, &d);
	tap_ok(d.v[MMP_C_FAULT_HUGETLB] == 1 && d.v[MMP_C_SUBPAGE_CLEAR] == 8192 &&
		       d.v[MMP_C_PMD_WRITE] == 16,
	       "%s: ... one fault clears 8192 sub-pages and writes 16 PMDs", arch);
	tap_ok(entries_cont(s, a, M32, 1, MMP_ENTRY_WRITE | MMP_ENTRY_LEAF),
	       "%s: ... 16 contiguous PMD blocks, each its 2 MiB of the page", arch);
	tap_ok(mmp_read(cpu, a + 17 * MiB + 8, &got, 8) == 0 && got == v, "%s: ... reads back",
	       arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify", arch);
	ptep = huge_pte_offset(s, size_to_hstate(phys, M32), a, false);
	e = ptep[7];
	WRITE_ONCE(ptep[7], 0);
	tap_ok(mmp_space_verify(s) != 0, "%s: verify sees a 32 MiB page with PMD 7 missing", arch);
	WRITE_ONCE(ptep[7], e);
	tap_ok(mmp_space_verify(s) == 0, "%s: ... and the block whole again", arch);
	tap_eq(mmp_munmap(s, a, 2 * MiB), -EINVAL, "%s: munmap one PMD of it", arch);
	tap_eq(mmp_munmap(s, a, M32), 0, "%s: munmap", arch);
	tap_ok(mmp_phys_hugepages(phys, M32, &st) == 0 && st.free == 1 && st.rsvd == 0,
	       "%s: ... back in the pool", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	must(mmp_phys_set_hugepages(phys, M32, 0) == 0, "pool");
	tap_ok(mmp_phys_hugepages(phys, M32, &st) == 0 && st.total == 0,
	       "%s: the 32 MiB page goes back to free memory", arch);
}

/* A back end without contiguous hugetlb sizes refuses them. */
static void check_refused(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_file *f;
	uint64_t a = 0xdead;

	must(mmp_phys_set_hugepages(phys, K64, 2) == 0, "pool");
	tap_eq(mmp_mmap(s, 0, K64, RW, HUGE(16), &a), -EINVAL, "%s: MAP_HUGE_64KB: EINVAL", arch);
	tap_eq(mmp_mmap(s, 0, M32, RW, HUGE(25), &a), -EINVAL, "%s: MAP_HUGE_32MB: EINVAL", arch);
	must(mmp_memfd_create(phys, MMP_MFD_HUGETLB | MMP_MFD_HUGE_64KB, &f) == 0, "memfd");
	must(mmp_file_truncate(f, K64) == 0, "truncate");
	tap_eq(mmp_mmap_file(s, 0, K64, RW, MMP_MAP_SHARED, f, 0, &a), -EINVAL,
	       "%s: a 64 KiB hugetlbfs memfd: EINVAL at mmap", arch);
	tap_ok(a == 0xdead && pool_rsvd(K64) == 0, "%s: ... nothing mapped or reserved", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify", arch);
	mmp_file_destroy(f);
	mmp_space_destroy(s);
	must(mmp_phys_set_hugepages(phys, K64, 0) == 0, "pool");
}

int main(void)
{
	const char *name;

	tap_require(mmp_phys_create(128 * MiB, &phys) == 0, "phys");
	for_each_arch(i, name) {
		uint64_t sizes = 0;

		must(mmp_hugetlb_sizes(name, &sizes) == 0, "sizes");
		if (sizes & K64) {
			tap_ok(sizes & M32, "%s declares 64 KiB and 32 MiB hugetlb pages", name);
			check_64k(name);
			check_32m(name);
		} else {
			check_refused(name);
		}
	}
	tap_eq(mmp_phys_destroy(phys), 0, "the phys goes");
	return tap_done();
}
