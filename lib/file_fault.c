/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Faults in file and shared memory (mm/memory.c's do_fault family, and
 * filemap_fault and filemap_map_pages of mm/filemap.c):
 *
 *  - a read maps the page-cache page: first fault-around maps what the cache
 *    already holds in the 64 KiB around the address, then filemap_fault
 *    reads the page in (with readahead) if that did not cover it;
 *  - a write in a private mapping copies the file page into a new anonymous
 *    one (do_cow_fault);
 *  - a write in a shared mapping maps the page-cache page writable and dirty,
 *    dirtying the folio first where the file tracks it (do_shared_fault,
 *    page_mkwrite); a write to a clean shared page mapped read-only does the
 *    same in place (wp_page_shared).
 *
 * File folios are mapped by PTEs only: the kernel maps a PMD-size page-cache
 * folio by its PMD when the VMA is aligned for it (do_set_pmd); here it is
 * 512 PTEs. A folio is mapped with its lock held and i_size checked under
 * it, so truncation, which locks each folio it drops, finds every mapping of
 * it in the rmap; a private copy made from a folio it then drops is caught by
 * its second unmap (truncate_pagecache).
 */
#include "filemap.h"
#include "mm.h"
#include "rcu.h"

/* fault_around_bytes: 64 KiB. */
#define FAULT_AROUND_PAGES	16

/*
 * The PTE table of the fault, locked, and the PMD rechecked (the table may
 * have gone while the folio was read in): NULL if it changed, the access
 * then retries. A file fault installs the table only here, once it has a
 * page to map (finish_fault's pmd_install): a fault that maps nothing, SIGBUS
 * past the end of the file, leaves none. NULL with *@err -ENOMEM when it
 * cannot. Caller is inside rcu_read_lock.
 */
static mmp_pte_t *fault_pte_lock(struct vm_fault *vmf, mmp_spinlock_t **ptl, int *err)
{
	struct mmp_space *s = vmf->s;
	mmp_pte_t *ptes;

	*err = 0;
	if (pte_alloc(s, vmf->pmdp)) {
		*err = -ENOMEM;
		return NULL;
	}
	vmf->pmdval = READ_ONCE(*vmf->pmdp);
	ptes = pte_table(s, vmf->pmdval);
	if (!ptes)
		return NULL;
	*ptl = pte_lockptr(s, ptes);
	spin_lock(*ptl);
	if (READ_ONCE(*vmf->pmdp) != vmf->pmdval) {
		spin_unlock(*ptl);
		return NULL;
	}
	return ptes;
}

/* Does the page cache of @f hold a folio for any page of [first, end)? */
static bool file_range_cached(struct mmp_file *f, uint64_t first, uint64_t end)
{
	bool cached = false;

	spin_lock(&f->mapping.i_pages_lock);
	for (uint64_t i = first; i < end && !cached; i++)
		cached = xa_load(&f->mapping, i) != NO_PFN;
	spin_unlock(&f->mapping.i_pages_lock);
	return cached;
}

/* The entry that maps @pfn in @vma; writable and dirty for @write (set_pte_range). */
static mmp_pte_t mk_file_pte(struct mmp_space *s, struct mmp_vma *vma, uint64_t pfn, bool write)
{
	unsigned int f = entry_flags(s, READ_ONCE(vma->vm_page_prot), MMP_PTE) | MMP_E_ACCESSED;

	if (write)
		f |= MMP_E_WRITE | pte_mkdirty_flags(s);
	return mk_entry(s, pfn, f, MMP_PTE);
}

/* Account @nr new mappings of pages [page, page + nr) of @head (folio_add_file_rmap_ptes). */
static void map_file_pages(struct mmp_space *s, struct mmp_page *head, struct mmp_page *page,
			   unsigned int nr)
{
	folio_ref_add(head, nr);
	folio_add_rmap_ptes(s, head, page, nr);
	add_mm_counter(s, mm_counter(head), nr);
}

/*
 * filemap_map_pages: map the pages the cache already holds in the fault-around
 * window, in runs of none entries within one folio, read-only (a write would
 * not be noticed). Folios someone has locked are skipped, as the kernel's
 * trylock does. True if the faulting address got mapped.
 */
