/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64 contpte: 16 aligned PTEs that map 16 aligned pages of one folio with
 * the same attributes carry ARM64_PTE_CONT, so the TLB may hold them as one 64 KiB
 * entry. Core mm never sees this: it calls ptep_get, set_ptes and friends,
 * and this file folds blocks when they become eligible and unfolds them
 * (break-before-make) before any change to a single entry.
 *
 * Hardware keeps A/D per entry, so the block's young/dirty state is the OR of
 * its 16 entries; ptep_get gathers it. Range operations over whole blocks act
 * in place and unfold only partially covered end blocks.
 */
#include "../shared/cont_block.h"
#include "family.h"

static inline mmp_pte_t *contpte_align_down(mmp_pte_t *ptep)
{
	return cont_align_down(ptep, CONT_PTES);
}

static __always_inline void contpte_try_unfold(struct mmp_space *s, uint64_t addr,
					       mmp_pte_t *ptep, mmp_pte_t pte);
static void contpte_try_fold(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte);

/* Core never passes CONT in, but special entries never fold. */
static inline bool contpte_may_fold(mmp_pte_t pte)
{
	return (pte & ARM64_PTE_VALID) && !(pte & ARM64_PTE_SPECIAL);
}

/* Each entry of a block carries CONT and its own page. */
static inline mmp_pte_t contpte_run_entry(mmp_pte_t pte, unsigned int i, bool block)
{
	return arm64_pte_advance_pfn(block ? pte | ARM64_PTE_CONT : pte, i);
}

/* Hardware keeps A/D per entry; dirty is hardware's (DBM) or the software bit. */
static inline mmp_pte_t contpte_gather(mmp_pte_t pte, mmp_pte_t e)
{
	if (e & ARM64_PTE_AF)
		pte |= ARM64_PTE_AF;
	if (arm64_pte_dirty(e))
		pte = arm64_pte_mkdirty(pte);
	return pte;
}

static inline bool contpte_gathered_all(mmp_pte_t pte)
{
	return (pte & ARM64_PTE_AF) && arm64_pte_dirty(pte);
}

/* Core reads a contpte entry raw, CONT included, as the kernel's does. */
static inline mmp_pte_t contpte_for_core(mmp_pte_t raw, const mmp_pte_t *ptep)
{
	return raw;
}

/*
 * Is @e a valid contpte entry mapping @pfn with @prot (arm64_pte_prot_noad)?
 * What the lockless read waits for of every entry, and verify checks.
 */
static __always_inline bool contpte_entry_fits(mmp_pte_t e, uint64_t pfn, mmp_pte_t prot)
{
	return pte_valid_cont(e) && arm64_pte_pfn(e) == pfn && arm64_pte_prot_noad(e) == prot;
}

static inline bool contpte_fits(mmp_pte_t e, unsigned int i, mmp_pte_t ref, unsigned int ref_i)
{
	return contpte_entry_fits(e, arm64_pte_pfn(ref) - ref_i + i, arm64_pte_prot_noad(ref));
}

static const struct cont_block_ops contpte_ops = {
	.nr = CONT_PTES,
	.folded = pte_valid_cont,
	.try_unfold = contpte_try_unfold,
	.try_fold = contpte_try_fold,
	.may_fold = contpte_may_fold,
	.pfn = arm64_pte_pfn,
	.advance_pfn = arm64_pte_advance_pfn,
	.run_entry = contpte_run_entry,
	.gather = contpte_gather,
	.gathered_all = contpte_gathered_all,
	.for_core = contpte_for_core,
	.fits = contpte_fits,
	.young = ARM64_PTE_AF,
};

/*
 * Rewrite the block holding @ptep with @pte's attributes, CONT or not
 * (contpte_convert): clear all 16 gathering A/D into the new value, invalidate
 * the block's TLB entries (skipped with BBML2_NOABORT), then write all 16.
 * Entries are none in between: a walker faults and waits for the PTL.
 */
