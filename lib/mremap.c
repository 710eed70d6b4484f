/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mremap: shrink, grow in place, or move a mapping with its page tables.
 * move_page_tables() moves whole huge PMDs and whole PTE tables where both
 * ends are PMD aligned, and otherwise move_ptes() moves entries, batching the
 * PTEs of a large folio when the architecture maps them contiguously.
 */
#include "mm.h"
#include "mmap_lock.h"
#include "vma_tree.h"

#define MREMAP_ALL (MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED | MMP_MREMAP_DONTUNMAP)

/*
 * How many entries from @ptep move together (mremap_folio_pte_batch): none
 * where the architecture has no contiguous mappings (pte_batch_hint() == 1:
 * x86 and riscv gain nothing and pay a cold folio lookup), and the write bit
 * must match so set_ptes() cannot spread it.
 */
static unsigned int mremap_folio_pte_batch(struct mmp_space *s, mmp_pte_t *ptep, mmp_pte_t pte,
					   unsigned int max_nr)
{
	uint64_t pfn;

	if (max_nr == 1 || !pte_batching(s) || pte_batch_hint(s, ptep, pte) == 1)
		return 1;
	if (entry_test(s, pte, MMP_PTE, MMP_E_SPECIAL))
		return 1;
	pfn = entry_pfn(s, pte, MMP_PTE);
	if (!pfn_to_page(s->phys, folio_pfn(s->phys, pfn))->order)
		return 1;
	return folio_pte_batch_flags(s, ptep, &pte, max_nr, FPB_RESPECT_WRITE);
}

/*
 * A PTE marker goes to the new place unchanged. (x86 would set its swap
 * soft-dirty bit, move_soft_dirty_pte; the library has no soft-dirty
 * tracking for swap entries, and the 6.18 host reads none back.)
 */
static __attribute__((noinline, cold)) void set_pte_marker_moved(struct mmp_space *s, uint64_t old_addr, mmp_pte_t *old_ptep,
				 mmp_pte_t *new_ptep)
{
	mmp_pte_t pte = ptep_get_and_clear(s, old_addr, old_ptep);

	__atomic_store_n(new_ptep, pte, __ATOMIC_RELEASE);
	count_inc(s, MMP_C_PTE_WRITE);
	count_inc(s, MMP_C_MOVE_PTES);
}

/*
 * Move the entries of [old_addr, old_end) to @new_addr, both within one PTE
 * table each (move_ptes). Both PTLs are held, the new one nested, and the old
 * range is flushed before either is dropped: the old PTL keeps reclaim away,
 * the new one keeps the page valid until no TLB maps it at the old address.
 */
static void move_ptes(struct mmp_space *s, mmp_pte_t *old_ptes, uint64_t old_addr,
		      uint64_t old_end, mmp_pte_t *new_ptes, uint64_t new_addr)
{
	mmp_spinlock_t *old_ptl = pte_lockptr(s, old_ptes), *new_ptl = pte_lockptr(s, new_ptes);
	mmp_pte_t *old_ptep = &old_ptes[level_index(old_addr, MMP_PTE)];
	mmp_pte_t *new_ptep = &new_ptes[level_index(new_addr, MMP_PTE)];
	uint64_t start = old_addr;
	uint64_t gets = count_this_thread(s, MMP_C_PTEP_GET);
	uint64_t reads = count_this_thread(s, MMP_C_PTE_READ);
	bool force_flush = false, markers = READ_ONCE(s->has_pte_markers);
	unsigned int nr;

	spin_lock(old_ptl);
	if (new_ptl != old_ptl)
		spin_lock(new_ptl);
	inc_tlb_flush_pending(s);
	for (; old_addr < old_end; old_addr += nr * PAGE_SIZE, new_addr += nr * PAGE_SIZE,
				   old_ptep += nr, new_ptep += nr) {
		mmp_pte_t pte = ptep_get(s, old_ptep);

		nr = 1;
		if (!pte)
			continue;
		if (unlikely(markers) && is_swap_pte(s, pte)) {
			/* A guard marker moves as it is: not present, nothing to flush. */
			set_pte_marker_moved(s, old_addr, old_ptep, new_ptep);
			continue;
		}
		nr = mremap_folio_pte_batch(s, old_ptep, pte, (old_end - old_addr) >> PAGE_SHIFT);
		force_flush = true;
		pte = get_and_clear_full_ptes(s, old_addr, old_ptep, nr, 0);
		/* move_soft_dirty_pte: the new location counts as written. */
		if (mm_soft_dirty(s))
			pte = entry_set_flags(s, pte, MMP_PTE, MMP_E_SOFT_DIRTY, MMP_E_CONT);
		set_ptes(s, new_addr, new_ptep, pte, nr);
		count_add(s, MMP_C_MOVE_PTES, nr);
	}
	count_add(s, MMP_C_MOVE_PTES_PTEP_GET, count_this_thread(s, MMP_C_PTEP_GET) - gets);
	count_add(s, MMP_C_MOVE_PTES_READ, count_this_thread(s, MMP_C_PTE_READ) - reads);
	if (force_flush)
		flush_tlb_range(s, start, old_end, PAGE_SHIFT);
	dec_tlb_flush_pending(s);
	if (new_ptl != old_ptl)
		spin_unlock(new_ptl);
	spin_unlock(old_ptl);
}

