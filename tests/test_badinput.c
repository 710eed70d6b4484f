/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad inputs of every public call, with the errno Linux would give, and after
 * each error on a space: mmp_space_verify() passes, data written before the
 * error is intact and the space still maps, writes and reads. Also the
 * max_map_count limit (a failed call must leave the mappings as they were),
 * pins that are not there, and running out of simulated memory in faults,
 * fork, space creation, mremap, GUP and MAP_POPULATE. The space-level checks
 * run on every back end.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <mmprim/mmprim.h>

#include "debug.h"
#include "tap.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define PG  MMP_PAGE_SIZE
#define RW  (MMP_PROT_READ | MMP_PROT_WRITE)
/* sysctl vm.max_map_count, which the library models. */
#define MAX_MAP_COUNT 65530
#define CANARY_LEN    (4 * MiB)

struct env {
	const char *arch;
	struct mmp_phys *phys;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	uint64_t canary; /* 4 MiB: first half THP, second half small pages */
};

static uint64_t page_buf[PG / 8];

/* Test plumbing, not a check: bail out without adding a TAP point. */
static void must(int cond, const char *what)
{
	if (!cond) {
		printf("Bail out! %s\n", what);
		exit(1);
	}
}

/* Word 0 of page @page written with @tag; word i holds stamp + i, so no two words match. */
static uint64_t stamp(uint64_t tag, uint64_t page)
{
	return 0x5a00000000000000ull | tag << 40 | page << 12;
}

/* Fill @n pages with the stamp of each page; false if a write fails. */
static bool fill_pages(struct mmp_cpu *cpu, uint64_t addr, uint64_t n, uint64_t tag)
{
	for (uint64_t p = 0; p < n; p++) {
		for (size_t i = 0; i < PG / 8; i++)
			page_buf[i] = stamp(tag, p) + i;
		if (mmp_write(cpu, addr + p * PG, page_buf, PG))
			return false;
	}
	return true;
}

/*
 * Whether pages [first, first + n) of the range at @base hold their stamps (page
 * index counted from @base), or zeros when @tag is 0.
 */
static bool range_holds(struct mmp_cpu *cpu, uint64_t base, uint64_t first, uint64_t n,
			uint64_t tag)
{
	for (uint64_t p = first; p < first + n; p++) {
		if (mmp_read(cpu, base + p * PG, page_buf, PG))
			return false;
		for (size_t i = 0; i < PG / 8; i++)
			if (page_buf[i] != (tag ? stamp(tag, p) + i : 0))
				return false;
	}
	return true;
}

static bool pages_hold(struct mmp_cpu *cpu, uint64_t addr, uint64_t n, uint64_t tag)
{
	return range_holds(cpu, addr, 0, n, tag);
}

/* Cheap sample of the canary: the first and last word of every page. */
static bool canary_intact(struct env *e)
{
	for (uint64_t p = 0; p < CANARY_LEN / PG; p++) {
		uint64_t w[2];

		if (mmp_read(e->cpu, e->canary + p * PG, &w[0], 8) ||
		    mmp_read(e->cpu, e->canary + p * PG + PG - 8, &w[1], 8))
			return false;
		if (w[0] != stamp(1, p) || w[1] != stamp(1, p) + PG / 8 - 1)
			return false;
	}
	return true;
}

/* A new mapping can be made, written, read back and removed. */
static bool fresh_map_works(struct env *e)
{
	uint64_t a;
	bool ok;

	if (mmp_mmap(e->s, 0, 3 * PG, RW, 0, &a))
		return false;
	ok = fill_pages(e->cpu, a, 3, 7) && pages_hold(e->cpu, a, 3, 7);
	return !mmp_munmap(e->s, a, 3 * PG) && ok;
}

/* After an error: invariants hold, old data is intact, the space still works. */
static void still_works(struct env *e, const char *what)
{
	int v = mmp_space_verify(e->s);
	bool canary = canary_intact(e), fresh = fresh_map_works(e);

	if (!tap_ok(!v && canary && fresh, "%s: after %s: verify, data intact, space works",
		    e->arch, what))
		printf("#   verify %d (%s), canary %s, fresh mapping %s\n", v, mmp_strerror(v),
		       canary ? "intact" : "BROKEN", fresh ? "works" : "FAILS");
}

/* A space with the sanitizer on, one CPU and a written canary. */
static void env_init(struct env *e, const char *arch, size_t phys_bytes)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };

	memset(e, 0, sizeof(*e));
	e->arch = arch;
	must(!mmp_phys_create(phys_bytes, &e->phys), "phys_create");
	must(!mmp_space_create(e->phys, &cfg, &e->s), "space_create");
	must(!mmp_cpu_attach(e->s, &e->cpu), "cpu_attach");
	must(!mmp_mmap(e->s, 0, CANARY_LEN, RW, 0, &e->canary), "canary mmap");
	must(!mmp_madvise(e->s, e->canary, 2 * MiB, MMP_MADV_HUGEPAGE), "canary madvise");
	must(fill_pages(e->cpu, e->canary, CANARY_LEN / PG, 1), "canary fill");
}

static void env_fini(struct env *e)
{
	must(!mmp_cpu_detach(e->cpu), "cpu_detach");
	must(!mmp_space_destroy(e->s), "space_destroy");
	must(!mmp_phys_destroy(e->phys), "phys_destroy");
}

/* Scratch mappings live far from the canary, with nothing mapped around them. */
#define SCRATCH 0x200000000ull

static uint64_t map_scratch(struct env *e, uint64_t npages)
{
	uint64_t a = 0;

	must(!mmp_mmap(e->s, SCRATCH, npages * PG, RW, MMP_MAP_FIXED_NOREPLACE, &a) && a == SCRATCH,
	     "scratch mmap");
	return a;
}

/* ---- calls that take no space ---------------------------------------------------- */

static void test_phys(void)
{
	struct mmp_phys *phys = NULL, *p2;
	struct mmp_space *s;
	struct mmp_phys_stat st;

	tap_eq(mmp_phys_create(4 * MiB, NULL), -EINVAL, "phys_create: NULL out");
	tap_eq(mmp_phys_create(0, &phys), -EINVAL, "phys_create: 0 bytes");
	tap_eq(mmp_phys_create(2 * MiB, &phys), -EINVAL, "phys_create: 2 MiB");
	tap_eq(mmp_phys_create(4 * MiB + PG, &phys), -EINVAL, "phys_create: 4 MiB + 4 KiB");
	tap_eq(mmp_phys_create(6 * MiB, &phys), -EINVAL, "phys_create: 6 MiB");
	tap_ok(phys == NULL, "phys_create: out untouched on error");

	tap_eq(mmp_phys_destroy(NULL), -EINVAL, "phys_destroy: NULL");
	must(!mmp_phys_create(4 * MiB, &p2), "phys_create 4 MiB");
	tap_eq(mmp_phys_stat(NULL, &st), -EINVAL, "phys_stat: NULL phys");
	tap_eq(mmp_phys_stat(p2, NULL), -EINVAL, "phys_stat: NULL stat");
	must(!mmp_space_create(p2, NULL, &s), "space_create");
	tap_eq(mmp_phys_destroy(p2), -EBUSY, "phys_destroy: a space is alive");
	tap_eq(mmp_phys_stat(p2, &st), 0, "phys_stat: phys still usable after -EBUSY");
	tap_eq(mmp_space_destroy(s), 0, "space_destroy");
	tap_eq(mmp_phys_destroy(p2), 0, "phys_destroy after the space is gone");
}

static void test_names(void)
{
	int n = mmp_arch_count();

	tap_ok(n >= 2, "arch_count: %d back ends", n);
	tap_ok(mmp_arch_name(-1) == NULL, "arch_name(-1) is NULL");
	tap_ok(mmp_arch_name(n) == NULL, "arch_name(count) is NULL");
	tap_ok(mmp_arch_name(INT_MAX) == NULL, "arch_name(INT_MAX) is NULL");
	tap_ok(mmp_space_arch(NULL) == NULL, "space_arch(NULL) is NULL");

	tap_ok(mmp_strerror(-EINVAL) && !strcmp(mmp_strerror(-EINVAL), "EINVAL"),
	       "strerror(-EINVAL) is \"EINVAL\"");
	tap_ok(mmp_strerror(-ENOMEM) && !strcmp(mmp_strerror(-ENOMEM), "ENOMEM"),
	       "strerror(-ENOMEM) is \"ENOMEM\"");
	tap_ok(mmp_strerror(INT_MIN) != NULL, "strerror(INT_MIN) is a string");
	tap_ok(mmp_strerror(-123456) != NULL, "strerror(unknown) is a string");

	tap_ok(mmp_counter_name(-1) == NULL, "counter_name(-1) is NULL");
	tap_ok(mmp_counter_name(MMP_NR_COUNTERS) == NULL, "counter_name(MMP_NR_COUNTERS) is NULL");
	tap_ok(mmp_counter_doc(-1) == NULL, "counter_doc(-1) is NULL");
	tap_ok(mmp_counter_doc(MMP_NR_COUNTERS) == NULL, "counter_doc(MMP_NR_COUNTERS) is NULL");
	tap_ok(mmp_counter_name(0) != NULL, "counter_name(0) is a name");

	/* NULL space everywhere a space is taken. */
	tap_eq(mmp_space_verify(NULL), -EINVAL, "space_verify(NULL)");
	tap_eq(mmp_space_destroy(NULL), -EINVAL, "space_destroy(NULL)");
	tap_eq(mmp_fork(NULL, NULL), -EINVAL, "fork(NULL)");
	tap_eq(mmp_space_reset_counters(NULL), -EINVAL, "space_reset_counters(NULL)");
	tap_eq(mmp_cpu_detach(NULL), -EINVAL, "cpu_detach(NULL)");
	tap_eq(mmp_cpu_flush_tlb(NULL), -EINVAL, "cpu_flush_tlb(NULL)");
}

/* ---- space creation and switches ----------------------------------------------------- */

