/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mmap lock as the kernel's rwsem, and 6.17's per-VMA lock for madvise,
 * each proven by a forced interleaving, no timing:
 *
 * - the rwsem itself: with a reader inside and a writer queued, a new reader
 *   is refused by trylock and queues behind the writer, which goes first
 *   (a reader-preferring lock, as glibc's pthread_rwlock, lets it in: every
 *   run fails); a downgrade lets nobody in when a writer is at the head of
 *   the queue, and every queued reader, those behind a writer too, when a
 *   reader is (rwsem_mark_wake);
 * - the same through a space: munmap queued behind a reader keeps
 *   mmp_space_stat() out until it has unmapped;
 * - a writer held inside the mmap write lock (MMP_DEBUG_MMAP_WRITE_LOCKED):
 *   MADV_DONTNEED, MADV_DONTNEED_LOCKED and MADV_FREE of one VMA, and a
 *   process_madvise range in one VMA, complete under its lock from 6.17,
 *   and wait for the writer at 6.16; across two VMAs and from a hole they
 *   wait from 6.17 too. A call that waits reaches MMP_DEBUG_MMAP_LOCK_WAIT,
 *   which lets the writer go, so a wrong lock fails instead of hanging;
 * - the lock counters, exact, in one thread; a process_madvise vector keeps
 *   the mmap lock from the first range that needs it.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "mm.h"
#include "mmap_lock.h"
#include "held_writer.h"
#include "park.h"
#include "util.h"

#define PG		MMP_PAGE_SIZE
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define V(a, b)		MMP_KERNEL_VERSION(a, b, 0)
#define NPAGES		16

static struct mmp_phys *phys;

/* Wait until @sem has @n waiters; false after 10 s (the lock let them in instead). */
static bool wait_waiters(struct rw_semaphore *sem, unsigned int n)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rwsem_nr_waiters(sem) < n) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			return false;
		sched_yield();
	}
	return true;
}

/* ---- the rwsem alone ------------------------------------------------------------ */

struct sem_run {
	struct rw_semaphore sem;
	char order[8];
	int n;			/* atomic: letters in order */
};

static void note(struct sem_run *r, char c)
{
	r->order[__atomic_fetch_add(&r->n, 1, __ATOMIC_ACQ_REL)] = c;
}

static void *writer(void *arg)
{
	struct sem_run *r = arg;

	down_write(&r->sem);
	note(r, 'W');
	up_write(&r->sem);
	return NULL;
}

static void *reader(void *arg)
{
	struct sem_run *r = arg;

	down_read(&r->sem);
	note(r, 'R');
	up_read(&r->sem);
	return NULL;
}

static void check_writer_blocks_reader(void)
{
	struct sem_run r = { .n = 0 };
	pthread_t w, rd;
	bool queued, behind, got;

	init_rwsem(&r.sem);
	down_read(&r.sem);
	pthread_create(&w, NULL, writer, &r);
	queued = wait_waiters(&r.sem, 1);
	tap_ok(queued, "rwsem: a writer queues behind a reader");
	got = down_read_trylock(&r.sem);
	if (got)
		up_read(&r.sem);	/* a lock that lets readers in fails here, and goes on */
	tap_ok(!got, "rwsem: with a writer queued, a new reader's trylock fails");
	pthread_create(&rd, NULL, reader, &r);
	behind = wait_waiters(&r.sem, 2);
	tap_ok(behind, "rwsem: the new reader queues behind the writer");
	tap_eq(__atomic_load_n(&r.n, __ATOMIC_ACQUIRE), 0, "rwsem: neither got in meanwhile");
	up_read(&r.sem);
	pthread_join(w, NULL);
	pthread_join(rd, NULL);
	r.order[r.n] = 0;
	tap_ok(!strcmp(r.order, "WR"), "rwsem: the writer went first, then the reader (%s)", r.order);
	tap_ok(!rwsem_is_locked(&r.sem) && !rwsem_has_waiters(&r.sem), "rwsem: free at the end");
	rwsem_destroy(&r.sem);
}

