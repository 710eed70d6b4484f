/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MADV_COLLAPSE on every back end, rule by rule, as a 6.18 host answers
 * (tests/kdiff compares with the host itself): small pages, none and zero-page
 * entries, a table with nothing in it, an empty PMD, a PMD already huge, a
 * PTE-mapped THP and mTHPs (with arm64's contpte blocks), pages shared with a
 * fork, pinned pages, VMAs too small or marked MADV_NOHUGEPAGE, holes, shared
 * memory. Exact counters and mmp_space_verify() after each.
 */
#include <errno.h>
#include <string.h>

#include "util.h"

#define PG	MMP_PAGE_SIZE
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define PMD	(2 * MiB)
#define NR	512
/* 1 GiB: below every back end's task size, and PMD aligned. */
#define BASE	0x40000000ULL

static struct mmp_phys *phys;

#define SETUP(call) tap_require((call) == 0, "%s: setup: %s", arch, #call)

static uint64_t mapat(struct mmp_space *s, uint64_t addr, uint64_t len, int prot, int flags)
{
	uint64_t got = 0;

	tap_require(mmp_mmap(s, addr, len, prot, MMP_MAP_FIXED | flags, &got) == 0 && got == addr,
		    "mmap %#llx fixed", (unsigned long long)addr);
	return addr;
}

/* Page @i of [a, a + n pages) holds its own stamp (tag, i) in its first word. */
static bool write_pages(struct mmp_cpu *cpu, uint64_t a, unsigned int first, unsigned int n,
			uint64_t tag)
{
	for (unsigned int i = first; i < first + n; i++) {
		uint64_t v = tag << 32 | i;

		if (mmp_write(cpu, a + (uint64_t)i * PG, &v, 8))
			return false;
	}
	return true;
}

/* Page i holds (tag, i) if bit i of @written, else zeroes. */
static bool pages_are(struct mmp_cpu *cpu, uint64_t a, const uint8_t *written, uint64_t tag)
{
	for (unsigned int i = 0; i < NR; i++) {
		uint64_t v = 1, want = written[i] ? tag << 32 | i : 0;

		if (mmp_read(cpu, a + (uint64_t)i * PG, &v, 8) || v != want)
			return false;
	}
	return true;
}

static int leaf_level(struct mmp_space *s, uint64_t a)
{
	struct mmp_addr_info info;

	if (mmp_space_query(s, a, &info))
		return -2;
	return info.leaf_level;
}

static uint64_t d(const struct mmp_counters *c, enum mmp_counter i)
{
	return c->v[i];
}

/* Small pages everywhere, THP "never": MADV_COLLAPSE does not care. */
static void check_small_pages(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	uint64_t a = mapat(s, BASE, 2 * PMD, RW, 0);
	struct mmp_counters before, c;
	struct mmp_space_stat st0, st1;
	uint8_t all[NR];

	memset(all, 1, sizeof(all));
	SETUP(mmp_space_set_thp(s, 9, MMP_THP_NEVER));
	tap_require(write_pages(cpu, a, 0, NR, 1), "%s: fill", arch);
	SETUP(mmp_space_stat(s, &st0));
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), 0, "%s: small pages collapse", arch);
	counters_since(s, &before, &c);
	SETUP(mmp_space_stat(s, &st1));
	tap_eq(leaf_level(s, a + 77 * PG), 1, "%s: mapped by a PMD now", arch);
	tap_ok(pages_are(cpu, a, all, 1), "%s: every page's data in the THP", arch);
	tap_eq(d(&c, MMP_C_THP_COLLAPSE_ALLOC), 1, "%s: thp_collapse_alloc 1", arch);
	tap_eq(d(&c, MMP_C_THP_COLLAPSE_ALLOC_FAILED), 0, "%s: thp_collapse_alloc_failed 0", arch);
	tap_eq(d(&c, MMP_C_TABLE_SYNC_ONE), 1, "%s: one tlb_remove_table_sync_one", arch);
	tap_eq(d(&c, MMP_C_FOLIO_ALLOC_O9), 1, "%s: one order-9 folio", arch);
	tap_eq(d(&c, MMP_C_SUBPAGE_COPY), NR, "%s: 512 pages copied", arch);
	tap_eq(d(&c, MMP_C_SUBPAGE_CLEAR), 0, "%s: nothing cleared", arch);
	tap_eq(d(&c, MMP_C_FOLIO_FREE), NR, "%s: the 512 small folios freed", arch);
	tap_eq(d(&c, MMP_C_PGTABLE_ALLOC) + d(&c, MMP_C_PGTABLE_FREE) +
	       d(&c, MMP_C_PGTABLE_FREE_RCU) + d(&c, MMP_C_PGTABLE_FREE_SYNC), 0,
	       "%s: the old PTE table is the deposit: none allocated or freed", arch);
	tap_eq(d(&c, MMP_C_PMD_WRITE), 2, "%s: PMD cleared, then set", arch);
	tap_eq(st1.rss_anon_pages, st0.rss_anon_pages, "%s: RSS unchanged (512)", arch);
	tap_eq(st1.pgtable_bytes, st0.pgtable_bytes, "%s: VmPTE unchanged", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	/* The THP works as one: a write goes in, DONTNEED drops it and its deposit. */
	tap_ok(write_pages(cpu, a, 3, 1, 2) && !mmp_madvise(s, a, PMD, MMP_MADV_DONTNEED) &&
	       !mmp_space_verify(s), "%s: the THP is written, zapped, verified", arch);
	/* Twice: a huge PMD is a success with nothing to do. */
	tap_ok(write_pages(cpu, a + PMD, 0, 1, 3), "%s: one page in the second PMD", arch);
	SETUP(mmp_madvise(s, a + PMD, PMD, MMP_MADV_COLLAPSE));
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, a + PMD, PMD, MMP_MADV_COLLAPSE), 0, "%s: again: 0", arch);
	counters_since(s, &before, &c);
	tap_eq(d(&c, MMP_C_THP_COLLAPSE_ALLOC), 0, "%s: again: nothing allocated", arch);
	SETUP(mmp_munmap(s, a, 2 * PMD));
}

