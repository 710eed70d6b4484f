/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What each switch covers, as docs/counters.md states it: every call a switch
 * claims to change must count differently with it on and off, and a call it
 * does not claim must count exactly the same. Each case runs the same work in
 * two fresh spaces, the switch on in one and off in the other, and compares
 * the counters of the step under test only.
 */
#include <string.h>

#include "util.h"

#define PG	MMP_PAGE_SIZE
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define LEN	(2 * MiB)

static struct mmp_phys *phys;

struct env {
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	uint64_t a;	/* LEN bytes at a PMD boundary, written (64 KiB mTHP, or a PMD THP) */
};

typedef void (*step_fn)(struct env *e);

/* LEN bytes at a 2 MiB boundary, written through: 64 KiB folios, or one THP when @pmd. */
static void setup(struct env *e, const char *arch, enum mmp_opt opt, long value, bool pmd)
{
	uint64_t a, got;

	e->s = new_space(phys, arch);
	must(mmp_space_set_opt(e->s, opt, value) == 0, "set switch %d to %ld", opt, value);
	if (!pmd)
		must(mmp_space_set_thp(e->s, 4, MMP_THP_ALWAYS) == 0, "64 KiB mTHP");
	must(mmp_cpu_attach(e->s, &e->cpu) == 0, "attach");
	a = map(e->s, 2 * LEN, RW);
	must(mmp_munmap(e->s, a, 2 * LEN) == 0, "munmap");
	a = (a + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
	must(mmp_mmap(e->s, a, LEN, RW, MMP_MAP_FIXED, &got) == 0, "mmap fixed");
	if (pmd)
		must(mmp_madvise(e->s, a, LEN, MMP_MADV_HUGEPAGE) == 0, "MADV_HUGEPAGE");
	e->a = a;
}

static void populate(struct env *e)
{
	must(mmp_memset(e->cpu, e->a, 1, LEN) == 0, "populate");
}

static void teardown(struct env *e)
{
	must(mmp_space_verify(e->s) == 0, "verify");
	must(mmp_cpu_detach(e->cpu) == 0, "detach");
	must(mmp_space_destroy(e->s) == 0, "destroy");
}

/*
 * @before in fresh spaces with @opt on and off, then @step; the counters @step
 * moved in each, into @on and @off. A fork's child is destroyed by the step.
 */
static void run(const char *arch, enum mmp_opt opt, long v_on, long v_off, bool pmd,
		step_fn before, step_fn step, struct mmp_counters *on, struct mmp_counters *off)
{
	struct mmp_counters c0;
	struct env e;

	for (int i = 0; i < 2; i++) {
		setup(&e, arch, opt, i ? v_off : v_on, pmd);
		if (before)
			before(&e);
		mmp_space_counters(e.s, &c0);
		step(&e);
		counters_since(e.s, &c0, i ? off : on);
		teardown(&e);
	}
}

static bool same(const struct mmp_counters *a, const struct mmp_counters *b)
{
	for (int c = 0; c < MMP_NR_COUNTERS; c++) {
		if (a->v[c] != b->v[c]) {
			printf("#   %s: %llu on, %llu off\n", mmp_counter_name(c),
			       (unsigned long long)a->v[c], (unsigned long long)b->v[c]);
			return false;
		}
	}
	return true;
}

/* ---- the steps ---- */

static void do_munmap(struct env *e)
{
	must(mmp_munmap(e->s, e->a, LEN) == 0, "munmap");
}

static void do_dontneed(struct env *e)
{
	must(mmp_madvise(e->s, e->a, LEN, MMP_MADV_DONTNEED) == 0, "DONTNEED");
}

static void do_free(struct env *e)
{
	must(mmp_madvise(e->s, e->a, LEN, MMP_MADV_FREE) == 0, "MADV_FREE");
}

static void do_procmap_query(struct env *e)
{
	struct mmp_procmap_query q = { .size = sizeof(q), .query_addr = e->a };

	must(mmp_space_procmap_query(e->s, &q) == 0, "PROCMAP_QUERY");
}

static void do_fork(struct env *e)
{
	struct mmp_space *child;

	must(mmp_fork(e->s, &child) == 0, "fork");
	must(mmp_space_destroy(child) == 0, "child exits");
}

static void do_mprotect(struct env *e)
{
	must(mmp_mprotect(e->s, e->a, LEN, MMP_PROT_READ) == 0, "mprotect");
}

static void do_mremap(struct env *e)
{
	uint64_t to = 0;

	/* A move to an address not PMD aligned: move_ptes entry by entry, not move_pmd. */
	must(mmp_mremap(e->s, e->a, LEN, LEN, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED,
			e->a + LEN + 64 * KiB, &to) == 0,
	     "mremap");
}

/* One page of a 64 KiB block read-only: an arm64 contpte block unfolds (contpte_convert). */
static void do_mprotect_page(struct env *e)
{
	must(mmp_mprotect(e->s, e->a + PG, PG, MMP_PROT_READ) == 0, "mprotect a page");
}

static void do_reclaim(struct env *e)
{
	must(mmp_reclaim(e->s) == 0, "reclaim");
}

static void do_fault(struct env *e)
{
	populate(e);
}

static void free_all(struct env *e)
{
	populate(e);
	do_free(e);
}

/* MADV_FREE, then one byte written again: reclaim must keep the folio. */
static void free_redirty(struct env *e)
{
	free_all(e);
	must(mmp_write(e->cpu, e->a + 3 * PG, "x", 1) == 0, "redirty");
}

static void map_after(struct env *e)
{
	populate(e);
	/* Room for the mremap target, past the mapping. */
	must(mmp_munmap(e->s, e->a + LEN, LEN + MMP_PMD_SIZE) == 0, "munmap target");
}

/* ---- the cases ---- */

struct claim {
	const char *what;
	step_fn before, step;
	enum mmp_counter c;	/* for a covered call: the counter that must differ */
	bool covered;
};

static void check(const char *arch, enum mmp_opt opt, const char *name, long v_on, long v_off,
		  bool pmd, const struct claim *cl, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct mmp_counters on, off;

		run(arch, opt, v_on, v_off, pmd, cl[i].before, cl[i].step, &on, &off);
		if (cl[i].covered)
			tap_ok(on.v[cl[i].c] != off.v[cl[i].c],
			       "%s: %s changes %s (%s: %llu on, %llu off)", arch, name, cl[i].what,
			       mmp_counter_name(cl[i].c), (unsigned long long)on.v[cl[i].c],
			       (unsigned long long)off.v[cl[i].c]);
		else
			tap_ok(same(&on, &off), "%s: %s leaves %s alone: the same counts", arch,
			       name, cl[i].what);
	}
}

