/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The VMA index's lockless lookup (lib/vma_tree.c) fails only when its own
 * path changes. Built with the tree's source and a step hook, so a reader
 * can be held mid-walk: there a writer inserts and erases VMAs at the far
 * end of the space, rotating nodes there, and the reader resumes. Its first
 * walk, checked against the tree-wide count, fails; a reader whose
 * root-to-VMA path the writer did not re-link must then find its VMA (or
 * its hole) on the next walk, which checks only its path, though the writer
 * runs again in it; one whose path changed walks again and is never wrong.
 * A validation of the whole tree alone (one count for every change) fails
 * every reader here: the writer changes something on each walk.
 * Then the same with a writer thread, for lookups of the VMA at an address
 * and of the first one at or above it: counts, not times.
 */
#include <pthread.h>

#include "rcu.h"
#include "stress.h"
#include "util.h"

struct vma_tree;
/* Each step of a lockless walk comes here first (the tree's test hook). */
static void walk_step(const struct vma_tree *t, int depth);
#define vma_tree_walk_step(t, depth)	walk_step(t, depth)
#include "vma_tree.c"

#define P		4096ULL
#define FLOOR		0x10000ULL
#define NR		1023		/* a perfect tree when inserted in order */
#define EXTRA		12		/* VMAs the writer adds beyond the last one */

static struct mmp_vma vmas[NR], extra[EXTRA];
static struct vma_tree tree;
static bool extra_in;
static unsigned long moved;	/* VMAs of vmas[] a writer's batch gave a new parent */

/* Held reader: at which depth of each walk the writer runs, and the walks counted. */
static __thread int hold_depth;
static __thread unsigned long walks;

static uint64_t vma_base(int i)
{
	return FLOOR + (uint64_t)i * 4 * P;	/* two pages mapped, two a hole */
}

/* The writer: add the far VMAs in address order, or take them all out; both rotate. */
static void far_writer(void)
{
	static struct mmp_vma *parents[NR];

	for (int i = 0; i < NR; i++)
		parents[i] = vmas[i].rb_parent;
	for (int i = 0; i < EXTRA; i++) {
		if (extra_in) {
			vma_tree_erase(&tree, &extra[i]);
		} else {
			extra[i].start = vma_base(NR + i);
			extra[i].end = extra[i].start + 2 * P;
			vma_tree_insert(&tree, &extra[i]);
		}
	}
	extra_in = !extra_in;
	for (int i = 0; i < NR; i++)
		moved += vmas[i].rb_parent != parents[i];
}

static void walk_step(const struct vma_tree *t, int depth)
{
	(void)t;
	if (depth == 1)
		walks++;
	if (depth == hold_depth)
		far_writer();
}

/* The VMAs a locked walk to @addr passes, and their counts now; the path's length. */
static int locked_path(uint64_t addr, struct mmp_vma **path, unsigned int *seqs)
{
	struct mmp_vma *n = tree.root;
	int depth = 0;

	while (n) {
		path[depth] = n;
		seqs[depth++] = n->rb_seq;
		if (addr < n->start)
			n = n->rb_left;
		else if (addr >= n->end)
			n = n->rb_right;
		else
			break;
	}
	return depth;
}

static void test_held_reader(void)
{
	struct mmp_vma *root = tree.root;
	unsigned long untouched = 0, touched = 0, first_walk = 0, wrong = 0, gave_up = 0;
	unsigned long retried_right = 0, walked_again = 0;

	/* Every VMA and every hole, each held at a different depth. */
	for (int i = 0; i < NR; i++) {
		for (int hole = 0; hole < 2; hole++) {
			uint64_t addr = vma_base(i) + (hole ? 3 : 1) * P;
			struct mmp_vma *want = hole ? NULL : &vmas[i], *got = (void *)1;
			struct mmp_vma *path[VMA_TREE_MAX_WALK];
			unsigned int before[VMA_TREE_MAX_WALK];
			int len = locked_path(addr, path, before);
			bool ok, same = true;
			int held;

			/* The walk holds after noting the count of its held-th VMA, before reading it. */
			held = hold_depth = 1 + (i + hole) % len;
			walks = 0;
			rcu_read_lock();
			ok = vma_tree_lookup_rcu(&tree, addr, &got);
			rcu_read_unlock();
			hold_depth = 0;
			/* What it passed before the writer ran; below, it reads what the writer left. */
			for (int d = 0; d < held; d++)
				same &= path[d]->rb_seq == before[d];
			same &= tree.root == root;
			if (!ok)
				gave_up++;
			else if (got != want)
				wrong++;
			if (same) {
				untouched++;
				first_walk += ok && got == want && walks == 2;
			} else {
				touched++;
				retried_right += ok && got == want && walks > 2;
				walked_again += walks > 2;
			}
		}
	}
	tap_ok(moved > 0, "held readers: the writer rebalanced the tree (%lu times a VMA moved)", moved);
	tap_ok(untouched >= NR / 2 && first_walk == untouched,
	       "held readers: %lu of %lu whose path so far the writer left alone found their VMA or hole "
	       "on the first walk that checks the path only, the writer running in it too", first_walk, untouched);
	tap_ok(wrong == 0, "held readers: %lu wrong answers", wrong);
	/* Held on every walk, a reader whose path the writer re-links each time may give up. */
	tap_ok(touched > 0 && gave_up <= touched - retried_right,
	       "held readers: only those whose path the writer changed gave up (%lu gave up; of %lu "
	       "changed, %lu walked a path twice, %lu of them finding theirs)", gave_up, touched,
	       walked_again, retried_right);
	tap_ok(!vma_tree_check(&tree), "held readers: the tree is sound after");
}

