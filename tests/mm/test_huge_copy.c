/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Huge folio clear and copy: the sub-page orders (each sub-page once, the
 * target last, target-last worked by hand), the host copy variants against
 * the generic one, byte-exact clears and copies for every order, variant and
 * target, and what a THP write fault clears or copies under each order: a
 * shared PMD THP is split and one page copied (the order does not come into
 * it; test_thp_cow.c has the rest of that rule), the huge zero page gets a
 * THP cleared in the order, a PTE-mapped mTHP copies one page.
 */
#include <string.h>
#include <sys/mman.h>

#include "mm.h"
#include "util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)

static struct mmp_phys *phys;
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(void *p, size_t n)
{
	uint64_t *q = p;

	for (size_t i = 0; i < n / 8; i++)
		q[i] = rnd();
}

/* ---- orders ------------------------------------------------------------------------- */

/* Each of 0..nr-1 exactly once in @seq. */
static bool is_permutation(const unsigned int *seq, unsigned int len, unsigned int nr)
{
	static uint8_t seen[1u << 12];

	if (len != nr || nr > sizeof(seen))
		return false;
	memset(seen, 0, nr);
	for (unsigned int i = 0; i < len; i++) {
		if (seq[i] >= nr || seen[seq[i]])
			return false;
		seen[seq[i]] = 1;
	}
	return true;
}

static void check_orders_visit_once(void)
{
	static const unsigned int nbhds[] = { 0, 1, 2, 3, 5, 16, 64, 128, 511, 512, 1024 };
	static unsigned int seq[1u << MMP_MAX_ORDER];

	for (int order = 0; order < MMP_NR_HUGE_ORDERS; order++) {
		bool once = true, last = true;

		/* Every folio size a space can have: mTHP 16 KiB .. PMD, and MAX_ORDER. */
		for (unsigned int fo = 2; fo <= MMP_MAX_ORDER; fo++) {
			unsigned int nr = 1u << fo;

			for (unsigned int n = 0; n < nr; n++) {
				for (size_t b = 0; b < ARRAY_SIZE(nbhds); b++) {
					unsigned int len = huge_page_order(order, n, nr, nbhds[b], seq);

					if (!is_permutation(seq, len, nr)) {
						if (once)
							printf("# %s nr %u n %u nbhd %u: not a permutation\n",
							       mmp_huge_order_name(order), nr, n, nbhds[b]);
						once = false;
					}
					/* 7.0's sequential clear ends on the neighbourhood's last. */
					unsigned int end = order == MMP_HUGE_ORDER_SEQUENTIAL ?
								   MIN(n + 2, nr - 1) : n;

					if (order != MMP_HUGE_ORDER_ASCENDING && seq[len - 1] != end) {
						if (last)
							printf("# %s nr %u n %u nbhd %u: ends on %u\n",
							       mmp_huge_order_name(order), nr, n, nbhds[b],
							       seq[len - 1]);
						last = false;
					}
					if (order != MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST)
						break;	/* nbhd only matters there */
				}
			}
		}
		tap_ok(once, "%s visits every sub-page exactly once (orders 2..10, every target)",
		       mmp_huge_order_name(order));
		if (order != MMP_HUGE_ORDER_ASCENDING)
			tap_ok(last, "%s ends on the target%s for every n and folio size",
			       mmp_huge_order_name(order),
			       order == MMP_HUGE_ORDER_SEQUENTIAL ? "'s neighbourhood" : "");
	}
}

static void check_ascending_and_gigantic(void)
{
	static unsigned int seq[1u << 12];
	bool ok = true;

	huge_page_order(MMP_HUGE_ORDER_ASCENDING, 300, 512, 0, seq);
	for (unsigned int i = 0; i < 512; i++)
		ok &= seq[i] == i;
	tap_ok(ok, "ascending is 0..511 whatever the target");

	/* Gigantic (more than 1 << MMP_MAX_ORDER pages): sequential under every order. */
	for (int order = 0; order < MMP_NR_HUGE_ORDERS; order++) {
		unsigned int len = huge_page_order(order, 1000, 1u << 12, 0, seq);

		ok = len == 1u << 12;
		for (unsigned int i = 0; i < len; i++)
			ok &= seq[i] == i;
		tap_ok(ok, "%s: a gigantic folio (4096 pages) goes sequentially",
		       mmp_huge_order_name(order));
	}
}

