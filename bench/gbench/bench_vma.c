/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmprim-bench rows for VMAs at real-program scale and faults across CPUs:
 *
 *   vma_scale/<placement|fixed>/<VMAs>
 *       a space holding that many 8 KiB mappings, alternating PROT_READ and
 *       PROT_READ|PROT_WRITE so none merge, placed top-down or MAP_FIXED; per
 *       call (user counters, us): mmap of one more, an mprotect that splits
 *       one (mappings in address order; mprotect_random: random ones), munmap
 *       of one, and a read fault in a random one (its VMA lookup)
 *   vma_scale_targets/<placement|fixed>
 *       1k, 30k and 65k VMAs in one run: growth from 1k to 65k per call, the
 *       per-call times at 30k, and a label saying whether the targets are met
 *       (mmap / in-order mprotect split / munmap: growth at most 2x and at
 *       most 3 us at 30k; the random lookups' growth is reported only)
 *   page_fault_threads/<arch>/<CPUs>/<per-VMA lock>
 *       1 or 2 CPUs (threads) write one byte per 4 KiB page of disjoint halves
 *       of one 256 MiB mapping; phys memory touched beforehand (time: the
 *       faults only); faults_per_s
 *   page_fault_threads_scaling/<arch>/<per-VMA lock>
 *       both in one run, alternating: speedup = 2-CPU faults/s over 1-CPU
 *       faults/s (target at least 1.8 with the per-VMA lock). Two readings
 *       beside it: cpu_share_2cpu, the CPU time the two threads got over twice
 *       the wall time (below 1, other work took CPUs from them), and
 *       clear_speedup, the same 1 and 2 threads only zeroing 256 MiB of cold
 *       host memory a 4 KiB page at a time: every fault clears a frame that
 *       cold, so this host's memory bandwidth caps the fault speedup near it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <mmprim/mmprim.h>

#include "bench_vma.h"
#include "common.h"
#include "shim.h"

#define VMA_MAP		(8 * BENCH_KIB)
#define VMA_OPS		256
#define VMA_FIXED_BASE	(1ULL << 40)
#define VMA_PHYS	(64 * BENCH_MIB)
#define R		MMP_PROT_READ
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)

#define PFT_BYTES	(256 * BENCH_MIB)
#define PFT_MAX_CPUS	2

static const long vma_sizes[] = { 1000, 8000, 30000, 65000 };

/*
 * Per-call times are this thread's CPU time: on a machine shared with other
 * work, being descheduled would otherwise land on whichever call ran then.
 */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct vma_pop {
	struct bench_env env;
	uint64_t *addr;		/* the population, in the order mapped */
	int *prot;
	unsigned int n;
	bool fixed;
	unsigned int cursor;	/* the next mapping the in-order mprotect splits */
	uint64_t rng;
};

/* Per-call times of one round, in seconds. */
struct vma_times {
	double mmap, mprotect, munmap, lookup, mprotect_random;
};

static void vma_pop_destroy(struct vma_pop *p)
{
	bench_env_destroy(&p->env);
	free(p->addr);
	free(p->prot);
}

static int vma_pop_create(struct vma_pop *p, unsigned int n, bool fixed)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->n = n;
	p->fixed = fixed;
	p->rng = 0x2545f4914f6cdd1dULL;
	p->addr = calloc(n, sizeof(*p->addr));
	p->prot = calloc(n, sizeof(*p->prot));
	if (!p->addr || !p->prot) {
		free(p->addr);
		free(p->prot);
		return -ENOMEM;
	}
	err = bench_env_create(&p->env, NULL, VMA_PHYS, "generic", 0);
	for (unsigned int i = 0; i < n && !err; i++) {
		p->prot[i] = i & 1 ? R : RW;
		err = mmp_mmap(p->env.space, fixed ? VMA_FIXED_BASE + i * VMA_MAP : 0, VMA_MAP,
			       p->prot[i], fixed ? MMP_MAP_FIXED : 0, &p->addr[i]);
	}
	if (err) {
		vma_pop_destroy(p);
		return err;
	}
	return 0;
}

