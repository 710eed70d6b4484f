/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How munmap frees its page tables in each mode of MMP_OPT_RCU_TABLE_FREE
 * (enum mmp_table_free), with the table batch page allocated or refused
 * (MMP_OPT_TABLE_BATCH_FAIL), all deterministic:
 *  (a) a munmap that frees N tables: which path each took, exactly, with two
 *      CPUs on other threads for semi RCU's IPIs to go to; every Nth batch
 *      refused, over several munmaps and over more tables than a batch holds;
 *  (b) semi RCU frees a single table under a reader that holds only
 *      rcu_read_lock() (a pte_offset_map() user), which is why Qi Zheng's
 *      patch moved it to RCU: RCU keeps it in flight until the reader is out;
 *  (c) a GUP-fast walker parked inside its IRQs-off section with the PTE table
 *      in hand (MMP_DEBUG_PARK_GUP_FAST): semi RCU's IPI (arm64, whose TLBIs
 *      are broadcast) and the native shootdown (x86_64) wait for it, so the
 *      table is not freed under it; RCU does not wait and frees nothing
 *      before the walker's read-side section ends; and with the IPI wait
 *      removed (MMP_DEBUG_SKIP_IPI_WAIT) the table is freed under the walker,
 *      which then reads poison. The interleaving is forced: the test waits
 *      for the walker to park and for the munmap to wait on it, never for time.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <string.h>
#include <time.h>

#include "grace.h"
#include "mm.h"
#include "util.h"

#define PG		MMP_PAGE_SIZE
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
/* 1 GiB aligned and low, in the first entry of every level above the PUD on every back end. */
#define BASE		0x100000000ULL
#define PHYS_BYTES	(64 * MiB)
#define NR_IDLE		2	/* CPUs of other threads: semi RCU's IPIs go to them */

static struct mmp_phys *phys;

static const char *const mode_names[MMP_NR_TABLE_FREE] = {
	[MMP_TABLE_FREE_SYNC_EACH] = "sync-each",
	[MMP_TABLE_FREE_RCU] = "rcu",
	[MMP_TABLE_FREE_SEMI_RCU] = "semi-rcu",
	[MMP_TABLE_FREE_NATIVE] = "native",
};

static uint64_t phys_free(void)
{
	struct mmp_phys_stat st;

	tap_require(mmp_phys_stat(phys, &st) == 0, "phys stat");
	return st.free_pages;
}

static uint64_t vmpte_tables(struct mmp_space *s)
{
	struct mmp_space_stat st;

	mmp_space_stat(s, &st);
	return st.pgtable_bytes / PG;
}

static void map_fixed(struct mmp_space *s, uint64_t addr, uint64_t len, int flags)
{
	uint64_t got = 0;

	tap_require(mmp_mmap(s, addr, len, RW, MMP_MAP_FIXED | flags, &got) == 0 && got == addr,
		    "mmap %#llx + %llu KiB", (unsigned long long)addr,
		    (unsigned long long)(len / KiB));
}

/* Threads that attach a CPU to a space and idle until released. */
struct idle {
	struct mmp_space *s;
	pthread_t th[NR_IDLE];
	sem_t ready, release;
	int errors;
};

static void *idle_fn(void *arg)
{
	struct idle *i = arg;
	struct mmp_cpu *cpu;

	if (mmp_cpu_attach(i->s, &cpu)) {
		__atomic_fetch_add(&i->errors, 1, __ATOMIC_RELAXED);
		sem_post(&i->ready);
		return NULL;
	}
	sem_post(&i->ready);
	while (sem_wait(&i->release) && errno == EINTR)
		;
	mmp_cpu_detach(cpu);
	return NULL;
}

static void idle_start(struct idle *i, struct mmp_space *s)
{
	i->s = s;
	i->errors = 0;
	sem_init(&i->ready, 0, 0);
	sem_init(&i->release, 0, 0);
	for (int k = 0; k < NR_IDLE; k++) {
		tap_require(pthread_create(&i->th[k], NULL, idle_fn, i) == 0, "idle thread");
		while (sem_wait(&i->ready) && errno == EINTR)
			;
	}
	tap_require(i->errors == 0, "idle threads attached their CPUs");
}

