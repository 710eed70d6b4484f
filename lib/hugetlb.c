/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hugetlb pools (mm/hugetlb.c's pool half): an hstate per huge page size on
 * each phys, its free pages, reservations and surplus; the nr_hugepages and
 * nr_overcommit_hugepages sysctls; a page taken for a fault
 * (alloc_hugetlb_folio) and given back (free_huge_folio).
 *
 * Counts as /proc/meminfo shows them:
 *  - nr_huge_pages (HugePages_Total): the pool, surplus pages included;
 *  - free_huge_pages (HugePages_Free): pages on the free list;
 *  - resv_huge_pages (HugePages_Rsvd): pages promised to mappings and not
 *    yet faulted in, which the free pages always cover except while the
 *    counter has wrapped (hugetlb.h says when);
 *  - surplus_huge_pages (HugePages_Surp): pages above nr_hugepages, freed to
 *    the buddy allocator as soon as nobody uses them.
 * A free pool page keeps its folio shape (PG_hugetlb head, tail pages) with
 * refcount 0, linked through page->buddy.next.
 */
#include <string.h>

#include "copy_struct.h"
#include "mm.h"

/* The default first (default_hstate), then as arm64's hugetlbpage.c lists its sizes. */
static const struct {
	unsigned int order;
	enum mmp_level level;
	unsigned int ncontig;
} hstate_shapes[HUGE_MAX_HSTATE] = {
	{ HPAGE_PMD_ORDER, MMP_PMD, 1 },		/* 2 MiB: PMD_SIZE */
	{ 4, MMP_PTE, 16 },				/* 64 KiB: CONT_PTE_SIZE */
	{ HPAGE_PMD_ORDER + 4, MMP_PMD, 16 },		/* 32 MiB: CONT_PMD_SIZE */
	{ 2 * (PMD_SHIFT - PAGE_SHIFT), MMP_PUD, 1 },	/* 1 GiB: PUD_SIZE */
};

void hugetlb_init(struct mmp_phys *phys)
{
	for (unsigned int i = 0; i < HUGE_MAX_HSTATE; i++) {
		phys->hstates[i] = (struct hstate){ .order = hstate_shapes[i].order,
						    .level = hstate_shapes[i].level,
						    .ncontig = hstate_shapes[i].ncontig,
						    .free_list = NO_PFN };
	}
	pthread_mutex_init(&phys->hugetlb_mutex, NULL);
	for (unsigned int i = 0; i < HUGETLB_FAULT_MUTEXES; i++)
		pthread_mutex_init(&phys->hugetlb_fault_mutex[i], NULL);
}

struct hstate *size_to_hstate(struct mmp_phys *phys, uint64_t size)
{
	for (unsigned int i = 0; i < HUGE_MAX_HSTATE; i++)
		if (huge_page_size(&phys->hstates[i]) == size)
			return &phys->hstates[i];
	return NULL;
}

struct hstate *hstate_sizelog(struct mmp_phys *phys, unsigned int shift)
{
	if (!shift)
		return &phys->hstates[0];	/* default_hstate */
	return shift < 64 ? size_to_hstate(phys, 1ULL << shift) : NULL;
}

struct hstate *hstate_vma(const struct mmp_vma *vma)
{
	return vma->vm_file->hstate;
}

/* ---- pages in and out of the pool ------------------------------------------------- */

/* A block of the buddy allocator becomes a hugetlb folio (prep_new_hugetlb_folio). */
static void prep_new_hugetlb_folio(struct mmp_phys *phys, uint32_t pfn, unsigned int order)
{
	struct mmp_page *head = pfn_to_page(phys, pfn);

	for (unsigned int i = 1; i < (1u << order); i++) {
		head[i].flags = PG_tail;
		head[i].tail.head = pfn;
	}
	head->order = order;
	head->flags = PG_head | PG_hugetlb;
	head->refcount = 0;
}

/* hugetlb_lock held. */
static void enqueue_hugetlb_folio(struct mmp_phys *phys, struct hstate *h, uint32_t pfn)
{
	pfn_to_page(phys, pfn)->buddy.next = h->free_list;
	h->free_list = pfn;
	h->free_huge_pages++;
}

/* hugetlb_lock held; NO_PFN if the list is empty. */
static uint32_t dequeue_hugetlb_folio(struct mmp_phys *phys, struct hstate *h)
{
	uint32_t pfn = h->free_list;

	if (pfn == NO_PFN)
		return NO_PFN;
	h->free_list = pfn_to_page(phys, pfn)->buddy.next;
	pfn_to_page(phys, pfn)->buddy.next = 0;
	h->free_huge_pages--;
	return pfn;
}

/* A free page leaves the pool for the buddy allocator; hugetlb_lock held (update_and_free). */
static uint32_t remove_pool_hugetlb_folio(struct mmp_phys *phys, struct hstate *h, bool surplus)
{
	uint32_t pfn = dequeue_hugetlb_folio(phys, h);

	if (pfn == NO_PFN)
		return NO_PFN;
	h->nr_huge_pages--;
	if (surplus)
		h->surplus_huge_pages--;
	return pfn;
}

/* Gigantic pages (past the buddy allocator's largest block) come and go whole. */
static void release_to_buddy(struct mmp_phys *phys, uint32_t pfn, unsigned int order)
{
	phys_free_contig_pages(phys, pfn, order);	/* clears the descriptors */
}

static uint32_t alloc_from_buddy(struct mmp_phys *phys, unsigned int order)
{
	return phys_alloc_contig_pages(phys, order);
}

/*
 * A surplus page from free memory while the overcommit limit allows
 * (alloc_surplus_hugetlb_folio): counted before it is had, so two callers
 * cannot both pass the limit, and uncounted if the buddy allocator says no.
 */
static uint32_t alloc_surplus_hugetlb_folio(struct mmp_phys *phys, struct hstate *h)
{
	uint32_t pfn;

	spin_lock(&phys->hugetlb_lock);
	if (h->surplus_huge_pages >= h->nr_overcommit_huge_pages) {
		spin_unlock(&phys->hugetlb_lock);
		return NO_PFN;
	}
	h->nr_huge_pages++;
	h->surplus_huge_pages++;
	spin_unlock(&phys->hugetlb_lock);
	pfn = alloc_from_buddy(phys, h->order);
	if (pfn == NO_PFN) {
		spin_lock(&phys->hugetlb_lock);
		h->nr_huge_pages--;
		h->surplus_huge_pages--;
		spin_unlock(&phys->hugetlb_lock);
		return NO_PFN;
	}
	prep_new_hugetlb_folio(phys, pfn, h->order);
	return pfn;
}

void free_huge_folio(struct mmp_phys *phys, uint32_t pfn)
{
	struct mmp_page *head = pfn_to_page(phys, pfn);
	struct hstate *h = NULL;
	bool restore = head->flags & PG_hugetlb_restore_reserve, surplus;

	for (unsigned int i = 0; i < HUGE_MAX_HSTATE; i++)
		if (phys->hstates[i].order == head->order)
			h = &phys->hstates[i];
	MMP_BUG_ON(!h || folio_mapcount(head) || folio_ref_count(head));
	/* What its last user left: anon or file identity, exclusivity. */
	head->flags = PG_head | PG_hugetlb;
	head->anon_vma = 0;
	head->index = 0;
	head->pincount = 0;
	head->folio.entire_mapcount = 0;
	head->folio.large_mapcount = 0;
	spin_lock(&phys->hugetlb_lock);
	if (restore)
		h->resv_huge_pages++;
	surplus = h->surplus_huge_pages;
	if (surplus) {
		h->nr_huge_pages--;
		h->surplus_huge_pages--;
	} else {
		enqueue_hugetlb_folio(phys, h, pfn);
	}
	spin_unlock(&phys->hugetlb_lock);
	if (surplus)
		release_to_buddy(phys, pfn, h->order);
}

/* Free up to @nr surplus pages of the pool to the buddy allocator; hugetlb_lock held, and kept. */
static void free_surplus_pages(struct mmp_phys *phys, struct hstate *h, uint64_t nr)
{
	while (nr--) {
		uint32_t pfn = remove_pool_hugetlb_folio(phys, h, true);

		if (pfn == NO_PFN)
			break;
		spin_unlock(&phys->hugetlb_lock);
		release_to_buddy(phys, pfn, h->order);
		spin_lock(&phys->hugetlb_lock);
	}
}

/*
 * Promise @delta more pages, gathering surplus pages first when the free ones
 * do not cover the promises (gather_surplus_pages); or, @delta below zero,
 * give promises back and free the surplus pages they kept
 * (return_unused_surplus_pages). 0 or -ENOMEM, with nothing promised.
 */
int hugetlb_acct_memory(struct mmp_phys *phys, struct hstate *h, int64_t delta)
{
	uint64_t nr_got = 0;
	uint32_t pfn;

	if (!delta)
		return 0;
	spin_lock(&phys->hugetlb_lock);
	if (delta < 0) {
		uint64_t unused = -delta;

		h->resv_huge_pages -= unused;
		free_surplus_pages(phys, h, MIN(unused, h->surplus_huge_pages));
		spin_unlock(&phys->hugetlb_lock);
		return 0;
	}
	for (;;) {
		/* Unsigned, as the kernel's: a wrapped counter makes the need look small. */
		int64_t needed = (int64_t)(h->resv_huge_pages + delta - h->free_huge_pages);

		if (needed <= 0) {
			h->resv_huge_pages += delta;
			spin_unlock(&phys->hugetlb_lock);
			return 0;
		}
		spin_unlock(&phys->hugetlb_lock);
		pfn = alloc_surplus_hugetlb_folio(phys, h);
		if (pfn == NO_PFN)
			break;
		spin_lock(&phys->hugetlb_lock);
		enqueue_hugetlb_folio(phys, h, pfn);
		nr_got++;
	}
	/* Not enough: the surplus pages gathered go back. */
	spin_lock(&phys->hugetlb_lock);
	free_surplus_pages(phys, h, nr_got);
	spin_unlock(&phys->hugetlb_lock);
	return -ENOMEM;
}

uint32_t alloc_hugetlb_folio(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr,
			     bool avoid_reserve)
{
	struct mmp_phys *phys = s->phys;
	struct hstate *h = hstate_vma(vma);
	int map_chg = avoid_reserve ? 1 : vma_needs_reservation(h, vma, addr);
	uint32_t pfn = NO_PFN;

	if (map_chg < 0) {
		count_inc(s, MMP_C_HUGETLB_ALLOC_FAIL);
		return NO_PFN;
	}
	spin_lock(&phys->hugetlb_lock);
	/* Without a reservation of its own, a fault may not take a page promised to another. */
	if (!map_chg || h->free_huge_pages - h->resv_huge_pages)
		pfn = dequeue_hugetlb_folio(phys, h);
	spin_unlock(&phys->hugetlb_lock);
	if (pfn == NO_PFN)
		pfn = alloc_surplus_hugetlb_folio(phys, h);
	if (pfn == NO_PFN) {
		count_inc(s, MMP_C_HUGETLB_ALLOC_FAIL);
		return NO_PFN;
	}
	if (!map_chg) {
		spin_lock(&phys->hugetlb_lock);
		h->resv_huge_pages--;
		spin_unlock(&phys->hugetlb_lock);
		pfn_to_page(phys, pfn)->flags |= PG_hugetlb_restore_reserve;
	}
	__atomic_store_n(&pfn_to_page(phys, pfn)->refcount, 1, __ATOMIC_RELEASE);
	count_inc(s, MMP_C_HUGETLB_ALLOC);
	return pfn;
}

/* ---- the sysctls ------------------------------------------------------------------------ */

/* Pages that are neither free nor surplus: in use or reserved (persistent_huge_pages). */
static uint64_t persistent_huge_pages(const struct hstate *h)
{
	return h->nr_huge_pages - h->surplus_huge_pages;
}

/* set_max_huge_pages: the sysctl write. */
static void set_max_huge_pages(struct mmp_phys *phys, struct hstate *h, uint64_t count)
{
	uint64_t min_count;

	spin_lock(&phys->hugetlb_lock);
	/* Surplus pages become persistent first: they are there already. */
	while (h->surplus_huge_pages && count > persistent_huge_pages(h))
		h->surplus_huge_pages--;
	while (count > persistent_huge_pages(h)) {
		uint32_t pfn;

		spin_unlock(&phys->hugetlb_lock);
		pfn = alloc_from_buddy(phys, h->order);
		spin_lock(&phys->hugetlb_lock);
		if (pfn == NO_PFN)
			break;		/* what memory allows: HugePages_Total says */
		prep_new_hugetlb_folio(phys, pfn, h->order);
		h->nr_huge_pages++;
		enqueue_hugetlb_folio(phys, h, pfn);
	}
	/* Shrinking: pages in use or reserved stay, as surplus. */
	min_count = h->resv_huge_pages + h->nr_huge_pages - h->free_huge_pages;
	min_count = MAX(count, min_count);
	while (min_count < persistent_huge_pages(h)) {
		uint32_t pfn = remove_pool_hugetlb_folio(phys, h, false);

		if (pfn == NO_PFN)
			break;
		spin_unlock(&phys->hugetlb_lock);
		release_to_buddy(phys, pfn, h->order);
		spin_lock(&phys->hugetlb_lock);
	}
	while (count < persistent_huge_pages(h) && h->surplus_huge_pages < h->nr_huge_pages)
		h->surplus_huge_pages++;
	spin_unlock(&phys->hugetlb_lock);
}

MMP_EXPORT int mmp_phys_set_hugepages(struct mmp_phys *phys, uint64_t size, uint64_t nr)
{
	struct hstate *h = phys ? size_to_hstate(phys, size) : NULL;

	if (!h)
		return -EINVAL;
	pthread_mutex_lock(&phys->hugetlb_mutex);
	set_max_huge_pages(phys, h, MIN(nr, phys->nr_pages >> h->order));
	pthread_mutex_unlock(&phys->hugetlb_mutex);
	return 0;
}

MMP_EXPORT int mmp_phys_set_overcommit_hugepages(struct mmp_phys *phys, uint64_t size, uint64_t nr)
{
	struct hstate *h = phys ? size_to_hstate(phys, size) : NULL;

	if (!h)
		return -EINVAL;
	pthread_mutex_lock(&phys->hugetlb_mutex);
	spin_lock(&phys->hugetlb_lock);
	h->nr_overcommit_huge_pages = nr;
	spin_unlock(&phys->hugetlb_lock);
	pthread_mutex_unlock(&phys->hugetlb_mutex);
	return 0;
}

MMP_EXPORT int mmp_phys_hugepages_sized(struct mmp_phys *phys, uint64_t size,
					struct mmp_hugepages_stat *st, size_t ssize)
{
	struct hstate *h = phys ? size_to_hstate(phys, size) : NULL;
	struct mmp_hugepages_stat k = { 0 };

	if (!h || !st || ssize < sizeof(uint64_t))
		return -EINVAL;
	spin_lock(&phys->hugetlb_lock);
	k.size = huge_page_size(h);
	k.total = h->nr_huge_pages;
	k.free = h->free_huge_pages;
	k.rsvd = h->resv_huge_pages;
	k.surp = h->surplus_huge_pages;
	k.nr_overcommit = h->nr_overcommit_huge_pages;
	spin_unlock(&phys->hugetlb_lock);
	copy_struct_to_caller(st, ssize, &k, sizeof(k));
	return 0;
}

uint64_t hugetlb_arch_sizes(const struct mmp_arch *a)
{
	/* Every back end holds a PMD leaf. */
	uint64_t mask = 1ULL << MMP_PMD_SHIFT;

	for (unsigned int l = MMP_PTE; l <= MMP_PMD; l++)
		if (a->hugetlb_cont_levels & (1u << l))
			mask |= (uint64_t)a->cont_ptes << level_shift(l);
	if (a->hugetlb_pud && (a->leaf_levels & (1u << MMP_PUD)))
		mask |= 1ULL << level_shift(MMP_PUD);
	return mask;
}

MMP_EXPORT int mmp_hugetlb_sizes(const char *arch, uint64_t *mask)
{
	const struct mmp_arch *a;

	if (!arch || !mask)
		return -EINVAL;
	a = mmp_arch_find(arch);
	if (!a)
		return -ENOENT;
	*mask = hugetlb_arch_sizes(a);
	return 0;
}