/*
 * Move a whole PMD entry, a PTE table or a huge PMD with its deposited table
 * (move_normal_pmd, move_huge_pmd). Only into an empty PMD slot.
 */
static bool move_pmd(struct mmp_space *s, mmp_pte_t *old_pmdp, uint64_t old_addr,
		     mmp_pte_t *new_pmdp)
{
	mmp_pte_t pmd;
	bool leaf;

	spin_lock(&s->page_table_lock);
	if (READ_ONCE(*new_pmdp)) {
		spin_unlock(&s->page_table_lock);
		return false;
	}
	inc_tlb_flush_pending(s);
	pmd = __atomic_exchange_n(old_pmdp, 0, __ATOMIC_ACQ_REL);
	count_inc(s, MMP_C_PMD_READ);
	leaf = entry_test(s, pmd, MMP_PMD, MMP_E_LEAF);
	if (leaf)
		pgtable_trans_huge_deposit(s, new_pmdp, pgtable_trans_huge_withdraw(s, old_pmdp));
	__atomic_store_n(new_pmdp, pmd, __ATOMIC_RELEASE);
	count_add(s, MMP_C_PMD_WRITE, 2);
	/* flush_pmd_tlb_range for a huge PMD; a moved table needs every page flushed. */
	flush_tlb_range(s, old_addr, old_addr + PMD_SIZE, leaf ? PMD_SHIFT : PAGE_SHIFT);
	dec_tlb_flush_pending(s);
	spin_unlock(&s->page_table_lock);
	count_inc(s, MMP_C_MOVE_PMD);
	return true;
}

/* Move the tables of [old_addr, old_addr + len) to @new_addr; -ENOMEM leaves a prefix moved. */
static int move_page_tables(struct mmp_space *s, uint64_t old_addr, uint64_t new_addr,
			    uint64_t len, uint64_t *moved)
{
	uint64_t old_end = old_addr + len, start = old_addr;

	for (; old_addr < old_end; ) {
		uint64_t extent = MIN(level_addr_end(old_addr, old_end, MMP_PMD) - old_addr,
				      level_addr_end(new_addr, new_addr + (old_end - old_addr),
						     MMP_PMD) - new_addr);
		mmp_pte_t *old_pmdp = pmd_offset(s, old_addr), *new_pmdp, pmd;

		if (!old_pmdp || !(pmd = READ_ONCE(*old_pmdp)))
			goto next;
		new_pmdp = pmd_alloc(s, new_addr);
		if (!new_pmdp)
			break;
		if (extent == PMD_SIZE && move_pmd(s, old_pmdp, old_addr, new_pmdp))
			goto next;
		if (entry_test(s, pmd, MMP_PMD, MMP_E_LEAF))
			split_huge_pmd(s, old_pmdp, old_addr & PMD_MASK);
		if (pte_alloc(s, new_pmdp))
			break;
		if (pte_table(s, READ_ONCE(*old_pmdp)))
			move_ptes(s, pte_table(s, READ_ONCE(*old_pmdp)), old_addr, old_addr + extent,
				  pte_table(s, READ_ONCE(*new_pmdp)), new_addr);
next:
		old_addr += extent;
		new_addr += extent;
	}
	*moved = old_addr - start;
	return old_addr < old_end ? -ENOMEM : 0;
}

