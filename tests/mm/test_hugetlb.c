/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hugetlb on every back end: the pool and its counts (HugePages_Total, _Free,
 * _Rsvd, _Surp) through mmap, faults, fork, copy-on-write, munmap and exit;
 * faults clearing and copying in the space's sub-page order (the target
 * last); the syscalls' rules for hugetlb mappings and what they refuse; smaps
 * and pagemap. The expected figures are those a 6.18 host gave
 * (docs/testing.md, "hugetlb on the host").
 */
#include <string.h>

#include "debug.h"
#include "mm.h"
#include "util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define HP	MMP_PMD_SIZE
#define NR	(HP / MMP_PAGE_SIZE)

static struct mmp_phys *phys;

struct pool {
	uint64_t total, free, rsvd, surp;
};

static struct pool pool(void)
{
	struct mmp_hugepages_stat st;

	must(mmp_phys_hugepages(phys, HP, &st) == 0, "the 2 MiB pool");
	return (struct pool){ st.total, st.free, st.rsvd, st.surp };
}

#define pool_is(t, f, r, sp, ...)							\
	do {									\
		struct pool _p = pool();					\
		tap_ok(_p.total == (t) && _p.free == (f) && _p.rsvd == (uint64_t)(r) &&	\
			       _p.surp == (sp),					\
		       __VA_ARGS__);						\
		if (_p.total != (t) || _p.free != (f) || _p.rsvd != (uint64_t)(r) ||	\
		    _p.surp != (sp))						\
			printf("#   pool: total %llu free %llu rsvd %lld surp %llu\n",	\
			       (unsigned long long)_p.total, (unsigned long long)_p.free,	\
			       (long long)_p.rsvd, (unsigned long long)_p.surp);	\
	} while (0)

static void set_pool(uint64_t nr)
{
	must(mmp_phys_set_hugepages(phys, HP, nr) == 0, "nr_hugepages");
}

static uint64_t hmap(struct mmp_space *s, uint64_t len, int flags)
{
	uint64_t a = 0;

	must(mmp_mmap(s, 0, len, RW, MMP_MAP_HUGETLB | flags, &a) == 0, "a hugetlb mmap");
	return a;
}

static bool verify_all(struct mmp_space *s)
{
	return mmp_space_verify(s) == 0;
}

/* ---- the pool's API ------------------------------------------------------------------- */

static void check_pool_api(void)
{
	struct mmp_hugepages_stat st;
	uint64_t mask = 0;
	const char *name;

	tap_eq(mmp_phys_set_hugepages(NULL, HP, 1), -EINVAL, "set_hugepages: NULL phys");
	tap_eq(mmp_phys_set_hugepages(phys, 1ULL << 29, 1), -EINVAL,
	       "set_hugepages: 512 MiB is not a pool here (arm64 64K-granule's PMD)");
	tap_eq(mmp_phys_set_hugepages(phys, 4096, 1), -EINVAL, "set_hugepages: 4 KiB");
	tap_eq(mmp_phys_set_overcommit_hugepages(phys, 3 << 20, 1), -EINVAL,
	       "set_overcommit: 3 MiB");
	tap_eq(mmp_phys_hugepages(phys, HP, NULL), -EINVAL, "hugepages: NULL stat");
	tap_eq(mmp_phys_hugepages_sized(phys, HP, &st, 4), -EINVAL, "hugepages: size 4");
	tap_eq(mmp_phys_hugepages(phys, 16 << 10, &st), -EINVAL, "hugepages: 16 KiB");
	/* A pool of every size the kernel has an hstate of somewhere; back ends pick. */
	tap_ok(mmp_phys_hugepages(phys, 64 << 10, &st) == 0 && st.size == 64 << 10 &&
		       mmp_phys_hugepages(phys, 32 << 20, &st) == 0 &&
		       mmp_phys_hugepages(phys, 1ULL << 30, &st) == 0 && st.total == 0,
	       "hugepages: pools of 64 KiB, 32 MiB and 1 GiB, empty");
	tap_eq(mmp_hugetlb_sizes(NULL, &mask), -EINVAL, "hugetlb_sizes: NULL arch");
	tap_eq(mmp_hugetlb_sizes("vax", &mask), -ENOENT, "hugetlb_sizes: unknown arch");
	for_each_arch(i, name) {
		bool arm64 = !strncmp(name, "arm64", 5);
		uint64_t want = HP | (arm64 ? (64 << 10) | (32 << 20) : 0);

		tap_ok(mmp_hugetlb_sizes(name, &mask) == 0 && (mask & ~(1ULL << 30)) == want,
		       "%s declares 2 MiB hugetlb pages%s", name,
		       arm64 ? ", 64 KiB and 32 MiB as contiguous entries" : "");
	}
	pool_is(0, 0, 0, 0, "a new phys has an empty pool");
	set_pool(8);
	tap_ok(mmp_phys_hugepages(phys, HP, &st) == 0 && st.size == HP && st.total == 8 &&
		       st.free == 8 && st.nr_overcommit == 0,
	       "nr_hugepages 8: 8 pages of 2 MiB, free");
	/* More than memory holds: what the phys can give, as the sysctl write. */
	set_pool(1ULL << 40);
	tap_ok(pool().total > 8 && pool().total < 64 * MiB / HP, "nr_hugepages past memory: "
	       "as many as fit (%llu)", (unsigned long long)pool().total);
	set_pool(0);
	pool_is(0, 0, 0, 0, "nr_hugepages 0: empty again");
}

/* ---- reservations at mmap, faults, munmap ---------------------------------------------- */

