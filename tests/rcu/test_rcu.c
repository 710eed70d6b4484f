/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RCU page-table freeing, PT_RECLAIM and GUP, on every back end:
 *  (a) munmap sends the tables it unlinks through call_rcu, a batch at a time,
 *      or through one synchronize_rcu each with MMP_OPT_RCU_TABLE_FREE 0 (the
 *      other modes and the single-table paths: test_table_free.c); every
 *      table unlinked is freed once mmp_phys_stat or destroy has waited (verify
 *      passes meanwhile, counting them in flight);
 *  (b) MADV_DONTNEED of whole PMD-aligned 2 MiB ranges frees their PTE tables,
 *      VmPTE falls to the upper levels; partial ranges and MMP_OPT_PT_RECLAIM 0
 *      free nothing;
 *  (c) mmp_gup_fast, mmp_gup, mmp_unpin: a pin keeps a frame and its data past
 *      munmap until the unpin; GUP-fast stops where it must; bad input is refused;
 *  (d) fork() after several threads used the library: the child creates, uses
 *      and destroys its own phys and space (call_rcu and synchronize_rcu run in
 *      it), and the parent goes on;
 *  (e) everything is destroyed: run under ASan with ASAN_OPTIONS=detect_leaks=1.
 *
 * The fork rule (docs/design.md, API tour): fork() only while no other thread
 * is inside a libmmprim call, and no other thread is still registered as an
 * RCU reader: every other thread that used the library has detached its CPUs
 * and exited (a thread that called in without a CPU stays registered until it
 * exits). Only the forking thread may keep CPUs attached. liburcu's memb
 * flavor keeps the registrations of the parent's threads in the child,
 * pointing into thread stacks that glibc hands to the child's next thread,
 * whose registration then corrupts the registry: the child's grace periods
 * never end (reproduced with liburcu alone). The atfork handlers of lib/rcu.c
 * cover call_rcu only.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mm.h"
#include "util.h"

#define PG		MMP_PAGE_SIZE
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
/*
 * 1 GiB aligned, far below every back end's mmap base (a 3-level space has
 * 256 GiB), in the first entry of every level above the PUD.
 */
#define BASE		0x100000000ULL
/* Tables above a PTE table but the PGD: a PMD, plus a PUD and a P4D where the space has them. */
#define UPPER_TABLES	(s->arch->levels - 2)
/* Tables above the PMD tables but the PGD: a PUD and a P4D where the space has them. */
#define ABOVE_PMD	(s->arch->levels - 3)
#define PHYS_BYTES	(64 * MiB)

static struct mmp_phys *phys;

static uint64_t phys_free(void)
{
	struct mmp_phys_stat st;

	tap_require(mmp_phys_stat(phys, &st) == 0, "phys stat");
	return st.free_pages;
}

/* Let the tables in their grace period land: verify counts them in flight, stat waits. */
static void settle(void)
{
	phys_free();
}

static uint64_t vmpte(struct mmp_space *s)
{
	struct mmp_space_stat st;

	mmp_space_stat(s, &st);
	return st.pgtable_bytes;
}

static uint64_t delta(const struct mmp_counters *a, const struct mmp_counters *b,
		      enum mmp_counter c)
{
	return b->v[c] - a->v[c];
}

static uint64_t reclaimed(const struct mmp_counters *a, const struct mmp_counters *b)
{
	return delta(a, b, MMP_C_PT_RECLAIM_FAST) + delta(a, b, MMP_C_PT_RECLAIM_SLOW);
}

static struct mmp_cpu *attach(struct mmp_space *s)
{
	struct mmp_cpu *cpu = NULL;

	tap_require(mmp_cpu_attach(s, &cpu) == 0, "attach a CPU");
	return cpu;
}

static void map_fixed(struct mmp_space *s, uint64_t addr, uint64_t len, int prot, int flags)
{
	uint64_t got = 0;

	tap_require(mmp_mmap(s, addr, len, prot, MMP_MAP_FIXED | flags, &got) == 0 && got == addr,
		    "mmap %#llx + %llu KiB", (unsigned long long)addr,
		    (unsigned long long)(len / KiB));
}

/* Write one tagged word every @step bytes of [addr, addr + len), faulting the pages in. */
static int touch(struct mmp_cpu *cpu, uint64_t addr, uint64_t len, uint64_t step)
{
	for (uint64_t va = addr; va < addr + len; va += step) {
		uint64_t tag = va ^ 0x5a5a000000000000ULL;
		int err = mmp_write(cpu, va, &tag, sizeof(tag));

		if (err)
			return err;
	}
	return 0;
}

/* ---- (a) munmap: call_rcu batches or synchronize_rcu per table ------------------------ */

/*
 * Tables freed by call_rcu land on the per-CPU list of the thread that queued
 * them (the kernel runs the callback on that CPU): the call_rcu worker brings
 * no list of its own online, which would split every list's bounds.
 */
static void check_rcu_free_list(void)
{
	struct mmp_phys *p = NULL;
	struct mmp_space *s;
	struct mmp_phys_stat st;
	struct mmp_counters c;
	struct mmp_cpu *cpu;

	tap_require(mmp_phys_create(PHYS_BYTES, &p) == 0, "create a phys of its own");
	s = new_space(p, "x86_64");
	cpu = attach(s);
	map_fixed(s, BASE, 8 * MiB, RW, 0);
	tap_require(touch(cpu, BASE, 8 * MiB, PG) == 0, "touch 8 MiB");
	tap_require(mmp_munmap(s, BASE, 8 * MiB) == 0, "munmap 8 MiB");
	tap_require(mmp_phys_stat(p, &st) == 0, "phys stat: every callback has run");
	mmp_space_counters(s, &c);
	tap_ok(c.v[MMP_C_PGTABLE_FREE_RCU] > 0, "(a) tables went through call_rcu (%llu)",
	       (unsigned long long)c.v[MMP_C_PGTABLE_FREE_RCU]);
	tap_eq(p->pcp_nr_online, 1, "(a) and onto this thread's list: one list online");
	mmp_cpu_detach(cpu);
	tap_require(mmp_space_destroy(s) == 0, "destroy the space");
	tap_require(mmp_phys_destroy(p) == 0, "destroy its phys");
}