static void idle_stop(struct idle *i)
{
	for (int k = 0; k < NR_IDLE; k++)
		sem_post(&i->release);
	for (int k = 0; k < NR_IDLE; k++)
		pthread_join(i->th[k], NULL);
	sem_destroy(&i->ready);
	sem_destroy(&i->release);
}

static struct mmp_space *mode_space(const char *arch, long mode, long fail)
{
	struct mmp_space *s = new_space(phys, arch);

	must(!mmp_space_set_opt(s, MMP_OPT_RCU_TABLE_FREE, mode), "%s: mode %s", arch,
	     mode_names[mode]);
	must(!mmp_space_set_opt(s, MMP_OPT_TABLE_BATCH_FAIL, fail), "%s: fail %ld", arch, fail);
	return s;
}

/* What one munmap's tables took, by path. */
struct paths {
	uint64_t batch, one_ipi, one_rcu, native, sync, fails, rcu_calls, syncs, sync_ipis;
};

static struct paths paths_of(const struct mmp_counters *d)
{
	return (struct paths){
		.batch = d->v[MMP_C_PGTABLE_FREE_BATCH],
		.one_ipi = d->v[MMP_C_PGTABLE_FREE_ONE_IPI],
		.one_rcu = d->v[MMP_C_PGTABLE_FREE_ONE_RCU],
		.native = d->v[MMP_C_PGTABLE_FREE_NATIVE],
		.sync = d->v[MMP_C_PGTABLE_FREE_SYNC],
		.fails = d->v[MMP_C_TABLE_BATCH_FAIL],
		.rcu_calls = d->v[MMP_C_RCU_CALL],
		.syncs = d->v[MMP_C_TABLE_SYNC_ONE],
		.sync_ipis = d->v[MMP_C_TABLE_SYNC_IPI],
	};
}

/* The paths @tables tables take in @mode when @singles of them find no batch page, in @batches. */
static struct paths expect(long mode, uint64_t tables, uint64_t singles, uint64_t batches)
{
	struct paths p = { .fails = singles };
	uint64_t batched = tables - singles;

	switch (mode) {
	case MMP_TABLE_FREE_SYNC_EACH:
		p.sync = tables;
		break;
	case MMP_TABLE_FREE_NATIVE:
		p.native = tables;
		break;
	case MMP_TABLE_FREE_SEMI_RCU:
		p.batch = batched;
		p.one_ipi = singles;
		p.rcu_calls = batches;
		p.syncs = singles;
		p.sync_ipis = singles * NR_IDLE;
		break;
	default:
		p.batch = batched;
		p.one_rcu = singles;
		p.rcu_calls = batches + singles;
	}
	return p;
}

static void check_paths(const char *what, const struct paths *got, const struct paths *want)
{
	bool same = !memcmp(got, want, sizeof(*got));

	tap_ok(same, "%s", what);
	if (!same)
		printf("#   got  batch %llu one_ipi %llu one_rcu %llu native %llu sync %llu fails %llu "
		       "rcu_call %llu sync_one %llu sync_ipi %llu\n"
		       "#   want batch %llu one_ipi %llu one_rcu %llu native %llu sync %llu fails %llu "
		       "rcu_call %llu sync_one %llu sync_ipi %llu\n",
		       (unsigned long long)got->batch, (unsigned long long)got->one_ipi,
		       (unsigned long long)got->one_rcu, (unsigned long long)got->native,
		       (unsigned long long)got->sync, (unsigned long long)got->fails,
		       (unsigned long long)got->rcu_calls, (unsigned long long)got->syncs,
		       (unsigned long long)got->sync_ipis, (unsigned long long)want->batch,
		       (unsigned long long)want->one_ipi, (unsigned long long)want->one_rcu,
		       (unsigned long long)want->native, (unsigned long long)want->sync,
		       (unsigned long long)want->fails, (unsigned long long)want->rcu_calls,
		       (unsigned long long)want->syncs, (unsigned long long)want->sync_ipis);
}

/* munmap [addr, addr + len); its counters into @d, the tables it unlinked returned. */
static uint64_t munmap_counted(struct mmp_space *s, uint64_t addr, uint64_t len,
			       struct mmp_counters *d)
{
	struct mmp_counters c0;
	uint64_t before = vmpte_tables(s);

	mmp_space_counters(s, &c0);
	must(!mmp_munmap(s, addr, len), "munmap");
	counters_since(s, &c0, d);
	return before - vmpte_tables(s);
}

