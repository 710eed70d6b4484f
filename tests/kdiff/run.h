/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runner's state, shared by run.c (the ops, on the host and on every
 * variant) and view.c (the kernel's view of each process compared after them).
 */
#ifndef KDIFF_RUN_H
#define KDIFF_RUN_H

#include <pthread.h>

#include "kdiff.h"

/* What a page of lazy[][] may read as besides its data. */
enum { DATA, LAZYFREE, DROPPABLE };

#define MAX_PINS	8
#define PHYS_BYTES	(512ULL << 20)

struct pin {
	uint64_t pfns[16];
	int nr;
};

struct variant {
	const char *arch;
	int orig;			/* index among all variants of the seed */
	char desc[160];
	struct mmp_phys *phys;
	struct mmp_space *sp[KD_MAX_PROCS];
	struct mmp_cpu *cpu[KD_MAX_PROCS];
	struct mmp_file *files[KD_MAX_FILES];
	struct pin pins[KD_MAX_PROCS][MAX_PINS];
	int npins[KD_MAX_PROCS];
	/* Its spaces model the host as it is (defaults, no switch drawn): the kernel's view compares. */
	bool host_like;
	uint64_t faults[KD_MAX_PROCS];		/* min_flt before the op */
	uint64_t thp_events[KD_NR_THP_EVENTS];	/* its processes' THP events before the op */
	struct kd_status last[KD_MAX_PROCS];	/* status at the last comparison */
};

#define THREAD_PAGES	(KD_THREAD_SIZE / KD_PAGE)

/* A thread on CPUs of its own (one per variant) writing its own region of proc 0. */
struct worker {
	struct run *r;
	int idx;
	pthread_t th;
	uint8_t expect[KD_MAX_VARIANTS][THREAD_PAGES];	/* byte each page holds */
};

struct run {
	const struct kd_options *opt;
	struct worker workers[KD_MAX_THREADS];
	int pause_req, paused, stop;
	char thread_err[160];
	struct kd_host *h;
	struct kd_result *res;
	uint64_t idx;
	const struct kd_op *op;
	int nv, orig_nv;
	int thp_pmd_mode;		/* every variant's PMD THP mode */
	struct variant v[KD_MAX_VARIANTS];
	bool live[KD_MAX_PROCS];
	uint8_t lazy[KD_MAX_PROCS][KD_NPAGES];
	bool multi_move;		/* the op is an equal-length MREMAP_FIXED move */
	bool src_mapped[KD_NPAGES];	/* its source pages that lie in a VMA */
	uint64_t src_pfn[KD_NPAGES];	/* and the frames lazy_ref() maps there (lazy.c) */
	/* Reference and candidate buffers of one read. */
	uint8_t rbuf[KD_MAX_IO], cbuf[KD_MAX_IO];
	uint8_t rok[KD_MAX_IO / KD_PAGE + 2], cok[KD_MAX_IO / KD_PAGE + 2];	/* enum kd_page */
	struct kd_vma rvmas[KD_MAX_VMAS];
	/* The kernel's view: the host's and a variant's now, and the host's at the last look. */
	struct kd_state hstate, lstate;
	struct kd_status hlast[KD_MAX_PROCS];
	bool status_known[KD_MAX_PROCS];	/* hlast and the variants' last hold a baseline */
	unsigned int status_skip[KD_MAX_PROCS];	/* lines the unsettled pages moved at the last look */
	bool faults_comparable;			/* the op touched only settled pages */
	bool placed_outside;			/* the op mapped outside the window */
	/*
	 * A pin unshared a page, or a fork copied a pinned one, in the library
	 * where the host's touch did not: which pages are shared, and the
	 * faults of writes to them, differ from then on.
	 */
	bool pin_skew;
	/*
	 * A DONTUNMAP move outside the window left the source's PTE tables in
	 * one side and not in the other: the process's VmPTE (and its later
	 * children's) is not compared from then on.
	 */
	bool pte_skew[KD_MAX_PROCS];
	uint64_t host_thp[KD_NR_THP_EVENTS];	/* /proc/vmstat before the op */
	uint64_t thp_checked, thp_more;		/* ops whose THP events were compared; the host's more */
};

static inline bool in_window(uint64_t addr)
{
	return addr >= KD_WIN_BASE && addr < KD_WIN_END;
}

static inline uint8_t *lazy_at(struct run *r, int p, uint64_t addr)
{
	static uint8_t none;

	none = 0;
	return in_window(addr) ? &r->lazy[p][(addr - KD_WIN_BASE) / KD_PAGE] : &none;
}

__attribute__((format(printf, 2, 3)))
void diverge(struct run *r, const char *fmt, ...);
/* Has the run diverged? */
bool failed(struct run *r);

/* The kernel's view (view.c): the host's status and events before an op, and every comparison after it. */
void state_before(struct run *r, const struct kd_op *op);
void compare_state(struct run *r, const struct kd_op *op);

/* A length rounded up to whole pages, as the calls take it. */
static inline uint64_t page_align(uint64_t len)
{
	return (len + KD_PAGE - 1) & ~(KD_PAGE - 1);
}

/*
 * The variant whose frames the lazy marks follow (which page is the zero
 * page, which frame a fork shares): the first that still models the host,
 * for a variant given a switch may map them otherwise.
 */
static inline struct variant *lazy_ref(struct run *r)
{
	for (int k = 0; k < r->nv; k++)
		if (r->v[k].host_like)
			return &r->v[k];
	return &r->v[0];
}

/* lazy.c: the lazy pages of each process. */
void lazy_set(struct run *r, int p, uint64_t addr, uint64_t len, uint8_t val);
void lazy_written(struct run *r, int p, uint64_t addr, uint64_t len);
void track_lazy(struct run *r, const struct kd_op *op, int64_t ret);
void mark_droppable(struct run *r, int p, uint64_t addr, uint64_t len);
bool has_lazy_page(struct run *r, int p, uint64_t start, uint64_t end);


/* variants.c: the spaces a run compares, per back end and setting. */
int make_variants(struct run *r);
void destroy_variants(struct run *r);
void apply_setting(struct run *r, struct mmp_space *s, unsigned int which, unsigned int value);
void unpin_all(struct variant *v, int p);
void proc_destroy(struct variant *v, int p);

#endif /* KDIFF_RUN_H */