static void test_space_create(const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct mmp_phys *phys;
	struct mmp_space *s = NULL;
	struct mmp_cpu *cpu = NULL;
	static const struct {
		unsigned int entries, ways;
		const char *why;
	} geo[] = {
		{ 8, 16, "ways > entries" },
		{ 100, 12, "entries not a multiple of ways" },
		{ 36, 12, "3 sets: not a power of two" },
		{ 0, 7, "default 1536 entries not a multiple of 7 ways" },
		{ 96, 0, "96 / default 12 ways = 8 sets, fine" },
	};

	must(!mmp_phys_create(8 * MiB, &phys), "phys_create");
	tap_eq(mmp_space_create(NULL, &cfg, &s), -EINVAL, "%s: space_create: NULL phys", arch);
	tap_eq(mmp_space_create(phys, &cfg, NULL), -EINVAL, "%s: space_create: NULL out", arch);
	cfg.arch = "vax";
	tap_eq(mmp_space_create(phys, &cfg, &s), -ENOENT, "%s: space_create: unknown arch", arch);
	cfg.arch = "";
	tap_eq(mmp_space_create(phys, &cfg, &s), -ENOENT, "%s: space_create: empty arch", arch);
	cfg.arch = arch;
	for (size_t i = 0; i < sizeof(geo) / sizeof(geo[0]); i++) {
		cfg.tlb_entries = geo[i].entries;
		cfg.tlb_ways = geo[i].ways;
		if (i == 4) {
			tap_eq(mmp_space_create(phys, &cfg, &s), 0, "%s: space_create: %s", arch,
			       geo[i].why);
			mmp_space_destroy(s);
			s = NULL;
		} else {
			tap_eq(mmp_space_create(phys, &cfg, &s), -EINVAL, "%s: space_create: %s",
			       arch, geo[i].why);
		}
	}
	tap_ok(s == NULL, "%s: space_create: out untouched on error", arch);

	/* The smallest geometries are valid and must work: one entry, one fully associative set. */
	for (unsigned int ways = 1; ways <= 16; ways *= 16) {
		uint64_t a = 0;
		bool ok;

		cfg.tlb_entries = ways;
		cfg.tlb_ways = ways;
		ok = !mmp_space_create(phys, &cfg, &s) && !mmp_cpu_attach(s, &cpu);
		ok = ok && !mmp_mmap(s, 0, 40 * PG, RW, 0, &a);
		ok = ok && fill_pages(cpu, a, 40, 2) && pages_hold(cpu, a, 40, 2);
		ok = ok && !mmp_munmap(s, a + 8 * PG, 8 * PG) && range_holds(cpu, a, 16, 24, 2);
		ok = ok && !mmp_space_verify(s);
		tap_ok(ok, "%s: a %u-entry, %u-way TLB works", arch, ways, ways);
		if (s) {
			mmp_cpu_detach(cpu);
			mmp_space_destroy(s);
			s = NULL;
		}
	}

	/* destroy with a CPU attached is refused, and works after detach. */
	cfg.tlb_entries = cfg.tlb_ways = 0;
	must(!mmp_space_create(phys, &cfg, &s), "space_create");
	tap_ok(mmp_space_arch(s) && !strcmp(mmp_space_arch(s), arch), "%s: space_arch", arch);
	must(!mmp_cpu_attach(s, &cpu), "cpu_attach");
	tap_eq(mmp_space_destroy(s), -EBUSY, "%s: space_destroy with a CPU attached", arch);
	{
		uint64_t a = 0, v = 0x1234;

		tap_ok(!mmp_mmap(s, 0, PG, RW, 0, &a) && !mmp_write(cpu, a, &v, 8) &&
			       !mmp_read(cpu, a, &v, 8) && v == 0x1234 && !mmp_space_verify(s),
		       "%s: the space still works after -EBUSY", arch);
	}
	tap_eq(mmp_cpu_detach(cpu), 0, "%s: cpu_detach", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: space_destroy after detach", arch);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: phys_destroy", arch);
}

static void test_opts(struct env *e)
{
	struct mmp_counters c;
	struct mmp_space_stat st;
	long v = -1, order = -1;
	double ns = -1;

	must(!mmp_space_get_opt(e->s, MMP_OPT_HUGE_ORDER, &order), "get HUGE_ORDER");

	tap_eq(mmp_space_set_opt(NULL, MMP_OPT_TLB_SANITIZER, 1), -EINVAL,
	       "%s: set_opt: NULL space", e->arch);
	tap_eq(mmp_space_set_opt(e->s, MMP_NR_OPTS, 0), -EINVAL, "%s: set_opt: opt MMP_NR_OPTS",
	       e->arch);
	tap_eq(mmp_space_set_opt(e->s, (enum mmp_opt)(-1), 0), -EINVAL, "%s: set_opt: opt -1",
	       e->arch);
	tap_eq(mmp_space_set_opt(e->s, MMP_OPT_TLB_SANITIZER, 2), -EINVAL,
	       "%s: set_opt: TLB_SANITIZER 2", e->arch);
	tap_eq(mmp_space_set_opt(e->s, MMP_OPT_TLB_SANITIZER, -1), -EINVAL,
	       "%s: set_opt: TLB_SANITIZER -1", e->arch);
	tap_eq(mmp_debug_set(e->s, MMP_DEBUG_SKIP_FLUSH, -1), -EINVAL,
	       "%s: debug_set: SKIP_FLUSH -1", e->arch);
	tap_eq(mmp_debug_set(e->s, MMP_DEBUG_BROKEN_TABLE_FREE, 2), -EINVAL,
	       "%s: debug_set: BROKEN_TABLE_FREE 2", e->arch);
	tap_eq(mmp_debug_set(e->s, MMP_NR_DEBUG_OPTS, 0), -EINVAL,
	       "%s: debug_set: opt MMP_NR_DEBUG_OPTS", e->arch);
	tap_eq(mmp_space_set_opt(e->s, MMP_OPT_HUGE_ORDER, MMP_NR_HUGE_ORDERS), -EINVAL,
	       "%s: set_opt: HUGE_ORDER MMP_NR_HUGE_ORDERS", e->arch);
	tap_eq(mmp_space_set_opt(e->s, MMP_OPT_HUGE_ORDER, -1), -EINVAL,
	       "%s: set_opt: HUGE_ORDER -1", e->arch);
	tap_eq(mmp_space_set_opt(e->s, MMP_OPT_HUGE_ORDER, LONG_MAX), -EINVAL,
	       "%s: set_opt: HUGE_ORDER LONG_MAX", e->arch);
	/* A refused value leaves the switch as it was. */
	tap_ok(!mmp_space_get_opt(e->s, MMP_OPT_TLB_SANITIZER, &v) && v == 1,
	       "%s: TLB_SANITIZER still 1 after refused values", e->arch);
	tap_ok(!mmp_debug_get(e->s, MMP_DEBUG_SKIP_FLUSH, &v) && v == 0,
	       "%s: DEBUG_SKIP_FLUSH still 0 after a refused value", e->arch);
	tap_ok(!mmp_space_get_opt(e->s, MMP_OPT_HUGE_ORDER, &v) && v == order,
	       "%s: HUGE_ORDER unchanged after refused values", e->arch);
	/* The boolean switches take 0 and 1 only. */
	for (int o = 0; o < MMP_NR_OPTS; o++) {
		long old = -1, now = -1;

		if (o == MMP_OPT_HUGE_ORDER || o == MMP_OPT_HUGE_NEIGHBOURHOOD)
			continue;
		must(!mmp_space_get_opt(e->s, o, &old), "get_opt");
		tap_ok(mmp_space_set_opt(e->s, o, 2) == -EINVAL &&
			       mmp_space_set_opt(e->s, o, -1) == -EINVAL &&
			       !mmp_space_get_opt(e->s, o, &now) && now == old,
		       "%s: set_opt: switch %d refuses 2 and -1", e->arch, o);
	}
	tap_eq(mmp_space_set_opt(e->s, MMP_OPT_HUGE_NEIGHBOURHOOD, -1), -EINVAL,
	       "%s: set_opt: HUGE_NEIGHBOURHOOD -1", e->arch);
	tap_eq(mmp_space_set_opt(e->s, MMP_OPT_HUGE_NEIGHBOURHOOD, LONG_MAX), -EINVAL,
	       "%s: set_opt: HUGE_NEIGHBOURHOOD LONG_MAX", e->arch);
	tap_ok(mmp_huge_order_name(-1) == NULL && mmp_huge_order_name(MMP_NR_HUGE_ORDERS) == NULL &&
		       mmp_huge_order_name(order) != NULL,
	       "%s: huge_order_name: NULL out of range", e->arch);

	tap_eq(mmp_space_get_opt(NULL, MMP_OPT_HUGE_ORDER, &v), -EINVAL, "%s: get_opt: NULL space",
	       e->arch);
	tap_eq(mmp_space_get_opt(e->s, MMP_OPT_HUGE_ORDER, NULL), -EINVAL,
	       "%s: get_opt: NULL value", e->arch);
	tap_eq(mmp_space_get_opt(e->s, MMP_NR_OPTS, &v), -EINVAL, "%s: get_opt: opt MMP_NR_OPTS",
	       e->arch);
	tap_eq(mmp_space_get_opt(e->s, (enum mmp_opt)(-1), &v), -EINVAL, "%s: get_opt: opt -1",
	       e->arch);

	tap_eq(mmp_space_set_thp(NULL, 4, MMP_THP_ALWAYS), -EINVAL, "%s: set_thp: NULL space",
	       e->arch);
	tap_eq(mmp_space_set_thp(e->s, 0, MMP_THP_ALWAYS), -EINVAL, "%s: set_thp: order 0",
	       e->arch);
	tap_eq(mmp_space_set_thp(e->s, 1, MMP_THP_ALWAYS), -EINVAL, "%s: set_thp: order 1",
	       e->arch);
	tap_eq(mmp_space_set_thp(e->s, 10, MMP_THP_ALWAYS), -EINVAL, "%s: set_thp: order 10",
	       e->arch);
	tap_eq(mmp_space_set_thp(e->s, UINT_MAX, MMP_THP_ALWAYS), -EINVAL,
	       "%s: set_thp: order UINT_MAX", e->arch);
	tap_eq(mmp_space_set_thp(e->s, 4, (enum mmp_thp_mode)3), -EINVAL, "%s: set_thp: mode 3",
	       e->arch);
	tap_eq(mmp_space_set_thp(e->s, 4, (enum mmp_thp_mode)(-1)), -EINVAL, "%s: set_thp: mode -1",
	       e->arch);
	tap_eq(mmp_space_set_thp(e->s, 2, MMP_THP_NEVER), 0, "%s: set_thp: order 2 never", e->arch);

	tap_eq(mmp_space_counters(NULL, &c), -EINVAL, "%s: counters: NULL space", e->arch);
	tap_eq(mmp_space_counters(e->s, NULL), -EINVAL, "%s: counters: NULL out", e->arch);
	tap_eq(mmp_space_stat(NULL, &st), -EINVAL, "%s: stat: NULL space", e->arch);
	tap_eq(mmp_space_stat(e->s, NULL), -EINVAL, "%s: stat: NULL out", e->arch);
	tap_eq(mmp_fork(e->s, NULL), -EINVAL, "%s: fork: NULL child", e->arch);
	tap_eq(mmp_modeled_ns(NULL, &c, &ns), -EINVAL, "%s: modeled_ns: NULL space", e->arch);
	tap_eq(mmp_modeled_ns(e->s, NULL, &ns), -EINVAL, "%s: modeled_ns: NULL counters", e->arch);
	tap_eq(mmp_space_counters(e->s, &c), 0, "%s: counters", e->arch);
	tap_eq(mmp_modeled_ns(e->s, &c, NULL), -EINVAL, "%s: modeled_ns: NULL out", e->arch);
	tap_ok(!mmp_modeled_ns(e->s, &c, &ns) && ns >= 0, "%s: modeled_ns: %.0f ns", e->arch, ns);
	tap_eq(mmp_reclaim(NULL), -EINVAL, "%s: reclaim: NULL space", e->arch);
	tap_eq(mmp_reclaim(e->s), 0, "%s: reclaim keeps swapbacked memory", e->arch);
	still_works(e, "bad switches");
}

