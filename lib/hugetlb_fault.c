/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hugetlb faults (mm/hugetlb.c's hugetlb_fault, hugetlb_no_page, hugetlb_wp):
 *
 *  - a fault on an empty entry maps the file's page-cache page if it has one
 *    (a shared mapping, or a private one reading its file); otherwise it takes
 *    a page from the pool, reserved or not, clears it with folio_zero_user
 *    (the space's clear order, the faulting sub-page last), and puts it in the
 *    page cache (shared) or maps it as anonymous memory (private). There is
 *    no zero page: a private read fault takes a page too. No page: SIGBUS;
 *  - a write to a read-only private entry reuses the page if this mapping is
 *    its only user, and otherwise copies all of it with copy_user_large_folio
 *    (process_huge_page's order, MMP_OPT_HUGE_ORDER: the faulting sub-page
 *    last), the path Huang Ying's 2018 patch measured. A page the owner of
 *    the reservations cannot copy for want of pages is taken back from its
 *    children instead (unmap_ref_private), whose later faults there SIGBUS.
 *
 * Faults on one huge page take turns on its fault mutex; entries change under
 * the space's page_table_lock.
 */
#include "mm.h"

pthread_mutex_t *hugetlb_fault_mutex(struct mmp_phys *phys, struct mmp_file *f, uint64_t idx)
{
	uint64_t key = (((uint64_t)f->id << 40) ^ idx) * 0x9e3779b97f4a7c15ULL;

	_Static_assert(HUGETLB_FAULT_MUTEXES == 64, "the hash keeps 6 bits");
	return &phys->hugetlb_fault_mutex[key >> 58];
}

struct hugetlb_fault_ctx {
	struct vm_fault vmf;		/* s, vma, address, flags; pmdp: the huge entry */
	struct hstate *h;
	uint64_t haddr;
	uint64_t idx;			/* in huge pages */
};

/* A new anonymous huge page's first mapping (hugetlb_add_new_anon_rmap). */
static void hugetlb_add_new_anon_rmap(struct mmp_page *head, struct mmp_vma *vma, uint64_t haddr)
{
	__folio_set_anon(head, vma, haddr);
	head->folio.entire_mapcount = 1;
	head->folio.large_mapcount = 1;
	head->flags = (head->flags & ~PG_hugetlb_restore_reserve) | PG_anon | PG_anon_exclusive;
}

/* The entry a huge page is mapped with in @vma (make_huge_pte): young, dirty when writable. */
static mmp_pte_t make_huge_pte(struct mmp_space *s, struct hstate *h, struct mmp_vma *vma,
			       uint32_t pfn, bool writable)
{
	unsigned int f = vma_entry_flags(vma) | MMP_E_LEAF;

	if (writable && (vma->flags & VM_WRITE))
		f |= MMP_E_WRITE | MMP_E_DIRTY;
	else
		f &= ~MMP_E_WRITE;
	return mk_entry(s, pfn, f, h->level);
}

/*
 * Take the page at @addr back from every other private mapping of the file
 * that still shares it (unmap_ref_private): the owner of the reservations
 * keeps its page, the children lose theirs and SIGBUS if they touch that
 * mapping again. Returns the mappings unmapped.
 */
static uint64_t unmap_ref_private(struct hugetlb_fault_ctx *c, uint32_t pfn)
{
	struct mmp_vma *vma = c->vmf.vma;
	struct mmp_file *f = vma->vm_file;
	uint64_t pgoff = linear_page_index(vma, c->haddr), n = 0;

	down_read(&f->mapping.i_mmap_rwsem);
	for (struct mmp_vma *iter = f->mapping.i_mmap; iter; iter = iter->shared_next) {
		uint64_t address = iter->start + ((pgoff - iter->pgoff) << PAGE_SHIFT);
		struct mmp_gather tlb;

		if (iter == vma || (iter->flags & VM_SHARED) ||
		    (__atomic_load_n(&iter->resv_flags, __ATOMIC_RELAXED) & HPAGE_RESV_OWNER))
			continue;
		if (pgoff < iter->pgoff || address >= iter->end)
			continue;
		tlb_gather_mmu(&tlb, iter->vm_mm, false);
		n += unmap_hugepage_range(&tlb, iter, address, address + huge_page_size(c->h), pfn);
		tlb_finish_mmu(&tlb);
	}
	up_read(&f->mapping.i_mmap_rwsem);
	return n;
}

/* A write to the present, read-only entry @orig (hugetlb_wp). Fault mutex held. */
static int hugetlb_wp(struct hugetlb_fault_ctx *c, mmp_pte_t orig)
{
	struct mmp_space *s = c->vmf.s;
	struct mmp_vma *vma = c->vmf.vma;
	struct hstate *h = c->h;
	mmp_pte_t *ptep = c->vmf.pmdp;
	bool outside_reserve, retried = false;
	uint32_t old_pfn, new_pfn;
	struct mmp_page *old;
	unsigned int f;
	int ret;

retry_avoidcopy:
	spin_lock(&s->page_table_lock);
	if (huge_ptep_get(s, h, ptep) != orig) {
		spin_unlock(&s->page_table_lock);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return 0;
	}
	old_pfn = entry_pfn(s, orig, h->level);
	old = pfn_to_page(s->phys, old_pfn);
	/*
	 * A shared mapping writes the page-cache page itself; an anonymous page
	 * this mapping alone maps is reused, its anon_vma moved to ours.
	 */
	if ((vma->flags & VM_SHARED) ||
	    ((old->flags & PG_anon) &&
	     (page_flag_test(old, PG_anon_exclusive) || folio_mapcount(old) == 1))) {
		if ((old->flags & PG_anon) && !page_flag_test(old, PG_anon_exclusive)) {
			old->anon_vma = vma->anon_vma->id;
			page_flag_set(old, PG_anon_exclusive);
		}
		huge_ptep_modify(s, h, ptep, MMP_E_WRITE | MMP_E_DIRTY | MMP_E_ACCESSED, 0);
		spin_unlock(&s->page_table_lock);
		count_inc(s, MMP_C_FAULT_HUGETLB_REUSE);
		return 0;
	}
	/*
	 * The owner's reservation went to the page it is copying from: its copy
	 * comes from beyond the reservations, as any child's does.
	 */
	outside_reserve = (old->flags & PG_anon) &&
			  (__atomic_load_n(&vma->resv_flags, __ATOMIC_RELAXED) & HPAGE_RESV_OWNER);
	folio_ref_add(old, 1);
	spin_unlock(&s->page_table_lock);

	ret = vmf_anon_prepare(&c->vmf);
	new_pfn = ret ? NO_PFN : alloc_hugetlb_folio(s, vma, c->haddr, outside_reserve);
	if (new_pfn == NO_PFN) {
		folio_put_refs(s, old_pfn, 1);
		if (ret)
			return ret;
		if (outside_reserve && !retried) {
			/* Rather than fail the owner, take the page back from the children. */
			count_add(s, MMP_C_HUGETLB_UNMAP_REF, unmap_ref_private(c, old_pfn));
			retried = true;
			goto retry_avoidcopy;
		}
		count_inc(s, MMP_C_FAULT_HUGETLB_SIGBUS);
		return -EIO;
	}
	copy_user_large_folio(s, new_pfn, old_pfn, h->order, c->vmf.address);

	spin_lock(&s->page_table_lock);
	if (huge_ptep_get(s, h, ptep) != orig) {
		spin_unlock(&s->page_table_lock);
		folio_put_refs(s, new_pfn, 1);	/* back to the pool, its reservation too */
		folio_put_refs(s, old_pfn, 1);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return 0;
	}
	/* huge_ptep_clear_flush, then the copy: no CPU may keep writing the old page. */
	inc_tlb_flush_pending(s);
	huge_ptep_get_and_clear(s, h, ptep);
	flush_tlb_range(s, c->haddr, c->haddr + huge_page_size(h), level_shift(h->level));
	dec_tlb_flush_pending(s);
	folio_remove_rmap_pmd(s, old);
	hugetlb_add_new_anon_rmap(pfn_to_page(s->phys, new_pfn), vma, c->haddr);
	f = (entry_flags(s, orig, h->level) & ~(MMP_E_SPECIAL | MMP_E_CONT)) | MMP_E_WRITE |
	    MMP_E_DIRTY | MMP_E_ACCESSED;
	set_huge_pte_at(s, h, ptep, mk_entry(s, new_pfn, f, h->level));
	spin_unlock(&s->page_table_lock);
	/* A copy of a page-cache page took the owner's reservation: the map says it is used. */
	if (!outside_reserve)
		vma_commit_reservation(h, vma, c->haddr);
	folio_put_refs(s, old_pfn, 2);	/* the old mapping's reference and ours */
	count_inc(s, MMP_C_FAULT_HUGETLB_COW);
	return 0;
}

/* A fault on an empty entry (hugetlb_no_page). Fault mutex held. */
static int hugetlb_no_page(struct hugetlb_fault_ctx *c)
{
	struct mmp_space *s = c->vmf.s;
	struct mmp_vma *vma = c->vmf.vma;
	struct mmp_file *f = vma->vm_file;
	struct hstate *h = c->h;
	bool write = c->vmf.flags & FAULT_FLAG_WRITE, shared = vma->flags & VM_SHARED;
	bool new_page = false;
	struct mmp_page *head;
	uint32_t pfn;
	mmp_pte_t e;
	int ret;

	/* The owner took this mapping's pages back: the kernel kills the process. */
	if (__atomic_load_n(&vma->resv_flags, __ATOMIC_RELAXED) & HPAGE_RESV_UNMAPPED) {
		count_inc(s, MMP_C_FAULT_HUGETLB_SIGBUS);
		return -EIO;
	}
	if (c->idx >= __atomic_load_n(&f->i_size, __ATOMIC_ACQUIRE) >> (PAGE_SHIFT + h->order)) {
		count_inc(s, MMP_C_FAULT_SIGBUS);
		return -EIO;
	}
	pfn = filemap_get_folio(f, c->idx << h->order);
	if (pfn == NO_PFN) {
		if (!shared) {
			ret = vmf_anon_prepare(&c->vmf);
			if (ret)
				return ret;
		}
		pfn = alloc_hugetlb_folio(s, vma, c->haddr, false);
		if (pfn == NO_PFN) {
			count_inc(s, MMP_C_FAULT_HUGETLB_SIGBUS);
			return -EIO;
		}
		folio_zero_user(s, pfn, h->order, c->vmf.address);
		if (shared) {
			ret = filemap_add_folio(f, pfn, c->idx << h->order);
			if (ret) {
				folio_put_refs(s, pfn, 1);	/* restores its reservation */
				return ret == -EEXIST ? 0 : ret;
			}
			/* The page cache holds the reservation now (hugetlb_add_to_page_cache). */
			page_flag_clear(pfn_to_page(s->phys, pfn), PG_hugetlb_restore_reserve);
			vma_commit_reservation(h, vma, c->haddr);
		}
		new_page = true;
	}
	head = pfn_to_page(s->phys, pfn);

	spin_lock(&s->page_table_lock);
	if (huge_ptep_get(s, h, c->vmf.pmdp)) {
		spin_unlock(&s->page_table_lock);
		folio_put_refs(s, pfn, 1);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return 0;
	}
	/* The fault's reference becomes the mapping's. */
	if (new_page && !shared) {
		hugetlb_add_new_anon_rmap(head, vma, c->haddr);
		vma_commit_reservation(h, vma, c->haddr);
	} else
		folio_add_rmap_pmd(s, head);
	/*
	 * Shared: writable as the VMA is. Private: read-only, except a new
	 * page written now, which the kernel makes writable at once (hugetlb_wp
	 * reuses the exclusive page it just mapped).
	 */
	e = make_huge_pte(s, h, vma, pfn, shared || (new_page && write));
	set_huge_pte_at(s, h, c->vmf.pmdp, e);
	hugetlb_count_add(s, pages_per_huge_page(h));
	spin_unlock(&s->page_table_lock);
	count_inc(s, new_page ? MMP_C_FAULT_HUGETLB : MMP_C_FAULT_HUGETLB_CACHE);
	/* A private write to a page-cache page copies it now, without a second fault. */
	if (!new_page && !shared && write)
		return hugetlb_wp(c, e);
	return 0;
}

/* The MMU wants accessed or dirty set for the access (Svade): huge_ptep_set_access_flags. */
static void hugetlb_set_access_flags(struct hugetlb_fault_ctx *c, mmp_pte_t orig)
{
	struct mmp_space *s = c->vmf.s;
	unsigned int set = MMP_E_ACCESSED | (c->vmf.flags & FAULT_FLAG_WRITE ? MMP_E_DIRTY : 0);

	spin_lock(&s->page_table_lock);
	if (huge_ptep_get(s, c->h, c->vmf.pmdp) == orig) {
		huge_ptep_modify(s, c->h, c->vmf.pmdp, set, 0);
		count_inc(s, MMP_C_FAULT_AD);
	} else {
		count_inc(s, MMP_C_FAULT_SPURIOUS);
	}
	spin_unlock(&s->page_table_lock);
}

int hugetlb_fault(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr, unsigned int flags)
{
	struct hstate *h = hstate_vma(vma);
	struct hugetlb_fault_ctx c = {
		.vmf = { .s = s, .vma = vma, .address = addr, .flags = flags },
		.h = h,
		.haddr = addr & ~(huge_page_size(h) - 1),
	};
	pthread_mutex_t *mutex;
	unsigned int f;
	mmp_pte_t e;
	int ret = 0;

	c.idx = vma_hugecache_offset(h, vma, c.haddr);
	c.vmf.pmdp = huge_pte_offset(s, h, c.haddr, true);
	if (!c.vmf.pmdp)
		return -ENOMEM;
	mutex = hugetlb_fault_mutex(s->phys, vma->vm_file, c.idx);
	pthread_mutex_lock(mutex);
	e = __huge_ptep_get(s, h, c.vmf.pmdp);
	f = entry_flags(s, e, h->level);
	/* No table ever sits where a hugetlb VMA's leaves go. */
	MMP_BUG_ON(e && h->level > MMP_PTE && !(f & MMP_E_LEAF));
	if (!e)
		ret = hugetlb_no_page(&c);
	else if (!(f & MMP_E_PRESENT) || (flags & FAULT_FLAG_UNSHARE))
		count_inc(s, MMP_C_FAULT_SPURIOUS);	/* mprotect raced; GUP never pins here */
	else if ((flags & FAULT_FLAG_WRITE) && !(f & MMP_E_WRITE))
		ret = hugetlb_wp(&c, e);
	else if (!(f & MMP_E_ACCESSED) || ((flags & FAULT_FLAG_WRITE) && !(f & MMP_E_DIRTY)))
		hugetlb_set_access_flags(&c, e);
	else
		count_inc(s, MMP_C_FAULT_SPURIOUS);
	pthread_mutex_unlock(mutex);
	return ret;
}
