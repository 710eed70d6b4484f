/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GUP against fork and against the end of a space, on every back end:
 *  - GUP-fast pins nothing while fork write-protects (mm->write_protect_seq),
 *    and gives back what it pinned when a fork started meanwhile;
 *  - a stress test: one thread forks the space over and over while a CPU
 *    thread write-pins with GUP-fast, then writes; the pinned page must be
 *    the page the parent's write went to (PTE-mapped pages and THPs);
 *  - a pin outlives its space: the frames stay, mmp_phys_unpin() drops the
 *    pin, and the phys cannot be destroyed before;
 *  - every error of mmp_gup(), mmp_gup_fast() and the unpins, and the locked
 *    GUP retrying races inside instead of failing.
 *
 * The stress runs MMP_STRESS_SECONDS per back end and mapping (default 0.5).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mm.h"
#include "stress.h"
#include "util.h"

#define PG		MMP_PAGE_SIZE
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define PHYS_BYTES	(64 * MiB)
#define NPAGES		64
#define MAX_CHILDREN	64
#define NR_REAPERS	16
#define MIN_OVERLAPS	5000
/* A free, 2 MiB aligned address: a THP mapping there is one PMD, not two halves. */
#define HUGE_HINT	0x100000000ULL	/* 4 GiB: inside every back end's space */

static uint64_t nr_pinned(struct mmp_phys *phys)
{
	return (uint64_t)__atomic_load_n(&phys->nr_pinned, __ATOMIC_RELAXED);
}

static uint64_t free_pages(struct mmp_phys *phys)
{
	struct mmp_phys_stat st;

	mmp_phys_stat(phys, &st);
	return st.free_pages;
}

/* Map @len bytes in @s and fill them with @c through @cpu; one THP when @huge. */
static uint64_t map_written(struct mmp_space *s, struct mmp_cpu *cpu, uint64_t len, bool huge,
			    int c)
{
	uint64_t a = 0;

	must(!mmp_mmap(s, huge ? HUGE_HINT : 0, len, RW, 0, &a), "mmap");
	if (huge)
		must(!mmp_madvise(s, a, len, MMP_MADV_HUGEPAGE), "MADV_HUGEPAGE");
	must(!mmp_memset(cpu, a, c, len), "memset");
	return a;
}

/* ---- write_protect_seq, deterministic ------------------------------------------------ */

static void check_gup_fast_backs_off_during_fork(const char *arch, struct mmp_space *s,
						 struct mmp_cpu *cpu)
{
	uint64_t a = map_written(s, cpu, 4 * PG, false, 1), pfns[4];
	uint64_t pinned = nr_pinned(s->phys), backoff = counter(s, MMP_C_GUP_FAST_BACKOFF);

	/* What copy_page_range does to the parent around its copy. */
	raw_write_seqcount_begin(&s->write_protect_seq);
	tap_eq(mmp_gup_fast(s, a, 4, true, pfns), 0,
	       "%s: GUP-fast pins nothing while a fork write-protects", arch);
	tap_eq(mmp_gup_fast(s, a, 4, false, pfns), 0, "%s: read pins neither", arch);
	tap_eq(nr_pinned(s->phys), pinned, "%s: no pin was kept", arch);
	tap_eq(counter(s, MMP_C_GUP_FAST_BACKOFF) - backoff, 2, "%s: counted as back-offs", arch);
	tap_eq(mmp_gup(s, a, 1, true, pfns), 1, "%s: the locked GUP still pins (no fork holds the "
	       "mmap lock here)", arch);
	must(!mmp_unpin(s, pfns, 1), "unpin");
	raw_write_seqcount_end(&s->write_protect_seq);
	tap_eq(mmp_gup_fast(s, a, 4, true, pfns), 4, "%s: pins again once the fork is over", arch);
	must(!mmp_unpin(s, pfns, 4), "unpin");
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_munmap(s, a, 4 * PG);
}

struct toggler {
	struct mmp_space *s;
	int stop;
	uint64_t flips;
};

