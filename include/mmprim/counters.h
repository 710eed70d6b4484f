/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Deterministic event counters of a space, counting what Linux 6.18 (the
 * kernel libmmprim models, MMP_KERNEL_MODELED) would do. Counts do not depend on timing, so
 * tests and benches compare them exactly; read them with mmp_space_counters().
 *
 * When a counter is counted: each one by the call that makes its event, on the
 * calling thread, before the call returns, so a read after the call sees all of
 * it. That holds for deferred work too: a page-table free is counted when it is
 * decided, pgtable_free_rcu (with rcu_call) when the table batch is queued to
 * call_rcu, pgtable_free_sync (with rcu_sync) when the table is freed after its
 * synchronize_rcu, never when a grace period happens to end. Counts of races
 * between threads sharing a space (fault_spurious, gup_fast_backoff,
 * pt_poison_seen, reclaim_keep, pt_reclaim_fast / _slow) depend on how the
 * threads interleave; with one thread per space every count repeats exactly.
 *
 * Which space counts (docs/counters.md has the table): page-table and TLB
 * events in the space whose tables or CPUs they touch, folio and reclaim
 * decisions in the space of the call that made them. So mmp_fork() counts
 * reading and write-protecting the parent's entries (and the parent's TLB
 * flush) in the parent, writing the child's entries, folding its contpte
 * blocks and allocating its tables in the child, whose counters start at 0;
 * mmp_reclaim() counts its decisions in the caller and each unmap in the
 * space it unmaps from. A space's counters go with it at mmp_space_destroy().
 *
 * TLB counters: tlb_flush_range counts ranged flushes, and each adds its
 * length to tlb_flush_page (one per page, or per 2 MiB for a huge PMD), so
 * tlb_flush_page is their sum. A range over the back end's ceiling counts one
 * tlb_flush_all instead, nothing in the other two: more than 33 pages on
 * x86_64 (tlb_single_page_flush_ceiling), 512 or more on arm64 (MAX_DVM_OPS),
 * more than 64 on riscv64, more than 512 on loongarch64. tlb_ipi: one per
 * other attached CPU per flush, 0 where TLBIs are broadcast (arm64).
 */
#ifndef MMPRIM_COUNTERS_H
#define MMPRIM_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * X(enum suffix, printed name, meaning). The order is the ABI (counter numbers
 * and struct mmp_counters offsets): new counters go at the end.
 */
