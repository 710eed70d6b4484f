/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-VMA locks on the fault path against writers of neighbouring VMAs. One
 * thread with a CPU write-faults the middle VMA X of each slot, [A | X | B],
 * again and again (MADV_DONTNEED empties it between rounds); another changes
 * the slots without a CPU: mprotect that merges X into its neighbours and
 * splits it out again, mprotect across the A|X boundary, munmap and re-mmap of
 * X's tail, mremap of X's tail away and back, munmap of X (its anon_vma goes)
 * and mmap again. After every change the mutator
 * verifies the space (which stops faults under VMA locks too): no entry may
 * sit outside a VMA, be writable in a read-only one, or be missed by the
 * reverse map.
 *
 * Then the window the VMA lock closes, forced on the same back ends: a write
 * fault in X's tail is held by a debug hook once it has its VMA
 * (MMP_DEBUG_FAULT_VMA) while the main thread unmaps that tail (X is split,
 * the tail goes); then the fault goes on. Under the VMA lock the munmap waits
 * for the fault (the hook lets the fault go where it starts to wait,
 * MMP_DEBUG_VMA_WRITE_WAIT) and unmaps the page it mapped; with
 * MMP_DEBUG_SKIP_VMA_LOCK (a fault uses the VMA it found under RCU without
 * locking it) the fault maps the page through X as it was, where no VMA is
 * left, and verify must report it, every time. No timing, no fork: it runs
 * under qemu-user too.
 *
 * Duration: MMP_STRESS_SECONDS per back end (default 0.5).
 */
#include <pthread.h>
#include <time.h>

#include "mm.h"
#include "park.h"
#include "stress.h"
#include "util.h"

#define PG		MMP_PAGE_SIZE
#define R		MMP_PROT_READ
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define WIN_BASE	0x30000000000ULL
#define SCRATCH		0x38000000000ULL
#define SLOTS		8
#define SLOT_PAGES	16
#define X_FIRST		4	/* pages of a slot: A [0, 4) R, X [4, 12) RW, B [12, 16) R */
#define X_END		12
#define NR_CHANGES	5

struct run {
	const char *arch;
	struct mmp_space *s;
	int stop;
	uint64_t faults, efaults, ops, verify_failed, op_errors;
};

static uint64_t slot(int k, int page)
{
	return WIN_BASE + ((uint64_t)k * SLOT_PAGES + page) * PG;
}

static int map_slot(struct mmp_space *s, int k)
{
	uint64_t out;
	int err = mmp_mmap(s, slot(k, 0), X_FIRST * PG, R, MMP_MAP_FIXED, &out);

	if (!err)
		err = mmp_mmap(s, slot(k, X_FIRST), (X_END - X_FIRST) * PG, RW, MMP_MAP_FIXED, &out);
	if (!err)
		err = mmp_mmap(s, slot(k, X_END), (SLOT_PAGES - X_END) * PG, R, MMP_MAP_FIXED, &out);
	return err;
}

static void *faulter(void *arg)
{
	struct run *r = arg;
	struct mmp_cpu *cpu;
	uint64_t rng = 88172645463325252ULL;

	if (mmp_cpu_attach(r->s, &cpu))
		return NULL;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		int k;

		k = xorshift64(&rng) % SLOTS;
		for (int p = X_FIRST; p < X_END; p++) {
			uint64_t v = slot(k, p);

			/* -EFAULT is fine: the page may be read-only or unmapped right now. */
			if (mmp_write(cpu, v, &v, sizeof(v)))
				r->efaults++;
			else
				r->faults++;
		}
		mmp_madvise(r->s, slot(k, X_FIRST), (X_END - X_FIRST) * PG, MMP_MADV_DONTNEED);
	}
	mmp_cpu_detach(cpu);
	return NULL;
}

