/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Core mm functions shared across lib/: the "mm/internal.h" of libmmprim. */
#ifndef MMP_MM_H
#define MMP_MM_H

#include "internal.h"
#include "tlbflush.h"

/* End of the PGD entries user space can use: the ceiling of free_pgtables. */
#define USER_TOP(s)	(((s)->arch->task_size + level_size(pgd_level(s)) - 1) & \
			 ~(level_size(pgd_level(s)) - 1))

/* ---- VMAs (lib/vma.c) ---- */
struct mmp_vma *find_vma(struct mmp_space *s, uint64_t addr);
struct mmp_vma *find_vma_intersection(struct mmp_space *s, uint64_t start, uint64_t end);
struct mmp_vma *vma_find_next(struct mmp_space *s, uint64_t addr);
int vma_insert(struct mmp_space *s, uint64_t start, uint64_t end, unsigned long flags,
	       uint64_t pgoff, struct anon_vma *anon_vma);
struct anon_vma *anon_vma_alloc(struct anon_vma *parent);
void anon_vma_get(struct anon_vma *av);
void anon_vma_put(struct anon_vma *av);
bool anon_vma_covers(const struct anon_vma *av, uint32_t id);
int vma_split(struct mmp_space *s, uint64_t addr);
unsigned int vma_splits_needed(struct mmp_space *s, uint64_t start, uint64_t end);
int vma_split_range(struct mmp_space *s, uint64_t start, uint64_t end);
void vma_remove_range(struct mmp_space *s, uint64_t start, uint64_t end);
void vma_merge_range(struct mmp_space *s, uint64_t start, uint64_t end);
typedef unsigned long (*vma_flags_fn)(const struct mmp_vma *vma, void *arg);
typedef void (*vma_change_fn)(struct mmp_space *s, struct mmp_vma *vma, unsigned long flags,
			      void *arg);
int vma_modify_flags(struct mmp_space *s, uint64_t start, uint64_t end, vma_flags_fn new_flags,
		     vma_change_fn change, void *arg);
uint64_t get_unmapped_area(struct mmp_space *s, uint64_t hint, uint64_t len, uint64_t align);

/* ---- mmu_gather (lib/mmu_gather.c) ---- */

#define MMU_GATHER_BUNDLE	8
#define MAX_GATHER_PAGES	9690	/* 19 batch pages of 510 slots, as MAX_GATHER_BATCH_COUNT */
#define MAX_TABLE_BATCH		509	/* one page of table pointers */

struct gather_page {
	uint32_t pfn;		/* folio head */
	uint32_t nr;		/* references to drop */
};

struct mmp_gather {
	struct mmp_space *s;
	bool fullmm;
	bool reclaim_pt;	/* MADV_DONTNEED: free PTE tables it empties (PT_RECLAIM) */
	bool need_flush;	/* entries were cleared: the TLB must be flushed */
	bool freed_tables;
	unsigned int stride_shift;	/* PAGE_SHIFT, or PMD_SHIFT when only PMDs were cleared */
	uint64_t start, end;	/* range to flush */

	struct gather_page local[MMU_GATHER_BUNDLE];
	struct gather_page *pages;
	/* max_pages <= MAX_GATHER_PAGES, nr_pages <= slots: slots <= max_pages bounds both. */
	unsigned int nr_pages, max_pages, slots;

	uint32_t tables[MAX_TABLE_BATCH];
	unsigned int nr_tables;
};

void tlb_gather_mmu(struct mmp_gather *tlb, struct mmp_space *s, bool fullmm);
void tlb_finish_mmu(struct mmp_gather *tlb);
void tlb_flush_mmu(struct mmp_gather *tlb);
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
/* Free a detached table once the TLB is flushed; [start, end) is the span it mapped. */
void tlb_remove_table(struct mmp_gather *tlb, uint32_t pfn, uint64_t start, uint64_t end);

/* ---- page tables (lib/pgtable.c) ---- */

