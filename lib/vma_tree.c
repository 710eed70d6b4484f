/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The VMA index: an intrusive AVL tree keyed by vm_start, augmented with the
 * largest gap below a VMA in each subtree (the rb_subtree_gap of the
 * kernel's pre-6.1 mm_rb, which the maple tree replaced), and the VMAs'
 * address-ordered list (vm_next, vm_prev). Every update walks from the nodes
 * it touched towards the root, rebalancing and refreshing heights and gaps
 * until nothing changes, so it is O(log n); a VMA's gap depends on its
 * predecessor, so an update also refreshes the VMA after the one it inserted
 * or erased. Each node caches its own gap, so an update reads only the path.
 *
 * Lockless readers (vma_tree_lookup_rcu) first walk bracketed by the tree's
 * seq, which every update holds odd: when nothing changed meanwhile, the
 * common case, that is all they pay. When something did, they walk again
 * validating only the path they walked, so that, as on the maple tree, a
 * change elsewhere in the space never makes them fail. Each VMA has a stamp,
 * rb_seq, set to the (odd) seq of the update that is about to change what a
 * walk reads of that VMA (start, end, rb_left, rb_right); the tree's
 * root_seq does the same for the root link. A VMA whose stamp equals the
 * tree's seq is being changed: the reader waits for the update to end. A
 * reader notes each stamp it passes, and at the end checks that none moved:
 * then every link it followed was in place, all at once, at an instant
 * between its last read and its first check, and no update had half-changed
 * any of them, so the walk is that of the tree before or after any update,
 * never of one in between. Heights, gaps and the list are not read by the
 * walk and take no stamp. An update re-links only the parent of the VMA it
 * adds or takes out and the few nodes of each rotation: a reader walks again
 * only when one of them lies on its root-to-VMA path. An insert re-links at
 * most one parent and one (double) rotation's nodes near the leaves; an
 * erase may rotate at each level up its path, but rotations high in the
 * tree are rare (one at height h needs about 2^h updates below it), so a
 * random reader's path changes on about (the nodes under the highest
 * re-linked node) / (all nodes) of the updates that overlap its walk; in a
 * tree of a few VMAs that is most of them.
 *
 * Why stamps and not the maple tree's copy-on-write nodes: the nodes here
 * are the VMAs themselves (intrusive, one cache line of index fields each),
 * so copying a node would mean copying a VMA; a stamp costs a word in that
 * line's padding and a compare and a store per VMA an update re-links (a
 * stamp, unlike a count made even again, needs no list of what to release),
 * only a reader that raced an update loads it, and locked lookups
 * (vma_tree_find) do not look at it. Freed VMAs still wait for a grace
 * period, so a walk never touches freed memory, and a walk is bounded.
 */
#include "vma_tree.h"

/* An AVL tree of 2^31 nodes is less than 45 high: a longer walk saw a tree in change. */
#define VMA_TREE_MAX_WALK	96
/* Validated walks whose own path changed before the caller falls back to the mmap lock. */
#define VMA_TREE_RCU_TRIES	8
/*
 * Waits for an update inside a VMA of the path that cost no walk: an update
 * is short, but its thread may be preempted.
 */
#define VMA_TREE_RCU_WAITS	256
/*
 * Test builds may define this to run at each step of a lockless walk, the
 * walk having read @depth nodes; nothing in the library does.
 */
#ifndef vma_tree_walk_step
#define vma_tree_walk_step(t, depth)	do { } while (0)
#endif

/* One update: the tree and its seq while inside (odd), the stamp of what it changes. */
struct tree_update {
	struct vma_tree *t;
	unsigned int seq;
};

/* About to change what a walk reads of @n: stamp it with this update. */
static inline void hold(struct tree_update *u, struct mmp_vma *n)
{
	if (n->rb_seq == u->seq)
		return;
	WRITE_ONCE(n->rb_seq, u->seq);
	__atomic_thread_fence(__ATOMIC_RELEASE);	/* smp_wmb: the stamp before the changes */
}