/* One change to slot @k and back, verifying after each step. */
static void mutate(struct run *r, int k, int op)
{
	struct mmp_space *s = r->s;
	uint64_t tail = slot(k, 8), out;
	int err = 0;

	switch (op) {
	case 0:	/* X merges into A and B, then splits out again */
		err = mmp_mprotect(s, slot(k, X_FIRST), (X_END - X_FIRST) * PG, R);
		r->verify_failed += mmp_space_verify(s) != 0;
		err = err ? err : mmp_mprotect(s, slot(k, X_FIRST), (X_END - X_FIRST) * PG, RW);
		break;
	case 1:	/* across the A|X boundary: X's start moves down, then back */
		err = mmp_mprotect(s, slot(k, 2), 2 * PG, RW);
		r->verify_failed += mmp_space_verify(s) != 0;
		err = err ? err : mmp_mprotect(s, slot(k, 2), 2 * PG, R);
		break;
	case 2:	/* X loses its tail, then gets it back by merging */
		err = mmp_munmap(s, tail, 4 * PG);
		r->verify_failed += mmp_space_verify(s) != 0;
		err = err ? err : mmp_mmap(s, tail, 4 * PG, RW, MMP_MAP_FIXED, &out);
		break;
	case 3:	/* X's tail moves away and back */
		err = mmp_mremap(s, tail, 4 * PG, 4 * PG, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED,
				 SCRATCH + (uint64_t)k * SLOT_PAGES * PG, &out);
		r->verify_failed += mmp_space_verify(s) != 0;
		err = err ? err : mmp_mremap(s, out, 4 * PG, 4 * PG,
					     MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, tail, &out);
		break;
	case 4:	/* X goes, its anon_vma with it, and comes back */
		err = mmp_munmap(s, slot(k, X_FIRST), (X_END - X_FIRST) * PG);
		r->verify_failed += mmp_space_verify(s) != 0;
		err = err ? err : mmp_mmap(s, slot(k, X_FIRST), (X_END - X_FIRST) * PG, RW,
					   MMP_MAP_FIXED, &out);
		break;
	}
	r->op_errors += err != 0;
	r->verify_failed += mmp_space_verify(s) != 0;
	r->ops++;
}

/* Run faulter and mutator for @seconds. */
static void run_for(struct run *r, double seconds)
{
	pthread_t th;
	double t0 = now();
	int i = 0;

	pthread_create(&th, NULL, faulter, r);
	for (; now() - t0 < seconds; i++)
		mutate(r, i % SLOTS, (i / SLOTS) % NR_CHANGES);
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
}

static struct mmp_space *lock_space(struct mmp_phys *phys, const char *arch, bool skip)
{
	struct mmp_space *s = new_space(phys, arch);

	for (int k = 0; k < SLOTS; k++)
		must(!map_slot(s, k), "map slot %d", k);
	if (skip)
		must(!mmp_debug_set(s, MMP_DEBUG_SKIP_VMA_LOCK, 1), "skip the VMA lock");
	return s;
}

static void stress(const char *arch, double seconds)
{
	struct run r = { .arch = arch };
	struct mmp_counters c;
	struct mmp_phys *phys;

	must(!mmp_phys_create(32 * MiB, &phys), "phys");
	r.s = lock_space(phys, arch, false);
	run_for(&r, seconds);
	mmp_space_counters(r.s, &c);
	printf("# %s: %llu faults, %llu refused, %llu changes; VMA lock success %llu, abort %llu, "
	       "retry %llu, miss %llu\n", arch, (unsigned long long)r.faults,
	       (unsigned long long)r.efaults, (unsigned long long)r.ops,
	       (unsigned long long)c.v[MMP_C_VMA_LOCK_SUCCESS],
	       (unsigned long long)c.v[MMP_C_VMA_LOCK_ABORT],
	       (unsigned long long)c.v[MMP_C_VMA_LOCK_RETRY],
	       (unsigned long long)c.v[MMP_C_VMA_LOCK_MISS]);
	tap_ok(r.verify_failed == 0, "%s: faults under VMA locks against mprotect/munmap/mremap of "
	       "their neighbours: every verify passes (%llu changes)", arch,
	       (unsigned long long)r.ops);
	tap_ok(r.op_errors == 0, "%s: every change succeeded", arch);
	tap_ok(r.faults > 0 && c.v[MMP_C_VMA_LOCK_SUCCESS] > 0,
	       "%s: faults were handled under the VMA lock", arch);
	tap_ok(mmp_space_destroy(r.s) == 0 && mmp_phys_destroy(phys) == 0, "%s: torn down", arch);
}