/* A writer downgrades: the reader at the head comes in while it still reads. */
static void check_downgrade(void)
{
	struct sem_run r = { .n = 0 };
	pthread_t rd, rd2, w;

	init_rwsem(&r.sem);
	down_write(&r.sem);
	pthread_create(&rd, NULL, reader, &r);
	tap_ok(wait_waiters(&r.sem, 1), "downgrade: a reader queues behind the writer");
	downgrade_write(&r.sem);
	pthread_join(rd, NULL);	/* it got in with the downgraded writer still inside */
	tap_eq(r.n, 1, "downgrade: the queued reader came in beside the downgraded writer");
	up_read(&r.sem);

	/* A writer at the head: the downgrade lets nobody in. */
	r.n = 0;
	down_write(&r.sem);
	pthread_create(&w, NULL, writer, &r);
	tap_ok(wait_waiters(&r.sem, 1), "downgrade: a writer queues");
	pthread_create(&rd, NULL, reader, &r);
	tap_ok(wait_waiters(&r.sem, 2), "downgrade: a reader queues behind it");
	downgrade_write(&r.sem);
	tap_eq(rwsem_nr_waiters(&r.sem), 2, "downgrade: the writer at the head keeps both waiting");
	tap_eq(__atomic_load_n(&r.n, __ATOMIC_ACQUIRE), 0, "downgrade: nobody got in");
	up_read(&r.sem);
	pthread_join(w, NULL);
	pthread_join(rd, NULL);
	r.order[r.n] = 0;
	tap_ok(!strcmp(r.order, "WR"), "downgrade: then the writer, then the reader (%s)", r.order);

	/*
	 * A reader at the head: it comes in, and so does every reader queued
	 * behind the writer (rwsem_mark_wake wakes all the readers of the
	 * queue); the writer alone keeps waiting.
	 */
	r.n = 0;
	down_write(&r.sem);
	pthread_create(&rd, NULL, reader, &r);
	tap_ok(wait_waiters(&r.sem, 1), "downgrade: a reader queues at the head");
	pthread_create(&w, NULL, writer, &r);
	tap_ok(wait_waiters(&r.sem, 2), "downgrade: a writer queues behind it");
	pthread_create(&rd2, NULL, reader, &r);
	tap_ok(wait_waiters(&r.sem, 3), "downgrade: a second reader queues behind the writer");
	downgrade_write(&r.sem);
	pthread_join(rd, NULL);
	pthread_join(rd2, NULL);	/* both got in with the downgraded writer still inside */
	tap_eq(rwsem_nr_waiters(&r.sem), 1, "downgrade: both readers came in, past the writer");
	tap_eq(__atomic_load_n(&r.n, __ATOMIC_ACQUIRE), 2, "downgrade: ... and the writer did not");
	up_read(&r.sem);
	pthread_join(w, NULL);
	r.order[r.n] = 0;
	tap_ok(!strcmp(r.order, "RRW"), "downgrade: the readers, then the writer (%s)", r.order);
	rwsem_destroy(&r.sem);
}

/* ---- the mmap lock of a space --------------------------------------------------- */

struct call {
	struct mmp_space *s;
	uint64_t addr;
	int err;
	struct mmp_space_stat st;
};

static void *do_munmap_page(void *arg)
{
	struct call *c = arg;

	c->err = mmp_munmap(c->s, c->addr, PG);
	return NULL;
}

static void *do_stat(void *arg)
{
	struct call *c = arg;

	c->err = mmp_space_stat(c->s, &c->st);
	return NULL;
}