/*
 * Move [addr, addr + old_len) of the VMA holding @addr to @new_addr with
 * @new_len (move_vma). The destination range is free. With DONTUNMAP the old
 * VMA stays, empty. On -ENOMEM what moved is moved back.
 */
static int move_vma(struct mmp_space *s, uint64_t addr, uint64_t old_len, uint64_t new_len,
		    uint64_t new_addr, int flags)
{
	struct mmp_vma *vma = find_vma(s, addr);
	unsigned long vm_flags = vma->flags;
	/* The moved range keeps its page index and anon_vma, so the rmap still finds it... */
	uint64_t pgoff = linear_page_index(vma, addr), moved, back;
	bool whole = vma->start == addr && vma->end == addr + old_len;
	int err;

	/*
	 * ...unless it was never faulted: then it takes the new address's, so it
	 * can merge (copy_vma). A file's page index is its offset: it stays.
	 */
	if (!vma->anon_vma && vma_is_anonymous(vma))
		pgoff = new_addr >> PAGE_SHIFT;
	/* prep_move_vma: the unmap of the source may split it in three; refuse early. */
	if (s->vmas.nr >= MMP_MAX_MAP_COUNT - 3)
		return -ENOMEM;
	/* The moved range's VMA: no fault may map into it while its tables move. */
	vma_start_write(s, vma);
	err = vma_insert(s, new_addr, new_addr + new_len, vm_flags, pgoff, vma->anon_vma,
			 vma->vm_file);
	if (err)
		return err;
	/*
	 * take_rmap_locks: a file rmap walk (truncate, reclaim) must not look
	 * between the two ranges while entries are between them.
	 */
	if (vma->vm_file)
		down_write(&vma->vm_file->mapping.i_mmap_rwsem);
	if (unlikely(is_vm_hugetlb_page(vma))) {
		/* All or nothing: its tables are had before an entry moves. */
		err = move_hugetlb_page_tables(s, vma, addr, new_addr, old_len);
	} else {
		err = move_page_tables(s, addr, new_addr, old_len, &moved);
		if (err)
			MMP_BUG_ON(move_page_tables(s, new_addr, addr, moved, &back) ||
				   back != moved);
	}
	if (vma->vm_file)
		up_write(&vma->vm_file->mapping.i_mmap_rwsem);
	if (!err && unlikely(is_vm_hugetlb_page(vma)))
		hugetlb_mremap_resv(s, vma, find_vma(s, new_addr), addr, old_len);
	if (err) {
		/*
		 * What moved was moved back above: the tables it moved from are
		 * still there, so that cannot run out of memory. Drop the new range.
		 */
		vma_remove_range(s, new_addr, new_addr + new_len);
		unmap_region(s, new_addr, new_addr + new_len);
		return err;
	}
	if (!(flags & MMP_MREMAP_DONTUNMAP)) {
		/*
		 * Room for the splits was checked above; only the host running
		 * out of memory for the VMA array could fail this, and then, as
		 * move_vma does, the old range stays mapped and empty.
		 */
		do_munmap(s, addr, addr + old_len);
	} else {
		/* dontunmap_complete: the old VMA lost every page; a whole one drops its anon_vma. */
		vma = find_vma(s, addr);
		if (whole) {
			vma_start_write(s, vma);
			anon_vma_put(vma->anon_vma);
			WRITE_ONCE(vma->anon_vma, NULL);
		}
		/*
		 * dontunmap_complete: the lock went with the pages, and the old
		 * VMA, whole, unsplit and unmerged, is locked no more.
		 */
		if (vma->flags & VM_LOCKED_MASK) {
			vma_start_write(s, vma);
			WRITE_ONCE(vma->flags, vma->flags & ~VM_LOCKED_MASK);
		}
	}
	vma_merge_range(s, new_addr, new_addr + new_len);
	return 0;
}

