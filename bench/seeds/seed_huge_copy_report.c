/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "huge-copy" (bench/seeds/seed_huge_copy.c): its output. The text report
 * (the header, each pressure's calibration, the tables per variant, the latency
 * chart, the claims), one side-by-side case per variant and order through
 * mmp_seed_report (every case in JSON), the --csv samples, and the list of read
 * functions --deterministic offers cachegrind.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "seed_huge_copy.h"

#define HC_CHART_W	48

/* Why no THP case claims the seed's hot target: its whole-THP copy is not 6.18's THP COW. */
#define HC_NO_CLAIM	"no claim: 6.18 splits THP on COW; measured on hugetlb"

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
		printf("  read n=%-9s", hc_target_names[t]);
	printf("  victim kept\n");
	for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++) {
		double kept = hc_med(h, p, v, o, -1, 2);

		printf("  %-22s %-19s %9.1f", "", mmp_huge_order_name(o), hc_med(h, p, v, o, -1, 0) / 1e3);
		for (int t = 0; t < HC_TARGETS; t++) {
			double ns = hc_med(h, p, v, o, t, 1);

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
			top = fmax(top, hc_med(h, p, v, o, t, 1));
	for (int i = 0; i < HC_NR_CLASSES; i++)
		if (!isnan(c->read_ns[i]))
			top = fmax(top, c->read_ns[i]);
	printf("  target read latency, %s, %s (each # is %.0f ns; ':' marks L1, L2, L3, DRAM)\n",
	       h->variants[v], press_name(p), top / HC_CHART_W);
	for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++) {
		for (int t = 0; t < HC_TARGETS; t++) {
			double ns = hc_med(h, p, v, o, t, 1);
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
			       hc_target_names[t], bar, ns,
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
	double asc = hc_med(h, p, v, MMP_HUGE_ORDER_ASCENDING, -1, 0);
	char buf[64];

	enum hc_decide how = hc_case_decide(h, p, v);

	for (int o = MMP_HUGE_ORDER_TARGET_LAST; o < MMP_NR_HUGE_ORDERS; o++) {
		char miss[64];
		enum bench_verdict hot = hc_decide_hot(h, p, v, o, how, miss, sizeof(miss));
		struct bench_ci ci;

		hc_copy_ci(h, p, v, o, &ci);
		printf("  %-19s copy time ratio %s (%+.1f%% median time) against ascending; ",
		       mmp_huge_order_name(o), bench_ci_str(&ci, buf, sizeof(buf)),
		       100 * (hc_med(h, p, v, o, -1, 0) / asc - 1));
		if (!hc_claim_applies(h, v, o)) {
			printf("target hot: no claim (non-temporal stores bypass the cache)\n");
			continue;
		}
		if (how == HC_DECIDE_LATENCY) {
			printf("target at L1/L2 for every n (below %.0f ns): ",
			       hc_hot_limit(&h->calib[p]));
		} else {
			printf("target L1D misses per line (%s) n=0/255/511/rand", hc_decide_names[how]);
			for (int t = 0; t < HC_TARGETS; t++)
				printf("%s%.2f", t ? "/" : " ", hc_misses_per_line(h, p, v, o, t, how));
			printf(" (ascending");
			for (int t = 0; t < HC_TARGETS; t++)
				printf("%s%.2f", t ? "/" : " ",
				       hc_misses_per_line(h, p, v, MMP_HUGE_ORDER_ASCENDING, t,
							  how));
			printf("), hot at <= %.2f: ", HC_HOT_MISSES);
		}
		printf("%s %s%s%s%s%s\n", h->hugetlb ? "claim" : "seen", bench_verdict_name(hot),
		       *miss ? ", not at" : "", miss, h->hugetlb ? "" : "; ",
		       h->hugetlb ? "" : HC_NO_CLAIM);
	}
	{
		double a[HC_RUNS], b[HC_RUNS];
		int na = hc_values(h, p, v, MMP_HUGE_ORDER_ASCENDING, 0, 0, a);
		int nb = hc_values(h, p, v, MMP_HUGE_ORDER_TARGET_LAST, 0, 0, b);
		struct bench_ci ci;

		int n = na < nb ? na : nb;

		bench_ratio_ci(a, b, n < 0 ? 0 : (size_t)n, &ci);
		printf("  %-19s n=0 is a pure descending sweep: copy time ratio %s against "
		       "ascending\n", "target-last", bench_ci_str(&ci, buf, sizeof(buf)));
	}
	printf("  (decided by %s; n=X? : between hot and cold; %d runs per target)\n",
	       hc_decide_what[how], h->runs);
}

static void json_targets(char *buf, size_t len, size_t *off, const char *key,
			 const struct hc_run *h, int p, int v, int o)
{
	char name[32];

	bench_append(buf, len, off, ",\"%s_read_ns\":{", key);
	for (int t = 0; t < HC_TARGETS; t++)
		bench_append(buf, len, off, "%s\"%s\":%.1f", t ? "," : "", hc_target_names[t],
			     hc_med(h, p, v, o, t, 1));
	bench_append(buf, len, off, "},\"%s_read_class\":{", key);
	for (int t = 0; t < HC_TARGETS; t++)
		bench_append(buf, len, off, "%s\"%s\":\"%s\"", t ? "," : "", hc_target_names[t],
			     hc_calib_class_name(&h->calib[p],
						 hc_classify(&h->calib[p],
							     hc_med(h, p, v, o, t, 1)),
						 name, sizeof(name)));
	bench_append(buf, len, off, "}");
}

static void report_case(const struct hc_run *h, int p, int v, int o)
{
	struct mmp_seed_result base = { .label = "ascending" }, opt = { .label = mmp_huge_order_name(o) };
	double kb = hc_med(h, p, v, MMP_HUGE_ORDER_ASCENDING, -1, 2);
	double ko = hc_med(h, p, v, o, -1, 2);
	enum hc_decide how = hc_case_decide(h, p, v);
	struct mmp_seed_claim claim = {
		.what = how == HC_DECIDE_LATENCY ? "target read at L1/L2 for every n" :
			"target read <= 0.25 L1D misses per line for every n",
		.published = "target cache hot",
	};
	char extra[3584], name[96], miss[64], note[160];
	struct bench_ci ci;
	size_t off = 0;

	hc_copy_ci(h, p, v, o, &ci);
	claim.verdict = hc_decide_hot(h, p, v, o, how, miss, sizeof(miss));
	snprintf(note, sizeof(note), "decided by %s", hc_decide_what[how]);
	claim.note = note;
	if (!hc_claim_applies(h, v, o)) {
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
	base.seconds = hc_med(h, p, v, MMP_HUGE_ORDER_ASCENDING, -1, 0) * 1e-9;
	opt.seconds = hc_med(h, p, v, o, -1, 0) * 1e-9;
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
		     hc_variant_nt(h->variants[v]) ? "true" : "false", hc_decide_names[how]);
	off += hc_calib_json(&h->calib[p], extra + off, sizeof(extra) - off);
	json_targets(extra, sizeof(extra), &off, "baseline", h, p, v, MMP_HUGE_ORDER_ASCENDING);
	json_targets(extra, sizeof(extra), &off, "optimized", h, p, v, o);
	if (how != HC_DECIDE_LATENCY) {
		for (int side = 0; side < 2; side++) {
			bench_append(extra, sizeof(extra), &off, ",\"%s_misses_per_line\":{",
				     side ? "optimized" : "baseline");
			for (int t = 0; t < HC_TARGETS; t++)
				bench_append(extra, sizeof(extra), &off, "%s\"%s\":%.4f",
					     t ? "," : "", hc_target_names[t],
					     hc_misses_per_line(h, p, v,
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
							hc_target_names[t],
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
			printf("    hc_read_%s_n%s%s", name, hc_target_names[t],
			       t == HC_TARGETS - 1 ? "\n" : "");
	}
	printf("  (n=rand is n=%u here)\n\n", hc_target_fixed[3]);
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
	printf("  target hot decided by: %s%s\n\n", hc_decide_what[h->decide],
	       h->decide == HC_DECIDE_CACHEGRIND ?
		       " (quiet runs of the variants valgrind ran; the others by latency classes)" :
	       h->decide == HC_DECIDE_LATENCY ?
		       " (no hardware cache counters, no cachegrind run, or MMPRIM_HUGE_DECIDE)" : "");
}

/*
 * Everything a run of one page kind prints: the --csv samples, the text report
 * (or the --deterministic list), and the side-by-side cases. 0, or -errno when
 * the --csv file cannot be written.
 */
int hc_report(struct hc_run *h)
{
	if (h->opts->csv) {
		/* THP's rows and header, then hugetlb's rows after them. */
		h->csv = fopen(h->opts->csv, h->hugetlb && !h->opts->deterministic ? "a" : "w");
		if (!h->csv) {
			int err = -errno;

			fprintf(stderr, "mmprim-seeds: huge-copy: cannot write --csv %s: %s\n",
				h->opts->csv, strerror(errno));
			return err;
		}
		write_csv(h);
		fclose(h->csv);
	}
	if (!h->opts->json) {
		if (h->opts->deterministic) {
			print_deterministic(h);
		} else {
			print_header(h);
			for (int p = 0; p < h->nr_press; p++) {
				print_calibration(h, p);
				for (int v = 0; v < h->nr_variants; v++)
					print_table(h, p, v);
				putchar('\n');
			}
			for (int p = 0; p < h->nr_press; p++) {
				print_chart(h, p, 0);
				putchar('\n');
			}
			for (int p = 0; p < h->nr_press; p++) {
				for (int v = 0; v < h->nr_variants; v++) {
					printf("  claims, %s, %s:\n", h->variants[v],
					       press_name(p));
					print_verdicts(h, p, v);
				}
			}
			putchar('\n');
		}
	}
	/* The side-by-side tables in text for the default variant; every case in JSON. */
	for (int p = 0; p < h->nr_press; p++)
		for (int v = 0; v < h->nr_variants; v++)
			for (int o = MMP_HUGE_ORDER_TARGET_LAST; o < MMP_NR_HUGE_ORDERS; o++)
				if (h->opts->json || (v == 0 && !h->opts->deterministic))
					report_case(h, p, v, o);
	if (!h->opts->json)
		putchar('\n');
	return 0;
}
