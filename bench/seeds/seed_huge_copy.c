/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "huge-copy" (Huang Ying, "mm, huge page: Copy to access sub-page last
 * when copy huge page", 2018): a COW fault on a 2 MiB THP copies 512 sub-pages;
 * copying the one the fault is about last leaves it cache hot for the access
 * that follows. That was the THP COW of its day; since 5.8, and so in the 6.18
 * the library models, the child's write splits the PMD and copies the target
 * 4 KiB alone, whatever the order. The THP trial below is that COW: it still
 * runs every order, variant and target, and shows the split (pmd_split 1,
 * subpage_copy 1), but claims nothing: "no claim: 6.18 splits THP on COW;
 * measured on hugetlb". The hugetlb trial ("hugetlb/" cases) is where 6.18
 * copies a whole 2 MiB page in process_huge_page's order (hugetlb_wp,
 * copy_user_large_folio: fault_hugetlb_cow 1, subpage_copy 512): those cases
 * carry the seed's claim. For each copy variant and sub-page order, and with and without
 * a thread sweeping the shared LLC from another core: the COW fault time, the
 * time to read the target 4 KiB right after (classed L1/L2/L3/DRAM against a
 * calibration in the same run), and how much of an L2-sized victim working set,
 * warm before the fault, is still in L2 after it.
 *
 * MMPRIM_HUGE_NEIGHBOURHOOD (sub-pages) and MMPRIM_VICTIM_KIB override the
 * neighbourhood (L2 / 16 KiB) and the victim size (L2) for experiments.
 *
 * --deterministic runs one trial per order and target with no timing claims,
 * reading each target in its own function (hc_read_<order>_n<target>), so that
 *   valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL=1048576,8,64 \
 *       --cachegrind-out-file=hc.cg mmprim-seeds huge-copy --deterministic
 *   cg_annotate hc.cg | grep hc_read_
 * counts the target-read misses (D1mr, DLmr), identical run to run.
 * MMPRIM_HUGE_VARIANT names the copy variant of that run (default generic).
 *
 * Whether the target is hot is decided from counts where the machine has
 * them, as a latency moves with the neighbours' load on shared vCPUs:
 *   1. perf: the thread's L1D read misses (perf_event_open, user space only)
 *      around each target read, the median over runs per target;
 *   2. cachegrind: the run re-executes itself --deterministic under valgrind
 *      once per copy variant valgrind can run and reads hc_read_* D1mr from
 *      the output file. A simulated cache sees neither another core's
 *      pressure nor non-temporal stores (it fills on them), so it decides the
 *      quiet cases of temporal variants only;
 *   3. the latency classes of the calibration, for everything else.
 * MMPRIM_HUGE_DECIDE=perf|cachegrind|latency starts the list lower down.
 * Each case says which decided ("decided_by" in JSON).
 *
 * A non-temporal copy variant ("-nt", "stnp") writes around the caches: no
 * order makes the target hot with it, and the kernel's copy_user_highpage
 * copies with ordinary stores, so target-last makes no claim there.
 * Neighbourhood-last hands the target's neighbourhood to the temporal
 * sibling, so its claim stands.
 */
#include <errno.h>
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

#include "cache.h"
#include "common.h"
#include "huge_copy.h"
#include "seeds.h"
#include "topo.h"

#define HC_RUNS		12
#define HC_RUNS_QUICK	BENCH_MIN_SAMPLES	/* every claim needs this many per target */
#define HC_CALIB_REPS	3		/* per run, interleaved with the trials */
#define HC_CALIB_EXTRA	20		/* rounds of HC_CALIB_REPS more, at most, until stable */
#define HC_TARGETS	4		/* n = 0, 255, 511, random */
#define HC_MAX_VARIANTS	16
#define HC_DET_NBHD	64		/* fixed in deterministic mode: 512 KiB of footprint */
#define HC_PRESSURE_MIN	(8 * BENCH_MIB)
#define HC_PRESSURE_MAX	(64 * BENCH_MIB)
#define HC_CHART_W	48
#define HC_LINES	(4096 / 64)	/* cache lines of a target read */
/*
 * Counted decisions: hot when at most a quarter of the target's lines miss
 * L1D, cold when half or more do. Both leave room for the lines the
 * counter's own enable (a system call) or the simulator's page-table work
 * between the copy and the read may displace.
 */
#define HC_HOT_MISSES	0.25
#define HC_COLD_MISSES	0.5
/* Why no THP case claims the seed's hot target: its whole-THP copy is not 6.18's THP COW. */
#define HC_NO_CLAIM	"no claim: 6.18 splits THP on COW; measured on hugetlb"

enum hc_decide { HC_DECIDE_PERF, HC_DECIDE_CACHEGRIND, HC_DECIDE_LATENCY, HC_NR_DECIDE };

static const char *const decide_names[HC_NR_DECIDE] = {
	[HC_DECIDE_PERF] = "perf",
	[HC_DECIDE_CACHEGRIND] = "cachegrind",
	[HC_DECIDE_LATENCY] = "latency",
};

static const char *const decide_what[HC_NR_DECIDE] = {
	[HC_DECIDE_PERF] = "L1D read misses of the target read (perf_event_open), median of runs",
	[HC_DECIDE_CACHEGRIND] = ("cachegrind D1 read misses of the target read "
				  "(modelled D1 32 KiB 8-way, LL 1 MiB), one deterministic trial"),
	[HC_DECIDE_LATENCY] = "target-read latency against the calibrated cache classes",
};

