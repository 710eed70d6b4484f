/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Introspection (mmprim/introspect.h) on every back end: what a query says of
 * a 64 KiB mTHP before and after MADV_FREE, fork and an mprotect that breaks
 * its block; per-VMA smaps sums; the per-order mTHP statistics; pagemap words;
 * the text forms and their buffer sizes; sizes by sysfs name; and that none
 * of it moves a counter. Bad input: the errno of each call, and the space
 * verified after.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "util.h"

#define PG	MMP_PAGE_SIZE
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define O4	(16 * PG)		/* one 64 KiB folio */

static struct mmp_phys *phys;

/*
 * Each introspection call leaves the counters as they were, but for the mmap
 * read lock it takes, as /proc's readers do (mmap_lock_read counts it).
 */
static void check_quiet(struct mmp_space *s, const struct mmp_counters *before, const char *what)
{
	struct mmp_counters d;

	counters_since(s, before, &d);
	d.v[MMP_C_MMAP_LOCK_READ] = d.v[MMP_C_MMAP_LOCK_READ_WAIT] = 0;
	tap_eq(mmp_counters_print(stdout, &d, "#   moved: "), 0, "%s: %s moves no counter",
	       mmp_space_arch(s), what);
}

/* A mapping of @len at a multiple of @align (mTHP folios are naturally aligned). */
static uint64_t map_aligned(struct mmp_space *s, uint64_t len, uint64_t align)
{
	uint64_t a = map(s, len + align, RW), got = 0;

	must(mmp_munmap(s, a, len + align) == 0, "munmap");
	a = (a + align - 1) & ~(align - 1);
	must(mmp_mmap(s, a, len, RW, MMP_MAP_FIXED, &got) == 0 && got == a, "mmap fixed");
	return a;
}

static void one_byte_per(struct mmp_cpu *cpu, uint64_t a, uint64_t len, uint64_t step)
{
	for (uint64_t p = a; p < a + len; p += step)
		must(mmp_write(cpu, p, "x", 1) == 0, "write at %#llx", (unsigned long long)p);
}

