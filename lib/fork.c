/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fork: duplicate the VMAs and share every anonymous folio copy-on-write
 * (dup_mmap, copy_page_range). Writable entries become read-only on both
 * sides, the child's entries are old, and PG_anon_exclusive is cleared so the
 * next write on either side copies. An exclusive page of a pinned folio is not
 * shared: the child gets its own copy now, so the pin keeps seeing the page
 * the parent writes (folio_try_dup_anon_rmap refusing, copy_present_page).
 */
#include <string.h>

#include "mm.h"
#include "mmap_lock.h"

struct copy_ctx {
	struct mmp_space *dst;
	struct mmp_vma *dst_vma;
	bool shared;	/* the VMA is VM_SHARED: no copy-on-write */
};

/* May the pages be DMA-pinned? Then an exclusive one cannot become shared. */
static bool folio_maybe_dma_pinned(struct mmp_page *head)
{
	return __atomic_load_n(&head->pincount, __ATOMIC_RELAXED) > 0;
}

/* copy_present_page: the child's own copy of @pfn, mapped writable as a new folio. 0 on ENOMEM. */
static unsigned int copy_present_page(struct mmp_space *dst, struct mmp_vma *dst_vma,
				      mmp_pte_t *dst_ptep, uint64_t addr, uint64_t pfn,
				      unsigned int f)
{
	uint32_t new_pfn = folio_alloc_anon(dst, 0);

	if (new_pfn == NO_PFN)
		return 0;
	dst->copy->copy_page(pfn_to_virt(dst->phys, new_pfn), pfn_to_virt(dst->phys, pfn));
	count_inc(dst, MMP_C_SUBPAGE_COPY);
	folio_add_new_anon_rmap(pfn_to_page(dst->phys, new_pfn), dst_vma, addr, 1, false);
	rss_add(dst, 1);
	f |= MMP_E_DIRTY | (dst_vma->flags & VM_WRITE ? MMP_E_WRITE : 0);
	set_ptes(dst, addr, dst_ptep, mk_entry(dst, new_pfn, f, MMP_PTE), 1);
	return 1;
}

/*
 * Share the present entries at @src_ptep with the child (copy_present_ptes):
 * a batch of one large folio takes its references and mapcounts at once and is
 * write-protected with one wrprotect_ptes. Returns the entries handled.
 */
static unsigned int copy_present_ptes(struct copy_ctx *c, struct mmp_space *src,
				      mmp_pte_t *dst_ptep, mmp_pte_t *src_ptep, mmp_pte_t pte,
				      uint64_t addr, unsigned int max_nr, int64_t *rss)
{
	struct mmp_space *dst = c->dst;
	unsigned int f = entry_flags(src, pte, MMP_PTE), nr = 1;
	uint64_t pfn = entry_pfn(src, pte, MMP_PTE);

	if (!(f & MMP_E_SPECIAL)) {
		struct mmp_page *page = pfn_to_page(src->phys, pfn);
		struct mmp_page *head = pfn_to_page(src->phys, folio_pfn(src->phys, pfn));

		if (folio_maybe_dma_pinned(head) && page_flag_test(page, PG_anon_exclusive))
			return copy_present_page(dst, c->dst_vma, dst_ptep, addr, pfn,
						 f & ~(MMP_E_ACCESSED | MMP_E_CONT | MMP_E_SOFT_DIRTY));
		if (head->order && pte_batching(src) && !folio_maybe_dma_pinned(head)) {
			/* Private mapping: dirty must match; write is merged (and then dropped). */
			nr = folio_pte_batch_flags(src, src_ptep, &pte, max_nr,
						   FPB_MERGE_WRITE | FPB_RESPECT_DIRTY);
			f = entry_flags(src, pte, MMP_PTE);
		}
		folio_ref_add(head, nr);
		folio_add_rmap_ptes(dst, head, page, nr);
		for (unsigned int i = 0; i < nr; i++)
			page_flag_clear(page + i, PG_anon_exclusive);
		rss[mm_counter(head)] += nr;
		if (c->shared) {
			/* A shared mapping stays writable; the child's entries start clean. */
			f &= ~MMP_E_DIRTY;
		} else if (f & MMP_E_WRITE) {
			wrprotect_ptes(src, addr, src_ptep, nr);
			f &= ~MMP_E_WRITE;
		}
	}
	/* The child's entries are old, and read-only where the parent's now are. */
	set_ptes(dst, addr, dst_ptep,
			    mk_entry(dst, pfn, f & ~(MMP_E_ACCESSED | MMP_E_CONT), MMP_PTE), nr);
	return nr;
}

