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

#include "internal.h"
#include "rcu.h"

#define MAX_ORDER_PAGES	(1ull << MMP_MAX_ORDER)
/* pfns are uint32_t and UINT32_MAX is NO_PFN: the last usable frame must stay below it. */
#define MAX_PHYS_PAGES	((1ull << 32) - MAX_ORDER_PAGES)

_Noreturn void mmp_bug(const char *file, int line, const char *what)
{
	fprintf(stderr, "libmmprim: BUG at %s:%d: %s\n", file, line, what);
	abort();
}

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

static struct mmp_pcp *this_pcp(struct mmp_phys *phys)
{
	return &phys->pcp[counter_shard()];
}

static void __free_pages(struct mmp_phys *phys, uint32_t pfn, unsigned int order);

/* Move the @nr coldest frames of @pcp to the buddy allocator. pcp->lock held. */
static void pcp_drain(struct mmp_phys *phys, struct mmp_pcp *pcp, unsigned int nr)
{
	nr = MIN(nr, pcp->count);
	spin_lock(&phys->lock);
	for (unsigned int i = 0; i < nr; i++) {
		pfn_to_page(phys, pcp->pfns[i])->flags = 0;
		__free_pages(phys, pcp->pfns[i], 0);
	}
	spin_unlock(&phys->lock);
	pcp->count -= nr;
	memmove(pcp->pfns, pcp->pfns + nr, pcp->count * sizeof(pcp->pfns[0]));
}

void phys_drain_pcp(struct mmp_phys *phys)
{
	for (int i = 0; i < MMP_COUNTER_SHARDS; i++) {
		spin_lock(&phys->pcp[i].lock);
		pcp_drain(phys, &phys->pcp[i], PCP_HIGH);
		spin_unlock(&phys->pcp[i].lock);
	}
}

/* rmqueue_pcplist: the hottest frame of this CPU's list, refilled a batch at a time. */
static uint32_t pcp_alloc(struct mmp_phys *phys)
{
	struct mmp_pcp *pcp = this_pcp(phys);
	uint32_t pfn = NO_PFN;

	spin_lock(&pcp->lock);
	if (!pcp->count) {
		spin_lock(&phys->lock);
		while (pcp->count < PCP_BATCH) {
			uint32_t p = __alloc_pages(phys, 0);

			if (p == NO_PFN)
				break;
			pfn_to_page(phys, p)->flags = PG_pcp;
			pcp->pfns[pcp->count++] = p;
		}
		spin_unlock(&phys->lock);
	}
	if (pcp->count) {
		pfn = pcp->pfns[--pcp->count];
		pfn_to_page(phys, pfn)->flags = 0;
	}
	spin_unlock(&pcp->lock);
	return pfn;
}

static void pcp_free(struct mmp_phys *phys, struct mmp_pcp *pcp, uint32_t pfn)
{
	struct mmp_page *page = pfn_to_page(phys, pfn);

	MMP_BUG_ON(pfn >= phys->nr_pages);
	MMP_BUG_ON(page->flags & (PG_buddy | PG_pcp));
	if (phys->debug_vm) {
		/* A double free of a frame inside a free buddy block (CONFIG_DEBUG_VM). */
		spin_lock(&phys->lock);
		MMP_BUG_ON(__free_block_of(phys, pfn) != NO_PFN);
		spin_unlock(&phys->lock);
	}
	memset(page, 0, sizeof(*page));
	page->flags = PG_pcp;
	if (pcp->count == PCP_HIGH)
		pcp_drain(phys, pcp, PCP_BATCH);
	pcp->pfns[pcp->count++] = pfn;
}

uint32_t phys_alloc_pages(struct mmp_phys *phys, unsigned int order)
{
	uint32_t pfn;

	if (order > MMP_MAX_ORDER)
		return NO_PFN;
	if (order == 0) {
		pfn = pcp_alloc(phys);
		if (pfn != NO_PFN)
			return pfn;
	} else {
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

/* ---- freeing -------------------------------------------------------------------------- */

static void __free_pages(struct mmp_phys *phys, uint32_t pfn, unsigned int order)
{
	uint64_t nr = 1ull << order;
	struct mmp_page *page;

	MMP_BUG_ON(order > MMP_MAX_ORDER);
	MMP_BUG_ON(pfn >= phys->nr_pages || pfn + nr > phys->nr_pages);
	MMP_BUG_ON(pfn & (nr - 1));
	/* A double free: inside a larger free block, or a piece of this one is free. */
	MMP_BUG_ON(phys->debug_vm && __free_block_of(phys, pfn) != NO_PFN);
	page = pfn_to_page(phys, pfn);
	for (uint64_t i = 0; i < nr; i++)
		MMP_BUG_ON(page[i].flags & (i ? PG_buddy | PG_pcp : PG_pcp));

	/* Owners leave flags, counts and tail links behind: the next user gets zeros. */
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

/* Order-0 frames go to this CPU's list, larger blocks to the buddy lists. */
void phys_free_pages_bulk(struct mmp_phys *phys, const uint32_t *pfns, const uint8_t *orders,
			  unsigned int nr)
{
	struct mmp_pcp *pcp = this_pcp(phys);
	bool large = false;

	spin_lock(&pcp->lock);
	for (unsigned int i = 0; i < nr; i++) {
		if (orders[i] == 0)
			pcp_free(phys, pcp, pfns[i]);
		else
			large = true;
	}
	spin_unlock(&pcp->lock);
	if (!large)
		return;
	spin_lock(&phys->lock);
	for (unsigned int i = 0; i < nr; i++)
		if (orders[i])
			__free_pages(phys, pfns[i], orders[i]);
	spin_unlock(&phys->lock);
}

/* ---- public API -------------------------------------------------------------------------- */

static void *reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

MMP_EXPORT int mmp_phys_create(size_t bytes, struct mmp_phys **out)
{
	const uint64_t block_bytes = MAX_ORDER_PAGES << PAGE_SHIFT;
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
	phys->debug_vm = getenv("MMPRIM_DEBUG_VM") && strcmp(getenv("MMPRIM_DEBUG_VM"), "0");
	phys->base = reserve(nr_pages << PAGE_SHIFT);
	if (!phys->base)
		goto err_free;
	/* Anonymous memory starts zeroed: every descriptor is clean from the start. */
	phys->memmap = reserve(nr_pages * sizeof(struct mmp_page));
	if (!phys->memmap)
		goto err_unmap;
	/* Cache-line aligned: two CPUs' lists never share a line. */
	if (posix_memalign((void **)&phys->pcp, 64, MMP_COUNTER_SHARDS * sizeof(*phys->pcp)))
		goto err_unmap_memmap;
	memset(phys->pcp, 0, MMP_COUNTER_SHARDS * sizeof(*phys->pcp));
	if (pthread_mutex_init(&phys->spaces_lock, NULL))
		goto err_unmap_memmap;
	if (pthread_mutex_init(&phys->pt_rcu_lock, NULL)) {
		pthread_mutex_destroy(&phys->spaces_lock);
		goto err_unmap_memmap;
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

	phys->spaces = NULL;
	phys->next_space_id = 1;
	*out = phys;
	return 0;

err_unmap_memmap:
	free(phys->pcp);
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
	free(phys->pcp);
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
