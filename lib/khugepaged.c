/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MADV_COLLAPSE: khugepaged's collapse, run synchronously by the caller
 * (madvise_collapse). Each PMD-aligned, PMD-sized range wholly inside the
 * advised range and inside one VMA becomes one PMD-mapped THP: scan the PTE
 * table, allocate the THP, then, under the mmap write lock, clear the PMD and
 * flush its range (pmdp_collapse_flush), wait for the lockless walkers that
 * may still hold the old PTE table (tlb_remove_table_sync_one), recheck every
 * page's references now that no new GUP-fast pin can come (a pin taken
 * meanwhile makes the collapse back out), copy the pages into the THP (none
 * and zero-page entries become zeroes), clear the old PTEs and drop the small
 * folios, and map the THP. The old PTE table is not freed: it becomes the
 * table deposited beside the new huge PMD, which is why the walkers must be
 * gone first (a deposit is later freed with no grace period).
 *
 * As Linux 6.18 on anonymous memory: independent of the THP "enabled"
 * settings (only VM_NOHUGEPAGE refuses), none entries allowed (khugepaged's
 * max_ptes_none does not apply), shared (forked) and read-only pages
 * allowed, PTE-mapped large folios copied like small ones. File and shmem
 * ranges are not modelled: see collapse_file_vma().
 */
#include "mm.h"
#include "khugepaged.h"
#include "mmap_lock.h"
#include "rcu.h"
#include "release.h"

/* The kernel's scan_result, as far as the anonymous path can end with them. */
enum scan_result {
	SCAN_FAIL,
	SCAN_SUCCEED,
	SCAN_PMD_NULL,
	SCAN_PMD_NONE,
	SCAN_PMD_MAPPED,
	SCAN_PTE_NON_PRESENT,
	SCAN_PAGE_NULL,
	SCAN_PAGE_COUNT,
	SCAN_PAGE_LRU,
	SCAN_PAGE_LOCK,
	SCAN_PAGE_ANON,
	SCAN_VMA_NULL,
	SCAN_VMA_CHECK,
	SCAN_ADDRESS_RANGE,
	SCAN_DEL_PAGE_LRU,
	SCAN_ALLOC_HUGE_PAGE_FAIL,
};

/* madvise_collapse_errno: what a failed range reports. */
static int madvise_collapse_errno(enum scan_result r)
{
	switch (r) {
	case SCAN_ALLOC_HUGE_PAGE_FAIL:
		return -ENOMEM;
	/* Temporary: a reference, a lock or an isolation that may be gone next time. */
	case SCAN_PAGE_COUNT:
	case SCAN_PAGE_LOCK:
	case SCAN_PAGE_LRU:
	case SCAN_DEL_PAGE_LRU:
		return -EAGAIN;
	default:
		return -EINVAL;
	}
}

/*
 * Does the VMA leave room for an aligned PMD at all (thp_vma_suitable_order
 * on its last PMD-sized range)? A VMA smaller than that refuses the advice
 * even when the advised range covers no PMD.
 */
static bool vma_holds_pmd(const struct mmp_vma *vma)
{
	uint64_t haddr = (vma->end - PMD_SIZE) & PMD_MASK;

	return vma->end - vma->start >= PMD_SIZE && haddr >= vma->start;
}

/*
 * thp_vma_allowable_order(TVA_FORCED_COLLAPSE, PMD_ORDER) for an anonymous
 * VMA: the sysfs THP settings do not count (the 6.18 source: "only forced
 * collapse ignores sysfs configs"), VM_NOHUGEPAGE and PR_SET_THP_DISABLE do
 * (not its EXCEPT_ADVISED form: a forced collapse is advice), and so does a VMA
 * never faulted (no anon_vma: only a fault or smaps may overlook that), even
 * for a range that covers no PMD, as a 6.18 host answers.
 *
 * Guard regions: a marker is met by the swap-in (collapse_swapin), from 6.19
 * too; 6.19's VM_MAYBE_GUARD check is in the retraction of file-backed page
 * tables, which the library does not model.
 */
static bool collapse_vma_allowed(const struct mmp_vma *vma)
{
	return !vma_thp_disabled(vma, true) && vma_holds_pmd(vma) && vma->anon_vma;
}

