/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Anonymous memory: page faults (anonymous, zero page, write-protect and
 * COW), and zapping page ranges. Folios are allocated and freed in folio.c,
 * huge folios cleared and copied in huge_copy.c.
 */
#include <string.h>

#include "mm.h"
#include "mmap_lock.h"
#include "vma_tree.h"
#include "rcu.h"

/* ---- anonymous faults ------------------------------------------------------------ */

bool vma_thp_allowed(struct mmp_space *s, struct mmp_vma *vma, unsigned int order)
{
	return thp_vma_allowable_orders(s, vma) & (1u << order);
}

/*
 * Are the @nr entries from @ptep none? Each is a ptep_get; the none ones are
 * counted together, and the first that is not is read by ptep_get itself,
 * counted as the architecture counts it.
 */
static bool __pte_range_none(struct mmp_space *s, mmp_pte_t *ptep, unsigned int nr)
{
	for (unsigned int i = 0;; i++) {
		unsigned int start = i;

		while (i < nr && !READ_ONCE(ptep[i]))
			i++;
		count_add2(s, MMP_C_PTEP_GET, MMP_C_PTE_READ, i - start);
		if (i == nr)
			return true;
		if (ptep_get(s, ptep + i))	/* not none (or cleared since: go on) */
			return false;
	}
}

/* The order-0 fault's one entry inline, a range out of line. */
static __always_inline bool format_pte_range_none(const enum mmp_format fmt, struct mmp_space *s,
						  mmp_pte_t *ptep, unsigned int nr)
{
	return nr == 1 ? !format_ptep_get(fmt, s, ptep) : __pte_range_none(s, ptep, nr);
}

static __always_inline bool pte_range_none(struct mmp_space *s, mmp_pte_t *ptep, unsigned int nr)
{
	return format_pte_range_none(s->format, s, ptep, nr);
}

/*
 * The largest enabled mTHP order of @orders whose naturally aligned range fits
 * the VMA and is still all none (alloc_anon_folio); falls back order by
 * order, to 0.
 */
static uint32_t alloc_anon_mthp(struct vm_fault *vmf, mmp_pte_t *pte_table_base, uint32_t orders,
				unsigned int *order_out)
{
	struct mmp_space *s = vmf->s;

	for (unsigned int order; orders; orders &= ~(1u << order)) {
		uint64_t size, start;
		uint32_t pfn;

		order = 31 - __builtin_clz(orders);	/* highest first */
		size = PAGE_SIZE << order;
		start = vmf->address & ~(size - 1);
		if (start < vmf->vma->start || start + size > vmf->vma->end)
			continue;
		if (!pte_range_none(s, pte_table_base + level_index(start, MMP_PTE), 1u << order))
			continue;
		pfn = folio_alloc_anon(s, order);
		if (pfn != NO_PFN) {
			count_mthp_stat(s, order, MTHP_STAT_ANON_FAULT_ALLOC);
			*order_out = order;
			return pfn;
		}
		count_mthp_stat(s, order, MTHP_STAT_ANON_FAULT_FALLBACK);
	}
	*order_out = 0;
	return folio_alloc_anon(s, 0);
}

/* The folio an anonymous write fault maps: order 0 unless mTHP orders are enabled. */
static __always_inline uint32_t alloc_anon_folio(struct vm_fault *vmf, mmp_pte_t *pte_table_base,
						 unsigned int *order_out)
{
	/* mTHP orders: PTE-mapped, 2 up to below the PMD order. */
	uint32_t orders = thp_vma_allowable_orders(vmf->s, vmf->vma) &
			  ((1u << HPAGE_PMD_ORDER) - 1) & ~3u;

	if (orders)
		return alloc_anon_mthp(vmf, pte_table_base, orders, order_out);
	*order_out = 0;
	return __folio_alloc_anon(vmf->s, 0);
}

/*
 * Lock the PTE table the fault found and check that the PMD still points at
 * it (the recheck of pte_offset_map_lock): PT_RECLAIM may have freed it, and
 * the read-side section the fault runs in keeps its memory until then.
 */
static mmp_spinlock_t *pte_lock_recheck(struct vm_fault *vmf, mmp_pte_t *ptes)
{
	mmp_spinlock_t *ptl = pte_lockptr(vmf->s, ptes);

	spin_lock(ptl);
	if (READ_ONCE(*vmf->pmdp) == vmf->pmdval)	/* pmd_same */
		return ptl;
	spin_unlock(ptl);
	count_inc(vmf->s, MMP_C_FAULT_SPURIOUS);
	return NULL;
}