/*
 * The kernel's tlb_remove_table over @tables tables, a batch page tried each
 * time there is none, every @every-th try refused: how many find none, and
 * how many batches go to call_rcu. @tries carries over from munmap to munmap.
 */
static void simulate(uint64_t tables, long every, uint64_t *tries, uint64_t *singles,
		     uint64_t *batches)
{
	uint64_t in_batch = 0;
	bool have = false;

	*singles = *batches = 0;
	for (uint64_t t = 0; t < tables; t++) {
		if (!have) {
			++*tries;
			if (every && *tries % every == 0) {
				++*singles;
				continue;
			}
			have = true;
			in_batch = 0;
		}
		if (++in_batch == MAX_TABLE_BATCH) {
			++*batches;
			have = false;
		}
	}
	*batches += have;
}

/* ---- (a) each mode, batch page or none ----------------------------------------------- */

static void check_mode(const char *arch, long mode, long fail)
{
	uint64_t free0 = phys_free(), tables, tries = 0, singles, batches;
	struct mmp_space *s = mode_space(arch, mode, fail);
	struct mmp_counters d;
	struct paths got, want;
	struct idle idle;
	char what[160];

	idle_start(&idle, s);
	/* 8 MiB populated: four PTE tables and the tables above them up to the PGD. */
	map_fixed(s, BASE, 8 * MiB, MMP_MAP_POPULATE);
	tables = munmap_counted(s, BASE, 8 * MiB, &d);
	must(tables == 4 + (uint64_t)s->arch->levels - 2, "%s: tables", arch);
	simulate(tables, fail, &tries, &singles, &batches);
	got = paths_of(&d);
	want = expect(mode, tables, singles, batches);
	snprintf(what, sizeof(what), "%s %s, batch fail %ld: munmap of %llu tables, %llu without "
		 "a batch page", arch, mode_names[mode], fail, (unsigned long long)tables,
		 (unsigned long long)singles);
	check_paths(what, &got, &want);
	if (singles)
		tap_ok(d.v[MMP_C_TLB_FLUSH_RANGE] + d.v[MMP_C_TLB_FLUSH_ALL] >= singles,
		       "%s %s: the TLB flushed before each single table (%llu flushes)", arch,
		       mode_names[mode],
		       (unsigned long long)(d.v[MMP_C_TLB_FLUSH_RANGE] + d.v[MMP_C_TLB_FLUSH_ALL]));

	/*
	 * Every second batch page refused, over munmaps: the tries carry on
	 * (1.25 GiB, a page every 2 MiB: 640 PTE tables, more than a batch).
	 */
	if (fail == 1) {
		must(!mmp_space_set_opt(s, MMP_OPT_TABLE_BATCH_FAIL, 2), "every second");
		tries = 0;
		for (int round = 0; round < 3; round++) {
			uint64_t len = round == 2 ? 1280 * MiB : 8 * MiB;
			struct mmp_cpu *cpu;

			must(!mmp_cpu_attach(s, &cpu), "attach");
			map_fixed(s, BASE, len, 0);
			for (uint64_t va = BASE; va < BASE + len; va += PMD_SIZE)
				must(!mmp_write(cpu, va, &va, sizeof(va)), "touch");
			mmp_cpu_detach(cpu);
			tables = munmap_counted(s, BASE, len, &d);
			simulate(tables, 2, &tries, &singles, &batches);
			got = paths_of(&d);
			/* This thread's CPU is gone again: the IPIs went to the idle ones. */
			want = expect(mode, tables, singles, batches);
			snprintf(what, sizeof(what), "%s %s, every 2nd batch page refused, munmap %d: "
				 "%llu tables, %llu single, %llu batches", arch, mode_names[mode],
				 round + 1, (unsigned long long)tables, (unsigned long long)singles,
				 (unsigned long long)batches);
			check_paths(what, &got, &want);
		}
	}
	tap_eq(mmp_space_verify(s), 0, "%s %s: verify", arch, mode_names[mode]);
	idle_stop(&idle);
	tap_eq(mmp_space_destroy(s), 0, "%s %s: destroy", arch, mode_names[mode]);
	tap_eq(phys_free(), free0, "%s %s, batch fail %ld: every frame back", arch,
	       mode_names[mode], fail);
}

