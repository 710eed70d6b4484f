/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "huge-copy" (bench/seeds/seed_huge_copy.c): whether the target is cache
 * hot after the copy, and what decides it. Counted where the machine can count
 * (perf's L1D read misses around each target read; cachegrind rerunning this
 * binary --deterministic, with one read function per order and target for it to
 * count), else the target-read latency against the calibrated cache classes.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seed_huge_copy.h"

#define HC_LINES	(4096 / 64)	/* cache lines of a target read */

const char *const hc_decide_names[HC_NR_DECIDE] = {
	[HC_DECIDE_PERF] = "perf",
	[HC_DECIDE_CACHEGRIND] = "cachegrind",
	[HC_DECIDE_LATENCY] = "latency",
};

const char *const hc_decide_what[HC_NR_DECIDE] = {
	[HC_DECIDE_PERF] = "L1D read misses of the target read (perf_event_open), median of runs",
	[HC_DECIDE_CACHEGRIND] = ("cachegrind D1 read misses of the target read "
				  "(modelled D1 32 KiB 8-way, LL 1 MiB), one deterministic trial"),
	[HC_DECIDE_LATENCY] = "target-read latency against the calibrated cache classes",
};

/* ---- deterministic mode: one read function per (order, target) for cachegrind ------ */

static volatile uint64_t det_sink;

#define DET_READ(order, t)							\
	static __attribute__((noinline)) double hc_read_##order##_n##t(const void *p) \
	{									\
		det_sink += hc_read4k(p);					\
		return 0;							\
	}
#define DET_READ_ORDER(order)							\
	DET_READ(order, 0) DET_READ(order, 255) DET_READ(order, 511) DET_READ(order, rand)
DET_READ_ORDER(ascending)
DET_READ_ORDER(target_last)
DET_READ_ORDER(neighbourhood_last)
DET_READ_ORDER(sequential)

#define DET_ROW(order)								\
	{ hc_read_##order##_n0, hc_read_##order##_n255, hc_read_##order##_n511,	\
	  hc_read_##order##_nrand }
double (*const hc_det_read[MMP_NR_HUGE_ORDERS][HC_TARGETS])(const void *) = {
	[MMP_HUGE_ORDER_ASCENDING] = DET_ROW(ascending),
	[MMP_HUGE_ORDER_TARGET_LAST] = DET_ROW(target_last),
	[MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST] = DET_ROW(neighbourhood_last),
	[MMP_HUGE_ORDER_SEQUENTIAL] = DET_ROW(sequential),
};
_Static_assert(MMP_HUGE_ORDER_SEQUENTIAL + 1 == MMP_NR_HUGE_ORDERS, "a read function per order");

/* ---- counting the target read's misses ------------------------------------------------ */

static int perf_fd = -1;
double hc_perf_last_misses;

/* The thread's user-space L1D read misses; -1 when the machine gives none (a VM, paranoia). */
static int perf_open_l1d(void)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_HW_CACHE,
		.config = PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
			  (PERF_COUNT_HW_CACHE_RESULT_MISS << 16),
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/* hc_trial.read: the target read timed as hc_read4k_ns, its L1D misses counted around it. */
double hc_read_perf(const void *p)
{
	uint64_t count = 0;
	double ns;

	ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	ns = hc_read4k_ns(p);
	ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	hc_perf_last_misses = read(perf_fd, &count, sizeof(count)) == sizeof(count) ? (double)count
										   : NAN;
	return ns;
}

bool hc_variant_nt(const char *name)
{
	size_t len = strlen(name);

	return (len > 3 && !strcmp(name + len - 3, "-nt")) || !strcmp(name, "stnp");
}

/*
 * Sum the D1mr of each hc_read_<order>_n<target> function in cachegrind's
 * output @path into @d1mr; true when every one was found.
 */
static bool cg_parse(const char *path, double d1mr[MMP_NR_HUGE_ORDERS][HC_TARGETS])
{
	char line[512], want[64];
	int col = -1, fo = -1, ft = -1, found = 0;
	bool seen[MMP_NR_HUGE_ORDERS][HC_TARGETS] = { { false } };
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	memset(d1mr, 0, sizeof(double) * MMP_NR_HUGE_ORDERS * HC_TARGETS);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "events:", 7)) {
			/* The column of D1mr among the counts that follow a line number. */
			char *tok = strtok(line + 7, " \n");

			for (int i = 0; tok; i++, tok = strtok(NULL, " \n"))
				if (!strcmp(tok, "D1mr"))
					col = i;
		} else if (!strncmp(line, "fn=", 3)) {
			fo = ft = -1;
			for (int o = 0; o < MMP_NR_HUGE_ORDERS && fo < 0; o++) {
				for (int t = 0; t < HC_TARGETS; t++) {
					snprintf(want, sizeof(want), "hc_read_%s_n%s\n",
						 mmp_huge_order_name(o), hc_target_names[t]);
					for (char *c = want; *c; c++)
						if (*c == '-')
							*c = '_';
					if (!strcmp(line + 3, want)) {
						fo = o;
						ft = t;
						found += !seen[o][t];
						seen[o][t] = true;
						break;
					}
				}
			}
		} else if (!strncmp(line, "fl=", 3) || !strncmp(line, "fi=", 3) ||
			   !strncmp(line, "fe=", 3)) {
			continue;	/* the same function, inlined code of another file */
		} else if (fo >= 0 && col >= 0 && line[0] >= '0' && line[0] <= '9') {
			char *tok = strtok(line, " \n");	/* the line number */

			for (int i = 0; (tok = strtok(NULL, " \n")); i++) {
				if (i == col)
					d1mr[fo][ft] += strtod(tok, NULL);
			}
		}
	}
	fclose(f);
	return col >= 0 && found == MMP_NR_HUGE_ORDERS * HC_TARGETS;
}