static void contpte_convert(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte)
{
	uint64_t start = addr & CONT_PTE_MASK;
	mmp_pte_t *first = contpte_align_down(ptep);

	pte -= (uint64_t)(ptep - first) << PAGE_SHIFT;	/* the block's first pfn */
	inc_tlb_flush_pending(s);
	pte = cont_clear_block(s, first, pte, &contpte_ops);
	if (!s->opts[MMP_OPT_BBML2_NOABORT])
		flush_tlb_range(s, start, start + CONT_PTE_SIZE, PAGE_SHIFT);
	for (int i = 0; i < CONT_PTES; i++)
		raw_set(s, first + i, arm64_pte_advance_pfn(pte, i));
	dec_tlb_flush_pending(s);
}

static __always_inline void contpte_try_unfold(struct mmp_space *s, uint64_t addr,
					       mmp_pte_t *ptep, mmp_pte_t pte)
{
	if (pte_valid_cont(pte)) {
		count_inc(s, MMP_C_CONTPTE_UNFOLD);
		contpte_convert(s, addr, ptep, pte & ~ARM64_PTE_CONT);
	}
}

/*
 * Fold the block if the entry just written at @ptep completed it
 * (contpte_try_fold). Core writes low to high, so only the block's last entry
 * with the last pfn of an aligned run is a candidate; then every entry must be
 * valid, map the next pfn and match the others but for A/D.
 */
static void contpte_try_fold(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte)
{
	uint64_t pfn = arm64_pte_pfn(pte), base_pfn = pfn - (CONT_PTES - 1);
	mmp_pte_t *first = contpte_align_down(ptep), prot = arm64_pte_prot_noad(pte);

	if (!cont_completes_block(addr, pfn, CONT_PTES) || !(pte & ARM64_PTE_VALID) ||
	    (pte & (ARM64_PTE_CONT | ARM64_PTE_SPECIAL)))
		return;
	if (!folio_covers_block(s, base_pfn, CONT_PTES))
		return;
	for (int i = 0; i < CONT_PTES; i++) {
		mmp_pte_t e = raw_get(s, first + i);

		if (!(e & ARM64_PTE_VALID) || arm64_pte_pfn(e) != base_pfn + i ||
		    arm64_pte_prot_noad(e) != prot)
			return;
	}
	count_inc(s, MMP_C_CONTPTE_FOLD);
	contpte_convert(s, addr, ptep, pte | ARM64_PTE_CONT);
}

/* ---- ptep_get ------------------------------------------------------------------- */

/*
 * A contpte entry: gather young and dirty from the block. Since 6.17 the loop
 * stops once it has seen both; before, it read all 16 entries every time.
 */
mmp_pte_t contpte_ptep_get(struct mmp_space *s, mmp_pte_t *ptep)
{
	return cont_ptep_get(s, ptep, release_follows(s, RULE_CONTPTE_GET_EARLY_EXIT),
			     &contpte_ops);
}

/*
 * Without the PTL (GUP-fast): the block may be folded or unfolded under us.
 * Re-read it and retry unless all 16 entries are valid contpte entries of the
 * same run with the same attributes. A block that never gets there is a bug
 * this would spin on: contpte_block_read() is how verify names it.
 */
mmp_pte_t contpte_ptep_get_lockless(struct mmp_space *s, mmp_pte_t *ptep)
{
	return cont_ptep_get_lockless(ptep, &contpte_ops);
}

_Static_assert(CONT_PTES <= MMP_CONT_PTES_MAX, "verify reads a block into MMP_CONT_PTES_MAX");

/* Does entry @i fit in the block entry @ref of @ents belongs to? */
static inline bool contpte_same_block(const mmp_pte_t *ents, unsigned int ref, unsigned int i)
{
	return contpte_fits(ents[i], i, ents[ref], ref);
}

