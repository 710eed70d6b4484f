/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Svnapot runs for 64 KiB folios, used the way arm64 uses contpte: 16 aligned
 * entries mapping 16 aligned pages of one folio with the same attributes hold
 * one identical NAPOT value. Mainline Linux uses NAPOT for hugetlb only (no
 * pte_batch_hint override); this follows the unmerged proposals to treat it
 * like contpte, so the port exercises the same core paths.
 *
 * Core mm never sees a raw NAPOT value: ptep_get and friends return each
 * page's own entry with A/D gathered over the run, and the setters fold and
 * unfold (break-before-make) behind the ordinary names.
 */
#include "../shared/cont_block.h"
#include "family.h"

static inline mmp_pte_t *napot_align_down(mmp_pte_t *ptep)
{
	return cont_align_down(ptep, NAPOT_PTES);
}

/* The entry at @ptep as core mm reads it. */
static inline mmp_pte_t pte_for_core(mmp_pte_t raw, const mmp_pte_t *ptep)
{
	return pte_napot(raw) ? napot_normalize(raw, ptep) : raw;
}

static void napot_try_unfold(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t raw);
static void napot_try_fold(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte);

static inline bool napot_may_fold(mmp_pte_t pte)
{
	return (pte & RV_PAGE_V) && !(pte & RV_PAGE_SPECIAL);
}

/* All entries of a run hold the one NAPOT value; others their own page. */
static inline mmp_pte_t napot_run_entry(mmp_pte_t pte, unsigned int i, bool block)
{
	return block ? pte_mknapot(pte) : riscv64_pte_advance_pfn(pte, i);
}

/* Hardware set A/D on whichever entry it used: the run's state is their OR. */
static inline mmp_pte_t napot_gather(mmp_pte_t pte, mmp_pte_t e)
{
	return pte | (e & (RV_PAGE_A | RV_PAGE_D));
}

static inline bool napot_gathered_all(mmp_pte_t pte)
{
	return (pte & (RV_PAGE_A | RV_PAGE_D)) == (RV_PAGE_A | RV_PAGE_D);
}

/*
 * Does @e hold the value of NAPOT entry @ref but for A/D? What the lockless
 * read waits for of every entry of a run, and verify checks.
 */
static __always_inline bool napot_entry_fits(mmp_pte_t e, mmp_pte_t ref)
{
	return (e & ~(RV_PAGE_A | RV_PAGE_D)) == (ref & ~(RV_PAGE_A | RV_PAGE_D));
}

static inline bool napot_fits(mmp_pte_t e, unsigned int i, mmp_pte_t ref, unsigned int ref_i)
{
	return napot_entry_fits(e, ref);
}

static const struct cont_block_ops napot_ops = {
	.nr = NAPOT_PTES,
	.folded = pte_napot,
	.try_unfold = napot_try_unfold,
	.try_fold = napot_try_fold,
	.may_fold = napot_may_fold,
	.pfn = rv_ppn,
	.advance_pfn = riscv64_pte_advance_pfn,
	.run_entry = napot_run_entry,
	.gather = napot_gather,
	.gathered_all = napot_gathered_all,
	.for_core = napot_normalize,
	.fits = napot_fits,
	.young = RV_PAGE_A,
};

/*
 * Rewrite the run holding @ptep from @pte (this page's plain entry), as one
 * NAPOT value or as 16 plain entries: clear all 16 gathering A/D, flush the
 * run from every TLB, write (break-before-make, as set_huge_pte_at does).
 */
static void napot_convert(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte,
			  bool napot)
{
	uint64_t start = addr & NAPOT_MASK;
	mmp_pte_t *first = napot_align_down(ptep);

	pte -= (uint64_t)(ptep - first) << RV_PAGE_PFN_SHIFT;	/* the run's first page */
	inc_tlb_flush_pending(s);
	pte = cont_clear_block(s, first, pte, &napot_ops);
	flush_tlb_range(s, start, start + NAPOT_SIZE, PAGE_SHIFT);
	for (unsigned int i = 0; i < NAPOT_PTES; i++)
		raw_set(s, first + i, napot ? pte_mknapot(pte) : riscv64_pte_advance_pfn(pte, i));
	dec_tlb_flush_pending(s);
}

