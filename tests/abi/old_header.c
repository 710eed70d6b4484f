/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program built against an older header (tests/abi/v1: the first extensible
 * version of the API), run against this library, which knows more counters,
 * options and config fields. Everything it asks must work, and nothing may be
 * written beyond its structures (canaries after each).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <mmprim/mmprim.h>

#include "tap.h"

#define CANARY 0x5a
#define PAGES  32

struct guarded_counters {
	struct mmp_counters c;
	unsigned char canary[256];
};

struct guarded_stats {
	struct mmp_space_stat st;
	unsigned char canary[256];
	struct mmp_phys_stat ps;
	unsigned char canary2[256];
};

static int intact(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != CANARY)
			return 0;
	return 1;
}

static void run_arch(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct guarded_counters gc;
	struct guarded_stats gs;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	uint64_t addr;
	double ns;

	tap_require(!mmp_space_create(phys, &cfg, &s), "%s: create with the old config", arch);
	tap_ok(!strcmp(mmp_space_arch(s), arch), "%s: its back end", arch);
	for (int o = 0; o < MMP_NR_OPTS; o++) {
		long v = -1;

		tap_ok(!mmp_space_get_opt(s, o, &v) && !mmp_space_set_opt(s, o, v),
		       "%s: option %d the old header knows", arch, o);
	}
	{
		long v = -1;

		tap_ok(!mmp_space_get_opt(s, MMP_NR_OPTS, &v),
		       "%s: the library knows an option v1 does not (%d)", arch, MMP_NR_OPTS);
	}
	tap_require(!mmp_mmap(s, 0, PAGES * MMP_PAGE_SIZE, MMP_PROT_READ | MMP_PROT_WRITE, 0, &addr),
		    "%s: mmap", arch);
	tap_require(!mmp_cpu_attach(s, &cpu), "%s: attach", arch);
	tap_ok(!mmp_memset(cpu, addr, 7, PAGES * MMP_PAGE_SIZE), "%s: write %d pages", arch, PAGES);
	mmp_cpu_detach(cpu);

	memset(&gc, CANARY, sizeof(gc));
	tap_ok(!mmp_space_counters(s, &gc.c), "%s: counters into the old structure", arch);
	tap_ok(intact(gc.canary, sizeof(gc.canary)), "%s: nothing written past it", arch);
	tap_eq(gc.c.v[MMP_C_FAULT_ANON] + gc.c.v[MMP_C_FAULT_HUGE_ANON] > 0, 1,
	       "%s: the faults are counted", arch);
	tap_eq(gc.c.v[MMP_C_FAULT_SIGSEGV], 0, "%s: and none failed", arch);
	tap_ok(!mmp_modeled_ns(s, &gc.c, &ns) && ns > 0, "%s: modeled time of the old counters", arch);

	memset(&gs, CANARY, sizeof(gs));
	tap_ok(!mmp_space_stat(s, &gs.st) && gs.st.rss_anon_pages == PAGES,
	       "%s: space stat, %d resident pages", arch, PAGES);
	tap_ok(!mmp_phys_stat(phys, &gs.ps) && gs.ps.total_pages == (64u << 20) / MMP_PAGE_SIZE,
	       "%s: phys stat", arch);
	tap_ok(intact(gs.canary, sizeof(gs.canary)) && intact(gs.canary2, sizeof(gs.canary2)),
	       "%s: nothing written past the stat structures", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);
}

int main(void)
{
	struct mmp_phys *phys;

	printf("# header v1: %d counters, %d options, config %zu bytes; library: %d counters\n",
	       MMP_NR_COUNTERS, MMP_NR_OPTS, sizeof(struct mmp_space_config), mmp_counter_count());
	/* The point of the test: this library has grown past v1 (counters, options, config). */
	tap_ok(mmp_counter_count() > MMP_NR_COUNTERS, "the library counts more than v1 names");
	tap_require(!mmp_phys_create(64 << 20, &phys), "phys");
	for (int i = 0; i < mmp_arch_count(); i++)
		run_arch(phys, mmp_arch_name(i));
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
