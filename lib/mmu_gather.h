/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mmu_gather (lib/mmu_gather.c): collect what an unmap frees, flush once, then free. */
#ifndef MMP_MMU_GATHER_H
#define MMP_MMU_GATHER_H

#include "mm_types.h"

#define MMU_GATHER_BUNDLE	8
#define MAX_GATHER_PAGES	9690	/* 19 batch pages of 510 slots, as MAX_GATHER_BATCH_COUNT */
#define MAX_TABLE_BATCH		509	/* one page of table pointers */

struct table_batch;

struct gather_page {
	uint32_t pfn;		/* folio head */
	uint32_t nr;		/* references to drop */
};

struct mmp_gather {
	struct mmp_space *s;
	bool fullmm;
	bool reclaim_pt;	/* MADV_DONTNEED: free PTE tables it empties (PT_RECLAIM) */
	/*
	 * ZAP_FLAG_DROP_MARKER: munmap and exit clear PTE markers (guard
	 * regions); MADV_DONTNEED, guard install and truncation leave them.
	 */
	bool drop_markers;
	/*
	 * zap_details without even_cows (a hole punched in a file): anonymous
	 * copies in private mappings stay, only page-cache pages go.
	 */
	bool keep_anon;
	bool need_flush;	/* entries were cleared: the TLB must be flushed */
	bool freed_tables;
	unsigned int stride_shift;	/* PAGE_SHIFT, PMD_SHIFT when only PMDs were cleared, PUD's for PUDs */
	uint64_t start, end;	/* range to flush */

	struct gather_page local[MMU_GATHER_BUNDLE];
	struct gather_page *pages;
	/* max_pages <= MAX_GATHER_PAGES, nr_pages <= slots: slots <= max_pages bounds both. */
	unsigned int nr_pages, max_pages, slots;

	/* The table batch page, allocated by the first table (tlb->batch); NULL: none yet. */
	struct table_batch *batch;
	enum mmp_table_free table_free;	/* the space's mode when the gather began */
};

void tlb_gather_mmu(struct mmp_gather *tlb, struct mmp_space *s, bool fullmm);
void tlb_finish_mmu(struct mmp_gather *tlb);
void tlb_flush_mmu(struct mmp_gather *tlb);
void tlb_end_vma(struct mmp_gather *tlb);
static inline void tlb_track_range(struct mmp_gather *tlb, uint64_t start, uint64_t end)
{
	tlb->start = MIN(tlb->start, start);
	tlb->end = MAX(tlb->end, end);
}

/*
 * PTEs were cleared over [addr, addr + size): flush them before freeing, at
 * page stride however many: a batch of 512 PTEs mapping a PTE-mapped THP spans
 * a whole PMD, but the TLB holds 4 KiB translations of it, which a PMD-stride
 * flush would leave cached (the kernel's tlb_get_unmap_shift takes
 * cleared_ptes first too).
 */
static inline void tlb_remove_tlb_entries(struct mmp_gather *tlb, uint64_t addr, uint64_t size)
{
	tlb->need_flush = true;
	tlb->stride_shift = PAGE_SHIFT;
	tlb_track_range(tlb, addr, addr + size);
}
/* The huge PMD at @addr was cleared or made clean/old: flush its 2 MiB translation. */
void tlb_remove_pmd_tlb_entry(struct mmp_gather *tlb, uint64_t addr);
/* A huge PUD (a 1 GiB hugetlb page) was cleared: its translation goes (tlb_flush_pud_range). */
void tlb_remove_pud_tlb_entry(struct mmp_gather *tlb, uint64_t addr);
/* Room for @slots more page slots: flush a full batch, or grow it (mmu_gather.c). */
void tlb_reserve_page(struct mmp_gather *tlb, unsigned int slots);

/* Drop @nr references of a folio once the TLB is flushed. */
static inline void tlb_remove_folio_pages(struct mmp_gather *tlb, uint32_t head_pfn,
					  unsigned int nr)
{
	/* A multi-page entry takes two slots, as the kernel's encoded_page pairs do. */
	unsigned int slots = nr > 1 ? 2 : 1;

	if (unlikely(tlb->slots + slots > tlb->max_pages))
		tlb_reserve_page(tlb, slots);
	tlb->pages[tlb->nr_pages++] = (struct gather_page){ .pfn = head_pfn, .nr = nr };
	tlb->slots += slots;
}
/*
 * Free a detached table once the TLB is flushed and no lockless walker can
 * hold it, as the MMP_OPT_RCU_TABLE_FREE mode says; [start, end) is the span
 * it mapped. Never called inside a read-side section.
 */
void tlb_remove_table(struct mmp_gather *tlb, uint32_t pfn, uint64_t start, uint64_t end);

#endif /* MMP_MMU_GATHER_H */
