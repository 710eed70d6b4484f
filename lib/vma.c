/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * VMAs: disjoint [start, end) ranges in the index of lib/vma_tree.c. Writers
 * hold the mmap lock for writing and write-lock each VMA they change or
 * remove; faults read a VMA under its own lock or under the mmap read lock.
 */
#include <string.h>

#include "filemap.h"
#include "mm.h"
#include "mmap_lock.h"
#include "rcu.h"
#include "vma_tree.h"

/* The VMA containing @addr, or NULL (unlike the kernel's find_vma, not the next one). */
struct mmp_vma *find_vma(struct mmp_space *s, uint64_t addr)
{
	struct mmp_vma *vma = vma_tree_find(&s->vmas, addr);

	return vma && vma->start <= addr ? vma : NULL;
}

struct mmp_vma *find_vma_intersection(struct mmp_space *s, uint64_t start, uint64_t end)
{
	struct mmp_vma *vma = vma_tree_find(&s->vmas, start);

	return vma && vma->start < end ? vma : NULL;
}

/* The first VMA ending above @addr (the kernel's find_vma), or NULL. */
struct mmp_vma *vma_find_next(struct mmp_space *s, uint64_t addr)
{
	return vma_tree_find(&s->vmas, addr);
}

/* Cache-line aligned: the fields a tree walk reads share one line. */
static struct mmp_vma *vma_alloc(void)
{
	size_t size = (sizeof(struct mmp_vma) + 63) & ~(size_t)63;
	struct mmp_vma *vma = aligned_alloc(64, size);

	if (vma)
		memset(vma, 0, sizeof(*vma));
	return vma;
}

static void vma_free_rcu(struct rcu_head *head)
{
	free(caa_container_of(head, struct mmp_vma, rcu));
}

/*
 * Take @vma out of the index and free it after a grace period: a lockless
 * lookup may still be standing on it (vma_mark_detached, vm_area_free).
 */
static void __vma_remove(struct mmp_space *s, struct mmp_vma *vma)
{
	vma_start_write(s, vma);
	vma_tree_erase(&s->vmas, vma);
	vma_mark_detached(s, vma);
	call_rcu(&vma->rcu, vma_free_rcu);
}

/*
 * The same for a VMA that may map a file: it leaves i_mmap now, before its
 * tables can go, since file rmap walks reach the tables of the VMAs they find
 * there.
 */
static void vma_remove(struct mmp_space *s, struct mmp_vma *vma)
{
	vma_start_write(s, vma);
	if (vma->vm_file)
		vma_unlink_file(vma);
	__vma_remove(s, vma);
}

/* ---- anon_vma ------------------------------------------------------------------- */

/* 32-bit ids, as the memmap stores them; 0 is never handed out. */
static uint32_t anon_vma_next_id = 1;

struct anon_vma *anon_vma_alloc(struct anon_vma *parent)
{
	struct anon_vma *av = malloc(sizeof(*av));

	if (!av)
		return NULL;
	do
		av->id = __atomic_fetch_add(&anon_vma_next_id, 1, __ATOMIC_RELAXED);
	while (!av->id);
	av->parent = parent;
	av->refcount = 1;
	if (parent)
		anon_vma_get(parent);
	return av;
}

void anon_vma_get(struct anon_vma *av)
{
	if (av)
		__atomic_fetch_add(&av->refcount, 1, __ATOMIC_RELAXED);
}

void anon_vma_put(struct anon_vma *av)
{
	while (av && __atomic_sub_fetch(&av->refcount, 1, __ATOMIC_ACQ_REL) == 0) {
		struct anon_vma *parent = av->parent;

		free(av);
		av = parent;
	}
}

/* Can a folio of anon_vma @id be mapped in a VMA of @av? (its lineage holds @id) */
bool anon_vma_covers(const struct anon_vma *av, uint32_t id)
{
	for (; av; av = av->parent)
		if (av->id == id)
			return true;
	return false;
}

/* ---- the VMAs of a space -------------------------------------------------------- */

/*
 * Insert a VMA into a hole; the caller made sure the range is free. Takes an
 * anon_vma ref and, for a mapping of @file, a file ref and a place in its
 * i_mmap. The new VMA is write-locked until the mmap write lock drops.
 */
