/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host topology through hwloc: caches, an LLC-sharing sibling core, pinning. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "topo.h"

/* The data or unified cache levels above @pu, nearest first: L1d, L2, ..., the LLC last. */
static void pu_caches(struct bench_topo *t, hwloc_obj_t pu, hwloc_obj_t *llc)
{
	*llc = NULL;
	for (hwloc_obj_t o = pu->parent; o; o = o->parent) {
		if (!hwloc_obj_type_is_dcache(o->type))
			continue;
		if (o->attr->cache.depth == 1)
			t->l1d = o->attr->cache.size;
		else if (o->attr->cache.depth == 2)
			t->l2 = o->attr->cache.size;
		t->llc = o->attr->cache.size;
		t->llc_level = o->attr->cache.depth;
		*llc = o;
	}
}

static hwloc_obj_t pu_core(struct bench_topo *t, hwloc_obj_t pu)
{
	hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(t->topo, HWLOC_OBJ_CORE, pu);

	return core ? core : pu;
}

/* A PU under @llc on a core other than @pu's, or NULL. */
static hwloc_obj_t llc_sibling(struct bench_topo *t, hwloc_obj_t pu, hwloc_obj_t llc)
{
	hwloc_obj_t core = pu_core(t, pu), o = NULL;

	if (!llc)
		return NULL;
	while ((o = hwloc_get_next_obj_inside_cpuset_by_type(t->topo, llc->cpuset, HWLOC_OBJ_PU,
							      o)))
		if (pu_core(t, o) != core)
			return o;
	return NULL;
}

int bench_topo_init(struct bench_topo *t)
{
	hwloc_obj_t pu, llc, first = NULL, first_llc = NULL;
	int i;

	memset(t, 0, sizeof(*t));
	t->main_pu = t->pressure_pu = -1;
	if (hwloc_topology_init(&t->topo))
		return -ENOMEM;
	if (hwloc_topology_load(t->topo)) {
		hwloc_topology_destroy(t->topo);
		return -EINVAL;
	}
	t->nr_cores = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
	t->nr_pus = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_PU);
	if (t->nr_cores <= 0)
		t->nr_cores = t->nr_pus;
	/* The first PU that has an LLC sibling on another core, else the first PU. */
	for (i = 0; i < t->nr_pus; i++) {
		hwloc_obj_t sib;

		pu = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PU, i);
		t->l1d = t->l2 = t->llc = 0;
		t->llc_level = 0;
		pu_caches(t, pu, &llc);
		if (!first) {
			first = pu;
			first_llc = llc;
		}
		sib = llc_sibling(t, pu, llc);
		if (sib) {
			t->main_pu = pu->os_index;
			t->pressure_pu = sib->os_index;
			return 0;
		}
	}
	if (!first) {
		hwloc_topology_destroy(t->topo);
		return -ENODEV;
	}
	t->l1d = t->l2 = t->llc = 0;
	t->llc_level = 0;
	pu_caches(t, first, &first_llc);
	t->main_pu = first->os_index;
	return 0;
}

void bench_topo_destroy(struct bench_topo *t)
{
	if (t->topo)
		hwloc_topology_destroy(t->topo);
	memset(t, 0, sizeof(*t));
}

int bench_topo_pin(struct bench_topo *t, int pu)
{
	hwloc_obj_t o = hwloc_get_pu_obj_by_os_index(t->topo, pu);
	hwloc_bitmap_t set;
	int err = 0;

	if (!o)
		return -EINVAL;
	set = hwloc_bitmap_dup(o->cpuset);
	if (!set)
		return -ENOMEM;
	hwloc_bitmap_singlify(set);
	if (hwloc_set_cpubind(t->topo, set, HWLOC_CPUBIND_THREAD))
		err = -errno ? errno : -EINVAL;
	hwloc_bitmap_free(set);
	return err;
}

int bench_topo_core_pu(struct bench_topo *t, int i)
{
	hwloc_obj_t core, pu;

	if (t->nr_cores <= 0)
		return -1;
	core = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_CORE, i % t->nr_cores);
	if (!core)	/* no core objects: PUs stand for cores */
		pu = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_PU, i % t->nr_pus);
	else
		pu = hwloc_get_next_obj_inside_cpuset_by_type(t->topo, core->cpuset,
							      HWLOC_OBJ_PU, NULL);
	return pu ? (int)pu->os_index : -1;
}

const char *bench_topo_size(unsigned long bytes, char *buf, unsigned long len)
{
	if (bytes && bytes % (1UL << 20) == 0)
		snprintf(buf, len, "%lu MiB", bytes >> 20);
	else if (bytes && bytes % (1UL << 10) == 0)
		snprintf(buf, len, "%lu KiB", bytes >> 10);
	else
		snprintf(buf, len, "%lu B", bytes);
	return buf;
}