/*
 * hugepage_vma_revalidate: after the mmap lock was dropped, is there still an
 * anonymous VMA that may collapse [haddr, haddr + PMD_SIZE)?
 */
static enum scan_result hugepage_vma_revalidate(struct mmp_space *s, uint64_t haddr,
						bool expect_anon, struct mmp_vma **vmap)
{
	struct mmp_vma *vma = find_vma(s, haddr);

	if (!vma)
		return SCAN_VMA_NULL;
	if (haddr < vma->start || haddr + PMD_SIZE > vma->end)
		return SCAN_ADDRESS_RANGE;
	if (!collapse_vma_allowed(vma))
		return SCAN_VMA_CHECK;
	if (!vma_is_anonymous(vma))
		return SCAN_VMA_CHECK;
	if (expect_anon && !vma->anon_vma)
		return SCAN_PAGE_ANON;
	*vmap = vma;
	return SCAN_SUCCEED;
}

/* find_pmd_or_thp_or_none: the PMD of @haddr, a table under it or not. */
static enum scan_result find_pmd_or_thp_or_none(struct mmp_space *s, uint64_t haddr,
						mmp_pte_t **pmdpp)
{
	mmp_pte_t *pmdp = pmd_offset(s, haddr);
	mmp_pte_t pmd;

	if (!pmdp)
		return SCAN_PMD_NULL;
	*pmdpp = pmdp;
	count_inc(s, MMP_C_PMD_READ);
	pmd = READ_ONCE(*pmdp);
	if (!pmd)
		return SCAN_PMD_NONE;
	/* A huge PMD, the huge zero folio's too: nothing to do, and a success. */
	if (entry_test(s, pmd, MMP_PMD, MMP_E_LEAF))
		return SCAN_PMD_MAPPED;
	return SCAN_SUCCEED;
}

static bool is_zero_pte(struct mmp_space *s, mmp_pte_t pte)
{
	return entry_test(s, pte, MMP_PTE, MMP_E_SPECIAL) &&
	       entry_pfn(s, pte, MMP_PTE) == s->phys->zero_pfn;
}

/*
 * One present entry's folio: may it be collapsed? Only references the
 * mappings explain (is_refcount_suitable): a GUP pin, reclaim's isolation or
 * a gather still holding it is one more, and the range is tried again later.
 */
static enum scan_result collapse_check_folio(struct mmp_space *s, mmp_pte_t pte,
					     struct mmp_page **headp)
{
	struct mmp_page *head;

	if (entry_test(s, pte, MMP_PTE, MMP_E_SPECIAL))
		return SCAN_PAGE_NULL;
	head = pfn_to_page(s->phys, folio_pfn(s->phys, entry_pfn(s, pte, MMP_PTE)));
	if (!page_flag_test(head, PG_anon))
		return SCAN_PAGE_ANON;
	if (page_flag_test(head, PG_isolated))
		return SCAN_PAGE_LRU;
	if (page_flag_test(head, PG_locked))
		return SCAN_PAGE_LOCK;
	*headp = head;
	if (folio_ref_count(head) != folio_mapcount(head))
		return SCAN_PAGE_COUNT;
	return SCAN_SUCCEED;
}

/*
 * hpage_collapse_scan_pmd, under the mmap read lock and the PTL: is the table
 * worth a THP allocation? @unmapped counts non-present entries, which the
 * collapse must bring in first.
 */
static enum scan_result hpage_collapse_scan_pmd(struct mmp_space *s, uint64_t haddr,
						unsigned int *unmapped)
{
	enum scan_result result;
	mmp_spinlock_t *ptl;
	mmp_pte_t *pmdp, *ptes;

	result = find_pmd_or_thp_or_none(s, haddr, &pmdp);
	if (result != SCAN_SUCCEED)
		return result;
	*unmapped = 0;
	rcu_read_lock();
	ptes = pte_offset_map_lock(s, pmdp, &ptl);
	if (!ptes) {
		rcu_read_unlock();
		return SCAN_PMD_NULL;
	}
	for (unsigned int i = 0; i < PTRS_PER_TABLE && result == SCAN_SUCCEED; i++) {
		mmp_pte_t pte = ptep_get(s, &ptes[i]);
		struct mmp_page *head;

		/* Swap entries and PTE markers first: a format may decode them as anything. */
		if (is_swap_pte(s, pte) || (pte && !entry_present(entry_flags(s, pte, MMP_PTE)))) {
			/* Left to collapse_swapin. */
			(*unmapped)++;
			continue;
		}
		if (!pte || is_zero_pte(s, pte))
			continue;	/* none_or_zero: MADV_COLLAPSE takes any number */
		result = collapse_check_folio(s, pte, &head);
	}
	spin_unlock(ptl);
	rcu_read_unlock();
	return result;
}