/* A reader inside, munmap queued: mmp_space_stat() waits behind munmap and sees its result. */
static void check_space_writer_first(const char *arch)
{
	struct call w, r;
	struct mmp_space *s = new_space(phys, arch);
	uint64_t a = map(s, 4 * PG, RW), nr;
	pthread_t tw, tr;
	bool got;

	must(!mmp_mprotect(s, a, PG, MMP_PROT_READ), "two VMAs");
	nr = s->vmas.nr;
	w = (struct call){ .s = s, .addr = a };
	r = (struct call){ .s = s };
	mmap_read_lock(s);
	pthread_create(&tw, NULL, do_munmap_page, &w);
	tap_ok(wait_waiters(&s->mmap_lock, 1), "%s: munmap waits for the mmap lock", arch);
	got = mmap_read_trylock(s);
	if (got)
		mmap_read_unlock(s);
	tap_ok(!got, "%s: a reader's trylock fails while munmap waits", arch);
	pthread_create(&tr, NULL, do_stat, &r);
	tap_ok(wait_waiters(&s->mmap_lock, 2), "%s: mmp_space_stat queues behind munmap", arch);
	mmap_read_unlock(s);
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);
	tap_ok(!w.err && !r.err && r.st.nr_vmas == nr - 1,
	       "%s: munmap went first: stat saw %llu VMAs of %llu", arch,
	       (unsigned long long)r.st.nr_vmas, (unsigned long long)nr);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	mmp_space_destroy(s);
}

/* ---- madvise against a writer held inside the mmap write lock --------------------- */

enum what { DONTNEED, DONTNEED_LOCKED, FREE, TWO_VMAS, FROM_HOLE, PROCESS_MADVISE };

static const char *const what_name[] = {
	"MADV_DONTNEED in one VMA", "MADV_DONTNEED_LOCKED in one VMA", "MADV_FREE in one VMA",
	"MADV_DONTNEED across two VMAs", "MADV_DONTNEED from a hole into a VMA",
	"process_madvise MADV_DONTNEED in one VMA",
};

static int advise(struct mmp_space *s, uint64_t a, enum what w)
{
	struct mmp_iovec v = { a, NPAGES * PG };

	switch (w) {
	case DONTNEED:
		return mmp_madvise(s, a, NPAGES * PG, MMP_MADV_DONTNEED);
	case DONTNEED_LOCKED:
		return mmp_madvise(s, a, NPAGES * PG, MMP_MADV_DONTNEED_LOCKED);
	case FREE:
		return mmp_madvise(s, a, NPAGES * PG, MMP_MADV_FREE);
	case TWO_VMAS:
		return mmp_madvise(s, a, 2 * NPAGES * PG, MMP_MADV_DONTNEED);
	case FROM_HOLE:
		/* -ENOMEM for the hole, the VMA's pages dropped all the same */
		return mmp_madvise(s, a - PG, (NPAGES + 1) * PG, MMP_MADV_DONTNEED) == -ENOMEM ? 0
											   : -EBADE;
	case PROCESS_MADVISE:
		return mmp_process_madvise(s, &v, 1, MMP_MADV_DONTNEED, 0) == NPAGES * (long)PG ? 0
												  : -EBADE;
	}
	return -EINVAL;
}

/* advise() as held_writer_call() calls it. */
struct advice_call {
	struct mmp_space *s;
	uint64_t a;
	enum what w;
};

static int advice_call_fn(void *arg)
{
	struct advice_call *c = arg;

	return advise(c->s, c->a, c->w);
}

