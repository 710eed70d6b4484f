/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64, 4-level paging. Entries use the real bit layout: P, RW, U/S, A, D,
 * PSE (a huge leaf in a PMD), SPECIAL (software bit 9), SOFT_DIRTY (software
 * bit 11), NX (bit 63). PROT_NONE entries clear P and set the PROTNONE bit,
 * which is the global bit's position (never used for user pages).
 *
 * The MMU sets accessed and dirty itself with locked updates (the generic
 * walker model); TLB shootdowns are IPIs to the CPUs in mm_cpumask, and a range
 * of more than 33 pages flushes the whole mm (tlb_single_page_flush_ceiling).
 */
#include "internal.h"

#define _PAGE_PRESENT	(1ULL << 0)
#define _PAGE_RW	(1ULL << 1)
#define _PAGE_USER	(1ULL << 2)
#define _PAGE_ACCESSED	(1ULL << 5)
#define _PAGE_DIRTY	(1ULL << 6)
#define _PAGE_PSE	(1ULL << 7)
#define _PAGE_PROTNONE	(1ULL << 8)
#define _PAGE_SPECIAL	(1ULL << 9)
#define _PAGE_SOFT_DIRTY (1ULL << 11)
#define _PAGE_NX	(1ULL << 63)
#define PTE_PFN_MASK	0x000ffffffffff000ULL

/* What a table entry holds: _PAGE_TABLE (the kernel also sets A and D on it). */
#define _PAGE_TABLE	(_PAGE_PRESENT | _PAGE_RW | _PAGE_USER | _PAGE_ACCESSED | _PAGE_DIRTY)

/*
 * L1TF: an entry that is not present but still holds a pfn (PROT_NONE)
 * stores the pfn inverted, so a speculative walk through it reaches no real
 * memory (the kernel's protnone_mask(), since 4.19).
 */
static inline uint64_t protnone_mask(mmp_pte_t e)
{
	return e && !(e & _PAGE_PRESENT) ? PTE_PFN_MASK : 0;
}

static mmp_pte_t x86_mk_entry(uint64_t pfn, unsigned int f, enum mmp_level level)
{
	mmp_pte_t e = (pfn << PAGE_SHIFT) & PTE_PFN_MASK;

	if (f & MMP_E_TABLE)
		return e | _PAGE_TABLE;
	if (f & MMP_E_PRESENT)
		e |= _PAGE_PRESENT;
	else if (f & MMP_E_PROTNONE)
		e |= _PAGE_PROTNONE;
	if (f & MMP_E_WRITE)
		e |= _PAGE_RW;
	if (f & MMP_E_USER)
		e |= _PAGE_USER;
	if (f & MMP_E_ACCESSED)
		e |= _PAGE_ACCESSED;
	if (f & MMP_E_DIRTY)
		e |= _PAGE_DIRTY;
	if (f & MMP_E_SPECIAL)
		e |= _PAGE_SPECIAL;
	if (f & MMP_E_SOFT_DIRTY)
		e |= _PAGE_SOFT_DIRTY;
	if (f & MMP_E_NOEXEC)
		e |= _PAGE_NX;
	if (level > MMP_PTE && (f & MMP_E_LEAF))
		e |= _PAGE_PSE;
	return e ^ protnone_mask(e);
}

static unsigned int x86_entry_flags(mmp_pte_t e, enum mmp_level level)
{
	unsigned int f = 0;

	if (!e)
		return 0;
	if (e & _PAGE_PRESENT) {
		f |= MMP_E_PRESENT;
		if (level > MMP_PTE && !(e & _PAGE_PSE))
			return f | MMP_E_TABLE;
	} else if (e & _PAGE_PROTNONE) {
		f |= MMP_E_PROTNONE;
	}
	if (level > MMP_PTE && (e & _PAGE_PSE))
		f |= MMP_E_LEAF;
	if (e & _PAGE_RW)
		f |= MMP_E_WRITE;
	if (e & _PAGE_USER)
		f |= MMP_E_USER;
	if (e & _PAGE_ACCESSED)
		f |= MMP_E_ACCESSED;
	if (e & _PAGE_DIRTY)
		f |= MMP_E_DIRTY;
	if (e & _PAGE_SPECIAL)
		f |= MMP_E_SPECIAL;
	if (e & _PAGE_SOFT_DIRTY)
		f |= MMP_E_SOFT_DIRTY;
	if (e & _PAGE_NX)
		f |= MMP_E_NOEXEC;
	return f;
}

static uint64_t x86_entry_pfn(mmp_pte_t e, enum mmp_level level)
{
	return ((e ^ protnone_mask(e)) & PTE_PFN_MASK) >> PAGE_SHIFT;
}

/* xchg: the walker's locked A/D update can never be lost between read and clear. */
static mmp_pte_t x86_ptep_get_and_clear(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep)
{
	count_inc(s, MMP_C_PTE_READ);
	count_inc(s, MMP_C_PTE_WRITE);
	return __atomic_exchange_n(ptep, 0, __ATOMIC_ACQ_REL);
}

/*
 * Cycle costs for a recent x86-64 server core at 3 GHz. Entry accesses are L1
 * hits (4-5 cycles; an atomic xchg costs about 20). invlpg of a user page
 * costs about 100-250 cycles; a full flush (CR3 reload with PCID) about 500
 * plus refills. A shootdown IPI costs the sender a few microseconds round
 * trip: 2 to 4 us is what flush_tlb_multi is commonly measured at, so 6000.
 * Freeing a table synchronously (tlb_remove_table_sync_one) is one such
 * broadcast IPI and wait; queueing a batch on call_rcu costs a few hundred.
 */
const struct mmp_cost_model mmp_cost_x86_64 = {
	.ghz = 3.0,
	.entry_read = 4,
	.entry_write = 8,
	.tlbi_page = 150,
	.flush_op = 100,
	.flush_all = 500,
	.ipi = 6000,
	.page_walk = 40,
	.rcu_sync = 6000,
	.rcu_call = 200,
	.source = "x86-64 server core: invlpg ~150 cycles, CR3 reload ~500, IPI round trip ~2 us",
};

const struct mmp_arch mmp_arch_x86_64 = {
	.name = "x86_64",
	.description = "x86-64 4-level paging, hardware A/D, IPI shootdowns",
	.mk_entry = x86_mk_entry,
	.entry_flags = x86_entry_flags,
	.entry_pfn = x86_entry_pfn,
	.ptep_get_and_clear = x86_ptep_get_and_clear,
	.tlbi_broadcast = false,
	.tlb_flush_ceiling = 33,
	.cost = &mmp_cost_x86_64,
};