/*
 * mremap batches only where the format has contiguous blocks to batch over
 * (pte_batch_hint() above 1: arm64 contpte, riscv64 Svnapot), as the kernel's
 * mremap_folio_pte_batch; elsewhere it moves entry by entry either way.
 */
static void check_pte_batch(const char *arch, bool blocks)
{
	const struct claim cl[] = {
		{ "munmap (zap)", populate, do_munmap, MMP_C_PTE_BATCH, true },
		{ "MADV_DONTNEED (zap)", populate, do_dontneed, MMP_C_PTE_BATCH, true },
		{ "fork", populate, do_fork, MMP_C_PTE_BATCH, true },
		{ "mprotect", populate, do_mprotect, MMP_C_PTE_BATCH, true },
		{ "mremap (move_ptes)", map_after, do_mremap, MMP_C_MOVE_PTES_PTEP_GET, blocks },
		{ "reclaim of lazyfree folios", free_all, do_reclaim, MMP_C_PTE_BATCH, true },
		{ "MADV_FREE", populate, do_free, 0, false },
		{ "faults", NULL, do_fault, 0, false },
	};

	check(arch, MMP_OPT_PTE_BATCH, "PTE_BATCH", 1, 0, false, cl, sizeof(cl) / sizeof(cl[0]));
}