/* ---- (b) an RCU-only reader ------------------------------------------------------------ */

/*
 * A reader in rcu_read_lock() only, as pte_offset_map() users are: semi RCU's
 * IPI does not wait for it, so its single table is freed at once; RCU's stays
 * in flight until the reader is out.
 */
static void check_rcu_reader(const char *arch)
{
	for (long mode = MMP_TABLE_FREE_RCU; mode <= MMP_TABLE_FREE_SEMI_RCU; mode++) {
		struct mmp_space *s = mode_space(arch, mode, 1);
		struct grace_holder g;
		struct mmp_counters d;
		uint64_t tables;
		int64_t flight;

		map_fixed(s, BASE, 2 * MiB, MMP_MAP_POPULATE);
		phys_free();	/* nothing in flight from before */
		grace_hold(&g);
		tables = munmap_counted(s, BASE, 2 * MiB, &d);
		flight = tables_in_flight(phys);
		if (mode == MMP_TABLE_FREE_SEMI_RCU)
			tap_ok(flight == 0 && d.v[MMP_C_PGTABLE_FREE_ONE_IPI] == tables,
			       "%s semi-rcu: %llu single tables freed at once under an RCU reader",
			       arch, (unsigned long long)tables);
		else
			tap_ok(flight == (int64_t)tables && d.v[MMP_C_PGTABLE_FREE_ONE_RCU] == tables,
			       "%s rcu: %llu single tables in flight while an RCU reader holds on "
			       "(%lld)", arch, (unsigned long long)tables, (long long)flight);
		grace_release(&g);
		tap_eq(mmp_space_destroy(s), 0, "%s %s: destroy", arch, mode_names[mode]);
		phys_free();	/* waits for the grace period */
		tap_eq(tables_in_flight(phys), 0, "%s %s: none in flight once it ended", arch,
		       mode_names[mode]);
	}
}

/* ---- (c) a GUP-fast walker parked with IRQs off ---------------------------------------- */

struct walker {
	struct mmp_space *s;
	bool with_cpu;
	pthread_t th;
	int got;
};

static void *walker_fn(void *arg)
{
	struct walker *w = arg;
	struct mmp_cpu *cpu = NULL;
	uint64_t pfn;

	if (w->with_cpu && mmp_cpu_attach(w->s, &cpu)) {
		w->got = -EBUSY;
		mmp_debug_set(w->s, MMP_DEBUG_PARK_GUP_FAST, 0);
		return NULL;
	}
	w->got = mmp_gup_fast(w->s, BASE, 1, false, &pfn);
	if (w->got > 0)
		mmp_unpin(w->s, &pfn, w->got);
	if (cpu)
		mmp_cpu_detach(cpu);
	return NULL;
}

struct unmapper {
	struct mmp_space *s;
	pthread_t th;
	int err, done;
};

static void *unmapper_fn(void *arg)
{
	struct unmapper *u = arg;

	u->err = mmp_munmap(u->s, BASE, 2 * MiB);
	__atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Until @cond(@arg) holds; false after 20 s (a hang is a failure, not a wait). */
static bool wait_for(bool (*cond)(void *), void *arg)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!cond(arg)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20)
			return false;
		sched_yield();
	}
	return true;
}

static bool parked(void *arg)
{
	long v = -1;

	mmp_debug_get(arg, MMP_DEBUG_PARK_GUP_FAST, &v);
	return v == 2;
}

static bool ipi_waiting(void *arg)
{
	struct mmp_space *s = arg;

	return __atomic_load_n(&s->ipi_waiting, __ATOMIC_ACQUIRE) > 0;
}

static bool unmapped(void *arg)
{
	struct unmapper *u = arg;

	return __atomic_load_n(&u->done, __ATOMIC_ACQUIRE);
}

static bool table_live(uint32_t pfn)
{
	return __atomic_load_n(&pfn_to_page(phys, pfn)->flags, __ATOMIC_ACQUIRE) & PG_table;
}

/*
 * A walker parks on the PTE table of [BASE, BASE + 2 MiB); another thread
 * unmaps it. @waits: the mode must hold the munmap until the walker is out.
 */
