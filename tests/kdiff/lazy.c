/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lazy pages: MADV_FREE'd pages not written since may read as their old data
 * or as zeros, on either side, and so may pages of MAP_DROPPABLE mappings at
 * any time. Each process's are tracked here, op by op, from what the calls
 * did (track_lazy), so that reads of them are compared loosely and a collapse
 * over them is not compared at all; the runner (run.c) settles one before a
 * write lands on it.
 */

#include <mmprim/introspect.h>

#include "mm.h"
#include "kdiff.h"
#include "run.h"

/* Mark the window's pages of [addr, addr + len) of proc @p with @val (0: not lazy). */
void lazy_set(struct run *r, int p, uint64_t addr, uint64_t len, uint8_t val)
{
	for (uint64_t a = addr & ~(KD_PAGE - 1); a < addr + len && a >= addr - KD_PAGE; a += KD_PAGE)
		if (in_window(a))
			*lazy_at(r, p, a) = val;
		else if (a >= KD_WIN_END)
			break;
}

/*
 * MADV_FREE: pages of droppable mappings stay droppable. A page another
 * process maps too (fork) is lazy there as well: the host may make a folio
 * lazyfree whoever else maps it, and reclaim then drops it from all.
 */
static void lazy_mark_free(struct run *r, int p, uint64_t addr, uint64_t len)
{
	for (uint64_t a = addr; a < addr + len && a >= addr; a += KD_PAGE) {
		struct variant *ref = lazy_ref(r);
		struct mmp_addr_info mine, theirs;
		struct mmp_vma *vma;
		bool known;

		if (a >= KD_WIN_END)
			break;
		/* Only anonymous private memory becomes lazyfree. */
		vma = in_window(a) ? find_vma(r->v[0].sp[p], a) : NULL;
		if (!vma || !vma_is_anonymous(vma) || vma->start > a || *lazy_at(r, p, a) != DATA)
			continue;
		/* The zero page has no folio to free (madvise_free_pte_range skips it). */
		known = !mmp_space_query(ref->sp[p], a, &mine);
		if (known && (mine.folio_flags & MMP_FOLIO_ZERO))
			continue;
		*lazy_at(r, p, a) = LAZYFREE;
		if (!known || mine.pfn == MMP_NO_PFN)
			continue;
		for (int q = 0; q < KD_MAX_PROCS; q++)
			if (q != p && r->live[q] && *lazy_at(r, q, a) == DATA &&
			    !mmp_space_query(ref->sp[q], a, &theirs) && theirs.pfn == mine.pfn)
				*lazy_at(r, q, a) = LAZYFREE;
	}
}

/* The length of [addr, addr + len) up to its first sealed VMA (madvise's EPERM). */
static uint64_t before_sealed(struct run *r, int p, uint64_t addr, uint64_t len)
{
	for (struct mmp_vma *vma = find_vma(r->v[0].sp[p], addr); vma && vma->start < addr + len;
	     vma = vma->vm_next)
		if (vma->flags & VM_SEALED)
			return vma->start > addr ? vma->start - addr : 0;
	return len;
}

/* A write makes a lazyfree page's data definite; a droppable one stays droppable. */
void lazy_written(struct run *r, int p, uint64_t addr, uint64_t len)
{
	if (!len)
		return;
	for (uint64_t a = addr & ~(KD_PAGE - 1); a < addr + len; a += KD_PAGE)
		if (in_window(a) && *lazy_at(r, p, a) == LAZYFREE)
			*lazy_at(r, p, a) = DATA;
}

/*
 * A multi-VMA move that failed at a VMA it could not move (a hugetlb one
 * with MREMAP_DONTUNMAP, say) has moved the VMAs before it, both sides alike
 * (the layouts are compared), or nothing, when its arguments were wrong. The
 * call does not tell which pages went: a lazy page went where lazy_ref() now
 * maps the frame it mapped at the source, and a droppable VMA, wherever it
 * came from, makes its pages droppable. A page marked lazy that is not costs
 * the host a read (settle_lazy), which faults it in there alone.
 */
static void lazy_moved_partly(struct run *r, int p, const struct kd_op *op)
{
	uint64_t len = page_align(op->len);

	if (!in_window(op->addr2))
		return;
	for (uint64_t i = 0; i < len / KD_PAGE && in_window(op->addr + i * KD_PAGE); i++) {
		uint64_t to = op->addr2 + i * KD_PAGE;
		uint8_t was = *lazy_at(r, p, op->addr + i * KD_PAGE);
		struct mmp_addr_info q;

		if (was && in_window(to) && r->src_pfn[i] != MMP_NO_PFN &&
		    !mmp_space_query(lazy_ref(r)->sp[p], to, &q) && q.pfn == r->src_pfn[i])
			*lazy_at(r, p, to) = was;
	}
	mark_droppable(r, p, op->addr2, len);
}

