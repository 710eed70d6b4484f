/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mremap: shrink, grow in place, or move a mapping with its page tables.
 * move_page_tables() moves whole huge PMDs and whole PTE tables where both
 * ends are PMD aligned, and otherwise move_ptes() moves entries, batching the
 * PTEs of a large folio when the architecture maps them contiguously.
 */
#include "internal.h"
#include "mm.h"

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

	if (max_nr == 1 || !pte_batching(s) || s->arch->pte_batch_hint(ptep, pte) == 1)
		return 1;
	if (entry_flags(s, pte, MMP_PTE) & MMP_E_SPECIAL)
		return 1;
	pfn = entry_pfn(s, pte, MMP_PTE);
	if (!pfn_to_page(s->phys, folio_pfn(s->phys, pfn))->order)
		return 1;
	return folio_pte_batch_flags(s, ptep, &pte, max_nr, FPB_RESPECT_WRITE);
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
	bool force_flush = false;
	unsigned int nr;

	spin_lock(old_ptl);
	if (new_ptl != old_ptl)
		spin_lock(new_ptl);
	inc_tlb_flush_pending(s);
	for (; old_addr < old_end; old_addr += nr * PAGE_SIZE, new_addr += nr * PAGE_SIZE,
				   old_ptep += nr, new_ptep += nr) {
		mmp_pte_t pte = s->arch->ptep_get(s, old_ptep);

		nr = 1;
		if (!pte)
			continue;
		nr = mremap_folio_pte_batch(s, old_ptep, pte, (old_end - old_addr) >> PAGE_SHIFT);
		force_flush = true;
		pte = s->arch->get_and_clear_full_ptes(s, old_addr, old_ptep, nr, 0);
		/* move_soft_dirty_pte: the new location counts as written. */
		if (!(s->arch->eflags_unsupported & MMP_E_SOFT_DIRTY))
			pte = entry_set_flags(s, pte, MMP_PTE, MMP_E_SOFT_DIRTY, MMP_E_CONT);
		s->arch->set_ptes(s, new_addr, new_ptep, pte, nr);
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
	leaf = entry_flags(s, pmd, MMP_PMD) & MMP_E_LEAF;
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
		if (entry_flags(s, pmd, MMP_PMD) & MMP_E_LEAF)
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
 * Move [addr, addr + old_len) of @vma_index's VMA to @new_addr with @new_len
 * (move_vma). The destination range is free. With DONTUNMAP the old VMA stays,
 * empty. On -ENOMEM what moved is moved back.
 */
static int move_vma(struct mmp_space *s, uint64_t addr, uint64_t old_len, uint64_t new_len,
		    uint64_t new_addr, int flags)
{
	struct mmp_vma *vma = find_vma(s, addr);
	unsigned long vm_flags = vma->flags;
	/* The moved range keeps its page index and anon_vma, so the rmap still finds it. */
	uint64_t pgoff = linear_page_index(vma, addr), moved, back;
	int err;

	/* Up to three splits and one new VMA: refuse early, as the kernel does. */
	if (s->nr_vmas + 4 > MMP_MAX_MAP_COUNT)
		return -ENOMEM;
	err = vma_insert(s, new_addr, new_addr + new_len, vm_flags, pgoff, vma->anon_vma);
	if (err)
		return err;
	err = move_page_tables(s, addr, new_addr, old_len, &moved);
	if (err) {
		move_page_tables(s, new_addr, addr, moved, &back);
		vma_remove_range(s, new_addr, new_addr + new_len);
		unmap_region(s, new_addr, new_addr + new_len);
		return err;
	}
	/*
	 * Room for the splits was checked above; only the host running out of
	 * memory for the VMA array could fail this, and then, as move_vma does,
	 * the old range stays mapped and empty: the move itself has happened.
	 */
	if (!(flags & MMP_MREMAP_DONTUNMAP))
		do_munmap(s, addr, addr + old_len);
	vma_merge_range(s, new_addr, new_addr + new_len);
	return 0;
}

static bool range_free(struct mmp_space *s, uint64_t start, uint64_t end)
{
	return end <= MMP_TASK_SIZE && !find_vma_intersection(s, start, end);
}

static int do_mremap(struct mmp_space *s, uint64_t addr, uint64_t old_len, uint64_t new_len,
		     int flags, uint64_t new_addr, uint64_t *out)
{
	struct mmp_vma *vma = find_vma(s, addr);
	int err;

	if (!vma)
		return -EFAULT;
	if (old_len > vma->end - addr)
		return -EFAULT;

	if (flags & MMP_MREMAP_FIXED) {
		/* mremap_to: room for the splits first, then clear the destination... */
		if (s->nr_vmas + 4 > MMP_MAX_MAP_COUNT)
			return -ENOMEM;
		/* ...drop the old tail, then move. */
		err = do_munmap(s, new_addr, new_addr + new_len);
		if (!err && old_len > new_len) {
			err = do_munmap(s, addr + new_len, addr + old_len);
			old_len = new_len;
		}
		if (!err)
			err = move_vma(s, addr, old_len, new_len, new_addr, flags);
		if (!err)
			*out = new_addr;
		return err;
	}
	if (!(flags & MMP_MREMAP_DONTUNMAP) && new_len == old_len) {
		*out = addr;	/* nothing to resize */
		return 0;
	}
	if (!(flags & MMP_MREMAP_DONTUNMAP) && new_len < old_len) {
		/* Shrink in place. */
		err = do_munmap(s, addr + new_len, addr + old_len);
		if (!err)
			*out = addr;
		return err;
	}
	if (!(flags & MMP_MREMAP_DONTUNMAP) && addr + old_len == vma->end &&
	    range_free(s, vma->end, addr + new_len)) {
		/* Grow in place into the free space after the VMA. */
		vma->end = addr + new_len;
		vma_merge_range(s, addr, addr + new_len);
		*out = addr;
		return 0;
	}
	if (!(flags & MMP_MREMAP_MAYMOVE))
		return -ENOMEM;
	new_addr = get_unmapped_area(s, 0, new_len, new_len % PMD_SIZE ? PAGE_SIZE : PMD_SIZE);
	if (!new_addr)
		return -ENOMEM;
	err = move_vma(s, addr, old_len, new_len, new_addr, flags);
	if (!err)
		*out = new_addr;
	return err;
}

MMP_EXPORT int mmp_mremap(struct mmp_space *s, uint64_t addr, uint64_t old_len, uint64_t new_len,
			  int flags, uint64_t new_addr, uint64_t *new_addr_out)
{
	uint64_t out = 0;
	int err;

	if (!s || !new_addr_out || (flags & ~MREMAP_ALL))
		return -EINVAL;
	if ((flags & MMP_MREMAP_FIXED) && !(flags & MMP_MREMAP_MAYMOVE))
		return -EINVAL;
	if ((flags & MMP_MREMAP_DONTUNMAP) &&
	    (!(flags & MMP_MREMAP_MAYMOVE) || old_len != new_len))
		return -EINVAL;
	if (addr & (PAGE_SIZE - 1))
		return -EINVAL;
	if (old_len > MMP_TASK_SIZE || new_len > MMP_TASK_SIZE)
		return -EINVAL;
	old_len = (old_len + PAGE_SIZE - 1) & PAGE_MASK;
	new_len = (new_len + PAGE_SIZE - 1) & PAGE_MASK;
	/* Shrinking to nothing, and old_len 0 (only for shared mappings), are refused. */
	if (!new_len || !old_len)
		return -EINVAL;
	if (flags & MMP_MREMAP_FIXED) {
		if ((new_addr & (PAGE_SIZE - 1)) || new_addr < MMP_MMAP_MIN_ADDR ||
		    new_addr > MMP_TASK_SIZE - new_len)
			return -EINVAL;
		if (new_addr < addr + old_len && addr < new_addr + new_len)
			return -EINVAL;	/* the ranges overlap */
	}

	pthread_rwlock_wrlock(&s->mmap_lock);
	err = do_mremap(s, addr, old_len, new_len, flags, new_addr, &out);
	WRITE_ONCE(s->last_op, "mmp_mremap");
	pthread_rwlock_unlock(&s->mmap_lock);
	if (!err)
		*new_addr_out = out;
	return err;
}