static void check_munmap_free(const char *arch)
{
	for (int rcu = 1; rcu >= 0; rcu--) {
		struct mmp_space *s = new_space(phys, arch);
		const char *how = rcu ? "call_rcu" : "synchronize_rcu";
		struct mmp_counters c0, c1;
		uint64_t free0 = phys_free(), tables, batches;
		struct mmp_cpu *cpu;

		tap_require(mmp_space_set_opt(s, MMP_OPT_RCU_TABLE_FREE, rcu) == 0, "set rcu");

		/* A populated 8 MiB range: one PUD, one PMD and four PTE tables. */
		map_fixed(s, BASE, 8 * MiB, RW, MMP_MAP_POPULATE);
		tables = vmpte(s) / PG;
		tap_eq(tables, UPPER_TABLES + 4,
		       "%s %s: 8 MiB populated hold the upper tables and 4 PTE tables", arch, how);
		mmp_space_counters(s, &c0);
		tap_eq(mmp_munmap(s, BASE, 8 * MiB), 0, "%s %s: munmap", arch, how);
		tap_eq(vmpte(s), 0, "%s %s: munmap unlinked every table (VmPTE 0 at once)", arch,
		       how);
		tap_eq(mmp_space_verify(s), 0, "%s %s: verify after munmap", arch, how);
		settle();
		mmp_space_counters(s, &c1);
		if (rcu) {
			tap_eq(delta(&c0, &c1, MMP_C_RCU_CALL), 1, "%s: one call_rcu for the batch",
			       arch);
			tap_eq(delta(&c0, &c1, MMP_C_PGTABLE_FREE_RCU), tables,
			       "%s: every unlinked table freed by RCU after a grace period", arch);
			tap_eq(delta(&c0, &c1, MMP_C_RCU_SYNC) +
				       delta(&c0, &c1, MMP_C_PGTABLE_FREE_SYNC),
			       0, "%s: no synchronize_rcu on the RCU path", arch);
		} else {
			tap_eq(delta(&c0, &c1, MMP_C_RCU_SYNC), tables,
			       "%s: one synchronize_rcu per table in the sync-each worst case", arch);
			tap_eq(delta(&c0, &c1, MMP_C_PGTABLE_FREE_SYNC), tables,
			       "%s: every table freed synchronously", arch);
			tap_eq(delta(&c0, &c1, MMP_C_RCU_CALL) +
				       delta(&c0, &c1, MMP_C_PGTABLE_FREE_RCU),
			       0, "%s: no call_rcu in the sync-each worst case", arch);
		}
		tap_eq(phys_free(), free0, "%s %s: every frame is back after munmap", arch, how);

		/*
		 * 1.25 GiB with one page touched per 2 MiB: 640 PTE tables, two PMD
		 * tables, the tables above them, more than one batch holds.
		 */
		cpu = attach(s);
		map_fixed(s, BASE, 1280 * MiB, RW, 0);
		tap_eq(touch(cpu, BASE, 1280 * MiB, PMD_SIZE), 0, "%s %s: touch one page per table",
		       arch, how);
		tables = vmpte(s) / PG;
		tap_eq(tables, 640 + 2 + ABOVE_PMD, "%s %s: 640 PTE, 2 PMD and the upper tables",
		       arch, how);
		batches = (tables + MAX_TABLE_BATCH - 1) / MAX_TABLE_BATCH;
		mmp_space_counters(s, &c0);
		tap_eq(mmp_munmap(s, BASE, 1280 * MiB), 0, "%s %s: munmap 1.25 GiB", arch, how);
		tap_eq(mmp_space_verify(s), 0, "%s %s: verify", arch, how);
		settle();
		mmp_space_counters(s, &c1);
		if (rcu) {
			tap_eq(delta(&c0, &c1, MMP_C_RCU_CALL), batches,
			       "%s: a call_rcu per full table batch (%llu)", arch,
			       (unsigned long long)batches);
			tap_eq(delta(&c0, &c1, MMP_C_PGTABLE_FREE_RCU), tables,
			       "%s: all freed by RCU", arch);
		} else {
			tap_eq(delta(&c0, &c1, MMP_C_RCU_SYNC), tables, "%s: one synchronize_rcu each",
			       arch);
			tap_eq(delta(&c0, &c1, MMP_C_PGTABLE_FREE_SYNC), tables,
			       "%s: all freed synchronously", arch);
		}
		tap_eq(phys_free(), free0, "%s %s: every frame is back", arch, how);
		tap_eq(mmp_cpu_detach(cpu), 0, "detach");

		/* Tables left for exit_mmap: destroy waits for their grace period. */
		map_fixed(s, BASE, 4 * MiB, RW, MMP_MAP_POPULATE);
		map_fixed(s, BASE + 3 * (1ULL << 30), 2 * MiB, RW, MMP_MAP_POPULATE);
		tap_eq(mmp_space_destroy(s), 0, "%s %s: destroy a populated space", arch, how);
		/* free0 was counted with this space's PGD allocated. */
		tap_eq(phys_free(), free0 + 1, "%s %s: destroy gave back every frame and table",
		       arch, how);
	}
}

/* ---- (b) PT_RECLAIM ---------------------------------------------------------------------- */

