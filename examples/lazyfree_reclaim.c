/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Question 1: arm64 with 64 KiB mTHP. MADV_FREE 8 MiB, re-dirty every fourth
 * 64 KiB block, reclaim. What does PTE batching change? Run once with
 * MMP_OPT_PTE_BATCH on and once off; show the folios and blocks before
 * reclaim (introspection), then the counters that moved and the modeled time.
 *
 *   cc lazyfree_reclaim.c $(pkg-config --cflags --libs libmmprim) -o lazyfree_reclaim
 */
#include <stdio.h>
#include <stdlib.h>

#include <mmprim/mmprim.h>

#define LEN	(8UL << 20)
#define BLOCK	(64UL << 10)
/* Stop at the first error, naming the call. */
static void check(int err, const char *call)
{
	if (err >= 0)
		return;
	fprintf(stderr, "%s: %s\n", call, mmp_strerror(err));
	exit(1);
}
#define CHECK(call)	check((call), #call)

static double run(struct mmp_phys *phys, int batch)
{
	struct mmp_space_config cfg = { .arch = "arm64" };
	struct mmp_counters before, after, moved;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	struct mmp_addr_info q;
	struct mmp_vma_info v;
	uint64_t a;
	double ns;

	CHECK(mmp_space_create(phys, &cfg, &s));
	CHECK(mmp_space_set_thp(s, mmp_thp_order("hugepages-64kB"), MMP_THP_ALWAYS));
	CHECK(mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, batch));
	CHECK(mmp_cpu_attach(s, &cpu));
	CHECK(mmp_mmap(s, 0, LEN, MMP_PROT_READ | MMP_PROT_WRITE, MMP_MAP_POPULATE, &a));

	CHECK(mmp_space_query(s, a, &q));
	printf("batch %d: %#llx is a %lu KiB folio, block of %u %s\n", batch,
	       (unsigned long long)a, (4UL << q.folio_order), q.block_entries,
	       q.block_folded ? "folded" : "not folded");
	CHECK(mmp_space_counters(s, &before));
	CHECK(mmp_madvise(s, a, LEN, MMP_MADV_FREE));
	for (uint64_t p = a; p < a + LEN; p += 4 * BLOCK)
		CHECK(mmp_write(cpu, p, "x", 1));
	CHECK(mmp_space_vma_info(s, a, &v));
	printf("  before reclaim: Rss %llu kB, LazyFree %llu kB\n",
	       (unsigned long long)v.rss >> 10, (unsigned long long)v.lazyfree >> 10);
	CHECK(mmp_reclaim(s));
	CHECK(mmp_space_counters(s, &after));
	mmp_counters_diff(&after, &before, &moved);
	CHECK(mmp_counters_print(stdout, &moved, "  "));
	CHECK(mmp_modeled_ns(s, &moved, &ns));
	CHECK(mmp_space_vma_info(s, a, &v));
	printf("  after reclaim: Rss %llu kB; modeled %.0f ns\n", (unsigned long long)v.rss >> 10,
	       ns);
	CHECK(mmp_cpu_detach(cpu));
	CHECK(mmp_space_destroy(s));
	return ns;
}

int main(void)
{
	struct mmp_phys *phys;
	double on, off;

	CHECK(mmp_phys_create(64UL << 20, &phys));
	on = run(phys, 1);
	off = run(phys, 0);
	printf("batching off costs %.1fx the modeled time\n", off / on);
	CHECK(mmp_phys_destroy(phys));
	return 0;
}