static inline void hold_root(struct tree_update *u)
{
	if (u->t->root_seq == u->seq)
		return;
	WRITE_ONCE(u->t->root_seq, u->seq);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void update_begin(struct tree_update *u, struct vma_tree *t)
{
	u->t = t;
	raw_write_seqcount_begin(&t->seq);
	u->seq = t->seq.sequence;
}

/* The changes before the seq says the update is over (a release store). */
static inline void update_end(struct tree_update *u)
{
	raw_write_seqcount_end(&u->t->seq);
}

static inline int height(const struct mmp_vma *n)
{
	return n ? n->rb_height : 0;
}

static inline uint64_t subtree_gap(const struct mmp_vma *n)
{
	return n ? n->rb_subtree_gap : 0;
}

/* Refresh @n's height and subtree gap from its children (the augmented callback). */
static void update(struct mmp_vma *n)
{
	int hl = height(n->rb_left), hr = height(n->rb_right);
	uint64_t gap = MAX(n->rb_gap, subtree_gap(n->rb_left));

	n->rb_height = 1 + MAX(hl, hr);
	n->rb_subtree_gap = MAX(gap, subtree_gap(n->rb_right));
}

static void set_left(struct tree_update *u, struct mmp_vma *n, struct mmp_vma *c)
{
	hold(u, n);
	WRITE_ONCE(n->rb_left, c);
	if (c)
		c->rb_parent = n;
}

static void set_right(struct tree_update *u, struct mmp_vma *n, struct mmp_vma *c)
{
	hold(u, n);
	WRITE_ONCE(n->rb_right, c);
	if (c)
		c->rb_parent = n;
}

/* Put @new where @old hangs under @parent (or at the root). */
static void replace_child(struct tree_update *u, struct mmp_vma *parent, struct mmp_vma *old,
			  struct mmp_vma *new)
{
	if (!parent) {
		hold_root(u);
		WRITE_ONCE(u->t->root, new);
	} else {
		hold(u, parent);
		if (parent->rb_left == old)
			WRITE_ONCE(parent->rb_left, new);
		else
			WRITE_ONCE(parent->rb_right, new);
	}
	if (new)
		new->rb_parent = parent;
}

static struct mmp_vma *rotate_left(struct tree_update *u, struct mmp_vma *x)
{
	struct mmp_vma *y = x->rb_right;

	replace_child(u, x->rb_parent, x, y);
	set_right(u, x, y->rb_left);
	set_left(u, y, x);
	update(x);
	update(y);
	return y;
}

static struct mmp_vma *rotate_right(struct tree_update *u, struct mmp_vma *x)
{
	struct mmp_vma *y = x->rb_left;

	replace_child(u, x->rb_parent, x, y);
	set_left(u, x, y->rb_right);
	set_right(u, y, x);
	update(x);
	update(y);
	return y;
}

/*
 * From @n towards the root: rebalance and refresh each node, stopping where a
 * node's height and subtree gap come out as they were (its ancestors depended
 * on nothing else).
 */
static void fix_up(struct tree_update *u, struct mmp_vma *n)
{
	while (n) {
		int bf = height(n->rb_left) - height(n->rb_right);
		int old_height = n->rb_height;
		uint64_t old_gap = n->rb_subtree_gap;

		if (bf > 1) {
			struct mmp_vma *l = n->rb_left;

			if (height(l->rb_left) < height(l->rb_right))
				rotate_left(u, l);
			n = rotate_right(u, n);
		} else if (bf < -1) {
			struct mmp_vma *r = n->rb_right;

			if (height(r->rb_right) < height(r->rb_left))
				rotate_right(u, r);
			n = rotate_left(u, n);
		} else {
			update(n);
			if (n->rb_height == old_height && n->rb_subtree_gap == old_gap)
				return;
		}
		n = n->rb_parent;
	}
}

void vma_tree_insert(struct vma_tree *t, struct mmp_vma *vma)
{
	struct mmp_vma *parent = NULL, *prev = NULL, *next = NULL, *n = t->root;
	struct tree_update u;
	bool left = false;

	while (n) {
		parent = n;
		left = vma->start < n->start;
		if (left) {
			next = n;
			n = n->rb_left;
		} else {
			prev = n;
			n = n->rb_right;
		}
	}
	update_begin(&u, t);
	vma->rb_left = vma->rb_right = NULL;
	vma->rb_parent = parent;
	vma->rb_height = 1;
	vma->vm_prev = prev;
	vma->vm_next = next;
	if (prev)
		prev->vm_next = vma;
	else
		t->first = vma;
	if (next)
		next->vm_prev = vma;
	else
		t->last = vma;
	vma->rb_gap = vma_gap(t, vma);
	update(vma);
	/* Linked last, after its count's even value: a reader finds the VMA complete. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (!parent) {
		hold_root(&u);
		WRITE_ONCE(t->root, vma);
	} else {
		hold(&u, parent);
		if (left)
			WRITE_ONCE(parent->rb_left, vma);
		else
			WRITE_ONCE(parent->rb_right, vma);
	}
	t->nr++;
	fix_up(&u, parent);
	if (next) {
		next->rb_gap = vma_gap(t, next);	/* it shrank */
		fix_up(&u, next);
	}
	update_end(&u);
}

