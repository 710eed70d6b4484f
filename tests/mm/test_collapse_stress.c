/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MADV_COLLAPSE against lockless walkers, on every back end. A collapser
 * thread fills a 2 MiB range with small pages, collapses it and zaps the THP
 * (which frees its deposit, the old PTE table, at once), over and over.
 * Meanwhile, each on a CPU of its own:
 *  - a table walker, as pte_offset_map users and GUP-fast walk: under
 *    rcu_read_lock it reads the PMD, lingers, then reads the PTE table it
 *    pointed to, which must still be a table (not freed: not poisoned);
 *  - a pinner: GUP-fast pins a random page for writing, a while later writes
 *    a fresh value into the pinned frame (as a device would), reads it back
 *    through its CPU: the pin and the mapping must be the same page.
 * The collapse keeps both safe by waiting for the walkers after unlinking the
 * table (tlb_remove_table_sync_one) and by rechecking the page references
 * afterwards, backing out (-EAGAIN) when a pin came in between.
 *
 * Then the window each protection closes, forced on every back end by debug
 * hooks (lib/debug.h), with the protection and without:
 *  - the test's own walker reads the PMD inside rcu_read_lock and holds
 *    itself while another thread collapses the range and zaps the THP; it
 *    goes on when the collapse starts to wait for it (MMP_DEBUG_GRACE_PERIOD)
 *    or when collapse and zap are done. Then it reads the table: live with
 *    tlb_remove_table_sync_one, freed under it with
 *    MMP_DEBUG_SKIP_COLLAPSE_SYNC;
 *  - the collapse is held after its scan (MMP_DEBUG_COLLAPSE_SCANNED) while
 *    GUP-fast pins a page of the range, then goes on: -EAGAIN with the
 *    reference recheck, and the pin still the mapped page; with
 *    MMP_DEBUG_SKIP_COLLAPSE_REFCHECK the collapse copies the page and the
 *    pin is left on a page the address no longer maps.
 * Neither depends on timing or forks, so both run under qemu-user too.
 *
 * Duration: MMP_STRESS_SECONDS per back end (default 0.5).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "mm.h"
#include "park.h"
#include "rcu.h"
#include "stress.h"
#include "util.h"

#define PG		MMP_PAGE_SIZE
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define BASE		0x40000000ULL
#define NR		512
#define PINNED_PAGE	5	/* the page a forced pin takes */

struct run {
	struct mmp_phys *phys;
	struct mmp_space *s;
	const char *arch;
	double end;
	int stop;
	/* The collapser refills and zaps under it; the pinner holds a pin under it. */
	pthread_rwlock_t refill;
	uint64_t collapsed, eagain, walks, freed_seen, pins, incoherent, errors;
	uint64_t zaps, attempts;	/* atomic: the walkers wait for them to move */
	uint64_t walks_live, pins_live;	/* atomic: as they happen, so the run can wait for both */
};

#define LINGER_NS	20000000L	/* the longest a walker waits for the collapser */

/*
 * Linger until *@counter passes @seen: the collapser's next step, which, were
 * the walker not protected, would take what it holds away. A protected
 * walker blocks that step, so it gives up after LINGER_NS.
 */
static void linger(const uint64_t *counter, uint64_t seen)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (__atomic_load_n(counter, __ATOMIC_ACQUIRE) != seen)
			return;
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < LINGER_NS);
}

/* The table walker: linger between the PMD and the table below it. */
static void *walker(void *arg)
{
	struct run *r = arg;
	struct mmp_cpu *cpu;
	uint64_t walks = 0, freed = 0;

	if (mmp_cpu_attach(r->s, &cpu))	/* an RCU reader from here on */
		return NULL;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		mmp_pte_t *pmdp, pmd, *ptes;

		uint64_t zaps = __atomic_load_n(&r->zaps, __ATOMIC_ACQUIRE);

		rcu_read_lock();
		pmdp = pmd_offset(r->s, BASE);
		pmd = pmdp ? __atomic_load_n(pmdp, __ATOMIC_ACQUIRE) : 0;
		ptes = pmd ? pte_table(r->s, pmd) : NULL;
		if (ptes) {
			uint64_t pfn = ((uint8_t *)ptes - r->s->phys->base) >> PAGE_SHIFT;

			/*
			 * Until the collapse and the zap after it have freed this
			 * table, were we not waited for (the zap frees the deposit
			 * at once); waited for, the collapse cannot unlink it and
			 * we give up after LINGER_NS.
			 */
			linger(&r->zaps, zaps);
			if (__atomic_load_n(&ptes[7], __ATOMIC_ACQUIRE) == PT_POISON ||
			    !(__atomic_load_n(&pfn_to_page(r->s->phys, pfn)->flags, __ATOMIC_ACQUIRE) &
			      PG_table))
				freed++;
			walks++;
			__atomic_fetch_add(&r->walks_live, 1, __ATOMIC_RELAXED);
		}
		rcu_read_unlock();
	}
	mmp_cpu_detach(cpu);
	__atomic_fetch_add(&r->walks, walks, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->freed_seen, freed, __ATOMIC_RELAXED);
	return NULL;
}

