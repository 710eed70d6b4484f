/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the bench runners: clocks, a ready-to-use space with a CPU,
 * counter deltas and the side-by-side table (JSON: tools/common/json.h).
 */
#ifndef MMP_BENCH_COMMON_H
#define MMP_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mmprim/mmprim.h>

#define BENCH_KIB	(1ULL << 10)
#define BENCH_MIB	(1ULL << 20)
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define BENCH_MIN(a, b)	((a) < (b) ? (a) : (b))
#define BENCH_MAX(a, b)	((a) > (b) ? (a) : (b))

/*
 * bench_append() - printf to @buf (@len bytes) at *@off and advance it; output
 * that does not fit is cut, *@off never passes @len and @buf stays terminated.
 */
__attribute__((format(printf, 4, 5)))
void bench_append(char *buf, size_t len, size_t *off, const char *fmt, ...);

/* The modeled hardware time of @c on @space's back end (mmp_modeled_ns()), in seconds. */
double bench_modeled_s(struct mmp_space *space, const struct mmp_counters *c);

/* Bit of @order in a bench_env THP mask. */
#define BENCH_THP(order)	(1u << (order))

/* CLOCK_MONOTONIC, in seconds and in nanoseconds. */
double bench_now(void);
uint64_t bench_now_ns(void);

/*
 * bench_phys_warm() - have the host back every frame of @phys now, contents
 * kept, so that no timed sample pays a host page fault. 0 or a negative errno.
 */
int bench_phys_warm(struct mmp_phys *phys);
/*
 * bench_phys_create_warm() - mmp_phys_create() of @bytes, then bench_phys_warm():
 * the phys every runner measures on. 0 or a negative errno; on error *@phys is NULL.
 */
int bench_phys_create_warm(size_t bytes, struct mmp_phys **phys);

/* A space with one CPU attached to the calling thread. */
struct bench_env {
	struct mmp_phys *phys;
	struct mmp_space *space;
	struct mmp_cpu *cpu;
	bool own_phys;
};

/**
 * bench_env_create() - a space of back end @arch on @phys with a CPU.
 * @phys: shared physical memory, or NULL to create @phys_bytes of it (owned,
 *	warmed with bench_phys_warm()).
 * @thp_always: BENCH_THP(order) bits of the orders (2..9) set to MMP_THP_ALWAYS;
 *	the others keep the library defaults.
 *
 * Returns 0 or a negative errno; on error @env holds nothing.
 */
int bench_env_create(struct bench_env *env, struct mmp_phys *phys, size_t phys_bytes,
		     const char *arch, unsigned int thp_always);
void bench_env_destroy(struct bench_env *env);
/*
 * Detach and re-attach the CPU, for a thread that alternates between spaces: a
 * thread runs one simulated CPU at a time.
 */
int bench_env_detach(struct bench_env *env);
int bench_env_attach(struct bench_env *env);

/* Is @arch a registered back end? */
bool bench_arch_valid(const char *arch);

/* Folio size in KiB of @order, and back (-1 when @kib is not a power of two times 4). */
unsigned long bench_order_kib(unsigned int order);
int bench_kib_order(unsigned long kib);

/* @out = @after - @before, counter by counter. */
void bench_counters_sub(struct mmp_counters *out, const struct mmp_counters *after,
			const struct mmp_counters *before);

/* Width of the name and value columns of the side-by-side tables. */
#define BENCH_NAME_W	20
#define BENCH_VALUE_W	16

/* Rows "name  baseline  optimized" of every counter non-zero on either side. */
void bench_print_counter_table(FILE *f, const struct mmp_counters *base,
			       const struct mmp_counters *opt);

/* Median of @n values (0 when @n is 0); @v is left untouched. */
double bench_median(const double *v, size_t n);

#endif /* MMP_BENCH_COMMON_H */
