/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * 1 GiB hugetlb pages, PUD leaves, where the back end declares them
 * (x86_64 PDPE1GB, arm64 level 1 blocks, riscv64 gigapages): a pool of
 * gigantic pages (runs of max-order blocks, as alloc_contig_pages), fault,
 * fork and copy-on-write (copy_user_large_folio: gigantic folios are copied
 * and cleared sequentially in 6.18, never in process_huge_page's order),
 * mprotect, mremap, munmap, smaps and pagemap. One phys of 3 GiB serves all:
 * the whole scenario runs on x86_64, a shorter one on a 3-level back end
 * (arm64-va39: the PUD is the top table); back ends without PUD leaves
 * refuse MAP_HUGE_1GB. Its time is clearing 1 GiB twice and copying it once,
 * and the host's first touch of 2 GiB: 10-13 s on the shared 2-core VM it
 * was written on (its page faults are slow), well under 2 s on bare metal.
 */
#include <string.h>
#include <time.h>

#include "debug.h"
#include "mm.h"
#include "util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define G1	(1ULL << 30)
#define NR1G	(G1 / MMP_PAGE_SIZE)

static struct mmp_phys *phys;

static struct mmp_hugepages_stat pool(void)
{
	struct mmp_hugepages_stat st;

	must(mmp_phys_hugepages(phys, G1, &st) == 0, "the 1 GiB pool");
	return st;
}

/* Fault, query, munmap: what every back end with PUD leaves must do. */
static void check_basic(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu, uint64_t *out)
{
	struct mmp_counters before, d;
	struct mmp_addr_info ai;
	uint64_t a = 0;

	tap_eq(mmp_mmap(s, 0, G1, RW, MMP_MAP_HUGETLB | MMP_MAP_HUGE_1GB, &a), 0,
	       "%s: MAP_HUGE_1GB", arch);
	tap_ok(!(a & (G1 - 1)) && pool().rsvd == 1, "%s: ... 1 GiB aligned, one page reserved",
	       arch);
	mmp_space_counters(s, &before);
	tap_eq(put8(cpu, a + 300 * MiB + 8, 0x1e9), 0, "%s: write 300 MiB into it", arch);
	counters_since(s, &before, &d);
	tap_ok(d.v[MMP_C_FAULT_HUGETLB] == 1 && d.v[MMP_C_SUBPAGE_CLEAR] == NR1G &&
		       d.v[MMP_C_PMD_WRITE] == 1 && d.v[MMP_C_PGTABLE_ALLOC] <= 1,
	       "%s: ... one fault clears 262144 sub-pages, writes one PUD (no PMD table)",
	       arch);
	tap_ok(mmp_space_query(s, a + 300 * MiB, &ai) == 0 && ai.leaf_level == 2 &&
		       ai.folio_order == 18 && ai.pfn == ai.folio_pfn + 300 * MiB / MMP_PAGE_SIZE &&
		       (ai.folio_flags & MMP_FOLIO_HUGETLB) && (ai.entry_flags[2] & MMP_ENTRY_LEAF),
	       "%s: ... query: a PUD leaf of an order-18 hugetlb folio", arch);
	tap_ok(get8(cpu, a + 300 * MiB + 8) == 0x1e9 && get8(cpu, a + G1 - 8) == 0,
	       "%s: ... reads back, the rest is zero", arch);
	tap_ok(pool().free == 1 && pool().rsvd == 0, "%s: ... the reservation consumed", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify", arch);
	*out = a;
}

static void check_full(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *c;
	struct mmp_cpu *cpu, *cc;
	struct mmp_counters before, d;
	struct mmp_vma_info vi;
	static unsigned int seq[NR1G];
	struct mmp_huge_trace t = { .order = seq, .cap = NR1G };
	uint64_t a, b, pm[4];
	bool ascending = true;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	mmp_cpu_attach(s, &cpu);
	check_basic(arch, s, cpu, &a);
	tap_eq(mmp_space_vma_info(s, a, &vi), 0, "%s: vma_info", arch);
	tap_ok(vi.page_size == G1 && vi.private_hugetlb == G1 && vi.rss == 0,
	       "%s: ... KernelPageSize 1 GiB, Private_Hugetlb 1 GiB, no Rss", arch);
	tap_eq(mmp_space_pagemap(s, a + 5 * MMP_PAGE_SIZE, 4, pm), 4, "%s: pagemap", arch);
	tap_ok((pm[0] & MMP_PM_PRESENT) && (pm[3] & MMP_PM_PFN_MASK) == (pm[0] & MMP_PM_PFN_MASK) + 3 &&
		       (pm[0] & MMP_PM_MMAP_EXCLUSIVE),
	       "%s: ... present, exclusive, a pfn per sub-page", arch);

	/* fork and copy-on-write: the child copies the whole page, in order. */
	tap_eq(mmp_fork(s, &c), 0, "%s: fork", arch);
	mmp_cpu_attach(c, &cc);
	mmp_debug_trace_huge(c, &t);
	mmp_space_counters(c, &before);
	tap_eq(put8(cc, a + 700 * MiB, 0xc1d), 0, "%s: the child writes 700 MiB in", arch);
	counters_since(c, &before, &d);
	mmp_debug_trace_huge(c, NULL);
	tap_ok(d.v[MMP_C_FAULT_HUGETLB_COW] == 1 && d.v[MMP_C_SUBPAGE_COPY] == NR1G &&
		       d.v[MMP_C_HUGETLB_ALLOC] == 1,
	       "%s: ... one hugetlb COW copies 262144 sub-pages into the pool's other page", arch);
	for (unsigned int i = 0; i < t.n; i++)
		ascending &= seq[i] == i;
	tap_ok(t.n == NR1G && ascending,
	       "%s: ... sequentially, as copy_user_gigantic (no target-last for gigantic folios)",
	       arch);
	tap_ok(get8(cc, a + 700 * MiB) == 0xc1d && get8(cc, a + 300 * MiB + 8) == 0x1e9 &&
		       get8(cpu, a + 700 * MiB) == 0,
	       "%s: ... the child has a copy, the parent keeps its page", arch);
	mmp_space_vma_info(s, a, &vi);
	tap_ok(vi.private_hugetlb == G1, "%s: ... the parent's page is its own again", arch);
	tap_ok(pool().free == 0, "%s: ... the pool is spent", arch);
	tap_ok(mmp_space_verify(s) == 0 && mmp_space_verify(c) == 0, "%s: verify both", arch);
	mmp_cpu_detach(cc);
	mmp_space_destroy(c);
	tap_ok(pool().free == 1, "%s: the child's exit frees its copy", arch);

	/* mprotect, mremap, munmap: whole pages only. */
	tap_eq(mmp_mprotect(s, a, 2 * MiB, MMP_PROT_READ), -EINVAL,
	       "%s: mprotect 2 MiB of a 1 GiB page", arch);
	tap_eq(mmp_mprotect(s, a, G1, MMP_PROT_READ), 0, "%s: mprotect PROT_READ", arch);
	tap_ok(put8(cpu, a, 1) != 0 && get8(cpu, a + 300 * MiB + 8) == 0x1e9,
	       "%s: ... a write faults, a read works", arch);
	tap_eq(mmp_mprotect(s, a, G1, RW), 0, "%s: mprotect back", arch);
	/* mremap aligns hugetlb lengths up: 2 MiB is the whole page, which stays. */
	tap_ok(mmp_mremap(s, a, 2 * MiB, 2 * MiB, MMP_MREMAP_MAYMOVE, 0, &b) == 0 && b == a,
	       "%s: mremap 2 MiB of it: the whole page, in place", arch);
	tap_eq(mmp_mremap(s, a + 2 * MiB, 2 * MiB, 2 * MiB, MMP_MREMAP_MAYMOVE, 0, &b), -EINVAL,
	       "%s: mremap from inside it", arch);
	tap_eq(mmp_mremap(s, a, G1, G1, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, a - 4 * G1, &b), 0,
	       "%s: mremap it 4 GiB down", arch);
	tap_ok(b == a - 4 * G1 && get8(cpu, b + 300 * MiB + 8) == 0x1e9,
	       "%s: ... the PUD moved, the data with it", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify", arch);
	tap_eq(mmp_munmap(s, b, 2 * MiB), -EINVAL, "%s: munmap 2 MiB of it", arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_munmap(s, b, G1), 0, "%s: munmap", arch);
	counters_since(s, &before, &d);
	/* Then the tables it leaves empty go, with a flush of their own. */
	if (!tap_ok(d.v[MMP_C_TLB_FLUSH_PAGE] == 1,
		    "%s: ... the page's flush: one invalidation at the PUD's stride", arch))
		printf("#   page %llu range %llu all %llu\n",
		       (unsigned long long)d.v[MMP_C_TLB_FLUSH_PAGE],
		       (unsigned long long)d.v[MMP_C_TLB_FLUSH_RANGE],
		       (unsigned long long)d.v[MMP_C_TLB_FLUSH_ALL]);
	tap_ok(pool().free == 2 && pool().rsvd == 0, "%s: ... both pages free again", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# %s: the 1 GiB scenario took %.2f s\n", arch,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

static void check_short(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	uint64_t a;

	mmp_cpu_attach(s, &cpu);
	check_basic(arch, s, cpu, &a);
	tap_eq(mmp_munmap(s, a, G1), 0, "%s: munmap", arch);
	tap_ok(pool().free == 2 && pool().rsvd == 0, "%s: ... the page back in the pool", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

static void check_refused(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	uint64_t a = 0xdead;

	tap_eq(mmp_mmap(s, 0, G1, RW, MMP_MAP_HUGETLB | MMP_MAP_HUGE_1GB, &a), -EINVAL,
	       "%s: no PUD leaves: MAP_HUGE_1GB is EINVAL", arch);
	tap_ok(a == 0xdead && pool().rsvd == 0, "%s: ... nothing mapped or reserved", arch);
	mmp_space_destroy(s);
}

int main(void)
{
	const char *name;

	tap_require(mmp_phys_create(3 * G1, &phys) == 0, "a 3 GiB phys");
	must(mmp_phys_set_hugepages(phys, G1, 2) == 0, "nr_hugepages");
	tap_ok(pool().total == 2 && pool().free == 2, "two 1 GiB pages for the pool");
	for_each_arch(i, name) {
		uint64_t sizes = 0;

		must(mmp_hugetlb_sizes(name, &sizes) == 0, "sizes");
		if (!(sizes & G1))
			check_refused(name);
		else if (!strcmp(name, "x86_64"))
			check_full(name);
		else if (!strcmp(name, "arm64-va39"))
			check_short(name);
	}
	must(mmp_phys_set_hugepages(phys, G1, 0) == 0, "nr_hugepages 0");
	tap_ok(pool().total == 0, "the pool gives its pages back");
	tap_eq(mmp_phys_destroy(phys), 0, "the phys goes");
	return tap_done();
}