int vma_insert(struct mmp_space *s, uint64_t start, uint64_t end, unsigned long flags,
	       uint64_t pgoff, struct anon_vma *anon_vma, struct mmp_file *file)
{
	struct mmp_vma *vma = vma_alloc();

	if (!vma)
		return -ENOMEM;
	*vma = (struct mmp_vma){ .start = start, .end = end, .flags = flags, .pgoff = pgoff,
				 .anon_vma = anon_vma, .vm_file = file, .vm_mm = s };
	vma_set_page_prot(s, vma);
	vma_lock_init(s, vma);
	anon_vma_get(anon_vma);
	if (file)
		vma_link_file(vma);
	vma_tree_insert(&s->vmas, vma);
	return 0;
}

/* Make @addr a VMA boundary (split_vma) if a VMA straddles it. */
int vma_split(struct mmp_space *s, uint64_t addr)
{
	struct mmp_vma *vma = find_vma(s, addr), *new;

	if (!vma || vma->start == addr)
		return 0;
	/* hugetlb_vm_op_split: a huge page is never cut in two. */
	if (hugetlb_vm_op_split(vma, addr))
		return -EINVAL;
	new = vma_alloc();
	if (!new)
		return -ENOMEM;
	vma_start_write(s, vma);
	/* vma_adjust_trans_huge: no huge PMD may straddle a VMA boundary. */
	if (addr & ~PMD_MASK) {
		mmp_pte_t *pmdp = pmd_offset(s, addr);

		if (pmdp && entry_test(s, READ_ONCE(*pmdp), MMP_PMD, MMP_E_LEAF))
			split_huge_pmd(s, pmdp, addr & PMD_MASK);
	}
	*new = (struct mmp_vma){ .start = addr, .end = vma->end, .flags = vma->flags,
				 .vm_page_prot = vma->vm_page_prot,
				 .pgoff = linear_page_index(vma, addr),
				 .anon_vma = vma->anon_vma, .vm_file = vma->vm_file, .vm_mm = s,
				 .resv_map = vma->resv_map, .resv_flags = vma->resv_flags };
	vma_lock_init(s, new);
	anon_vma_get(vma->anon_vma);	/* both halves share it */
	hugetlb_vm_op_open(new);	/* and a private hugetlb mapping's reservations */
	if (new->vm_file)
		vma_link_file(new);
	vma_tree_set_range(&s->vmas, vma, vma->start, addr);
	vma_tree_insert(&s->vmas, new);
	return 0;
}

/* How many VMAs straddle @start or @end: the splits [start, end) needs. */
unsigned int vma_splits_needed(struct mmp_space *s, uint64_t start, uint64_t end)
{
	struct mmp_vma *a = find_vma(s, start), *b = find_vma(s, end);

	return (a && a->start < start) + (b && b->start < end);
}

/*
 * Make [start, end) a run of whole VMAs (the splits of mprotect and madvise),
 * or change nothing and return -ENOMEM when that would pass max_map_count.
 */
int vma_split_range(struct mmp_space *s, uint64_t start, uint64_t end)
{
	int err;

	if (s->vmas.nr + vma_splits_needed(s, start, end) > MMP_MAX_MAP_COUNT)
		return -ENOMEM;
	err = vma_split(s, start);
	return err ? err : vma_split(s, end);
}

/* Drop every VMA inside [start, end); both ends are already boundaries. */
void vma_remove_range(struct mmp_space *s, uint64_t start, uint64_t end)
{
	struct mmp_vma *vma = vma_find_next(s, start);

	while (vma && vma->end <= end) {
		struct mmp_vma *next = vma->vm_next;

		/* No fault may still be using its anon_vma when it goes. */
		vma_start_write(s, vma);
		anon_vma_put(vma->anon_vma);
		hugetlb_vm_op_close(s, vma);
		vma_remove(s, vma);
		vma = next;
	}
}

/*
 * A VMA of a forked child links its parents' anon_vmas too (a chain of more
 * than one): it cannot lend its anon_vma to a VMA that has none, or that one
 * would find the parents' folios (vma_had_uncowed_parents).
 */
static bool anon_vma_has_parents(const struct anon_vma *av)
{
	return av && av->parent;
}

/*
 * Can @a and @b (adjacent) become one VMA? Same flags but the sticky ones
 * (which the merged VMA keeps), none that forbids merging (VM_SPECIAL: a
 * hugetlb VMA never merges), contiguous pgoff, and
 * compatible anon_vmas: the same, or one of them not yet faulted in while the
 * other has no parents (is_mergeable_anon_vma).
 */