static void napot_try_unfold(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t raw)
{
	if (pte_napot(raw)) {
		count_inc(s, MMP_C_CONTPTE_UNFOLD);
		napot_convert(s, addr, ptep, napot_normalize(raw, ptep), false);
	}
}

/* Fold when the run's last entry completes it (the contpte_try_fold rule). */
static void napot_try_fold(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte)
{
	uint64_t pfn = rv_ppn(pte), base = pfn - (NAPOT_PTES - 1);
	mmp_pte_t *first = napot_align_down(ptep);

	if (!cont_completes_block(addr, pfn, NAPOT_PTES) || !(pte & RV_PAGE_V) ||
	    (pte & RV_PAGE_SPECIAL) || !folio_covers_block(s, base, NAPOT_PTES))
		return;
	for (unsigned int i = 0; i < NAPOT_PTES; i++) {
		mmp_pte_t e = raw_get(s, first + i);

		if (!(e & RV_PAGE_V) || pte_napot(e) || rv_ppn(e) != base + i ||
		    rv_prot_noad(e) != rv_prot_noad(pte))
			return;
	}
	count_inc(s, MMP_C_CONTPTE_FOLD);
	napot_convert(s, addr, ptep, pte, true);
}

mmp_pte_t napot_ptep_get(struct mmp_space *s, mmp_pte_t *ptep)
{
	return cont_ptep_get(s, ptep, true, &napot_ops);
}

/*
 * No PTL: retry until all 16 hold the same value but for A/D. A run that
 * never gets there is a bug this would spin on: napot_block_read() is how
 * verify names it.
 */
mmp_pte_t napot_ptep_get_lockless(struct mmp_space *s, mmp_pte_t *ptep)
{
	return cont_ptep_get_lockless(ptep, &napot_ops);
}

_Static_assert(NAPOT_PTES <= MMP_CONT_PTES_MAX, "verify reads a run into MMP_CONT_PTES_MAX");

/*
 * Is the run @raw whole after all? If not, name the first entry that does not
 * fit in @fault, held against the value most of the run holds, so that a
 * broken first entry is the one named. With no valid NAPOT entry at all
 * (PROT_NONE), the lockless read takes each entry as it is: whole.
 */
static __attribute__((cold)) bool napot_block_fault(const mmp_pte_t *raw,
						    struct cont_block_fault *fault)
{
	unsigned int ref = 0, votes = 0, nr_bad = 0;

	/* Boyer-Moore majority vote among the NAPOT entries. */
	for (unsigned int i = 0; i < NAPOT_PTES; i++) {
		if (!pte_napot(raw[i]))
			continue;
		if (!votes) {
			ref = i;
			votes = 1;
		} else if (napot_entry_fits(raw[i], raw[ref])) {
			votes++;
		} else {
			votes--;
		}
	}
	if (!pte_napot(raw[ref]))
		return true;
	for (unsigned int i = 0; i < NAPOT_PTES; i++) {
		uint64_t pfn = napot_base_pfn(raw[i]) + i, want = napot_base_pfn(raw[ref]) + i;

		if (napot_entry_fits(raw[i], raw[ref]) || nr_bad++)
			continue;
		/* The first entry that does not fit. */
		*fault = (struct cont_block_fault){
			.name = "Svnapot run",
			.kind = !pte_napot(raw[i]) ? CONT_FAULT_NOT_CONT :
				pfn != want ? CONT_FAULT_PFN : CONT_FAULT_ATTRS,
			.entry = i,
			.ref = ref,
			.raw = raw[i],
			.ref_raw = raw[ref],
			.attrs = (raw[i] ^ raw[ref]) & ~(RV_PAGE_A | RV_PAGE_D),
			.pfn = pfn,
			.expected_pfn = want,
		};
	}
	fault->nr_bad = nr_bad;
	return !nr_bad;
}

/*
 * For mmp_space_verify(), whose locks leave the hardware walker alone free to
 * change the run, and only its A/D: the 16 entries of the run at @first into
 * @out, each as the walker uses it alone (this page's plain entry), and
 * whether napot_ptep_get_lockless() would take them. If not, it would retry
 * forever: what breaks the run goes in @fault instead. Counts nothing, as the
 * lockless read does not.
 */
