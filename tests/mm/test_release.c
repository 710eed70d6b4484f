/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The release table (mmprim/release.h): the README prints the same rows as
 * the code; MMP_OPT_KERNEL_VERSION takes exactly the releases it names; and
 * each rule holds from its release on, on the back ends it names, and not on
 * the release before, shown by the counters or results of the work it changes.
 * A rule of the table with no check here fails the test, so a new row brings
 * its check. The rules the host can see through system calls are also in the
 * differential test (tests/kdiff), against the host where it has them.
 *
 *   test_release README.md [ICOUNT-BASELINE]   the checks
 *   test_release --print       the README's rows, from the code's table
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "opt_table.h"
#include "util.h"

#define PG	MMP_PAGE_SIZE
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define V(a, b)	MMP_KERNEL_VERSION(a, b, 0)

static struct mmp_phys *phys;

/* The switch a row drives, as the README's column has it: from lib/opt_table.h. */
#define OPT_ENUM_NAME(id, ...)	[MMP_OPT_##id] = "`MMP_OPT_" #id "`",
static const char *const opt_enum_names[MMP_NR_OPTS] = { MMP_OPT_TABLE(OPT_ENUM_NAME) };
#undef OPT_ENUM_NAME

static const char *opt_name(int opt)
{
	if (opt == -1)
		return "-";
	if (opt < 0 || opt >= MMP_NR_OPTS || !mmp_opt_descs[opt].rule)
		return NULL;
	return opt_enum_names[opt];
}

/* Row @r as the README's table has it. */
static void format_row(const struct mmp_release_rule *r, char *buf, size_t len)
{
	snprintf(buf, len, "| `%s` | %u.%u%s | %s | %s | %s | %s | %s |", r->name, r->since >> 16,
		 (r->since >> 8) & 0xff, r->flags & MMP_RULE_INFERRED ? "*" : "",
		 r->arches ? r->arches : "every", opt_name(r->opt) ? opt_name(r->opt) : "?",
		 r->flags & MMP_RULE_SYSCALL_VISIBLE ? "yes" : "no", r->what, r->source);
}

/* The README's rows between its release-table markers equal the code's, in order. */
static void check_readme(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024], want[1024];
	unsigned int i = 0, rows = 0;
	bool in = false;

	if (!f) {
		tap_ok(false, "open %s", path);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (strstr(line, "<!-- release table -->")) {
			in = true;
			continue;
		}
		if (strstr(line, "<!-- end of release table -->"))
			break;
		if (!in || strncmp(line, "| `", 3))
			continue;
		rows++;
		if (!mmp_release_rule(i)) {
			tap_ok(false, "README row %u has no row in the code: %s", rows, line);
			continue;
		}
		format_row(mmp_release_rule(i++), want, sizeof(want));
		tap_ok(!strcmp(line, want), "README row %u is the code's (%s)", rows,
		       mmp_release_rule(i - 1)->name);
		if (strcmp(line, want))
			printf("#   README: %s\n#   code:   %s\n", line, want);
	}
	fclose(f);
	tap_ok(in && !mmp_release_rule(i), "README has all %u rows of the code's table", i);
	for (unsigned int j = 0; mmp_release_rule(j); j++)
		tap_ok(opt_name(mmp_release_rule(j)->opt) != NULL, "row %u: a switch this test names",
		       j);
	/* A switch's row in lib/opt_table.h names the rule whose rows name the switch. */
	for (unsigned int j = 0; mmp_release_rule(j); j++) {
		const struct mmp_release_rule *r = mmp_release_rule(j);

		if (r->opt >= 0)
			tap_ok(mmp_opt_descs[r->opt].rule &&
				       !strcmp(mmp_opt_descs[r->opt].rule, r->name),
			       "row %u (%s): the switch's table row names the rule", j, r->name);
	}
	for (int o = 0; o < MMP_NR_OPTS; o++) {
		bool found = false;

		if (!mmp_opt_descs[o].rule)
			continue;
		for (unsigned int j = 0; mmp_release_rule(j); j++)
			found |= mmp_release_rule(j)->opt == o &&
				 !strcmp(mmp_release_rule(j)->name, mmp_opt_descs[o].rule);
		tap_ok(found, "switch %s: a row of rule %s drives it", mmp_opt_descs[o].name,
		       mmp_opt_descs[o].rule);
	}
}

/* Releases: 6.12 to 6.19, 7.0 and 7.1 at any patch level; the space says which it models. */
static void check_bounds(void)
{
	static const long good[] = {
		MMP_KERNEL_OLDEST, MMP_KERNEL_VERSION(6, 12, 74), V(6, 19), V(7, 0),
		MMP_KERNEL_VERSION(7, 1, 255), MMP_KERNEL_NEWEST,
	};
	struct mmp_space *s = new_space(phys, "x86_64");
	long v = 0;

	tap_ok(!mmp_space_get_opt(s, MMP_OPT_KERNEL_VERSION, &v) && v == MMP_KERNEL_MODELED,
	       "a new space models %u.%u", MMP_KERNEL_MODELED >> 16, (MMP_KERNEL_MODELED >> 8) & 255);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		tap_ok(!mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, good[i]) &&
			       !mmp_space_get_opt(s, MMP_OPT_KERNEL_VERSION, &v) && v == good[i],
		       "release %#lx accepted", (unsigned long)good[i]);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, V(6, 11)), -EINVAL, "6.11 refused");
	tap_eq(mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, V(6, 20)), -EINVAL, "6.20 refused");
	tap_eq(mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, V(7, 2)), -EINVAL, "7.2 refused");
	tap_eq(mmp_space_follows(s, "no_such_rule"), -ENOENT, "an unknown rule is ENOENT");
	tap_eq(mmp_space_follows(NULL, "pt_reclaim"), -EINVAL, "NULL space");
	tap_eq(mmp_space_follows(s, NULL), -EINVAL, "NULL name");
	tap_ok(mmp_release_rule(~0u) == NULL, "no row past the end");
	tap_eq(mmp_space_verify(s), 0, "verifies");
	mmp_space_destroy(s);
}

