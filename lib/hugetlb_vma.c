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
	mmp_pte_t *pmdp, *ptes;

	switch (h->level) {
	case MMP_PUD:
		return alloc ? pud_alloc(s, addr) : pud_offset(s, addr);
	case MMP_PMD:
		return alloc ? pmd_alloc(s, addr) : pmd_offset(s, addr);
	default:
		/* 64 KiB pages live in PTE tables; nothing frees one under a hugetlb VMA. */
		pmdp = alloc ? pmd_alloc(s, addr) : pmd_offset(s, addr);
		if (!pmdp || (alloc && pte_alloc(s, pmdp)))
			return NULL;
		ptes = pte_table(s, READ_ONCE(*pmdp));
		return ptes ? &ptes[level_index(addr, MMP_PTE)] : NULL;
	}
}

static void count_entries(struct mmp_space *s, struct hstate *h, bool write)
{
	if (h->level == MMP_PTE)
		count_add(s, write ? MMP_C_PTE_WRITE : MMP_C_PTE_READ, h->ncontig);
	else
		count_add(s, write ? MMP_C_PMD_WRITE : MMP_C_PMD_READ, h->ncontig);
}

/* Pages one entry of @h maps: 1, 512 or 262144. */
static uint64_t entry_pages(struct hstate *h)
{
	return level_size(h->level) >> PAGE_SHIFT;
}

/* Entry @i of a contiguous page, from its first (the pfn steps, the flags are the same). */
static mmp_pte_t cont_entry(struct mmp_space *s, struct hstate *h, mmp_pte_t e, unsigned int i)
{
	return mk_entry(s, entry_pfn(s, e, h->level) + i * entry_pages(h),
			entry_flags(s, e, h->level), h->level);
}

/* Young and dirty of any entry of the page show in the first (huge_ptep_get). */
static mmp_pte_t gather_ad(struct mmp_space *s, struct hstate *h, mmp_pte_t first,
			   unsigned int ad)
{
	ad &= MMP_E_ACCESSED | MMP_E_DIRTY;
	return ad ? entry_set_flags(s, first, h->level, ad, 0) : first;
}

mmp_pte_t huge_ptep_get(struct mmp_space *s, struct hstate *h, mmp_pte_t *ptep)
{
	count_entries(s, h, false);
	return __huge_ptep_get(s, h, ptep);
}

mmp_pte_t __huge_ptep_get(struct mmp_space *s, struct hstate *h, mmp_pte_t *ptep)
{
	mmp_pte_t first = __atomic_load_n(ptep, __ATOMIC_ACQUIRE);
	unsigned int ad = 0;

	if (h->ncontig == 1 || !first)
		return first;
	for (unsigned int i = 1; i < h->ncontig; i++) {
		mmp_pte_t e = __atomic_load_n(&ptep[i], __ATOMIC_ACQUIRE);

		ad |= e ? entry_flags(s, e, h->level) : 0;
	}
	return gather_ad(s, h, first, ad);
}

void set_huge_pte_at(struct mmp_space *s, struct hstate *h, mmp_pte_t *ptep, mmp_pte_t e)
{
	count_entries(s, h, true);
	if (h->ncontig == 1 || !e) {
		for (unsigned int i = 0; i < h->ncontig; i++)
			__atomic_store_n(&ptep[i], e, __ATOMIC_RELEASE);
		return;
	}
	e = entry_set_flags(s, e, h->level, MMP_E_CONT, 0);
	/* The first last: a lockless reader that sees it sees a whole block. */
	for (unsigned int i = h->ncontig; i-- > 0;)
		__atomic_store_n(&ptep[i], cont_entry(s, h, e, i), __ATOMIC_RELEASE);
}

mmp_pte_t huge_ptep_get_and_clear(struct mmp_space *s, struct hstate *h, mmp_pte_t *ptep)
{
	mmp_pte_t first = __atomic_exchange_n(ptep, 0, __ATOMIC_ACQ_REL);
	unsigned int ad = 0;

	count_entries(s, h, true);
	for (unsigned int i = 1; i < h->ncontig; i++) {
		mmp_pte_t e = __atomic_exchange_n(&ptep[i], 0, __ATOMIC_ACQ_REL);

		ad |= e ? entry_flags(s, e, h->level) : 0;
	}
	return first ? gather_ad(s, h, first, ad) : first;
}

void huge_ptep_modify(struct mmp_space *s, struct hstate *h, mmp_pte_t *ptep, unsigned int set,
		      unsigned int clear)
{
	count_entries(s, h, true);
	for (unsigned int i = 0; i < h->ncontig; i++)
		ptep_modify(s, &ptep[i], h->level, set, clear);
}

/* The TLB must lose page @addr of @h: its translations, at its entries' size. */
static void tlb_remove_huge_tlb_entry(struct mmp_gather *tlb, struct hstate *h, uint64_t addr)
{
	if (h->level == MMP_PTE)
		tlb_remove_tlb_entries(tlb, addr, huge_page_size(h));
	else if (h->level == MMP_PMD)
		for (unsigned int i = 0; i < h->ncontig; i++)
			tlb_remove_pmd_tlb_entry(tlb, addr + i * PMD_SIZE);
	else
		tlb_remove_pud_tlb_entry(tlb, addr);
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
		e = huge_ptep_get(s, h, ptep);
		pfn = e ? entry_pfn(s, e, h->level) : NO_PFN;
		if (!e || (ref_pfn != NO_PFN && pfn != ref_pfn)) {
			spin_unlock(&s->page_table_lock);
			continue;
		}
		/* Taken back by the owner: faults here SIGBUS rather than see data go missing. */
		if (ref_pfn != NO_PFN)
			__atomic_fetch_or(&vma->resv_flags, HPAGE_RESV_UNMAPPED, __ATOMIC_RELAXED);
		e = huge_ptep_get_and_clear(s, h, ptep);
		tlb_remove_huge_tlb_entry(tlb, h, addr);
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
		e = huge_ptep_get(src, h, src_ptep);
		if (e) {
			head = pfn_to_page(src->phys, entry_pfn(src, e, h->level));
			folio_ref_add(head, 1);
			folio_add_rmap_pmd(dst, head);
			/* hugetlb_try_dup_anon_rmap: both sides now share it. */
			if (head->flags & PG_anon)
				page_flag_clear(head, PG_anon_exclusive);
			if (cow && entry_test(src, e, h->level, MMP_E_WRITE)) {
				huge_ptep_modify(src, h, src_ptep, 0, MMP_E_WRITE);
				e = entry_set_flags(src, e, h->level, 0, MMP_E_WRITE);
			}
			set_huge_pte_at(dst, h, dst_ptep, e);
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
		e = huge_ptep_get(s, h, ptep);
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
		/* Young and dirty are the hardware's, per entry: left as they are. */
		if (e && nf != f) {
			huge_ptep_modify(s, h, ptep, nf & ~f, f & ~nf);
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
		e = huge_ptep_get_and_clear(s, h, old_ptep);
		MMP_BUG_ON(READ_ONCE(*new_ptep));
		set_huge_pte_at(s, h, new_ptep, e);
		spin_unlock(&s->page_table_lock);
		count_entries(s, h, false);
		count_inc(s, MMP_C_MOVE_PMD);
		moved = true;
	}
	/* One flush of the old range once everything moved (flush_hugetlb_tlb_range). */
	if (moved)
		flush_tlb_range(s, old, old + len, level_shift(h->level));
	dec_tlb_flush_pending(s);
	return 0;
}