/*
 * __collapse_huge_page_swapin: fault in what the scan found not present.
 * There is no swap device in the model, so such an entry can only be a PTE
 * marker; a guard region's marker faults with SIGSEGV, which fails the range
 * (SCAN_FAIL, -EINVAL) after the THP was allocated, as on a 6.18 host.
 */
static enum scan_result collapse_swapin(struct mmp_space *s, uint64_t haddr, unsigned int unmapped)
{
	return unmapped ? SCAN_FAIL : SCAN_SUCCEED;
}

/*
 * pmdp_collapse_flush: unlink the PTE table from the PMD and flush the range
 * at page stride: the TLBs hold the table's 4 KiB translations, and the
 * page-walk caches the table itself. page_table_lock held.
 */
static mmp_pte_t pmdp_collapse_flush(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t haddr)
{
	mmp_pte_t pmd;

	inc_tlb_flush_pending(s);
	count_inc(s, MMP_C_PMD_WRITE);
	pmd = __atomic_exchange_n(pmdp, 0, __ATOMIC_ACQ_REL);
	flush_tlb_range(s, haddr, haddr + PMD_SIZE, PAGE_SHIFT);
	dec_tlb_flush_pending(s);
	return pmd;
}

/*
 * tlb_remove_table_sync_one: a lockless walker (GUP-fast) that read the PMD
 * before it was cleared may still be reading the table or grabbing a page
 * through it. Wait until every such walker is done, so that its grab, if any,
 * shows in the reference counts rechecked next, and so that the table may be
 * reused as a deposit and later freed at once. In the kernel an IPI that
 * IRQ-disabled walkers must answer; here a grace period, GUP-fast's section
 * being an RCU read-side section. Never called inside one.
 */
static void tlb_remove_table_sync_one(struct mmp_space *s)
{
	if (READ_ONCE(s->debug[MMP_DEBUG_SKIP_COLLAPSE_SYNC]))
		return;	/* fault injection: test_collapse_stress must notice */
	count_inc(s, MMP_C_TABLE_SYNC_ONE);
	debug_point(s, MMP_DEBUG_GRACE_PERIOD);
	synchronize_rcu();
}

/* The folios a collapse isolated, each once (a large folio has many entries). */
struct collapse_list {
	unsigned int nr;
	uint32_t heads[PTRS_PER_TABLE];
};

static bool collapse_list_has(const struct collapse_list *l, uint32_t head_pfn)
{
	for (unsigned int i = l->nr; i-- > 0; )
		if (l->heads[i] == head_pfn)
			return true;
	return false;
}

/* release_pte_pages / folio_putback_lru: reclaim may take them again. */
static void collapse_list_release(struct mmp_space *s, const struct collapse_list *l)
{
	for (unsigned int i = 0; i < l->nr; i++)
		page_flag_clear(pfn_to_page(s->phys, l->heads[i]), PG_isolated);
}

/*
 * __collapse_huge_page_isolate on the unlinked table (its PTL held): with the
 * PMD cleared and the walkers gone, no new reference can come from this mm,
 * so the counts read now are final. Each folio is isolated (PG_isolated) so
 * that reclaim keeps off it; on failure, what was isolated is put back.
 */
static enum scan_result collapse_isolate(struct mmp_space *s, mmp_pte_t *ptes,
					 struct collapse_list *l)
{
	enum scan_result result = SCAN_SUCCEED;

	l->nr = 0;
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		mmp_pte_t pte = ptep_get(s, &ptes[i]);
		struct mmp_page *head = NULL;
		uint32_t head_pfn;

