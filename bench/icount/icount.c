/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmprim-icount: fixed small workloads, one per primitive, for counting the
 * simulator's own instructions under callgrind (scripts/icount.sh). Each phase
 * zeroes callgrind's counts before it and dumps them after it under its name,
 * and prints "phase <arch> <name> <units> <unit>" so the script can divide.
 * Outside valgrind the client requests do nothing and the program is a smoke
 * test of the same workloads: it checks every call and verifies the space.
 *
 * Instruction counts repeat exactly run to run, unlike times on shared vCPUs:
 * SQLite tracks its speed the same way (speedtest1 under cachegrind).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name) ((void)(name))
#endif

#include <mmprim/mmprim.h>

#define MIB		(1ULL << 20)
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define FAULT_BYTES	(16 * MIB)	/* faults, munmap, zap, mprotect */
#define MOVE_BYTES	(1 * MIB)	/* mremap, as the seed */
#define MOVES		32
#define FORK_BYTES	(64 * MIB)
#define VMA_BYTES	(8 * 1024)	/* the vma_scale bench's mappings */
#define VMA_OPS		256

struct icount {
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	const char *arch;
	const char *folio;	/* "4k" or "64k" */
};

static void check(const struct icount *ic, int err, const char *call)
{
	if (err) {
		fprintf(stderr, "mmprim-icount: %s: %s: %s\n", ic->arch, call, mmp_strerror(err));
		exit(1);
	}
}

#define CHECK(ic, call) check((ic), (call), #call)

static void phase_begin(void)
{
	CALLGRIND_ZERO_STATS;
}

/* The phase's name in the dump is "<arch>/<name>-<folio>"; the script matches it. */
static void phase_end(struct icount *ic, const char *name, unsigned long units, const char *unit)
{
	char label[128];

	snprintf(label, sizeof(label), "%s/%s-%s", ic->arch, name, ic->folio);
	CALLGRIND_DUMP_STATS_AT(label);
	printf("phase %s %lu %s\n", label, units, unit);
}

static void touch(struct icount *ic, uint64_t addr, uint64_t len)
{
	static const char one = 1;

	for (uint64_t off = 0; off < len; off += MMP_PAGE_SIZE)
		CHECK(ic, mmp_write(ic->cpu, addr + off, &one, 1));
}

static uint64_t map_touched(struct icount *ic, uint64_t len)
{
	uint64_t addr;

	CHECK(ic, mmp_mmap(ic->s, 0, len, RW, 0, &addr));
	touch(ic, addr, len);
	return addr;
}

/* A 4 KiB write fault per page (mmap included, it is one call), then munmap. */
static void fault_and_munmap(struct icount *ic, bool measure)
{
	const unsigned long pages = FAULT_BYTES / MMP_PAGE_SIZE;
	uint64_t addr;

	phase_begin();
	CHECK(ic, mmp_mmap(ic->s, 0, FAULT_BYTES, RW, 0, &addr));
	touch(ic, addr, FAULT_BYTES);
	if (measure)
		phase_end(ic, "fault", pages, "page");
	phase_begin();
	CHECK(ic, mmp_munmap(ic->s, addr, FAULT_BYTES));
	if (measure)
		phase_end(ic, "munmap", pages, "page");
}

/* zap_page_range through MADV_DONTNEED: the same zap, without the VMA work. */
static void zap(struct icount *ic)
{
	uint64_t addr = map_touched(ic, FAULT_BYTES);

	phase_begin();
	CHECK(ic, mmp_madvise(ic->s, addr, FAULT_BYTES, MMP_MADV_DONTNEED));
	phase_end(ic, "zap", FAULT_BYTES / MMP_PAGE_SIZE, "page");
	CHECK(ic, mmp_munmap(ic->s, addr, FAULT_BYTES));
}

/*
 * change_pte_range over one whole VMA, so no split is counted, as @release
 * has it (0: the space's default): "mprotect" is 6.18's, the 6.17 batch loop;
 * "mprotect_6_16" one entry at a time, before it; "mprotect_7_1" with the
 * small-folio branch of the 4 KiB regression's fix.
 */
static void mprotect_range(struct icount *ic, long release, const char *name)
{
	uint64_t addr = map_touched(ic, FAULT_BYTES);
	long was;

	CHECK(ic, mmp_space_get_opt(ic->s, MMP_OPT_KERNEL_VERSION, &was));
	if (release)
		CHECK(ic, mmp_space_set_opt(ic->s, MMP_OPT_KERNEL_VERSION, release));
	phase_begin();
	CHECK(ic, mmp_mprotect(ic->s, addr, FAULT_BYTES, MMP_PROT_READ));
	phase_end(ic, name, FAULT_BYTES / MMP_PAGE_SIZE, "page");
	CHECK(ic, mmp_space_set_opt(ic->s, MMP_OPT_KERNEL_VERSION, was));
	CHECK(ic, mmp_munmap(ic->s, addr, FAULT_BYTES));
}

/* move_ptes: 1 MiB moved back and forth between two fixed places. */
static void move(struct icount *ic)
{
	uint64_t a = map_touched(ic, MOVE_BYTES), b, out;

	/* A free place for the other end: map it, remember it, unmap it. */
	CHECK(ic, mmp_mmap(ic->s, 0, MOVE_BYTES, RW, 0, &b));
	CHECK(ic, mmp_munmap(ic->s, b, MOVE_BYTES));
	phase_begin();
	for (int i = 0; i < MOVES; i++) {
		uint64_t from = i % 2 ? b : a, to = i % 2 ? a : b;

		CHECK(ic, mmp_mremap(ic->s, from, MOVE_BYTES, MOVE_BYTES,
				 MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, to, &out));
	}
	phase_end(ic, "move_ptes", MOVES * (MOVE_BYTES / MMP_PAGE_SIZE), "entry");
	CHECK(ic, mmp_munmap(ic->s, a, MOVE_BYTES));
}

