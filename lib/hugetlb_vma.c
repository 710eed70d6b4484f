/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the calls that walk page tables do to a hugetlb VMA's entries, one
 * huge page at a time and never split (mm/hugetlb.c): munmap, exit and
 * MADV_DONTNEED zap them (__unmap_hugepage_range), fork shares them
 * (copy_hugetlb_page_range), mprotect rewrites them (hugetlb_change_protection)
 * and mremap moves them (move_hugetlb_page_tables).
 */
#include "mm.h"

mmp_pte_t *huge_pte_offset(struct mmp_space *s, struct hstate *h, uint64_t addr, bool alloc)
{
	MMP_BUG_ON(h->level != MMP_PMD);
	return alloc ? pmd_alloc(s, addr) : pmd_offset(s, addr);
}

uint64_t unmap_hugepage_range(struct mmp_gather *tlb, struct mmp_vma *vma, uint64_t start,
			      uint64_t end, uint32_t ref_pfn)
{
	struct mmp_space *s = tlb->s;
	struct hstate *h = hstate_vma(vma);
	uint64_t sz = huge_page_size(h), n = 0;
	/* Only the owner of private reservations gets them back (__vma_private_lock). */
	bool owner = !(vma->flags & VM_SHARED) && vma->resv_map &&
		     (__atomic_load_n(&vma->resv_flags, __ATOMIC_RELAXED) & HPAGE_RESV_OWNER);

	for (uint64_t addr = start & ~(sz - 1); addr < end; addr += sz) {
		mmp_pte_t *ptep = huge_pte_offset(s, h, addr, false), e;
		struct mmp_page *head;
		bool restore = false;
		uint32_t pfn;

		if (!ptep || !READ_ONCE(*ptep))
			continue;
		spin_lock(&s->page_table_lock);
		count_inc(s, MMP_C_PMD_READ);
		e = READ_ONCE(*ptep);
		pfn = e ? entry_pfn(s, e, h->level) : NO_PFN;
		if (!e || (ref_pfn != NO_PFN && pfn != ref_pfn)) {
			spin_unlock(&s->page_table_lock);
			continue;
		}
		/* Taken back by the owner: faults here SIGBUS rather than see data go missing. */
		if (ref_pfn != NO_PFN)
			__atomic_fetch_or(&vma->resv_flags, HPAGE_RESV_UNMAPPED, __ATOMIC_RELAXED);
		count_inc(s, MMP_C_PMD_WRITE);
		e = __atomic_exchange_n(ptep, 0, __ATOMIC_ACQ_REL);
		tlb_remove_pmd_tlb_entry(tlb, addr);
		head = pfn_to_page(s->phys, pfn);
		if (!(head->flags & PG_anon) && entry_test(s, e, h->level, MMP_E_DIRTY))
			page_flag_set(head, PG_dirty);
		/*
		 * The owner's private page: its reservation comes back when the
		 * page is freed, unless the pool has surplus pages to shed.
		 */
		if (owner && (head->flags & PG_anon) && !READ_ONCE(h->surplus_huge_pages)) {
			page_flag_set(head, PG_hugetlb_restore_reserve);
			restore = true;
		}
		hugetlb_count_add(s, -(int64_t)pages_per_huge_page(h));
		folio_remove_rmap_pmd(s, head);
		spin_unlock(&s->page_table_lock);
		/* The map no longer counts it consumed; if it cannot say so, it stays consumed. */
		if (restore && vma_add_reservation(h, vma, addr) < 0)
			page_flag_clear(head, PG_hugetlb_restore_reserve);
		tlb_remove_folio_pages(tlb, pfn, 1);
		n++;
	}
	return n;
}

