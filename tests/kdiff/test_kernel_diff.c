/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host kernel as the oracle: random sequences of mmap, munmap, mprotect,
 * mremap, madvise, reads, writes and fork run in host processes and in
 * simulated spaces of every back end (defaults, and switches drawn from the
 * seed and toggled mid-sequence); every return value, byte and VMA must agree
 * (tests/kdiff/). Each sequence prints its seed; a failure writes the op log
 * and a minimized log that replay with --replay FILE (several --replay replay
 * each in turn: tests/kdiff/departures/ holds the ones found and fixed).
 *
 *   test_kernel_diff [--seed S] [--ops N] [--seconds T | --total N] [--arch A] [--variant N]
 *                    [--no-host] [--no-state] [--verify-every N] [--threads N]
 *                    [--replay FILE] [--no-minimize] [--minimize-seconds T] [-v]
 *
 * --seconds T runs sequences of --ops N ops, one seed after another, for T
 * seconds; --total N until N ops in all (every op runs on every back end).
 *
 * --threads N adds N threads, each on CPUs of its own, writing and reading back
 * their own regions of process 0 while the sequence runs; their data and
 * mmp_space_verify are checked at quiescent points.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <mmprim/mmprim.h>

#include "kdiff.h"
#include "stress.h"
#include "tap.h"

#define KV(a, b, c)	(((a) << 16) | ((b) << 8) | (c))

static unsigned int host_version(void)
{
	struct utsname u;
	unsigned int a = 0, b = 0, c = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u.%u", &a, &b, &c) < 2)
		return 0;
	return KV(a, b, c > 255 ? 255 : c);
}

/*
 * The release this run checks, and each rule of the release table: a rule
 * system calls can see is compared with the host when the host has it (a
 * host older than the modelled release gets the library modelling its own
 * release); the others are for the back ends among themselves and
 * test_release, which checks each on both sides of its release.
 */
static void version_table(struct kd_options *opt)
{
	unsigned int host = opt->host_version, modeled = MMP_KERNEL_MODELED, checked;
	bool maybe_guard = opt->host && opt->cfg.maybe_guard;

	/* A host older than the release modelled gets its own release modelled. */
	if (!opt->kernel_version && opt->host && host && host < modeled && host >= MMP_KERNEL_OLDEST)
		opt->kernel_version = host;
	/* A 6.18.y host with 6.19's VM_MAYBE_GUARD: model 6.19, whose other rules it cannot see. */
	if (!opt->kernel_version && maybe_guard && modeled < MMP_KERNEL_VERSION(6, 19, 0)) {
		opt->kernel_version = MMP_KERNEL_VERSION(6, 19, 0);
		printf("# the host marks guard VMAs VM_MAYBE_GUARD (6.19's, taken by 6.18.y): "
		       "modelling 6.19\n");
	}
	checked = opt->kernel_version ? opt->kernel_version : modeled;
	printf("# modelling Linux %u.%u (MMP_OPT_KERNEL_VERSION) against %s %u.%u.%u\n",
	       checked >> 16, (checked >> 8) & 255, opt->host ? "the host," : "no host; it runs",
	       host >> 16, (host >> 8) & 255, host & 255);
	for (unsigned int i = 0; mmp_release_rule(i); i++) {
		const struct mmp_release_rule *r = mmp_release_rule(i);
		bool modelled = checked >= r->since, has = host >= r->since;

		if (!strcmp(r->name, "guard_vma_flag"))
			has = maybe_guard;

		printf("# %s, since %u.%u%s%s: %s; %s\n", r->name, r->since >> 16, (r->since >> 8) & 255,
		       r->arches ? " on " : "", r->arches ? r->arches : "",
		       modelled ? "modelled" : "not modelled",
		       !(r->flags & MMP_RULE_SYSCALL_VISIBLE) ? "not seen by system calls (test_release)" :
		       !opt->host ? "back ends against each other" :
		       has == modelled ? "checked against the host" :
		       "the host differs: expect divergences there");
	}
}

static void write_log(const char *path, uint64_t seed, const struct kd_op *ops, uint64_t n)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		printf("# cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	/* The seed draws the variants' settings: a replay needs it too. */
	fprintf(f, "# seed %#" PRIx64 "\n", seed);
	fprintf(f, "# window %#llx\n", KD_WIN_BASE);
	for (uint64_t i = 0; i < n; i++)
		kd_print_op(f, &ops[i]);
	fclose(f);
}

static struct kd_op *read_log(const char *path, uint64_t *n, uint64_t *seed)
{
	FILE *f = fopen(path, "r");
	struct kd_op *ops = NULL;
	uint64_t cap = 0, line = 0, window = 0x3000000000ULL;	/* before logs named it */
	char buf[512];