static bool range_free(struct mmp_space *s, uint64_t start, uint64_t end)
{
	return end <= TASK_SIZE(s) && !find_vma_intersection(s, start, end);
}

struct remap {
	uint64_t addr, old_len, new_len, new_addr;
	int flags;
};

static bool remap_implies_new_addr(const struct remap *r)
{
	return r->flags & (MMP_MREMAP_FIXED | MMP_MREMAP_DONTUNMAP);
}

/*
 * check_prep_vma: what the VMA at r->addr must allow. Shrinking and same-size
 * calls in place need only the start mapped; a move or an expansion also needs
 * the range kept to lie inside that VMA.
 */
static int check_prep_vma(struct mmp_space *s, const struct remap *r)
{
	struct mmp_vma *vma = find_vma(s, r->addr);
	uint64_t old_len = r->old_len;

	if (!vma)
		return -EFAULT;
	if (r->new_len <= r->old_len && !remap_implies_new_addr(r))
		return 0;
	/* old_len 0 maps the same pages again elsewhere: only shared ones can be. */
	if (!old_len && !(vma->flags & VM_SHARED))
		return -EINVAL;
	if (r->new_len < old_len)
		old_len = r->new_len;	/* only what is kept must be inside the VMA */
	if (old_len > vma->end - r->addr)
		return -EFAULT;
	/* A locked mapping that grows locks the growth: within RLIMIT_MEMLOCK. */
	if (r->new_len > r->old_len && !mlock_future_ok(s, vma->flags, r->new_len - r->old_len))
		return -EAGAIN;
	return 0;
}

/* Shrinking unmaps the tail like munmap, whatever lies there, holes included. */
static int munmap_tail(struct mmp_space *s, const struct remap *r)
{
	if (r->old_len > TASK_SIZE(s) - r->addr)
		return -EINVAL;		/* as munmap's own range check */
	return do_munmap(s, r->addr + r->new_len, r->addr + r->old_len);
}

/* check_prep_vma: a sealed source is neither moved nor resized. */
static bool vma_sealed_at(struct mmp_space *s, uint64_t addr)
{
	struct mmp_vma *vma = find_vma(s, addr);

	return vma && (vma->flags & VM_SEALED);
}

/*
 * A hugetlb VMA moves whole huge pages or not at all, and never grows or
 * stays mapped behind (VM_DONTEXPAND): an unaligned address, either length
 * longer than the other after rounding up to the page size, or DONTUNMAP is
 * -EINVAL, as a 6.18 host answers. The lengths are rounded up here.
 */
static int hugetlb_mremap_check(struct mmp_space *s, struct remap *r)
{
	struct mmp_vma *vma = find_vma(s, r->addr);
	uint64_t sz;

	if (!vma || !is_vm_hugetlb_page(vma))
		return 0;
	sz = huge_page_size(hstate_vma(vma));
	if ((r->addr & (sz - 1)) || (r->flags & MMP_MREMAP_DONTUNMAP) ||
	    ((r->flags & MMP_MREMAP_FIXED) && (r->new_addr & (sz - 1))))
		return -EINVAL;
	if (r->old_len > UINT64_MAX - sz || r->new_len > UINT64_MAX - sz)
		return -EINVAL;
	r->old_len = (r->old_len + sz - 1) & ~(sz - 1);
	r->new_len = (r->new_len + sz - 1) & ~(sz - 1);
	if (r->new_len > r->old_len)
		return -EINVAL;
	return 0;
}

/* check_prep_vma's source checks: a sealed source is EPERM, then hugetlb's rules. */
static int remap_check_source(struct mmp_space *s, struct remap *r)
{
	return vma_sealed_at(s, r->addr) ? -EPERM : hugetlb_mremap_check(s, r);
}

