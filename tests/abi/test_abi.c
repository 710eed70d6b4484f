/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Extensible structures across the library boundary: every _sized call with a
 * caller's structure shorter, equal to and longer than the library's, canaries
 * around it, and the input rules (defaults, -E2BIG, -EINVAL) of the config.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <mmprim/mmprim.h>

#include "tap.h"

#define CANARY 0xa5

static int canary_intact(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY)
			return 0;
	return 1;
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* A space with a few faults, so the counters and stats are not all zero. */
static struct mmp_space *busy_space(struct mmp_phys *phys)
{
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	uint64_t addr;

	tap_require(!mmp_space_create(phys, NULL, &s), "create a space");
	tap_require(!mmp_mmap(s, 0, 16 * MMP_PAGE_SIZE, MMP_PROT_READ | MMP_PROT_WRITE, 0, &addr),
		    "mmap 16 pages");
	tap_require(!mmp_cpu_attach(s, &cpu), "attach a CPU");
	tap_require(!mmp_memset(cpu, addr, 1, 16 * MMP_PAGE_SIZE), "touch 16 pages");
	tap_require(!mmp_cpu_detach(cpu), "detach");
	return s;
}

static void test_counters(struct mmp_space *s)
{
	struct mmp_counters full;
	unsigned char buf[sizeof(full) + 64];

	tap_require(!mmp_space_counters(s, &full), "counters, full size");
	tap_eq(full.v[MMP_C_FAULT_ANON], 16, "16 anonymous faults counted");
	tap_eq(mmp_counter_count(), MMP_NR_COUNTERS, "the library counts what this header names");

	/* An older caller: one counter only; nothing beyond it is written. */
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_counters_sized(s, (struct mmp_counters *)buf, 8), 0, "counters, 8 bytes");
	tap_ok(!memcmp(buf, &full.v[0], 8), "the first counter arrives");
	tap_ok(canary_intact(buf + 8, sizeof(buf) - 8), "nothing written past 8 bytes");

	/* A newer caller: counters the library does not know read 0. */
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_counters_sized(s, (struct mmp_counters *)buf, sizeof(buf)), 0,
	       "counters, 64 bytes more than the library knows");
	tap_ok(!memcmp(buf, &full, sizeof(full)), "the known counters arrive");
	tap_ok(all_zero(buf + sizeof(full), 64), "the unknown tail is zeroed");

	tap_eq(mmp_space_counters_sized(s, &full, 0), -EINVAL, "counters, size 0");
	tap_eq(mmp_space_counters_sized(s, &full, 7), -EINVAL, "counters, size 7");
	tap_eq(mmp_space_counters_sized(NULL, &full, sizeof(full)), -EINVAL, "counters, NULL space");
	tap_eq(mmp_space_counters_sized(s, NULL, sizeof(full)), -EINVAL, "counters, NULL out");
}

static void test_modeled(struct mmp_space *s)
{
	struct mmp_counters c;
	unsigned char big[sizeof(c) + 16];
	double full, shorter, longer;

	tap_require(!mmp_space_counters(s, &c), "counters");
	tap_eq(mmp_modeled_ns(s, &c, &full), 0, "modeled time, full size");
	tap_ok(full > 0, "16 faults cost modeled time");
	tap_eq(mmp_modeled_ns_sized(s, &c, 8, &shorter), 0, "modeled time, one counter");
	tap_ok(shorter < full, "counters a short structure lacks count as 0");
	memset(big, 0, sizeof(big));
	memcpy(big, &c, sizeof(c));
	tap_eq(mmp_modeled_ns_sized(s, (struct mmp_counters *)big, sizeof(big), &longer), 0,
	       "modeled time, a longer structure");
	tap_ok(longer == full, "counters beyond the library's are ignored");
	tap_eq(mmp_modeled_ns_sized(s, &c, 4, &full), -EINVAL, "modeled time, size 4");
}

