/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mmap of anonymous memory and of files, munmap, and MAP_POPULATE. */
#include "mm.h"
#include "mmap_lock.h"
#include "rcu.h"

/* Unsigned: the MAP_HUGE_* bits reach bit 31. */
#define MMP_MAP_ALL	(MMP_MAP_FIXED | MMP_MAP_FIXED_NOREPLACE | MMP_MAP_POPULATE | \
			 MMP_MAP_DROPPABLE | MMP_MAP_GROWSDOWN | MMP_MAP_NORESERVE | \
			 MMP_MAP_HUGETLB | MMP_MAP_LOCKED | \
			 ((unsigned int)MMP_MAP_HUGE_MASK << MMP_MAP_HUGE_SHIFT))
/* What a file mapping takes: no droppable or stack files. */
#define MMP_MAP_FILE_ALL (MMP_MAP_SHARED | MMP_MAP_PRIVATE | MMP_MAP_FIXED | \
			  MMP_MAP_FIXED_NOREPLACE | MMP_MAP_POPULATE | MMP_MAP_LOCKED)

/*
 * Remove [start, end) from the address space (do_vmi_munmap). mmap lock held
 * for writing. Splitting the first and last VMA may raise the VMA count by one.
 */
int do_munmap(struct mmp_space *s, uint64_t start, uint64_t end)
{
	struct mmp_vma *first = start < end ? find_vma_intersection(s, start, end) : NULL;
	int err;

	if (!first)
		return 0;
	if (first->start < start) {
		if (first->end > end && s->vmas.nr >= MMP_MAX_MAP_COUNT)
			return -ENOMEM;
		/* vms_gather_munmap_vmas: a sealed VMA is not split for nothing. */
		if (first->flags & VM_SEALED)
			return -EPERM;
		err = vma_split(s, start);
		if (err)
			return err;
	}
	/*
	 * Every VMA is checked before anything goes: a seal fails the whole
	 * call (the split at the start, made already, stays, as in Linux).
	 * @first is not sealed if it was split, and ends at @start if it was.
	 */
	if (range_first_sealed(first, end))
		return -EPERM;
	err = vma_split(s, end);
	if (err)
		return err;
	unmap_vmas_and_remove(s, start, end);
	return 0;
}

/*
 * What maps @addr, as __get_user_pages' follow_page_mask finds it: 0 when
 * nothing does, or the leaf's flags, with MMP_E_LEAF for a huge PMD. A page
 * found writable for a @write populate is touched as FOLL_TOUCH does: its
 * folio dirtied unless the entry is. Under the mmap read lock.
 */
static unsigned int populate_follow(struct mmp_space *s, uint64_t addr, bool write,
				    uint64_t *size)
{
	mmp_pte_t *pmdp = pmd_offset(s, addr), *ptes, pmd, e = 0;
	enum mmp_level level = MMP_PMD;
	unsigned int f;

	/* A 1 GiB hugetlb page: there is no PMD table under it. */
	if (!pmdp && s->arch->hugetlb_pud) {
		mmp_pte_t *pudp = pud_offset(s, addr), pud = pudp ? READ_ONCE(*pudp) : 0;

		*size = level_size(MMP_PUD);
		return entry_test(s, pud, MMP_PUD, MMP_E_LEAF) ? entry_flags(s, pud, MMP_PUD) : 0;
	}
	if (!pmdp || !(pmd = READ_ONCE(*pmdp)))
		return 0;
	rcu_read_lock();
	if (entry_test(s, pmd, MMP_PMD, MMP_E_LEAF)) {
		e = pmd;
	} else if ((ptes = pte_table(s, pmd))) {
		e = READ_ONCE(ptes[level_index(addr, MMP_PTE)]);
		level = MMP_PTE;
	}
	f = e ? entry_flags(s, e, level) : 0;
	if (write && (f & MMP_E_PRESENT) && (f & MMP_E_WRITE) && !(f & (MMP_E_DIRTY | MMP_E_SPECIAL)))
		page_flag_set(pfn_to_page(s->phys, folio_pfn(s->phys, entry_pfn(s, e, level))),
			      PG_dirty);
	rcu_read_unlock();
	/* MMP_E_LEAF only for a huge PMD. */
	*size = PMD_SIZE;
	return level == MMP_PMD && e ? f | MMP_E_LEAF : f & ~MMP_E_LEAF;
}

/*
 * Fault in [start, end) as a write or a read (__mm_populate); stops quietly
 * on error. As __get_user_pages, only what is not mapped as asked faults: a
 * page a fault-around or a huge PMD already maps costs no fault.
 */
