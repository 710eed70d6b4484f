/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64 contpte blocks in use: their accessed and dirty state is never lost
 * (gathered by ptep_get, kept through fork and mremap), whole-block range
 * operations act in place, pte_batch_hint, and how the simulated TLB caches a
 * block. Folding and unfolding: test_contpte.c.
 */
#include "contpte_util.h"

/* ---- accessed and dirty ------------------------------------------------------------------ */

static bool young_dirty(struct mmp_space *s, mmp_pte_t pte)
{
	return (entry_flags(s, pte, MMP_PTE) & AD) == AD;
}

static void check_access_dirty(void)
{
	uint64_t a, blk;
	struct mmp_space *s = contpte_space(phys, 4, &a);
	struct mmp_counters c0, d;
	mmp_pte_t *ptep, pte, ret;
	bool ok;

	/* A/D set on two arbitrary entries of an otherwise clean and old block. */
	blk = a;
	populate(s, blk, BLOCK);
	ptep = ptep_at(s, blk);
	mmp_space_counters(s, &c0);
	pte = ptep_get(s, ptep);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_PTEP_GET] == 1 && d.v[MMP_C_PTE_READ] >= 2 && d.v[MMP_C_PTE_READ] <= 17,
	       "ptep_get of a young, dirty CONT entry: 1 call, %llu entry reads (2..17)",
	       (unsigned long long)d.v[MMP_C_PTE_READ]);
	clean_block(ptep);
	ptep[12] |= A64_AF;
	ptep[3] &= ~A64_AP2_RDONLY;	/* hardware dirty: DBM with AP[2] clear */
	must(!young_dirty(s, ptep[0]) && (entry_flags(s, ptep[3], MMP_PTE) & MMP_E_DIRTY),
	     "A/D sit on entries 3 and 12 only");
	ok = true;
	mmp_space_counters(s, &c0);
	for (int i = 0; i < A64_CONT_PTES; i++)
		ok &= young_dirty(s, ptep_get(s, ptep + i));
	counters_since(s, &c0, &d);
	tap_ok(ok, "A/D: ptep_get of every entry of the block reports young and dirty");
	tap_ok(d.v[MMP_C_PTEP_GET] == A64_CONT_PTES && d.v[MMP_C_PTE_READ] >= 2 * A64_CONT_PTES &&
	       d.v[MMP_C_PTE_READ] <= 17 * A64_CONT_PTES,
	       "A/D: each ptep_get counts once and reads at most 17 entries (%llu for 16)",
	       (unsigned long long)d.v[MMP_C_PTE_READ]);
	pte = ptep_get(s, ptep);
	tap_ok(ptep_get_lockless(s, ptep) == pte && young_dirty(s, pte),
	       "A/D: ptep_get_lockless of a stable block returns the gathered value");

	/* Whole-block clear: the returned entry carries the block's A/D. */
	mmp_space_counters(s, &c0);
	ret = get_and_clear_full_ptes(s, blk, ptep, A64_CONT_PTES, 0);
	counters_since(s, &c0, &d);
	tap_ok(young_dirty(s, ret) && a64_pfn(ret) == a64_pfn(pte),
	       "A/D: get_and_clear_full_ptes over the block: the first pfn, young and dirty");
	tap_eq(d.v[MMP_C_CONTPTE_UNFOLD], 0, "A/D: ... without unfolding");
	set_ptes(s, blk, ptep, ret & ~A64_CONT, A64_CONT_PTES);
	must(nr_cont(ptep, A64_CONT_PTES) == A64_CONT_PTES, "set_ptes(16) maps the block folded again");

	/* An unfold hands the gathered A/D to every entry. */
	clean_block(ptep);
	ptep[9] |= A64_AF;
	ptep[14] &= ~A64_AP2_RDONLY;
	wrprotect_ptes(s, blk, ptep, 1);
	ok = nr_cont(ptep, A64_CONT_PTES) == 0;
	for (int i = 0; i < A64_CONT_PTES; i++)
		ok &= young_dirty(s, ptep[i]);
	tap_ok(ok, "A/D: after an unfold every entry carries the block's young and dirty");
	tap_eq(mmp_space_verify(s), 0, "A/D: verify");
	mmp_space_destroy(s);
}