struct race {
	int stop;
	unsigned long writes;
};

/* A thread that keeps adding, moving and removing VMAs far from the reader. */
static void *race_writer(void *arg)
{
	struct race *r = arg;
	uint64_t seed = 0x5eed;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		int k = xorshift64(&seed) % EXTRA;
		struct mmp_vma *v = &extra[k];

		if (!v->vm_next && !v->vm_prev && tree.root != v) {
			v->start = vma_base(NR + k);
			v->end = v->start + 2 * P;
			vma_tree_insert(&tree, v);
		} else if (seed & 0x100) {
			vma_tree_set_range(&tree, v, vma_base(NR + k), vma_base(NR + k) + (1 + (seed >> 9) % 3) * P);
		} else {
			vma_tree_erase(&tree, v);
			v->vm_next = v->vm_prev = NULL;
		}
		r->writes++;
	}
	return NULL;
}

static void test_race(void)
{
	static struct race r;
	struct mmp_vma *root = tree.root;
	unsigned long reads = 0, wrong = 0, gave_up = 0, retries = 0, path_walks = 0;
	uint64_t seed = 0x7654321;
	pthread_t w;

	/* The far VMAs out, and marked so (the writer tells by their list links). */
	if (extra_in)
		far_writer();
	for (int i = 0; i < EXTRA; i++)
		extra[i].vm_next = extra[i].vm_prev = NULL;
	pthread_create(&w, NULL, race_writer, &r);
	for (int i = 0; i < 200000; i++) {
		int k = xorshift64(&seed) % (NR / 2), hole = (seed >> 20) & 1;
		uint64_t addr = vma_base(k) + (hole ? 2 + (seed >> 21) % 2 : (seed >> 21) % 2) * P;
		/* The VMA at addr, then the walk on to the next one (lock_next_vma's). */
		for (int next = 0; next < 2; next++) {
			struct mmp_vma *got, *want = next ? &vmas[k + hole] : hole ? NULL : &vmas[k];
			bool found;

			walks = 0;
			rcu_read_lock();
			found = next ? vma_tree_lookup_next_rcu(&tree, addr, &got) :
				       vma_tree_lookup_rcu(&tree, addr, &got);
			rcu_read_unlock();
			if (!found)
				gave_up++;
			else if (got != want)
				wrong++;
			else
				reads++;
			/* One walk, or one more that checks the path only when the tree changed. */
			path_walks += walks == 2;
			retries += walks > 2;
		}
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	tap_ok(wrong == 0 && gave_up == 0 && retries == 0,
	       "a writer thread far away (%lu updates): %lu lookups right, %lu wrong, %lu gave up, "
	       "%lu walked a path twice (%lu walked it again checking the path only)", r.writes, reads,
	       wrong, gave_up, retries, path_walks);
	tap_ok(tree.root == root && !vma_tree_check(&tree),
	       "a writer thread far away: the root never moved, the tree is sound after");
}

int main(void)
{
	tree.floor = FLOOR;
	for (int i = 0; i < NR; i++) {
		vmas[i].start = vma_base(i);
		vmas[i].end = vma_base(i) + 2 * P;
		vma_tree_insert(&tree, &vmas[i]);
	}
	tap_require(!vma_tree_check(&tree), "%d VMAs in a sound tree", NR);
	test_held_reader();
	test_race();
	return tap_done();
}