static void test_stats(struct mmp_phys *phys, struct mmp_space *s)
{
	struct mmp_space_stat st;
	struct mmp_phys_stat ps;
	unsigned char buf[sizeof(ps) + 32];

	tap_require(!mmp_space_stat(s, &st), "space stat");
	tap_eq(st.rss_anon_pages, 16, "16 resident pages");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_stat_sized(s, (struct mmp_space_stat *)buf, 8), 0, "space stat, 8 bytes");
	tap_ok(!memcmp(buf, &st.nr_vmas, 8) && canary_intact(buf + 8, sizeof(buf) - 8),
	       "space stat: nr_vmas only, nothing past it");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_stat_sized(s, (struct mmp_space_stat *)buf, sizeof(st) + 32), 0,
	       "space stat, longer");
	tap_ok(!memcmp(buf, &st, sizeof(st)) && all_zero(buf + sizeof(st), 32),
	       "space stat: known fields, zeroed tail");
	tap_eq(mmp_space_stat_sized(s, &st, 3), -EINVAL, "space stat, size 3");

	tap_require(!mmp_phys_stat(phys, &ps), "phys stat");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_phys_stat_sized(phys, (struct mmp_phys_stat *)buf, 16), 0, "phys stat, 16 bytes");
	tap_ok(!memcmp(buf, &ps, 16) && canary_intact(buf + 16, sizeof(buf) - 16),
	       "phys stat: totals only, nothing past them");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_phys_stat_sized(phys, (struct mmp_phys_stat *)buf, sizeof(buf)), 0,
	       "phys stat, longer");
	tap_ok(!memcmp(buf, &ps, sizeof(ps)) && all_zero(buf + sizeof(ps), 32),
	       "phys stat: known fields, zeroed tail");
	tap_eq(mmp_phys_stat_sized(NULL, &ps, sizeof(ps)), -EINVAL, "phys stat, NULL phys");
}

/* The hugetlb pool's stat (since libmmprim.so.1.4) follows the same rules. */
static void test_hugepages(struct mmp_phys *phys, struct mmp_space *s)
{
	struct mmp_hugepages_stat hs;
	struct mmp_space_stat st;
	unsigned char buf[sizeof(hs) + 32];

	tap_require(!mmp_phys_set_hugepages(phys, 2 << 20, 2), "a pool of 2 huge pages");
	tap_require(!mmp_phys_hugepages(phys, 2 << 20, &hs), "hugepages stat");
	tap_ok(hs.size == 2 << 20 && hs.total == 2 && hs.free == 2, "2 free pages of 2 MiB");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_phys_hugepages_sized(phys, 2 << 20, (struct mmp_hugepages_stat *)buf, 16), 0,
	       "hugepages stat, 16 bytes");
	tap_ok(!memcmp(buf, &hs, 16) && canary_intact(buf + 16, sizeof(buf) - 16),
	       "hugepages stat: size and total only, nothing past them");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_phys_hugepages_sized(phys, 2 << 20, (struct mmp_hugepages_stat *)buf,
					sizeof(buf)), 0, "hugepages stat, longer");
	tap_ok(!memcmp(buf, &hs, sizeof(hs)) && all_zero(buf + sizeof(hs), 32),
	       "hugepages stat: known fields, zeroed tail");
	/* A 1.2 caller's space stat stops before hugetlb_pages. */
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_stat_sized(s, (struct mmp_space_stat *)buf,
				    offsetof(struct mmp_space_stat, hugetlb_pages)), 0,
	       "space stat of 1.2");
	tap_ok(canary_intact(buf + offsetof(struct mmp_space_stat, hugetlb_pages),
			     sizeof(buf) - offsetof(struct mmp_space_stat, hugetlb_pages)),
	       "space stat of 1.2: nothing written past rss_shmem_pages");
	tap_ok(!mmp_space_stat(s, &st) && st.hugetlb_pages == 0, "no hugetlb pages mapped");
	tap_require(!mmp_phys_set_hugepages(phys, 2 << 20, 0), "the pool emptied");
}

/* The introspection structures (since libmmprim.so.1.2) follow the same rules. */
static void test_introspect(struct mmp_space *s)
{
	struct mmp_addr_info q;
	struct mmp_vma_info v;
	struct mmp_mthp_stats m;
	/* Room for the largest of the three and 32 bytes more. */
	unsigned char buf[(sizeof(v) > sizeof(m) ? sizeof(v) : sizeof(m)) + 32];
	uint64_t addr;

	tap_require(!mmp_space_vma_info(s, 0, &v), "vma info");
	addr = v.start;
	tap_require(!mmp_space_query(s, addr, &q), "query");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_query_sized(s, addr, (struct mmp_addr_info *)buf, 8), 0, "query, 8 bytes");
	tap_ok(!memcmp(buf, &q, 8) && canary_intact(buf + 8, sizeof(buf) - 8),
	       "query: the address only, nothing past it");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_query_sized(s, addr, (struct mmp_addr_info *)buf, sizeof(q) + 32), 0,
	       "query, longer");
	tap_ok(!memcmp(buf, &q, sizeof(q)) && all_zero(buf + sizeof(q), 32),
	       "query: known fields, zeroed tail");

	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_vma_info_sized(s, 0, (struct mmp_vma_info *)buf, 16), 0,
	       "vma info, 16 bytes");
	tap_ok(!memcmp(buf, &v, 16) && canary_intact(buf + 16, sizeof(buf) - 16),
	       "vma info: start and end only, nothing past them");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_vma_info_sized(s, 0, (struct mmp_vma_info *)buf, sizeof(buf)), 0,
	       "vma info, longer");
	tap_ok(!memcmp(buf, &v, sizeof(v)) && all_zero(buf + sizeof(v), 32),
	       "vma info: known fields, zeroed tail");

	tap_require(!mmp_space_mthp_stats(s, &m), "mthp stats");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_mthp_stats_sized(s, (struct mmp_mthp_stats *)buf, 8), 0,
	       "mthp stats, 8 bytes");
	tap_ok(canary_intact(buf + 8, sizeof(buf) - 8), "mthp stats: nothing past 8 bytes");
	memset(buf, CANARY, sizeof(buf));
	tap_eq(mmp_space_mthp_stats_sized(s, (struct mmp_mthp_stats *)buf, sizeof(m) + 32), 0,
	       "mthp stats, longer");
	tap_ok(!memcmp(buf, &m, sizeof(m)) && all_zero(buf + sizeof(m), 32),
	       "mthp stats: known fields, zeroed tail");
}

