/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Software-managed accessed/dirty (riscv Svade, MMP_OPT_HW_AD 0): the walker
 * faults on an entry with A clear, or a store to one with D clear, and the
 * fault handler sets them. Inside a NAPOT run the walker checks the one entry
 * it read while ptep_get ORs A/D over the run, so the handler must set them on
 * every entry of the run, or it finds "nothing to do" and the access faults
 * forever. The scenarios run on every back end, taking their expectations
 * from what it declares (ad_model, cont_ptes): those whose MMU sets A/D
 * itself ignore MMP_OPT_HW_AD and take no access fault at all; a back end with
 * software A/D and no blocks, the reference declaring MMP_AD_SOFTWARE, takes
 * one per page.
 */
#include <string.h>

#include "pte_util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define BASE	0x40000000ULL	/* PMD aligned */
#define P	MMP_PAGE_SIZE
#define NAPOT	16		/* pages of a riscv NAPOT run */

static struct mmp_phys *phys;

static struct mmp_space *svade_space(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);

	must(mmp_space_set_opt(s, MMP_OPT_HW_AD, 0) == 0, "%s: MMP_OPT_HW_AD 0", arch);
	return s;
}

/* With MMP_OPT_HW_AD 0, does @arch take access faults? As it declares (ad_model). */
static bool svade(const char *arch)
{
	return mmp_arch_find(arch)->ad_model != MMP_AD_HARDWARE;
}

/* Pages one access fault makes young: a contiguous block (Svnapot run), or one page. */
static unsigned int fault_pages(const char *arch)
{
	unsigned int n = mmp_arch_find(arch)->cont_ptes;

	return n ? n : 1;
}

/* Does @arch set A/D in software over contiguous blocks? Then a fault sets a whole run. */
static bool svade_runs(const char *arch)
{
	return svade(arch) && mmp_arch_find(arch)->cont_ptes;
}

static void fixed_map(struct mmp_space *s, uint64_t addr, uint64_t len, int flags)
{
	uint64_t got = 0;

	must(mmp_mmap(s, addr, len, RW, MMP_MAP_FIXED | flags, &got) == 0 && got == addr,
	     "mmap %llu KiB at %#llx", (unsigned long long)(len / KiB), (unsigned long long)addr);
}

/* Read one byte of every page of [addr, addr + len); how many reads failed or differed. */
static unsigned int read_pages(struct mmp_cpu *cpu, uint64_t addr, uint64_t len,
			       unsigned int off, unsigned char want)
{
	unsigned int bad = 0;

	for (uint64_t va = addr; va < addr + len; va += P) {
		unsigned char b = 0xee;

		bad += mmp_read(cpu, va + off, &b, 1) != 0 || b != want;
	}
	return bad;
}

/* Do the 16 raw entries of the run holding @addr all have @eflags? */
static bool run_has(struct mmp_space *s, uint64_t addr, unsigned int eflags)
{
	mmp_pte_t *ptep = ptep_at(s, addr & ~(NAPOT * P - 1));

	for (int i = 0; i < NAPOT; i++)
		if ((entry_flags(s, READ_ONCE(ptep[i]), MMP_PTE) & eflags) != eflags)
			return false;
	return true;
}

/*
 * A forked child's THP is old; splitting it (a VMA split inside it) maps it
 * with 32 NAPOT runs of old entries. Each run takes one access fault, which
 * makes all its entries young; before, the second page of a run saw the run
 * young through ptep_get, took the fault as spurious, and looped.
 */
static void check_split_thp_in_child(const char *arch)
{
	struct mmp_space *s = svade_space(arch), *c;
	struct mmp_cpu *cpu;
	unsigned char b = 0x5a;
	uint64_t ad;

	mmp_space_set_thp(s, 9, MMP_THP_ALWAYS);
	fixed_map(s, BASE, 4 * MiB, 0);
	must(mmp_cpu_attach(s, &cpu) == 0, "%s: attach", arch);
	must(mmp_write(cpu, BASE + 100, &b, 1) == 0, "%s: write a byte in a THP", arch);
	mmp_cpu_detach(cpu);
	must(mmp_fork(s, &c) == 0, "%s: fork", arch);
	tap_eq(mmp_madvise(c, BASE + MiB, 3 * MiB, MMP_MADV_NOHUGEPAGE), 0,
	       "%s: MADV_NOHUGEPAGE from the middle of the THP in the child", arch);
	tap_eq(counter(c, MMP_C_PMD_SPLIT), 1, "%s: ... splits the child's PMD", arch);

	must(mmp_cpu_attach(c, &cpu) == 0, "%s: attach to the child", arch);
	ad = counter(c, MMP_C_FAULT_AD);
	tap_eq(read_pages(cpu, BASE + MiB, P, 0, 0), 0, "%s: the page at the split point reads",
	       arch);
	tap_eq(read_pages(cpu, BASE + MiB + P, NAPOT * P, 0, 0), 0,
	       "%s: so do its neighbours in the same 64 KiB run", arch);
	if (svade_runs(arch))
		tap_ok(run_has(c, BASE + MiB, MMP_E_ACCESSED),
		       "%s: one access fault made every entry of the run young", arch);
	tap_eq(read_pages(cpu, BASE, MiB, 0, 0) + read_pages(cpu, BASE + MiB, MiB, 100, 0) +
	       (mmp_read(cpu, BASE + 100, &b, 1) != 0 || b != 0x5a), 0,
	       "%s: every page of the split THP reads what the parent wrote", arch);
	tap_eq(counter(c, MMP_C_FAULT_AD) - ad, svade(arch) ? 2 * MiB / (fault_pages(arch) * P) : 0,
	       "%s: one access fault per NAPOT run (or page) with software A/D, none with hardware A/D", arch);
	tap_eq(counter(c, MMP_C_FAULT_SPURIOUS), 0, "%s: no spurious fault", arch);
	mmp_cpu_detach(cpu);
	tap_eq(mmp_space_verify(s), 0, "%s: verify parent and child", arch);
	tap_eq(counter(c, MMP_C_TLB_SANITIZER), 0, "%s: no stale TLB hit", arch);
	mmp_space_destroy(c);
	mmp_space_destroy(s);
}

