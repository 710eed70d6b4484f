/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What most tests share: a space of a back end, checks that bail out, counters, mappings. */
#ifndef MMP_TEST_UTIL_H
#define MMP_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include <mmprim/mmprim.h>

#include "tap.h"

#define MiB (1ULL << 20)
#define KiB (1ULL << 10)

static inline struct mmp_space *new_space(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct mmp_space *s = NULL;

	tap_require(mmp_space_create(phys, &cfg, &s) == 0, "create a %s space", arch);
	return s;
}

/*
 * Is there a host kernel to compare @what with? Not under qemu-user (a cross
 * build's tests, MMP_TEST_NO_HOST from meson), whose emulation of the calls
 * answers for itself: the test says what it leaves out.
 */
static inline bool host_oracle(const char *what)
{
	if (!getenv("MMP_TEST_NO_HOST"))
		return true;
	printf("# %s: no host kernel under qemu-user, not compared\n", what);
	return false;
}

/* A precondition of the checks that follow: bail out when it does not hold. */
#define must(cond, ...)							\
	do {								\
		if (!(cond))						\
			tap_require(0, __VA_ARGS__);			\
	} while (0)

/* The counters' change since @before. */
static inline void counters_since(struct mmp_space *s, const struct mmp_counters *before,
				  struct mmp_counters *d)
{
	struct mmp_counters now;

	mmp_space_counters(s, &now);
	for (int c = 0; c < MMP_NR_COUNTERS; c++)
		d->v[c] = now.v[c] - before->v[c];
}

static inline uint64_t counter(struct mmp_space *s, enum mmp_counter c)
{
	struct mmp_counters cs;

	mmp_space_counters(s, &cs);
	return cs.v[c];
}

static inline uint64_t map(struct mmp_space *s, uint64_t len, int prot)
{
	uint64_t addr = 0;

	tap_require(mmp_mmap(s, 0, len, prot, 0, &addr) == 0, "mmap %llu bytes",
		    (unsigned long long)len);
	return addr;
}

/* The end of @s's user addresses: tests take high addresses from it, never from constants. */
static inline uint64_t task_size(const struct mmp_space *s)
{
	uint64_t ts = 0;

	tap_require(mmp_space_task_size(s, &ts) == 0, "the task size of a %s space",
		    mmp_space_arch(s));
	return ts;
}

static inline uint64_t rss(struct mmp_space *s)
{
	struct mmp_space_stat st;

	mmp_space_stat(s, &st);
	return st.rss_anon_pages;
}

#define for_each_arch(i, name)							\
	for (int i = 0; i < mmp_arch_count() && ((name) = mmp_arch_name(i)); i++)

/* Write and read one 8-byte word through @cpu; a read that faults gives 0xbad. */
static inline int put8(struct mmp_cpu *cpu, uint64_t a, uint64_t v)
{
	return mmp_write(cpu, a, &v, 8);
}

static inline uint64_t get8(struct mmp_cpu *cpu, uint64_t a)
{
	uint64_t v = 0xbad;

	mmp_read(cpu, a, &v, 8);
	return v;
}

#endif /* MMP_TEST_UTIL_H */