/*
 * This binary, --deterministic with copy variant @variant, under cachegrind:
 * true with @d1mr filled when valgrind is there, ran it and counted every read.
 */
static bool cg_run(const char *arch, const char *variant, bool hugetlb,
		   double d1mr[MMP_NR_HUGE_ORDERS][HC_TARGETS])
{
	char self[4096], out[] = "/tmp/mmprim-hc-cg-XXXXXX", outarg[64];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fd, status;
	bool ok;
	pid_t pid;

	if (len <= 0)
		return false;
	self[len] = 0;
	fd = mkstemp(out);
	if (fd < 0)
		return false;
	close(fd);
	snprintf(outarg, sizeof(outarg), "--cachegrind-out-file=%s", out);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		setenv("MMPRIM_HUGE_VARIANT", variant, 1);
		setenv("MMPRIM_HUGE_HUGETLB", hugetlb ? "1" : "0", 1);
		execlp("valgrind", "valgrind", "--tool=cachegrind", "--cache-sim=yes",
		       "--D1=32768,8,64", "--LL=1048576,8,64", outarg, self, "huge-copy",
		       "--deterministic", "--arch", arch, (char *)NULL);
		_exit(127);
	}
	ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	     !WEXITSTATUS(status) && cg_parse(out, d1mr);
	unlink(out);
	return ok;
}

/* The best way this machine has of counting the target read's misses. */
void hc_pick_decide(struct hc_run *h)
{
	const char *env = getenv("MMPRIM_HUGE_DECIDE");
	enum hc_decide from = HC_DECIDE_PERF;

	for (int i = 0; env && i < HC_NR_DECIDE; i++)
		if (!strcmp(env, hc_decide_names[i]))
			from = i;
	h->decide = HC_DECIDE_LATENCY;
	if (h->opts->deterministic)
		return;
	if (from <= HC_DECIDE_PERF && perf_fd < 0)
		perf_fd = perf_open_l1d();
	if (from <= HC_DECIDE_PERF && perf_fd >= 0) {
		h->decide = HC_DECIDE_PERF;
		return;
	}
	if (from > HC_DECIDE_CACHEGRIND)
		return;
	for (int v = 0; v < h->nr_variants; v++) {
		if (hc_variant_nt(h->variants[v]))
			continue;	/* cachegrind fills the cache on non-temporal stores */
		h->cg_ok[v] = cg_run(h->arch, h->variants[v], h->hugetlb, h->cg_d1mr[v]);
		if (h->cg_ok[v])
			h->decide = HC_DECIDE_CACHEGRIND;
	}
}