static void check_mthp(const char *arch)
{
	const uint64_t len = 1 * MiB, nfolios = len / O4;
	struct mmp_space *s = new_space(phys, arch), *child = NULL;
	struct mmp_addr_info q;
	struct mmp_vma_info v;
	struct mmp_mthp_stats st;
	struct mmp_counters before;
	struct mmp_cpu *cpu;
	uint64_t a, pm[32];

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	mmp_space_set_thp(s, 4, MMP_THP_ALWAYS);
	a = map_aligned(s, len, O4);
	one_byte_per(cpu, a, len, O4);

	mmp_space_counters(s, &before);
	tap_eq(mmp_space_query(s, a + 5 * PG, &q), 0, "%s: query a mapped page", arch);
	tap_eq(q.addr, a + 5 * PG, "%s: the page asked about", arch);
	tap_eq(q.leaf_level, 0, "%s: PTE mapped", arch);
	tap_eq(q.folio_order, 4, "%s: by a 64 KiB folio", arch);
	tap_eq(q.pfn, q.folio_pfn + 5, "%s: page 5 of it", arch);
	tap_eq(q.folio_flags & (MMP_FOLIO_ANON | MMP_FOLIO_SWAPBACKED | MMP_FOLIO_LAZYFREE |
				MMP_FOLIO_ZERO),
	       MMP_FOLIO_ANON | MMP_FOLIO_SWAPBACKED, "%s: anonymous, swapbacked", arch);
	tap_eq(q.folio_mapcount, 16, "%s: folio mapped 16 times", arch);
	tap_eq(q.page_mapcount, 1, "%s: the page once", arch);
	tap_eq(q.refcount, 16, "%s: a reference per mapping", arch);
	tap_eq(q.vma_start, a, "%s: the VMA's start", arch);
	tap_eq(q.vma_prot, RW, "%s: the VMA's protection", arch);
	tap_ok((q.entry_flags[0] & (MMP_ENTRY_PRESENT | MMP_ENTRY_WRITE | MMP_ENTRY_DIRTY)) ==
		       (MMP_ENTRY_PRESENT | MMP_ENTRY_WRITE | MMP_ENTRY_DIRTY),
	       "%s: the PTE present, writable, dirty", arch);
	tap_ok(q.entry_flags[1] & MMP_ENTRY_TABLE, "%s: the PMD points to a table", arch);
	tap_ok(q.entry_flags[q.levels - 1] & MMP_ENTRY_TABLE, "%s: so does the top level", arch);
	if (q.block_entries) {
		tap_eq(q.block_entries, 16, "%s: a block of 16 entries", arch);
		tap_eq(q.block_start, a, "%s: starting at the folio", arch);
		tap_eq(q.block_folded, 1, "%s: folded", arch);
		tap_ok(q.entry_flags[0] & MMP_ENTRY_CONT, "%s: the contiguous bit", arch);
	}

	tap_eq(mmp_space_vma_info(s, 0, &v), 0, "%s: the first VMA", arch);
	tap_eq(v.start, a, "%s: is ours", arch);
	tap_eq(v.rss, len, "%s: Rss", arch);
	tap_eq(v.anonymous, len, "%s: Anonymous", arch);
	tap_eq(v.anon_by_order[4], len, "%s: all of it in 64 KiB folios", arch);
	tap_eq(v.private_dirty, len, "%s: Private_Dirty", arch);
	tap_eq(v.pss, len, "%s: Pss", arch);
	tap_eq(v.anon_huge_pages, 0, "%s: no PMD THP", arch);
	tap_eq(v.thp_orders, 1u << 4, "%s: order 4 eligible", arch);
	tap_eq(mmp_space_vma_info(s, v.end, &v), -ENOMEM, "%s: the end of the list", arch);

	tap_eq(mmp_space_mthp_stats(s, &st), 0, "%s: mTHP stats", arch);
	tap_eq(st.anon_fault_alloc[4], nfolios, "%s: anon_fault_alloc", arch);
	tap_eq(st.nr_anon[4], nfolios, "%s: nr_anon", arch);
	tap_eq(st.nr_anon_partially_mapped[4], 0, "%s: none partially mapped", arch);
	tap_eq(st.anon_fault_fallback[4] + st.split[4], 0, "%s: no fallback, no split", arch);

	tap_eq(mmp_space_pagemap(s, a, 32, pm), 32, "%s: pagemap of two folios", arch);
	tap_eq(pm[5], MMP_PM_PRESENT | MMP_PM_MMAP_EXCLUSIVE | q.pfn, "%s: present, exclusive, pfn",
	       arch);
	check_quiet(s, &before, "query, vma_info, mthp_stats, pagemap");

	/* mprotect one page of the first folio: its block unfolds, the next stays folded. */
	tap_eq(mmp_mprotect(s, a, PG, MMP_PROT_READ), 0, "%s: mprotect one page", arch);
	mmp_space_query(s, a + PG, &q);
	if (q.block_entries)
		tap_eq(q.block_folded, 0, "%s: that block unfolded", arch);
	mmp_space_query(s, a + O4, &q);
	if (q.block_entries)
		tap_eq(q.block_folded, 1, "%s: the next one still folded", arch);
	tap_eq(mmp_mprotect(s, a, PG, RW), 0, "%s: mprotect back", arch);

	/* MADV_FREE of the second folio whole, and of one page of the third: that splits it. */
	tap_eq(mmp_madvise(s, a + O4, O4, MMP_MADV_FREE), 0, "%s: MADV_FREE a folio", arch);
	tap_eq(mmp_madvise(s, a + 2 * O4, PG, MMP_MADV_FREE), 0, "%s: MADV_FREE a page", arch);
	mmp_space_query(s, a + O4, &q);
	tap_eq(q.folio_flags & (MMP_FOLIO_LAZYFREE | MMP_FOLIO_SWAPBACKED), MMP_FOLIO_LAZYFREE,
	       "%s: lazyfree, not swapbacked", arch);
	mmp_space_query(s, a + 2 * O4 + PG, &q);
	tap_eq(q.folio_order, 0, "%s: the partly freed folio was split", arch);
	mmp_space_vma_info(s, a, &v);
	tap_eq(v.lazyfree, O4 + PG, "%s: LazyFree", arch);
	/*
	 * Writing one page again makes it dirty, so no longer lazy, as smaps
	 * says: with a contiguous block, the whole block reads dirty (A/D
	 * gathered as ptep_get gathers them).
	 */
	must(mmp_write(cpu, a + O4, "y", 1) == 0, "redirty");
	mmp_space_vma_info(s, a, &v);
	tap_eq(v.lazyfree, (q.block_entries ? 0 : O4 - PG) + PG, "%s: LazyFree after a write",
	       arch);
	/* The split mapped the folio's 15 zero-filled pages to the zero page (6.12). */
	tap_eq(v.anon_by_order[0], PG, "%s: one order-0 page now, the one written", arch);
	mmp_space_query(s, a + 2 * O4 + 2 * PG, &q);
	tap_ok(q.folio_flags & MMP_FOLIO_ZERO, "%s: the others map the zero page", arch);
	mmp_space_mthp_stats(s, &st);
	tap_eq(st.split[4], 1, "%s: split counted at order 4", arch);
	tap_eq(st.nr_anon[4], nfolios - 1, "%s: one 64 KiB folio fewer", arch);

	/* Unmap half of the fourth folio: partially mapped. */
	tap_eq(mmp_munmap(s, a + 3 * O4, O4 / 2), 0, "%s: munmap half a folio", arch);
	mmp_space_mthp_stats(s, &st);
	tap_eq(st.nr_anon_partially_mapped[4], 1, "%s: nr_anon_partially_mapped", arch);

	/* Shared with a child (the VMA after the munmap hole): mapcounts double. */
	tap_eq(mmp_fork(s, &child), 0, "%s: fork", arch);
	mmp_space_query(s, a + 5 * O4, &q);
	tap_eq(q.folio_mapcount, 32, "%s: after fork the folio is mapped 32 times", arch);
	tap_eq(q.page_mapcount, 2, "%s: the page twice", arch);
	tap_eq(q.entry_flags[0] & MMP_ENTRY_WRITE, 0, "%s: write-protected", arch);
	mmp_space_pagemap(s, a + 5 * O4, 32, pm);
	tap_eq(pm[0], MMP_PM_PRESENT | q.pfn, "%s: pagemap: present, not exclusive", arch);
	mmp_space_vma_info(s, a + 4 * O4, &v);
	tap_eq(v.start, a + 3 * O4 + O4 / 2, "%s: the VMA after the hole", arch);
	tap_eq(v.pss, (v.end - v.start) / 2, "%s: Pss halves", arch);
	tap_eq(v.shared_dirty, v.end - v.start, "%s: Shared_Dirty", arch);
	tap_eq(v.private_dirty, 0, "%s: no Private_Dirty", arch);
	tap_eq(mmp_space_mthp_stats(child, &st), 0, "%s: the child's stats", arch);
	tap_eq(st.anon_fault_alloc[4], 0, "%s: the child faulted nothing", arch);
	tap_eq(st.nr_anon[4], nfolios - 1, "%s: but maps the folios", arch);
	tap_eq(mmp_space_destroy(child), 0, "%s: child exits", arch);

	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

/* A PMD-mapped THP and the zero page. */
static void check_pmd(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *child = NULL;
	struct mmp_addr_info q;
	struct mmp_vma_info v;
	struct mmp_mthp_stats st;
	struct mmp_cpu *cpu;
	uint64_t a, pm[2];
	char c;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map_aligned(s, 4 * MiB, MMP_PMD_SIZE);
	must(mmp_madvise(s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE) == 0, "MADV_HUGEPAGE");
	must(mmp_write(cpu, a + 3 * PG, "x", 1) == 0, "write");
	tap_eq(mmp_space_query(s, a + 3 * PG, &q), 0, "%s: query a THP", arch);
	tap_eq(q.leaf_level, 1, "%s: PMD mapped", arch);
	tap_eq(q.folio_order, 9, "%s: order 9", arch);
	tap_eq(q.pfn, q.folio_pfn + 3, "%s: its page 3", arch);
	tap_ok(q.entry_flags[1] & MMP_ENTRY_LEAF, "%s: a leaf PMD", arch);
	tap_eq(q.entry[0], 0, "%s: no PTE below it", arch);
	tap_eq(mmp_space_vma_info(s, a, &v), 0, "%s: its VMA", arch);
	tap_eq(v.anon_huge_pages, MMP_PMD_SIZE, "%s: AnonHugePages", arch);
	tap_ok(v.flags & MMP_VMA_HUGEPAGE, "%s: hg", arch);
	mmp_space_mthp_stats(s, &st);
	tap_eq(st.anon_fault_alloc[9], 1, "%s: anon_fault_alloc at 2048 kB", arch);
	tap_eq(st.nr_anon[9], 1, "%s: nr_anon at 2048 kB", arch);
	tap_eq(mmp_space_pagemap(s, a + 3 * PG, 2, pm), 2, "%s: pagemap of the THP", arch);
	tap_eq(pm[1], MMP_PM_PRESENT | MMP_PM_MMAP_EXCLUSIVE | (q.pfn + 1),
	       "%s: its next page: present, exclusive, the next pfn", arch);
	tap_eq(mmp_fork(s, &child), 0, "%s: fork", arch);
	mmp_space_pagemap(s, a + 3 * PG, 2, pm);
	tap_eq(pm[1], MMP_PM_PRESENT | (q.pfn + 1), "%s: shared with the child: not exclusive",
	       arch);
	mmp_space_vma_info(s, a, &v);
	tap_eq(v.shared_dirty + v.shared_clean, MMP_PMD_SIZE, "%s: the THP counts shared", arch);
	tap_eq(v.pss, MMP_PMD_SIZE / 2, "%s: Pss halves", arch);
	tap_eq(mmp_space_destroy(child), 0, "%s: child exits", arch);

	/* A read of untouched memory outside the THP maps the zero page. */
	must(mmp_read(cpu, a + MMP_PMD_SIZE + PG, &c, 1) == 0, "read");
	mmp_space_query(s, a + MMP_PMD_SIZE + PG, &q);
	tap_ok(q.leaf_level >= 0 && (q.folio_flags & MMP_FOLIO_ZERO), "%s: the zero page", arch);
	tap_eq(mmp_space_pagemap(s, a + MMP_PMD_SIZE + PG, 2, pm), 2, "%s: pagemap", arch);
	tap_eq(pm[0], MMP_PM_PRESENT | q.pfn, "%s: zero page present, not exclusive", arch);
	tap_eq(pm[1], 0, "%s: the page after it reads 0", arch);

	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_text(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	char small[16], *buf, line[64];
	uint64_t a;
	int n, m;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	mmp_space_set_thp(s, 4, MMP_THP_ALWAYS);
	a = map_aligned(s, 256 * KiB, O4);
	one_byte_per(cpu, a, 256 * KiB, O4);

	n = mmp_space_smaps_buf(s, NULL, 0);
	tap_ok(n > 0, "%s: smaps size asked with no buffer: %d", arch, n);
	m = mmp_space_smaps_buf(s, small, sizeof(small));
	tap_eq(m, n, "%s: a too-small buffer reports the size needed", arch);
	tap_eq(strlen(small), sizeof(small) - 1, "%s: and holds a NUL-terminated prefix", arch);
	buf = malloc((size_t)n + 1);
	must(buf, "malloc");
	tap_eq(mmp_space_smaps_buf(s, buf, (size_t)n + 1), n, "%s: smaps into a buffer", arch);
	tap_eq(strlen(buf), n, "%s: all of it", arch);
	snprintf(line, sizeof(line), "%-16s%8llu kB\n", "Rss:", 256ULL);
	tap_ok(strstr(buf, line) != NULL, "%s: an Rss line in the kernel's format", arch);
	snprintf(line, sizeof(line), "%-16s%8llu kB\n", "AnonMTHP-64kB:", 256ULL);
	tap_ok(strstr(buf, line) != NULL, "%s: the 64 kB line", arch);
	tap_ok(strstr(buf, "THPeligible:           1\n") != NULL, "%s: THPeligible", arch);
	tap_ok(strstr(buf, "VmFlags: rd wr mr mw me ac \n") != NULL, "%s: VmFlags", arch);
	snprintf(line, sizeof(line), "%08llx-%08llx rw-p 00000000 00:00 0 \n",
		 (unsigned long long)a, (unsigned long long)(a + 256 * KiB));
	tap_ok(strncmp(buf, line, strlen(line)) == 0, "%s: the map line", arch);
	free(buf);

	n = mmp_space_pagemap_print_buf(s, a, O4, NULL, 0);
	buf = malloc((size_t)n + 1);
	must(buf, "malloc");
	tap_eq(mmp_space_pagemap_print_buf(s, a, O4, buf, (size_t)n + 1), n, "%s: pagemap text",
	       arch);
	m = 0;
	for (char *p = buf; (p = strchr(p, '\n')); p++)
		m++;
	tap_eq(m, 16, "%s: a line per page", arch);
	tap_ok(strstr(buf, "order 4 mapcount 1/16") != NULL, "%s: folio order and mapcounts", arch);
	free(buf);
	tap_eq(mmp_space_pagemap_print_buf(s, a + 256 * KiB, O4, small, sizeof(small)), 0,
	       "%s: a hole prints nothing", arch);
	tap_eq(small[0], '\0', "%s: and the buffer is an empty string", arch);

	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_bad_input(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_addr_info q;
	struct mmp_vma_info v;
	struct mmp_mthp_stats st;
	uint64_t a, ts = task_size(s), pm[4] = { 1, 1, 1, 1 };
	char buf[8];

	a = map(s, 64 * KiB, RW);
	tap_eq(mmp_space_query(NULL, a, &q), -EINVAL, "%s: query: NULL space", arch);
	tap_eq(mmp_space_query(s, a, NULL), -EINVAL, "%s: query: NULL info", arch);
	tap_eq(mmp_space_query_sized(s, a, &q, 4), -EINVAL, "%s: query: size 4", arch);
	tap_eq(mmp_space_query(s, a + 64 * KiB, &q), -ENOMEM, "%s: query: a hole", arch);
	tap_eq(mmp_space_query(s, ts, &q), -ENOMEM, "%s: query: the task size", arch);
	tap_eq(mmp_space_query(s, UINT64_MAX, &q), -ENOMEM, "%s: query: the last byte", arch);
	tap_eq(mmp_space_query(s, a + 5, &q), 0, "%s: query: an unmapped page of a VMA", arch);
	tap_eq(q.leaf_level, -1, "%s: no leaf", arch);
	tap_eq(q.pfn, MMP_NO_PFN, "%s: no pfn", arch);
	tap_eq(q.addr, a, "%s: the address rounded down", arch);
	tap_eq(mmp_space_vma_info(NULL, 0, &v), -EINVAL, "%s: vma_info: NULL", arch);
	tap_eq(mmp_space_vma_info_sized(s, 0, &v, 0), -EINVAL, "%s: vma_info: size 0", arch);
	tap_eq(mmp_space_vma_info(s, ts, &v), -ENOMEM, "%s: vma_info: the task size", arch);
	tap_eq(mmp_space_mthp_stats(NULL, &st), -EINVAL, "%s: mthp_stats: NULL", arch);
	tap_eq(mmp_space_mthp_stats_sized(s, &st, 7), -EINVAL, "%s: mthp_stats: size 7", arch);
	tap_eq(mmp_space_pagemap(s, a + 1, 1, pm), -EINVAL, "%s: pagemap: unaligned", arch);
	tap_eq(mmp_space_pagemap(s, a, 1, NULL), -EINVAL, "%s: pagemap: NULL", arch);
	tap_eq(mmp_space_pagemap(s, a, (unsigned int)INT_MAX + 1, pm), -EINVAL,
	       "%s: pagemap: nr above INT_MAX", arch);
	tap_eq(mmp_space_pagemap(s, ts - 2 * PG, 4, pm), 2, "%s: pagemap: stops at the task size",
	       arch);
	tap_eq(pm[0] | pm[1], 0, "%s: holes read 0", arch);
	tap_eq(pm[2], 1, "%s: nothing written past the task size", arch);
	tap_eq(mmp_space_pagemap(s, ts, 4, pm), 0, "%s: pagemap at the task size: 0", arch);
	tap_eq(mmp_space_smaps(s, NULL), -EINVAL, "%s: smaps: NULL FILE", arch);
	tap_eq(mmp_space_smaps_buf(NULL, buf, sizeof(buf)), -EINVAL, "%s: smaps: NULL space",
	       arch);
	tap_eq(mmp_space_smaps_buf(s, NULL, 8), -EINVAL, "%s: smaps: NULL buffer of 8", arch);
	tap_eq(mmp_space_pagemap_print_buf(s, a + 1, PG, buf, sizeof(buf)), -EINVAL,
	       "%s: pagemap_print: unaligned address", arch);
	tap_eq(mmp_space_pagemap_print_buf(s, a, PG + 1, buf, sizeof(buf)), -EINVAL,
	       "%s: pagemap_print: unaligned length", arch);
	tap_eq(mmp_space_pagemap_print(s, a, PG, NULL), -EINVAL, "%s: pagemap_print: NULL FILE",
	       arch);
	tap_eq(mmp_space_pagemap_print_buf(s, ts, UINT64_MAX & ~(PG - 1), buf, sizeof(buf)), 0,
	       "%s: pagemap_print past the task size: nothing", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the errors", arch);
	must(mmp_space_destroy(s) == 0, "destroy");
}

struct racer {
	struct mmp_space *s;
	uint64_t a, len;
	volatile int stop;
};

/* Fault, MADV_DONTNEED (PT_RECLAIM frees the tables) and fault again, while queries run. */
static void *race_faults(void *arg)
{
	struct racer *r = arg;
	struct mmp_cpu *cpu;

	must(mmp_cpu_attach(r->s, &cpu) == 0, "attach");
	for (int i = 0; i < 200; i++) {
		for (uint64_t p = r->a; p < r->a + r->len; p += O4)
			must(mmp_write(cpu, p, "y", 1) == 0, "racing write");
		must(mmp_madvise(r->s, r->a, r->len, MMP_MADV_DONTNEED) == 0, "DONTNEED");
	}
	r->stop = 1;
	must(mmp_cpu_detach(cpu) == 0, "detach");
	return NULL;
}

static void check_race(const char *arch)
{
	struct racer r = { .s = new_space(phys, arch), .len = 2 * MiB };
	struct mmp_addr_info q;
	struct mmp_vma_info v;
	pthread_t t;
	uint64_t pm[16];
	int bad = 0, rounds = 0;

	mmp_space_set_thp(r.s, 4, MMP_THP_ALWAYS);
	r.a = map_aligned(r.s, r.len, O4);
	must(pthread_create(&t, NULL, race_faults, &r) == 0, "thread");
	while (!r.stop) {
		for (uint64_t p = r.a; p < r.a + r.len; p += 128 * KiB) {
			bad += mmp_space_query(r.s, p, &q) != 0;
			bad += q.leaf_level >= 0 && q.folio_order != 4;
		}
		bad += mmp_space_vma_info(r.s, r.a, &v) != 0 || v.rss % O4 != 0;
		bad += mmp_space_pagemap(r.s, r.a, 16, pm) != 16;
		rounds++;
	}
	pthread_join(t, NULL);
	tap_eq(bad, 0, "%s: %d rounds of queries beside faults and table frees", arch, rounds);
	tap_eq(mmp_space_verify(r.s), 0, "%s: verify", arch);
	must(mmp_space_destroy(r.s) == 0, "destroy");
}

static void check_names(void)
{
	static const struct {
		const char *name;
		int order;
	} cases[] = {
		{ "hugepages-16kB", 2 },	{ "hugepages-64kB", 4 },
		{ "hugepages-2048kB", 9 },	{ "64kB", 4 },
		{ "64K", 4 },			{ "65536", 4 },
		{ "2097152", 9 },		{ "hugepages-4kB", -EINVAL },
		{ "hugepages-65536", -EINVAL }, { "hugepages-48kB", -EINVAL },
		{ "4096kB", -EINVAL },		{ "", -EINVAL },	   { "kB", -EINVAL },
		{ "64kBx", -EINVAL },		{ "-64kB", -EINVAL },
		{ "99999999999999999999kB", -EINVAL },
	};
	struct mmp_counters c = { { 0 } };
	FILE *f;
	char out[256] = "";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_eq(mmp_thp_order(cases[i].name), cases[i].order, "mmp_thp_order(\"%s\")",
		       cases[i].name);
	tap_eq(mmp_thp_order(NULL), -EINVAL, "mmp_thp_order(NULL)");
	tap_ok(!strcmp(mmp_thp_size_name(4), "hugepages-64kB"), "order 4 is hugepages-64kB");
	tap_ok(!strcmp(mmp_thp_size_name(9), "hugepages-2048kB"), "order 9 is hugepages-2048kB");
	tap_ok(!mmp_thp_size_name(1) && !mmp_thp_size_name(10), "orders 1 and 10 have no name");
	for (unsigned int o = 2; o <= 9; o++)
		tap_eq(mmp_thp_order(mmp_thp_size_name(o)), o, "order %u's name reads back", o);

	tap_eq(mmp_counter_by_name("tlb_flush_all"), MMP_C_TLB_FLUSH_ALL, "counter by name");
	tap_eq(mmp_counter_by_name("no_such"), -ENOENT, "unknown counter name");
	tap_eq(mmp_counter_by_name(NULL), -EINVAL, "NULL counter name");
	c.v[MMP_C_PTE_BATCH] = 128;
	c.v[MMP_C_CONTPTE_UNFOLD] = 3;
	f = fmemopen(out, sizeof(out), "w");
	must(f, "fmemopen");
	tap_eq(mmp_counters_print(f, &c, "> "), 2, "print: two counters moved");
	fclose(f);
	tap_ok(!strcmp(out, "> contpte_unfold       3\n> pte_batch            128\n"),
	       "print: name and value, in counter order");
	tap_eq(mmp_counters_print_sized(stdout, &c, 4, NULL), -EINVAL, "print: size 4");
	tap_eq(mmp_counters_print(NULL, &c, NULL), -EINVAL, "print: NULL FILE");
	tap_eq(mmp_counters_print(stdout, NULL, NULL), -EINVAL, "print: NULL counters");
	/* A caller's older, shorter structure: counters beyond it count as 0. */
	tap_eq(mmp_counters_print_sized(stdout, &c, MMP_C_PTE_BATCH * sizeof(uint64_t), "#   "), 1,
	       "print: only the counters the caller's size holds");
}

int main(int argc, char **argv)
{
	const char *name;

	must(mmp_phys_create(256 * MiB, &phys) == 0, "phys");
	for_each_arch(i, name) {
		if (argc > 1 && strcmp(argv[1], name))
			continue;
		check_mthp(name);
		check_pmd(name);
		check_text(name);
		check_bad_input(name);
		check_race(name);
	}
	check_names();
	must(mmp_phys_destroy(phys) == 0, "phys destroy");
	return tap_done();
}