static const char *const target_names[HC_TARGETS] = { "0", "255", "511", "rand" };
static const unsigned int target_fixed[HC_TARGETS] = { 0, 255, 511, 137 };

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
static double (*const det_read[MMP_NR_HUGE_ORDERS][HC_TARGETS])(const void *) = {
	[MMP_HUGE_ORDER_ASCENDING] = DET_ROW(ascending),
	[MMP_HUGE_ORDER_TARGET_LAST] = DET_ROW(target_last),
	[MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST] = DET_ROW(neighbourhood_last),
	[MMP_HUGE_ORDER_SEQUENTIAL] = DET_ROW(sequential),
};
_Static_assert(MMP_HUGE_ORDER_SEQUENTIAL + 1 == MMP_NR_HUGE_ORDERS, "a read function per order");

/* ---- the run ---------------------------------------------------------------------------- */

struct hc_run {
	const struct mmp_seed_opts *opts;
	const char *arch;
	bool hugetlb;		/* the trial's page is a hugetlb page, copied whole: the claims */
	struct bench_topo topo;
	bool have_topo;
	struct hc_rig rig;
	struct hc_buf evict;
	struct hc_victim victim, evictor;
	bool have_victim;
	const char *variants[HC_MAX_VARIANTS];
	int nr_variants, nr_press, runs;
	long nbhd;
	size_t pressure_bytes;
	struct hc_calib calib[2];
	struct hc_sample *s;	/* [press][variant][order][target][run] */
	unsigned int *n;	/* the target of each sample */
	double *miss;		/* perf: L1D read misses of each sample's target read */
	uint64_t rng;
	FILE *csv;
	enum hc_decide decide;	/* the best method this machine offers */
	/* cachegrind: D1mr of each (variant, order, target) read, when cg_ok[variant] */
	bool cg_ok[HC_MAX_VARIANTS];
	double cg_d1mr[HC_MAX_VARIANTS][MMP_NR_HUGE_ORDERS][HC_TARGETS];
};

/* ---- counting the target read's misses ------------------------------------------------ */

static int perf_fd = -1;
static double perf_last_misses;

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
static double hc_read_perf(const void *p)
{
	uint64_t count = 0;
	double ns;

	ioctl(perf_fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0);
	ns = hc_read4k_ns(p);
	ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	perf_last_misses = read(perf_fd, &count, sizeof(count)) == sizeof(count) ? (double)count
										   : NAN;
	return ns;
}

static bool variant_nt(const char *name)
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
						 mmp_huge_order_name(o), target_names[t]);
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
static void pick_decide(struct hc_run *h)
{
	const char *env = getenv("MMPRIM_HUGE_DECIDE");
	enum hc_decide from = HC_DECIDE_PERF;

	for (int i = 0; env && i < HC_NR_DECIDE; i++)
		if (!strcmp(env, decide_names[i]))
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
		if (variant_nt(h->variants[v]))
			continue;	/* cachegrind fills the cache on non-temporal stores */
		h->cg_ok[v] = cg_run(h->arch, h->variants[v], h->hugetlb, h->cg_d1mr[v]);
		if (h->cg_ok[v])
			h->decide = HC_DECIDE_CACHEGRIND;
	}
}

/* What decides case (@p, @v): perf everywhere, cachegrind where it ran, quiet; else latency. */
static enum hc_decide case_decide(const struct hc_run *h, int p, int v)
{
	if (h->decide == HC_DECIDE_PERF)
		return HC_DECIDE_PERF;
	if (h->decide == HC_DECIDE_CACHEGRIND && !p && h->cg_ok[v])
		return HC_DECIDE_CACHEGRIND;
	return HC_DECIDE_LATENCY;
}

static size_t cell(const struct hc_run *h, int p, int v, int o, int t)
{
	return (((size_t)p * h->nr_variants + v) * MMP_NR_HUGE_ORDERS + o) * HC_TARGETS + t;
}

static struct hc_sample *sample(const struct hc_run *h, int p, int v, int o, int t, int r)
{
	return &h->s[cell(h, p, v, o, t) * h->runs + r];
}

static unsigned int next_random(struct hc_run *h)
{
	h->rng ^= h->rng << 13;
	h->rng ^= h->rng >> 7;
	h->rng ^= h->rng << 17;
	return h->rng % HC_NR;
}

/*
 * The samples over runs (and targets when @t < 0) of one (pressure, variant,
 * order) into @vals: copy ns (@what 0), read ns (1), victim kept (2). Their
 * count, or -1 when one is missing (NAN).
 */
static int values(const struct hc_run *h, int p, int v, int o, int t, int what, double *vals)
{
	int k = 0;

	for (int tt = t < 0 ? 0 : t; tt < (t < 0 ? HC_TARGETS : t + 1); tt++) {
		for (int r = 0; r < h->runs; r++) {
			const struct hc_sample *s = sample(h, p, v, o, tt, r);

			if (what == 0)
				vals[k++] = s->copy_ns;
			else if (what == 1)
				vals[k++] = s->read_ns;
			else if (h->have_victim)
				vals[k++] = hc_victim_kept(&h->calib[p], s->victim_ns);
		}
	}
	for (int i = 0; i < k; i++)
		if (isnan(vals[i]))
			return -1;
	return k;
}