/* None and zero-page entries become zeroes, and RSS. */
static void check_none_and_zero(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	uint64_t a = mapat(s, BASE, PMD, RW, 0), v;
	struct mmp_counters before, c;
	struct mmp_space_stat st0, st1;
	uint8_t w[NR] = { 0 };

	w[0] = w[100] = 1;
	tap_require(write_pages(cpu, a, 0, 1, 4) && write_pages(cpu, a, 100, 1, 4), "%s: two pages",
		    arch);
	SETUP(mmp_read(cpu, a + 200 * PG, &v, 8));	/* the zero page */
	SETUP(mmp_space_stat(s, &st0));
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), 0, "%s: sparse table collapses", arch);
	counters_since(s, &before, &c);
	SETUP(mmp_space_stat(s, &st1));
	tap_ok(pages_are(cpu, a, w, 4), "%s: two pages of data, the rest zeroes", arch);
	tap_eq(d(&c, MMP_C_SUBPAGE_COPY), 2, "%s: 2 copied", arch);
	tap_eq(d(&c, MMP_C_SUBPAGE_CLEAR), NR - 2, "%s: 510 cleared (none and zero page)", arch);
	tap_eq(d(&c, MMP_C_FOLIO_FREE), 2, "%s: 2 folios freed", arch);
	tap_eq(st1.rss_anon_pages - st0.rss_anon_pages, NR - 2, "%s: RSS grows by 510", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_munmap(s, a, PMD));

	/* A table whose entries are all none: a THP of zeroes. */
	a = mapat(s, BASE, PMD, RW, 0);
	tap_require(write_pages(cpu, a, 0, 1, 5) && write_pages(cpu, a, NR - 1, 1, 5), "%s: 2", arch);
	SETUP(mmp_madvise(s, a, PMD / 2, MMP_MADV_DONTNEED));
	SETUP(mmp_madvise(s, a + PMD / 2, PMD / 2, MMP_MADV_DONTNEED));
	SETUP(mmp_space_stat(s, &st0));
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), 0, "%s: a table of none entries", arch);
	SETUP(mmp_space_stat(s, &st1));
	tap_eq(st1.rss_anon_pages - st0.rss_anon_pages, NR, "%s: RSS +512", arch);
	tap_eq(leaf_level(s, a), 1, "%s: PMD mapped", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_munmap(s, a, PMD));
}

/*
 * No table at all: -EINVAL. Until 7.0 the call ends there, and a PMD after it
 * is not collapsed (a 6.18 host); from 7.0 it goes on and collapses it.
 */
