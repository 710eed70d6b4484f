/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmu_gather: collect what an unmap frees, flush the TLB once, then free.
 * Nothing is freed before every CPU has dropped its translation of it: first
 * the TLB flush, then folio references, then page tables. Page tables also
 * wait for lockless walkers (GUP-fast, pte_offset_map users): a grace period
 * through call_rcu (MMU_GATHER_RCU_TABLE_FREE), or, as the base line, a
 * synchronize_rcu for each table (the "IPI every CPU and wait" path).
 */
#include <string.h>

#include "mm.h"
#include "rcu.h"

void tlb_gather_mmu(struct mmp_gather *tlb, struct mmp_space *s, bool fullmm)
{
	tlb->s = s;
	tlb->fullmm = fullmm;
	tlb->reclaim_pt = false;
	tlb->drop_markers = true;
	tlb->need_flush = false;
	tlb->freed_tables = false;
	tlb->stride_shift = PMD_SHIFT;
	tlb->start = UINT64_MAX;
	tlb->end = 0;
	tlb->pages = tlb->local;
	tlb->nr_pages = 0;
	tlb->max_pages = MMU_GATHER_BUNDLE;
	tlb->slots = 0;
	tlb->nr_tables = 0;
	inc_tlb_flush_pending(s);
}

/* A huge PMD was cleared (tlb_remove_pmd_tlb_entry): only 2 MiB translations to drop. */
void tlb_remove_pmd_tlb_entry(struct mmp_gather *tlb, uint64_t addr)
{
	tlb->need_flush = true;
	tlb_track_range(tlb, addr, addr + PMD_SIZE);
}

/* The TLB part of a flush (tlb_flush_mmu_tlbonly). */
static void tlb_flush_mmu_tlbonly(struct mmp_gather *tlb)
{
	struct mmp_space *s = tlb->s;

	if (!tlb->need_flush && !tlb->freed_tables)
		return;
	if (s->debug[MMP_DEBUG_SKIP_FLUSH] > 0) {
		s->debug[MMP_DEBUG_SKIP_FLUSH]--;
	} else if (tlb->fullmm) {
		flush_tlb_mm(s);
	} else {
		/* Freed tables also drop page-walk caches: flush at page stride then. */
		flush_tlb_range(s, tlb->start, tlb->end,
				tlb->freed_tables ? PAGE_SHIFT : tlb->stride_shift);
	}
	tlb->need_flush = false;
	tlb->freed_tables = false;
	tlb->stride_shift = PMD_SHIFT;
	tlb->start = UINT64_MAX;
	tlb->end = 0;
}

/* Frames to the per-CPU list, then blocks to the buddy lists: one lock each per batch. */
static void release_batch(struct mmp_phys *phys, const uint32_t *frames, unsigned int nr_frames,
			  const uint32_t *blocks, const uint8_t *orders, unsigned int nr_blocks)
{
	phys_free_frames_bulk(phys, frames, nr_frames);
	if (nr_blocks)
		phys_free_blocks_bulk(phys, blocks, orders, nr_blocks);
}

/*
 * Drop the gathered folio references; folios whose last reference goes are
 * freed in bulk (folios_put_refs), one allocator lock per batch.
 */