/*
 * Is the block @ents whole after all? If not, name the first entry that does
 * not fit in @fault, held against the entry most of the block agrees with, so
 * that a broken first entry is the one named. With no valid contpte entry at
 * all (PROT_NONE), the lockless read takes each entry as it is: whole.
 */
static __attribute__((cold)) bool contpte_block_fault(const mmp_pte_t *ents,
						      struct cont_block_fault *fault)
{
	unsigned int ref = 0, votes = 0, nr_bad = 0;

	/* Boyer-Moore majority vote among the valid contpte entries. */
	for (unsigned int i = 0; i < CONT_PTES; i++) {
		if (!pte_valid_cont(ents[i]))
			continue;
		if (!votes) {
			ref = i;
			votes = 1;
		} else if (contpte_same_block(ents, ref, i)) {
			votes++;
		} else {
			votes--;
		}
	}
	if (!pte_valid_cont(ents[ref]))
		return true;
	for (unsigned int i = 0; i < CONT_PTES; i++) {
		uint64_t want = arm64_pte_pfn(ents[ref]) - ref + i;

		if (contpte_same_block(ents, ref, i) || nr_bad++)
			continue;
		/* The first entry that does not fit. */
		*fault = (struct cont_block_fault){
			.name = "contpte block",
			.kind = !pte_valid_cont(ents[i]) ? CONT_FAULT_NOT_CONT :
				arm64_pte_pfn(ents[i]) != want ? CONT_FAULT_PFN : CONT_FAULT_ATTRS,
			.entry = i,
			.ref = ref,
			.raw = ents[i],
			.ref_raw = ents[ref],
			.attrs = arm64_pte_prot_noad(ents[i]) ^ arm64_pte_prot_noad(ents[ref]),
			.pfn = arm64_pte_pfn(ents[i]),
			.expected_pfn = want,
		};
	}
	fault->nr_bad = nr_bad;
	return !nr_bad;
}

/*
 * For mmp_space_verify(), whose locks leave the hardware walker alone free to
 * change the block, and only its A/D: the 16 raw entries of the block at
 * @first into @out, and whether contpte_ptep_get_lockless() would take them.
 * If not, it would retry forever: what breaks the block goes in @fault
 * instead. Counts nothing, as the lockless read does not.
 */
bool contpte_block_read(struct mmp_space *s, mmp_pte_t *first, mmp_pte_t *out,
			struct cont_block_fault *fault)
{
	mmp_pte_t e0 = __atomic_load_n(first, __ATOMIC_ACQUIRE), prot = arm64_pte_prot_noad(e0);
	bool whole = true;

	for (unsigned int i = 0; i < CONT_PTES; i++) {
		out[i] = i ? __atomic_load_n(first + i, __ATOMIC_ACQUIRE) : e0;
		whole &= contpte_entry_fits(out[i], arm64_pte_pfn(e0) + i, prot);
	}
	return whole || contpte_block_fault(out, fault);
}

/* ---- setting ------------------------------------------------------------------------- */

/*
 * set_ptes: one entry unfolds a block it lands in and may complete a fold;
 * a run sets CONT on each sub-range that is a whole, VA- and PA-aligned block
 * (contpte_set_ptes). Core never passes CONT in; strip a leaked one.
 */
void contpte_set_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte,
		      unsigned int nr)
{
	cont_set_ptes(s, addr, ptep, pte & ~ARM64_PTE_CONT, nr, &contpte_ops);
}

/* ---- clearing ------------------------------------------------------------------------ */

mmp_pte_t contpte_ptep_get_and_clear(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep)
{
	return cont_ptep_get_and_clear(s, addr, ptep, &contpte_ops);
}

mmp_pte_t contpte_get_and_clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					  unsigned int nr, int full)
{
	if (nr == 1)
		return contpte_ptep_get_and_clear(s, addr, ptep);
	return cont_get_and_clear_full_ptes(s, addr, ptep, nr, &contpte_ops);
}

