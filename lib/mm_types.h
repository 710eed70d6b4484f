/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The types of mm (linux/mm_types.h): a frame's descriptor, the VMA and its
 * anon_vma, the address space. Their operations live in their own headers.
 */
#ifndef MMP_MM_TYPES_H
#define MMP_MM_TYPES_H

#include <pthread.h>

#include <urcu/urcu-memb.h>
#include <mmprim/mmprim.h>

#include "compiler.h"
#include "arch.h"
#include "debug.h"
#include "geometry.h"
#include "seqlock.h"
#include "rwsem.h"
#include "spinlock.h"

struct mmp_phys;
struct mmp_copy_ops;

/* ---- frames ---- */

/* Descriptor flags (struct page / struct folio flags). */
#define PG_buddy		(1u << 0)  /* head of a free buddy block */
#define PG_head			(1u << 1)  /* head of an allocated folio */
#define PG_tail			(1u << 2)  /* tail page of a large folio */
#define PG_table		(1u << 3)  /* page-table page */
#define PG_anon			(1u << 4)  /* anonymous folio */
#define PG_anon_exclusive	(1u << 5)  /* per page: mapped by exactly one mm, may be reused */
#define PG_dirty		(1u << 6)
#define PG_swapbacked		(1u << 7)
#define PG_reserved		(1u << 8)  /* zero pages: never freed, never counted */
#define PG_pcp			(1u << 9)  /* free, on a per-CPU list */
#define PG_pt_freeing		(1u << 10) /* page table unlinked, waiting for its free */
#define PG_lazyfree		(1u << 11) /* MADV_FREE'd: on the lazyfree (inactive file) list */
#define PG_isolated		(1u << 12) /* taken off the LRU by reclaim */
#define PG_pt_rcu		(1u << 13) /* page table in an RCU batch: in flight to its free */
#define PG_locked		(1u << 14) /* folio lock: page-cache folios, against truncate */
/* Anonymous large folio: a page of it lost its last mapping while others kept theirs. */
#define PG_partially_mapped	(1u << 15)
#define PG_hugetlb		(1u << 16) /* folio head: a page of a hugetlb pool, in use or free */
/* hugetlb: freeing the folio gives back the reservation it took (HPG_restore_reserve). */
#define PG_hugetlb_restore_reserve (1u << 17)

/* What a freed page table is filled with: no architecture's valid entry looks like it. */
#define PT_POISON		0x6b6b6b6b6b6b6b6aULL

#define NO_PFN			UINT32_MAX

struct mmp_page {
	uint32_t flags;
	uint8_t order;		/* free block order (PG_buddy) or folio order (PG_head) */
	uint8_t pad[3];
	int32_t refcount;	/* atomic; on the folio head */
	int32_t mapcount;	/* atomic; PTE mappings of this very page */
	union {
		struct {	/* free buddy block */
			uint32_t next, prev;
		} buddy;
		struct {	/* folio head */
			int32_t large_mapcount;	 /* every PTE and PMD mapping of the folio */
			int32_t entire_mapcount; /* PMD mappings */
		} folio;
		struct {	/* tail page of a large folio */
			uint32_t head;
			/* First tail page: MM_IDS_SHARED and MM_IDS_LOCKED (folio->_mm_ids). */
			uint32_t mm_ids;
		} tail;
		struct {	/* page-table page */
			mmp_spinlock_t ptl;
			uint32_t deposit;	/* PMD table: first deposited PTE table;
						   deposited table: the next one; NO_PFN ends */
		} pt;
	};
	union {
		struct {
			/*
			 * Folio head: the reverse map (folio->mapping and
			 * folio->index). Anonymous: the id of the anon_vma it
			 * was faulted in; page cache: the id of its file, 0
			 * once truncated...
			 */
			union {
				uint32_t anon_vma;
				uint32_t mapping;
			};
			/* ...and the references GUP pinned (folio->_pincount), part of refcount. */
			int32_t pincount;
			uint64_t index;		/* linear page index of its first page */
		};
		/*
		 * First tail page of an anonymous large folio: the two spaces that
		 * may own its mappings and how many each made (CONFIG_MM_ID's
		 * folio->_mm_id and _mm_id_mapcount; 0: a free slot).
		 */
		struct {
			uint32_t mm_id[2];
			int32_t mm_id_mapcount[2];
		};
	};
};