/* The pinner: a pin and the mapping must be one page. */
static void *pinner(void *arg)
{
	struct run *r = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ULL ^ (uintptr_t)&rng, pins = 0, bad = 0, serial = 0;
	struct mmp_cpu *cpu;

	if (mmp_cpu_attach(r->s, &cpu))
		return NULL;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t addr = BASE + (xorshift64(&rng) % NR) * PG, pfn, v, back = 0;
		uint64_t attempts = __atomic_load_n(&r->attempts, __ATOMIC_ACQUIRE);

		pthread_rwlock_rdlock(&r->refill);
		if (mmp_gup_fast(r->s, addr, 1, true, &pfn) == 1) {
			/* The device writes a while after the pin, as DMA does: after a collapse. */
			linger(&r->attempts, attempts);
			v = 0x5a5a000000000000ULL | ++serial;
			__atomic_store_n((uint64_t *)((uint8_t *)pfn_to_virt(r->s->phys, pfn) + 64), v,
					 __ATOMIC_RELEASE);
			if (mmp_read(cpu, addr + 64, &back, 8) || back != v)
				bad++;
			mmp_unpin(r->s, &pfn, 1);
			pins++;
			__atomic_fetch_add(&r->pins_live, 1, __ATOMIC_RELAXED);
		}
		pthread_rwlock_unlock(&r->refill);
	}
	mmp_cpu_detach(cpu);
	__atomic_fetch_add(&r->pins, pins, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->incoherent, bad, __ATOMIC_RELAXED);
	return NULL;
}

/* The collapser, on the calling thread: fill, collapse, zap. */
static void collapser(struct run *r, struct mmp_cpu *cpu)
{
	/* A loaded machine may starve a walker: the run goes on (up to 10 s) until both ran. */
	while (now() < r->end ||
	       (now() < r->end + 10 &&
		!(__atomic_load_n(&r->walks_live, __ATOMIC_RELAXED) &&
		  __atomic_load_n(&r->pins_live, __ATOMIC_RELAXED)))) {
		int err;

		pthread_rwlock_wrlock(&r->refill);
		err = mmp_madvise(r->s, BASE, 2 * MiB, MMP_MADV_DONTNEED);
		__atomic_fetch_add(&r->zaps, 1, __ATOMIC_RELEASE);
		for (unsigned int i = 0; !err && i < NR; i++)
			err = mmp_memset(cpu, BASE + (uint64_t)i * PG, (int)(i & 0xff), 128);
		pthread_rwlock_unlock(&r->refill);
		if (err) {
			r->errors++;
			break;
		}
		err = mmp_madvise(r->s, BASE, 2 * MiB, MMP_MADV_COLLAPSE);
		__atomic_fetch_add(&r->attempts, 1, __ATOMIC_RELEASE);
		if (!err)
			r->collapsed++;
		else if (err == -EAGAIN)
			r->eagain++;
		else
			r->errors++;
	}
}

