/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The COW trial behind `mmprim-seeds huge-copy` and mmprim-bench's huge_copy family. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "common.h"
#include "huge_copy.h"


int hc_rig_create(struct hc_rig *r, const char *arch, bool hugetlb)
{
	struct mmp_space_config cfg = { .arch = arch };
	struct mmp_cpu *cpu = NULL;
	uint64_t a;
	int err;

	memset(r, 0, sizeof(*r));
	r->hugetlb = hugetlb;
	/* The parent's page, the child's copy, tables: 16 MiB is plenty. */
	err = bench_phys_create_warm(16 * BENCH_MIB, &r->phys);
	if (err)
		return err;
	err = mmp_space_create(r->phys, &cfg, &r->parent);
	if (!err && hugetlb) {
		/* The parent's page and the child's copy: a pool of 2. */
		err = mmp_phys_set_hugepages(r->phys, MMP_PMD_SIZE, 2);
		if (!err)
			err = mmp_mmap(r->parent, 0, MMP_PMD_SIZE, RW, MMP_MAP_HUGETLB, &r->addr);
	} else if (!err) {
		err = mmp_mmap(r->parent, 0, 2 * MMP_PMD_SIZE, RW, 0, &a);
		if (!err) {
			r->addr = (a + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
			err = mmp_madvise(r->parent, r->addr, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
		}
	}
	if (!err)
		err = mmp_cpu_attach(r->parent, &cpu);
	if (!err)
		err = mmp_memset(cpu, r->addr, 0x5a, MMP_PMD_SIZE);
	if (cpu)
		mmp_cpu_detach(cpu);	/* the trial thread runs the child's CPU */
	if (err)
		hc_rig_destroy(r);
	return err;
}

void hc_rig_destroy(struct hc_rig *r)
{
	if (r->parent)
		mmp_space_destroy(r->parent);
	if (r->phys)
		mmp_phys_destroy(r->phys);
	memset(r, 0, sizeof(*r));
}

/*
 * The frame of a hugetlb page mapped at @addr of @space, looked up: GUP of
 * hugetlb pages is not modelled. It holds while the trial maps it, as a pin
 * would.
 */
static int rig_pfn(struct mmp_space *space, uint64_t addr, uint64_t *pfn)
{
	struct mmp_addr_info info;
	int err;

	err = mmp_space_query(space, addr, &info);
	if (err)
		return err;
	if (info.pfn == MMP_NO_PFN)
		return -EFAULT;
	*pfn = info.pfn;
	return 0;
}

/* Push @space's folio at @addr out of the caches (or sweep when flushing is not real). */
static int make_cold(struct hc_rig *r, struct mmp_space *space, uint64_t addr)
{
	uint64_t pfns[HC_NR];
	int n;

	if (r->sweep) {
		hc_sweep(r->sweep, r->sweep->len);
		return 0;
	}
	if (r->hugetlb) {
		/* A huge page: its frames are consecutive. */
		n = rig_pfn(space, addr, pfns);
		if (!n)
			hc_flush(mmp_page_address(r->phys, pfns[0]), MMP_PMD_SIZE);
		return n;
	}
	n = mmp_gup_fast(space, addr, HC_NR, false, pfns);
	if (n < 0)
		return n;
	/* A PMD-mapped THP: its frames are consecutive. */
	if (n > 0)
		hc_flush(mmp_page_address(r->phys, pfns[0]), (size_t)n * MMP_PAGE_SIZE);
	return mmp_unpin(space, pfns, n);
}

int hc_rig_trial(struct hc_rig *r, const struct hc_trial *t, struct hc_sample *out)
{
	struct mmp_counters before, after;
	struct mmp_space *child = NULL;
	struct mmp_cpu *cpu = NULL;
	uint64_t target = r->addr + (uint64_t)t->n * MMP_PAGE_SIZE, pfn, t0, t1;
	const char one = 1;
	void *page;
	int err, err2;

	memset(out, 0, sizeof(*out));
	out->victim_ns = NAN;
	err = mmp_fork(r->parent, &child);
	if (err)
		return err;
	err = mmp_space_set_copy(child, t->variant);
	if (!err)
		err = mmp_space_set_opt(child, MMP_OPT_HUGE_ORDER, t->order);
	if (!err)
		err = mmp_space_set_opt(child, MMP_OPT_HUGE_NEIGHBOURHOOD, t->nbhd);
	if (!err)
		err = mmp_cpu_attach(child, &cpu);
	/* The parent populated its THP long ago: nothing of it is cached. */
	if (!err)
		err = make_cold(r, r->parent, r->addr);
	if (err)
		goto out;
	if (t->victim)
		hc_victim_chase_ns(t->victim);
	mmp_space_counters(child, &before);

	t0 = bench_now_ns();
	err = mmp_write(cpu, target, &one, 1);
	t1 = bench_now_ns();
	if (err)
		goto out;
	out->copy_ns = (double)(t1 - t0);

	if (r->hugetlb) {
		err = rig_pfn(child, target, &pfn);
	} else {
		err = mmp_gup_fast(child, target, 1, false, &pfn);
		err = err == 1 ? 0 : err < 0 ? err : -EFAULT;
	}
	if (err)
		goto out;
	page = mmp_page_address(r->phys, pfn);
	out->read_ns = t->read ? t->read(page) : hc_read4k_ns(page);
	if (!r->hugetlb)
		err = mmp_unpin(child, &pfn, 1);
	if (t->victim)
		out->victim_ns = hc_victim_chase_ns(t->victim);
	mmp_space_counters(child, &after);
	bench_counters_sub(&out->counters, &after, &before);
	/* The next trial's copy most likely lands on these frames again: start it cold too. */
	if (!err)
		err = make_cold(r, child, r->addr);
out:
	if (cpu)
		mmp_cpu_detach(cpu);
	err2 = mmp_space_destroy(child);
	return err ? err : err2;
}
