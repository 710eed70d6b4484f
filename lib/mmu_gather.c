/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmu_gather: collect what an unmap frees, flush the TLB once, then free.
 * Nothing is freed before every CPU has dropped its translation of it: first
 * the TLB flush, then folio references, then page tables. Page tables also
 * wait for lockless walkers, as MMP_OPT_RCU_TABLE_FREE says (enum
 * mmp_table_free): a batch page of tables goes to call_rcu
 * (MMU_GATHER_RCU_TABLE_FREE), and a table that finds no batch page is freed
 * by a call_rcu of its own (RCU) or at once after an IPI that waits for
 * GUP-fast's IRQs-off walks (semi RCU); x86 on bare metal before 6.14 freed
 * tables right after the shootdown (native); and, a worst case no kernel had,
 * each after a synchronize_rcu of its own.
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
	tlb->keep_anon = false;
	tlb->need_flush = false;
	tlb->freed_tables = false;
	tlb->stride_shift = PMD_SHIFT;
	tlb->start = UINT64_MAX;
	tlb->end = 0;
	tlb->pages = tlb->local;
	tlb->nr_pages = 0;
	tlb->max_pages = MMU_GATHER_BUNDLE;
	tlb->slots = 0;
	tlb->batch = NULL;
	tlb->table_free = table_free_mode(s);
	inc_tlb_flush_pending(s);
}

/* A huge PMD was cleared (tlb_remove_pmd_tlb_entry): only 2 MiB translations to drop. */
void tlb_remove_pmd_tlb_entry(struct mmp_gather *tlb, uint64_t addr)
{
	tlb->need_flush = true;
	tlb->stride_shift = MIN(tlb->stride_shift, PMD_SHIFT);
	tlb_track_range(tlb, addr, addr + PMD_SIZE);
}

