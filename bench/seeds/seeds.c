/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmprim-seeds: the registry of seed reproductions and its command line.
 *
 *   mmprim-seeds list
 *   mmprim-seeds NAME|all [--arch A] [--quick] [--json] [--deterministic] [--csv FILE]
 *
 * Exit status: 0 (also when a target is not met: that is a measurement), 1 when
 * a seed failed to run, 2 on a usage error (unknown seed, arch or option; a
 * seed that cannot run on the arch asked for). `all` ends with a summary table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "json.h"
#include "seeds.h"

/* The registry: X(id) for each file defining mmp_seed_<id>. */
#define MMP_SEEDS(X)		\
	X(page_fault)		\
	X(mremap)		\
	X(huge_copy)		\
	X(anon_cow_seq)		\
	X(lazyfree)		\
	X(rcu_free)		\
	X(file_reclaim)		\
	X(clear_seq)		\
	X(fork_large_folio)	\
	X(pt_reclaim)		\
	X(mprotect_batch)	\
	X(process_madvise)	\
	X(madvise_vma_lock)	\
	X(procmap_query)

#define MMP_SEED_DECLARE(id)	extern const struct mmp_seed mmp_seed_##id;
MMP_SEEDS(MMP_SEED_DECLARE)
#undef MMP_SEED_DECLARE

static const struct mmp_seed *const seeds[] = {
#define MMP_SEED_ENTRY(id)	&mmp_seed_##id,
	MMP_SEEDS(MMP_SEED_ENTRY)
#undef MMP_SEED_ENTRY
};

#define NR_SEEDS	(sizeof(seeds) / sizeof(seeds[0]))

enum { EXIT_FAILED = 1, EXIT_USAGE = 2 };

int mmp_seed_run_cases(const struct mmp_seed *seed, const struct mmp_seed_opts *opts,
		       const char *arch)
{
	struct mmp_phys *phys = NULL;
	int err = bench_phys_create_warm(opts->quick ? seed->phys_bytes_quick : seed->phys_bytes,
					 &phys);

	for (size_t i = 0; !err && i < seed->nr_cases; i++) {
		const void *c = (const char *)seed->cases + i * seed->case_size;

		err = seed->run_case(opts, arch, phys, c);
		/* What the case printed ends in its table: set it apart from the next. */
		if (!err && !opts->json)
			putchar('\n');
	}
	if (phys)
		mmp_phys_destroy(phys);
	return err;
}

static int seed_run_arch(const struct mmp_seed *seed, const struct mmp_seed_opts *opts,
			 const char *arch)
{
	return seed->run_arch ? seed->run_arch(opts, arch) : mmp_seed_run_cases(seed, opts, arch);
}

/*
 * Run @seed on opts->arch if set, else on each of its back ends (seed->archs;
 * NULL: every registered one). Stops at and returns the first error.
 */
static int seed_for_each_arch(const struct mmp_seed *seed, const struct mmp_seed_opts *opts)
{
	const char *const *defaults = seed->archs;
	int err, i;

	if (opts->arch)
		return seed_run_arch(seed, opts, opts->arch);
	if (defaults) {
		for (; *defaults; defaults++) {
			/* A seed may name a back end that this build does not carry yet. */
			if (!bench_arch_valid(*defaults)) {
				fprintf(stderr, "mmprim-seeds: no back end %s, skipped\n", *defaults);
				continue;
			}
			err = seed_run_arch(seed, opts, *defaults);
			if (err)
				return err;
		}
		return 0;
	}
	for (i = 0; i < mmp_arch_count(); i++) {
		err = seed_run_arch(seed, opts, mmp_arch_name(i));
		if (err)
			return err;
	}
	return 0;
}

/* A row of the summary that ends the text output. */
struct summary_row {
	char seed[24], arch[16], name[64], published[40], figure[48], verdict[16];
};

#define MAX_SUMMARY	256
static struct summary_row summary[MAX_SUMMARY];
static size_t nr_summary;

static void summary_add(const char *seed, const char *arch, const char *case_name,
			const struct bench_ci *ci, const struct mmp_seed_claim *claim)
{
	struct summary_row *r;

	if (nr_summary == MAX_SUMMARY)
		return;
	r = &summary[nr_summary++];
	snprintf(r->seed, sizeof(r->seed), "%s", seed);
	snprintf(r->arch, sizeof(r->arch), "%s", arch);
	snprintf(r->name, sizeof(r->name), "%s", case_name ? case_name : "");
	snprintf(r->published, sizeof(r->published), "%s",
		 claim && claim->published ? claim->published : "-");
	bench_ci_str(ci, r->figure, sizeof(r->figure));
	snprintf(r->verdict, sizeof(r->verdict), "%s",
		 bench_verdict_name(claim && claim->what ? claim->verdict : BENCH_NO_CLAIM));
}