/* copy_page_range of 64 MiB, then the child's exit (a fullmm zap). */
static void fork_and_exit(struct icount *ic)
{
	const unsigned long pages = FORK_BYTES / MMP_PAGE_SIZE;
	uint64_t addr = map_touched(ic, FORK_BYTES);
	struct mmp_space *child;

	phase_begin();
	CHECK(ic, mmp_fork(ic->s, &child));
	phase_end(ic, "fork", pages, "entry");
	CHECK(ic, mmp_space_verify(child));
	phase_begin();
	CHECK(ic, mmp_space_destroy(child));
	phase_end(ic, "exit", pages, "entry");
	CHECK(ic, mmp_munmap(ic->s, addr, FORK_BYTES));
}

/*
 * VMA work at real-program scale: a space of @nr 8 KiB mappings that cannot
 * merge (read-only and read-write in turn), then VMA_OPS calls each of mmap
 * (one more, placed top-down), mprotect of one mapping's first page to the
 * other protection (a split, and a merge with the neighbour below), and
 * munmap of one mapping. The population is built unmeasured; each phase's
 * unit is a call, in "<arch>/vma_<call>-<population>".
 */
static void vma_scale(struct icount *ic, unsigned int nr, const char *population)
{
	const char *folio = ic->folio;
	uint64_t *addr = calloc(nr, sizeof(*addr)), more;

	if (!addr)
		check(ic, -ENOMEM, "calloc");
	ic->folio = population;
	for (unsigned int i = 0; i < nr; i++)
		CHECK(ic, mmp_mmap(ic->s, 0, VMA_BYTES, i & 1 ? MMP_PROT_READ : RW, 0, &addr[i]));
	phase_begin();
	for (unsigned int i = 0; i < VMA_OPS; i++)
		CHECK(ic, mmp_mmap(ic->s, 0, VMA_BYTES, i & 1 ? MMP_PROT_READ : RW, 0, &more));
	phase_end(ic, "vma_mmap", VMA_OPS, "call");
	phase_begin();
	for (unsigned int i = 0; i < VMA_OPS; i++)
		CHECK(ic, mmp_mprotect(ic->s, addr[i * (nr / VMA_OPS)], MMP_PAGE_SIZE,
				       i * (nr / VMA_OPS) & 1 ? RW : MMP_PROT_READ));
	phase_end(ic, "vma_mprotect", VMA_OPS, "call");
	phase_begin();
	for (unsigned int i = 0; i < VMA_OPS; i++)
		CHECK(ic, mmp_munmap(ic->s, addr[i * (nr / VMA_OPS) + 1], VMA_BYTES));
	phase_end(ic, "vma_munmap", VMA_OPS, "call");
	CHECK(ic, mmp_space_verify(ic->s));
	free(addr);
	ic->folio = folio;
}

/*
 * One back end and folio size on a phys of its own, so that no figure depends
 * on which runs came before (the per-CPU lists keep their tuning). The VMA
 * phases run once, on the first back end: they hardly touch a table.
 */
static void run(const char *arch, unsigned int order, bool vma)
{
	struct mmp_space_config cfg = { .arch = arch, .copy = "generic" };
	struct icount icount = { .arch = arch, .folio = order ? "64k" : "4k" };
	struct icount *ic = &icount;
	struct mmp_phys *phys;

	CHECK(ic, mmp_phys_create(256 * MIB, &phys));
	CHECK(ic, mmp_space_create(phys, &cfg, &ic->s));
	if (order)
		CHECK(ic, mmp_space_set_thp(ic->s, order, MMP_THP_ALWAYS));
	CHECK(ic, mmp_cpu_attach(ic->s, &ic->cpu));
	/* A warm-up round first: table and per-CPU list refills settle. */
	fault_and_munmap(ic, false);
	fault_and_munmap(ic, true);
	zap(ic);
	mprotect_range(ic, 0, "mprotect");
	mprotect_range(ic, MMP_KERNEL_VERSION(6, 16, 0), "mprotect_6_16");
	mprotect_range(ic, MMP_KERNEL_VERSION(7, 1, 0), "mprotect_7_1");
	move(ic);
	fork_and_exit(ic);
	if (vma) {
		vma_scale(ic, 1000, "1k");
		vma_scale(ic, 30000, "30k");
	}
	CHECK(ic, mmp_space_verify(ic->s));
	CHECK(ic, mmp_cpu_detach(ic->cpu));
	CHECK(ic, mmp_space_destroy(ic->s));
	CHECK(ic, mmp_phys_destroy(phys));
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = { "x86_64", "arm64", "riscv64", "generic" };
	const char *const *archs = defaults;
	int nr = 4;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: mmprim-icount [ARCH...]\n"
		       "Runs fixed workloads (fault, munmap, zap, mprotect, move_ptes, fork, exit)\n"
		       "with 4 KiB and 64 KiB folios on each back end (default: x86_64 arm64\n"
		       "riscv64 generic), and VMA calls (mmap, mprotect, munmap) at 1k and 30k\n"
		       "VMAs on the first. Under valgrind --tool=callgrind each phase is dumped\n"
		       "under its name; scripts/icount.sh turns the dumps into instructions per unit.\n");
		return 0;
	}
	if (argc > 1) {
		archs = (const char *const *)argv + 1;
		nr = argc - 1;
	}
	for (int i = 0; i < nr; i++) {
		run(archs[i], 0, i == 0);
		run(archs[i], 4, false);
	}
	return 0;
}
