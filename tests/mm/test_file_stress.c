/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Truncation against faults, on two CPUs at once. Two threads read and write
 * random pages of a shared and a private mapping of one file while the main
 * thread shrinks the file to a random size and writes it back to its full
 * length, over and over, with an occasional reclaim. Every access must read
 * the file's bytes (or zeroes, in pages the last truncation cut) or fail with
 * SIGBUS (-EIO), and at every pause the space must verify: no page of a
 * folio that truncation took out of the page cache may stay mapped.
 *
 * Then the window that protection closes, forced on every back end: a fault
 * is held by a debug hook (MMP_DEBUG_FILE_FAULT_LOOKUP) right after its
 * page-cache lookup, the file is cut below its page (and written back to its
 * full length, or not) and the fault is let go. With the recheck under the
 * folio lock the access fails with -EIO or sees the file as it is now, and
 * the space verifies; with MMP_DEBUG_SKIP_TRUNCATE_RECHECK the fault maps
 * the folio truncation took, and verify must report it, every time. Neither
 * depends on timing, so both run under qemu-user too.
 */
#include <stdlib.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "debug.h"
#include "filemap.h"
#include "park.h"
#include "stress.h"
#include "util.h"

#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define P		MMP_PAGE_SIZE
#define NPAGES		256
#define FILL		0x6d
#define MARK		0x77	/* what a forced access writes */
#define THREADS		2
#define HELD_PAGE	100	/* the page of a forced access: cut by the truncation */

struct stress {
	struct mmp_space *s;
	struct mmp_file *f;
	uint64_t shared, private;
	int stop, pause, paused;	/* atomics */
	int bad;			/* a read saw bytes that cannot be there */
	char what[160];
};

static void pause_point(struct stress *st)
{
	if (!__atomic_load_n(&st->pause, __ATOMIC_ACQUIRE))
		return;
	__atomic_fetch_add(&st->paused, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&st->pause, __ATOMIC_ACQUIRE))
		sched_yield();
	__atomic_fetch_sub(&st->paused, 1, __ATOMIC_ACQ_REL);
}

static void *worker(void *arg)
{
	struct stress *st = arg;
	uint64_t rng = (uint64_t)(uintptr_t)&rng | 1;
	struct mmp_cpu *cpu;
	uint8_t buf[16];

	if (mmp_cpu_attach(st->s, &cpu))
		return NULL;
	while (!__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE)) {
		uint64_t r = xorshift64(&rng), page = r % NPAGES;
		uint64_t base = (r >> 20) & 1 ? st->private : st->shared;
		int err;

		pause_point(st);
		if ((r >> 21) & 1) {
			memset(buf, FILL, sizeof(buf));
			err = mmp_write(cpu, base + page * P + 64, buf, sizeof(buf));
		} else {
			err = mmp_read(cpu, base + page * P, buf, sizeof(buf));
			/* The file's bytes, zeroes past a cut, or a private copy's FILL. */
			if (!err && buf[0] != FILL && buf[0] != 0 && !st->bad) {
				st->bad = 1;
				snprintf(st->what, sizeof(st->what), "page %llu read %#x",
					 (unsigned long long)page, buf[0]);
			}
		}
		if (err && err != -EIO && !st->bad) {
			st->bad = 1;
			snprintf(st->what, sizeof(st->what), "an access failed with %s",
				 mmp_strerror(err));
		}
	}
	mmp_cpu_detach(cpu);
	return NULL;
}

/* Stop the workers where they stand (between accesses). */
static void pause_workers(struct stress *st)
{
	__atomic_store_n(&st->pause, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&st->paused, __ATOMIC_ACQUIRE) < THREADS)
		sched_yield();
}

static void resume_workers(struct stress *st)
{
	__atomic_store_n(&st->pause, 0, __ATOMIC_RELEASE);
	while (__atomic_load_n(&st->paused, __ATOMIC_ACQUIRE))
		sched_yield();
}

/*
 * Truncate and regrow for @seconds; 0 when every pause verified, else the
 * round the space broke in (or -1 for a bad read).
 */
