/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topo.c on synthetic topologies (HWLOC_SYNTHETIC): cache sizes of the
 * measuring PU, the LLC-sharing PU on another core, one PU per core.
 */
#include <stdlib.h>

#include "../../tests/lib/tap.h"
#include "topo.h"

#define KiB	1024UL
#define MiB	(1024UL * 1024)

static struct bench_topo load(const char *synthetic)
{
	struct bench_topo t;

	setenv("HWLOC_SYNTHETIC", synthetic, 1);
	tap_require(bench_topo_init(&t) == 0, "load \"%s\"", synthetic);
	return t;
}

int main(void)
{
	struct bench_topo t;

	/* Two packages, each an L3 over two cores of two hyperthreads. */
	t = load("pack:2 l3:1(size=32MiB) l2:2(size=1MiB) l1d:1(size=32KiB) core:1 pu:2");
	tap_ok(t.l1d == 32 * KiB && t.l2 == 1 * MiB && t.llc == 32 * MiB && t.llc_level == 3,
	       "L1d 32 KiB, L2 1 MiB, LLC L3 32 MiB (got %lu %lu %lu L%d)", t.l1d, t.l2, t.llc,
	       t.llc_level);
	tap_eq(t.nr_cores, 4, "4 cores");
	tap_eq(t.nr_pus, 8, "8 PUs");
	tap_eq(t.main_pu, 0, "measure on PU 0");
	tap_eq(t.pressure_pu, 2, "pressure on PU 2: another core, same L3 (not PU 1, a hyperthread)");
	tap_eq(bench_topo_core_pu(&t, 0), 0, "core 0 -> PU 0");
	tap_eq(bench_topo_core_pu(&t, 3), 6, "core 3 -> PU 6");
	tap_eq(bench_topo_core_pu(&t, 5), 2, "core 5 wraps to core 1 -> PU 2");
	tap_eq(bench_topo_pin(&t, 6), 0, "pinning works (binds nothing on a synthetic topology)");
	tap_ok(bench_topo_pin(&t, 99) < 0, "pinning to a missing PU fails");
	bench_topo_destroy(&t);

	/* This machine's shape: private L1/L2 per core, one shared L3. */
	t = load("pack:1 l3:1(size=300MiB) l2:2(size=2MiB) l1d:1(size=48KiB) core:1 pu:1");
	tap_ok(t.l1d == 48 * KiB && t.l2 == 2 * MiB && t.llc == 300 * MiB,
	       "L1d 48 KiB, L2 2 MiB, L3 300 MiB");
	tap_ok(t.main_pu == 0 && t.pressure_pu == 1, "pressure from the other core (PU 1)");
	bench_topo_destroy(&t);

	/* No L3: the LLC is the per-core L2, so no other core shares it. */
	t = load("pack:1 l2:2(size=1MiB) l1d:1(size=32KiB) core:1 pu:1");
	tap_ok(t.llc == 1 * MiB && t.llc_level == 2, "without L3 the LLC is L2");
	tap_eq(t.pressure_pu, -1, "no core shares the LLC: no pressure PU");
	tap_eq(t.main_pu, 0, "measure on PU 0 all the same");
	bench_topo_destroy(&t);

	/* Two packages of one core each: no core shares an L3. */
	t = load("pack:2 l3:1(size=8MiB) l2:1(size=512KiB) core:1 pu:1");
	tap_eq(t.pressure_pu, -1, "one core per L3: no pressure PU");
	bench_topo_destroy(&t);

	/* No caches known at all. */
	t = load("pack:1 core:2 pu:1");
	tap_ok(t.llc == 0 && t.llc_level == 0 && t.pressure_pu == -1 && t.main_pu == 0,
	       "no caches: sizes 0, no pressure PU");
	bench_topo_destroy(&t);
	return tap_done();
}
