/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the bad-input tests share: a space per back end with a canary mapping
 * (4 MiB, half THP, half small pages) whose data must survive every refused
 * call, and still_works(), run after each error: verify passes, the canary is
 * intact, and a fresh mapping maps, writes and reads.
 */
#ifndef MMP_TESTS_BADINPUT_H
#define MMP_TESTS_BADINPUT_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <mmprim/mmprim.h>

#include "debug.h"
#include "tap.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define PG  MMP_PAGE_SIZE
#define RW  (MMP_PROT_READ | MMP_PROT_WRITE)
/* sysctl vm.max_map_count, which the library models. */
#define MAX_MAP_COUNT 65530
#define CANARY_LEN    (4 * MiB)

struct env {
	const char *arch;
	struct mmp_phys *phys;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	uint64_t canary; /* 4 MiB: first half THP, second half small pages */
};

__attribute__((unused)) static uint64_t page_buf[PG / 8];

/* Test plumbing, not a check: bail out without adding a TAP point. */
static inline void must(int cond, const char *what)
{
	if (!cond) {
		printf("Bail out! %s\n", what);
		exit(1);
	}
}

/* The end of @s's user addresses, from the space: no fixed high address in a test. */
static inline uint64_t task_size(const struct mmp_space *s)
{
	uint64_t ts = 0;

	must(mmp_space_task_size(s, &ts) == 0, "mmp_space_task_size");
	return ts;
}

/* Word 0 of page @page written with @tag; word i holds stamp + i, so no two words match. */
static inline uint64_t stamp(uint64_t tag, uint64_t page)
{
	return 0x5a00000000000000ull | tag << 40 | page << 12;
}

/* Fill @n pages with the stamp of each page; false if a write fails. */
static inline bool fill_pages(struct mmp_cpu *cpu, uint64_t addr, uint64_t n, uint64_t tag)
{
	for (uint64_t p = 0; p < n; p++) {
		for (size_t i = 0; i < PG / 8; i++)
			page_buf[i] = stamp(tag, p) + i;
		if (mmp_write(cpu, addr + p * PG, page_buf, PG))
			return false;
	}
	return true;
}

/*
 * Whether pages [first, first + n) of the range at @base hold their stamps (page
 * index counted from @base), or zeros when @tag is 0.
 */
static inline bool range_holds(struct mmp_cpu *cpu, uint64_t base, uint64_t first, uint64_t n,
			uint64_t tag)
{
	for (uint64_t p = first; p < first + n; p++) {
		if (mmp_read(cpu, base + p * PG, page_buf, PG))
			return false;
		for (size_t i = 0; i < PG / 8; i++)
			if (page_buf[i] != (tag ? stamp(tag, p) + i : 0))
				return false;
	}
	return true;
}

static inline bool pages_hold(struct mmp_cpu *cpu, uint64_t addr, uint64_t n, uint64_t tag)
{
	return range_holds(cpu, addr, 0, n, tag);
}

/* Cheap sample of the canary: the first and last word of every page. */
static inline bool canary_intact(struct env *e)
{
	for (uint64_t p = 0; p < CANARY_LEN / PG; p++) {
		uint64_t w[2];

		if (mmp_read(e->cpu, e->canary + p * PG, &w[0], 8) ||
		    mmp_read(e->cpu, e->canary + p * PG + PG - 8, &w[1], 8))
			return false;
		if (w[0] != stamp(1, p) || w[1] != stamp(1, p) + PG / 8 - 1)
			return false;
	}
	return true;
}

/* A new mapping can be made, written, read back and removed. */
static inline bool fresh_map_works(struct env *e)
{
	uint64_t a;
	bool ok;

	if (mmp_mmap(e->s, 0, 3 * PG, RW, 0, &a))
		return false;
	ok = fill_pages(e->cpu, a, 3, 7) && pages_hold(e->cpu, a, 3, 7);
	return !mmp_munmap(e->s, a, 3 * PG) && ok;
}

/* After an error: invariants hold, old data is intact, the space still works. */
static inline void still_works(struct env *e, const char *what)
{
	int v = mmp_space_verify(e->s);
	bool canary = canary_intact(e), fresh = fresh_map_works(e);

	if (!tap_ok(!v && canary && fresh, "%s: after %s: verify, data intact, space works",
		    e->arch, what))
		printf("#   verify %d (%s), canary %s, fresh mapping %s\n", v, mmp_strerror(v),
		       canary ? "intact" : "BROKEN", fresh ? "works" : "FAILS");
}

/* A space with the sanitizer on, one CPU and a written canary. */
static inline void env_init(struct env *e, const char *arch, size_t phys_bytes)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };

	memset(e, 0, sizeof(*e));
	e->arch = arch;
	must(!mmp_phys_create(phys_bytes, &e->phys), "phys_create");
	must(!mmp_space_create(e->phys, &cfg, &e->s), "space_create");
	must(!mmp_cpu_attach(e->s, &e->cpu), "cpu_attach");
	must(!mmp_mmap(e->s, 0, CANARY_LEN, RW, 0, &e->canary), "canary mmap");
	must(!mmp_madvise(e->s, e->canary, 2 * MiB, MMP_MADV_HUGEPAGE), "canary madvise");
	must(fill_pages(e->cpu, e->canary, CANARY_LEN / PG, 1), "canary fill");
}

static inline void env_fini(struct env *e)
{
	must(!mmp_cpu_detach(e->cpu), "cpu_detach");
	must(!mmp_space_destroy(e->s), "space_destroy");
	must(!mmp_phys_destroy(e->phys), "phys_destroy");
}

/* Scratch mappings live far from the canary, with nothing mapped around them. */
#define SCRATCH 0x200000000ull

static inline uint64_t map_scratch(struct env *e, uint64_t npages)
{
	uint64_t a = 0;

	must(!mmp_mmap(e->s, SCRATCH, npages * PG, RW, MMP_MAP_FIXED_NOREPLACE, &a) && a == SCRATCH,
	     "scratch mmap");
	return a;
}


#endif /* MMP_TESTS_BADINPUT_H */