/* Dirty from one CPU write to one page survives fork and mremap, batched or not. */
static void check_dirty_fork_mremap(long batch)
{
	static const char msg[] = "dirty!";
	uint64_t a, blk, dst = 0, off = 9 * P + 100;
	struct mmp_space *s = contpte_space(phys, 4, &a), *c;
	struct mmp_cpu *cpu, *ccpu;
	mmp_pte_t *ptep;
	char out[sizeof(msg)];

	mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, batch);
	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	blk = a + 2 * BLOCK;
	populate(s, blk, BLOCK);
	ptep = ptep_at(s, blk);
	clean_block(ptep);
	mmp_cpu_flush_tlb(cpu);
	must(mmp_write(cpu, blk + off, msg, sizeof(msg)) == 0, "write through the CPU");
	/* Later accesses walk again: see check_tlb_dirty_hit for why. */
	mmp_cpu_flush_tlb(cpu);
	tap_ok((entry_flags(s, ptep[9], MMP_PTE) & MMP_E_DIRTY) &&
	       !(entry_flags(s, ptep[0], MMP_PTE) & MMP_E_DIRTY) && nr_cont(ptep, 16) == 16,
	       "A/D (batch %ld): the MMU set hardware dirty on the written entry only", batch);

	must(mmp_fork(s, &c) == 0, "fork");
	tap_ok(entry_flags(s, ptep_get(s, ptep), MMP_PTE) & MMP_E_DIRTY,
	       "A/D (batch %ld): after fork the parent's block is still dirty", batch);
	tap_ok(entry_flags(c, ptep_get(c, ptep_at(c, blk)), MMP_PTE) & MMP_E_DIRTY,
	       "A/D (batch %ld): the child's copy of the block is dirty", batch);
	must(mmp_cpu_attach(c, &ccpu) == 0, "child cpu");
	memset(out, 0, sizeof(out));
	tap_ok(mmp_read(ccpu, blk + off, out, sizeof(out)) == 0 && !memcmp(out, msg, sizeof(msg)),
	       "A/D (batch %ld): the child reads the data", batch);
	mmp_cpu_detach(ccpu);
	tap_eq(mmp_space_verify(s), 0, "A/D (batch %ld): verify after fork", batch);
	mmp_space_destroy(c);

	tap_eq(mmp_mremap(s, blk, BLOCK, BLOCK, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, a + MiB,
			  &dst), 0, "A/D (batch %ld): mremap the block", batch);
	tap_ok(dst == a + MiB &&
	       (entry_flags(s, ptep_get(s, ptep_at(s, dst)), MMP_PTE) & MMP_E_DIRTY),
	       "A/D (batch %ld): after mremap the moved block is dirty", batch);
	memset(out, 0, sizeof(out));
	tap_ok(mmp_read(cpu, dst + off, out, sizeof(out)) == 0 && !memcmp(out, msg, sizeof(msg)),
	       "A/D (batch %ld): the moved block holds the data", batch);
	tap_eq(mmp_space_verify(s), 0, "A/D (batch %ld): verify after mremap", batch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* ---- whole-block range operations --------------------------------------------------- */

enum range_op { R_CLEAR, R_GET_AND_CLEAR, R_WRPROTECT, NR_RANGE_OPS };

static void check_range_ops(void)
{
	static const char *const name[NR_RANGE_OPS] = {
		"clear_full_ptes", "get_and_clear_full_ptes", "wrprotect_ptes",
	};
	static const struct {
		int start, nr, unfolds;
		const char *what;
	} ranges[] = {
		{ 0, 16, 0, "exactly one aligned block" },
		{ 0, 24, 1, "24 entries from a block boundary" },
		{ 8, 16, 2, "16 entries from mid-block (two partial blocks)" },
	};
	uint64_t a;
	struct mmp_space *s = contpte_space(phys, 5, &a);
	int region = 0;

	for (int op = 0; op < NR_RANGE_OPS; op++) {
		for (size_t r = 0; r < ARRAY_SIZE(ranges); r++) {
			uint64_t base = a + (uint64_t)region++ * 2 * BLOCK;
			int start = ranges[r].start, nr = ranges[r].nr, end = start + nr;
			uint64_t addr = base + start * P;
			mmp_pte_t before[2 * A64_CONT_PTES], *ptep, ret = 0;
			struct mmp_counters c0, d;
			bool ok = true;

			populate(s, base, 2 * BLOCK);
			ptep = ptep_at(s, base);
			must(nr_cont(ptep, 2 * A64_CONT_PTES) == 2 * A64_CONT_PTES,
			     "an order-5 folio maps as two folded blocks");
			memcpy(before, ptep, sizeof(before));
			mmp_space_counters(s, &c0);
			ptep += start;
			if (op == R_CLEAR)
				clear_full_ptes(s, addr, ptep, nr, 0);
			else if (op == R_GET_AND_CLEAR)
				ret = get_and_clear_full_ptes(s, addr, ptep, nr, 0);
			else
				wrprotect_ptes(s, addr, ptep, nr);
			ptep -= start;
			counters_since(s, &c0, &d);
			tap_eq(d.v[MMP_C_CONTPTE_UNFOLD], ranges[r].unfolds,
			       "%s over %s: %d unfold(s)", name[op], ranges[r].what,
			       ranges[r].unfolds);
			if (!ranges[r].unfolds)
				tap_eq(d.v[MMP_C_TLB_FLUSH_RANGE], 0,
				       "%s over %s: no TLB flush (the caller's gather flushes)",
				       name[op], ranges[r].what);

			for (int i = 0; i < 2 * A64_CONT_PTES; i++) {
				int lo = i / A64_CONT_PTES * A64_CONT_PTES, hi = lo + A64_CONT_PTES;
				bool inside = i >= start && i < end;
				/* A block stays folded unless the range covers it in part. */
				bool whole = start <= lo && end >= hi;
				bool touched = start < hi && end > lo;
				bool cont = !touched || whole;
				unsigned int f = entry_flags(s, ptep[i], MMP_PTE);

				if (inside && op != R_WRPROTECT) {
					ok &= !ptep[i];
					continue;
				}
				ok &= a64_pfn(ptep[i]) == a64_pfn(before[i]);
				ok &= !!(ptep[i] & A64_CONT) == cont;
				ok &= !!(f & MMP_E_WRITE) == !inside;
				ok &= (f & MMP_E_DIRTY) != 0;
			}
			tap_ok(ok, "%s over %s: entries cleared or write-protected, folded "
			       "where the block was covered whole or not at all", name[op],
			       ranges[r].what);
			if (op == R_GET_AND_CLEAR)
				tap_ok(a64_pfn(ret) == a64_pfn(before[start]) &&
				       young_dirty(s, ret),
				       "%s over %s: returns the first entry, young and dirty",
				       name[op], ranges[r].what);
			if (op != R_WRPROTECT)	/* map them again, so the rmap still agrees */
				set_ptes(s, addr, ptep + start,
						  before[start] & ~A64_CONT, nr);
		}
	}
	tap_eq(mmp_space_verify(s), 0, "range ops: verify");
	mmp_space_destroy(s);
}

/* ---- pte_batch_hint ------------------------------------------------------------------------ */

static void check_batch_hint(void)
{
	uint64_t a;
	struct mmp_space *s = contpte_space(phys, 4, &a);
	mmp_pte_t *ptep;
	bool ok = true;

	populate(s, a + 4 * BLOCK, 2 * BLOCK);
	ptep = ptep_at(s, a + 4 * BLOCK);
	for (int i = 0; i < 2 * A64_CONT_PTES; i++)
		ok &= pte_batch_hint(s, ptep + i, ptep[i]) ==
		      (unsigned int)(A64_CONT_PTES - i % A64_CONT_PTES);
	tap_ok(ok, "pte_batch_hint of a CONT entry is 16 minus its index in the block");
	wrprotect_ptes(s, a + 4 * BLOCK, ptep, 1);	/* unfolds the first block */
	ok = true;
	for (int i = 0; i < A64_CONT_PTES; i++)
		ok &= pte_batch_hint(s, ptep + i, ptep[i]) == 1;
	tap_ok(ok, "pte_batch_hint of a non-CONT entry is 1");
	tap_eq(pte_batch_hint(s, ptep + A64_CONT_PTES + 3, ptep[A64_CONT_PTES + 3]), 13,
	       "pte_batch_hint: the next block is still folded");
	tap_eq(mmp_space_verify(s), 0, "pte_batch_hint: verify");
	mmp_space_destroy(s);
}

/* ---- TLB ---------------------------------------------------------------------------------- */

static void check_tlb(long bbml2)
{
	uint64_t a, blk;
	struct mmp_space *s = contpte_space(phys, 4, &a);
	struct mmp_counters c0, d;
	struct mmp_cpu *cpu;
	char ch;
	bool ok = true;

	mmp_space_set_opt(s, MMP_OPT_BBML2_NOABORT, bbml2);
	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	blk = a + 5 * BLOCK;
	must(mmp_memset(cpu, blk, 0x5a, BLOCK) == 0, "fill a 64 KiB folio");
	mmp_cpu_flush_tlb(cpu);
	must(mmp_read(cpu, blk, &ch, 1) == 0, "read page 0");
	mmp_space_counters(s, &c0);
	for (int i = 1; i < A64_CONT_PTES; i++)
		ok &= mmp_read(cpu, blk + i * P + 7, &ch, 1) == 0 && ch == 0x5a;
	counters_since(s, &c0, &d);
	tap_ok(ok, "tlb (bbml2 %ld): the other 15 pages read back", bbml2);
	tap_eq(d.v[MMP_C_TLB_HIT], 15, "tlb (bbml2 %ld): 15 TLB hits on one 64 KiB translation",
	       bbml2);
	tap_eq(d.v[MMP_C_PAGE_WALK], 0, "tlb (bbml2 %ld): no page walk", bbml2);

	mmp_space_counters(s, &c0);
	tap_eq(mmp_munmap(s, blk + 5 * P, P), 0, "tlb (bbml2 %ld): munmap one page of the block",
	       bbml2);
	counters_since(s, &c0, &d);
	tap_eq(d.v[MMP_C_CONTPTE_UNFOLD], 1, "tlb (bbml2 %ld): the block was unfolded", bbml2);
	mmp_space_counters(s, &c0);
	tap_ok(mmp_read(cpu, blk + 6 * P, &ch, 1) == 0 && ch == 0x5a,
	       "tlb (bbml2 %ld): its neighbour still reads", bbml2);
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_PAGE_WALK] == 1 && d.v[MMP_C_TLB_HIT] == 0,
	       "tlb (bbml2 %ld): the 64 KiB translation is gone: the neighbour walks", bbml2);
	tap_eq(mmp_read(cpu, blk + 5 * P, &ch, 1), -EFAULT,
	       "tlb (bbml2 %ld): the unmapped page faults", bbml2);
	tap_eq(counter(s, MMP_C_TLB_SANITIZER), 0, "tlb (bbml2 %ld): no stale translation used",
	       bbml2);
	tap_eq(mmp_space_verify(s), 0, "tlb (bbml2 %ld): verify", bbml2);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/*
 * The MMU may set dirty on any one entry of a block and cache the block with
 * it; a later write to another page of the block through that translation is
 * legitimate even though that page's own entry is clean (the block's dirty
 * state is the OR of its 16 entries). Own phys: a sanitizer report here must
 * not fail verify elsewhere.
 */