_Static_assert(sizeof(struct mmp_page) == 40, "keep the memmap small");

/* ---- counters ---- */

/*
 * Counters are sharded per host thread so the hot paths never share a cache
 * line; a reader sums the shards. Threads past the shard count share the last
 * shard with atomic adds.
 */
#define MMP_COUNTER_SHARDS 32

struct mmp_counter_shard {
	uint64_t v[MMP_NR_COUNTERS];
} __attribute__((aligned(64)));

/* The kinds of resident pages (mm->rss_stat), as /proc/PID/status splits VmRSS. */
enum mm_counter_type { MM_ANONPAGES, MM_FILEPAGES, MM_SHMEMPAGES, NR_MM_COUNTERS };

/* Per-order mTHP events (struct mmp_mthp_stats); the gauges are walked, not kept. */
enum mthp_stat_item {
	MTHP_STAT_ANON_FAULT_ALLOC,
	MTHP_STAT_ANON_FAULT_FALLBACK,
	MTHP_STAT_SPLIT,
	MTHP_STAT_SPLIT_DEFERRED,
	MTHP_STAT_SWPOUT_FALLBACK,
	MMP_NR_MTHP_STAT_EVENTS
};

struct mmp_rss_shard {
	int64_t count[NR_MM_COUNTERS];
} __attribute__((aligned(64)));

/* ---- VMAs ---- */

#define VM_READ		0x1ul
#define VM_WRITE	0x2ul
#define VM_EXEC		0x4ul
#define VM_SHARED	0x8ul		/* writes reach the file: MAP_SHARED */
/* Here only on shared mappings: the file was opened for writing, mprotect may add write. */
#define VM_MAYWRITE	0x20ul
#define VM_ACCESS_FLAGS	(VM_READ | VM_WRITE | VM_EXEC)
#define VM_GROWSDOWN	0x00000100ul	/* a stack (MAP_GROWSDOWN): faults below it grow it */
#define VM_DONTEXPAND	0x00040000ul	/* cannot grow with mremap, never merges (hugetlb) */
#define VM_MAYBE_GUARD	0x00000800ul	/* guard markers may be in it (6.19): fork copies its tables */
/* CONFIG_MEM_SOFT_DIRTY: every page counts as written since the last clear_refs. */
#define VM_SOFTDIRTY	0x08000000ul
/* Flags that do not stop a merge and that the merged VMA keeps (VM_STICKY). */
#define VM_STICKY	(VM_MAYBE_GUARD | VM_SOFTDIRTY)
#define VM_ACCOUNT	0x00100000ul	/* private writable memory charged to overcommit */
#define VM_NORESERVE	0x00200000ul	/* MAP_NORESERVE: no charge, no hugetlb reservation */
#define VM_HUGETLB	0x00400000ul	/* huge pages of a hugetlb pool (lib/hugetlb.c) */
/* VMAs that never merge: the kernel's VM_SPECIAL, of which only VM_DONTEXPAND is modelled. */
#define VM_SPECIAL	VM_DONTEXPAND
#define VM_HUGEPAGE	0x20000000ul
#define VM_NOHUGEPAGE	0x40000000ul
/* Reclaim drops it even when dirty: a high bit on 64-bit, as VM_HIGH_ARCH_8 is. */
#define VM_DROPPABLE	(1ul << 40)
#define VM_WIPEONFORK	0x02000000ul	/* a child gets the range empty */
/* madvise's VMA-flag advices (lib/madvise_behavior.c): */
#define VM_SEQ_READ	0x00008000ul	/* MADV_SEQUENTIAL: read ahead, forward */
#define VM_RAND_READ	0x00010000ul	/* MADV_RANDOM: no read-around on a fault */
#define VM_DONTCOPY	0x00020000ul	/* MADV_DONTFORK: fork leaves it out of the child */
#define VM_MERGEABLE	0x80000000ul	/* MADV_MERGEABLE: KSM may merge its pages (none merged here) */
#define VM_LOCKED	0x00002000ul	/* mlock: its pages are resident and not reclaimed */
#define VM_LOCKONFAULT	0x00080000ul	/* with VM_LOCKED: lock what faults in, populate nothing */
#define VM_LOCKED_MASK	(VM_LOCKED | VM_LOCKONFAULT)
/* mseal: the mapping may not change (lib/mseal.c). The kernel's bit 63, as on 64-bit. */
#define VM_SEALED	(1ul << 63)