static void tlb_release_pages(struct mmp_gather *tlb)
{
	struct mmp_phys *phys = tlb->s->phys;
	/* A batch of 64 folios: the small ones' frames, the large ones' heads and orders. */
	uint32_t frames[64] = { 0 }, blocks[64];
	uint8_t orders[64];
	unsigned int nr_frames = 0, nr_blocks = 0, freed = 0;

	for (unsigned int i = 0; i < tlb->nr_pages; i++) {
		uint32_t pfn = tlb->pages[i].pfn;
		struct mmp_page *head = pfn_to_page(phys, pfn);
		int left = folio_ref_sub_return(head, tlb->pages[i].nr);

		if (left) {
			MMP_BUG_ON(left < 0);
			continue;
		}
		/* Still mapped: free_page_is_bad(), with CONFIG_DEBUG_VM as the kernel. */
		MMP_BUG_ON(phys->debug_vm && folio_mapcount(head) != 0);
		if (!head->order) {
			frames[nr_frames++] = pfn;
		} else {
			blocks[nr_blocks] = pfn;
			orders[nr_blocks++] = head->order;
		}
		if (nr_frames + nr_blocks == ARRAY_SIZE(frames)) {
			release_batch(phys, frames, nr_frames, blocks, orders, nr_blocks);
			freed += nr_frames + nr_blocks;
			nr_frames = nr_blocks = 0;
		}
	}
	release_batch(phys, frames, nr_frames, blocks, orders, nr_blocks);
	count_add(tlb->s, MMP_C_FOLIO_FREE, freed + nr_frames + nr_blocks);
	tlb->nr_pages = 0;
	tlb->slots = 0;
}

/* A batch of detached tables on its way through a grace period (struct mmu_table_batch). */
struct table_batch {
	struct rcu_head rcu;
	struct mmp_space *s;	/* held by mmgrab until the callback */
	int shard;		/* of the thread that queued it: its per-CPU list */
	unsigned int nr;
	uint32_t tables[];
};

/*
 * The grace period is over. The batch leaves the in-flight set as a whole under
 * pt_rcu_lock: mmp_space_verify() holds it to account for tables in flight
 * without waiting for them, so it must never see a batch half released. Not
 * counted here: callbacks run whenever the grace period ends, and counters must
 * not depend on that (tlb_table_flush counted the batch when it queued it).
 * The tables go onto the per-CPU list of the thread that queued them: the
 * kernel runs the callback on that CPU, and the call_rcu worker is no CPU of
 * the simulated machine.
 */
static void tlb_remove_table_rcu(struct rcu_head *head)
{
	struct table_batch *b = caa_container_of(head, struct table_batch, rcu);
	struct mmp_phys *phys = b->s->phys;

	pthread_mutex_lock(&phys->pt_rcu_lock);
	phys_pcp_shard = b->shard;
	for (unsigned int i = 0; i < b->nr; i++)
		pgtable_put(b->s, b->tables[i]);
	phys_pcp_shard = -1;
	__atomic_fetch_sub(&phys->nr_pt_rcu, b->nr, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&phys->pt_rcu_lock);
	mmdrop(b->s);
	free(b);
}

/*
 * tlb_table_flush: the TLB (and page-walk caches) were flushed; now let the
 * tables go once no lockless walker can still hold them.
 */
static void tlb_table_flush(struct mmp_gather *tlb)
{
	struct mmp_space *s = tlb->s;
	struct table_batch *b;

	if (!tlb->nr_tables)
		return;
	if (READ_ONCE(s->debug[MMP_DEBUG_BROKEN_TABLE_FREE])) {
		/* Fault injection: no grace period at all. The stress test must notice. */
		for (unsigned int i = 0; i < tlb->nr_tables; i++)
			pgtable_release(s, tlb->tables[i], MMP_C_PGTABLE_FREE_SYNC);
	} else if (READ_ONCE(s->opts[MMP_OPT_RCU_TABLE_FREE]) &&
		   (b = malloc(sizeof(*b) + tlb->nr_tables * sizeof(b->tables[0])))) {
		/* The space may exit before the grace period ends: keep its struct. */
		mmgrab(s);
		b->s = s;
		b->shard = counter_shard();
		b->nr = tlb->nr_tables;
		memcpy(b->tables, tlb->tables, tlb->nr_tables * sizeof(b->tables[0]));
		/* In flight until the callback: verify accounts for these instead of waiting. */
		for (unsigned int i = 0; i < b->nr; i++)
			page_flag_set(pfn_to_page(s->phys, b->tables[i]), PG_pt_rcu);
		__atomic_fetch_add(&s->phys->nr_pt_rcu, b->nr, __ATOMIC_RELAXED);
		count_inc(s, MMP_C_RCU_CALL);
		count_add(s, MMP_C_PGTABLE_FREE_RCU, b->nr);
		call_rcu(&b->rcu, tlb_remove_table_rcu);
	} else {
		/*
		 * The base line, and the fallback when no batch can be had
		 * (tlb_remove_table_one): wait for every reader, then free.
		 */
		for (unsigned int i = 0; i < tlb->nr_tables; i++) {
			count_inc(s, MMP_C_RCU_SYNC);
			debug_point(s, MMP_DEBUG_GRACE_PERIOD);
			synchronize_rcu();
			pgtable_release(s, tlb->tables[i], MMP_C_PGTABLE_FREE_SYNC);
		}
	}
	tlb->nr_tables = 0;
}