/* Medians over runs (and targets when @t < 0) of one (pressure, variant, order). */
static double med(const struct hc_run *h, int p, int v, int o, int t, int what)
{
	double vals[HC_RUNS * HC_TARGETS];
	int k = values(h, p, v, o, t, what, vals);

	return k < 0 ? NAN : bench_median(vals, k);
}

/* Copy time ratio ascending / order, paired by target and run. */
static void copy_ci(const struct hc_run *h, int p, int v, int o, struct bench_ci *ci)
{
	double a[HC_RUNS * HC_TARGETS], b[HC_RUNS * HC_TARGETS];
	int na = values(h, p, v, MMP_HUGE_ORDER_ASCENDING, -1, 0, a);
	int nb = values(h, p, v, o, -1, 0, b);
	int n = na < nb ? na : nb;

	bench_ratio_ci(a, b, n < 0 ? 0 : (size_t)n, ci);
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
		int k = values(h, p, v, o, t, 1, vals);
		enum bench_verdict one;

		bench_median_ci(vals, k < 0 ? 0 : k, &m, &lo, &hi);
		one = isnan(limit) ? BENCH_INCONCLUSIVE : bench_verdict_below(lo, hi, k, limit);
		if (one == BENCH_NOT_MET && !(lo > cold))
			one = BENCH_INCONCLUSIVE;
		if (one != BENCH_MET)
			bench_append(miss, len, &off, " n=%s%s", target_names[t],
				     one == BENCH_NOT_MET ? "" : "?");
		all = bench_verdict_and(all, one);
	}
	return all;
}