static void check_held_writer(const char *arch, long release, enum what w)
{
	struct mmp_space *s = new_space(phys, arch);
	bool vma_lock = release >= V(6, 17) && (w <= FREE || w == PROCESS_MADVISE);
	struct mmp_counters c0, d;
	struct held_writer h = { .s = s };
	struct advice_call call;
	struct mmp_cpu *cpu;
	uint64_t a, b, out;
	int err;
	char what[160];

	snprintf(what, sizeof(what), "%s %ld.%ld: %s, a writer inside", arch, release >> 16,
		 (release >> 8) & 255, what_name[w]);
	must(!mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, release), "release");
	must(!mmp_cpu_attach(s, &cpu), "attach");
	/* [hole | A rw | B ro | hole ... far] */
	a = map(s, (2 * NPAGES + 2) * PG, RW) + PG;
	must(!mmp_munmap(s, a - PG, PG) && !mmp_munmap(s, a + 2 * NPAGES * PG, PG), "holes");
	b = a + NPAGES * PG;
	must(!mmp_mprotect(s, b, NPAGES * PG, MMP_PROT_READ), "B read-only");
	must(!mmp_memset(cpu, a, 1, NPAGES * PG), "A written");
	h.far = map(s, 2 * MiB, RW) + MiB;
	must(!mmp_munmap(s, h.far, PG), "a place for the writer");

	mmp_space_counters(s, &c0);
	call = (struct advice_call){ s, a, w };
	err = held_writer_call(&h, advice_call_fn, &call);
	counters_since(s, &c0, &d);

	tap_ok(h.parked && !h.timeouts, "%s: the writer was held", what);
	tap_eq(err, 0, "%s: done", what);
	tap_eq(h.err, 0, "%s: the writer's mmap", what);
	if (vma_lock) {
		tap_eq(h.waited, 0, "%s: done with the writer still inside", what);
		tap_ok(d.v[MMP_C_MADV_VMA_LOCK_SUCCESS] == 1 && d.v[MMP_C_MADV_VMA_LOCK_FALLBACK] == 0 &&
		       d.v[MMP_C_MMAP_LOCK_MADVISE] == 0,
		       "%s: under the VMA lock (success %llu, fallback %llu, mmap lock %llu)", what,
		       (unsigned long long)d.v[MMP_C_MADV_VMA_LOCK_SUCCESS],
		       (unsigned long long)d.v[MMP_C_MADV_VMA_LOCK_FALLBACK],
		       (unsigned long long)d.v[MMP_C_MMAP_LOCK_MADVISE]);
	} else {
		bool fallback = release >= V(6, 17);

		tap_eq(h.waited, 1, "%s: waited for the writer", what);
		tap_ok(d.v[MMP_C_MADV_VMA_LOCK_SUCCESS] == 0 &&
		       d.v[MMP_C_MADV_VMA_LOCK_FALLBACK] == fallback &&
		       d.v[MMP_C_MMAP_LOCK_MADVISE] == 1,
		       "%s: under the mmap lock (success %llu, fallback %llu, mmap lock %llu)", what,
		       (unsigned long long)d.v[MMP_C_MADV_VMA_LOCK_SUCCESS],
		       (unsigned long long)d.v[MMP_C_MADV_VMA_LOCK_FALLBACK],
		       (unsigned long long)d.v[MMP_C_MMAP_LOCK_MADVISE]);
	}
	/* MADV_FREE keeps the pages (lazyfree); every other call dropped A's. */
	tap_eq(rss(s), w == FREE ? NPAGES : 0, "%s: A's pages", what);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", what);
	mmp_cpu_detach(cpu);
	(void)out;
	mmp_space_destroy(s);
}

/* ---- exact counts, one thread --------------------------------------------------- */