/*
 * The zap leaves a VMA's range (tlb_end_vma, at the end of unmap_page_range):
 * without MMU_GATHER_MERGE_VMAS that range is flushed now, so a gather over
 * several VMAs, or several ranges of one, flushes once for each.
 */
void tlb_end_vma(struct mmp_gather *tlb)
{
	if (!tlb->fullmm && !tlb->s->arch->tlb_merge_vmas)
		tlb_flush_mmu_tlbonly(tlb);
}

void tlb_flush_mmu(struct mmp_gather *tlb)
{
	if (tlb->nr_pages || tlb->nr_tables || tlb->need_flush || tlb->freed_tables)
		count_inc(tlb->s, MMP_C_GATHER_FLUSH);
	tlb_flush_mmu_tlbonly(tlb);
	tlb_release_pages(tlb);
	/*
	 * Tables wait for tlb_finish_mmu or a full table batch: a flush in the
	 * middle of a zap may run inside a read-side section, where the
	 * synchronous base line must not wait for a grace period.
	 */
}

void tlb_finish_mmu(struct mmp_gather *tlb)
{
	tlb_flush_mmu(tlb);
	tlb_table_flush(tlb);
	if (tlb->pages != tlb->local)
		free(tlb->pages);
	tlb->pages = tlb->local;
	dec_tlb_flush_pending(tlb->s);
}

/*
 * Room for one more entry of @slots: a full batch (past MAX_GATHER_PAGES
 * slots) is flushed, else the array grows like __tlb_next_batch, up to as many
 * entries as a batch has slots.
 */
void tlb_reserve_page(struct mmp_gather *tlb, unsigned int slots)
{
	if (tlb->slots + slots > MAX_GATHER_PAGES) {
		tlb_flush_mmu(tlb);
		return;
	}
	if (tlb->slots + slots > tlb->max_pages) {
		unsigned int max = MIN(tlb->max_pages * 4, MAX_GATHER_PAGES);
		struct gather_page *p;

		if (tlb->pages == tlb->local) {
			p = malloc(max * sizeof(*p));
			if (p)
				for (unsigned int i = 0; i < tlb->nr_pages; i++)
					p[i] = tlb->local[i];
		} else {
			p = realloc(tlb->pages, max * sizeof(*p));
		}
		if (!p) {
			/* No memory for a bigger batch: flush now, as GFP_NOWAIT failure does. */
			tlb_flush_mmu(tlb);
			return;
		}
		tlb->pages = p;
		tlb->max_pages = max;
	}
}

/*
 * A table was unlinked: it is no longer in VmPTE, and is freed after the TLB
 * flush and a grace period. Never called inside a read-side section.
 */
void tlb_remove_table(struct mmp_gather *tlb, uint32_t pfn, uint64_t start, uint64_t end)
{
	pgtable_unlinked(tlb->s, pfn);
	if (tlb->nr_tables == MAX_TABLE_BATCH) {
		tlb_flush_mmu(tlb);
		tlb_table_flush(tlb);
	}
	tlb->freed_tables = true;
	tlb_track_range(tlb, start, end);
	tlb->tables[tlb->nr_tables++] = pfn;
}