static __always_inline int do_anonymous_page(struct vm_fault *vmf, mmp_pte_t *ptes,
					     const enum mmp_format fmt)
{
	struct mmp_space *s = vmf->s;
	mmp_spinlock_t *ptl;
	unsigned int order, nr;
	int ret;
	uint64_t addr;
	uint32_t pfn;
	mmp_pte_t *ptep, entry;

	if (!(vmf->flags & FAULT_FLAG_WRITE) && !mm_forbids_zeropage(s)) {
		/* A read maps the shared zero page; the first write will COW it. */
		ptep = &ptes[level_index(vmf->address, MMP_PTE)];
		ptl = pte_lock_recheck(vmf, ptes);
		if (!ptl)
			return 0;
		if (!format_ptep_get(fmt, s, ptep)) {
			entry = format_pfn_pte(fmt, s->phys->zero_pfn, READ_ONCE(vmf->vma->vm_page_prot));
			format_set_ptes(fmt, s, vmf->address, ptep,
					format_pte_set_flags(fmt, entry, MMP_E_SPECIAL), 1);
			count_inc(s, MMP_C_FAULT_ZERO);
		} else {
			count_inc(s, MMP_C_FAULT_SPURIOUS);
		}
		spin_unlock(ptl);
		return 0;
	}

	ret = vmf_anon_prepare(vmf);
	if (ret)
		return ret;
	pfn = alloc_anon_folio(vmf, ptes, &order);
	if (pfn == NO_PFN)
		return -ENOMEM;
	nr = 1u << order;
	addr = vmf->address & ~((PAGE_SIZE << order) - 1);
	folio_zero_user(s, pfn, order, vmf->address);

	ptep = &ptes[level_index(addr, MMP_PTE)];
	ptl = pte_lock_recheck(vmf, ptes);
	if (!ptl) {
		folio_free(s->phys, pfn);
		return 0;
	}
	if (!format_pte_range_none(fmt, s, ptep, nr)) {
		spin_unlock(ptl);
		folio_free(s->phys, pfn);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return 0;
	}
	folio_add_new_anon_rmap(pfn_to_page(s->phys, pfn), vmf->vma, addr, nr, false);
	rss_add(s, nr);
	entry = format_pfn_pte(fmt, pfn, READ_ONCE(vmf->vma->vm_page_prot));
	if (vmf->vma->flags & VM_WRITE) {
		entry = format_pte_set_flags(fmt, entry, MMP_E_WRITE | MMP_E_DIRTY);
		if (unlikely(mm_soft_dirty(s)))	/* pte_mkdirty's other half */
			entry = entry_set_flags(s, entry, MMP_PTE, MMP_E_SOFT_DIRTY, 0);
	}
	format_set_ptes(fmt, s, addr, ptep, entry, nr);
	spin_unlock(ptl);
	count_inc(s, MMP_C_FAULT_ANON);
	return 0;
}

/*
 * May a write reuse a page of large anonymous folio @head in @s, though it is
 * not marked exclusive (__wp_can_reuse_large_anon_folio, 6.15)? When one space
 * maps it, @s (the owner bit is clear), and every reference is a mapping: no
 * pin, no other holder. One page left mapped is copied instead, so that the
 * rest of the folio can be freed.
 */
static bool wp_can_reuse_large_anon_folio(struct mmp_space *s, struct mmp_page *head)
{
	int map = folio_mapcount(head);

	if (!release_follows(s, RULE_WP_REUSE_LARGE_ANON) || map <= 1 || folio_mm_shared(head))
		return false;
	return map == folio_ref_count(head);
}

/*
 * A write to a present, write-protected PTE (do_wp_page). An exclusive page is
 * reused in place, as is a page of a large folio this space alone maps (6.15);
 * anything else is copied into a new order-0 folio, a page of a large folio
 * too. With FAULT_FLAG_UNSHARE (a read pin of a shared page) the same happens
 * without making it writable.
 */
