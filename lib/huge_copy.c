/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Clearing and copying huge folios for user space: the sub-page order
 * (process_huge_page), folio_zero_user and copy_user_large_folio.
 *
 * The order is a switch on the space (MMP_OPT_HUGE_ORDER; clears follow
 * MMP_OPT_HUGE_CLEAR_ORDER, which from 7.0 is ascending):
 *  - ascending, the base line;
 *  - target-last, Huang Ying's order: the sub-pages far from the one the fault
 *    will touch go first, then the rest converge on it from both sides, so it
 *    is copied last and is cache hot when user space resumes;
 *  - sequential, 7.0's clear: ascending runs, the target and two sub-pages
 *    each side last;
 *  - neighbourhood-last: ascending runs only (hardware prefetch keeps
 *    streaming, a descending sweep defeats it), right of the target's
 *    neighbourhood, then left of it, then the neighbourhood, ending on the
 *    target. The neighbourhood is sized from the host's L2 so that what is
 *    copied last stays in it; with a non-temporal variant only the
 *    neighbourhood goes through the caches.
 * Gigantic folios (more than 1 << MMP_MAX_ORDER pages) are always sequential.
 *
 * Callbacks get maximal ascending runs of the order, so a variant with string
 * instructions sees a run's real size; the counters count sub-pages.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mm.h"

static const char *const huge_order_names[MMP_NR_HUGE_ORDERS] = {
	[MMP_HUGE_ORDER_ASCENDING] = "ascending",
	[MMP_HUGE_ORDER_TARGET_LAST] = "target-last",
	[MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST] = "neighbourhood-last",
	[MMP_HUGE_ORDER_SEQUENTIAL] = "sequential",
};

MMP_EXPORT const char *mmp_huge_order_name(int order)
{
	if (order < 0 || order >= MMP_NR_HUGE_ORDERS)
		return NULL;
	return huge_order_names[order];
}

/* ---- the neighbourhood size ------------------------------------------------------- */

/* The L2 (or, failing that, per-core data cache) size of this host in bytes; 0 if unknown. */
static unsigned long host_l2_bytes(void)
{
	unsigned long best = 0;

#ifdef _SC_LEVEL2_CACHE_SIZE
	long v = sysconf(_SC_LEVEL2_CACHE_SIZE);

	if (v > 0)
		return v;
#endif
	/* aarch64 glibc answers 0: ask sysfs, level 2 data or unified. */
	for (int i = 0; i < 8; i++) {
		char path[96], type[32] = "";
		unsigned long level = 0, size = 0;
		char unit = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%lu", &level) != 1)
			level = 0;
		fclose(f);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%31s", type) != 1)
				type[0] = 0;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%lu%c", &size, &unit) < 1)
				size = 0;
			fclose(f);
		}
		if (unit == 'K')
			size <<= 10;
		else if (unit == 'M')
			size <<= 20;
		if (level == 2 && strcmp(type, "Instruction"))
			best = size;
	}
	return best;
}

static unsigned int default_neighbourhood;
static pthread_once_t default_neighbourhood_once = PTHREAD_ONCE_INIT;

/*
 * Half of L2 for the neighbourhood's footprint: each sub-page brings its
 * source and its destination in, so L2 / (4 * PAGE_SIZE) sub-pages. The other
 * half is left to the working set the fault interrupted. 1 MiB when the size
 * is unknown.
 */
static void init_default_neighbourhood(void)
{
	unsigned long l2 = host_l2_bytes();

	if (!l2)
		l2 = 1UL << 20;
	default_neighbourhood = MAX(1UL, MIN(l2 / (4 * PAGE_SIZE), 1UL << MMP_MAX_ORDER));
}

unsigned int huge_neighbourhood_default(void)
{
	pthread_once(&default_neighbourhood_once, init_default_neighbourhood);
	return default_neighbourhood;
}

static unsigned int huge_neighbourhood(struct mmp_space *s)
{
	long v = READ_ONCE(s->opts[MMP_OPT_HUGE_NEIGHBOURHOOD]);

	return v > 0 ? v : huge_neighbourhood_default();
}

/* ---- the orders ---------------------------------------------------------------------- */