/* 7.0's sequential clear by hand, 512 sub-pages: targets 0 and 300. */
static void check_sequential_examples(void)
{
	static unsigned int seq[512];
	bool ok = true;
	unsigned int k = 0, i;

	huge_page_order(MMP_HUGE_ORDER_SEQUENTIAL, 0, 512, 0, seq);
	for (i = 3; i < 512; i++)
		ok &= seq[k++] == i;
	for (i = 0; i < 3; i++)
		ok &= seq[k++] == i;
	tap_ok(ok, "sequential, n=0: 3..511, then 0, 1, 2");
	huge_page_order(MMP_HUGE_ORDER_SEQUENTIAL, 300, 512, 0, seq);
	ok = true;
	k = 0;
	for (i = 303; i < 512; i++)
		ok &= seq[k++] == i;
	for (i = 0; i < 298; i++)
		ok &= seq[k++] == i;
	for (i = 298; i < 303; i++)
		ok &= seq[k++] == i;
	tap_ok(ok, "sequential, n=300: 303..511, 0..297, then 298..302");
}

/* Target-last (process_huge_page's order) by hand, 512 sub-pages: targets 0, 100, 400, 511. */
static void check_target_last_examples(void)
{
	static unsigned int seq[512];
	unsigned int k;
	bool ok;

	huge_page_order(MMP_HUGE_ORDER_TARGET_LAST, 0, 512, 0, seq);
	ok = true;
	for (k = 0; k < 512; k++)
		ok &= seq[k] == 511 - k;
	tap_ok(ok, "target-last, n=0: 511 down to 0");

	huge_page_order(MMP_HUGE_ORDER_TARGET_LAST, 100, 512, 0, seq);
	ok = true;
	for (k = 0; k < 312; k++)
		ok &= seq[k] == 511 - k;		/* 511..200 */
	for (unsigned int i = 0; i < 100; i++)
		ok &= seq[312 + 2 * i] == i && seq[313 + 2 * i] == 199 - i;
	tap_ok(ok, "target-last, n=100: 511..200, then (0,199), (1,198) ... (99,100)");

	huge_page_order(MMP_HUGE_ORDER_TARGET_LAST, 400, 512, 0, seq);
	ok = true;
	for (k = 0; k < 288; k++)
		ok &= seq[k] == k;			/* 0..287 */
	for (unsigned int i = 0; i < 112; i++)
		ok &= seq[288 + 2 * i] == 288 + i && seq[289 + 2 * i] == 511 - i;
	tap_ok(ok, "target-last, n=400: 0..287, then (288,511) ... (399,400)");

	huge_page_order(MMP_HUGE_ORDER_TARGET_LAST, 511, 512, 0, seq);
	ok = true;
	for (k = 0; k < 510; k++)
		ok &= seq[k] == k;
	tap_ok(ok && seq[510] == 510 && seq[511] == 511, "target-last, n=511: ascending");
}

struct runs {
	unsigned int nr;
	unsigned int first[8], len[8];
	bool far[8];
};

static void record_run(void *arg, unsigned int first, unsigned int nr, bool far)
{
	struct runs *r = arg;

	if (r->nr < 8) {
		r->first[r->nr] = first;
		r->len[r->nr] = nr;
		r->far[r->nr] = far;
	}
	r->nr++;
}

/*
 * neighbourhood-last: at most four ascending runs, far ones first; the near
 * runs are exactly the neighbourhood (nbhd sub-pages holding the target).
 */