void vma_tree_erase(struct vma_tree *t, struct mmp_vma *z)
{
	struct mmp_vma *next = z->vm_next, *from, *moved = NULL;
	struct tree_update u;

	update_begin(&u, t);
	if (z->rb_left && z->rb_right) {
		/* Two children: z's successor, the leftmost of its right subtree, takes its place. */
		struct mmp_vma *y = next, *yp = y->rb_parent;

		if (yp != z) {
			set_left(&u, yp, y->rb_right);
			set_right(&u, y, z->rb_right);
			from = yp;
		} else {
			from = y;
		}
		set_left(&u, y, z->rb_left);
		/* To its new parent y looks like z until refreshed below. */
		y->rb_height = z->rb_height;
		y->rb_subtree_gap = z->rb_subtree_gap;
		replace_child(&u, z->rb_parent, z, y);
		moved = y;
	} else {
		from = z->rb_parent;
		replace_child(&u, from, z, z->rb_left ? z->rb_left : z->rb_right);
	}
	if (z->vm_prev)
		z->vm_prev->vm_next = next;
	else
		t->first = next;
	if (next)
		next->vm_prev = z->vm_prev;
	else
		t->last = z->vm_prev;
	t->nr--;
	if (next)
		next->rb_gap = vma_gap(t, next);	/* it grew */
	fix_up(&u, from);
	if (moved)
		fix_up(&u, moved);
	if (next)
		fix_up(&u, next);
	update_end(&u);
	/*
	 * A lockless reader may still stand on z: its links stay as they were,
	 * and the link to it that changed is on that reader's path.
	 */
}

void vma_tree_set_range(struct vma_tree *t, struct mmp_vma *vma, uint64_t start, uint64_t end)
{
	struct tree_update u;

	update_begin(&u, t);
	hold(&u, vma);
	WRITE_ONCE(vma->start, start);
	WRITE_ONCE(vma->end, end);
	vma->rb_gap = vma_gap(t, vma);
	fix_up(&u, vma);
	if (vma->vm_next) {
		vma->vm_next->rb_gap = vma_gap(t, vma->vm_next);
		fix_up(&u, vma->vm_next);
	}
	update_end(&u);
}

struct mmp_vma *vma_tree_find(const struct vma_tree *t, uint64_t addr)
{
	struct mmp_vma *n = t->root, *found = NULL;