static int do_wp_page(struct vm_fault *vmf, mmp_pte_t *ptes)
{
	struct mmp_space *s = vmf->s;
	bool unshare = vmf->flags & FAULT_FLAG_UNSHARE;
	mmp_spinlock_t *ptl;
	mmp_pte_t *ptep = &ptes[level_index(vmf->address, MMP_PTE)];
	uint64_t addr = vmf->address & PAGE_MASK;
	mmp_pte_t orig;
	unsigned int f;
	uint64_t old_pfn;
	uint32_t new_pfn, head_pfn = NO_PFN;
	struct mmp_page *page = NULL, *head = NULL;
	int ret;

	ptl = pte_lock_recheck(vmf, ptes);
	if (!ptl)
		return 0;
	orig = ptep_get(s, ptep);
	f = entry_flags(s, orig, MMP_PTE);
	if (!(f & MMP_E_PRESENT) || (!unshare && (f & MMP_E_WRITE))) {
		spin_unlock(ptl);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return 0;
	}
	old_pfn = entry_pfn(s, orig, MMP_PTE);
	if (!(f & MMP_E_SPECIAL)) {
		page = pfn_to_page(s->phys, old_pfn);
		head_pfn = folio_pfn(s->phys, old_pfn);
		head = pfn_to_page(s->phys, head_pfn);
		if (!page_flag_test(page, PG_anon_exclusive) && (head->flags & PG_anon) &&
		    (head->order ? wp_can_reuse_large_anon_folio(s, head) :
				   folio_ref_count(head) == 1))
			page_flag_set(page, PG_anon_exclusive);	/* the other mapper left */
		if (page_flag_test(page, PG_anon_exclusive)) {
			/* An unshare is done once the page is exclusive: write stays as it was. */
			if (!unshare)
				ptep_set_access_flags(s, addr, ptep, MMP_E_WRITE |
							       pte_mkdirty_flags(s) | MMP_E_ACCESSED);
			spin_unlock(ptl);
			count_inc(s, MMP_C_FAULT_WP_REUSE);
			return 0;
		}
		folio_ref_add(head, 1);	/* keep the source alive while copying unlocked */
	}
	spin_unlock(ptl);

	ret = vmf_anon_prepare(vmf);
	new_pfn = ret ? NO_PFN : folio_alloc_anon(s, 0);
	if (new_pfn == NO_PFN) {
		if (head)
			folio_put_refs(s, head_pfn, 1);
		return ret ? ret : -ENOMEM;
	}
	if (page) {
		s->copy->copy_page(pfn_to_virt(s->phys, new_pfn), pfn_to_virt(s->phys, old_pfn));
		count_inc(s, MMP_C_SUBPAGE_COPY);
	} else {
		s->copy->clear_page(pfn_to_virt(s->phys, new_pfn));
		count_inc(s, MMP_C_SUBPAGE_CLEAR);
	}

	ptl = pte_lock_recheck(vmf, ptes);
	if (!ptl || ptep_get(s, ptep) != orig) {
		if (ptl)
			spin_unlock(ptl);
		folio_free(s->phys, new_pfn);
		if (head)
			folio_put_refs(s, head_pfn, 1);
		count_inc(s, MMP_C_FAULT_SPURIOUS);
		return 0;
	}
	/* ptep_clear_flush, then the new entry: no CPU may keep the old page. */
	inc_tlb_flush_pending(s);
	ptep_get_and_clear(s, addr, ptep);
	flush_tlb_page(s, addr);
	dec_tlb_flush_pending(s);
	folio_add_new_anon_rmap(pfn_to_page(s->phys, new_pfn), vmf->vma, addr, 1, false);
	/* wp_page_copy: an unshared copy keeps the old entry's permission, clean. */
	if (unshare)
		f = (f & ~(MMP_E_SPECIAL | MMP_E_DIRTY | MMP_E_CONT)) | MMP_E_ACCESSED;
	else
		f = (f & ~(MMP_E_SPECIAL | MMP_E_SOFT_DIRTY | MMP_E_CONT)) | MMP_E_WRITE |
		    pte_mkdirty_flags(s) | MMP_E_ACCESSED;
	set_ptes(s, addr, ptep, mk_entry(s, new_pfn, f, MMP_PTE), 1);
	rss_add(s, 1);
	if (head) {
		folio_remove_rmap_ptes(s, head, page, 1);
		add_mm_counter(s, mm_counter(head), -1);	/* anon to anon: even */
	}
	spin_unlock(ptl);
	if (head)
		folio_put_refs(s, head_pfn, 2);	/* the mapping's reference and ours */
	count_inc(s, head && !(head->flags & PG_anon) ? MMP_C_FAULT_FILE_COW : MMP_C_FAULT_COW);
	return 0;
}

/*
 * Does the access need A/D the MMU does not set itself (Svade)? Only for a
 * huge PMD: its bits are the very ones the walker checks, with no block to
 * gather over.
 */
static bool pmd_needs_young_dirty(unsigned int f, unsigned int flags)
{
	return !(f & MMP_E_ACCESSED) || ((flags & FAULT_FLAG_WRITE) && !(f & MMP_E_DIRTY));
}

/*
 * A fault on a present entry the access is allowed to use: an MMU that does
 * not manage A/D (Svade) faults instead, or another CPU got here first. As the
 * kernel's handle_pte_fault does, mark the entry young (and dirty on a write)
 * whatever it looks like, and let ptep_set_access_flags tell whether anything
 * changed. Deciding from ptep_get would be wrong inside a contpte or NAPOT
 * block: it ORs A/D over the block, while the walker checks the one entry it
 * read, so a block with one young entry would fault on its siblings forever.
 */
static void do_access_fault(struct vm_fault *vmf, mmp_pte_t *ptes)
{
	struct mmp_space *s = vmf->s;
	mmp_pte_t *ptep = &ptes[level_index(vmf->address, MMP_PTE)];
	mmp_spinlock_t *ptl = pte_lock_recheck(vmf, ptes);
	bool write = vmf->flags & FAULT_FLAG_WRITE;
	unsigned int set = MMP_E_ACCESSED | (write ? MMP_E_DIRTY : 0), f;

	if (!ptl)
		return;
	f = entry_flags(s, ptep_get(s, ptep), MMP_PTE);
	if ((f & MMP_E_PRESENT) && (!write || (f & MMP_E_WRITE)) &&
	    ptep_set_access_flags(s, vmf->address & PAGE_MASK, ptep, set))
		count_inc(s, MMP_C_FAULT_AD);
	else
		count_inc(s, MMP_C_FAULT_SPURIOUS);
	spin_unlock(ptl);
}

/*
 * A fault on an entry that is not none and not present (do_swap_page). The
 * only swap entries are PTE markers: a guard marker (handle_pte_marker) makes
 * the access SIGSEGV, as if the page were PROT_NONE. Anything else (PROT_NONE
 * the VMA allowed meanwhile) is spurious. Out of line: one call in place of
 * the count the fault path had here, so its common cases stay as they were.
 */
