/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Two ways a legitimate Linux differs from the default, each a switch:
 *  - MMP_OPT_FORBID_ZEROPAGE (mm_forbids_zeropage()): a read fault on
 *    anonymous memory allocates a folio as a write would (do_anonymous_page),
 *    and a THP-eligible one a THP (do_huge_pmd_anonymous_page), instead of
 *    the zero pages; such a page is the process's own, counted and exclusive.
 *  - MMP_OPT_SOFT_DIRTY (CONFIG_MEM_SOFT_DIRTY): a new mapping is VM_SOFTDIRTY,
 *    so pagemap reports bit 55 on all its pages, holes too; mremap marks what
 *    it moves. Without it no page is ever soft-dirty, moved ones included.
 * And what the kernel's smaps shows of the zero page: nothing (vm_normal_page()
 * returns no page for it, so smaps_pte_entry counts nothing).
 */
#include <errno.h>
#include <string.h>

#include <mmprim/introspect.h>

#include "util.h"

#define PG	MMP_PAGE_SIZE
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)

static struct mmp_phys *phys;

static uint64_t map_pmd_aligned(struct mmp_space *s, uint64_t len)
{
	uint64_t a = map(s, len + MMP_PMD_SIZE, RW), got;

	must(mmp_munmap(s, a, len + MMP_PMD_SIZE) == 0, "munmap");
	a = (a + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
	must(mmp_mmap(s, a, len, RW, MMP_MAP_FIXED, &got) == 0, "mmap fixed");
	return a;
}

static uint64_t pagemap1(struct mmp_space *s, uint64_t a)
{
	uint64_t pm = 0;

	must(mmp_space_pagemap(s, a, 1, &pm) == 1, "pagemap");
	return pm;
}

static void check_zero_page(const char *arch, bool forbid)
{
	struct mmp_space *s = new_space(phys, arch), *child;
	const char *how = forbid ? "no zero page" : "zero page";
	struct mmp_counters c0, d;
	struct mmp_vma_info v;
	struct mmp_cpu *cpu;
	uint64_t a, pm;
	long val;
	char c;

	must(mmp_space_set_opt(s, MMP_OPT_FORBID_ZEROPAGE, forbid) == 0, "set FORBID_ZEROPAGE");
	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map_pmd_aligned(s, 2 * MMP_PMD_SIZE);
	must(mmp_madvise(s, a + MMP_PMD_SIZE, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE) == 0, "HUGEPAGE");

	/* A read of a small page. */
	mmp_space_counters(s, &c0);
	must(mmp_read(cpu, a, &c, 1) == 0, "read");
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_FAULT_ZERO] == !forbid && d.v[MMP_C_FAULT_ANON] == forbid,
	       "%s, %s: a read fault maps %s (zero %llu, anon %llu)", arch, how,
	       forbid ? "a folio" : "the zero page", (unsigned long long)d.v[MMP_C_FAULT_ZERO],
	       (unsigned long long)d.v[MMP_C_FAULT_ANON]);
	pm = pagemap1(s, a);
	tap_ok((pm & MMP_PM_PRESENT) && !!(pm & MMP_PM_MMAP_EXCLUSIVE) == forbid,
	       "%s, %s: pagemap %#llx: present, %s", arch, how, (unsigned long long)pm,
	       forbid ? "exclusive" : "not exclusive");
	tap_eq(rss(s), forbid ? 1 : 0, "%s, %s: RssAnon after a read", arch, how);
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_ok(v.rss == (forbid ? PG : 0) && v.shared_clean == 0 && v.anonymous == v.rss &&
		       v.private_dirty == v.rss,
	       "%s, %s: smaps Rss %llu, Shared_Clean %llu, Private_Dirty %llu (the zero page "
	       "counts nowhere)", arch, how, (unsigned long long)v.rss,
	       (unsigned long long)v.shared_clean, (unsigned long long)v.private_dirty);

	/* A read of a THP-eligible range. */
	mmp_space_counters(s, &c0);
	must(mmp_read(cpu, a + MMP_PMD_SIZE + 5 * PG, &c, 1) == 0, "read THP range");
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_FAULT_HUGE_ZERO] == !forbid && d.v[MMP_C_FAULT_HUGE_ANON] == forbid,
	       "%s, %s: a read fault in a THP range maps %s", arch, how,
	       forbid ? "a THP" : "the huge zero page");
	must(mmp_space_vma_info(s, a + MMP_PMD_SIZE, &v) == 0, "vma_info");
	tap_eq(v.anon_huge_pages, forbid ? MMP_PMD_SIZE : 0, "%s, %s: AnonHugePages", arch, how);

	/* The child inherits the switch, and reads share what the parent faulted. */
	must(mmp_fork(s, &child) == 0, "fork");
	tap_ok(!mmp_space_get_opt(child, MMP_OPT_FORBID_ZEROPAGE, &val) && val == forbid,
	       "%s, %s: a forked space inherits the switch", arch, how);
	tap_eq(mmp_space_verify(s), 0, "%s, %s: verify", arch, how);
	must(mmp_space_destroy(child) == 0, "destroy child");
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