uint32_t pgtable_alloc(struct mmp_space *s);
void pgtable_free(struct mmp_space *s, uint32_t pfn);
void pgtable_unlinked(struct mmp_space *s, uint32_t pfn);
void pgtable_release(struct mmp_space *s, uint32_t pfn, enum mmp_counter how);
void pgtable_put(struct mmp_space *s, uint32_t pfn);
mmp_pte_t *pmd_alloc(struct mmp_space *s, uint64_t addr);
mmp_pte_t *pmd_offset(struct mmp_space *s, uint64_t addr);
mmp_pte_t *pte_table(struct mmp_space *s, mmp_pte_t pmd);
/* Inside rcu_read_lock: the PTE table of *@pmdp, locked, rechecked; NULL if none. */
mmp_pte_t *pte_offset_map_lock(struct mmp_space *s, mmp_pte_t *pmdp, mmp_spinlock_t **ptlp);
/* PT_RECLAIM (lib/pt_reclaim.c): the pfn of the freed table, or NO_PFN. */
uint32_t try_to_free_pte_fast(struct mmp_space *s, mmp_pte_t *pmdp, mmp_pte_t *ptes);
uint32_t try_to_free_pte_slow(struct mmp_space *s, mmp_pte_t *pmdp, mmp_pte_t *ptes);
typedef int (*pmd_fn)(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t addr, uint64_t end,
		      void *arg);
int walk_pmd_range(struct mmp_space *s, uint64_t addr, uint64_t end, pmd_fn fn, void *arg);
void free_pgtables(struct mmp_gather *tlb, uint64_t start, uint64_t end, uint64_t floor,
		   uint64_t ceiling);

/* ---- folios (lib/memory.c) ---- */

uint32_t folio_alloc_anon(struct mmp_space *s, unsigned int order);
bool __folio_put_refs(struct mmp_phys *phys, uint32_t head_pfn, unsigned int nr);
void folio_put_refs(struct mmp_space *s, uint32_t head_pfn, unsigned int nr);
void folio_free(struct mmp_phys *phys, uint32_t head_pfn);

/* ---- faults (lib/memory.c, lib/huge_memory.c) ---- */

#define FAULT_FLAG_WRITE	0x1
/* Make a shared anonymous page (or the zero page) exclusive without making it writable. */
#define FAULT_FLAG_UNSHARE	0x2
/* The fault holds only its VMA's lock, not the mmap lock. */
#define FAULT_FLAG_VMA_LOCK	0x4

struct vm_fault {
	struct mmp_space *s;
	struct mmp_vma *vma;
	uint64_t address;
	unsigned int flags;
	mmp_pte_t *pmdp;
	mmp_pte_t orig_pmd;
	mmp_pte_t pmdval;	/* the PMD its PTE table was found through (pte_offset_map) */
};

/* Returns 0 (handled, or nothing to do), -EFAULT (SIGSEGV), -ENOMEM (OOM), or VM_FAULT_FALLBACK. */
#define VM_FAULT_FALLBACK	1
/* Under the VMA lock only: this fault needs the mmap lock, try again under it. */
#define VM_FAULT_RETRY		2
int handle_mm_fault(struct mmp_space *s, uint64_t addr, unsigned int flags);
int __handle_mm_fault(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr, unsigned int flags);

uint32_t thp_vma_allowable_orders(struct mmp_space *s, struct mmp_vma *vma);
bool vma_thp_allowed(struct mmp_space *s, struct mmp_vma *vma, unsigned int order);
int do_huge_pmd_anonymous_page(struct vm_fault *vmf);
int do_huge_pmd_wp_page(struct vm_fault *vmf);
void huge_pmd_set_accessed(struct vm_fault *vmf);
void split_huge_pmd_locked(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t haddr);
void split_huge_pmd(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t haddr);
int zap_huge_pmd(struct mmp_gather *tlb, mmp_pte_t *pmdp, uint64_t addr);
int copy_huge_pmd(struct mmp_space *dst, struct mmp_space *src, mmp_pte_t *dst_pmdp,
		  mmp_pte_t *src_pmdp, uint64_t addr);