static long run(const char *arch, double seconds, struct mmp_phys *phys)
{
	struct stress st = { 0 };
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	static uint8_t data[NPAGES * P];
	pthread_t th[THREADS];
	long rounds = 0, broke = 0;
	double end = now() + seconds;

	memset(data, FILL, sizeof(data));
	st.s = new_space(phys, arch);
	tap_require(mmp_file_create(phys, 0, MMP_FILE_NO_LARGE_FOLIOS, &st.f) == 0 &&
		    mmp_file_write(st.f, 0, data, sizeof(data)) == 0, "%s: a file", arch);
	tap_require(mmp_mmap_file(st.s, 0, NPAGES * P, RW, MMP_MAP_SHARED, st.f, 0, &st.shared) == 0 &&
		    mmp_mmap_file(st.s, 0, NPAGES * P, RW, MMP_MAP_PRIVATE, st.f, 0, &st.private) == 0,
		    "%s: map it shared and private", arch);
	for (int i = 0; i < THREADS; i++)
		tap_require(!pthread_create(&th[i], NULL, worker, &st), "start a thread");
	while (now() < end && !broke && !st.bad) {
		uint64_t size = (xorshift64(&rng) % (NPAGES * P + 1)) & ~7ULL;

		mmp_file_truncate(st.f, size);
		mmp_file_write(st.f, 0, data, sizeof(data));
		if (xorshift64(&rng) % 16 == 0)
			mmp_reclaim(st.s);
		if (++rounds % 32 == 0) {
			pause_workers(&st);
			if (mmp_space_verify(st.s))
				broke = rounds;
			resume_workers(&st);
		}
	}
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	if (!broke && !st.bad && mmp_space_verify(st.s))
		broke = rounds;
	printf("# %s: %ld rounds of truncate and regrow%s%s\n", arch, rounds, st.bad ? "; " : "",
	       st.bad ? st.what : "");
	mmp_space_destroy(st.s);
	tap_ok(mmp_file_destroy(st.f) == 0, "%s: the file goes once unmapped", arch);
	return st.bad ? -1 : broke;
}

/* ---- the window, forced ---------------------------------------------------------- */

enum held_access { SHARED_WRITE, SHARED_READ, PRIVATE_WRITE, NR_HELD_ACCESSES };

static const char *const held_names[NR_HELD_ACCESSES] = {
	"a shared write", "a shared read", "a private write (COW)",
};

struct held {
	struct mmp_space *s;
	uint64_t addr;
	enum held_access how;
	uint8_t buf[16];
	int err;
};

/* One access on a CPU of its own: the debug hook holds its fault at the window. */
static void *held_access(void *arg)
{
	struct held *h = arg;
	struct mmp_cpu *cpu;

	if (mmp_cpu_attach(h->s, &cpu)) {
		h->err = -EBADE;
		return NULL;
	}
	if (h->how == SHARED_READ) {
		h->err = mmp_read(cpu, h->addr, h->buf, sizeof(h->buf));
	} else {
		memset(h->buf, MARK, sizeof(h->buf));
		h->err = mmp_write(cpu, h->addr, h->buf, sizeof(h->buf));
		/* A private copy reads back what was written: this CPU's view. */
		if (!h->err && h->how == PRIVATE_WRITE)
			h->err = mmp_read(cpu, h->addr, h->buf, sizeof(h->buf));
	}
	mmp_cpu_detach(cpu);
	return NULL;
}

static bool all_bytes(const uint8_t *buf, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != v)
			return false;
	return true;
}

/*
 * Page HELD_PAGE of a fresh file, accessed @how, its fault held right after
 * the page-cache lookup while the file is cut to HELD_PAGE pages and, with
 * @regrow, written back to its full length. A read finds the page out of the
 * cache (a hole), so that it faults the page in instead of mapping it by
 * fault-around (which looks up under the folio lock).
 */
