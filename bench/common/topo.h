/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host topology for cache-footprint benches, from hwloc: the caches of the
 * PU that measures, a PU on another core that shares its last-level cache (for
 * a cache-pressure thread), one PU per core to spread workers, and pinning.
 * Test with HWLOC_SYNTHETIC (test_topo.c); on a synthetic topology
 * binding succeeds but binds nothing.
 */
#ifndef MMP_BENCH_TOPO_H
#define MMP_BENCH_TOPO_H

#include <stdbool.h>

#include <hwloc.h>

struct bench_topo {
	hwloc_topology_t topo;
	unsigned long l1d, l2, llc;	/* bytes of main_pu's data caches; 0 when absent */
	int llc_level;			/* 1..5, 0 when no data cache is known */
	int main_pu;			/* OS index of the PU that measures */
	int pressure_pu;		/* OS index of a PU of another core under the same LLC, -1 */
	int nr_cores, nr_pus;
};

/* Load the topology (HWLOC_SYNTHETIC honoured) and pick the PUs: 0 or a negative errno. */
int bench_topo_init(struct bench_topo *t);
void bench_topo_destroy(struct bench_topo *t);

/* Pin the calling thread to the PU with OS index @pu: 0 or a negative errno. */
int bench_topo_pin(struct bench_topo *t, int pu);

/* OS index of a PU of core @i (modulo the core count), cores in topology order. */
int bench_topo_core_pu(struct bench_topo *t, int i);

/* "48 KiB", "2 MiB", "300 MiB" into @buf. */
const char *bench_topo_size(unsigned long bytes, char *buf, unsigned long len);

#endif /* MMP_BENCH_TOPO_H */