	*n = 0;
	if (!f)
		return NULL;
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		if (sscanf(buf, "# seed %" SCNx64, seed) == 1 ||
		    sscanf(buf, "# window %" SCNx64, &window) == 1 || buf[0] == '#' || buf[0] == '\n')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			ops = realloc(ops, cap * sizeof(*ops));
			if (!ops)
				break;
		}
		if (kd_parse_op(buf, &ops[*n])) {
			printf("# %s:%" PRIu64 ": not an op: %s", path, line, buf);
			free(ops);
			fclose(f);
			return NULL;
		}
		(*n)++;
	}
	fclose(f);
	/* Logged with the window elsewhere (a sanitized build moves it): the same ops here. */
	for (uint64_t i = 0; ops && window != KD_WIN_BASE && i < *n; i++) {
		if (ops[i].addr >= window && ops[i].addr - window < KD_WIN_SIZE)
			ops[i].addr += KD_WIN_BASE - window;
		if (ops[i].addr2 >= window && ops[i].addr2 - window < KD_WIN_SIZE)
			ops[i].addr2 += KD_WIN_BASE - window;
	}
	return ops;
}

/* Two failures are the same when their messages differ only in numbers. */
static bool same_failure(const char *a, const char *b)
{
	for (;;) {
		bool na = *a && strchr("0123456789abcdefx", *a), nb = *b && strchr("0123456789abcdefx", *b);

		if (na || nb) {
			if (!na || !nb)
				return false;
			while (*a && strchr("0123456789abcdefx", *a))
				a++;
			while (*b && strchr("0123456789abcdefx", *b))
				b++;
			continue;
		}
		if (*a != *b)
			return false;
		if (!*a)
			return true;
		a++, b++;
	}
}

/*
 * Cut the failing prefix down while it still fails (delta debugging: drop
 * chunks, halving their size), within @budget seconds. Returns the new length.
 */
static uint64_t minimize(const struct kd_options *opt, struct kd_host *h, struct kd_op *ops,
			 uint64_t n, const char *what, double budget)
{
	struct kd_op *try = malloc(n * sizeof(*try));
	double end = now() + budget;
	struct kd_result res;

	if (!try)
		return n;
	for (uint64_t chunk = n / 2; chunk >= 1 && now() < end; chunk /= 2) {
		for (uint64_t i = 0; i < n && now() < end;) {
			uint64_t cut = chunk < n - i ? chunk : n - i, m = 0;

			memcpy(try, ops, i * sizeof(*ops));
			memcpy(try + i, ops + i + cut, (n - i - cut) * sizeof(*ops));
			m = n - cut;
			if (m && !kd_run(opt, h, try, m, &res) && res.divergences &&
			    same_failure(res.what, what)) {
				/* Still fails: keep the cut, and only the prefix up to the failure. */
				n = res.first_bad < m ? res.first_bad + 1 : m;
				memcpy(ops, try, n * sizeof(*ops));
			} else {
				i += chunk;
			}
		}
	}
	free(try);
	return n;
}

static double minimize_seconds = 60;
static uint64_t unreproduced;	/* divergences their replay did not repeat */

/*
 * A divergence from the host that its replay does not repeat: the library is
 * deterministic, the host not quite (a kdamond's sampling holds folio
 * references that make a split or an isolation fail now and then; per-CPU
 * batches). Said, logged and counted, not a failure.
 */
static bool not_reproduced(const struct kd_options *opt, struct kd_host *h,
			   const struct kd_op *ops, const struct kd_result *res, const char *tag)
{
	struct kd_result again;
	char path[256];

	if (!opt->host || kd_run(opt, h, ops, res->first_bad + 1, &again) || again.divergences)
		return false;
	unreproduced++;
	snprintf(path, sizeof(path), "kdiff-%016" PRIx64 ".unreproduced.log", opt->seed);
	write_log(path, opt->seed, ops, res->first_bad + 1);
	printf("# %s: op %" PRIu64 " diverged (%s), and its replay agreed: not reproduced "
	       "(log: %s)\n", tag, res->first_bad, res->what, path);
	return true;
}

/*
 * Run one sequence; on divergence (one its replay repeats, with @confirm)
 * write its log and a minimized one.
 */
