/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * VMAs: a sorted array of disjoint [start, end) ranges, searched by bisection.
 * Writers hold the mmap lock for writing; faults read it under the read lock.
 */
#include <string.h>

#include "internal.h"
#include "mm.h"

/* Index of the first VMA whose end is above @addr (nr_vmas if none). */
int vma_index(struct mmp_space *s, uint64_t addr)
{
	int lo = 0, hi = s->nr_vmas;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (s->vmas[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The VMA containing @addr, or NULL (unlike the kernel's find_vma, not the next one). */
struct mmp_vma *find_vma(struct mmp_space *s, uint64_t addr)
{
	int i = vma_index(s, addr);

	if (i < (int)s->nr_vmas && s->vmas[i].start <= addr)
		return &s->vmas[i];
	return NULL;
}

struct mmp_vma *find_vma_intersection(struct mmp_space *s, uint64_t start, uint64_t end)
{
	int i = vma_index(s, start);

	if (i < (int)s->nr_vmas && s->vmas[i].start < end)
		return &s->vmas[i];
	return NULL;
}

/* Room in the array; max_map_count is the callers' to check, as the kernel's are. */
static int vma_reserve(struct mmp_space *s, unsigned int more)
{
	if (s->nr_vmas + more > s->vma_cap) {
		unsigned int cap = MAX(16u, s->vma_cap * 2);
		struct mmp_vma *v;

		while (cap < s->nr_vmas + more)
			cap *= 2;
		v = realloc(s->vmas, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->vmas = v;
		s->vma_cap = cap;
	}
	return 0;
}

/* ---- anon_vma ------------------------------------------------------------------- */

/* 32-bit ids, as the memmap stores them; 0 is never handed out. */
static uint32_t anon_vma_next_id = 1;

struct anon_vma *anon_vma_alloc(struct anon_vma *parent)
{
	struct anon_vma *av = malloc(sizeof(*av));

	if (!av)
		return NULL;
	do
		av->id = __atomic_fetch_add(&anon_vma_next_id, 1, __ATOMIC_RELAXED);
	while (!av->id);
	av->parent = parent;
	av->refcount = 1;
	if (parent)
		anon_vma_get(parent);
	return av;
}

void anon_vma_get(struct anon_vma *av)
{
	if (av)
		__atomic_fetch_add(&av->refcount, 1, __ATOMIC_RELAXED);
}

void anon_vma_put(struct anon_vma *av)
{
	while (av && __atomic_sub_fetch(&av->refcount, 1, __ATOMIC_ACQ_REL) == 0) {
		struct anon_vma *parent = av->parent;

		free(av);
		av = parent;
	}
}

/* Can a folio of anon_vma @id be mapped in a VMA of @av? (its lineage holds @id) */
bool anon_vma_covers(const struct anon_vma *av, uint32_t id)
{
	for (; av; av = av->parent)
		if (av->id == id)
			return true;
	return false;
}

/* ---- the VMA array -------------------------------------------------------------- */

/* Insert a VMA into a hole; the caller made sure the range is free. Takes an anon_vma ref. */
int vma_insert(struct mmp_space *s, uint64_t start, uint64_t end, unsigned long flags,
	       uint64_t pgoff, struct anon_vma *anon_vma)
{
	int i, err = vma_reserve(s, 1);

	if (err)
		return err;
	i = vma_index(s, start);
	memmove(&s->vmas[i + 1], &s->vmas[i], (s->nr_vmas - i) * sizeof(*s->vmas));
	s->vmas[i] = (struct mmp_vma){ .start = start, .end = end, .flags = flags, .pgoff = pgoff,
				       .anon_vma = anon_vma };
	anon_vma_get(anon_vma);
	s->nr_vmas++;
	return 0;
}

/* Make @addr a VMA boundary (split_vma) if a VMA straddles it. */
int vma_split(struct mmp_space *s, uint64_t addr)
{
	int i = vma_index(s, addr), err;

	if (i >= (int)s->nr_vmas || s->vmas[i].start >= addr)
		return 0;
	err = vma_reserve(s, 1);
	if (err)
		return err;
	/* vma_adjust_trans_huge: no huge PMD may straddle a VMA boundary. */
	if (addr & ~PMD_MASK) {
		mmp_pte_t *pmdp = pmd_offset(s, addr);

		if (pmdp && (entry_flags(s, READ_ONCE(*pmdp), MMP_PMD) & MMP_E_LEAF))
			split_huge_pmd(s, pmdp, addr & PMD_MASK);
	}
	memmove(&s->vmas[i + 1], &s->vmas[i], (s->nr_vmas - i) * sizeof(*s->vmas));
	s->vmas[i].end = addr;
	s->vmas[i + 1].start = addr;
	s->vmas[i + 1].pgoff = linear_page_index(&s->vmas[i], addr);
	anon_vma_get(s->vmas[i].anon_vma);	/* both halves share it */
	s->nr_vmas++;
	return 0;
}

/* How many VMAs straddle @start or @end: the splits [start, end) needs. */
unsigned int vma_splits_needed(struct mmp_space *s, uint64_t start, uint64_t end)
{
	struct mmp_vma *a = find_vma(s, start), *b = find_vma(s, end);

	return (a && a->start < start) + (b && b->start < end);
}

/*
 * Make [start, end) a run of whole VMAs (the splits of mprotect and madvise),
 * or change nothing and return -ENOMEM when that would pass max_map_count.
 */
int vma_split_range(struct mmp_space *s, uint64_t start, uint64_t end)
{
	int err;

	if (s->nr_vmas + vma_splits_needed(s, start, end) > MMP_MAX_MAP_COUNT)
		return -ENOMEM;
	err = vma_split(s, start);
	return err ? err : vma_split(s, end);
}

/* Drop every VMA inside [start, end); both ends are already boundaries. */
void vma_remove_range(struct mmp_space *s, uint64_t start, uint64_t end)
{
	int i = vma_index(s, start), j = i;

	while (j < (int)s->nr_vmas && s->vmas[j].end <= end)
		anon_vma_put(s->vmas[j++].anon_vma);
	memmove(&s->vmas[i], &s->vmas[j], (s->nr_vmas - j) * sizeof(*s->vmas));
	s->nr_vmas -= j - i;
}

/*
 * A VMA of a forked child links its parents' anon_vmas too (a chain of more
 * than one): it cannot lend its anon_vma to a VMA that has none, or that one
 * would find the parents' folios (vma_had_uncowed_parents).
 */
static bool anon_vma_has_parents(const struct anon_vma *av)
{
	return av && av->parent;
}

/*
 * Can @a and @b (adjacent) become one VMA? Same flags, contiguous pgoff, and
 * compatible anon_vmas: the same, or one of them not yet faulted in while the
 * other has no parents (is_mergeable_anon_vma).
 */
static bool vma_mergeable(const struct mmp_vma *a, const struct mmp_vma *b)
{
	return a->end == b->start && a->flags == b->flags &&
	       b->pgoff == linear_page_index(a, a->end) &&
	       (a->anon_vma == b->anon_vma ||
		(!a->anon_vma && !anon_vma_has_parents(b->anon_vma)) ||
		(!b->anon_vma && !anon_vma_has_parents(a->anon_vma)));
}

/*
 * Merge the VMAs just made or changed in [start, end) with each other and
 * with their neighbours (vma_merge_new_range, vma_merge_existing_range): only
 * at boundaries from @start to @end. Two VMAs beside the range are left as
 * they are even if they could merge, as the kernel leaves them.
 */
void vma_merge_range(struct mmp_space *s, uint64_t start, uint64_t end)
{
	int i = vma_index(s, start);

	if (i > 0)
		i--;
	while (i + 1 < (int)s->nr_vmas && s->vmas[i].end <= end) {
		struct mmp_vma *a = &s->vmas[i], *b = &s->vmas[i + 1];

		if (a->end >= start && vma_mergeable(a, b)) {
			if (!a->anon_vma) {
				a->anon_vma = b->anon_vma;
			} else {
				anon_vma_put(b->anon_vma);
			}
			a->end = b->end;
			memmove(b, b + 1, (s->nr_vmas - i - 2) * sizeof(*b));
			s->nr_vmas--;
		} else {
			i++;
		}
	}
}

/*
 * Top-down search below mmap_base for @len bytes, honouring a free hint first,
 * as arch_get_unmapped_area_topdown() does; @align (a power of two) lets large
 * anonymous mappings start on a PMD boundary (thp_get_unmapped_area). Returns 0
 * when nothing fits.
 */
uint64_t get_unmapped_area(struct mmp_space *s, uint64_t hint, uint64_t len, uint64_t align)
{
	uint64_t top = s->mmap_base;

	if (len > TASK_SIZE(s) - MMP_MMAP_MIN_ADDR)
		return 0;
	/* A hint above the map window opens the space above it (arch_get_mmap_end). */
	if (hint > map_window(s))
		top += TASK_SIZE(s) - map_window(s);
	if (hint) {
		hint &= PAGE_MASK;
		if (hint >= MMP_MMAP_MIN_ADDR && hint <= TASK_SIZE(s) - len &&
		    (hint > map_window(s)) == (hint + len > map_window(s)) &&
		    !find_vma_intersection(s, hint, hint + len))
			return hint;
	}
	for (int i = vma_index(s, top); ; i--) {
		uint64_t gap_end = i < (int)s->nr_vmas ? MIN(top, s->vmas[i].start) : top;
		uint64_t gap_start = i > 0 ? s->vmas[i - 1].end : MMP_MMAP_MIN_ADDR;

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

/*
 * vma_modify_flags: give each VMA piece of [start, end) the flags @new_flags
 * computes for it. A piece whose flags stay the same is left alone: no split,
 * no merge (as mprotect_fixup and madvise_update_vma return early). A piece
 * that changes is split out, handed to @change, then merged with its
 * neighbours. Holes are skipped. Returns 0, or -ENOMEM when a split would
 * pass max_map_count (the pieces before it keep their change, as in Linux).
 */
int vma_modify_flags(struct mmp_space *s, uint64_t start, uint64_t end, vma_flags_fn new_flags,
		     vma_change_fn change, void *arg)
{
	for (uint64_t addr = start; addr < end; ) {
		struct mmp_vma *vma = find_vma_intersection(s, addr, end);
		unsigned long flags;
		uint64_t piece_end;
		int err;

		if (!vma)
			break;
		addr = MAX(addr, vma->start);
		piece_end = MIN(end, vma->end);
		flags = new_flags(vma, arg);
		if (flags != vma->flags) {
			err = vma_split_range(s, addr, piece_end);
			if (err)
				return err;
			vma = find_vma(s, addr);
			if (change)
				change(s, vma, flags, arg);
			vma->flags = flags;
			vma_merge_range(s, addr, piece_end);
		}
		addr = piece_end;
	}
	return 0;
}

