/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mmap, munmap and MAP_POPULATE for private anonymous memory. */
#include "mm.h"
#include "mmap_lock.h"

#define MMP_MAP_ALL	(MMP_MAP_FIXED | MMP_MAP_FIXED_NOREPLACE | MMP_MAP_POPULATE | \
			 MMP_MAP_DROPPABLE | MMP_MAP_GROWSDOWN)

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
	if (first->start < start && first->end > end && s->vmas.nr >= MMP_MAX_MAP_COUNT)
		return -ENOMEM;
	err = vma_split(s, start);
	if (!err)
		err = vma_split(s, end);
	if (err)
		return err;
	vma_remove_range(s, start, end);
	unmap_region(s, start, end);
	return 0;
}

/* Fault in [start, end) as a write or a read (__mm_populate); stops quietly on error. */
int populate_range(struct mmp_space *s, uint64_t start, uint64_t end, bool write)
{
	uint64_t addr = start;

	while (addr < end) {
		int err = handle_mm_fault(s, addr, write ? FAULT_FLAG_WRITE : 0);
		mmp_pte_t *pmdp;

		if (err)
			return err;
		/* Skip what the fault mapped: a huge PMD covers the rest of its range. */
		mmap_read_lock(s);
		pmdp = pmd_offset(s, addr);
		if (pmdp && entry_test(s, READ_ONCE(*pmdp), MMP_PMD, MMP_E_LEAF))
			addr = (addr & PMD_MASK) + PMD_SIZE;
		else
			addr += PAGE_SIZE;
		mmap_read_unlock(s);
	}
	return 0;
}

MMP_EXPORT int mmp_mmap(struct mmp_space *s, uint64_t hint, uint64_t len, int prot, int flags,
			uint64_t *addr_out)
{
	unsigned long vm_flags;
	uint64_t addr;
	int err = 0;

	if (!s || !addr_out)
		return -EINVAL;
	if ((prot & ~MMP_PROT_ALL) || (flags & ~MMP_MAP_ALL))
		return -EINVAL;
	if (!len)
		return -EINVAL;
	if (len > TASK_SIZE(s))
		return -ENOMEM;
	len = (len + PAGE_SIZE - 1) & PAGE_MASK;
	vm_flags = calc_vm_prot_bits(prot);
	/* do_mmap: droppable memory is also wiped on fork. */
	if (flags & MMP_MAP_DROPPABLE)
		vm_flags |= VM_DROPPABLE | VM_WIPEONFORK;
	/* accountable_mapping: private writable memory is charged, droppable (NORESERVE) not. */
	else if (vm_flags & VM_WRITE)
		vm_flags |= VM_ACCOUNT;
	if (flags & MMP_MAP_GROWSDOWN)
		vm_flags |= VM_GROWSDOWN;

	mmap_write_lock(s);
	/*
	 * Too many mappings? Refused before anything is unmapped (do_mmap),
	 * only above the limit: a mapping at the limit takes the count past it.
	 */
	if (s->vmas.nr > MMP_MAX_MAP_COUNT) {
		err = -ENOMEM;
	} else if (flags & (MMP_MAP_FIXED | MMP_MAP_FIXED_NOREPLACE)) {
		addr = hint;
		/*
		 * __get_unmapped_area's order: the range, the alignment, then
		 * security_mmap_addr(). The process is unprivileged (no
		 * CAP_SYS_RAWIO): below mmap_min_addr is EPERM (cap_mmap_addr).
		 */
		if (addr > TASK_SIZE(s) - len) {
			err = -ENOMEM;
		} else if (addr & (PAGE_SIZE - 1)) {
			err = -EINVAL;
		} else if (addr < MMP_MMAP_MIN_ADDR) {
			err = -EPERM;
		} else if (find_vma_intersection(s, addr, addr + len)) {
			if (flags & MMP_MAP_FIXED_NOREPLACE)
				err = -EEXIST;
			else
				err = do_munmap(s, addr, addr + len);
		}
	} else {
		/* Anonymous mappings of whole PMDs start PMD aligned, as since Linux 6.12. */
		uint64_t align = len % PMD_SIZE == 0 ? PMD_SIZE : PAGE_SIZE;

		addr = get_unmapped_area(s, hint, len, align);
		if (!addr)
			err = -ENOMEM;
	}
	if (!err)
		err = vma_insert(s, addr, addr + len, vm_flags, addr >> PAGE_SHIFT, NULL);
	if (!err) {
		vma_merge_range(s, addr, addr + len);
		WRITE_ONCE(s->last_op, "mmp_mmap");
	}
	mmap_write_unlock(s);
	if (err)
		return err;

	*addr_out = addr;
	if ((flags & MMP_MAP_POPULATE) && (vm_flags & VM_ACCESS_FLAGS))
		populate_range(s, addr, addr + len, vm_flags & VM_WRITE);
	return 0;
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