static void check_parked(const char *arch, long mode, bool with_cpu, bool skip_wait)
{
	struct mmp_space *s = mode_space(arch, mode, mode == MMP_TABLE_FREE_NATIVE ? 0 : 1);
	struct walker w = { .s = s, .with_cpu = with_cpu };
	struct unmapper u = { .s = s };
	bool waits = mode != MMP_TABLE_FREE_RCU && !skip_wait;
	char how[128];
	uint32_t pte_table;
	uint64_t poison0;

	snprintf(how, sizeof(how), "%s %s, walker %s a CPU%s", arch, mode_names[mode],
		 with_cpu ? "with" : "without", skip_wait ? ", IPIs not waiting" : "");
	must(!mmp_debug_set(s, MMP_DEBUG_SKIP_IPI_WAIT, skip_wait), "skip wait");
	map_fixed(s, BASE, 2 * MiB, MMP_MAP_POPULATE);
	pte_table = (uint32_t)entry_pfn(s, READ_ONCE(*pmd_offset(s, BASE)), MMP_PMD);
	poison0 = counter(s, MMP_C_PT_POISON_SEEN);

	must(!mmp_debug_set(s, MMP_DEBUG_PARK_GUP_FAST, 1), "arm the park");
	tap_require(pthread_create(&w.th, NULL, walker_fn, &w) == 0, "walker");
	tap_ok(wait_for(parked, s), "%s: the walker parked on the PTE table", how);
	tap_require(pthread_create(&u.th, NULL, unmapper_fn, &u) == 0, "unmapper");
	if (waits) {
		tap_ok(wait_for(ipi_waiting, s),
		       "%s: the munmap waits in an IPI for the walker", how);
		tap_ok(table_live(pte_table) && !__atomic_load_n(&u.done, __ATOMIC_ACQUIRE),
		       "%s: and has not freed the table under it", how);
	} else {
		tap_ok(wait_for(unmapped, &u),
		       "%s: the munmap does not wait for the walker", how);
		if (mode == MMP_TABLE_FREE_RCU)
			tap_ok(table_live(pte_table) &&
				       (pfn_to_page(phys, pte_table)->flags & PG_pt_rcu),
			       "%s: the table waits for the walker's grace period", how);
		else
			tap_ok(!table_live(pte_table), "%s: the table is freed under the walker",
			       how);
	}
	must(!mmp_debug_set(s, MMP_DEBUG_PARK_GUP_FAST, 0), "let the walker go");
	pthread_join(w.th, NULL);
	pthread_join(u.th, NULL);
	tap_eq(u.err, 0, "%s: munmap", how);
	tap_eq(w.got, 0, "%s: the walker found nothing to pin", how);
	tap_eq(counter(s, MMP_C_PT_POISON_SEEN) - poison0, skip_wait ? 1 : 0,
	       skip_wait ? "%s: the walker read the freed table (poison)"
			 : "%s: the walker never read a freed table", how);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", how);
}

int main(void)
{
	const char *arch;
	uint64_t total;

	tap_require(mmp_phys_create(PHYS_BYTES, &phys) == 0, "create phys");
	total = phys_free();
	for_each_arch(i, arch) {
		struct mmp_space *s = new_space(phys, arch);
		bool broadcast = s->arch->tlbi_broadcast;

		mmp_space_destroy(s);
		for (long mode = 0; mode < MMP_NR_TABLE_FREE; mode++) {
			if (mode == MMP_TABLE_FREE_NATIVE && broadcast)
				continue;
			check_mode(arch, mode, 0);
			check_mode(arch, mode, 1);
		}
		check_rcu_reader(arch);
	}
	/* arm64: no shootdown IPI, semi RCU's is the only wait. */
	check_parked("arm64", MMP_TABLE_FREE_SEMI_RCU, true, false);
	check_parked("arm64", MMP_TABLE_FREE_SEMI_RCU, false, false);
	check_parked("arm64", MMP_TABLE_FREE_SEMI_RCU, true, true);
	check_parked("arm64", MMP_TABLE_FREE_RCU, true, false);
	/* x86_64 on bare metal: the shootdown's IPIs wait, and the table goes right after. */
	check_parked("x86_64", MMP_TABLE_FREE_NATIVE, true, false);
	check_parked("x86_64", MMP_TABLE_FREE_NATIVE, true, true);
	check_parked("x86_64", MMP_TABLE_FREE_SEMI_RCU, false, true);
	tap_eq(phys_free(), total, "every frame back on the phys");
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