void contpte_clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, unsigned int nr,
			     int full)
{
	cont_clear_full_ptes(s, addr, ptep, nr, &contpte_ops);
}

/* ---- permission and age ------------------------------------------------------------------ */

/* pte_wrprotect on one raw entry: hardware dirty moves to the software bit first. */
static void wrprotect_one(struct mmp_space *s, mmp_pte_t *ptep)
{
	mmp_pte_t old = __atomic_load_n(ptep, __ATOMIC_ACQUIRE), new;

	do {
		new = old;
		if (arm64_pte_dirty(old))
			new |= ARM64_PTE_DIRTY;
		new = (new & ~ARM64_PTE_WRITE) | ARM64_PTE_RDONLY;
	} while (!__atomic_compare_exchange_n(ptep, &old, new, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	count_add2(s, MMP_C_PTE_READ, MMP_C_PTE_WRITE, 1);
}

/* Whole blocks are write-protected in place, keeping CONT; partial ends unfold. */
void contpte_wrprotect_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, unsigned int nr)
{
	cont_unfold_ends(s, addr, ptep, nr, &contpte_ops);
	for (unsigned int i = 0; i < nr; i++)
		wrprotect_one(s, ptep + i);
}

int contpte_ptep_test_and_clear_young(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep)
{
	return cont_test_and_clear_young(s, ptep, &contpte_ops);
}

/*
 * A fault made the entry more permissive. Changing the write bit of one entry
 * would break the block's uniformity, so unfold first. A/D alone go on all 16
 * entries, as contpte_ptep_set_access_flags does: ptep_get ORs them over the
 * block, but an MMU without hardware AF checks the one entry it walked, so
 * setting them on this entry only could leave a sibling faulting forever.
 */
int contpte_ptep_set_access_flags(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				  unsigned int eflags)
{
	mmp_pte_t pte = raw_get(s, ptep), *first = ptep;
	unsigned int n = 1;
	int changed = 0;

	if ((eflags & MMP_E_WRITE) && !(pte & ARM64_PTE_WRITE)) {
		contpte_try_unfold(s, addr, ptep, pte);
	} else if (pte_valid_cont(pte)) {
		first = contpte_align_down(ptep);
		n = CONT_PTES;
	}
	for (unsigned int i = 0; i < n; i++) {
		/* This entry was read above; its siblings cost a load each. */
		mmp_pte_t e = first + i == ptep ? __atomic_load_n(ptep, __ATOMIC_ACQUIRE)
						: raw_get(s, first + i);

		if (!e || (entry_flags(s, e, MMP_PTE) & eflags) == eflags)
			continue;
		ptep_modify(s, first + i, MMP_PTE, eflags, 0);
		count_inc(s, MMP_C_PTE_WRITE);
		changed = 1;
	}
	return changed;
}

/*
 * contpte_clear_young_dirty_ptes: A/D belong to the whole block (the folio),
 * so widen the range to whole blocks and clear in place, never unfolding.
 */
void contpte_clear_young_dirty_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				    unsigned int nr, unsigned int eflags)
{
	uint64_t end = addr + (uint64_t)nr * PAGE_SIZE;

	cont_widen_to_blocks(s, &addr, &end, &ptep, &contpte_ops);
	for (; addr < end; addr += PAGE_SIZE, ptep++) {
		mmp_pte_t old = __atomic_load_n(ptep, __ATOMIC_ACQUIRE), new;

		do {
			new = old;
			if (eflags & MMP_E_ACCESSED)
				new &= ~ARM64_PTE_AF;
			if (eflags & MMP_E_DIRTY)
				/* pte_mkclean */
				new = (new & ~ARM64_PTE_DIRTY) | ARM64_PTE_RDONLY;
		} while (!__atomic_compare_exchange_n(ptep, &old, new, false, __ATOMIC_ACQ_REL,
						      __ATOMIC_ACQUIRE));
		count_add2(s, MMP_C_PTE_READ, MMP_C_PTE_WRITE, 1);
	}
}
