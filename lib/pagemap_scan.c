/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PAGEMAP_SCAN (fs/proc/task_mmu.c's do_pagemap_scan, 6.7): a walk of the
 * VMAs of a range that classifies each page (present, file, zero page, huge,
 * soft-dirty, swap entry, guard marker, written), keeps those the masks
 * select and reports them as ranges, a range growing while the next page
 * follows it with the same categories. No VMA has userfaultfd write-protect
 * (not modelled): PAGE_IS_WPALLOWED is never set, every page counts as
 * written, PM_SCAN_CHECK_WPASYNC is refused at the first VMA and
 * PM_SCAN_WP_MATCHING passes every VMA by, as pagemap_scan_test_walk does.
 *
 * The kernel fills a bounce buffer of at most 512 ranges and copies it out
 * when full, restarting the walk where it stopped; a range that ends a
 * buffer never merges with the next one's first, but it could not have (it
 * did not fit because it could not merge), so writing straight to the
 * caller's vector gives the same ranges.
 */
#include "introspect_walk.h"
#include "mmap_lock.h"
#include "release.h"
#include "swapops.h"

#define PM_SCAN_FLAGS	(MMP_PM_SCAN_WP_MATCHING | MMP_PM_SCAN_CHECK_WPASYNC)

struct pagemap_scan_private {
	struct mmp_pm_scan_arg arg;
	struct mmp_page_region *vec;	/* the caller's vector; NULL: nothing is output */
	uint64_t vec_idx;		/* the range being grown; valid when vec[vec_idx].end */
	uint64_t found_pages;
	uint64_t cur_vma_category;
	uint64_t cursor;		/* the walk reported everything below it */
};

static uint64_t pm_scan_categories(const struct mmp_space *s)
{
	uint64_t all = (MMP_PAGE_IS_SOFT_DIRTY << 1) - 1;

	if (release_follows(s, RULE_PAGEMAP_GUARD_REGION))
		all |= MMP_PAGE_IS_GUARD;
	return all;
}

static bool pagemap_scan_is_interesting_page(uint64_t categories,
					     const struct pagemap_scan_private *p)
{
	categories ^= p->arg.category_inverted;
	if ((categories & p->arg.category_mask) != p->arg.category_mask)
		return false;
	if (p->arg.category_anyof_mask && !(categories & p->arg.category_anyof_mask))
		return false;
	return true;
}

/* Only WPALLOWED decides at the VMA (pagemap_scan_is_interesting_vma). */
static bool pagemap_scan_is_interesting_vma(uint64_t categories,
					    const struct pagemap_scan_private *p)
{
	uint64_t required = p->arg.category_mask & MMP_PAGE_IS_WPALLOWED;

	return ((categories ^ p->arg.category_inverted) & required) == required;
}

/* Grow the current range or start the next; false when the vector is full. */
static bool pagemap_scan_push_range(uint64_t categories, struct pagemap_scan_private *p,
				    uint64_t addr, uint64_t end)
{
	struct mmp_page_region *cur = &p->vec[p->vec_idx];

	if (addr == cur->end && categories == cur->categories) {
		cur->end = end;
		return true;
	}
	if (cur->end) {
		if (p->vec_idx >= p->arg.vec_len - 1)
			return false;
		cur = &p->vec[++p->vec_idx];
	}
	cur->start = addr;
	cur->end = end;
	cur->categories = categories;
	return true;
}

/*
 * Report [addr, *end): cut short at max_pages, or refused when the vector is
 * full (*end = addr); -ENOSPC then, walk_end where it stopped.
 */
static int pagemap_scan_output(uint64_t categories, struct pagemap_scan_private *p,
			       uint64_t addr, uint64_t *end)
{
	uint64_t n_pages, total;
	int ret = 0;

	if (!p->vec)
		return 0;
	categories &= p->arg.return_mask;
	n_pages = (*end - addr) >> PAGE_SHIFT;
	if (__builtin_add_overflow(p->found_pages, n_pages, &total) || total > p->arg.max_pages) {
		uint64_t too_much = total - p->arg.max_pages;

		*end -= too_much << PAGE_SHIFT;
		n_pages -= too_much;
		ret = -ENOSPC;
	}
	if (!pagemap_scan_push_range(categories, p, addr, *end)) {
		*end = addr;
		n_pages = 0;
		ret = -ENOSPC;
	}
	p->found_pages += n_pages;
	if (ret)
		p->arg.walk_end = *end;
	return ret;
}

/* What a page, or a huge entry's pages, are (pagemap_page_category, pagemap_thp_category). */
static uint64_t pagemap_page_category(struct mmp_space *s, const struct introspect_page *pg)
{
	uint64_t categories = 0;

	if (pg->level != MMP_PTE)	/* a THP's PMD, a hugetlb PMD or PUD */
		categories |= MMP_PAGE_IS_HUGE;
	if (pg->level == MMP_PTE && pg->entry && is_swap_pte(s, pg->entry)) {
		categories |= MMP_PAGE_IS_SWAPPED | MMP_PAGE_IS_WRITTEN;
		if (is_guard_pte_marker(s, pg->entry) &&
		    release_follows(s, RULE_PAGEMAP_GUARD_REGION))
			categories |= MMP_PAGE_IS_GUARD;
		return categories;
	}
	if (!entry_present(pg->eflags))
		return categories;
	categories |= MMP_PAGE_IS_PRESENT | MMP_PAGE_IS_WRITTEN;
	if (pg->folio_flags & MMP_FOLIO_ZERO)
		categories |= MMP_PAGE_IS_PFNZERO;
	else if (!(pg->folio_flags & MMP_FOLIO_ANON))
		categories |= MMP_PAGE_IS_FILE;
	if (pg->eflags & MMP_E_SOFT_DIRTY)
		categories |= MMP_PAGE_IS_SOFT_DIRTY;
	return categories;
}