static unsigned int vma_pick(struct vma_pop *p)
{
	p->rng ^= p->rng << 13;
	p->rng ^= p->rng >> 7;
	p->rng ^= p->rng << 17;
	return p->rng % p->n;
}

/*
 * Split VMA_OPS mappings (their second page to PROT_NONE: a split that merges
 * with nothing) and restore them; the time of the splits per call.
 */
static int vma_split_some(struct vma_pop *p, const unsigned int *pick, double *per_call)
{
	struct mmp_space *s = p->env.space;
	double t0 = cpu_now();
	int err = 0;

	for (int j = 0; j < VMA_OPS && !err; j++)
		err = mmp_mprotect(s, p->addr[pick[j]] + VMA_MAP / 2, VMA_MAP / 2, MMP_PROT_NONE);
	*per_call = (cpu_now() - t0) / VMA_OPS;
	for (int j = 0; j < VMA_OPS && !err; j++)
		err = mmp_mprotect(s, p->addr[pick[j]] + VMA_MAP / 2, VMA_MAP / 2,
				   p->prot[pick[j]]);
	return err;
}

/* VMA_OPS calls of each kind, the space back as it was after; per-call times in @t. */
static int vma_round(struct vma_pop *p, struct vma_times *t)
{
	struct mmp_space *s = p->env.space;
	uint64_t extra[VMA_OPS];
	unsigned int pick[VMA_OPS];
	double t0;
	char c;
	int err = 0;

	/* One more mapping each: below the lowest (placement) or past the last, with holes (fixed). */
	t0 = cpu_now();
	for (int j = 0; j < VMA_OPS && !err; j++)
		err = mmp_mmap(s, p->fixed ? VMA_FIXED_BASE + (p->n + 1 + 2 * j) * VMA_MAP : 0,
			       VMA_MAP, (p->n + j) & 1 ? R : RW, p->fixed ? MMP_MAP_FIXED : 0,
			       &extra[j]);
	t->mmap = (cpu_now() - t0) / VMA_OPS;

	/* Splits in address order, as a program protecting its mappings one by one... */
	for (int j = 0; j < VMA_OPS; j++)
		pick[j] = p->cursor++ % p->n;
	if (!err)
		err = vma_split_some(p, pick, &t->mprotect);
	/* ...and at random mappings: a cold walk of the index (and page tables) each. */
	for (int j = 0; j < VMA_OPS; j++)
		pick[j] = vma_pick(p);
	if (!err)
		err = vma_split_some(p, pick, &t->mprotect_random);

	t0 = cpu_now();
	for (int j = 0; j < VMA_OPS && !err; j++)
		err = mmp_munmap(s, extra[j], VMA_MAP);
	t->munmap = (cpu_now() - t0) / VMA_OPS;

	/* A read fault maps the zero page: the lookup of its VMA is what grows with the count. */
	for (int j = 0; j < VMA_OPS; j++)
		pick[j] = vma_pick(p);
	t0 = cpu_now();
	for (int j = 0; j < VMA_OPS && !err; j++)
		err = mmp_read(p->env.cpu, p->addr[pick[j]], &c, 1);
	t->lookup = (cpu_now() - t0) / VMA_OPS;
	for (int j = 0; j < VMA_OPS && !err; j++)
		err = mmp_madvise(s, p->addr[pick[j]], VMA_MAP, MMP_MADV_DONTNEED);
	return err;
}

static void vma_report(struct mmp_bench_state *st, const struct vma_times *sum, long rounds)
{
	mmp_bench_counter(st, "mmap_us", sum->mmap * 1e6 / rounds);
	mmp_bench_counter(st, "mprotect_split_us", sum->mprotect * 1e6 / rounds);
	mmp_bench_counter(st, "munmap_us", sum->munmap * 1e6 / rounds);
	mmp_bench_counter(st, "lookup_us", sum->lookup * 1e6 / rounds);
	mmp_bench_counter(st, "mprotect_random_us", sum->mprotect_random * 1e6 / rounds);
}