#define MMP_MAX_MAP_COUNT 65530	/* sysctl vm.max_map_count */

/*
 * The anon_vma of a VMA lineage: a forked VMA gets a new one whose parent is
 * the old one, so a folio faulted under an ancestor is found in every
 * descendant VMA (anon_vma_fork's chain). Refcounted by VMAs and children.
 */
struct anon_vma {
	uint32_t id;
	struct anon_vma *parent;
	int refcount;
};

struct mmp_vma {
	/*
	 * What a walk of the index (lib/vma_tree.c) reads, in the first 64
	 * bytes: VMAs are allocated cache-line aligned (vma_alloc).
	 */
	uint64_t start, end;		/* change under rb_seq (vma_tree_set_range) */
	struct mmp_vma *rb_left, *rb_right, *rb_parent;
	uint64_t rb_gap;		/* vma_gap(), kept here so updates read no neighbour */
	uint64_t rb_subtree_gap;	/* the largest rb_gap in this subtree */
	int rb_height;
	/* The tree's seq in the update that last changed start, end, rb_left or rb_right. */
	unsigned int rb_seq;

	unsigned long flags;
	uint64_t pgoff;			/* linear page index of start */
	struct anon_vma *anon_vma;	/* NULL until the first fault (anon_vma_prepare) */
	struct mmp_vma *vm_prev, *vm_next;	/* address order, for writers */

	/*
	 * The per-VMA lock (CONFIG_PER_VMA_LOCK): a writer of the current mmap
	 * write section marks the VMA by setting vm_lock_seq to the space's
	 * mm_lock_seq, which the write unlock bumps; readers count in vm_refcnt.
	 */
	unsigned int vm_lock_seq;	/* atomic */
	bool detached;			/* atomic: out of the tree, freed after a grace period */
	struct rcu_head rcu;
	/*
	 * Every fault in the VMA writes it: a line of its own, so that CPUs
	 * faulting one VMA do not also miss on the fields above each time
	 * (the kernel's vm_refcnt is cache-line aligned for the same reason).
	 * The fields above fill the second line exactly: see the assertion.
	 */
	unsigned int vm_refcnt;		/* atomic: readers, or VMA_LOCK_WRITER */
	/* vm_page_prot, set with flags (vma_set_page_prot): a fault reads it on the line it wrote. */
	mmp_pte_t vm_page_prot;
	struct mmp_file *vm_file;	/* the file mapped, NULL for anonymous memory */
	struct mmp_space *vm_mm;	/* the space the VMA belongs to: file rmap walks start here */
	/* The file's i_mmap list, under its i_mmap lock. */
	struct mmp_vma *shared_prev, *shared_next;
	/*
	 * hugetlb, the kernel's vm_private_data: the reserve map of a private
	 * mapping, shared by the pieces of its owner's VMA (NULL in a child
	 * and with MAP_NORESERVE), and HPAGE_RESV_* flags (atomic).
	 */
	struct resv_map *resv_map;
	unsigned int resv_flags;
};