static void test_copy_variants(struct env *e)
{
	const char *orig = mmp_space_copy(e->s);
	int n = mmp_copy_variant_count();

	tap_ok(orig != NULL && n >= 1, "%s: copy variant %s of %d", e->arch, orig ? orig : "?", n);
	tap_ok(mmp_copy_variant_name(-1) == NULL && mmp_copy_variant_name(n) == NULL,
	       "%s: copy_variant_name: NULL out of range", e->arch);
	tap_ok(mmp_space_copy(NULL) == NULL, "%s: space_copy(NULL) is NULL", e->arch);
	tap_eq(mmp_space_set_copy(NULL, orig), -EINVAL, "%s: set_copy: NULL space", e->arch);
	tap_eq(mmp_space_set_copy(e->s, NULL), -EINVAL, "%s: set_copy: NULL name", e->arch);
	tap_eq(mmp_space_set_copy(e->s, "no-such-variant"), -ENOENT,
	       "%s: set_copy: unknown variant", e->arch);
	tap_ok(!strcmp(mmp_space_copy(e->s), orig), "%s: set_copy errors keep the variant",
	       e->arch);
	/* Each variant either works here or is refused, leaving the old one in place. */
	for (int i = 0; i < n; i++) {
		const char *name = mmp_copy_variant_name(i);
		int err = mmp_space_set_copy(e->s, name);

		if (err == -ENOTSUP) {
			tap_ok(!strcmp(mmp_space_copy(e->s), orig),
			       "%s: %s is not for this CPU: -ENOTSUP, variant kept", e->arch, name);
			continue;
		}
		tap_ok(!err && !strcmp(mmp_space_copy(e->s), name) && fresh_map_works(e),
		       "%s: set_copy %s works (%s)", e->arch, name, mmp_strerror(err));
		must(!mmp_space_set_copy(e->s, orig), "restore the copy variant");
	}
	still_works(e, "copy variants");
}

/* ---- mappings -------------------------------------------------------------------------- */