static void check_neighbourhood_runs(void)
{
	static const unsigned int nbhds[] = { 1, 4, 5, 64, 128, 256, 512 };
	bool ok = true;

	for (size_t b = 0; b < ARRAY_SIZE(nbhds); b++) {
		for (unsigned int fo = 2; fo <= HPAGE_PMD_ORDER; fo++) {
			unsigned int nr = 1u << fo, w = MIN(nbhds[b], nr);

			for (unsigned int n = 0; n < nr; n++) {
				struct runs r = { 0 };
				unsigned int near = 0, lo = nr, hi = 0;
				bool seen_near = false;

				huge_page_walk(MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST, n, nr, nbhds[b],
					       record_run, &r);
				ok &= r.nr >= 1 && r.nr <= 4;
				for (unsigned int i = 0; i < MIN(r.nr, 4u); i++) {
					ok &= r.len[i] > 0;
					if (r.far[i]) {
						ok &= !seen_near;
						continue;
					}
					seen_near = true;
					near += r.len[i];
					lo = MIN(lo, r.first[i]);
					hi = MAX(hi, r.first[i] + r.len[i]);
				}
				ok &= near == w && hi - lo == w && lo <= n && n < hi;
				/* A quarter below the target unless the folio edge moves it. */
				ok &= lo == (n >= w / 4 ? MIN(n - w / 4, nr - w) : 0);
				if (!ok) {
					printf("# nbhd %u nr %u n %u: %u runs, near [%u, %u)\n",
					       nbhds[b], nr, n, r.nr, lo, hi);
					goto out;
				}
			}
		}
	}
out:
	tap_ok(ok, "neighbourhood-last: <= 4 ascending runs, far first, the last nbhd "
		   "sub-pages are the target's neighbourhood");
	tap_ok(huge_neighbourhood_default() >= 1 &&
		       huge_neighbourhood_default() <= 1u << MMP_MAX_ORDER,
	       "default neighbourhood from the host L2: %u sub-pages",
	       huge_neighbourhood_default());
}

/* ---- copy variants ------------------------------------------------------------------------ */

#define VBUF_PAGES	40
#define VRUNS		40

/*
 * Each variant against generic on random page counts at random page offsets of
 * a larger buffer, with guard bytes around: same bytes inside, none outside.
 */
