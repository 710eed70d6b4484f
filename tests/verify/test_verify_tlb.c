/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmp_space_verify() on the simulated TLBs (hw/tlbflush.c's tlb_verify): a
 * zap whose mmu_gather flush was skipped (MMP_DEBUG_SKIP_FLUSH: MADV_DONTNEED,
 * munmap) leaves a CPU a translation to a page the tables no longer map;
 * verify must name it, and pass once a flush came.
 */
#include "debug.h"
#include "util.h"

#define PG	MMP_PAGE_SIZE
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)

static struct mmp_phys *phys;

static void check_arch(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	uint64_t a;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map(s, 4 * PG, RW);
	must(mmp_memset(cpu, a, 1, 4 * PG) == 0, "write: the TLB holds writable entries");
	tap_eq(mmp_space_verify(s), 0, "%s: verify with the TLB in step", arch);

	must(mmp_debug_set(s, MMP_DEBUG_SKIP_FLUSH, 1) == 0, "skip a flush");
	must(mmp_madvise(s, a, 2 * PG, MMP_MADV_DONTNEED) == 0, "MADV_DONTNEED");
	tap_ok(mmp_space_verify(s) < 0, "%s: an entry for a page MADV_DONTNEED zapped unflushed "
	       "is reported", arch);
	must(mmp_cpu_flush_tlb(cpu) == 0, "flush the CPU's TLB");
	tap_eq(mmp_space_verify(s), 0, "%s: and verify passes after a flush", arch);

	must(mmp_memset(cpu, a, 2, 4 * PG) == 0, "write again");
	must(mmp_debug_set(s, MMP_DEBUG_SKIP_FLUSH, 1) == 0, "skip a flush");
	must(mmp_munmap(s, a, PG) == 0, "munmap a page");
	tap_ok(mmp_space_verify(s) < 0, "%s: an entry for an unmapped page is reported", arch);
	must(mmp_cpu_flush_tlb(cpu) == 0, "flush the CPU's TLB");
	tap_eq(mmp_space_verify(s), 0, "%s: verify passes once the TLB was flushed", arch);
	must(mmp_munmap(s, a, 4 * PG) == 0, "munmap");
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

int main(void)
{
	const char *arch;

	tap_require(mmp_phys_create(16 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch)
		check_arch(arch);
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
