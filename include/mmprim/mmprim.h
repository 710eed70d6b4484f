/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmmprim: architecture-specific memory-management primitives over a
 * simulated address space.
 *
 * Every call returns 0 (or a non-negative value where documented) on success
 * and a negative errno on failure. No input corrupts a space: after any error
 * mmp_space_verify() still passes.
 *
 * Extensible structures. The structures that cross the library boundary
 * (struct mmp_space_config, mmp_counters, mmp_phys_stat, mmp_space_stat, and
 * those of mmprim/introspect.h) only
 * ever grow, at their end. Each call that takes one exists in a _sized form
 * that is told the caller's sizeof, as clone3() and openat2() are, and in a
 * static inline form without the suffix that passes it for you. So a program
 * built against an older header keeps working with a newer library, and the
 * other way round:
 *  - output: the library fills min(caller's size, its own) bytes and zeroes
 *    the rest of the caller's structure (fields it does not know read 0);
 *  - input: fields beyond the caller's size take their defaults; nonzero bytes
 *    beyond what the library knows are -E2BIG (copy_struct_from_user()).
 * A size below the first published version of the structure is -EINVAL.
 * Enumerations (options, counters) only gain values at their end.
 */
#ifndef MMPRIM_MMPRIM_H
#define MMPRIM_MMPRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mmprim/counters.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MMP_PAGE_SHIFT		12
#define MMP_PAGE_SIZE		(1UL << MMP_PAGE_SHIFT)
#define MMP_PMD_SHIFT		21
#define MMP_PMD_SIZE		(1UL << MMP_PMD_SHIFT)
/* Highest folio order a space maps (PMD size); the buddy allocator goes to 10. */
#define MMP_PMD_ORDER		(MMP_PMD_SHIFT - MMP_PAGE_SHIFT)
#define MMP_MAX_ORDER		10
/*
 * User addresses of a space are [MMP_MMAP_MIN_ADDR, its task size), which its
 * back end sets (mmp_space_task_size(): 256 GiB for riscv64-sv39, 128 TiB for
 * x86_64). MMP_TASK_SIZE is the largest over all back ends (five levels, 56 user bits):
 * no address at or above it is user space anywhere.
 */
#define MMP_TASK_SIZE		(1ULL << 56)
#define MMP_MMAP_MIN_ADDR	0x10000ULL

struct mmp_phys;
struct mmp_space;
struct mmp_cpu;

/* ---- simulated physical memory ---------------------------------------- */

/**
 * mmp_phys_create() - reserve @bytes of simulated physical memory.
 * @bytes: size, a multiple of 4 MiB (one MAX_ORDER block), at least 4 MiB.
 * @out: the new phys.
 *
 * The host memory is reserved lazily (MAP_NORESERVE) and touched on use.
 * Returns 0, -EINVAL on a bad size, -ENOMEM if the host refuses.
 */
int mmp_phys_create(size_t bytes, struct mmp_phys **out);

/**
 * mmp_phys_destroy() - release a phys. -EBUSY while spaces or files still use it, or
 * while pages stay pinned (mmp_gup(), mmp_gup_fast()) that nobody unpinned:
 * mmp_phys_unpin() them first.
 */
int mmp_phys_destroy(struct mmp_phys *phys);

struct mmp_phys_stat {
	uint64_t total_pages;
	uint64_t free_pages;
	uint64_t free_blocks[MMP_MAX_ORDER + 1]; /* free buddy blocks per order */
};

/**
 * mmp_phys_stat() - frame usage of @phys, settled: it first waits for page
 * tables still in an RCU grace period (rcu_barrier) and gives the per-CPU page
 * lists back to the buddy allocator.
 */
int mmp_phys_stat_sized(struct mmp_phys *phys, struct mmp_phys_stat *st, size_t size);

static inline int mmp_phys_stat(struct mmp_phys *phys, struct mmp_phys_stat *st)
{
	return mmp_phys_stat_sized(phys, st, sizeof(*st));
}

/* ---- address spaces ---------------------------------------------------- */

/** mmp_arch_count() - the number of registered architecture back ends. */
int mmp_arch_count(void);

/**
 * mmp_arch_name() - the name of back end @index (0 .. mmp_arch_count() - 1),
 * in registration order, "generic" last; NULL out of
 * range. A space is created on a back end by this name (mmp_space_config).
 */
const char *mmp_arch_name(int index);

struct mmp_space_config {
	const char *arch;	   /* back end name; NULL = mmp_arch_name(0), "x86_64" */
	unsigned int tlb_entries;  /* per-CPU TLB entries; 0 = 1536 */
	unsigned int tlb_ways;	   /* associativity; 0 = 12 (entries/ways must be a power of 2) */
	bool tlb_sanitizer;	   /* check every TLB hit against the live tables */
	uint8_t reserved[7];	   /* zero: room for new fields with no padding to guess at */
	/* Since libmmprim.so.1.1: */
	const char *copy;	   /* copy/clear variant (mmp_space_set_copy()); NULL = the first usable */
};

/**
 * mmp_space_create_sized() - a new, empty address space on @phys.
 * @cfg: NULL for defaults, or @size bytes of configuration (see "Extensible
 *       structures" above; at least the 24 bytes of the first version).
 * Unknown arch or copy variant: -ENOENT; a variant this CPU cannot run:
 * -ENOTSUP. Bad TLB geometry or nonzero reserved bytes: -EINVAL.
 * Nonzero bytes beyond the configuration this library knows: -E2BIG.
 */
int mmp_space_create_sized(struct mmp_phys *phys, const struct mmp_space_config *cfg,
			   size_t size, struct mmp_space **out);

static inline int mmp_space_create(struct mmp_phys *phys, const struct mmp_space_config *cfg,
				   struct mmp_space **out)
{
	return mmp_space_create_sized(phys, cfg, cfg ? sizeof(*cfg) : 0, out);
}

/**
 * mmp_space_destroy() - tear down (exit_mmap); -EBUSY while CPUs are attached.
 * Never waits for an RCU grace period, as the kernel's exit does not: page
 * tables still in one reach the allocator when it ends (mmp_phys_destroy()
 * waits for them). Pages the space pinned stay allocated, as a pinned page
 * outlives its process in the kernel: drop those pins with mmp_phys_unpin(),
 * since @space is gone.
 */
int mmp_space_destroy(struct mmp_space *space);

/** mmp_space_arch() - the back end name of @space. */
const char *mmp_space_arch(const struct mmp_space *space);

/**
 * mmp_space_task_size() - the end of @space's user addresses (TASK_SIZE), as
 * its back end's page-table geometry sets it: mappings, accesses and GUP stop
 * below it. Returns 0, or -EINVAL for a NULL argument.
 */
int mmp_space_task_size(const struct mmp_space *space, uint64_t *out);

/**
 * mmp_fork() - duplicate @parent into a new space sharing its anonymous folios
 * copy-on-write (PTE and PMD mapped), as dup_mmap() does. A page pinned in
 * @parent stays the parent's: the child gets a copy of it. mmp_gup_fast() on
 * @parent while the fork runs pins nothing (mm->write_protect_seq).
 */
int mmp_fork(struct mmp_space *parent, struct mmp_space **child);

/**
 * mmp_space_verify() - check every invariant of @space and of every other space
 * sharing its phys: VMAs, page tables, folio reference and map counts, leaked
 * tables and frames, counters. Returns 0 or -EUCLEAN and prints what is broken.
 * Other threads may fault and change mappings meanwhile, but not pin or unpin
 * (mmp_gup*, mmp_unpin, mmp_phys_unpin change counts without the locks verify
 * holds): a verify racing with those can report a false error.
 * It does not wait for RCU grace periods: page tables unmapped but still in
 * theirs are accounted as in flight to the allocator (mmp_phys_stat() waits).
 */
int mmp_space_verify(struct mmp_space *space);

/*
 * Optimization and model switches, one binary running "before" and "after".
 * The numbers are part of the ABI: new switches are added at the end, and an
 * older library answers one it does not know with -EINVAL.
 */
enum mmp_opt {
	/* Hardware model: TLB sanitizer (see mmp_space_config). 0 or 1. */
	MMP_OPT_TLB_SANITIZER = 0,
	/* Huge-page copy / clear sub-page order: enum mmp_huge_order. */
	MMP_OPT_HUGE_ORDER = 1,
	/*
	 * Batch PTEs of a large folio (folio_pte_batch) in zap (munmap,
	 * MADV_DONTNEED, exit), fork, mprotect (from 6.17, as the release
	 * table says), reclaim's unmap of a lazyfree folio, and mremap where
	 * the format has contiguous blocks. MADV_FREE
	 * batches regardless, as the kernel. Default 1. docs/counters.md has
	 * every switch's coverage, tested both ways.
	 */
	MMP_OPT_PTE_BATCH = 2,
	/* arm64: the CPU has BBML2_NOABORT, so contpte_convert skips its middle TLBI. */
	MMP_OPT_BBML2_NOABORT = 3,
	/*
	 * How unlinked page tables reach the allocator: enum mmp_table_free. -1,
	 * the default, follows the release and the back end: MMP_TABLE_FREE_RCU
	 * on x86_64 from 6.14 and everywhere from 7.0; before, semi RCU, and on
	 * x86_64 the bare-metal MMP_TABLE_FREE_NATIVE. mmp_space_get_opt() reads
	 * what it comes to.
	 */
	MMP_OPT_RCU_TABLE_FREE = 4,
	/*
	 * MADV_DONTNEED frees PTE tables it empties (PT_RECLAIM). 0 or 1; -1,
	 * the default, follows the release and the back end: x86_64 from 6.14,
	 * every back end from 7.0 (so with MMP_KERNEL_MODELED, 6.18, on x86_64
	 * only). mmp_space_get_opt() reads what it comes to, 0 or 1.
	 */
	MMP_OPT_PT_RECLAIM = 5,
	/* Reclaim decides a PMD-mapped lazyfree THP on the PMD (1, default), or splits it first. */
	MMP_OPT_LAZYFREE_PMD = 6,
	/*
	 * The MMU sets accessed/dirty itself (1, default: x86, arm64 FEAT_HAFDBS,
	 * riscv Svadu), or faults so the kernel sets them (0: riscv Svade). Back
	 * ends without the choice ignore it.
	 */
	MMP_OPT_HW_AD = 7,
	/*
	 * Sub-pages neighbourhood-last copies or clears last around the target;
	 * 0 (default): from the host's L2 size, L2 / 16 KiB (see enum mmp_huge_order).
	 */
	MMP_OPT_HUGE_NEIGHBOURHOOD = 8,
	/*
	 * The kernel release whose behaviour a space follows where it changed
	 * between releases, as MMP_KERNEL_VERSION(a, b, c): a release from
	 * MMP_KERNEL_OLDEST (6.12) to MMP_KERNEL_NEWEST (7.1), any patch level;
	 * default MMP_KERNEL_MODELED. What changes with it is the release table
	 * (mmprim/release.h, mmp_release_rule(), and the README); setting it
	 * also moves the defaults of the switches the table says it drives,
	 * unless they were set by hand.
	 */
	MMP_OPT_KERNEL_VERSION = 9,
	/*
	 * A fault first locks just its VMA, found under RCU (1, default: the
	 * kernel's CONFIG_PER_VMA_LOCK), and takes the mmap read lock only when
	 * that fails; 0: every fault takes the mmap read lock.
	 */
	MMP_OPT_PER_VMA_LOCK = 10,
	/*
	 * The order folio_zero_user clears a huge folio in (enum
	 * mmp_huge_order); -1, the default, follows the release: the copy order
	 * (MMP_OPT_HUGE_ORDER) before 7.0, MMP_HUGE_ORDER_SEQUENTIAL from 7.0.
	 * mmp_space_get_opt() reads what it comes to.
	 */
	MMP_OPT_HUGE_CLEAR_ORDER = 11,
	/*
	 * mprotect's change_pte_range takes a branch of its own for a PTE
	 * mapping a small folio instead of the large-folio batch loop (Pedro
	 * Falcato's fix of the 6.17 4K regression). 0 or 1; -1, the default,
	 * follows the release (7.1). mmp_space_get_opt() reads what it comes to.
	 */
	MMP_OPT_MPROTECT_SMALL_FOLIO = 12,
	/*
	 * The kernel forbids the zero page to this mm (mm_forbids_zeropage():
	 * s390 KVM guests with storage keys, hosts booted without a zero page
	 * for user memory): a read fault on anonymous memory allocates and maps
	 * a folio as a write fault does (writable and dirty where the VMA may
	 * be written), and no huge zero page either. 0 (default) or 1; a forked
	 * space inherits it. Since libmmprim.so.1.4.
	 */
	MMP_OPT_FORBID_ZEROPAGE = 13,
	/*
	 * The kernel tracks soft-dirty (CONFIG_MEM_SOFT_DIRTY, off in the
	 * kernel's defaults): a new VMA is VM_SOFTDIRTY (smaps "sd"), pagemap
	 * reports bit 55 for its pages, a write fault marks its PTE soft-dirty
	 * and mremap marks the entries it moves. 0 (default) or 1; back ends
	 * whose format has no soft-dirty bit (arm64, riscv64, loongarch64)
	 * track VMAs only. Since libmmprim.so.1.4.
	 */
	MMP_OPT_SOFT_DIRTY = 14,
	/*
	 * The page of a table batch cannot be allocated (the kernel's
	 * GFP_NOWAIT page in tlb_remove_table): 0 never (default), 1 always, N
	 * every Nth try of the space, counted from when this is set. A table
	 * that finds no batch takes the single-table path of the
	 * MMP_OPT_RCU_TABLE_FREE mode. Since libmmprim.so.1.4.
	 */
	MMP_OPT_TABLE_BATCH_FAIL = 15,
	/*
	 * The process has CAP_SYS_RAWIO (root): a fixed mapping (mmp_mmap,
	 * mmp_mremap with MMP_MREMAP_FIXED) may lie below MMP_MMAP_MIN_ADDR,
	 * address 0 included, as cap_mmap_addr lets it. 0 (default) or 1; a
	 * forked space inherits it; clearing it while a VMA lies down there is
	 * -EBUSY. Since libmmprim.so.1.4.
	 */
	MMP_OPT_CAP_SYS_RAWIO = 16,
	/*
	 * RLIMIT_MEMLOCK in bytes: -1 (default) none, as for a process with
	 * CAP_IPC_LOCK or an unlimited limit; else mmp_mlock() and
	 * mmp_mlock2() past it (what the space has locked, less what of the
	 * range already is, plus the range) are -ENOMEM, mmp_mlockall() with
	 * MMP_MCL_CURRENT past it (every mapped byte) -ENOMEM, a locked
	 * mmp_mmap() or mmp_mremap() growth past it -EAGAIN, and a locked
	 * mmp_brk() stays where it is; with 0 every lock is -EPERM
	 * (can_do_mlock). Unlocking is never refused. A forked space inherits
	 * it. Since libmmprim.so.1.5.
	 */
	MMP_OPT_RLIMIT_MEMLOCK = 17,
	/*
	 * The read_ahead_kb of the device under every file (its bdi's
	 * ra_pages, a quarter of it in 4 KiB pages): how much a file fault
	 * that misses the page cache reads around it, or from it with
	 * MADV_SEQUENTIAL; 128 (the kernel's default) unless set. Reading
	 * stops at the end of the file. Since libmmprim.so.1.5.
	 */
	MMP_OPT_READ_AHEAD_KB = 18,
	/* The switches this header knows; the library may know more. */
	MMP_NR_OPTS
};

/*
 * MMP_OPT_RCU_TABLE_FREE: how a page table unlinked by munmap, exit or
 * MADV_DONTNEED (PT_RECLAIM) is freed once the TLB is flushed. Lockless
 * walkers may still be reading it: GUP-fast with IRQs off, pte_offset_map()
 * users inside rcu_read_lock(). Since libmmprim.so.1.4 (before: 0 and 1 only).
 */
enum mmp_table_free {
	/*
	 * Each table after a synchronize_rcu() of its own. A worst case no
	 * kernel had, kept to show what a grace period costs.
	 */
	MMP_TABLE_FREE_SYNC_EACH,
	/*
	 * RCU (Qi Zheng, "x86: mm: free page table pages by RCU instead of semi
	 * RCU", 6.14): tables batched to call_rcu; a table that finds no batch
	 * page (MMP_OPT_TABLE_BATCH_FAIL) goes by call_rcu on its own.
	 */
	MMP_TABLE_FREE_RCU,
	/*
	 * Semi RCU (MMU_GATHER_RCU_TABLE_FREE before that patch: arm64,
	 * riscv64, x86 guests with paravirt TLB flushes): batches to call_rcu;
	 * a table that finds no batch page is freed at once after an IPI to
	 * every other CPU, which waits for GUP-fast's IRQs-off walks only.
	 */
	MMP_TABLE_FREE_SEMI_RCU,
	/*
	 * x86 on bare metal before 6.14 (native_tlb_remove_table): tables go
	 * with the pages and are freed right after the TLB shootdown, whose
	 * IPIs wait for GUP-fast. -EINVAL on back ends whose TLB invalidations
	 * are broadcast (arm64): nothing would wait for the walkers.
	 */
	MMP_TABLE_FREE_NATIVE,
	MMP_NR_TABLE_FREE
};

#define MMP_KERNEL_VERSION(a, b, c)	(((a) << 16) | ((b) << 8) | (c))
/*
 * The release a space models unless told otherwise: Linux 6.18, the newest
 * release the host oracle checks (mmprim/release.h has the others).
 */
#define MMP_KERNEL_MODELED		MMP_KERNEL_VERSION(6, 18, 0)

/*
 * The order in which a huge folio's sub-pages are cleared (first-touch fault)
 * or copied (COW fault): MMP_OPT_HUGE_ORDER. "Target" is the sub-page the
 * fault is about; user space touches it first when the fault returns. Folios
 * of more than 1 << MMP_MAX_ORDER pages are always done in ascending order.
 * A COW of a THP copies no huge folio since Linux 5.8: it splits the PMD and
 * copies one page, so the copy order applies to whole huge pages (hugetlb).
 */
enum mmp_huge_order {
	MMP_HUGE_ORDER_ASCENDING,	/* base line: sub-page 0 to N-1 */
	/*
	 * Huang Ying's process_huge_page (clear 2017, copy 2018): the sub-pages
	 * farthest from the target first, then converging on it from both
	 * sides, one at a time; the target last, so it is cache hot. A target
	 * near the start means a descending sweep. The default.
	 */
	MMP_HUGE_ORDER_TARGET_LAST,
	/*
	 * Ascending runs only, so hardware prefetch keeps up: the sub-pages
	 * right of the target's neighbourhood, then those left of it, then the
	 * neighbourhood (MMP_OPT_HUGE_NEIGHBOURHOOD sub-pages, a quarter of them
	 * below the target) from above the target and last up to the target.
	 * With a non-temporal copy variant ("-nt") only the neighbourhood goes
	 * through the caches, so the rest does not evict the working set.
	 */
	MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST,
	/*
	 * 7.0's folio_zero_user (Ankur Arora, "clear pages sequentially" and
	 * "cache neighbouring pages"): ascending runs, each one clear_pages
	 * call: right of the target's neighbourhood (the target and two
	 * sub-pages each side), then left of it, then the neighbourhood. What
	 * MMP_OPT_HUGE_CLEAR_ORDER comes to from 7.0. Since libmmprim.so.1.3.
	 */
	MMP_HUGE_ORDER_SEQUENTIAL,
	MMP_NR_HUGE_ORDERS
};

/** mmp_huge_order_name() - "ascending", "target-last", "neighbourhood-last"; NULL if unknown. */
const char *mmp_huge_order_name(int order);

/**
 * mmp_space_set_opt() - set switch @opt of @space to @value (see enum mmp_opt
 * for each switch's values). It takes effect at the next operation; one
 * already running finishes as it started. -EINVAL: NULL @space, unknown @opt,
 * or a value out of the switch's range.
 */
int mmp_space_set_opt(struct mmp_space *space, enum mmp_opt opt, long value);

/** mmp_space_get_opt() - read switch @opt of @space into @value; -EINVAL as above. */
int mmp_space_get_opt(struct mmp_space *space, enum mmp_opt opt, long *value);

/* Per-size THP policy, like /sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled. */
enum mmp_thp_mode {
	MMP_THP_NEVER,
	MMP_THP_MADVISE,	/* only in MADV_HUGEPAGE VMAs */
	MMP_THP_ALWAYS,
};

/**
 * mmp_space_set_thp() - enable anonymous folios of @order (2..9) in @space.
 * Order 9 is PMD mapped; 2..8 are PTE mapped (mTHP). The default is order 9 in
 * madvise mode and the others never, as on a stock Debian kernel.
 */
int mmp_space_set_thp(struct mmp_space *space, unsigned int order, enum mmp_thp_mode mode);

/*
 * Host data movement. Page copies and clears run host code; the variants are
 * those of the host the library was built for (x86-64: "rep-movsb", "avx512",
 * "avx512-nt", "avx2", "avx2-nt", "clzero"; aarch64: "dc-zva", "ldp-stp",
 * "neon", "stnp"; every host: "generic", memcpy/memset), whatever architecture
 * a space simulates. A new space takes the first one this CPU can run.
 */

/** mmp_copy_variant_count() - variants built for this host, including any this CPU lacks. */
int mmp_copy_variant_count(void);

/** mmp_copy_variant_name() - name of variant @index (0 is preferred), NULL out of range. */
const char *mmp_copy_variant_name(int index);

/**
 * mmp_space_set_copy() - copy and clear pages of @space with variant @name.
 * Returns 0, -EINVAL (NULL), -ENOENT (no such variant), -ENOTSUP (this CPU
 * cannot run it). Faults already copying finish with the old variant.
 */
int mmp_space_set_copy(struct mmp_space *space, const char *name);

/** mmp_space_copy() - the name of @space's copy variant. */
const char *mmp_space_copy(const struct mmp_space *space);

/**
 * mmp_page_address() - the host memory holding frame @pfn (page_address()),
 * e.g. of a page pinned with mmp_gup(), for tools that measure the host caches.
 * NULL when @pfn is not a frame of @phys. Valid while the frame stays pinned.
 */
void *mmp_page_address(struct mmp_phys *phys, uint64_t pfn);

/**
 * mmp_modeled_ns_sized() - what the events in @c (@size bytes of counters, see
 * "Extensible structures"; counters beyond it count as 0) would cost on the
 * hardware of @space's architecture, from its documented cost table (entry
 * accesses, TLB invalidations, barriers, IPIs, walks), in nanoseconds.
 */
int mmp_modeled_ns_sized(struct mmp_space *space, const struct mmp_counters *c, size_t size,
			 double *ns);

static inline int mmp_modeled_ns(struct mmp_space *space, const struct mmp_counters *c,
				 double *ns)
{
	return mmp_modeled_ns_sized(space, c, sizeof(*c), ns);
}

/**
 * mmp_space_counters_sized() - the sum of @space's counters (mmprim/counters.h)
 * into @size bytes at @out. -EINVAL: NULL pointers, @size below 8.
 */
int mmp_space_counters_sized(struct mmp_space *space, struct mmp_counters *out, size_t size);

static inline int mmp_space_counters(struct mmp_space *space, struct mmp_counters *out)
{
	return mmp_space_counters_sized(space, out, sizeof(*out));
}

/** mmp_space_reset_counters() - set every counter of @space to 0; -EINVAL for NULL. */
int mmp_space_reset_counters(struct mmp_space *space);

struct mmp_space_stat {
	uint64_t nr_vmas;
	uint64_t rss_anon_pages;	/* MM_ANONPAGES */
	uint64_t pgtable_bytes;		/* VmPTE: page tables below the top level, deposits included */
	/* Since libmmprim.so.1.2: */
	uint64_t rss_file_pages;	/* MM_FILEPAGES: RssFile */
	uint64_t rss_shmem_pages;	/* MM_SHMEMPAGES: RssShmem */
	/* Since libmmprim.so.1.4: */
	uint64_t hugetlb_pages;		/* HugetlbPages: hugetlb memory mapped, in 4 KiB pages (not RSS) */
	/* Since libmmprim.so.1.5: */
	uint64_t hiwater_rss_pages;	/* VmHWM: the peak RSS (mmp_space_clear_refs() 5 resets it) */
	uint64_t locked_bytes;		/* VmLck: the size of the mlock'd (VM_LOCKED) VMAs */
};

/**
 * mmp_space_stat_sized() - the size of @space now: VMAs, resident anonymous
 * pages, page-table bytes (as /proc/PID/status's VmPTE), into @size bytes at
 * @st. -EINVAL: NULL pointers, @size below 8.
 */
int mmp_space_stat_sized(struct mmp_space *space, struct mmp_space_stat *st, size_t size);

static inline int mmp_space_stat(struct mmp_space *space, struct mmp_space_stat *st)
{
	return mmp_space_stat_sized(space, st, sizeof(*st));
}

/* ---- mappings ----------------------------------------------------------- */

#define MMP_PROT_NONE		0x0
#define MMP_PROT_READ		0x1
#define MMP_PROT_WRITE		0x2
#define MMP_PROT_EXEC		0x4
/* mmp_mprotect() only: from the start of a MMP_MAP_GROWSDOWN mapping (GROWSUP: none grows up). */
#define MMP_PROT_GROWSDOWN	0x01000000
#define MMP_PROT_GROWSUP	0x02000000

/*
 * mmp_mmap() maps anonymous memory, private unless MMP_MAP_SHARED (a shmem
 * object of its own, shared with children); mmp_mmap_file() maps a file
 * and needs one of the two.
 */
#define MMP_MAP_SHARED		0x01
#define MMP_MAP_PRIVATE		0x02
#define MMP_MAP_FIXED		0x10
#define MMP_MAP_POPULATE	0x8000
#define MMP_MAP_FIXED_NOREPLACE	0x100000
#define MMP_MAP_DROPPABLE	0x08	/* reclaim may drop its pages even when dirty */
#define MMP_MAP_GROWSDOWN	0x0100	/* a stack: a fault just below grows it down */
/* Since libmmprim.so.1.4: */
#define MMP_MAP_NORESERVE	0x4000	/* no reservation: hugetlb pages, or the commit charge */
#define MMP_MAP_HUGETLB		0x40000	/* huge pages from the phys's pool (mmprim/hugetlb.h) */
#define MMP_MAP_LOCKED		0x2000	/* mlock'd from the start (VM_LOCKED), populated */
/* MAP_HUGE_*: with MMP_MAP_HUGETLB, log2 of the page size in these bits; 0 is 2 MiB. */
#define MMP_MAP_HUGE_SHIFT	26
#define MMP_MAP_HUGE_MASK	0x3f
#define MMP_MAP_HUGE_2MB	(21 << MMP_MAP_HUGE_SHIFT)
#define MMP_MAP_HUGE_1GB	(30 << MMP_MAP_HUGE_SHIFT)

/**
 * mmp_mmap() - map @len bytes of anonymous memory (MMP_MAP_PRIVATE, or
 * nothing, is private; MMP_MAP_SHARED is shared with the space's children,
 * shmem_zero_setup).
 * @hint: preferred address (used if free) or, with MMP_MAP_FIXED*, the address.
 * @addr_out: where the mapping landed.
 *
 * Errors as mmap(2): -EINVAL (len 0, unaligned fixed address, unknown flags or
 * prot), -ENOMEM (no room, beyond the task size, too many VMAs), -EEXIST
 * (MMP_MAP_FIXED_NOREPLACE over a mapping), -EPERM (a fixed address below
 * MMP_MMAP_MIN_ADDR, mmap_min_addr's 64 KiB, unless MMP_OPT_CAP_SYS_RAWIO
 * says the process is privileged; or MMP_MAP_FIXED over a sealed mapping,
 * mmp_mseal()). MMP_MAP_LOCKED locks the mapping as mmp_mlock() would
 * (VM_LOCKED) and populates it. MMP_MAP_POPULATE faults the range in
 * for writing; like the kernel, a populate that runs out of memory does not fail
 * the mmap. MMP_MAP_GROWSDOWN makes a stack: an access just below it grows it
 * (up to 8 MiB, RLIMIT_STACK's default), and other mappings are placed no
 * nearer below it than the 256-page stack guard gap.
 *
 * MMP_MAP_HUGETLB (private or shared) maps huge pages of the size in the
 * MMP_MAP_HUGE_* bits (0: 2 MiB; 16: 64 KiB, 25: 32 MiB and 30: 1 GiB where
 * mmp_hugetlb_sizes() lists them) from the phys's pool (mmprim/hugetlb.h), as
 * an anonymous hugetlbfs file: @len is rounded up to the page size, a fixed
 * address must be aligned to it, and the mapping reserves its pages
 * (hugetlb_reserve_pages: a private one all of them, a shared one those its
 * file lacks), or fails with -ENOMEM when the pool cannot promise them;
 * MMP_MAP_NORESERVE skips that, and a fault that then finds no page is -EIO
 * (SIGBUS). A size the pool or the back end lacks, MMP_MAP_GROWSDOWN or
 * MMP_MAP_DROPPABLE with it: -EINVAL. Without MMP_MAP_HUGETLB the MMP_MAP_HUGE_*
 * bits are ignored, as mmap(2) ignores them, and MMP_MAP_NORESERVE leaves
 * private writable memory uncharged (no VM_ACCOUNT). Hugetlb mappings
 * never merge with their neighbours; munmap, mprotect and the madvise calls
 * that split them need huge-page aligned boundaries (-EINVAL), and their pages
 * count in HugetlbPages (mmp_space_stat()), not in RSS.
 */
int mmp_mmap(struct mmp_space *space, uint64_t hint, uint64_t len, int prot, int flags,
	     uint64_t *addr_out);

/**
 * mmp_munmap() - as munmap(2): -EINVAL for unaligned @addr, len 0 or out of
 * range, or an end or start inside a huge page of a hugetlb mapping.
 */
int mmp_munmap(struct mmp_space *space, uint64_t addr, uint64_t len);

/**
 * mmp_mprotect() - as mprotect(2): -EINVAL (unaligned, bad prot, both
 * MMP_PROT_GROWS* or one the first VMA does not grow by, a boundary inside a
 * hugetlb page), -ENOMEM (hole).
 * MMP_PROT_GROWSDOWN extends the range down to the start of a
 * MMP_MAP_GROWSDOWN mapping.
 */
int mmp_mprotect(struct mmp_space *space, uint64_t addr, uint64_t len, int prot);

/**
 * mmp_brk_init() - place the heap of @space at @start_brk, as exec does once
 * it has loaded a binary (mm->start_brk = mm->brk, the page after its bss or a
 * randomized address above it). A new space has no heap; mmp_fork() children
 * inherit their parent's.
 * Returns 0, -EINVAL (NULL, @start_brk not page aligned or outside
 * [MMP_MMAP_MIN_ADDR, MMP_TASK_SIZE)), -EBUSY (the heap has grown already: its
 * start can no longer move).
 */
int mmp_brk_init(struct mmp_space *space, uint64_t start_brk);

/**
 * mmp_brk() - brk(2): move the program break of @space to @brk.
 * @brk_out: what brk(2) returns: the break after the call, @brk on success and
 *	the unchanged break on failure. The break keeps the exact byte address;
 *	the heap mapping covers it rounded up to a page.
 *
 * Growing maps the new pages (read and write, extending the heap's VMA) when
 * they are free and stay one page clear of the next mapping; shrinking unmaps
 * the pages above the new break. @brk 0 reads the break (brk(NULL)) and
 * returns 0. Otherwise returns 0 when the break is now @brk, or why not:
 *  -EINVAL: NULL argument, no heap (mmp_brk_init()), @brk below start_brk;
 *  -ENOMEM: growing would pass MMP_TASK_SIZE, come within a page of another
 *           mapping or pass max_map_count; shrinking found nothing mapped
 *           above the new break, or would need one VMA too many.
 * RLIMIT_DATA is not modelled (unlimited).
 */
int mmp_brk(struct mmp_space *space, uint64_t brk, uint64_t *brk_out);

#define MMP_MREMAP_MAYMOVE	1
#define MMP_MREMAP_FIXED	2
#define MMP_MREMAP_DONTUNMAP	4

/**
 * mmp_mremap() - as mremap(2) on a private anonymous mapping: shrink, grow in
 * place, or move (MMP_MREMAP_MAYMOVE) with the page tables; MMP_MREMAP_FIXED
 * moves to @new_addr, replacing what is there; MMP_MREMAP_DONTUNMAP leaves the
 * old range mapped and empty. @new_addr_out gets the result.
 * Errors: -EINVAL (unaligned, bad flags, zero new length, overlapping fixed
 * ranges), -EFAULT (old range not inside one VMA), -ENOMEM (cannot grow in
 * place without MAYMOVE, no room, out of memory). A hugetlb mapping rounds
 * both lengths up to its page size and only shrinks or moves: an address or
 * destination not aligned to it, growth and MMP_MREMAP_DONTUNMAP are
 * -EINVAL (6.18's rules).
 */
int mmp_mremap(struct mmp_space *space, uint64_t addr, uint64_t old_len, uint64_t new_len,
	       int flags, uint64_t new_addr, uint64_t *new_addr_out);

#define MMP_MADV_DONTNEED	4
#define MMP_MADV_FREE		8	/* lazyfree: reclaim may drop the pages unless rewritten */
#define MMP_MADV_PAGEOUT	21	/* reclaim the range now */
#define MMP_MADV_HUGEPAGE	14
#define MMP_MADV_NOHUGEPAGE	15
/* Since libmmprim.so.1.2: */
#define MMP_MADV_WILLNEED	3	/* read a file range into the page cache; nothing for anon */
#define MMP_MADV_COLD		20	/* age the range: accessed bits cleared */
#define MMP_MADV_POPULATE_READ	22	/* fault the range in as reads */
#define MMP_MADV_POPULATE_WRITE	23	/* fault the range in as writes (breaking COW) */
#define MMP_MADV_DONTNEED_LOCKED 24	/* MADV_DONTNEED; locked memory is not modelled */
/*
 * Since 1.3: MADV_COLLAPSE, synchronous khugepaged collapse. Each 2 MiB
 * aligned range wholly inside the advised range and one anonymous VMA
 * becomes one PMD-mapped THP, whatever mmp_space_set_thp() says (only
 * MADV_NOHUGEPAGE refuses): pages copied, none and zero-page entries
 * zeroed (RSS grows by them), shared (forked) and read-only pages too.
 * 0 when every such range is PMD-mapped afterwards (one already was counts);
 * else the last failure: -EINVAL (a VMA that cannot hold an aligned 2 MiB,
 * MADV_NOHUGEPAGE, a range with no page table, a regular file), -EAGAIN (a
 * page with a reference its mappings do not explain: a GUP pin, reclaim),
 * -ENOMEM (no THP to be had, or a hole, reported last). Shared memory and
 * other shmem mappings are not modelled: -ENOTSUP (a 6.18 host collapses
 * their page cache).
 */
#define MMP_MADV_COLLAPSE	25
/* Guard regions (Linux 6.13; MMP_OPT_KERNEL_VERSION below it: -EINVAL): */
#define MMP_MADV_GUARD_INSTALL	102	/* guard region: any access faults (SIGSEGV, -EFAULT) */
#define MMP_MADV_GUARD_REMOVE	103	/* clear guard markers; pages are left alone */
/*
 * Since 1.5, the advices that change VMA flags (split and merged as for
 * MADV_HUGEPAGE; a split past max_map_count is -EAGAIN, as madvise turns a
 * split's -ENOMEM into it):
 */
#define MMP_MADV_NORMAL		0	/* no read pattern: clears VM_SEQ_READ and VM_RAND_READ */
#define MMP_MADV_RANDOM		1	/* rr: a file fault reads only its page in */
#define MMP_MADV_SEQUENTIAL	2	/* sr: a file fault reads ahead from its page */
#define MMP_MADV_DONTFORK	10	/* dc: mmp_fork() leaves the range out of the child */
#define MMP_MADV_DOFORK		11	/* undo MADV_DONTFORK */
/*
 * KSM (mg): eligible VMAs (not shared, hugetlb or droppable; others are passed
 * by with 0) are marked VM_MERGEABLE; pages are never merged here.
 */
#define MMP_MADV_MERGEABLE	12
#define MMP_MADV_UNMERGEABLE	13
/* Private anonymous memory only (-EINVAL); a droppable mapping cannot keep (-EINVAL). */
#define MMP_MADV_WIPEONFORK	18	/* wf: the child gets the range empty */
#define MMP_MADV_KEEPONFORK	19	/* undo MADV_WIPEONFORK */
/*
 * MADV_REMOVE punches a hole in the file behind a shared mapping (shmem,
 * memfd, shared anonymous, regular files): the pages go from the page cache
 * and every mapping, private copies excepted, and read as zeroes again.
 * -EINVAL for anonymous private memory, -EACCES for a private file mapping
 * (or one not writable), -EOPNOTSUPP for hugetlb (not modelled).
 */
#define MMP_MADV_REMOVE		9
/* Memory-failure injection: -EPERM, as for a process without CAP_SYS_ADMIN. */
#define MMP_MADV_HWPOISON	100
#define MMP_MADV_SOFT_OFFLINE	101

/**
 * mmp_madvise() - as madvise(2): -EINVAL (unaligned, bad advice), -ENOMEM (hole).
 * MADV_FREE and MADV_PAGEOUT act on folios this mm maps alone; with no swap
 * device (the model), MADV_PAGEOUT frees clean lazyfree folios and keeps the
 * others resident (activated). MADV_COLD clears the accessed bits of the
 * folios this mm maps alone (no LRU to deactivate them on). The populate
 * advices stop at the first hole with -ENOMEM (what came before is
 * populated), say -EINVAL for a mapping that does not allow the access and
 * -EFAULT where it would fault with SIGBUS; the others act on the mapped
 * parts, then report a hole.
 *
 * MADV_GUARD_INSTALL zaps whatever is mapped in the range (a THP is split or
 * zapped) and puts a guard marker in every PTE: an access, a GUP or a
 * populate there is -EFAULT (SIGSEGV). The markers stay through
 * MADV_DONTNEED, MADV_FREE, mprotect and truncation, move with mremap, are
 * copied by fork (before 6.19 the VMA gets an anon_vma for it, from 6.19 the
 * sticky flag VM_MAYBE_GUARD, MMP_VMA_MAYBE_GUARD) and go with munmap.
 * MADV_GUARD_REMOVE clears the markers only. Both need
 * MMP_OPT_KERNEL_VERSION 6.13 or later (-EINVAL before); before 6.15 only
 * private anonymous memory takes them (-EINVAL for files and shared memory).
 * mmp_space_pagemap() reports a marker as MMP_PM_GUARD_REGION.
 *
 * hugetlb mappings (6.18's rules): MADV_DONTNEED and _DONTNEED_LOCKED zap
 * whole huge pages, their part of the range starting on one (-EINVAL) and
 * rounded down at its end; MADV_FREE, _COLD, _PAGEOUT, _COLLAPSE and the
 * guard advices are -EINVAL; MADV_WILLNEED does nothing; the populate
 * advices fault huge pages in; mmp_reclaim() passes them by.
 */
int mmp_madvise(struct mmp_space *space, uint64_t addr, uint64_t len, int advice);

/**
 * mmp_space_set_memory_merge() - prctl(PR_SET_MEMORY_MERGE, @on): with @on
 * non-zero every eligible VMA of @space (see MMP_MADV_MERGEABLE), and every
 * one mapped from now on, is VM_MERGEABLE without being split; with @on 0
 * every VMA loses VM_MERGEABLE, MADV_MERGEABLE's too. A forked space
 * inherits the setting. Returns 0, -EINVAL for a NULL @space. Since 1.5.
 */
int mmp_space_set_memory_merge(struct mmp_space *space, int on);

/* mmp_space_set_thp_disable()'s flag: PR_THP_DISABLE_EXCEPT_ADVISED (Linux 6.18). */
#define MMP_THP_DISABLE_EXCEPT_ADVISED	(1u << 1)

/**
 * mmp_space_set_thp_disable() - prctl(PR_SET_THP_DISABLE, @disable, @flags):
 * with @disable non-zero no THP or mTHP of any order is faulted in, collapsed
 * or allocated for shmem in any VMA of @space, as VM_NOHUGEPAGE would do to
 * each (folios already there stay); with MMP_THP_DISABLE_EXCEPT_ADVISED in
 * @flags, MADV_HUGEPAGE VMAs and MMP_MADV_COLLAPSE are left out of it. With
 * @disable 0 the process's THP follows the policy again (mmp_space_set_thp).
 * A forked space inherits the setting. Returns 0, -EINVAL for a NULL @space,
 * an unknown flag, a flag with @disable 0, or any flag when the space models
 * a release before Linux 6.18. Since 1.5.
 */
int mmp_space_set_thp_disable(struct mmp_space *space, int disable, unsigned int flags);

/**
 * mmp_space_get_thp_disable() - prctl(PR_GET_THP_DISABLE) into @out: 0, 1
 * (disabled completely), or 1 | MMP_THP_DISABLE_EXCEPT_ADVISED. Returns 0,
 * -EINVAL for NULL pointers. Since 1.5.
 */
int mmp_space_get_thp_disable(struct mmp_space *space, unsigned int *out);

/**
 * mmp_space_clear_refs() - write @type to /proc/PID/clear_refs: 1 makes
 * every mapped page old (accessed bits cleared: smaps Referenced 0), 2 only
 * anonymous VMAs' and 3 only file VMAs' pages; 4 clears soft-dirty (with
 * MMP_OPT_SOFT_DIRTY on a back end that has the bit; else nothing): every
 * VMA loses VM_SOFTDIRTY and every entry its soft-dirty bit and its write
 * permission, so the next write faults and marks the page soft-dirty again
 * (pagemap bit 55); an anonymous page with a GUP pin keeps its entry as it
 * is. 5 resets VmHWM (hiwater_rss_pages) to the RSS now. hugetlb VMAs are
 * passed by. Returns 0, -EINVAL for a NULL @space or another @type.
 * Since 1.5.
 */
int mmp_space_clear_refs(struct mmp_space *space, int type);

/* One range of mmp_process_madvise() (struct iovec). */
struct mmp_iovec {
	uint64_t base;
	uint64_t len;
};

#define MMP_UIO_MAXIOV	1024	/* UIO_MAXIOV: the most ranges one call takes */

/**
 * mmp_process_madvise() - as process_madvise(2) of the calling process on
 * itself: @advice over each of the @vlen ranges of @vec in turn, stopping at
 * the first that fails. Returns the bytes of the ranges done (their lengths
 * as given, the total capped at MAX_RW_COUNT as import_iovec does) when any
 * was, else that range's mmp_madvise() error; -EINVAL for @flags other than
 * 0, more than MMP_UIO_MAXIOV ranges, a NULL @vec with ranges, a length past
 * LONG_MAX, or an advice madvise refuses; before 6.13 (the release table)
 * also for any advice but MADV_COLD, _PAGEOUT, _WILLNEED and _COLLAPSE. For
 * MADV_DONTNEED and MADV_FREE the vector takes the mmap lock once from 6.15
 * (from 6.17 a range inside one VMA takes that VMA's lock instead, until
 * one cannot, from which the mmap lock is held to the end) and one
 * mmu_gather from 6.16: one TLB flush a call where the back end
 * merges VMAs (x86, loongarch), one per range (and per VMA within one) where
 * it does not (arm64, riscv64, the reference); before 6.16, one per range.
 */
long mmp_process_madvise(struct mmp_space *space, const struct mmp_iovec *vec, unsigned int vlen,
			 int advice, unsigned int flags);

/**
 * mmp_reclaim() - reclaim every anonymous folio of @space now, shared ones
 * included: lazyfree folios that stayed clean are unmapped from every space
 * that maps them (through the reverse map) and freed; the rest stay.
 */
int mmp_reclaim(struct mmp_space *space);

/* ---- sealing and locking ------------------------------------------------ */

/**
 * mmp_mseal() - seal [@addr, @addr + @len) as mseal(2) (Linux 6.10, 64-bit):
 * from then on its mappings may not be unmapped, moved, resized, replaced by
 * a fixed mapping or given another protection (-EPERM), nor discarded where
 * the process could not write them itself: MADV_DONTNEED, _DONTNEED_LOCKED,
 * _FREE, _REMOVE, _DONTFORK, _WIPEONFORK and _GUARD_INSTALL are -EPERM on
 * private anonymous memory without write permission. A seal lasts as long
 * as the mapping and goes with it into a forked child. @flags must be 0
 * (-EINVAL), @addr page aligned (-EINVAL), @len is rounded up to pages
 * (-EINVAL when that or the range wraps) and the range must be mapped from
 * end to end (-ENOMEM), all checked before anything is sealed. Sealed
 * mappings merge only with sealed neighbours; smaps shows "sl"
 * (MMP_VMA_SEALED). Since libmmprim.so.1.4.
 */
int mmp_mseal(struct mmp_space *space, uint64_t addr, uint64_t len, unsigned long flags);

#define MMP_MLOCK_ONFAULT	0x01	/* mmp_mlock2(): lock pages as they fault in */
#define MMP_MCL_CURRENT		1	/* mmp_mlockall(): every mapping now */
#define MMP_MCL_FUTURE		2	/* and every mapping made from now on */
#define MMP_MCL_ONFAULT		4	/* as they fault in, with either */

/**
 * mmp_mlock() - lock the pages of [@addr, @addr + @len) (rounded out to
 * pages) in memory as mlock(2): the mappings become VM_LOCKED
 * (MMP_VMA_LOCKED, smaps "lo" and Locked:, VmLck in mmp_space_stat) and are
 * populated, writable private ones for writing (breaking COW), so reclaim
 * and MADV_PAGEOUT/_COLD/_FREE leave them alone (those advices and
 * MADV_DONTNEED are -EINVAL on them; MADV_DONTNEED_LOCKED discards). Errors:
 * -EINVAL when the range wraps, -ENOMEM for a hole (what lies before it
 * stays locked), -EAGAIN when populating runs out of memory. hugetlb and
 * MAP_DROPPABLE mappings are passed by, as the kernel does. RLIMIT_MEMLOCK is
 * MMP_OPT_RLIMIT_MEMLOCK (-ENOMEM past it, -EPERM at 0), none by default, as
 * for a process with CAP_IPC_LOCK. A forked child's mappings are unlocked.
 * Since libmmprim.so.1.4 (as the other calls of this section).
 */
int mmp_mlock(struct mmp_space *space, uint64_t addr, uint64_t len);

/**
 * mmp_mlock2() - mmp_mlock(), or with MMP_MLOCK_ONFAULT lock without
 * populating (VM_LOCKONFAULT, smaps "lf", MMP_VMA_LOCKONFAULT): what is
 * mapped and what later faults in stays. Other @flags: -EINVAL.
 */
int mmp_mlock2(struct mmp_space *space, uint64_t addr, uint64_t len, unsigned int flags);

/** mmp_munlock() - unlock the range as munlock(2); errors as mmp_mlock() but -EAGAIN. */
int mmp_munlock(struct mmp_space *space, uint64_t addr, uint64_t len);

/**
 * mmp_mlockall() - mlockall(2): MMP_MCL_CURRENT locks (and populates, unless
 * MMP_MCL_ONFAULT) every mapping, MMP_MCL_FUTURE every mapping made from now
 * on (mmp_mmap, mmp_brk: populated as they are made, unless MMP_MCL_ONFAULT).
 * -EINVAL: no flags, unknown ones, or MMP_MCL_ONFAULT alone. Not inherited by
 * a forked child.
 */
int mmp_mlockall(struct mmp_space *space, int flags);

/** mmp_munlockall() - unlock every mapping and stop MMP_MCL_FUTURE, as munlockall(2). */
int mmp_munlockall(struct mmp_space *space);

/* ---- simulated CPUs ----------------------------------------------------- */

/**
 * mmp_cpu_attach() - a new simulated CPU running @space on the calling thread.
 * It has its own TLB. Only the attaching thread may use it. At most 64 CPUs per
 * space (-EBUSY beyond).
 */
int mmp_cpu_attach(struct mmp_space *space, struct mmp_cpu **out);

/**
 * mmp_cpu_detach() - detach and free the CPU; only from the thread that
 * attached it (-EINVAL otherwise), which then stops being an RCU reader.
 */
int mmp_cpu_detach(struct mmp_cpu *cpu);

/**
 * mmp_read(), mmp_write(), mmp_memset() - user accesses through the CPU's MMU.
 * TLB misses walk the tables and set accessed/dirty as the architecture's
 * hardware does; page faults are handled and the access retried. -EFAULT where
 * the process would get SIGSEGV (nothing is copied beyond the faulting page),
 * -ENOMEM when a fault cannot get memory.
 */
int mmp_read(struct mmp_cpu *cpu, uint64_t addr, void *buf, size_t len);
int mmp_write(struct mmp_cpu *cpu, uint64_t addr, const void *buf, size_t len);
int mmp_memset(struct mmp_cpu *cpu, uint64_t addr, int c, size_t len);

/**
 * mmp_cpu_flush_tlb() - drop every translation of this CPU's TLB, as a context
 * switch without ASIDs would. -EINVAL for NULL.
 */
int mmp_cpu_flush_tlb(struct mmp_cpu *cpu);

/* ---- get_user_pages ------------------------------------------------------- */

/**
 * mmp_gup_fast() - pin the pages of [addr, addr + nr * 4 KiB) without any
 * lock, as GUP-fast: walk the tables inside an RCU read-side section, take a
 * folio reference speculatively and recheck the entry, backing off on a race.
 * Stops at the first page it cannot pin that way (not present, read-only for
 * @write, a page shared copy-on-write or the zero page for a read pin, a
 * race). @pfns gets the frames pinned. While mmp_fork() of @space runs, it
 * pins nothing: 0, even for pages it had pinned already (it gives them back),
 * as the kernel's gup_fast returns 0 and its caller takes the locked path.
 * A short count is not an error: mmp_gup() the rest.
 * Returns how many were pinned (0..nr), or
 *  -EINVAL: @space or @pfns NULL, @addr not page aligned, @nr above INT_MAX;
 *  -EFAULT: the range reaches beyond the task size.
 */
int mmp_gup_fast(struct mmp_space *space, uint64_t addr, unsigned int nr, bool write,
		 uint64_t *pfns);

/**
 * mmp_gup() - pin all @nr pages, faulting in what is missing (with the mmap
 * lock, as pin_user_pages without FOLL_LONGTERM); a write pin breaks
 * copy-on-write, a read pin unshares an anonymous page shared with another
 * process, so the pin and the mapping stay the same page. A read pin of a page
 * never written gets the shared zero page (its pfn), holding no pin on it, as
 * the kernel never pins the zero page (since Linux 6.5). Races with other
 * threads are retried inside. All or nothing: returns @nr, or (nothing pinned)
 *  -EINVAL: as mmp_gup_fast();
 *  -EFAULT: the range reaches beyond the task size, or a page has no VMA or no
 *           permission (write for @write, read or write otherwise);
 *  -ENOMEM: no memory to fault a page in;
 *  -ENOTSUP: a page of a file, shared or hugetlb mapping (their pins are not modelled;
 *           mmp_gup_fast() pins none of them either).
 */
int mmp_gup(struct mmp_space *space, uint64_t addr, unsigned int nr, bool write, uint64_t *pfns);

/**
 * mmp_unpin() - drop the pins mmp_gup_fast() or mmp_gup() took on @pfns, in
 * any space of the same phys as @space (a folio the last pin frees is counted
 * in @space). The zero page is skipped: it was handed out unpinned. All or
 * nothing: -EINVAL for a NULL @space, NULL @pfns with @nr, or a frame that
 * holds no pin (nothing is unpinned then).
 */
int mmp_unpin(struct mmp_space *space, const uint64_t *pfns, unsigned int nr);

/**
 * mmp_phys_unpin() - as mmp_unpin(), with no space: unpin_user_pages() needs
 * no mm, and a pin outlives the space it was taken in (mmp_space_destroy()).
 * Errors as mmp_unpin(), -EINVAL for a NULL @phys.
 */
int mmp_phys_unpin(struct mmp_phys *phys, const uint64_t *pfns, unsigned int nr);

/**
 * mmp_strerror() - the errno name of a return value of this library ("EINVAL"
 * for -EINVAL; "success" for 0 and positive counts; "unknown error" else).
 */
const char *mmp_strerror(int err);

#ifdef __cplusplus
}
#endif

/* Files, their page cache and mappings of them (since libmmprim.so.1.2). */
#include <mmprim/file.h>
/* Looking inside a space: entries, folios, smaps, pagemap, mTHP stats (since libmmprim.so.1.2). */
#include <mmprim/introspect.h>
#include <mmprim/release.h>
/* hugetlb pools (since libmmprim.so.1.4). */
#include <mmprim/hugetlb.h>

#endif /* MMPRIM_MMPRIM_H */
