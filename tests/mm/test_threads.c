/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Several host threads, each a simulated CPU of one space, map, write, check,
 * split, protect, zap and unmap private regions while all of them write
 * disjoint slices of one shared THP region, so TLB shootdowns hit CPUs in the
 * middle of their accesses. One thread forks the space now and then and checks
 * that the child holds a consistent snapshot. At the end: no check failed,
 * verify passes, the TLB sanitizer saw nothing, IPIs were sent (checked on
 * x86_64), and every frame went back to the phys. Runs on every back end.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <mmprim/mmprim.h>

#include "arch.h"
#include "stress.h"
#include "tap.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define PG  MMP_PAGE_SIZE
#define RW  (MMP_PROT_READ | MMP_PROT_WRITE)

#define NR_THREADS 4
/* Iterations per thread, shared by the back ends so the run stays under ~10 s with ASan. */
#ifndef ITERS_TOTAL
#define ITERS_TOTAL 750 /* -DITERS_TOTAL=7500 for a longer soak */
#endif
#define MIN_ITERS   150
#define FORK_EVERY  20
#define PHYS_BYTES  (128 * MiB)
#define SHARED_LEN  (2 * MiB) /* one PMD: a THP all threads write */
#define SLICE_PAGES (SHARED_LEN / PG / NR_THREADS)
#define CHUNK_PAGES 16 /* written per iteration, and per mmp_write */
#define MAX_MSGS    30
/*
 * Each thread maps its regions inside its own window of address space: a hole
 * it punches is never filled by another thread's mapping, so "unmapped reads
 * fault" holds. Windows are not PMD multiples: neighbours share PTE tables.
 */
#define WIN_LEN	 (4 * MiB + 64 * KiB)

/* A quarter of the way up the space (1 GiB aligned): far below any back end's mmap base. */
static uint64_t win_base(const struct mmp_space *s)
{
	uint64_t ts = 0;

	mmp_space_task_size(s, &ts);
	return ts / 4 & ~((1ull << 30) - 1);
}

struct run {
	const char *arch;
	struct mmp_space *s;
	uint64_t shared;
	pthread_barrier_t start;
};

struct worker {
	struct run *run;
	int tid;
	pthread_t thread;
	struct mmp_cpu *cpu;
	uint64_t rng;
	unsigned long checks, failed, forks;
	uint32_t slice_tag[SLICE_PAGES]; /* what each page of our slice holds */
	uint64_t buf[CHUNK_PAGES * PG / 8];
};

static uint32_t iters;

