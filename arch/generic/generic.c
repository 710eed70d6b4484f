/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reference back end. Its format is the neutral one (each MMP_E_* flag is
 * one bit, the pfn sits at bit 12), and every hook works one entry at a time.
 * Other back ends get these hooks for whatever they leave out, so each one is
 * written only in terms of the owning back end's format hooks.
 */
#include "internal.h"
#include "mm.h"

static mmp_pte_t generic_ptep_get(struct mmp_space *s, mmp_pte_t *ptep)
{
	count_inc(s, MMP_C_PTEP_GET);
	count_inc(s, MMP_C_PTE_READ);
	return READ_ONCE(*ptep);
}

static mmp_pte_t generic_ptep_get_lockless(struct mmp_space *s, mmp_pte_t *ptep)
{
	return __atomic_load_n(ptep, __ATOMIC_ACQUIRE);
}

static mmp_pte_t pte_advance_pfn(struct mmp_space *s, mmp_pte_t pte, unsigned int nr)
{
	return mk_entry(s, entry_pfn(s, pte, MMP_PTE) + nr, entry_flags(s, pte, MMP_PTE), MMP_PTE);
}

static void generic_set_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte,
			     unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		WRITE_ONCE(ptep[i], pte);
		if (i + 1 < nr)
			pte = pte_advance_pfn(s, pte, 1);
	}
	count_add(s, MMP_C_PTE_WRITE, nr);
}

/* Atomic against the walker, which may set A/D at any moment. */
static mmp_pte_t generic_ptep_get_and_clear(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep)
{
	count_inc(s, MMP_C_PTE_READ);
	count_inc(s, MMP_C_PTE_WRITE);
	return __atomic_exchange_n(ptep, 0, __ATOMIC_ACQ_REL);
}

static mmp_pte_t generic_get_and_clear_full_ptes(struct mmp_space *s, uint64_t addr,
						 mmp_pte_t *ptep, unsigned int nr, int full)
{
	mmp_pte_t first = s->arch->ptep_get_and_clear(s, addr, ptep);
	unsigned int ad = 0;

	for (unsigned int i = 1; i < nr; i++) {
		mmp_pte_t e = s->arch->ptep_get_and_clear(s, addr + i * PAGE_SIZE, ptep + i);

		ad |= entry_test(s, e, MMP_PTE, MMP_E_ACCESSED | MMP_E_DIRTY);
	}
	if (ad && first)
		first = entry_set_flags(s, first, MMP_PTE, ad, 0);
	return first;
}

static void generic_clear_full_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				    unsigned int nr, int full)
{
	for (unsigned int i = 0; i < nr; i++)
		s->arch->ptep_get_and_clear(s, addr + i * PAGE_SIZE, ptep + i);
}

/* Rewrite one entry with a compare-and-swap, so a concurrent A/D update is kept. */
static mmp_pte_t pte_update(struct mmp_space *s, mmp_pte_t *ptep, unsigned int set,
			    unsigned int clear)
{
	count_inc(s, MMP_C_PTE_READ);
	count_inc(s, MMP_C_PTE_WRITE);
	return ptep_modify(s, ptep, MMP_PTE, set, clear);
}

static void generic_wrprotect_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
				   unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		pte_update(s, ptep + i, 0, MMP_E_WRITE);
}

static int generic_ptep_test_and_clear_young(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep)
{
	mmp_pte_t old = pte_update(s, ptep, 0, MMP_E_ACCESSED);

	return old && entry_test(s, old, MMP_PTE, MMP_E_ACCESSED);
}

static void generic_clear_young_dirty_ptes(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					   unsigned int nr, unsigned int eflags)
{
	for (unsigned int i = 0; i < nr; i++)
		pte_update(s, ptep + i, 0, eflags);
}