/* ---- the window, forced ---------------------------------------------------------- */

struct held_fault {
	struct mmp_space *s;
	uint64_t addr;
	int err;
};

/* One write on a CPU of its own: the debug hook holds its fault once it has the VMA. */
static void *held_write(void *arg)
{
	struct held_fault *h = arg;
	struct mmp_cpu *cpu;

	if (mmp_cpu_attach(h->s, &cpu)) {
		h->err = -EBADE;
		return NULL;
	}
	h->err = mmp_write(cpu, h->addr, &h->addr, sizeof(h->addr));
	mmp_cpu_detach(cpu);
	return NULL;
}

/* A write fault in X's tail held with its VMA while the tail is unmapped. */
static void held_vma_change(const char *arch, bool skip)
{
	struct held_fault h = { .addr = slot(0, 9) };
	uint64_t first = slot(0, X_FIRST), tail = slot(0, 8), out;
	struct mmp_phys *phys;
	struct mmp_cpu *cpu;
	struct park park;
	pthread_t th;
	bool held;
	int err, verify;
	char what[160];

	snprintf(what, sizeof(what), "%s%s: a write fault held with its VMA while munmap takes "
		 "the VMA's tail", arch, skip ? " (no VMA lock)" : "");
	must(!mmp_phys_create(32 * MiB, &phys), "phys");
	h.s = lock_space(phys, arch, skip);
	/* X has its anon_vma before: the held fault needs no mmap lock to get one. */
	must(!mmp_cpu_attach(h.s, &cpu) && !mmp_write(cpu, first, &first, sizeof(first)),
	     "%s: a page of X written", what);
	park_init(&park, h.s);
	park_arm(&park, MMP_DEBUG_FAULT_VMA, PARK_AT(MMP_DEBUG_VMA_WRITE_WAIT));
	must(!pthread_create(&th, NULL, held_write, &h), "start a thread");
	held = park_wait_parked(&park);
	err = mmp_munmap(h.s, tail, (X_END - 8) * PG);
	park_release(&park);
	pthread_join(th, NULL);
	if (skip) {
		printf("# %s: the verify report that follows is expected\n", what);
		fflush(stdout);
	}
	verify = mmp_space_verify(h.s);

	tap_ok(held && !park.timeouts, "%s: the fault was held at the window", what);
	tap_eq(err, 0, "%s: munmap", what);
	tap_eq(h.err, 0, "%s: the write went through", what);
	if (skip) {
		tap_ok(verify != 0, "%s: verify reports a page mapped where no VMA is", what);
		/* The tail back, merged into X: the stray entry is X's again, and tears down. */
		tap_ok(mmp_mmap(h.s, tail, (X_END - 8) * PG, RW, MMP_MAP_FIXED, &out) == 0 &&
		       mmp_space_verify(h.s) == 0, "%s: repaired", what);
	} else {
		tap_eq(park.waited, 1, "%s: munmap waited for the fault", what);
		tap_eq(verify, 0, "%s: verify", what);
	}
	park_fini(&park, h.s);
	mmp_cpu_detach(cpu);
	tap_ok(mmp_space_destroy(h.s) == 0 && mmp_phys_destroy(phys) == 0, "%s: torn down", what);
}

int main(int argc, char **argv)
{
	const char *env = getenv("MMP_STRESS_SECONDS");
	double seconds = env ? atof(env) : 0.5;
	unsigned int formats = 0, nr = 0;
	const char *arch, *ran[MMP_NR_FORMATS + 1];

	/* One back end per entry format: the first listed, whose user space holds the window. */
	for_each_arch(i, arch) {
		unsigned int f = 1u << mmp_arch_find(arch)->format;

		if (((argc < 2 && !(formats & f)) || (argc >= 2 && !strcmp(argv[1], arch))) &&
		    nr < sizeof(ran) / sizeof(ran[0])) {
			stress(arch, seconds);
			ran[nr++] = arch;
		}
		formats |= f;
	}
	for (unsigned int i = 0; i < nr; i++) {
		held_vma_change(ran[i], false);
		held_vma_change(ran[i], true);
	}
	return tap_done();
}