/* Huang Ying's order, as the 2018 patch that copies the target sub-page last describes it. */
static void walk_target_last(unsigned int n, unsigned int nr, subpages_fn fn, void *arg)
{
	unsigned int base, l, i;

	if (2 * n <= nr) {
		/* Target in the first half: the tail first, downwards. */
		base = 0;
		l = n;
		for (i = nr; i-- > 2 * n;)
			fn(arg, i, 1, true);
	} else {
		/* Target in the second half: the head first, upwards. */
		base = 2 * n - nr;
		l = nr - n;
		fn(arg, 0, base, true);
	}
	/*
	 * The 2l sub-pages left, alternately from each end towards the target;
	 * the last 8 pairs (64 KiB around the target) go through the cache even
	 * with a non-temporal variant, or nothing would be left hot.
	 */
	for (i = 0; i < l; i++) {
		bool far = l - 1 - i >= 8;

		fn(arg, base + i, 1, far);
		fn(arg, base + 2 * l - 1 - i, 1, far);
	}
}

/*
 * The neighbourhood is @nbhd sub-pages, a quarter of them below the target
 * (a fault usually starts a forward sweep), shifted to fit in the folio.
 */
static void walk_neighbourhood_last(unsigned int n, unsigned int nr, unsigned int nbhd,
				    subpages_fn fn, void *arg)
{
	unsigned int w = MAX(1u, MIN(nbhd, nr));
	unsigned int lo = n >= w / 4 ? n - w / 4 : 0;
	unsigned int hi = lo + w;

	if (hi > nr) {
		hi = nr;
		lo = nr - w;
	}
	if (hi < nr)
		fn(arg, hi, nr - hi, true);	/* right of the neighbourhood */
	if (lo)
		fn(arg, 0, lo, true);		/* left of it */
	if (n + 1 < hi)
		fn(arg, n + 1, hi - n - 1, false); /* above the target */
	fn(arg, lo, n - lo + 1, false);		/* up to the target, which ends it */
}

/* 7.0's clear: R0 right of [n-2, n+2], R1 left of it, R2 = [n-2, n+2] last, each ascending. */
static void walk_sequential(unsigned int n, unsigned int nr, subpages_fn fn, void *arg)
{
	unsigned int lo = n >= 2 ? n - 2 : 0, hi = MIN(n + 3, nr);

	if (hi < nr)
		fn(arg, hi, nr - hi, true);
	if (lo)
		fn(arg, 0, lo, true);
	fn(arg, lo, hi - lo, false);
}

void huge_page_walk(enum mmp_huge_order order, unsigned int target, unsigned int nr_pages,
		    unsigned int nbhd, subpages_fn fn, void *arg)
{
	MMP_BUG_ON(!nr_pages || target >= nr_pages);
	if (nr_pages > 1u << MMP_MAX_ORDER) {
		/* Gigantic: sequential, as copy_user_gigantic_page and clear_gigantic_page. */
		fn(arg, 0, nr_pages, true);
		return;
	}
	switch (order) {
	case MMP_HUGE_ORDER_TARGET_LAST:
		walk_target_last(target, nr_pages, fn, arg);
		break;
	case MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST:
		walk_neighbourhood_last(target, nr_pages, nbhd ? nbhd : huge_neighbourhood_default(),
					fn, arg);
		break;
	case MMP_HUGE_ORDER_SEQUENTIAL:
		walk_sequential(target, nr_pages, fn, arg);
		break;
	default:
		fn(arg, 0, nr_pages, true);
		break;
	}
}

struct order_out {
	unsigned int *out;
	unsigned int n;
};

static void order_record(void *arg, unsigned int first, unsigned int nr, bool far)
{
	struct order_out *o = arg;

	for (unsigned int i = 0; i < nr; i++)
		o->out[o->n++] = first + i;
}

unsigned int huge_page_order(enum mmp_huge_order order, unsigned int target, unsigned int nr_pages,
			     unsigned int nbhd, unsigned int *out)
{
	struct order_out o = { .out = out };

	huge_page_walk(order, target, nr_pages, nbhd, order_record, &o);
	return o.n;
}

struct traced_run {
	subpages_fn fn;
	void *arg;
	struct mmp_huge_trace *t;
};

/* A run recorded for a test (mmp_debug_trace_huge), then done. */
static void traced_run(void *arg, unsigned int first, unsigned int nr, bool far)
{
	struct traced_run *tr = arg;

	for (unsigned int i = 0; i < nr && tr->t->n < tr->t->cap; i++)
		tr->t->order[tr->t->n++] = first + i;
	tr->fn(tr->arg, first, nr, far);
}