static void check_pt_reclaim(const char *arch)
{
	static const struct claim cl[] = {
		{ "MADV_DONTNEED", populate, do_dontneed, MMP_C_PT_RECLAIM_FAST, true },
		{ "munmap", populate, do_munmap, 0, false },
	};

	check(arch, MMP_OPT_PT_RECLAIM, "PT_RECLAIM", 1, 0, false, cl, sizeof(cl) / sizeof(cl[0]));
}

static void check_rcu_table_free(const char *arch)
{
	static const struct claim cl[] = {
		{ "munmap's table frees", populate, do_munmap, MMP_C_PGTABLE_FREE_RCU, true },
		{ "munmap's table frees", populate, do_munmap, MMP_C_PGTABLE_FREE_SYNC, true },
		{ "faults", NULL, do_fault, 0, false },
	};

	static const struct claim semi[] = {
		/* Semi RCU differs from RCU only for a table that finds no batch page. */
		{ "munmap while batch pages are had", populate, do_munmap, 0, false },
	};
	static const struct claim native[] = {
		{ "munmap's table frees", populate, do_munmap, MMP_C_PGTABLE_FREE_NATIVE, true },
		{ "faults", NULL, do_fault, 0, false },
	};
	static const struct claim fail[] = {
		{ "munmap's table frees", populate, do_munmap, MMP_C_TABLE_BATCH_FAIL, true },
		{ "faults", NULL, do_fault, 0, false },
	};

	check(arch, MMP_OPT_RCU_TABLE_FREE, "RCU_TABLE_FREE", MMP_TABLE_FREE_RCU,
	      MMP_TABLE_FREE_SYNC_EACH, false, cl, sizeof(cl) / sizeof(cl[0]));
	check(arch, MMP_OPT_RCU_TABLE_FREE, "RCU_TABLE_FREE semi RCU against RCU",
	      MMP_TABLE_FREE_SEMI_RCU, MMP_TABLE_FREE_RCU, false, semi, 1);
	if (strncmp(arch, "arm64", 5))	/* refused where TLBIs are broadcast */
		check(arch, MMP_OPT_RCU_TABLE_FREE, "RCU_TABLE_FREE native against RCU",
		      MMP_TABLE_FREE_NATIVE, MMP_TABLE_FREE_RCU, false, native,
		      sizeof(native) / sizeof(native[0]));
	check(arch, MMP_OPT_TABLE_BATCH_FAIL, "TABLE_BATCH_FAIL", 1, 0, false, fail,
	      sizeof(fail) / sizeof(fail[0]));
}

static void check_lazyfree_pmd(const char *arch)
{
	static const struct claim pmd[] = {
		{ "reclaim of a redirtied lazyfree PMD THP", free_redirty, do_reclaim,
		  MMP_C_PMD_SPLIT, true },
	};
	static const struct claim pte[] = {
		{ "reclaim of redirtied lazyfree mTHPs", free_redirty, do_reclaim, 0, false },
	};

	check(arch, MMP_OPT_LAZYFREE_PMD, "LAZYFREE_PMD", 1, 0, true, pmd, 1);
	check(arch, MMP_OPT_LAZYFREE_PMD, "LAZYFREE_PMD", 1, 0, false, pte, 1);
}

static void check_per_vma_lock(const char *arch)
{
	static const struct claim cl[] = {
		{ "faults", NULL, do_fault, MMP_C_VMA_LOCK_SUCCESS, true },
		{ "MADV_DONTNEED of one VMA (6.17)", populate, do_dontneed,
		  MMP_C_MADV_VMA_LOCK_SUCCESS, true },
		{ "MADV_FREE of one VMA (6.17)", populate, do_free, MMP_C_MADV_VMA_LOCK_SUCCESS, true },
		{ "PROCMAP_QUERY (6.18)", NULL, do_procmap_query, MMP_C_PROCMAP_VMA_LOCK_SUCCESS, true },
		{ "munmap", populate, do_munmap, 0, false },
	};

	check(arch, MMP_OPT_PER_VMA_LOCK, "PER_VMA_LOCK", 1, 0, false, cl,
	      sizeof(cl) / sizeof(cl[0]));
}