static bool do_fault_around(struct vm_fault *vmf)
{
	struct mmp_space *s = vmf->s;
	struct mmp_vma *vma = vmf->vma;
	struct mmp_file *f = vma->vm_file;
	uint64_t addr = vmf->address & PAGE_MASK;
	uint64_t from = MAX(addr & ~(FAULT_AROUND_PAGES * PAGE_SIZE - 1),
			    MAX(vma->start, addr & PMD_MASK));
	uint64_t to = MIN(from + FAULT_AROUND_PAGES * PAGE_SIZE,
			  MIN(vma->end, (addr & PMD_MASK) + PMD_SIZE));
	uint64_t end_index = file_size_pages(f);
	mmp_spinlock_t *ptl;
	mmp_pte_t *ptes;
	bool mapped = false, here;
	int err;

	/* filemap_map_pages installs a missing table only for a folio it found, inside i_size. */
	if (!READ_ONCE(*vmf->pmdp) &&
	    !file_range_cached(f, linear_page_index(vma, from),
			       MIN(linear_page_index(vma, to), end_index)))
		return false;
	rcu_read_lock();
	ptes = fault_pte_lock(vmf, &ptl, &err);
	if (!ptes) {
		rcu_read_unlock();
		return false;
	}
	for (uint64_t va = from; va < to; ) {
		uint64_t index = linear_page_index(vma, va), nr, n;
		uint32_t head_pfn = NO_PFN;
		struct mmp_page *head, *page;
		mmp_pte_t *ptep = &ptes[level_index(va, MMP_PTE)];

		if (index >= end_index)
			break;
		if (!ptep_get(s, ptep)) {
			spin_lock(&f->mapping.i_pages_lock);
			head_pfn = xa_load(&f->mapping, index);
			if (head_pfn != NO_PFN && !folio_trylock(pfn_to_page(s->phys, head_pfn)))
				head_pfn = NO_PFN;
			spin_unlock(&f->mapping.i_pages_lock);
		}
		if (head_pfn == NO_PFN) {
			va += PAGE_SIZE;
			continue;
		}
		head = pfn_to_page(s->phys, head_pfn);
		page = head + (index - head->index);
		/* Locked, it stays in the cache; i_size may have fallen meanwhile (next_uptodate_folio). */
		end_index = file_size_pages(f);
		if (index >= end_index) {
			folio_unlock(head);
			break;
		}
		/* The run of none entries from here, inside the folio and the window. */
		nr = MIN((to - va) >> PAGE_SHIFT, head->index + folio_nr_pages(head) - index);
		nr = MIN(nr, end_index - index);
		for (n = 1; n < nr && !ptep_get(s, ptep + n); n++)
			;
		map_file_pages(s, head, page, n);
		set_ptes(s, va, ptep, mk_file_pte(s, vma, head_pfn + (page - head), false), n);
		/* The faulting page is the fault's own; the others were mapped ahead of need. */
		here = addr >= va && addr < va + n * PAGE_SIZE;
		mapped |= here;
		count_add(s, MMP_C_FAULT_AROUND, n - here);
		folio_unlock(head);
		va += n * PAGE_SIZE;
	}
	spin_unlock(ptl);
	rcu_read_unlock();
	return mapped;
}

/*
 * filemap_fault: the page-cache folio holding page @index, locked and with a
 * reference, read in (with readahead) if the cache does not have it. NO_PFN
 * with *@err: -EIO past the end of the file (SIGBUS), -ENOMEM.
 */