	while (n) {
		if (addr < n->end) {
			found = n;
			if (addr >= n->start)
				break;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return found;
}

/* Is the update that stamped @stamp still inside? Then what it stamped is half changed. */
static __always_inline bool stamp_busy(const struct vma_tree *t, unsigned int stamp)
{
	unsigned int seq = __atomic_load_n(&t->seq.sequence, __ATOMIC_ACQUIRE);

	return stamp == seq && (seq & 1);
}

/*
 * One walk from the root, noting each VMA's stamp (*@path, @seqs); false when
 * an update is inside one of them or the walk ran too long.
 */
static __always_inline bool walk_rcu(const struct vma_tree *t, uint64_t addr, bool next,
				     struct mmp_vma **foundp, struct mmp_vma **path,
				     unsigned int *seqs, int *depthp)
{
	struct mmp_vma *n = READ_ONCE(t->root);
	int depth = 0;

	while (n) {
		unsigned int seq = __atomic_load_n(&n->rb_seq, __ATOMIC_ACQUIRE);

		/* Its last update over (the seq read after the stamp) before its fields are read. */
		if (stamp_busy(t, seq) || depth == VMA_TREE_MAX_WALK)
			return false;
		path[depth] = n;
		seqs[depth++] = seq;
		vma_tree_walk_step(t, depth);
		if (addr < READ_ONCE(n->start)) {
			/* The last VMA turned left at is the first above @addr. */
			if (next)
				*foundp = n;
			n = READ_ONCE(n->rb_left);
		} else if (addr >= READ_ONCE(n->end)) {
			n = READ_ONCE(n->rb_right);
		} else {
			*foundp = n;
			break;
		}
	}
	*depthp = depth;
	return true;
}

/* Walks that validate their own path only: after a walk saw the tree change. */
static __attribute__((noinline)) bool lookup_path_rcu(const struct vma_tree *t, uint64_t addr,
						      bool next, struct mmp_vma **vmap)
{
	struct mmp_vma *path[VMA_TREE_MAX_WALK];
	unsigned int seqs[VMA_TREE_MAX_WALK];

	for (int tries = 0, waits = 0; tries < VMA_TREE_RCU_TRIES; tries++) {
		struct mmp_vma *found = NULL;
		unsigned int root_seq = __atomic_load_n(&t->root_seq, __ATOMIC_ACQUIRE);
		int depth, i;

		if (stamp_busy(t, root_seq) || !walk_rcu(t, addr, next, &found, path, seqs, &depth)) {
			cpu_relax();
			if (++waits <= VMA_TREE_RCU_WAITS)
				tries--;
			continue;
		}
		/* Only the path: a stamp elsewhere may move as it likes. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* smp_rmb: the walk's loads first */
		for (i = 0; i < depth; i++)
			if (__atomic_load_n(&path[i]->rb_seq, __ATOMIC_RELAXED) != seqs[i])
				break;
		if (i == depth && __atomic_load_n(&t->root_seq, __ATOMIC_RELAXED) == root_seq) {
			*vmap = found;
			return true;
		}
	}
	return false;
}

static __always_inline bool lookup_rcu(const struct vma_tree *t, uint64_t addr, bool next,
				       struct mmp_vma **vmap)
{
	unsigned int seq;

	/* No update at all during the walk: its answer stands, with no count to check. */
	if (raw_seqcount_try_begin(&t->seq, &seq)) {
		struct mmp_vma *n = READ_ONCE(t->root), *found = NULL;

		for (int steps = 0; n && steps < VMA_TREE_MAX_WALK; steps++) {
			vma_tree_walk_step(t, steps + 1);
			if (addr < READ_ONCE(n->start)) {
				if (next)
					found = n;
				n = READ_ONCE(n->rb_left);
			} else if (addr >= READ_ONCE(n->end)) {
				n = READ_ONCE(n->rb_right);
			} else {
				found = n;
				break;
			}
		}
		if (!read_seqcount_retry(&t->seq, seq)) {
			*vmap = found;
			return true;
		}
	}
	return lookup_path_rcu(t, addr, next, vmap);
}

bool vma_tree_lookup_rcu(const struct vma_tree *t, uint64_t addr, struct mmp_vma **vmap)
{
	return lookup_rcu(t, addr, false, vmap);
}

bool vma_tree_lookup_next_rcu(const struct vma_tree *t, uint64_t addr, struct mmp_vma **vmap)
{
	return lookup_rcu(t, addr, true, vmap);
}

/* The last VMA of subtree @n whose own gap is at least @len, or NULL. */
static struct mmp_vma *rightmost_fit(const struct vma_tree *t, struct mmp_vma *n, uint64_t len)
{
	while (n && n->rb_subtree_gap >= len) {
		if (subtree_gap(n->rb_right) >= len)
			n = n->rb_right;
		else if (n->rb_gap >= len)
			return n;
		else
			n = n->rb_left;
	}
	return NULL;
}

struct mmp_vma *vma_tree_gap_at_or_before(const struct vma_tree *t, struct mmp_vma *vma,
					  uint64_t len)
{
	struct mmp_vma *found;

	if (!vma || vma->rb_gap >= len)
		return vma;
	found = rightmost_fit(t, vma->rb_left, len);
	/* Then up: each ancestor we reach from its right side, and its left subtree, precede. */
	while (!found && vma->rb_parent) {
		struct mmp_vma *p = vma->rb_parent;

		if (p->rb_right == vma) {
			if (p->rb_gap >= len)
				return p;
			found = rightmost_fit(t, p->rb_left, len);
		}
		vma = p;
	}
	return found;
}

/*
 * Check the subtree of @n, visited in order against the list from *@cursor;
 * returns its height, or -1 after setting *@why.
 */
static int check_node(const struct vma_tree *t, const struct mmp_vma *n, const struct mmp_vma *parent,
		      const struct mmp_vma **cursor, unsigned int *count, const char **why)
{
	int hl, hr;
	uint64_t gap;

	if (!n)
		return 0;
	if (n->rb_parent != parent) {
		*why = "a VMA's parent link is wrong";
		return -1;
	}
	hl = check_node(t, n->rb_left, n, cursor, count, why);
	if (hl < 0)
		return -1;
	if (n != *cursor) {
		*why = "the tree's order differs from the list's";
		return -1;
	}
	*cursor = n->vm_next;
	(*count)++;
	hr = check_node(t, n->rb_right, n, cursor, count, why);
	if (hr < 0)
		return -1;
	if (n->rb_height != 1 + MAX(hl, hr) || hl - hr > 1 || hr - hl > 1) {
		*why = "a VMA's height is wrong or its subtree unbalanced";
		return -1;
	}
	if (n->rb_gap != vma_gap(t, n)) {
		*why = "a VMA's gap is stale";
		return -1;
	}
	gap = MAX(n->rb_gap, MAX(subtree_gap(n->rb_left), subtree_gap(n->rb_right)));
	if (n->rb_subtree_gap != gap) {
		*why = "a VMA's subtree gap is stale";
		return -1;
	}
	return n->rb_height;
}

const char *vma_tree_check(const struct vma_tree *t)
{
	const char *why = NULL;
	unsigned int in_tree = 0, in_list = 0;
	const struct mmp_vma *prev = NULL, *cursor = t->first;

	if (t->root && t->root->rb_parent)
		return "the root has a parent";
	if (check_node(t, t->root, NULL, &cursor, &in_tree, &why) < 0)
		return why;
	for (const struct mmp_vma *v = t->first; v; prev = v, v = v->vm_next) {
		if (v->vm_prev != prev)
			return "the VMA list's back links are wrong";
		if (prev && prev->end > v->start)
			return "the VMA list is out of order or overlaps";
		if (v->start >= v->end)
			return "a VMA is empty";
		if (vma_tree_find(t, v->start) != v)
			return "a VMA of the list is not found in the tree";
		in_list++;
	}
	if (t->last != prev)
		return "the VMA list's last entry is wrong";
	if (in_tree != t->nr || in_list != t->nr)
		return "the VMA count differs from the tree or the list";
	return NULL;
}