int copy_hugetlb_page_range(struct mmp_space *dst, struct mmp_space *src, struct mmp_vma *src_vma)
{
	struct hstate *h = hstate_vma(src_vma);
	uint64_t sz = huge_page_size(h);
	bool cow = !(src_vma->flags & VM_SHARED);

	for (uint64_t addr = src_vma->start; addr < src_vma->end; addr += sz) {
		mmp_pte_t *src_ptep = huge_pte_offset(src, h, addr, false), *dst_ptep, e;
		struct mmp_page *head;

		if (!src_ptep || !READ_ONCE(*src_ptep))
			continue;
		dst_ptep = huge_pte_offset(dst, h, addr, true);
		if (!dst_ptep)
			return -ENOMEM;
		spin_lock(&src->page_table_lock);
		spin_lock(&dst->page_table_lock);
		count_inc(src, MMP_C_PMD_READ);
		e = READ_ONCE(*src_ptep);
		if (e) {
			head = pfn_to_page(src->phys, entry_pfn(src, e, h->level));
			folio_ref_add(head, 1);
			folio_add_rmap_pmd(dst, head);
			/* hugetlb_try_dup_anon_rmap: both sides now share it. */
			if (head->flags & PG_anon)
				page_flag_clear(head, PG_anon_exclusive);
			if (cow && entry_test(src, e, h->level, MMP_E_WRITE)) {
				ptep_modify(src, src_ptep, h->level, 0, MMP_E_WRITE);
				count_inc(src, MMP_C_PMD_WRITE);
				e = entry_set_flags(src, e, h->level, 0, MMP_E_WRITE);
			}
			count_inc(dst, MMP_C_PMD_WRITE);
			__atomic_store_n(dst_ptep, e, __ATOMIC_RELEASE);
			hugetlb_count_add(dst, pages_per_huge_page(h));
		}
		spin_unlock(&dst->page_table_lock);
		spin_unlock(&src->page_table_lock);
	}
	return 0;
}

uint64_t hugetlb_change_protection(struct mmp_space *s, struct mmp_vma *vma,
				   unsigned long newflags)
{
	struct hstate *h = hstate_vma(vma);
	uint64_t sz = huge_page_size(h), pages = 0;

	for (uint64_t addr = vma->start; addr < vma->end; addr += sz) {
		mmp_pte_t *ptep = huge_pte_offset(s, h, addr, false), e;
		unsigned int f, nf;

		if (!ptep || !READ_ONCE(*ptep))
			continue;
		spin_lock(&s->page_table_lock);
		count_inc(s, MMP_C_PMD_READ);
		e = READ_ONCE(*ptep);
		f = entry_flags(s, e, h->level);
		/*
		 * huge_pte_modify with the new vm_page_prot: a private mapping's
		 * is read-only (copy-on-write), so write goes and a later write
		 * fault reuses the page; a shared writable one's is writable.
		 */
		nf = f & ~(MMP_E_PRESENT | MMP_E_PROTNONE | MMP_E_WRITE | MMP_E_NOEXEC);
		nf |= newflags & VM_ACCESS_FLAGS ? MMP_E_PRESENT : MMP_E_PROTNONE;
		if (!(newflags & VM_EXEC))
			nf |= MMP_E_NOEXEC;
		if ((newflags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE))
			nf |= MMP_E_WRITE;
		if (e && nf != f) {
			ptep_modify(s, ptep, h->level, nf & ~f, f & ~nf);
			count_inc(s, MMP_C_PMD_WRITE);
			pages += pages_per_huge_page(h);
		}
		spin_unlock(&s->page_table_lock);
	}
	return pages;
}

int move_hugetlb_page_tables(struct mmp_space *s, struct mmp_vma *vma, uint64_t old, uint64_t new,
			     uint64_t len)
{
	struct hstate *h = hstate_vma(vma);
	uint64_t sz = huge_page_size(h);
	bool moved = false;

	/* Every table the entries go to first, so that nothing moves if one cannot be had. */
	for (uint64_t off = 0; off < len; off += sz) {
		mmp_pte_t *old_ptep = huge_pte_offset(s, h, old + off, false);

		if (old_ptep && READ_ONCE(*old_ptep) && !huge_pte_offset(s, h, new + off, true))
			return -ENOMEM;
	}
	inc_tlb_flush_pending(s);
	for (uint64_t off = 0; off < len; off += sz) {
		mmp_pte_t *old_ptep = huge_pte_offset(s, h, old + off, false), *new_ptep, e;

		if (!old_ptep || !READ_ONCE(*old_ptep))
			continue;
		new_ptep = huge_pte_offset(s, h, new + off, false);
		spin_lock(&s->page_table_lock);
		e = __atomic_exchange_n(old_ptep, 0, __ATOMIC_ACQ_REL);
		MMP_BUG_ON(READ_ONCE(*new_ptep));
		__atomic_store_n(new_ptep, e, __ATOMIC_RELEASE);
		spin_unlock(&s->page_table_lock);
		count_inc(s, MMP_C_PMD_READ);
		count_add(s, MMP_C_PMD_WRITE, 2);
		count_inc(s, MMP_C_MOVE_PMD);
		moved = true;
	}
	/* One flush of the old range once everything moved (flush_hugetlb_tlb_range). */
	if (moved)
		flush_tlb_range(s, old, old + len, level_shift(h->level));
	dec_tlb_flush_pending(s);
	return 0;
}
