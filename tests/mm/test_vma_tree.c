/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The VMA index (lib/vma_tree.c) against a sorted array, the structure it
 * replaced: random inserts, erases, range changes, lookups and gap searches,
 * with the tree's invariants checked as it goes; top-down placement against
 * the array's linear scan; and lockless lookups racing a writer, which must
 * find a VMA that never moves and never find one in a hole that never fills.
 */
#include <pthread.h>

#include "mm.h"
#include "rcu.h"
#include "stress.h"
#include "util.h"
#include "vma_tree.h"

#define P		4096ULL
#define FLOOR		0x10000ULL
#define SPAN_PAGES	16384
#define MAX_REF		4096

struct ref {
	uint64_t start, end;
	struct mmp_vma *vma;
};

static struct ref ref[MAX_REF];
static int nr_ref;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(uint64_t n)
{
	return xorshift64(&rng) % n;
}

/* Index of the first reference range ending above @addr. */
static int ref_index(uint64_t addr)
{
	int lo = 0, hi = nr_ref;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (ref[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t ref_gap(int i)
{
	uint64_t below = i ? ref[i - 1].end : FLOOR;

	return ref[i].start > below ? ref[i].start - below : 0;
}

static bool ref_matches(struct vma_tree *t)
{
	struct mmp_vma *v = t->first;

	for (int i = 0; i < nr_ref; i++, v = v->vm_next)
		if (!v || v != ref[i].vma || v->start != ref[i].start || v->end != ref[i].end)
			return false;
	return !v && t->nr == (unsigned int)nr_ref;
}

static void op_insert(struct vma_tree *t)
{
	uint64_t start = FLOOR + rnd(SPAN_PAGES) * P, len = (1 + rnd(8)) * P;
	int i = ref_index(start);
	struct mmp_vma *vma;

	if (nr_ref == MAX_REF || (i < nr_ref && ref[i].start < start + len))
		return;
	vma = calloc(1, sizeof(*vma));
	vma->start = start;
	vma->end = start + len;
	vma_tree_insert(t, vma);
	memmove(&ref[i + 1], &ref[i], (nr_ref - i) * sizeof(*ref));
	ref[i] = (struct ref){ start, start + len, vma };
	nr_ref++;
}

static void op_erase(struct vma_tree *t)
{
	int i;

	if (!nr_ref)
		return;
	i = rnd(nr_ref);
	vma_tree_erase(t, ref[i].vma);
	free(ref[i].vma);
	memmove(&ref[i], &ref[i + 1], (nr_ref - i - 1) * sizeof(*ref));
	nr_ref--;
}

/* Move one end of a VMA within its neighbours, as split, merge and mremap do. */
static void op_set_range(struct vma_tree *t)
{
	uint64_t lo, hi, start, end;
	int i;

	if (!nr_ref)
		return;
	i = rnd(nr_ref);
	lo = i ? ref[i - 1].end : FLOOR;
	hi = i + 1 < nr_ref ? ref[i + 1].start : FLOOR + (SPAN_PAGES + 8) * P;
	start = lo + rnd((ref[i].end - lo) / P) * P;
	end = MAX(start + P, hi - rnd((hi - start) / P) * P);
	if (end > hi)
		return;
	vma_tree_set_range(t, ref[i].vma, start, end);
	ref[i].start = start;
	ref[i].end = end;
}

static bool check_lookups(struct vma_tree *t)
{
	for (int k = 0; k < 8; k++) {
		uint64_t addr = FLOOR - 4 * P + rnd((SPAN_PAGES + 16) * P);
		int i = ref_index(addr);
		struct mmp_vma *want_next = i < nr_ref ? ref[i].vma : NULL, *got;
		struct mmp_vma *want = want_next && ref[i].start <= addr ? want_next : NULL;

		if (vma_tree_find(t, addr) != want_next)
			return false;
		rcu_read_lock();
		if (!vma_tree_lookup_rcu(t, addr, &got) || got != want ||
		    !vma_tree_lookup_next_rcu(t, addr, &got) || got != want_next) {
			rcu_read_unlock();
			return false;
		}
		rcu_read_unlock();
	}
	return true;
}

static bool check_gaps(struct vma_tree *t)
{
	for (int k = 0; k < 4 && nr_ref; k++) {
		int i = rnd(nr_ref), j;
		uint64_t len = (1 + rnd(24)) * P;

		for (j = i; j >= 0 && ref_gap(j) < len; j--)
			;
		if (vma_tree_gap_at_or_before(t, ref[i].vma, len) != (j >= 0 ? ref[j].vma : NULL))
			return false;
	}
	return true;
}

static void test_random(void)
{
	struct vma_tree t = { .floor = FLOOR };
	const char *why = NULL;
	bool same = true, lookups = true, gaps = true;
	int steps = 0, max_nr = 0;

	for (int round = 0; round < 4 && !why && same; round++) {
		/* Fill up, churn, then drain: the tree grows and shrinks through every shape. */
		for (int op = 0; op < 20000 && !why && same && lookups && gaps; op++, steps++) {
			int r = rnd(10), bias = round % 2 ? 3 : 6;

			if (r < bias)
				op_insert(&t);
			else if (r < 8)
				op_erase(&t);
			else
				op_set_range(&t);
			max_nr = MAX(max_nr, nr_ref);
			same = ref_matches(&t);
			lookups = check_lookups(&t);
			gaps = check_gaps(&t);
			if (op % 16 == 0)
				why = vma_tree_check(&t);
		}
	}
	tap_ok(!why, "random ops: the tree stays a balanced, gap-augmented index%s%s",
	       why ? ": " : "", why ? why : "");
	tap_ok(same, "random ops: tree and list hold what the sorted array holds (%d steps, up to %d VMAs)",
	       steps, max_nr);
	tap_ok(lookups, "random ops: find and the lockless lookup answer as the array does");
	tap_ok(gaps, "random ops: the gap search finds the highest gap the array's scan finds");
	while (nr_ref)
		op_erase(&t);
	tap_ok(!t.root && !t.first && !t.last && !t.nr, "random ops: drained, the tree is empty");
}

/* A tall tree built in address order (the mmap pattern) stays logarithmic. */
static void test_height(void)
{
	static struct mmp_vma v[65536];
	struct vma_tree t = { .floor = FLOOR };

	for (int i = 0; i < 65536; i++) {
		v[i].start = FLOOR + (uint64_t)(65536 - i) * 2 * P;	/* top-down, as placement goes */
		v[i].end = v[i].start + P;
		vma_tree_insert(&t, &v[i]);
	}
	tap_ok(!vma_tree_check(&t) && t.root->rb_height <= 24,
	       "65536 VMAs inserted top-down: height %d (AVL bound 24)", t.root->rb_height);
	for (int i = 0; i < 65536; i += 2)
		vma_tree_erase(&t, &v[i]);
	tap_ok(!vma_tree_check(&t) && t.nr == 32768 && t.root->rb_subtree_gap == 3 * P,
	       "every other one erased: sound, and the largest gap is three pages");
}

/* The linear scan get_unmapped_area() did over the sorted array. */
static uint64_t ref_unmapped_area(struct mmp_space *s, uint64_t len, uint64_t align)
{
	static uint64_t st[MMP_MAX_MAP_COUNT + 2], en[MMP_MAX_MAP_COUNT + 2];
	uint64_t top = s->mmap_base;
	int n = 0, i;

	for (struct mmp_vma *v = s->vmas.first; v; v = v->vm_next, n++) {
		st[n] = v->start;
		en[n] = v->end;
	}
	for (i = 0; i < n && en[i] <= top; i++)
		;
	for (;; i--) {
		uint64_t gap_end = i < n ? MIN(top, st[i]) : top;
		uint64_t gap_start = i > 0 ? en[i - 1] : MMP_MMAP_MIN_ADDR;

		if (gap_end >= gap_start + len) {
			uint64_t addr = (gap_end - len) & ~(align - 1);

			if (addr >= gap_start && addr >= MMP_MMAP_MIN_ADDR)
				return addr;
		}
		if (i <= 0)
			break;
	}
	return 0;
}

static void test_placement(struct mmp_phys *phys)
{
	/* The reference back end, always registered last. */
	struct mmp_space *s = new_space(phys, mmp_arch_name(mmp_arch_count() - 1));
	int checked = 0, same = 0, mapped = 0;
	uint64_t top = s->mmap_base, out;

	/* Random fixed mappings below and across mmap_base, alternating protections (no merges). */
	for (int i = 0; i < 3000; i++) {
		uint64_t addr = top - (1 + rnd(1ULL << 14)) * 64 * KiB + rnd(1ULL << 12) * 64 * KiB;
		uint64_t len = (1 + rnd(15)) * P * (rnd(8) ? 1 : 128);
		int prot = i % 2 ? MMP_PROT_READ : MMP_PROT_READ | MMP_PROT_WRITE;

		mapped += !mmp_mmap(s, addr, len, prot, MMP_MAP_FIXED, &out);
		for (int k = 0; k < 2; k++) {
			uint64_t want_len = (1 + rnd(64)) * P * (rnd(4) ? 1 : 512);
			uint64_t align = rnd(3) ? P : PMD_SIZE;

			checked++;
			same += get_unmapped_area(s, 0, want_len, align) ==
				ref_unmapped_area(s, want_len, align);
		}
	}
	tap_ok(same == checked, "placement: %d of %d searches land where the array's scan lands "
	       "(%d mappings)", same, checked, mapped);
	tap_ok(mmp_space_verify(s) == 0, "placement: the space verifies");
	mmp_space_destroy(s);
}

/* ---- lockless lookups against a writer ------------------------------------------ */

#define SLOTS		64
#define SLOT_PAGES	16
#define READS		400000

struct race {
	struct vma_tree t;
	struct mmp_vma stable[SLOTS];
	struct mmp_vma *churn[SLOTS];
	int stop;
	unsigned long wrong, retries, reads;
};

static void free_rcu_vma(struct rcu_head *head)
{
	free(caa_container_of(head, struct mmp_vma, rcu));
}

static uint64_t slot_base(int k)
{
	return FLOOR + (uint64_t)k * SLOT_PAGES * P;
}

/* Pages 0-3 of a slot: a VMA that never changes; 4-5: never mapped; 6-13: churn. */
static void *race_writer(void *arg)
{
	struct race *r = arg;
	uint64_t seed = 0x1234567;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		int k;
		struct mmp_vma *v;

		k = xorshift64(&seed) % SLOTS;
		v = r->churn[k];
		if (!v) {
			v = calloc(1, sizeof(*v));
			v->start = slot_base(k) + 6 * P;
			v->end = slot_base(k) + 10 * P;
			vma_tree_insert(&r->t, v);
			r->churn[k] = v;
		} else if (seed & 0x100) {
			vma_tree_set_range(&r->t, v, slot_base(k) + (6 + (seed >> 9) % 2) * P,
					   slot_base(k) + (12 + (seed >> 10) % 2) * P);
		} else {
			vma_tree_erase(&r->t, v);
			call_rcu(&v->rcu, free_rcu_vma);
			r->churn[k] = NULL;
		}
	}
	return NULL;
}

static void *race_reader(void *arg)
{
	struct race *r = arg;
	uint64_t seed = 0x7654321;

	for (int i = 0; i < READS; i++) {
		int k, hole;
		uint64_t addr;
		struct mmp_vma *got;

		k = xorshift64(&seed) % SLOTS;
		hole = (seed >> 8) & 1;
		addr = slot_base(k) + (hole ? 4 + (seed >> 9) % 2 : (seed >> 9) % 4) * P;
		rcu_read_lock();
		if (!vma_tree_lookup_rcu(&r->t, addr, &got))
			r->retries++;
		else if (got != (hole ? NULL : &r->stable[k]))
			r->wrong++;
		else
			r->reads++;
		rcu_read_unlock();
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_rcu_race(void)
{
	static struct race r;
	pthread_t w, rd;

	r.t.floor = FLOOR;
	for (int k = 0; k < SLOTS; k++) {
		r.stable[k].start = slot_base(k);
		r.stable[k].end = slot_base(k) + 4 * P;
		vma_tree_insert(&r.t, &r.stable[k]);
	}
	pthread_create(&w, NULL, race_writer, &r);
	pthread_create(&rd, NULL, race_reader, &r);
	pthread_join(rd, NULL);
	pthread_join(w, NULL);
	tap_ok(r.wrong == 0, "lockless lookups racing a writer: %lu wrong answers, %lu right, %lu "
	       "gave up (writer too busy)", r.wrong, r.reads, r.retries);
	tap_ok(!vma_tree_check(&r.t), "lockless lookups racing a writer: the tree is sound after");
	for (int k = 0; k < SLOTS; k++)
		if (r.churn[k]) {
			vma_tree_erase(&r.t, r.churn[k]);
			free(r.churn[k]);
		}
	rcu_barrier();
}

int main(void)
{
	struct mmp_phys *phys;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "create a phys");
	test_random();
	test_height();
	test_placement(phys);
	test_rcu_race();
	mmp_phys_destroy(phys);
	return tap_done();
}