/* Misses per cache line of target @t's read by @how: the median over runs, or cachegrind's. */
static double misses_per_line(const struct hc_run *h, int p, int v, int o, int t,
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
static enum bench_verdict decide_hot(const struct hc_run *h, int p, int v, int o,
				     enum hc_decide how, char *miss, size_t len)
{
	enum bench_verdict all = BENCH_NO_CLAIM;
	size_t off = 0;

	if (how == HC_DECIDE_LATENCY)
		return target_hot(h, p, v, o, miss, len);
	miss[0] = 0;
	for (int t = 0; t < HC_TARGETS; t++) {
		double m = misses_per_line(h, p, v, o, t, how);
		enum bench_verdict one = isnan(m) ? BENCH_INCONCLUSIVE :
					 m <= HC_HOT_MISSES ? BENCH_MET :
					 m >= HC_COLD_MISSES ? BENCH_NOT_MET : BENCH_INCONCLUSIVE;

		if (one != BENCH_MET)
			bench_append(miss, len, &off, " n=%s%s", target_names[t],
				     one == BENCH_NOT_MET ? "" : "?");
		all = bench_verdict_and(all, one);
	}
	return all;
}

/* Target-last with a non-temporal variant: the stores bypass the cache, nothing to claim. */
static bool claim_applies(const struct hc_run *h, int v, int o)
{
	return !(variant_nt(h->variants[v]) && o == MMP_HUGE_ORDER_TARGET_LAST);
}

/* The variants to measure: every usable one, two when quick, generic when deterministic. */
static void pick_variants(struct hc_run *h)
{
	const char *nt = NULL;

	h->nr_variants = 0;
	if (h->opts->deterministic) {
		const char *env = getenv("MMPRIM_HUGE_VARIANT");

		h->variants[h->nr_variants++] = env && *env ? env : "generic";
		return;
	}
	for (int i = 0; i < mmp_copy_variant_count() && h->nr_variants < HC_MAX_VARIANTS; i++) {
		const char *name = mmp_copy_variant_name(i);

		if (mmp_space_set_copy(h->rig.parent, name))
			continue;	/* this CPU cannot run it */
		if (!nt && variant_nt(name))
			nt = name;
		if (!h->opts->quick || !h->nr_variants)
			h->variants[h->nr_variants++] = name;
	}
	if (h->opts->quick && nt)
		h->variants[h->nr_variants++] = nt;
}

static int measure(struct hc_run *h, int p)
{
	struct hc_calib_set cal = { 0 };
	struct hc_pressure pr = { 0 };
	int err = 0;

	if (p) {
		err = hc_pressure_start(&pr, &h->topo, h->topo.pressure_pu, h->pressure_bytes);
		if (err)
			return err;
	}
	/* One warm-up trial: caches, branch predictors, the allocator's lists. */
	{
		struct hc_trial t = { .order = 0, .variant = h->variants[0], .nbhd = h->nbhd };
		struct hc_sample s;

		err = hc_rig_trial(&h->rig, &t, &s);
	}
	/*
	 * Variants, orders and targets alternate within each run, against drift and
	 * noise; each run calibrates too, so that the classes see the same load.
	 */
	for (int r = 0; r < h->runs && !err; r++) {
		if (!h->opts->deterministic)
			err = hc_calib_collect(&cal, &h->topo, &h->evict, &h->evictor,
					       h->have_victim ? &h->victim : NULL, HC_CALIB_REPS);
		for (int v = 0; v < h->nr_variants && !err; v++) {
			for (int o = 0; o < MMP_NR_HUGE_ORDERS && !err; o++) {
				for (int ti = 0; ti < HC_TARGETS && !err; ti++) {
					struct hc_trial t = {
						.order = o,
						.variant = h->variants[v],
						.nbhd = h->nbhd,
						.n = ti == 3 && !h->opts->deterministic ?
							     next_random(h) : target_fixed[ti],
						.victim = h->have_victim ? &h->victim : NULL,
						.read = h->opts->deterministic ? det_read[o][ti] :
							h->decide == HC_DECIDE_PERF ? hc_read_perf : NULL,
					};
					size_t at = cell(h, p, v, o, ti) * h->runs + r;

					perf_last_misses = NAN;
					err = hc_rig_trial(&h->rig, &t, sample(h, p, v, o, ti, r));
					h->n[at] = t.n;
					h->miss[at] = perf_last_misses;
				}
			}
		}
	}
	/* Calibrate on until every level's median is known within HC_STABLE, or give up. */
	if (h->opts->deterministic)
		hc_calib_finish(&h->calib[p], &cal);	/* none: every level absent */
	for (int extra = 0; !err && !h->opts->deterministic; extra++) {
		hc_calib_finish(&h->calib[p], &cal);
		if (h->calib[p].stable ||
		    extra == (h->opts->quick ? HC_CALIB_EXTRA / 4 : HC_CALIB_EXTRA))
			break;
		err = hc_calib_collect(&cal, &h->topo, &h->evict, &h->evictor,
				       h->have_victim ? &h->victim : NULL, HC_CALIB_REPS);
	}
	if (p)
		hc_pressure_stop(&pr);
	hc_calib_set_free(&cal);
	return err;
}

/* ---- output ------------------------------------------------------------------------------- */

static const char *press_name(int p)
{
	return p ? "pressure" : "no pressure";
}

static void print_calibration(const struct hc_run *h, int p)
{
	const struct hc_calib *c = &h->calib[p];
	char name[32];

	printf("  calibration, %s (4 KiB read, median [95%%] of %d taken through the runs%s):\n",
	       press_name(p), c->reps, c->stable ? "" : "; NOT stable within 10%, classes are rough");
	for (int i = 0; i < HC_NR_CLASSES; i++) {
		if (isnan(c->read_ns[i])) {
			printf("    %-5s absent or unreachable here\n", hc_class_name(i));
			continue;
		}
		printf("    %-5s %5.0f ns [%.0f, %.0f]  class %s%s\n", hc_class_name(i), c->read_ns[i],
		       c->read_lo[i], c->read_hi[i], hc_calib_class_name(c, i, name, sizeof(name)),
		       c->group[i] != i ? " (merged: not told apart from the level below)" : "");
	}
	printf("    target counted as at L1/L2 below %.0f ns, as surely not above %.0f ns\n",
	       hc_hot_limit(c), hc_cold_limit(c));
	if (h->have_victim)
		printf("    victim chase (%zu lines): %.0f us hot, %.0f us after chasing 2 x L2 "
		       "of other lines\n",
		       h->victim.nr_lines, c->victim_hot_ns / 1e3, c->victim_evicted_ns / 1e3);
}

static void print_table(const struct hc_run *h, int p, int v)
{
	char name[32];

	printf("  %-10s %-11s %-19s %9s", h->variants[v], press_name(p), "order", "copy us");
	for (int t = 0; t < HC_TARGETS; t++)
		printf("  read n=%-9s", target_names[t]);
	printf("  victim kept\n");
	for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++) {
		double kept = med(h, p, v, o, -1, 2);

		printf("  %-22s %-19s %9.1f", "", mmp_huge_order_name(o), med(h, p, v, o, -1, 0) / 1e3);
		for (int t = 0; t < HC_TARGETS; t++) {
			double ns = med(h, p, v, o, t, 1);

			printf("  %5.0f ns %-7s", ns, hc_calib_class_name(&h->calib[p],
				hc_classify(&h->calib[p], ns), name, sizeof(name)));
		}
		if (isnan(kept))
			printf("  %10s\n", "n/a");
		else
			printf("  %9.0f%%\n", 100 * kept);
	}
}

/* Target-read latency by order as bars, with the calibration levels marked. */
static void print_chart(const struct hc_run *h, int p, int v)
{
	const struct hc_calib *c = &h->calib[p];
	double top = 0;
	char bar[HC_CHART_W + 1], name[32];

	for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++)
		for (int t = 0; t < HC_TARGETS; t++)
			top = fmax(top, med(h, p, v, o, t, 1));
	for (int i = 0; i < HC_NR_CLASSES; i++)
		if (!isnan(c->read_ns[i]))
			top = fmax(top, c->read_ns[i]);
	printf("  target read latency, %s, %s (each # is %.0f ns; ':' marks L1, L2, L3, DRAM)\n",
	       h->variants[v], press_name(p), top / HC_CHART_W);
	for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++) {
		for (int t = 0; t < HC_TARGETS; t++) {
			double ns = med(h, p, v, o, t, 1);
			int len = (int)lround(ns / top * HC_CHART_W);

			memset(bar, ' ', HC_CHART_W);
			bar[HC_CHART_W] = 0;
			for (int i = 0; i < HC_NR_CLASSES; i++) {
				int at = isnan(c->read_ns[i]) ? -1 :
					 (int)lround(c->read_ns[i] / top * HC_CHART_W) - 1;

				if (at >= 0 && at < HC_CHART_W)
					bar[at] = ':';
			}
			for (int i = 0; i < len && i < HC_CHART_W; i++)
				bar[i] = '#';
			printf("  %-19s n=%-4s |%s| %5.0f ns %s\n", t ? "" : mmp_huge_order_name(o),
			       target_names[t], bar, ns,
			       hc_calib_class_name(c, hc_classify(c, ns), name, sizeof(name)));
		}
	}
}

