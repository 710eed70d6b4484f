/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Core structures of the simulated machine: physical frames, address spaces,
 * VMAs, CPUs. Everything here is private to the library.
 */
#ifndef MMP_INTERNAL_H
#define MMP_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h>

#include <mmprim/mmprim.h>

#include "arch.h"
#include "debug.h"
#include "format.h"

#define MMP_EXPORT __attribute__((visibility("default")))

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define MAX(a, b)	((a) > (b) ? (a) : (b))

#define READ_ONCE(x)	 __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* An internal contradiction: stop, naming the invariant. */
#define MMP_BUG_ON(cond)							\
	do {									\
		if (unlikely(cond))						\
			mmp_bug(__FILE__, __LINE__, #cond);			\
	} while (0)
_Noreturn void mmp_bug(const char *file, int line, const char *what);

/* The space follows kernel release a.b.c or later (MMP_OPT_KERNEL_VERSION). */
#define kernel_at_least(s, a, b, c)	\
	(READ_ONCE((s)->opts[MMP_OPT_KERNEL_VERSION]) >= MMP_KERNEL_VERSION(a, b, c))

/* Extensible structures (lib/copy_struct.c). */
int copy_struct_from_caller(void *dst, size_t ksize, const void *src, size_t usize,
			    size_t min_size);
void copy_struct_to_caller(void *dst, size_t usize, const void *src, size_t ksize);

/* The copy variant of @arch called @name that this CPU runs (lib/copy.c). */
int copy_ops_find(const struct mmp_arch *arch, const char *name, const struct mmp_copy_ops **out);

#define PAGE_SHIFT	MMP_PAGE_SHIFT
#define PAGE_SIZE	MMP_PAGE_SIZE
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define PMD_SHIFT	MMP_PMD_SHIFT
#define PMD_SIZE	MMP_PMD_SIZE
#define PMD_MASK	(~(PMD_SIZE - 1))
#define PTRS_PER_TABLE	512
#define HPAGE_PMD_ORDER	MMP_PMD_ORDER
#define HPAGE_PMD_NR	(1u << HPAGE_PMD_ORDER)

static __always_inline unsigned int level_shift(enum mmp_level level)
{
	return PAGE_SHIFT + 9 * level;
}

static __always_inline uint64_t level_size(enum mmp_level level)
{
	return 1ULL << level_shift(level);
}

static __always_inline unsigned int level_index(uint64_t addr, enum mmp_level level)
{
	return (addr >> level_shift(level)) & (PTRS_PER_TABLE - 1);
}

/* End of the @level entry's span that contains @addr, capped at @end (pmd_addr_end & co). */
static __always_inline uint64_t level_addr_end(uint64_t addr, uint64_t end, enum mmp_level level)
{
	uint64_t next = (addr + level_size(level)) & ~(level_size(level) - 1);

	return next - 1 < end - 1 ? next : end;
}

/* ---- spinlock ------------------------------------------------------------ */

typedef struct {
	int v;
} mmp_spinlock_t;

static __always_inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

static __always_inline void spin_lock(mmp_spinlock_t *l)
{
	while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED))
			cpu_relax();
}

static __always_inline bool spin_trylock(mmp_spinlock_t *l)
{
	return !__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE);
}