static void check_tlb_dirty_hit(void)
{
	struct mmp_phys *ph;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	mmp_pte_t *ptep;
	uint64_t a;
	char ch = 1;

	must(mmp_phys_create(16 * MiB, &ph) == 0, "a phys of its own");
	s = contpte_space(ph, 4, &a);
	populate(s, a, BLOCK);
	ptep = ptep_at(s, a);
	clean_block(ptep);
	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	must(mmp_write(cpu, a + 9 * P, &ch, 1) == 0, "write page 9 of a clean block");
	must(mmp_write(cpu, a + 3 * P, &ch, 1) == 0 && mmp_read(cpu, a + 4 * P, &ch, 1) == 0,
	     "access pages 3 and 4 through the cached block");
	tap_eq(counter(s, MMP_C_TLB_SANITIZER), 0,
	       "tlb: a dirty block translation used for a page whose own entry is clean is no "
	       "sanitizer report");
	tap_eq(mmp_space_verify(s), 0,
	       "tlb: verify after writes through a dirty block translation");
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	mmp_phys_destroy(ph);
}

/*
 * mprotect batches a whole block through modify_prot_start/commit_ptes: no
 * unfold and no fold, the block stays CONT; one entry at a time unfolds each
 * block and refolds it at its last entry. Both end with the same data.
 */