static uint32_t filemap_fault(struct vm_fault *vmf, uint64_t index, int *err)
{
	struct mmp_space *s = vmf->s;
	struct mmp_vma *vma = vmf->vma;
	struct mmp_file *f = vma->vm_file;

	for (;;) {
		uint32_t pfn;
		struct mmp_page *head;

		if (index >= file_size_pages(f)) {
			count_inc(s, MMP_C_FAULT_SIGBUS);
			*err = -EIO;
			return NO_PFN;
		}
		pfn = filemap_get_folio(f, index);
		if (pfn == NO_PFN) {
			down_read(&f->mapping.invalidate_lock);
			if (shmem_file(f)) {
				/* shmem_get_folio: one folio, of the order huge= gives. */
				uint64_t pmd_end = (index | (HPAGE_PMD_NR - 1)) + 1;

				/* A huge folio may reach past i_size (huge=always), not the index. */
				pfn = filemap_grab_folio(f, index, shmem_huge_order(f, vma, index),
							 index < file_size_pages(f) ? pmd_end : index,
							 s, err);
			} else {
				filemap_readahead(s, vma, index);
				pfn = filemap_grab_folio(f, index, 0, file_size_pages(f), s, err);
			}
			up_read(&f->mapping.invalidate_lock);
			if (pfn == NO_PFN) {
				if (*err == -EIO)
					count_inc(s, MMP_C_FAULT_SIGBUS);
				return NO_PFN;
			}
		}
		debug_point(s, MMP_DEBUG_FILE_FAULT_LOOKUP);
		head = pfn_to_page(s->phys, pfn);
		folio_lock(head);
		/*
		 * Truncated meanwhile: gone from the cache, or now past the end
		 * (filemap_fault looks at i_size again under the folio lock).
		 */
		if (__atomic_load_n(&head->mapping, __ATOMIC_ACQUIRE) == f->id &&
		    index >= head->index && index < head->index + folio_nr_pages(head) &&
		    index < file_size_pages(f))
			return pfn;
		if (unlikely(READ_ONCE(s->debug[MMP_DEBUG_SKIP_TRUNCATE_RECHECK])))
			return pfn;
		folio_unlock(head);
		folio_put_refs(s, pfn, 1);
	}
}

/*
 * finish_fault: map the page at the fault, the folio locked and the caller's
 * reference kept. (For shared anonymous memory the kernel maps a whole
 * large folio here when it fits; shared anonymous memory gets no large
 * folios in this model, its shmem_enabled being never.)
 */
static int finish_fault(struct vm_fault *vmf, uint32_t head_pfn, uint64_t index, bool write)
{
	struct mmp_space *s = vmf->s;
	struct mmp_vma *vma = vmf->vma;
	struct mmp_page *head = pfn_to_page(s->phys, head_pfn);
	uint64_t addr = vmf->address & PAGE_MASK, pfn = head_pfn + (index - head->index);
	mmp_spinlock_t *ptl;
	mmp_pte_t *ptes, *ptep;
	int err;

	rcu_read_lock();
	ptes = fault_pte_lock(vmf, &ptl, &err);
	if (!ptes) {
		rcu_read_unlock();
		if (!err)
			count_inc(s, MMP_C_FAULT_SPURIOUS);
		return err;
	}
	ptep = &ptes[level_index(addr, MMP_PTE)];
	if (ptep_get(s, ptep)) {
		count_inc(s, MMP_C_FAULT_SPURIOUS);
	} else {
		map_file_pages(s, head, pfn_to_page(s->phys, pfn), 1);
		set_ptes(s, addr, ptep, mk_file_pte(s, vma, pfn, write), 1);
		count_inc(s, MMP_C_FAULT_FILE);
	}
	spin_unlock(ptl);
	rcu_read_unlock();
	return 0;
}

static int do_read_fault(struct vm_fault *vmf, uint64_t index)
{
	uint32_t pfn;
	int err;

	/*
	 * Fault-around first, even for a page past the end of the file: the
	 * cached pages around it inside i_size get mapped, and only then does
	 * filemap_fault find the page missing (SIGBUS).
	 */
	if (do_fault_around(vmf)) {
		count_inc(vmf->s, MMP_C_FAULT_FILE);
		return 0;
	}
	pfn = filemap_fault(vmf, index, &err);
	if (pfn == NO_PFN)
		return err;
	err = finish_fault(vmf, pfn, index, false);
	folio_unlock(pfn_to_page(vmf->s->phys, pfn));
	folio_put_refs(vmf->s, pfn, 1);
	return err;
}