/*
 * Whether PT_RECLAIM applies follows the release and the back end (from 6.14
 * on x86_64, from 7.0 everywhere), unless the switch is set; get_opt reads
 * what it comes to. At 6.18 on a back end without it, MADV_DONTNEED of a
 * whole table leaves the table.
 */
static void check_pt_reclaim_release(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu = attach(s);
	/* x86_64 selects ARCH_SUPPORTS_PT_RECLAIM from 6.14; the rest have it from 7.0. */
	long since = !strncmp(arch, "x86_64", 6) ? MMP_KERNEL_VERSION(6, 14, 0) :
						     MMP_KERNEL_VERSION(7, 0, 0), v = -2;
	bool at_618 = since <= MMP_KERNEL_VERSION(6, 18, 0);
	struct mmp_counters c0, c1;

	must(!mmp_space_get_opt(s, MMP_OPT_PT_RECLAIM, &v), "%s: get_opt", arch);
	tap_eq(v, at_618, "%s: PT_RECLAIM at 6.18 by default (this back end has it from %ld.%ld)",
	       arch, since >> 16, (since >> 8) & 0xff);
	map_fixed(s, BASE, 2 * MiB, RW, 0);
	tap_eq(touch(cpu, BASE, 2 * MiB, PG), 0, "%s: touch a whole table", arch);
	mmp_space_counters(s, &c0);
	tap_eq(mmp_madvise(s, BASE, 2 * MiB, MMP_MADV_DONTNEED), 0, "%s: DONTNEED it", arch);
	mmp_space_counters(s, &c1);
	tap_eq(reclaimed(&c0, &c1), at_618, "%s: the table %s", arch,
	       at_618 ? "is reclaimed" : "stays (no PT_RECLAIM here in 6.18)");
	mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(7, 0, 0));
	tap_ok(!mmp_space_get_opt(s, MMP_OPT_PT_RECLAIM, &v) && v == 1, "%s: on from 7.0", arch);
	mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(6, 13, 0));
	tap_ok(!mmp_space_get_opt(s, MMP_OPT_PT_RECLAIM, &v) && v == 0, "%s: off before 6.14", arch);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_PT_RECLAIM, 1), 0, "%s: the switch overrides it", arch);
	tap_ok(!mmp_space_get_opt(s, MMP_OPT_PT_RECLAIM, &v) && v == 1, "%s: on at 6.13 when set",
	       arch);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_PT_RECLAIM, -1), 0, "%s: -1 hands it back", arch);
	tap_ok(!mmp_space_get_opt(s, MMP_OPT_PT_RECLAIM, &v) && v == 0, "%s: off again at 6.13",
	       arch);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_PT_RECLAIM, 2), -EINVAL, "%s: 2 is no value", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	settle();
}

