// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What a replay measured: a side-by-side table per trace (one column per back
 * end and setting, the seeds' format), the same as JSON, and the CSV header
 * of the per-call series.
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "json.h"
#include "replay.h"

#define KIB(x)	((x) / 1024)
/* Width of the name column and the least width of a value column. */
#define RP_NAME_W	24
#define RP_VALUE_W	16

static int col_width(struct rp_result *res, int n)
{
	int w = RP_VALUE_W;

	for (int i = 0; i < n; i++)
		if ((int)strlen(res[i].cfg->label) + 2 > w)
			w = (int)strlen(res[i].cfg->label) + 2;
	return w;
}

static void row_u64(FILE *f, const char *name, struct rp_result *res, int n, int w, size_t off)
{
	fprintf(f, "%-*s", RP_NAME_W, name);
	for (int i = 0; i < n; i++)
		fprintf(f, " %*" PRIu64, w, *(const uint64_t *)((const char *)&res[i] + off));
	fputc('\n', f);
}

#define ROW(name, field)	row_u64(f, name, res, n, w, offsetof(struct rp_result, field))

static void row_kib(FILE *f, const char *name, struct rp_result *res, int n, int w, size_t off)
{
	fprintf(f, "%-*s", RP_NAME_W, name);
	for (int i = 0; i < n; i++)
		fprintf(f, " %*" PRIu64, w, KIB(*(const uint64_t *)((const char *)&res[i] + off)));
	fputc('\n', f);
}

#define ROW_KIB(name, field)	row_kib(f, name, res, n, w, offsetof(struct rp_result, field))

/* Rows of a reason table, each reason once, its count per column. */
static void reason_rows(FILE *f, const char *title, struct rp_result *res, int n, int w,
			bool notes)
{
	bool any = false;

	for (int i = 0; i < n; i++) {
		struct rp_reason *tab = notes ? res[i].notes : res[i].reasons;
		int nr = notes ? res[i].nr_notes : res[i].nr_reasons;

		for (int k = 0; k < nr; k++) {
			bool seen = false;

			for (int j = 0; j < i && !seen; j++) {
				struct rp_reason *t2 = notes ? res[j].notes : res[j].reasons;
				int nr2 = notes ? res[j].nr_notes : res[j].nr_reasons;

				for (int m = 0; m < nr2; m++)
					seen |= !strcmp(t2[m].what, tab[k].what);
			}
			if (seen)
				continue;
			if (!any)
				fprintf(f, "%s\n", title);
			any = true;
			fprintf(f, "  %-*.*s", RP_NAME_W - 2, 70, tab[k].what);
			if ((int)strlen(tab[k].what) > RP_NAME_W - 2)
				fprintf(f, "\n  %-*s", RP_NAME_W - 2, "");
			for (int j = 0; j < n; j++) {
				struct rp_reason *t2 = notes ? res[j].notes : res[j].reasons;
				int nr2 = notes ? res[j].nr_notes : res[j].nr_reasons;
				uint64_t v = 0;

				for (int m = 0; m < nr2; m++)
					if (!strcmp(t2[m].what, tab[k].what))
						v = t2[m].n;
				fprintf(f, " %*" PRIu64, w, v);
			}
			fputc('\n', f);
		}
	}
}

void rp_print_table(FILE *f, const char *trace, struct rp_result *res, int n)
{
	int w = col_width(res, n);

	fprintf(f, "== %s\n%-*s", trace, RP_NAME_W, "");
	for (int i = 0; i < n; i++)
		fprintf(f, " %*s", w, res[i].cfg->label);
	fputc('\n', f);
	ROW("lines", lines);
	ROW("calls", calls);
	ROW("replayed", replayed);
	ROW("skipped", skipped);
	ROW("mismatches", mismatches);
	ROW("bad input", bad_input);
	ROW("spaces", processes);
	ROW("tasks", threads);
	ROW("inferred execs", inferred_execs);
	ROW("inferred exec mappings", inferred);
	ROW_KIB("inferred KiB", inferred_bytes);
	ROW("file-backed stood in", stood_in);
	ROW("pages touched", touched_pages);
	ROW("VMAs peak", vmas_peak);
	ROW("VMAs at last call", vmas_end);
	ROW_KIB("RSS peak KiB", rss_peak);
	ROW_KIB("RSS at last call KiB", rss_end);
	ROW_KIB("VmPTE peak KiB", pte_peak);
	ROW_KIB("VmPTE at last call KiB", pte_end);
	fprintf(f, "%-*s", RP_NAME_W, "modeled us");
	for (int i = 0; i < n; i++)
		fprintf(f, " %*.1f", w, res[i].modeled_ns / 1e3);
	fprintf(f, "\n%-*s", RP_NAME_W, "host ms");
	for (int i = 0; i < n; i++)
		fprintf(f, " %*.1f", w, res[i].host_s * 1e3);
	fprintf(f, "\n%-*s", RP_NAME_W, "verify");
	for (int i = 0; i < n; i++)
		fprintf(f, " %*s", w, res[i].verify ? mmp_strerror(res[i].verify) : "ok");
	fputc('\n', f);
	for (int c = 0; c < MMP_NR_COUNTERS; c++) {
		bool any = false;

		for (int i = 0; i < n; i++)
			any |= res[i].counters.v[c] != 0;
		if (!any)
			continue;
		fprintf(f, "%-*s", RP_NAME_W, mmp_counter_name(c));
		for (int i = 0; i < n; i++)
			fprintf(f, " %*" PRIu64, w, res[i].counters.v[c]);
		fputc('\n', f);
	}
	reason_rows(f, "skipped by reason:", res, n, w, false);
	reason_rows(f, "replayed with a note:", res, n, w, true);
	for (int i = 0; i < n; i++) {
		if (!res[i].nr_shown)
			continue;
		fprintf(f, "mismatches (%s):\n", res[i].cfg->label);
		for (int k = 0; k < res[i].nr_shown; k++)
			fprintf(f, "  %s: %s\n", res[i].shown[k].where, res[i].shown[k].what);
		if (res[i].mismatches > (uint64_t)res[i].nr_shown)
			fprintf(f, "  ... %" PRIu64 " more\n", res[i].mismatches - res[i].nr_shown);
	}
	fputc('\n', f);
}