static int generic_ptep_set_access_flags(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					 unsigned int eflags)
{
	mmp_pte_t old = READ_ONCE(*ptep);

	count_inc(s, MMP_C_PTE_READ);
	if (!old || (entry_flags(s, old, MMP_PTE) & eflags) == eflags)
		return 0;
	ptep_modify(s, ptep, MMP_PTE, eflags, 0);
	count_inc(s, MMP_C_PTE_WRITE);
	return 1;
}

static unsigned int generic_pte_batch_hint(mmp_pte_t *ptep, mmp_pte_t pte)
{
	return 1;
}

/*
 * A walker with hardware-managed A/D (x86, arm64 FEAT_HAFDBS, riscv Svadu):
 * set accessed, and dirty on a write, with a locked update of the entry.
 */
static mmp_pte_t generic_hw_update_leaf(struct mmp_space *s, mmp_pte_t *ep, enum mmp_level level,
					unsigned int access)
{
	mmp_pte_t old = __atomic_load_n(ep, __ATOMIC_ACQUIRE), new;
	unsigned int need = MMP_E_ACCESSED | (access == MMP_ACCESS_WRITE ? MMP_E_DIRTY : 0);

	for (;;) {
		unsigned int f = entry_flags(s, old, level);

		if (!(f & MMP_E_PRESENT) || (f & MMP_E_TABLE))
			return 0;
		if (access == MMP_ACCESS_WRITE && !(f & MMP_E_WRITE))
			return 0;
		if ((f & need) == need)
			return old;
		new = mk_entry(s, entry_pfn(s, old, level), f | need, level);
		if (__atomic_compare_exchange_n(ep, &old, new, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			count_inc(s, MMP_C_HW_AD_UPDATE);
			return new;
		}
	}
}

extern const struct mmp_cost_model mmp_cost_x86_64;

const struct mmp_arch mmp_arch_generic = {
	.name = "generic",
	.description = "reference back end: neutral format, one entry at a time",
	.format = MMP_FORMAT_generic,
	.levels = 4,
	.task_size = 1ULL << 47,
	.leaf_levels = 1u << MMP_PTE | 1u << MMP_PMD,
	.ptep_get = generic_ptep_get,
	.ptep_get_lockless = generic_ptep_get_lockless,
	.set_ptes = generic_set_ptes,
	.ptep_get_and_clear = generic_ptep_get_and_clear,
	.get_and_clear_full_ptes = generic_get_and_clear_full_ptes,
	.clear_full_ptes = generic_clear_full_ptes,
	.wrprotect_ptes = generic_wrprotect_ptes,
	.ptep_test_and_clear_young = generic_ptep_test_and_clear_young,
	.ptep_set_access_flags = generic_ptep_set_access_flags,
	.clear_young_dirty_ptes = generic_clear_young_dirty_ptes,
	.pte_batch_hint = generic_pte_batch_hint,
	.hw_update_leaf = generic_hw_update_leaf,
	.tlbi_broadcast = false,
	.tlb_flush_ceiling = 33,
	.cost = &mmp_cost_x86_64,
	.copy_ops = mmp_copy_host,	/* host code: lib/copy.c */
};

#define FILL(hook)					\
	do {						\
		if (!arch->hook)			\
			arch->hook = mmp_arch_generic.hook; \
	} while (0)

void mmp_arch_fill_generic(struct mmp_arch *arch)
{
	FILL(ptep_get);
	FILL(ptep_get_lockless);
	FILL(set_ptes);
	FILL(ptep_get_and_clear);
	FILL(get_and_clear_full_ptes);
	FILL(clear_full_ptes);
	FILL(wrprotect_ptes);
	FILL(ptep_test_and_clear_young);
	FILL(ptep_set_access_flags);
	FILL(clear_young_dirty_ptes);
	FILL(pte_batch_hint);
	FILL(hw_update_leaf);
	FILL(copy_ops);
	FILL(cost);
	if (!arch->tlb_flush_ceiling)
		arch->tlb_flush_ceiling = mmp_arch_generic.tlb_flush_ceiling;
}