struct env {
	const char *arch;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	uint64_t a;	/* 2 MiB at a PMD boundary */
};

/* A space of @arch at @release with 2 MiB mapped at a PMD boundary, written in @folio_order folios. */
static void setup(struct env *e, const char *arch, long release, unsigned int folio_order)
{
	uint64_t a, got;

	e->arch = arch;
	e->s = new_space(phys, arch);
	must(!mmp_space_set_opt(e->s, MMP_OPT_KERNEL_VERSION, release), "release %#lx", release);
	if (folio_order)
		must(!mmp_space_set_thp(e->s, folio_order, MMP_THP_ALWAYS), "mTHP");
	must(!mmp_cpu_attach(e->s, &e->cpu), "attach");
	a = map(e->s, 4 * MiB, RW);
	must(!mmp_munmap(e->s, a, 4 * MiB), "munmap");
	e->a = (a + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
	must(!mmp_mmap(e->s, e->a, 2 * MiB, RW, MMP_MAP_FIXED, &got), "mmap");
	must(!mmp_memset(e->cpu, e->a, 1, 2 * MiB), "write");
}

static void teardown(struct env *e)
{
	tap_eq(mmp_space_verify(e->s), 0, "%s: verifies", e->arch);
	mmp_cpu_detach(e->cpu);
	mmp_space_destroy(e->s);
}

/* The counter @c moved by @step, in a space of @arch at @release. */
static uint64_t delta(const char *arch, long release, unsigned int folio_order,
		      void (*step)(struct env *), enum mmp_counter c)
{
	struct mmp_counters before, d;
	struct env e;

	setup(&e, arch, release, folio_order);
	mmp_space_counters(e.s, &before);
	step(&e);
	counters_since(e.s, &before, &d);
	teardown(&e);
	return d.v[c];
}

static void dontneed_all(struct env *e)
{
	must(!mmp_madvise(e->s, e->a, 2 * MiB, MMP_MADV_DONTNEED), "DONTNEED");
}

static void mprotect_ro(struct env *e)
{
	must(!mmp_mprotect(e->s, e->a, 2 * MiB, MMP_PROT_READ), "mprotect");
}

static void fork_it(struct env *e)
{
	struct mmp_space *child;

	must(!mmp_fork(e->s, &child), "fork");
	mmp_space_destroy(child);
}

/* Eight single pages of one VMA in one process_madvise call, another CPU in the mm. */
static void process_madvise_8(struct env *e)
{
	struct mmp_iovec vec[8];
	struct mmp_cpu *other;

	must(!mmp_cpu_attach(e->s, &other), "attach a second CPU");
	must(!mmp_memset(other, e->a, 2, PG), "the second CPU uses the mm");
	for (int i = 0; i < 8; i++)
		vec[i] = (struct mmp_iovec){ e->a + (uint64_t)i * 64 * PG, PG };
	tap_eq(mmp_process_madvise(e->s, vec, 8, MMP_MADV_DONTNEED, 0), 8 * (long)PG,
	       "%s: process_madvise of 8 pages", e->arch);
	mmp_cpu_detach(other);
}

static uint64_t flushes(const char *arch, long release)
{
	struct mmp_counters before, d;
	struct env e;

	setup(&e, arch, release, 0);
	mmp_space_counters(e.s, &before);
	process_madvise_8(&e);
	counters_since(e.s, &before, &d);
	teardown(&e);
	return d.v[MMP_C_TLB_FLUSH_RANGE] + d.v[MMP_C_TLB_FLUSH_ALL];
}

static const char *const archs[] = { "x86_64", "arm64", "riscv64", "loongarch64", "generic" };
#define for_each_backend(a) \
	for (const char *const *a = archs; a < archs + sizeof(archs) / sizeof(archs[0]); a++)

static bool x86(const char *arch)
{
	return !strncmp(arch, "x86_64", 6);
}

static void check_pt_reclaim(void)
{
	for_each_backend(a) {
		long since = x86(*a) ? V(6, 14) : V(7, 0), before = x86(*a) ? V(6, 13) : V(6, 19);
		uint64_t off = delta(*a, before, 0, dontneed_all, MMP_C_PT_RECLAIM_FAST) +
			       delta(*a, before, 0, dontneed_all, MMP_C_PT_RECLAIM_SLOW);
		uint64_t on = delta(*a, since, 0, dontneed_all, MMP_C_PT_RECLAIM_FAST) +
			      delta(*a, since, 0, dontneed_all, MMP_C_PT_RECLAIM_SLOW);

		tap_ok(off == 0 && on > 0, "%s: pt_reclaim from %ld.%ld (%" PRIu64 " tables before, "
		       "%" PRIu64 " from)", *a, since >> 16, (since >> 8) & 255, off, on);
	}
}

/* munmap of the 2 MiB with no table batch page to be had: the single-table path. */
static void munmap_no_batch(struct env *e)
{
	must(!mmp_space_set_opt(e->s, MMP_OPT_TABLE_BATCH_FAIL, 1), "no batch page");
	must(!mmp_munmap(e->s, e->a, 2 * MiB), "munmap");
	/* teardown verifies the mapping is gone, wherever it was */
	must(!mmp_mmap(e->s, e->a, 2 * MiB, RW, MMP_MAP_FIXED, &(uint64_t){ 0 }), "map again");
}

/*
 * Before table_free_rcu, bare-metal x86_64 freed tables right after the
 * shootdown and the others had semi RCU, whose single table goes after an IPI;
 * from it (x86_64 6.14, every back end 7.0) the single table goes by a call_rcu
 * of its own.
 */
static void check_table_free_rcu(void)
{
	for_each_backend(a) {
		long since = x86(*a) ? V(6, 14) : V(7, 0), before = x86(*a) ? V(6, 13) : V(6, 19);
		long old = x86(*a) ? MMP_TABLE_FREE_NATIVE : MMP_TABLE_FREE_SEMI_RCU, vb = -1, vs = -1;
		enum mmp_counter old_path = x86(*a) ? MMP_C_PGTABLE_FREE_NATIVE
						    : MMP_C_PGTABLE_FREE_ONE_IPI;
		struct mmp_space *s = new_space(phys, *a);
		uint64_t ob, os, nb, ns;

		must(!mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, before), "before");
		mmp_space_get_opt(s, MMP_OPT_RCU_TABLE_FREE, &vb);
		must(!mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, since), "since");
		mmp_space_get_opt(s, MMP_OPT_RCU_TABLE_FREE, &vs);
		tap_ok(vb == old && vs == MMP_TABLE_FREE_RCU && mmp_space_follows(s, "table_free_rcu"),
		       "%s: table_free_rcu from %ld.%ld (mode %ld before, %ld from)", *a, since >> 16,
		       (since >> 8) & 255, vb, vs);
		mmp_space_destroy(s);
		ob = delta(*a, before, 0, munmap_no_batch, old_path);
		nb = delta(*a, before, 0, munmap_no_batch, MMP_C_PGTABLE_FREE_ONE_RCU);
		os = delta(*a, since, 0, munmap_no_batch, old_path);
		ns = delta(*a, since, 0, munmap_no_batch, MMP_C_PGTABLE_FREE_ONE_RCU);
		tap_ok(ob > 0 && nb == 0 && os == 0 && ns == ob,
		       "%s: with no batch page, %s before (%" PRIu64 "), by RCU from (%" PRIu64 ")",
		       *a, mmp_counter_name(old_path), ob, ns);
	}
}