uint32_t huge_zero_folio(struct mmp_phys *phys);
void pgtable_trans_huge_deposit(struct mmp_space *s, mmp_pte_t *pmdp, uint32_t pgtable);
uint32_t pgtable_trans_huge_withdraw(struct mmp_space *s, mmp_pte_t *pmdp);

/* ---- huge folio clear and copy (lib/huge_copy.c) ---- */

/*
 * One ascending run [first, first + nr) of a huge folio's sub-pages. @far: away
 * from the target, a streaming (non-temporal) variant may bypass the caches.
 */
typedef void (*subpages_fn)(void *arg, unsigned int first, unsigned int nr, bool far);
/* The sub-pages of the folio around @addr_hint in the space's order (MMP_OPT_HUGE_ORDER). */
void process_huge_page(struct mmp_space *s, uint64_t addr_hint, unsigned int nr_pages,
		       subpages_fn fn, void *arg);
/* @order's runs for target sub-page @target; @nbhd sub-pages for neighbourhood-last, 0: default. */
void huge_page_walk(enum mmp_huge_order order, unsigned int target, unsigned int nr_pages,
		    unsigned int nbhd, subpages_fn fn, void *arg);
/* The same as sub-page indices in visiting order, for tests; returns how many (@nr_pages). */
unsigned int huge_page_order(enum mmp_huge_order order, unsigned int target, unsigned int nr_pages,
			     unsigned int nbhd, unsigned int *out);
/* Neighbourhood of neighbourhood-last when MMP_OPT_HUGE_NEIGHBOURHOOD is 0, from the host L2. */
unsigned int huge_neighbourhood_default(void);
void folio_zero_user(struct mmp_space *s, uint32_t pfn, unsigned int order, uint64_t addr_hint);
void copy_user_large_folio(struct mmp_space *s, uint32_t dst, uint32_t src, unsigned int order,
			   uint64_t addr_hint);

/* ---- PTE batching (lib/pte_batch.c) ---- */

#define FPB_RESPECT_DIRTY	(1u << 0)
#define FPB_RESPECT_SOFT_DIRTY	(1u << 1)
#define FPB_RESPECT_WRITE	(1u << 2)
#define FPB_MERGE_WRITE		(1u << 3)
#define FPB_MERGE_YOUNG_DIRTY	(1u << 4)

/*
 * Entries from @ptep (the first is *@ptentp, present, of a large folio) that
 * map consecutive pages of that folio with bits equal but for accessed and
 * what @flags lets differ. Merge flags OR write, young, dirty into *@ptentp.
 */
unsigned int folio_pte_batch_flags(struct mmp_space *s, mmp_pte_t *ptep, mmp_pte_t *ptentp,
				   unsigned int max_nr, unsigned int flags);
unsigned int folio_pte_batch(struct mmp_space *s, mmp_pte_t *ptep, mmp_pte_t pte,
			     unsigned int max_nr);

static inline bool pte_batching(struct mmp_space *s)
{
	return READ_ONCE(s->opts[MMP_OPT_PTE_BATCH]);
}

/* ---- zap (lib/memory.c) ---- */

void unmap_page_range(struct mmp_gather *tlb, uint64_t start, uint64_t end);
/* munmap's unmap_region: zap, free tables between the neighbours, flush. */
void unmap_region(struct mmp_space *s, uint64_t start, uint64_t end);
int do_munmap(struct mmp_space *s, uint64_t start, uint64_t end);

/* ---- reverse map and reclaim (lib/rmap.c, lib/vmscan.c, lib/huge_memory.c) ---- */

int anon_vma_prepare(struct mmp_space *s, struct mmp_vma *vma);
int __vmf_anon_prepare(struct vm_fault *vmf);