/* Pages with no entry up to @to: the VMA's categories (pagemap_scan_pte_hole). */
static int pagemap_scan_hole(struct pagemap_scan_private *p, uint64_t to)
{
	uint64_t addr = p->cursor, end = to;
	int ret;

	if (addr >= to)
		return 0;
	p->cursor = to;
	if (!pagemap_scan_is_interesting_page(p->cur_vma_category, p))
		return 0;
	ret = pagemap_scan_output(p->cur_vma_category, p, addr, &end);
	return ret;
}

static int pagemap_scan_entry(struct mmp_space *s, const struct introspect_page *pg, void *arg)
{
	struct pagemap_scan_private *p = arg;
	uint64_t categories, end = pg->addr + ((uint64_t)pg->nr << PAGE_SHIFT);
	int ret = pagemap_scan_hole(p, pg->addr);

	if (ret)
		return ret;
	p->cursor = end;
	categories = p->cur_vma_category | pagemap_page_category(s, pg);
	if (!pagemap_scan_is_interesting_page(categories, p))
		return 0;
	return pagemap_scan_output(categories, p, pg->addr, &end);
}

/* pagemap_scan_get_args: the ioctl's checks, in its order, and the defaults. */
static int pagemap_scan_get_args(struct mmp_space *s, struct mmp_pm_scan_arg *arg)
{
	uint64_t cats = pm_scan_categories(s), len = arg->end - arg->start, bytes;

	if (arg->size != sizeof(*arg))
		return -EINVAL;
	if (arg->flags & ~PM_SCAN_FLAGS)
		return -EINVAL;
	if ((arg->category_inverted | arg->category_mask | arg->category_anyof_mask |
	     arg->return_mask) & ~cats)
		return -EINVAL;
	if (arg->start & (PAGE_SIZE - 1))
		return -EINVAL;
	/* access_ok(start, end - start): no wrap, nothing past the user addresses. */
	if (arg->start + len < arg->start || arg->start + len > TASK_SIZE(s))
		return -EFAULT;
	if (!arg->vec && arg->vec_len)
		return -EINVAL;
	if (arg->vec && (__builtin_mul_overflow(arg->vec_len, sizeof(struct mmp_page_region),
						&bytes) ||
			 arg->vec + bytes < arg->vec))
		return -EFAULT;
	arg->end = (arg->end + PAGE_SIZE - 1) & PAGE_MASK;
	arg->walk_end = 0;
	if (!arg->max_pages)
		arg->max_pages = UINT64_MAX;
	return 0;
}

MMP_EXPORT long mmp_space_pagemap_scan(struct mmp_space *s, struct mmp_pm_scan_arg *uarg)
{
	struct pagemap_scan_private p = { 0 };
	long ret = 0, n_out = 0;

	if (!s)
		return -EINVAL;
	if (!uarg)
		return -EFAULT;
	p.arg = *uarg;
	ret = pagemap_scan_get_args(s, &p.arg);
	if (ret)
		return ret;
	if (p.arg.vec_len) {
		p.vec = (struct mmp_page_region *)(uintptr_t)p.arg.vec;
		p.vec[0].start = p.vec[0].end = 0;
	}
	mmap_read_lock(s);
	for (struct mmp_vma *vma = vma_find_next(s, p.arg.start); vma && vma->start < p.arg.end;
	     vma = vma->vm_next) {
		uint64_t from = MAX(vma->start, p.arg.start), to = MIN(vma->end, p.arg.end);

		/* pagemap_scan_test_walk: no VMA allows uffd-wp async. */
		if (p.arg.flags & MMP_PM_SCAN_CHECK_WPASYNC) {
			ret = -EPERM;
			break;
		}
		if (p.arg.flags & MMP_PM_SCAN_WP_MATCHING)
			continue;
		/*
		 * Nothing is uffd write-protected: every page counts as
		 * written, an empty one too (as the host reports it).
		 */
		p.cur_vma_category = MMP_PAGE_IS_WRITTEN |
				     (vma->flags & VM_SOFTDIRTY ? MMP_PAGE_IS_SOFT_DIRTY : 0);
		if (!pagemap_scan_is_interesting_vma(p.cur_vma_category, &p))
			continue;
		p.cursor = from;
		ret = introspect_walk(s, from, to, pagemap_scan_entry, &p);
		if (!ret)
			ret = pagemap_scan_hole(&p, to);
		if (ret)
			break;
	}
	WRITE_ONCE(s->last_op, "mmp_space_pagemap_scan");
	mmap_read_unlock(s);
	/* pagemap_scan_flush_buffer: the ranges out, the last one if not empty. */
	if (p.vec) {
		n_out = (long)p.vec_idx;
		if (p.vec[p.vec_idx].end != p.vec[p.vec_idx].start)
			n_out++;
	}
	if (!ret || ret == -ENOSPC)
		ret = n_out;
	uarg->walk_end = p.arg.walk_end ? p.arg.walk_end : p.arg.end;
	return ret;
}