static void test_config(struct mmp_phys *phys)
{
	struct mmp_space_config cfg = { .arch = "arm64", .tlb_entries = 64, .tlb_ways = 4 };
	unsigned char big[sizeof(cfg) + 16];
	struct mmp_space *s = NULL;

	/* The first version (24 bytes) has no copy field: the default variant. */
	cfg.copy = "no-such-variant";
	tap_eq(mmp_space_create_sized(phys, &cfg, 24, &s), 0, "config, first version's 24 bytes");
	tap_ok(s && !strcmp(mmp_space_arch(s), "arm64"), "its fields are read");
	tap_ok(s && strcmp(mmp_space_copy(s), "no-such-variant"),
	       "the field beyond it is not read: the default variant");
	if (s)
		mmp_space_destroy(s);

	tap_eq(mmp_space_create_sized(phys, &cfg, 23, &s), -EINVAL, "config, 23 bytes");
	tap_eq(mmp_space_create_sized(phys, &cfg, sizeof(cfg), &s), -ENOENT,
	       "config: unknown copy variant");
	cfg.copy = "generic";
	tap_eq(mmp_space_create_sized(phys, &cfg, sizeof(cfg), &s), 0, "config: copy variant");
	tap_ok(!strcmp(mmp_space_copy(s), "generic"), "the variant asked for");
	mmp_space_destroy(s);

	cfg.reserved[3] = 1;
	tap_eq(mmp_space_create(phys, &cfg, &s), -EINVAL, "config: nonzero reserved byte");
	cfg.reserved[3] = 0;

	memset(big, 0, sizeof(big));
	memcpy(big, &cfg, sizeof(cfg));
	tap_eq(mmp_space_create_sized(phys, (struct mmp_space_config *)big, sizeof(big), &s), 0,
	       "config: a newer caller's zero tail is accepted");
	mmp_space_destroy(s);
	big[sizeof(cfg) + 5] = 1;
	tap_eq(mmp_space_create_sized(phys, (struct mmp_space_config *)big, sizeof(big), &s), -E2BIG,
	       "config: a field this library does not know is E2BIG");
	tap_eq(mmp_space_create_sized(phys, NULL, 12345, &s), 0, "config NULL: defaults, size ignored");
	tap_ok(!strcmp(mmp_space_arch(s), "x86_64"), "the default back end");
	mmp_space_destroy(s);
}

static void test_misc(void)
{
	tap_ok(!strcmp(mmp_strerror(0), "success"), "strerror(0) is success");
	tap_ok(!strcmp(mmp_strerror(-E2BIG), "E2BIG"), "strerror(-E2BIG)");
	tap_ok(!strcmp(mmp_strerror(-EINVAL), "EINVAL"), "strerror(-EINVAL)");
	tap_ok(!strcmp(mmp_strerror(-ERANGE), "unknown error"), "strerror of an errno it never returns");
	tap_eq(mmp_space_reset_counters(NULL), -EINVAL, "reset_counters(NULL)");
}

int main(void)
{
	struct mmp_phys *phys;
	struct mmp_space *s;

	tap_require(!mmp_phys_create(64 << 20, &phys), "phys");
	s = busy_space(phys);
	test_counters(s);
	test_modeled(s);
	test_stats(phys, s);
	test_hugepages(phys, s);
	test_introspect(s);
	tap_eq(mmp_space_reset_counters(s), 0, "reset_counters");
	test_config(phys);
	test_misc();
	tap_eq(mmp_space_verify(s), 0, "the space is intact");
	mmp_space_destroy(s);
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