static void check_reservations(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	struct mmp_space_stat st;
	uint64_t p, q, n, odd, a = 0xdead, buf[NR / 8];
	struct mmp_counters before, d;
	bool zero = true;

	set_pool(8);
	mmp_cpu_attach(s, &cpu);
	/* As the host: private 3, shared 2, NORESERVE 2, 10 refused, 4 KiB rounded to 1. */
	p = hmap(s, 3 * HP, 0);
	pool_is(8, 8, 3, 0, "%s: private 3 pages reserves 3", arch);
	q = hmap(s, 2 * HP, MMP_MAP_SHARED);
	pool_is(8, 8, 5, 0, "%s: shared 2 pages reserves 2 more", arch);
	n = hmap(s, 2 * HP, MMP_MAP_NORESERVE);
	pool_is(8, 8, 5, 0, "%s: MAP_NORESERVE reserves nothing", arch);
	tap_eq(mmp_mmap(s, 0, 10 * HP, RW, MMP_MAP_HUGETLB, &a), -ENOMEM,
	       "%s: 10 pages with 3 left: -ENOMEM", arch);
	tap_ok(a == 0xdead, "%s: ... and no address", arch);
	odd = hmap(s, 4096, 0);
	pool_is(8, 8, 6, 0, "%s: 4 KiB rounds up to one huge page, reserved", arch);
	tap_ok(!(p & (HP - 1)) && !(q & (HP - 1)) && !(odd & (HP - 1)),
	       "%s: hugetlb mappings are 2 MiB aligned", arch);

	mmp_space_counters(s, &before);
	tap_eq(put8(cpu, p + 100, 1), 0, "%s: write the first private page", arch);
	counters_since(s, &before, &d);
	tap_ok(d.v[MMP_C_FAULT_HUGETLB] == 1 && d.v[MMP_C_HUGETLB_ALLOC] == 1 &&
		       d.v[MMP_C_SUBPAGE_CLEAR] == NR && d.v[MMP_C_FAULT_HUGE_ANON] == 0 &&
		       d.v[MMP_C_FOLIO_ALLOC_O9] == 0 && d.v[MMP_C_PMD_WRITE] == 1,
	       "%s: ... one hugetlb fault, a pool page cleared (512 sub-pages), no THP", arch);
	pool_is(8, 7, 5, 0, "%s: ... consumes a reservation", arch);
	mmp_read(cpu, p + HP, buf, sizeof(buf));
	for (size_t i = 0; i < ARRAY_SIZE(buf); i++)
		zero &= !buf[i];
	tap_ok(zero, "%s: a read fault of the second reads zeroes", arch);
	pool_is(8, 6, 4, 0, "%s: ... and takes a page too (no zero page)", arch);
	tap_eq(put8(cpu, q + 5, 1), 0, "%s: write the shared mapping", arch);
	pool_is(8, 5, 3, 0, "%s: ... consumes its reservation", arch);
	mmp_space_stat(s, &st);
	tap_ok(st.hugetlb_pages == 3 * NR && st.rss_anon_pages == 0 && st.rss_shmem_pages == 0,
	       "%s: HugetlbPages 3 huge pages, none in RSS", arch);
	tap_eq(put8(cpu, n, 1), 0, "%s: MAP_NORESERVE fault while pages are free", arch);
	pool_is(8, 4, 3, 0, "%s: ... takes an unreserved one", arch);
	tap_ok(verify_all(s), "%s: verify", arch);

	/* munmap wants whole huge pages; mmap rounded up. */
	tap_eq(mmp_munmap(s, p, 4096), -EINVAL, "%s: munmap of 4 KiB of a huge page", arch);
	tap_eq(mmp_munmap(s, p + 4096, HP), -EINVAL, "%s: munmap from inside a huge page", arch);
	tap_eq(mmp_munmap(s, p, HP + 4096), -EINVAL, "%s: munmap ending inside one", arch);
	tap_eq(mmp_munmap(s, odd, 4096), -EINVAL, "%s: munmap 4 KiB of the rounded mapping",
	       arch);
	tap_eq(mmp_munmap(s, odd, HP), 0, "%s: munmap it whole", arch);
	pool_is(8, 4, 2, 0, "%s: ... gives its reservation back", arch);
	tap_eq(mmp_munmap(s, p, 3 * HP), 0, "%s: munmap the private mapping", arch);
	pool_is(8, 6, 1, 0, "%s: ... its pages and last reservation go back (1 is the shared "
		"one's)", arch);
	tap_eq(mmp_munmap(s, n, 2 * HP), 0, "%s: munmap the NORESERVE mapping", arch);
	pool_is(8, 7, 1, 0, "%s: ... its page goes back", arch);
	mmp_space_stat(s, &st);
	tap_eq(st.hugetlb_pages, NR, "%s: HugetlbPages: the shared page left", arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	pool_is(8, 8, 0, 0, "%s: exit gives the shared page and its file back", arch);
	set_pool(0);
}

/* ---- copy-on-write in the target-last order ------------------------------------------ */

static uint64_t pattern(uint64_t off)
{
	return off * 0x9e3779b97f4a7c15ULL + 0x5555;
}

static void fill_pattern(struct mmp_cpu *cpu, uint64_t a, uint64_t len)
{
	static uint64_t buf[512];

	for (uint64_t off = 0; off < len; off += sizeof(buf)) {
		for (size_t i = 0; i < ARRAY_SIZE(buf); i++)
			buf[i] = pattern(off + i * 8);
		mmp_write(cpu, a + off, buf, sizeof(buf));
	}
}

static bool region_matches(struct mmp_cpu *cpu, uint64_t a, uint64_t len, uint64_t skip)
{
	static uint64_t buf[512];
	bool ok = true;

	for (uint64_t off = 0; off < len; off += sizeof(buf)) {
		if (mmp_read(cpu, a + off, buf, sizeof(buf)))
			return false;
		for (size_t i = 0; i < ARRAY_SIZE(buf); i++)
			if (off + i * 8 != skip)
				ok &= buf[i] == pattern(off + i * 8);
	}
	return ok;
}

/* @seq is process_huge_page's order for target @n: its own permutation, ending on @n. */
static bool order_is(const unsigned int *seq, unsigned int len, int order, unsigned int n)
{
	static unsigned int want[NR];

	if (len != NR || huge_page_order(order, n, NR, 0, want) != NR)
		return false;
	return !memcmp(seq, want, sizeof(want));
}

static void check_cow(const char *arch, int order, unsigned int n)
{
	static unsigned int seq[NR];
	struct mmp_huge_trace t = { .order = seq, .cap = NR };
	struct mmp_space *s = new_space(phys, arch), *c;
	struct mmp_cpu *pc, *cc;
	struct mmp_counters before, d;
	uint64_t p, off = (uint64_t)n * PAGE_SIZE + 8 * 17, w = 0xc0ffee;

	set_pool(4);
	mmp_space_set_opt(s, MMP_OPT_HUGE_ORDER, order);
	mmp_cpu_attach(s, &pc);
	p = hmap(s, 2 * HP, 0);
	/* The first touch clears in the clear order, which 6.18 takes from the copy order. */
	mmp_debug_trace_huge(s, &t);
	put8(pc, p + off, 1);
	mmp_debug_trace_huge(s, NULL);
	tap_ok(order_is(seq, t.n, order, n), "%s %s n=%u: the fault clears in that order "
	       "(6.18's clear order is the copy order)", arch, mmp_huge_order_name(order), n);
	fill_pattern(pc, p, 2 * HP);
	pool_is(4, 2, 0, 0, "%s %s: 2 pages faulted, reservations consumed", arch,
		mmp_huge_order_name(order));

	tap_eq(mmp_fork(s, &c), 0, "%s %s: fork", arch, mmp_huge_order_name(order));
	pool_is(4, 2, 0, 0, "%s %s: ... shares the pages, takes none", arch,
		mmp_huge_order_name(order));
	mmp_cpu_attach(c, &cc);
	t.n = 0;
	mmp_debug_trace_huge(c, &t);
	mmp_space_counters(c, &before);
	tap_eq(mmp_write(cc, p + off, &w, 8), 0, "%s %s n=%u: the child writes", arch,
	       mmp_huge_order_name(order), n);
	counters_since(c, &before, &d);
	mmp_debug_trace_huge(c, NULL);
	tap_ok(d.v[MMP_C_FAULT_HUGETLB_COW] == 1 && d.v[MMP_C_SUBPAGE_COPY] == NR &&
		       d.v[MMP_C_HUGETLB_ALLOC] == 1 && d.v[MMP_C_SUBPAGE_CLEAR] == 0 &&
		       d.v[MMP_C_FAULT_HUGETLB_REUSE] == 0 && d.v[MMP_C_PMD_SPLIT] == 0 &&
		       d.v[MMP_C_FAULT_COW] == 0,
	       "%s %s: ... one hugetlb COW copying 512 sub-pages, no split", arch,
	       mmp_huge_order_name(order));
	tap_ok(order_is(seq, t.n, order, n), "%s %s n=%u: ... in that order, sub-page by "
	       "sub-page (target-last: the target last)", arch, mmp_huge_order_name(order), n);
	pool_is(4, 1, 0, 0, "%s %s: ... the child's copy takes a free page", arch,
		mmp_huge_order_name(order));
	tap_ok(get8(cc, p + off) == w && region_matches(cc, p, 2 * HP, off),
	       "%s %s: ... the child sees its write, the parent's data elsewhere", arch,
	       mmp_huge_order_name(order));
	tap_ok(region_matches(pc, p, 2 * HP, UINT64_MAX), "%s %s: ... the parent keeps its data",
	       arch, mmp_huge_order_name(order));
	tap_ok(verify_all(s), "%s %s: verify", arch, mmp_huge_order_name(order));
	mmp_cpu_detach(cc);
	mmp_space_destroy(c);
	pool_is(4, 2, 0, 0, "%s %s: the child's exit frees its copy", arch,
		mmp_huge_order_name(order));
	mmp_space_counters(s, &before);
	tap_eq(put8(pc, p + HP, 2), 0, "%s %s: the parent writes a page no one shares now", arch,
	       mmp_huge_order_name(order));
	counters_since(s, &before, &d);
	tap_ok(d.v[MMP_C_FAULT_HUGETLB_REUSE] == 1 && d.v[MMP_C_SUBPAGE_COPY] == 0 &&
		       d.v[MMP_C_HUGETLB_ALLOC] == 0,
	       "%s %s: ... reuses it in place", arch, mmp_huge_order_name(order));
	tap_ok(verify_all(s), "%s %s: verify", arch, mmp_huge_order_name(order));
	mmp_cpu_detach(pc);
	mmp_space_destroy(s);
	pool_is(4, 4, 0, 0, "%s %s: exit: the pool is whole", arch, mmp_huge_order_name(order));
	set_pool(0);
}

/* The owner writes while a child shares; then an empty pool: SIGBUS and unmap_ref_private. */
static void check_cow_empty_pool(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *c;
	struct mmp_cpu *pc, *cc;
	uint64_t p, v;

	set_pool(2);
	mmp_cpu_attach(s, &pc);
	p = hmap(s, 2 * HP, 0);
	put8(pc, p, 1);
	put8(pc, p + HP, 2);
	pool_is(2, 0, 0, 0, "%s: the whole pool faulted in", arch);
	mmp_fork(s, &c);
	mmp_cpu_attach(c, &cc);
	tap_eq(put8(cc, p, 5), -EIO, "%s: the child's COW with an empty pool: SIGBUS", arch);
	tap_eq(counter(c, MMP_C_FAULT_HUGETLB_SIGBUS), 1, "%s: ... counted", arch);
	tap_eq(get8(cc, p), 1, "%s: ... the child still reads the shared page", arch);
	tap_eq(put8(pc, p, 6), 0, "%s: the owner's COW with an empty pool succeeds", arch);
	tap_ok(counter(s, MMP_C_HUGETLB_UNMAP_REF) == 1 &&
		       counter(s, MMP_C_FAULT_HUGETLB_REUSE) == 1 &&
		       counter(s, MMP_C_FAULT_HUGETLB_COW) == 0,
	       "%s: ... by taking the page back from the child and reusing it", arch);
	tap_eq(mmp_read(cc, p, &v, 8), -EIO, "%s: the child then reads there: SIGBUS", arch);
	tap_eq(mmp_madvise(c, p + HP, HP, MMP_MADV_DONTNEED), 0,
	       "%s: the child drops its other page", arch);
	tap_eq(mmp_read(cc, p + HP, &v, 8), -EIO,
	       "%s: ... and faulting anywhere in that mapping is SIGBUS (the kernel kills it)",
	       arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	mmp_cpu_detach(cc);
	mmp_space_destroy(c);
	tap_eq(get8(pc, p), 6, "%s: the owner keeps its write", arch);
	mmp_cpu_detach(pc);
	mmp_space_destroy(s);
	pool_is(2, 2, 0, 0, "%s: everything back", arch);

	/* NORESERVE with every page promised elsewhere: SIGBUS at the fault, not at mmap. */
	s = new_space(phys, arch);
	mmp_cpu_attach(s, &pc);
	p = hmap(s, 2 * HP, 0);
	v = hmap(s, HP, MMP_MAP_NORESERVE);
	tap_eq(put8(pc, v, 1), -EIO, "%s: a NORESERVE fault with every page reserved: SIGBUS",
	       arch);
	v = hmap(s, HP, MMP_MAP_NORESERVE | MMP_MAP_SHARED);
	tap_eq(put8(pc, v, 1), -EIO, "%s: ... shared too", arch);
	tap_eq(counter(s, MMP_C_HUGETLB_ALLOC_FAIL), 2, "%s: ... two allocations refused", arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	mmp_cpu_detach(pc);
	mmp_space_destroy(s);
	pool_is(2, 2, 0, 0, "%s: everything back", arch);
	set_pool(0);
}

/* A parent unmaps private pages a child still maps: HugePages_Rsvd wraps, as on the host. */
static void check_rsvd_wrap(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *c;
	struct mmp_cpu *pc;
	uint64_t p;

	set_pool(8);
	mmp_cpu_attach(s, &pc);
	p = hmap(s, 2 * HP, 0);
	put8(pc, p, 1);
	put8(pc, p + HP, 2);
	mmp_fork(s, &c);
	mmp_munmap(s, p, 2 * HP);
	pool_is(8, 6, -2, 0, "%s: the parent unmaps 2 pages its child maps: rsvd -2 (wrapped), "
		"as 6.18", arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	mmp_space_destroy(c);
	pool_is(8, 8, 0, 0, "%s: the child's exit frees them: rsvd 0", arch);
	mmp_cpu_detach(pc);
	mmp_space_destroy(s);
	set_pool(0);
}

/* ---- shared mappings --------------------------------------------------------------------- */

static void check_shared(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *c;
	struct mmp_cpu *pc, *cc;
	struct mmp_counters before, d;
	struct mmp_addr_info pi, ci;
	uint64_t q;

	set_pool(4);
	mmp_cpu_attach(s, &pc);
	q = hmap(s, 2 * HP, MMP_MAP_SHARED);
	put8(pc, q + 8, 41);
	mmp_fork(s, &c);
	mmp_cpu_attach(c, &cc);
	mmp_space_counters(c, &before);
	tap_eq(put8(cc, q + 8, 42), 0, "%s: the child writes the shared mapping", arch);
	counters_since(c, &before, &d);
	tap_ok(d.v[MMP_C_FAULT_HUGETLB_CACHE] == 1 && d.v[MMP_C_HUGETLB_ALLOC] == 0 &&
		       d.v[MMP_C_SUBPAGE_COPY] == 0,
	       "%s: ... maps the page of the file's cache (fork copied no entry)", arch);
	tap_eq(get8(pc, q + 8), 42, "%s: ... the parent sees it", arch);
	mmp_space_query(s, q, &pi);
	mmp_space_query(c, q, &ci);
	tap_ok(pi.pfn == ci.pfn && pi.folio_mapcount == 2 && pi.leaf_level == 1 &&
		       (pi.folio_flags & MMP_FOLIO_HUGETLB) && !(pi.folio_flags & MMP_FOLIO_ANON),
	       "%s: one page-cache folio per offset, PMD-mapped twice", arch);
	put8(cc, q + HP, 7);
	tap_eq(get8(pc, q + HP), 7, "%s: the parent reads what the child faulted in", arch);
	pool_is(4, 2, 0, 0, "%s: 2 pages for 2 offsets, whoever faulted them", arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	mmp_cpu_detach(cc);
	mmp_space_destroy(c);
	mmp_cpu_detach(pc);
	pool_is(4, 2, 0, 0, "%s: the child's exit leaves the file's pages", arch);
	mmp_space_destroy(s);
	pool_is(4, 4, 0, 0, "%s: the last mapping's exit frees the file", arch);
	set_pool(0);
}

/* ---- the syscalls' rules on hugetlb mappings ---------------------------------------------- */

static void check_mmap_rules(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	uint64_t a = 0xdead, p, base;
	uint64_t v = 0x5a5a;

	set_pool(4);
	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_mmap(s, 0, HP, RW, MMP_MAP_HUGETLB | (26 << MMP_MAP_HUGE_SHIFT), &a), -EINVAL,
	       "%s: 64 MiB: no such pool", arch);
	if (!(hugetlb_arch_sizes(s->arch) & (64 << 10)))
		tap_eq(mmp_mmap(s, 0, HP, RW, MMP_MAP_HUGETLB | (16 << MMP_MAP_HUGE_SHIFT), &a),
		       -EINVAL, "%s: 64 KiB: not a size of this back end", arch);
	if (!(hugetlb_arch_sizes(s->arch) & (1ULL << 30)))
		tap_eq(mmp_mmap(s, 0, HP, RW, MMP_MAP_HUGETLB | MMP_MAP_HUGE_1GB, &a), -EINVAL,
		       "%s: 1 GiB: not a size of this back end", arch);
	tap_eq(mmp_mmap(s, 0, HP, RW, MMP_MAP_HUGETLB | (int)(63u << MMP_MAP_HUGE_SHIFT), &a), -EINVAL,
	       "%s: log2 size 63", arch);
	tap_eq(mmp_mmap(s, 0, HP, RW, MMP_MAP_HUGETLB | MMP_MAP_GROWSDOWN, &a), -EINVAL,
	       "%s: MAP_GROWSDOWN: -EINVAL, as the host", arch);
	tap_eq(mmp_mmap(s, 0, HP, RW, MMP_MAP_HUGETLB | MMP_MAP_DROPPABLE, &a), -EINVAL,
	       "%s: MAP_DROPPABLE: -EINVAL, as the host", arch);
	tap_eq(mmp_mmap(s, 0, 0, RW, MMP_MAP_HUGETLB, &a), -EINVAL, "%s: len 0", arch);
	/* ksys_mmap_pgoff's ALIGN() wraps a length within 2 MiB of 2^64 to 0 (as on the host). */
	tap_eq(mmp_mmap(s, 0, UINT64_MAX, RW, MMP_MAP_HUGETLB, &a), -EINVAL,
	       "%s: len UINT64_MAX: rounded up, wraps to 0: -EINVAL", arch);
	tap_eq(mmp_mmap(s, 0, UINT64_MAX - HP, RW, MMP_MAP_HUGETLB, &a), -ENOMEM,
	       "%s: len 2^64 - 2 MiB - 1: beyond the task size: -ENOMEM", arch);
	tap_eq(mmp_mmap(s, 0x40000000ULL + PAGE_SIZE, HP, RW, MMP_MAP_HUGETLB | MMP_MAP_FIXED, &a),
	       -EINVAL, "%s: MAP_FIXED not 2 MiB aligned", arch);
	tap_eq(mmp_mmap(s, 0x40000000ULL + PAGE_SIZE, HP, RW,
			MMP_MAP_HUGETLB | MMP_MAP_FIXED_NOREPLACE, &a),
	       -EINVAL, "%s: MAP_FIXED_NOREPLACE not 2 MiB aligned", arch);
	tap_ok(a == 0xdead, "%s: ... no address out", arch);
	pool_is(4, 4, 0, 0, "%s: ... and nothing reserved", arch);
	/* The huge-size bits without MAP_HUGETLB are ignored, as by mmap(2). */
	tap_eq(mmp_mmap(s, 0, HP, RW, MMP_MAP_HUGE_2MB, &a), 0, "%s: MAP_HUGE_2MB alone", arch);
	tap_eq(mmp_munmap(s, a, HP), 0, "%s: ... is an ordinary mapping", arch);
	/* An unaligned hint is rounded up. */
	tap_eq(mmp_mmap(s, 0x50000000ULL + PAGE_SIZE, HP, RW, MMP_MAP_HUGETLB, &a), 0,
	       "%s: an unaligned hint", arch);
	tap_eq(a, 0x50000000ULL + HP, "%s: ... rounded up to the huge page", arch);
	tap_eq(mmp_munmap(s, a, HP), 0, "%s: munmap", arch);
	/* ...from its page: an offset within the first page stays there (as the host, 6.18). */
	tap_eq(mmp_mmap(s, 0x50000000ULL + 0xbc0, HP, RW, MMP_MAP_HUGETLB, &a), 0,
	       "%s: a hint inside a huge page's first page", arch);
	tap_eq(a, 0x50000000ULL, "%s: ... maps that huge page", arch);
	tap_eq(mmp_munmap(s, a, HP), 0, "%s: munmap", arch);

	/* A fixed mapping the pool cannot reserve leaves what was there. */
	base = map(s, 4 * HP, RW);
	base = (base + HP - 1) & ~(HP - 1);
	put8(cpu, base, v);
	tap_eq(mmp_mmap(s, base, HP + HP / 2, RW, MMP_MAP_HUGETLB | MMP_MAP_FIXED, &a), 0,
	       "%s: MAP_FIXED of 3 huge pages over small pages", arch);
	pool_is(4, 4, 2, 0, "%s: ... 3 MiB is 2 pages, reserved", arch);
	tap_eq(mmp_mmap(s, base + 2 * HP, 3 * HP, RW, MMP_MAP_HUGETLB | MMP_MAP_FIXED, &a),
	       -ENOMEM, "%s: MAP_FIXED past what the pool can promise: -ENOMEM", arch);
	p = base + 2 * HP;
	tap_ok(mmp_space_query(s, p, &(struct mmp_addr_info){ 0 }) == 0,
	       "%s: ... and the range stays mapped", arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	tap_eq(mmp_mmap(s, base, HP, RW, MMP_MAP_HUGETLB | MMP_MAP_FIXED_NOREPLACE, &a), -EEXIST,
	       "%s: MAP_FIXED_NOREPLACE over a hugetlb mapping: -EEXIST", arch);
	pool_is(4, 4, 2, 0, "%s: ... reserving nothing", arch);
	tap_eq(mmp_munmap(s, base, 2 * HP), 0, "%s: munmap it", arch);
	pool_is(4, 4, 0, 0, "%s: ... its reservations back", arch);

	/* Hugetlb mappings never merge: not with each other, not after mprotect. */
	{
		struct mmp_space_stat st0, st1;
		uint64_t x = hmap(s, 3 * HP, 0), y;

		mmp_space_stat(s, &st0);
		tap_eq(mmp_mprotect(s, x, 4096, MMP_PROT_READ), -EINVAL,
		       "%s: mprotect of 4 KiB of a huge page", arch);
		tap_eq(mmp_mprotect(s, x + HP, HP + 4096, MMP_PROT_READ), -EINVAL,
		       "%s: mprotect ending inside one", arch);
		tap_eq(mmp_mprotect(s, x, HP, MMP_PROT_READ), 0, "%s: mprotect of one huge page",
		       arch);
		tap_eq(put8(cpu, x, 1), -EFAULT, "%s: ... a write there faults (SIGSEGV)", arch);
		tap_eq(mmp_mprotect(s, x, HP, RW), 0, "%s: ... and back", arch);
		mmp_space_stat(s, &st1);
		tap_eq(st1.nr_vmas, st0.nr_vmas + 1, "%s: ... the two pieces do not merge again",
		       arch);
		tap_eq(put8(cpu, x, 1), 0, "%s: ... writable again", arch);
		y = 0;
		tap_eq(mmp_mmap(s, x + 4 * HP, 2 * HP, RW, MMP_MAP_HUGETLB | MMP_MAP_FIXED, &y),
		       -ENOMEM, "%s: 2 more pages: the pool has 1 left to promise", arch);
		mmp_munmap(s, x, 3 * HP);
	}
	tap_ok(verify_all(s), "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	pool_is(4, 4, 0, 0, "%s: everything back", arch);
	set_pool(0);
}

static void check_madvise(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	uint64_t p;
	static const int refused[] = { MMP_MADV_FREE, MMP_MADV_COLD, MMP_MADV_PAGEOUT,
				       MMP_MADV_COLLAPSE, MMP_MADV_GUARD_INSTALL,
				       MMP_MADV_GUARD_REMOVE };

	set_pool(4);
	mmp_cpu_attach(s, &cpu);
	p = hmap(s, 3 * HP, 0);
	put8(cpu, p, 1);
	put8(cpu, p + HP, 2);
	pool_is(4, 2, 1, 0, "%s: 3 reserved, 2 faulted", arch);
	tap_eq(mmp_madvise(s, p + 4096, HP, MMP_MADV_DONTNEED), -EINVAL,
	       "%s: MADV_DONTNEED from inside a huge page", arch);
	tap_eq(mmp_madvise(s, p, 4096, MMP_MADV_DONTNEED), 0,
	       "%s: MADV_DONTNEED of 4 KiB: rounds down to nothing", arch);
	pool_is(4, 2, 1, 0, "%s: ... nothing went", arch);
	tap_eq(mmp_madvise(s, p, HP + 4096, MMP_MADV_DONTNEED), 0,
	       "%s: MADV_DONTNEED of a page and 4 KiB", arch);
	pool_is(4, 3, 2, 0, "%s: ... one page went, its reservation back", arch);
	tap_eq(get8(cpu, p + HP), 2, "%s: ... the next one stays", arch);
	tap_eq(get8(cpu, p), 0, "%s: a read refaults zeroes, consuming the reservation", arch);
	pool_is(4, 2, 1, 0, "%s: ... as on the host", arch);
	tap_eq(mmp_madvise(s, p, HP, MMP_MADV_DONTNEED_LOCKED), 0, "%s: MADV_DONTNEED_LOCKED",
	       arch);
	pool_is(4, 3, 2, 0, "%s: ... zaps too", arch);
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		tap_eq(mmp_madvise(s, p, HP, refused[i]), -EINVAL, "%s: advice %d refused", arch,
		       refused[i]);
	tap_eq(mmp_madvise(s, p, HP, MMP_MADV_WILLNEED), 0, "%s: MADV_WILLNEED: nothing to do",
	       arch);
	tap_eq(mmp_madvise(s, p, HP, MMP_MADV_HUGEPAGE), 0, "%s: MADV_HUGEPAGE: a flag", arch);
	tap_eq(mmp_madvise(s, p + 4096, 4096, MMP_MADV_NOHUGEPAGE), -EINVAL,
	       "%s: ... that cannot split a huge page", arch);
	pool_is(4, 3, 2, 0, "%s: nothing moved", arch);
	tap_eq(mmp_madvise(s, p + 2 * HP + 4096, 4096, MMP_MADV_POPULATE_WRITE), 0,
	       "%s: MADV_POPULATE_WRITE of 4 KiB inside the last page", arch);
	pool_is(4, 2, 1, 0, "%s: ... faults that page in", arch);
	tap_eq(mmp_reclaim(s), 0, "%s: reclaim", arch);
	pool_is(4, 2, 1, 0, "%s: ... passes hugetlb pages by", arch);
	{
		uint64_t pfns[2];

		tap_eq(mmp_gup(s, p + HP, 1, true, pfns), -ENOTSUP, "%s: GUP of hugetlb: -ENOTSUP",
		       arch);
		tap_eq(mmp_gup_fast(s, p + HP, 1, true, pfns), 0, "%s: GUP-fast pins nothing",
		       arch);
	}
	tap_ok(verify_all(s), "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	pool_is(4, 4, 0, 0, "%s: everything back", arch);
	set_pool(0);
}

/* On a phys of its own: the reservations it leaks, as 6.18 does, stay with the phys. */
static void check_mremap(const char *arch)
{
	struct mmp_phys *shared_phys = phys;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	uint64_t p, area, dst, out = 0;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "a phys for mremap");
	s = new_space(phys, arch);

	set_pool(8);
	mmp_cpu_attach(s, &cpu);
	area = map(s, 32 * HP, MMP_PROT_NONE);
	area = (area + HP - 1) & ~(HP - 1);
	dst = area + 16 * HP;
	p = hmap(s, 3 * HP, 0);
	tap_eq(mmp_mremap(s, p + 4096, 4096, 4096, 0, 0, &out), -EINVAL,
	       "%s: mremap from inside a huge page", arch);
	tap_eq(mmp_mremap(s, p, HP, 2 * HP, 0, 0, &out), -EINVAL, "%s: grow in place", arch);
	tap_eq(mmp_mremap(s, p, 3 * HP, 4 * HP, MMP_MREMAP_MAYMOVE, 0, &out), -EINVAL,
	       "%s: grow, may move", arch);
	tap_eq(mmp_mremap(s, p, HP, HP + 4096, 0, 0, &out), -EINVAL,
	       "%s: grow by 4 KiB (a huge page once rounded)", arch);
	tap_eq(mmp_mremap(s, p, HP, HP, MMP_MREMAP_MAYMOVE | MMP_MREMAP_DONTUNMAP, dst, &out),
	       -EINVAL, "%s: MREMAP_DONTUNMAP", arch);
	tap_eq(mmp_mremap(s, p, HP, HP, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, dst + 4096, &out),
	       -EINVAL, "%s: to an unaligned address", arch);
	tap_eq(mmp_mremap(s, p, 0, HP, MMP_MREMAP_MAYMOVE, 0, &out), -EINVAL,
	       "%s: old_len 0 (private)", arch);
	/*
	 * Lengths unequal as pages: not a multi-VMA move, whatever rounding to
	 * huge pages makes of them afterwards; rounded, the old range crosses
	 * the VMA's end (the host: EFAULT).
	 */
	tap_eq(mmp_mremap(s, p, 4 * HP, 4 * HP - 6 * 4096, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED,
			  dst, &out), -EFAULT, "%s: move past the VMA's end, lengths equal only as "
	       "huge pages", arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	put8(cpu, p, 11);
	put8(cpu, p + 2 * HP, 33);
	pool_is(8, 6, 1, 0, "%s: 3 reserved, 2 faulted", arch);
	tap_eq(mmp_mremap(s, p, 3 * HP, 3 * HP, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, dst, &out),
	       0, "%s: move the whole mapping", arch);
	tap_ok(out == dst && get8(cpu, dst) == 11 && get8(cpu, dst + 2 * HP) == 33,
	       "%s: ... its pages with it", arch);
	pool_is(8, 6, 1, 0, "%s: ... and its reservations", arch);
	tap_eq(mmp_mremap(s, dst, 3 * HP, HP + 1, 0, 0, &out), 0,
	       "%s: shrink to 2 MiB + 1 (2 huge pages)", arch);
	pool_is(8, 7, 1, 0, "%s: ... the last page goes; the middle one stays reserved", arch);
	tap_eq(mmp_mremap(s, dst, 4096, 4096, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, area, &out),
	       0, "%s: move 4 KiB: the first huge page of the two", arch);
	tap_eq(get8(cpu, area), 11, "%s: ... moved", arch);
	pool_is(8, 7, 1, 0, "%s: ... the piece left keeps its reservation for good (6.18 leaks "
		"it: seen on the host)", arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	p = hmap(s, 3 * HP, 0);
	pool_is(8, 7, 4, 0, "%s: a new mapping of 3, nothing faulted", arch);
	tap_eq(mmp_mremap(s, p + HP, HP, HP, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, area + 4 * HP,
			  &out), 0, "%s: move its middle page", arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	mmp_munmap(s, p, 3 * HP);
	mmp_munmap(s, area + 4 * HP, HP);
	pool_is(8, 7, 3, 0, "%s: unmapped, 3 reservations stay: the pieces left behind lost "
		"their reserve map", arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	pool_is(8, 8, 3, 0, "%s: exit: 3 reservations leaked for good", arch);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: the phys goes all the same", arch);
	phys = shared_phys;
}

/* ---- pool sizes: surplus and overcommit, as the host showed -------------------------------- */

static void check_surplus(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	uint64_t p, q = 0;

	mmp_cpu_attach(s, &cpu);
	set_pool(4);
	p = hmap(s, 4 * HP, 0);
	put8(cpu, p, 1);
	put8(cpu, p + HP, 1);
	pool_is(4, 2, 2, 0, "%s: 4 reserved, 2 faulted", arch);
	set_pool(1);
	pool_is(4, 2, 2, 3, "%s: nr_hugepages 1: nothing can go, 3 surplus", arch);
	set_pool(0);
	pool_is(4, 2, 2, 4, "%s: nr_hugepages 0: 4 surplus", arch);
	put8(cpu, p + 2 * HP, 1);
	pool_is(4, 1, 1, 4, "%s: a third fault", arch);
	mmp_munmap(s, p + HP, HP);
	pool_is(3, 1, 1, 3, "%s: unmapping a surplus page frees it", arch);
	set_pool(5);
	pool_is(5, 3, 1, 0, "%s: nr_hugepages 5: surplus becomes persistent, 2 more", arch);
	mmp_munmap(s, p, 4 * HP);
	pool_is(5, 5, 0, 0, "%s: all back", arch);
	set_pool(0);
	tap_eq(mmp_phys_set_overcommit_hugepages(phys, HP, 2), 0, "%s: overcommit 2", arch);
	p = hmap(s, 2 * HP, 0);
	pool_is(2, 2, 2, 2, "%s: an empty pool reserves 2 surplus pages", arch);
	tap_eq(mmp_mmap(s, 0, HP, RW, MMP_MAP_HUGETLB, &q), -ENOMEM,
	       "%s: ... a third is past the overcommit", arch);
	put8(cpu, p, 1);
	pool_is(2, 1, 1, 2, "%s: a fault", arch);
	tap_ok(verify_all(s), "%s: verify", arch);
	mmp_munmap(s, p, 2 * HP);
	pool_is(0, 0, 0, 0, "%s: munmap frees the surplus pages", arch);
	mmp_phys_set_overcommit_hugepages(phys, HP, 0);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* ---- smaps, pagemap, query ----------------------------------------------------------------- */

static void check_introspection(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *c;
	struct mmp_cpu *cpu;
	struct mmp_vma_info vi;
	struct mmp_addr_info ai;
	uint64_t p, q, pm[3];
	static char buf[1 << 16];

	set_pool(4);
	mmp_cpu_attach(s, &cpu);
	p = hmap(s, 2 * HP, 0);
	q = hmap(s, 2 * HP, MMP_MAP_SHARED);
	put8(cpu, p, 1);
	get8(cpu, p + HP);
	put8(cpu, q, 1);
	tap_eq(mmp_space_vma_info(s, p, &vi), 0, "%s: vma_info of the private mapping", arch);
	tap_ok(vi.page_size == HP && vi.private_hugetlb == 2 * HP && vi.shared_hugetlb == 0 &&
		       vi.rss == 0 && vi.anonymous == 0 && vi.thp_orders == 0 &&
		       (vi.flags & MMP_VMA_HUGETLB),
	       "%s: ... Private_Hugetlb 4 MiB, no Rss, KernelPageSize 2 MiB", arch);
	mmp_space_vma_info(s, q, &vi);
	tap_ok(vi.private_hugetlb == HP && (vi.flags & MMP_VMA_SHARED),
	       "%s: the shared one: Private_Hugetlb 2 MiB (this mm alone maps it)", arch);
	tap_eq(mmp_space_pagemap(s, p, 3, pm), 3, "%s: pagemap", arch);
	tap_ok((pm[0] & MMP_PM_PRESENT) && (pm[0] & MMP_PM_MMAP_EXCLUSIVE) &&
		       !(pm[0] & MMP_PM_FILE) &&
		       (pm[1] & MMP_PM_PFN_MASK) == (pm[0] & MMP_PM_PFN_MASK) + 1 &&
		       !(pm[0] & MMP_PM_SOFT_DIRTY),
	       "%s: ... present, exclusive, anonymous, a pfn per sub-page, as the host", arch);
	mmp_space_pagemap(s, q, 1, pm);
	tap_ok((pm[0] & MMP_PM_PRESENT) && (pm[0] & MMP_PM_FILE) && (pm[0] & MMP_PM_MMAP_EXCLUSIVE),
	       "%s: the shared page: present, file, exclusive", arch);
	mmp_space_query(s, p + 5 * PAGE_SIZE, &ai);
	tap_ok(ai.leaf_level == 1 && ai.folio_order == 9 && ai.pfn == ai.folio_pfn + 5 &&
		       (ai.folio_flags & (MMP_FOLIO_HUGETLB | MMP_FOLIO_ANON |
					  MMP_FOLIO_ANON_EXCLUSIVE)) ==
			       (MMP_FOLIO_HUGETLB | MMP_FOLIO_ANON | MMP_FOLIO_ANON_EXCLUSIVE),
	       "%s: query: a PMD leaf of an exclusive anonymous hugetlb folio", arch);
	mmp_fork(s, &c);
	mmp_space_vma_info(s, p, &vi);
	tap_ok(vi.shared_hugetlb == 2 * HP && vi.private_hugetlb == 0,
	       "%s: after fork: Shared_Hugetlb 4 MiB, as the host", arch);
	mmp_space_pagemap(s, p, 1, pm);
	tap_ok((pm[0] & MMP_PM_PRESENT) && !(pm[0] & MMP_PM_MMAP_EXCLUSIVE),
	       "%s: ... pagemap: no longer exclusive", arch);
	mmp_space_vma_info(s, q, &vi);
	tap_eq(vi.private_hugetlb, HP, "%s: ... the shared mapping's page: still private (fork "
	       "copied no entry)", arch);
	tap_ok(mmp_space_smaps_buf(s, buf, sizeof(buf)) > 0 &&
		       strstr(buf, "/anon_hugepage (deleted)") &&
		       strstr(buf, "KernelPageSize:     2048 kB") &&
		       strstr(buf, "Shared_Hugetlb:     4096 kB") &&
		       strstr(buf, "Private_Hugetlb:    2048 kB") && strstr(buf, "de ht"),
	       "%s: smaps: the host's fields and VmFlags", arch);
	mmp_space_destroy(c);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	pool_is(4, 4, 0, 0, "%s: everything back", arch);
	set_pool(0);
}

int main(void)
{
	const char *name;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	check_pool_api();
	for_each_arch(i, name) {
		check_reservations(name);
		for (int order = 0; order < MMP_NR_HUGE_ORDERS; order++) {
			check_cow(name, order, 0);
			check_cow(name, order, 300);
		}
		check_cow(name, MMP_HUGE_ORDER_TARGET_LAST, 511);
		check_cow_empty_pool(name);
		check_rsvd_wrap(name);
		check_shared(name);
		check_mmap_rules(name);
		check_madvise(name);
		check_mremap(name);
		check_surplus(name);
		check_introspection(name);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "the phys goes");
	return tap_done();
}