static bool vma_mergeable(const struct mmp_vma *a, const struct mmp_vma *b)
{
	return a->end == b->start && !((a->flags ^ b->flags) & ~VM_STICKY) &&
	       !(a->flags & VM_SPECIAL) && a->vm_file == b->vm_file &&
	       b->pgoff == linear_page_index(a, a->end) &&
	       (a->anon_vma == b->anon_vma ||
		(!a->anon_vma && !anon_vma_has_parents(b->anon_vma)) ||
		(!b->anon_vma && !anon_vma_has_parents(a->anon_vma)));
}

/*
 * Merge the VMAs just made or changed in [start, end) with each other and
 * with their neighbours (vma_merge_new_range, vma_merge_existing_range): only
 * at boundaries from @start to @end. Two VMAs beside the range are left as
 * they are even if they could merge, as the kernel leaves them.
 */
void vma_merge_range(struct mmp_space *s, uint64_t start, uint64_t end)
{
	struct mmp_vma *a = vma_find_next(s, start);

	a = !a ? s->vmas.last : a->vm_prev ? a->vm_prev : a;
	while (a && a->vm_next && a->end <= end) {
		struct mmp_vma *b = a->vm_next;
		uint64_t b_end = b->end;

		if (a->end >= start && vma_mergeable(a, b)) {
			struct mmp_file *f = b->vm_file;

			vma_start_write(s, a);
			vma_start_write(s, b);
			WRITE_ONCE(a->flags, a->flags | (b->flags & VM_STICKY));
			if (!a->anon_vma)
				WRITE_ONCE(a->anon_vma, b->anon_vma);
			else
				anon_vma_put(b->anon_vma);
			/*
			 * vma_prepare/vma_complete: i_mmap held across, so a file
			 * rmap walk finds b's entries in b or in the grown a.
			 */
			if (f) {
				down_write(&f->mapping.i_mmap_rwsem);
				__vma_unlink_file(b);
			}
			__vma_remove(s, b);
			vma_tree_set_range(&s->vmas, a, a->start, b_end);
			if (f) {
				up_write(&f->mapping.i_mmap_rwsem);
				fput(f);
			}
		} else {
			a = b;
		}
	}
}

/*
 * Top-down search below mmap_base for @len bytes, honouring a free hint first,
 * as arch_get_unmapped_area_topdown() does; @align (a power of two) lets large
 * anonymous mappings start on a PMD boundary (thp_get_unmapped_area). Returns 0
 * when nothing fits.
 */
uint64_t get_unmapped_area(struct mmp_space *s, uint64_t hint, uint64_t len, uint64_t align)
{
	uint64_t top = s->mmap_base, gap_start, gap_end;
	struct mmp_vma *next, *vma;

	if (len > TASK_SIZE(s) - MMP_MMAP_MIN_ADDR)
		return 0;
	/* A hint above the map window opens the space above it (arch_get_mmap_end). */
	if (hint > map_window(s))
		top += TASK_SIZE(s) - map_window(s);
	if (hint) {
		hint &= PAGE_MASK;
		next = vma_find_next(s, hint);
		if (hint >= MMP_MMAP_MIN_ADDR && hint <= TASK_SIZE(s) - len &&
		    (hint > map_window(s)) == (hint + len > map_window(s)) &&
		    (!next || hint + len <= vm_start_gap(next)))
			return hint;
	}
	/* The gap reaching up to mmap_base (or to a VMA straddling it)... */
	next = vma_find_next(s, top);
	vma = next ? next->vm_prev : s->vmas.last;
	gap_end = next ? MIN(top, vm_start_gap(next)) : top;
	gap_start = vma ? vma->end : MMP_MMAP_MIN_ADDR;
	/* ...then the gaps below each VMA, highest first, skipping subtrees with none as large. */
	for (;;) {
		if (gap_end >= gap_start + len) {
			uint64_t addr = (gap_end - len) & ~(align - 1);

			if (addr >= gap_start && addr >= MMP_MMAP_MIN_ADDR)
				return addr;
		}
		vma = vma_tree_gap_at_or_before(&s->vmas, vma, len);
		if (!vma)
			return 0;
		/* Below a stack, its guard gap stays free: the gap may be too small then. */
		gap_end = vm_start_gap(vma);
		gap_start = vma->vm_prev ? vma->vm_prev->end : MMP_MMAP_MIN_ADDR;
		vma = vma->vm_prev;
	}
}

/*
 * thp_get_unmapped_area, the placement of files with large folios: when the
 * range holds a whole PMD-aligned stretch of the file, look for @len plus a
 * PMD (the hint is taken if that much is free there), then slide the start
 * so that addresses and file offsets agree modulo the PMD size, and a PMD
 * folio could be mapped by one PMD. Without room for the padding, or a
 * stretch to align, any free range will do.
 */