#define MMP_COUNTER_LIST(X)							\
	X(FAULT_ANON,		"fault_anon",		"anonymous faults that mapped a new folio")	\
	X(FAULT_ZERO,		"fault_zero",		"read faults that mapped the zero page")	\
	X(FAULT_WP_REUSE,	"fault_wp_reuse",	"write-protect faults that reused the folio")	\
	X(FAULT_COW,		"fault_cow",		"write-protect faults that copied (COW)")	\
	X(FAULT_HUGE_ANON,	"fault_huge_anon",	"faults that mapped a PMD THP")			\
	X(FAULT_HUGE_ZERO,	"fault_huge_zero",	"read faults that mapped the huge zero page")	\
	X(FAULT_HUGE_COW,	"fault_huge_cow",	"write faults that copied a whole huge page (a shared THP is split instead since 5.8)") \
	X(FAULT_HUGE_REUSE,	"fault_huge_reuse",	"write faults that reused a PMD THP")		\
	X(FAULT_FALLBACK,	"fault_fallback",	"huge faults that fell back to PTEs")		\
	X(FAULT_AD,		"fault_ad",		"faults that set accessed/dirty in software (Svade)") \
	X(FAULT_SPURIOUS,	"fault_spurious",	"faults another CPU had already handled")	\
	X(FAULT_SIGSEGV,	"fault_sigsegv",	"faults with no VMA or no permission (the same on every back end and switch setting)") \
	X(FOLIO_ALLOC_O0,	"folio_alloc_o0",	"folios allocated, order 0")			\
	X(FOLIO_ALLOC_O1,	"folio_alloc_o1",	"folios allocated, order 1")			\
	X(FOLIO_ALLOC_O2,	"folio_alloc_o2",	"folios allocated, order 2")			\
	X(FOLIO_ALLOC_O3,	"folio_alloc_o3",	"folios allocated, order 3")			\
	X(FOLIO_ALLOC_O4,	"folio_alloc_o4",	"folios allocated, order 4")			\
	X(FOLIO_ALLOC_O5,	"folio_alloc_o5",	"folios allocated, order 5")			\
	X(FOLIO_ALLOC_O6,	"folio_alloc_o6",	"folios allocated, order 6")			\
	X(FOLIO_ALLOC_O7,	"folio_alloc_o7",	"folios allocated, order 7")			\
	X(FOLIO_ALLOC_O8,	"folio_alloc_o8",	"folios allocated, order 8")			\
	X(FOLIO_ALLOC_O9,	"folio_alloc_o9",	"folios allocated, order 9")			\
	X(FOLIO_ALLOC_FAIL,	"folio_alloc_fail",	"folio allocations refused (out of memory)")	\
	X(FOLIO_FREE,		"folio_free",		"folios freed")					\
	X(PTEP_GET,		"ptep_get",		"ptep_get() calls by core mm")			\
	X(PTE_READ,		"pte_read",		"PTE entries read (a contpte ptep_get reads its block: all 16 before 6.17, since then until it has seen young and dirty)")	\
	X(PTE_WRITE,		"pte_write",		"PTE entries written by core mm")		\
	X(PMD_READ,		"pmd_read",		"PMD entries read by core mm")			\
	X(PMD_WRITE,		"pmd_write",		"PMD entries written by core mm")		\
	X(PMD_SPLIT,		"pmd_split",		"huge PMDs split into PTE tables (THP_SPLIT_PMD)") \
	X(CONTPTE_FOLD,		"contpte_fold",		"contpte blocks folded (contpte_convert to CONT)") \
	X(CONTPTE_UNFOLD,	"contpte_unfold",	"contpte blocks unfolded (break-before-make)")	\
	X(PTE_BATCH,		"pte_batch",		"folio_pte_batch() batches of more than one entry") \
	X(MOVE_PTES,		"move_ptes",		"mremap entries moved by move_ptes")		\
	X(MOVE_PTES_PTEP_GET,	"move_ptes_ptep_get",	"ptep_get() calls inside move_ptes")		\
	X(MOVE_PTES_READ,	"move_ptes_read",	"PTE entries read inside move_ptes")		\
	X(MOVE_PMD,		"move_pmd",		"mremap moves of a whole PTE table or huge PMD") \
	X(PGTABLE_ALLOC,	"pgtable_alloc",	"page-table pages allocated (deposits too)")	\
	X(PGTABLE_FREE,		"pgtable_free",		"page-table pages freed unused (deposits, races)") \
	X(PGTABLE_FREE_RCU,	"pgtable_free_rcu",	"page tables queued to call_rcu (freed after a grace period): in a batch or on their own") \
	X(PGTABLE_FREE_SYNC,	"pgtable_free_sync",	"page tables freed after their synchronize_rcu") \
	X(RCU_CALL,		"rcu_call",		"call_rcu() of a table batch, or of a table freed on its own")	\
	X(RCU_SYNC,		"rcu_sync",		"synchronize_rcu() waits for one table")	\
	X(PT_RECLAIM_FAST,	"pt_reclaim_fast",	"empty PTE tables reclaimed, PMD lock trylocked") \
	X(PT_RECLAIM_SLOW,	"pt_reclaim_slow",	"empty PTE tables reclaimed after a rescan")	\
	X(GUP_FAST,		"gup_fast",		"pages pinned by GUP-fast")			\
	X(GUP_FAST_BACKOFF,	"gup_fast_backoff",	"GUP-fast stops: a race or a page it cannot take") \
	X(GUP_SLOW,		"gup_slow",		"pages pinned by the locked GUP")		\
	X(PT_POISON_SEEN,	"pt_poison_seen",	"lockless walks that read a freed page table")	\
	X(TLB_HIT,		"tlb_hit",		"simulated TLB hits")				\
	X(TLB_MISS,		"tlb_miss",		"simulated TLB misses")				\
	X(PAGE_WALK,		"page_walk",		"hardware page-table walks")			\
	X(HW_AD_UPDATE,		"hw_ad_update",		"accessed/dirty bits set by the hardware walker") \
	X(TLB_FLUSH_PAGE,	"tlb_flush_page",	"TLB invalidations of one page (invlpg/TLBI VAE1IS)") \
	X(TLB_FLUSH_RANGE,	"tlb_flush_range",	"ranged TLB flush operations")			\
	X(TLB_FLUSH_ALL,	"tlb_flush_all",	"whole-mm TLB flushes")				\
	X(TLB_IPI,		"tlb_ipi",		"shootdown IPIs sent to other CPUs")		\
	X(TLB_SANITIZER,	"tlb_sanitizer",	"TLB hits on translations the tables no longer hold") \
	X(FOLIO_SPLIT,		"folio_split",		"large folios split into order-0 folios")	\
	X(LAZYFREE,		"lazyfree",		"pages marked lazyfree by MADV_FREE (PGLAZYFREE)") \
	X(LAZYFREED,		"lazyfreed",		"lazyfree pages discarded by reclaim (PGLAZYFREED)") \
	X(LAZYFREE_REDIRTIED,	"lazyfree_redirtied",	"lazyfree folios found dirty: swapbacked again") \
	X(RECLAIM_ISOLATE,	"reclaim_isolate",	"folios isolated for reclaim")			\
	X(RECLAIM_ACTIVATE,	"reclaim_activate",	"folios reclaim kept and activated (no swap)")	\
	X(RECLAIM_KEEP,		"reclaim_keep",		"folios reclaim kept: extra reference or contention") \
	X(SUBPAGE_CLEAR,	"subpage_clear",	"4 KiB sub-pages cleared")			\
	X(SUBPAGE_COPY,		"subpage_copy",		"4 KiB sub-pages copied")			\
	X(GATHER_FLUSH,		"gather_flush",		"mmu_gather flushes (tlb_flush_mmu)")	\
	X(VMA_LOCK_SUCCESS,	"vma_lock_success",	"faults handled under the VMA's own lock (VMA_LOCK_SUCCESS)") \
	X(VMA_LOCK_ABORT,	"vma_lock_abort",	"faults that found no VMA to lock under RCU, or a locked one: mmap lock") \
	X(VMA_LOCK_RETRY,	"vma_lock_retry",	"faults begun under the VMA lock that needed the mmap lock (VM_FAULT_RETRY)") \
	X(VMA_LOCK_MISS,	"vma_lock_miss",	"VMAs locked after a writer had moved or removed them: looked up again") \
	X(FAULT_FILE,		"fault_file",		"faults that mapped a page-cache page (do_read_fault, do_shared_fault)") \
	X(FAULT_FILE_COW,	"fault_file_cow",	"write faults that copied a file page into a private mapping (do_cow_fault, do_wp_page)") \
	X(FAULT_MKWRITE,	"fault_mkwrite",	"write faults that dirtied a clean shared file page in place (wp_page_shared)") \
	X(FAULT_AROUND,		"fault_around",		"page-cache pages mapped ahead of need by fault-around (filemap_map_pages)") \
	X(FAULT_SIGBUS,		"fault_sigbus",		"faults on a page wholly past the end of its file (SIGBUS)") \
	X(PGCACHE_ADD,		"pgcache_add",		"pages this space's faults read into the page cache (readahead included)") \
	X(FILE_WRITEBACK,	"file_writeback",	"dirty file pages reclaim wrote back to their file") \
	X(FILE_RECLAIMED,	"file_reclaimed",	"file pages reclaim dropped from the page cache") \
	X(THP_COLLAPSE_ALLOC,	"thp_collapse_alloc",	"THPs allocated to collapse a range into (THP_COLLAPSE_ALLOC)") \
	X(THP_COLLAPSE_ALLOC_FAILED, "thp_collapse_alloc_failed", "THP allocations for a collapse that failed (THP_COLLAPSE_ALLOC_FAILED)") \
	X(TABLE_SYNC_ONE,	"table_sync_one",	"waits for lockless walkers of one unlinked table (tlb_remove_table_sync_one: MADV_COLLAPSE, semi RCU's single table)") \
	X(MIN_FLT,		"min_flt",		"faults handled, as a task's min_flt counts them (mm_account_fault): GUP's too, not those that failed") \
	X(THP_DEFERRED_SPLIT_PAGE, "thp_deferred_split_page", "PMD-sized THPs found partially mapped: queued for the deferred split (THP_DEFERRED_SPLIT_PAGE)") \
	X(PGTABLE_FREE_BATCH,	"pgtable_free_batch",	"page tables freed through a table batch (one call_rcu a batch page)") \
	X(PGTABLE_FREE_ONE_IPI,	"pgtable_free_one_ipi",	"page tables with no batch page, freed at once after an IPI to every CPU (semi RCU)") \
	X(PGTABLE_FREE_ONE_RCU,	"pgtable_free_one_rcu",	"page tables with no batch page, freed by a call_rcu of their own") \
	X(PGTABLE_FREE_NATIVE,	"pgtable_free_native",	"page tables freed right after the TLB shootdown (x86 bare metal before 6.14)") \
	X(TABLE_SYNC_IPI,	"table_sync_ipi",	"IPIs tlb_remove_table_sync_one sent, one per other CPU of the space") \
	X(TABLE_BATCH_FAIL,	"table_batch_fail",	"table batch pages that could not be allocated (GFP_NOWAIT)") \
	X(FAULT_HUGETLB,	"fault_hugetlb",	"hugetlb faults that mapped a new huge page, cleared (hugetlb_no_page)") \
	X(FAULT_HUGETLB_CACHE,	"fault_hugetlb_cache",	"hugetlb faults that mapped a huge page from its file's page cache (MAP_SHARED, or a private read of one)") \
	X(FAULT_HUGETLB_COW,	"fault_hugetlb_cow",	"hugetlb write faults that copied the huge page (hugetlb_wp, copy_user_large_folio)") \
	X(FAULT_HUGETLB_REUSE,	"fault_hugetlb_reuse",	"hugetlb write faults that made an exclusive huge page writable in place") \
	X(FAULT_HUGETLB_SIGBUS,	"fault_hugetlb_sigbus",	"hugetlb faults with no huge page to be had, or in a range its owner's COW took back (SIGBUS)") \
	X(HUGETLB_ALLOC,	"hugetlb_alloc",	"huge pages taken from the hugetlb pool (a reserved one, a free one or a new surplus one)") \
	X(HUGETLB_ALLOC_FAIL,	"hugetlb_alloc_fail",	"hugetlb allocations the pool refused: no free page beyond the reservations, no surplus") \
	X(HUGETLB_UNMAP_REF,	"hugetlb_unmap_ref",	"huge pages a private mapping's owner took back from its children to COW with an empty pool (unmap_ref_private)") \
	X(MMAP_LOCK_READ,	"mmap_lock_read",	"mmap lock read acquisitions (mmap_read_lock, a successful mmap_read_trylock; a downgrade is none)") \
	X(MMAP_LOCK_WRITE,	"mmap_lock_write",	"mmap lock write acquisitions (mmap_write_lock)") \
	X(MMAP_LOCK_READ_WAIT,	"mmap_lock_read_wait",	"read acquisitions that slept: a writer held the lock or waited for it (timing-dependent)") \
	X(MMAP_LOCK_WRITE_WAIT,	"mmap_lock_write_wait",	"write acquisitions that slept: anyone held the lock or waited for it (timing-dependent)") \
	X(MMAP_LOCK_FAULT,	"mmap_lock_fault",	"mmap read acquisitions by the fault path (lock_mm_and_find_vma: no VMA lock to be had, or a retry)") \
	X(MMAP_LOCK_MADVISE,	"mmap_lock_madvise",	"mmap read acquisitions by madvise and process_madvise, one a call (more where the call drops and retakes it: MADV_POPULATE_*, MADV_COLLAPSE)") \
	X(MMAP_LOCK_GUP,	"mmap_lock_gup",	"mmap read acquisitions by GUP (mmp_gup, one a call; GUP-fast takes none)") \
	X(MADV_VMA_LOCK_SUCCESS, "madv_vma_lock_success", "madvise calls done under one VMA's lock, with no mmap lock (6.17 madvise_vma_lock)") \
	X(MADV_VMA_LOCK_FALLBACK, "madv_vma_lock_fallback", "madvise calls that could take a VMA lock and took the mmap read lock instead: the range spans VMAs, or the VMA lock could not be had") \
	X(MMAP_LOCK_PROCMAP,	"mmap_lock_procmap",	"mmap read acquisitions by mmp_space_procmap_query (PROCMAP_QUERY), one a call: every call before 6.18, a fallback from 6.18") \
	X(PROCMAP_VMA_LOCK_SUCCESS, "procmap_vma_lock_success", "PROCMAP_QUERY calls answered under the found VMA's lock alone, with no mmap lock (6.18 procmap_query_vma_lock)") \
	X(PROCMAP_VMA_LOCK_FALLBACK, "procmap_vma_lock_fallback", "PROCMAP_QUERY calls that tried the VMA lock and took the mmap read lock: the VMA was write-locked, or the lookup met a hole it cannot pass here") \
	X(SPLIT_ZERO_PAGE,	"split_zero_page",	"sub-pages of an anonymous folio split to order 0 that held only zeroes: mapped to the shared zero page and freed (try_to_map_unused_to_zeropage, 6.12)") \
	X(THP_SWPOUT_FALLBACK,	"thp_swpout_fallback",	"PMD-sized THPs reclaim split to swap them page by page: no swap space for them whole (THP_SWPOUT_FALLBACK)")