static bool run_one(const struct kd_options *opt, struct kd_host *h, struct kd_op *ops,
		    uint64_t n, bool do_minimize, bool confirm, const char *tag)
{
	struct kd_result res;
	double t0 = now();
	int err = kd_run(opt, h, ops, n, &res);
	char path[256];

	if (err) {
		tap_ok(0, "%s: the run could not start (%s)", tag, mmp_strerror(err));
		return false;
	}
	if (!res.divergences) {
		tap_ok(1, "%s: %" PRIu64 " ops agree (%.1f s)", tag, res.ops, now() - t0);
		if (res.thp_checked)
			printf("# THP events compared after %" PRIu64 " ops; the host counted more "
			       "after %" PRIu64 " (the machine's other processes)\n", res.thp_checked,
			       res.thp_more);
		return true;
	}
	if (confirm && res.first_bad < n && not_reproduced(opt, h, ops, &res, tag)) {
		tap_ok(1, "%s: %" PRIu64 " ops agree but for a divergence not reproduced (%.1f s)",
		       tag, n, now() - t0);
		return true;
	}
	tap_ok(0, "%s: op %" PRIu64 " diverged: %s", tag, res.first_bad, res.what);
	printf("#   op: ");
	kd_print_op(stdout, &ops[res.first_bad < n ? res.first_bad : n - 1]);
	snprintf(path, sizeof(path), "kdiff-%016" PRIx64 ".log", opt->seed);
	write_log(path, opt->seed, ops, res.first_bad < n ? res.first_bad + 1 : n);
	printf("#   log: %s (replay: test_kernel_diff --replay %s)\n", path, path);
	if (do_minimize) {
		char what[sizeof(res.what)];
		uint64_t m;

		struct kd_options one = *opt;

		memcpy(what, res.what, sizeof(what));
		/* Against the host, the failing variant alone is enough (and much faster). */
		if (opt->host)
			one.only_variant = res.variant;
		m = minimize(&one, h, ops, res.first_bad < n ? res.first_bad + 1 : n, what,
			     minimize_seconds);
		opt = &one;

		snprintf(path, sizeof(path), "kdiff-%016" PRIx64 ".min.log", opt->seed);
		write_log(path, opt->seed, ops, m);
		printf("#   minimized to %" PRIu64 " ops: %s\n", m, path);
		for (uint64_t i = 0; i < m && i < 40; i++) {
			printf("#     ");
			kd_print_op(stdout, &ops[i]);
		}
		if (!kd_run(opt, h, ops, m, &res) && res.divergences)
			printf("#   minimized failure: %s\n", res.what);
	}
	return false;
}

