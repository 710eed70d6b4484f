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
 * Then the same with MMP_DEBUG_SKIP_TRUNCATE_RECHECK, a fault that maps the
 * folio it looked up without checking, under the folio lock, that it is still
 * in the page cache: the test must see a broken space. It stops at the first
 * broken verify (well under a second natively) or after 15 s; under qemu-user
 * (MMPRIM_QEMU_USER), twenty times slower, the race is too rare to meet in a
 * budget a suite can spend, and only the protected runs are made.
 */
#include <stdlib.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "debug.h"
#include "stress.h"
#include "util.h"

#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define P		MMP_PAGE_SIZE
#define NPAGES		256
#define FILL		0x6d
#define THREADS		2

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
static long run(const char *arch, bool broken, double seconds, struct mmp_phys *phys)
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
	if (broken)
		mmp_debug_set(st.s, MMP_DEBUG_SKIP_TRUNCATE_RECHECK, 1);
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
	printf("# %s%s: %ld rounds of truncate and regrow%s%s\n", arch,
	       broken ? " (no recheck)" : "", rounds, st.bad ? "; " : "", st.bad ? st.what : "");
	mmp_space_destroy(st.s);
	tap_ok(mmp_file_destroy(st.f) == 0, "%s: the file goes once unmapped", arch);
	return st.bad ? -1 : broke;
}

int main(void)
{
	static const char *const archs[] = { "x86_64", "arm64" };
	struct mmp_phys *phys;

	bool qemu = getenv("MMPRIM_QEMU_USER");

	tap_require(mmp_phys_create(128 * MiB, &phys) == 0, "create phys");
	for (unsigned int i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		tap_eq(run(archs[i], false, 2.0, phys), 0,
		       "%s: faults racing truncation map no page truncation took", archs[i]);
		if (qemu) {
			printf("# %s: the run without the recheck is not made under qemu-user\n",
			       archs[i]);
			continue;
		}
		tap_ok(run(archs[i], true, 15.0, phys) > 0,
		       "%s: without the recheck under the folio lock, verify sees a broken space",
		       archs[i]);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "nothing left on the phys");
	return tap_done();
}