_Static_assert(offsetof(struct mmp_vma, flags) == 64 && offsetof(struct mmp_vma, vm_refcnt) == 128,
	       "the index's fields, the rest, and the lock count: one cache line each");

/* vma_is_anonymous: no file behind it (MAP_SHARED|MAP_ANONYMOUS has a shmem one). */
static __always_inline bool vma_is_anonymous(const struct mmp_vma *vma)
{
	return !vma->vm_file;
}

static __always_inline uint64_t linear_page_index(const struct mmp_vma *vma, uint64_t addr)
{
	return vma->pgoff + ((addr - vma->start) >> MMP_PAGE_SHIFT);
}

/* The VMAs of a space (mm->mm_mt and mm->map_count): see lib/vma_tree.h. */
struct vma_tree {
	struct mmp_vma *root;
	struct mmp_vma *first, *last;	/* ends of the address-ordered list */
	unsigned int nr;
	uint64_t floor;			/* where the gap below the first VMA starts */
	seqcount_t seq;			/* odd while any update is inside */
	unsigned int root_seq;		/* seq in the update that last changed the root link */
};


/* ---- the address space ---- */

#define MMP_MAX_CPUS 64

struct mmp_cpu;		/* a simulated CPU (hw/cpu.h) */

struct mmp_space {
	/* References to the struct itself (mm_count): its users' one, table batches in flight. */
	int mm_count;			/* atomic */
	struct mmp_phys *phys;
	const struct mmp_arch *arch;
	enum mmp_format format;		/* arch->format, one load nearer */
	const struct mmp_copy_ops *copy;
	uint64_t id;
	struct mmp_space *phys_next;

	struct rw_semaphore mmap_lock;	/* writer-preferring, as the kernel's (rwsem.h) */
	mmp_spinlock_t page_table_lock;	/* upper tables and huge PMDs */
	uint32_t pgd_pfn;

	struct vma_tree vmas;
	/* Bumped by every mmap write unlock: ends the VMA write locks of that section. */
	unsigned int mm_lock_seq;	/* atomic */
	uint64_t mmap_base;
	uint64_t start_brk, brk;	/* the heap (lib/brk.c); start_brk 0: none set up */
	/*
	 * Set, never cleared, by the first MADV_GUARD_INSTALL (and inherited by
	 * fork): only then may a PTE table hold markers, so the zap loop asks
	 * about them only then (the kernel pays a pte_present() per entry there;
	 * the simulator's decode cost more than its instruction budget).
	 */
	bool has_pte_markers;
	bool merge_any;		/* PR_SET_MEMORY_MERGE (MMF_VM_MERGE_ANY), inherited by fork */
	/*
	 * PR_SET_THP_DISABLE (enum thp_disable): MMF_DISABLE_THP_COMPLETELY,
	 * or (6.18) MMF_DISABLE_THP_EXCEPT_ADVISED; inherited by fork
	 * (MMF_INIT_MASK). One byte: the fault path tests it once.
	 */
	uint8_t thp_disable;

	/* MM_ANONPAGES as a per-thread counter (the kernel's percpu_counter rss_stat). */
	struct mmp_rss_shard *rss;
	int64_t hugetlb_usage;		/* atomic: pages hugetlb entries map (HugetlbPages), not RSS */
	int64_t hiwater_rss;		/* atomic: VmHWM as last brought up to date (lib/vmstat.h) */
	int64_t nr_pgtables;		/* atomic: tables below the PGD, deposits included */

	mmp_spinlock_t cpus_lock;
	struct mmp_cpu *cpus[MMP_MAX_CPUS];
	uint64_t cpu_mask;		/* atomic: mm_cpumask */

	/*
	 * mm->write_protect_seq: odd while fork write-protects the parent's
	 * entries; GUP-fast does not pin meanwhile (see copy_page_range).
	 */
	seqcount_t write_protect_seq;
	/* mm->tlb_flush_pending and a generation: the sanitizer stays quiet while a flush is due. */
	int64_t tlb_flush_pending;
	uint64_t tlb_pending_gen;
	unsigned int tlb_entries, tlb_ways;
	const char *last_op;		/* the public call that last changed the tables */