int populate_range(struct mmp_space *s, uint64_t start, uint64_t end, bool write)
{
	uint64_t addr = start;

	while (addr < end) {
		uint64_t size = PMD_SIZE;
		unsigned int f;
		int err;

		mmap_read_lock(s);
		f = populate_follow(s, addr, write, &size);
		mmap_read_unlock(s);
		if (!(f & MMP_E_PRESENT) || (write && !(f & MMP_E_WRITE))) {
			err = handle_mm_fault(s, addr, write ? FAULT_FLAG_WRITE : 0);
			if (err)
				return err;
			mmap_read_lock(s);
			f = populate_follow(s, addr, false, &size);
			mmap_read_unlock(s);
		}
		/* A huge PMD (or hugetlb PUD) covers the rest of its range. */
		addr = f & MMP_E_LEAF ? (addr & ~(size - 1)) + size : addr + PAGE_SIZE;
	}
	return 0;
}

/*
 * hugetlbfs's mmap: reserve the pages of [addr, addr + len) of @file (its
 * pages from @pgoff), before anything is unmapped there, so that a refusal
 * leaves the range as it was. *@resv gets a private mapping's reserve map.
 */
static int hugetlb_mmap_reserve(struct mmp_file *file, uint64_t len, uint64_t pgoff,
				unsigned long vm_flags, struct resv_map **resv)
{
	unsigned int order = file->hstate->order;

	return hugetlb_reserve_pages(file, pgoff >> order, (pgoff + (len >> PAGE_SHIFT)) >> order,
				     vm_flags, resv);
}

/*
 * do_mmap: map @len bytes at @hint (or where there is room) of @file from
 * page @pgoff, or of anonymous memory for a NULL @file. @late_err is what the
 * kernel finds wrong only once the address is settled (the mapping type, the
 * file's access mode): returned after the placement's own errors, before
 * anything is unmapped. A hugetlbfs file's mapping is aligned to its page
 * size, reserves its pages and never merges.
 */
static int do_mmap(struct mmp_space *s, uint64_t hint, uint64_t len, int prot, int flags,
		   struct mmp_file *file, uint64_t pgoff, int late_err, uint64_t *addr_out)
{
	struct hstate *h = file ? file->hstate : NULL;
	uint64_t align = h ? huge_page_size(h) : PAGE_SIZE;
	struct resv_map *resv = NULL;
	bool replace = false;
	unsigned long vm_flags, locked;
	uint64_t addr;
	int err = 0;

	if (!len)
		return -EINVAL;
	if (len > TASK_SIZE(s) || (h && len > TASK_SIZE(s) - align))
		return -ENOMEM;
	len = (len + align - 1) & ~(align - 1);
	vm_flags = calc_vm_prot_bits(prot);
	if (flags & MMP_MAP_SHARED) {
		vm_flags |= VM_SHARED;
		if (!file || !(file->flags & MMP_FILE_RDONLY))
			vm_flags |= VM_MAYWRITE;
	}
	if (flags & MMP_MAP_NORESERVE)
		vm_flags |= VM_NORESERVE;
	/* do_mmap: droppable memory is also wiped on fork. */
	if (flags & MMP_MAP_DROPPABLE)
		vm_flags |= VM_DROPPABLE | VM_WIPEONFORK;
	/*
	 * accountable_mapping: private writable memory is charged; droppable
	 * and MAP_NORESERVE memory not, nor hugetlb (its pool is its charge).
	 */
	else if ((vm_flags & VM_WRITE) && !(vm_flags & (VM_SHARED | VM_NORESERVE)) && !h)
		vm_flags |= VM_ACCOUNT;
	if (flags & MMP_MAP_GROWSDOWN)
		vm_flags |= VM_GROWSDOWN;
	if (h)
		vm_flags |= VM_HUGETLB | VM_DONTEXPAND;
	/* __mmap_complete: a new mapping is soft-dirty as a whole. */
	if (mm_soft_dirty(s))
		vm_flags |= VM_SOFTDIRTY;
	/*
	 * MAP_LOCKED, or mlockall(MCL_FUTURE)'s def_flags; __mmap_complete
	 * takes the lock back from what mlock passes by (hugetlb, droppable).
	 */
	vm_flags |= s->def_flags | (flags & MMP_MAP_LOCKED ? VM_LOCKED : 0);
	locked = vm_flags & VM_LOCKED;	/* what RLIMIT_MEMLOCK judges: before mlock's exceptions */
	if (h || (vm_flags & VM_DROPPABLE))
		vm_flags &= ~VM_LOCKED_MASK;
	if (vm_flags & VM_LOCKED)
		WRITE_ONCE(s->madvise_may_refuse, true);