static void check_empty_pmd(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	uint64_t a = mapat(s, BASE, 2 * PMD, RW, 0);
	struct mmp_counters before, c;

	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: a VMA never faulted (no anon_vma): -EINVAL", arch);
	tap_eq(mmp_madvise(s, a, PG, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: ... even for a range that covers no PMD", arch);
	counters_since(s, &before, &c);
	tap_eq(d(&c, MMP_C_THP_COLLAPSE_ALLOC), 0, "%s: empty PMD: nothing allocated", arch);
	tap_require(write_pages(cpu, a, NR, 1, 6), "%s: a page in the second PMD", arch);
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), -EINVAL, "%s: empty PMD: -EINVAL", arch);
	tap_eq(mmp_madvise(s, a, 2 * PMD, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: empty, then populated: -EINVAL", arch);
	tap_eq(leaf_level(s, a + PMD), 0, "%s: ... and the call ended at the empty one (6.18)",
	       arch);
	SETUP(mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(7, 0, 0)));
	tap_eq(mmp_madvise(s, a, 2 * PMD, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: 7.0: empty, then populated: -EINVAL", arch);
	tap_eq(leaf_level(s, a + PMD), 1, "%s: 7.0: ... after collapsing the populated one", arch);
	SETUP(mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_MODELED));
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_munmap(s, a, 2 * PMD));
}

/* Already huge (a THP, the huge zero page): success, nothing done. */
static void check_huge(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	uint64_t a = mapat(s, BASE, 2 * PMD, RW, 0), v;
	struct mmp_counters before, c;

	SETUP(mmp_space_set_thp(s, 9, MMP_THP_MADVISE));
	SETUP(mmp_madvise(s, a, 2 * PMD, MMP_MADV_HUGEPAGE));
	tap_require(write_pages(cpu, a, 0, 1, 7), "%s: THP fault", arch);
	SETUP(mmp_read(cpu, a + PMD, &v, 8));	/* the huge zero page */
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, a, 2 * PMD, MMP_MADV_COLLAPSE), 0, "%s: THP and huge zero: 0", arch);
	counters_since(s, &before, &c);
	tap_eq(d(&c, MMP_C_THP_COLLAPSE_ALLOC), 0, "%s: nothing allocated", arch);
	tap_eq(d(&c, MMP_C_PMD_WRITE), 0, "%s: no PMD written", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_munmap(s, a, 2 * PMD));
	SETUP(mmp_space_set_thp(s, 9, MMP_THP_NEVER));
}

/*
 * A PTE-mapped THP (a page zapped out of it) and 64 KiB mTHPs are copied into
 * a new THP. On arm64 their contpte blocks: with PTE batching whole blocks are
 * cleared folded (clear_full_ptes), one entry at a time each block is
 * unfolded first.
 */
static void check_large_folios(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu,
			       bool batch)
{
	bool arm64 = !strncmp(arch, "arm64", 5);
	uint64_t a = mapat(s, BASE, PMD, RW, 0);
	struct mmp_counters before, c;
	uint8_t w[NR];

	SETUP(mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, batch));
	SETUP(mmp_space_set_thp(s, 9, MMP_THP_MADVISE));
	SETUP(mmp_madvise(s, a, PMD, MMP_MADV_HUGEPAGE));
	tap_require(write_pages(cpu, a, 0, NR, 8), "%s: THP", arch);
	SETUP(mmp_madvise(s, a, PG, MMP_MADV_DONTNEED));	/* split: PTE-mapped, 511 entries */
	tap_eq(leaf_level(s, a + PMD - PG), 0, "%s: PTE-mapped THP", arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), 0, "%s: batch %d: PTE-mapped THP", arch,
	       batch);
	counters_since(s, &before, &c);
	memset(w, 1, sizeof(w));
	w[0] = 0;
	tap_ok(pages_are(cpu, a, w, 8), "%s: batch %d: data kept, the zapped page zero", arch, batch);
	tap_eq(d(&c, MMP_C_FOLIO_FREE), 1, "%s: batch %d: the old THP freed", arch, batch);
	tap_eq(d(&c, MMP_C_SUBPAGE_COPY), NR - 1, "%s: batch %d: 511 copied", arch, batch);
	if (arm64)
		tap_eq(d(&c, MMP_C_CONTPTE_UNFOLD), batch ? 0 : 31,
		       "%s: batch %d: contpte blocks unfolded", arch, batch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_munmap(s, a, PMD));

	/* 64 KiB folios, PTE mapped (arm64: folded). */
	a = mapat(s, BASE, PMD, RW, 0);
	SETUP(mmp_space_set_thp(s, 4, MMP_THP_ALWAYS));
	tap_require(write_pages(cpu, a, 0, NR, 9), "%s: mTHPs", arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), 0, "%s: batch %d: mTHPs collapse", arch,
	       batch);
	counters_since(s, &before, &c);
	memset(w, 1, sizeof(w));
	tap_ok(pages_are(cpu, a, w, 9), "%s: batch %d: mTHP data kept", arch, batch);
	tap_eq(d(&c, MMP_C_FOLIO_FREE), 32, "%s: batch %d: 32 mTHPs freed", arch, batch);
	if (arm64)
		tap_eq(d(&c, MMP_C_CONTPTE_UNFOLD), batch ? 0 : 32,
		       "%s: batch %d: contpte blocks unfolded", arch, batch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_munmap(s, a, PMD));
	SETUP(mmp_space_set_thp(s, 4, MMP_THP_NEVER));
	SETUP(mmp_space_set_thp(s, 9, MMP_THP_NEVER));
	SETUP(mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, 1));
}