		if (is_swap_pte(s, pte) || (pte && !entry_present(entry_flags(s, pte, MMP_PTE)))) {
			result = SCAN_PTE_NON_PRESENT;
			break;
		}
		if (!pte || is_zero_pte(s, pte))
			continue;
		head_pfn = folio_pfn(s->phys, entry_pfn(s, pte, MMP_PTE));
		/* A large folio met again through a later entry: checked and isolated already. */
		if (pfn_to_page(s->phys, head_pfn)->order && collapse_list_has(l, head_pfn))
			continue;
		result = collapse_check_folio(s, pte, &head);
		if (result == SCAN_PAGE_COUNT && READ_ONCE(s->debug[MMP_DEBUG_SKIP_COLLAPSE_REFCHECK]))
			result = SCAN_SUCCEED;	/* fault injection: the stress test must notice */
		if (result != SCAN_SUCCEED)
			break;
		if (__atomic_fetch_or(&head->flags, PG_isolated, __ATOMIC_ACQ_REL) & PG_isolated) {
			result = SCAN_DEL_PAGE_LRU;	/* reclaim got there first */
			break;
		}
		l->heads[l->nr++] = head_pfn;
	}
	if (result != SCAN_SUCCEED)
		collapse_list_release(s, l);
	return result;
}

/*
 * __collapse_huge_page_copy and _copy_succeeded: copy each page into the THP
 * (a none or zero-page entry becomes a cleared sub-page, newly counted in
 * RSS), then clear the old entries and drop their folios. With PTE batching
 * a large folio's entries go in one clear_full_ptes (Dev Jain's 2025
 * batching of this loop), which leaves whole arm64 contpte blocks folded;
 * one at a time, each block is unfolded on its first entry. No TLB flush:
 * the table is unlinked and its range flushed already. The table's PTL held.
 */
static void collapse_copy(struct mmp_space *s, mmp_pte_t *ptes, uint64_t haddr, uint32_t thp,
			  const struct collapse_list *l)
{
	const struct mmp_copy_ops *op = __atomic_load_n(&s->copy, __ATOMIC_ACQUIRE);
	uint8_t *dst = pfn_to_virt(s->phys, thp);
	int64_t filled = 0;
	unsigned int nr;

	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++, dst += PAGE_SIZE) {
		/* ptep_get, not a raw read: a riscv NAPOT entry holds its block's pfn. */
		mmp_pte_t pte = ptep_get(s, &ptes[i]);

		if (!pte || is_zero_pte(s, pte)) {
			op->clear_page(dst);
			count_inc(s, MMP_C_SUBPAGE_CLEAR);
		} else {
			op->copy_page(dst, pfn_to_virt(s->phys, entry_pfn(s, pte, MMP_PTE)));
			count_inc(s, MMP_C_SUBPAGE_COPY);
		}
	}
	/* Out of isolation before the last references go: a freed folio is no one's. */
	collapse_list_release(s, l);
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i += nr) {
		uint64_t addr = haddr + ((uint64_t)i << PAGE_SHIFT);
		mmp_pte_t pte = ptep_get(s, &ptes[i]);
		uint64_t pfn;
		uint32_t head_pfn;
		struct mmp_page *head;

		nr = 1;
		if (!pte || is_zero_pte(s, pte)) {
			filled++;
			if (pte)
				ptep_get_and_clear(s, addr, &ptes[i]);
			continue;
		}
		pfn = entry_pfn(s, pte, MMP_PTE);
		head_pfn = folio_pfn(s->phys, pfn);
		head = pfn_to_page(s->phys, head_pfn);
		if (head->order && pte_batching(s))
			nr = folio_pte_batch(s, &ptes[i], pte, PTRS_PER_TABLE - i);
		if (nr > 1)
			clear_full_ptes(s, addr, &ptes[i], nr, 0);
		else
			ptep_get_and_clear(s, addr, &ptes[i]);
		folio_remove_rmap_ptes(s, head, pfn_to_page(s->phys, pfn), nr);
		folio_put_refs(s, head_pfn, nr);
	}
	rss_add(s, filled);
}

/*
 * collapse_huge_page: the scan found the table worth it. Allocate, then take
 * the mmap lock for writing (and the VMA's lock, against per-VMA-lock faults)
 * and look again, since the lock was dropped.
 */