/*
 * What the seed claimed, seen on this machine's numbers. A THP COW copies one
 * page now, so what is seen is no verdict on the order.
 */
static void print_verdicts(const struct hc_run *h, int p, int v)
{
	double asc = med(h, p, v, MMP_HUGE_ORDER_ASCENDING, -1, 0);
	char buf[64];

	enum hc_decide how = case_decide(h, p, v);

	for (int o = MMP_HUGE_ORDER_TARGET_LAST; o < MMP_NR_HUGE_ORDERS; o++) {
		char miss[64];
		enum bench_verdict hot = decide_hot(h, p, v, o, how, miss, sizeof(miss));
		struct bench_ci ci;

		copy_ci(h, p, v, o, &ci);
		printf("  %-19s copy time ratio %s (%+.1f%% median time) against ascending; ",
		       mmp_huge_order_name(o), bench_ci_str(&ci, buf, sizeof(buf)),
		       100 * (med(h, p, v, o, -1, 0) / asc - 1));
		if (!claim_applies(h, v, o)) {
			printf("target hot: no claim (non-temporal stores bypass the cache)\n");
			continue;
		}
		if (how == HC_DECIDE_LATENCY) {
			printf("target at L1/L2 for every n (below %.0f ns): ",
			       hc_hot_limit(&h->calib[p]));
		} else {
			printf("target L1D misses per line (%s) n=0/255/511/rand", decide_names[how]);
			for (int t = 0; t < HC_TARGETS; t++)
				printf("%s%.2f", t ? "/" : " ", misses_per_line(h, p, v, o, t, how));
			printf(" (ascending");
			for (int t = 0; t < HC_TARGETS; t++)
				printf("%s%.2f", t ? "/" : " ",
				       misses_per_line(h, p, v, MMP_HUGE_ORDER_ASCENDING, t, how));
			printf("), hot at <= %.2f: ", HC_HOT_MISSES);
		}
		printf("%s %s%s%s%s%s\n", h->hugetlb ? "claim" : "seen", bench_verdict_name(hot),
		       *miss ? ", not at" : "", miss, h->hugetlb ? "" : "; ",
		       h->hugetlb ? "" : HC_NO_CLAIM);
	}
	{
		double a[HC_RUNS], b[HC_RUNS];
		int na = values(h, p, v, MMP_HUGE_ORDER_ASCENDING, 0, 0, a);
		int nb = values(h, p, v, MMP_HUGE_ORDER_TARGET_LAST, 0, 0, b);
		struct bench_ci ci;

		int n = na < nb ? na : nb;

		bench_ratio_ci(a, b, n < 0 ? 0 : (size_t)n, &ci);
		printf("  %-19s n=0 is a pure descending sweep: copy time ratio %s against "
		       "ascending\n", "target-last", bench_ci_str(&ci, buf, sizeof(buf)));
	}
	printf("  (decided by %s; n=X? : between hot and cold; %d runs per target)\n",
	       decide_what[how], h->runs);
}

static void json_targets(char *buf, size_t len, size_t *off, const char *key,
			 const struct hc_run *h, int p, int v, int o)
{
	char name[32];

	bench_append(buf, len, off, ",\"%s_read_ns\":{", key);
	for (int t = 0; t < HC_TARGETS; t++)
		bench_append(buf, len, off, "%s\"%s\":%.1f", t ? "," : "", target_names[t],
			     med(h, p, v, o, t, 1));
	bench_append(buf, len, off, "},\"%s_read_class\":{", key);
	for (int t = 0; t < HC_TARGETS; t++)
		bench_append(buf, len, off, "%s\"%s\":\"%s\"", t ? "," : "", target_names[t],
			     hc_calib_class_name(&h->calib[p],
						 hc_classify(&h->calib[p], med(h, p, v, o, t, 1)),
						 name, sizeof(name)));
	bench_append(buf, len, off, "}");
}