static __always_inline void spin_unlock(mmp_spinlock_t *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

static __always_inline bool spin_is_locked(mmp_spinlock_t *l)
{
	return __atomic_load_n(&l->v, __ATOMIC_RELAXED);
}

/* Full barrier: a store before it is visible before any load after it. */
#define smp_mb()	__atomic_thread_fence(__ATOMIC_SEQ_CST)

/* ---- sequence counter ------------------------------------------------------ */

/* seqcount_t: odd while a writer is inside; writers are serialized by a lock of theirs. */
typedef struct {
	unsigned int sequence;
} seqcount_t;

static __always_inline void raw_write_seqcount_begin(seqcount_t *s)
{
	__atomic_store_n(&s->sequence, s->sequence + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);	/* smp_wmb: odd before the section's stores */
}

static __always_inline void raw_write_seqcount_end(seqcount_t *s)
{
	/* smp_wmb, then even: the section's stores before the count says it is over. */
	__atomic_store_n(&s->sequence, s->sequence + 1, __ATOMIC_RELEASE);
}

/* Start a read section unless a writer is inside: false (and no section) when it is odd. */
static __always_inline bool raw_seqcount_try_begin(const seqcount_t *s, unsigned int *start)
{
	*start = __atomic_load_n(&s->sequence, __ATOMIC_ACQUIRE);
	return !(*start & 1);
}

/* Did a writer enter since @start? Then what was read may be stale. */
static __always_inline bool read_seqcount_retry(const seqcount_t *s, unsigned int start)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* smp_rmb: the section's loads first */
	return __atomic_load_n(&s->sequence, __ATOMIC_RELAXED) != start;
}

/* ---- physical frames (lib/phys.c) ----------------------------------------- */

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
		} tail;
		struct {	/* page-table page */
			mmp_spinlock_t ptl;
			uint32_t deposit;	/* PMD table: first deposited PTE table;
						   deposited table: the next one; NO_PFN ends */
		} pt;
	};
	/* Anonymous folio head: the reverse map (folio->mapping and folio->index)... */
	uint32_t anon_vma;	/* id of the anon_vma the folio was faulted in */
	/* ...and the references GUP pinned (folio->_pincount), part of refcount. */
	int32_t pincount;
	uint64_t index;		/* linear page index of its first page */
};

_Static_assert(sizeof(struct mmp_page) == 40, "keep the memmap small");

struct mmp_space;

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
};

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

/* ---- counters (lib/counters.c) ---------------------------------------------- */

/*
 * Counters are sharded per host thread so the hot paths never share a cache
 * line; a reader sums the shards. Threads past the shard count share the last
 * shard with atomic adds.
 */
#define MMP_COUNTER_SHARDS 32

struct mmp_counter_shard {
	uint64_t v[MMP_NR_COUNTERS];
} __attribute__((aligned(64)));

struct mmp_rss_shard {
	int64_t anon;
} __attribute__((aligned(64)));

extern __thread int mmp_thread_shard __attribute__((tls_model("initial-exec")));
/* The same shard as a byte offset into a space's counters, UINT32_MAX while unassigned. */
extern __thread uint32_t mmp_thread_counter_off __attribute__((tls_model("initial-exec")));
int mmp_thread_shard_slow(void);

static __always_inline int counter_shard(void)
{
	int s = mmp_thread_shard;

	return likely(s >= 0) ? s : mmp_thread_shard_slow();
}

/* ---- VMAs (lib/vma.c) ------------------------------------------------------- */

#define VM_READ		0x1ul
#define VM_WRITE	0x2ul
#define VM_EXEC		0x4ul
#define VM_ACCESS_FLAGS	(VM_READ | VM_WRITE | VM_EXEC)
#define VM_GROWSDOWN	0x00000100ul	/* a stack (MAP_GROWSDOWN): faults below it grow it */
#define VM_ACCOUNT	0x00100000ul	/* private writable memory charged to overcommit */
#define VM_HUGEPAGE	0x20000000ul
#define VM_NOHUGEPAGE	0x40000000ul
#define VM_DROPPABLE	0x80000000ul	/* reclaim drops it even when dirty */
#define VM_WIPEONFORK	0x02000000ul	/* a child gets the range empty */

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
	uint64_t start, end;		/* change under the tree's seqcount (vma_tree_set_range) */
	struct mmp_vma *rb_left, *rb_right, *rb_parent;
	uint64_t rb_gap;		/* vma_gap(), kept here so updates read no neighbour */
	uint64_t rb_subtree_gap;	/* the largest rb_gap in this subtree */
	int rb_height;

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
};

