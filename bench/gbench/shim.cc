// SPDX-License-Identifier: LGPL-2.1-or-later
// Google Benchmark behind the C interface of shim.h. The opaque C types are
// the C++ objects themselves, so the casts below are the whole translation.
#include <benchmark/benchmark.h>

#include "shim.h"

using benchmark::State;
using benchmark::internal::Benchmark;

static inline Benchmark *B(struct mmp_bench *b) { return reinterpret_cast<Benchmark *>(b); }
static inline struct mmp_bench *H(Benchmark *b) { return reinterpret_cast<struct mmp_bench *>(b); }
static inline State &S(struct mmp_bench_state *st) { return *reinterpret_cast<State *>(st); }

extern "C" {

struct mmp_bench *mmp_bench_register(const char *name, mmp_bench_fn fn, void *arg)
{
	// No exception may cross into C: report failure as NULL.
	try {
		return H(benchmark::RegisterBenchmark(name, [fn, arg](State &st) {
			fn(reinterpret_cast<struct mmp_bench_state *>(&st), arg);
		}));
	} catch (...) {
		return nullptr;
	}
}

struct mmp_bench *mmp_bench_arg(struct mmp_bench *b, long a) { return H(B(b)->Arg(a)); }

struct mmp_bench *mmp_bench_args(struct mmp_bench *b, long a0, long a1)
{
	return H(B(b)->Args({ a0, a1 }));
}

struct mmp_bench *mmp_bench_arg_range(struct mmp_bench *b, long lo, long hi)
{
	return H(B(b)->Range(lo, hi));
}

struct mmp_bench *mmp_bench_arg_dense_range(struct mmp_bench *b, long lo, long hi, int step)
{
	return H(B(b)->DenseRange(lo, hi, step));
}

struct mmp_bench *mmp_bench_use_manual_time(struct mmp_bench *b)
{
	return H(B(b)->UseManualTime());
}

struct mmp_bench *mmp_bench_iterations(struct mmp_bench *b, long n)
{
	return H(B(b)->Iterations(n));
}

struct mmp_bench *mmp_bench_min_time(struct mmp_bench *b, double s)
{
	return H(B(b)->MinTime(s));
}

struct mmp_bench *mmp_bench_unit(struct mmp_bench *b, enum mmp_bench_time_unit unit)
{
	static const benchmark::TimeUnit units[] = {
		benchmark::kNanosecond, benchmark::kMicrosecond,
		benchmark::kMillisecond, benchmark::kSecond,
	};

	return H(B(b)->Unit(units[unit <= MMP_BENCH_S ? unit : MMP_BENCH_NS]));
}

bool mmp_bench_keep_running(struct mmp_bench_state *st) { return S(st).KeepRunning(); }
long mmp_bench_range(struct mmp_bench_state *st, int i) { return S(st).range(i); }
long mmp_bench_iterations_done(struct mmp_bench_state *st) { return S(st).iterations(); }

void mmp_bench_counter(struct mmp_bench_state *st, const char *name, double value)
{
	S(st).counters[name] = benchmark::Counter(value);
}

void mmp_bench_counter_avg(struct mmp_bench_state *st, const char *name, double total)
{
	S(st).counters[name] = benchmark::Counter(total, benchmark::Counter::kAvgIterations);
}

void mmp_bench_set_iteration_time(struct mmp_bench_state *st, double s)
{
	S(st).SetIterationTime(s);
}

void mmp_bench_pause_timing(struct mmp_bench_state *st) { S(st).PauseTiming(); }
void mmp_bench_resume_timing(struct mmp_bench_state *st) { S(st).ResumeTiming(); }
void mmp_bench_set_label(struct mmp_bench_state *st, const char *label) { S(st).SetLabel(label); }

// Remembered so that a failed bench fails the process too (smoke tests).
static bool skipped_with_error;

void mmp_bench_skip_with_error(struct mmp_bench_state *st, const char *msg)
{
	skipped_with_error = true;
	S(st).SkipWithError(msg);
}

int mmp_bench_main(int argc, char **argv)
{
	size_t ran;

	benchmark::Initialize(&argc, argv);
	/* An option nobody knows is a usage error, as in the other tools. */
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 2;
	ran = benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return ran && !skipped_with_error ? 0 : 1;
}

} // extern "C"