	mmap_write_lock(s);
	vm_flags = ksm_vma_flags(s, vm_flags);
	/*
	 * Too many mappings? Refused before anything is unmapped (do_mmap),
	 * only above the limit: a mapping at the limit takes the count past it.
	 */
	if (s->vmas.nr > MMP_MAX_MAP_COUNT) {
		err = -ENOMEM;
	} else if (flags & (MMP_MAP_FIXED | MMP_MAP_FIXED_NOREPLACE)) {
		addr = hint;
		/*
		 * __get_unmapped_area's order: hugetlbfs's own alignment check
		 * (prepare_hugepage_range), the range, the alignment, then
		 * security_mmap_addr(): below mmap_min_addr is EPERM unless the
		 * process has CAP_SYS_RAWIO (cap_mmap_addr).
		 */
		if (h && (addr & (align - 1))) {
			err = -EINVAL;
		} else if (addr > TASK_SIZE(s) - len) {
			err = -ENOMEM;
		} else if (addr & (PAGE_SIZE - 1)) {
			err = -EINVAL;
		} else if (addr < mmap_min_addr(s)) {
			err = -EPERM;
		} else if (find_vma_intersection(s, addr, addr + len)) {
			if (flags & MMP_MAP_FIXED_NOREPLACE)
				err = -EEXIST;
			else
				replace = true;
		}
	} else {
		addr = file_get_unmapped_area(s, file, hint, len, pgoff);
		if (!addr)
			err = -ENOMEM;
	}
	/* do_mmap: can_do_mlock for MAP_LOCKED, then the limit for any locked mapping. */
	if (!err && (flags & MMP_MAP_LOCKED) && !can_do_mlock(s))
		err = -EPERM;
	if (!err && !mlock_future_ok(s, locked, len))
		err = -EAGAIN;
	if (!err)
		err = late_err;
	if (!err && h)
		err = hugetlb_mmap_reserve(file, len, pgoff, vm_flags, &resv);
	if (!err && replace)
		err = do_munmap(s, addr, addr + len);
	if (!err) {
		/* An anonymous page index is its address; a file's, its offset. */
		err = vma_insert(s, addr, addr + len, vm_flags, file ? pgoff : addr >> PAGE_SHIFT,
				 NULL, file);
	}
	if (!err && resv) {
		struct mmp_vma *vma = find_vma(s, addr);

		vma->resv_map = resv;
		vma->resv_flags = HPAGE_RESV_OWNER;
	} else if (resv) {
		/* A private mapping's reservation dies with it; a shared one's with its file. */
		hugetlb_unreserve_private(s->phys, h, resv, pgoff >> h->order,
					  (pgoff + (len >> PAGE_SHIFT)) >> h->order);
		resv_map_put(resv);
	}
	/* hugetlbfs_file_mmap: a writable mapping grows the file to its end. */
	if (!err && h && (vm_flags & VM_WRITE))
		hugetlbfs_mmap_extend(file, (pgoff << PAGE_SHIFT) + len);
	if (!err) {
		vma_merge_range(s, addr, addr + len);
		WRITE_ONCE(s->last_op, file ? "mmp_mmap_file" : "mmp_mmap");
	}
	mmap_write_unlock(s);
	if (err)
		return err;

	*addr_out = addr;
	/* vm_mmap_pgoff's mm_populate: errors do not fail the mmap. */
	if (vm_flags & VM_LOCKED)
		mm_populate(s, addr, addr + len, true);
	else if ((flags & MMP_MAP_POPULATE) && (vm_flags & VM_ACCESS_FLAGS))
		populate_range(s, addr, addr + len, (vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE);
	return 0;
}

/*
 * ksys_mmap_pgoff's MAP_HUGETLB: the anonymous hugetlbfs file behind the
 * mapping, of the size the MAP_HUGE_* bits name, which the back end must be
 * able to map; *@len is rounded up to that size, as the kernel's ALIGN()
 * does: a length within a huge page of 2^64 wraps to 0, which do_mmap then
 * refuses with EINVAL.
 */
static int hugetlb_mmap_file(struct mmp_space *s, uint64_t *len, int flags,
			     struct mmp_file **out)
{
	struct hstate *h = hstate_sizelog(s->phys, ((unsigned int)flags >> MMP_MAP_HUGE_SHIFT) &
						   MMP_MAP_HUGE_MASK);
	uint64_t sizes;