static void report_case(const struct hc_run *h, int p, int v, int o)
{
	struct mmp_seed_result base = { .label = "ascending" }, opt = { .label = mmp_huge_order_name(o) };
	double kb = med(h, p, v, MMP_HUGE_ORDER_ASCENDING, -1, 2), ko = med(h, p, v, o, -1, 2);
	enum hc_decide how = case_decide(h, p, v);
	struct mmp_seed_claim claim = {
		.what = how == HC_DECIDE_LATENCY ? "target read at L1/L2 for every n" :
			"target read <= 0.25 L1D misses per line for every n",
		.published = "target cache hot",
	};
	char extra[3584], name[96], miss[64], note[160];
	struct bench_ci ci;
	size_t off = 0;

	copy_ci(h, p, v, o, &ci);
	claim.verdict = decide_hot(h, p, v, o, how, miss, sizeof(miss));
	snprintf(note, sizeof(note), "decided by %s", decide_what[how]);
	claim.note = note;
	if (!claim_applies(h, v, o)) {
		claim.what = NULL;
		claim.note = "no claim: a non-temporal copy bypasses the cache, so no order "
			     "makes the target hot (the kernel's copy_user_highpage uses "
			     "ordinary stores)";
	} else if (!h->hugetlb) {
		/* One 4 KiB copy at every order: a hot target proves nothing about the order. */
		claim.what = NULL;
		claim.note = HC_NO_CLAIM;
	}
	if (h->opts->deterministic) {
		claim.what = NULL;	/* no timing claims */
		claim.note = NULL;
	}
	base.seconds = med(h, p, v, MMP_HUGE_ORDER_ASCENDING, -1, 0) * 1e-9;
	opt.seconds = med(h, p, v, o, -1, 0) * 1e-9;
	base.counters = sample(h, p, v, MMP_HUGE_ORDER_ASCENDING, 0, 0)->counters;
	opt.counters = sample(h, p, v, o, 0, 0)->counters;
	snprintf(name, sizeof(name), "%s%s/%s/%s", h->hugetlb ? "hugetlb/" : "", h->variants[v],
		 p ? "pressure" : "quiet", mmp_huge_order_name(o));
	bench_append(extra, sizeof(extra), &off,
		     "\"hugetlb\":%s,\"variant\":\"%s\",\"order\":\"%s\",\"pressure\":%s,"
		     "\"runs\":%d,\"neighbourhood\":%ld,\"deterministic\":%s,"
		     "\"seconds_is\":\"median COW fault (copy) time over targets and runs\","
		     "\"not_hot_at\":\"%s\",\"non_temporal\":%s,\"decided_by\":\"%s\","
		     "\"calibration\":",
		     h->hugetlb ? "true" : "false", h->variants[v], mmp_huge_order_name(o),
		     p ? "true" : "false", h->runs, h->nbhd,
		     h->opts->deterministic ? "true" : "false", miss,
		     variant_nt(h->variants[v]) ? "true" : "false", decide_names[how]);
	off += hc_calib_json(&h->calib[p], extra + off, sizeof(extra) - off);
	json_targets(extra, sizeof(extra), &off, "baseline", h, p, v, MMP_HUGE_ORDER_ASCENDING);
	json_targets(extra, sizeof(extra), &off, "optimized", h, p, v, o);
	if (how != HC_DECIDE_LATENCY) {
		for (int side = 0; side < 2; side++) {
			bench_append(extra, sizeof(extra), &off, ",\"%s_misses_per_line\":{",
				     side ? "optimized" : "baseline");
			for (int t = 0; t < HC_TARGETS; t++)
				bench_append(extra, sizeof(extra), &off, "%s\"%s\":%.4f",
					     t ? "," : "", target_names[t],
					     misses_per_line(h, p, v,
							     side ? o : MMP_HUGE_ORDER_ASCENDING,
							     t, how));
			bench_append(extra, sizeof(extra), &off, "}");
		}
	}
	bench_append(extra, sizeof(extra), &off,
		     ",\"baseline_victim_kept\":%.3f,\"optimized_victim_kept\":%.3f",
		     isnan(kb) ? -1.0 : kb, isnan(ko) ? -1.0 : ko);
	if (!h->opts->json)
		printf("  [%s%s, %s] copy seconds (median over targets and runs):\n",
		       h->hugetlb ? "hugetlb, " : "", h->variants[v], press_name(p));
	mmp_seed_report(h->opts, "huge-copy", h->arch, name, &base, &opt, &ci, &claim, extra);
}

static void write_csv(const struct hc_run *h)
{
	char name[32];

	if (!h->hugetlb || h->opts->deterministic)
		fprintf(h->csv, "arch,page,pressure,variant,order,target,n,run,copy_ns,read_ns,"
				"read_class,victim_ns,victim_kept\n");
	for (int p = 0; p < h->nr_press; p++)
		for (int v = 0; v < h->nr_variants; v++)
			for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++)
				for (int t = 0; t < HC_TARGETS; t++)
					for (int r = 0; r < h->runs; r++) {
						const struct hc_sample *s = sample(h, p, v, o, t, r);

						fprintf(h->csv, "%s,%s,%d,%s,%s,%s,%u,%d,%.0f,%.0f,%s,%.0f,%.3f\n",
							h->arch, h->hugetlb ? "hugetlb" : "thp", p,
							h->variants[v], mmp_huge_order_name(o),
							target_names[t],
							h->n[cell(h, p, v, o, t) * h->runs + r], r,
							s->copy_ns, s->read_ns,
							hc_calib_class_name(&h->calib[p],
								hc_classify(&h->calib[p], s->read_ns),
								name, sizeof(name)),
							s->victim_ns,
							h->have_victim ? hc_victim_kept(&h->calib[p], s->victim_ns) : NAN);
					}
}