/*
 * Before 6.13 a process asks of itself only what it may ask of another:
 * MADV_DONTNEED is EINVAL, MADV_COLD is not. And the errors of the call.
 */
static void check_process_madvise_any_advice(void)
{
	struct mmp_iovec vec[3], big = { 0, (uint64_t)LONG_MAX + 1 };
	struct env e;

	setup(&e, "x86_64", V(6, 12), 0);
	vec[0] = (struct mmp_iovec){ e.a, PG };
	tap_eq(mmp_process_madvise(e.s, vec, 1, MMP_MADV_DONTNEED, 0), -EINVAL,
	       "6.12: MADV_DONTNEED of itself is EINVAL");
	tap_eq(mmp_process_madvise(e.s, vec, 1, MMP_MADV_COLD, 0), (long)PG, "6.12: MADV_COLD is not");
	must(!mmp_space_set_opt(e.s, MMP_OPT_KERNEL_VERSION, V(6, 13)), "6.13");
	tap_eq(mmp_process_madvise(e.s, vec, 1, MMP_MADV_DONTNEED, 0), (long)PG,
	       "6.13: MADV_DONTNEED of itself is done");
	must(!mmp_space_set_opt(e.s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_MODELED), "6.18");
	tap_eq(mmp_process_madvise(NULL, vec, 1, MMP_MADV_DONTNEED, 0), -EINVAL, "NULL space");
	tap_eq(mmp_process_madvise(e.s, vec, 1, MMP_MADV_DONTNEED, 1), -EINVAL, "flags 1");
	tap_eq(mmp_process_madvise(e.s, NULL, 1, MMP_MADV_DONTNEED, 0), -EINVAL, "NULL vector");
	tap_eq(mmp_process_madvise(e.s, vec, MMP_UIO_MAXIOV + 1, MMP_MADV_DONTNEED, 0), -EINVAL,
	       "more than UIO_MAXIOV ranges");
	tap_eq(mmp_process_madvise(e.s, &big, 1, MMP_MADV_DONTNEED, 0), -EINVAL,
	       "a length past LONG_MAX");
	tap_eq(mmp_process_madvise(e.s, vec, 0, 12345, 0), -EINVAL, "no range, a bad advice");
	tap_eq(mmp_process_madvise(e.s, vec, 0, MMP_MADV_DONTNEED, 0), 0, "no range: 0 bytes");
	vec[1] = (struct mmp_iovec){ e.a + 4 * MiB, PG };	/* a hole */
	vec[2] = (struct mmp_iovec){ e.a + 2 * PG, PG };
	tap_eq(mmp_process_madvise(e.s, vec, 3, MMP_MADV_DONTNEED, 0), (long)PG,
	       "a hole in the second range: the first's bytes");
	tap_eq(mmp_process_madvise(e.s, vec + 1, 2, MMP_MADV_DONTNEED, 0), -ENOMEM,
	       "a hole in the first range: ENOMEM");
	vec[0].base = e.a + 1;
	tap_eq(mmp_process_madvise(e.s, vec, 1, MMP_MADV_FREE, 0), -EINVAL, "unaligned: EINVAL");
	teardown(&e);
}

/*
 * Not a release's rule but the architecture's (MMU_GATHER_MERGE_VMAS): a
 * munmap of three VMAs flushes once where VMAs merge, and at the end of each
 * VMA (tlb_end_vma) where they do not, as process_madvise's ranges below.
 */
