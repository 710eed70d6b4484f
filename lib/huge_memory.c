/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PMD-mapped THPs: the huge fault, the huge zero page, the write fault (reuse
 * or split), splitting a PMD into a PTE table, zapping and copying huge PMDs.
 * Every huge PMD has a PTE table deposited beside it when it is made, so a
 * split never allocates.
 */
#include <string.h>

#include "mm.h"

/* The PMD-table page that holds @pmdp: deposited tables hang off its descriptor. */
static struct mmp_page *pmd_ptdesc(struct mmp_space *s, mmp_pte_t *pmdp)
{
	return pfn_to_page(s->phys, ((uint8_t *)pmdp - s->phys->base) >> PAGE_SHIFT);
}

/* page_table_lock held. */
void pgtable_trans_huge_deposit(struct mmp_space *s, mmp_pte_t *pmdp, uint32_t pgtable)
{
	struct mmp_page *pt = pmd_ptdesc(s, pmdp);

	pfn_to_page(s->phys, pgtable)->pt.deposit = pt->pt.deposit;
	pt->pt.deposit = pgtable;
}

uint32_t pgtable_trans_huge_withdraw(struct mmp_space *s, mmp_pte_t *pmdp)
{
	struct mmp_page *pt = pmd_ptdesc(s, pmdp);
	uint32_t pgtable = pt->pt.deposit;

	MMP_BUG_ON(pgtable == NO_PFN);
	pt->pt.deposit = pfn_to_page(s->phys, pgtable)->pt.deposit;
	pfn_to_page(s->phys, pgtable)->pt.deposit = NO_PFN;
	return pgtable;
}