bool napot_block_read(struct mmp_space *s, mmp_pte_t *first, mmp_pte_t *out,
		      struct cont_block_fault *fault)
{
	mmp_pte_t e0 = __atomic_load_n(first, __ATOMIC_ACQUIRE);
	bool whole = pte_napot(e0);

	for (unsigned int i = 0; i < NAPOT_PTES; i++) {
		out[i] = i ? __atomic_load_n(first + i, __ATOMIC_ACQUIRE) : e0;
		whole &= napot_entry_fits(out[i], e0);
	}
	if (whole || napot_block_fault(out, fault))
		return true;
	for (unsigned int i = 0; i < NAPOT_PTES; i++)
		out[i] = pte_for_core(out[i], first + i);
	return false;
}

/* One entry unfolds its run and may fold one; a range writes whole aligned runs as NAPOT. */
void napot_set_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte,
		    unsigned int nr)
{
	cont_set_ptes(s, addr, ptep, pte_for_core(pte, ptep), nr, &napot_ops);
}

mmp_pte_t napot_ptep_get_and_clear(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep)
{
	return cont_ptep_get_and_clear(s, addr, ptep, &napot_ops);
}

mmp_pte_t napot_get_and_clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					unsigned int nr, int full)
{
	if (nr == 1)
		return napot_ptep_get_and_clear(s, addr, ptep);
	return cont_get_and_clear_full_ptes(s, addr, ptep, nr, &napot_ops);
}

void napot_clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, unsigned int nr,
			   int full)
{
	cont_clear_full_ptes(s, addr, ptep, nr, &napot_ops);
}

/* Whole runs in place (all 16 stay identical), partial ends unfolded. */
void napot_wrprotect_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, unsigned int nr)
{
	cont_unfold_ends(s, addr, ptep, nr, &napot_ops);
	for (unsigned int i = 0; i < nr; i++)
		raw_clear_bits(s, ptep + i, RV_PAGE_W);
}

int napot_ptep_test_and_clear_young(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep)
{
	return cont_test_and_clear_young(s, ptep, &napot_ops);
}

/* Widened to whole runs, never unfolding: A/D belong to the run. */
void napot_clear_young_dirty_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				  unsigned int nr, unsigned int eflags)
{
	mmp_pte_t bits = (eflags & MMP_E_ACCESSED ? RV_PAGE_A : 0) |
			 (eflags & MMP_E_DIRTY ? RV_PAGE_D : 0);
	uint64_t end = addr + (uint64_t)nr * PAGE_SIZE;

	cont_widen_to_blocks(s, &addr, &end, &ptep, &napot_ops);
	for (; addr < end; addr += PAGE_SIZE, ptep++)
		raw_clear_bits(s, ptep, bits);
}

/*
 * A write-permission change unfolds the run. A/D alone go on all 16 entries,
 * as huge_ptep_set_access_flags does for a NAPOT hugetlb page: ptep_get ORs
 * them over the run, but an Svade walker checks the one entry it read, so a
 * sibling left without A would fault forever while core sees the run young.
 */
int napot_ptep_set_access_flags(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				unsigned int eflags)
{
	mmp_pte_t raw = raw_get(s, ptep), *first = ptep;
	mmp_pte_t bits = (eflags & MMP_E_WRITE ? RV_PAGE_W : 0) |
			 (eflags & MMP_E_ACCESSED ? RV_PAGE_A : 0) |
			 (eflags & MMP_E_DIRTY ? RV_PAGE_D : 0);
	unsigned int n = 1;
	int changed = 0;

	if ((bits & RV_PAGE_W) && !(raw & RV_PAGE_W)) {
		napot_try_unfold(s, addr, ptep, raw);
	} else if (pte_napot(raw)) {
		first = napot_align_down(ptep);
		n = NAPOT_PTES;
	}
	for (unsigned int i = 0; i < n; i++) {
		/* This entry was read above; its siblings cost a load each. */
		mmp_pte_t e = first + i == ptep ? __atomic_load_n(ptep, __ATOMIC_ACQUIRE)
						: raw_get(s, first + i);

		if (!(e & RV_PAGE_V) || (e & bits) == bits)
			continue;
		__atomic_fetch_or(first + i, bits, __ATOMIC_ACQ_REL);
		count_inc(s, MMP_C_PTE_WRITE);
		changed = 1;
	}
	return changed;
}