	long opts[MMP_NR_OPTS];
	/* The release rules it follows, a bit per enum release_rule (lib/release.h). */
	unsigned int release_rules;
	/* The enum mmp_table_free its release and back end had (MMP_OPT_RCU_TABLE_FREE -1). */
	unsigned int table_free_default;
	/* MMP_OPT_TABLE_BATCH_FAIL: table batch pages tried since it was set (atomic). */
	uint64_t table_batch_tries;
	/* mm->def_flags: what every new VMA gets (VM_LOCKED_MASK after mlockall(MCL_FUTURE)). */
	unsigned long def_flags;
	/*
	 * Set for good at the first mlock, mlockall, MAP_LOCKED or mseal: a VMA
	 * may refuse an advice, which madvise then looks for first.
	 */
	bool madvise_may_refuse;
	/*
	 * Lockless walks with IRQs off (GUP-fast) of threads with no CPU of this
	 * space: as a CPU's irqs_off (hw/cpu.h), a count and a generation.
	 */
	uint64_t irqs_off_nocpu;
	/* IPIs now waiting for a CPU to turn IRQs back on (atomic; tests watch it). */
	unsigned int ipi_waiting;
	long debug[MMP_NR_DEBUG_OPTS];	/* fault injection for tests (debug.h) */
	mmp_debug_hook_fn debug_hook;	/* atomic: debug points for tests (debug.h) */
	void *debug_hook_arg;
	struct mmp_huge_trace *huge_trace;	/* tests: the sub-page order of huge copies */
	/* Bit o: order o is enabled always / in MADV_HUGEPAGE VMAs (the sysfs enabled files). */
	uint32_t thp_orders_always;
	uint32_t thp_orders_madvise;

	struct mmp_counter_shard *counters;

	/* Per-order mTHP events, as the kernel's mthp_stats (lib/mthp_stat.h): atomic. */
	uint64_t mthp_stat[MMP_NR_MTHP_STAT_EVENTS][HPAGE_PMD_ORDER + 1];
};

/* A debug point (debug.h): a test's hook may hold this thread here; else a load and a branch. */
static __always_inline void debug_point(struct mmp_space *s, enum mmp_debug_point point)
{
	mmp_debug_hook_fn fn = __atomic_load_n(&s->debug_hook, __ATOMIC_ACQUIRE);

	if (unlikely(fn))
		fn(s, point, s->debug_hook_arg);
}

/* Does the MMU of @s set accessed and dirty itself, as its back end declares? */
static __always_inline bool space_hw_ad(const struct mmp_space *s)
{
	return s->arch->ad_model == MMP_AD_HARDWARE ||
	       (s->arch->ad_model == MMP_AD_SWITCHABLE && READ_ONCE(s->opts[MMP_OPT_HW_AD]));
}

/* The level of the space's top table, its PGD (levels above are folded into it). */
static __always_inline enum mmp_level pgd_level(const struct mmp_space *s)
{
	return (enum mmp_level)(s->arch->levels - 1);
}

/* TASK_SIZE of this space: user addresses lie in [MMP_MMAP_MIN_ADDR, TASK_SIZE(s)). */
#define TASK_SIZE(s)	((s)->arch->task_size)

/* DEFAULT_MAP_WINDOW: mmap stays below it unless the hint lies above it. */
static __always_inline uint64_t map_window(const struct mmp_space *s)
{
	return s->arch->map_window ? s->arch->map_window : s->arch->task_size;
}

/* End of the PGD entries user space can use: the ceiling of free_pgtables. */
#define USER_TOP(s)	(((s)->arch->task_size + level_size(pgd_level(s)) - 1) & \
			 ~(level_size(pgd_level(s)) - 1))

#endif /* MMP_MM_TYPES_H */