static void held_fault(struct mmp_phys *phys, const char *arch, enum held_access how, bool regrow,
		       bool broken)
{
	static uint8_t data[NPAGES * P];
	const uint64_t off = (uint64_t)HELD_PAGE * P + 64;
	struct held h = { .how = how };
	uint64_t shared, private;
	uint8_t file_bytes[16];
	struct mmp_file *f;
	struct park park;
	size_t got = 0;
	pthread_t th;
	bool held;
	int verify;
	char what[160];

	snprintf(what, sizeof(what), "%s%s: %s held at its lookup while the file is cut%s", arch,
		 broken ? " (no recheck)" : "", held_names[how], regrow ? " and regrown" : "");
	memset(data, FILL, sizeof(data));
	h.s = new_space(phys, arch);
	tap_require(mmp_file_create(phys, 0, MMP_FILE_NO_LARGE_FOLIOS, &f) == 0 &&
		    mmp_file_write(f, 0, data, sizeof(data)) == 0, "%s: a file", what);
	tap_require(mmp_mmap_file(h.s, 0, NPAGES * P, RW, MMP_MAP_SHARED, f, 0, &shared) == 0 &&
		    mmp_mmap_file(h.s, 0, NPAGES * P, RW, MMP_MAP_PRIVATE, f, 0, &private) == 0,
		    "%s: map it shared and private", what);
	if (how == SHARED_READ)
		tap_require(mmp_file_truncate(f, (uint64_t)HELD_PAGE * P) == 0 &&
			    mmp_file_truncate(f, NPAGES * P) == 0, "%s: a hole at the page", what);
	h.addr = (how == PRIVATE_WRITE ? private : shared) + off;
	tap_require(mmp_debug_set(h.s, MMP_DEBUG_SKIP_TRUNCATE_RECHECK, broken) == 0,
		    "%s: fault injection", what);
	park_init(&park, h.s);
	park_arm(&park, MMP_DEBUG_FILE_FAULT_LOOKUP, 0);
	tap_require(!pthread_create(&th, NULL, held_access, &h), "start a thread");
	held = park_wait_parked(&park);
	mmp_file_truncate(f, (uint64_t)HELD_PAGE * P);
	if (regrow)
		mmp_file_write(f, 0, data, sizeof(data));
	park_release(&park);
	pthread_join(th, NULL);
	if (broken && how != PRIVATE_WRITE)
		printf("# %s: the verify report that follows is expected\n", what);
	fflush(stdout);
	verify = mmp_space_verify(h.s);
	tap_require(mmp_file_read(f, off, file_bytes, sizeof(file_bytes), &got) == 0,
		    "%s: read the file", what);

	tap_ok(held && !park.timeouts, "%s: the fault was held at the window", what);
	if (broken) {
		if (how == PRIVATE_WRITE)
			/* The copy is anonymous: verify cannot tell, the lost SIGBUS shows. */
			tap_ok(!regrow ? h.err == 0 : 1, "%s: the write past the end went through (%s)",
			       what, mmp_strerror(h.err));
		else
			tap_ok(verify != 0, "%s: verify reports the folio truncation took, mapped",
			       what);
	} else if (!regrow) {
		tap_eq(h.err, -EIO, "%s: SIGBUS", what);
		tap_eq(verify, 0, "%s: verify", what);
	} else {
		tap_eq(h.err, 0, "%s: the access goes through", what);
		if (how == SHARED_WRITE)
			tap_ok(got == sizeof(file_bytes) && all_bytes(file_bytes, got, MARK),
			       "%s: the write reached the file's new page", what);
		else
			tap_ok(all_bytes(h.buf, sizeof(h.buf), how == SHARED_READ ? FILL : MARK),
			       "%s: it saw the file's new bytes", what);
		tap_eq(verify, 0, "%s: verify", what);
	}
	park_fini(&park, h.s);
	mmp_space_destroy(h.s);
	tap_ok(mmp_file_destroy(f) == 0, "%s: the file goes once unmapped", what);
}

/*
 * The file locks are rwsems: with a reader inside invalidate_lock (a page-in,
 * msync) and a truncation waiting to write, a new page-in must queue behind
 * the truncation (its trylock fails), not join the reader; a glibc rwlock
 * would let it in, and a stream of page-ins could starve the truncation.
 */
struct truncator {
	struct mmp_file *f;
	int err;
};

static void *truncate_fn(void *arg)
{
	struct truncator *t = arg;

	t->err = mmp_file_truncate(t->f, P);
	return NULL;
}

static void check_invalidate_lock(struct mmp_phys *phys)
{
	struct truncator t = { .err = -1 };
	struct rw_semaphore *sem;
	pthread_t th;
	bool queued = false, joined;
	uint64_t size = 0;

	tap_require(mmp_file_create(phys, 4 * P, 0, &t.f) == 0, "invalidate_lock: a file");
	sem = &t.f->mapping.invalidate_lock;
	down_read(sem);
	pthread_create(&th, NULL, truncate_fn, &t);
	/* Bounded: a truncation that never queues fails the check, not the run. */
	for (int i = 0; i < 10000000 && !queued; i++) {
		queued = rwsem_nr_waiters(sem) == 1;
		if (!queued)
			sched_yield();
	}
	tap_ok(queued, "invalidate_lock: the truncation waits behind the reader");
	joined = down_read_trylock(sem);
	tap_ok(!joined, "invalidate_lock: a new reader queues behind the waiting truncation");
	if (joined)
		up_read(sem);
	up_read(sem);
	pthread_join(th, NULL);
	tap_ok(t.err == 0 && !mmp_file_size(t.f, &size) && size == P,
	       "invalidate_lock: the truncation went on once the reader left");
	tap_eq(mmp_file_destroy(t.f), 0, "invalidate_lock: destroy the file");
}

int main(void)
{
	static const char *const stressed[] = { "x86_64", "arm64" };
	struct mmp_phys *phys;
	const char *arch;

	tap_require(mmp_phys_create(128 * MiB, &phys) == 0, "create phys");
	for (unsigned int i = 0; i < sizeof(stressed) / sizeof(stressed[0]); i++)
		tap_eq(run(stressed[i], 2.0, phys), 0,
		       "%s: faults racing truncation map no page truncation took", stressed[i]);
	for_each_arch(i, arch) {
		for (int how = 0; how < NR_HELD_ACCESSES; how++) {
			for (int regrow = 0; regrow < 2; regrow++) {
				held_fault(phys, arch, how, regrow, false);
				/* Without the recheck the private copy of a regrown page is right anyway. */
				if (!(how == PRIVATE_WRITE && regrow))
					held_fault(phys, arch, how, regrow, true);
			}
		}
	}
	check_invalidate_lock(phys);
	tap_eq(mmp_phys_destroy(phys), 0, "nothing left on the phys");
	return tap_done();
}