static void check_pt_reclaim(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu = attach(s);
	const uint64_t len = 8 * MiB, full = (UPPER_TABLES + 4) * PG;
	struct mmp_counters c0, c1;
	uint64_t free0 = phys_free();

	/* The mechanism, whichever release and back end: on. */
	must(!mmp_space_set_opt(s, MMP_OPT_PT_RECLAIM, 1), "%s: PT_RECLAIM on", arch);

	map_fixed(s, BASE, len, RW, 0);
	tap_eq(touch(cpu, BASE, len, PG), 0, "%s: touch 8 MiB", arch);
	tap_eq(vmpte(s), full, "%s: VmPTE is the upper tables and 4 PTE tables", arch);

	/* Whole tables: each PTE table goes, through the gather and RCU. */
	mmp_space_counters(s, &c0);
	tap_eq(mmp_madvise(s, BASE, 4 * MiB, MMP_MADV_DONTNEED), 0, "%s: DONTNEED 2 whole tables",
	       arch);
	mmp_space_counters(s, &c1);
	tap_eq(reclaimed(&c0, &c1), 2, "%s: PT_RECLAIM freed 2 PTE tables", arch);
	tap_eq(vmpte(s), full - 2 * PG, "%s: VmPTE fell by 2 tables", arch);
	tap_eq(rss(s), 1024, "%s: the other 4 MiB stay mapped", arch);
	tap_eq(mmp_madvise(s, BASE + 4 * MiB, 4 * MiB, MMP_MADV_DONTNEED), 0,
	       "%s: DONTNEED the rest", arch);
	tap_eq(vmpte(s), UPPER_TABLES * PG, "%s: VmPTE is the upper levels only",
	       arch);
	tap_eq(rss(s), 0, "%s: nothing mapped", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after PT_RECLAIM", arch);
	settle();
	mmp_space_counters(s, &c1);
	tap_eq(reclaimed(&c0, &c1), 4, "%s: 4 tables reclaimed in all", arch);
	tap_eq(delta(&c0, &c1, MMP_C_PGTABLE_FREE_RCU), 4, "%s: and freed after a grace period",
	       arch);
	tap_ok(delta(&c0, &c1, MMP_C_RCU_CALL) >= 1, "%s: through call_rcu", arch);

	/* Partial ranges leave the tables, even when every entry ends up empty. */
	tap_eq(touch(cpu, BASE, len, PG), 0, "%s: touch again", arch);
	tap_eq(vmpte(s), full, "%s: the tables are back", arch);
	mmp_space_counters(s, &c0);
	tap_eq(mmp_madvise(s, BASE, 2 * MiB - PG, MMP_MADV_DONTNEED), 0,
	       "%s: DONTNEED 2 MiB - 4 KiB", arch);
	tap_eq(mmp_madvise(s, BASE + 2 * MiB - PG, PG, MMP_MADV_DONTNEED), 0,
	       "%s: DONTNEED its last page alone", arch);
	tap_eq(mmp_madvise(s, BASE + 3 * MiB, 2 * MiB, MMP_MADV_DONTNEED), 0,
	       "%s: DONTNEED 2 MiB across two tables", arch);
	mmp_space_counters(s, &c1);
	tap_eq(reclaimed(&c0, &c1), 0, "%s: partial DONTNEED reclaims no table", arch);
	tap_eq(vmpte(s), full, "%s: VmPTE unchanged", arch);
	/* The first table is empty now; a whole-table DONTNEED takes it. */
	tap_eq(mmp_madvise(s, BASE, 2 * MiB, MMP_MADV_DONTNEED), 0, "%s: DONTNEED the empty table",
	       arch);
	mmp_space_counters(s, &c1);
	tap_eq(reclaimed(&c0, &c1), 1, "%s: an already empty table is reclaimed", arch);
	tap_eq(vmpte(s), full - PG, "%s: VmPTE fell by one table", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);

	/* MMP_OPT_PT_RECLAIM 0: zap only. */
	tap_eq(touch(cpu, BASE, len, PG), 0, "%s: touch again", arch);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_PT_RECLAIM, 0), 0, "%s: PT_RECLAIM off", arch);
	mmp_space_counters(s, &c0);
	tap_eq(mmp_madvise(s, BASE, len, MMP_MADV_DONTNEED), 0, "%s: DONTNEED 8 MiB", arch);
	mmp_space_counters(s, &c1);
	tap_eq(reclaimed(&c0, &c1), 0, "%s: no table reclaimed with PT_RECLAIM off", arch);
	tap_eq(vmpte(s), full, "%s: VmPTE unchanged", arch);
	tap_eq(rss(s), 0, "%s: but the pages are gone", arch);

	/* On again, synchronous free: the empty tables go, one synchronize_rcu each. */
	tap_eq(mmp_space_set_opt(s, MMP_OPT_PT_RECLAIM, 1), 0, "%s: PT_RECLAIM on", arch);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_RCU_TABLE_FREE, 0), 0, "%s: RCU table free off", arch);
	mmp_space_counters(s, &c0);
	tap_eq(mmp_madvise(s, BASE, len, MMP_MADV_DONTNEED), 0, "%s: DONTNEED 8 MiB", arch);
	mmp_space_counters(s, &c1);
	tap_eq(reclaimed(&c0, &c1), 4, "%s: 4 empty tables reclaimed", arch);
	tap_eq(delta(&c0, &c1, MMP_C_RCU_SYNC), 4, "%s: one synchronize_rcu each", arch);
	tap_eq(delta(&c0, &c1, MMP_C_PGTABLE_FREE_SYNC), 4, "%s: freed synchronously", arch);
	tap_eq(vmpte(s), UPPER_TABLES * PG, "%s: VmPTE is the upper levels only", arch);
	tap_eq(mmp_space_set_opt(s, MMP_OPT_RCU_TABLE_FREE, 1), 0, "%s: RCU table free on", arch);

	/* A huge PMD: its deposited table goes with it, VmPTE again the upper levels only. */
	tap_eq(mmp_madvise(s, BASE, 2 * MiB, MMP_MADV_HUGEPAGE), 0, "%s: MADV_HUGEPAGE", arch);
	mmp_space_counters(s, &c0);
	tap_eq(touch(cpu, BASE, 2 * MiB, PG), 0, "%s: touch the THP range", arch);
	mmp_space_counters(s, &c1);
	tap_eq(delta(&c0, &c1, MMP_C_FAULT_HUGE_ANON), 1, "%s: one PMD THP", arch);
	tap_eq(vmpte(s), (UPPER_TABLES + 1) * PG, "%s: VmPTE holds the deposit", arch);
	tap_eq(mmp_madvise(s, BASE, 2 * MiB, MMP_MADV_DONTNEED), 0, "%s: DONTNEED the THP", arch);
	tap_eq(vmpte(s), UPPER_TABLES * PG, "%s: VmPTE back to the upper levels", arch);

	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	tap_eq(mmp_munmap(s, BASE, len), 0, "%s: munmap", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after munmap", arch);
	tap_eq(phys_free(), free0, "%s: every frame back", arch);
	tap_eq(mmp_cpu_detach(cpu), 0, "detach");
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);
}

/* ---- (c) GUP ----------------------------------------------------------------------------- */

static uint64_t pinned_now(void)
{
	return (uint64_t)__atomic_load_n(&phys->nr_pinned, __ATOMIC_RELAXED);
}