static void check_counts(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_counters c0, d;
	struct mmp_cpu *cpu;
	uint64_t a, pfn;

	must(!mmp_cpu_attach(s, &cpu), "attach");
	mmp_space_counters(s, &c0);
	a = map(s, 8 * PG, RW);						/* write 1 */
	must(!mmp_mprotect(s, a + 4 * PG, 4 * PG, MMP_PROT_READ), "mprotect");	/* write 1 */
	/* The VMA lock, and a read trylock for the VMA's first anon_vma (vmf_anon_prepare). */
	must(!mmp_memset(cpu, a, 1, PG), "a fault under the VMA lock");	/* read 1 */
	must(!mmp_space_set_opt(s, MMP_OPT_PER_VMA_LOCK, 0), "no VMA locks");
	must(!mmp_memset(cpu, a + PG, 1, PG), "a fault under the mmap lock");	/* read 1, fault 1 */
	must(!mmp_space_set_opt(s, MMP_OPT_PER_VMA_LOCK, 1), "VMA locks");
	must(!mmp_madvise(s, a, 2 * PG, MMP_MADV_DONTNEED), "one VMA");	/* VMA lock */
	must(!mmp_madvise(s, a, 8 * PG, MMP_MADV_DONTNEED), "two VMAs");	/* read 1, madvise 1 */
	must(mmp_gup(s, a, 1, true, &pfn) == 1, "gup");			/* read 1, gup 1 */
	mmp_unpin(s, &pfn, 1);
	must(!mmp_munmap(s, a, 8 * PG), "munmap");			/* write 1 */
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_MMAP_LOCK_WRITE] == 3 && d.v[MMP_C_MMAP_LOCK_READ] == 4 &&
	       d.v[MMP_C_MMAP_LOCK_FAULT] == 1 && d.v[MMP_C_MMAP_LOCK_MADVISE] == 1 &&
	       d.v[MMP_C_MMAP_LOCK_GUP] == 1 && d.v[MMP_C_MADV_VMA_LOCK_SUCCESS] == 1 &&
	       d.v[MMP_C_MADV_VMA_LOCK_FALLBACK] == 1 && d.v[MMP_C_MMAP_LOCK_READ_WAIT] == 0 &&
	       d.v[MMP_C_MMAP_LOCK_WRITE_WAIT] == 0,
	       "%s: write 3 (%llu), read 4 (%llu), fault 1 (%llu), madvise 1 (%llu), gup 1 (%llu), "
	       "VMA lock 1 (%llu), fallback 1 (%llu), no waits (%llu, %llu)", arch,
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_WRITE],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_READ],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_FAULT],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_MADVISE],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_GUP],
	       (unsigned long long)d.v[MMP_C_MADV_VMA_LOCK_SUCCESS],
	       (unsigned long long)d.v[MMP_C_MADV_VMA_LOCK_FALLBACK],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_READ_WAIT],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_WRITE_WAIT]);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/*
 * process_madvise from 6.17: each range tries its VMA's lock until one
 * cannot have it; the mmap lock that one takes stays for the rest
 * (vector_madvise's lock_mode), so the third range takes no VMA lock.
 */
static void check_vector_counts(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_iovec vec[3];
	struct mmp_counters c0, d;
	struct mmp_cpu *cpu;
	uint64_t a;

	must(!mmp_cpu_attach(s, &cpu), "attach");
	a = map(s, 8 * PG, RW);
	must(!mmp_mprotect(s, a + 4 * PG, 4 * PG, MMP_PROT_READ), "two VMAs");
	must(!mmp_memset(cpu, a, 1, 4 * PG), "written");
	/* In A; across A and B; in A again. */
	vec[0] = (struct mmp_iovec){ a, PG };
	vec[1] = (struct mmp_iovec){ a + 3 * PG, 2 * PG };
	vec[2] = (struct mmp_iovec){ a + PG, PG };
	mmp_space_counters(s, &c0);
	tap_eq(mmp_process_madvise(s, vec, 3, MMP_MADV_DONTNEED, 0), 4 * (long)PG,
	       "%s: process_madvise of three ranges", arch);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_MADV_VMA_LOCK_SUCCESS] == 1 && d.v[MMP_C_MADV_VMA_LOCK_FALLBACK] == 1 &&
	       d.v[MMP_C_MMAP_LOCK_MADVISE] == 1 && d.v[MMP_C_MMAP_LOCK_READ] == 1,
	       "%s: ... one VMA lock (%llu), one fallback (%llu), then the mmap lock once "
	       "(%llu, read %llu)", arch,
	       (unsigned long long)d.v[MMP_C_MADV_VMA_LOCK_SUCCESS],
	       (unsigned long long)d.v[MMP_C_MADV_VMA_LOCK_FALLBACK],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_MADVISE],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_READ]);
	tap_eq(rss(s), 1, "%s: ... page 2 alone is left", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

int main(void)
{
	static const char *const archs[] = { "x86_64", "arm64" };
	static const long releases[] = { V(6, 16), V(6, 17), V(6, 18) };

	must(!mmp_phys_create(64 * MiB, &phys), "phys");
	check_writer_blocks_reader();
	check_downgrade();
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		check_counts(archs[i]);
		check_vector_counts(archs[i]);
		check_space_writer_first(archs[i]);
		for (size_t r = 0; r < sizeof(releases) / sizeof(releases[0]); r++)
			for (int w = DONTNEED; w <= PROCESS_MADVISE; w++)
				check_held_writer(archs[i], releases[r], w);
	}
	mmp_phys_destroy(phys);
	return tap_done();
}