static void print_deterministic(const struct hc_run *h)
{
	printf("huge-copy [%s] --deterministic: one COW of a 2 MiB %s per order and target, "
	       "variant %s, neighbourhood %ld, source swept out of a %zu MiB cache first\n", h->arch,
	       h->hugetlb ? "hugetlb page (copied whole)" : "THP (split, 4 KiB copied)",
	       h->variants[0], h->nbhd, h->evict.len / (size_t)BENCH_MIB);
	printf("  each target 4 KiB is read in its own function; count its misses with\n"
	       "    valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL=1048576,8,64 \\\n"
	       "      --cachegrind-out-file=hc.cg mmprim-seeds huge-copy --deterministic\n"
	       "    cg_annotate hc.cg | grep hc_read_\n"
	       "  (64 lines per 4 KiB: D1mr 64 means every line missed L1, DLmr 64 every line missed LL)\n");
	for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++) {
		char name[32];

		snprintf(name, sizeof(name), "%s", mmp_huge_order_name(o));
		for (char *c = name; *c; c++)
			if (*c == '-')
				*c = '_';
		for (int t = 0; t < HC_TARGETS; t++)
			printf("    hc_read_%s_n%s%s", name, target_names[t],
			       t == HC_TARGETS - 1 ? "\n" : "");
	}
	printf("  (n=rand is n=%u here)\n\n", target_fixed[3]);
}

/* ---- set-up -------------------------------------------------------------------------------- */

static int huge_copy_setup(struct hc_run *h)
{
	const char *env = getenv("MMPRIM_HUGE_NEIGHBOURHOOD");
	unsigned long l2;
	int err;

	if (!h->opts->deterministic) {
		err = bench_topo_init(&h->topo);
		if (err)
			return err;
		h->have_topo = true;
		bench_topo_pin(&h->topo, h->topo.main_pu);
	}
	l2 = h->topo.l2 ? h->topo.l2 : BENCH_MIB;
	/* The library's own default, L2 / 16 KiB, made explicit so that it is printed. */
	h->nbhd = h->opts->deterministic ? HC_DET_NBHD : (long)(l2 / (16 * BENCH_KIB));
	if (env && !h->opts->deterministic)
		h->nbhd = strtol(env, NULL, 0);
	h->nbhd = h->nbhd < 1 ? 1 : h->nbhd > HC_NR ? HC_NR : h->nbhd;
	h->runs = h->opts->deterministic ? 1 : h->opts->quick ? HC_RUNS_QUICK : HC_RUNS;
	h->nr_press = !h->opts->deterministic && h->topo.pressure_pu >= 0 ? 2 : 1;
	h->pressure_bytes = 2 * h->topo.llc;
	if (h->pressure_bytes < HC_PRESSURE_MIN)
		h->pressure_bytes = HC_PRESSURE_MIN;
	if (h->pressure_bytes > HC_PRESSURE_MAX)
		h->pressure_bytes = HC_PRESSURE_MAX;
	h->rng = 0x2545f4914f6cdd1dULL;

	err = hc_rig_create(&h->rig, h->arch, h->hugetlb);
	if (err)
		return err;
	/* 4 x L1d for calibration; 8 MiB stands in for a flush under cachegrind (LL 1 MiB). */
	err = hc_buf_alloc(&h->evict, h->opts->deterministic ? 8 * BENCH_MIB : 4 * l2, true);
	if (err)
		return err;
	if (h->opts->deterministic)
		h->rig.sweep = &h->evict;
	if (!h->opts->deterministic) {
		/* L2-sized by default; MMPRIM_VICTIM_KIB for experiments. */
		size_t vbytes = getenv("MMPRIM_VICTIM_KIB") ?
					strtoul(getenv("MMPRIM_VICTIM_KIB"), NULL, 0) * BENCH_KIB : l2;

		err = hc_victim_init(&h->victim, vbytes, 42);
		if (err)
			return err;
		h->have_victim = true;
		err = hc_victim_init(&h->evictor, 2 * l2, 43);
		if (err)
			return err;
	}
	pick_variants(h);
	pick_decide(h);
	h->s = calloc((size_t)h->nr_press * h->nr_variants * MMP_NR_HUGE_ORDERS * HC_TARGETS *
			      h->runs, sizeof(*h->s));
	h->n = calloc((size_t)h->nr_press * h->nr_variants * MMP_NR_HUGE_ORDERS * HC_TARGETS *
			      h->runs, sizeof(*h->n));
	h->miss = calloc((size_t)h->nr_press * h->nr_variants * MMP_NR_HUGE_ORDERS * HC_TARGETS *
				 h->runs, sizeof(*h->miss));
	return h->s && h->n && h->miss ? 0 : -ENOMEM;
}

static void huge_copy_teardown(struct hc_run *h)
{
	free(h->s);
	free(h->n);
	free(h->miss);
	if (h->have_victim) {
		hc_victim_free(&h->victim);
		hc_victim_free(&h->evictor);
	}
	hc_buf_free(&h->evict);
	if (h->rig.parent)
		hc_rig_destroy(&h->rig);
	if (h->have_topo)
		bench_topo_destroy(&h->topo);
}