/*
 * anon_vma_prepare for a fault: 0, -ENOMEM, or VM_FAULT_RETRY under the VMA
 * lock alone. Inline while the VMA has its anon_vma, as the kernel's
 * anon_vma_prepare() is.
 */
static __always_inline int vmf_anon_prepare(struct vm_fault *vmf)
{
	if (likely(READ_ONCE(vmf->vma->anon_vma)))
		return 0;
	return __vmf_anon_prepare(vmf);
}

typedef bool (*rmap_fn)(struct mmp_space *s, struct mmp_vma *vma, uint32_t head_pfn,
			uint64_t start, uint64_t end, void *arg);
bool rmap_walk_anon(struct mmp_space *self, uint32_t head_pfn, rmap_fn fn, void *arg);
bool try_to_unmap(struct mmp_space *self, uint32_t head_pfn);
enum lazyfree_verdict { LAZYFREE_DISCARD, LAZYFREE_REDIRTIED, LAZYFREE_REFERENCED };
enum lazyfree_verdict lazyfree_check(struct mmp_space *s, struct mmp_vma *vma,
				     struct mmp_page *head, bool entry_dirty, bool mark);
/* @old: the rule before the seed (any dirt refuses, without setting swapbacked). */
bool unmap_huge_pmd_locked(struct mmp_space *s, struct mmp_vma *vma, mmp_pte_t *pmdp,
			   uint64_t haddr, uint32_t head_pfn, bool old);
bool madvise_free_huge_pmd(struct mmp_gather *tlb, struct mmp_vma *vma, mmp_pte_t *pmdp,
			   uint64_t addr);
/* Split a PTE-mapped large folio whose every mapping is in @ptes (PTL held). */
int split_folio_locked(struct mmp_space *s, mmp_pte_t *ptes, uint64_t table_addr, uint32_t head_pfn,
		       int extra_refs);
void folio_mark_lazyfree(struct mmp_space *s, struct mmp_page *head);

/* Reclaim: isolated folios, each holding one extra reference. */
struct folio_list {
	uint32_t *pfns;
	unsigned int nr, cap;
};
bool folio_isolate(struct mmp_space *s, struct folio_list *list, uint32_t head_pfn);
void reclaim_pages(struct mmp_space *s, struct folio_list *list);

/* ---- helpers ---- */

int populate_range(struct mmp_space *s, uint64_t start, uint64_t end, bool write);
void exit_mmap(struct mmp_space *s);
int space_alloc(struct mmp_phys *phys, const struct mmp_arch *arch, struct mmp_space **out);
void space_link(struct mmp_space *s);
void __mmdrop(struct mmp_space *s);

/* Keep the struct of @s (not its mappings) alive past its users' exit. */
static inline void mmgrab(struct mmp_space *s)
{
	__atomic_fetch_add(&s->mm_count, 1, __ATOMIC_RELAXED);
}

/* Drop a reference from mmgrab or the users'; the last one frees the struct. */
static inline void mmdrop(struct mmp_space *s)
{
	if (__atomic_sub_fetch(&s->mm_count, 1, __ATOMIC_ACQ_REL) == 0)
		__mmdrop(s);
}

/* Folio references and mappings, kept where folio_add/remove_rmap would. */
static inline void folio_ref_add(struct mmp_page *head, int nr)
{
	__atomic_fetch_add(&head->refcount, nr, __ATOMIC_RELAXED);
}

static inline int folio_ref_sub_return(struct mmp_page *head, int nr)
{
	return __atomic_sub_fetch(&head->refcount, nr, __ATOMIC_ACQ_REL);
}

static inline int folio_ref_count(struct mmp_page *head)
{
	return __atomic_load_n(&head->refcount, __ATOMIC_ACQUIRE);
}

/*
 * Mapcounts as the kernel keeps them: a small folio has only its page's
 * _mapcount; a large one also has _large_mapcount (every PTE and PMD mapping)
 * and _entire_mapcount (PMD mappings).
 */