static __attribute__((noinline, cold)) int do_nonpresent_fault(struct mmp_space *s, mmp_pte_t pte)
{
	if (is_guard_pte_marker(s, pte)) {
		count_inc(s, MMP_C_FAULT_SIGSEGV);
		return -EFAULT;
	}
	count_inc(s, MMP_C_FAULT_SPURIOUS);
	return 0;
}

/*
 * The PTE level of a fault. The table is used inside a read-side section
 * (pte_offset_map): PT_RECLAIM frees tables through RCU, so the memory stays
 * valid, and the PTL-holding paths recheck the PMD before trusting it.
 */
static __always_inline int handle_pte_fault(struct vm_fault *vmf, const enum mmp_format fmt)
{
	struct mmp_space *s = vmf->s;
	mmp_pte_t *ptes, pte;
	unsigned int f;
	int ret = 0;

	rcu_read_lock();
	vmf->pmdval = READ_ONCE(*vmf->pmdp);
	ptes = format_pte_table(fmt, s, vmf->pmdval);
	if (!ptes)
		goto out;	/* the PMD changed under us: retry the access */
	pte = format_ptep_get(fmt, s, &ptes[level_index(vmf->address, MMP_PTE)]);
	if (!pte) {
		if (likely(vma_is_anonymous(vmf->vma)))
			ret = do_anonymous_page(vmf, ptes, fmt);
		else
			ret = do_fault(vmf);
		goto out;
	}
	f = format_entry_test(fmt, pte, MMP_PTE, MMP_E_PRESENT | MMP_E_WRITE);
	if ((f & MMP_E_PRESENT) && (vmf->vma->flags & VM_SHARED) &&
	    (vmf->flags & FAULT_FLAG_WRITE) && !(f & MMP_E_WRITE))
		wp_page_shared(vmf, ptes);
	else if ((f & MMP_E_PRESENT) && (((vmf->flags & FAULT_FLAG_WRITE) && !(f & MMP_E_WRITE)) ||
				    (vmf->flags & FAULT_FLAG_UNSHARE)))
		ret = do_wp_page(vmf, ptes);
	else if (f & MMP_E_PRESENT)
		do_access_fault(vmf, ptes);	/* A/D, or spurious */
	else
		ret = do_nonpresent_fault(s, pte);	/* a guard marker, or spurious */
out:
	rcu_read_unlock();
	return ret;
}

static __always_inline int __handle_mm_fault_fmt(struct mmp_space *s, struct mmp_vma *vma,
						 uint64_t addr, unsigned int flags,
						 const enum mmp_format fmt)
{
	struct vm_fault vmf = { .s = s, .vma = vma, .address = addr, .flags = flags };
	unsigned int pf;
	int ret;

	vmf.pmdp = format_pmd_alloc(fmt, s, addr);
	if (!vmf.pmdp)
		return -ENOMEM;
	vmf.orig_pmd = READ_ONCE(*vmf.pmdp);
	if (!vmf.orig_pmd && vma_is_anonymous(vma) && vma_thp_allowed(s, vma, HPAGE_PMD_ORDER) &&
	    (addr & PMD_MASK) >= vma->start && (addr & PMD_MASK) + PMD_SIZE <= vma->end) {
		ret = do_huge_pmd_anonymous_page(&vmf);
		if (ret != VM_FAULT_FALLBACK)
			return ret;
		count_inc(s, MMP_C_FAULT_FALLBACK);
	} else if (vmf.orig_pmd && !format_entry_test(fmt, vmf.orig_pmd, MMP_PMD, MMP_E_TABLE)) {
		pf = format_entry_flags(fmt, vmf.orig_pmd, MMP_PMD);
		if (pf & MMP_E_LEAF) {
			if ((pf & MMP_E_PRESENT) && (((flags & FAULT_FLAG_WRITE) && !(pf & MMP_E_WRITE)) ||
						     (flags & FAULT_FLAG_UNSHARE))) {
				ret = do_huge_pmd_wp_page(&vmf);
				if (ret != VM_FAULT_FALLBACK)
					return ret;
			} else if ((pf & MMP_E_PRESENT) && pmd_needs_young_dirty(pf, flags)) {
				huge_pmd_set_accessed(&vmf);
				return 0;
			} else {
				count_inc(s, MMP_C_FAULT_SPURIOUS);
				return 0;
			}
		}
	}
	/*
	 * do_pte_missing: a file fault installs its PTE table only once it
	 * has a page to map (finish_fault), so one that fails leaves none.
	 */
	if (!vmf.orig_pmd && !vma_is_anonymous(vma)) {
		rcu_read_lock();
		ret = do_fault(&vmf);
		rcu_read_unlock();
		return ret;
	}
	if (pte_alloc(s, vmf.pmdp))
		return -ENOMEM;
	return handle_pte_fault(&vmf, fmt);
}