/* Only PUDs cleared so far: one invalidation per 1 GiB, as tlb_get_unmap_shift's cleared_puds. */
void tlb_remove_pud_tlb_entry(struct mmp_gather *tlb, uint64_t addr)
{
	if (tlb->start == UINT64_MAX)
		tlb->stride_shift = level_shift(MMP_PUD);
	tlb->need_flush = true;
	tlb_track_range(tlb, addr, addr + level_size(MMP_PUD));
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
		} else if (unlikely(head->flags & PG_hugetlb)) {
			free_huge_folio(phys, pfn);	/* its pool's, not the buddy allocator's */
			freed++;
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

/* A batch of detached tables (struct mmu_table_batch): what one page holds. */
struct table_batch {
	struct rcu_head rcu;
	struct mmp_space *s;	/* held by mmgrab until the callback */
	int shard;		/* of the thread that queued it: its per-CPU list */
	unsigned int nr;
	uint32_t tables[MAX_TABLE_BATCH];
};

/*
 * A table that found no batch page, on its way through a grace period of its
 * own (ptdesc->pt_rcu_head). The model's frame descriptor has no room for an
 * rcu_head, so it comes from the host.
 */
struct table_one {
	struct rcu_head rcu;
	struct mmp_space *s;
	int shard;
	uint32_t pfn;
};

/*
 * The mode of this gather's tables. One that reclaims PTE tables
 * (MADV_DONTNEED with PT_RECLAIM) frees them by RCU in the semi RCU and
 * native modes too: pte_offset_map() users find them holding rcu_read_lock()
 * only, which neither an IPI nor a shootdown waits for, and a kernel with
 * PT_RECLAIM frees every table by RCU.
 */
static enum mmp_table_free tlb_table_mode(const struct mmp_gather *tlb)
{
	if (tlb->reclaim_pt && (tlb->table_free == MMP_TABLE_FREE_SEMI_RCU ||
				tlb->table_free == MMP_TABLE_FREE_NATIVE))
		return MMP_TABLE_FREE_RCU;
	return tlb->table_free;
}

/*
 * @nr tables go to call_rcu: in flight until the callback. verify accounts
 * for them (PG_pt_rcu, nr_pt_rcu) instead of waiting. Counted now: callbacks
 * run whenever the grace period ends, and counters must not depend on that.
 */
static void pt_rcu_queue(struct mmp_space *s, const uint32_t *tables, unsigned int nr)
{
	/* The space may exit before the grace period ends: keep its struct. */
	mmgrab(s);
	for (unsigned int i = 0; i < nr; i++)
		page_flag_set(pfn_to_page(s->phys, tables[i]), PG_pt_rcu);
	__atomic_fetch_add(&s->phys->nr_pt_rcu, nr, __ATOMIC_RELAXED);
	count_inc(s, MMP_C_RCU_CALL);
	count_add(s, MMP_C_PGTABLE_FREE_RCU, nr);
}

/*
 * The grace period is over. The tables leave the in-flight set together under
 * pt_rcu_lock: mmp_space_verify() holds it to account for tables in flight
 * without waiting for them, so it must never see a batch half released. They
 * go onto the per-CPU list of the thread that queued them: the kernel runs the
 * callback on that CPU, and the call_rcu worker is no CPU of the machine.
 */
static void pt_rcu_done(struct mmp_space *s, int shard, const uint32_t *tables, unsigned int nr)
{
	struct mmp_phys *phys = s->phys;

	pthread_mutex_lock(&phys->pt_rcu_lock);
	phys_pcp_shard = shard;
	for (unsigned int i = 0; i < nr; i++)
		pgtable_put(s, tables[i]);
	phys_pcp_shard = -1;
	__atomic_fetch_sub(&phys->nr_pt_rcu, nr, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&phys->pt_rcu_lock);
	mmdrop(s);
}

static void tlb_remove_table_rcu(struct rcu_head *head)
{
	struct table_batch *b = caa_container_of(head, struct table_batch, rcu);

	pt_rcu_done(b->s, b->shard, b->tables, b->nr);
	free(b);
}

static void tlb_remove_table_one_rcu(struct rcu_head *head)
{
	struct table_one *t = caa_container_of(head, struct table_one, rcu);

	pt_rcu_done(t->s, t->shard, &t->pfn, 1);
	free(t);
}

/* The worst case no kernel had: every reader waited for, a table at a time. */
static void table_free_sync(struct mmp_space *s, uint32_t pfn)
{
	count_inc(s, MMP_C_RCU_SYNC);
	debug_point(s, MMP_DEBUG_GRACE_PERIOD);
	synchronize_rcu();
	pgtable_release(s, pfn, MMP_C_PGTABLE_FREE_SYNC);
}

/*
 * tlb_table_flush: the TLB (and page-walk caches) were flushed; now let the
 * batch go once no lockless walker can still hold its tables.
 */
static void tlb_table_flush(struct mmp_gather *tlb)
{
	struct mmp_space *s = tlb->s;
	struct table_batch *b = tlb->batch;

	if (!b)
		return;
	tlb->batch = NULL;
	if (READ_ONCE(s->debug[MMP_DEBUG_BROKEN_TABLE_FREE])) {
		/* Fault injection: no grace period at all. The stress test must notice. */
		for (unsigned int i = 0; i < b->nr; i++)
			pgtable_release(s, b->tables[i], MMP_C_PGTABLE_FREE_SYNC);
		free(b);
		return;
	}
	switch (tlb_table_mode(tlb)) {
	case MMP_TABLE_FREE_SYNC_EACH:
		for (unsigned int i = 0; i < b->nr; i++)
			table_free_sync(s, b->tables[i]);
		free(b);
		break;
	case MMP_TABLE_FREE_NATIVE:
		/* The shootdown's IPIs waited for every GUP-fast walk: free them now. */
		for (unsigned int i = 0; i < b->nr; i++)
			pgtable_release(s, b->tables[i], MMP_C_PGTABLE_FREE_NATIVE);
		free(b);
		break;
	default:
		b->s = s;
		b->shard = counter_shard();
		count_add(s, MMP_C_PGTABLE_FREE_BATCH, b->nr);
		pt_rcu_queue(s, b->tables, b->nr);
		call_rcu(&b->rcu, tlb_remove_table_rcu);
	}
}

/*
 * tlb_remove_table_sync_one: an IPI to every other CPU, which each takes only
 * with IRQs on, so no GUP-fast walk that may have read the table is still
 * going. Walkers inside rcu_read_lock() alone are not waited for.
 */
static void tlb_remove_table_sync_one(struct mmp_space *s)
{
	count_inc(s, MMP_C_TABLE_SYNC_ONE);
	count_add(s, MMP_C_TABLE_SYNC_IPI, smp_call_function_sync(s));
}

/* tlb_remove_table_one: no batch page for this table; the TLB was flushed. */
static void tlb_remove_table_one(struct mmp_gather *tlb, uint32_t pfn)
{
	struct mmp_space *s = tlb->s;
	struct table_one *t;

	switch (tlb_table_mode(tlb)) {
	case MMP_TABLE_FREE_SYNC_EACH:
		table_free_sync(s, pfn);
		return;
	case MMP_TABLE_FREE_NATIVE:
		/* A page batch that cannot grow is flushed and freed at once. */
		pgtable_release(s, pfn, MMP_C_PGTABLE_FREE_NATIVE);
		return;
	case MMP_TABLE_FREE_SEMI_RCU:
		tlb_remove_table_sync_one(s);
		pgtable_release(s, pfn, MMP_C_PGTABLE_FREE_ONE_IPI);
		return;
	default:
		break;
	}
	t = malloc(sizeof(*t));
	if (!t) {
		/* The host is out of memory, not the simulated machine: wait instead. */
		table_free_sync(s, pfn);
		return;
	}
	t->s = s;
	t->shard = counter_shard();
	t->pfn = pfn;
	count_inc(s, MMP_C_PGTABLE_FREE_ONE_RCU);
	pt_rcu_queue(s, &pfn, 1);
	call_rcu(&t->rcu, tlb_remove_table_one_rcu);
}

/*
 * The batch page (GFP_NOWAIT in the kernel): refused as MMP_OPT_TABLE_BATCH_FAIL
 * says, every Nth try, or when the host has no memory.
 */
static bool tlb_table_batch_alloc(struct mmp_gather *tlb)
{
	struct mmp_space *s = tlb->s;
	long every = READ_ONCE(s->opts[MMP_OPT_TABLE_BATCH_FAIL]);
	struct table_batch *b = NULL;

	if (!every || __atomic_add_fetch(&s->table_batch_tries, 1, __ATOMIC_RELAXED) % every)
		b = malloc(sizeof(*b));
	if (!b) {
		count_inc(s, MMP_C_TABLE_BATCH_FAIL);
		return false;
	}
	b->nr = 0;
	tlb->batch = b;
	return true;
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
	if (tlb->nr_pages || tlb->batch || tlb->need_flush || tlb->freed_tables)
		count_inc(tlb->s, MMP_C_GATHER_FLUSH);
	tlb_flush_mmu_tlbonly(tlb);
	tlb_release_pages(tlb);
	/*
	 * Native x86 keeps tables with the pages: they go with them. Otherwise
	 * they wait for tlb_finish_mmu or a full batch: a flush in the middle
	 * of a zap may run inside a read-side section, where the synchronous
	 * worst case must not wait for a grace period.
	 */
	if (tlb->batch && tlb_table_mode(tlb) == MMP_TABLE_FREE_NATIVE)
		tlb_table_flush(tlb);
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
 * A table was unlinked: it is no longer in VmPTE. Into the batch, the batch
 * page allocated by its first table; a table that finds none is freed on its
 * own once the TLB is flushed (tlb_table_invalidate, tlb_remove_table_one).
 */
void tlb_remove_table(struct mmp_gather *tlb, uint32_t pfn, uint64_t start, uint64_t end)
{
	pgtable_unlinked(tlb->s, pfn);
	tlb->freed_tables = true;
	tlb_track_range(tlb, start, end);
	if (!tlb->batch && !tlb_table_batch_alloc(tlb)) {
		tlb_flush_mmu_tlbonly(tlb);
		tlb_remove_table_one(tlb, pfn);
		return;
	}
	tlb->batch->tables[tlb->batch->nr++] = pfn;
	if (tlb->batch->nr == MAX_TABLE_BATCH) {
		tlb_flush_mmu(tlb);
		tlb_table_flush(tlb);
	}
}