static void check_mprotect_batch(int batch)
{
	uint64_t a;
	struct mmp_space *s = contpte_space(phys, 4, &a);
	struct mmp_cpu *cpu;
	uint64_t unfold, fold;
	unsigned char b = 0;
	mmp_pte_t *ptes;

	mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, batch);
	mmp_cpu_attach(s, &cpu);
	mmp_memset(cpu, a, 0x5a, 256 * KiB);	/* four 64 KiB folios, folded at fault */
	unfold = counter(s, MMP_C_CONTPTE_UNFOLD);
	fold = counter(s, MMP_C_CONTPTE_FOLD);
	tap_eq(mmp_mprotect(s, a, 256 * KiB, MMP_PROT_READ), 0, "mprotect batch %d: read-only", batch);
	tap_eq(counter(s, MMP_C_CONTPTE_UNFOLD) - unfold, batch ? 0 : 4,
	       "mprotect batch %d: %s", batch, batch ? "no block unfolds" : "each block unfolds");
	tap_eq(counter(s, MMP_C_CONTPTE_FOLD) - fold, batch ? 0 : 4,
	       "mprotect batch %d: %s", batch, batch ? "nothing to refold" : "each block refolds");
	ptes = pte_table(s, *pmd_offset(s, a));
	tap_ok((ptes[level_index(a, MMP_PTE)] & A64_CONT) && !(ptes[level_index(a, MMP_PTE)] & A64_DBM),
	       "mprotect batch %d: the block is still CONT and read-only", batch);
	tap_eq(mmp_write(cpu, a, "x", 1), -EFAULT, "mprotect batch %d: a write faults", batch);
	tap_eq(mmp_mprotect(s, a, 256 * KiB, MMP_PROT_READ | MMP_PROT_WRITE), 0,
	       "mprotect batch %d: read-write again", batch);
	tap_eq(mmp_write(cpu, a + 70000, "y", 1), 0, "mprotect batch %d: a write works", batch);
	mmp_read(cpu, a + 1000, &b, 1);
	tap_eq(b, 0x5a, "mprotect batch %d: data intact", batch);
	tap_eq(mmp_space_verify(s), 0, "mprotect batch %d: verify", batch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}


int main(void)
{
	struct mmp_phys_stat st0, st1;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	mmp_phys_stat(phys, &st0);
	check_access_dirty();
	check_dirty_fork_mremap(1);
	check_dirty_fork_mremap(0);
	check_range_ops();
	check_batch_hint();
	check_tlb(0);
	check_tlb(1);
	check_tlb_dirty_hit();
	check_mprotect_batch(1);
	check_mprotect_batch(0);
	rcu_barrier();	/* page tables come home after a grace period */
	mmp_phys_stat(phys, &st1);
	tap_eq(st1.free_pages, st0.free_pages, "every frame went back to the phys");
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