/* copy_nonpresent_pte: a guard marker is copied as it is. Out of line, off the loop's path. */
static __attribute__((noinline, cold)) void copy_nonpresent_pte(struct mmp_space *src,
								 struct mmp_space *dst,
								 mmp_pte_t *dst_ptep, mmp_pte_t pte)
{
	if (!is_guard_pte_marker(src, pte))
		return;
	__atomic_store_n(dst_ptep, make_pte_marker(dst, PTE_MARKER_GUARD), __ATOMIC_RELEASE);
	count_inc(dst, MMP_C_PTE_WRITE);
}

static int copy_pte_range(struct copy_ctx *c, struct mmp_space *src, mmp_pte_t *dst_pmdp,
			  mmp_pte_t *src_ptes, uint64_t addr, uint64_t end)
{
	struct mmp_space *dst = c->dst;
	mmp_pte_t *dst_ptes, *src_ptep = &src_ptes[level_index(addr, MMP_PTE)], *dst_ptep;
	mmp_spinlock_t *src_ptl = pte_lockptr(src, src_ptes), *dst_ptl;
	int64_t rss[NR_MM_COUNTERS] = { 0 };
	unsigned int nr;
	int err = 0;
	bool markers = READ_ONCE(src->has_pte_markers);

	if (pte_alloc(dst, dst_pmdp))
		return -ENOMEM;
	dst_ptes = pte_table(dst, READ_ONCE(*dst_pmdp));
	dst_ptl = pte_lockptr(dst, dst_ptes);
	dst_ptep = &dst_ptes[level_index(addr, MMP_PTE)];

	spin_lock(src_ptl);
	spin_lock(dst_ptl);
	for (; addr < end; addr += nr * PAGE_SIZE, src_ptep += nr, dst_ptep += nr) {
		mmp_pte_t pte = ptep_get(src, src_ptep);

		nr = 1;
		if (unlikely(markers) && is_swap_pte(src, pte)) {
			copy_nonpresent_pte(src, dst, dst_ptep, pte);
		} else if (pte) {
			nr = copy_present_ptes(c, src, dst_ptep, src_ptep, pte, addr,
					       (end - addr) >> PAGE_SHIFT, rss);
		}
		if (!nr) {
			err = -ENOMEM;
			break;
		}
	}
	spin_unlock(dst_ptl);
	spin_unlock(src_ptl);
	/* add_mm_rss_vec: one update per table. */
	rss_add(dst, rss[MM_ANONPAGES]);
	if (unlikely(rss[MM_FILEPAGES] | rss[MM_SHMEMPAGES])) {
		add_mm_counter(dst, MM_FILEPAGES, rss[MM_FILEPAGES]);
		add_mm_counter(dst, MM_SHMEMPAGES, rss[MM_SHMEMPAGES]);
	}
	return err;
}

static int copy_pmd(struct mmp_space *src, mmp_pte_t *src_pmdp, uint64_t addr, uint64_t end,
		    void *arg)
{
	struct copy_ctx *c = arg;
	mmp_pte_t pmd = READ_ONCE(*src_pmdp), *dst_pmdp;

	/*
	 * copy_pmd_range: the child gets a PMD table wherever the parent has
	 * one in the VMA, even one whose entries are all none (a fault that
	 * failed after pmd_alloc leaves such a table behind).
	 */
	dst_pmdp = pmd_alloc(c->dst, addr);
	if (!dst_pmdp)
		return -ENOMEM;
	if (!pmd)
		return 0;
	if (entry_test(src, pmd, MMP_PMD, MMP_E_LEAF)) {
		struct mmp_page *head = pfn_to_page(src->phys, entry_pfn(src, pmd, MMP_PMD));

		if (!entry_test(src, pmd, MMP_PMD, MMP_E_SPECIAL) &&
		    folio_maybe_dma_pinned(head) && page_flag_test(head, PG_anon_exclusive)) {
			/* A pinned THP cannot be shared: split, and copy its pages one by one. */
			split_huge_pmd(src, src_pmdp, addr & PMD_MASK);
			pmd = READ_ONCE(*src_pmdp);
		} else {
			return copy_huge_pmd(c->dst, src, dst_pmdp, src_pmdp, addr);
		}
	}
	return copy_pte_range(c, src, dst_pmdp, pte_table(src, pmd), addr, end);
}

/*
 * copy_page_range: share one VMA's pages with the child. Every mapping is
 * private, so copy-on-write: the parent's writable entries are write-protected
 * after each page was checked for pins. GUP-fast takes pins with no lock, so a
 * pin could land between the check and the write-protect, and the parent's
 * next write would copy away from the pinned page. mm->write_protect_seq is
 * odd over the whole copy: GUP-fast pins nothing while it is, and gives back
 * what it pinned if the count moved (the mmap lock, held for writing here,
 * keeps the locked GUP out).
 */