/* mremap_to: move to r->new_addr (FIXED, replacing what is there) or near it (DONTUNMAP). */
static int mremap_to(struct mmp_space *s, struct remap *r, uint64_t *out)
{
	uint64_t new_addr = r->new_addr;
	int err;

	if (r->flags & MMP_MREMAP_FIXED) {
		err = do_munmap(s, new_addr, new_addr + r->new_len);
		if (err)
			return err;
		if (!find_vma(s, r->addr))
			return -EFAULT;
	}
	if (r->old_len > r->new_len) {
		err = munmap_tail(s, r);
		if (err)
			return err;
		r->old_len = r->new_len;
	}
	/* get_unmapped_area(MAP_FIXED) refuses the low pages (mmap_min_addr), after the unmaps. */
	if ((r->flags & MMP_MREMAP_FIXED) && new_addr < mmap_min_addr(s))
		return -EPERM;
	if (!(r->flags & MMP_MREMAP_FIXED)) {
		struct mmp_vma *vma = find_vma(s, r->addr);

		new_addr = file_get_unmapped_area(s, vma->vm_file, new_addr, r->new_len,
						  linear_page_index(vma, r->addr));
		if (!new_addr)
			return -ENOMEM;
	}
	err = move_vma(s, r->addr, r->old_len, r->new_len, new_addr, r->flags);
	if (!err)
		*out = new_addr;
	return err;
}

/* mremap_at: resize in place, or move anywhere when MAYMOVE allows. */
static int mremap_at(struct mmp_space *s, struct remap *r, uint64_t *out)
{
	struct mmp_vma *vma = find_vma(s, r->addr);
	uint64_t new_addr;
	int err;

	if (r->new_len == r->old_len) {
		*out = r->addr;		/* nothing to resize */
		return 0;
	}
	if (r->new_len < r->old_len) {
		err = munmap_tail(s, r);
		if (!err)
			*out = r->addr;
		return err;
	}
	if (r->addr + r->old_len == vma->end && range_free(s, vma->end, r->addr + r->new_len)) {
		/*
		 * Grow in place into the free space after the VMA; it may then
		 * merge with the VMA after it, never with the one before
		 * (vma_merge_extend).
		 */
		vma_start_write(s, vma);
		vma_tree_set_range(&s->vmas, vma, vma->start, r->addr + r->new_len);
		vma_merge_range(s, r->addr + r->new_len, r->addr + r->new_len);
		*out = r->addr;
		return 0;
	}
	if (!(r->flags & MMP_MREMAP_MAYMOVE))
		return -ENOMEM;
	new_addr = file_get_unmapped_area(s, vma->vm_file, 0, r->new_len,
					  linear_page_index(vma, r->addr));
	if (!new_addr)
		return -ENOMEM;
	err = move_vma(s, r->addr, r->old_len, r->new_len, new_addr, r->flags);
	if (!err)
		*out = new_addr;
	return err;
}

/*
 * remap_move (6.17+): MAYMOVE|FIXED with equal lengths moves every VMA in the
 * old range, holes and all, keeping the gaps between them. The range must
 * start inside a VMA; each piece replaces only its own destination. The first
 * piece's address is the result.
 */
static int remap_move(struct mmp_space *s, const struct remap *r, uint64_t *out)
{
	uint64_t end = r->addr + r->old_len, cur = r->addr, target = r->new_addr, last_end = 0;
	bool seen = false;
	struct mmp_vma *vma;

	while (cur < end && (vma = find_vma_intersection(s, cur, end))) {
		uint64_t start = MAX(vma->start, cur), piece_end = MIN(vma->end, end);
		struct remap piece = { .addr = start, .old_len = piece_end - start,
				       .new_len = piece_end - start, .flags = r->flags };
		uint64_t moved;
		int err;

		if (!seen && vma->start > r->addr)
			return -EFAULT;		/* no hole allowed at the start */
		piece.new_addr = target + (seen ? vma->start - last_end : 0);
		last_end = vma->end;
		/* Each piece is checked as a call of its own would be. */
		err = remap_check_source(s, &piece);
		if (!err)
			err = mremap_to(s, &piece, &moved);
		if (err)
			return err;
		if (!seen)
			*out = moved;
		seen = true;
		target = moved + piece.new_len;
		cur = piece_end;
	}
	return seen ? 0 : -EFAULT;
}