/* A fork that keeps starting: the count moves under GUP-fast's feet. */
static void *toggle_seq(void *arg)
{
	struct toggler *t = arg;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		raw_write_seqcount_begin(&t->s->write_protect_seq);
		raw_write_seqcount_end(&t->s->write_protect_seq);
		t->flips++;
		for (volatile int spin = 0; spin < 2000; spin++)
			;
	}
	return NULL;
}

static void check_gup_fast_gives_back_pins(const char *arch, struct mmp_space *s,
					   struct mmp_cpu *cpu)
{
	uint64_t a = map_written(s, cpu, NPAGES * PG, false, 2), pfns[NPAGES];
	uint64_t pinned = nr_pinned(s->phys), zero = 0, full = 0, other = 0, leaked = 0;
	struct toggler t = { .s = s };
	pthread_t th;
	double t0 = now();

	must(!pthread_create(&th, NULL, toggle_seq, &t), "toggler thread");
	while ((now() - t0 < 0.2 || !zero || !full) && now() - t0 < 5) {
		int n = mmp_gup_fast(s, a, NPAGES, true, pfns);

		if (n == 0) {
			zero++;
			/* Given back: no page of the range may hold a pin now. */
			for (unsigned int i = 0; i < NPAGES; i++) {
				uint64_t pfn = 0;

				must(mmp_gup(s, a + i * PG, 1, true, &pfn) == 1, "look up");
				leaked += __atomic_load_n(&pfn_to_page(s->phys, pfn)->pincount,
							  __ATOMIC_RELAXED) != 1;
				must(!mmp_unpin(s, &pfn, 1), "unpin");
			}
		} else if (n == NPAGES) {
			full++;
			must(!mmp_unpin(s, pfns, n), "unpin");
		} else {
			other++;
			if (n > 0)
				mmp_unpin(s, pfns, n);
		}
	}
	__atomic_store_n(&t.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("# %s: %llu seq flips, %llu calls gave everything back, %llu pinned all\n", arch,
	       (unsigned long long)t.flips, (unsigned long long)zero, (unsigned long long)full);
	tap_ok(zero > 0 && full > 0, "%s: with forks starting meanwhile, GUP-fast pinned all or "
	       "nothing, both seen", arch);
	tap_eq(other, 0, "%s: never a part of the range", arch);
	tap_eq(leaked, 0, "%s: a call that returned 0 kept no pin", arch);
	tap_eq(nr_pinned(s->phys), pinned, "%s: pin count back where it was", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_munmap(s, a, NPAGES * PG);
}

/* ---- fork against GUP-fast write pins: the stress ------------------------------------- */

/*
 * A forker forks the space back to back; reapers destroy the children (each
 * destroy waits for an RCU barrier: many reapers wait at once). A pinner, a
 * CPU of the space, write-pins runs of pages with GUP-fast. A pin that a fork
 * overlapped (fork_gen moved or was odd around the call) is checked: once that
 * fork is over, the pinner writes each page as the parent, and the pinned
 * frame must hold what it wrote. Without write_protect_seq, fork can miss such
 * a pin, share the page, and the write copies away from it.
 */
struct stress {
	const char *arch;
	struct mmp_phys *phys;
	struct mmp_space *s;
	uint64_t base, len;
	bool huge;
	int stop;
	uint64_t fork_gen;		/* odd while the forker is inside mmp_fork() */
	pthread_mutex_t fork_lock;	/* held around each fork: "wait for the fork in flight" */
	pthread_mutex_t lock;		/* the children waiting for a reaper */
	pthread_cond_t cond;
	struct mmp_space *children[MAX_CHILDREN];
	unsigned int nr_children, max_children;
	uint64_t forks, gup_calls, overlaps, pins, checked, incoherent, errors, rethp;
};

static bool stopping(struct stress *st)
{
	return __atomic_load_n(&st->stop, __ATOMIC_ACQUIRE);
}

static void *forker(void *arg)
{
	struct stress *st = arg;

	while (!stopping(st)) {
		struct mmp_space *c;
		int err;

		pthread_mutex_lock(&st->fork_lock);
		__atomic_fetch_add(&st->fork_gen, 1, __ATOMIC_SEQ_CST);
		err = mmp_fork(st->s, &c);
		__atomic_fetch_add(&st->fork_gen, 1, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&st->fork_lock);
		if (err) {
			__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
			printf("# %s: fork: %s\n", st->arch, mmp_strerror(err));
			break;
		}
		st->forks++;
		pthread_mutex_lock(&st->lock);
		while (st->nr_children == st->max_children && !stopping(st))
			pthread_cond_wait(&st->cond, &st->lock);
		if (st->nr_children < st->max_children) {
			st->children[st->nr_children++] = c;
			c = NULL;
		}
		pthread_cond_broadcast(&st->cond);
		pthread_mutex_unlock(&st->lock);
		/* Stopping with no room left: no reaper will take it. */
		if (c && mmp_space_destroy(c))
			__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *reaper(void *arg)
{
	struct stress *st = arg;

	for (;;) {
		struct mmp_space *c;

		pthread_mutex_lock(&st->lock);
		while (!st->nr_children && !stopping(st))
			pthread_cond_wait(&st->cond, &st->lock);
		if (!st->nr_children) {
			pthread_mutex_unlock(&st->lock);
			return NULL;
		}
		c = st->children[--st->nr_children];
		pthread_cond_broadcast(&st->cond);
		pthread_mutex_unlock(&st->lock);
		if (mmp_space_destroy(c))
			__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
	}
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The parent writes each pinned page: the pinned frame must hold the data. */
static void check_coherent(struct stress *st, struct mmp_cpu *cpu, uint64_t va,
			   const uint64_t *pfns, int n, uint64_t *tag)
{
	for (int i = 0; i < n; i++) {
		uint64_t seen;

		++*tag;
		if (mmp_write(cpu, va + i * PG, tag, sizeof(*tag)))
			__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
		memcpy(&seen, mmp_page_address(st->phys, pfns[i]), sizeof(seen));
		if (seen != *tag && st->incoherent++ < 5)
			printf("# %s%s: the parent wrote %#llx at %#llx, its pinned frame %#llx "
			       "holds %#llx\n", st->arch, st->huge ? " THP" : "",
			       (unsigned long long)*tag, (unsigned long long)(va + i * PG),
			       (unsigned long long)pfns[i], (unsigned long long)seen);
	}
}

static void *pinner(void *arg)
{
	struct stress *st = arg;
	uint64_t npages = st->len / PG, pfns[NPAGES], x = 0x9e3779b97f4a7c15ULL, tag = 0;
	uint64_t splits = counter(st->s, MMP_C_PMD_SPLIT);
	struct mmp_cpu *cpu;

	if (mmp_cpu_attach(st->s, &cpu)) {
		__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	while (!stopping(st)) {
		uint64_t first = rnd(&x) % npages, nr = rnd(&x) & 1 ? 1 + rnd(&x) % NPAGES : 1;
		uint64_t va, gen0, gen1;
		bool overlap;
		int n;

		nr = MIN(nr, npages - first);
		va = st->base + first * PG;
		/* A fork split our pinned THP: map a new one, for the PMD path again. */
		if (st->huge && counter(st->s, MMP_C_PMD_SPLIT) != splits) {
			splits = counter(st->s, MMP_C_PMD_SPLIT);
			if (mmp_madvise(st->s, st->base, st->len, MMP_MADV_DONTNEED))
				__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
			st->rethp++;
		}
		gen0 = __atomic_load_n(&st->fork_gen, __ATOMIC_SEQ_CST);
		n = mmp_gup_fast(st->s, va, nr, true, pfns);
		gen1 = __atomic_load_n(&st->fork_gen, __ATOMIC_SEQ_CST);
		st->gup_calls++;
		if (n < 0) {
			__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
			continue;
		}
		st->pins += n;
		overlap = gen0 != gen1 || (gen0 & 1);
		__atomic_store_n(&st->overlaps, st->overlaps + overlap, __ATOMIC_RELAXED);
		/* A fork overlapped the pin (and one in 64 others): check it once the fork is over. */
		if (n && (overlap || !(st->gup_calls % 64))) {
			pthread_mutex_lock(&st->fork_lock);
			pthread_mutex_unlock(&st->fork_lock);
			check_coherent(st, cpu, va, pfns, n, &tag);
			st->checked += n;
		}
		if (n && mmp_unpin(st->s, pfns, n))
			__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
		/*
		 * Forked pages are read-only: write them, as the parent would, to
		 * pin again. Not while a fork runs: the write would wait for it on
		 * the mmap lock, and pinning the pages it has not reached yet is
		 * the race to look for.
		 */
		if ((unsigned int)n < nr && !(__atomic_load_n(&st->fork_gen, __ATOMIC_RELAXED) & 1)) {
			for (uint64_t i = 0; i < nr; i++) {
				tag++;
				if (mmp_write(cpu, va + i * PG, &tag, sizeof(tag)))
					__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
			}
		}
	}
	if (mmp_cpu_detach(cpu))
		__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void stress_fork_gup_fast(const char *arch, bool huge, double seconds)
{
	struct stress st = {
		.arch = arch, .huge = huge, .fork_lock = PTHREAD_MUTEX_INITIALIZER,
		.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
		/* A child may hold a THP the parent let go of: fewer of them wait at once. */
		.max_children = huge ? MAX_CHILDREN / 4 : MAX_CHILDREN,
	};
	const char *what = huge ? " THP" : "";
	pthread_t f, p, r[NR_REAPERS];
	struct mmp_cpu *cpu;
	uint64_t free0;
	double t0;

	must(!mmp_phys_create(huge ? 4 * PHYS_BYTES : PHYS_BYTES, &st.phys), "phys");
	free0 = free_pages(st.phys);
	st.s = new_space(st.phys, arch);
	st.len = huge ? PMD_SIZE : NPAGES * PG;
	must(!mmp_cpu_attach(st.s, &cpu), "cpu");
	st.base = map_written(st.s, cpu, st.len, huge, 3);
	must(!mmp_cpu_detach(cpu), "detach");

	t0 = now();
	must(!pthread_create(&p, NULL, pinner, &st), "pinner thread");
	must(!pthread_create(&f, NULL, forker, &st), "forker thread");
	for (int i = 0; i < NR_REAPERS; i++)
		must(!pthread_create(&r[i], NULL, reaper, &st), "reaper thread");
	/*
	 * At least @seconds, and on (a loaded host) until enough GUP-fast calls
	 * ran while a fork did: each is a chance for the race.
	 */
	while (now() - t0 < seconds ||
	       ((__atomic_load_n(&st.overlaps, __ATOMIC_RELAXED) < MIN_OVERLAPS ||
		 !__atomic_load_n(&st.checked, __ATOMIC_RELAXED)) && now() - t0 < seconds + 5))
		usleep(10000);
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&st.lock);
	pthread_cond_broadcast(&st.cond);
	pthread_mutex_unlock(&st.lock);
	pthread_join(p, NULL);
	pthread_join(f, NULL);
	for (int i = 0; i < NR_REAPERS; i++)
		pthread_join(r[i], NULL);
	/* The last children may have come after the reapers left. */
	while (st.nr_children)
		st.errors += !!mmp_space_destroy(st.children[--st.nr_children]);

	printf("# %s%s %.1f s: %llu forks, %llu GUP-fast calls (%llu during a fork), %llu pages "
	       "pinned, %llu of them checked, %llu THPs remade, %llu GUP-fast back-offs\n", arch,
	       what, now() - t0, (unsigned long long)st.forks, (unsigned long long)st.gup_calls,
	       (unsigned long long)st.overlaps,
	       (unsigned long long)st.pins, (unsigned long long)st.checked,
	       (unsigned long long)st.rethp,
	       (unsigned long long)counter(st.s, MMP_C_GUP_FAST_BACKOFF));
	tap_eq(st.incoherent, 0, "%s%s: forks racing GUP-fast: every pinned page is the page the "
	       "parent's next write went to", arch, what);
	tap_eq(st.errors, 0, "%s%s: no call failed", arch, what);
	tap_ok(st.forks > 0 && st.checked > 0, "%s%s: forks and checked pins both happened", arch,
	       what);
	tap_eq(nr_pinned(st.phys), 0, "%s%s: every pin given back", arch, what);
	tap_eq(mmp_space_verify(st.s), 0, "%s%s: verify", arch, what);
	tap_eq(mmp_space_destroy(st.s), 0, "%s%s: destroy", arch, what);
	tap_eq(free_pages(st.phys) + (st.phys->huge_zero_pfn != NO_PFN ? HPAGE_PMD_NR : 0), free0,
	       "%s%s: every frame back", arch, what);
	tap_eq(mmp_phys_destroy(st.phys), 0, "%s%s: phys destroyed", arch, what);
}

/* ---- a pin outlives its space ---------------------------------------------------------- */

static void check_pin_outlives_space(const char *arch, bool huge, bool fast)
{
	const char *what = huge ? (fast ? " THP fast" : " THP") : (fast ? " fast" : "");
	uint64_t len = huge ? PMD_SIZE : 4 * PG, pfns[2], a, free0;
	struct mmp_phys *phys;
	struct mmp_space *s, *other;
	struct mmp_cpu *cpu;
	unsigned char *p;

	must(!mmp_phys_create(16 * MiB, &phys), "phys");
	free0 = free_pages(phys);
	s = new_space(phys, arch);
	must(!mmp_cpu_attach(s, &cpu), "cpu");
	a = map_written(s, cpu, len, huge, 0x5a);
	tap_eq(fast ? mmp_gup_fast(s, a + PG, 2, true, pfns) : mmp_gup(s, a + PG, 2, true, pfns), 2,
	       "%s%s: pin 2 pages", arch, what);
	must(!mmp_cpu_detach(cpu), "detach");
	tap_eq(mmp_space_destroy(s), 0, "%s%s: destroy the space with the pins held", arch, what);
	tap_eq(free0 - free_pages(phys), huge ? HPAGE_PMD_NR : 2,
	       "%s%s: the pinned folios stay allocated, nothing else", arch, what);

	/* The frames are still the pinned pages, with their data. */
	p = mmp_page_address(phys, pfns[1]);
	tap_ok(p && p[0] == 0x5a && p[PG - 1] == 0x5a, "%s%s: a pinned page keeps its data", arch,
	       what);
	other = new_space(phys, arch);
	tap_eq(mmp_space_verify(other), 0, "%s%s: verify: the pins account for the frames left",
	       arch, what);
	tap_eq(nr_pinned(phys), 2, "%s%s: 2 pins held", arch, what);
	tap_eq(mmp_space_destroy(other), 0, "%s%s: destroy another space", arch, what);
	tap_eq(mmp_phys_destroy(phys), -EBUSY, "%s%s: phys_destroy with pins held: -EBUSY", arch,
	       what);

	tap_eq(mmp_phys_unpin(phys, pfns, 2), 0, "%s%s: unpin through the phys", arch, what);
	tap_eq(mmp_phys_unpin(phys, pfns, 2), -EINVAL, "%s%s: the pins are gone: -EINVAL", arch,
	       what);
	tap_eq(nr_pinned(phys), 0, "%s%s: no pin left", arch, what);
	tap_eq(free_pages(phys), free0 - (phys->huge_zero_pfn != NO_PFN ? HPAGE_PMD_NR : 0),
	       "%s%s: every frame back", arch, what);
	tap_eq(mmp_phys_destroy(phys), 0, "%s%s: phys destroyed", arch, what);
}

/* mmp_unpin() through a space that did not pin, once the pinning one is gone. */
static void check_unpin_through_another_space(const char *arch)
{
	struct mmp_phys *phys;
	struct mmp_space *s, *other;
	struct mmp_cpu *cpu;
	uint64_t a, pfn, free0;

	must(!mmp_phys_create(8 * MiB, &phys), "phys");
	free0 = free_pages(phys);
	s = new_space(phys, arch);
	other = new_space(phys, arch);
	must(!mmp_cpu_attach(s, &cpu), "cpu");
	a = map_written(s, cpu, PG, false, 1);
	must(mmp_gup(s, a, 1, false, &pfn) == 1, "pin");
	must(!mmp_cpu_detach(cpu), "detach");
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy the pinning space", arch);
	tap_eq(mmp_unpin(other, &pfn, 1), 0, "%s: unpin through another space of the phys", arch);
	tap_eq(counter(other, MMP_C_FOLIO_FREE), 1, "%s: which counts the folio it freed", arch);
	tap_eq(mmp_space_verify(other), 0, "%s: verify", arch);
	tap_eq(mmp_space_destroy(other), 0, "%s: destroy", arch);
	tap_eq(free_pages(phys), free0, "%s: every frame back", arch);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: phys destroyed", arch);
}

static void check_unpin_errors(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	uint64_t a = map_written(s, cpu, 2 * PG, false, 1), pfns[2], bad[2];
	struct mmp_phys *phys = s->phys;
	uint64_t pinned = nr_pinned(phys);

	must(mmp_gup(s, a, 2, true, pfns) == 2, "pin");
	tap_eq(mmp_unpin(NULL, pfns, 2), -EINVAL, "%s: unpin: NULL space", arch);
	tap_eq(mmp_phys_unpin(NULL, pfns, 2), -EINVAL, "%s: phys_unpin: NULL phys", arch);
	tap_eq(mmp_unpin(s, NULL, 2), -EINVAL, "%s: unpin: NULL pfns", arch);
	tap_eq(mmp_phys_unpin(phys, NULL, 2), -EINVAL, "%s: phys_unpin: NULL pfns", arch);
	tap_eq(mmp_unpin(s, NULL, 0), 0, "%s: unpin: nothing", arch);
	tap_eq(mmp_phys_unpin(phys, NULL, 0), 0, "%s: phys_unpin: nothing", arch);
	bad[0] = pfns[0];
	bad[1] = phys->nr_pages;
	tap_eq(mmp_phys_unpin(phys, bad, 2), -EINVAL, "%s: phys_unpin: a frame beyond the phys",
	       arch);
	tap_eq(mmp_phys_unpin(phys, (uint64_t[]){ phys->zero_pfn }, 1), 0,
	       "%s: phys_unpin: the zero page, never pinned, drops nothing", arch);
	bad[1] = pfns[0];
	tap_eq(mmp_phys_unpin(phys, bad, 2), -EINVAL, "%s: phys_unpin: one pin dropped twice",
	       arch);
	tap_eq(nr_pinned(phys), pinned + 2, "%s: a refused unpin unpinned nothing", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the refusals", arch);
	tap_eq(mmp_phys_unpin(phys, pfns, 2), 0, "%s: phys_unpin of a live space's pins", arch);
	tap_eq(mmp_unpin(s, pfns, 1), -EINVAL, "%s: unpin: not pinned any more", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_munmap(s, a, 2 * PG);
}

/* ---- the errors of mmp_gup() and mmp_gup_fast() ------------------------------------------ */

static void check_gup_errors(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	uint64_t a = map_written(s, cpu, 6 * PG, false, 1), pfns[4], ro, top = task_size(s);
	uint64_t pinned = nr_pinned(s->phys);
	unsigned int big[] = { (unsigned int)INT_MAX + 1, UINT_MAX };

	must(!mmp_munmap(s, a + 4 * PG, 2 * PG), "a hole after 4 pages");

	for (unsigned int i = 0; i < ARRAY_SIZE(big); i++) {
		tap_eq(mmp_gup_fast(s, a, big[i], true, pfns), -EINVAL,
		       "%s: gup_fast: nr %u does not fit the int returned: -EINVAL", arch, big[i]);
		tap_eq(mmp_gup(s, a, big[i], true, pfns), -EINVAL,
		       "%s: gup: nr %u does not fit the int returned: -EINVAL", arch, big[i]);
	}
	tap_eq(mmp_gup_fast(NULL, a, 1, true, pfns), -EINVAL, "%s: gup_fast: NULL space", arch);
	tap_eq(mmp_gup(NULL, a, 1, true, pfns), -EINVAL, "%s: gup: NULL space", arch);
	tap_eq(mmp_gup_fast(s, a, 1, true, NULL), -EINVAL, "%s: gup_fast: NULL pfns", arch);
	tap_eq(mmp_gup(s, a, 1, true, NULL), -EINVAL, "%s: gup: NULL pfns", arch);
	tap_eq(mmp_gup_fast(s, a + 1, 1, true, pfns), -EINVAL, "%s: gup_fast: unaligned", arch);
	tap_eq(mmp_gup(s, a + 1, 1, true, pfns), -EINVAL, "%s: gup: unaligned", arch);
	tap_eq(mmp_gup_fast(s, top - PG, 2, true, pfns), -EFAULT,
	       "%s: gup_fast: beyond TASK_SIZE", arch);
	tap_eq(mmp_gup(s, top - PG, 2, true, pfns), -EFAULT, "%s: gup: beyond TASK_SIZE", arch);
	tap_eq(mmp_gup_fast(s, a, 0, true, pfns), 0, "%s: gup_fast: nr 0", arch);
	tap_eq(mmp_gup(s, a, 0, true, pfns), 0, "%s: gup: nr 0", arch);
	tap_eq(mmp_gup(s, a + 2 * PG, 4, true, pfns), -EFAULT, "%s: gup: a page with no VMA", arch);
	ro = map(s, PG, MMP_PROT_READ);
	tap_eq(mmp_gup(s, ro, 1, true, pfns), -EFAULT, "%s: gup: write pin without PROT_WRITE",
	       arch);
	tap_eq(mmp_gup(s, ro, 1, false, pfns), 1, "%s: gup: read pin of PROT_READ", arch);
	must(!mmp_unpin(s, pfns, 1), "unpin");
	tap_eq(mmp_mprotect(s, ro, PG, MMP_PROT_NONE), 0, "%s: PROT_NONE", arch);
	tap_eq(mmp_gup(s, ro, 1, false, pfns), -EFAULT, "%s: gup: read pin of PROT_NONE", arch);
	tap_eq(mmp_gup_fast(s, ro, 1, false, pfns), 0, "%s: gup_fast: PROT_NONE pins nothing",
	       arch);
	/* Short counts are not errors for GUP-fast: it stops where it cannot go on. */
	tap_eq(mmp_gup_fast(s, a + 2 * PG, 4, true, pfns), 2, "%s: gup_fast: stops at the hole",
	       arch);
	must(!mmp_unpin(s, pfns, 2), "unpin");
	tap_eq(nr_pinned(s->phys), pinned, "%s: no failed call kept a pin", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_munmap(s, ro, PG);
	mmp_munmap(s, a, 4 * PG);
}

/*
 * The locked GUP retries without a bound, so every protection must end in a
 * pin or -EFAULT: untouched (zero page, huge zero page) and touched, 4 KiB and THP.
 */
static void check_gup_every_prot(const char *arch, struct mmp_space *s)
{
	for (int huge = 0; huge < 2; huge++) {
		uint64_t len = huge ? PMD_SIZE : PG, a, pfn;
		bool ok = true;

		for (int prot = 0; prot <= (RW | MMP_PROT_EXEC); prot++) {
			bool readable = prot & RW, writable = prot & MMP_PROT_WRITE;

			must(!mmp_mmap(s, huge ? HUGE_HINT : 0, len, prot, 0, &a), "mmap");
			if (huge)
				must(!mmp_madvise(s, a, len, MMP_MADV_HUGEPAGE), "MADV_HUGEPAGE");
			for (int step = 0; step < 3; step++) {
				bool write = step == 1;
				int want = (write ? writable : readable) ? 1 : -EFAULT;
				int n = mmp_gup(s, a, 1, write, &pfn);

				if (n == 1)
					must(!mmp_unpin(s, &pfn, 1), "unpin");
				if (n != want) {
					ok = false;
					printf("# %s%s prot %d %s pin: %d\n", arch, huge ? " THP" : "",
					       prot, write ? "write" : "read", n);
				}
			}
			mmp_munmap(s, a, len);
		}
		tap_ok(ok, "%s%s: gup pins or says -EFAULT for every protection", arch,
		       huge ? " THP" : "");
	}
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
}

/* -ENOMEM: the page must be faulted in and the phys has no frame left. */
static void check_gup_enomem(const char *arch)
{
	struct mmp_phys *phys;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	uint64_t a, pfns[2], n = 0;
	int err = 0;

	must(!mmp_phys_create(4 * MiB, &phys), "phys");
	s = new_space(phys, arch);
	must(!mmp_cpu_attach(s, &cpu), "cpu");
	must(!mmp_mmap(s, 0, 8 * MiB, RW, 0, &a), "mmap");
	while (n < 8 * MiB / PG && !(err = mmp_write(cpu, a + n * PG, &n, sizeof(n))))
		n++;
	must(err == -ENOMEM, "fill the phys");
	tap_eq(mmp_gup(s, a + (n - 1) * PG, 2, true, pfns), -ENOMEM,
	       "%s: gup: no memory for a fault: -ENOMEM", arch);
	tap_eq(nr_pinned(phys), 0, "%s: the page it had pinned was given back", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after -ENOMEM", arch);
	must(!mmp_cpu_detach(cpu), "detach");
	must(!mmp_space_destroy(s), "destroy");
	tap_eq(mmp_phys_destroy(phys), 0, "%s: phys destroyed", arch);
}

struct zapper {
	struct mmp_space *s;
	uint64_t a;
	int stop;
	uint64_t zaps;
};

static void *zap_loop(void *arg)
{
	struct zapper *z = arg;
	struct mmp_cpu *cpu;
	uint64_t one = 1;

	if (mmp_cpu_attach(z->s, &cpu))
		return NULL;
	while (!__atomic_load_n(&z->stop, __ATOMIC_ACQUIRE)) {
		mmp_madvise(z->s, z->a, NPAGES * PG, MMP_MADV_DONTNEED);
		mmp_write(cpu, z->a + (z->zaps % NPAGES) * PG, &one, sizeof(one));
		z->zaps++;
	}
	mmp_cpu_detach(cpu);
	return NULL;
}

/* Pages zapped under the locked GUP: it faults again, never hands the race to the caller. */
static void check_gup_retries_races(const char *arch, struct mmp_space *s, struct mmp_cpu *cpu)
{
	struct zapper z = { .s = s, .a = map_written(s, cpu, NPAGES * PG, false, 1) };
	uint64_t pfns[NPAGES], calls = 0, bad = 0;
	pthread_t th;
	double t0 = now();

	must(!pthread_create(&th, NULL, zap_loop, &z), "zapper thread");
	while (now() - t0 < 0.2 || (!__atomic_load_n(&z.zaps, __ATOMIC_RELAXED) && now() - t0 < 5)) {
		int n = mmp_gup(s, z.a, NPAGES, calls & 1, pfns);

		calls++;
		if (n != NPAGES) {
			if (bad++ < 5)
				printf("# %s: gup under zaps: %d\n", arch, n);
			continue;
		}
		must(!mmp_unpin(s, pfns, n), "unpin");
	}
	__atomic_store_n(&z.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	printf("# %s: %llu locked GUP calls of %u pages against %llu zaps\n", arch,
	       (unsigned long long)calls, NPAGES, (unsigned long long)z.zaps);
	tap_eq(bad, 0, "%s: gup under concurrent MADV_DONTNEED pinned every page every time", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_munmap(s, z.a, NPAGES * PG);
}

int main(void)
{
	const char *env = getenv("MMP_STRESS_SECONDS"), *arch;
	double seconds = env && atof(env) > 0 ? atof(env) : 0.5;
	struct mmp_phys *phys;

	tap_require(mmp_phys_create(PHYS_BYTES, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		struct mmp_space *s = new_space(phys, arch);
		struct mmp_cpu *cpu;

		must(!mmp_cpu_attach(s, &cpu), "cpu");
		check_gup_fast_backs_off_during_fork(arch, s, cpu);
		check_gup_fast_gives_back_pins(arch, s, cpu);
		check_unpin_errors(arch, s, cpu);
		check_gup_errors(arch, s, cpu);
		check_gup_every_prot(arch, s);
		check_gup_retries_races(arch, s, cpu);
		must(!mmp_cpu_detach(cpu), "detach");
		tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);

		stress_fork_gup_fast(arch, false, seconds);
		stress_fork_gup_fast(arch, true, seconds);

		check_pin_outlives_space(arch, false, false);
		check_pin_outlives_space(arch, false, true);
		check_pin_outlives_space(arch, true, false);
		check_pin_outlives_space(arch, true, true);
		check_unpin_through_another_space(arch);

		check_gup_enomem(arch);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "all: phys destroyed");
	return tap_done();
}