static int copy_page_range(struct copy_ctx *c, struct mmp_space *src, struct mmp_vma *src_vma)
{
	int err;

	raw_write_seqcount_begin(&src->write_protect_seq);
	/*
	 * Store-buffer pairing with GUP-fast, which stores its pin, then reads
	 * the count: we store the count, then read the pins. With a full barrier
	 * on both sides, either we see its pin or it sees the odd count.
	 */
	smp_mb();
	err = walk_pmd_range(src, src_vma->start, src_vma->end, copy_pmd, c);
	raw_write_seqcount_end(&src->write_protect_seq);
	return err;
}

MMP_EXPORT int mmp_fork(struct mmp_space *parent, struct mmp_space **childp)
{
	struct mmp_space *child;
	struct copy_ctx c;
	int err;

	if (!parent || !childp)
		return -EINVAL;
	err = space_alloc(parent->phys, parent->arch, &child);
	if (err)
		return err;
	mmap_write_lock(parent);
	child->copy = parent->copy;
	child->tlb_entries = parent->tlb_entries;
	child->tlb_ways = parent->tlb_ways;
	memcpy(child->opts, parent->opts, sizeof(child->opts));
	child->release_rules = parent->release_rules;
	child->thp_orders_always = parent->thp_orders_always;
	child->thp_orders_madvise = parent->thp_orders_madvise;
	child->mmap_base = parent->mmap_base;
	child->start_brk = parent->start_brk;
	child->has_pte_markers = parent->has_pte_markers;
	child->madvise_may_refuse = parent->madvise_may_refuse;	/* seals are inherited */
	child->merge_any = parent->merge_any;
	child->thp_disable = parent->thp_disable;
	child->brk = parent->brk;
	c.dst = child;
	/* For the TLB sanitizer only: CPUs may use stale writable entries until the flush. */
	inc_tlb_flush_pending(parent);
	for (struct mmp_vma *v = parent->vmas.first; v && !err; v = v->vm_next) {
		struct anon_vma *av = NULL;

		/* dup_mmap: no fault may map into a VMA whose entries are being write-protected. */
		vma_start_write(parent, v);
		/* MADV_DONTFORK: the child has a hole there. */
		if (v->flags & VM_DONTCOPY)
			continue;
		/* anon_vma_fork: a new anon_vma whose lineage holds the parent's. */
		if (v->anon_vma && !(v->flags & VM_WIPEONFORK)) {	/* wiped: the child starts empty */
			av = anon_vma_alloc(v->anon_vma);
			if (!av) {
				err = -ENOMEM;
				break;
			}
		}
		/* dup_mmap: locks are not inherited (a seal is); nor is MCL_FUTURE (def_flags). */
		err = vma_insert(child, v->start, v->end, v->flags & ~VM_LOCKED_MASK, v->pgoff, av,
				 v->vm_file);
		anon_vma_put(av);	/* the child's VMA holds it now */
		/* A hugetlb VMA's reserve map stays the parent's (hugetlb_dup_vma_private). */
		/*
		 * vma_needs_copy: a VMA with no anon_vma maps nothing but zero
		 * pages and page-cache pages (every shared mapping is such), which
		 * the child's own faults find as well, unless it may hold guard
		 * markers: before 6.19 guard install gave it an anon_vma, from
		 * 6.19 VM_MAYBE_GUARD says so. A VM_WIPEONFORK VMA starts empty.
		 */
		if (err || (v->flags & VM_WIPEONFORK) || (!av && !(v->flags & VM_MAYBE_GUARD)))
			continue;
		c.dst_vma = child->vmas.last;
		c.shared = v->flags & VM_SHARED;
		if (unlikely(is_vm_hugetlb_page(v)))
			err = copy_hugetlb_page_range(child, parent, v);
		else
			err = copy_page_range(&c, parent, v);
	}
	/* The parent's entries were write-protected: flush its TLBs (dup_mmap). */
	flush_tlb_mm(parent);
	dec_tlb_flush_pending(parent);
	WRITE_ONCE(parent->last_op, "mmp_fork");
	mmap_write_unlock(parent);
	/* The child's VMAs were born write-locked: the child is nobody's to fault yet. */
	__atomic_store_n(&child->mm_lock_seq, child->mm_lock_seq + 1, __ATOMIC_RELEASE);
	space_link(child);
	if (err) {
		mmp_space_destroy(child);
		return err;
	}
	*childp = child;
	return 0;
}
