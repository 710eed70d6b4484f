/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The generic entry operations, one entry at a time: the fallbacks of the
 * kernel's include/linux/pgtable.h. lib/entry_dispatch.h instantiates this file
 * once per arch folder, with MMP_ARCH set to the folder's name, right after
 * the folder's own entry_ops.h. Whatever that file defined, it announced with
 * __HAVE_ARCH_<OP> (the kernel's own convention), and that operation is left
 * alone here; every other one is defined as MMP_ARCH_<op> over the folder's
 * format, static inline, so core mm pays no call for it.
 *
 * No include guard: included once per folder.
 */

#ifndef __HAVE_ARCH_PTEP_GET
static __always_inline mmp_pte_t MMP_OP(ptep_get)(struct mmp_space *s, mmp_pte_t *ptep)
{
	count_add2(s, MMP_C_PTEP_GET, MMP_C_PTE_READ, 1);
	return READ_ONCE(*ptep);
}
#endif

#ifndef __HAVE_ARCH_PTEP_GET_LOCKLESS
static __always_inline mmp_pte_t MMP_OP(ptep_get_lockless)(struct mmp_space *s, mmp_pte_t *ptep)
{
	return __atomic_load_n(ptep, __ATOMIC_ACQUIRE);
}
#endif

#ifndef __HAVE_ARCH_SET_PTES
static __always_inline void MMP_OP(set_ptes)(struct mmp_space *s, uint64_t addr, mmp_pte_t *ptep,
					     mmp_pte_t pte, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		WRITE_ONCE(ptep[i], pte);
		if (i + 1 < nr)		/* pte_advance_pfn */
			pte = MMP_OP(mk_entry)(MMP_OP(entry_pfn)(pte, MMP_PTE) + 1,
					       MMP_OP(entry_flags)(pte, MMP_PTE), MMP_PTE);
	}
	count_add(s, MMP_C_PTE_WRITE, nr);
}
#endif

/* Atomic against the walker, which may set A/D at any moment. */
#ifndef __HAVE_ARCH_PTEP_GET_AND_CLEAR
static __always_inline mmp_pte_t MMP_OP(ptep_get_and_clear)(struct mmp_space *s, uint64_t addr,
							    mmp_pte_t *ptep)
{
	count_add2(s, MMP_C_PTE_READ, MMP_C_PTE_WRITE, 1);
	return __atomic_exchange_n(ptep, 0, __ATOMIC_ACQ_REL);
}
#endif

#ifndef __HAVE_ARCH_GET_AND_CLEAR_FULL_PTES
static __always_inline mmp_pte_t MMP_OP(get_and_clear_full_ptes)(struct mmp_space *s,
								 uint64_t addr, mmp_pte_t *ptep,
								 unsigned int nr, int full)
{
	mmp_pte_t first = MMP_OP(ptep_get_and_clear)(s, addr, ptep);
	unsigned int ad = 0;

	for (unsigned int i = 1; i < nr; i++) {
		mmp_pte_t e = MMP_OP(ptep_get_and_clear)(s, addr + i * PAGE_SIZE, ptep + i);

		ad |= MMP_OP(entry_flags)(e, MMP_PTE) & (MMP_E_ACCESSED | MMP_E_DIRTY);
	}
	if (ad && first)
		first = MMP_OP(mk_entry)(MMP_OP(entry_pfn)(first, MMP_PTE),
					 MMP_OP(entry_flags)(first, MMP_PTE) | ad, MMP_PTE);
	return first;
}
#endif

#ifndef __HAVE_ARCH_CLEAR_FULL_PTES
static __always_inline void MMP_OP(clear_full_ptes)(struct mmp_space *s, uint64_t addr,
						    mmp_pte_t *ptep, unsigned int nr, int full)
{
#ifdef __HAVE_ARCH_PTEP_GET_AND_CLEAR
	for (unsigned int i = 0; i < nr; i++)
		MMP_OP(ptep_get_and_clear)(s, addr + i * PAGE_SIZE, ptep + i);
#else
	/* The generic ptep_get_and_clear over the run, counted once. */
	for (unsigned int i = 0; i < nr; i++)
		__atomic_exchange_n(ptep + i, 0, __ATOMIC_ACQ_REL);
	count_add(s, MMP_C_PTE_READ, nr);
	count_add(s, MMP_C_PTE_WRITE, nr);
#endif
}
#endif

/* A compare-and-swap per entry keeps a concurrent A/D update (ptep_modify). */
#ifndef __HAVE_ARCH_WRPROTECT_PTES
static __always_inline void MMP_OP(wrprotect_ptes)(struct mmp_space *s, uint64_t addr,
						   mmp_pte_t *ptep, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		ptep_modify_counted(s, ptep + i, 0, MMP_E_WRITE);
}
#endif