static void bm_vma_scale(struct mmp_bench_state *st, void *arg)
{
	bool fixed = arg != NULL;
	struct vma_times sum = { 0 }, t;
	struct mmp_space_stat ss;
	struct vma_pop p;
	long rounds = 0;
	int err = vma_pop_create(&p, mmp_bench_range(st, 0), fixed);

	if (err) {
		mmp_bench_skip_with_error(st, "populate");
		return;
	}
	while (mmp_bench_keep_running(st)) {
		double t0 = bench_now();

		err = vma_round(&p, &t);
		if (err) {
			mmp_bench_skip_with_error(st, "round");
			break;
		}
		/* The whole round, restoring included: the per-call times are the counters. */
		mmp_bench_set_iteration_time(st, bench_now() - t0);
		sum.mmap += t.mmap;
		sum.mprotect += t.mprotect;
		sum.munmap += t.munmap;
		sum.lookup += t.lookup;
		sum.mprotect_random += t.mprotect_random;
		rounds++;
	}
	if (rounds)
		vma_report(st, &sum, rounds);
	if (!mmp_space_stat(p.env.space, &ss))
		mmp_bench_counter(st, "vmas", (double)ss.nr_vmas);
	vma_pop_destroy(&p);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define TARGET_ROUNDS	9

/* Median per-call times over TARGET_ROUNDS rounds at @n VMAs. */
static int vma_measure(unsigned int n, bool fixed, struct vma_times *med)
{
	double v[5][TARGET_ROUNDS];
	struct vma_times t;
	struct vma_pop p;
	int err = vma_pop_create(&p, n, fixed);

	if (err)
		return err;
	for (int r = 0; r < TARGET_ROUNDS && !err; r++) {
		err = vma_round(&p, &t);
		v[0][r] = t.mmap;
		v[1][r] = t.mprotect;
		v[2][r] = t.munmap;
		v[3][r] = t.lookup;
		v[4][r] = t.mprotect_random;
	}
	vma_pop_destroy(&p);
	if (err)
		return err;
	for (int k = 0; k < 5; k++)
		qsort(v[k], TARGET_ROUNDS, sizeof(double), cmp_double);
	*med = (struct vma_times){ v[0][TARGET_ROUNDS / 2], v[1][TARGET_ROUNDS / 2],
				   v[2][TARGET_ROUNDS / 2], v[3][TARGET_ROUNDS / 2],
				   v[4][TARGET_ROUNDS / 2] };
	return 0;
}

static void bm_vma_targets(struct mmp_bench_state *st, void *arg)
{
	bool fixed = arg != NULL;
	struct vma_times a, b, c;
	double g[3];
	char label[160];
	bool met = true;

	while (mmp_bench_keep_running(st)) {
		double t0 = bench_now();

		if (vma_measure(1000, fixed, &a) || vma_measure(30000, fixed, &b) ||
		    vma_measure(65000, fixed, &c)) {
			mmp_bench_skip_with_error(st, "measure");
			return;
		}
		mmp_bench_set_iteration_time(st, bench_now() - t0);
	}
	g[0] = c.mmap / a.mmap;
	g[1] = c.mprotect / a.mprotect;
	g[2] = c.munmap / a.munmap;
	for (int k = 0; k < 3; k++)
		met &= g[k] <= 2.0;
	met &= b.mmap <= 3e-6 && b.mprotect <= 3e-6 && b.munmap <= 3e-6;
	mmp_bench_counter(st, "growth_mmap", g[0]);
	mmp_bench_counter(st, "growth_mprotect_split", g[1]);
	mmp_bench_counter(st, "growth_munmap", g[2]);
	/* Random targets: cache misses grow with the working set; reported, not targeted. */
	mmp_bench_counter(st, "growth_lookup", c.lookup / a.lookup);
	mmp_bench_counter(st, "growth_mprotect_random", c.mprotect_random / a.mprotect_random);
	mmp_bench_counter(st, "mmap_us_30k", b.mmap * 1e6);
	mmp_bench_counter(st, "mprotect_split_us_30k", b.mprotect * 1e6);
	mmp_bench_counter(st, "munmap_us_30k", b.munmap * 1e6);
	snprintf(label, sizeof(label), "targets %s (growth 1k->65k <= 2x, <= 3 us at 30k)",
		 met ? "met" : "MISSED");
	mmp_bench_set_label(st, label);
}

/* ---- page faults from several CPUs ----------------------------------------------- */

struct pft {
	struct mmp_space *space;
	pthread_barrier_t start, done;
	pthread_t th[PFT_MAX_CPUS];
	uint64_t addr;
	uint8_t *clear_buf;	/* host memory for clear rounds (NULL: none) */
	int cpus;		/* working this round */
	int clearing;		/* this round zeroes clear_buf instead of faulting */
	int quit;
	int err;
	double cpu_s[PFT_MAX_CPUS];	/* each worker's CPU time in faults, summed */
};

struct pft_worker {
	struct pft *p;
	int id;
};

static struct pft_worker pft_workers[PFT_MAX_CPUS];

static void *pft_worker(void *arg)
{
	struct pft_worker *w = arg;
	struct pft *p = w->p;
	struct mmp_cpu *cpu = NULL;
	static const char one = 1;

	if (mmp_cpu_attach(p->space, &cpu))
		__atomic_store_n(&p->err, -ENOMEM, __ATOMIC_RELAXED);
	for (;;) {
		uint64_t len, start;

		pthread_barrier_wait(&p->start);
		if (__atomic_load_n(&p->quit, __ATOMIC_ACQUIRE))
			break;
		if (w->id < p->cpus && !p->err) {
			double t0 = cpu_now();

			len = PFT_BYTES / p->cpus;
			if (p->clearing) {
				uint8_t *buf = p->clear_buf + w->id * len;

				/* clear_page() of a cold frame, as each fault does */
				for (uint64_t off = 0; off < len; off += MMP_PAGE_SIZE)
					memset(buf + off, 0, MMP_PAGE_SIZE);
				__asm__ volatile("" : : "r"(buf) : "memory");
				p->cpu_s[w->id] += cpu_now() - t0;
				goto done;
			}
			start = p->addr + w->id * len;
			for (uint64_t off = 0; off < len; off += MMP_PAGE_SIZE)
				if (mmp_write(cpu, start + off, &one, 1)) {
					__atomic_store_n(&p->err, -EFAULT, __ATOMIC_RELAXED);
					break;
				}
			p->cpu_s[w->id] += cpu_now() - t0;
		}
done:
		pthread_barrier_wait(&p->done);
	}
	if (cpu)
		mmp_cpu_detach(cpu);
	return NULL;
}

static double pft_round(struct pft *p, int cpus, double *cpu_s);
static void pft_stop(struct pft *p);

/* A space with the workers waiting, after one warm-up round; 0 or nonzero (nothing to stop). */
static int pft_start(struct pft *p, struct mmp_phys *phys, const char *arch, long per_vma_lock)
{
	struct mmp_space_config cfg = { .arch = arch };
	int err;

	memset(p, 0, sizeof(*p));
	err = mmp_space_create(phys, &cfg, &p->space);
	if (!err)
		err = mmp_space_set_opt(p->space, MMP_OPT_PER_VMA_LOCK, per_vma_lock);
	if (err)
		return err;
	pthread_barrier_init(&p->start, NULL, PFT_MAX_CPUS + 1);
	pthread_barrier_init(&p->done, NULL, PFT_MAX_CPUS + 1);
	for (int i = 0; i < PFT_MAX_CPUS; i++) {
		pft_workers[i] = (struct pft_worker){ p, i };
		pthread_create(&p->th[i], NULL, pft_worker, &pft_workers[i]);
	}
	/* One untimed round: every frame touched on the host before anything is timed. */
	if (pft_round(p, 1, NULL) < 0) {
		pft_stop(p);
		return -1;
	}
	return 0;
}

static void pft_stop(struct pft *p)
{
	__atomic_store_n(&p->quit, 1, __ATOMIC_RELEASE);
	pthread_barrier_wait(&p->start);
	for (int i = 0; i < PFT_MAX_CPUS; i++)
		pthread_join(p->th[i], NULL);
	pthread_barrier_destroy(&p->start);
	pthread_barrier_destroy(&p->done);
	mmp_space_destroy(p->space);
	if (p->clear_buf)
		munmap(p->clear_buf, PFT_BYTES);
}

/* Wake the workers for one round with @cpus of them working; its wall time. */
static double pft_run(struct pft *p, int cpus, double *cpu_s)
{
	double t0, t, before = 0;

	p->cpus = cpus;
	for (int i = 0; i < PFT_MAX_CPUS; i++)
		before += p->cpu_s[i];
	t0 = bench_now();
	pthread_barrier_wait(&p->start);
	pthread_barrier_wait(&p->done);
	t = bench_now() - t0;
	if (cpu_s) {
		*cpu_s = -before;
		for (int i = 0; i < PFT_MAX_CPUS; i++)
			*cpu_s += p->cpu_s[i];
	}
	return t;
}

/*
 * One round: map, fault with @cpus CPUs (timed), unmap. Seconds, or < 0 on
 * error; *@cpu_s, if given, gets the CPU time the workers spent faulting.
 */
static double pft_round(struct pft *p, int cpus, double *cpu_s)
{
	double t;

	if (mmp_mmap(p->space, 0, PFT_BYTES, RW, 0, &p->addr))
		return -1;
	t = pft_run(p, cpus, cpu_s);
	if (mmp_munmap(p->space, p->addr, PFT_BYTES) || p->err)
		return -1;
	return t;
}

/* A round of clearing only: @cpus threads zero their share of clear_buf. */
static double pft_clear_round(struct pft *p, int cpus, double *cpu_s)
{
	double t;

	p->clearing = 1;
	t = pft_run(p, cpus, cpu_s);
	p->clearing = 0;
	return t;
}

/* mmprim-bench's phys: its frames are touched once and stay host-resident. */
static struct mmp_phys *pft_phys;

static void bm_page_fault_threads(struct mmp_bench_state *st, void *arg)
{
	int cpus = mmp_bench_range(st, 0);
	struct mmp_counters before, after, d;
	uint64_t pages = 0;
	double total = 0, cpu_total = 0;
	struct pft p;

	if (pft_start(&p, pft_phys, arg, mmp_bench_range(st, 1))) {
		mmp_bench_skip_with_error(st, "setup or warm-up");
		return;
	}
	mmp_space_counters(p.space, &before);
	while (mmp_bench_keep_running(st)) {
		double c, t = pft_round(&p, cpus, &c);

		if (t < 0) {
			mmp_bench_skip_with_error(st, "round");
			break;
		}
		mmp_bench_set_iteration_time(st, t);
		total += t;
		cpu_total += c;
		pages += PFT_BYTES / MMP_PAGE_SIZE;
	}
	mmp_space_counters(p.space, &after);
	bench_counters_sub(&d, &after, &before);
	if (pages) {
		mmp_bench_counter(st, "faults_per_s", pages / total);
		mmp_bench_counter(st, "cpu_ns_per_fault", cpu_total * 1e9 / pages);
		mmp_bench_counter_avg(st, "vma_lock_success", d.v[MMP_C_VMA_LOCK_SUCCESS]);
		mmp_bench_counter_avg(st, "vma_lock_abort", d.v[MMP_C_VMA_LOCK_ABORT]);
		mmp_bench_counter_avg(st, "vma_lock_retry", d.v[MMP_C_VMA_LOCK_RETRY]);
	}
	pft_stop(&p);
}

static void bm_page_fault_scaling(struct mmp_bench_state *st, void *arg)
{
	double t1 = 0, t2 = 0, c1 = 0, c2 = 0, z1 = 0, z2 = 0;
	struct pft p;
	void *buf;

	if (pft_start(&p, pft_phys, arg, mmp_bench_range(st, 0))) {
		mmp_bench_skip_with_error(st, "setup or warm-up");
		return;
	}
	/* Backed like phys (no THP), and touched so no clear round takes a host fault. */
	buf = mmap(NULL, PFT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		pft_stop(&p);
		mmp_bench_skip_with_error(st, "clear buffer");
		return;
	}
	p.clear_buf = buf;
	memset(buf, 1, PFT_BYTES);
	while (mmp_bench_keep_running(st)) {
		double ca, cb, a = pft_round(&p, 1, &ca), b = pft_round(&p, 2, &cb);

		if (a < 0 || b < 0) {
			mmp_bench_skip_with_error(st, "round");
			break;
		}
		mmp_bench_set_iteration_time(st, a + b);
		t1 += a;
		t2 += b;
		c1 += ca;
		c2 += cb;
		z1 += pft_clear_round(&p, 1, NULL);
		z2 += pft_clear_round(&p, 2, NULL);
	}
	if (t1 > 0 && t2 > 0) {
		double pages = (double)mmp_bench_iterations_done(st) * (PFT_BYTES / MMP_PAGE_SIZE);

		mmp_bench_counter(st, "faults_per_s_1cpu", pages / t1);
		mmp_bench_counter(st, "faults_per_s_2cpu", pages / t2);
		mmp_bench_counter(st, "speedup", t1 / t2);
		/*
		 * CPU time per fault, 1 CPU against 2: what two CPUs of their own
		 * would gain; a shared hot line or a spinning lock shows here even
		 * when other work takes the machine's CPUs.
		 */
		mmp_bench_counter(st, "cpu_ns_per_fault_1cpu", c1 * 1e9 / pages);
		mmp_bench_counter(st, "cpu_ns_per_fault_2cpu", c2 * 1e9 / pages);
		mmp_bench_counter(st, "speedup_cpu_bound", 2 * c1 / c2);
		mmp_bench_counter(st, "cpu_share_2cpu", c2 / (2 * t2));
		mmp_bench_counter(st, "clear_speedup", z1 / z2);
		mmp_bench_set_label(st, t1 / t2 >= 1.8 ? "target met (2 CPUs >= 1.8x)"
							: "target MISSED (2 CPUs < 1.8x)");
	}
	pft_stop(&p);
}

int vma_register_benches(struct mmp_phys *phys)
{
	char name[128];
	struct mmp_bench *b;

	for (int fixed = 0; fixed <= 1; fixed++) {
		const char *how = fixed ? "fixed" : "placement";
		void *arg = fixed ? (void *)1 : NULL;

		snprintf(name, sizeof(name), "vma_scale/%s", how);
		b = mmp_bench_register(name, bm_vma_scale, arg);
		if (!b)
			return -ENOMEM;
		for (unsigned int i = 0; i < sizeof(vma_sizes) / sizeof(vma_sizes[0]); i++)
			mmp_bench_arg(b, vma_sizes[i]);
		mmp_bench_unit(mmp_bench_use_manual_time(b), MMP_BENCH_US);

		snprintf(name, sizeof(name), "vma_scale_targets/%s", how);
		b = mmp_bench_register(name, bm_vma_targets, arg);
		if (!b)
			return -ENOMEM;
		mmp_bench_unit(mmp_bench_iterations(mmp_bench_use_manual_time(b), 1), MMP_BENCH_MS);
	}

	pft_phys = phys;
	for (int i = 0; i < mmp_arch_count(); i++) {
		const char *arch = mmp_arch_name(i);

		snprintf(name, sizeof(name), "page_fault_threads/%s", arch);
		b = mmp_bench_register(name, bm_page_fault_threads, (void *)arch);
		if (!b)
			return -ENOMEM;
		for (long lock = 0; lock <= 1; lock++)
			for (long cpus = 1; cpus <= PFT_MAX_CPUS; cpus++)
				mmp_bench_args(b, cpus, lock);
		mmp_bench_unit(mmp_bench_use_manual_time(b), MMP_BENCH_MS);

		snprintf(name, sizeof(name), "page_fault_threads_scaling/%s", arch);
		b = mmp_bench_register(name, bm_page_fault_scaling, (void *)arch);
		if (!b)
			return -ENOMEM;
		mmp_bench_unit(mmp_bench_use_manual_time(mmp_bench_arg(mmp_bench_arg(b, 0), 1)),
			       MMP_BENCH_MS);
	}
	return 0;
}