_Static_assert(offsetof(struct mmp_vma, flags) == 64 && offsetof(struct mmp_vma, vm_refcnt) == 128,
	       "the index's fields, the rest, and the lock count: one cache line each");

/* The VMAs of a space (mm->mm_mt and mm->map_count): see lib/vma_tree.h. */
struct vma_tree {
	struct mmp_vma *root;
	struct mmp_vma *first, *last;	/* ends of the address-ordered list */
	unsigned int nr;
	uint64_t floor;			/* where the gap below the first VMA starts */
	seqcount_t seq;			/* odd while the tree or a VMA's range changes */
};

static __always_inline uint64_t linear_page_index(const struct mmp_vma *vma, uint64_t addr)
{
	return vma->pgoff + ((addr - vma->start) >> MMP_PAGE_SHIFT);
}

/* ---- address space ------------------------------------------------------------- */

#define MMP_MAX_CPUS 64

struct mmp_cpu;		/* a simulated CPU (lib/cpu.h) */

struct mmp_space {
	/* References to the struct itself (mm_count): its users' one, table batches in flight. */
	int mm_count;			/* atomic */
	struct mmp_phys *phys;
	const struct mmp_arch *arch;
	enum mmp_format format;		/* arch->format, one load nearer */
	const struct mmp_copy_ops *copy;
	uint64_t id;
	struct mmp_space *phys_next;

	pthread_rwlock_t mmap_lock;
	mmp_spinlock_t page_table_lock;	/* upper tables and huge PMDs */
	uint32_t pgd_pfn;

	struct vma_tree vmas;
	/* Bumped by every mmap write unlock: ends the VMA write locks of that section. */
	unsigned int mm_lock_seq;	/* atomic */
	uint64_t mmap_base;
	uint64_t start_brk, brk;	/* the heap (lib/brk.c); start_brk 0: none set up */

	/* MM_ANONPAGES as a per-thread counter (the kernel's percpu_counter rss_stat). */
	struct mmp_rss_shard *rss;
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
	long debug[MMP_NR_DEBUG_OPTS];	/* fault injection for tests (debug.h) */
	/* Bit o: order o is enabled always / in MADV_HUGEPAGE VMAs (the sysfs enabled files). */
	uint32_t thp_orders_always;
	uint32_t thp_orders_madvise;

	struct mmp_counter_shard *counters;
};

void count_add_slow(struct mmp_space *s, enum mmp_counter c, uint64_t n);

static __always_inline void count_add(struct mmp_space *s, enum mmp_counter c, uint64_t n)
{
	/* Unassigned (UINT32_MAX) and the shared shard fail the test: the slow path. */
	uint32_t off = mmp_thread_counter_off;
	uint64_t *v;

	if (unlikely(off >= (MMP_COUNTER_SHARDS - 1) * sizeof(struct mmp_counter_shard))) {
		count_add_slow(s, c, n);
		return;
	}
	/*
	 * Only this thread writes its shard, so a plain add suffices, as the
	 * kernel's this_cpu_add() on a per-CPU counter: the compiler may keep a
	 * count in a register within a call and add to memory in one
	 * instruction. A reader on another thread (relaxed loads, summing the
	 * shards) may see a count late, never torn: the slot is an aligned
	 * 64-bit word.
	 */
	v = &((struct mmp_counter_shard *)((char *)s->counters + off))->v[c];
	*v += n;
}

/* This thread's count of @c so far: the difference around a call is what the call did. */
static __always_inline uint64_t count_this_thread(struct mmp_space *s, enum mmp_counter c)
{
	int shard = counter_shard();

	return __atomic_load_n(&s->counters[MIN(shard, MMP_COUNTER_SHARDS - 1)].v[c],
			       __ATOMIC_RELAXED);
}