static enum scan_result collapse_huge_page(struct mmp_space *s, uint64_t haddr,
					   unsigned int unmapped)
{
	uint32_t thp = folio_alloc_anon(s, HPAGE_PMD_ORDER), pgtable;
	enum scan_result result;
	struct mmp_vma *vma;
	mmp_spinlock_t *ptl;
	mmp_pte_t *pmdp, *ptes, pmd;
	struct collapse_list isolated;
	unsigned int f;

	if (thp == NO_PFN) {
		count_inc(s, MMP_C_THP_COLLAPSE_ALLOC_FAILED);
		return SCAN_ALLOC_HUGE_PAGE_FAIL;
	}
	count_inc(s, MMP_C_THP_COLLAPSE_ALLOC);

	mmap_write_lock(s);
	result = hugepage_vma_revalidate(s, haddr, true, &vma);
	if (result == SCAN_SUCCEED)
		result = find_pmd_or_thp_or_none(s, haddr, &pmdp);
	if (result == SCAN_SUCCEED)
		result = collapse_swapin(s, haddr, unmapped);
	if (result != SCAN_SUCCEED)
		goto out_up_write;
	vma_start_write(s, vma);

	spin_lock(&s->page_table_lock);
	pmd = pmdp_collapse_flush(s, pmdp, haddr);
	spin_unlock(&s->page_table_lock);
	tlb_remove_table_sync_one(s);

	ptes = pte_table(s, pmd);
	ptl = pte_lockptr(s, ptes);
	spin_lock(ptl);
	result = collapse_isolate(s, ptes, &isolated);
	if (result != SCAN_SUCCEED) {
		spin_unlock(ptl);
		/* Back out: the table goes back as it was (pmd_populate). */
		spin_lock(&s->page_table_lock);
		MMP_BUG_ON(READ_ONCE(*pmdp));
		count_inc(s, MMP_C_PMD_WRITE);
		__atomic_store_n(pmdp, pmd, __ATOMIC_RELEASE);
		spin_unlock(&s->page_table_lock);
		goto out_up_write;
	}
	collapse_copy(s, ptes, haddr, thp, &isolated);
	spin_unlock(ptl);

	/* Dirty, and writable if the VMA is (maybe_pmd_mkwrite(pmd_mkdirty())). */
	f = vma_entry_flags(vma) | MMP_E_LEAF | MMP_E_DIRTY;
	if (vma->flags & VM_WRITE)
		f |= MMP_E_WRITE;
	pgtable = entry_pfn(s, pmd, MMP_PMD);
	spin_lock(&s->page_table_lock);
	MMP_BUG_ON(READ_ONCE(*pmdp));
	folio_add_new_anon_rmap(pfn_to_page(s->phys, thp), vma, haddr, HPAGE_PMD_NR, true);
	/* The emptied table is the new PMD's deposit: no walker holds it any more. */
	pgtable_trans_huge_deposit(s, pmdp, pgtable);
	count_inc(s, MMP_C_PMD_WRITE);
	__atomic_store_n(pmdp, mk_entry(s, thp, f, MMP_PMD), __ATOMIC_RELEASE);
	spin_unlock(&s->page_table_lock);
	thp = NO_PFN;
out_up_write:
	WRITE_ONCE(s->last_op, "mmp_madvise(MADV_COLLAPSE)");
	mmap_write_unlock(s);
	if (thp != NO_PFN)
		folio_free(s->phys, thp);
	return result;
}

/* One PMD range: scan under the read lock, collapse under the write lock. */
static enum scan_result collapse_pmd_range(struct mmp_space *s, uint64_t haddr)
{
	enum scan_result result;
	struct mmp_vma *vma;
	unsigned int unmapped = 0;

	mmap_read_lock(s);
	result = hugepage_vma_revalidate(s, haddr, false, &vma);
	if (result == SCAN_SUCCEED)
		result = hpage_collapse_scan_pmd(s, haddr, &unmapped);
	mmap_read_unlock(s);
	if (result != SCAN_SUCCEED)
		return result;
	debug_point(s, MMP_DEBUG_COLLAPSE_SCANNED);
	return collapse_huge_page(s, haddr, unmapped);
}