/* Count a check; report a failure as a TAP comment (threads cannot emit TAP points). */
static bool check(struct worker *w, bool cond, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool check(struct worker *w, bool cond, const char *fmt, ...)
{
	char prefix[80];
	va_list ap;

	w->checks++;
	if (cond)
		return true;
	w->failed++;
	snprintf(prefix, sizeof(prefix), "%s thread %d: ", w->run->arch, w->tid);
	va_start(ap, fmt);
	stress_vnote(MAX_MSGS, prefix, fmt, ap);
	va_end(ap);
	return false;
}

static uint64_t rnd(struct worker *w)
{
	return xorshift64(&w->rng);
}

/*
 * Word @i of page @page written by thread @tid with @tag. Every word names its
 * writer and tag, so a torn or misplaced page is told apart from a stale one.
 */
static uint64_t word(int tid, uint32_t tag, uint64_t page, size_t i)
{
	return (uint64_t)(tid + 1) << 60 | (uint64_t)tag << 32 | (page & 0xffff) << 12 | i;
}

static void fill_buf(struct worker *w, int tid, uint32_t tag, uint64_t page, uint64_t n)
{
	for (uint64_t p = 0; p < n; p++)
		for (size_t i = 0; i < PG / 8; i++)
			w->buf[p * PG / 8 + i] = word(tid, tag, page + p, i);
}

/* Write pages [first, first + n) of the range at @base with @tag, CHUNK_PAGES at a time. */
static int write_pages(struct worker *w, struct mmp_cpu *cpu, uint64_t base, uint64_t first,
		       uint64_t n, uint32_t tag)
{
	while (n) {
		uint64_t k = n < CHUNK_PAGES ? n : CHUNK_PAGES;
		int err;

		fill_buf(w, w->tid, tag, first, k);
		err = mmp_write(cpu, base + first * PG, w->buf, k * PG);
		if (err)
			return err;
		first += k;
		n -= k;
	}
	return 0;
}

/* Index of the first wrong word of pages [first, first + n), -1 if all hold @tag (0: zeros). */
static long verify_pages(struct worker *w, struct mmp_cpu *cpu, uint64_t base, uint64_t first,
			 uint64_t n, int tid, uint32_t tag, int *err)
{
	*err = 0;
	while (n) {
		uint64_t k = n < CHUNK_PAGES ? n : CHUNK_PAGES;

		*err = mmp_read(cpu, base + first * PG, w->buf, k * PG);
		if (*err)
			return 0;
		for (uint64_t p = 0; p < k; p++)
			for (size_t i = 0; i < PG / 8; i++)
				if (w->buf[p * PG / 8 + i] !=
				    (tag ? word(tid, tag, first + p, i) : 0))
					return (long)((first + p) * (PG / 8) + i);
		first += k;
		n -= k;
	}
	return -1;
}

/* Cheap check of pages [first, first + n): their first and last word. */
static bool sample_pages(struct mmp_cpu *cpu, uint64_t base, uint64_t first, uint64_t n, int tid,
			 uint32_t tag)
{
	for (uint64_t p = first; p < first + n; p++) {
		uint64_t a, b;

		if (mmp_read(cpu, base + p * PG, &a, 8) ||
		    mmp_read(cpu, base + p * PG + PG - 8, &b, 8))
			return false;
		if (a != (tag ? word(tid, tag, p, 0) : 0) ||
		    b != (tag ? word(tid, tag, p, PG / 8 - 1) : 0))
			return false;
	}
	return true;
}

/* ---- the shared region -------------------------------------------------------------- */

static uint64_t slice_base(struct run *r, int tid)
{
	return r->shared + (uint64_t)tid * SLICE_PAGES * PG;
}

/* Write the next chunk of our slice and read it back. */
static void shared_step(struct worker *w, uint32_t tag)
{
	uint64_t first = (tag % (SLICE_PAGES / CHUNK_PAGES)) * CHUNK_PAGES;
	uint64_t base = slice_base(w->run, w->tid);
	long bad;
	int err;

	err = write_pages(w, w->cpu, base, first, CHUNK_PAGES, tag);
	if (!check(w, !err, "shared write of pages %llu+: %s", (unsigned long long)first,
		   mmp_strerror(err)))
		return;
	for (uint64_t p = first; p < first + CHUNK_PAGES; p++)
		w->slice_tag[p] = tag;
	bad = verify_pages(w, w->cpu, base, first, CHUNK_PAGES, w->tid, tag, &err);
	check(w, !err && bad < 0, "shared read-back: err %s, word %ld", mmp_strerror(err), bad);
}

/* Our whole slice holds what we wrote last, page by page. */
static bool slice_intact(struct worker *w, struct mmp_cpu *cpu)
{
	uint64_t base = slice_base(w->run, w->tid);

	for (uint64_t p = 0; p < SLICE_PAGES; p++) {
		int err;

		if (verify_pages(w, cpu, base, p, 1, w->tid, w->slice_tag[p], &err) >= 0 || err)
			return false;
	}
	return true;
}

/*
 * Another thread's slice as the child sees it: each page is zero or one whole
 * write of its owner (a write is atomic against the fork's TLB flush page by page).
 */
static bool slice_consistent(struct worker *w, struct mmp_cpu *cpu, int owner)
{
	uint64_t base = slice_base(w->run, owner);

	for (uint64_t p = 0; p < SLICE_PAGES; p++) {
		uint64_t *v = w->buf;
		uint32_t tag;

		if (mmp_read(cpu, base + p * PG, v, PG))
			return false;
		tag = (uint32_t)(v[0] >> 32) & 0x0fffffff;
		for (size_t i = 0; i < PG / 8; i++)
			if (v[i] != (v[0] ? word(owner, tag, p, i) : 0))
				return false;
	}
	return true;
}

/* ---- fork ------------------------------------------------------------------------------ */

static void fork_step(struct worker *w, uint64_t region, uint64_t npages, uint32_t tag)
{
	struct mmp_space *child;
	struct mmp_cpu *ccpu;
	bool ok;
	long bad;
	int err;

	err = mmp_fork(w->run->s, &child);
	if (!check(w, !err, "fork: %s", mmp_strerror(err)))
		return;
	w->forks++;
	err = mmp_cpu_attach(child, &ccpu);
	if (!check(w, !err, "attach to the child: %s", mmp_strerror(err))) {
		mmp_space_destroy(child);
		return;
	}
	check(w, slice_intact(w, ccpu), "child: our slice differs from the parent's at fork");
	bad = verify_pages(w, ccpu, region, 0, npages, w->tid, tag, &err);
	check(w, !err && bad < 0, "child: our region differs (err %s, word %ld)", mmp_strerror(err),
	      bad);
	for (int t = 0; t < NR_THREADS; t++)
		if (t != w->tid)
			check(w, slice_consistent(w, ccpu, t),
			      "child: slice of thread %d has a torn page", t);

	/* Parent writes now copy: the child keeps its snapshot. */
	err = write_pages(w, w->cpu, slice_base(w->run, w->tid), 0, SLICE_PAGES, tag | 0x8000000);
	ok = !err && slice_intact(w, ccpu);
	check(w, ok, "child: parent's write after fork leaked into the child (%s)",
	      mmp_strerror(err));
	for (uint64_t p = 0; p < SLICE_PAGES; p++)
		w->slice_tag[p] = tag | 0x8000000;
	check(w, slice_intact(w, w->cpu), "parent: slice after its post-fork write");
	err = mmp_write(ccpu, region, &w->rng, 8);
	check(w, !err, "child: write to its copy of our region: %s", mmp_strerror(err));
	check(w, sample_pages(w->cpu, region, 0, 1, w->tid, tag),
	      "parent: region changed by the child's write");

	err = mmp_space_verify(child);
	check(w, !err, "verify with a child, others running: %s", mmp_strerror(err));
	check(w, !mmp_cpu_detach(ccpu), "detach from the child");
	err = mmp_space_destroy(child);
	check(w, !err, "destroy the child: %s", mmp_strerror(err));
}

/* ---- one worker ------------------------------------------------------------------------- */

static const uint64_t sizes[] = {
	64 * KiB, 128 * KiB, 256 * KiB, 512 * KiB, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB,
};

/* Split, protect or zap part of the region, and check what each part holds after. */
static void partial_op(struct worker *w, uint64_t a, uint64_t np, uint32_t tag)
{
	struct mmp_space *s = w->run->s;
	uint64_t lo = rnd(w) % np, n = 1 + rnd(w) % (np - lo), hi = lo + n, v;
	int op = rnd(w) % 3, err;

	switch (op) {
	case 0:
		err = mmp_munmap(s, a + lo * PG, n * PG);
		check(w, !err, "partial munmap: %s", mmp_strerror(err));
		check(w,
		      mmp_read(w->cpu, a + lo * PG, &v, 8) == -EFAULT &&
			      mmp_read(w->cpu, a + (hi - 1) * PG + PG - 8, &v, 8) == -EFAULT,
		      "read of an unmapped part does not fault");
		break;
	case 1:
		err = mmp_mprotect(s, a + lo * PG, n * PG, MMP_PROT_READ);
		check(w, !err, "mprotect read-only: %s", mmp_strerror(err));
		check(w, mmp_write(w->cpu, a + (hi - 1) * PG, w->buf, 8) == -EFAULT,
		      "write to a read-only part does not fault");
		check(w, sample_pages(w->cpu, a, lo, n, w->tid, tag), "read-only part changed");
		err = mmp_mprotect(s, a + lo * PG, n * PG, RW);
		check(w, !err, "mprotect back: %s", mmp_strerror(err));
		err = write_pages(w, w->cpu, a, lo, 1, tag);
		check(w, !err, "write after mprotect back: %s", mmp_strerror(err));
		break;
	default:
		err = mmp_madvise(s, a + lo * PG, n * PG, MMP_MADV_DONTNEED);
		check(w, !err, "MADV_DONTNEED: %s", mmp_strerror(err));
		check(w, sample_pages(w->cpu, a, lo, n, w->tid, 0),
		      "MADV_DONTNEED'd pages [%llu, %llu) of %llu do not read zero",
		      (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)np);
		break;
	}
	check(w,
	      sample_pages(w->cpu, a, 0, lo, w->tid, tag) &&
		      sample_pages(w->cpu, a, hi, np - hi, w->tid, tag),
	      "op %d on pages [%llu, %llu) of %llu changed the rest", op, (unsigned long long)lo,
	      (unsigned long long)hi, (unsigned long long)np);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	int err;

	err = mmp_cpu_attach(r->s, &w->cpu);
	pthread_barrier_wait(&r->start);
	if (!check(w, !err, "attach: %s", mmp_strerror(err)))
		return NULL;

	for (uint32_t it = 1; it <= iters; it++) {
		uint32_t tag = it;
		uint64_t len = sizes[rnd(w) % (sizeof(sizes) / sizeof(sizes[0]))], a = 0,
			 np = len / PG;
		int flags = rnd(w) % 8 == 0 ? MMP_MAP_POPULATE : 0;
		bool huge = rnd(w) % 2, read_first = rnd(w) % 4 == 0;
		long bad;

		uint64_t want =
			win_base(w->run->s) + w->tid * WIN_LEN + rnd(w) % ((WIN_LEN - len) / PG + 1) * PG;
		static const int place[] = { 0, MMP_MAP_FIXED, MMP_MAP_FIXED_NOREPLACE };

		/* A free hint is honoured as MAP_FIXED* is: the region lands at @want. */
		flags |= place[rnd(w) % 3];
		err = mmp_mmap(r->s, want, len, RW, flags, &a);
		if (!check(w, !err && a == want, "mmap %llu at %#llx: %s, at %#llx",
			   (unsigned long long)len, (unsigned long long)want, mmp_strerror(err),
			   (unsigned long long)a))
			continue;
		if (huge) {
			err = mmp_madvise(r->s, a, len, MMP_MADV_HUGEPAGE);
			check(w, !err, "MADV_HUGEPAGE: %s", mmp_strerror(err));
		}
		/* A fresh region reads zero (the zero page or huge zero folio on a read fault). */
		if (read_first)
			check(w, sample_pages(w->cpu, a, 0, np, w->tid, 0),
			      "fresh region not zero");
		err = write_pages(w, w->cpu, a, 0, np, tag);
		check(w, !err, "write region: %s", mmp_strerror(err));
		bad = verify_pages(w, w->cpu, a, 0, np, w->tid, tag, &err);
		check(w, !err && bad < 0, "region read-back: err %s, word %ld", mmp_strerror(err),
		      bad);

		shared_step(w, tag);
		if (w->tid == 0 && it % FORK_EVERY == 0)
			fork_step(w, a, np, tag);
		partial_op(w, a, np, tag);
		if (rnd(w) % 16 == 0)
			check(w, !mmp_cpu_flush_tlb(w->cpu), "flush_tlb");

		err = mmp_munmap(r->s, a, len);
		check(w, !err, "munmap region: %s", mmp_strerror(err));
		check(w, mmp_read(w->cpu, a, &w->buf[0], 8) == -EFAULT,
		      "read after munmap does not fault");
	}
	check(w, slice_intact(w, w->cpu), "shared slice at the end");
	err = mmp_cpu_detach(w->cpu);
	check(w, !err, "detach: %s", mmp_strerror(err));
	return NULL;
}

/* ---- one back end ------------------------------------------------------------------------- */

static void run_arch(const char *arch)
{
	static struct worker workers[NR_THREADS];
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct mmp_phys_stat before, after;
	struct mmp_phys *phys;
	struct mmp_counters c;
	struct run r = { .arch = arch };
	unsigned long forks = 0;
	long opt = -1;
	double t0 = now();
	uint64_t lost;

	tap_require(!mmp_phys_create(PHYS_BYTES, &phys), "%s: phys_create", arch);
	tap_require(!mmp_phys_stat(phys, &before), "%s: phys_stat", arch);
	tap_require(!mmp_space_create(phys, &cfg, &r.s), "%s: space_create", arch);
	tap_require(!mmp_space_set_thp(r.s, 9, MMP_THP_MADVISE) &&
			    !mmp_space_set_thp(r.s, 4, MMP_THP_ALWAYS),
		    "%s: THP order 9 madvise, order 4 always", arch);
	tap_require(!mmp_mmap(r.s, 0, SHARED_LEN, RW, 0, &r.shared) && !(r.shared % SHARED_LEN) &&
			    !mmp_madvise(r.s, r.shared, SHARED_LEN, MMP_MADV_HUGEPAGE),
		    "%s: shared THP region", arch);
	pthread_barrier_init(&r.start, NULL, NR_THREADS);

	for (int t = 0; t < NR_THREADS; t++) {
		struct worker *w = &workers[t];

		memset(w, 0, sizeof(*w));
		w->run = &r;
		w->tid = t;
		w->rng = 0x9e3779b97f4a7c15ull * (t + 1);
		tap_require(!pthread_create(&w->thread, NULL, worker_main, w), "%s: thread %d",
			    arch, t);
	}
	for (int t = 0; t < NR_THREADS; t++) {
		struct worker *w = &workers[t];

		pthread_join(w->thread, NULL);
		tap_ok(w->failed == 0 && w->checks > 0, "%s: thread %d: %lu checks, %lu failed",
		       arch, t, w->checks, w->failed);
		forks += w->forks;
	}
	pthread_barrier_destroy(&r.start);

	tap_ok(forks == iters / FORK_EVERY, "%s: %lu forks while the others ran", arch, forks);
	tap_eq(mmp_space_verify(r.s), 0, "%s: verify after the run", arch);
	tap_ok(!mmp_space_get_opt(r.s, MMP_OPT_TLB_SANITIZER, &opt) && opt == 1,
	       "%s: the TLB sanitizer was on", arch);
	tap_require(!mmp_space_counters(r.s, &c), "%s: counters", arch);
	tap_eq(c.v[MMP_C_TLB_SANITIZER], 0, "%s: the TLB sanitizer saw no stale translation", arch);
	/* Shootdowns by IPI, where the back end does not broadcast its TLB invalidations. */
	if (!mmp_arch_find(arch)->tlbi_broadcast)
		tap_ok(c.v[MMP_C_TLB_IPI] > 0, "%s: %llu shootdown IPIs", arch,
		       (unsigned long long)c.v[MMP_C_TLB_IPI]);
	/*
	 * The run exercised what it claims: PMD THPs, order-4 mTHPs, splits, COW
	 * (a write to a THP a child shares splits it while the others write it).
	 */
	tap_ok(c.v[MMP_C_FAULT_HUGE_ANON] > 0 && c.v[MMP_C_FOLIO_ALLOC_O4] > 0 &&
		       c.v[MMP_C_PMD_SPLIT] > 0 && c.v[MMP_C_FAULT_COW] > 0 &&
		       c.v[MMP_C_FAULT_HUGE_COW] == 0,
	       "%s: THP faults %llu, order-4 folios %llu, PMD splits %llu, COWs %llu, no huge COW",
	       arch, (unsigned long long)c.v[MMP_C_FAULT_HUGE_ANON],
	       (unsigned long long)c.v[MMP_C_FOLIO_ALLOC_O4],
	       (unsigned long long)c.v[MMP_C_PMD_SPLIT],
	       (unsigned long long)c.v[MMP_C_FAULT_COW]);
	printf("# %s: ipis %llu, tlb flushes range %llu all %llu, COW %llu, spurious faults %llu\n",
	       arch, (unsigned long long)c.v[MMP_C_TLB_IPI],
	       (unsigned long long)c.v[MMP_C_TLB_FLUSH_RANGE],
	       (unsigned long long)c.v[MMP_C_TLB_FLUSH_ALL],
	       (unsigned long long)c.v[MMP_C_FAULT_COW],
	       (unsigned long long)c.v[MMP_C_FAULT_SPURIOUS]);

	tap_eq(mmp_munmap(r.s, r.shared, SHARED_LEN), 0, "%s: munmap the shared region", arch);
	tap_eq(mmp_space_destroy(r.s), 0, "%s: space_destroy", arch);
	tap_require(!mmp_phys_stat(phys, &after), "%s: phys_stat", arch);
	/* The huge zero folio stays once made; every other frame comes back. */
	lost = before.free_pages - after.free_pages;
	tap_ok(after.free_pages <= before.free_pages && (lost == 0 || lost == 512),
	       "%s: free frames back: %llu before, %llu after", arch,
	       (unsigned long long)before.free_pages, (unsigned long long)after.free_pages);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: phys_destroy", arch);
	printf("# %s: %.2f s\n", arch, now() - t0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	iters = ITERS_TOTAL / mmp_arch_count();
	if (iters < MIN_ITERS)
		iters = MIN_ITERS;
	printf("# %u iterations per thread and back end\n", iters);
	for (int i = 0; i < mmp_arch_count(); i++)
		run_arch(mmp_arch_name(i));
	return tap_done();
}