static inline int folio_mapcount(struct mmp_page *head)
{
	return head->order ? __atomic_load_n(&head->folio.large_mapcount, __ATOMIC_RELAXED)
			   : __atomic_load_n(&head->mapcount, __ATOMIC_RELAXED);
}

static inline void page_flag_set(struct mmp_page *p, uint32_t f)
{
	__atomic_fetch_or(&p->flags, f, __ATOMIC_RELAXED);
}

static inline void page_flag_clear(struct mmp_page *p, uint32_t f)
{
	__atomic_fetch_and(&p->flags, ~f, __ATOMIC_RELAXED);
}

static inline bool page_flag_test(struct mmp_page *p, uint32_t f)
{
	return __atomic_load_n(&p->flags, __ATOMIC_RELAXED) & f;
}

/* folio->mapping and folio->index of a new folio whose first page maps at @addr. */
static __always_inline void __folio_set_anon(struct mmp_page *head, struct mmp_vma *vma,
					     uint64_t addr)
{
	head->anon_vma = vma->anon_vma->id;
	head->index = linear_page_index(vma, addr);
}

/*
 * A new folio's first mapping (folio_add_new_anon_rmap): @nr PTEs of @vma from
 * @addr map pages [0, nr), or one PMD maps it all; no table maps it yet. Its
 * anon_vma and index come first (__folio_set_anon). A stale lockless read may
 * still reach the recycled frame, but GUP-fast's folio_try_get fails while the
 * count is 0, which it is until the last store.
 */
static __always_inline void folio_add_new_anon_rmap(struct mmp_page *head,
						    struct mmp_vma *vma, uint64_t addr,
						    int nr, bool pmd)
{
	/* MAP_DROPPABLE memory is never swapbacked: reclaim may always drop it. */
	if (unlikely(vma->flags & VM_DROPPABLE))
		page_flag_clear(head, PG_swapbacked);
	__folio_set_anon(head, vma, addr);
	if (pmd) {
		head->folio.entire_mapcount = 1;
		head->folio.large_mapcount = 1;
		head->refcount = 1;
		return;
	}
	for (int i = 0; i < nr; i++)
		head[i].mapcount = 1;
	if (head->order)
		head->folio.large_mapcount = nr;
	head->refcount = nr;
}

/* Map/unmap @nr PTEs of pages [page, page + nr) of folio @head. */
static inline void folio_add_rmap_ptes(struct mmp_page *head, struct mmp_page *page, int nr)
{
	for (int i = 0; i < nr; i++)
		__atomic_fetch_add(&page[i].mapcount, 1, __ATOMIC_RELAXED);
	if (head->order)
		__atomic_fetch_add(&head->folio.large_mapcount, nr, __ATOMIC_RELAXED);
}

static inline void folio_remove_rmap_ptes(struct mmp_page *head, struct mmp_page *page, int nr)
{
	for (int i = 0; i < nr; i++)
		__atomic_fetch_sub(&page[i].mapcount, 1, __ATOMIC_RELAXED);
	if (head->order)
		__atomic_fetch_sub(&head->folio.large_mapcount, nr, __ATOMIC_RELAXED);
}

static inline void folio_add_rmap_pmd(struct mmp_page *head)
{
	__atomic_fetch_add(&head->folio.entire_mapcount, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&head->folio.large_mapcount, 1, __ATOMIC_RELAXED);
}

static inline void folio_remove_rmap_pmd(struct mmp_page *head)
{
	__atomic_fetch_sub(&head->folio.entire_mapcount, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&head->folio.large_mapcount, 1, __ATOMIC_RELAXED);
}

/* pte_present(): mapped, even if PROT_NONE makes it invalid for the hardware. */
static inline bool entry_present(unsigned int eflags)
{
	return eflags & (MMP_E_PRESENT | MMP_E_PROTNONE);
}

