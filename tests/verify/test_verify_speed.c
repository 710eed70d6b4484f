/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmp_space_verify() without waiting, on every back end. Not a timed test: it
 * checks the behaviour that makes verify cheap, and that it still catches what
 * it must.
 *  (a) with a reader holding a grace period open, many munmaps leave their
 *      tables in flight: verify passes right after each, calls no
 *      rcu_barrier, frees nothing, and still catches a leak injected then;
 *      once the reader leaves and the phys settles, every table is freed;
 *  (b) injected leaks are caught, each undone leaves verify passing again (its
 *      tallies stay clean across failures): a stray table, a table unlinked
 *      and never sent to be freed, a stray frame, a stray 2 MiB block, a table
 *      marked in flight that no batch holds, a batch count with no table, a
 *      VMA's vm_page_prot out of step with its flags;
 *  (c) munmap and verify back to back, RCU callbacks landing under verify:
 *      every verify passes and none waits; with 64 KiB folios (contpte,
 *      Svnapot) too.
 */
#include <errno.h>
#include <string.h>

#include "mm.h"
#include "rcu.h"
#include "grace.h"
#include "util.h"

#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define BASE		0x100000000ULL	/* 4 GiB: below the mmap base of every back end */
#define ROUNDS		32
#define CHUNK		(8 * MiB)

static struct mmp_phys *phys;

/* Let the tables in their grace period land: mmp_phys_stat waits. */
static void settle(void)
{
	struct mmp_phys_stat st;

	tap_require(mmp_phys_stat(phys, &st) == 0, "phys stat");
}

/* Map, populate and unmap CHUNK at @addr: its tables go to an RCU batch. */
static int churn(struct mmp_space *s, uint64_t addr)
{
	uint64_t got;
	int err = mmp_mmap(s, addr, CHUNK, RW, MMP_MAP_FIXED | MMP_MAP_POPULATE, &got);

	return err ? err : mmp_munmap(s, addr, CHUNK);
}

/* ---- (a) tables in flight -------------------------------------------------------- */

static void check_in_flight(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	uint64_t b0, freed0, fails = 0, waiting;
	struct grace_holder r;
	uint32_t pfn;

	tap_require(mmp_space_set_opt(s, MMP_OPT_RCU_TABLE_FREE, 1) == 0, "RCU table free");
	settle();
	freed0 = counter(s, MMP_C_PGTABLE_FREE_RCU);
	b0 = rcu_barriers();
	grace_hold(&r);
	for (int i = 0; i < ROUNDS; i++) {
		must(churn(s, BASE + i * CHUNK) == 0, "%s: map, populate, unmap", arch);
		fails += mmp_space_verify(s) != 0;
	}
	waiting = tables_in_flight(phys);
	tap_eq(fails, 0, "%s: verify passes right after each of %d munmaps", arch, ROUNDS);
	tap_ok(waiting >= ROUNDS * CHUNK / PMD_SIZE,
	       "%s: the unmapped tables were in flight meanwhile (%lld)", arch, (long long)waiting);
	tap_eq(counter(s, MMP_C_PGTABLE_FREE_RCU) - freed0, waiting,
	       "%s: each counted when queued, though the grace period never ended", arch);
	tap_eq(rcu_barriers() - b0, 0, "%s: verify called no rcu_barrier", arch);

	/* In flight or not, a table unlinked and never sent to be freed is a leak. */
	pfn = pgtable_alloc(s);
	must(pfn != NO_PFN, "table");
	pgtable_unlinked(s, pfn);
	tap_eq(mmp_space_verify(s), -EUCLEAN, "%s: a leaked table among those in flight", arch);
	pgtable_release(s, pfn, MMP_C_PGTABLE_FREE);
	tap_eq(mmp_space_verify(s), 0, "%s: verify passes once it is freed", arch);
	tap_eq(rcu_barriers() - b0, 0, "%s: still no rcu_barrier", arch);

	grace_release(&r);
	settle();
	tap_eq(tables_in_flight(phys), 0, "%s: the grace period ended, every table came home",
	       arch);
	tap_eq(counter(s, MMP_C_PGTABLE_FREE_RCU) - freed0, waiting,
	       "%s: the grace period's end counted nothing more", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);
}

/* ---- (b) injected leaks ------------------------------------------------------------- */