/* The huge zero folio, made on first use and kept for the phys's life. */
uint32_t huge_zero_folio(struct mmp_phys *phys)
{
	uint32_t pfn = __atomic_load_n(&phys->huge_zero_pfn, __ATOMIC_ACQUIRE), expected = NO_PFN;

	if (pfn != NO_PFN)
		return pfn;
	pfn = phys_alloc_pages(phys, HPAGE_PMD_ORDER);
	if (pfn == NO_PFN)
		return NO_PFN;
	memset(pfn_to_virt(phys, pfn), 0, PMD_SIZE);
	pfn_to_page(phys, pfn)->flags = PG_reserved | PG_head;
	pfn_to_page(phys, pfn)->order = HPAGE_PMD_ORDER;
	pfn_to_page(phys, pfn)->refcount = 1;
	if (!__atomic_compare_exchange_n(&phys->huge_zero_pfn, &expected, pfn, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		pfn_to_page(phys, pfn)->flags = 0;
		phys_free_pages(phys, pfn, HPAGE_PMD_ORDER);
		return expected;
	}
	return pfn;
}

static bool pfn_in_range(uint64_t pfn, uint64_t start, unsigned int nr)
{
	return pfn >= start && pfn < start + nr;
}

static mmp_pte_t pmd_read(struct mmp_space *s, mmp_pte_t *pmdp)
{
	count_inc(s, MMP_C_PMD_READ);
	return READ_ONCE(*pmdp);
}

static void set_pmd_at(struct mmp_space *s, mmp_pte_t *pmdp, mmp_pte_t pmd)
{
	count_inc(s, MMP_C_PMD_WRITE);
	__atomic_store_n(pmdp, pmd, __ATOMIC_RELEASE);
}

/* Clear a huge PMD and flush it from every TLB; returns the old value with its A/D. */
static mmp_pte_t pmdp_huge_clear_flush(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t haddr)
{
	mmp_pte_t old;

	inc_tlb_flush_pending(s);
	count_inc(s, MMP_C_PMD_READ);
	count_inc(s, MMP_C_PMD_WRITE);
	old = __atomic_exchange_n(pmdp, 0, __ATOMIC_ACQ_REL);
	flush_tlb_range(s, haddr, haddr + PMD_SIZE, PMD_SHIFT);
	dec_tlb_flush_pending(s);
	return old;
}

static int map_huge_zero(struct vm_fault *vmf, uint64_t haddr)
{
	struct mmp_space *s = vmf->s;
	uint32_t zero = huge_zero_folio(s->phys), pgtable;
	unsigned int f = vma_entry_flags(vmf->vma) | MMP_E_LEAF | MMP_E_SPECIAL;

	if (zero == NO_PFN)
		return VM_FAULT_FALLBACK;
	pgtable = pgtable_alloc(s);
	if (pgtable == NO_PFN)
		return -ENOMEM;
	spin_lock(&s->page_table_lock);
	if (pmd_read(s, vmf->pmdp)) {
		spin_unlock(&s->page_table_lock);
		pgtable_free(s, pgtable);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return 0;
	}
	pgtable_trans_huge_deposit(s, vmf->pmdp, pgtable);
	set_pmd_at(s, vmf->pmdp, mk_entry(s, zero, f, MMP_PMD));
	spin_unlock(&s->page_table_lock);
	count_inc(s, MMP_C_FAULT_HUGE_ZERO);
	return 0;
}

/*
 * A new anonymous THP's PMD, as map_anon_folio_pmd makes it: always dirty
 * (pmd_mkdirty, a read fault's included: the folio is new and has no backing
 * copy), writable only if the VMA is (maybe_pmd_mkwrite). A small folio's
 * PTE is dirty only when writable (do_anonymous_page).
 */
static unsigned int anon_pmd_flags(const struct mmp_vma *vma, unsigned int f)
{
	f |= pte_mkdirty_flags(vma->vm_mm);
	if (vma->flags & VM_WRITE)
		f |= MMP_E_WRITE;
	return f;
}

/*
 * The first touch of an empty, THP-eligible PMD range (do_huge_pmd_anonymous_page).
 * The PMD is encoded from the VMA's flags, not from vm_page_prot as the
 * kernel's mk_huge_pmd() does: vm_page_prot holds a PTE-level encoding, and a
 * leaf PMD's bits differ (x86's PSE, arm64's block type). Once per 2 MiB, the
 * decode costs nothing that matters.
 */
int do_huge_pmd_anonymous_page(struct vm_fault *vmf)
{
	struct mmp_space *s = vmf->s;
	uint64_t haddr = vmf->address & PMD_MASK;
	unsigned int f = vma_entry_flags(vmf->vma) | MMP_E_LEAF;
	uint32_t pfn, pgtable;
	struct mmp_page *head;
	int ret;

	/* As the kernel, before the huge zero page too (unlike the small one): it decides merges. */
	ret = vmf_anon_prepare(vmf);
	if (ret)
		return ret;
	if (!(vmf->flags & FAULT_FLAG_WRITE) && !mm_forbids_zeropage(s))
		return map_huge_zero(vmf, haddr);
	pfn = folio_alloc_anon(s, HPAGE_PMD_ORDER);
	if (pfn == NO_PFN) {
		count_mthp_stat(s, HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_FALLBACK);
		return VM_FAULT_FALLBACK;
	}
	pgtable = pgtable_alloc(s);
	if (pgtable == NO_PFN) {
		folio_free(s->phys, pfn);
		return VM_FAULT_FALLBACK;
	}
	folio_zero_user(s, pfn, HPAGE_PMD_ORDER, vmf->address);

	spin_lock(&s->page_table_lock);
	if (pmd_read(s, vmf->pmdp)) {
		spin_unlock(&s->page_table_lock);
		folio_free(s->phys, pfn);
		pgtable_free(s, pgtable);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return 0;
	}
	head = pfn_to_page(s->phys, pfn);
	folio_add_new_anon_rmap(head, vmf->vma, haddr, HPAGE_PMD_NR, true);
	rss_add(s, HPAGE_PMD_NR);
	pgtable_trans_huge_deposit(s, vmf->pmdp, pgtable);
	set_pmd_at(s, vmf->pmdp, mk_entry(s, pfn, anon_pmd_flags(vmf->vma, f), MMP_PMD));
	spin_unlock(&s->page_table_lock);
	count_inc(s, MMP_C_FAULT_HUGE_ANON);
	count_mthp_stat(s, HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_ALLOC);
	return 0;
}

/* huge_pmd_set_accessed: the Svade fault for a huge PMD. */
void huge_pmd_set_accessed(struct vm_fault *vmf)
{
	struct mmp_space *s = vmf->s;
	unsigned int set = MMP_E_ACCESSED | (vmf->flags & FAULT_FLAG_WRITE ? MMP_E_DIRTY : 0);

	spin_lock(&s->page_table_lock);
	if (pmd_read(s, vmf->pmdp) == vmf->orig_pmd) {
		ptep_modify(s, vmf->pmdp, MMP_PMD, set, 0);
		count_inc(s, MMP_C_PMD_WRITE);
		count_inc(s, MMP_C_FAULT_AD);
	} else {
		count_inc(s, MMP_C_FAULT_SPURIOUS);
	}
	spin_unlock(&s->page_table_lock);
}

/*
 * A write to the huge zero page (do_huge_zero_wp_pmd, 6.13): a new THP,
 * cleared with the faulting page last, takes its place under the same
 * deposit; with none to be had, VM_FAULT_FALLBACK and the caller splits.
 */
static int do_huge_zero_wp_pmd(struct vm_fault *vmf)
{
	struct mmp_space *s = vmf->s;
	uint64_t haddr = vmf->address & PMD_MASK;
	unsigned int f = vma_entry_flags(vmf->vma) | MMP_E_LEAF;
	/* The huge zero page was mapped after vmf_anon_prepare: this is cheap insurance. */
	int ret = vmf_anon_prepare(vmf);
	uint32_t pfn;

	if (ret)
		return ret;
	pfn = folio_alloc_anon(s, HPAGE_PMD_ORDER);
	if (pfn == NO_PFN) {
		count_inc(s, MMP_C_FAULT_FALLBACK);
		count_mthp_stat(s, HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_FALLBACK);
		return VM_FAULT_FALLBACK;
	}
	folio_zero_user(s, pfn, HPAGE_PMD_ORDER, vmf->address);
	spin_lock(&s->page_table_lock);
	if (pmd_read(s, vmf->pmdp) != vmf->orig_pmd) {
		spin_unlock(&s->page_table_lock);
		folio_free(s->phys, pfn);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return 0;
	}
	pmdp_huge_clear_flush(s, vmf->pmdp, haddr);
	folio_add_new_anon_rmap(pfn_to_page(s->phys, pfn), vmf->vma, haddr, HPAGE_PMD_NR, true);
	rss_add(s, HPAGE_PMD_NR);
	set_pmd_at(s, vmf->pmdp, mk_entry(s, pfn, anon_pmd_flags(vmf->vma, f), MMP_PMD));
	spin_unlock(&s->page_table_lock);
	count_inc(s, MMP_C_FAULT_HUGE_ANON);
	count_mthp_stat(s, HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_ALLOC);
	return 0;
}

/*
 * A write (or an unshare) to a read-only huge PMD, as do_huge_pmd_wp_page has
 * done since 5.8 ("thp: change CoW semantics for anon-THP"): a folio this
 * mapping owns alone is reused in place; a THP shared with a fork is split
 * into 512 PTEs and the fault falls back to do_wp_page, which copies one
 * 4 KiB page, or reuses it. Exclusive: the head's PageAnonExclusive, or the
 * PMD's reference is the only one (the other mapper left), as the kernel's
 * folio_ref_count() == 1 (no swap cache here). The huge zero page gets a THP
 * of its own from 6.13, and was split as a shared THP is before.
 */
int do_huge_pmd_wp_page(struct vm_fault *vmf)
{
	struct mmp_space *s = vmf->s;
	bool unshare = vmf->flags & FAULT_FLAG_UNSHARE;
	uint64_t haddr = vmf->address & PMD_MASK;
	struct mmp_page *head;
	mmp_pte_t orig;
	int ret;

	spin_lock(&s->page_table_lock);
	orig = pmd_read(s, vmf->pmdp);
	if (orig != vmf->orig_pmd) {
		spin_unlock(&s->page_table_lock);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return 0;
	}
	if (is_huge_zero_pmd(s, orig)) {
		spin_unlock(&s->page_table_lock);
		/* Not an anonymous page: GUP never asks to unshare it, split if it does. */
		if (!unshare && release_follows(s, RULE_HUGE_ZERO_WP_THP)) {
			ret = do_huge_zero_wp_pmd(vmf);
			if (ret != VM_FAULT_FALLBACK)
				return ret;
		}
		goto fallback;
	}
	head = pfn_to_page(s->phys, entry_pfn(s, orig, MMP_PMD));
	if (!page_flag_test(head, PG_anon_exclusive)) {
		if (folio_ref_count(head) > 1) {
			spin_unlock(&s->page_table_lock);
			goto fallback;
		}
		for (unsigned int i = 0; i < HPAGE_PMD_NR; i++)
			page_flag_set(head + i, PG_anon_exclusive);
	}
	if (!unshare) {
		/* pmd_mkdirty: soft-dirty too, so a write after clear_refs 4 marks the THP. */
		ptep_modify(s, vmf->pmdp, MMP_PMD,
			    MMP_E_WRITE | pte_mkdirty_flags(s) | MMP_E_ACCESSED, 0);
		count_inc(s, MMP_C_PMD_WRITE);
	}
	spin_unlock(&s->page_table_lock);
	count_inc(s, MMP_C_FAULT_HUGE_REUSE);
	return 0;

fallback:
	/* Whatever is there by now: a racing split or zap leaves nothing to split. */
	split_huge_pmd(s, vmf->pmdp, haddr);
	return VM_FAULT_FALLBACK;
}

/*
 * Turn the huge PMD at @pmdp into a PTE table mapping the same pages with the
 * same bits (__split_huge_pmd_locked). page_table_lock held. The folio stays
 * whole; each PTE takes its own mapping and reference.
 */
void split_huge_pmd_locked(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t haddr)
{
	mmp_pte_t old = pmdp_huge_clear_flush(s, pmdp, haddr);
	unsigned int f = entry_flags(s, old, MMP_PMD) & ~MMP_E_LEAF;
	uint64_t pfn = entry_pfn(s, old, MMP_PMD);
	uint32_t pgtable = pgtable_trans_huge_withdraw(s, pmdp);
	mmp_pte_t *ptes = space_table(s, pgtable);
	bool zero = is_huge_zero_pmd(s, old);

	if (zero) {
		/* Each PTE maps the small zero page, read-only. */
		mmp_pte_t z = mk_entry(s, s->phys->zero_pfn, f & ~MMP_E_WRITE, MMP_PTE);

		for (unsigned int i = 0; i < HPAGE_PMD_NR; i++)
			WRITE_ONCE(ptes[i], z);
		count_add(s, MMP_C_PTE_WRITE, HPAGE_PMD_NR);
	} else {
		struct mmp_page *head = pfn_to_page(s->phys, pfn);

		/* The PMD's dirty bit is the folio's now (folio_set_dirty), as well as each PTE's. */
		if (f & MMP_E_DIRTY)
			page_flag_set(head, PG_dirty);
		/* One set_ptes over the empty deposited table: arm64 maps it as contpte blocks. */
		set_ptes(s, haddr, ptes, mk_entry(s, pfn, f, MMP_PTE), HPAGE_PMD_NR);
		folio_add_rmap_ptes(s, head, head, HPAGE_PMD_NR);
		folio_remove_rmap_pmd(s, head);
		folio_ref_add(head, HPAGE_PMD_NR - 1);
	}
	count_inc(s, MMP_C_PMD_SPLIT);
	set_pmd_at(s, pmdp, mk_entry(s, pgtable, MMP_E_TABLE, MMP_PMD));
}

void split_huge_pmd(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t haddr)
{
	spin_lock(&s->page_table_lock);
	if (entry_test(s, pmd_read(s, pmdp), MMP_PMD, MMP_E_LEAF))
		split_huge_pmd_locked(s, pmdp, haddr);
	spin_unlock(&s->page_table_lock);
}

/* Zap a whole huge PMD; false if it was no longer huge (the caller zaps PTEs). */
int zap_huge_pmd(struct mmp_gather *tlb, mmp_pte_t *pmdp, uint64_t addr)
{
	struct mmp_space *s = tlb->s;
	mmp_pte_t old;
	uint32_t pgtable;

	spin_lock(&s->page_table_lock);
	if (!entry_test(s, pmd_read(s, pmdp), MMP_PMD, MMP_E_LEAF)) {
		spin_unlock(&s->page_table_lock);
		return 0;
	}
	count_inc(s, MMP_C_PMD_WRITE);
	old = __atomic_exchange_n(pmdp, 0, __ATOMIC_ACQ_REL);
	tlb_remove_pmd_tlb_entry(tlb, addr);
	pgtable = pgtable_trans_huge_withdraw(s, pmdp);
	if (!is_huge_zero_pmd(s, old)) {
		uint32_t pfn = entry_pfn(s, old, MMP_PMD);

		folio_remove_rmap_pmd(s, pfn_to_page(s->phys, pfn));
		rss_add(s, -(int64_t)HPAGE_PMD_NR);
		tlb_remove_folio_pages(tlb, pfn, 1);
	}
	spin_unlock(&s->page_table_lock);
	/* The deposited table was never visible to a walker: free it now (zap_deposited_table). */
	pgtable_free(s, pgtable);
	return 1;
}

/*
 * fork: share a huge PMD copy-on-write (copy_huge_pmd). Both sides become
 * read-only; the child's entry is old. The child gets a deposited table of its
 * own. Both page_table_locks are taken: parent first, the child is private.
 */
int copy_huge_pmd(struct mmp_space *dst, struct mmp_space *src, mmp_pte_t *dst_pmdp,
		  mmp_pte_t *src_pmdp, uint64_t addr)
{
	uint32_t pgtable = pgtable_alloc(dst);
	mmp_pte_t pmd;

	if (pgtable == NO_PFN)
		return -ENOMEM;
	spin_lock(&src->page_table_lock);
	spin_lock(&dst->page_table_lock);
	pmd = pmd_read(src, src_pmdp);
	if (!is_huge_zero_pmd(src, pmd)) {
		uint32_t pfn = entry_pfn(src, pmd, MMP_PMD);
		struct mmp_page *head = pfn_to_page(src->phys, pfn);

		folio_ref_add(head, 1);
		folio_add_rmap_pmd(dst, head);
		for (unsigned int i = 0; i < HPAGE_PMD_NR; i++)
			page_flag_clear(head + i, PG_anon_exclusive);
		rss_add(dst, HPAGE_PMD_NR);
		ptep_modify(src, src_pmdp, MMP_PMD, 0, MMP_E_WRITE);
		count_inc(src, MMP_C_PMD_WRITE);
		pmd = entry_set_flags(src, pmd, MMP_PMD, 0, MMP_E_WRITE | MMP_E_ACCESSED);
	}
	pgtable_trans_huge_deposit(dst, dst_pmdp, pgtable);
	set_pmd_at(dst, dst_pmdp, pmd);
	spin_unlock(&dst->page_table_lock);
	spin_unlock(&src->page_table_lock);
	return 0;
}

/*
 * A page of an anonymous large folio lost its last mapping while others keep
 * theirs: the kernel puts it on the deferred split queue, whose shrinker
 * splits it under memory pressure to free the unmapped pages. Counted once
 * per folio, when first found (PG_partially_mapped); order 1 has no queue.
 * The queue and its shrinker are not modelled: the folio stays whole.
 */
void deferred_split_folio(struct mmp_space *s, struct mmp_page *head)
{
	if (head->order <= 1 ||
	    (__atomic_fetch_or(&head->flags, PG_partially_mapped, __ATOMIC_RELAXED) &
	     PG_partially_mapped))
		return;
	if (head->order >= HPAGE_PMD_ORDER)
		count_inc(s, MMP_C_THP_DEFERRED_SPLIT_PAGE);
	count_mthp_stat(s, head->order, MTHP_STAT_SPLIT_DEFERRED);
}

/*
 * split_folio of a large page-cache folio (__folio_split): it is unmapped
 * from every space first (unmap_folio) and, unlike an anonymous one, not
 * mapped again: the next access faults its pages in one by one. Then each
 * page becomes an order-0 folio in the cache, holding its own cache
 * reference, dirty if the folio was. The caller holds the folio lock, which
 * stays on the first page, and one reference; anything more (a pin, a
 * racing fault's) fails the split with -EAGAIN and leaves the folio whole.
 */
int split_file_folio(struct mmp_space *s, uint32_t head_pfn)
{
	struct mmp_page *head = pfn_to_page(s->phys, head_pfn);
	struct mmp_file *f = folio_file(s->phys, head);
	unsigned int nr = folio_nr_pages(head), order = head->order;
	uint64_t index = head->index;
	int expected = nr + 1;
	uint32_t keep;

	if (!order || !f || (head->flags & (PG_anon | PG_hugetlb)))
		return -EINVAL;
	/*
	 * filemap_release_folio: a regular file's dirty folio keeps its dirty
	 * buffers until written back, so it cannot be split (a 6.18 host, ext4:
	 * split_failed, the folio stays whole and mapped). Shmem has no buffers.
	 * A write through a PTE since mmp_msync() dirtied only the entry (no
	 * folio_mkclean here): such a folio still splits.
	 */
	if (!shmem_file(f) && page_flag_test(head, PG_dirty))
		return -EBUSY;
	/* can_split_folio: only the cache, the mappings and the caller hold it. */
	if (__atomic_load_n(&head->refcount, __ATOMIC_ACQUIRE) != expected + folio_mapcount(head))
		return -EAGAIN;
	if (!try_to_unmap(s, head_pfn))
		return -EAGAIN;
	/* The entries' dirty bits went to the folio with them. */
	keep = head->flags & (PG_swapbacked | PG_dirty);
	spin_lock(&f->mapping.i_pages_lock);
	if (!__atomic_compare_exchange_n(&head->refcount, &expected, 0, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED)) {
		spin_unlock(&f->mapping.i_pages_lock);
		return -EAGAIN;
	}
	for (unsigned int i = nr; i-- > 0; ) {
		struct mmp_page *p = head + i;

		p->order = 0;
		p->mapping = f->id;
		p->pincount = 0;
		p->index = index + i;
		p->folio.large_mapcount = 0;
		p->folio.entire_mapcount = 0;
		p->flags = PG_head | keep | (i ? 0 : PG_locked);
		__atomic_store_n(&p->refcount, i ? 1 : 2, __ATOMIC_RELEASE);
	}
	filemap_split_folio_frozen(f, head_pfn, index, nr);
	spin_unlock(&f->mapping.i_pages_lock);
	count_inc(s, MMP_C_FOLIO_SPLIT);
	count_mthp_stat(s, order, MTHP_STAT_SPLIT);
	return 0;
}

/* ---- lazyfree PMD-mapped THPs ------------------------------------------------------- */

/*
 * Reclaim meets a PMD-mapped lazyfree THP (__discard_anon_folio_pmd_locked).
 * A dirty PMD or folio makes it swapbacked again and leaves the PMD alone;
 * otherwise clear and flush the PMD, then, after a full barrier that pairs
 * with GUP-fast's "grab, then recheck", read the counts: dirty now, or any
 * reference beyond the mapping and reclaim's own, restores the PMD. Only then
 * is the folio unmapped, with its deposited table. @old is the rule before
 * the seed: any dirt refuses, without setting swapbacked, and the caller
 * splits the PMD.
 */
static bool __discard_anon_folio_pmd_locked(struct mmp_space *s, struct mmp_vma *vma,
					    mmp_pte_t *pmdp, uint64_t haddr, struct mmp_page *head,
					    bool old)
{
	mmp_pte_t orig = pmd_read(s, pmdp);
	bool dirty = entry_test(s, orig, MMP_PMD, MMP_E_DIRTY);

	/* A dirty PMD or folio is decided before the PMD is touched. */
	if (old && (dirty || page_flag_test(head, PG_dirty)))
		return false;
	if (!old) {
		if (dirty)
			page_flag_set(head, PG_dirty);
		if (page_flag_test(head, PG_dirty) && !(vma->flags & VM_DROPPABLE)) {
			folio_set_swapbacked(head);
			count_inc(s, MMP_C_LAZYFREE_REDIRTIED);
			return false;
		}
	}
	orig = pmdp_huge_clear_flush(s, pmdp, haddr);
	if (lazyfree_check(s, vma, head, entry_test(s, orig, MMP_PMD, MMP_E_DIRTY), !old) !=
	    LAZYFREE_DISCARD) {
		set_pmd_at(s, pmdp, orig);
		return false;
	}
	folio_remove_rmap_pmd(s, head);
	pgtable_free(s, pgtable_trans_huge_withdraw(s, pmdp));
	rss_add(s, -(int64_t)HPAGE_PMD_NR);
	folio_put_refs(s, page_to_pfn(s->phys, head), 1);
	return true;
}

bool unmap_huge_pmd_locked(struct mmp_space *s, struct mmp_vma *vma, mmp_pte_t *pmdp,
			   uint64_t haddr, uint32_t head_pfn, bool old)
{
	struct mmp_page *head = pfn_to_page(s->phys, head_pfn);
	bool ret = false;

	spin_lock(&s->page_table_lock);
	/* Still this folio's PMD? Otherwise there is nothing to decide here. */
	if (entry_test(s, READ_ONCE(*pmdp), MMP_PMD, MMP_E_LEAF) &&
	    entry_present(entry_flags(s, READ_ONCE(*pmdp), MMP_PMD)) &&
	    entry_pfn(s, READ_ONCE(*pmdp), MMP_PMD) == head_pfn)
		ret = __discard_anon_folio_pmd_locked(s, vma, pmdp, haddr, head, old);
	else
		ret = !old;
	spin_unlock(&s->page_table_lock);
	return ret;
}

/*
 * MADV_FREE over [@addr, @next) of a huge PMD (madvise_free_huge_pmd): over
 * the whole PMD, an exclusive folio becomes clean and lazyfree; the PMD stays
 * mapped, made old and clean so a later write marks it dirty again. The huge
 * zero page and a folio another mm maps are left as they are, whole or not:
 * nothing is split for them. False only when the caller must split: an
 * exclusive folio freed in part.
 */
bool madvise_free_huge_pmd(struct mmp_gather *tlb, struct mmp_vma *vma, mmp_pte_t *pmdp,
			   uint64_t addr, uint64_t next)
{
	struct mmp_space *s = tlb->s;
	mmp_pte_t pmd;
	struct mmp_page *head;

	spin_lock(&s->page_table_lock);
	pmd = pmd_read(s, pmdp);
	if (!entry_test(s, pmd, MMP_PMD, MMP_E_LEAF)) {
		spin_unlock(&s->page_table_lock);
		return false;
	}
	if (is_huge_zero_pmd(s, pmd) || !entry_present(entry_flags(s, pmd, MMP_PMD)))
		goto out;
	head = pfn_to_page(s->phys, entry_pfn(s, pmd, MMP_PMD));
	if (!page_flag_test(head, PG_anon_exclusive))
		goto out;	/* shared with another mm: leave it, as the PTE path does */
	if (next - addr != PMD_SIZE) {
		spin_unlock(&s->page_table_lock);
		return false;
	}
	page_flag_clear(head, PG_dirty);
	if (entry_test(s, pmd, MMP_PMD, MMP_E_ACCESSED | MMP_E_DIRTY)) {
		ptep_modify(s, pmdp, MMP_PMD, 0, MMP_E_ACCESSED | MMP_E_DIRTY);
		count_inc(s, MMP_C_PMD_WRITE);
		tlb_remove_pmd_tlb_entry(tlb, addr);
	}
	folio_mark_lazyfree(s, head);
out:
	spin_unlock(&s->page_table_lock);
	return true;
}

static bool page_data_zero(const void *data)
{
	const uint64_t *w = data;

	for (unsigned int i = 0; i < PAGE_SIZE / sizeof(*w); i++)
		if (w[i])
			return false;
	return true;
}

/*
 * The sub-pages of an anonymous folio just split to order 0 that hold only
 * zeroes are mapped to the shared zero page and freed (remap_page with
 * RMP_USE_SHARED_ZEROPAGE, try_to_map_unused_to_zeropage; b1f202060afe,
 * 6.12): what a THP held for pages never written goes back, and leaves RSS.
 * The kernel looks at each page while its PTE is a migration entry; here
 * every entry of the old folio is cleared and flushed first, so no CPU can
 * write a page between the look and the remap, then each gets the zero page
 * or its old value back. Not in an mlock'd VMA, nor where the mm has no zero
 * page. Only the entries inside @vma, whose protection the zero page takes:
 * the kernel's rmap walk reaches a folio's other VMAs too, but a caller here
 * may hold no more than @vma's lock, so the part of a folio that lies in a
 * neighbouring VMA (an mprotect split it off) keeps its pages.
 */
static void split_map_unused_to_zeropage(struct mmp_space *s, const struct mmp_vma *vma,
					 mmp_pte_t *ptes, uint64_t table_addr, uint32_t head_pfn,
					 unsigned int nr)
{
	mmp_pte_t old[PTRS_PER_TABLE], zero;
	bool any = false;

	if ((vma->flags & VM_LOCKED) || mm_forbids_zeropage(s))
		return;
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t addr = table_addr + ((uint64_t)i << PAGE_SHIFT);
		mmp_pte_t e = ptep_get(s, &ptes[i]);

		old[i] = 0;
		if (addr < vma->start || addr >= vma->end)
			continue;
		if (!e || !entry_present(entry_flags(s, e, MMP_PTE)) ||
		    entry_test(s, e, MMP_PTE, MMP_E_SPECIAL) ||
		    !pfn_in_range(entry_pfn(s, e, MMP_PTE), head_pfn, nr))
			continue;
		/* What the clear returns: the MMU may have set accessed or dirty since. */
		old[i] = ptep_get_and_clear(s, addr, &ptes[i]);
		any = true;
	}
	if (!any)
		return;
	flush_tlb_range(s, table_addr, table_addr + PMD_SIZE, PAGE_SHIFT);
	zero = format_pte_set_flags(s->format, format_pfn_pte(s->format, s->phys->zero_pfn,
							       READ_ONCE(vma->vm_page_prot)),
				    MMP_E_SPECIAL);
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t addr = table_addr + ((uint64_t)i << PAGE_SHIFT);
		uint32_t pfn;

		if (!old[i])
			continue;
		pfn = entry_pfn(s, old[i], MMP_PTE);
		if (!page_data_zero(pfn_to_virt(s->phys, pfn))) {
			set_ptes(s, addr, &ptes[i], old[i], 1);
			continue;
		}
		set_ptes(s, addr, &ptes[i], zero, 1);
		folio_remove_rmap_ptes(s, pfn_to_page(s->phys, pfn), pfn_to_page(s->phys, pfn), 1);
		rss_add(s, -1);
		count_inc(s, MMP_C_SPLIT_ZERO_PAGE);
		folio_put_refs(s, pfn, 1);
	}
}

