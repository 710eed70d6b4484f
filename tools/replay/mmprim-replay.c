// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mmprim-replay: replay the memory system calls of real programs, recorded
 * with `strace -f -e trace=memory,process`, on every back end and setting.
 * Without process events an exec is inferred where the evidence is plain
 * (engine.c), and a trace that needs them and lacks them is refused.
 * Exit status: 0 all replayed as traced, 1 a mismatch or a failed verify,
 * 2 input that could not be used (the rest still replays and is reported).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "opt_table.h"
#include "replay.h"

/* The switches' names are lib/opt_table.h's, the one place a switch is declared. */
#define RP_OPT_NAME(id, name, ...)	[MMP_OPT_##id] = name,
static const char *const opt_names[MMP_NR_OPTS] = { MMP_OPT_TABLE(RP_OPT_NAME) };
#undef RP_OPT_NAME

const char *rp_opt_name(int opt)
{
	return opt >= 0 && opt < MMP_NR_OPTS && opt_names[opt] ? opt_names[opt] : "?";
}

int rp_opt_parse(const char *name)
{
	for (int i = 0; i < MMP_NR_OPTS; i++)
		if (opt_names[i] && !strcmp(opt_names[i], name))
			return i;
	return -1;
}

static int thp_parse(const char *s, bool *all_orders)
{
	*all_orders = false;
	if (!strcmp(s, "never"))
		return MMP_THP_NEVER;
	if (!strcmp(s, "madvise"))
		return MMP_THP_MADVISE;
	if (!strcmp(s, "always"))
		return MMP_THP_ALWAYS;
	if (!strcmp(s, "always-mthp")) {
		*all_orders = true;
		return MMP_THP_ALWAYS;
	}
	return -1;
}

static void usage(FILE *f)
{
	fputs("usage: mmprim-replay [--arch A|all] [--opt NAME=VALUE[,NAME=VALUE]]...\n"
	      "                     [--thp never|madvise|always|always-mthp] [--touch none|first|all]\n"
	      "                     [--json] [--csv FILE] [--smaps FILE] [--phys-mib N] TRACE...\n"
	      "TRACE: a file of `strace -f -e trace=memory,process -o FILE CMD` (-ttt, -T allowed),\n"
	      "or the PREFIX of `strace -ff -o PREFIX` per-process files.\n"
	      "Each --opt is one setting (a column); thp=MODE may be one of its pairs.\n",
	      f);
	/* The names as the table has them, wrapped. */
	fputs("Options:", f);
	for (int i = 0, col = 8; i < MMP_NR_OPTS; i++) {
		int n = (int)strlen(opt_names[i]) + 1;

		if (col + n > 88) {
			fputs("\n        ", f);
			col = 8;
		}
		fprintf(f, " %s", opt_names[i]);
		col += n;
	}
	fputs(" (values: integers)\n"
	      "--arch all: every back end whose user space holds a 47-bit x86-64 process's;\n"
	      "the 3-level ones (256 or 512 GiB) replay such traces only when named.\n"
	      "Without process events, an exec is inferred from a brk(NULL) answering a new\n"
	      "break next to ld.so mapping objects afresh (\"inferred execs\"); a new break\n"
	      "without them stops that trace (no table) with one line on how to record it.\n"
	      "--smaps FILE: each process's /proc/PID/smaps, as it exits, for every setting.\n"
	      "Exit: 0 replayed as traced, 1 mismatch or verify failure, 2 unusable input.\n",
	      f);
}

/* "pte_batch=0,thp=always" into @cfg; false with a message when malformed. */
static bool parse_setting(char *s, struct rp_config *cfg)
{
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '='), *end;
		long v;
		int opt;

		if (!eq) {
			fprintf(stderr, "mmprim-replay: --opt %s: expected NAME=VALUE\n", tok);
			return false;
		}
		*eq = 0;
		if (!strcmp(tok, "thp")) {
			cfg->thp = thp_parse(eq + 1, &cfg->thp_all_orders);
			if (cfg->thp < 0) {
				fprintf(stderr, "mmprim-replay: thp=%s: never, madvise, always or always-mthp\n",
					eq + 1);
				return false;
			}
			continue;
		}
		opt = rp_opt_parse(tok);
		v = strtol(eq + 1, &end, 0);
		if (opt < 0 || !eq[1] || *end) {
			fprintf(stderr, "mmprim-replay: --opt %s=%s: unknown option or bad value\n", tok,
				eq + 1);
			return false;
		}
		if (cfg->nr_opts == RP_MAX_SETS) {
			fprintf(stderr, "mmprim-replay: too many options in one setting\n");
			return false;
		}
		cfg->opt[cfg->nr_opts] = opt;
		cfg->value[cfg->nr_opts++] = v;
	}
	return true;
}