static void print_header(const struct hc_run *h)
{
	char a[32], b[32], c[32];

	printf("huge-copy [%s]%s, %s: the seed copies the sub-page a COW fault is about last, so "
	       "it is cache hot\n", h->arch, mmp_seed_quick_tag(h->opts),
	       h->hugetlb ? "hugetlb" : "THP");
	if (h->hugetlb)
		printf("  a 2 MiB hugetlb page: 6.18's hugetlb_wp copies all 512 sub-pages with "
		       "copy_user_large_folio, in the order (the seed's mechanism): the claims hold "
		       "here\n");
	else
		printf("  6.18 splits a shared THP on COW and copies the target 4 KiB alone, "
		       "whatever the order: the cases run, and claim nothing (%s)\n", HC_NO_CLAIM);
	printf("  (Huang Ying, 2018; vm-scalability anon-cow-seq +16.6%% with 36 processes on a "
	       "2-socket Xeon E5-2699 v3: see `mmprim-seeds anon-cow-seq`)\n");
	printf("  host: PU %d, L1d %s, L2 %s, LLC (L%d) %s; ", h->topo.main_pu,
	       bench_topo_size(h->topo.l1d, a, sizeof(a)), bench_topo_size(h->topo.l2, b, sizeof(b)),
	       h->topo.llc_level, bench_topo_size(h->topo.llc, c, sizeof(c)));
	if (h->nr_press > 1)
		printf("pressure: PU %d sweeping %zu MiB read-write\n", h->topo.pressure_pu,
		       h->pressure_bytes / (size_t)BENCH_MIB);
	else
		printf("no other core shares the LLC: no pressure runs\n");
	printf("  per trial: fork, flush the parent's page (%s), warm a %zu KiB victim, time the "
	       "child's write to sub-page n (the COW fault), time reading that 4 KiB, chase the "
	       "victim\n", hc_can_flush() ? "clflush/DC CIVAC" : "cannot flush here",
	       h->victim.nr_lines * 64 / (size_t)BENCH_KIB);
	printf("  neighbourhood-last neighbourhood: %ld sub-pages (L2 / 16 KiB)\n", h->nbhd);
	printf("  noise: shared vCPUs; medians of %d runs, variants, orders and targets "
	       "alternating within each run\n", h->runs);
	printf("  target hot decided by: %s%s\n\n", decide_what[h->decide],
	       h->decide == HC_DECIDE_CACHEGRIND ?
		       " (quiet runs of the variants valgrind ran; the others by latency classes)" :
	       h->decide == HC_DECIDE_LATENCY ?
		       " (no hardware cache counters, no cachegrind run, or MMPRIM_HUGE_DECIDE)" : "");
}

/* One page kind: THP (split, no claim) or hugetlb (copied whole, the seed's claims). */
static int huge_copy_mode(const struct mmp_seed_opts *opts, const char *arch, bool hugetlb)
{
	struct hc_run h = { .opts = opts, .arch = arch, .hugetlb = hugetlb };
	int err;

	err = huge_copy_setup(&h);
	for (int p = 0; p < h.nr_press && !err; p++)
		err = measure(&h, p);
	if (err)
		goto out;
	if (opts->csv) {
		/* THP's rows and header, then hugetlb's rows after them. */
		h.csv = fopen(opts->csv, hugetlb && !opts->deterministic ? "a" : "w");
		if (!h.csv) {
			err = -errno;
			fprintf(stderr, "mmprim-seeds: huge-copy: cannot write --csv %s: %s\n",
				opts->csv, strerror(errno));
			goto out;
		}
		write_csv(&h);
		fclose(h.csv);
	}
	if (!opts->json) {
		if (opts->deterministic) {
			print_deterministic(&h);
		} else {
			print_header(&h);
			for (int p = 0; p < h.nr_press; p++) {
				print_calibration(&h, p);
				for (int v = 0; v < h.nr_variants; v++)
					print_table(&h, p, v);
				putchar('\n');
			}
			for (int p = 0; p < h.nr_press; p++) {
				print_chart(&h, p, 0);
				putchar('\n');
			}
			for (int p = 0; p < h.nr_press; p++) {
				for (int v = 0; v < h.nr_variants; v++) {
					printf("  claims, %s, %s:\n", h.variants[v], press_name(p));
					print_verdicts(&h, p, v);
				}
			}
			putchar('\n');
		}
	}
	/* The side-by-side tables in text for the default variant; every case in JSON. */
	for (int p = 0; p < h.nr_press; p++)
		for (int v = 0; v < h.nr_variants; v++)
			for (int o = MMP_HUGE_ORDER_TARGET_LAST; o < MMP_NR_HUGE_ORDERS; o++)
				if (opts->json || (v == 0 && !opts->deterministic))
					report_case(&h, p, v, o);
	if (!opts->json)
		putchar('\n');
out:
	huge_copy_teardown(&h);
	return err;
}

/*
 * THP, then hugetlb. --deterministic runs one kind (hugetlb unless
 * MMPRIM_HUGE_HUGETLB=0), as its read functions count the misses of one.
 */
static int huge_copy_arch(const struct mmp_seed_opts *opts, const char *arch)
{
	const char *env = getenv("MMPRIM_HUGE_HUGETLB");
	int err = 0;

	if (opts->deterministic)
		return huge_copy_mode(opts, arch, !env || strcmp(env, "0"));
	for (int hugetlb = 0; hugetlb < 2 && !err; hugetlb++)
		err = huge_copy_mode(opts, arch, hugetlb);
	return err;
}

const struct mmp_seed mmp_seed_huge_copy = {
	.name = "huge-copy",
	.takes = MMP_SEED_TAKES_CSV | MMP_SEED_TAKES_DETERMINISTIC,
	.title = "COW of a 2 MiB page, THP (split since 5.8) and hugetlb (copied whole): "
		 "target-read latency per order and variant",
	/* Data movement is host code: one back end shows it; --arch picks another. */
	.archs = (const char *const[]){ "x86_64", NULL },
	.run_arch = huge_copy_arch,
};