/* A write in a private file mapping: a copy of the file page, as anonymous memory. */
static int do_cow_fault(struct vm_fault *vmf, uint64_t index)
{
	struct mmp_space *s = vmf->s;
	uint64_t addr = vmf->address & PAGE_MASK;
	uint32_t pfn, new_pfn;
	struct mmp_page *head;
	mmp_spinlock_t *ptl;
	mmp_pte_t *ptes, *ptep;
	int err = vmf_anon_prepare(vmf);

	if (err)
		return err;
	pfn = filemap_fault(vmf, index, &err);
	if (pfn == NO_PFN)
		return err;
	head = pfn_to_page(s->phys, pfn);
	new_pfn = folio_alloc_anon(s, 0);
	if (new_pfn != NO_PFN) {
		s->copy->copy_page(pfn_to_virt(s->phys, new_pfn),
				   pfn_to_virt(s->phys, pfn + (index - head->index)));
		count_inc(s, MMP_C_SUBPAGE_COPY);
	}
	folio_unlock(head);
	folio_put_refs(s, pfn, 1);
	if (new_pfn == NO_PFN)
		return -ENOMEM;

	rcu_read_lock();
	ptes = fault_pte_lock(vmf, &ptl, &err);
	ptep = ptes ? &ptes[level_index(addr, MMP_PTE)] : NULL;
	if (!ptes || ptep_get(s, ptep)) {
		if (ptes)
			spin_unlock(ptl);
		rcu_read_unlock();
		folio_free(s->phys, new_pfn);
		if (!err)
			count_inc(s, MMP_C_FAULT_SPURIOUS);
		return err;
	}
	folio_add_new_anon_rmap(pfn_to_page(s->phys, new_pfn), vmf->vma, addr, 1, false);
	rss_add(s, 1);
	set_ptes(s, addr, ptep, mk_file_pte(s, vmf->vma, new_pfn, true), 1);
	spin_unlock(ptl);
	rcu_read_unlock();
	count_inc(s, MMP_C_FAULT_FILE_COW);
	return 0;
}

/*
 * fault_dirty_shared_page: a write through a shared mapping dirties the folio,
 * shmem's too (its noop_dirty_folio still sets the flag; only the dirty
 * accounting and throttling are for files that write back).
 */
static void fault_dirty_folio(struct mmp_page *head)
{
	page_flag_set(head, PG_dirty);
}

static int do_shared_fault(struct vm_fault *vmf, uint64_t index)
{
	uint32_t pfn;
	int err;

	pfn = filemap_fault(vmf, index, &err);
	if (pfn == NO_PFN)
		return err;
	fault_dirty_folio(pfn_to_page(vmf->s->phys, pfn));
	err = finish_fault(vmf, pfn, index, true);
	folio_unlock(pfn_to_page(vmf->s->phys, pfn));
	folio_put_refs(vmf->s, pfn, 1);
	return err;
}

/*
 * do_fault: a fault on a none entry of a file or shared mapping. Called
 * inside the fault's rcu_read_lock, which it leaves while the folio is read in
 * and locked (that may wait); the PTE table is looked up again after.
 */
int do_fault(struct vm_fault *vmf)
{
	uint64_t index = linear_page_index(vmf->vma, vmf->address);
	int ret;

	rcu_read_unlock();
	if (!(vmf->flags & FAULT_FLAG_WRITE))
		ret = do_read_fault(vmf, index);
	else if (!(vmf->vma->flags & VM_SHARED))
		ret = do_cow_fault(vmf, index);
	else
		ret = do_shared_fault(vmf, index);
	rcu_read_lock();
	return ret;
}

/*
 * wp_page_shared: a write to a clean page of a shared mapping, mapped
 * read-only so the write would be noticed. Dirty the folio and let the
 * write through, in place.
 */
void wp_page_shared(struct vm_fault *vmf, mmp_pte_t *ptes)
{
	struct mmp_space *s = vmf->s;
	uint64_t addr = vmf->address & PAGE_MASK;
	mmp_pte_t *ptep = &ptes[level_index(addr, MMP_PTE)], pte;
	mmp_spinlock_t *ptl = pte_lockptr(s, ptes);
	unsigned int f;

	spin_lock(ptl);
	if (READ_ONCE(*vmf->pmdp) != vmf->pmdval) {
		spin_unlock(ptl);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return;
	}
	pte = ptep_get(s, ptep);
	f = entry_flags(s, pte, MMP_PTE);
	if (!(f & MMP_E_PRESENT) || (f & MMP_E_WRITE)) {
		spin_unlock(ptl);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return;
	}
	fault_dirty_folio(pfn_to_page(s->phys, folio_pfn(s->phys, entry_pfn(s, pte, MMP_PTE))));
	ptep_set_access_flags(s, addr, ptep, MMP_E_WRITE | pte_mkdirty_flags(s) | MMP_E_ACCESSED);
	spin_unlock(ptl);
	count_inc(s, MMP_C_FAULT_MKWRITE);
}
