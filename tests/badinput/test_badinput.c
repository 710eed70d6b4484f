/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad inputs of the calls that create and configure: phys, names, spaces,
 * switches, copy variants, with the errno Linux would give, and after each
 * error on a space mmp_space_verify() passes and the space still works.
 * Mappings: test_badinput_map.c; CPUs, accesses and pins:
 * test_badinput_cpu.c; max_map_count: mm/test_map_count.c; running out of
 * simulated memory: mm/test_oom.c. Every check runs on every back end.
 */
#include "badinput.h"
#include "opt_table.h"

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

	/*
	 * The smallest geometries are valid and must work: one entry, one fully
	 * associative set, of 64 ways (a full word of free-way bits) and of 128
	 * (past the word: the free way is searched for).
	 */
	static const unsigned int assoc[] = { 1, 16, 64, 128 };

	for (size_t i = 0; i < sizeof(assoc) / sizeof(assoc[0]); i++) {
		unsigned int ways = assoc[i];
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
	tap_eq(mmp_debug_set_hook(NULL, NULL, NULL), -EINVAL, "%s: debug_set_hook: NULL space",
	       e->arch);
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
	/*
	 * Every switch refuses one below and one above the range its row of
	 * lib/opt_table.h declares (the boolean ones 2, and -1 or, where the
	 * release may drive them, -2), and a refusal changes nothing.
	 */
	for (int o = 0; o < MMP_NR_OPTS; o++) {
		const struct mmp_opt_desc *d = &mmp_opt_descs[o];
		long old = -1, now = -1;

		must(d->name != NULL, "every switch has a row");
		must(!mmp_space_get_opt(e->s, o, &old), "get_opt");
		tap_ok(mmp_space_set_opt(e->s, o, d->min - 1) == -EINVAL &&
			       (d->max == LONG_MAX ||
				mmp_space_set_opt(e->s, o, d->max + 1) == -EINVAL) &&
			       !mmp_space_get_opt(e->s, o, &now) && now == old,
		       "%s: set_opt: %s refuses what is outside [%ld, %ld]", e->arch, d->name,
		       d->min, d->max);
	}
	tap_ok(mmp_space_set_opt(e->s, MMP_OPT_HUGE_CLEAR_ORDER, -2) == -EINVAL &&
		       mmp_space_set_opt(e->s, MMP_OPT_HUGE_CLEAR_ORDER, MMP_NR_HUGE_ORDERS) ==
			       -EINVAL &&
		       !mmp_space_get_opt(e->s, MMP_OPT_HUGE_CLEAR_ORDER, &v) && v == order,
	       "%s: set_opt: HUGE_CLEAR_ORDER refuses -2 and MMP_NR_HUGE_ORDERS", e->arch);
	/*
	 * The table-free modes, -1 for the release's; native only where a
	 * shootdown sends IPIs. Batch failures: any rate, none below 0.
	 */
	{
		bool broadcast = !strncmp(e->arch, "arm64", 5);
		long mode = -1, fail = -1;

		must(!mmp_space_get_opt(e->s, MMP_OPT_RCU_TABLE_FREE, &mode), "get RCU_TABLE_FREE");
		must(!mmp_space_get_opt(e->s, MMP_OPT_TABLE_BATCH_FAIL, &fail), "get BATCH_FAIL");
		tap_ok(mmp_space_set_opt(e->s, MMP_OPT_RCU_TABLE_FREE, -2) == -EINVAL &&
			       mmp_space_set_opt(e->s, MMP_OPT_RCU_TABLE_FREE, MMP_NR_TABLE_FREE) ==
				       -EINVAL &&
			       mmp_space_set_opt(e->s, MMP_OPT_TABLE_BATCH_FAIL, -1) == -EINVAL &&
			       !mmp_space_get_opt(e->s, MMP_OPT_RCU_TABLE_FREE, &v) && v == mode &&
			       !mmp_space_get_opt(e->s, MMP_OPT_TABLE_BATCH_FAIL, &v) && v == fail,
		       "%s: set_opt: RCU_TABLE_FREE refuses -2 and MMP_NR_TABLE_FREE, "
		       "TABLE_BATCH_FAIL -1", e->arch);
		tap_eq(mmp_space_set_opt(e->s, MMP_OPT_RCU_TABLE_FREE, MMP_TABLE_FREE_NATIVE),
		       broadcast ? -EINVAL : 0, "%s: set_opt: RCU_TABLE_FREE native %s", e->arch,
		       broadcast ? "refused: TLBIs are broadcast" : "taken");
		must(!mmp_space_set_opt(e->s, MMP_OPT_RCU_TABLE_FREE, -1), "hand it back");
		tap_ok(!mmp_space_get_opt(e->s, MMP_OPT_RCU_TABLE_FREE, &v) && v == mode,
		       "%s: RCU_TABLE_FREE -1 is the release's again", e->arch);
	}
	/* Releases: 6.12 to 6.19, 7.0 and 7.1; nothing else, and a refusal changes nothing. */
	{
		static const long bad[] = {
			MMP_KERNEL_VERSION(6, 11, 9), MMP_KERNEL_VERSION(6, 20, 0),
			MMP_KERNEL_VERSION(7, 2, 0), MMP_KERNEL_VERSION(8, 0, 0),
			MMP_KERNEL_VERSION(4, 0, 0), -1, LONG_MAX,
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			tap_ok(mmp_space_set_opt(e->s, MMP_OPT_KERNEL_VERSION, bad[i]) == -EINVAL &&
				       !mmp_space_get_opt(e->s, MMP_OPT_KERNEL_VERSION, &v) &&
				       v == MMP_KERNEL_MODELED,
			       "%s: set_opt: KERNEL_VERSION %#lx refused, 6.18 kept", e->arch,
			       (unsigned long)bad[i]);
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
		test_copy_variants(&e);
		tap_eq(mmp_space_verify(e.s), 0, "%s: verify at the end", arch);
		env_fini(&e);
	}
	return tap_done();
}
