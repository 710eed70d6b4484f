/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmprim-bench family huge_copy/<order>/<variant>/<n>/<pressure>: the COW of a
 * cold 2 MiB THP whose child writes sub-page n (-1: a random one per
 * iteration), with (1) or without (0) a thread sweeping the LLC from another
 * core. 6.18 splits the THP and copies sub-page n alone, so the orders differ
 * in nothing but noise; the whole copy in order is hugetlb's. Time is the COW fault (manual time); user counters: target_read_ns
 * (reading the 4 KiB right after), victim_kept_pct (of an L2-sized working set
 * warm before the fault) and the library counters; the label is the cache
 * level the target read matches in a calibration of the same process.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "huge_copy.h"
#include "shim.h"
#include "topo.h"

#define HCB_CALIB_REPS	11
#define HCB_MAX_VARIANTS 16

struct hcb_arg {
	int order;
	const char *variant;
};

/* Shared by every run of the family: the topology, the victim, one calibration per pressure. */
static struct {
	bool ready, calibrated[2];
	struct bench_topo topo;
	struct hc_buf evict;
	struct hc_victim victim, evictor;
	struct hc_calib calib[2];
	size_t pressure_bytes;
} hcb;

static int hcb_init(void)
{
	unsigned long l2;
	int err;

	if (hcb.ready)
		return 0;
	err = bench_topo_init(&hcb.topo);
	if (err)
		return err;
	bench_topo_pin(&hcb.topo, hcb.topo.main_pu);
	l2 = hcb.topo.l2 ? hcb.topo.l2 : BENCH_MIB;
	err = hc_buf_alloc(&hcb.evict, 4 * l2, true);
	if (!err)
		err = hc_victim_init(&hcb.victim, l2, 42);
	if (!err)
		err = hc_victim_init(&hcb.evictor, 2 * l2, 43);
	if (err)
		return err;
	hcb.pressure_bytes = 2 * hcb.topo.llc;
	if (hcb.pressure_bytes < 8 * BENCH_MIB)
		hcb.pressure_bytes = 8 * BENCH_MIB;
	if (hcb.pressure_bytes > 64 * BENCH_MIB)
		hcb.pressure_bytes = 64 * BENCH_MIB;
	hcb.ready = true;
	return 0;
}

static void bm_huge_copy(struct mmp_bench_state *st, void *argp)
{
	const struct hcb_arg *arg = argp;
	long n = mmp_bench_range(st, 0), pressure = mmp_bench_range(st, 1);
	struct mmp_counters sum = { { 0 } };
	struct hc_pressure pr = { 0 };
	double read_ns = 0, kept = 0;
	uint64_t rng = 0x2545f4914f6cdd1dULL;
	long iters = 0, kept_n = 0;
	struct hc_rig rig;
	char label[64];
	int err;

	err = hcb_init();
	if (!err && pressure)
		err = hc_pressure_start(&pr, &hcb.topo, hcb.topo.pressure_pu, hcb.pressure_bytes);
	if (!err && !hcb.calibrated[pressure]) {
		err = hc_calibrate(&hcb.calib[pressure], &hcb.topo, &hcb.evict, &hcb.evictor,
				   &hcb.victim, HCB_CALIB_REPS);
		hcb.calibrated[pressure] = !err;
	}
	if (!err)
		err = hc_rig_create(&rig, "x86_64", false);
	if (err) {
		hc_pressure_stop(&pr);
		mmp_bench_skip_with_error(st, mmp_strerror(err));
		return;
	}
	while (mmp_bench_keep_running(st)) {
		struct hc_trial t = { .order = arg->order, .variant = arg->variant,
				      .victim = &hcb.victim };
		struct hc_sample s;
		double k;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		t.n = n < 0 ? rng % HC_NR : (unsigned int)n;
		err = hc_rig_trial(&rig, &t, &s);
		if (err) {
			mmp_bench_skip_with_error(st, mmp_strerror(err));
			break;
		}
		mmp_bench_set_iteration_time(st, s.copy_ns * 1e-9);
		read_ns += s.read_ns;
		k = hc_victim_kept(&hcb.calib[pressure], s.victim_ns);
		if (!isnan(k)) {
			kept += k;
			kept_n++;
		}
		for (int i = 0; i < MMP_NR_COUNTERS; i++)
			sum.v[i] += s.counters.v[i];
		iters++;
	}
	hc_pressure_stop(&pr);
	hc_rig_destroy(&rig);
	if (!iters)
		return;
	for (int i = 0; i < MMP_NR_COUNTERS; i++)
		if (sum.v[i])
			mmp_bench_counter_avg(st, mmp_counter_name(i), sum.v[i]);
	mmp_bench_counter(st, "target_read_ns", read_ns / iters);
	if (kept_n)
		mmp_bench_counter(st, "victim_kept_pct", 100 * kept / kept_n);
	snprintf(label, sizeof(label), "target %s",
		 hc_class_name(hc_classify(&hcb.calib[pressure], read_ns / iters)));
	mmp_bench_set_label(st, label);
}

int hc_register_benches(long iterations)
{
	static const long targets[] = { 0, 255, 511, -1 };
	struct mmp_space *probe = NULL;
	struct mmp_phys *phys = NULL;
	struct bench_topo topo;
	int err, pressures = 1;

	/* Register only what runs here: variants this CPU has, pressure if a core shares the LLC. */
	if (!bench_topo_init(&topo)) {
		pressures = topo.pressure_pu >= 0 ? 2 : 1;
		bench_topo_destroy(&topo);
	}
	err = mmp_phys_create(4 * BENCH_MIB, &phys);
	if (!err)
		err = mmp_space_create(phys, NULL, &probe);
	for (int v = 0; !err && v < mmp_copy_variant_count(); v++) {
		const char *variant = mmp_copy_variant_name(v);

		if (mmp_space_set_copy(probe, variant))
			continue;
		for (int o = 0; o < MMP_NR_HUGE_ORDERS; o++) {
			/* Registered benches keep their argument for the life of the process. */
			static struct hcb_arg args[HCB_MAX_VARIANTS * MMP_NR_HUGE_ORDERS];
			static int nr_args;
			struct hcb_arg *arg;
			struct mmp_bench *b;
			char name[128];

			if (nr_args == HCB_MAX_VARIANTS * MMP_NR_HUGE_ORDERS)
				break;
			arg = &args[nr_args++];
			*arg = (struct hcb_arg){ .order = o, .variant = variant };
			snprintf(name, sizeof(name), "huge_copy/%s/%s", mmp_huge_order_name(o), variant);
			b = mmp_bench_register(name, bm_huge_copy, arg);
			if (!b) {
				err = -ENOMEM;
				break;
			}
			for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++)
				for (int p = 0; p < pressures; p++)
					mmp_bench_args(b, targets[t], p);
			mmp_bench_unit(mmp_bench_iterations(mmp_bench_use_manual_time(b),
							    iterations), MMP_BENCH_US);
		}
	}
	if (probe)
		mmp_space_destroy(probe);
	if (phys)
		mmp_phys_destroy(phys);
	return err;
}
