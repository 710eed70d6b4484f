/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* VMAs (lib/vma.c): lookup, insert, split, merge, placement, and what a VMA's flags mean for its entries. */
#ifndef MMP_VMA_H
#define MMP_VMA_H

#include "entry.h"
#include "filemap.h"

struct mmp_vma *find_vma(struct mmp_space *s, uint64_t addr);
struct mmp_vma *find_vma_intersection(struct mmp_space *s, uint64_t start, uint64_t end);
struct mmp_vma *vma_find_next(struct mmp_space *s, uint64_t addr);
int vma_insert(struct mmp_space *s, uint64_t start, uint64_t end, unsigned long flags,
	       uint64_t pgoff, struct anon_vma *anon_vma, struct mmp_file *file);
struct anon_vma *anon_vma_alloc(struct anon_vma *parent);
void anon_vma_get(struct anon_vma *av);
void anon_vma_put(struct anon_vma *av);
bool anon_vma_covers(const struct anon_vma *av, uint32_t id);
int vma_split(struct mmp_space *s, uint64_t addr);
unsigned int vma_splits_needed(struct mmp_space *s, uint64_t start, uint64_t end);
int vma_split_range(struct mmp_space *s, uint64_t start, uint64_t end);
void vma_remove_range(struct mmp_space *s, uint64_t start, uint64_t end);
void vma_merge_range(struct mmp_space *s, uint64_t start, uint64_t end);
typedef unsigned long (*vma_flags_fn)(const struct mmp_vma *vma, void *arg);
typedef void (*vma_change_fn)(struct mmp_space *s, struct mmp_vma *vma, unsigned long flags,
			      void *arg);
int vma_modify_flags(struct mmp_space *s, uint64_t start, uint64_t end, vma_flags_fn new_flags,
		     vma_change_fn change, void *arg);
uint64_t get_unmapped_area(struct mmp_space *s, uint64_t hint, uint64_t len, uint64_t align);
uint64_t file_get_unmapped_area(struct mmp_space *s, struct mmp_file *file, uint64_t hint,
				uint64_t len, uint64_t pgoff);

#define MMP_PROT_ALL	(MMP_PROT_READ | MMP_PROT_WRITE | MMP_PROT_EXEC)

/* stack_guard_gap's default: 256 pages kept free below a stack, whatever the page size. */
#define STACK_GUARD_GAP		(256ULL * PAGE_SIZE)
/* RLIMIT_STACK's default: how far a stack may grow (acct_stack_growth). */
#define STACK_RLIMIT		(8ULL << 20)

/* Where @vma's room begins for placing other mappings (vm_start_gap). */
static inline uint64_t vm_start_gap(const struct mmp_vma *vma)
{
	if (!(vma->flags & VM_GROWSDOWN))
		return vma->start;
	return vma->start > STACK_GUARD_GAP ? vma->start - STACK_GUARD_GAP : 0;
}

int expand_downwards(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr);

/* mmap_min_addr as cap_mmap_addr applies it: 0 for a process with CAP_SYS_RAWIO. */
static inline uint64_t mmap_min_addr(const struct mmp_space *s)
{
	return READ_ONCE(s->opts[MMP_OPT_CAP_SYS_RAWIO]) ? 0 : MMP_MMAP_MIN_ADDR;
}

static inline unsigned long calc_vm_prot_bits(int prot)
{
	return (prot & MMP_PROT_READ ? VM_READ : 0) | (prot & MMP_PROT_WRITE ? VM_WRITE : 0) |
	       (prot & MMP_PROT_EXEC ? VM_EXEC : 0);
}

/* Translate VMA flags to the neutral entry flags of a new user mapping. */
static inline unsigned int vma_entry_flags(const struct mmp_vma *vma)
{
	unsigned int f = MMP_E_USER | MMP_E_ACCESSED;

	if (vma->flags & (VM_READ | VM_WRITE | VM_EXEC))
		f |= MMP_E_PRESENT;
	else
		f |= MMP_E_PROTNONE;
	if (!(vma->flags & VM_EXEC))
		f |= MMP_E_NOEXEC;
	/*
	 * A shared writable mapping writes the file's own folio: writable from
	 * the start, unless the file tracks dirty folios (vma_wants_writenotify).
	 */
	if ((vma->flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE) &&
	    !vma_wants_writenotify(vma))
		f |= MMP_E_WRITE;
	return f;
}

/*
 * The PTE of pfn 0 that a new user mapping of @vma starts from, for its
 * flags. Private writable memory is mapped read-only here; a write fault adds
 * write and dirty, as the kernel's COW mappings do. So is shared memory
 * whose writes must be noticed.
 */
static inline mmp_pte_t vm_get_page_prot(struct mmp_space *s, const struct mmp_vma *vma)
{
	return mk_entry(s, 0, vma_entry_flags(vma), MMP_PTE);
}

/* vm_page_prot, encoded once when the flags are set: a fault only adds the pfn (pfn_pte). */
static inline void vma_set_page_prot(struct mmp_space *s, struct mmp_vma *vma)
{
	WRITE_ONCE(vma->vm_page_prot, vm_get_page_prot(s, vma));
}

#endif /* MMP_VMA_H */