/* A lazyfree folio found dirty goes back to being swap-backed anonymous memory. */
static inline void folio_set_swapbacked(struct mmp_page *head)
{
	__atomic_fetch_or(&head->flags, PG_swapbacked, __ATOMIC_RELAXED);
	__atomic_fetch_and(&head->flags, ~PG_lazyfree, __ATOMIC_RELAXED);
}

/* add_mm_counter(MM_ANONPAGES): this thread's shard, summed by get_mm_rss. */
static __always_inline void rss_add(struct mmp_space *s, int64_t nr)
{
	int shard = counter_shard();

	if (likely(shard < MMP_COUNTER_SHARDS - 1))
		__atomic_store_n(&s->rss[shard].anon,
				 __atomic_load_n(&s->rss[shard].anon, __ATOMIC_RELAXED) + nr,
				 __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&s->rss[MMP_COUNTER_SHARDS - 1].anon, nr, __ATOMIC_RELAXED);
}

static inline int64_t get_mm_rss(struct mmp_space *s)
{
	int64_t sum = 0;

	for (int i = 0; i < MMP_COUNTER_SHARDS; i++)
		sum += __atomic_load_n(&s->rss[i].anon, __ATOMIC_RELAXED);
	return sum;
}

#define MMP_PROT_ALL	(MMP_PROT_READ | MMP_PROT_WRITE | MMP_PROT_EXEC)

/* stack_guard_gap's default: 256 pages kept free below a stack, whatever the page size. */
#define STACK_GUARD_GAP		(256ULL * PAGE_SIZE)
/* RLIMIT_STACK's default: how far a stack may grow (acct_stack_growth). */
#define STACK_RLIMIT		(8ULL << 20)

/* Where @vma's room begins for placing other mappings (vm_start_gap). */
static inline uint64_t vm_start_gap(const struct mmp_vma *vma)
{
	if (!(vma->flags & VM_GROWSDOWN))
		return vma->start;
	return vma->start > STACK_GUARD_GAP ? vma->start - STACK_GUARD_GAP : 0;
}

int expand_downwards(struct mmp_space *s, struct mmp_vma *vma, uint64_t addr);

static inline unsigned long calc_vm_prot_bits(int prot)
{
	return (prot & MMP_PROT_READ ? VM_READ : 0) | (prot & MMP_PROT_WRITE ? VM_WRITE : 0) |
	       (prot & MMP_PROT_EXEC ? VM_EXEC : 0);
}

/* Translate VMA flags to the neutral entry flags of a new user mapping. */
static inline unsigned int vma_entry_flags(const struct mmp_vma *vma)
{
	unsigned int f = MMP_E_USER | MMP_E_ACCESSED;

	if (vma->flags & (VM_READ | VM_WRITE | VM_EXEC))
		f |= MMP_E_PRESENT;
	else
		f |= MMP_E_PROTNONE;
	if (!(vma->flags & VM_EXEC))
		f |= MMP_E_NOEXEC;
	return f;
}

/*
 * The PTE of pfn 0 that a new user mapping of @vma starts from, for its
 * flags. Private writable memory is mapped read-only here; a write fault adds
 * write and dirty, as the kernel's COW mappings do.
 */
static inline mmp_pte_t vm_get_page_prot(struct mmp_space *s, const struct mmp_vma *vma)
{
	return mk_entry(s, 0, vma_entry_flags(vma), MMP_PTE);
}

/* vm_page_prot, encoded once when the flags are set: a fault only adds the pfn (pfn_pte). */
static inline void vma_set_page_prot(struct mmp_space *s, struct mmp_vma *vma)
{
	WRITE_ONCE(vma->vm_page_prot, vm_get_page_prot(s, vma));
}

/* ptep_get, set_ptes, ...: inline per arch folder. */
#include "entry_ops.h"
/* pte_alloc, and the walk down to a PMD compiled per format. */
#include "pgtable.h"

#endif /* MMP_MM_H */