/*
 * File and shmem mappings (hpage_collapse_scan_file, collapse_file) are not
 * modelled. On a 6.18 host with shmem_enabled=never and no
 * CONFIG_READ_ONLY_THP_FOR_FS: a regular file's VMA refuses (-EINVAL, as
 * here); a shmem VMA (MAP_SHARED anonymous memory, memfd, tmpfs) collapses
 * its page cache into a THP regardless of shmem_enabled (forced collapse
 * only stops at "deny"), and a private shmem mapping that was written to
 * fails. Those get -ENOTSUP here, as GUP of file pages does.
 */
static int collapse_file_vma(const struct mmp_vma *vma)
{
	if (vma_thp_disabled(vma, true))
		return -EINVAL;
	return shmem_file(vma->vm_file) ? -ENOTSUP : -EINVAL;
}

/* madvise_collapse over [start, end) of one VMA, found under the mmap read lock. */
static int madvise_collapse_vma(struct mmp_space *s, struct mmp_vma *vma, uint64_t start,
				uint64_t end)
{
	uint64_t hstart = (start + PMD_SIZE - 1) & PMD_MASK, hend = end & PMD_MASK;
	enum scan_result last_fail = SCAN_FAIL;
	unsigned int thps = 0, nr = 0;

	if (!vma_is_anonymous(vma))
		return collapse_file_vma(vma);
	if (!collapse_vma_allowed(vma))
		return -EINVAL;
	mmap_read_unlock(s);
	for (uint64_t addr = hstart; addr < hend; addr += PMD_SIZE, nr++) {
		enum scan_result result = collapse_pmd_range(s, addr);

		switch (result) {
		case SCAN_SUCCEED:
		case SCAN_PMD_MAPPED:
			thps++;
			break;
		/*
		 * A PMD with no table under it ends the call until 7.0 (a
		 * 6.18 host: an empty PMD, then one with 28 pages written,
		 * -EINVAL and no THP); from 7.0 it is a failure of its own
		 * range, as one with no PMD level is in every release.
		 */
		case SCAN_PMD_NONE:
			last_fail = result;
			if (!release_follows(s, RULE_COLLAPSE_PAST_EMPTY_PMD))
				goto out;
			break;
		/* Failures of this range only: go on with the next. */
		case SCAN_PMD_NULL:
		case SCAN_PTE_NON_PRESENT:
		case SCAN_PAGE_NULL:
		case SCAN_PAGE_COUNT:
		case SCAN_PAGE_LOCK:
		case SCAN_PAGE_LRU:
		case SCAN_DEL_PAGE_LRU:
			last_fail = result;
			break;
		default:
			last_fail = result;
			goto out;
		}
	}
out:
	mmap_read_lock(s);
	/*
	 * As the kernel counts, in unsigned arithmetic: a range inside one PMD
	 * that does not start on its boundary has hend below hstart, and fails
	 * (with SCAN_FAIL's -EINVAL); one that starts on it has none to do.
	 */
	return thps == (hend - hstart) >> PMD_SHIFT ? 0 : madvise_collapse_errno(last_fail);
}

/*
 * MADV_COLLAPSE over [start, end): VMA by VMA, as madvise_walk_vmas visits
 * them. A VMA's error ends the call; a hole is reported with -ENOMEM once
 * every VMA was done. The mmap read lock is dropped while collapsing, so each
 * step looks its VMA up again.
 */
int madvise_collapse(struct mmp_space *s, uint64_t start, uint64_t end)
{
	uint64_t addr = start;
	int err = 0;

	mmap_read_lock(s);
	count_inc(s, MMP_C_MMAP_LOCK_MADVISE);
	while (addr < end) {
		struct mmp_vma *vma = vma_find_next(s, addr);
		uint64_t vend;

		if (!vma || vma->start >= end) {
			err = -ENOMEM;
			break;
		}
		if (vma->start > addr) {
			err = -ENOMEM;
			addr = vma->start;
		}
		vend = MIN(end, vma->end);
		{
			int ret = madvise_collapse_vma(s, vma, addr, vend);

			if (ret) {
				err = ret;
				break;
			}
		}
		addr = vend;
	}
	mmap_read_unlock(s);
	return err;
}
