/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kdiff: differential testing of libmmprim against the host kernel.
 *
 * A sequence of operations (mmap, munmap, mprotect, mremap, madvise, reads,
 * writes, fork, ...) runs inside a reserved window of addresses, both in host
 * processes (agents, one per simulated process, driven over sockets) and in
 * simulated spaces of several back ends and switch settings ("variants").
 * After each operation every return value, every byte read and the layout and
 * protection of every VMA in the window must agree.
 */
#ifndef MMP_KDIFF_H
#define MMP_KDIFF_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Under AddressSanitizer the agent's own memory moves with its every call
 * (shadow pages, the allocator's quarantine): its status lines and faults are
 * not the window's alone, and are not compared. smaps and pagemap, which are
 * the window's, are.
 */
#if defined(__SANITIZE_ADDRESS__)
#define KD_SANITIZED	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KD_SANITIZED	1
#endif
#endif
#ifndef KD_SANITIZED
#define KD_SANITIZED	0
#endif

#define KD_PAGE		4096ULL
#define KD_PMD_SIZE	(512 * KD_PAGE)	/* what a PTE table maps, with 4 KiB pages */
/*
 * The window: free on the host and far below any mmap base. At 192 GiB every
 * back end takes part, three-level ones (256 and 512 GiB of user space)
 * included. AddressSanitizer's shadow and its gap hold x86_64's addresses
 * from 2 GiB to 16 TiB: sanitized, the window moves above them, and the
 * three-level back ends are left out.
 */
#define KD_WIN_BASE	(KD_SANITIZED ? 0x300000000000ULL : 0x3000000000ULL)
#define KD_WIN_SIZE	(64ULL << 20)
#define KD_WIN_END	(KD_WIN_BASE + KD_WIN_SIZE)
#define KD_NPAGES	(KD_WIN_SIZE / KD_PAGE)
#define KD_MAX_PROCS	4
#define KD_MAX_VARIANTS	16
#define KD_MAX_IO	(256ULL << 10)	/* bytes one read or write op moves */
#define KD_MAX_VMAS	1024
/* Files every process can map: 0 and 1 on tmpfs (shmem), 2 a regular file. */
#define KD_MAX_FILES	3
#define KD_FILE_MAX	(8ULL << 20)	/* sizes and offsets stay below */

enum kd_kind {
	KD_MMAP,	/* addr, len, prot, flags (MMP_MAP_*) */
	KD_MUNMAP,	/* addr, len */
	KD_MPROTECT,	/* addr, len, prot */
	KD_MREMAP,	/* addr, len (old), len2 (new), flags (MMP_MREMAP_*), addr2 */
	KD_MADVISE,	/* addr, len, advice in flags */
	KD_READ,	/* addr, len */
	KD_WRITE,	/* addr, len, data from seed */
	KD_FORK,	/* proc forks into proc2 */
	KD_EXIT,	/* proc exits */
	KD_RECLAIM,	/* library only: mmp_reclaim (the host under memory pressure) */
	KD_SETOPT,	/* library only: variant v sets switch flags to value len */
	KD_PIN,		/* GUP pin of len pages at addr (for writing: flags); the host populates them */
	KD_UNPIN,	/* library only: drop the oldest pin of proc */
	KD_CHECK,	/* read every page of the window and compare */
	KD_MMAP_FILE,	/* addr, len, prot, flags (MMP_MAP_*), file proc2, offset addr2 */
	KD_FTRUNCATE,	/* file proc2 to size len */
	KD_FWRITE,	/* pwrite to file proc2 at offset addr, len bytes from seed */
	KD_FREAD,	/* pread of file proc2 at offset addr, len bytes */
	KD_MSYNC,	/* addr, len, flags (MMP_MS_*) */
	KD_MLOCK,	/* addr, len; flags: 0 mlock, 1 mlock2(MLOCK_ONFAULT), 2 munlock */
	KD_MSEAL,	/* addr, len, flags (0, or not: EINVAL) */
	KD_THP_DISABLE,	/* prctl(PR_SET_THP_DISABLE, flags & 1, flags & ~1) */
	KD_NR_KINDS
};

/* What an access to a page found: readable, or the signal it raised. */
enum kd_page { KD_PAGE_OK, KD_PAGE_SEGV, KD_PAGE_BUS };

/* Is file @i shmem (tmpfs) on the host and in the library? */
static inline bool kd_file_shmem(int i)
{
	return i < 2;
}

/* Where the host's regular (not shmem) files live: $TMPDIR, else /var/tmp. */
const char *kd_regular_files_dir(void);

/* The host path of file @i of this test process (its files live as long as the host does). */
void kd_file_path(int i, char *buf, size_t size);

struct kd_op {
	uint8_t kind;
	uint8_t proc, proc2, variant;
	int32_t prot;
	int32_t flags;
	uint32_t seed;
	uint64_t addr, len, len2, addr2;
};

/* One VMA as /proc/self/maps shows it (prot: MMP_PROT_* bits). */
struct kd_vma {
	uint64_t start, end;
	int prot;
};

/* The bytes from @addr to the end of its page, at most @left. */
static inline uint64_t kd_chunk(uint64_t addr, uint64_t left)
{
	uint64_t n = KD_PAGE - (addr & (KD_PAGE - 1));

	return n < left ? n : left;
}

/* How many pages [addr, addr + len) touches: one status each in a read. */
static inline uint64_t kd_pages_touched(uint64_t addr, uint64_t len)
{
	return len ? ((addr + len - 1) / KD_PAGE) - addr / KD_PAGE + 1 : 0;
}

/* ---- the kernel's view of a process (state.c) ---- */


/*
 * The THP events compared (view.c): six of /proc/vmstat, then four stats
 * files of each mTHP size below the PMD's.
 */
#define KD_NR_VMSTAT_EVENTS	6
#define KD_NR_MTHP_EVENTS	4
#define KD_MTHP_ORDER_MIN	2
#define KD_NR_THP_EVENTS	(KD_NR_VMSTAT_EVENTS + KD_NR_MTHP_EVENTS * (9 - KD_MTHP_ORDER_MIN))

/* One VMA of the window as /proc/PID/smaps shows it: sizes in kB. */
struct kd_smaps {
	uint64_t start, end;
	uint64_t rss, pss, pss_dirty, shared_clean, shared_dirty, private_clean, private_dirty;
	uint64_t anonymous, lazyfree, anon_huge, shmem_pmd, file_pmd, shared_hugetlb, private_hugetlb;
	uint64_t swap, locked;
	int64_t thp_eligible;
	char vmflags[96];	/* the mnemonics both sides know, in the kernel's order */
};

/* The smaps fields compared, by name: the kernel's spelling and where each goes. */
struct kd_smaps_field {
	const char *name;
	size_t off;
};
extern const struct kd_smaps_field kd_smaps_fields[];
extern const unsigned int kd_nr_smaps_fields;

/* The lines of /proc/PID/status compared, in kB. */
struct kd_status {
	uint64_t rss_anon, rss_file, rss_shmem, vm_pte, hugetlb;
};

/* What the kernel shows of one process: its window's VMAs and pages, and its status. */
struct kd_state {
	struct kd_status status;
	int nvmas;
	struct kd_smaps vmas[KD_MAX_VMAS];
	uint64_t pagemap[KD_NPAGES];	/* the window's words, flags only (bits 55-63) */
};

/* The pagemap bits compared: soft-dirty, exclusive, guard, file/shared, swap, present. */
#define KD_PM_FLAGS	((1ULL << 55) | (1ULL << 56) | (1ULL << 58) | (1ULL << 61) | \
			 (1ULL << 62) | (1ULL << 63))