/* Pages shared with a child (write-protected, mapcount 2) collapse; the child keeps its own. */
static void check_fork(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	uint64_t a = mapat(s, BASE, PMD, RW, 0);
	struct mmp_space *child;
	struct mmp_counters before, c;
	struct mmp_cpu *ccpu;
	uint8_t w[NR];

	memset(w, 1, sizeof(w));
	tap_require(write_pages(cpu, a, 0, NR, 10), "%s: fill", arch);
	SETUP(mmp_fork(s, &child));
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), 0, "%s: shared with a fork: 0", arch);
	counters_since(s, &before, &c);
	tap_eq(d(&c, MMP_C_FOLIO_FREE), 0, "%s: the child still maps the small folios", arch);
	tap_ok(write_pages(cpu, a, 0, NR, 11), "%s: the parent writes its THP (no COW)", arch);
	tap_eq(counter(s, MMP_C_FAULT_HUGE_COW) + counter(s, MMP_C_FAULT_COW), 0,
	       "%s: no COW fault: the THP is exclusive", arch);
	SETUP(mmp_cpu_attach(child, &ccpu));
	tap_ok(pages_are(ccpu, a, w, 10), "%s: the child reads its own data", arch);
	SETUP(mmp_cpu_detach(ccpu));
	tap_eq(mmp_space_verify(s), 0, "%s: verify parent and child", arch);
	SETUP(mmp_space_destroy(child));
	SETUP(mmp_munmap(s, a, PMD));
}

/* A pin is a reference the mappings do not explain: -EAGAIN, until it goes. */
static void check_pinned(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	uint64_t a = mapat(s, BASE, PMD, RW, 0), pfn;
	struct mmp_counters before, c;
	uint8_t w[NR];

	memset(w, 1, sizeof(w));
	tap_require(write_pages(cpu, a, 0, NR, 12), "%s: fill", arch);
	tap_eq(mmp_gup(s, a + 9 * PG, 1, true, &pfn), 1, "%s: pin page 9", arch);
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), -EAGAIN, "%s: pinned page: -EAGAIN", arch);
	counters_since(s, &before, &c);
	tap_eq(d(&c, MMP_C_THP_COLLAPSE_ALLOC), 0, "%s: the scan saw it: nothing allocated", arch);
	tap_eq(leaf_level(s, a), 0, "%s: still PTE mapped", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_unpin(s, &pfn, 1));
	tap_eq(mmp_gup_fast(s, a + 10 * PG, 1, false, &pfn), 1, "%s: GUP-fast pin page 10", arch);
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), -EAGAIN, "%s: GUP-fast pin: -EAGAIN",
	       arch);
	SETUP(mmp_unpin(s, &pfn, 1));
	tap_eq(mmp_madvise(s, a, PMD, MMP_MADV_COLLAPSE), 0, "%s: unpinned: collapses", arch);
	tap_ok(pages_are(cpu, a, w, 12), "%s: data kept", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_munmap(s, a, PMD));
}