/* What decides case (@p, @v): perf everywhere, cachegrind where it ran, quiet; else latency. */
enum hc_decide hc_case_decide(const struct hc_run *h, int p, int v)
{
	if (h->decide == HC_DECIDE_PERF)
		return HC_DECIDE_PERF;
	if (h->decide == HC_DECIDE_CACHEGRIND && !p && h->cg_ok[v])
		return HC_DECIDE_CACHEGRIND;
	return HC_DECIDE_LATENCY;
}

/*
 * The claim "the target is read from L1/L2 at every n": met for a target when
 * the interval of its median read time lies below the boundary between L2 and
 * the next level up, not met when it lies above the calibrated interval of that
 * level too and at HC_COLD_RATIO times the L1/L2 read at least (a load that
 * slows every read, or the calibration catching the host in a faster state
 * than the target's samples, must not turn hot into cold; hc_cold_limit()),
 * inconclusive between. @miss gets the targets that are not, or not surely.
 */
static enum bench_verdict target_hot(const struct hc_run *h, int p, int v, int o, char *miss,
				     size_t len)
{
	enum bench_verdict all = BENCH_NO_CLAIM;
	double limit = hc_hot_limit(&h->calib[p]), cold = hc_cold_limit(&h->calib[p]);
	size_t off = 0;

	miss[0] = 0;
	for (int t = 0; t < HC_TARGETS; t++) {
		double vals[HC_RUNS], m, lo, hi;
		int k = hc_values(h, p, v, o, t, 1, vals);
		enum bench_verdict one;

		bench_median_ci(vals, k < 0 ? 0 : k, &m, &lo, &hi);
		one = isnan(limit) ? BENCH_INCONCLUSIVE : bench_verdict_below(lo, hi, k, limit);
		if (one == BENCH_NOT_MET && !(lo > cold))
			one = BENCH_INCONCLUSIVE;
		if (one != BENCH_MET)
			bench_append(miss, len, &off, " n=%s%s", hc_target_names[t],
				     one == BENCH_NOT_MET ? "" : "?");
		all = bench_verdict_and(all, one);
	}
	return all;
}

/* Misses per cache line of target @t's read by @how: the median over runs, or cachegrind's. */
double hc_misses_per_line(const struct hc_run *h, int p, int v, int o, int t,
			  enum hc_decide how)
{
	double vals[HC_RUNS];
	int k = 0;

	if (how == HC_DECIDE_CACHEGRIND)
		return h->cg_d1mr[v][o][t] / HC_LINES;
	if (how != HC_DECIDE_PERF)
		return NAN;
	for (int r = 0; r < h->runs; r++) {
		double m = h->miss[cell(h, p, v, o, t) * h->runs + r];

		if (isnan(m))
			return NAN;
		vals[k++] = m;
	}
	return k ? bench_median(vals, k) / HC_LINES : NAN;
}

/*
 * The claim "the target is cache hot at every n", decided by @how: from miss
 * counts, met when every target's misses per line are at most HC_HOT_MISSES,
 * not met when one's are HC_COLD_MISSES or more; else from latency classes.
 */
enum bench_verdict hc_decide_hot(const struct hc_run *h, int p, int v, int o,
				 enum hc_decide how, char *miss, size_t len)
{
	enum bench_verdict all = BENCH_NO_CLAIM;
	size_t off = 0;

	if (how == HC_DECIDE_LATENCY)
		return target_hot(h, p, v, o, miss, len);
	miss[0] = 0;
	for (int t = 0; t < HC_TARGETS; t++) {
		double m = hc_misses_per_line(h, p, v, o, t, how);
		enum bench_verdict one = isnan(m) ? BENCH_INCONCLUSIVE :
					 m <= HC_HOT_MISSES ? BENCH_MET :
					 m >= HC_COLD_MISSES ? BENCH_NOT_MET : BENCH_INCONCLUSIVE;

		if (one != BENCH_MET)
			bench_append(miss, len, &off, " n=%s%s", hc_target_names[t],
				     one == BENCH_NOT_MET ? "" : "?");
		all = bench_verdict_and(all, one);
	}
	return all;
}

/* Target-last with a non-temporal variant: the stores bypass the cache, nothing to claim. */
bool hc_claim_applies(const struct hc_run *h, int v, int o)
{
	return !(hc_variant_nt(h->variants[v]) && o == MMP_HUGE_ORDER_TARGET_LAST);
}
