/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Question 2: arm64 with 64 KiB mTHP. Fork, then the child writes one byte
 * per 64 KiB block (COW). Which space counts what, and what backs the memory
 * afterwards? Each space's counters since the fork, and smaps of both.
 *
 *   cc fork_cow.c $(pkg-config --cflags --libs libmmprim) -o fork_cow
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

int main(void)
{
	struct mmp_space_config cfg = { .arch = "arm64" };
	struct mmp_counters before, after, moved;
	struct mmp_space *parent, *child;
	struct mmp_phys *phys;
	struct mmp_cpu *cpu;
	struct mmp_addr_info q;
	uint64_t a;

	CHECK(mmp_phys_create(64UL << 20, &phys));
	CHECK(mmp_space_create(phys, &cfg, &parent));
	CHECK(mmp_space_set_thp(parent, mmp_thp_order("64kB"), MMP_THP_ALWAYS));
	CHECK(mmp_mmap(parent, 0, LEN, MMP_PROT_READ | MMP_PROT_WRITE, MMP_MAP_POPULATE, &a));

	CHECK(mmp_space_counters(parent, &before));
	CHECK(mmp_fork(parent, &child));
	CHECK(mmp_cpu_attach(child, &cpu));
	for (uint64_t p = a; p < a + LEN; p += BLOCK)
		CHECK(mmp_write(cpu, p, "x", 1));

	CHECK(mmp_space_counters(parent, &after));
	mmp_counters_diff(&after, &before, &moved);
	printf("parent, since the fork:\n");
	CHECK(mmp_counters_print(stdout, &moved, "  "));
	printf("child (its counters start at 0):\n");
	CHECK(mmp_space_counters(child, &moved));
	CHECK(mmp_counters_print(stdout, &moved, "  "));

	CHECK(mmp_space_query(child, a, &q));
	printf("child %#llx: order-%u folio, mapcount %d; block %s\n", (unsigned long long)a,
	       q.folio_order, q.folio_mapcount, q.block_folded ? "folded" : "unfolded");
	CHECK(mmp_space_query(parent, a + 4096, &q));
	printf("parent %#llx: order-%u folio, mapcount %d; block %s\n",
	       (unsigned long long)a + 4096, q.folio_order, q.folio_mapcount,
	       q.block_folded ? "folded" : "unfolded");
	printf("parent smaps:\n");
	CHECK(mmp_space_smaps(parent, stdout));
	printf("child smaps:\n");
	CHECK(mmp_space_smaps(child, stdout));

	CHECK(mmp_cpu_detach(cpu));
	CHECK(mmp_space_destroy(child));
	CHECK(mmp_space_destroy(parent));
	CHECK(mmp_phys_destroy(phys));
	return 0;
}