int main(int argc, char **argv)
{
	struct kd_options opt = { .host = true, .verify_every = 1, .only_variant = -1,
				   .thp_pmd_mode = -1 };
	uint64_t nops = 1000, seed = 0, total_target = 0;
	double seconds = 0;
	const char *replays[64];
	int nreplays = 0;
	bool do_minimize = true, have_seed = false;
	int forbid_zeropage = -1, soft_dirty = -1;	/* the probe's answers, overridden */
	bool no_state = false;
	struct kd_host *h = NULL;
	struct kd_op *ops;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--seed") && next) {
			seed = strtoull(next, NULL, 0);
			have_seed = true;
			i++;
		} else if (!strcmp(a, "--ops") && next) {
			nops = strtoull(next, NULL, 0);
			i++;
		} else if (!strcmp(a, "--seconds") && next) {
			seconds = strtod(next, NULL);
			i++;
		} else if (!strcmp(a, "--total") && next) {
			total_target = strtoull(next, NULL, 0);
			i++;
		} else if (!strcmp(a, "--arch") && next) {
			opt.only_arch = next;
			i++;
		} else if (!strcmp(a, "--variant") && next) {
			opt.only_variant = atoi(next);	/* as "# variant N" of -v numbers them */
			i++;
		} else if (!strcmp(a, "--verify-every") && next) {
			opt.verify_every = atoi(next);
			i++;
		} else if (!strcmp(a, "--threads") && next) {
			opt.threads = atoi(next);
			i++;
		} else if (!strcmp(a, "--replay") && next &&
			   nreplays < (int)(sizeof(replays) / sizeof(replays[0]))) {
			replays[nreplays++] = next;
			i++;
		} else if (!strcmp(a, "--release") && next) {
			unsigned int major = 0, minor = 0;

			if (sscanf(next, "%u.%u", &major, &minor) != 2) {
				fprintf(stderr, "--release wants A.B, e.g. 7.1\n");
				return 2;
			}
			opt.kernel_version = MMP_KERNEL_VERSION(major, minor, 0);
			if (opt.kernel_version < MMP_KERNEL_OLDEST ||
			    opt.kernel_version > MMP_KERNEL_NEWEST) {
				fprintf(stderr, "--release: the library models 6.12 to 7.1\n");
				return 2;
			}
			i++;
		} else if (!strcmp(a, "--zero-page") && next) {
			/* yes, no, or other: the opposite of what the host does */
			forbid_zeropage = !strcmp(next, "other") ? 2 : strcmp(next, "yes") != 0;
			i++;
		} else if (!strcmp(a, "--soft-dirty") && next) {
			soft_dirty = !strcmp(next, "yes");
			i++;
		} else if (!strcmp(a, "--no-state")) {
			no_state = true;
		} else if (!strcmp(a, "--no-host")) {
			opt.host = false;
		} else if (!strcmp(a, "--minimize-seconds") && next) {
			minimize_seconds = strtod(next, NULL);
			i++;
		} else if (!strcmp(a, "--no-minimize")) {
			do_minimize = false;
		} else if (!strcmp(a, "-v")) {
			opt.verbose = true;
		} else {
			fprintf(stderr, "usage: %s [--seed S] [--ops N] [--seconds T | --total N] "
				"[--arch A] [--variant N] [--release A.B] [--no-host] [--zero-page yes|no|other] [--soft-dirty yes|no] "
				"[--no-state] [--verify-every N] [--threads N] [--replay FILE] [--no-minimize] "
				"[--minimize-seconds T] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	if (!have_seed)
		seed = (uint64_t)time(NULL) * 1000003ULL ^ (uint64_t)getpid();
	opt.host_version = host_version();
	/* Without the host too: --zero-page other then models the other kind of host. */
	kd_host_probe(&opt.cfg);
	kd_host_config_print(&opt.cfg);
	if (!opt.host)
		memset(opt.cfg.mthp_mode, 0, sizeof(opt.cfg.mthp_mode));	/* drawn instead */
	if (forbid_zeropage >= 0)
		opt.cfg.forbids_zeropage = forbid_zeropage == 2 ? !opt.cfg.forbids_zeropage :
								 forbid_zeropage;
	if (soft_dirty >= 0)
		opt.cfg.soft_dirty = soft_dirty;
	printf("# host kernel %u.%u.%u; the library models %u.%u\n", opt.host_version >> 16,
	       (opt.host_version >> 8) & 255, opt.host_version & 255, MMP_KERNEL_MODELED >> 16,
	       (MMP_KERNEL_MODELED >> 8) & 255);
	opt.compare_state = opt.host && !no_state;
	printf("# every space models %s%s\n",
	       opt.cfg.forbids_zeropage ? "no zero page (MMP_OPT_FORBID_ZEROPAGE)" : "the zero page",
	       opt.cfg.soft_dirty ? ", soft-dirty (MMP_OPT_SOFT_DIRTY)" : "");
	version_table(&opt);
	if (opt.host) {
		const char *why;

		opt.hugetlb = kd_host_hugetlb_reserve(KD_HUGETLB_POOL, &why);
		if (opt.hugetlb)
			printf("# hugetlb: the host's pool grown by %d 2 MiB pages until exit, every "
			       "phys's pool as many\n", KD_HUGETLB_POOL);
		else
			printf("# hugetlb ops left out: %s\n", why);
		if (kd_host_khugepaged_pause(&why))
			printf("# khugepaged: paused until exit (scan_sleep_millisecs a day, "
			       "pages_to_scan 1): the library collapses only on MADV_COLLAPSE\n");
		else
			printf("# khugepaged: not paused (%s); its collapses of the agents' memory "
			       "show as divergences, mostly not reproduced\n", why);
	} else {
		opt.hugetlb = true;	/* the back ends against each other, each with its pool */
	}
	opt.thp_pmd_mode = opt.host ? kd_host_thp_mode() : -1;
	if (opt.host)
		printf("# PMD THP mode of every space: the host's (%d); mTHP orders are drawn\n",
		       opt.thp_pmd_mode);
	if (opt.host) {
		/* Before any thread: the spawner forks a single-threaded copy of us. */
		h = kd_host_start();
		tap_require(h != NULL, "start the host agents");
	}
	if (nreplays) {
		for (int i = 0; i < nreplays; i++) {
			uint64_t n, logged = seed;

			ops = read_log(replays[i], &n, &logged);
			if (!tap_ok(ops != NULL, "read %s", replays[i]))
				continue;
			opt.seed = have_seed ? seed : logged;
			run_one(&opt, h, ops, n, do_minimize, false, replays[i]);
			free(ops);
		}
		kd_host_stop(h);
		return tap_done();
	}
	ops = malloc(nops * sizeof(*ops));
	tap_require(ops != NULL, "allocate %" PRIu64 " ops", nops);
	double end = now() + seconds;
	uint64_t total = 0, runs = 0;

	do {
		char tag[64];

		opt.seed = seed + runs;
		snprintf(tag, sizeof(tag), "seed %#" PRIx64, opt.seed);
		kd_generate(opt.seed, ops, nops);
		if (!run_one(&opt, h, ops, nops, do_minimize, true, tag))
			break;
		total += nops;
		runs++;
	} while (total_target ? total < total_target : now() < end);
	printf("# %" PRIu64 " sequences, %" PRIu64 " ops, %s; %" PRIu64 " divergences "
	       "not reproduced\n", runs, total,
	       opt.host ? "against the host kernel" : "back ends against each other", unreproduced);
	free(ops);
	kd_host_stop(h);
	return tap_done();
}
