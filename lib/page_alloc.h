/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Simulated physical memory and its allocator (lib/page_alloc.c): frames, buddy lists, per-CPU lists. */
#ifndef MMP_PAGE_ALLOC_H
#define MMP_PAGE_ALLOC_H

#include <pthread.h>

#include "hugetlb.h"
#include "mm_types.h"

/*
 * Per-CPU page lists (struct per_cpu_pages): order-0 frames freed and
 * allocated without the buddy lock or merging, hottest first. One list per
 * counter shard, so each host thread mostly has its own; a list comes online
 * with the first thread that uses it on this phys, as a CPU comes online.
 *
 * Sized and tuned as the kernel's (6.7+): pcp->high moves between high_min
 * (the low watermark split over the lists online) and high_max (an eighth of
 * memory split over them, zone_highsize); a refill grows from PCP_BATCH to PCP_BATCH <<
 * PCP_BATCH_SCALE_MAX over refills in a row without a free (nr_pcp_alloc),
 * a drain to the run of frees in a row (nr_pcp_free). Two CPUs faulting at
 * once then seldom meet at the buddy lock.
 */
#define PCP_BATCH		63
#define PCP_BATCH_SCALE_MAX	5

struct mmp_pcp {
	mmp_spinlock_t lock;
	uint32_t count;
	uint32_t head;		/* ring slot of the coldest frame; the hottest is count - 1 on */
	uint32_t high;		/* drain above this: high_min..high_max */
	uint32_t free_count;	/* frames freed in a row, halved by each allocation */
	uint32_t alloc_factor;	/* refills in a row: batch << alloc_factor, halved by a free */
	bool online;		/* used on this phys: counted in the split of high */
	uint32_t *pfns;		/* ring of phys->pcp_ring_mask + 1 slots */
} __attribute__((aligned(64)));

static __always_inline uint32_t *pcp_slot(struct mmp_pcp *pcp, uint32_t mask, uint32_t i)
{
	return &pcp->pfns[(pcp->head + i) & mask];
}

struct mmp_phys {
	uint8_t *base;		/* the host reservation; frame pfn is at base + pfn * 4096 */
	uint64_t nr_pages;
	struct mmp_page *memmap;

	mmp_spinlock_t lock;	/* the buddy allocator */
	uint32_t free_list[MMP_MAX_ORDER + 1];
	uint64_t nr_free[MMP_MAX_ORDER + 1];
	uint64_t free_pages;

	struct mmp_pcp *pcp;	/* MMP_COUNTER_SHARDS lists */
	/*
	 * READ_ONCE: set as lists come online. A reader may pair one update's
	 * high_min with the next one's high_max for a moment: harmless, no
	 * list's high ever exceeds the one-list high_max its ring is sized for.
	 */
	uint32_t pcp_high_min, pcp_high_max;
	uint32_t pcp_nr_online;
	/* Before any list's lock (pt_rcu_lock and the mmap lock may be held). */
	mmp_spinlock_t pcp_online_lock;
	uint32_t pcp_ring_mask;	/* ring slots - 1: a power of two above high_max at one list */
	bool debug_vm;		/* MMPRIM_DEBUG_VM set: expensive sanity checks */

	uint32_t zero_pfn;	 /* the shared zero page */
	uint32_t huge_zero_pfn;	 /* the huge zero folio, allocated on first use */

	int64_t nr_pinned;	/* atomic: folio references held by GUP pins */

	/*
	 * Page tables in flight: queued for call_rcu (PG_pt_rcu) and not yet
	 * released. A batch is released under pt_rcu_lock, so verify, holding
	 * it, sees the in-flight set stand still instead of waiting it out.
	 */
	pthread_mutex_t pt_rcu_lock;
	int64_t nr_pt_rcu;	/* atomic */

	/* mmp_space_verify()'s per-frame tallies (lib/verify.c): mapped on first use, kept zero. */
	void *verify_scratch;
	size_t verify_scratch_bytes;