/* __handle_mm_fault_fmt() for the space's format: the fault path compiled per format. */
int __handle_mm_fault(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr, unsigned int flags)
{
	if (unlikely(is_vm_hugetlb_page(vma)))
		return hugetlb_fault(s, vma, addr, flags);
#define MMP_FORMAT(f)							\
	case MMP_FORMAT_##f: return __handle_mm_fault_fmt(s, vma, addr, flags, MMP_FORMAT_##f);
	MMP_DISPATCH_FORMAT(s->format)
#undef MMP_FORMAT
}

/*
 * The VMA holding @addr, read-locked, found without the mmap lock
 * (lock_vma_under_rcu); NULL when the mmap lock must do: no VMA found, or a
 * writer has it. Whatever the lookup found is checked again once locked.
 */
static __always_inline struct mmp_vma *__lock_vma_under_rcu(struct mmp_space *s, uint64_t addr)
{
	struct mmp_vma *vma;

retry:
	rcu_read_lock();
	if (!vma_tree_lookup_rcu(&s->vmas, addr, &vma) || !vma || !vma_start_read(s, vma))
		goto inval;
	/* The range may have changed before the VMA was locked. */
	if (unlikely(addr < READ_ONCE(vma->start) || addr >= READ_ONCE(vma->end))) {
		vma_end_read(vma);
		goto inval;
	}
	/* Removed after the lookup found it: look again. */
	if (unlikely(__atomic_load_n(&vma->detached, __ATOMIC_RELAXED))) {
		vma_end_read(vma);
		rcu_read_unlock();
		count_inc(s, MMP_C_VMA_LOCK_MISS);
		goto retry;
	}
	rcu_read_unlock();
	return vma;
inval:
	rcu_read_unlock();
	count_inc(s, MMP_C_VMA_LOCK_ABORT);
	return NULL;
}

/* The fault path has the lookup inline; madvise and PROCMAP_QUERY call this. */
struct mmp_vma *lock_vma_under_rcu(struct mmp_space *s, uint64_t addr)
{
	return __lock_vma_under_rcu(s, addr);
}

static bool vma_access_ok(struct mmp_vma *vma, unsigned int flags)
{
	return READ_ONCE(vma->flags) & ((flags & FAULT_FLAG_WRITE) ? VM_WRITE : VM_READ | VM_WRITE);
}

/* MMP_DEBUG_SKIP_VMA_LOCK: the VMA found under RCU, used with no lock at all. */
static int handle_mm_fault_unlocked(struct mmp_space *s, uint64_t addr, unsigned int flags)
{
	struct mmp_vma *vma;
	int ret = -EFAULT;

	rcu_read_lock();
	if (vma_tree_lookup_rcu(&s->vmas, addr, &vma) && vma && vma_access_ok(vma, flags)) {
		debug_point(s, MMP_DEBUG_FAULT_VMA);
		ret = __handle_mm_fault(s, vma, addr, flags);
	}
	rcu_read_unlock();
	return ret;
}

/*
 * Grow the stack @vma down to @addr (expand_downwards), mmap lock held for
 * writing: not below mmap_min_addr, not into the guard gap above an accessible
 * mapping below it, not past RLIMIT_STACK. 0 or a negative errno.
 */
int expand_downwards(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr)
{
	struct mmp_vma *prev = vma->vm_prev;
	uint64_t grow;
	int err;

	mmap_assert_write_locked(s);
	addr &= PAGE_MASK;
	if (!(vma->flags & VM_GROWSDOWN))
		return -EFAULT;
	if (addr < MMP_MMAP_MIN_ADDR)
		return -EPERM;
	if (prev && !(prev->flags & VM_GROWSDOWN) && (prev->flags & VM_ACCESS_FLAGS) &&
	    addr - prev->end < STACK_GUARD_GAP)
		return -ENOMEM;
	/* The anon_vma comes first: a growth refused below still leaves the stack one. */
	err = anon_vma_prepare(s, vma);
	if (err)
		return err;
	if (addr >= vma->start)
		return 0;
	/* acct_stack_growth: the stack's whole size against RLIMIT_STACK. */
	if (vma->end - addr > STACK_RLIMIT)
		return -ENOMEM;
	grow = (vma->start - addr) >> PAGE_SHIFT;
	vma_start_write(s, vma);
	vma->pgoff -= grow;
	vma_tree_set_range(&s->vmas, vma, addr, vma->end);
	return 0;
}

/*
 * The VMA holding @addr with the mmap read lock held (lock_mm_and_find_vma),
 * or NULL with no lock held. A fault just below a stack grows it under the
 * write lock, then goes on under the read lock it downgrades to: the stack
 * it grew cannot go meanwhile.
 */
static struct mmp_vma *lock_mm_and_find_vma(struct mmp_space *s, uint64_t addr)
{
	struct mmp_vma *vma;

	mmap_read_lock(s);
	count_inc(s, MMP_C_MMAP_LOCK_FAULT);
	vma = vma_find_next(s, addr);
	if (likely(vma && vma->start <= addr))
		return vma;
	/* Read under the lock: once it is dropped, an munmap may free the VMA. */
	if (!vma || !(vma->flags & VM_GROWSDOWN)) {
		mmap_read_unlock(s);
		return NULL;
	}
	/* No upgrade of a read lock: drop it, take the write lock, look again. */
	mmap_read_unlock(s);
	mmap_write_lock(s);
	vma = vma_find_next(s, addr);
	if (!vma || (vma->start > addr && expand_downwards(s, vma, addr))) {
		mmap_write_unlock(s);
		return NULL;
	}
	mmap_write_downgrade(s);
	return vma;
}