static void summary_print(bool quick)
{
	if (!nr_summary)
		return;
	printf("summary%s: time ratio baseline / optimized (> 1: the optimization is faster), "
	       "median [95%% interval]\n", quick ? " [quick]" : "");
	printf("%-16s %-12s %-38s %-28s %-24s %s\n", "seed", "arch", "case", "seed's figure",
	       "this run", "verdict");
	for (size_t i = 0; i < nr_summary; i++) {
		const struct summary_row *r = &summary[i];

		printf("%-16s %-12s %-38s %-28s %-24s %s\n", r->seed, r->arch, r->name,
		       r->published, r->figure, r->verdict);
	}
}

const char *mmp_seed_quick_tag(const struct mmp_seed_opts *opts)
{
	return opts->quick ? " [quick]" : "";
}

static void json_or_null(const char *s)
{
	if (s)
		json_string(stdout, s);
	else
		fputs("null", stdout);
}

static void report_json_side(const struct mmp_seed_result *r)
{
	fputs("{\"seconds\":", stdout);
	json_number(stdout, r->seconds);
	fputs(",\"counters\":", stdout);
	json_counters(stdout, &r->counters);
	fputc('}', stdout);
}

void mmp_seed_report(const struct mmp_seed_opts *opts, const char *seed, const char *arch,
		     const char *case_name, const struct mmp_seed_result *base,
		     const struct mmp_seed_result *opt, const struct bench_ci *ci,
		     const struct mmp_seed_claim *claim, const char *extra_json)
{
	bool has_claim = claim && claim->what;
	char buf[64];

	summary_add(seed, arch, case_name, ci, claim);
	if (opts->json) {
		fputs("{\"seed\":", stdout);
		json_string(stdout, seed);
		fputs(",\"arch\":", stdout);
		json_string(stdout, arch);
		if (case_name) {
			fputs(",\"case\":", stdout);
			json_string(stdout, case_name);
		}
		printf(",\"quick\":%s,\"baseline\":", opts->quick ? "true" : "false");
		report_json_side(base);
		fputs(",\"optimized\":", stdout);
		report_json_side(opt);
		fputs(",\"ratio\":", stdout);
		json_number(stdout, ci->ratio);
		fputs(",\"ratio_ci\":[", stdout);
		json_number(stdout, ci->lo);
		fputc(',', stdout);
		json_number(stdout, ci->hi);
		printf("],\"samples\":%zu,\"claim\":", ci->samples);
		json_or_null(has_claim ? claim->what : NULL);
		fputs(",\"published\":", stdout);
		json_or_null(claim ? claim->published : NULL);
		fputs(",\"verdict\":", stdout);
		json_or_null(has_claim ? bench_verdict_name(claim->verdict) : NULL);
		if (claim && claim->note) {
			fputs(",\"verdict_note\":", stdout);
			json_string(stdout, claim->note);
		}
		if (extra_json && *extra_json)
			printf(",%s", extra_json);
		fputs("}\n", stdout);
		fflush(stdout);
		return;
	}

	printf("%-*s %*s %*s\n", BENCH_NAME_W, "", BENCH_VALUE_W, base->label,
	       BENCH_VALUE_W, opt->label);
	printf("%-*s %*.6f %*.6f\n", BENCH_NAME_W, "seconds", BENCH_VALUE_W, base->seconds,
	       BENCH_VALUE_W, opt->seconds);
	printf("%-*s %s (%+.1f%% time), %zu samples per side\n", BENCH_NAME_W, "time ratio",
	       bench_ci_str(ci, buf, sizeof(buf)), 100 * (1 / ci->ratio - 1), ci->samples);
	if (has_claim)
		printf("%-*s %s%s%s: %s\n", BENCH_NAME_W, "claim", claim->what,
		       claim->published ? "; seed: " : "", claim->published ? claim->published : "",
		       bench_verdict_name(claim->verdict));
	if (claim && claim->note)
		printf("%-*s %s\n", BENCH_NAME_W, "", claim->note);
	bench_print_counter_table(stdout, &base->counters, &opt->counters);
	fflush(stdout);
}

static const struct mmp_seed *seed_find(const char *name)
{
	size_t i;

	for (i = 0; i < NR_SEEDS; i++)
		if (!strcmp(seeds[i]->name, name))
			return seeds[i];
	return NULL;
}

/* The seeds that take option @flag, as " a b". */
static void print_takers(FILE *f, unsigned int flag)
{
	for (size_t i = 0; i < NR_SEEDS; i++)
		if (seeds[i]->takes & flag)
			fprintf(f, " %s", seeds[i]->name);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mmprim-seeds list | help\n"
		"       mmprim-seeds NAME|all [--arch ARCH] [--quick] [--json] [--deterministic]\n"
		"                    [--csv FILE]\n"
		"\n"
		"Reproduce the measurement of each seed patch, baseline and optimized side by side.\n"
		"  list          the seeds, one per line: name and title\n"
		"  --arch ARCH   run on this back end only (default: the seed's default back ends)\n"
		"  --quick       a smaller, faster run\n"
		"  --json        one JSON object per seed and arch on stdout, nothing else\n"
		"  --deterministic  a fixed tiny workload whose cache misses cachegrind can count;\n"
		"                taken by:");
	print_takers(f, MMP_SEED_TAKES_DETERMINISTIC);
	fprintf(f, "\n  --csv FILE    write every sample to FILE for plotting; taken by:");
	print_takers(f, MMP_SEED_TAKES_CSV);
	fprintf(f, "\nA seed given an option it does not take is a usage error.\n"
		   "Exit status: 0 ran (targets met or not), 1 a seed failed, 2 usage error.\n");
}