int mmp_debug_trace_huge(struct mmp_space *s, struct mmp_huge_trace *t)
{
	if (!s)
		return -EINVAL;
	__atomic_store_n(&s->huge_trace, t, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Run @fn over the @nr_pages sub-pages of the folio that user address
 * @addr_hint falls in, in the space's order, the sub-page of @addr_hint last
 * where the order says so.
 */
void process_huge_page(struct mmp_space *s, enum mmp_huge_order order, uint64_t addr_hint,
		       unsigned int nr_pages, subpages_fn fn, void *arg)
{
	/* Align the hint down to the folio ourselves (Kefeng Wang's 2024 fix). */
	unsigned int target = (addr_hint >> PAGE_SHIFT) & (nr_pages - 1);
	struct mmp_huge_trace *t = __atomic_load_n(&s->huge_trace, __ATOMIC_ACQUIRE);

	MMP_BUG_ON(nr_pages & (nr_pages - 1));
	if (unlikely(t)) {
		struct traced_run tr = { .fn = fn, .arg = arg, .t = t };

		huge_page_walk(order, target, nr_pages, huge_neighbourhood(s), traced_run, &tr);
		return;
	}
	huge_page_walk(order, target, nr_pages,
		       huge_neighbourhood(s), fn, arg);
}

/* ---- clear and copy ----------------------------------------------------------------------- */

struct huge_copy_ctx {
	const struct mmp_copy_ops *op;
	uint8_t *dst;
	const uint8_t *src;
};

/* Near the target a streaming variant hands over to its cache-allocating sibling. */
static const struct mmp_copy_ops *run_ops(const struct mmp_copy_ops *op, bool far)
{
	return far || !op->temporal ? op : op->temporal;
}

static void clear_run(void *arg, unsigned int first, unsigned int nr, bool far)
{
	struct huge_copy_ctx *c = arg;

	run_ops(c->op, far)->clear_pages(c->dst + ((size_t)first << PAGE_SHIFT), nr);
}

static void copy_run(void *arg, unsigned int first, unsigned int nr, bool far)
{
	struct huge_copy_ctx *c = arg;

	run_ops(c->op, far)->copy_pages(c->dst + ((size_t)first << PAGE_SHIFT),
					c->src + ((size_t)first << PAGE_SHIFT), nr);
}

/* A large folio's sub-pages in process_huge_page's order; out of line, as it is rare. */
static __attribute__((noinline)) void folio_zero_large(struct mmp_space *s, uint32_t pfn,
							unsigned int order, uint64_t addr_hint)
{
	struct huge_copy_ctx c = {
		.op = __atomic_load_n(&s->copy, __ATOMIC_ACQUIRE),
		.dst = pfn_to_virt(s->phys, pfn),
	};

	count_add(s, MMP_C_SUBPAGE_CLEAR, 1u << order);
	process_huge_page(s, huge_clear_order(s), addr_hint, 1u << order, clear_run, &c);
}

/*
 * Zero a new folio for user space; the sub-page at @addr_hint is touched first
 * after. A small folio is one clear_page (clear_user_highpage), a tail call.
 */
void folio_zero_user(struct mmp_space *s, uint32_t pfn, unsigned int order, uint64_t addr_hint)
{
	if (order) {
		folio_zero_large(s, pfn, order, addr_hint);
		return;
	}
	count_inc(s, MMP_C_SUBPAGE_CLEAR);
	__atomic_load_n(&s->copy, __ATOMIC_ACQUIRE)->clear_page(pfn_to_virt(s->phys, pfn));
}

/* Copy folio @src into the new folio @dst (COW); the sub-page at @addr_hint is written next. */
void copy_user_large_folio(struct mmp_space *s, uint32_t dst, uint32_t src, unsigned int order,
			   uint64_t addr_hint)
{
	struct huge_copy_ctx c = {
		.op = __atomic_load_n(&s->copy, __ATOMIC_ACQUIRE),
		.dst = pfn_to_virt(s->phys, dst),
		.src = pfn_to_virt(s->phys, src),
	};

	process_huge_page(s, (enum mmp_huge_order)READ_ONCE(s->opts[MMP_OPT_HUGE_ORDER]), addr_hint,
			  1u << order, copy_run, &c);
	count_add(s, MMP_C_SUBPAGE_COPY, 1u << order);
}