static bool arch_valid(const char *arch)
{
	for (int i = 0; i < mmp_arch_count(); i++)
		if (!strcmp(mmp_arch_name(i), arch))
			return true;
	return false;
}

/*
 * Traces come from x86-64 hosts, whose processes use 47 bits of addresses: a
 * back end with a smaller space (3 levels: 256 or 512 GiB) cannot replay them
 * and is left out of --arch all (it can still be named).
 */
static bool holds_host_space(const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch };
	struct mmp_phys *phys;
	struct mmp_space *s;
	uint64_t top = 0;

	if (mmp_phys_create(4ULL << 20, &phys))
		return true;
	if (!mmp_space_create(phys, &cfg, &s)) {
		mmp_space_task_size(s, &top);
		mmp_space_destroy(s);
	}
	mmp_phys_destroy(phys);
	return top >= (1ULL << 47) - 4096;
}

/* PREFIX.PID names given one by one (a shell glob of -ff files) belong together. */
static int group_len(char **paths, int n)
{
	const char *dot = strrchr(paths[0], '.');
	size_t plen;
	int k = 1;

	if (!dot || !dot[1] || strspn(dot + 1, "0123456789") != strlen(dot + 1))
		return 1;
	plen = (size_t)(dot - paths[0]) + 1;
	while (k < n && !strncmp(paths[k], paths[0], plen) && paths[k][plen] &&
	       strspn(paths[k] + plen, "0123456789") == strlen(paths[k] + plen))
		k++;
	return k;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "arch", required_argument, NULL, 'a' }, { "opt", required_argument, NULL, 'o' },
		{ "thp", required_argument, NULL, 't' }, { "touch", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' }, { "csv", required_argument, NULL, 'c' },
		{ "phys-mib", required_argument, NULL, 'p' }, { "help", no_argument, NULL, 'h' },
		{ "smaps", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 }
	};
	struct rp_settings set = { .touch = RP_TOUCH_FIRST, .phys_bytes = 8ULL << 30 };
	struct rp_config settings[RP_MAX_SETS], *cfgs;
	const char *archs[16];
	int nr_archs = 0, nr_settings = 0, nr_cfgs, thp = -1, status = 0, c;
	bool json = false, first = true, thp_all = false;

	opterr = 0;	/* our own message, as the other tools' */
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (!strcmp(optarg, "all")) {
				for (int i = 0; i < mmp_arch_count() && nr_archs < 16; i++)
					if (holds_host_space(mmp_arch_name(i)))
						archs[nr_archs++] = mmp_arch_name(i);
			} else if (arch_valid(optarg) && nr_archs < 16) {
				archs[nr_archs++] = optarg;
			} else {
				fprintf(stderr, "mmprim-replay: no back end '%s'\n", optarg);
				return 2;
			}
			break;
		case 'o':
			if (nr_settings == RP_MAX_SETS) {
				fprintf(stderr, "mmprim-replay: at most %d --opt settings\n", RP_MAX_SETS);
				return 2;
			}
			memset(&settings[nr_settings], 0, sizeof(settings[0]));
			settings[nr_settings].thp = -2;	/* the --thp default */
			snprintf(settings[nr_settings].label, sizeof(settings[0].label), "%s", optarg);
			if (!parse_setting(optarg, &settings[nr_settings]))
				return 2;
			nr_settings++;
			break;
		case 't':
			thp = thp_parse(optarg, &thp_all);
			if (thp < 0) {
				fprintf(stderr, "mmprim-replay: --thp never|madvise|always|always-mthp\n");
				return 2;
			}
			break;
		case 'T':
			if (!strcmp(optarg, "none"))
				set.touch = RP_TOUCH_NONE;
			else if (!strcmp(optarg, "first"))
				set.touch = RP_TOUCH_FIRST;
			else if (!strcmp(optarg, "all"))
				set.touch = RP_TOUCH_ALL;
			else {
				fprintf(stderr, "mmprim-replay: --touch none|first|all\n");
				return 2;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'c':
			set.csv = fopen(optarg, "w");
			if (!set.csv) {
				perror(optarg);
				return 2;
			}
			rp_csv_header(set.csv);
			break;
		case 's':
			set.smaps = fopen(optarg, "w");
			if (!set.smaps) {
				perror(optarg);
				return 2;
			}
			break;
		case 'p':
			set.phys_bytes = strtoull(optarg, NULL, 0) << 20;
			if (!set.phys_bytes || set.phys_bytes % (4ULL << 20)) {
				fprintf(stderr, "mmprim-replay: --phys-mib: a multiple of 4\n");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			/* A known long option without its value, or an unknown option. */
			if (optopt && strchr("aotTcps", optopt) && !strncmp(argv[optind - 1], "--", 2))
				fprintf(stderr, "mmprim-replay: option '%s' needs a value\n",
					argv[optind - 1]);
			else
				fprintf(stderr, "mmprim-replay: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		usage(stderr);
		return 2;
	}
	if (!nr_archs)
		archs[nr_archs++] = "x86_64";
	if (!nr_settings) {
		memset(&settings[0], 0, sizeof(settings[0]));
		settings[0].thp = -2;
		nr_settings = 1;
	}
	nr_cfgs = nr_archs * nr_settings;
	cfgs = calloc((size_t)nr_cfgs, sizeof(*cfgs));
	if (!cfgs)
		return 2;
	for (int a = 0; a < nr_archs; a++) {
		for (int k = 0; k < nr_settings; k++) {
			struct rp_config *cfg = &cfgs[a * nr_settings + k];
			char opts[128];

			*cfg = settings[k];
			cfg->arch = archs[a];
			if (cfg->thp == -2) {
				cfg->thp = thp;
				cfg->thp_all_orders = thp_all;
			}
			snprintf(opts, sizeof(opts), "%s", settings[k].label);
			snprintf(cfg->label, sizeof(cfg->label), "%.20s%s%.100s", archs[a],
				 *opts ? " " : "", opts);
		}
	}

	for (int i = optind; i < argc;) {
		int n = group_len(&argv[i], argc - i);
		struct rp_source *src = rp_source_open(&argv[i], n);
		struct rp_result *res;
		bool refused = false;

		i += n;
		if (!src) {
			status = 2;
			continue;
		}
		res = calloc((size_t)nr_cfgs, sizeof(*res));
		if (!res)
			return 2;
		for (int k = 0; k < nr_cfgs && !refused; k++) {
			res[k].trace = rp_source_name(src);
			set.quiet = k > 0;
			if (rp_replay(src, &cfgs[k], &set, &res[k])) {
				fprintf(stderr, "mmprim-replay: %s: cannot replay on %s: %s\n",
					rp_source_name(src), cfgs[k].label, mmp_strerror(res[k].error));
				status = status ? status : 1;
			}
			if (res[k].no_exec[0]) {
				/* The trace's fault, the same on every back end: say it once. */
				fprintf(stderr, "mmprim-replay: %s: brk(NULL) answers a new break "
					"and no exec explains it: the trace lacks process events; "
					"record it with `strace -f -e trace=memory,process -o FILE "
					"CMD`\n", res[k].no_exec);
				refused = true;
				status = 2;
			} else if (res[k].bad_input)
				status = 2;
			else if ((res[k].mismatches || res[k].verify) && !status)
				status = 1;
		}
		/* A refused trace prints no figures: they would stand for the wrong processes. */
		if (!refused && json)
			rp_print_json(stdout, res, nr_cfgs, &first);
		else if (!refused)
			rp_print_table(stdout, rp_source_name(src), res, nr_cfgs);
		free(res);
		rp_source_close(src);
	}
	if (json)
		fputs(first ? "[]\n" : "\n]\n", stdout);
	if (set.csv)
		fclose(set.csv);
	if (set.smaps && fclose(set.smaps)) {
		perror("mmprim-replay: --smaps");
		status = status ? status : 2;
	}
	free(cfgs);
	return status;
}
