/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Copy-on-write of anonymous PMD THPs as Linux has done it since 5.8 ("thp:
 * change CoW semantics for anon-THP"): a write to a THP the mapping owns alone
 * reuses it; one shared with a fork splits the PMD (thp_split_pmd) and the
 * fault, retried at the PTE level, copies one 4 KiB page. The numbers below
 * are what a 6.18 host showed for the same steps (smaps in KiB, vmstat). Then
 * the folio, PTE-mapped and partly shared, through fork, reclaim, collapse and
 * exit; the deferred split count (thp_deferred_split_page) at the very step
 * the host counted it; and the rules that changed between releases: the huge
 * zero page (6.13) and reuse of a page of a large folio one space owns (6.15,
 * with the kernel's two owner slots, which a third space defeats).
 */
#include <string.h>

#include "mm.h"
#include "util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define PG	4096ULL
#define V(a, b)	MMP_KERNEL_VERSION(a, b, 0)

static struct mmp_phys *phys;

/* The counters a COW moves, each step checked exactly. */
struct want {
	uint64_t split, cow, wp_reuse, huge_reuse, huge_cow, copy, clear, alloc0, alloc9;
	uint64_t deferred, fallback, huge_anon, free;
};

static const enum mmp_counter watched[] = {
	MMP_C_PMD_SPLIT, MMP_C_FAULT_COW, MMP_C_FAULT_WP_REUSE, MMP_C_FAULT_HUGE_REUSE,
	MMP_C_FAULT_HUGE_COW, MMP_C_SUBPAGE_COPY, MMP_C_SUBPAGE_CLEAR, MMP_C_FOLIO_ALLOC_O0,
	MMP_C_FOLIO_ALLOC_O9, MMP_C_THP_DEFERRED_SPLIT_PAGE, MMP_C_FAULT_FALLBACK,
	MMP_C_FAULT_HUGE_ANON, MMP_C_FOLIO_FREE,
};

/* Exactly @w moved in @s since @snap; @snap moves on to now. */
static void expect(struct mmp_space *s, struct mmp_counters *snap, struct want w, const char *what)
{
	const uint64_t want[] = { w.split, w.cow, w.wp_reuse, w.huge_reuse, w.huge_cow, w.copy,
				  w.clear, w.alloc0, w.alloc9, w.deferred, w.fallback, w.huge_anon,
				  w.free };
	struct mmp_counters d;
	bool ok = true;

	_Static_assert(ARRAY_SIZE(want) == ARRAY_SIZE(watched), "a value per counter");
	counters_since(s, snap, &d);
	for (size_t i = 0; i < ARRAY_SIZE(watched); i++)
		ok &= d.v[watched[i]] == want[i];
	tap_ok(ok, "%s", what);
	for (size_t i = 0; !ok && i < ARRAY_SIZE(watched); i++)
		if (d.v[watched[i]] != want[i])
			printf("#   %s: %llu, want %llu\n", mmp_counter_name(watched[i]),
			       (unsigned long long)d.v[watched[i]], (unsigned long long)want[i]);
	mmp_space_counters(s, snap);
}

/* smaps of the VMA at @a, in KiB as the host prints them. */
static void expect_smaps(struct mmp_space *s, uint64_t a, uint64_t rss, uint64_t pss,
			 uint64_t shared_dirty, uint64_t private_dirty, uint64_t anon_huge,
			 const char *what)
{
	struct mmp_vma_info vi;
	uint64_t got[5], want[5] = { rss, pss, shared_dirty, private_dirty, anon_huge };

	must(!mmp_space_vma_info(s, a, &vi), "vma info");
	got[0] = vi.rss / KiB;
	got[1] = vi.pss / KiB;
	got[2] = vi.shared_dirty / KiB;
	got[3] = vi.private_dirty / KiB;
	got[4] = vi.anon_huge_pages / KiB;
	tap_ok(!memcmp(got, want, sizeof(got)),
	       "%s: Rss %llu Pss %llu Shared_Dirty %llu Private_Dirty %llu AnonHugePages %llu kB",
	       what, (unsigned long long)got[0], (unsigned long long)got[1],
	       (unsigned long long)got[2], (unsigned long long)got[3], (unsigned long long)got[4]);
	if (memcmp(got, want, sizeof(got)))
		printf("#   want Rss %llu Pss %llu Shared_Dirty %llu Private_Dirty %llu "
		       "AnonHugePages %llu\n", (unsigned long long)rss, (unsigned long long)pss,
		       (unsigned long long)shared_dirty, (unsigned long long)private_dirty,
		       (unsigned long long)anon_huge);
}

static uint64_t pfn_at(struct mmp_space *s, uint64_t a)
{
	struct mmp_addr_info ai;

	must(!mmp_space_query(s, a, &ai), "query");
	return ai.pfn;
}

static uint64_t free_pages(void)
{
	struct mmp_phys_stat st;

	must(!mmp_phys_stat(phys, &st), "phys stat");
	return st.free_pages;
}

/* Page @i of the THP holds @tag in its first word, and its index in its last. */
static void fill(struct mmp_cpu *cpu, uint64_t a, uint64_t tag)
{
	for (uint64_t i = 0; i < HPAGE_PMD_NR; i++) {
		uint64_t w[2] = { tag, i };

		must(!mmp_write(cpu, a + i * PG, &w[0], 8), "fill");
		must(!mmp_write(cpu, a + i * PG + PG - 8, &w[1], 8), "fill");
	}
}

/* Every page but those in @mine reads @tag; those read @mine_tag. */
static bool holds(struct mmp_cpu *cpu, uint64_t a, uint64_t tag, const unsigned int *mine,
		  unsigned int nr_mine, uint64_t mine_tag)
{
	for (uint64_t i = 0; i < HPAGE_PMD_NR; i++) {
		uint64_t w[2], want = tag;

		for (unsigned int k = 0; k < nr_mine; k++)
			if (mine[k] == i)
				want = mine_tag;
		if (mmp_read(cpu, a + i * PG, &w[0], 8) ||
		    mmp_read(cpu, a + i * PG + PG - 8, &w[1], 8))
			return false;
		if (w[0] != want || w[1] != i)
			return false;
	}
	return true;
}

static void write_tag(struct mmp_cpu *cpu, uint64_t a, unsigned int page, uint64_t tag)
{
	must(!mmp_write(cpu, a + page * PG, &tag, 8), "write page %u", page);
}

/* A space with one populated, PMD-mapped THP at *@a; @version: its release (0: the default). */
static struct mmp_space *thp_space(const char *arch, long version, uint64_t *a,
				   struct mmp_cpu **cpu)
{
	struct mmp_space *s = new_space(phys, arch);

	*a = (map(s, 4 * MiB, RW) + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
	if (version)
		must(!mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, version), "release");
	must(!mmp_madvise(s, *a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE), "MADV_HUGEPAGE");
	must(!mmp_cpu_attach(s, cpu), "attach");
	fill(*cpu, *a, 0x1111);
	must(counter(s, MMP_C_FAULT_HUGE_ANON) == 1, "%s: one THP", arch);
	return s;
}

static void destroy(struct mmp_space *s, struct mmp_cpu *cpu)
{
	mmp_cpu_detach(cpu);
	must(!mmp_space_destroy(s), "destroy");
}

/*
 * The host's run, step by step: fork; the child writes page 5 (split, one
 * copy), then 6 (a copy); the parent writes 100 (split, one copy), then 101;
 * the child exits (thp_deferred_split_page: pages 100 and 101 are mapped by
 * no one now); the parent writes 200 (reused: it owns the folio alone).
 */
static void check_fork_cow(const char *arch)
{
	uint64_t a, start = free_pages();
	struct mmp_cpu *pc, *cc;
	struct mmp_space *p = thp_space(arch, 0, &a, &pc), *c;
	struct mmp_counters ps, cs;
	struct mmp_mthp_stats st;
	uint64_t pfn;

	mmp_space_counters(p, &ps);
	must(!mmp_fork(p, &c), "fork");
	must(!mmp_cpu_attach(c, &cc), "attach");
	mmp_space_counters(c, &cs);
	expect_smaps(p, a, 2048, 1024, 2048, 0, 2048, "after fork, parent");
	expect_smaps(c, a, 2048, 1024, 2048, 0, 2048, "after fork, child");

	write_tag(cc, a, 5, 0xc5);
	expect(c, &cs, (struct want){ .split = 1, .cow = 1, .copy = 1, .alloc0 = 1 },
	       "the child's write: one PMD split, one 4 KiB copy, nothing deferred");
	expect(p, &ps, (struct want){ 0 }, "... nothing counted in the parent");
	expect_smaps(p, a, 2048, 1026, 2044, 4, 2048, "parent (host: 2048 1026 2044 4 2048)");
	expect_smaps(c, a, 2048, 1026, 2044, 4, 0, "child (host: 2048 1026 2044 4 0)");
	tap_eq(mmp_space_verify(p), 0, "%s: verify", arch);

	write_tag(cc, a, 6, 0xc5);
	expect(c, &cs, (struct want){ .cow = 1, .copy = 1, .alloc0 = 1 },
	       "the child's second write: a 4 KiB copy");
	expect_smaps(c, a, 2048, 1028, 2040, 8, 0, "child (host: 2048 1028 2040 8 0)");

	write_tag(pc, a, 100, 0xb0);
	expect(p, &ps, (struct want){ .split = 1, .cow = 1, .copy = 1, .alloc0 = 1 },
	       "the parent's write: its own split, one 4 KiB copy; page 100 the child still maps");
	expect_smaps(p, a, 2048, 1030, 2036, 12, 0, "parent (host: 2048 1030 2036 12 0)");
	expect_smaps(c, a, 2048, 1030, 2036, 12, 0, "child (host: 2048 1030 2036 12 0)");
	write_tag(pc, a, 101, 0xb0);
	expect(p, &ps, (struct want){ .cow = 1, .copy = 1, .alloc0 = 1 }, "... and page 101");
	tap_ok(holds(cc, a, 0x1111, (const unsigned int[]){ 5, 6 }, 2, 0xc5),
	       "%s: the child reads the parent's data but where it wrote", arch);
	tap_ok(holds(pc, a, 0x1111, (const unsigned int[]){ 100, 101 }, 2, 0xb0),
	       "%s: and the parent its own", arch);
	tap_eq(mmp_space_verify(p), 0, "%s: verify", arch);

	/* Reclaim has no swap: it keeps every folio, shared or not. */
	must(!mmp_reclaim(p), "reclaim");
	tap_eq(mmp_space_verify(p), 0, "%s: verify after reclaim", arch);

	/* The child exits: its unmap leaves pages 100 and 101 unmapped, the rest mapped. */
	must(!mmp_munmap(c, a, MMP_PMD_SIZE), "child munmap");
	expect(c, &cs, (struct want){ .deferred = 1, .free = 2 },
	       "the child's exit: its two copies freed, the THP partially mapped (host: +1)");
	mmp_space_mthp_stats(p, &st);
	tap_ok(st.nr_anon_partially_mapped[9] == 1 && st.nr_anon[9] == 1,
	       "%s: the parent's THP is on the deferred split queue", arch);
	mmp_space_mthp_stats(c, &st);
	tap_eq(st.split_deferred[9], 1, "%s: split_deferred counted where found", arch);
	destroy(c, cc);
	expect_smaps(p, a, 2048, 2048, 0, 2048, 0, "parent alone (host: 2048 2048 0 2048 0)");
	tap_ok(holds(pc, a, 0x1111, (const unsigned int[]){ 100, 101 }, 2, 0xb0),
	       "%s: the parent's data after the child's exit", arch);
	tap_eq(mmp_space_verify(p), 0, "%s: verify", arch);

	pfn = pfn_at(p, a + 200 * PG);
	write_tag(pc, a, 200, 0xc8);
	expect(p, &ps, (struct want){ .wp_reuse = 1 },
	       "the parent alone: page 200 reused, no copy (host: same pfn)");
	tap_eq(pfn_at(p, a + 200 * PG), pfn, "%s: ... the same frame", arch);
	tap_eq(mmp_space_verify(p), 0, "%s: verify", arch);

	/* Exit: the folio goes with its last mapping, and every frame comes back. */
	destroy(p, pc);
	tap_eq(free_pages(), start, "%s: every frame back after both exit", arch);
}

/*
 * The host's other order: the parent writes the page the child already
 * copied. That page is then mapped by no one: the THP is partially mapped at
 * the parent's write (host: thp_split_pmd +1, thp_deferred_split_page +1),
 * and the child's exit adds nothing.
 */
static void check_same_page(const char *arch)
{
	uint64_t a;
	struct mmp_cpu *pc, *cc;
	struct mmp_space *p = thp_space(arch, 0, &a, &pc), *c;
	struct mmp_counters ps, cs;

	must(!mmp_fork(p, &c), "fork");
	must(!mmp_cpu_attach(c, &cc), "attach");
	mmp_space_counters(p, &ps);
	mmp_space_counters(c, &cs);
	write_tag(cc, a, 5, 0xc5);
	write_tag(cc, a, 6, 0xc5);
	write_tag(pc, a, 5, 0xb5);
	expect(p, &ps, (struct want){ .split = 1, .cow = 1, .copy = 1, .alloc0 = 1, .deferred = 1 },
	       "the parent writes the child's page: split, copy, partially mapped");
	expect_smaps(p, a, 2048, 1028, 2040, 8, 0, "parent (host: 2048 1028 2040 8 0)");
	must(!mmp_munmap(c, a, MMP_PMD_SIZE), "child munmap");
	expect(c, &cs, (struct want){ .split = 1, .cow = 2, .copy = 2, .alloc0 = 2, .free = 2 },
	       "the child: its split and copies; its exit finds the THP queued already");
	tap_ok(holds(pc, a, 0x1111, (const unsigned int[]){ 5 }, 1, 0xb5), "%s: parent's data",
	       arch);
	tap_eq(mmp_space_verify(p), 0, "%s: verify", arch);
	destroy(c, cc);
	destroy(p, pc);
}

/*
 * pagemap's exclusive bit through the PMD the parent keeps: 6.18 asks the
 * precise mapcount of the PMD's own page (pmd_page) for every sub-page. A
 * 6.18.44 host: the child writes page 7, and no sub-page of the parent's
 * is exclusive, page 7 neither; it writes page 0 instead, and every one is,
 * page 5 too, which the child still maps.
 */
static void check_pagemap_exclusive(const char *arch, unsigned int written, bool exclusive)
{
	struct mmp_cpu *pc, *cc;
	uint64_t a, pm[3];
	struct mmp_space *p = thp_space(arch, 0, &a, &pc), *c;

	must(!mmp_fork(p, &c), "fork");
	must(!mmp_cpu_attach(c, &cc), "attach");
	write_tag(cc, a, written, 0xc0);
	must(mmp_space_pagemap(p, a, 1, &pm[0]) == 1 &&
	     mmp_space_pagemap(p, a + 5 * PG, 1, &pm[1]) == 1 &&
	     mmp_space_pagemap(p, a + written * PG, 1, &pm[2]) == 1, "pagemap");
	for (int i = 0; i < 3; i++)
		tap_ok((pm[i] & MMP_PM_PRESENT) && !!(pm[i] & MMP_PM_MMAP_EXCLUSIVE) == exclusive,
		       "%s: the child wrote page %u: the parent's page %u is %sexclusive", arch,
		       written, i == 0 ? 0 : i == 1 ? 5 : written, exclusive ? "" : "not ");
	tap_eq(mmp_space_verify(p), 0, "%s: verify", arch);
	destroy(c, cc);
	destroy(p, pc);
}

/* A THP the other side no longer maps is reused on the PMD: no split, no copy. */
static void check_exclusive(const char *arch)
{
	uint64_t a, pfn;
	struct mmp_cpu *pc;
	struct mmp_space *p = thp_space(arch, 0, &a, &pc), *c;
	struct mmp_counters ps;

	must(!mmp_fork(p, &c), "fork");
	must(!mmp_space_destroy(c), "the child exits at once");
	mmp_space_counters(p, &ps);
	pfn = pfn_at(p, a);
	write_tag(pc, a, 5, 0xb5);
	expect(p, &ps, (struct want){ .huge_reuse = 1 },
	       "the only mapping left: reused on the PMD, no split, no copy (host: the same)");
	expect_smaps(p, a, 2048, 2048, 0, 2048, 2048, "parent (host: 2048 2048 0 2048 2048)");
	tap_eq(pfn_at(p, a), pfn, "%s: ... the same THP", arch);
	write_tag(pc, a, 6, 0xb6);
	expect(p, &ps, (struct want){ 0 }, "... writable now: no fault at all");
	tap_eq(mmp_space_verify(p), 0, "%s: verify", arch);
	destroy(p, pc);
}

/*
 * The huge zero page: from 6.13 a write maps a new THP, cleared; at 6.12 the
 * PMD is split into 512 zero-page PTEs and one page is allocated. This host
 * maps no zero page at all (pvm_no_zero_page), so these are the kernel's
 * source, not the oracle.
 */
static void check_huge_zero(const char *arch, long version)
{
	struct mmp_space *s = new_space(phys, arch);
	bool thp = version >= V(6, 13);
	struct mmp_counters snap;
	struct mmp_cpu *cpu;
	uint64_t a, w = 7, buf[512];
	bool zero = true;

	a = (map(s, 4 * MiB, RW) + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
	must(!mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, version), "release");
	must(!mmp_madvise(s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE), "MADV_HUGEPAGE");
	must(!mmp_cpu_attach(s, &cpu), "attach");
	must(!mmp_read(cpu, a, buf, 8), "read");
	must(counter(s, MMP_C_FAULT_HUGE_ZERO) == 1, "the huge zero page");
	mmp_space_counters(s, &snap);
	tap_eq(mmp_write(cpu, a + 300 * PG, &w, 8), 0, "%s %s: write the huge zero page", arch,
	       thp ? "6.13+" : "6.12");
	if (thp)
		expect(s, &snap, (struct want){ .clear = 512, .alloc9 = 1, .huge_anon = 1 },
		       "... a new THP in its place, cleared, no split");
	else
		expect(s, &snap, (struct want){ .split = 1, .cow = 1, .clear = 1, .alloc0 = 1 },
		       "... split into zero-page PTEs, one page allocated");
	for (uint64_t off = 0; off < MMP_PMD_SIZE; off += sizeof(buf)) {
		must(!mmp_read(cpu, a + off, buf, sizeof(buf)), "read");
		for (size_t i = 0; i < ARRAY_SIZE(buf); i++)
			zero &= buf[i] == (off + i * 8 == 300 * PG ? w : 0);
	}
	tap_ok(zero, "%s: zero but the write", arch);
	if (thp)
		expect_smaps(s, a, 2048, 2048, 0, 2048, 2048, "a THP");
	else
		tap_eq(rss(s), 1, "%s: one anonymous page, 511 zero pages", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	destroy(s, cpu);
}

/*
 * The 6.18 zero page with no THP to be had: counted as a fallback (as the
 * kernel's THP_FAULT_FALLBACK), split, and the PTE fault allocates one page.
 */
static void check_huge_zero_no_thp(const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct mmp_phys *small;
	struct mmp_space *s;
	struct mmp_counters snap;
	struct mmp_cpu *cpu;
	uint64_t a, fill_a, w = 9, n = 0;

	must(!mmp_phys_create(8 * MiB, &small), "phys 8 MiB");
	must(!mmp_space_create(small, &cfg, &s), "space");
	must(!mmp_cpu_attach(s, &cpu), "attach");
	a = (map(s, 4 * MiB, RW) + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
	must(!mmp_madvise(s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE), "MADV_HUGEPAGE");
	must(!mmp_read(cpu, a, &w, 8), "read");
	fill_a = map(s, 8 * MiB, RW);
	while (!mmp_write(cpu, fill_a + n * PG, &w, 8))
		n++;
	must(!mmp_munmap(s, fill_a, PG), "one page back");
	mmp_space_counters(s, &snap);
	tap_eq(mmp_write(cpu, a + 3 * PG, &w, 8), 0, "%s: write the huge zero page, no THP free",
	       arch);
	expect(s, &snap, (struct want){ .split = 1, .cow = 1, .clear = 1, .alloc0 = 1,
					.fallback = 1 },
	       "... a fallback: split, one page");
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	destroy(s, cpu);
	must(!mmp_phys_destroy(small), "phys");
}

/*
 * Three spaces share a PTE-mapped THP: parent P, child C, C's child G. The
 * owner slots hold P and C; G maps without one. When P unmaps before G is
 * forked, G takes P's slot and, once C is gone too, its write reuses the page;
 * when P and C unmap after G's fork, no slot ever counts all of G's mappings
 * and its write copies. The host gave exactly this (pagemap, both orders).
 */
static void check_owners(const char *arch, bool p_first)
{
	uint64_t a, pfn;
	struct mmp_cpu *pcpu, *gcpu;
	struct mmp_space *p = thp_space(arch, 0, &a, &pcpu), *c, *g;
	struct mmp_counters gs;

	/* PTE-map it, as the host run did: a page made read-only and back. */
	must(!mmp_mprotect(p, a + 300 * PG, PG, MMP_PROT_READ), "mprotect");
	must(!mmp_mprotect(p, a + 300 * PG, PG, RW), "mprotect");
	must(counter(p, MMP_C_PMD_SPLIT) == 1, "PTE-mapped");
	must(!mmp_fork(p, &c), "fork C");
	if (p_first)
		must(!mmp_munmap(p, a, MMP_PMD_SIZE), "P unmaps");
	must(!mmp_fork(c, &g), "fork G");
	if (!p_first)
		must(!mmp_munmap(p, a, MMP_PMD_SIZE), "P unmaps");
	must(!mmp_munmap(c, a, MMP_PMD_SIZE), "C unmaps");
	must(!mmp_cpu_attach(g, &gcpu), "attach");
	mmp_space_counters(g, &gs);
	pfn = pfn_at(g, a + 7 * PG);
	write_tag(gcpu, a, 7, 0x97);
	if (p_first)
		expect(g, &gs, (struct want){ .wp_reuse = 1 },
		       "P gone before G's fork: G owns a slot, its write reuses (host: REUSED)");
	else
		expect(g, &gs, (struct want){ .cow = 1, .copy = 1, .alloc0 = 1, .deferred = 1 },
		       "P and C gone after G's fork: no slot counts G, a copy (host: COPIED) "
		       "that leaves page 7 unmapped");
	tap_eq(pfn_at(g, a + 7 * PG) == pfn, p_first, "%s: %s frame", arch,
	       p_first ? "the same" : "a new");
	tap_ok(holds(gcpu, a, 0x1111, (const unsigned int[]){ 7 }, 1, 0x97), "%s: G's data", arch);
	tap_eq(mmp_space_verify(g), 0, "%s: verify", arch);
	mmp_cpu_detach(gcpu);
	must(!mmp_space_destroy(g), "destroy G");
	must(!mmp_space_destroy(c), "destroy C");
	destroy(p, pcpu);
}

/*
 * The child owns the PTE-mapped THP in its second slot once the parent has
 * unmapped it; MADV_FREE of part of it splits it (it is the child's alone).
 * The owner slots live in the words of the first tail page that a head keeps
 * its GUP pins in: the new order-0 folio there must start with none.
 */
static void check_split_second_owner(const char *arch)
{
	uint64_t a;
	struct mmp_cpu *pc;
	struct mmp_space *p = thp_space(arch, 0, &a, &pc), *c;
	struct mmp_addr_info pi;

	must(!mmp_mprotect(p, a + 300 * PG, PG, MMP_PROT_READ), "mprotect");
	must(!mmp_mprotect(p, a + 300 * PG, PG, RW), "mprotect");
	must(!mmp_fork(p, &c), "fork");
	struct mmp_cpu *cc;

	must(!mmp_munmap(p, a, MMP_PMD_SIZE), "P unmaps");
	/* Its writes reuse the pages (6.15), which makes them exclusive: MADV_FREE's test. */
	must(!mmp_cpu_attach(c, &cc), "attach");
	write_tag(cc, a, 0, 0xa0);
	write_tag(cc, a, 1, 0xa1);
	tap_eq(mmp_madvise(c, a, 2 * PG, MMP_MADV_FREE), 0, "%s: the child frees 2 pages of it",
	       arch);
	tap_eq(counter(c, MMP_C_FOLIO_SPLIT), 1, "%s: ... which splits the THP", arch);
	must(!mmp_space_query(c, a + PG, &pi), "query");
	tap_eq(pi.pincount, 0, "%s: the first tail, a folio now, holds no pins", arch);
	tap_eq(mmp_space_verify(c), 0, "%s: verify", arch);
	destroy(c, cc);
	destroy(p, pc);
}

/* Before 6.15 a page of a large folio is never reused: the write copies it. */
static void check_reuse_release(const char *arch)
{
	for (int from = 0; from < 2; from++) {
		uint64_t a;
		struct mmp_cpu *pc;
		struct mmp_space *p = thp_space(arch, from ? V(6, 15) : V(6, 14), &a, &pc), *c;
		struct mmp_counters ps;

		must(!mmp_fork(p, &c), "fork");
		must(!mmp_space_destroy(c), "child exits");
		must(!mmp_mprotect(p, a + 300 * PG, PG, MMP_PROT_READ), "mprotect");
		must(!mmp_mprotect(p, a + 300 * PG, PG, RW), "mprotect");
		mmp_space_counters(p, &ps);
		write_tag(pc, a, 9, 0x99);
		if (from)
			expect(p, &ps, (struct want){ .wp_reuse = 1 },
			       "6.15: the PTE-mapped THP it alone maps: reused");
		else
			expect(p, &ps, (struct want){ .cow = 1, .copy = 1, .alloc0 = 1,
						      .deferred = 1 },
			       "6.14: copied, and the THP partially mapped");
		tap_eq(mmp_space_follows(p, "wp_reuse_large_anon"), from, "%s: follows at %s",
		       arch, from ? "6.15" : "6.14");
		tap_eq(mmp_space_verify(p), 0, "%s: verify", arch);
		destroy(p, pc);
	}
}

/*
 * MADV_COLLAPSE over the parent's half-copied THP: a new THP of its own, the
 * old folio kept for the child, freed with the child's last mapping.
 */
static void check_collapse(const char *arch)
{
	uint64_t a, start = free_pages();
	struct mmp_cpu *pc, *cc;
	struct mmp_space *p = thp_space(arch, 0, &a, &pc), *c;
	struct mmp_vma_info vi;

	must(!mmp_fork(p, &c), "fork");
	must(!mmp_cpu_attach(c, &cc), "attach");
	write_tag(cc, a, 5, 0xc5);
	write_tag(pc, a, 100, 0xb0);
	tap_eq(mmp_madvise(p, a, MMP_PMD_SIZE, MMP_MADV_COLLAPSE), 0, "%s: collapse the parent's",
	       arch);
	must(!mmp_space_vma_info(p, a, &vi), "vma info");
	tap_eq(vi.anon_huge_pages, MMP_PMD_SIZE, "%s: ... PMD-mapped again", arch);
	tap_ok(holds(pc, a, 0x1111, (const unsigned int[]){ 100 }, 1, 0xb0) &&
		       holds(cc, a, 0x1111, (const unsigned int[]){ 5 }, 1, 0xc5),
	       "%s: each side keeps its data", arch);
	tap_eq(mmp_space_verify(p), 0, "%s: verify", arch);
	/* A second fork shares the new THP; the child's write splits it as before. */
	destroy(c, cc);
	must(!mmp_fork(p, &c), "fork again");
	must(!mmp_cpu_attach(c, &cc), "attach");
	write_tag(cc, a, 7, 0xc7);
	tap_eq(counter(c, MMP_C_PMD_SPLIT), 1, "%s: the new THP splits on the next COW", arch);
	tap_eq(mmp_space_verify(p), 0, "%s: verify", arch);
	destroy(c, cc);
	destroy(p, pc);
	tap_eq(free_pages(), start, "%s: every frame back", arch);
}

int main(void)
{
	const char *arch;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		printf("# %s\n", arch);
		check_fork_cow(arch);
		check_same_page(arch);
		check_exclusive(arch);
		check_pagemap_exclusive(arch, 7, false);
		check_pagemap_exclusive(arch, 0, true);
		check_huge_zero(arch, V(6, 12));
		check_huge_zero(arch, V(6, 13));
		check_huge_zero(arch, MMP_KERNEL_MODELED);
		check_huge_zero_no_thp(arch);
		check_owners(arch, true);
		check_owners(arch, false);
		check_reuse_release(arch);
		check_split_second_owner(arch);
		check_collapse(arch);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