static void check_leaks(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	struct mmp_page *p;
	uint64_t a;
	uint32_t pfn;

	tap_require(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map(s, 4 * MiB, RW);
	must(mmp_memset(cpu, a, 1, 4 * MiB) == 0, "touch");
	must(churn(s, BASE) == 0, "churn");
	tap_eq(mmp_space_verify(s), 0, "%s: verify before", arch);

	pfn = phys_alloc_pages(phys, 0);
	must(pfn != NO_PFN, "frame");
	p = pfn_to_page(phys, pfn);
	p->flags = PG_table;
	p->refcount = 1;
	tap_eq(mmp_space_verify(s), -EUCLEAN, "%s: a table linked nowhere", arch);
	p->flags = 0;
	p->refcount = 0;
	phys_free_pages(phys, pfn, 0);
	tap_eq(mmp_space_verify(s), 0, "%s: passes once it is freed", arch);

	pfn = pgtable_alloc(s);
	must(pfn != NO_PFN, "table");
	pgtable_unlinked(s, pfn);
	tap_eq(mmp_space_verify(s), -EUCLEAN, "%s: a table unlinked and never sent to be freed",
	       arch);
	pgtable_release(s, pfn, MMP_C_PGTABLE_FREE);
	tap_eq(mmp_space_verify(s), 0, "%s: passes once it is freed", arch);

	pfn = phys_alloc_pages(phys, 0);
	must(pfn != NO_PFN, "frame");
	tap_eq(mmp_space_verify(s), -EUCLEAN, "%s: a frame that is no table or folio", arch);
	phys_free_pages(phys, pfn, 0);
	tap_eq(mmp_space_verify(s), 0, "%s: passes once it is freed", arch);

	pfn = phys_alloc_pages(phys, HPAGE_PMD_ORDER);
	must(pfn != NO_PFN, "block");
	tap_eq(mmp_space_verify(s), -EUCLEAN, "%s: a 2 MiB block nobody owns", arch);
	phys_free_pages(phys, pfn, HPAGE_PMD_ORDER);
	tap_eq(mmp_space_verify(s), 0, "%s: passes once it is freed", arch);

	/* The in-flight set is counted exactly: a mark alone, or a count alone, is caught. */
	pfn = pgtable_alloc(s);
	must(pfn != NO_PFN, "table");
	pgtable_unlinked(s, pfn);
	page_flag_set(pfn_to_page(phys, pfn), PG_pt_rcu);
	tap_eq(mmp_space_verify(s), -EUCLEAN, "%s: a table marked in flight that no batch holds",
	       arch);
	pgtable_release(s, pfn, MMP_C_PGTABLE_FREE);
	tap_eq(mmp_space_verify(s), 0, "%s: passes once it is freed", arch);
	__atomic_fetch_add(&phys->nr_pt_rcu, 1, __ATOMIC_RELAXED);
	tap_eq(mmp_space_verify(s), -EUCLEAN, "%s: a batch counting a table that is not there",
	       arch);
	__atomic_fetch_sub(&phys->nr_pt_rcu, 1, __ATOMIC_RELAXED);
	tap_eq(mmp_space_verify(s), 0, "%s: passes once the count is right", arch);

	/* A mapping verify must still check: a reference the folio does not hold. */
	pfn = folio_pfn(phys, entry_pfn(s, ptep_get_lockless(s,
			&pte_table(s, READ_ONCE(*pmd_offset(s, a)))[level_index(a, MMP_PTE)]), MMP_PTE));
	folio_ref_add(pfn_to_page(phys, pfn), 1);
	tap_eq(mmp_space_verify(s), -EUCLEAN, "%s: a folio reference nobody holds", arch);
	folio_ref_sub_return(pfn_to_page(phys, pfn), 1);
	tap_eq(mmp_space_verify(s), 0, "%s: passes once it is dropped", arch);

	/* A VMA whose vm_page_prot no longer matches its flags (a missed vma_set_page_prot). */
	must(mmp_mprotect(s, a, 2 * MiB, MMP_PROT_READ) == 0, "mprotect");
	tap_eq(mmp_space_verify(s), 0, "%s: mprotect keeps vm_page_prot in step", arch);
	find_vma(s, a)->vm_page_prot ^= 1ULL << 63;
	tap_eq(mmp_space_verify(s), -EUCLEAN, "%s: a vm_page_prot that is not the flags'", arch);
	find_vma(s, a)->vm_page_prot ^= 1ULL << 63;
	tap_eq(mmp_space_verify(s), 0, "%s: passes once it is right", arch);

	tap_eq(mmp_cpu_detach(cpu), 0, "%s: detach", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);
}

/* ---- (c) callbacks landing under verify ---------------------------------------------- */

static void check_back_to_back(const char *arch, unsigned int thp_order)
{
	struct mmp_space *s = new_space(phys, arch);
	uint64_t b0 = rcu_barriers(), fails = 0, seen = 0;
	struct mmp_cpu *cpu;
	uint64_t a;

	tap_require(mmp_cpu_attach(s, &cpu) == 0, "attach");
	if (thp_order)
		must(mmp_space_set_thp(s, thp_order, MMP_THP_ALWAYS) == 0, "mTHP");
	/* Something mapped to check beside the churn, cached in the TLB too. */
	a = map(s, 8 * MiB, RW);
	must(mmp_memset(cpu, a, 3, 8 * MiB) == 0, "touch");
	for (int i = 0; i < 4 * ROUNDS; i++) {
		must(churn(s, BASE + (i % 4) * CHUNK) == 0, "%s: map, populate, unmap", arch);
		seen += tables_in_flight(phys) > 0;
		fails += mmp_space_verify(s) != 0;
	}
	tap_eq(fails, 0, "%s%s: verify passes after each munmap", arch, thp_order ? " 64K" : "");
	tap_eq(rcu_barriers() - b0, 0, "%s%s: and never waits", arch, thp_order ? " 64K" : "");
	printf("# %s: tables were in flight at %llu of %d verifies\n", arch,
	       (unsigned long long)seen, 4 * ROUNDS);
	tap_eq(mmp_cpu_detach(cpu), 0, "%s: detach", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);
}

int main(void)
{
	const char *arch;

	tap_require(mmp_phys_create(128 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		check_in_flight(arch);
		check_leaks(arch);
		check_back_to_back(arch, 0);
		/* Every arm64 and riscv64 back end: contpte and Svnapot blocks. */
		if (!strncmp(arch, "arm64", 5) || !strncmp(arch, "riscv64", 7))
			check_back_to_back(arch, 4);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