	pthread_mutex_t spaces_lock;
	struct mmp_space *spaces; /* every space on this phys, linked by space->phys_next */
	uint64_t next_space_id;

	/*
	 * hugetlb pools (lib/hugetlb.c): their counts and free lists under
	 * hugetlb_lock; the sysctl writes take turns under hugetlb_mutex, which
	 * verify takes too; faults on one huge page take turns on its fault mutex.
	 */
	mmp_spinlock_t hugetlb_lock;
	struct hstate hstates[HUGE_MAX_HSTATE];
	pthread_mutex_t hugetlb_mutex;
	pthread_mutex_t hugetlb_fault_mutex[HUGETLB_FAULT_MUTEXES];

	/* Files by id (lib/filemap.c): a page-cache folio's mapping finds its file here. */
	pthread_mutex_t files_lock;
	struct mmp_file **files;	/* MMP_MAX_FILES slots, allocated with the first file */
	uint32_t nr_files;
};

/* Files a phys can hold at once: ids fit the memmap, the table stays small. */
#define MMP_MAX_FILES	65536

static __always_inline void *pfn_to_virt(struct mmp_phys *phys, uint64_t pfn)
{
	return phys->base + (pfn << PAGE_SHIFT);
}

static __always_inline struct mmp_page *pfn_to_page(struct mmp_phys *phys, uint64_t pfn)
{
	return &phys->memmap[pfn];
}

static __always_inline uint64_t page_to_pfn(struct mmp_phys *phys, struct mmp_page *page)
{
	return (uint64_t)(page - phys->memmap);
}

/* Buddy allocator: a block of 2^order frames, or NO_PFN when none is free. */
uint32_t phys_alloc_pages(struct mmp_phys *phys, unsigned int order);
void phys_free_pages(struct mmp_phys *phys, uint32_t pfn, unsigned int order);
/*
 * A block larger than the buddy allocator's largest (gigantic hugetlb pages:
 * alloc_contig_pages): naturally aligned free max-order blocks side by side,
 * taken whole, nothing migrated to make room. NO_PFN when there is no such
 * run. Any order works; up to MMP_MAX_ORDER it is phys_alloc_pages().
 */
uint32_t phys_alloc_contig_pages(struct mmp_phys *phys, unsigned int order);
void phys_free_contig_pages(struct mmp_phys *phys, uint32_t pfn, unsigned int order);
/* Free several blocks under one lock acquisition (mmu_gather release). */
void phys_free_pages_bulk(struct mmp_phys *phys, const uint32_t *pfns, const uint8_t *orders,
			  unsigned int nr);
/* Its two halves: order-0 frames to the per-CPU list, larger blocks to the buddy lists. */
void phys_free_frames_bulk(struct mmp_phys *phys, const uint32_t *pfns, unsigned int nr);
void phys_free_blocks_bulk(struct mmp_phys *phys, const uint32_t *pfns, const uint8_t *orders,
			   unsigned int nr);
static __always_inline bool phys_pfn_valid(struct mmp_phys *phys, uint64_t pfn)
{
	return pfn < phys->nr_pages;
}
/* Give every per-CPU list back to the buddy allocator (drain_all_pages). */
void phys_drain_pcp(struct mmp_phys *phys);
/* zone_highsize: the per-CPU lists' high_min and high_max for a zone. */
void pcp_highsize(uint64_t managed, uint64_t low, unsigned int nr_cpus, unsigned int batch,
		  uint32_t *high_min, uint32_t *high_max);
/*
 * The per-CPU list this thread allocates from and frees to, when not its own
 * (-1): an RCU callback frees onto the list of the thread that queued it, as
 * the kernel runs a callback on the CPU that queued it.
 */
extern __thread int phys_pcp_shard __attribute__((tls_model("initial-exec")));
/* Is @pfn inside a free buddy block? (verify) */
bool phys_pfn_is_free(struct mmp_phys *phys, uint64_t pfn);

#endif /* MMP_PAGE_ALLOC_H */