/* An option given to a seed that would ignore it: say so, EXIT_USAGE. */
static int check_takes(const struct mmp_seed *seed, const struct mmp_seed_opts *opts)
{
	static const struct {
		unsigned int flag;
		const char *name;
	} opt[] = {
		{ MMP_SEED_TAKES_CSV, "--csv" },
		{ MMP_SEED_TAKES_DETERMINISTIC, "--deterministic" },
	};

	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++) {
		bool given = opt[i].flag == MMP_SEED_TAKES_CSV ? opts->csv != NULL
							       : opts->deterministic;

		if (given && !(seed->takes & opt[i].flag)) {
			fprintf(stderr, "mmprim-seeds: %s does not take %s; seeds that do:",
				seed->name, opt[i].name);
			print_takers(stderr, opt[i].flag);
			fputc('\n', stderr);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* 0, EXIT_FAILED or EXIT_USAGE. In `all`, a seed that cannot run on the arch is skipped. */
static int run_seed(const struct mmp_seed *seed, const struct mmp_seed_opts *opts, bool all)
{
	int err = seed_for_each_arch(seed, opts);

	if (!err)
		return 0;
	if (err == -ENOTSUP) {
		fprintf(stderr, "mmprim-seeds: %s does not run on %s%s\n", seed->name,
			opts->arch ? opts->arch : "its back ends", all ? ", skipped" : "");
		return all ? 0 : EXIT_USAGE;
	}
	fprintf(stderr, "mmprim-seeds: %s failed: %s\n", seed->name, mmp_strerror(err));
	return EXIT_FAILED;
}

int main(int argc, char **argv)
{
	struct mmp_seed_opts opts = { 0 };
	const struct mmp_seed *seed;
	const char *cmd = NULL;
	int i, ret = 0;
	size_t s;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--quick")) {
			opts.quick = true;
		} else if (!strcmp(a, "--json")) {
			opts.json = true;
		} else if (!strcmp(a, "--deterministic")) {
			opts.deterministic = true;
		} else if (!strcmp(a, "--csv")) {
			if (i + 1 == argc) {
				fprintf(stderr, "mmprim-seeds: --csv needs a file name\n");
				return EXIT_USAGE;
			}
			opts.csv = argv[++i];
		} else if (!strcmp(a, "--arch")) {
			if (i + 1 == argc) {
				fprintf(stderr, "mmprim-seeds: --arch needs a back end name\n");
				return EXIT_USAGE;
			}
			opts.arch = argv[++i];
		} else if (!strncmp(a, "--arch=", 7)) {
			opts.arch = a + 7;
		} else if (a[0] == '-' || cmd) {
			fprintf(stderr, "mmprim-seeds: unexpected argument '%s'\n", a);
			usage(stderr);
			return EXIT_USAGE;
		} else {
			cmd = a;
		}
	}
	if (!cmd) {
		usage(stderr);
		return EXIT_USAGE;
	}

	if (!strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "list")) {
		for (s = 0; s < NR_SEEDS; s++)
			printf("%-24s %s\n", seeds[s]->name, seeds[s]->title);
		return 0;
	}

	if (opts.arch && !bench_arch_valid(opts.arch)) {
		fprintf(stderr, "mmprim-seeds: unknown arch '%s'; known:", opts.arch);
		for (i = 0; i < mmp_arch_count(); i++)
			fprintf(stderr, " %s", mmp_arch_name(i));
		fputc('\n', stderr);
		return EXIT_USAGE;
	}

	seed = NULL;
	if (strcmp(cmd, "all")) {
		seed = seed_find(cmd);
		if (!seed) {
			fprintf(stderr, "mmprim-seeds: unknown seed '%s' (see: mmprim-seeds list)\n",
				cmd);
			return EXIT_USAGE;
		}
		if (check_takes(seed, &opts))
			return EXIT_USAGE;
	} else {
		for (s = 0; s < NR_SEEDS; s++)
			if (check_takes(seeds[s], &opts))
				return EXIT_USAGE;
	}

	/* A file that cannot be written is said now, not after the measurement. */
	if (opts.csv) {
		FILE *f = fopen(opts.csv, "w");

		if (!f) {
			fprintf(stderr, "mmprim-seeds: cannot write --csv %s: %s\n", opts.csv,
				strerror(errno));
			return EXIT_USAGE;
		}
		fclose(f);
	}

	if (seed)
		return run_seed(seed, &opts, false);
	for (s = 0; s < NR_SEEDS; s++) {
		int r;

		r = run_seed(seeds[s], &opts, true);
		if (r > ret)
			ret = r;
	}
	/* A target not met is a measurement, not a failure: the status says only whether all ran. */
	if (!opts.json)
		summary_print(opts.quick);
	return ret;
}