static void check_gup_pins(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu = attach(s);
	uint64_t pfns[16], more[16], free0 = phys_free(), free1, free2, tables;
	struct mmp_counters c0, c1;
	bool ok;
	int n;

	/* Pins across a table that PT_RECLAIM frees: on, whatever the back end's release. */
	must(!mmp_space_set_opt(s, MMP_OPT_PT_RECLAIM, 1), "%s: PT_RECLAIM on", arch);

	/* Write, pin, munmap: the frames and their data outlive the mapping. */
	map_fixed(s, BASE, 4 * PG, RW, 0);
	for (int i = 0; i < 4; i++) {
		char buf[64];

		memset(buf, 'a' + i, sizeof(buf));
		tap_require(mmp_write(cpu, BASE + i * PG, buf, sizeof(buf)) == 0, "write page %d",
			    i);
	}
	n = mmp_gup_fast(s, BASE, 4, true, pfns);
	tap_eq(n, 4, "%s: gup_fast pins 4 present pages", arch);
	tap_eq(pinned_now(), 4, "%s: 4 pins counted", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify passes with pins held", arch);
	ok = true;
	for (int i = 0; i < 4; i++)
		ok &= folio_ref_count(pfn_to_page(phys, pfns[i])) == 2;
	tap_ok(ok, "%s: each pinned folio holds the mapping's and the pin's reference", arch);
	tables = vmpte(s) / PG;
	free1 = phys_free();
	tap_eq(mmp_munmap(s, BASE, 4 * PG), 0, "%s: munmap the pinned pages", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after munmap, pins held", arch);
	free2 = phys_free();
	tap_eq(free2 - free1, tables, "%s: munmap freed the tables but no pinned page", arch);
	ok = true;
	for (int i = 0; i < 4; i++) {
		const uint8_t *p = pfn_to_virt(phys, pfns[i]);

		for (int k = 0; k < 64; k++)
			ok &= p[k] == 'a' + i;
		ok &= folio_ref_count(pfn_to_page(phys, pfns[i])) == 1;
	}
	tap_ok(ok, "%s: pinned frames keep their data and the pin's reference", arch);
	tap_eq(mmp_unpin(s, pfns, 4), 0, "%s: unpin", arch);
	tap_eq(phys_free() - free2, 4, "%s: the unpin freed the 4 pages", arch);
	tap_eq(pinned_now(), 0, "%s: no pins left", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);

	/* Where GUP-fast stops: not present, read-only for a write, the zero page. */
	map_fixed(s, BASE, 8 * PG, RW, 0);
	tap_eq(touch(cpu, BASE, 3 * PG, PG), 0, "%s: touch 3 of 8 pages", arch);
	mmp_space_counters(s, &c0);
	n = mmp_gup_fast(s, BASE, 8, true, pfns);
	mmp_space_counters(s, &c1);
	tap_eq(n, 3, "%s: gup_fast stops at the first page not present", arch);
	tap_eq(delta(&c0, &c1, MMP_C_GUP_FAST), 3, "%s: gup_fast counter", arch);
	tap_eq(delta(&c0, &c1, MMP_C_GUP_FAST_BACKOFF), 1, "%s: one back-off", arch);
	tap_eq(mmp_unpin(s, pfns, n > 0 ? n : 0), 0, "%s: unpin", arch);
	tap_eq(mmp_mprotect(s, BASE, 8 * PG, MMP_PROT_READ), 0, "%s: mprotect read-only", arch);
	tap_eq(mmp_gup_fast(s, BASE, 3, true, pfns), 0, "%s: no write pin of a read-only page",
	       arch);
	n = mmp_gup_fast(s, BASE, 3, false, pfns);
	tap_eq(n, 3, "%s: read pins of read-only pages", arch);
	tap_eq(mmp_unpin(s, pfns, n > 0 ? n : 0), 0, "%s: unpin", arch);
	tap_eq(mmp_gup(s, BASE, 1, true, pfns), -EFAULT, "%s: gup for write of a read-only VMA",
	       arch);
	tap_eq(pinned_now(), 0, "%s: nothing pinned", arch);
	tap_eq(mmp_mprotect(s, BASE, 8 * PG, RW), 0, "%s: mprotect read-write", arch);
	{
		uint64_t v;

		tap_eq(mmp_read(cpu, BASE + 5 * PG, &v, sizeof(v)), 0, "%s: read-fault page 5",
		       arch);
	}
	tap_eq(mmp_gup_fast(s, BASE + 5 * PG, 1, false, pfns), 0,
	       "%s: gup_fast does not pin the zero page", arch);
	mmp_space_counters(s, &c0);
	n = mmp_gup(s, BASE + 5 * PG, 1, false, pfns);
	mmp_space_counters(s, &c1);
	tap_eq(n, 1, "%s: gup of a zero-page mapping", arch);
	tap_ok(n == 1 && pfns[0] == phys->zero_pfn,
	       "%s: hands out the zero page, as pin_user_pages does", arch);
	tap_eq(pinned_now(), 0, "%s: and holds no pin on it", arch);
	tap_eq(delta(&c0, &c1, MMP_C_GUP_SLOW), 1, "%s: gup_slow counter", arch);
	tap_eq(mmp_unpin(s, pfns, n > 0 ? n : 0), 0, "%s: unpin", arch);

	/* mmp_gup faults in what is missing, and pins all or nothing. */
	mmp_space_counters(s, &c0);
	n = mmp_gup(s, BASE, 8, true, pfns);
	mmp_space_counters(s, &c1);
	tap_eq(n, 8, "%s: gup pins 8 pages, faulting in the missing ones", arch);
	tap_eq(delta(&c0, &c1, MMP_C_FAULT_ANON), 4, "%s: 4 faults, pages 3, 4, 6 and 7", arch);
	tap_eq(mmp_gup_fast(s, BASE, 8, true, more), 8, "%s: gup_fast pins them all again", arch);
	tap_ok(!memcmp(pfns, more, sizeof(uint64_t) * 8), "%s: the same frames", arch);
	tap_eq(pinned_now(), 16, "%s: 16 pins", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify with 16 pins", arch);
	tap_eq(mmp_unpin(s, more, 8), 0, "%s: unpin", arch);
	tap_eq(mmp_unpin(s, pfns, 8), 0, "%s: unpin", arch);
	tap_eq(mmp_munmap(s, BASE + 4 * PG, 4 * PG), 0, "%s: punch a hole", arch);
	tap_eq(mmp_gup(s, BASE, 8, true, pfns), -EFAULT, "%s: gup across a hole fails", arch);
	tap_eq(pinned_now(), 0, "%s: and leaves nothing pinned", arch);
	map_fixed(s, BASE + 4 * PG, 4 * PG, MMP_PROT_NONE, 0);
	tap_eq(mmp_gup(s, BASE, 8, false, pfns), -EFAULT, "%s: gup into PROT_NONE fails", arch);
	tap_eq(pinned_now(), 0, "%s: and leaves nothing pinned", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after failed gups", arch);

	/* A pin across PT_RECLAIM: the table goes, the page stays until the unpin. */
	tap_eq(mmp_munmap(s, BASE, 8 * PG), 0, "%s: munmap", arch);
	map_fixed(s, BASE, 2 * MiB, RW, 0);
	tap_eq(touch(cpu, BASE, 2 * MiB, PG), 0, "%s: touch a table", arch);
	tap_eq(mmp_gup_fast(s, BASE + 7 * PG, 2, true, pfns), 2, "%s: pin 2 pages", arch);
	mmp_space_counters(s, &c0);
	tap_eq(mmp_madvise(s, BASE, 2 * MiB, MMP_MADV_DONTNEED), 0, "%s: DONTNEED the table", arch);
	mmp_space_counters(s, &c1);
	tap_eq(reclaimed(&c0, &c1), 1, "%s: the table was reclaimed under the pins", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	free1 = phys_free();
	tap_eq(mmp_unpin(s, pfns, 2), 0, "%s: unpin", arch);
	tap_eq(phys_free() - free1, 2, "%s: the unpin freed the 2 pages", arch);

	/* Pins into a PMD THP: tail pages of one folio, freed whole at the last unpin. */
	tap_eq(mmp_madvise(s, BASE, 2 * MiB, MMP_MADV_HUGEPAGE), 0, "%s: MADV_HUGEPAGE", arch);
	tap_eq(touch(cpu, BASE, PG, PG), 0, "%s: fault a THP", arch);
	n = mmp_gup_fast(s, BASE + 100 * PG, 4, true, pfns);
	tap_eq(n, 4, "%s: gup_fast pins 4 pages of a huge PMD", arch);
	tap_ok(n == 4 && pfns[3] == pfns[0] + 3 &&
	       folio_pfn(phys, pfns[0]) + 100 == pfns[0], "%s: consecutive tail pages", arch);
	tap_eq(mmp_munmap(s, BASE, 2 * MiB), 0, "%s: munmap the THP", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify, THP pinned and unmapped", arch);
	free1 = phys_free();
	tap_eq(mmp_unpin(s, pfns, 4), 0, "%s: unpin", arch);
	tap_eq(phys_free() - free1, 512, "%s: the last unpin freed the whole THP", arch);

	/* Bad arguments. */
	map_fixed(s, BASE, PG, RW, MMP_MAP_POPULATE);
	tap_eq(mmp_gup_fast(NULL, BASE, 1, true, pfns), -EINVAL, "%s: gup_fast NULL space", arch);
	tap_eq(mmp_gup_fast(s, BASE, 1, true, NULL), -EINVAL, "%s: gup_fast NULL pfns", arch);
	tap_eq(mmp_gup_fast(s, BASE + 1, 1, true, pfns), -EINVAL, "%s: gup_fast unaligned", arch);
	tap_eq(mmp_gup_fast(s, task_size(s), 1, true, pfns), -EFAULT,
	       "%s: gup_fast past TASK_SIZE", arch);
	tap_eq(mmp_gup_fast(s, task_size(s) - PG, 2, true, pfns), -EFAULT,
	       "%s: gup_fast running past TASK_SIZE", arch);
	tap_eq(mmp_gup_fast(s, ~0ULL & ~(PG - 1), 1, true, pfns), -EFAULT, "%s: gup_fast at ~0",
	       arch);
	tap_eq(mmp_gup_fast(s, BASE, 0, true, pfns), 0, "%s: gup_fast of 0 pages", arch);
	tap_eq(mmp_gup_fast(s, (task_size(s) / 2 & ~(PG - 1)), 4, true, pfns), 0,
	       "%s: gup_fast where no table exists", arch);
	tap_eq(mmp_gup(NULL, BASE, 1, true, pfns), -EINVAL, "%s: gup NULL space", arch);
	tap_eq(mmp_gup(s, BASE, 1, true, NULL), -EINVAL, "%s: gup NULL pfns", arch);
	tap_eq(mmp_gup(s, BASE + 8, 1, true, pfns), -EINVAL, "%s: gup unaligned", arch);
	tap_eq(mmp_gup(s, task_size(s), 1, true, pfns), -EFAULT, "%s: gup past TASK_SIZE", arch);
	tap_eq(mmp_gup(s, task_size(s) - 4 * PG, 5, true, pfns), -EFAULT,
	       "%s: gup running past TASK_SIZE", arch);
	tap_eq(mmp_gup(s, (task_size(s) / 2 & ~(PG - 1)), 1, true, pfns), -EFAULT,
	       "%s: gup of no VMA", arch);
	tap_eq(pinned_now(), 0, "%s: nothing pinned by bad calls", arch);

	/* mmp_unpin of bogus frames: refused as a whole, nothing dropped. */
	tap_eq(mmp_gup_fast(s, BASE, 1, true, pfns), 1, "%s: pin one page", arch);
	{
		struct mmp_phys_stat st;
		uint64_t bad[] = {
			s->pgd_pfn, ~0ULL, 1ULL << 40,
		};

		mmp_phys_stat(phys, &st);
		tap_eq(mmp_unpin(s, (uint64_t[]){ st.total_pages }, 1), -EINVAL,
		       "%s: unpin of a pfn past the phys", arch);
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			uint64_t two[2] = { pfns[0], bad[i] };

			tap_eq(mmp_unpin(s, &bad[i], 1), -EINVAL, "%s: unpin of bogus pfn %#llx",
			       arch, (unsigned long long)bad[i]);
			tap_eq(mmp_unpin(s, two, 2), -EINVAL, "%s: unpin of {pinned, %#llx}", arch,
			       (unsigned long long)bad[i]);
		}
		tap_eq(mmp_unpin(s, (uint64_t[]){ st.total_pages - 1 }, 1), -EINVAL,
		       "%s: unpin of a free frame", arch);
		/* A read pin hands the zero page out unpinned: unpinning it drops nothing. */
		tap_eq(mmp_unpin(s, (uint64_t[]){ phys->zero_pfn }, 1), 0,
		       "%s: unpin of the zero page", arch);
	}
	tap_eq(mmp_unpin(NULL, pfns, 1), -EINVAL, "%s: unpin NULL space", arch);
	tap_eq(mmp_unpin(s, NULL, 1), -EINVAL, "%s: unpin NULL pfns", arch);
	tap_eq(mmp_unpin(s, NULL, 0), 0, "%s: unpin of nothing", arch);
	tap_eq(pinned_now(), 1, "%s: the good pin survived the refused calls", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after bogus unpins", arch);
	tap_eq(mmp_unpin(s, pfns, 1), 0, "%s: unpin the good one", arch);
	tap_eq(mmp_munmap(s, BASE, PG), 0, "%s: munmap", arch);

	tap_eq(mmp_space_verify(s), 0, "%s: verify at the end", arch);
	tap_eq(phys_free(), free0, "%s: every frame back", arch);
	tap_eq(mmp_cpu_detach(cpu), 0, "detach");
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);
}

/*
 * Unpinning a frame that is mapped but was never pinned must be refused: the
 * caller's mistake would otherwise free a folio that a PTE still maps. Run in
 * a child, as a library that accepts it corrupts the phys.
 */
static void check_unpin_unpinned(const char *arch)
{
	pid_t pid = fork();
	int status = 0;

	if (pid < 0)
		tap_require(0, "fork");	/* no "ok" line: the child would print one too */
	if (pid == 0) {
		tap_in_child();
		struct mmp_phys *p;
		struct mmp_space *s;
		struct mmp_space_config cfg = { .arch = arch };
		uint64_t addr, pfn;
		int ret, code = 0;

		alarm(30);
		if (mmp_phys_create(8 * MiB, &p) || mmp_space_create(p, &cfg, &s) ||
		    mmp_mmap(s, BASE, PG, RW, MMP_MAP_FIXED | MMP_MAP_POPULATE, &addr) ||
		    mmp_gup_fast(s, BASE, 1, true, &pfn) != 1 || mmp_unpin(s, &pfn, 1))
			_exit(10);
		/* Now pfn is mapped, with no pin on it. */
		ret = mmp_unpin(s, &pfn, 1);
		if (ret != -EINVAL)
			code |= 1;
		if (mmp_space_verify(s))
			code |= 2;
		_exit(code);
	}
	tap_require(waitpid(pid, &status, 0) == pid, "waitpid");
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "%s: unpin of a mapped, unpinned frame is refused and the space stays intact", arch);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("#   child: %s %d (1: unpin returned 0, 2: verify failed after it)\n",
		       WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* ---- (d) fork -------------------------------------------------------------------------- */

/*
 * Map, write, pin, DONTNEED, unmap: read-side sections and table frees from
 * this thread. *@step names the step that failed.
 */
static int fork_work_step(struct mmp_space *s, struct mmp_cpu *cpu, uint64_t base,
			  const char **step)
{
	uint64_t addr, pfns[4];
	int err, n;

	*step = "mmap";
	err = mmp_mmap(s, base, 4 * MiB, RW, MMP_MAP_FIXED, &addr);
	if (err)
		return err;
	*step = "touch";
	err = touch(cpu, base, 4 * MiB, PG);
	if (err)
		return err;
	*step = "gup_fast (4 pins)";
	n = mmp_gup_fast(s, base + PG, 4, true, pfns);
	err = n == 4 ? 0 : n < 0 ? n : -EIO;
	if (n > 0 && mmp_unpin(s, pfns, n))
		return -EIO;
	if (err)
		return err;
	*step = "MADV_DONTNEED";
	err = mmp_madvise(s, base, 2 * MiB, MMP_MADV_DONTNEED);
	if (err)
		return err;
	*step = "munmap";
	return mmp_munmap(s, base, 4 * MiB);
}

static int fork_work(struct mmp_space *s, struct mmp_cpu *cpu, uint64_t base)
{
	const char *step;

	return fork_work_step(s, cpu, base, &step);
}

struct fork_worker {
	struct mmp_space *s;
	uint64_t base;
	int errors;
};

/* A worker's failed step is named: the count alone does not say what went wrong. */
static void fork_worker_check(struct fork_worker *w, int err, const char *step)
{
	if (!err)
		return;
	w->errors++;
	printf("#   worker on %s at 0x%" PRIx64 ": %s: %s\n", mmp_space_arch(w->s), w->base, step,
	       strerror(-err));
}

static void *fork_worker_fn(void *arg)
{
	struct fork_worker *w = arg;
	struct mmp_cpu *cpu;
	const char *step;
	uint64_t addr;
	int err;

	err = mmp_cpu_attach(w->s, &cpu);
	fork_worker_check(w, err, "attach");
	if (err)
		return NULL;
	err = fork_work_step(w->s, cpu, w->base, &step);
	fork_worker_check(w, err, step);
	fork_worker_check(w, mmp_cpu_detach(cpu), "detach");
	/* Calls with no CPU attached too (populate and zap run read-side sections). */
	fork_worker_check(w, mmp_mmap(w->s, w->base, 2 * MiB, RW,
				      MMP_MAP_FIXED | MMP_MAP_POPULATE, &addr), "mmap populate");
	fork_worker_check(w, mmp_munmap(w->s, w->base, 2 * MiB), "munmap");
	return NULL;
}

/* The child: a phys and space of its own on every back end, both table-free paths. */
static int fork_child(bool all_arches)
{
	const char *arch;

	for_each_arch(i, arch) {
		struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
		struct mmp_phys_stat st;
		struct mmp_counters c;
		struct mmp_phys *p;
		struct mmp_space *s;
		struct mmp_cpu *cpu;

		if (i && !all_arches)
			break;
		if (mmp_phys_create(16 * MiB, &p) || mmp_space_create(p, &cfg, &s) ||
		    mmp_cpu_attach(s, &cpu))
			return 10;
		if (fork_work(s, cpu, BASE))
			return 11;
		if (mmp_space_set_opt(s, MMP_OPT_RCU_TABLE_FREE, 0) || fork_work(s, cpu, BASE))
			return 12;
		if (mmp_space_verify(s))
			return 13;
		/* verify does not wait for the grace period; stat does. */
		if (mmp_phys_stat(p, &st))
			return 13;
		mmp_space_counters(s, &c);
		if (!c.v[MMP_C_RCU_CALL] || !c.v[MMP_C_PGTABLE_FREE_RCU] || !c.v[MMP_C_RCU_SYNC])
			return 14;
		if (mmp_cpu_detach(cpu) || mmp_space_destroy(s) || mmp_phys_destroy(p))
			return 15;
	}
	return 0;
}

/* fork(); the child runs fork_child() under a watchdog: a grace period that never ends fails. */
static int fork_and_wait(bool all_arches, unsigned int watchdog, void (*parent)(void *), void *arg)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		tap_require(0, "fork");	/* no "ok" line: the child would print one too */
	if (pid == 0) {
		tap_in_child();
		alarm(watchdog);
		_exit(fork_child(all_arches));
	}
	if (parent)
		parent(arg);
	tap_require(waitpid(pid, &status, 0) == pid, "waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("#   child: %s %d%s\n", WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		       WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? " (watchdog: it hung)"
									  : "");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void fork_workers(struct fork_worker *w, pthread_t *th, int n)
{
	for (int i = 0; i < n; i++)
		tap_require(pthread_create(&th[i], NULL, fork_worker_fn, &w[i]) == 0, "thread");
}

/*
 * The supported case: threads used the library on every back end and exited;
 * the forking thread has a CPU attached and a table batch is still waiting for
 * its grace period. The child works, the parent goes on.
 */
static void check_fork_after_threads(void)
{
	int nr = mmp_arch_count(), errors = 0;
	struct fork_worker w[nr * 2];
	struct mmp_space *spaces[nr];
	struct mmp_cpu *cpu;
	pthread_t th[nr * 2];
	const char *arch;
	uint64_t addr;

	for_each_arch(i, arch) {
		spaces[i] = new_space(phys, arch);
		for (int k = 0; k < 2; k++)
			w[i * 2 + k] = (struct fork_worker){ .s = spaces[i],
							     .base = BASE + k * 8 * MiB };
	}
	fork_workers(w, th, nr * 2);
	for (int i = 0; i < nr * 2; i++)
		pthread_join(th[i], NULL);
	cpu = attach(spaces[0]);
	tap_eq(mmp_mmap(spaces[0], BASE + 64 * MiB, 2 * MiB, RW, MMP_MAP_FIXED | MMP_MAP_POPULATE,
			&addr), 0, "fork: mmap before fork");
	tap_eq(mmp_munmap(spaces[0], BASE + 64 * MiB, 2 * MiB), 0, "fork: munmap just before fork");

	tap_eq(fork_and_wait(true, 60, NULL, NULL), 0,
	       "fork: after threads used the library, the child used a phys and space of its own "
	       "on every back end (call_rcu, synchronize_rcu, destroy) and exited 0");

	tap_eq(mmp_cpu_detach(cpu), 0, "fork: detach");
	for (int i = 0; i < nr * 2; i++) {
		errors += w[i].errors;
		w[i].errors = 0;
		w[i].base += 16 * MiB;
	}
	tap_eq(errors, 0, "fork: the threads before the fork saw no error");
	fork_workers(w, th, nr * 2);
	for (int i = 0; i < nr * 2; i++) {
		pthread_join(th[i], NULL);
		errors += w[i].errors;
	}
	tap_eq(errors, 0, "fork: threads of the parent work after the fork");
	for (int i = 0; i < nr; i++) {
		uint64_t before = counter(spaces[i], MMP_C_PGTABLE_FREE_RCU);

		cpu = attach(spaces[i]);
		tap_eq(fork_work(spaces[i], cpu, BASE + 32 * MiB), 0,
		       "fork: %s: the parent keeps working", mmp_space_arch(spaces[i]));
		tap_eq(mmp_space_verify(spaces[i]), 0, "fork: %s: verify in the parent",
		       mmp_space_arch(spaces[i]));
		settle();
		tap_ok(counter(spaces[i], MMP_C_PGTABLE_FREE_RCU) > before,
		       "fork: %s: call_rcu still frees tables in the parent",
		       mmp_space_arch(spaces[i]));
		tap_eq(mmp_cpu_detach(cpu), 0, "detach");
		tap_eq(mmp_space_destroy(spaces[i]), 0, "destroy");
	}
}

/* qemu-user 7.2 aborts when the forked child of a threaded process starts a thread. */
#define QEMU_SKIP	"# SKIP qemu-user cannot run threads in a forked child"

int main(void)
{
	bool qemu = getenv("MMPRIM_QEMU_USER");
	const char *arch;
	uint64_t total;

	tap_require(mmp_phys_create(PHYS_BYTES, &phys) == 0, "create phys");
	total = phys_free();
	check_rcu_free_list();
	for_each_arch(i, arch) {
		check_munmap_free(arch);
		check_pt_reclaim_release(arch);
		check_pt_reclaim(arch);
		check_gup_pins(arch);
		if (qemu)
			tap_ok(1, "%s: unpin of a mapped, unpinned frame " QEMU_SKIP, arch);
		else
			check_unpin_unpinned(arch);
	}
	if (qemu) {
		tap_ok(1, "fork " QEMU_SKIP);
	} else {
		check_fork_after_threads();
	}
	tap_eq(phys_free(), total, "(e) every frame back on the phys");
	tap_eq(mmp_phys_destroy(phys), 0, "(e) phys destroyed");
	return tap_done();
}
