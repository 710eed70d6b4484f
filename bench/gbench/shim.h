/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A C face for Google Benchmark, so that benches are written in C. A handle
 * from mmp_bench_register() takes arguments and options; the state passed to
 * the bench function is the benchmark::State of the running benchmark.
 * JSON output is Google Benchmark's own: --benchmark_format=json.
 */
#ifndef MMP_BENCH_SHIM_H
#define MMP_BENCH_SHIM_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mmp_bench;		/* a registered benchmark */
struct mmp_bench_state;		/* the state of one run of it */

typedef void (*mmp_bench_fn)(struct mmp_bench_state *st, void *arg);

enum mmp_bench_time_unit {
	MMP_BENCH_NS,
	MMP_BENCH_US,
	MMP_BENCH_MS,
	MMP_BENCH_S,
};

/* Register @fn under @name (copied); @arg is handed to every run. NULL on failure. */
struct mmp_bench *mmp_bench_register(const char *name, mmp_bench_fn fn, void *arg);

/* Options; each returns @b so calls chain. Every arg set adds "/<value>..." to the name. */
struct mmp_bench *mmp_bench_arg(struct mmp_bench *b, long a);
struct mmp_bench *mmp_bench_args(struct mmp_bench *b, long a0, long a1);
/* Powers of 8 from @lo to @hi, as Benchmark::Range(). */
struct mmp_bench *mmp_bench_arg_range(struct mmp_bench *b, long lo, long hi);
struct mmp_bench *mmp_bench_arg_dense_range(struct mmp_bench *b, long lo, long hi, int step);
/* Time comes from mmp_bench_set_iteration_time() only. */
struct mmp_bench *mmp_bench_use_manual_time(struct mmp_bench *b);
struct mmp_bench *mmp_bench_iterations(struct mmp_bench *b, long n);
struct mmp_bench *mmp_bench_min_time(struct mmp_bench *b, double seconds);
struct mmp_bench *mmp_bench_unit(struct mmp_bench *b, enum mmp_bench_time_unit unit);

/* Inside a bench function. */
bool mmp_bench_keep_running(struct mmp_bench_state *st);
long mmp_bench_range(struct mmp_bench_state *st, int i);
/* Iterations run so far (after the loop: all of them). */
long mmp_bench_iterations_done(struct mmp_bench_state *st);
/* A user counter reported as is. */
void mmp_bench_counter(struct mmp_bench_state *st, const char *name, double value);
/* A user counter reported divided by the iteration count: pass the run's total. */
void mmp_bench_counter_avg(struct mmp_bench_state *st, const char *name, double total);
void mmp_bench_set_iteration_time(struct mmp_bench_state *st, double seconds);
void mmp_bench_pause_timing(struct mmp_bench_state *st);
void mmp_bench_resume_timing(struct mmp_bench_state *st);
void mmp_bench_set_label(struct mmp_bench_state *st, const char *label);
/* Mark the run failed; the keep-running loop ends after the current iteration. */
void mmp_bench_skip_with_error(struct mmp_bench_state *st, const char *msg);

/* Parse --benchmark_* flags, run what they select: 0, or 1 on bad flags, no match or a skip. */
int mmp_bench_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* MMP_BENCH_SHIM_H */