static void check_variant(const struct mmp_copy_ops *op)
{
	size_t size = VBUF_PAGES * PAGE_SIZE;
	uint8_t *src = mmap(NULL, size, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *dst = mmap(NULL, size, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *ref = mmap(NULL, size, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool copy_ok = true, clear_ok = true;

	tap_require(src != MAP_FAILED && dst != MAP_FAILED && ref != MAP_FAILED, "buffers");
	for (int r = 0; r < VRUNS; r++) {
		unsigned int nr = 1 + rnd() % 16;
		unsigned int so = rnd() % (VBUF_PAGES - nr), d_o = rnd() % (VBUF_PAGES - nr);
		bool single = r % 4 == 0;	/* the one-page entry points too */

		if (single)
			nr = 1;
		fill_random(src, size);
		fill_random(dst, size);
		memcpy(ref, dst, size);
		for (unsigned int i = 0; i < nr; i++)
			mmp_copy_generic.copy_page(ref + (d_o + i) * PAGE_SIZE,
						   src + (so + i) * PAGE_SIZE);
		if (single)
			op->copy_page(dst + d_o * PAGE_SIZE, src + so * PAGE_SIZE);
		else
			op->copy_pages(dst + d_o * PAGE_SIZE, src + so * PAGE_SIZE, nr);
		copy_ok &= !memcmp(dst, ref, size);

		fill_random(dst, size);
		memcpy(ref, dst, size);
		mmp_copy_generic.clear_pages(ref + d_o * PAGE_SIZE, nr);
		if (single)
			op->clear_page(dst + d_o * PAGE_SIZE);
		else
			op->clear_pages(dst + d_o * PAGE_SIZE, nr);
		clear_ok &= !memcmp(dst, ref, size);
	}
	tap_ok(copy_ok, "variant %s: copy_page(s) byte-exact against generic, nothing outside",
	       op->name);
	tap_ok(clear_ok, "variant %s: clear_page(s) byte-exact against generic, nothing outside",
	       op->name);
	tap_ok(!op->temporal || !op->temporal->temporal,
	       "variant %s: its temporal sibling (%s) is itself temporal", op->name,
	       op->temporal ? op->temporal->name : "none");
	munmap(src, size);
	munmap(dst, size);
	munmap(ref, size);
}

static void check_variants(void)
{
	int n = mmp_copy_variant_count();

	tap_ok(n >= 1 && !strcmp(mmp_copy_variant_name(n - 1), "generic"),
	       "%d copy variants on this host, generic last", n);
	tap_ok(mmp_copy_variant_name(n) == NULL && mmp_copy_variant_name(-1) == NULL,
	       "variant names out of range are NULL");
	for (int i = 0; i < n; i++) {
		const struct mmp_copy_ops *op = mmp_copy_host[i];

		tap_ok(op->copy_page && op->clear_page && op->copy_pages && op->clear_pages &&
			       !strcmp(op->name, mmp_copy_variant_name(i)),
		       "variant %s has every function", op->name);
		if (op->usable && !op->usable()) {
			printf("# variant %s: this CPU cannot run it, skipped\n", op->name);
			continue;
		}
		check_variant(op);
	}
}

static void check_copy_api(void)
{
	struct mmp_space *s = new_space(phys, mmp_arch_name(0)), *c;
	const char *def = mmp_space_copy(s), *first = NULL;
	long v = -1;

	for (int i = 0; !first && i < mmp_copy_variant_count(); i++)
		if (!mmp_copy_host[i]->usable || mmp_copy_host[i]->usable())
			first = mmp_copy_host[i]->name;
	tap_ok(def && first && !strcmp(def, first),
	       "a new space copies with the first usable variant (%s)", def);
	tap_eq(mmp_space_set_copy(s, "no-such-variant"), -ENOENT, "unknown variant: -ENOENT");
	tap_eq(mmp_space_set_copy(s, NULL), -EINVAL, "NULL name: -EINVAL");
	tap_eq(mmp_space_set_copy(NULL, "generic"), -EINVAL, "NULL space: -EINVAL");
	tap_ok(mmp_space_copy(NULL) == NULL, "mmp_space_copy(NULL) is NULL");
	for (int i = 0; i < mmp_copy_variant_count(); i++) {
		const struct mmp_copy_ops *op = mmp_copy_host[i];
		int want = !op->usable || op->usable() ? 0 : -ENOTSUP;

		tap_eq(mmp_space_set_copy(s, op->name), want, "set_copy %s: %s", op->name,
		       want ? "-ENOTSUP on this CPU" : "0");
		if (!want)
			tap_ok(!strcmp(mmp_space_copy(s), op->name), "... and the space uses it");
	}
	mmp_space_set_copy(s, "generic");
	tap_eq(mmp_fork(s, &c), 0, "fork");
	tap_ok(!strcmp(mmp_space_copy(c), "generic"), "the child inherits the copy variant");
	mmp_space_destroy(c);

	mmp_space_get_opt(s, MMP_OPT_HUGE_ORDER, &v);
	tap_eq(v, MMP_HUGE_ORDER_TARGET_LAST, "the default order is target-last");
	tap_eq(mmp_space_set_opt(s, MMP_OPT_HUGE_ORDER, MMP_NR_HUGE_ORDERS), -EINVAL,
	       "an order past the last: -EINVAL");
	tap_eq(mmp_space_set_opt(s, MMP_OPT_HUGE_NEIGHBOURHOOD, -1), -EINVAL,
	       "a negative neighbourhood: -EINVAL");
	tap_eq(mmp_space_set_opt(s, MMP_OPT_HUGE_NEIGHBOURHOOD, (1 << MMP_MAX_ORDER) + 1),
	       -EINVAL, "a neighbourhood past MAX_ORDER: -EINVAL");
	tap_eq(mmp_space_set_opt(s, MMP_OPT_HUGE_NEIGHBOURHOOD, 7), 0, "a neighbourhood of 7");
	tap_ok(!strcmp(mmp_huge_order_name(MMP_HUGE_ORDER_NEIGHBOURHOOD_LAST),
		       "neighbourhood-last") && !mmp_huge_order_name(MMP_NR_HUGE_ORDERS) &&
		       !mmp_huge_order_name(-1),
	       "order names");
	tap_ok(mmp_page_address(phys, 0) != NULL && mmp_page_address(phys, UINT64_MAX) == NULL &&
		       mmp_page_address(NULL, 0) == NULL,
	       "mmp_page_address: frames only");
	mmp_space_destroy(s);
}

/* ---- clear and copy through process_huge_page ---------------------------------------------- */

/*
 * copy_user_large_folio and folio_zero_user on folios of @order for each
 * target in @targets: byte-exact, and the counters count the sub-pages.
 */
static bool clear_copy_exact(struct mmp_space *s, unsigned int order, const unsigned int *targets,
			     unsigned int nr_targets, uint64_t *copied, uint64_t *cleared)
{
	size_t bytes = PAGE_SIZE << order;
	uint32_t src = folio_alloc_anon(s, order), dst = folio_alloc_anon(s, order);
	uint8_t *sp, *dp;
	uint64_t c0 = counter(s, MMP_C_SUBPAGE_COPY), z0 = counter(s, MMP_C_SUBPAGE_CLEAR);
	bool ok = true;

	tap_require(src != NO_PFN && dst != NO_PFN, "folios of order %u", order);
	sp = pfn_to_virt(s->phys, src);
	dp = pfn_to_virt(s->phys, dst);
	fill_random(sp, bytes);
	for (unsigned int t = 0; t < nr_targets; t++) {
		/* An unaligned hint inside the target sub-page, in some folio-aligned range. */
		uint64_t hint = 0x40000000ULL + (uint64_t)targets[t] * PAGE_SIZE + rnd() % PAGE_SIZE;

		/* A fresh source word in every sub-page, a destination that differs everywhere. */
		for (size_t p = 0; p < bytes; p += PAGE_SIZE)
			((uint64_t *)(sp + p))[rnd() % (PAGE_SIZE / 8)] = rnd();
		memset(dp, 0xa5 ^ t, bytes);
		copy_user_large_folio(s, dst, src, order, hint);
		ok &= !memcmp(sp, dp, bytes);
		folio_zero_user(s, dst, order, hint);
		ok &= dp[0] == 0 && !memcmp(dp, dp + 1, bytes - 1);
	}
	*copied = counter(s, MMP_C_SUBPAGE_COPY) - c0;
	*cleared = counter(s, MMP_C_SUBPAGE_CLEAR) - z0;
	folio_free(s->phys, src);
	folio_free(s->phys, dst);
	return ok;
}

static void check_clear_copy(void)
{
	struct mmp_space *s = new_space(phys, mmp_arch_name(0));
	static unsigned int all[512];
	unsigned int some[] = { 0, 1, 2, 127, 255, 256, 257, 510, 511, 0 };

	for (unsigned int i = 0; i < 512; i++)
		all[i] = i;
	some[ARRAY_SIZE(some) - 1] = rnd() % 512;
	for (int order = 0; order < MMP_NR_HUGE_ORDERS; order++) {
		uint64_t copied, cleared;
		bool ok;

		mmp_space_set_opt(s, MMP_OPT_HUGE_ORDER, order);
		/* Every target of a PMD folio with the default variant, two neighbourhoods. */
		for (long nb = 0; nb <= 37; nb += 37) {
			mmp_space_set_opt(s, MMP_OPT_HUGE_NEIGHBOURHOOD, nb);
			mmp_space_set_copy(s, mmp_copy_variant_name(0));
			ok = clear_copy_exact(s, HPAGE_PMD_ORDER, all, 512, &copied, &cleared);
			tap_ok(ok, "%s, %s, nbhd %ld: 2 MiB copy and clear byte-exact for all 512 targets",
			       mmp_huge_order_name(order), mmp_space_copy(s), nb);
			tap_ok(copied == 512 * 512 && cleared == 512 * 512,
			       "... MMP_C_SUBPAGE_COPY and _CLEAR count 512 per folio");
		}
		mmp_space_set_opt(s, MMP_OPT_HUGE_NEIGHBOURHOOD, 0);
		/* Every usable variant: PMD folios at chosen targets, mTHP at every target. */
		for (int v = 0; v < mmp_copy_variant_count(); v++) {
			bool all_ok = true, counts = true;

			if (mmp_space_set_copy(s, mmp_copy_variant_name(v)))
				continue;
			all_ok &= clear_copy_exact(s, HPAGE_PMD_ORDER, some, ARRAY_SIZE(some),
						   &copied, &cleared);
			counts &= copied == 512 * ARRAY_SIZE(some) && cleared == copied;
			for (unsigned int fo = 2; fo < HPAGE_PMD_ORDER; fo += 2) {
				all_ok &= clear_copy_exact(s, fo, all, 1u << fo, &copied, &cleared);
				counts &= copied == (1u << fo) * (1u << fo) && cleared == copied;
			}
			tap_ok(all_ok && counts,
			       "%s, %s: byte-exact on PMD folios (10 targets) and 16K/64K/256K "
			       "folios (every target), counters exact",
			       mmp_huge_order_name(order), mmp_space_copy(s));
		}
	}
	tap_eq(mmp_space_verify(s), 0, "verify");
	mmp_space_destroy(s);
}

/* ---- COW through faults -------------------------------------------------------------------- */

/* A recognisable word for offset @off of the parent's data. */
static uint64_t pattern(uint64_t off)
{
	return off * 0x9e3779b97f4a7c15ULL + 0x5555;
}

static bool region_matches(struct mmp_cpu *cpu, uint64_t a, uint64_t len, uint64_t skip)
{
	static uint64_t buf[512];
	bool ok = true;

	for (uint64_t off = 0; off < len; off += sizeof(buf)) {
		if (mmp_read(cpu, a + off, buf, sizeof(buf)))
			return false;
		for (size_t i = 0; i < ARRAY_SIZE(buf); i++) {
			uint64_t o = off + i * 8;

			if (o != skip)
				ok &= buf[i] == pattern(o);
		}
	}
	return ok;
}

static void fill_pattern(struct mmp_cpu *cpu, uint64_t a, uint64_t len)
{
	static uint64_t buf[512];

	for (uint64_t off = 0; off < len; off += sizeof(buf)) {
		for (size_t i = 0; i < ARRAY_SIZE(buf); i++)
			buf[i] = pattern(off + i * 8);
		mmp_write(cpu, a + off, buf, sizeof(buf));
	}
}

/* A PMD-mapped THP shared by fork; the child writes sub-page @n: one page copied, whatever order. */
static void check_cow_pmd(const char *arch, int order, unsigned int n)
{
	struct mmp_space *s = new_space(phys, arch), *c;
	struct mmp_cpu *pc, *cc;
	uint64_t a = map(s, 4 * MiB, RW), w = 0xc0ffee, got = 0, off;

	a = (a + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
	mmp_madvise(s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	mmp_space_set_opt(s, MMP_OPT_HUGE_ORDER, order);
	mmp_cpu_attach(s, &pc);
	fill_pattern(pc, a, MMP_PMD_SIZE);
	mmp_fork(s, &c);
	mmp_cpu_attach(c, &cc);
	mmp_space_reset_counters(c);
	off = (uint64_t)n * PAGE_SIZE + 8 * (rnd() % 512);
	tap_eq(mmp_write(cc, a + off, &w, 8), 0, "%s %s n=%u: the child writes a shared THP", arch,
	       mmp_huge_order_name(order), n);
	tap_ok(counter(c, MMP_C_FAULT_HUGE_COW) == 0 && counter(c, MMP_C_SUBPAGE_COPY) == 1 &&
		       counter(c, MMP_C_FAULT_COW) == 1 && counter(c, MMP_C_PMD_SPLIT) == 1,
	       "... the PMD split, one sub-page copied (5.8+: no huge COW)");
	mmp_read(cc, a + off, &got, 8);
	tap_ok(got == w && region_matches(cc, a, MMP_PMD_SIZE, off),
	       "... the child sees its write and the parent's data elsewhere");
	tap_ok(region_matches(pc, a, MMP_PMD_SIZE, UINT64_MAX), "... the parent keeps its data");
	tap_eq(mmp_space_verify(s), 0, "... verify");
	mmp_cpu_detach(cc);
	mmp_space_destroy(c);
	mmp_cpu_detach(pc);
	mmp_space_destroy(s);
}

/* A write to the huge zero page gets a fresh THP cleared in the space's order. */
static void check_huge_zero_write(const char *arch, int order)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	uint64_t a = map(s, 4 * MiB, RW), w = 7, buf[512];
	bool zero = true;

	a = (a + MMP_PMD_SIZE - 1) & ~(MMP_PMD_SIZE - 1);
	mmp_madvise(s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	mmp_space_set_opt(s, MMP_OPT_HUGE_ORDER, order);
	mmp_cpu_attach(s, &cpu);
	mmp_read(cpu, a, buf, 8);
	mmp_write(cpu, a + 300 * PAGE_SIZE, &w, 8);
	for (uint64_t off = 0; off < MMP_PMD_SIZE; off += sizeof(buf)) {
		mmp_read(cpu, a + off, buf, sizeof(buf));
		for (size_t i = 0; i < ARRAY_SIZE(buf); i++)
			zero &= buf[i] == (off + i * 8 == 300 * PAGE_SIZE ? w : 0);
	}
	tap_ok(counter(s, MMP_C_FAULT_HUGE_ZERO) == 1 && counter(s, MMP_C_SUBPAGE_CLEAR) == 512 &&
		       zero,
	       "%s %s: writing the huge zero page clears a THP (512 sub-pages), zero but the write",
	       arch, mmp_huge_order_name(order));
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* 64 KiB mTHPs, PTE mapped: first touch clears 16 sub-pages, COW copies one page. */
static void check_cow_mthp(const char *arch, int order)
{
	struct mmp_space *s = new_space(phys, arch), *c;
	struct mmp_cpu *pc, *cc;
	uint64_t a = map(s, 256 * KiB, RW), w = 0xbeef, got = 0;

	mmp_space_set_thp(s, 4, MMP_THP_ALWAYS);
	mmp_space_set_opt(s, MMP_OPT_HUGE_ORDER, order);
	mmp_cpu_attach(s, &pc);
	mmp_write(pc, a + 5 * PAGE_SIZE + 8, &w, 8);	/* target sub-page 5 of the first folio */
	tap_ok(counter(s, MMP_C_FOLIO_ALLOC_O4) == 1 && counter(s, MMP_C_SUBPAGE_CLEAR) == 16,
	       "%s %s: first touch of a 64K mTHP clears 16 sub-pages", arch,
	       mmp_huge_order_name(order));
	fill_pattern(pc, a, 256 * KiB);
	tap_eq(counter(s, MMP_C_SUBPAGE_CLEAR), 64, "... 4 folios, 64 sub-pages cleared");
	mmp_fork(s, &c);
	mmp_cpu_attach(c, &cc);
	mmp_space_reset_counters(c);
	tap_eq(mmp_write(cc, a + 37 * PAGE_SIZE + 16, &w, 8), 0, "... the child writes");
	tap_ok(counter(c, MMP_C_FAULT_COW) == 1 && counter(c, MMP_C_SUBPAGE_COPY) == 1,
	       "... a PTE-mapped COW copies one page");
	mmp_read(cc, a + 37 * PAGE_SIZE + 16, &got, 8);
	tap_ok(got == w && region_matches(cc, a, 256 * KiB, 37 * PAGE_SIZE + 16),
	       "... the child sees its write and the parent's data elsewhere");
	tap_ok(region_matches(pc, a, 256 * KiB, UINT64_MAX), "... the parent keeps its data");
	tap_eq(mmp_space_verify(s), 0, "... verify");
	mmp_cpu_detach(cc);
	mmp_space_destroy(c);
	mmp_cpu_detach(pc);
	mmp_space_destroy(s);
}

static void check_cow(void)
{
	const char *name;

	for_each_arch(i, name) {
		for (int order = 0; order < MMP_NR_HUGE_ORDERS; order++) {
			unsigned int r = rnd() % 512;

			check_cow_pmd(name, order, 0);
			check_cow_pmd(name, order, 255);
			check_cow_pmd(name, order, 511);
			check_cow_pmd(name, order, r);
			check_huge_zero_write(name, order);
			check_cow_mthp(name, order);
		}
	}
}

int main(void)
{
	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	printf("# rng seed %#llx\n", (unsigned long long)rng_state);
	check_orders_visit_once();
	check_ascending_and_gigantic();
	check_target_last_examples();
	check_sequential_examples();
	check_neighbourhood_runs();
	check_variants();
	check_copy_api();
	check_clear_copy();
	check_cow();
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