/* What refuses: VMAs, holes, read-only, shared memory. */
static void check_vmas(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	uint64_t a = mapat(s, BASE, 3 * PMD, RW, 0), sh = 0;
	struct mmp_counters before, c;

	tap_require(write_pages(cpu, a, 0, 3 * NR, 13), "%s: fill 6 MiB", arch);
	SETUP(mmp_madvise(s, a + PMD, PMD, MMP_MADV_NOHUGEPAGE));
	mmp_space_counters(s, &before);
	tap_eq(mmp_madvise(s, a + PMD, PMD, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: MADV_NOHUGEPAGE: -EINVAL", arch);
	counters_since(s, &before, &c);
	tap_eq(d(&c, MMP_C_THP_COLLAPSE_ALLOC), 0, "%s: refused before any scan", arch);
	SETUP(mmp_madvise(s, a + PMD, PMD, MMP_MADV_HUGEPAGE));
	/* Under a PMD: half and half of two VMAs; a VMA too small for any. */
	SETUP(mmp_mprotect(s, a + PMD + PMD / 2, PMD / 2, MMP_PROT_READ));
	tap_eq(mmp_madvise(s, a + PMD, PMD / 2, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: a VMA too small for a PMD: -EINVAL", arch);
	tap_eq(mmp_madvise(s, a, PG, MMP_MADV_COLLAPSE), 0,
	       "%s: a range covering no PMD of a big VMA: 0", arch);
	tap_eq(leaf_level(s, a), 0, "%s: ... and nothing done", arch);
	tap_eq(mmp_madvise(s, a + PG, PG, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: a range inside a PMD, not from its start: -EINVAL (hend below hstart)", arch);
	tap_eq(mmp_madvise(s, a + PG, PMD - PG, MMP_MADV_COLLAPSE), 0,
	       "%s: a range from inside a PMD to its end: 0 (none to do)", arch);
	SETUP(mmp_mprotect(s, a + PMD, PMD, MMP_PROT_READ));
	/* Read-only pages collapse (no writable check since 6.x): the PMD is read-only. */
	tap_eq(mmp_madvise(s, a + PMD, PMD, MMP_MADV_COLLAPSE), 0, "%s: read-only VMA: 0", arch);
	tap_eq(mmp_write(cpu, a + PMD, &sh, 8), -EFAULT, "%s: ... mapped read-only", arch);
	/* A hole: the rest is collapsed, then -ENOMEM. */
	SETUP(mmp_munmap(s, a + PMD, PMD));
	tap_eq(mmp_madvise(s, a, 3 * PMD, MMP_MADV_COLLAPSE), -ENOMEM, "%s: over a hole: -ENOMEM",
	       arch);
	tap_ok(leaf_level(s, a) == 1 && leaf_level(s, a + 2 * PMD) == 1,
	       "%s: ... both sides collapsed", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_munmap(s, a, 3 * PMD));

	/* Shared anonymous memory is shmem: not modelled. */
	tap_require(mmp_mmap(s, BASE, PMD, RW, MMP_MAP_SHARED | MMP_MAP_FIXED, &sh) == 0,
		    "%s: shared mapping", arch);
	tap_require(write_pages(cpu, sh, 0, 4, 14), "%s: write it", arch);
	tap_eq(mmp_madvise(s, sh, PMD, MMP_MADV_COLLAPSE), -ENOTSUP, "%s: shmem: -ENOTSUP", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	SETUP(mmp_munmap(s, sh, PMD));
}

int main(void)
{
	const char *arch;

	setvbuf(stdout, NULL, _IOLBF, 0);
	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		struct mmp_space *s = new_space(phys, arch);
		struct mmp_cpu *cpu;

		printf("# back end %s\n", arch);
		SETUP(mmp_cpu_attach(s, &cpu));
		check_small_pages(arch, s, cpu);
		check_none_and_zero(arch, s, cpu);
		check_empty_pmd(arch, s, cpu);
		check_huge(arch, s, cpu);
		check_large_folios(arch, s, cpu, true);
		check_large_folios(arch, s, cpu, false);
		check_fork(arch, s, cpu);
		check_pinned(arch, s, cpu);
		check_vmas(arch, s, cpu);
		SETUP(mmp_cpu_detach(cpu));
		SETUP(mmp_space_destroy(s));
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed: nothing leaked");
	return tap_done();
}
