/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Simulated physical memory: one host reservation of frames, a memmap of
 * struct mmp_page descriptors, and a binary buddy allocator over them.
 *
 * Free blocks are kept on per-order doubly linked lists threaded through the
 * head descriptor (page->buddy, pfn links, NO_PFN terminates). Every descriptor
 * of a free block other than its head is zero, so an allocation hands out a
 * clean block without touching more than the pieces it splits off.
 */
#include <string.h>
#include <sys/mman.h>

#include "copy_struct.h"
#include "folio.h"
#include "rcu.h"

#define MAX_ORDER_PAGES	(1ull << MMP_MAX_ORDER)
/* pfns are uint32_t and UINT32_MAX is NO_PFN: the last usable frame must stay below it. */
#define MAX_PHYS_PAGES	((1ull << 32) - MAX_ORDER_PAGES)

/* ---- free lists (phys->lock held) ------------------------------------------------- */

static void free_list_add(struct mmp_phys *phys, uint32_t pfn, unsigned int order)
{
	struct mmp_page *page = pfn_to_page(phys, pfn);
	uint32_t next = phys->free_list[order];

	page->flags = PG_buddy;
	page->order = order;
	page->buddy.prev = NO_PFN;
	page->buddy.next = next;
	if (next != NO_PFN)
		pfn_to_page(phys, next)->buddy.prev = pfn;
	phys->free_list[order] = pfn;
	phys->nr_free[order]++;
	phys->free_pages += 1ull << order;
}

/* Unlink the free block at @pfn and clear its head: it becomes plain frames again. */
static void free_list_del(struct mmp_phys *phys, uint32_t pfn, unsigned int order)
{
	struct mmp_page *page = pfn_to_page(phys, pfn);
	uint32_t next = page->buddy.next, prev = page->buddy.prev;

	if (prev != NO_PFN)
		pfn_to_page(phys, prev)->buddy.next = next;
	else
		phys->free_list[order] = next;
	if (next != NO_PFN)
		pfn_to_page(phys, next)->buddy.prev = prev;
	memset(page, 0, sizeof(*page));
	phys->nr_free[order]--;
	phys->free_pages -= 1ull << order;
}

/* The head of the free block containing @pfn, or NO_PFN. */
static uint32_t __free_block_of(struct mmp_phys *phys, uint64_t pfn)
{
	for (unsigned int order = 0; order <= MMP_MAX_ORDER; order++) {
		uint64_t head = pfn & ~((1ull << order) - 1);
		struct mmp_page *page = pfn_to_page(phys, head);

		if ((page->flags & PG_buddy) && pfn - head < (1ull << page->order))
			return head;
	}
	return NO_PFN;
}

bool phys_pfn_is_free(struct mmp_phys *phys, uint64_t pfn)
{
	bool ret;

	if (!phys_pfn_valid(phys, pfn))
		return false;
	spin_lock(&phys->lock);
	ret = __free_block_of(phys, pfn) != NO_PFN ||
	      (__atomic_load_n(&pfn_to_page(phys, pfn)->flags, __ATOMIC_RELAXED) & PG_pcp);
	spin_unlock(&phys->lock);
	return ret;
}

/* ---- allocation --------------------------------------------------------------------- */

static uint32_t __alloc_pages(struct mmp_phys *phys, unsigned int order)
{
	unsigned int o = order;
	uint32_t pfn;

	while (o <= MMP_MAX_ORDER && phys->free_list[o] == NO_PFN)
		o++;
	if (o > MMP_MAX_ORDER)
		return NO_PFN;

	pfn = phys->free_list[o];
	free_list_del(phys, pfn, o);
	/* Keep the lower half, give the upper one back, until the block fits. */
	while (o > order) {
		o--;
		free_list_add(phys, pfn + (1u << o), o);
	}
	pfn_to_page(phys, pfn)->order = order;
	return pfn;
}

