/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmprim-seeds: the registry of seed reproductions and its command line.
 *
 *   mmprim-seeds list
 *   mmprim-seeds NAME|all [--arch A] [--quick] [--json] [--deterministic] [--csv FILE]
 *
 * Exit status: 0, 1 when a seed failed, 2 on a usage error (unknown seed, arch
 * or option; a seed that cannot run on the arch asked for).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "seeds.h"

/* The registry: X(id) for each file defining mmp_seed_<id>. */
#define MMP_SEEDS(X)		\
	X(page_fault)		\
	X(mremap)		\
	X(huge_copy)		\
	X(anon_cow_seq)		\
	X(lazyfree)		\
	X(rcu_free)

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

int mmp_seed_for_each_arch(const struct mmp_seed_opts *opts, const char *const *defaults,
			   int (*fn)(const struct mmp_seed_opts *opts, const char *arch))
{
	int err, i;

	if (opts->arch)
		return fn(opts, opts->arch);
	if (defaults) {
		for (; *defaults; defaults++) {
			/* A seed may name a back end that this build does not carry yet. */
			if (!bench_arch_valid(*defaults)) {
				fprintf(stderr, "mmprim-seeds: no back end %s, skipped\n", *defaults);
				continue;
			}
			err = fn(opts, *defaults);
			if (err)
				return err;
		}
		return 0;
	}
	for (i = 0; i < mmp_arch_count(); i++) {
		err = fn(opts, mmp_arch_name(i));
		if (err)
			return err;
	}
	return 0;
}

static void report_json_side(const struct mmp_seed_result *r)
{
	fputs("{\"seconds\":", stdout);
	bench_json_number(stdout, r->seconds);
	fputs(",\"counters\":", stdout);
	bench_json_counters(stdout, &r->counters);
	fputc('}', stdout);
}

void mmp_seed_report(const struct mmp_seed_opts *opts, const char *seed, const char *arch,
		     const struct mmp_seed_result *base, const struct mmp_seed_result *opt,
		     const char *extra_json)
{
	double ratio = base->seconds / opt->seconds;

	if (opts->json) {
		fputs("{\"seed\":", stdout);
		bench_json_string(stdout, seed);
		fputs(",\"arch\":", stdout);
		bench_json_string(stdout, arch);
		fputs(",\"baseline\":", stdout);
		report_json_side(base);
		fputs(",\"optimized\":", stdout);
		report_json_side(opt);
		fputs(",\"ratio\":", stdout);
		bench_json_number(stdout, ratio);
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
	printf("%-*s %*s %*.2fx\n", BENCH_NAME_W, "ratio", BENCH_VALUE_W, "",
	       BENCH_VALUE_W - 1, ratio);
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

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mmprim-seeds list\n"
		"       mmprim-seeds NAME|all [--arch ARCH] [--quick] [--json] [--deterministic]\n"
		"                    [--csv FILE]\n"
		"\n"
		"Reproduce the measurement of each seed patch, baseline and optimized side by side.\n"
		"  list          the seeds, one per line: name and title\n"
		"  --arch ARCH   run on this back end only (default: the seed's default back ends)\n"
		"  --quick       a smaller, faster run\n"
		"  --json        one JSON object per seed and arch on stdout, nothing else\n"
		"  --deterministic  a fixed tiny workload whose cache misses cachegrind can count\n"
		"                (seeds that measure caches; the others ignore it)\n"
		"  --csv FILE    write every sample to FILE for plotting (seeds that support it)\n");
}

/* 0, EXIT_FAILED or EXIT_USAGE. In `all`, a seed that cannot run on the arch is skipped. */
static int run_seed(const struct mmp_seed *seed, const struct mmp_seed_opts *opts, bool all)
{
	int err = seed->run(opts);

	if (!err)
		return 0;
	if (err == -ENOTSUP) {
		fprintf(stderr, "mmprim-seeds: %s does not run on %s%s\n", seed->name,
			opts->arch ?: "its back ends", all ? ", skipped" : "");
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

	if (strcmp(cmd, "all")) {
		seed = seed_find(cmd);
		if (!seed) {
			fprintf(stderr, "mmprim-seeds: unknown seed '%s' (see: mmprim-seeds list)\n",
				cmd);
			return EXIT_USAGE;
		}
		return run_seed(seed, &opts, false);
	}

	for (s = 0; s < NR_SEEDS; s++) {
		int r;

		r = run_seed(seeds[s], &opts, true);
		if (r > ret)
			ret = r;
	}
	return ret;
}