/*
 * mTHP folios a child populated are old in its own child; the grandchild's
 * reads go through NAPOT runs of old entries (orders 4 and 7 both fold).
 */
static void check_mthp_grandchild(const char *arch, unsigned int order)
{
	const uint64_t a = BASE + 4 * MiB, len = MiB;
	struct mmp_space *s = svade_space(arch), *c, *g;
	struct mmp_cpu *cpu;
	uint64_t ad;

	mmp_space_set_thp(s, order, MMP_THP_ALWAYS);
	fixed_map(s, BASE, MiB, 0);
	must(mmp_fork(s, &c) == 0, "%s: fork", arch);
	fixed_map(c, a, len, MMP_MAP_POPULATE);
	tap_eq(counter(c, MMP_C_FOLIO_ALLOC_O0 + order), len / (P << order),
	       "%s: order %u: MAP_POPULATE in the child faults in order-%u folios", arch, order,
	       order);
	must(mmp_cpu_attach(c, &cpu) == 0, "%s: attach to the child", arch);
	for (uint64_t va = a; va < a + len; va += P)
		mmp_memset(cpu, va, (int)((va - a) / P % 251) + 1, 1);
	mmp_cpu_detach(cpu);
	must(mmp_fork(c, &g) == 0, "%s: fork the child", arch);

	must(mmp_cpu_attach(g, &cpu) == 0, "%s: attach to the grandchild", arch);
	ad = counter(g, MMP_C_FAULT_AD);
	tap_eq(read_pages(cpu, a + P, P, 0, 2), 0, "%s: order %u: the grandchild reads page 1",
	       arch, order);
	tap_eq(read_pages(cpu, a, P, 0, 1), 0, "%s: order %u: ... and page 0 of the same run", arch,
	       order);
	if (svade_runs(arch))
		tap_ok(run_has(g, a, MMP_E_ACCESSED),
		       "%s: order %u: one access fault made every entry of the run young", arch,
		       order);
	{
		unsigned int bad = 0;

		for (uint64_t va = a; va < a + len; va += P)
			bad += read_pages(cpu, va, P, 0, (unsigned char)((va - a) / P % 251 + 1));
		tap_eq(bad, 0, "%s: order %u: every page reads what the child wrote", arch, order);
	}
	tap_eq(counter(g, MMP_C_FAULT_AD) - ad, svade(arch) ? len / (fault_pages(arch) * P) : 0,
	       "%s: order %u: one access fault per NAPOT run with Svade, none otherwise", arch,
	       order);
	mmp_cpu_detach(cpu);
	tap_eq(mmp_space_verify(s), 0, "%s: order %u: verify", arch, order);
	tap_eq(counter(g, MMP_C_TLB_SANITIZER), 0, "%s: order %u: no stale TLB hit", arch, order);
	mmp_space_destroy(g);
	mmp_space_destroy(c);
	mmp_space_destroy(s);
}