#ifndef __HAVE_ARCH_PTEP_TEST_AND_CLEAR_YOUNG
static __always_inline int MMP_OP(ptep_test_and_clear_young)(struct mmp_space *s, uint64_t addr,
							     mmp_pte_t *ptep)
{
	mmp_pte_t old = ptep_modify_counted(s, ptep, 0, MMP_E_ACCESSED);

	return old && (MMP_OP(entry_flags)(old, MMP_PTE) & MMP_E_ACCESSED);
}
#endif

#ifndef __HAVE_ARCH_CLEAR_YOUNG_DIRTY_PTES
static __always_inline void MMP_OP(clear_young_dirty_ptes)(struct mmp_space *s, uint64_t addr,
							   mmp_pte_t *ptep, unsigned int nr,
							   unsigned int eflags)
{
	for (unsigned int i = 0; i < nr; i++)
		ptep_modify_counted(s, ptep + i, 0, eflags);
}
#endif

#ifndef __HAVE_ARCH_PTEP_SET_ACCESS_FLAGS
static __always_inline int MMP_OP(ptep_set_access_flags)(struct mmp_space *s, uint64_t addr,
							 mmp_pte_t *ptep, unsigned int eflags)
{
	mmp_pte_t old = READ_ONCE(*ptep);

	count_inc(s, MMP_C_PTE_READ);
	if (!old || (MMP_OP(entry_flags)(old, MMP_PTE) & eflags) == eflags)
		return 0;
	ptep_modify(s, ptep, MMP_PTE, eflags, 0);
	count_inc(s, MMP_C_PTE_WRITE);
	return 1;
}
#endif

/*
 * mmp_space_verify() reads a contiguous block raw before ptep_get_lockless
 * gathers it, since a broken block would make that read retry forever; fill
 * @out with the entries at @first, each as the walker uses it alone, and say
 * whether the block is whole, or what breaks it in @fault. A format without
 * blocks has a lockless read that never retries: nothing to check.
 */
#ifndef __HAVE_ARCH_CONT_BLOCK_READ
static __always_inline bool MMP_OP(cont_block_read)(struct mmp_space *s, mmp_pte_t *first,
						    mmp_pte_t *out, struct cont_block_fault *fault)
{
	return true;
}
#endif

#ifndef __HAVE_ARCH_PTE_BATCH_HINT
static __always_inline unsigned int MMP_OP(pte_batch_hint)(mmp_pte_t *ptep, mmp_pte_t pte)
{
	return 1;
}
#endif

/*
 * The walker with hardware-managed A/D (x86, arm64 FEAT_HAFDBS, riscv Svadu):
 * set accessed, and dirty on a write, with a locked update of the entry.
 */
#ifndef __HAVE_ARCH_HW_UPDATE_LEAF
static __always_inline mmp_pte_t MMP_OP(hw_update_leaf)(struct mmp_space *s, mmp_pte_t *ep,
							enum mmp_level level, unsigned int access)
{
	mmp_pte_t old = __atomic_load_n(ep, __ATOMIC_ACQUIRE), new;
	unsigned int need = MMP_E_ACCESSED | (access == MMP_ACCESS_WRITE ? MMP_E_DIRTY : 0);

