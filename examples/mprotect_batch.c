/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Question 3: arm64 with 64 KiB mTHP. mprotect 8 MiB read-only and back ten
 * times, PTE batching on and off: the counters that moved, the modeled time,
 * and whether the contpte blocks survive (introspection).
 *
 *   cc mprotect_batch.c $(pkg-config --cflags --libs libmmprim) -o mprotect_batch
 */
#include <stdio.h>
#include <stdlib.h>

#include <mmprim/mmprim.h>

#define LEN	(8UL << 20)
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
	struct mmp_addr_info q;
	uint64_t a;
	double ns;

	CHECK(mmp_space_create(phys, &cfg, &s));
	CHECK(mmp_space_set_thp(s, mmp_thp_order("hugepages-64kB"), MMP_THP_ALWAYS));
	CHECK(mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, batch));
	CHECK(mmp_mmap(s, 0, LEN, MMP_PROT_READ | MMP_PROT_WRITE, MMP_MAP_POPULATE, &a));

	CHECK(mmp_space_counters(s, &before));
	for (int i = 0; i < 10; i++) {
		CHECK(mmp_mprotect(s, a, LEN, MMP_PROT_READ));
		CHECK(mmp_mprotect(s, a, LEN, MMP_PROT_READ | MMP_PROT_WRITE));
	}
	CHECK(mmp_space_counters(s, &after));
	mmp_counters_diff(&after, &before, &moved);
	CHECK(mmp_modeled_ns(s, &moved, &ns));
	CHECK(mmp_space_query(s, a + LEN / 2, &q));
	printf("batch %d: modeled %.0f ns; the block at %#llx is %s\n", batch, ns,
	       (unsigned long long)q.block_start, q.block_folded ? "folded" : "unfolded");
	CHECK(mmp_counters_print(stdout, &moved, "  "));
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