	if (!h || mmp_hugetlb_sizes(s->arch->name, &sizes) || !(sizes & huge_page_size(h)))
		return -EINVAL;
	/* MAP_GROWSDOWN and MAP_DROPPABLE are refused on hugetlbfs, as on a 6.18 host. */
	if (flags & (MMP_MAP_GROWSDOWN | MMP_MAP_DROPPABLE))
		return -EINVAL;
	*len = (*len + huge_page_size(h) - 1) & ~(huge_page_size(h) - 1);
	if (!*len || *len > TASK_SIZE(s))
		return 0;	/* do_mmap says why */
	return hugetlb_file_setup(s->phys, h, *len, false, out);
}

MMP_EXPORT int mmp_mmap(struct mmp_space *s, uint64_t hint, uint64_t len, int prot, int flags,
			uint64_t *addr_out)
{
	struct mmp_file *shm = NULL;
	int err;

	if (!s || !addr_out)
		return -EINVAL;
	if ((prot & ~MMP_PROT_ALL) ||
	    ((unsigned int)flags & ~(MMP_MAP_ALL | MMP_MAP_SHARED | MMP_MAP_PRIVATE)))
		return -EINVAL;
	if ((flags & MMP_MAP_SHARED) && (flags & MMP_MAP_PRIVATE))
		return -EINVAL;
	if (flags & MMP_MAP_HUGETLB) {
		err = hugetlb_mmap_file(s, &len, flags, &shm);
		if (err)
			return err;
		err = do_mmap(s, hint, len, prot, flags, shm, 0, 0, addr_out);
		if (shm)
			fput(shm);	/* the VMA holds its own reference, if it was made */
		return err;
	}
	/* MAP_DROPPABLE is a mapping type of its own: not shared. */
	if ((flags & MMP_MAP_SHARED) && (flags & MMP_MAP_DROPPABLE))
		return -EINVAL;
	/* do_mmap: a shared anonymous mapping cannot grow down. */
	if ((flags & MMP_MAP_SHARED) && (flags & MMP_MAP_GROWSDOWN))
		return -EINVAL;
	if ((flags & MMP_MAP_SHARED) && len && len <= TASK_SIZE(s)) {
		/* shmem_zero_setup: the mapping gets a shmem object of its own. */
		err = shmem_zero_setup(s->phys, (len + PAGE_SIZE - 1) & PAGE_MASK, &shm);
		if (err)
			return err;
	}
	err = do_mmap(s, hint, len, prot, flags, shm, 0, 0, addr_out);
	if (shm)
		fput(shm);	/* the VMA holds its own reference, if it was made */
	return err;
}

MMP_EXPORT int mmp_mmap_file(struct mmp_space *s, uint64_t hint, uint64_t len, int prot,
			     int flags, struct mmp_file *file, uint64_t offset, uint64_t *addr_out)
{
	int type = flags & (MMP_MAP_SHARED | MMP_MAP_PRIVATE), late_err = 0;
	uint64_t pages;

	if (!s || !file || !addr_out)
		return -EINVAL;
	/* MAP_NORESERVE matters to a hugetlbfs file alone: its mapping reserves no pages. */
	if ((prot & ~MMP_PROT_ALL) ||
	    (flags & ~(MMP_MAP_FILE_ALL | (is_file_hugepages(file) ? MMP_MAP_NORESERVE : 0))))
		return -EINVAL;
	if (offset & (PAGE_SIZE - 1))
		return -EINVAL;
	if (!len)
		return -EINVAL;
	/* do_mmap: the offset's pages plus the length's must not wrap. */
	pages = (len + PAGE_SIZE - 1) >> PAGE_SHIFT;
	if (len > TASK_SIZE(s))
		return -ENOMEM;
	if ((offset >> PAGE_SHIFT) + pages < (offset >> PAGE_SHIFT) ||
	    (offset >> PAGE_SHIFT) + pages > (MMP_FILE_MAX_SIZE >> PAGE_SHIFT))
		return -EOVERFLOW;
	/* Found once the address is settled: no type, or both; shared writable of a read-only handle. */
	if (type != MMP_MAP_SHARED && type != MMP_MAP_PRIVATE)
		late_err = -EINVAL;
	else if (is_file_hugepages(file) && hugetlbfs_mmap_check(s, file, offset))
		late_err = -EINVAL;
	else if (type == MMP_MAP_SHARED && (prot & MMP_PROT_WRITE) && (file->flags & MMP_FILE_RDONLY))
		late_err = -EACCES;
	return do_mmap(s, hint, len, prot, flags, file, offset >> PAGE_SHIFT, late_err, addr_out);
}

MMP_EXPORT int mmp_munmap(struct mmp_space *s, uint64_t addr, uint64_t len)
{
	int err;

	if (!s)
		return -EINVAL;
	if ((addr & (PAGE_SIZE - 1)) || !len || addr > TASK_SIZE(s) || len > TASK_SIZE(s) - addr)
		return -EINVAL;
	len = (len + PAGE_SIZE - 1) & PAGE_MASK;
	mmap_write_lock(s);
	err = do_munmap(s, addr, addr + len);
	WRITE_ONCE(s->last_op, "mmp_munmap");
	mmap_write_unlock(s);
	return err;
}