static __always_inline void count_inc(struct mmp_space *s, enum mmp_counter c)
{
	count_add(s, c, 1);
}

/* @n more of two counters that move together (a ptep_get is a PTE read): one shard lookup. */
static __always_inline void count_add2(struct mmp_space *s, enum mmp_counter a,
					enum mmp_counter b, uint64_t n)
{
	uint32_t off = mmp_thread_counter_off;
	uint64_t *v;

	if (unlikely(off >= (MMP_COUNTER_SHARDS - 1) * sizeof(struct mmp_counter_shard))) {
		count_add_slow(s, a, n);
		count_add_slow(s, b, n);
		return;
	}
	v = ((struct mmp_counter_shard *)((char *)s->counters + off))->v;
	v[a] += n;
	v[b] += n;
}

static __always_inline void *space_table(struct mmp_space *s, uint64_t pfn)
{
	return pfn_to_virt(s->phys, pfn);
}

/* ---- geometry: from the back end, never assumed ---------------------------------------- */

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

/* ---- entry helpers over the arch format ---------------------------------------------- */

/* MMP_E_* flags of @e (0 for pte_none: every format decodes 0 as none). */
static __always_inline unsigned int entry_flags(const struct mmp_space *s, mmp_pte_t e,
						enum mmp_level l)
{
	return format_entry_flags(s->format, e, l);
}

/* entry_flags(s, e, l) & @mask, computing only the bits of @mask. */
static __always_inline unsigned int entry_test(const struct mmp_space *s, mmp_pte_t e,
					       enum mmp_level l, unsigned int mask)
{
	return format_entry_test(s->format, e, l, mask);
}

static __always_inline uint64_t entry_pfn(const struct mmp_space *s, mmp_pte_t e, enum mmp_level l)
{
	return format_entry_pfn(s->format, e, l);
}

static __always_inline mmp_pte_t mk_entry(const struct mmp_space *s, uint64_t pfn,
					  unsigned int f, enum mmp_level l)
{
	return format_mk_entry(s->format, pfn, f, l);
}

/* Present leaf PTEs in raw form: attributes cleared, the pfn advanced (folio_pte_batch). */
static __always_inline mmp_pte_t pte_clear_flags(const struct mmp_space *s, mmp_pte_t e,
						 unsigned int eflags)
{
	return format_pte_clear_flags(s->format, e, eflags);
}

static __always_inline mmp_pte_t pte_advance_pfn(const struct mmp_space *s, mmp_pte_t e,
						 uint64_t nr)
{
	return format_pte_advance_pfn(s->format, e, nr);
}

/* Rewrite the flags of entry @e (pte_modify, pte_mkold, pte_wrprotect, ...). */
static __always_inline mmp_pte_t entry_set_flags(const struct mmp_space *s, mmp_pte_t e,
						 enum mmp_level l, unsigned int set,
						 unsigned int clear)
{
	unsigned int f = format_entry_flags(s->format, e, l);

	return format_mk_entry(s->format, format_entry_pfn(s->format, e, l), (f | set) & ~clear, l);
}

static __always_inline mmp_spinlock_t *pte_lockptr(struct mmp_space *s, mmp_pte_t *pte_table)
{
	uint64_t pfn = ((uint8_t *)pte_table - s->phys->base) >> PAGE_SHIFT;

	return &pfn_to_page(s->phys, pfn)->pt.ptl;
}

/* ---- folios ------------------------------------------------------------------------ */

/* The pfn of the folio head that @pfn belongs to (compound_head). */
static __always_inline uint64_t folio_pfn(struct mmp_phys *phys, uint64_t pfn)
{
	struct mmp_page *p = pfn_to_page(phys, pfn);

	return unlikely(p->flags & PG_tail) ? p->tail.head : pfn;
}

static __always_inline unsigned int folio_nr_pages(struct mmp_page *head)
{
	return 1u << head->order;
}


#endif /* MMP_INTERNAL_H */