static void check_soft_dirty(const char *arch, bool on)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_vma_info v;
	struct mmp_cpu *cpu;
	uint64_t a, b, got, pm[3];
	uint8_t byte = 1;
	/*
	 * The kernel can track soft-dirty only where the format has the bit:
	 * x86-64 (and the reference back end), not arm64, riscv64, loongarch64.
	 */
	bool tracks = on && (!strncmp(arch, "x86_64", 6) || !strcmp(arch, "generic"));
	const char *how = on ? "soft-dirty on" : "soft-dirty off";

	must(mmp_space_set_opt(s, MMP_OPT_SOFT_DIRTY, on) == 0, "set SOFT_DIRTY");
	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map(s, 3 * PG, RW);
	must(mmp_write(cpu, a, &byte, 1) == 0, "write");
	must(mmp_space_pagemap(s, a, 3, pm) == 3, "pagemap");
	tap_ok(!!(pm[0] & MMP_PM_SOFT_DIRTY) == tracks && !!(pm[1] & MMP_PM_SOFT_DIRTY) == tracks &&
		       (pm[0] & MMP_PM_PRESENT) && !(pm[1] & MMP_PM_PRESENT),
	       "%s, %s: pagemap bit 55 %s on a written page and a hole (%#llx, %#llx)", arch, how,
	       tracks ? "set" : "clear", (unsigned long long)pm[0], (unsigned long long)pm[1]);
	must(mmp_space_vma_info(s, a, &v) == 0, "vma_info");
	tap_eq(!!(v.flags & MMP_VMA_SOFTDIRTY), tracks, "%s, %s: the VMA is VM_SOFTDIRTY (sd)", arch,
	       how);

	/* mremap moves the written page: soft-dirty where it lands only when tracked. */
	b = map(s, 3 * PG, RW);
	must(mmp_munmap(s, b, 3 * PG) == 0, "munmap");
	must(mmp_mremap(s, a, 3 * PG, 3 * PG, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, b, &got) == 0,
	     "mremap");
	tap_eq(!!(pagemap1(s, b) & MMP_PM_SOFT_DIRTY), tracks, "%s, %s: a moved page's bit 55",
	       arch, how);
	tap_eq(mmp_space_verify(s), 0, "%s, %s: verify", arch, how);
	must(mmp_cpu_detach(cpu) == 0, "detach");
	must(mmp_space_destroy(s) == 0, "destroy");
}

int main(void)
{
	const char *arch;
	long v;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		struct mmp_space *s = new_space(phys, arch);

		tap_ok(!mmp_space_get_opt(s, MMP_OPT_FORBID_ZEROPAGE, &v) && v == 0 &&
			       !mmp_space_get_opt(s, MMP_OPT_SOFT_DIRTY, &v) && v == 0,
		       "%s: both switches default to the kernel's defaults (0)", arch);
		must(mmp_space_destroy(s) == 0, "destroy");
		check_zero_page(arch, false);
		check_zero_page(arch, true);
		check_soft_dirty(arch, false);
		check_soft_dirty(arch, true);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