static void check_munmap_flushes(const char *arch, bool merge)
{
	struct mmp_counters before, d;
	struct env e;

	setup(&e, arch, MMP_KERNEL_MODELED, 0);
	must(!mmp_mprotect(e.s, e.a + 64 * PG, 64 * PG, MMP_PROT_READ), "three VMAs");
	mmp_space_counters(e.s, &before);
	must(!mmp_munmap(e.s, e.a, 192 * PG), "munmap");
	counters_since(e.s, &before, &d);
	tap_eq(d.v[MMP_C_TLB_FLUSH_RANGE] + d.v[MMP_C_TLB_FLUSH_ALL], merge ? 1 : 3,
	       "%s: munmap of three VMAs flushes %s", arch, merge ? "once" : "once a VMA");
	teardown(&e);
}

/* One flush per range before 6.16; one per call from 6.16 where VMAs merge, else one per VMA. */
static void check_process_madvise(void)
{
	for_each_backend(a) {
		uint64_t before = flushes(*a, V(6, 15)), from = flushes(*a, V(6, 16));
		bool merge = x86(*a) || !strcmp(*a, "loongarch64");

		tap_eq(before, 8, "%s: 6.15: a flush per range", *a);
		tap_eq(from, merge ? 1 : 8, "%s: 6.16: %s", *a,
		       merge ? "one flush for the call" : "still one per range (tlb_end_vma)");
		check_munmap_flushes(*a, merge);
	}
}

static void check_mprotect_batch(void)
{
	for_each_backend(a) {
		uint64_t before = delta(*a, V(6, 16), 4, mprotect_ro, MMP_C_PTE_BATCH);
		uint64_t from = delta(*a, V(6, 17), 4, mprotect_ro, MMP_C_PTE_BATCH);

		tap_ok(before == 0 && from == 32, "%s: mprotect batches 64 KiB folios from 6.17 "
		       "(%" PRIu64 " batches before, %" PRIu64 " from)", *a, before, from);
	}
	tap_ok(delta("arm64", V(6, 16), 4, mprotect_ro, MMP_C_CONTPTE_UNFOLD) == 32 &&
		       delta("arm64", V(6, 17), 4, mprotect_ro, MMP_C_CONTPTE_UNFOLD) == 0,
	       "arm64: before 6.17 mprotect unfolds every contpte block, from 6.17 none");
}

/* fork reads the blocks with ptep_get: arm64 stops at young and dirty from 6.17. */
static void check_contpte_early_exit(void)
{
	for_each_backend(a) {
		uint64_t before = delta(*a, V(6, 16), 4, fork_it, MMP_C_PTE_READ);
		uint64_t from = delta(*a, V(6, 17), 4, fork_it, MMP_C_PTE_READ);

		if (!strcmp(*a, "arm64"))
			tap_ok(from < before, "arm64: fork reads fewer entries from 6.17 (%" PRIu64
			       " < %" PRIu64 ")", from, before);
		else
			tap_eq(from, before, "%s: fork reads the same entries at 6.16 and 6.17", *a);
	}
}

static void check_clear_sequential(void)
{
	struct mmp_space *s = new_space(phys, "arm64");
	long v = -2;

	must(!mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, V(6, 19)), "6.19");
	tap_ok(!mmp_space_get_opt(s, MMP_OPT_HUGE_CLEAR_ORDER, &v) &&
		       v == MMP_HUGE_ORDER_TARGET_LAST && !mmp_space_follows(s, "clear_sequential"),
	       "6.19: clears target-last, as copies");
	must(!mmp_space_set_opt(s, MMP_OPT_HUGE_ORDER, MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST), "order");
	tap_ok(!mmp_space_get_opt(s, MMP_OPT_HUGE_CLEAR_ORDER, &v) &&
		       v == MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST,
	       "6.19: clears follow the copy order when it is set");
	must(!mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, V(7, 0)), "7.0");
	tap_ok(!mmp_space_get_opt(s, MMP_OPT_HUGE_CLEAR_ORDER, &v) &&
		       v == MMP_HUGE_ORDER_SEQUENTIAL && mmp_space_follows(s, "clear_sequential") == 1,
	       "7.0: clears in its sequential order");
	tap_ok(!mmp_space_get_opt(s, MMP_OPT_HUGE_ORDER, &v) &&
		       v == MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST, "7.0: copies keep theirs");
	must(!mmp_space_set_opt(s, MMP_OPT_HUGE_CLEAR_ORDER, MMP_HUGE_ORDER_TARGET_LAST), "set");
	tap_ok(!mmp_space_get_opt(s, MMP_OPT_HUGE_CLEAR_ORDER, &v) &&
		       v == MMP_HUGE_ORDER_TARGET_LAST, "7.0: set by hand, the switch wins");
	must(!mmp_space_set_opt(s, MMP_OPT_HUGE_CLEAR_ORDER, -1), "hand back");
	tap_ok(!mmp_space_get_opt(s, MMP_OPT_HUGE_CLEAR_ORDER, &v) && v == MMP_HUGE_ORDER_SEQUENTIAL,
	       "7.0: -1 hands it back to the release");
	mmp_space_destroy(s);
}

/*
 * 6.17's batch loop and 7.1's small-folio branch write the same entries:
 * mprotect a mix of small and 64 KiB folios, some shared with a child,
 * read-only and back, and compare every entry of the two spaces.
 */
static void small_folio_scenario(struct env *e, struct mmp_space **child)
{
	must(!mmp_munmap(e->s, e->a + MiB, 64 * KiB), "a hole");
	must(!mmp_space_set_thp(e->s, 4, MMP_THP_NEVER), "small folios from here");
	must(!mmp_mmap(e->s, e->a + MiB, 64 * KiB, RW, MMP_MAP_FIXED, &(uint64_t){ 0 }), "refill");
	must(!mmp_memset(e->cpu, e->a + MiB, 3, 64 * KiB), "small folios");
	must(!mmp_fork(e->s, child), "fork: shared pages");
	must(!mmp_memset(e->cpu, e->a, 4, 16 * PG), "break COW of the first block");
	must(!mmp_mprotect(e->s, e->a, 2 * MiB, MMP_PROT_READ), "read-only");
	must(!mmp_mprotect(e->s, e->a, 2 * MiB, RW), "read-write");
}