/* Parse smaps text (the window's VMAs only) into @st->vmas; returns how many, or -1. */
int kd_parse_smaps(FILE *f, struct kd_state *st);
/* Parse /proc/PID/status text into @st; 0, or -1 when a line is missing. */
int kd_parse_status(FILE *f, struct kd_status *st);

/* ---- host agents (agent.c) ---- */

struct kd_host;

/* Start the spawner; call before anything else makes threads. NULL on error. */
struct kd_host *kd_host_start(void);
void kd_host_stop(struct kd_host *h);
/* A fresh process with an empty window, as proc @slot. */
int kd_host_spawn(struct kd_host *h, int slot);
/* Fork proc @slot into @child_slot. */
int kd_host_fork(struct kd_host *h, int slot, int child_slot);
int kd_host_exit(struct kd_host *h, int slot);
/* Run a system call of @op in proc op->proc; returns the result or -errno. */
int64_t kd_host_syscall(struct kd_host *h, const struct kd_op *op);
/* Every host call returns this when the agent died. */
#define KD_AGENT_DIED	(-EPIPE)
/*
 * Read [addr, addr + len) page by page: @st[i] says what the i-th page
 * touched gave (enum kd_page), @buf gets its bytes. Returns 0, or KD_AGENT_DIED.
 */