unsigned int folio_mapped_in_table(struct mmp_space *s, mmp_pte_t *ptes, uint32_t head_pfn)
{
	unsigned int nr = folio_nr_pages(pfn_to_page(s->phys, head_pfn)), here = 0;

	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		mmp_pte_t e = ptep_get_lockless(s, &ptes[i]);

		/* Mapped, not the zero page: a guard marker holds no pfn. */
		if (entry_present(entry_test(s, e, MMP_PTE, MMP_E_PRESENT | MMP_E_PROTNONE)) &&
		    !entry_test(s, e, MMP_PTE, MMP_E_SPECIAL) &&
		    pfn_in_range(entry_pfn(s, e, MMP_PTE), head_pfn, nr))
			here++;
	}
	count_add(s, MMP_C_PTE_READ, PTRS_PER_TABLE);
	return here;
}

/*
 * Split a PTE-mapped large folio of @vma into order-0 folios in place. Every
 * mapping must be in @ptes, whose PTL is held, and nothing but the mappings
 * and @extra_refs may hold references: the count is frozen to zero meanwhile,
 * so GUP-fast's speculative grab fails and backs off. -EAGAIN otherwise.
 */
int split_folio_locked(struct mmp_space *s, const struct mmp_vma *vma, mmp_pte_t *ptes,
		       uint64_t table_addr, uint32_t head_pfn, int extra_refs)
{
	struct mmp_page *head = pfn_to_page(s->phys, head_pfn);
	unsigned int nr = folio_nr_pages(head), order = head->order;
	int expected = folio_mapcount(head) + extra_refs;
	uint32_t keep = head->flags & (PG_anon | PG_swapbacked | PG_dirty | PG_lazyfree);

	if (!head->order || head->folio.entire_mapcount)
		return -EINVAL;
	if (folio_mapped_in_table(s, ptes, head_pfn) != (unsigned int)folio_mapcount(head))
		return -EAGAIN;
	if (!__atomic_compare_exchange_n(&head->refcount, &expected, 0, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return -EAGAIN;
	for (unsigned int i = nr; i-- > 0; ) {
		struct mmp_page *p = head + i;
		int refs = p->mapcount + (i == 0 ? extra_refs : 0);
		uint32_t excl = p->flags & PG_anon_exclusive;

		p->order = 0;
		p->anon_vma = head->anon_vma;
		/* The first tail's owner slots share these words: a new head has no pins. */
		p->pincount = 0;
		p->index = head->index + i;
		p->folio.large_mapcount = 0;
		p->folio.entire_mapcount = 0;
		p->flags = PG_head | keep | excl;
		if (refs) {
			__atomic_store_n(&p->refcount, refs, __ATOMIC_RELEASE);
		} else {
			/* A page no one maps any more: its own folio, freed now. */
			count_inc(s, MMP_C_FOLIO_FREE);
			phys_free_pages(s->phys, head_pfn + i, 0);
		}
	}
	count_inc(s, MMP_C_FOLIO_SPLIT);
	count_mthp_stat(s, order, MTHP_STAT_SPLIT);
	/*
	 * A contiguous block (arm64 contpte, riscv NAPOT) must map one folio:
	 * rewrite each entry that still carries the hint, which unfolds its block;
	 * the pieces, order-0 now, never fold again.
	 */
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		mmp_pte_t e = READ_ONCE(ptes[i]);
		uint64_t addr = table_addr + ((uint64_t)i << PAGE_SHIFT);

		if (!e || !entry_test(s, e, MMP_PTE, MMP_E_CONT) ||
		    !pfn_in_range(entry_pfn(s, ptep_get_lockless(s, &ptes[i]), MMP_PTE),
				  head_pfn, nr))
			continue;
		e = ptep_get_and_clear(s, addr, &ptes[i]);
		set_ptes(s, addr, &ptes[i], e, 1);
	}
	if (keep & PG_anon)
		split_map_unused_to_zeropage(s, vma, ptes, table_addr, head_pfn, nr);
	return 0;
}