/*
 * A user access faulted at @addr: resolve it or say why not (SIGSEGV, OOM).
 * As the architectures' fault handlers: under the VMA's own lock first, then
 * under the mmap read lock when that lock could not be had or did not do.
 */
/*
 * The fault itself, under the VMA's lock or the mmap lock (the arch fault
 * handler's part: lock_vma_under_rcu, then lock_mm_and_find_vma).
 */
static int do_user_fault(struct mmp_space *s, uint64_t addr, unsigned int flags)
{
	struct mmp_vma *vma;
	int ret;

	if (unlikely(READ_ONCE(s->debug[MMP_DEBUG_SKIP_VMA_LOCK]))) {
		ret = handle_mm_fault_unlocked(s, addr, flags);
		if (ret != -EFAULT)
			return ret;
	}
	if (READ_ONCE(s->opts[MMP_OPT_PER_VMA_LOCK])) {
		vma = __lock_vma_under_rcu(s, addr);
		if (vma) {
			if (!vma_access_ok(vma, flags)) {
				vma_end_read(vma);
				count_inc(s, MMP_C_VMA_LOCK_SUCCESS);
				count_inc(s, MMP_C_FAULT_SIGSEGV);
				return -EFAULT;
			}
			debug_point(s, MMP_DEBUG_FAULT_VMA);
			ret = __handle_mm_fault(s, vma, addr, flags | FAULT_FLAG_VMA_LOCK);
			vma_end_read(vma);
			if (ret != VM_FAULT_RETRY) {
				count_inc(s, MMP_C_VMA_LOCK_SUCCESS);
				return ret;
			}
			count_inc(s, MMP_C_VMA_LOCK_RETRY);
		}
	}
	vma = lock_mm_and_find_vma(s, addr);
	if (!vma || !vma_access_ok(vma, flags)) {
		if (vma)
			mmap_read_unlock(s);
		count_inc(s, MMP_C_FAULT_SIGSEGV);
		return -EFAULT;
	}
	ret = __handle_mm_fault(s, vma, addr, flags);
	mmap_read_unlock(s);
	return ret;
}

int handle_mm_fault(struct mmp_space *s, uint64_t addr, unsigned int flags)
{
	int ret = do_user_fault(s, addr, flags);

	mm_account_fault(s, ret);
	return ret;
}

/* ---- zap ---------------------------------------------------------------------------- */

/*
 * Unmap @nr entries from @ptep mapping pages of anonymous folio @head from
 * @page on (zap_present_folio_ptes): clear them, queue their flush and the
 * folio's references. Inlined with a constant 1 for a small folio, as the
 * kernel's zap_present_ptes() calls it, so that case has no loops.
 */
static __always_inline void zap_present_folio_ptes(struct mmp_gather *tlb, uint64_t addr,
						   mmp_pte_t *ptep, struct mmp_page *head,
						   uint32_t head_pfn, struct mmp_page *page,
						   unsigned int nr, const enum mmp_format fmt)
{
	format_clear_full_ptes(fmt, tlb->s, addr, ptep, nr, tlb->fullmm);
	tlb_remove_tlb_entries(tlb, addr, (uint64_t)nr * PAGE_SIZE);
	folio_remove_rmap_ptes(tlb->s, head, page, nr);
	tlb_remove_folio_pages(tlb, head_pfn, nr);
}

/*
 * The same for a page-cache folio, out of line: the entries' dirty bit goes
 * to the folio (folio_mark_dirty), whose data must reach the file before
 * reclaim may drop it. Returns the entries zapped.
 */
static __attribute__((noinline)) unsigned int
zap_file_folio_ptes(struct mmp_gather *tlb, uint64_t addr, mmp_pte_t *ptep, mmp_pte_t pte,
		    struct mmp_page *head, uint32_t head_pfn, struct mmp_page *page,
		    unsigned int max_nr, int64_t *rss)
{
	struct mmp_space *s = tlb->s;
	unsigned int nr = 1;

	if (head->order && pte_batching(s))
		nr = folio_pte_batch(s, ptep, pte, max_nr);
	pte = get_and_clear_full_ptes(s, addr, ptep, nr, tlb->fullmm);
	if (entry_test(s, pte, MMP_PTE, MMP_E_DIRTY))
		page_flag_set(head, PG_dirty);
	tlb_remove_tlb_entries(tlb, addr, (uint64_t)nr * PAGE_SIZE);
	folio_remove_rmap_ptes(tlb->s, head, page, nr);
	tlb_remove_folio_pages(tlb, head_pfn, nr);
	rss[mm_counter(head)] -= nr;
	return nr;
}

/*
 * A swap PTE, which here is a PTE marker (zap_nonpresent_ptes): only munmap
 * and exit drop it (ZAP_FLAG_DROP_MARKER). Out of line, off the loop's path.
 * True when it was cleared.
 */
