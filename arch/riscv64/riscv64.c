/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * RISC-V Sv48 (Sv39 and Sv57, in sv39.c and sv57.c, share this file): V R W X U G A D, RSW (bit 8 is the kernel's SPECIAL), PPN from
 * bit 10, N (Svnapot) at bit 63. A valid entry with R=W=X=0 points to the
 * next table; a leaf above level 0 is a megapage. PROT_NONE is G without V,
 * plus R (the kernel's PAGE_NONE). No soft-dirty bit is modelled.
 *
 * Accessed/dirty: with Svadu the walker sets them atomically (the default,
 * MMP_OPT_HW_AD 1); with Svade (MMP_OPT_HW_AD 0) an access to an entry with A
 * clear, or a store with D clear, faults and the kernel sets them.
 * TLB invalidation is an SBI remote fence, modelled as IPIs to the other harts.
 */
#include "pgtable.h"

mmp_pte_t rv_mk_entry(uint64_t pfn, unsigned int f, enum mmp_level level)
{
	mmp_pte_t e = (pfn << _PAGE_PFN_SHIFT) & _PAGE_PFN_MASK;

	if (f & MMP_E_TABLE)
		return e | _PAGE_V;
	if (f & MMP_E_PRESENT)
		e |= _PAGE_V;
	else if (f & MMP_E_PROTNONE)
		e |= _PAGE_PROT_NONE;
	/* Every user leaf is readable; write implies read (W without R is reserved). */
	e |= _PAGE_R;
	if (f & MMP_E_WRITE)
		e |= _PAGE_W;
	if (!(f & MMP_E_NOEXEC))
		e |= _PAGE_X;
	if (f & MMP_E_USER)
		e |= _PAGE_U;
	if (f & MMP_E_ACCESSED)
		e |= _PAGE_A;
	if (f & MMP_E_DIRTY)
		e |= _PAGE_D;
	if (f & MMP_E_SPECIAL)
		e |= _PAGE_SPECIAL;
	if (level == MMP_PTE && (f & MMP_E_CONT) && (f & MMP_E_PRESENT))
		e = pte_mknapot(e);
	return e;
}

unsigned int rv_entry_flags(mmp_pte_t e, enum mmp_level level)
{
	unsigned int f = 0;

	if (e & _PAGE_V) {
		f |= MMP_E_PRESENT;
		if (level > MMP_PTE && !(e & _PAGE_LEAF))
			return f | MMP_E_TABLE;
	} else if (e & _PAGE_PROT_NONE) {
		f |= MMP_E_PROTNONE;
	} else {
		return 0;
	}
	if (level > MMP_PTE)
		f |= MMP_E_LEAF;
	if (e & _PAGE_W)
		f |= MMP_E_WRITE;
	if (!(e & _PAGE_X))
		f |= MMP_E_NOEXEC;
	if (e & _PAGE_U)
		f |= MMP_E_USER;
	if (e & _PAGE_A)
		f |= MMP_E_ACCESSED;
	if (e & _PAGE_D)
		f |= MMP_E_DIRTY;
	if (e & _PAGE_SPECIAL)
		f |= MMP_E_SPECIAL;
	if (level == MMP_PTE && (e & _PAGE_NAPOT))
		f |= MMP_E_CONT;
	return f;
}

/* A NAPOT entry read raw names its run's first page; ptep_get gives each page's own. */
uint64_t rv_entry_pfn(mmp_pte_t e, enum mmp_level level)
{
	return level == MMP_PTE && pte_napot(e) ? napot_base_pfn(e) : rv_ppn(e);
}

/*
 * The walker. Svadu sets A, and D on a store, atomically on the entry it used
 * (inside a NAPOT run, that one entry). Svade faults instead. The leaf is
 * returned as core mm reads it: for a NAPOT run, a plain entry of this page.
 */
mmp_pte_t rv_hw_update_leaf(struct mmp_space *s, mmp_pte_t *ep, enum mmp_level level,
			    unsigned int access)
{
	mmp_pte_t old = __atomic_load_n(ep, __ATOMIC_ACQUIRE), new;
	mmp_pte_t need = _PAGE_A | (access == MMP_ACCESS_WRITE ? _PAGE_D : 0);

	for (;;) {
		if (!(old & _PAGE_V) || !(old & _PAGE_LEAF))
			return 0;
		if (access == MMP_ACCESS_WRITE && !(old & _PAGE_W))
			return 0;
		new = old | need;
		if (new == old)
			break;
		if (!READ_ONCE(s->opts[MMP_OPT_HW_AD]))
			return 0;	/* Svade: the kernel sets A/D in the fault */
		if (__atomic_compare_exchange_n(ep, &old, new, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			count_inc(s, MMP_C_HW_AD_UPDATE);
			break;
		}
	}
	/* (The TLB then caches this page alone: caching the whole run is optional.) */
	return level == MMP_PTE && pte_napot(new) ? napot_normalize(new, ep) : new;
}

/*
 * Cycle costs for a RISC-V application core at 2 GHz. An sfence.vma is cheap
 * locally, but remote shootdowns go through SBI (an ecall into M-mode firmware
 * that IPIs the other harts): several microseconds, the costliest of the three
 * back ends; the synchronous table free is one such round.
 */
static const struct mmp_cost_model riscv64_cost = {
	RISCV64_COSTS(4),
	.source = "riscv64 core at 2 GHz: sfence.vma ~80 cycles, SBI remote fence ~5 us",
};

const struct mmp_arch mmp_arch_riscv64 = {
	.name = "riscv64",
	.description = "RISC-V Sv48, Svnapot 64 KiB runs for 64 KiB folios, Svadu or Svade",
	RISCV64_FAMILY,
	.levels = 4,
	.task_size = 1ULL << 47,	/* half the Sv48 space (TASK_SIZE_64) */
	.leaf_levels = 0xf,	/* any level: page, mega-, giga-, terapage */
	.cost = &riscv64_cost,
};
