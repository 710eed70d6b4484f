/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hugetlb reservations (mm/hugetlb.c's reserve maps): mmap promises the pages
 * a mapping may fault in, so that a fault never finds the pool empty.
 *
 *  - A shared mapping reserves, on its file's map, the indices the file
 *    does not have yet; the map holds every index reserved or instantiated,
 *    and the file gives back what it never instantiated when it goes.
 *  - A private mapping reserves every page, read-only too (mprotect may make
 *    it writable), on a map of its own that records the indices whose
 *    reservation a fault has consumed (the opposite sense). Only the VMA
 *    that made it, the owner, uses it: a fork child and a MAP_NORESERVE
 *    mapping have none and take pages beyond the reservations, or SIGBUS.
 *    Zapping an owner's page gives its reservation back once the page is
 *    freed; closing the VMA gives back what was never consumed.
 *
 * Indices are in huge pages. A map is sorted disjoint runs, grown with
 * room to spare so that the one split a zap may need seldom allocates; when
 * it cannot, the reservation stays consumed, as the kernel leaves it.
 */
#include <string.h>

#include "mm.h"

struct resv_map *resv_map_alloc(void)
{
	struct resv_map *map = calloc(1, sizeof(*map));

	if (map)
		map->refcount = 1;
	return map;
}

void resv_map_get(struct resv_map *map)
{
	__atomic_fetch_add(&map->refcount, 1, __ATOMIC_RELAXED);
}

void resv_map_put(struct resv_map *map)
{
	if (map && __atomic_sub_fetch(&map->refcount, 1, __ATOMIC_ACQ_REL) == 0) {
		free(map->rg);
		free(map);
	}
}

/* ---- regions (map->lock held) ---------------------------------------------------------- */

/* The first run ending above @idx. */
static uint32_t region_find(const struct resv_map *map, uint64_t idx)
{
	uint32_t lo = 0, hi = map->nr;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (map->rg[mid].to <= idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Room for @more runs: -ENOMEM if the map cannot grow. */
static int region_room(struct resv_map *map, uint32_t more)
{
	struct file_region *rg;
	uint32_t cap;

	if (map->nr + more <= map->cap)
		return 0;
	cap = MAX(8u, 2 * (map->nr + more));
	rg = realloc(map->rg, cap * sizeof(*rg));
	if (!rg)
		return -ENOMEM;
	map->rg = rg;
	map->cap = cap;
	return 0;
}

uint64_t region_count(struct resv_map *map, uint64_t from, uint64_t to)
{
	uint64_t n = 0;

	for (uint32_t i = region_find(map, from); i < map->nr && map->rg[i].from < to; i++)
		n += MIN(to, map->rg[i].to) - MAX(from, map->rg[i].from);
	return n;
}

/* Indices of [from, to) the map lacks (region_chg). */
static uint64_t region_chg(struct resv_map *map, uint64_t from, uint64_t to)
{
	return (to - from) - region_count(map, from, to);
}

/* Add [from, to): the indices that were not there, or -ENOMEM with nothing added. */
static int64_t region_add(struct resv_map *map, uint64_t from, uint64_t to)
{
	uint32_t i = region_find(map, from), j = i;
	uint64_t added = region_chg(map, from, to);

	if (region_room(map, 1))
		return -ENOMEM;
	/* Runs touching [from, to), adjacent ones included, become one. */
	if (i > 0 && map->rg[i - 1].to == from)
		i--;
	j = i;
	while (j < map->nr && map->rg[j].from <= to) {
		from = MIN(from, map->rg[j].from);
		to = MAX(to, map->rg[j].to);
		j++;
	}
	if (j == i) {
		memmove(&map->rg[i + 1], &map->rg[i], (map->nr - i) * sizeof(*map->rg));
		map->nr++;
	} else {
		memmove(&map->rg[i + 1], &map->rg[j], (map->nr - j) * sizeof(*map->rg));
		map->nr -= j - i - 1;
	}
	map->rg[i] = (struct file_region){ from, to };
	return (int64_t)added;
}

/* Remove [from, to): the indices that were there, or -ENOMEM with nothing removed. */
static int64_t region_del(struct resv_map *map, uint64_t from, uint64_t to)
{
	uint32_t i = region_find(map, from);
	uint64_t removed = region_count(map, from, to);

	if (i < map->nr && map->rg[i].from < from && map->rg[i].to > to) {
		/* Inside one run: it splits in two. */
		if (region_room(map, 1))
			return -ENOMEM;
		memmove(&map->rg[i + 1], &map->rg[i], (map->nr - i) * sizeof(*map->rg));
		map->nr++;
		map->rg[i].to = from;
		map->rg[i + 1].from = to;
		return (int64_t)removed;
	}
	while (i < map->nr && map->rg[i].from < to) {
		struct file_region *r = &map->rg[i];

		if (r->from < from) {
			r->to = from;
			i++;
		} else if (r->to > to) {
			r->from = to;
			i++;
		} else {
			memmove(r, r + 1, (map->nr - i - 1) * sizeof(*map->rg));
			map->nr--;
		}
	}
	return (int64_t)removed;
}

/* ---- mmap and the VMA's life --------------------------------------------------------------- */

int hugetlb_reserve_pages(struct mmp_file *f, uint64_t from, uint64_t to, unsigned long vma_flags,
			  struct resv_map **owner_map)
{
	struct hstate *h = f->hstate;
	struct resv_map *map;
	uint64_t chg;
	int64_t added;

	*owner_map = NULL;
	/* No reservation asked: faults take what is free then (VM_NORESERVE). */
	if (vma_flags & VM_NORESERVE)
		return 0;
	if (vma_flags & VM_SHARED) {
		map = f->resv_map;
		spin_lock(&map->lock);
		chg = region_chg(map, from, to);
		spin_unlock(&map->lock);
	} else {
		map = resv_map_alloc();
		if (!map)
			return -ENOMEM;
		chg = to - from;
	}
	if (hugetlb_acct_memory(f->phys, h, (int64_t)chg)) {
		if (!(vma_flags & VM_SHARED))
			resv_map_put(map);
		return -ENOMEM;
	}
	if (!(vma_flags & VM_SHARED)) {
		*owner_map = map;
		return 0;
	}
	spin_lock(&map->lock);
	added = region_add(map, from, to);
	spin_unlock(&map->lock);
	/* Another mapping of the file reserved some meanwhile, or the map could not grow. */
	if (added < 0 || (uint64_t)added < chg)
		hugetlb_acct_memory(f->phys, h, -(int64_t)(chg - (added < 0 ? 0 : added)));
	return added < 0 ? -ENOMEM : 0;
}

void hugetlb_unreserve_private(struct mmp_phys *phys, struct hstate *h, struct resv_map *map,
			       uint64_t from, uint64_t to)
{
	uint64_t consumed;

	spin_lock(&map->lock);
	consumed = region_count(map, from, to);
	spin_unlock(&map->lock);
	hugetlb_acct_memory(phys, h, -(int64_t)((to - from) - consumed));
}

/* The map a fault in @vma reserves from: the file's, the owner's own, or none. */
static struct resv_map *vma_resv_map(struct mmp_vma *vma)
{
	if (vma->flags & VM_SHARED)
		return vma->vm_file->resv_map;
	return __atomic_load_n(&vma->resv_flags, __ATOMIC_RELAXED) & HPAGE_RESV_OWNER ?
		       vma->resv_map : NULL;
}

int vma_needs_reservation(struct hstate *h, struct mmp_vma *vma, uint64_t addr)
{
	struct resv_map *map = vma_resv_map(vma);
	uint64_t idx = vma_hugecache_offset(h, vma, addr), chg;
	int room;

	if (!map)
		return 1;
	spin_lock(&map->lock);
	chg = region_chg(map, idx, idx + 1);
	room = region_room(map, 1);	/* for the commit */
	spin_unlock(&map->lock);
	if (room)
		return -ENOMEM;
	/* A shared map holds the reserved; a private one the consumed: the opposite sense. */
	return vma->flags & VM_SHARED ? (int)chg : !chg;
}

void vma_commit_reservation(struct hstate *h, struct mmp_vma *vma, uint64_t addr)
{
	struct resv_map *map = vma_resv_map(vma);
	uint64_t idx = vma_hugecache_offset(h, vma, addr);

	if (!map)
		return;
	spin_lock(&map->lock);
	region_add(map, idx, idx + 1);	/* room was made by vma_needs_reservation */
	spin_unlock(&map->lock);
}

int vma_add_reservation(struct hstate *h, struct mmp_vma *vma, uint64_t addr)
{
	struct resv_map *map = vma_resv_map(vma);
	uint64_t idx = vma_hugecache_offset(h, vma, addr);
	int64_t ret;

	if (!map || (vma->flags & VM_SHARED))
		return 0;
	spin_lock(&map->lock);
	ret = region_del(map, idx, idx + 1);
	spin_unlock(&map->lock);
	return ret < 0 ? -ENOMEM : (int)ret;
}

void hugetlb_vm_op_open(struct mmp_vma *vma)
{
	if (vma->resv_map)
		resv_map_get(vma->resv_map);
}

void hugetlb_vm_op_close(struct mmp_space *s, struct mmp_vma *vma)
{
	struct resv_map *map = vma->resv_map;
	struct hstate *h;

	if (!is_vm_hugetlb_page(vma) || !map)
		return;
	h = hstate_vma(vma);
	if (vma->resv_flags & HPAGE_RESV_OWNER)
		hugetlb_unreserve_private(s->phys, h, map, vma_hugecache_offset(h, vma, vma->start),
					  vma_hugecache_offset(h, vma, vma->end));
	vma->resv_map = NULL;
	resv_map_put(map);
}

int hugetlb_vm_op_split(struct mmp_vma *vma, uint64_t addr)
{
	if (is_vm_hugetlb_page(vma) && (addr & (huge_page_size(hstate_vma(vma)) - 1)))
		return -EINVAL;
	return 0;
}

void hugetlb_dup_vma_private(struct mmp_vma *vma)
{
	vma->resv_map = NULL;
	vma->resv_flags = 0;
}

void hugetlb_unreserve_pages(struct mmp_file *f, uint64_t first, uint64_t freed)
{
	struct resv_map *map = f->resv_map;
	int64_t held;

	spin_lock(&map->lock);
	held = region_del(map, first, UINT64_MAX);	/* removing a tail never splits */
	spin_unlock(&map->lock);
	/* What the map held and the cache did not have was promised, not used. */
	hugetlb_acct_memory(f->phys, f->hstate, -(held - (int64_t)freed));
}

void hugetlb_file_release(struct mmp_file *f, uint64_t freed)
{
	hugetlb_unreserve_pages(f, 0, freed);
	resv_map_put(f->resv_map);
	f->resv_map = NULL;
}

/*
 * mremap moved [addr, addr + len) of @old, a hugetlb VMA, to @new: the moved
 * VMA owns the reserve map now, and @old loses it (move_vma's
 * clear_vma_resv_huge_pages), even when part of it stays: 6.18 then never
 * gives back what that part reserved and did not use (HugePages_Rsvd stays
 * up, seen on a 6.18 host). Counted in resv_leaked for verify.
 */
void hugetlb_mremap_resv(struct mmp_space *s, struct mmp_vma *old, struct mmp_vma *new,
			 uint64_t addr, uint64_t len)
{
	struct resv_map *map = old->resv_map;
	struct hstate *h = hstate_vma(old);
	uint64_t first, last, kept, leaked;

	if (!map || !(old->resv_flags & HPAGE_RESV_OWNER))
		return;
	resv_map_get(map);
	new->resv_map = map;
	new->resv_flags = HPAGE_RESV_OWNER;
	first = vma_hugecache_offset(h, old, addr);
	last = vma_hugecache_offset(h, old, addr + len);
	kept = ((old->end - old->start) >> (PAGE_SHIFT + h->order)) - (last - first);
	spin_lock(&map->lock);
	leaked = kept - region_count(map, vma_hugecache_offset(h, old, old->start), first) -
		 region_count(map, last, vma_hugecache_offset(h, old, old->end));
	spin_unlock(&map->lock);
	if (leaked) {
		spin_lock(&s->phys->hugetlb_lock);
		h->resv_leaked += leaked;
		spin_unlock(&s->phys->hugetlb_lock);
	}
	old->resv_map = NULL;
	old->resv_flags = 0;
	resv_map_put(map);
}