static void json_reasons(FILE *f, const struct rp_reason *tab, int nr)
{
	fputc('{', f);
	for (int i = 0; i < nr; i++) {
		if (i)
			fputc(',', f);
		json_string(f, tab[i].what);
		fprintf(f, ":%" PRIu64, tab[i].n);
	}
	fputc('}', f);
}

void rp_print_json(FILE *f, struct rp_result *res, int n, bool *first)
{
	for (int i = 0; i < n; i++) {
		const struct rp_result *r = &res[i];

		fputs(*first ? "[\n" : ",\n", f);
		*first = false;
		fputs("{\"trace\":", f);
		json_string(f, r->trace);
		fputs(",\"arch\":", f);
		json_string(f, r->cfg->arch);
		fputs(",\"config\":", f);
		json_string(f, r->cfg->label);
		fputs(",\"thp\":", f);
		json_string(f, r->cfg->thp < 0 ? "default" :
				  r->cfg->thp == MMP_THP_NEVER ? "never" :
				  r->cfg->thp == MMP_THP_MADVISE ? "madvise" :
				  r->cfg->thp_all_orders ? "always-mthp" : "always");
		fputs(",\"opts\":{", f);
		for (int k = 0; k < r->cfg->nr_opts; k++)
			fprintf(f, "%s\"%s\":%ld", k ? "," : "", rp_opt_name(r->cfg->opt[k]),
				r->cfg->value[k]);
		fprintf(f, "},\"lines\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"replayed\":%" PRIu64
			",\"skipped\":%" PRIu64 ",\"mismatches\":%" PRIu64 ",\"bad_input\":%" PRIu64
			",\"spaces\":%" PRIu64 ",\"tasks\":%" PRIu64 ",\"inferred_execs\":%" PRIu64
			",\"inferred\":%" PRIu64 ",\"inferred_bytes\":%" PRIu64
			",\"stood_in\":%" PRIu64 ",\"pages_touched\":%" PRIu64,
			r->lines, r->calls, r->replayed, r->skipped, r->mismatches, r->bad_input,
			r->processes, r->threads, r->inferred_execs, r->inferred, r->inferred_bytes,
			r->stood_in, r->touched_pages);
		fprintf(f, ",\"vmas_peak\":%" PRIu64 ",\"vmas_end\":%" PRIu64 ",\"rss_peak\":%" PRIu64
			",\"rss_end\":%" PRIu64 ",\"vmpte_peak\":%" PRIu64 ",\"vmpte_end\":%" PRIu64,
			r->vmas_peak, r->vmas_end, r->rss_peak, r->rss_end, r->pte_peak, r->pte_end);
		fputs(",\"modeled_ns\":", f);
		json_number(f, r->modeled_ns);
		fputs(",\"host_s\":", f);
		json_number(f, r->host_s);
		fputs(",\"verify\":", f);
		json_string(f, r->verify ? mmp_strerror(r->verify) : "ok");
		fputs(",\"skipped_by_reason\":", f);
		json_reasons(f, r->reasons, r->nr_reasons);
		fputs(",\"notes\":", f);
		json_reasons(f, r->notes, r->nr_notes);
		fputs(",\"mismatch_list\":[", f);
		for (int k = 0; k < r->nr_shown; k++) {
			fputs(k ? ",{\"where\":" : "{\"where\":", f);
			json_string(f, r->shown[k].where);
			fputs(",\"what\":", f);
			json_string(f, r->shown[k].what);
			fputc('}', f);
		}
		fputs("],\"counters\":", f);
		json_counters(f, &r->counters);
		fputc('}', f);
	}
}

void rp_csv_header(FILE *f)
{
	fputs("trace,config,call,where,syscall,vmas,rss_bytes,vmpte_bytes\n", f);
}