static __attribute__((noinline, cold)) bool zap_nonpresent_pte(struct mmp_gather *tlb,
								uint64_t addr, mmp_pte_t *ptep)
{
	if (!tlb->drop_markers)
		return false;
	ptep_get_and_clear(tlb->s, addr, ptep);
	return true;
}

/*
 * Zap [addr, end) of the PTE table under @pmdp (zap_pte_range). Entries of a
 * large folio go in batches (zap_present_folio_ptes): one clear_full_ptes, one
 * rmap update and one gather entry per batch. With @reclaim (MADV_DONTNEED of
 * the whole table) the emptied table is freed too (PT_RECLAIM). Only the
 * @careful copy handles PTE markers and a truncation's kept anonymous copies
 * (keep_anon); the other returns false, doing nothing, when it finds under the
 * table lock that the space has had a guard installed since the caller looked.
 */
static __always_inline bool zap_pte_range_fmt(struct mmp_gather *tlb, mmp_pte_t *pmdp,
					      uint64_t addr, uint64_t end, bool reclaim,
					      const enum mmp_format fmt, const bool careful)
{
	struct mmp_space *s = tlb->s;
	uint64_t start = addr;
	mmp_spinlock_t *ptl;
	mmp_pte_t *ptes, *ptep;
	bool batch = pte_batching(s);
	int64_t rss = 0, rss_file[NR_MM_COUNTERS] = { 0 };
	unsigned int nr;
	uint32_t freed;

	rcu_read_lock();
	ptes = pte_offset_map_lock(s, pmdp, &ptl);
	if (!ptes) {
		rcu_read_unlock();
		return true;
	}
	/*
	 * Guard install sets the flag before it takes a table lock, so a marker
	 * in this table means the flag shows now that we hold its lock.
	 */
	if (!careful && unlikely(READ_ONCE(s->has_pte_markers))) {
		spin_unlock(ptl);
		rcu_read_unlock();
		return false;
	}
	ptep = &ptes[level_index(addr, MMP_PTE)];
	for (; addr < end; addr += nr * PAGE_SIZE, ptep += nr) {
		mmp_pte_t pte = format_ptep_get(fmt, s, ptep);
		uint64_t pfn;
		uint32_t head_pfn;
		struct mmp_page *head, *page;

		nr = 1;
		if (!pte)
			continue;
		if (careful && format_is_swap_pte(fmt, pte)) {
			if (!zap_nonpresent_pte(tlb, addr, ptep))
				reclaim = false;	/* an entry left: the table stays */
			continue;
		}
		if (format_entry_test(fmt, pte, MMP_PTE, MMP_E_SPECIAL)) {
			format_clear_full_ptes(fmt, s, addr, ptep, 1, tlb->fullmm);
			tlb_remove_tlb_entries(tlb, addr, PAGE_SIZE);
			continue;
		}
		pfn = format_entry_pfn(fmt, pte, MMP_PTE);
		page = pfn_to_page(s->phys, pfn);
		head = page;		/* page_folio() */
		head_pfn = pfn;
		if (unlikely(page->flags & PG_tail)) {
			head_pfn = page->tail.head;
			head = pfn_to_page(s->phys, head_pfn);
		}
		if (unlikely(!(head->flags & PG_anon))) {
			nr = zap_file_folio_ptes(tlb, addr, ptep, pte, head, head_pfn, page,
						 (end - addr) >> PAGE_SHIFT, rss_file);
			continue;
		}
		if (careful && unlikely(tlb->keep_anon)) {
			reclaim = false;	/* an entry left: the table stays */
			continue;
		}
		if (head->order && batch) {
			nr = folio_pte_batch(s, ptep, pte, (end - addr) >> PAGE_SHIFT);
			zap_present_folio_ptes(tlb, addr, ptep, head, head_pfn, page, nr, fmt);
		} else {
			zap_present_folio_ptes(tlb, addr, ptep, head, head_pfn, page, 1, fmt);
		}
		rss -= nr;
	}
	/* Like add_mm_rss_vec: one update per table, not per entry. */
	rss_add(s, rss);
	if (unlikely(rss_file[MM_FILEPAGES] | rss_file[MM_SHMEMPAGES])) {
		add_mm_counter(s, MM_FILEPAGES, rss_file[MM_FILEPAGES]);
		add_mm_counter(s, MM_SHMEMPAGES, rss_file[MM_SHMEMPAGES]);
	}
	freed = reclaim ? try_to_free_pte_fast(s, pmdp, ptes) : NO_PFN;
	spin_unlock(ptl);
	/* Still in the read-side section: the slow path may touch the table's PTL. */
	if (reclaim && freed == NO_PFN)
		freed = try_to_free_pte_slow(s, pmdp, ptes);
	rcu_read_unlock();
	if (freed != NO_PFN)
		tlb_remove_table(tlb, freed, start, start + PMD_SIZE);
	return true;
}

/*
 * zap_pte_range_fmt() for the space's format: a copy per format, no dispatch
 * per entry; and a careful copy, for a space that ever had a guard installed
 * (or its forks) and for a truncation that keeps private copies, so that the
 * others' loop pays nothing for either.
 */