enum mmp_counter {
#define MMP_COUNTER_ENUM(id, name, doc) MMP_C_##id,
	MMP_COUNTER_LIST(MMP_COUNTER_ENUM)
#undef MMP_COUNTER_ENUM
	MMP_NR_COUNTERS
};

/*
 * Indexed by enum mmp_counter. It grows at its end as counters are added; the
 * library fills as many as the caller's structure holds (mmp_space_counters()).
 */
struct mmp_counters {
	uint64_t v[MMP_NR_COUNTERS];
};

/** mmp_counter_count() - the number of counters the library counts (may exceed MMP_NR_COUNTERS). */
int mmp_counter_count(void);
/** mmp_counter_name() - printed name of counter @c, or NULL when out of range. */
const char *mmp_counter_name(int c);
/** mmp_counter_doc() - one line saying what counter @c counts. */
const char *mmp_counter_doc(int c);

/* ---- counter arithmetic (since libmmprim.so.1.2) ---- */

/**
 * mmp_counters_diff() - @out = @after - @before, counter by counter: what
 * happened between two snapshots of one space. Counters only grow between
 * resets, so each difference is what the calls in between counted.
 */
static inline void mmp_counters_diff(const struct mmp_counters *after,
				     const struct mmp_counters *before, struct mmp_counters *out)
{
	for (int i = 0; i < MMP_NR_COUNTERS; i++)
		out->v[i] = after->v[i] - before->v[i];
}

/** mmp_counter_by_name() - the counter printed as @name; -ENOENT, or -EINVAL for NULL. */
int mmp_counter_by_name(const char *name);

/**
 * mmp_counters_print_sized() - print the nonzero counters of @c (@size bytes
 * of counters; those beyond count as 0) to @f, one "<prefix>name value" line
 * each, in counter order: a difference from mmp_counters_diff() prints just
 * what moved. Returns the number of lines, or -EINVAL (NULL @c or @f, @size
 * below 8), -EIO when @f fails. @prefix may be NULL.
 */
int mmp_counters_print_sized(FILE *f, const struct mmp_counters *c, size_t size,
			     const char *prefix);

static inline int mmp_counters_print(FILE *f, const struct mmp_counters *c, const char *prefix)
{
	return mmp_counters_print_sized(f, c, sizeof(*c), prefix);
}

#ifdef __cplusplus
}
#endif

#endif /* MMPRIM_COUNTERS_H */