/* ---- per-CPU lists -------------------------------------------------------------------- */

static uint64_t isqrt(uint64_t v)
{
	uint64_t r = 0;

	for (uint64_t bit = 1ull << 62; bit; bit >>= 2) {
		if (v >= r + bit) {
			v -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
	}
	return r;
}

static unsigned int clamp_u(unsigned int v, unsigned int lo, unsigned int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/*
 * zone_highsize, both ways: high_min from the low watermark, high_max from an
 * eighth of memory (MIN_PERCPU_PAGELIST_HIGH_FRACTION), each split over the
 * CPUs and at least four batches. test_phys holds it to the host kernel's
 * /proc/zoneinfo.
 */
void pcp_highsize(uint64_t managed, uint64_t low, unsigned int nr_cpus, unsigned int batch,
		  uint32_t *high_min, uint32_t *high_max)
{
	uint64_t lo = MAX(low / nr_cpus, (uint64_t)batch << 2);

	*high_min = (uint32_t)lo;
	*high_max = (uint32_t)MAX(managed / 8 / nr_cpus, lo);
}

/*
 * The bounds of @nr_online lists: the low watermark of the phys as the
 * kernel sets it for a zone of that size (min_free_kbytes = sqrt(16 * KiB of
 * memory), plus watermark_scale_factor's 0.1%), split over the lists online
 * as the kernel splits it over the node's CPUs.
 */
static void pcp_set_high_bounds(struct mmp_phys *phys, unsigned int nr_online)
{
	uint64_t managed = phys->nr_pages, min_kb = isqrt(managed * (PAGE_SIZE / 1024) * 16);
	uint64_t min, low;
	uint32_t high_min, high_max;

	min_kb = MIN(MAX(min_kb, 128), 262144);
	min = min_kb / (PAGE_SIZE / 1024);
	low = min + MAX(min / 4, managed * 10 / 10000);
	pcp_highsize(managed, low, nr_online, PCP_BATCH, &high_min, &high_max);
	WRITE_ONCE(phys->pcp_high_min, high_min);
	WRITE_ONCE(phys->pcp_high_max, high_max);
}

/*
 * A list's first use on this phys brings it online, as CPU hotplug's
 * zone_pcp_update does for a CPU: the bounds are split anew over one more
 * list, and every list online has its high clamped into them. Rare (once per
 * list and phys), so it may take every list's lock.
 */
static void __attribute__((cold)) pcp_online(struct mmp_phys *phys, struct mmp_pcp *pcp)
{
	spin_lock(&phys->pcp_online_lock);
	if (!READ_ONCE(pcp->online)) {
		pcp_set_high_bounds(phys, ++phys->pcp_nr_online);
		for (int i = 0; i < MMP_COUNTER_SHARDS; i++) {
			struct mmp_pcp *p = &phys->pcp[i];

			if (p != pcp && !READ_ONCE(p->online))
				continue;
			spin_lock(&p->lock);
			p->high = p == pcp ? phys->pcp_high_min
					   : clamp_u(p->high, phys->pcp_high_min, phys->pcp_high_max);
			spin_unlock(&p->lock);
		}
		WRITE_ONCE(pcp->online, true);
	}
	spin_unlock(&phys->pcp_online_lock);
}

__thread int phys_pcp_shard __attribute__((tls_model("initial-exec"))) = -1;

/*
 * This thread's list in *@pcp once its shard is known and the list online,
 * with no call; false while a first use's steps are due (this_pcp).
 */
static __always_inline bool this_pcp_ready(struct mmp_phys *phys, struct mmp_pcp **pcp)
{
	int shard = phys_pcp_shard;

	if (shard < 0)
		shard = mmp_thread_shard;
	if (unlikely(shard < 0))
		return false;
	*pcp = &phys->pcp[shard];
	return likely(READ_ONCE((*pcp)->online));
}

/* This thread's list, brought online by its first use. Take no lock before. */
static __always_inline struct mmp_pcp *this_pcp(struct mmp_phys *phys)
{
	struct mmp_pcp *pcp;
	int shard;

	if (likely(this_pcp_ready(phys, &pcp)))
		return pcp;
	shard = phys_pcp_shard;
	pcp = &phys->pcp[shard >= 0 ? shard : counter_shard()];
	if (!READ_ONCE(pcp->online))
		pcp_online(phys, pcp);
	return pcp;
}

static void __free_pages(struct mmp_phys *phys, uint32_t pfn, unsigned int order);

/*
 * free_pcppages_bulk: move the @nr coldest frames of @pcp to the buddy
 * allocator. pcp->lock held. A ring, so the frames left behind stay put.
 */
static void pcp_drain(struct mmp_phys *phys, struct mmp_pcp *pcp, unsigned int nr)
{
	uint32_t mask = phys->pcp_ring_mask;

	nr = MIN(nr, pcp->count);
	if (!nr)
		return;
	spin_lock(&phys->lock);
	for (unsigned int i = 0; i < nr; i++) {
		uint32_t pfn = *pcp_slot(pcp, mask, i);

		pfn_to_page(phys, pfn)->flags = 0;
		__free_pages(phys, pfn, 0);
	}
	spin_unlock(&phys->lock);
	pcp->head = (pcp->head + nr) & mask;
	pcp->count -= nr;
}

void phys_drain_pcp(struct mmp_phys *phys)
{
	for (int i = 0; i < MMP_COUNTER_SHARDS; i++) {
		spin_lock(&phys->pcp[i].lock);
		pcp_drain(phys, &phys->pcp[i], phys->pcp[i].count);
		spin_unlock(&phys->pcp[i].lock);
	}
}

/*
 * nr_pcp_alloc: how many frames an empty list takes from the buddy
 * allocator. Each refill without a free in between doubles the batch, up to
 * PCP_BATCH << PCP_BATCH_SCALE_MAX, and raises high by it (a larger list
 * would have spared the trip); the list is never filled past high - batch.
 */
static unsigned int pcp_alloc_batch(struct mmp_phys *phys, struct mmp_pcp *pcp)
{
	unsigned int high = pcp->high;	/* always within high_min..high_max */
	unsigned int batch = PCP_BATCH << pcp->alloc_factor, max_nr;
	unsigned int high_min = READ_ONCE(phys->pcp_high_min);
	unsigned int high_max = READ_ONCE(phys->pcp_high_max);

	if (high_min != high_max)
		high = MIN(high + batch, high_max);
	pcp->high = high;
	max_nr = high > pcp->count + 2 * PCP_BATCH ? high - pcp->count - PCP_BATCH : PCP_BATCH;
	if (batch <= max_nr && pcp->alloc_factor < PCP_BATCH_SCALE_MAX)
		pcp->alloc_factor++;
	return MIN(batch, max_nr);
}

/*
 * nr_pcp_high and nr_pcp_free, for a free that filled the list to high: a
 * list that fills during a run of frees grows to hold that run (up to
 * high_max), and gives back the run so far, keeping a batch. The kernel also
 * shrinks high under memory pressure (ZONE_BELOW_HIGH, reclaim) and decays it
 * every second; the simulator has neither watermarks nor a clock, and the
 * allocator drains every list before it fails. Below high, nr_pcp_high
 * changes nothing: the free path only tests the count.
 */
static void pcp_free_high(struct mmp_phys *phys, struct mmp_pcp *pcp)
{
	unsigned int high = pcp->high;
	unsigned int high_min = READ_ONCE(phys->pcp_high_min);
	unsigned int high_max = READ_ONCE(phys->pcp_high_max);

	if (high_min != high_max && high < pcp->free_count + PCP_BATCH)
		pcp->high = clamp_u(pcp->free_count + PCP_BATCH, high_min, high_max);
	pcp_drain(phys, pcp, clamp_u(pcp->free_count, PCP_BATCH, high - PCP_BATCH));
}

/*
 * rmqueue_bulk: up to @nr frames onto the cold end of @pcp, in the order
 * __alloc_pages() one at a time would give them: the lower half of the
 * smallest free block first. A block that fits goes on whole, rather than
 * being split onto the free lists a frame at a time. phys->lock held.
 */
static void __rmqueue_bulk(struct mmp_phys *phys, struct mmp_pcp *pcp, unsigned int nr)
{
	uint32_t mask = phys->pcp_ring_mask;

	while (pcp->count < nr) {
		unsigned int o = 0;
		uint32_t pfn;

		while (o <= MMP_MAX_ORDER && phys->free_list[o] == NO_PFN)
			o++;
		if (o > MMP_MAX_ORDER)
			return;
		pfn = phys->free_list[o];
		free_list_del(phys, pfn, o);
		/* Give the upper halves back until the rest fits (expand). */
		while (1u << o > nr - pcp->count) {
			o--;
			free_list_add(phys, pfn + (1u << o), o);
		}
		/* Below a free block's head every descriptor is zero already. */
		for (uint32_t i = 0; i < 1u << o; i++) {
			pfn_to_page(phys, pfn + i)->flags = PG_pcp;
			pcp->head = (pcp->head - 1) & mask;
			pcp->pfns[pcp->head] = pfn + i;
		}
		pcp->count += 1u << o;
	}
}

/* Take the hottest frame of @pcp and unlock it: NO_PFN when the list is empty. */
static __always_inline uint32_t pcp_pop_unlock(struct mmp_phys *phys, struct mmp_pcp *pcp)
{
	uint32_t pfn = NO_PFN;

	if (likely(pcp->count)) {
		pfn = *pcp_slot(pcp, phys->pcp_ring_mask, --pcp->count);
		pfn_to_page(phys, pfn)->flags = 0;
	}
	spin_unlock(&pcp->lock);
	return pfn;
}

static uint32_t phys_alloc_pages_slow(struct mmp_phys *phys, unsigned int order);

/*
 * An empty list takes a batch from the buddy lists first (pcp->lock held);
 * with none left, the allocation goes the out-of-memory way. Out of line and
 * called last, so the common case saves no registers.
 */
static __attribute__((noinline)) uint32_t pcp_refill_pop_unlock(struct mmp_phys *phys,
								struct mmp_pcp *pcp)
{
	unsigned int batch = pcp_alloc_batch(phys, pcp);
	uint32_t pfn;

	spin_lock(&phys->lock);
	__rmqueue_bulk(phys, pcp, batch);
	spin_unlock(&phys->lock);
	pfn = pcp_pop_unlock(phys, pcp);
	return pfn != NO_PFN ? pfn : phys_alloc_pages_slow(phys, 0);
}

/*
 * rmqueue_pcplist: the hottest frame of list @pcp, refilled a batch at a
 * time; NO_PFN only when memory is out.
 */
static __always_inline uint32_t __pcp_alloc(struct mmp_phys *phys, struct mmp_pcp *pcp)
{
	spin_lock(&pcp->lock);
	/* An allocation ends a run of frees: the next drain is smaller. */
	pcp->free_count >>= 1;
	if (unlikely(!pcp->count))
		return pcp_refill_pop_unlock(phys, pcp);
	return pcp_pop_unlock(phys, pcp);
}

/*
 * A thread's first allocation on this phys: its shard found, its list brought
 * online. A thread left without a shard of its own (all taken) comes here on
 * every allocation and uses the shared list.
 */
static __attribute__((noinline)) uint32_t pcp_alloc_first(struct mmp_phys *phys)
{
	return __pcp_alloc(phys, this_pcp(phys));
}

/* From this thread's list; the rare first use (this_pcp's slow steps) out of line. */
static __always_inline uint32_t pcp_alloc(struct mmp_phys *phys)
{
	struct mmp_pcp *pcp;

	if (unlikely(!this_pcp_ready(phys, &pcp)))
		return pcp_alloc_first(phys);
	return __pcp_alloc(phys, pcp);
}

/*
 * What @run frees in a row do to the tuning, settled at once rather than per
 * frame (only a refill or a drain reads it, and neither comes between): the
 * run of frees grows, saturating, and each free halves alloc_factor.
 */
static void pcp_count_frees(struct mmp_pcp *pcp, unsigned int *run)
{
	pcp->free_count = MIN(pcp->free_count + *run, PCP_BATCH << PCP_BATCH_SCALE_MAX);
	pcp->alloc_factor = *run > PCP_BATCH_SCALE_MAX ? 0 : pcp->alloc_factor >> *run;
	*run = 0;
}

/*
 * free_frozen_page_commit: onto the hot end; past high, the coldest go back
 * in a batch. *@run counts the frees not yet settled by pcp_count_frees().
 */
static __always_inline void pcp_free(struct mmp_phys *phys, struct mmp_pcp *pcp, uint32_t pfn,
				     unsigned int *run)
{
	struct mmp_page *page = pfn_to_page(phys, pfn);

	if (phys->debug_vm) {
		/*
		 * free_page_is_bad(), checked with check_pages_enabled as the
		 * kernel does (CONFIG_DEBUG_VM): a frame out of range, already
		 * free, or inside a free buddy block (a double free).
		 */
		MMP_BUG_ON(pfn >= phys->nr_pages);
		MMP_BUG_ON(page->flags & (PG_buddy | PG_pcp));
		spin_lock(&phys->lock);
		MMP_BUG_ON(__free_block_of(phys, pfn) != NO_PFN);
		spin_unlock(&phys->lock);
	}
	memset(page, 0, sizeof(*page));
	page->flags = PG_pcp;
	*pcp_slot(pcp, phys->pcp_ring_mask, pcp->count++) = pfn;
	(*run)++;
	if (unlikely(pcp->count >= pcp->high)) {
		pcp_count_frees(pcp, run);
		pcp_free_high(phys, pcp);
	}
}

/* A block from the buddy lists, or, out of memory, after draining every CPU's list. */
static __attribute__((noinline)) uint32_t phys_alloc_pages_slow(struct mmp_phys *phys,
								 unsigned int order)
{
	uint32_t pfn = NO_PFN;

	if (order) {
		spin_lock(&phys->lock);
		pfn = __alloc_pages(phys, order);
		spin_unlock(&phys->lock);
		if (pfn != NO_PFN)
			return pfn;
	}
	/* Out of memory: free frames may sit on other CPUs' lists. */
	phys_drain_pcp(phys);
	spin_lock(&phys->lock);
	pfn = __alloc_pages(phys, order);
	spin_unlock(&phys->lock);
	return pfn;
}

uint32_t phys_alloc_pages(struct mmp_phys *phys, unsigned int order)
{
	if (likely(order == 0))
		return pcp_alloc(phys);
	if (order > MMP_MAX_ORDER)
		return NO_PFN;
	return phys_alloc_pages_slow(phys, order);
}

/* Whether the max-order block at @pfn is free whole; phys->lock held. */
static bool max_block_free(struct mmp_phys *phys, uint64_t pfn)
{
	struct mmp_page *page = pfn_to_page(phys, pfn);

	return (page->flags & PG_buddy) && page->order == MMP_MAX_ORDER;
}

uint32_t phys_alloc_contig_pages(struct mmp_phys *phys, unsigned int order)
{
	uint64_t nr = 1ull << order, blocks;
	uint32_t found = NO_PFN;

	if (order <= MMP_MAX_ORDER)
		return phys_alloc_pages(phys, order);
	blocks = nr >> MMP_MAX_ORDER;
	phys_drain_pcp(phys);	/* frames on CPU lists keep their blocks from merging */
	spin_lock(&phys->lock);
	/* From the top down, where the buddy allocator hands out last. */
	for (uint64_t start = phys->nr_pages & ~(nr - 1); start >= nr && found == NO_PFN;
	     start -= nr) {
		uint64_t base = start - nr, i;

		for (i = 0; i < blocks && max_block_free(phys, base + (i << MMP_MAX_ORDER)); i++)
			;
		if (i < blocks)
			continue;
		for (i = 0; i < blocks; i++)
			free_list_del(phys, base + (i << MMP_MAX_ORDER), MMP_MAX_ORDER);
		found = (uint32_t)base;
	}
	spin_unlock(&phys->lock);
	return found;
}

void phys_free_contig_pages(struct mmp_phys *phys, uint32_t pfn, unsigned int order)
{
	if (order <= MMP_MAX_ORDER) {
		phys_free_pages(phys, pfn, order);
		return;
	}
	spin_lock(&phys->lock);
	for (uint64_t i = 0; i < (1ull << order); i += MAX_ORDER_PAGES)
		__free_pages(phys, pfn + i, MMP_MAX_ORDER);
	spin_unlock(&phys->lock);
}

/* ---- freeing -------------------------------------------------------------------------- */

static void __free_pages(struct mmp_phys *phys, uint32_t pfn, unsigned int order)
{
	uint64_t nr = 1ull << order;
	struct mmp_page *page;

	MMP_BUG_ON(order > MMP_MAX_ORDER);
	MMP_BUG_ON(pfn >= phys->nr_pages || pfn + nr > phys->nr_pages);
	MMP_BUG_ON(pfn & (nr - 1));
	page = pfn_to_page(phys, pfn);
	MMP_BUG_ON(page->flags & PG_pcp);
	/*
	 * A double free: inside a larger free block, or a piece of this one is
	 * free. Checked page by page only with CONFIG_DEBUG_VM, as the kernel's
	 * check_pages_enabled.
	 */
	if (phys->debug_vm) {
		MMP_BUG_ON(__free_block_of(phys, pfn) != NO_PFN);
		for (uint64_t i = 1; i < nr; i++)
			MMP_BUG_ON(page[i].flags & (PG_buddy | PG_pcp));
	}

	/* Owners leave flags, counts and tail links behind: the next user gets zeros. */
	if (nr == 1)
		*page = (struct mmp_page){ 0 };	/* inline stores, no call */
	else
		memset(page, 0, nr * sizeof(*page));

	while (order < MMP_MAX_ORDER) {
		uint32_t buddy = pfn ^ (1u << order);
		struct mmp_page *bp;

		if (buddy >= phys->nr_pages)
			break;
		bp = pfn_to_page(phys, buddy);
		if (!(bp->flags & PG_buddy) || bp->order != order)
			break;
		free_list_del(phys, buddy, order);
		pfn &= ~(1u << order);
		order++;
	}
	free_list_add(phys, pfn, order);
}

void phys_free_pages(struct mmp_phys *phys, uint32_t pfn, unsigned int order)
{
	phys_free_pages_bulk(phys, &pfn, (uint8_t[]){ order }, 1);
}

/*
 * The order-0 frames of @pfns (all of them without @orders) to this CPU's
 * list, under one lock (free_unref_folios). Whether any block was larger.
 */
static __always_inline bool pcp_free_bulk(struct mmp_phys *phys, const uint32_t *pfns,
					  const uint8_t *orders, unsigned int nr)
{
	struct mmp_pcp *pcp = this_pcp(phys);
	unsigned int run = 0;
	bool large = false;

	spin_lock(&pcp->lock);
	for (unsigned int i = 0; i < nr; i++) {
		if (orders && orders[i])
			large = true;
		else
			pcp_free(phys, pcp, pfns[i], &run);
	}
	pcp_count_frees(pcp, &run);
	spin_unlock(&pcp->lock);
	return large;
}

void phys_free_frames_bulk(struct mmp_phys *phys, const uint32_t *pfns, unsigned int nr)
{
	pcp_free_bulk(phys, pfns, NULL, nr);
}

/* The blocks of @pfns larger than a frame to the buddy lists, under one lock. */
void phys_free_blocks_bulk(struct mmp_phys *phys, const uint32_t *pfns, const uint8_t *orders,
			   unsigned int nr)
{
	spin_lock(&phys->lock);
	for (unsigned int i = 0; i < nr; i++)
		if (orders[i])
			__free_pages(phys, pfns[i], orders[i]);
	spin_unlock(&phys->lock);
}

/* Order-0 frames go to this CPU's list, larger blocks to the buddy lists. */
void phys_free_pages_bulk(struct mmp_phys *phys, const uint32_t *pfns, const uint8_t *orders,
			  unsigned int nr)
{
	if (pcp_free_bulk(phys, pfns, orders, nr))
		phys_free_blocks_bulk(phys, pfns, orders, nr);
}

/* ---- public API -------------------------------------------------------------------------- */

static void *reserve(size_t bytes);

/*
 * The lists start offline, with the bounds of one list. Each ring holds as
 * many frames as one list online may (an eighth of memory): reserved, and
 * touched only where the ring has turned. A list that frees more than it
 * allocates (an RCU callback's, a munmap of another thread's pages) turns
 * its whole ring, 4 bytes a slot: at most 32 * 2 / 8 slots per frame of
 * memory, 0.8% of it in the worst case.
 */
static int pcp_init(struct mmp_phys *phys)
{
	uint64_t slots = 1;
	uint32_t *rings;

	pcp_set_high_bounds(phys, 1);
	while (slots <= phys->pcp_high_max)
		slots <<= 1;
	phys->pcp_ring_mask = slots - 1;

	/* Cache-line aligned: two CPUs' lists never share a line. */
	if (posix_memalign((void **)&phys->pcp, 64, MMP_COUNTER_SHARDS * sizeof(*phys->pcp)))
		return -ENOMEM;
	memset(phys->pcp, 0, MMP_COUNTER_SHARDS * sizeof(*phys->pcp));
	rings = reserve(MMP_COUNTER_SHARDS * slots * sizeof(*rings));
	if (!rings) {
		free(phys->pcp);
		return -ENOMEM;
	}
	for (int i = 0; i < MMP_COUNTER_SHARDS; i++)
		phys->pcp[i].pfns = rings + i * slots;
	return 0;
}

static void pcp_exit(struct mmp_phys *phys)
{
	munmap(phys->pcp[0].pfns, MMP_COUNTER_SHARDS * (phys->pcp_ring_mask + 1ull) *
				  sizeof(*phys->pcp[0].pfns));
	free(phys->pcp);
}

static void *reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

MMP_EXPORT int mmp_phys_create(size_t bytes, struct mmp_phys **out)
{
	const uint64_t block_bytes = MAX_ORDER_PAGES << PAGE_SHIFT;
	const char *debug_vm;
	struct mmp_phys *phys;
	uint64_t nr_pages;

	if (!out || !bytes || bytes % block_bytes)
		return -EINVAL;
	nr_pages = (uint64_t)bytes >> PAGE_SHIFT;
	if (nr_pages > MAX_PHYS_PAGES)
		return -EINVAL;

	phys = calloc(1, sizeof(*phys));
	if (!phys)
		return -ENOMEM;
	phys->nr_pages = nr_pages;
	debug_vm = getenv("MMPRIM_DEBUG_VM");
	phys->debug_vm = debug_vm && *debug_vm && strcmp(debug_vm, "0");
	phys->base = reserve(nr_pages << PAGE_SHIFT);
	if (!phys->base)
		goto err_free;
	/* Anonymous memory starts zeroed: every descriptor is clean from the start. */
	phys->memmap = reserve(nr_pages * sizeof(struct mmp_page));
	if (!phys->memmap)
		goto err_unmap;
	if (pcp_init(phys))
		goto err_unmap_memmap;
	if (pthread_mutex_init(&phys->spaces_lock, NULL))
		goto err_pcp;
	if (pthread_mutex_init(&phys->pt_rcu_lock, NULL)) {
		pthread_mutex_destroy(&phys->spaces_lock);
		goto err_pcp;
	}

	for (unsigned int o = 0; o <= MMP_MAX_ORDER; o++)
		phys->free_list[o] = NO_PFN;
	/* Push from the top so the list runs in ascending pfn order (zero page at pfn 0). */
	for (uint64_t pfn = nr_pages; pfn; pfn -= MAX_ORDER_PAGES)
		free_list_add(phys, pfn - MAX_ORDER_PAGES, MMP_MAX_ORDER);

	phys->zero_pfn = __alloc_pages(phys, 0);
	MMP_BUG_ON(phys->zero_pfn == NO_PFN);
	pfn_to_page(phys, phys->zero_pfn)->flags = PG_reserved;
	pfn_to_page(phys, phys->zero_pfn)->refcount = 1;
	phys->huge_zero_pfn = NO_PFN;
	hugetlb_init(phys);

	phys->spaces = NULL;
	phys->files_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	phys->next_space_id = 1;
	*out = phys;
	return 0;

err_pcp:
	pcp_exit(phys);
err_unmap_memmap:
	munmap(phys->memmap, nr_pages * sizeof(struct mmp_page));
err_unmap:
	munmap(phys->base, nr_pages << PAGE_SHIFT);
err_free:
	free(phys);
	return -ENOMEM;
}

MMP_EXPORT int mmp_phys_destroy(struct mmp_phys *phys)
{
	bool busy;

	if (!phys)
		return -EINVAL;
	pthread_mutex_lock(&phys->spaces_lock);
	busy = phys->spaces != NULL;
	pthread_mutex_unlock(&phys->spaces_lock);
	/* A file's page cache lives on the phys: destroy the files first. */
	busy |= __atomic_load_n(&phys->nr_files, __ATOMIC_ACQUIRE) != 0;
	/* A pin may outlive its space; its frames are not ours to take away. */
	busy |= __atomic_load_n(&phys->nr_pinned, __ATOMIC_ACQUIRE) != 0;
	if (busy)
		return -EBUSY;
	/* Page-table batches of destroyed spaces may still be waiting to come home. */
	rcu_barrier();

	MMP_BUG_ON(phys->nr_pt_rcu);
	if (phys->verify_scratch)
		munmap(phys->verify_scratch, phys->verify_scratch_bytes);
	pthread_mutex_destroy(&phys->pt_rcu_lock);
	pthread_mutex_destroy(&phys->spaces_lock);
	free(phys->files);
	pcp_exit(phys);
	munmap(phys->memmap, phys->nr_pages * sizeof(struct mmp_page));
	munmap(phys->base, phys->nr_pages << PAGE_SHIFT);
	free(phys);
	return 0;
}

MMP_EXPORT int mmp_phys_stat_sized(struct mmp_phys *phys, struct mmp_phys_stat *ust, size_t size)
{
	struct mmp_phys_stat k = { 0 }, *st = &k;

	if (!phys || !ust || size < sizeof(uint64_t))
		return -EINVAL;
	/* Settled state: tables in a grace period land, per-CPU lists go back. */
	rcu_barrier();
	phys_drain_pcp(phys);
	spin_lock(&phys->lock);
	st->total_pages = phys->nr_pages;
	st->free_pages = phys->free_pages;
	for (unsigned int o = 0; o <= MMP_MAX_ORDER; o++)
		st->free_blocks[o] = phys->nr_free[o];
	spin_unlock(&phys->lock);
	copy_struct_to_caller(ust, size, &k, sizeof(k));
	return 0;
}
