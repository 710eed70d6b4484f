/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Modeled hardware time: exact event counts times each architecture's cost
 * table. Host time understates what a TLB invalidation, a barrier or an IPI
 * costs on hardware; this shows it, and is deterministic.
 */
#include <string.h>

#include "vmstat.h"

MMP_EXPORT int mmp_modeled_ns_sized(struct mmp_space *s, const struct mmp_counters *user,
				    size_t size, double *ns)
{
	const struct mmp_cost_model *m;
	struct mmp_counters k = { 0 }, *c = &k;
	double cycles;

	if (!s || !user || !ns || size < sizeof(uint64_t))
		return -EINVAL;
	/* Counters a shorter (older) structure lacks count as 0. */
	memcpy(&k, user, size < sizeof(k) ? size : sizeof(k));
	m = s->arch->cost;
	cycles = m->entry_read * (c->v[MMP_C_PTE_READ] + c->v[MMP_C_PMD_READ]) +
		 m->entry_write * (c->v[MMP_C_PTE_WRITE] + c->v[MMP_C_PMD_WRITE]) +
		 m->tlbi_page * c->v[MMP_C_TLB_FLUSH_PAGE] +
		 m->flush_op * c->v[MMP_C_TLB_FLUSH_RANGE] +
		 m->flush_all * c->v[MMP_C_TLB_FLUSH_ALL] +
		 m->ipi * (c->v[MMP_C_TLB_IPI] + c->v[MMP_C_TABLE_SYNC_IPI]) +
		 m->page_walk * c->v[MMP_C_PAGE_WALK] +
		 m->rcu_sync * c->v[MMP_C_RCU_SYNC] +
		 m->rcu_call * c->v[MMP_C_RCU_CALL];
	*ns = cycles / m->ghz;
	return 0;
}