int kd_host_read(struct kd_host *h, int slot, uint64_t addr, uint64_t len, uint8_t *buf,
		 uint8_t *st);
/* pread(2) of file @file in proc @slot: bytes read or -errno. */
int64_t kd_host_fread(struct kd_host *h, int slot, int file, uint64_t off, uint64_t len,
		      uint8_t *buf);
/* Write page by page up to the first page that faults: 0, -EFAULT (SIGSEGV) or -EIO (SIGBUS). */
int kd_host_write(struct kd_host *h, int slot, uint64_t addr, uint64_t len, const uint8_t *buf);
/* Fault @npages pages in as a pin would (writing a byte back if @write): npages or -EFAULT. */
int kd_host_touch(struct kd_host *h, int slot, uint64_t addr, uint64_t npages, bool write);
/* The VMAs inside the window; returns how many, or KD_AGENT_DIED. */
int kd_host_maps(struct kd_host *h, int slot, struct kd_vma *v, int max);
/* What the kernel shows of proc @slot now: 0, or KD_AGENT_DIED, or -errno. */
int kd_host_state(struct kd_host *h, int slot, struct kd_state *st);
/*
 * The page faults (the agent's min_flt) of proc @slot's system calls, reads,
 * writes and touches since the last call: the window's alone, as the agent's
 * own memory is faulted in and locked.
 */
uint64_t kd_host_take_faults(struct kd_host *h, int slot);

/* ---- what kind of Linux the host is (probe.c) ---- */

#define KD_THP_INHERIT	3	/* an mTHP size that follows the PMD mode */

struct kd_host_config {
	bool forbids_zeropage;	/* a read fault allocates: no zero page (mm_forbids_zeropage) */
	bool no_huge_zero_page;	/* a read fault in a THP range maps a THP */
	bool soft_dirty;	/* CONFIG_MEM_SOFT_DIRTY: a new VMA is VM_SOFTDIRTY ("sd") */
	bool maybe_guard;	/* guard install sets VM_MAYBE_GUARD (6.19, some 6.18.y) */
	bool pt_reclaim;	/* MADV_DONTNEED frees the PTE table it empties */
	bool damon;		/* a kdamond ages pages */
	bool kpageflags;	/* /proc/kpageflags is readable */
	int thp_pmd_mode;	/* MMP_THP_*, -1 unknown */
	int mthp_mode[10];	/* per order 2..9: MMP_THP_*, KD_THP_INHERIT, -1 absent */
	unsigned long mmap_min_addr;
	long read_ahead_kb;	/* of the device under the regular files; -1 unknown */
};

/*
 * 2 MiB hugetlb pages for every space and, grown by as many, for the host
 * (hugetlb_pool.c): more than four processes can map in the window, so
 * neither side runs short.
 */
#define KD_HUGETLB_POOL	160
/* Grow the host's pool by @nr pages until exit; false, and why, if it cannot be. */
bool kd_host_hugetlb_reserve(unsigned long nr, const char **why);