static const char *icount_baseline;	/* bench/icount/icount-baseline.txt, or NULL */

/* The instructions per page of @phase on @arch in the icount baseline, or -1. */
static double icount_of(const char *arch, const char *phase)
{
	FILE *f = icount_baseline ? fopen(icount_baseline, "r") : NULL;
	char a[32], p[64], line[256];
	double v, found = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %63s %lf", a, p, &v) == 3 && !strcmp(a, arch) &&
		    !strcmp(p, phase))
			found = v;
	if (f)
		fclose(f);
	return found;
}

/*
 * No counter tells the small-folio branch from the batch loop: their cost
 * does. The committed instruction counts of mprotect at 6.16, 6.18 and 7.1
 * (which the icount-baseline test holds the code to, within 5%) must show the
 * 4 KiB regression and the fix, and the 64 KiB batching.
 */
static void check_mprotect_small_folio_cost(const char *arch)
{
	double b616 = icount_of(arch, "mprotect_6_16-4k"), b618 = icount_of(arch, "mprotect-4k");
	double b71 = icount_of(arch, "mprotect_7_1-4k");
	double l616 = icount_of(arch, "mprotect_6_16-64k"), l618 = icount_of(arch, "mprotect-64k");

	if (b616 < 0 || b618 < 0 || b71 < 0 || l616 < 0 || l618 < 0) {
		tap_ok(false, "%s: mprotect phases in %s", arch,
		       icount_baseline ? icount_baseline : "(no icount baseline given)");
		return;
	}
	tap_ok(b616 < b618 && b71 < b618 && l618 < l616,
	       "%s: instructions a page, 4K 6.16 %.0f < 6.18 %.0f > 7.1 %.0f; 64K 6.16 %.0f > 6.18 %.0f",
	       arch, b616, b618, b71, l616, l618);
}

static void check_mprotect_small_folio(void)
{
	for_each_backend(a) {
		struct env e70, e71;
		struct mmp_space *c70, *c71;
		long v70 = -1, v71 = -1;
		unsigned int same = 0;

		setup(&e70, *a, V(7, 0), 4);
		setup(&e71, *a, V(7, 1), 4);
		mmp_space_get_opt(e70.s, MMP_OPT_MPROTECT_SMALL_FOLIO, &v70);
		mmp_space_get_opt(e71.s, MMP_OPT_MPROTECT_SMALL_FOLIO, &v71);
		tap_ok(v70 == 0 && v71 == 1, "%s: the small-folio branch from 7.1", *a);
		small_folio_scenario(&e70, &c70);
		small_folio_scenario(&e71, &c71);
		for (uint64_t off = 0; off < 2 * MiB; off += PG) {
			struct mmp_addr_info i70, i71;

			if (mmp_space_query(e70.s, e70.a + off, &i70) ||
			    mmp_space_query(e71.s, e71.a + off, &i71))
				break;
			same += i70.entry_flags[0] == i71.entry_flags[0] &&
				i70.folio_order == i71.folio_order &&
				i70.block_folded == i71.block_folded;
		}
		tap_eq(same, 512, "%s: 7.0 and 7.1 leave the same entries", *a);
		if (strcmp(*a, "loongarch64"))	/* the icount harness counts four back ends */
			check_mprotect_small_folio_cost(*a);
		mmp_space_destroy(c70);
		mmp_space_destroy(c71);
		teardown(&e70);
		teardown(&e71);
	}
}

static void check_mremap(void)
{
	struct env e;
	uint64_t out = 0, far;

	setup(&e, "x86_64", V(6, 16), 0);
	far = e.a + 64 * MiB;
	must(!mmp_mprotect(e.s, e.a + 8 * PG, 8 * PG, MMP_PROT_READ), "two VMAs");
	tap_eq(mmp_mremap(e.s, e.a, 16 * PG, 16 * PG, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, far,
			  &out), -EFAULT, "6.16: a FIXED move of two VMAs is refused");
	tap_eq(mmp_mremap(e.s, e.a, 2 * PG, 2 * PG - 100,
			  MMP_MREMAP_MAYMOVE | MMP_MREMAP_DONTUNMAP, far, &out), -EINVAL,
	       "6.16: DONTUNMAP compares the lengths as given");
	must(!mmp_space_set_opt(e.s, MMP_OPT_KERNEL_VERSION, V(6, 17)), "6.17");
	tap_eq(mmp_mremap(e.s, e.a, 2 * PG, 2 * PG - 100,
			  MMP_MREMAP_MAYMOVE | MMP_MREMAP_DONTUNMAP, far, &out), 0,
	       "6.17: DONTUNMAP compares page-rounded lengths");
	tap_eq(mmp_mremap(e.s, e.a, 16 * PG, 16 * PG, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED,
			  far + 16 * MiB, &out), 0, "6.17: a FIXED move takes both VMAs");
	e.a = far + 16 * MiB;	/* teardown verifies wherever it is */
	teardown(&e);
}

/*
 * Guard install on part of B of [A read-only][B read-write], a private file
 * mapping, fork, and the child makes A's tail read-write beside B. Before
 * 6.19 B got an anon_vma, which in the child links its parent's, so the two
 * cannot merge (vma_had_uncowed_parents); from 6.19 a file VMA only carries
 * the sticky VM_MAYBE_GUARD and they merge, as on a 6.18.44 host. Either way
 * the child keeps the markers.
 */