/* One run on @arch for @seconds. */
static void run_one(struct run *r, const char *arch, double seconds)
{
	pthread_t w, p;
	struct mmp_cpu *cpu;
	uint64_t got = 0;

	memset(r, 0, sizeof(*r));
	r->arch = arch;
	pthread_rwlock_init(&r->refill, NULL);
	tap_require(mmp_phys_create(32 * MiB, &r->phys) == 0, "phys");
	r->s = new_space(r->phys, arch);
	tap_require(mmp_cpu_attach(r->s, &cpu) == 0, "%s: cpu", arch);
	tap_require(mmp_mmap(r->s, BASE, 2 * MiB, RW, MMP_MAP_FIXED, &got) == 0, "%s: map", arch);
	r->end = now() + seconds;
	pthread_create(&w, NULL, walker, r);
	pthread_create(&p, NULL, pinner, r);
	collapser(r, cpu);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	pthread_join(p, NULL);
	tap_eq(r->errors, 0, "%s: fill, collapse and zap: no unexpected error", arch);
	tap_eq(r->freed_seen, 0, "%s: no walker read a freed table (%llu walks)", arch,
	       (unsigned long long)r->walks);
	tap_eq(r->incoherent, 0, "%s: every pin was the mapped page (%llu pins)", arch,
	       (unsigned long long)r->pins);
	tap_eq(counter(r->s, MMP_C_PT_POISON_SEEN), 0, "%s: GUP-fast read no freed table", arch);
	tap_ok(r->collapsed > 0 && r->walks > 0 && r->pins > 0,
	       "%s: work done: %llu collapsed, %llu backed out (-EAGAIN), %llu walks, %llu pins",
	       arch, (unsigned long long)r->collapsed, (unsigned long long)r->eagain,
	       (unsigned long long)r->walks, (unsigned long long)r->pins);
	tap_eq(mmp_space_verify(r->s), 0, "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(r->s);
	tap_eq(mmp_phys_destroy(r->phys), 0, "%s: nothing leaked", arch);
}

/* ---- the windows, forced ---------------------------------------------------------- */

/* A space with BASE mapped and filled with small pages, @debug removed when @broken. */
static struct mmp_space *held_space(struct mmp_phys **phys, const char *arch, int debug,
				    bool broken, struct mmp_cpu **cpu, const char *what)
{
	struct mmp_space *s;
	uint64_t got;
	int err = 0;

	tap_require(mmp_phys_create(32 * MiB, phys) == 0, "%s: phys", what);
	s = new_space(*phys, arch);
	tap_require(mmp_cpu_attach(s, cpu) == 0 &&
		    mmp_mmap(s, BASE, 2 * MiB, RW, MMP_MAP_FIXED, &got) == 0 &&
		    mmp_debug_set(s, debug, broken) == 0, "%s: a space", what);
	for (unsigned int i = 0; !err && i < NR; i++)
		err = mmp_memset(*cpu, BASE + (uint64_t)i * PG, (int)(i & 0xff), 128);
	tap_require(!err, "%s: fill the range", what);
	return s;
}

struct held_collapse {
	struct mmp_space *s;
	struct park *park;
	int collapse, zap;
};

/* Collapse the range and zap the THP, which frees its deposit (the old table) at once. */
static void *collapse_and_zap(void *arg)
{
	struct held_collapse *c = arg;

	c->collapse = mmp_madvise(c->s, BASE, 2 * MiB, MMP_MADV_COLLAPSE);
	c->zap = mmp_madvise(c->s, BASE, 2 * MiB, MMP_MADV_DONTNEED);
	/* Done: a walker the collapse did not wait for goes on now. */
	if (c->park)
		park_release(c->park);
	return NULL;
}

/*
 * The test's walker holds a PMD's table inside rcu_read_lock while another
 * thread collapses the range and zaps the THP, then reads the table.
 */
static void held_walker(const char *arch, bool broken)
{
	struct held_collapse c = { 0 };
	struct mmp_phys *phys;
	struct mmp_cpu *cpu;
	struct park park;
	mmp_pte_t *pmdp, *ptes;
	uint64_t pfn;
	bool freed;
	pthread_t th;
	char what[160];

	snprintf(what, sizeof(what), "%s%s: a walker holds the table while the range collapses",
		 arch, broken ? " (no tlb_remove_table_sync_one)" : "");
	c.s = held_space(&phys, arch, MMP_DEBUG_SKIP_COLLAPSE_SYNC, broken, &cpu, what);
	c.park = &park;
	park_init(&park, c.s);
	park_arm(&park, -1, PARK_AT(MMP_DEBUG_GRACE_PERIOD));
	rcu_read_lock();	/* an RCU reader: this thread has a CPU */
	pmdp = pmd_offset(c.s, BASE);
	ptes = pte_table(c.s, __atomic_load_n(pmdp, __ATOMIC_ACQUIRE));
	tap_require(ptes != NULL, "%s: a PTE table", what);
	pfn = ((uint8_t *)ptes - c.s->phys->base) >> PAGE_SHIFT;
	tap_require(!pthread_create(&th, NULL, collapse_and_zap, &c), "start a thread");
	park_self(&park);
	freed = __atomic_load_n(&ptes[7], __ATOMIC_ACQUIRE) == PT_POISON ||
		!(__atomic_load_n(&pfn_to_page(c.s->phys, pfn)->flags, __ATOMIC_ACQUIRE) & PG_table);
	rcu_read_unlock();
	pthread_join(th, NULL);

	tap_eq(park.timeouts, 0, "%s: the walker was let go", what);
	tap_eq(c.collapse, 0, "%s: collapsed", what);
	tap_eq(c.zap, 0, "%s: zapped", what);
	if (broken) {
		tap_ok(freed, "%s: the walker reads the table after its free", what);
	} else {
		tap_ok(!freed, "%s: the walker reads a live table", what);
		tap_eq(park.waited, 1, "%s: the collapse waited for it", what);
	}
	tap_eq(mmp_space_verify(c.s), 0, "%s: verify", what);
	park_fini(&park, c.s);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(c.s);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: nothing leaked", what);
}

static void *collapse_only(void *arg)
{
	struct held_collapse *c = arg;

	c->collapse = mmp_madvise(c->s, BASE, 2 * MiB, MMP_MADV_COLLAPSE);
	return NULL;
}

/*
 * The collapse is held after its scan while GUP-fast pins a page of the
 * range for writing; then it goes on. A device writes through the pin and
 * the CPU reads the address: one page, or two.
 */
static void held_pin(const char *arch, bool broken)
{
	const uint64_t addr = BASE + PINNED_PAGE * PG;
	struct held_collapse c = { 0 };
	uint64_t pfn = 0, v = 0x5a5a5a5a00000001ULL, back = 0;
	struct mmp_phys *phys;
	struct mmp_cpu *cpu;
	struct park park;
	pthread_t th;
	bool held;
	int pinned;
	char what[160];

	snprintf(what, sizeof(what), "%s%s: a page pinned while the collapse is held after its scan",
		 arch, broken ? " (no reference recheck)" : "");
	c.s = held_space(&phys, arch, MMP_DEBUG_SKIP_COLLAPSE_REFCHECK, broken, &cpu, what);
	park_init(&park, c.s);
	park_arm(&park, MMP_DEBUG_COLLAPSE_SCANNED, 0);
	tap_require(!pthread_create(&th, NULL, collapse_only, &c), "start a thread");
	held = park_wait_parked(&park);
	pinned = mmp_gup_fast(c.s, addr, 1, true, &pfn);
	park_release(&park);
	pthread_join(th, NULL);
	if (pinned == 1) {
		__atomic_store_n((uint64_t *)((uint8_t *)pfn_to_virt(c.s->phys, pfn) + 64), v,
				 __ATOMIC_RELEASE);
		tap_require(mmp_read(cpu, addr + 64, &back, sizeof(back)) == 0, "%s: read", what);
	}

	tap_ok(held && !park.timeouts, "%s: the collapse was held at the window", what);
	tap_eq(pinned, 1, "%s: GUP-fast pinned the page", what);
	if (broken) {
		tap_eq(c.collapse, 0, "%s: the collapse went through", what);
		tap_ok(back != v, "%s: the pin is on a page the address no longer maps", what);
	} else {
		tap_eq(c.collapse, -EAGAIN, "%s: the collapse backs out", what);
		tap_eq(back, v, "%s: the pin is the mapped page", what);
	}
	if (pinned == 1)
		mmp_unpin(c.s, &pfn, 1);
	tap_eq(mmp_space_verify(c.s), 0, "%s: verify", what);
	park_fini(&park, c.s);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(c.s);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: nothing leaked", what);
}

int main(int argc, char **argv)
{
	const char *env = getenv("MMP_STRESS_SECONDS"), *arch;
	double seconds = env ? atof(env) : 0.5;
	struct run r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for_each_arch(i, arch) {
		printf("# back end %s\n", arch);
		run_one(&r, arch, seconds);
	}
	for_each_arch(i, arch) {
		for (int broken = 0; broken < 2; broken++) {
			held_walker(arch, broken);
			held_pin(arch, broken);
		}
	}
	return tap_done();
}