static uint64_t thp_get_unmapped_area(struct mmp_space *s, uint64_t hint, uint64_t len,
				      uint64_t pgoff)
{
	uint64_t off = pgoff << PAGE_SHIFT, addr, off_sub;
	uint64_t off_end = (off + len) & PMD_MASK, off_align = (off + PMD_SIZE - 1) & PMD_MASK;

	if (off_end <= off_align || off_end - off_align < PMD_SIZE)
		return get_unmapped_area(s, hint, len, PAGE_SIZE);
	addr = get_unmapped_area(s, hint, len + PMD_SIZE, PAGE_SIZE);
	if (!addr)
		return get_unmapped_area(s, hint, len, PAGE_SIZE);
	if (addr == hint)
		return addr;
	/* Top-down: a start already aligned moves up a PMD, into the padding. */
	off_sub = (off - addr) & (PMD_SIZE - 1);
	return off_sub ? addr + off_sub : addr + PMD_SIZE;
}

/*
 * Where a new mapping of @file (NULL: private anonymous) from page @pgoff
 * goes, as the file's get_unmapped_area would place it: files with large
 * folios through thp_get_unmapped_area, and so shmem with a huge= policy
 * (shmem_get_unmapped_area pads and aligns alike); private anonymous mappings
 * of whole PMDs PMD aligned, as since Linux 6.12, when no hint was given (a
 * hint that is taken leaves the plain search); shmem with huge=never and
 * files without large folios anywhere free; hugetlbfs files aligned to their
 * page size. 0 when nothing fits.
 */
uint64_t file_get_unmapped_area(struct mmp_space *s, struct mmp_file *file, uint64_t hint,
				uint64_t len, uint64_t pgoff)
{
	/*
	 * hugetlb_get_unmapped_area: aligned to the page size, the hint rounded
	 * up to it from its own page (the host places a hint 0xbc0 into a huge
	 * page at that huge page, one a page into it at the next).
	 */
	if (file && is_file_hugepages(file)) {
		uint64_t sz = huge_page_size(file->hstate);

		hint &= PAGE_MASK;
		hint = hint > UINT64_MAX - sz ? 0 : (hint + sz - 1) & ~(sz - 1);
		return get_unmapped_area(s, hint, len, sz);
	}
	if (file && (shmem_file(file) ? (file->flags & (MMP_FILE_HUGE_ALWAYS |
							 MMP_FILE_HUGE_WITHIN_SIZE |
							 MMP_FILE_HUGE_ADVISE)) :
					!(file->flags & MMP_FILE_NO_LARGE_FOLIOS)))
		return thp_get_unmapped_area(s, hint, len, pgoff);
	/* __get_unmapped_area aligns anonymous memory only when there is no hint. */
	return get_unmapped_area(s, hint, len,
				 !file && !hint && len % PMD_SIZE == 0 ? PMD_SIZE : PAGE_SIZE);
}

/*
 * vma_modify_flags: give each VMA piece of [start, end) the flags @new_flags
 * computes for it. A piece whose flags stay the same is left alone: no split,
 * no merge (as mprotect_fixup and madvise_update_vma return early). A piece
 * that changes is split out, handed to @change, then merged with its
 * neighbours. Holes are skipped. Returns 0, or -ENOMEM when a split would
 * pass max_map_count (the pieces before it keep their change, as in Linux).
 */
int vma_modify_flags(struct mmp_space *s, uint64_t start, uint64_t end, vma_flags_fn new_flags,
		     vma_change_fn change, void *arg)
{
	for (uint64_t addr = start; addr < end; ) {
		struct mmp_vma *vma = find_vma_intersection(s, addr, end);
		unsigned long flags;
		uint64_t piece_end;
		int err;

		if (!vma)
			break;
		addr = MAX(addr, vma->start);
		piece_end = MIN(end, vma->end);
		flags = new_flags(vma, arg);
		if (flags != vma->flags) {
			err = vma_split_range(s, addr, piece_end);
			if (err)
				return err;
			vma = find_vma(s, addr);
			vma_start_write(s, vma);
			if (change)
				change(s, vma, flags, arg);
			WRITE_ONCE(vma->flags, flags);
			vma_set_page_prot(s, vma);
			vma_merge_range(s, addr, piece_end);
		}
		addr = piece_end;
	}
	return 0;
}