/*
 * A wipe-on-fork (MAP_DROPPABLE) VMA reaches the child empty, markers too, as
 * on a 6.18.44 host. MADV_COLLAPSE over a guard fails with EINVAL
 * either way, the marker failing the swap-in after a THP was allocated (6.19's
 * VM_MAYBE_GUARD check is for file-backed page-table retraction).
 */
static void check_guard_wipe_and_collapse(struct env *e, bool from_6_19)
{
	struct mmp_counters before, d;
	struct mmp_space *child;
	struct mmp_cpu *ccpu;
	uint64_t drop;
	uint8_t byte = 1;

	/* A shared mapping has no anon_vma from 6.19: the flag alone makes fork copy its markers. */
	must(!mmp_mmap(e->s, 0, 16 * PG, RW, MMP_MAP_SHARED, &drop), "shared");
	must(!mmp_madvise(e->s, drop + 4 * PG, PG, MMP_MADV_GUARD_INSTALL), "guard");
	must(!mmp_fork(e->s, &child), "fork");
	must(!mmp_cpu_attach(child, &ccpu), "attach");
	tap_eq(mmp_read(ccpu, drop + 4 * PG, &byte, 1), -EFAULT,
	       "%s: a shared mapping's marker reaches the child", e->arch);
	tap_eq(mmp_space_verify(child), 0, "%s: the child verifies", e->arch);
	mmp_cpu_detach(ccpu);
	mmp_space_destroy(child);
	must(!mmp_munmap(e->s, drop, 16 * PG), "unmap");
	must(!mmp_mmap(e->s, 0, 16 * PG, RW, MMP_MAP_DROPPABLE, &drop), "droppable");
	must(!mmp_memset(e->cpu, drop, 7, PG), "write");
	must(!mmp_madvise(e->s, drop + 4 * PG, PG, MMP_MADV_GUARD_INSTALL), "guard");
	must(!mmp_fork(e->s, &child), "fork");
	must(!mmp_cpu_attach(child, &ccpu), "attach");
	tap_ok(!mmp_read(ccpu, drop + 4 * PG, &byte, 1) && byte == 0,
	       "%s: a wipe-on-fork VMA reaches the child without its marker", e->arch);
	mmp_cpu_detach(ccpu);
	mmp_space_destroy(child);
	must(!mmp_munmap(e->s, e->a, 2 * MiB), "unmap");
	must(!mmp_mmap(e->s, e->a, 2 * MiB, RW, MMP_MAP_FIXED, &(uint64_t){ 0 }), "map");
	must(!mmp_memset(e->cpu, e->a, 1, 2 * MiB), "write");
	must(!mmp_madvise(e->s, e->a + 8 * PG, PG, MMP_MADV_GUARD_INSTALL), "guard");
	mmp_space_counters(e->s, &before);
	tap_eq(mmp_madvise(e->s, e->a, 2 * MiB, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: MADV_COLLAPSE over a guard is EINVAL", e->arch);
	counters_since(e->s, &before, &d);
	tap_eq(d.v[MMP_C_THP_COLLAPSE_ALLOC], 1, "%s %s: a THP allocated, then the marker fails it",
	       e->arch, from_6_19 ? "6.19" : "6.18");
}

static void check_guard_vma_flag(void)
{
	for_each_backend(a) {
		for (int from = 0; from < 2; from++) {
			struct env e;
			struct mmp_space *child;
			struct mmp_vma_info vi;
			struct mmp_cpu *ccpu;
			uint8_t byte;

			struct mmp_file *f;

			setup(&e, *a, from ? V(6, 19) : V(6, 18), 0);
			/* Never written: no anon_vma but the one a guard may bring. */
			must(!mmp_munmap(e.s, e.a, 2 * MiB), "unmap");
			must(!mmp_file_create(phys, 64 * PG, 0, &f), "file");
			must(!mmp_mmap_file(e.s, e.a, 64 * PG, RW, MMP_MAP_PRIVATE | MMP_MAP_FIXED, f, 0,
					    &(uint64_t){ 0 }), "map the file");
			must(!mmp_mprotect(e.s, e.a, 16 * PG, MMP_PROT_READ), "A read-only");
			must(!mmp_madvise(e.s, e.a + 24 * PG, 8 * PG, MMP_MADV_GUARD_INSTALL), "guard");
			mmp_space_vma_info(e.s, e.a + 24 * PG, &vi);
			tap_eq(!!(vi.flags & MMP_VMA_MAYBE_GUARD), from, "%s %s: VM_MAYBE_GUARD %s",
			       *a, from ? "6.19" : "6.18", from ? "set" : "not set");
			must(!mmp_fork(e.s, &child), "fork");
			must(!mmp_mprotect(child, e.a + 8 * PG, 16 * PG, RW), "child: A's tail rw");
			mmp_space_vma_info(child, e.a + 16 * PG, &vi);
			tap_eq(vi.start == e.a + 8 * PG, from, "%s %s: A's tail and B %s", *a,
			       from ? "6.19" : "6.18", from ? "merge" : "stay apart");
			must(!mmp_cpu_attach(child, &ccpu), "attach");
			tap_eq(mmp_read(ccpu, e.a + 24 * PG, &byte, 1), -EFAULT,
			       "%s: the child keeps the marker", *a);
			tap_eq(mmp_space_verify(child), 0, "%s: the child verifies", *a);
			mmp_cpu_detach(ccpu);
			mmp_space_destroy(child);
			must(!mmp_munmap(e.s, e.a, 64 * PG), "unmap");
			must(!mmp_file_destroy(f), "file");
			/* Moved beside a VMA it could join, an anonymous guard VMA (its anon_vma) stays apart. */
			must(!mmp_mmap(e.s, e.a, 4 * PG, RW, MMP_MAP_FIXED, &(uint64_t){ 0 }), "plain");
			must(!mmp_mmap(e.s, e.a + 16 * PG, 4 * PG, RW, MMP_MAP_FIXED, &(uint64_t){ 0 }),
			     "to move");
			must(!mmp_madvise(e.s, e.a + 16 * PG, PG, MMP_MADV_GUARD_INSTALL), "guard");
			must(!mmp_mremap(e.s, e.a + 16 * PG, 4 * PG, 4 * PG,
					 MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, e.a + 4 * PG,
					 &(uint64_t){ 0 }), "move beside");
			mmp_space_vma_info(e.s, e.a + 4 * PG, &vi);
			tap_eq(vi.start, e.a + 4 * PG, "%s %s: a moved guard VMA does not merge", *a,
			       from ? "6.19" : "6.18");
			check_guard_wipe_and_collapse(&e, from);
			teardown(&e);
		}
	}
}

/*
 * process_madvise of 8 ranges: one madvise each before 6.15, one mmap read
 * lock for all from 6.15; from 6.17 (madvise_vma_lock) each range inside one
 * VMA takes that VMA's lock and the mmap lock is not taken at all.
 */
static void check_process_madvise_lock_once(void)
{
	for_each_backend(a) {
		uint64_t before = delta(*a, V(6, 14), 0, process_madvise_8, MMP_C_MMAP_LOCK_MADVISE);
		uint64_t after = delta(*a, V(6, 15), 0, process_madvise_8, MMP_C_MMAP_LOCK_MADVISE);
		uint64_t mm18 = delta(*a, V(6, 18), 0, process_madvise_8, MMP_C_MMAP_LOCK_MADVISE);
		uint64_t vma = delta(*a, V(6, 18), 0, process_madvise_8, MMP_C_MADV_VMA_LOCK_SUCCESS);

		tap_ok(before == 8 && after == 1 && mm18 == 0 && vma == 8,
		       "%s: process_madvise_lock_once: %" PRIu64 " mmap locks at 6.14, %" PRIu64
		       " at 6.15; %" PRIu64 " mmap locks and %" PRIu64 " VMA locks at 6.18", *a,
		       before, after, mm18, vma);
	}
}

static void free_all(struct env *e)
{
	must(!mmp_madvise(e->s, e->a, 2 * MiB, MMP_MADV_FREE), "MADV_FREE");
}

/* MADV_DONTNEED and MADV_FREE of one VMA: the mmap read lock at 6.16, the VMA's lock from 6.17. */
static void check_madvise_vma_lock(void)
{
	void (*const steps[])(struct env *) = { dontneed_all, free_all };

	for_each_backend(a) {
		for (int i = 0; i < 2; i++) {
			uint64_t mm16 = delta(*a, V(6, 16), 0, steps[i], MMP_C_MMAP_LOCK_MADVISE);
			uint64_t vma16 = delta(*a, V(6, 16), 0, steps[i], MMP_C_MADV_VMA_LOCK_SUCCESS);
			uint64_t mm17 = delta(*a, V(6, 17), 0, steps[i], MMP_C_MMAP_LOCK_MADVISE);
			uint64_t vma17 = delta(*a, V(6, 17), 0, steps[i], MMP_C_MADV_VMA_LOCK_SUCCESS);

			tap_ok(mm16 == 1 && vma16 == 0 && mm17 == 0 && vma17 == 1,
			       "%s: %s: mmap lock %" PRIu64 ", VMA lock %" PRIu64 " at 6.16; %" PRIu64
			       ", %" PRIu64 " at 6.17", *a, i ? "MADV_FREE" : "MADV_DONTNEED", mm16,
			       vma16, mm17, vma17);
		}
	}
}

static void procmap_query_one(struct env *e)
{
	struct mmp_procmap_query q = { .size = sizeof(q), .query_addr = e->a + MiB };

	must(!mmp_space_procmap_query(e->s, &q) && q.vma_start == e->a, "PROCMAP_QUERY");
}

/* PROCMAP_QUERY of a VMA: the mmap read lock at 6.17, the VMA's lock from 6.18. */
static void check_procmap_query_vma_lock(void)
{
	for_each_backend(a) {
		uint64_t mm17 = delta(*a, V(6, 17), 0, procmap_query_one, MMP_C_MMAP_LOCK_PROCMAP);
		uint64_t vma17 = delta(*a, V(6, 17), 0, procmap_query_one,
				       MMP_C_PROCMAP_VMA_LOCK_SUCCESS);
		uint64_t mm18 = delta(*a, V(6, 18), 0, procmap_query_one, MMP_C_MMAP_LOCK_PROCMAP);
		uint64_t vma18 = delta(*a, V(6, 18), 0, procmap_query_one,
				       MMP_C_PROCMAP_VMA_LOCK_SUCCESS);

		tap_ok(mm17 == 1 && vma17 == 0 && mm18 == 0 && vma18 == 1,
		       "%s: PROCMAP_QUERY: mmap lock %" PRIu64 ", VMA lock %" PRIu64 " at 6.17; %" PRIu64
		       ", %" PRIu64 " at 6.18", *a, mm17, vma17, mm18, vma18);
	}
}

/* PR_THP_DISABLE_EXCEPT_ADVISED: EINVAL at 6.17, taken at 6.18. */
static void check_thp_disable_except_advised(void)
{
	for_each_backend(a) {
		int err[2];

		for (int i = 0; i < 2; i++) {
			struct mmp_space *s = new_space(phys, *a);

			must(!mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, i ? V(6, 18) : V(6, 17)),
			     "release");
			err[i] = mmp_space_set_thp_disable(s, 1, MMP_THP_DISABLE_EXCEPT_ADVISED);
			must(!mmp_space_destroy(s), "destroy");
		}
		tap_ok(err[0] == -EINVAL && err[1] == 0,
		       "%s: PR_THP_DISABLE_EXCEPT_ADVISED: %d at 6.17, %d at 6.18", *a, err[0], err[1]);
	}
}

/* Each rule of the table and its check; the file rule is checked where files are. */
static const struct {
	const char *rule;
	void (*check)(void);
	const char *elsewhere;
} checks[] = {
	{ "guard_regions", NULL, "tests/mm/test_guard.c, check_rules: -EINVAL at 6.12, guards at 6.14" },
	{ "guard_any_vma", NULL, "tests/mm/test_guard.c, check_rules: shared memory at 6.14 and 6.18" },
	{ "pagemap_guard_region", NULL,
	  "tests/mm/test_guard.c: the pagemap word at 6.14 (check_rules) and 6.18 (check_basic)" },
	{ "guard_vma_flag", check_guard_vma_flag, NULL },
	{ "huge_zero_wp_thp", NULL,
	  "tests/mm/test_thp_cow.c, check_huge_zero: a write at 6.12, 6.13 and 6.18" },
	{ "pt_reclaim", check_pt_reclaim, NULL },
	{ "table_free_rcu", check_table_free_rcu, NULL },
	{ "process_madvise_any_advice", check_process_madvise_any_advice, NULL },
	{ "process_madvise_lock_once", check_process_madvise_lock_once, NULL },
	{ "wp_reuse_large_anon", NULL,
	  "tests/mm/test_thp_cow.c, check_reuse_release: a write at 6.14 and 6.15" },
	{ "process_madvise_tlb_batch", check_process_madvise, NULL },
	{ "mremap_multi_vma", check_mremap, NULL },
	{ "mremap_align_first", NULL, "checked with mremap_multi_vma" },
	{ "mprotect_pte_batch", check_mprotect_batch, NULL },
	{ "contpte_get_early_exit", check_contpte_early_exit, NULL },
	{ "clear_sequential", check_clear_sequential, NULL },
	{ "file_batched_unmap", NULL, "tests/mm/test_file.c, test_large: reclaim at 6.18 and at 7.0" },
	{ "collapse_past_empty_pmd", NULL,
	  "tests/mm/test_collapse.c, check_empty_pmd: an empty PMD, then a populated one, at 6.18 and 7.0" },
	{ "mprotect_small_folio", check_mprotect_small_folio, NULL },
	{ "madvise_vma_lock", check_madvise_vma_lock, NULL },
	{ "procmap_query_vma_lock", check_procmap_query_vma_lock, NULL },
	{ "thp_disable_except_advised", check_thp_disable_except_advised, NULL },
};

/* Each switch's C name, from its row of lib/opt_table.h. */
#define OPT_ID_NAME(id, ...)	[MMP_OPT_##id] = "MMP_OPT_" #id,
static const char *const opt_ids[MMP_NR_OPTS] = { MMP_OPT_TABLE(OPT_ID_NAME) };
#undef OPT_ID_NAME

/*
 * docs/counters.md's switch table (rows opening with a switch's name) has a
 * row for every switch of lib/opt_table.h, and names no other.
 */
static void check_switch_docs(const char *path)
{
	bool seen[MMP_NR_OPTS] = { false };
	FILE *f = fopen(path, "r");
	char line[4096];

	if (!f) {
		tap_ok(false, "open %s", path);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *cell_end, *p;

		if (strncmp(line, "| `MMP_OPT_", 11) || !(cell_end = strchr(line + 1, '|')))
			continue;
		*cell_end = 0;
		for (p = strstr(line, "`MMP_OPT_"); p; p = strstr(p + 1, "`MMP_OPT_")) {
			size_t n = strcspn(p + 1, "`");
			int o;

			for (o = 0; o < MMP_NR_OPTS; o++)
				if (strlen(opt_ids[o]) == n && !strncmp(p + 1, opt_ids[o], n))
					break;
			tap_ok(o < MMP_NR_OPTS, "%s names a switch that exists: %.*s", path, (int)n,
			       p + 1);
			if (o < MMP_NR_OPTS)
				seen[o] = true;
		}
	}
	fclose(f);
	for (int o = 0; o < MMP_NR_OPTS; o++)
		tap_ok(seen[o], "%s has a row for %s (lib/opt_table.h)", path, opt_ids[o]);
}

int main(int argc, char **argv)
{
	char row[1024];

	if (argc > 1 && !strcmp(argv[1], "--print")) {
		for (unsigned int i = 0; mmp_release_rule(i); i++) {
			format_row(mmp_release_rule(i), row, sizeof(row));
			puts(row);
		}
		return 0;
	}
	must(!mmp_phys_create(256 * MiB, &phys), "phys");
	if (argc > 1)
		check_readme(argv[1]);
	icount_baseline = argc > 2 ? argv[2] : NULL;
	if (argc > 3)
		check_switch_docs(argv[3]);
	check_bounds();
	for (unsigned int i = 0; mmp_release_rule(i); i++) {
		bool found = false;

		for (size_t j = 0; j < sizeof(checks) / sizeof(checks[0]); j++)
			found |= !strcmp(checks[j].rule, mmp_release_rule(i)->name);
		tap_ok(found, "rule %s has a check", mmp_release_rule(i)->name);
	}
	for (size_t j = 0; j < sizeof(checks) / sizeof(checks[0]); j++) {
		printf("# %s\n", checks[j].rule);
		if (checks[j].check)
			checks[j].check();
		else
			printf("#   %s\n", checks[j].elsewhere);
	}
	mmp_phys_destroy(phys);
	return tap_done();
}