static void zap_pte_range(struct mmp_gather *tlb, mmp_pte_t *pmdp, uint64_t addr, uint64_t end,
			  bool reclaim)
{
	bool done = false;

	if (likely(!READ_ONCE(tlb->s->has_pte_markers) && !tlb->keep_anon)) {
#define MMP_FORMAT(f)							\
	case MMP_FORMAT_##f:						\
		done = zap_pte_range_fmt(tlb, pmdp, addr, end, reclaim, MMP_FORMAT_##f, false); \
		break;
		MMP_DISPATCH_FORMAT(tlb->s->format)
#undef MMP_FORMAT
		if (done)
			return;
	}
#define MMP_FORMAT(f)							\
	case MMP_FORMAT_##f:						\
		zap_pte_range_fmt(tlb, pmdp, addr, end, reclaim, MMP_FORMAT_##f, true); \
		return;
	MMP_DISPATCH_FORMAT(tlb->s->format)
#undef MMP_FORMAT
}

static int zap_pmd(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t addr, uint64_t end, void *arg)
{
	struct mmp_gather *tlb = arg;
	mmp_pte_t pmd = READ_ONCE(*pmdp);
	unsigned int f = entry_test(s, pmd, MMP_PMD, MMP_E_LEAF);
	bool whole = addr == (addr & PMD_MASK) && end - addr == PMD_SIZE;

	if (!pmd)
		return 0;
	if (f & MMP_E_LEAF) {
		/* A private copy stays when only the page cache goes (keep_anon). */
		if (unlikely(tlb->keep_anon) &&
		    (pfn_to_page(s->phys, entry_pfn(s, pmd, MMP_PMD))->flags & PG_anon))
			return 0;
		if (whole) {
			if (zap_huge_pmd(tlb, pmdp, addr))
				return 0;
		} else {
			split_huge_pmd(s, pmdp, addr & PMD_MASK);
		}
	}
	zap_pte_range(tlb, pmdp, addr, end, whole && tlb->reclaim_pt);
	return 0;
}

void unmap_page_range(struct mmp_gather *tlb, uint64_t start, uint64_t end)
{
	walk_pmd_range(tlb->s, start, end, zap_pmd, tlb);
	tlb_end_vma(tlb);
}

/* Zap [start, end) of @vma, the hugetlb way for a hugetlb VMA (unmap_single_vma). */
void unmap_single_vma(struct mmp_gather *tlb, struct mmp_vma *vma, uint64_t start, uint64_t end)
{
	if (unlikely(is_vm_hugetlb_page(vma))) {
		unmap_hugepage_range(tlb, vma, start, end, NO_PFN);
		tlb_end_vma(tlb);
		return;
	}
	unmap_page_range(tlb, start, end);
}

/* Free the tables below [start, end) that no VMA left needs. */
static void free_region_tables(struct mmp_gather *tlb, uint64_t start, uint64_t end)
{
	struct mmp_space *s = tlb->s;
	struct mmp_vma *next = vma_find_next(s, start);
	struct mmp_vma *prev = next ? next->vm_prev : s->vmas.last;

	free_pgtables(tlb, start, end, prev ? prev->end : 0, next ? next->start : USER_TOP(s));
}

/* Zap [start, end) and free the tables no VMA needs any more; the VMAs are gone already. */
void unmap_region(struct mmp_space *s, uint64_t start, uint64_t end)
{
	struct mmp_gather tlb;

	update_hiwater_rss(s);
	tlb_gather_mmu(&tlb, s, false);
	unmap_page_range(&tlb, start, end);
	free_region_tables(&tlb, start, end);
	tlb_finish_mmu(&tlb);
}

/*
 * munmap's order (vms_complete_munmap_vmas): the VMAs of [start, end), whole
 * ones, are write-locked so no fault maps into them, then zapped while a
 * file VMA is still in its i_mmap (truncation and reclaim find its entries
 * there until they are gone), then removed, then their tables freed.
 */
void unmap_vmas_and_remove(struct mmp_space *s, uint64_t start, uint64_t end)
{
	struct mmp_gather tlb;

	for (struct mmp_vma *vma = find_vma_intersection(s, start, end); vma && vma->start < end;
	     vma = vma->vm_next)
		vma_start_write(s, vma);
	bool hugetlb = false;

	update_hiwater_rss(s);
	tlb_gather_mmu(&tlb, s, false);
	/* unmap_vmas: VMA by VMA, each ending in tlb_end_vma. */
	for (struct mmp_vma *vma = find_vma_intersection(s, start, end); vma && vma->start < end;
	     vma = vma->vm_next) {
		unmap_single_vma(&tlb, vma, MAX(start, vma->start), MIN(end, vma->end));
		hugetlb |= is_vm_hugetlb_page(vma);
	}
	/*
	 * Huge pages go back to their pool before the VMAs close and give back
	 * their reservations, as the kernel's tlb_finish_mmu comes before
	 * remove_vma: what a freed page restores, the close then finds.
	 */
	if (unlikely(hugetlb))
		tlb_flush_mmu(&tlb);
	vma_remove_range(s, start, end);
	free_region_tables(&tlb, start, end);
	tlb_finish_mmu(&tlb);
}