/* Reads only: the huge zero page, shared by fork, split by a partial zap in the child. */
static void check_huge_zero_partial_zap(const char *arch)
{
	struct mmp_space *s = svade_space(arch), *c;
	struct mmp_cpu *cpu;
	unsigned char b = 1;

	mmp_space_set_thp(s, 9, MMP_THP_ALWAYS);
	mmp_space_set_thp(s, 4, MMP_THP_ALWAYS);
	fixed_map(s, BASE, 2 * MiB, 0);
	must(mmp_cpu_attach(s, &cpu) == 0, "%s: attach", arch);
	must(mmp_read(cpu, BASE, &b, 1) == 0 && b == 0, "%s: read the huge zero page", arch);
	tap_eq(counter(s, MMP_C_FAULT_HUGE_ZERO), 1, "%s: the read maps the huge zero page", arch);
	must(mmp_fork(s, &c) == 0, "%s: fork", arch);
	tap_eq(mmp_madvise(c, BASE + MiB, 2 * P, MMP_MADV_DONTNEED), 0,
	       "%s: MADV_DONTNEED of two pages in the child", arch);
	tap_eq(read_pages(cpu, BASE, 2 * MiB, 0, 0), 0, "%s: the parent reads zeroes", arch);
	mmp_cpu_detach(cpu);
	must(mmp_cpu_attach(c, &cpu) == 0, "%s: attach to the child", arch);
	tap_eq(read_pages(cpu, BASE + MiB, 2 * P, 0, 0) + read_pages(cpu, BASE, 2 * MiB, 0, 0), 0,
	       "%s: the child reads zeroes, zapped pages included", arch);
	mmp_cpu_detach(cpu);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_space_destroy(c);
	mmp_space_destroy(s);
}

/*
 * A store to a clean NAPOT run (MADV_FREE cleaned it) takes one fault, which
 * marks all 16 entries dirty; the run's other pages are then written with no
 * fault, and reclaim keeps the redirtied folio.
 */
static void check_clean_run_write(const char *arch)
{
	const uint64_t len = NAPOT * P;
	struct mmp_space *s = svade_space(arch);
	struct mmp_cpu *cpu;
	uint64_t ad;

	mmp_space_set_thp(s, 4, MMP_THP_ALWAYS);
	fixed_map(s, BASE, len, 0);
	must(mmp_cpu_attach(s, &cpu) == 0, "%s: attach", arch);
	mmp_memset(cpu, BASE, 0x11, len);
	tap_eq(mmp_madvise(s, BASE, len, MMP_MADV_FREE), 0, "%s: MADV_FREE a 64 KiB folio", arch);
	ad = counter(s, MMP_C_FAULT_AD);
	tap_eq(mmp_memset(cpu, BASE + 3 * P, 0x22, P), 0, "%s: write one page of the clean run",
	       arch);
	if (svade_runs(arch))
		tap_ok(run_has(s, BASE, MMP_E_ACCESSED | MMP_E_DIRTY),
		       "%s: one dirty fault made every entry of the run young and dirty", arch);
	tap_eq(mmp_memset(cpu, BASE, 0x22, len), 0, "%s: write the rest of the run", arch);
	tap_eq(counter(s, MMP_C_FAULT_AD) - ad, svade(arch) ? len / (fault_pages(arch) * P) : 0,
	       "%s: one dirty fault for the whole run (or each page) with software A/D, none otherwise",
	       arch);
	tap_eq(mmp_reclaim(s), 0, "%s: reclaim", arch);
	tap_eq(read_pages(cpu, BASE, len, 0, 0x22), 0, "%s: the redirtied folio was kept", arch);
	mmp_cpu_detach(cpu);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_space_destroy(s);
}

/* A fault on an entry that needs nothing is spurious: no entry is written. */
static void check_spurious_fault(const char *arch)
{
	struct mmp_space *s = svade_space(arch);
	struct mmp_cpu *cpu;
	struct mmp_counters c0, d;

	fixed_map(s, BASE, P, 0);
	must(mmp_cpu_attach(s, &cpu) == 0, "%s: attach", arch);
	mmp_memset(cpu, BASE, 1, P);
	mmp_space_counters(s, &c0);
	tap_eq(handle_mm_fault(s, BASE, FAULT_FLAG_WRITE), 0, "%s: fault on a young dirty entry",
	       arch);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_FAULT_SPURIOUS] == 1 && d.v[MMP_C_FAULT_AD] == 0 &&
	       d.v[MMP_C_PTE_WRITE] == 0, "%s: ... is spurious and writes no entry", arch);
	mmp_cpu_detach(cpu);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_space_destroy(s);
}

int main(int argc, char **argv)
{
	static struct mmp_arch swad;
	const char *arch;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	/*
	 * A port with software A/D and nothing else of its own: the reference
	 * back end declaring MMP_AD_SOFTWARE. The generic walker faults and the
	 * fault path sets A/D, with no code of the port's.
	 */
	swad = *mmp_arch_find(mmp_arch_name(mmp_arch_count() - 1));
	swad.name = "reference-software-ad";
	swad.ad_model = MMP_AD_SOFTWARE;
	tap_require(mmp_arch_register_extra(&swad) == 0, "register a software-A/D back end");
	for (int i = 0; i <= mmp_arch_count(); i++) {
		arch = i < mmp_arch_count() ? mmp_arch_name(i) : swad.name;
		if (argc > 1 && strcmp(argv[1], arch))
			continue;
		check_split_thp_in_child(arch);
		check_mthp_grandchild(arch, 7);
		check_mthp_grandchild(arch, 4);
		check_huge_zero_partial_zap(arch);
		check_clean_run_write(arch);
		check_spurious_fault(arch);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