static int do_mremap(struct mmp_space *s, struct remap *r, uint64_t *out)
{
	int err;

	/*
	 * check_mremap_params: unmapping the destination and shrinking the
	 * source may each split a VMA in three, and move_vma still wants its
	 * margin of three after that. Refuse before unmapping anything, so a
	 * failure leaves both ranges as they were.
	 */
	if (remap_implies_new_addr(r) && s->vmas.nr + 2 >= MMP_MAX_MAP_COUNT - 3)
		return -ENOMEM;
	if ((r->flags & MMP_MREMAP_FIXED) && r->old_len == r->new_len &&
	    release_follows(s, RULE_MREMAP_MULTI_VMA))
		return remap_move(s, r, out);
	/*
	 * check_prep_vma aligns a hugetlb call's lengths after that choice, not
	 * before; a sealed source is neither moved nor resized, checked first.
	 */
	err = remap_check_source(s, r);
	if (!err)
		err = check_prep_vma(s, r);
	if (err)
		return err;
	return remap_implies_new_addr(r) ? mremap_to(s, r, out) : mremap_at(s, r, out);
}

MMP_EXPORT int mmp_mremap(struct mmp_space *s, uint64_t addr, uint64_t old_len, uint64_t new_len,
			  int flags, uint64_t new_addr, uint64_t *new_addr_out)
{
	struct remap r = { .addr = addr, .flags = flags, .new_addr = new_addr };
	uint64_t out = 0, grown;
	bool aligned_first;
	int err;

	if (!s || !new_addr_out)
		return -EINVAL;
	/* Since 6.17 the lengths are rounded to pages before they are checked. */
	aligned_first = release_follows(s, RULE_MREMAP_ALIGN_FIRST);
	r.old_len = aligned_first ? (old_len + PAGE_SIZE - 1) & PAGE_MASK : old_len;
	r.new_len = aligned_first ? (new_len + PAGE_SIZE - 1) & PAGE_MASK : new_len;
	/* check_mremap_params */
	if ((flags & ~MREMAP_ALL) || (addr & (PAGE_SIZE - 1)) || !r.new_len ||
	    r.new_len > TASK_SIZE(s))
		return -EINVAL;
	if (remap_implies_new_addr(&r)) {
		if (new_addr > TASK_SIZE(s) - r.new_len || (new_addr & (PAGE_SIZE - 1)) ||
		    !(flags & MMP_MREMAP_MAYMOVE))
			return -EINVAL;
		if ((flags & MMP_MREMAP_DONTUNMAP) && r.old_len != r.new_len)
			return -EINVAL;
		if (new_addr < addr + r.old_len && addr < new_addr + r.new_len)
			return -EINVAL;	/* the ranges overlap */
	}
	r.old_len = (old_len + PAGE_SIZE - 1) & PAGE_MASK;
	r.new_len = (new_len + PAGE_SIZE - 1) & PAGE_MASK;

	mmap_write_lock(s);
	err = do_mremap(s, &r, &out);
	grown = r.new_len > r.old_len ? r.new_len - r.old_len : 0;
	if (!err && grown && (find_vma(s, out)->flags & (VM_LOCKED | VM_LOCKONFAULT)) != VM_LOCKED)
		grown = 0;
	WRITE_ONCE(s->last_op, "mmp_mremap");
	mmap_write_unlock(s);
	if (err)
		return err;
	/* A locked mapping's new part is populated, as mremap's mm_populate does. */
	if (grown)
		mm_populate(s, out + r.new_len - grown, out + r.new_len, true);
	*new_addr_out = out;
	return 0;
}