/*
 * Pause the host's khugepaged until exit (khugepaged_pause.c): its background
 * collapses are not the library's to model. False, and why, if it cannot be.
 */
bool kd_host_khugepaged_pause(const char **why);
/* Call @fn at exit or on a fatal signal, in the process that asked (host_restore.c). */
int kd_host_restore_at_exit(void (*fn)(void));

/* Ask the host; call before anything else makes threads. */
void kd_host_probe(struct kd_host_config *c);
void kd_host_config_print(const struct kd_host_config *c);
bool kd_host_has_maybe_guard(void);
/* The host's PMD THP mode (MMP_THP_*, from transparent_hugepage/enabled), or -1. */
int kd_host_thp_mode(void);

/* ---- the run (run.c) ---- */

struct kd_options {
	uint64_t seed;
	bool host;		/* compare with the host kernel */
	bool verbose;
	int verify_every;	/* mmp_space_verify every N ops (0: only at the end) */
	const char *only_arch;	/* NULL: every back end */
	unsigned int host_version;	/* KERNEL_VERSION of the host, 0 if unknown */
	int threads;		/* threads writing their own regions of proc 0 meanwhile */
	int only_variant;	/* >= 0: run only this variant of the seed */
	unsigned int kernel_version;	/* MMP_OPT_KERNEL_VERSION for every space, 0: default */
	int thp_pmd_mode;	/* >= 0: PMD THP mode of every space (the host's), else drawn */
	/* What the host is (with the host) or is taken to be (--host-like): the variants follow it. */
	struct kd_host_config cfg;
	bool compare_state;	/* compare smaps, status, pagemap and faults after each op */
	bool hugetlb;		/* a pool of KD_HUGETLB_POOL pages on both sides: hugetlb ops run */
};

/* Each extra thread owns [KD_THREAD_BASE + i * KD_THREAD_SIZE, + KD_THREAD_SIZE) of proc 0. */
#define KD_THREAD_BASE	(KD_WIN_END + (64ULL << 20))
#define KD_THREAD_SIZE	(4ULL << 20)
#define KD_MAX_THREADS	4

struct kd_result {
	uint64_t ops;
	uint64_t divergences;
	uint64_t first_bad;	/* index of the op that diverged first */
	uint64_t thp_checked;	/* ops whose THP events were compared with the host's */
	uint64_t thp_more;	/* of them, ops where the host counted more (its neighbours') */
	int variant;		/* the variant that did, or -1 */
	char what[512];		/* what diverged first */
};

/* Run @ops against the host (when opt->host) and every variant. */
int kd_run(const struct kd_options *opt, struct kd_host *h, const struct kd_op *ops, uint64_t n,
	   struct kd_result *res);

/* ---- sequences (ops.c) ---- */

struct kd_rng {
	uint64_t s;
};

static inline uint64_t kd_rand(struct kd_rng *r)
{
	/* splitmix64: tiny, and every seed gives a full-quality stream. */
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t kd_below(struct kd_rng *r, uint64_t n)
{
	return n ? kd_rand(r) % n : 0;
}

/* Generate @n random ops from @seed into @ops. */
void kd_generate(uint64_t seed, struct kd_op *ops, uint64_t n);
/* Decode arbitrary bytes (a fuzzer's input) into ops; returns how many. */
uint64_t kd_decode(const uint8_t *data, size_t size, struct kd_op *ops, uint64_t max);
/* Print one op as a line of the log; parse one back (0, or -1 on a bad line). */
void kd_print_op(FILE *f, const struct kd_op *op);
int kd_parse_op(const char *line, struct kd_op *op);
const char *kd_kind_name(int kind);
/* The bytes a write op stores at @off of its range. */
static inline uint8_t kd_data_byte(uint32_t seed, uint64_t off)
{
	uint64_t x = (seed * 0x9e3779b97f4a7c15ULL) ^ (off / 8 * 0xbf58476d1ce4e5b9ULL);

	return (uint8_t)((x >> (8 * (off % 8))) | 1);	/* never 0: a lost page reads as zeros */
}

#endif /* MMP_KDIFF_H */