/* Only arm64 converts contpte blocks: there the switch saves a flush per unfold. */
static void check_bbml2(const char *arch, bool contpte)
{
	struct claim cl[] = {
		{ "mprotect of one page of a block", populate, do_mprotect_page,
		  MMP_C_TLB_FLUSH_PAGE, contpte },
	};

	check(arch, MMP_OPT_BBML2_NOABORT, "BBML2_NOABORT", 1, 0, false, cl, 1);
}

/* riscv64 chooses Svadu or Svade; the other back ends' A/D model is fixed and ignores it. */
static void check_hw_ad(const char *arch, bool switchable)
{
	struct claim cl[] = {
		/* MADV_FREE leaves the entries old and clean: writing them needs A/D set. */
		{ "writes to old, clean entries", free_all, do_fault, MMP_C_FAULT_AD, switchable },
	};

	check(arch, MMP_OPT_HW_AD, "HW_AD", 1, 0, false, cl, 1);
}

/* The sanitizer only checks TLB hits: with none stale, every count is the same. */
static void check_tlb_sanitizer(const char *arch)
{
	static const struct claim cl[] = {
		{ "faults and accesses", NULL, do_fault, 0, false },
		{ "mprotect", populate, do_mprotect, 0, false },
	};

	check(arch, MMP_OPT_TLB_SANITIZER, "TLB_SANITIZER", 1, 0, false, cl, 2);
}

/* The order of sub-page clears changes, not how many (test_huge_copy checks the order). */
static void check_huge_order(const char *arch)
{
	static const struct claim cl[] = {
		{ "how much a THP fault clears", NULL, do_fault, 0, false },
	};

	check(arch, MMP_OPT_HUGE_ORDER, "HUGE_ORDER", MMP_HUGE_ORDER_TARGET_LAST,
	      MMP_HUGE_ORDER_ASCENDING, true, cl, 1);
}

/*
 * Of what MMP_OPT_KERNEL_VERSION changes (the release table; test_release
 * checks each rule), mprotect: before 6.17 it rewrites one entry at a time,
 * reading each, on every back end (and the arm64 contpte ptep_get reads all
 * 16 entries of a block).
 */
static void check_kernel_version(const char *arch)
{
	struct claim cl[] = {
		{ "mprotect's folio batches (PTE batching from 6.17)", populate, do_mprotect,
		  MMP_C_PTE_BATCH, true },
	};

	check(arch, MMP_OPT_KERNEL_VERSION, "KERNEL_VERSION", MMP_KERNEL_VERSION(6, 18, 0),
	      MMP_KERNEL_VERSION(6, 16, 0), false, cl, 1);
}

int main(int argc, char **argv)
{
	static const char *const archs[] = { "x86_64", "arm64", "riscv64" };

	must(mmp_phys_create(128 * MiB, &phys) == 0, "phys");
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		if (argc > 1 && strcmp(argv[1], archs[i]))
			continue;
		bool blocks = strcmp(archs[i], "x86_64");

		check_pte_batch(archs[i], blocks);
		check_pt_reclaim(archs[i]);
		check_rcu_table_free(archs[i]);
		check_lazyfree_pmd(archs[i]);
		check_per_vma_lock(archs[i]);
		check_bbml2(archs[i], !strcmp(archs[i], "arm64"));
		check_hw_ad(archs[i], !strcmp(archs[i], "riscv64"));
		check_tlb_sanitizer(archs[i]);
		check_huge_order(archs[i]);
		check_kernel_version(archs[i]);
	}
	must(mmp_phys_destroy(phys) == 0, "phys destroy");
	return tap_done();
}