/* What a successful (or partly applied) call did to the lazy pages. */
void track_lazy(struct run *r, const struct kd_op *op, int64_t ret)
{
	int p = op->proc;

	switch (op->kind) {
	case KD_MMAP:
		/* A hugetlb mapping covers whole 2 MiB pages, whatever the length asked. */
		if (ret >= 0)
			lazy_set(r, p, ret, op->flags & MMP_MAP_HUGETLB ?
				 (op->len + PMD_SIZE - 1) & PMD_MASK : page_align(op->len),
				 op->flags & MMP_MAP_DROPPABLE ? DROPPABLE : DATA);
		break;
	case KD_MMAP_FILE:
		if (ret >= 0)
			lazy_set(r, p, ret, page_align(op->len), DATA);
		break;
	case KD_MUNMAP:
		if (ret == 0)
			lazy_set(r, p, op->addr, page_align(op->len), 0);
		break;
	case KD_MADVISE:
		/*
		 * MADV_FREE stops with EINVAL at a file, shared or locked VMA and
		 * with EPERM at a sealed one: what came before is lazy.
		 */
		if (op->flags != MMP_MADV_FREE ||
		    (ret != 0 && ret != -ENOMEM && ret != -EINVAL && ret != -EPERM))
			break;
		/* An unaligned start is refused before any VMA is looked at. */
		if (ret == -EINVAL && (op->addr & (KD_PAGE - 1)))
			break;
		lazy_mark_free(r, p, op->addr, ret == -EPERM ? before_sealed(r, p, op->addr,
			       page_align(op->len)) : page_align(op->len));
		break;
	case KD_MREMAP: {
		uint64_t old = page_align(op->len), new = page_align(op->len2);
		static uint8_t saved[KD_NPAGES];
		uint64_t n = (old < new ? old : new) / KD_PAGE;

		if (ret < 0 && r->multi_move)
			lazy_moved_partly(r, p, op);
		if (ret < 0)
			break;
		if ((uint64_t)ret == op->addr) {
			/* In place: a shrunk tail is gone, a grown one is new. */
			if (new < old)
				lazy_set(r, p, op->addr + new, old - new, 0);
			else
				lazy_set(r, p, op->addr + old, new - old, 0);
			break;
		}
		for (uint64_t i = 0; i < n; i++)
			saved[i] = *lazy_at(r, p, op->addr + i * KD_PAGE);
		lazy_set(r, p, op->addr, old, 0);
		if (!in_window(ret))
			break;
		if (!r->multi_move)
			lazy_set(r, p, ret, new, 0);
		for (uint64_t i = 0; i < n; i++)
			/* A multi-VMA move leaves the destinations of the holes alone. */
			if (!r->multi_move || r->src_mapped[i])
				*lazy_at(r, p, ret + i * KD_PAGE) = saved[i];
		break;
	}
	}
}

/* Pages of [addr, addr + len) in a MAP_DROPPABLE VMA may read as zeros at any time. */
void mark_droppable(struct run *r, int p, uint64_t addr, uint64_t len)
{
	for (uint64_t a = addr; a < addr + len && in_window(a); a += KD_PAGE) {
		struct mmp_vma *vma = find_vma(r->v[0].sp[p], a);

		if (vma && vma->start <= a && (vma->flags & VM_DROPPABLE))
			*lazy_at(r, p, a) = DROPPABLE;
	}
}

/*
 * A lazy page (MADV_FREE'd, or droppable) in one of the PMDs a collapse of
 * [start, end) would make: whether it is still there is up to reclaim, the
 * host's or KD_RECLAIM's, and a PMD with nothing left in it cannot collapse.
 */
bool has_lazy_page(struct run *r, int p, uint64_t start, uint64_t end)
{
	for (uint64_t a = (start + PMD_SIZE - 1) & PMD_MASK; a + PMD_SIZE <= end && a >= start;
	     a += PMD_SIZE)
		for (uint64_t i = 0; i < PMD_SIZE && in_window(a + i); i += KD_PAGE)
			if (*lazy_at(r, p, a + i))
				return true;
	return false;
}