static void test_mmap(struct env *e)
{
	const uint64_t top = MMP_TASK_SIZE;
	uint64_t a = 0xdead, b, fixed;
	int err;

	tap_eq(mmp_mmap(NULL, 0, PG, RW, 0, &a), -EINVAL, "%s: mmap: NULL space", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, RW, 0, NULL), -EINVAL, "%s: mmap: NULL addr_out", e->arch);
	tap_eq(mmp_mmap(e->s, 0, 0, RW, 0, &a), -EINVAL, "%s: mmap: len 0", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, 0x8, 0, &a), -EINVAL, "%s: mmap: prot 0x8", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, -1, 0, &a), -EINVAL, "%s: mmap: prot -1", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, RW, 0x1, &a), -EINVAL, "%s: mmap: flags 0x1", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, RW, 0x20, &a), -EINVAL, "%s: mmap: flags 0x20", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, RW, INT_MIN, &a), -EINVAL, "%s: mmap: flags INT_MIN", e->arch);
	tap_eq(mmp_mmap(e->s, 0x100001000ull + 1, PG, RW, MMP_MAP_FIXED, &a), -EINVAL,
	       "%s: mmap: MAP_FIXED unaligned", e->arch);
	tap_eq(mmp_mmap(e->s, 0x100000800ull, PG, RW, MMP_MAP_FIXED_NOREPLACE, &a), -EINVAL,
	       "%s: mmap: MAP_FIXED_NOREPLACE unaligned", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, RW, MMP_MAP_FIXED, &a), -ENOMEM, "%s: mmap: MAP_FIXED at 0",
	       e->arch);
	tap_eq(mmp_mmap(e->s, MMP_MMAP_MIN_ADDR - PG, PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: MAP_FIXED below MMP_MMAP_MIN_ADDR", e->arch);
	tap_eq(mmp_mmap(e->s, MMP_MMAP_MIN_ADDR - PG, 2 * PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: MAP_FIXED straddling MMP_MMAP_MIN_ADDR", e->arch);
	tap_eq(mmp_mmap(e->s, top, PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: MAP_FIXED at MMP_TASK_SIZE", e->arch);
	tap_eq(mmp_mmap(e->s, top - PG, 2 * PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: MAP_FIXED ending above MMP_TASK_SIZE", e->arch);
	tap_eq(mmp_mmap(e->s, top - PG, PG + 1, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: MAP_FIXED whose rounded length ends above MMP_TASK_SIZE", e->arch);
	tap_eq(mmp_mmap(e->s, 0xfffffffffffff000ull, PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: MAP_FIXED at the top of the 64-bit space", e->arch);
	tap_eq(mmp_mmap(e->s, 0, top + PG, RW, 0, &a), -ENOMEM, "%s: mmap: len above MMP_TASK_SIZE",
	       e->arch);
	tap_eq(mmp_mmap(e->s, 0, top, RW, 0, &a), -ENOMEM, "%s: mmap: len MMP_TASK_SIZE (no room)",
	       e->arch);
	tap_eq(mmp_mmap(e->s, 0, UINT64_MAX, RW, 0, &a), -ENOMEM, "%s: mmap: len UINT64_MAX",
	       e->arch);
	tap_eq(mmp_mmap(e->s, 0, UINT64_MAX - PG + 2, RW, 0, &a), -ENOMEM,
	       "%s: mmap: len that wraps to one page when rounded", e->arch);
	tap_eq(mmp_mmap(e->s, MMP_MMAP_MIN_ADDR, UINT64_MAX - MMP_MMAP_MIN_ADDR + PG + 1, RW,
			MMP_MAP_FIXED, &a),
	       -ENOMEM, "%s: mmap: MAP_FIXED with wrapping end", e->arch);
	tap_ok(a == 0xdead, "%s: mmap: addr_out untouched on errors", e->arch);
	still_works(e, "bad mmap arguments");

	/* The last page below MMP_TASK_SIZE is user space: map it and use it to the end. */
	err = mmp_mmap(e->s, top - PG, PG, RW, MMP_MAP_FIXED, &a);
	tap_ok(!err && a == top - PG, "%s: mmap: MAP_FIXED of the last user page", e->arch);
	if (!err) {
		uint64_t v = 42;

		tap_eq(mmp_write(e->cpu, top - 8, &v, 8), 0, "%s: write the last 8 user bytes",
		       e->arch);
		tap_eq(mmp_write(e->cpu, top - 8, &v, 9), -EFAULT, "%s: write 1 byte past it",
		       e->arch);
		tap_eq(mmp_munmap(e->s, top - PG, PG), 0, "%s: munmap the last user page", e->arch);
	}
	/* A hint that cannot be honoured is only a hint. */
	err = mmp_mmap(e->s, top + 16 * PG, 2 * PG, RW, 0, &a);
	tap_ok(!err && a >= MMP_MMAP_MIN_ADDR && a + 2 * PG <= top,
	       "%s: mmap: a hint above MMP_TASK_SIZE is ignored", e->arch);
	if (!err)
		mmp_munmap(e->s, a, 2 * PG);
	err = mmp_mmap(e->s, e->canary + PG, 2 * PG, RW, 0, &a);
	tap_ok(!err && (a + 2 * PG <= e->canary || a >= e->canary + CANARY_LEN),
	       "%s: mmap: a hint inside a mapping is ignored", e->arch);
	if (!err)
		mmp_munmap(e->s, a, 2 * PG);

	/* An unaligned hint without MAP_FIXED is rounded; a length is rounded up to pages. */
	err = mmp_mmap(e->s, SCRATCH + 123, 1, RW, 0, &a);
	tap_ok(!err && !(a % PG), "%s: mmap: unaligned hint, 1 byte: page aligned", e->arch);
	if (!err) {
		uint64_t v = 1;

		tap_eq(mmp_write(e->cpu, a + PG - 8, &v, 8), 0,
		       "%s: mmap: 1 byte maps a whole page", e->arch);
		tap_eq(mmp_write(e->cpu, a + PG, &v, 8), -EFAULT,
		       "%s: mmap: ... and not the next one", e->arch);
		mmp_munmap(e->s, a, PG);
	}

	/* MAP_FIXED over the middle of a THP splits it and replaces only that part. */
	fixed = map_scratch(e, 512);
	must(!mmp_madvise(e->s, fixed, 2 * MiB, MMP_MADV_HUGEPAGE), "madvise");
	must(fill_pages(e->cpu, fixed, 512, 15), "fill THP");
	tap_eq(mmp_mmap(e->s, fixed + 100 * PG, 3 * PG, RW, MMP_MAP_FIXED, &a), 0,
	       "%s: MAP_FIXED over part of a THP", e->arch);
	tap_ok(pages_hold(e->cpu, fixed, 100, 15) && range_holds(e->cpu, fixed, 100, 3, 0) &&
		       range_holds(e->cpu, fixed, 103, 409, 15),
	       "%s: MAP_FIXED over a THP: replaced part zero, the rest intact", e->arch);
	tap_eq(mmp_space_verify(e->s), 0, "%s: verify after MAP_FIXED over a THP", e->arch);
	tap_eq(mmp_munmap(e->s, fixed, 2 * MiB), 0, "%s: munmap", e->arch);

	/* MAP_FIXED_NOREPLACE over a mapping: -EEXIST, the mapping untouched. */
	fixed = map_scratch(e, 8);
	must(fill_pages(e->cpu, fixed, 8, 3), "fill 8 pages");
	tap_eq(mmp_mmap(e->s, fixed, 8 * PG, RW, MMP_MAP_FIXED_NOREPLACE, &a), -EEXIST,
	       "%s: MAP_FIXED_NOREPLACE over a whole mapping", e->arch);
	tap_eq(mmp_mmap(e->s, fixed + 7 * PG, 4 * PG, RW, MMP_MAP_FIXED_NOREPLACE, &a), -EEXIST,
	       "%s: MAP_FIXED_NOREPLACE over its last page", e->arch);
	tap_eq(mmp_mmap(e->s, fixed - 2 * PG, 3 * PG, MMP_PROT_READ, MMP_MAP_FIXED_NOREPLACE, &a),
	       -EEXIST, "%s: MAP_FIXED_NOREPLACE over its first page", e->arch);
	tap_eq(mmp_mmap(e->s, fixed, PG, RW, MMP_MAP_FIXED | MMP_MAP_FIXED_NOREPLACE, &a), -EEXIST,
	       "%s: MAP_FIXED|MAP_FIXED_NOREPLACE: NOREPLACE wins", e->arch);
	tap_ok(pages_hold(e->cpu, fixed, 8, 3), "%s: data intact after -EEXIST", e->arch);
	still_works(e, "MAP_FIXED_NOREPLACE -EEXIST");

	/* MAP_FIXED over a mapping replaces that part with fresh zero memory. */
	err = mmp_mmap(e->s, fixed + 2 * PG, 3 * PG, MMP_PROT_READ, MMP_MAP_FIXED, &b);
	tap_ok(!err && b == fixed + 2 * PG, "%s: MAP_FIXED over a mapping", e->arch);
	tap_ok(pages_hold(e->cpu, fixed, 2, 3) && pages_hold(e->cpu, fixed + 2 * PG, 3, 0),
	       "%s: MAP_FIXED: replaced part reads zero, the rest is intact", e->arch);
	tap_ok(range_holds(e->cpu, fixed, 5, 3, 3),
	       "%s: MAP_FIXED: pages after the replaced part intact", e->arch);
	tap_eq(mmp_write(e->cpu, fixed + 3 * PG, page_buf, 8), -EFAULT,
	       "%s: MAP_FIXED: the replacement has its own protection", e->arch);
	tap_eq(mmp_munmap(e->s, fixed, 8 * PG), 0, "%s: munmap", e->arch);
	still_works(e, "MAP_FIXED replacement");

	/* MAP_POPULATE of PROT_NONE maps nothing and is fine. */
	tap_eq(mmp_mmap(e->s, 0, 4 * PG, MMP_PROT_NONE, MMP_MAP_POPULATE, &a), 0,
	       "%s: MAP_POPULATE of PROT_NONE", e->arch);
	tap_eq(mmp_read(e->cpu, a, page_buf, 8), -EFAULT, "%s: PROT_NONE populated reads fault",
	       e->arch);
	mmp_munmap(e->s, a, 4 * PG);
	still_works(e, "MAP_POPULATE of PROT_NONE");
}

static void test_munmap(struct env *e)
{
	const uint64_t top = MMP_TASK_SIZE;
	uint64_t a;

	a = map_scratch(e, 4);
	must(fill_pages(e->cpu, a, 4, 4), "fill");
	tap_eq(mmp_munmap(NULL, a, PG), -EINVAL, "%s: munmap: NULL space", e->arch);
	tap_eq(mmp_munmap(e->s, a + 1, PG), -EINVAL, "%s: munmap: unaligned", e->arch);
	tap_eq(mmp_munmap(e->s, a + PG / 2, PG), -EINVAL, "%s: munmap: half-page aligned", e->arch);
	tap_eq(mmp_munmap(e->s, a, 0), -EINVAL, "%s: munmap: len 0", e->arch);
	tap_eq(mmp_munmap(e->s, top, PG), -EINVAL, "%s: munmap: at MMP_TASK_SIZE", e->arch);
	tap_eq(mmp_munmap(e->s, top + PG, PG), -EINVAL, "%s: munmap: beyond MMP_TASK_SIZE",
	       e->arch);
	tap_eq(mmp_munmap(e->s, top - PG, 2 * PG), -EINVAL,
	       "%s: munmap: ending beyond MMP_TASK_SIZE", e->arch);
	tap_eq(mmp_munmap(e->s, a, UINT64_MAX), -EINVAL, "%s: munmap: len UINT64_MAX", e->arch);
	tap_eq(mmp_munmap(e->s, a, 0 - a + PG), -EINVAL, "%s: munmap: addr + len wraps", e->arch);
	tap_eq(mmp_munmap(e->s, 0xfffffffffffff000ull, 2 * PG), -EINVAL,
	       "%s: munmap: top of the 64-bit space, wrapping", e->arch);
	tap_ok(pages_hold(e->cpu, a, 4, 4), "%s: munmap: mapping intact after errors", e->arch);
	still_works(e, "bad munmap arguments");

	/* Unmapping nothing, or partly nothing, is fine (as Linux). */
	tap_eq(mmp_munmap(e->s, MMP_MMAP_MIN_ADDR, PG), 0, "%s: munmap of an unmapped range",
	       e->arch);
	tap_eq(mmp_munmap(e->s, 0, PG), 0, "%s: munmap of page 0", e->arch);
	tap_eq(mmp_munmap(e->s, top - PG, PG), 0, "%s: munmap of the unmapped last user page",
	       e->arch);
	tap_eq(mmp_munmap(e->s, a + PG, 3 * PG + 16 * PG), 0, "%s: munmap of a range partly mapped",
	       e->arch);
	tap_ok(pages_hold(e->cpu, a, 1, 4), "%s: munmap: the page before the range intact",
	       e->arch);
	tap_eq(mmp_read(e->cpu, a + PG, page_buf, 8), -EFAULT, "%s: munmap: the range is gone",
	       e->arch);
	tap_eq(mmp_munmap(e->s, a, 1), 0, "%s: munmap: len 1 rounds to a page", e->arch);
	tap_eq(mmp_read(e->cpu, a, page_buf, 8), -EFAULT, "%s: munmap: len 1 unmapped the page",
	       e->arch);
	still_works(e, "munmap of unmapped ranges");
}

static void test_mprotect(struct env *e)
{
	uint64_t a, v;

	a = map_scratch(e, 8);
	must(fill_pages(e->cpu, a, 8, 5), "fill");
	tap_eq(mmp_mprotect(NULL, a, PG, MMP_PROT_READ), -EINVAL, "%s: mprotect: NULL space",
	       e->arch);
	tap_eq(mmp_mprotect(e->s, a + 8, PG, MMP_PROT_READ), -EINVAL, "%s: mprotect: unaligned",
	       e->arch);
	tap_eq(mmp_mprotect(e->s, a, PG, 0x10), -EINVAL, "%s: mprotect: prot 0x10", e->arch);
	tap_eq(mmp_mprotect(e->s, a, PG, -1), -EINVAL, "%s: mprotect: prot -1", e->arch);
	tap_eq(mmp_mprotect(e->s, a, 0, MMP_PROT_READ), 0, "%s: mprotect: len 0", e->arch);
	tap_eq(mmp_mprotect(e->s, MMP_MMAP_MIN_ADDR, 0, MMP_PROT_NONE), 0,
	       "%s: mprotect: len 0 of an unmapped address", e->arch);
	tap_eq(mmp_mprotect(e->s, a, UINT64_MAX, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: len UINT64_MAX", e->arch);
	tap_eq(mmp_mprotect(e->s, a, 0 - a + PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: addr + len wraps", e->arch);
	tap_eq(mmp_mprotect(e->s, MMP_TASK_SIZE, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: at MMP_TASK_SIZE", e->arch);
	tap_eq(mmp_mprotect(e->s, 0xfffffffffffff000ull, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: last page of the 64-bit space (end wraps to 0)", e->arch);
	tap_eq(mmp_mprotect(e->s, MMP_MMAP_MIN_ADDR, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: unmapped", e->arch);
	tap_eq(mmp_mprotect(e->s, a - PG, 2 * PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: starting in a hole", e->arch);
	tap_eq(mmp_mprotect(e->s, a + 7 * PG, 2 * PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: ending in a hole", e->arch);
	must(!mmp_munmap(e->s, a + 3 * PG, PG), "punch a hole");
	tap_eq(mmp_mprotect(e->s, a, 8 * PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: range with a hole", e->arch);
	/* As Linux: the VMAs before the hole took the new protection, those after did not. */
	v = stamp(5, 0);
	tap_eq(mmp_write(e->cpu, a, &v, 8), -EFAULT,
	       "%s: mprotect -ENOMEM: pages before the hole took the new protection", e->arch);
	v = stamp(5, 5);
	tap_eq(mmp_write(e->cpu, a + 5 * PG, &v, 8), 0,
	       "%s: mprotect -ENOMEM: pages after the hole kept theirs", e->arch);
	tap_ok(pages_hold(e->cpu, a, 3, 5) && range_holds(e->cpu, a, 4, 4, 5),
	       "%s: mprotect -ENOMEM: data intact", e->arch);
	tap_eq(mmp_munmap(e->s, a, 8 * PG), 0, "%s: munmap", e->arch);
	still_works(e, "bad mprotect arguments");
}

static void test_madvise(struct env *e)
{
	uint64_t a;

	a = map_scratch(e, 8);
	must(fill_pages(e->cpu, a, 8, 6), "fill");
	tap_eq(mmp_madvise(NULL, a, PG, MMP_MADV_DONTNEED), -EINVAL, "%s: madvise: NULL space",
	       e->arch);
	tap_eq(mmp_madvise(e->s, a + 1, PG, MMP_MADV_DONTNEED), -EINVAL, "%s: madvise: unaligned",
	       e->arch);
	tap_eq(mmp_madvise(e->s, a, PG, 999), -EINVAL, "%s: madvise: advice 999", e->arch);
	tap_eq(mmp_madvise(e->s, a, PG, -1), -EINVAL, "%s: madvise: advice -1", e->arch);
	tap_eq(mmp_madvise(e->s, a, PG, 9), -EINVAL, "%s: madvise: advice 9 (not implemented)",
	       e->arch);
	tap_eq(mmp_madvise(e->s, a + 1, PG, MMP_MADV_FREE), -EINVAL,
	       "%s: madvise: MADV_FREE unaligned", e->arch);
	tap_eq(mmp_madvise(e->s, a + 1, PG, MMP_MADV_PAGEOUT), -EINVAL,
	       "%s: madvise: MADV_PAGEOUT unaligned", e->arch);
	tap_eq(mmp_madvise(e->s, a, 0, MMP_MADV_FREE), 0, "%s: madvise: MADV_FREE len 0", e->arch);
	tap_eq(mmp_madvise(e->s, a, UINT64_MAX, MMP_MADV_PAGEOUT), -EINVAL,
	       "%s: madvise: MADV_PAGEOUT len UINT64_MAX", e->arch);
	tap_eq(mmp_madvise(e->s, a, 0, MMP_MADV_DONTNEED), 0, "%s: madvise: len 0", e->arch);
	tap_eq(mmp_madvise(e->s, a, UINT64_MAX, MMP_MADV_DONTNEED), -EINVAL,
	       "%s: madvise: len UINT64_MAX", e->arch);
	tap_eq(mmp_madvise(e->s, a, 0 - a + PG, MMP_MADV_DONTNEED), -EINVAL,
	       "%s: madvise: addr + len wraps", e->arch);
	tap_eq(mmp_madvise(e->s, 0xfffffffffffff000ull, PG, MMP_MADV_DONTNEED), -EINVAL,
	       "%s: madvise: last page of the 64-bit space (end wraps to 0)", e->arch);
	tap_ok(pages_hold(e->cpu, a, 8, 6), "%s: madvise: data intact after errors", e->arch);
	still_works(e, "bad madvise arguments");

	tap_eq(mmp_madvise(e->s, MMP_MMAP_MIN_ADDR, PG, MMP_MADV_DONTNEED), -ENOMEM,
	       "%s: madvise: unmapped range", e->arch);
	tap_eq(mmp_madvise(e->s, MMP_MMAP_MIN_ADDR, PG, MMP_MADV_HUGEPAGE), -ENOMEM,
	       "%s: madvise: MADV_HUGEPAGE of an unmapped range", e->arch);
	tap_eq(mmp_madvise(e->s, MMP_TASK_SIZE - PG, 2 * PG, MMP_MADV_DONTNEED), -ENOMEM,
	       "%s: madvise: range ending beyond MMP_TASK_SIZE", e->arch);
	must(!mmp_munmap(e->s, a + 3 * PG, PG), "punch a hole");
	tap_eq(mmp_madvise(e->s, a + PG, 6 * PG, MMP_MADV_DONTNEED), -ENOMEM,
	       "%s: madvise: DONTNEED over a hole", e->arch);
	/* Linux zaps the mapped parts before reporting the hole. */
	tap_ok(pages_hold(e->cpu, a, 1, 6), "%s: madvise -ENOMEM: page before the range intact",
	       e->arch);
	tap_ok(pages_hold(e->cpu, a + PG, 2, 0) && pages_hold(e->cpu, a + 4 * PG, 3, 0),
	       "%s: madvise -ENOMEM: mapped parts were zapped (read zero)", e->arch);
	tap_ok(range_holds(e->cpu, a, 7, 1, 6), "%s: madvise -ENOMEM: page after the range intact",
	       e->arch);
	tap_eq(mmp_madvise(e->s, a, 8 * PG, MMP_MADV_HUGEPAGE), -ENOMEM,
	       "%s: madvise: MADV_HUGEPAGE over a hole", e->arch);
	tap_eq(mmp_madvise(e->s, a, 8 * PG, MMP_MADV_NOHUGEPAGE), -ENOMEM,
	       "%s: madvise: MADV_NOHUGEPAGE over a hole", e->arch);
	must(fill_pages(e->cpu, a, 3, 6), "refill");
	tap_eq(mmp_madvise(e->s, a, 8 * PG, MMP_MADV_PAGEOUT), -ENOMEM,
	       "%s: madvise: MADV_PAGEOUT over a hole", e->arch);
	tap_eq(mmp_madvise(e->s, a, 8 * PG, MMP_MADV_FREE), -ENOMEM,
	       "%s: madvise: MADV_FREE over a hole", e->arch);
	tap_eq(mmp_madvise(e->s, MMP_MMAP_MIN_ADDR, PG, MMP_MADV_FREE), -ENOMEM,
	       "%s: madvise: MADV_FREE of an unmapped range", e->arch);
	/* Rewritten after MADV_FREE, the data must survive reclaim. */
	must(fill_pages(e->cpu, a, 3, 6), "rewrite");
	tap_ok(!mmp_reclaim(e->s) && pages_hold(e->cpu, a, 3, 6),
	       "%s: MADV_FREE'd then rewritten pages survive reclaim", e->arch);
	tap_eq(mmp_munmap(e->s, a, 8 * PG), 0, "%s: munmap", e->arch);
	still_works(e, "madvise over holes");
}

/* ---- CPUs and user accesses --------------------------------------------------------------- */

struct foreign {
	struct mmp_cpu *cpu;
	uint64_t addr;
	int r, w, m, d;
};

static void *foreign_thread(void *arg)
{
	struct foreign *f = arg;
	uint64_t v = 0;

	f->r = mmp_read(f->cpu, f->addr, &v, 8);
	f->w = mmp_write(f->cpu, f->addr, &v, 8);
	f->m = mmp_memset(f->cpu, f->addr, 0, 8);
	f->d = mmp_cpu_detach(f->cpu);
	return NULL;
}

static void test_cpu(struct env *e)
{
	struct mmp_cpu *cpus[64], *extra = (struct mmp_cpu *)0x1;
	struct foreign f = { .cpu = e->cpu, .addr = e->canary };
	pthread_t t;
	int n = 0, err = 0;

	tap_eq(mmp_cpu_attach(NULL, &extra), -EINVAL, "%s: cpu_attach: NULL space", e->arch);
	tap_eq(mmp_cpu_attach(e->s, NULL), -EINVAL, "%s: cpu_attach: NULL out", e->arch);
	/* One CPU is attached already: 63 more fill the space. */
	while (n < 64 && !(err = mmp_cpu_attach(e->s, &cpus[n])))
		n++;
	tap_eq(n, 63, "%s: 64 CPUs attach to one space", e->arch);
	tap_eq(err, -EBUSY, "%s: the 65th CPU: -EBUSY", e->arch);
	tap_eq(mmp_cpu_flush_tlb(e->cpu), 0, "%s: cpu_flush_tlb", e->arch);
	still_works(e, "65th cpu_attach");
	while (n) {
		n--;
		tap_eq(mmp_cpu_detach(cpus[n]), 0, "%s: cpu_detach %d", e->arch, n);
	}

	must(!pthread_create(&t, NULL, foreign_thread, &f), "pthread_create");
	pthread_join(t, NULL);
	tap_eq(f.r, -EINVAL, "%s: mmp_read on another thread's CPU", e->arch);
	tap_eq(f.w, -EINVAL, "%s: mmp_write on another thread's CPU", e->arch);
	tap_eq(f.m, -EINVAL, "%s: mmp_memset on another thread's CPU", e->arch);
	tap_eq(f.d, -EINVAL, "%s: mmp_cpu_detach of another thread's CPU", e->arch);
	still_works(e, "CPU use from a foreign thread");
}

static void test_access(struct env *e)
{
	const uint64_t top = MMP_TASK_SIZE;
	uint64_t a, ro, none, v = 0;
	uint8_t big[2 * PG];

	tap_eq(mmp_read(NULL, e->canary, &v, 8), -EINVAL, "%s: read: NULL cpu", e->arch);
	tap_eq(mmp_write(NULL, e->canary, &v, 8), -EINVAL, "%s: write: NULL cpu", e->arch);
	tap_eq(mmp_memset(NULL, e->canary, 0, 8), -EINVAL, "%s: memset: NULL cpu", e->arch);
	tap_eq(mmp_read(e->cpu, e->canary, NULL, 8), -EINVAL, "%s: read: NULL buf", e->arch);
	tap_eq(mmp_write(e->cpu, e->canary, NULL, 8), -EINVAL, "%s: write: NULL buf", e->arch);
	tap_eq(mmp_read(e->cpu, e->canary, NULL, 0), 0, "%s: read: NULL buf, len 0", e->arch);
	tap_eq(mmp_write(e->cpu, e->canary, &v, 0), 0, "%s: write: len 0", e->arch);
	tap_eq(mmp_memset(e->cpu, e->canary, 0, 0), 0, "%s: memset: len 0", e->arch);
	tap_eq(mmp_read(e->cpu, 0, &v, 0), 0, "%s: read: len 0 at address 0", e->arch);
	tap_eq(mmp_read(e->cpu, MMP_MMAP_MIN_ADDR, &v, 8), -EFAULT, "%s: read: unmapped", e->arch);
	tap_eq(mmp_write(e->cpu, MMP_MMAP_MIN_ADDR, &v, 8), -EFAULT, "%s: write: unmapped",
	       e->arch);
	tap_eq(mmp_memset(e->cpu, MMP_MMAP_MIN_ADDR, 0, 8), -EFAULT, "%s: memset: unmapped",
	       e->arch);
	tap_eq(mmp_read(e->cpu, 0, &v, 8), -EFAULT, "%s: read: address 0", e->arch);
	tap_eq(mmp_read(e->cpu, top, &v, 8), -EFAULT, "%s: read: at MMP_TASK_SIZE", e->arch);
	tap_eq(mmp_write(e->cpu, top - 4, &v, 8), -EFAULT, "%s: write: across MMP_TASK_SIZE",
	       e->arch);
	tap_eq(mmp_read(e->cpu, UINT64_MAX - 3, &v, 8), -EFAULT, "%s: read: addr + len wraps",
	       e->arch);
	tap_eq(mmp_memset(e->cpu, e->canary, 0, SIZE_MAX), -EFAULT,
	       "%s: memset: len SIZE_MAX wraps", e->arch);
	tap_eq(mmp_write(e->cpu, e->canary, big, SIZE_MAX - e->canary + 2), -EFAULT,
	       "%s: write: addr + len wraps to a small address", e->arch);
	still_works(e, "bad user accesses");

	/* [rw][ro][none]: permissions of each part. */
	a = map_scratch(e, 3);
	must(fill_pages(e->cpu, a, 3, 8), "fill");
	ro = a + PG;
	none = a + 2 * PG;
	must(!mmp_mprotect(e->s, ro, PG, MMP_PROT_READ), "mprotect ro");
	must(!mmp_mprotect(e->s, none, PG, MMP_PROT_NONE), "mprotect none");
	tap_eq(mmp_write(e->cpu, ro, &v, 8), -EFAULT, "%s: write: PROT_READ", e->arch);
	tap_eq(mmp_memset(e->cpu, ro, 0, 8), -EFAULT, "%s: memset: PROT_READ", e->arch);
	tap_eq(mmp_read(e->cpu, ro, &v, 8), 0, "%s: read: PROT_READ", e->arch);
	tap_ok(v == stamp(8, 1), "%s: PROT_READ page holds its data", e->arch);
	tap_eq(mmp_read(e->cpu, none, &v, 8), -EFAULT, "%s: read: PROT_NONE", e->arch);
	tap_eq(mmp_write(e->cpu, none, &v, 8), -EFAULT, "%s: write: PROT_NONE", e->arch);
	/* Across rw -> ro: the rw page is written, nothing past the faulting page. */
	memset(big, 0xee, sizeof(big));
	tap_eq(mmp_write(e->cpu, a, big, sizeof(big)), -EFAULT, "%s: write: rw then ro", e->arch);
	mmp_read(e->cpu, a + PG - 8, &v, 8);
	tap_ok(v == 0xeeeeeeeeeeeeeeeeull, "%s: write: the rw part was written", e->arch);
	tap_ok(range_holds(e->cpu, a, 1, 1, 8), "%s: write: the ro page is unchanged", e->arch);
	tap_eq(mmp_read(e->cpu, ro, big, sizeof(big)), -EFAULT, "%s: read: ro then none", e->arch);
	tap_eq(mmp_mprotect(e->s, a, 3 * PG, RW), 0, "%s: mprotect all back to rw", e->arch);
	tap_ok(range_holds(e->cpu, a, 1, 2, 8), "%s: ro and PROT_NONE pages kept their data",
	       e->arch);
	tap_eq(mmp_munmap(e->s, a, 3 * PG), 0, "%s: munmap", e->arch);
	tap_eq(mmp_write(e->cpu, a, &v, 8), -EFAULT, "%s: write after munmap", e->arch);
	still_works(e, "permission faults");
}

static void test_mremap(struct env *e)
{
	const int mm = MMP_MREMAP_MAYMOVE, fixed = MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED;
	struct mmp_space_stat st0, st1;
	uint64_t a, b, c, out = 0xdead;

	a = map_scratch(e, 8);
	must(fill_pages(e->cpu, a, 8, 19), "fill");
	b = a + 32 * PG; /* a free destination */
	tap_eq(mmp_mremap(NULL, a, PG, PG, 0, 0, &out), -EINVAL, "%s: mremap: NULL space", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, 0, 0, NULL), -EINVAL, "%s: mremap: NULL out", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, 8, 0, &out), -EINVAL, "%s: mremap: flag 8", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, -1, 0, &out), -EINVAL, "%s: mremap: flags -1", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, MMP_MREMAP_FIXED, b, &out), -EINVAL,
	       "%s: mremap: FIXED without MAYMOVE", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, MMP_MREMAP_DONTUNMAP, 0, &out), -EINVAL,
	       "%s: mremap: DONTUNMAP without MAYMOVE", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, 2 * PG, mm | MMP_MREMAP_DONTUNMAP, 0, &out), -EINVAL,
	       "%s: mremap: DONTUNMAP changing the size", e->arch);
	tap_eq(mmp_mremap(e->s, a + 8, PG, PG, mm, 0, &out), -EINVAL, "%s: mremap: unaligned",
	       e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, 0, mm, 0, &out), -EINVAL, "%s: mremap: new_len 0", e->arch);
	tap_eq(mmp_mremap(e->s, a, 0, PG, mm, 0, &out), -EINVAL,
	       "%s: mremap: old_len 0 of a private mapping", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, UINT64_MAX, mm, 0, &out), -EINVAL,
	       "%s: mremap: new_len UINT64_MAX (page-aligns to 0)", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, fixed, b + 8, &out), -EINVAL,
	       "%s: mremap: FIXED to an unaligned address", e->arch);
	tap_eq(mmp_mremap(e->s, a, 2 * PG, 2 * PG, fixed, a + PG, &out), -EINVAL,
	       "%s: mremap: FIXED onto an overlapping range", e->arch);
	tap_eq(mmp_mremap(e->s, a, 2 * PG, 2 * PG, fixed, MMP_TASK_SIZE - PG, &out), -EINVAL,
	       "%s: mremap: FIXED ending above MMP_TASK_SIZE", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, fixed, 0xfffffffffffff000ull, &out), -EINVAL,
	       "%s: mremap: FIXED to the top of the 64-bit space", e->arch);
	tap_eq(mmp_mremap(e->s, MMP_MMAP_MIN_ADDR, PG, 2 * PG, mm, 0, &out), -EFAULT,
	       "%s: mremap: unmapped old range", e->arch);
	tap_eq(mmp_mremap(e->s, a + 4 * PG, 8 * PG, 16 * PG, mm, 0, &out), -EFAULT,
	       "%s: mremap: old range past the end of the VMA", e->arch);
	must(!mmp_mprotect(e->s, a + 4 * PG, 4 * PG, MMP_PROT_READ), "mprotect");
	must(!mmp_space_set_opt(e->s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(6, 16, 0)),
	     "model 6.16");
	tap_eq(mmp_mremap(e->s, a, 8 * PG, 8 * PG, fixed, b, &out), -EFAULT,
	       "%s: mremap: before 6.17, a FIXED move over two VMAs is refused", e->arch);
	must(!mmp_space_set_opt(e->s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_MODELED), "model 6.18");
	must(!mmp_mprotect(e->s, a + 4 * PG, 4 * PG, RW), "mprotect back");
	/* Something right after it: growing in place needs MAYMOVE. */
	must(!mmp_mmap(e->s, a + 8 * PG, PG, MMP_PROT_READ, MMP_MAP_FIXED_NOREPLACE, &c),
	     "mmap the neighbour");
	tap_eq(mmp_mremap(e->s, a, 8 * PG, 9 * PG, 0, 0, &out), -ENOMEM,
	       "%s: mremap: cannot grow in place without MAYMOVE", e->arch);
	tap_ok(out == 0xdead, "%s: mremap: out untouched on errors", e->arch);
	tap_ok(pages_hold(e->cpu, a, 8, 19) && !mmp_read(e->cpu, c, &out, 8),
	       "%s: mremap: both mappings intact after errors", e->arch);
	still_works(e, "bad mremap arguments");

	/* Linux: old_len == new_len without flags returns addr and changes nothing. */
	must(!mmp_space_stat(e->s, &st0), "stat");
	tap_eq(mmp_mremap(e->s, a + 2 * PG, 2 * PG, 2 * PG, 0, 0, &out), 0, "%s: mremap: same size",
	       e->arch);
	must(!mmp_space_stat(e->s, &st1), "stat");
	tap_ok(out == a + 2 * PG && st1.nr_vmas == st0.nr_vmas,
	       "%s: mremap: same size changes nothing (%llu VMAs before, %llu after)", e->arch,
	       (unsigned long long)st0.nr_vmas, (unsigned long long)st1.nr_vmas);
	tap_eq(mmp_munmap(e->s, a, 9 * PG), 0, "%s: munmap", e->arch);
	still_works(e, "a same-size mremap");
}

static void test_gup(const char *arch)
{
	struct mmp_space *child;
	struct mmp_phys_stat pst;
	uint64_t pfns[8], bad[2], a, top;
	struct env e;
	int err;

	env_init(&e, arch, 16 * MiB);
	must(!mmp_phys_stat(e.phys, &pst), "phys_stat");
	top = MMP_TASK_SIZE;
	a = map_scratch(&e, 8);
	must(fill_pages(e.cpu, a, 4, 20), "fill");
	tap_eq(mmp_gup_fast(NULL, a, 1, false, pfns), -EINVAL, "%s: gup_fast: NULL space", arch);
	tap_eq(mmp_gup_fast(e.s, a, 1, false, NULL), -EINVAL, "%s: gup_fast: NULL pfns", arch);
	tap_eq(mmp_gup_fast(e.s, a + 8, 1, false, pfns), -EINVAL, "%s: gup_fast: unaligned", arch);
	tap_eq(mmp_gup_fast(e.s, top, 1, false, pfns), -EFAULT, "%s: gup_fast: at MMP_TASK_SIZE",
	       arch);
	tap_eq(mmp_gup_fast(e.s, top - PG, 2, false, pfns), -EFAULT,
	       "%s: gup_fast: across MMP_TASK_SIZE", arch);
	tap_eq(mmp_gup_fast(e.s, 0xfffffffffffff000ull, 2, false, pfns), -EFAULT,
	       "%s: gup_fast: wrapping range", arch);
	tap_eq(mmp_gup_fast(e.s, a, 0, false, pfns), 0, "%s: gup_fast: nr 0", arch);
	tap_eq(mmp_gup_fast(e.s, MMP_MMAP_MIN_ADDR, 1, false, pfns), 0,
	       "%s: gup_fast: unmapped pins nothing", arch);
	tap_eq(mmp_gup_fast(e.s, a + 4 * PG, 2, false, pfns), 0,
	       "%s: gup_fast: not faulted in pins nothing", arch);
	tap_eq(mmp_gup(NULL, a, 1, false, pfns), -EINVAL, "%s: gup: NULL space", arch);
	tap_eq(mmp_gup(e.s, a, 1, false, NULL), -EINVAL, "%s: gup: NULL pfns", arch);
	tap_eq(mmp_gup(e.s, a + 8, 1, false, pfns), -EINVAL, "%s: gup: unaligned", arch);
	tap_eq(mmp_gup(e.s, top, 1, false, pfns), -EFAULT, "%s: gup: at MMP_TASK_SIZE", arch);
	tap_eq(mmp_gup(e.s, MMP_MMAP_MIN_ADDR, 1, false, pfns), -EFAULT, "%s: gup: unmapped", arch);
	tap_eq(mmp_gup(e.s, a + 6 * PG, 4, true, pfns), -EFAULT,
	       "%s: gup: range running past the mapping", arch);
	must(!mmp_mprotect(e.s, a, PG, MMP_PROT_READ), "mprotect ro");
	must(!mmp_mprotect(e.s, a + PG, PG, MMP_PROT_NONE), "mprotect none");
	tap_eq(mmp_gup(e.s, a, 1, true, pfns), -EFAULT, "%s: gup: write pin of PROT_READ", arch);
	tap_eq(mmp_gup(e.s, a + PG, 1, false, pfns), -EFAULT, "%s: gup: PROT_NONE", arch);
	tap_eq(mmp_gup_fast(e.s, a, 1, true, pfns), 0, "%s: gup_fast: write pin of PROT_READ",
	       arch);
	tap_eq(mmp_gup(e.s, a, 4, true, pfns), -EFAULT,
	       "%s: gup: all or nothing when a later page fails", arch);
	must(!mmp_mprotect(e.s, a, 2 * PG, RW), "mprotect back");
	still_works(&e, "refused pins");

	/* Pins keep frames alive past munmap; the host address shows their data. */
	tap_eq(mmp_gup(e.s, a, 2, true, pfns), 2, "%s: gup: pin 2 pages", arch);
	tap_ok(mmp_page_address(NULL, pfns[0]) == NULL &&
		       mmp_page_address(e.phys, pst.total_pages) == NULL &&
		       mmp_page_address(e.phys, UINT64_MAX) == NULL,
	       "%s: page_address: NULL for no frame", arch);
	tap_ok(mmp_page_address(e.phys, pfns[1]) &&
		       *(uint64_t *)mmp_page_address(e.phys, pfns[1]) == stamp(20, 1),
	       "%s: page_address: a pinned frame holds its data", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify with pins", arch);
	tap_eq(mmp_munmap(e.s, a, 8 * PG), 0, "%s: munmap pinned pages", arch);
	tap_ok(*(uint64_t *)mmp_page_address(e.phys, pfns[1]) == stamp(20, 1),
	       "%s: a pinned frame outlives its mapping", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify with pins of unmapped pages", arch);
	tap_eq(mmp_unpin(NULL, pfns, 2), -EINVAL, "%s: unpin: NULL space", arch);
	tap_eq(mmp_unpin(e.s, NULL, 2), -EINVAL, "%s: unpin: NULL pfns", arch);
	tap_eq(mmp_unpin(e.s, NULL, 0), 0, "%s: unpin: nothing", arch);
	bad[0] = pfns[0];
	bad[1] = UINT64_MAX;
	tap_eq(mmp_unpin(e.s, bad, 2), -EINVAL, "%s: unpin: a pfn out of range", arch);
	bad[1] = pst.total_pages;
	tap_eq(mmp_unpin(e.s, bad, 2), -EINVAL, "%s: unpin: the pfn past the last frame", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: refused unpins dropped nothing", arch);
	tap_eq(mmp_unpin(e.s, pfns, 2), 0, "%s: unpin", arch);
	tap_eq(mmp_unpin(e.s, pfns, 1), -EINVAL, "%s: unpin of a freed frame", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify after unpin", arch);

	/*
	 * An unpin without a pin must be refused: it would drop a mapping's
	 * reference. A fork keeps a second mapping, so a wrong drop cannot free
	 * the folio; if it happens, a new pin puts the reference back.
	 */
	a = map_scratch(&e, 1);
	must(fill_pages(e.cpu, a, 1, 21), "fill");
	must(!mmp_fork(e.s, &child), "fork");
	tap_eq(mmp_gup(e.s, a, 1, false, pfns), 1, "%s: pin a shared page", arch);
	tap_eq(mmp_unpin(e.s, pfns, 1), 0, "%s: unpin it", arch);
	err = mmp_unpin(e.s, pfns, 1);
	tap_eq(err, -EINVAL, "%s: unpin of a page that is no longer pinned", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify after the extra unpin", arch);
	if (!err)
		must(mmp_gup(e.s, a, 1, false, pfns) == 1, "repair the dropped reference");
	tap_ok(pages_hold(e.cpu, a, 1, 21), "%s: the page keeps its data", arch);
	must(!mmp_space_destroy(child), "destroy child");
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify", arch);
	must(!mmp_munmap(e.s, a, PG), "munmap");
	env_fini(&e);
}

/* ---- max_map_count --------------------------------------------------------------------- */

/* Single-page VMAs added to reach the limit, newest last, and where the next one goes. */
static uint64_t singles[MAX_MAP_COUNT + 16];
static int nr_singles;
static uint64_t next_single;

/* Bring the VMA count to @want: add single pages a page apart (none merge) or drop the newest. */
static void set_count(struct env *e, uint64_t want)
{
	struct mmp_space_stat st;
	uint64_t a;

	must(!mmp_space_stat(e->s, &st), "stat");
	for (; st.nr_vmas < want; st.nr_vmas++) {
		must(!mmp_mmap(e->s, next_single, PG, MMP_PROT_READ, MMP_MAP_FIXED_NOREPLACE, &a),
		     "add a VMA");
		singles[nr_singles++] = a;
		next_single += 2 * PG;
	}
	for (; st.nr_vmas > want; st.nr_vmas--)
		must(!mmp_munmap(e->s, singles[--nr_singles], PG), "drop a VMA");
	must(!mmp_space_stat(e->s, &st) && st.nr_vmas == want, "VMA count");
}

static void test_map_count(const char *arch)
{
	struct env e;
	struct mmp_space_stat st;
	uint64_t big, a, out, v = 0x77;
	int err = 0, maps = 0;

	env_init(&e, arch, 64 * MiB);
	must(!mmp_munmap(e.s, e.canary, CANARY_LEN), "drop canary");
	/* A 16-page VMA, then single pages of alternating protection so none merge. */
	next_single = 0x100000000ull;
	must(!mmp_mmap(e.s, next_single, 16 * PG, RW, 0, &big) && big == next_single, "mmap big");
	must(fill_pages(e.cpu, big, 16, 9), "fill big");
	maps = 1;
	nr_singles = 0;
	next_single += 16 * PG;
	/* Ascending hints keep each insert at the end of the VMA array: fast. */
	while (maps < MAX_MAP_COUNT + 10) {
		int prot = maps % 2 ? MMP_PROT_READ : RW;

		err = mmp_mmap(e.s, next_single, PG, prot, 0, &a);
		if (err)
			break;
		must(a == next_single, "hinted mmap landed at the hint");
		singles[nr_singles++] = a;
		next_single += PG;
		maps++;
	}
	next_single += PG;
	tap_eq(err, -ENOMEM, "%s: mmap beyond max_map_count: -ENOMEM", arch);
	tap_eq(maps, MAX_MAP_COUNT, "%s: %d mmaps succeed", arch, MAX_MAP_COUNT);
	must(!mmp_space_stat(e.s, &st), "stat");
	tap_eq(st.nr_vmas, MAX_MAP_COUNT, "%s: nr_vmas at the limit", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify at max_map_count", arch);
	tap_eq(mmp_mmap(e.s, 0, PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: MAP_FIXED below the minimum at the limit is still -ENOMEM", arch);

	/* Splits that would exceed the limit fail, and change nothing. */
	tap_eq(mmp_munmap(e.s, big + 8 * PG, PG), -ENOMEM,
	       "%s: munmap of a page inside a VMA at the limit", arch);
	tap_eq(mmp_mprotect(e.s, big + 8 * PG, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect of a page inside a VMA at the limit", arch);
	tap_eq(mmp_mprotect(e.s, big, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect of the first page of a VMA at the limit", arch);
	tap_eq(mmp_madvise(e.s, big + 8 * PG, PG, MMP_MADV_HUGEPAGE), -ENOMEM,
	       "%s: MADV_HUGEPAGE of a page inside a VMA at the limit", arch);
	tap_ok(pages_hold(e.cpu, big, 16, 9), "%s: data intact after the refused splits", arch);
	tap_eq(mmp_write(e.cpu, big + 8 * PG, &v, 8), 0,
	       "%s: the VMA is still writable (mprotect changed nothing)", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify after the refused splits", arch);
	must(!mmp_space_stat(e.s, &st), "stat");
	tap_eq(st.nr_vmas, MAX_MAP_COUNT, "%s: nr_vmas still the limit", arch);

	/* Linux (vma_modify): a change that needs no split succeeds at the limit. */
	tap_eq(mmp_mprotect(e.s, singles[nr_singles - 1], PG, MMP_PROT_NONE), 0,
	       "%s: mprotect of a whole VMA at the limit (no split)", arch);
	tap_eq(mmp_madvise(e.s, big, 16 * PG, MMP_MADV_HUGEPAGE), 0,
	       "%s: MADV_HUGEPAGE of a whole VMA at the limit (no split)", arch);
	/*
	 * Linux (vms_gather_munmap_vmas): only an unmap that leaves map_count above
	 * the limit is refused; trimming a VMA's end may split temporarily.
	 */
	tap_eq(mmp_munmap(e.s, big + 15 * PG, PG), 0,
	       "%s: munmap of the last page of a VMA at the limit", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify", arch);

	/*
	 * do_mmap refuses at the limit before it touches anything (map_count >=
	 * max_map_count), so a MAP_FIXED over the tail of a VMA fails with the
	 * tail still mapped.
	 */
	set_count(&e, MAX_MAP_COUNT);
	err = mmp_mmap(e.s, big + 13 * PG, 2 * PG, RW, MMP_MAP_FIXED, &a);
	tap_eq(err, -ENOMEM, "%s: MAP_FIXED over the end of a VMA at the limit", arch);
	tap_ok(err ? range_holds(e.cpu, big, 13, 2, 9) : range_holds(e.cpu, big, 13, 2, 0),
	       "%s: the page is the new mapping, or the old one if MAP_FIXED failed", arch);
	/*
	 * mremap_to refuses early when the move could pass the limit, before it
	 * unmaps the destination ((map_count + 2) >= max_map_count - 3).
	 */
	set_count(&e, MAX_MAP_COUNT);
	err = mmp_mremap(e.s, big, PG, PG, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, singles[100],
			 &out);
	tap_eq(err, -ENOMEM, "%s: MREMAP_FIXED onto a mapping at the limit", arch);
	tap_ok(err == 0 || !mmp_read(e.cpu, singles[100], &v, 8),
	       "%s: a failed MREMAP_FIXED leaves the destination mapped", arch);
	tap_ok(err == 0 || pages_hold(e.cpu, big, 1, 9),
	       "%s: a failed MREMAP_FIXED leaves the source intact", arch);
	/* A same-size mremap without flags is a no-op that returns addr, even at the limit. */
	set_count(&e, MAX_MAP_COUNT);
	out = 0;
	err = mmp_mremap(e.s, big + 2 * PG, 2 * PG, 2 * PG, 0, 0, &out);
	tap_ok(err == 0 && out == big + 2 * PG,
	       "%s: same-size mremap inside a VMA at the limit: %s", arch, mmp_strerror(err));
	must(!mmp_space_stat(e.s, &st), "stat");
	tap_eq(st.nr_vmas, MAX_MAP_COUNT, "%s: ... and the VMA count did not change", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify", arch);

	/* Removing a whole VMA makes room for exactly one more. */
	set_count(&e, MAX_MAP_COUNT);
	a = singles[--nr_singles];
	tap_eq(mmp_munmap(e.s, a, PG), 0, "%s: munmap of a whole VMA at the limit", arch);
	tap_eq(mmp_mmap(e.s, a, PG, MMP_PROT_NONE, 0, &singles[nr_singles++]), 0,
	       "%s: then one mmap fits", arch);
	tap_eq(mmp_mmap(e.s, 0, PG, RW, 0, &a), -ENOMEM, "%s: and the next one does not", arch);

	/* One below: a hole in the middle ends exactly at the limit, which Linux allows. */
	set_count(&e, MAX_MAP_COUNT - 1);
	tap_eq(mmp_munmap(e.s, big + 4 * PG, PG), 0,
	       "%s: munmap of a page inside a VMA one below the limit", arch);
	tap_ok(pages_hold(e.cpu, big, 4, 9), "%s: data before the hole intact", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify", arch);
	/*
	 * One below again: MAP_FIXED over the middle of a VMA passes do_mmap's
	 * check, so Linux maps it (the count ends one above the limit). A
	 * failure must at least leave the old page mapped.
	 */
	set_count(&e, MAX_MAP_COUNT - 1);
	err = mmp_mmap(e.s, big + 10 * PG, PG, RW, MMP_MAP_FIXED, &a);
	tap_eq(err, 0, "%s: MAP_FIXED inside a VMA one below the limit", arch);
	tap_ok(err ? range_holds(e.cpu, big, 10, 1, 9) : range_holds(e.cpu, big, 10, 1, 0),
	       "%s: the page is the new mapping, or the old one if MAP_FIXED failed", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify", arch);
	tap_eq(mmp_munmap(e.s, big, next_single - big), 0, "%s: munmap everything", arch);
	tap_ok(!mmp_space_stat(e.s, &st) && st.nr_vmas == 0, "%s: no VMAs left", arch);
	tap_ok(fresh_map_works(&e) && !mmp_space_verify(e.s), "%s: space works again", arch);
	env_fini(&e);
}

/* ---- out of simulated memory ----------------------------------------------------------- */

static uint64_t free_pages(struct mmp_phys *phys)
{
	struct mmp_phys_stat st;

	must(!mmp_phys_stat(phys, &st), "phys_stat");
	return st.free_pages;
}

/* Free frames once page tables in an RCU grace period have landed (up to 2 s). */
static uint64_t settled_free_pages(struct mmp_phys *phys, uint64_t want)
{
	uint64_t n = free_pages(phys);

	for (int i = 0; i < 200 && n != want; i++) {
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
		n = free_pages(phys);
	}
	return n;
}

/* Write page after page until a write fails; returns how many pages were written. */
static uint64_t fill_until_oom(struct mmp_cpu *cpu, uint64_t addr, uint64_t max, int *err,
			       uint64_t tag)
{
	uint64_t p;

	for (p = 0; p < max; p++) {
		for (size_t i = 0; i < PG / 8; i++)
			page_buf[i] = stamp(tag, p) + i;
		*err = mmp_write(cpu, addr + p * PG, page_buf, PG);
		if (*err)
			break;
	}
	return p;
}

static void test_oom(const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct mmp_phys *phys;
	struct mmp_space *s, *s2 = (struct mmp_space *)0x1, *child = NULL;
	struct mmp_cpu *cpu;
	uint64_t a, b, n, pop;
	int err = 0;

	must(!mmp_phys_create(4 * MiB, &phys), "phys 4 MiB");
	must(!mmp_space_create(phys, &cfg, &s), "space");
	must(!mmp_cpu_attach(s, &cpu), "cpu");
	must(!mmp_mmap(s, 0, 8 * MiB, RW, 0, &a), "mmap 8 MiB");
	n = fill_until_oom(cpu, a, 8 * MiB / PG, &err, 10);
	tap_eq(err, -ENOMEM, "%s: write beyond simulated memory: -ENOMEM (after %llu pages)", arch,
	       (unsigned long long)n);
	tap_ok(n > 900 && n < 1024, "%s: most of the 1024 frames were used", arch);
	tap_eq(free_pages(phys), 0, "%s: phys exhausted", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after -ENOMEM", arch);
	tap_ok(pages_hold(cpu, a, n, 10), "%s: earlier pages hold their data", arch);
	tap_eq(mmp_write(cpu, a + n * PG, page_buf, 8), -ENOMEM,
	       "%s: the next write: -ENOMEM again", arch);
	tap_eq(mmp_memset(cpu, a + (n + 1) * PG, 1, 8), -ENOMEM, "%s: memset: -ENOMEM", arch);
	/* A read needs no memory: the zero page. */
	tap_ok(pages_hold(cpu, a + (n + 2) * PG, 1, 0), "%s: a read of untouched memory works",
	       arch);

	tap_eq(mmp_fork(s, &child), -ENOMEM, "%s: fork with no free frame", arch);
	tap_ok(child == NULL, "%s: fork: child untouched on error", arch);
	tap_eq(mmp_space_create(phys, &cfg, &s2), -ENOMEM, "%s: space_create on an exhausted phys",
	       arch);
	tap_ok(s2 == (struct mmp_space *)0x1, "%s: space_create: out untouched on error", arch);
	{
		uint64_t pfn = 0;

		tap_eq(mmp_gup(s, a + (n + 3) * PG, 1, true, &pfn), -ENOMEM,
		       "%s: gup of a page that must be faulted in: -ENOMEM", arch);
		tap_eq(mmp_gup(s, a + 3 * PG, 1, true, &pfn), 1,
		       "%s: gup of a present page needs no memory", arch);
		tap_eq(mmp_unpin(s, &pfn, 1), 0, "%s: unpin", arch);
	}
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);

	/* Four frames: the child gets its tables for the first 2 MiB, not the second. */
	tap_eq(mmp_madvise(s, a + 100 * PG, PG, MMP_MADV_DONTNEED), 0, "%s: DONTNEED 1", arch);
	tap_eq(mmp_madvise(s, a + 200 * PG, PG, MMP_MADV_DONTNEED), 0, "%s: DONTNEED 2", arch);
	tap_eq(mmp_madvise(s, a + 600 * PG, PG, MMP_MADV_DONTNEED), 0, "%s: DONTNEED 3", arch);
	tap_eq(mmp_madvise(s, a + 700 * PG, PG, MMP_MADV_DONTNEED), 0, "%s: DONTNEED 4", arch);
	tap_eq(free_pages(phys), 4, "%s: 4 frames free", arch);
	tap_eq(mmp_fork(s, &child), -ENOMEM, "%s: fork running out of memory midway", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the failed fork", arch);
	tap_eq(free_pages(phys), 4, "%s: the failed fork leaked no frame", arch);
	{
		bool ok = pages_hold(cpu, a, 100, 10) && pages_hold(cpu, a + 100 * PG, 1, 0) &&
			  pages_hold(cpu, a + 600 * PG, 1, 0);

		for (uint64_t p = 101; ok && p < n; p++) {
			mmp_read(cpu, a + p * PG, page_buf, 8);
			ok = p == 200 || p == 600 || p == 700 || page_buf[0] == stamp(10, p);
		}
		tap_ok(ok, "%s: parent data intact after the failed fork", arch);
	}
	/* The parent's entries were write-protected for the fork: writes reuse its pages. */
	tap_eq(mmp_write(cpu, a + 5 * PG, page_buf, 8), 0,
	       "%s: parent writes after the failed fork", arch);
	tap_eq(free_pages(phys), 4, "%s: ... by reusing its pages", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);

	/*
	 * A move that runs out of page tables midway moves everything back. The
	 * destination needs a PUD, a PMD and three PTE tables (it is 64 KiB off
	 * PMD alignment): the fifth frame is missing.
	 */
	{
		uint64_t out = 0, dst = 0x100000000ull + 64 * KiB, v;
		bool ok = true;

		err = mmp_mremap(s, a, 4 * MiB, 4 * MiB, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, dst,
				 &out);
		tap_eq(err, -ENOMEM, "%s: mremap running out of memory midway", arch);
		tap_eq(mmp_space_verify(s), 0, "%s: verify after the failed mremap", arch);
		tap_eq(settled_free_pages(phys, 4), 4, "%s: the failed mremap leaked no frame",
		       arch);
		for (uint64_t p = 6; ok && p < n; p++) {
			ok = !mmp_read(cpu, a + p * PG, &v, 8);
			ok = ok &&
			     (p == 100 || p == 200 || p == 600 || p == 700 || v == stamp(10, p));
		}
		tap_ok(ok, "%s: the failed mremap left the data in place", arch);
		tap_eq(mmp_read(cpu, dst, &v, 8), -EFAULT, "%s: and nothing at the destination",
		       arch);
	}

	/* Give memory back: writes work again. */
	tap_eq(mmp_munmap(s, a, 256 * PG), 0, "%s: munmap 1 MiB", arch);
	tap_ok(free_pages(phys) >= 250, "%s: munmap freed its frames (%llu free)", arch,
	       (unsigned long long)free_pages(phys));
	n = fill_until_oom(cpu, a + n * PG, 64, &err, 11);
	tap_ok(n == 64 && err == 0, "%s: writing works again", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	tap_eq(mmp_munmap(s, a, 8 * MiB), 0, "%s: munmap all", arch);

	/* MAP_POPULATE is best effort: more than the phys holds still maps. */
	err = mmp_mmap(s, 0, 8 * MiB, RW, MMP_MAP_POPULATE, &pop);
	tap_eq(err, 0, "%s: MAP_POPULATE of 8 MiB on a 4 MiB phys", arch);
	/* Tables freed by the munmap before may land from their grace period after it. */
	tap_ok(free_pages(phys) < 16, "%s: populate used all memory (%llu frames free)", arch,
	       (unsigned long long)free_pages(phys));
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the partial populate", arch);
	tap_ok(!err && pages_hold(cpu, pop, 16, 0), "%s: populated memory reads zero", arch);
	tap_eq(mmp_munmap(s, pop, 8 * MiB), 0, "%s: munmap", arch);

	/* A THP fault with no room for a huge folio falls back to small pages. */
	must(!mmp_mmap(s, 0, 4 * MiB, RW, 0, &b), "mmap 4 MiB");
	must(!mmp_madvise(s, b, 4 * MiB, MMP_MADV_HUGEPAGE), "madvise");
	n = fill_until_oom(cpu, b, 4 * MiB / PG, &err, 12);
	tap_eq(err, -ENOMEM, "%s: THP region: -ENOMEM when memory runs out (%llu pages)", arch,
	       (unsigned long long)n);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	tap_ok(pages_hold(cpu, b, n, 12), "%s: THP region data intact", arch);
	tap_eq(mmp_munmap(s, b, 4 * MiB), 0, "%s: munmap", arch);

	tap_eq(mmp_cpu_detach(cpu), 0, "%s: detach", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: phys_destroy", arch);
}

/* A shared THP whose COW finds no memory: split, then a one-page copy, or -ENOMEM. */
static void test_oom_huge_cow(const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct mmp_phys *phys;
	struct mmp_space *s, *child;
	struct mmp_cpu *cpu, *ccpu;
	uint64_t huge, fill, n, v = 0xabcdef;
	int err = 0;

	must(!mmp_phys_create(8 * MiB, &phys), "phys 8 MiB");
	must(!mmp_space_create(phys, &cfg, &s), "space");
	must(!mmp_cpu_attach(s, &cpu), "cpu");
	must(!mmp_mmap(s, 0, 2 * MiB, RW, 0, &huge), "mmap 2 MiB");
	must(!mmp_madvise(s, huge, 2 * MiB, MMP_MADV_HUGEPAGE), "madvise");
	must(fill_pages(cpu, huge, 512, 13), "fill THP");
	tap_eq(mmp_fork(s, &child), 0, "%s: fork with a THP", arch);
	must(!mmp_cpu_attach(child, &ccpu), "child cpu");
	must(!mmp_mmap(s, 0, 8 * MiB, RW, 0, &fill), "mmap filler");
	n = fill_until_oom(cpu, fill, 8 * MiB / PG, &err, 14);
	tap_eq(err, -ENOMEM, "%s: filler exhausted the phys", arch);
	tap_eq(mmp_write(ccpu, huge + 5 * PG, &v, 8), -ENOMEM,
	       "%s: COW of a shared THP with no memory: -ENOMEM", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the failed huge COW", arch);
	tap_ok(pages_hold(ccpu, huge, 512, 13), "%s: child still sees the shared data", arch);
	/* Splitting a PMD needs no memory: its PTE table was deposited beside it. */
	tap_eq(mmp_munmap(s, huge + 200 * PG, PG), 0,
	       "%s: munmap inside the parent's THP with no free frame", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the split", arch);
	tap_ok(pages_hold(cpu, huge, 200, 13) && range_holds(cpu, huge, 201, 311, 13) &&
		       pages_hold(ccpu, huge, 512, 13),
	       "%s: both sides keep their data", arch);
	tap_eq(free_pages(phys), 0, "%s: the shared page stays allocated", arch);
	must(!mmp_madvise(s, fill, PG, MMP_MADV_DONTNEED), "free one frame");
	tap_eq(mmp_write(ccpu, huge + 5 * PG, &v, 8), 0,
	       "%s: with one frame free the COW copies one page", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the small COW", arch);
	tap_ok(pages_hold(cpu, huge, 200, 13) && range_holds(cpu, huge, 201, 311, 13),
	       "%s: parent data unchanged", arch);
	mmp_read(ccpu, huge + 5 * PG, page_buf, PG);
	{
		bool ok = page_buf[0] == v;

		for (size_t i = 1; i < PG / 8; i++)
			ok &= page_buf[i] == stamp(13, 5) + i;
		ok &= pages_hold(ccpu, huge, 5, 13);
		tap_ok(ok, "%s: child sees its write over the copied data", arch);
	}
	tap_ok(range_holds(cpu, fill, 1, n - 1, 14), "%s: parent filler data intact", arch);
	/* The parent goes first; the child keeps the phys busy. */
	tap_eq(mmp_cpu_detach(cpu), 0, "%s: detach", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy the parent first", arch);
	tap_eq(mmp_space_verify(child), 0, "%s: verify the orphan child", arch);
	tap_ok(pages_hold(ccpu, huge, 5, 13) && range_holds(ccpu, huge, 6, 506, 13),
	       "%s: the orphan child keeps its data", arch);
	tap_eq(mmp_phys_destroy(phys), -EBUSY, "%s: phys_destroy while the child lives", arch);
	tap_eq(mmp_cpu_detach(ccpu), 0, "%s: detach child cpu", arch);
	tap_eq(mmp_space_destroy(child), 0, "%s: destroy child", arch);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: phys_destroy", arch);
}

/*
 * fork runs out of memory at the child's deposit for a THP, or after sharing
 * the THP: nothing leaks and the parent keeps working without memory.
 */
static void test_oom_fork_huge(const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	const uint64_t huge = 0x40000000ull, fill = 0x80000000ull;
	struct mmp_phys *phys;
	struct mmp_space *s, *child = NULL;
	struct mmp_cpu *cpu;
	uint64_t a, n;
	int err = 0;

	must(!mmp_phys_create(8 * MiB, &phys), "phys 8 MiB");
	must(!mmp_space_create(phys, &cfg, &s), "space");
	must(!mmp_cpu_attach(s, &cpu), "cpu");
	/* The THP sits below the filler, so fork copies it first. */
	must(!mmp_mmap(s, huge, 2 * MiB, RW, MMP_MAP_FIXED, &a), "mmap THP");
	must(!mmp_madvise(s, huge, 2 * MiB, MMP_MADV_HUGEPAGE), "madvise");
	must(fill_pages(cpu, huge, 512, 16), "fill THP");
	must(!mmp_mmap(s, fill, 8 * MiB, RW, MMP_MAP_FIXED, &a), "mmap filler");
	n = fill_until_oom(cpu, fill, 8 * MiB / PG, &err, 17);
	tap_eq(err, -ENOMEM, "%s: filler exhausted the phys", arch);

	for (unsigned int k = 3; k <= 4; k++) {
		/* k frames: PGD, PUD, PMD, then the THP's deposit (k = 4) or not (k = 3). */
		for (unsigned int i = 0; i < k; i++)
			must(!mmp_madvise(s, fill + (100 + 10 * i) * PG, PG, MMP_MADV_DONTNEED),
			     "DONTNEED");
		tap_eq(free_pages(phys), k, "%s: %u frames free", arch, k);
		tap_eq(mmp_fork(s, &child), -ENOMEM, "%s: fork with a THP and %u free frames", arch,
		       k);
		tap_eq(free_pages(phys), k, "%s: the failed fork leaked no frame (%u free)", arch,
		       k);
		tap_eq(mmp_space_verify(s), 0, "%s: verify after the failed fork (%u)", arch, k);
		tap_ok(pages_hold(cpu, huge, 512, 16), "%s: THP data intact (%u)", arch, k);
		/* Reusing an exclusive THP after the failed fork needs no memory. */
		tap_eq(mmp_write(cpu, huge + 3 * PG, page_buf, 8), 0,
		       "%s: parent writes its THP after the failed fork (%u)", arch, k);
		tap_eq(free_pages(phys), k, "%s: ... without a copy (%u)", arch, k);
		must(fill_pages(cpu, huge, 512, 16), "refill THP");
		/* Take the frames back for the next round. */
		for (unsigned int i = 0; i < k; i++)
			must(fill_pages(cpu, fill + (100 + 10 * i) * PG, 1, 18), "refill");
		tap_eq(free_pages(phys), 0, "%s: exhausted again", arch);
	}
	tap_ok(range_holds(cpu, fill, 0, 100, 17) && n > 200, "%s: filler data intact", arch);
	tap_eq(mmp_cpu_detach(cpu), 0, "%s: detach", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: phys_destroy", arch);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_phys();
	test_names();
	for (int i = 0; i < mmp_arch_count(); i++) {
		const char *arch = mmp_arch_name(i);
		struct env e;

		printf("# back end %s\n", arch);
		test_space_create(arch);
		env_init(&e, arch, 64 * MiB);
		test_opts(&e);
		test_mmap(&e);
		test_munmap(&e);
		test_mprotect(&e);
		test_madvise(&e);
		test_copy_variants(&e);
		test_mremap(&e);
		test_cpu(&e);
		test_access(&e);
		tap_eq(mmp_space_verify(e.s), 0, "%s: verify at the end", arch);
		env_fini(&e);
		test_map_count(arch);
		test_gup(arch);
		test_oom(arch);
		test_oom_huge_cow(arch);
		test_oom_fork_huge(arch);
	}
	return tap_done();
}