	for (;;) {
		unsigned int f = MMP_OP(entry_flags)(old, level);

		if (!(f & MMP_E_PRESENT) || (f & MMP_E_TABLE))
			return 0;
		if (access == MMP_ACCESS_WRITE && !(f & MMP_E_WRITE))
			return 0;
		if ((f & need) == need)
			return old;
		/* Software A/D (the back end's declaration): an access fault sets them. */
		if (!space_hw_ad(s))
			return 0;
		new = MMP_OP(mk_entry)(MMP_OP(entry_pfn)(old, level), f | need, level);
		if (__atomic_compare_exchange_n(ep, &old, new, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			count_inc(s, MMP_C_HW_AD_UPDATE);
			return new;
		}
	}
}
#endif

/*
 * The PTE mapping @pfn with the attributes of @prot, a PTE of pfn 0 (pfn_pte,
 * mk_pte; a VMA's vm_page_prot): @prot advanced by @pfn pages.
 */
#ifndef __HAVE_ARCH_PFN_PTE
static __always_inline mmp_pte_t MMP_OP(pfn_pte)(uint64_t pfn, mmp_pte_t prot)
{
	return MMP_OP(pte_advance_pfn)(prot, pfn);
}
#endif

/*
 * A present PTE with the attributes of @eflags added, raw (pte_mkyoung,
 * pte_mkdirty, pte_mkwrite, pte_mkspecial): what mk_entry would make of the
 * entry's pfn and its flags with @eflags.
 */
#ifndef __HAVE_ARCH_PTE_SET_FLAGS
static __always_inline mmp_pte_t MMP_OP(pte_set_flags)(mmp_pte_t e, unsigned int eflags)
{
	return MMP_OP(mk_entry)(MMP_OP(entry_pfn)(e, MMP_PTE),
				MMP_OP(entry_flags)(e, MMP_PTE) | eflags, MMP_PTE);
}
#endif

/*
 * The frame of the table an upper entry points to (pmd_page_vaddr,
 * pud_pgtable). A table entry is always present, so a format that hides the
 * pfn of a not-present leaf (x86's L1TF inversion) has nothing to undo here
 * and may say so with a plainer decode.
 */
#ifndef __HAVE_ARCH_TABLE_PFN
static __always_inline uint64_t MMP_OP(table_pfn)(mmp_pte_t e, enum mmp_level level)
{
	return MMP_OP(entry_pfn)(e, level);
}
#endif

/*
 * The loop of folio_pte_batch (lib/pte_batch.c), compiled per folder so that
 * every entry operation in it is inline, with no dispatch per entry: from
 * entry @nr on, each entry with the @ignore attributes cleared must be
 * @expected advanced to its page. With @merge (a constant where it is
 * inlined), it gathers the write, young and dirty bits of the entries it
 * takes into *@merged. Where ptep_get is the generic plain read and a granule
 * one entry, the loop reads directly and counts the reads once, as many as
 * ptep_get would have counted one by one.
 */
static __always_inline unsigned int MMP_OP(folio_pte_scan)(struct mmp_space *s, mmp_pte_t *ptep,
							   mmp_pte_t expected, unsigned int ignore,
							   unsigned int nr, unsigned int max_nr,
							   const bool merge, unsigned int *merged)
{
#if !defined(__HAVE_ARCH_PTEP_GET) && !defined(__HAVE_ARCH_PTE_BATCH_HINT)
	unsigned int first = nr, reads;

	for (;; nr++) {
		mmp_pte_t e;

		if (nr == max_nr) {
			reads = nr - first;
			break;
		}
		e = READ_ONCE(ptep[nr]);
		if (MMP_OP(pte_clear_flags)(e, ignore) != MMP_OP(pte_advance_pfn)(expected, nr)) {
			reads = nr - first + 1;
			break;
		}
		if (merge)
			*merged |= MMP_OP(entry_flags)(e, MMP_PTE) &
				   (MMP_E_WRITE | MMP_E_ACCESSED | MMP_E_DIRTY);
	}
	count_add2(s, MMP_C_PTEP_GET, MMP_C_PTE_READ, reads);
#else
	while (nr < max_nr) {
		mmp_pte_t e = MMP_OP(ptep_get)(s, ptep + nr);

		if (MMP_OP(pte_clear_flags)(e, ignore) != MMP_OP(pte_advance_pfn)(expected, nr))
			break;
		if (merge)
			*merged |= MMP_OP(entry_flags)(e, MMP_PTE) &
				   (MMP_E_WRITE | MMP_E_ACCESSED | MMP_E_DIRTY);
		nr += MMP_OP(pte_batch_hint)(ptep + nr, e);
	}
#endif
	return nr;
}

#undef __HAVE_ARCH_PTEP_GET
#undef __HAVE_ARCH_PTEP_GET_LOCKLESS
#undef __HAVE_ARCH_SET_PTES
#undef __HAVE_ARCH_PTEP_GET_AND_CLEAR
#undef __HAVE_ARCH_GET_AND_CLEAR_FULL_PTES
#undef __HAVE_ARCH_CLEAR_FULL_PTES
#undef __HAVE_ARCH_WRPROTECT_PTES
#undef __HAVE_ARCH_PTEP_TEST_AND_CLEAR_YOUNG
#undef __HAVE_ARCH_CLEAR_YOUNG_DIRTY_PTES
#undef __HAVE_ARCH_PTEP_SET_ACCESS_FLAGS
#undef __HAVE_ARCH_PTE_BATCH_HINT
#undef __HAVE_ARCH_CONT_BLOCK_READ
#undef __HAVE_ARCH_HW_UPDATE_LEAF
#undef __HAVE_ARCH_TABLE_PFN
#undef __HAVE_ARCH_PTE_SET_FLAGS
#undef __HAVE_ARCH_PFN_PTE
