/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vm.max_map_count: every call that would exceed the limit fails with
 * -ENOMEM and leaves the mappings exactly as they were. mremap's own margins
 * below the limit are checked against the host kernel in the same run when it
 * is the kernel the library models, else against answers recorded on 6.18.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "badinput.h"

/* ---- max_map_count --------------------------------------------------------------------- */

/* Single-page VMAs added to reach the limit, newest last, and where the next one goes. */
static uint64_t singles[MAX_MAP_COUNT + 16];
static int nr_singles;
static uint64_t next_single;

/* Bring the VMA count to @want: add single pages a page apart (none merge) or drop the newest. */
static void set_count(struct env *e, uint64_t want)
{
	struct mmp_space_stat st;
	uint64_t a;

	must(!mmp_space_stat(e->s, &st), "stat");
	for (; st.nr_vmas < want; st.nr_vmas++) {
		must(!mmp_mmap(e->s, next_single, PG, MMP_PROT_READ, MMP_MAP_FIXED_NOREPLACE, &a),
		     "add a VMA");
		singles[nr_singles++] = a;
		next_single += 2 * PG;
	}
	for (; st.nr_vmas > want; st.nr_vmas--)
		must(!mmp_munmap(e->s, singles[--nr_singles], PG), "drop a VMA");
	must(!mmp_space_stat(e->s, &st) && st.nr_vmas == want, "VMA count");
}

static void test_map_count(const char *arch)
{
	struct env e;
	struct mmp_space_stat st;
	uint64_t big, a, out, v = 0x77;
	int err = 0, maps = 0;

	env_init(&e, arch, 64 * MiB);
	must(!mmp_munmap(e.s, e.canary, CANARY_LEN), "drop canary");
	/* A 16-page VMA, then single pages of alternating protection so none merge. */
	next_single = 0x100000000ull;
	must(!mmp_mmap(e.s, next_single, 16 * PG, RW, 0, &big) && big == next_single, "mmap big");
	must(fill_pages(e.cpu, big, 16, 9), "fill big");
	maps = 1;
	nr_singles = 0;
	next_single += 16 * PG;
	/* Ascending hints keep each insert at the end of the VMA array: fast. */
	while (maps < MAX_MAP_COUNT + 10) {
		int prot = maps % 2 ? MMP_PROT_READ : RW;

		err = mmp_mmap(e.s, next_single, PG, prot, 0, &a);
		if (err)
			break;
		must(a == next_single, "hinted mmap landed at the hint");
		singles[nr_singles++] = a;
		next_single += PG;
		maps++;
	}
	next_single += PG;
	/*
	 * do_mmap refuses only above the limit (map_count > max_map_count): the
	 * mmap at the limit takes the count one past it, as on the host.
	 */
	tap_eq(err, -ENOMEM, "%s: mmap beyond max_map_count: -ENOMEM", arch);
	tap_eq(maps, MAX_MAP_COUNT + 1, "%s: %d mmaps succeed", arch, MAX_MAP_COUNT + 1);
	must(!mmp_space_stat(e.s, &st), "stat");
	tap_eq(st.nr_vmas, MAX_MAP_COUNT + 1, "%s: nr_vmas one past the limit", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify past max_map_count", arch);
	tap_eq(mmp_mmap(e.s, 0, PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: MAP_FIXED below the minimum past the limit is -ENOMEM", arch);
	set_count(&e, MAX_MAP_COUNT);
	tap_eq(mmp_mmap(e.s, 0, PG, RW, MMP_MAP_FIXED, &a), -EPERM,
	       "%s: at the limit the count passes, and the address is EPERM", arch);

	/* Splits that would exceed the limit fail, and change nothing. */
	tap_eq(mmp_munmap(e.s, big + 8 * PG, PG), -ENOMEM,
	       "%s: munmap of a page inside a VMA at the limit", arch);
	tap_eq(mmp_mprotect(e.s, big + 8 * PG, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect of a page inside a VMA at the limit", arch);
	tap_eq(mmp_mprotect(e.s, big, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect of the first page of a VMA at the limit", arch);
	/* madvise_vma_behavior turns the split's -ENOMEM into -EAGAIN (as the host says). */
	tap_eq(mmp_madvise(e.s, big + 8 * PG, PG, MMP_MADV_HUGEPAGE), -EAGAIN,
	       "%s: MADV_HUGEPAGE of a page inside a VMA at the limit", arch);
	tap_ok(pages_hold(e.cpu, big, 16, 9), "%s: data intact after the refused splits", arch);
	tap_eq(mmp_write(e.cpu, big + 8 * PG, &v, 8), 0,
	       "%s: the VMA is still writable (mprotect changed nothing)", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify after the refused splits", arch);
	must(!mmp_space_stat(e.s, &st), "stat");
	tap_eq(st.nr_vmas, MAX_MAP_COUNT, "%s: nr_vmas still the limit", arch);

	/* Linux (vma_modify): a change that needs no split succeeds at the limit. */
	tap_eq(mmp_mprotect(e.s, singles[nr_singles - 1], PG, MMP_PROT_NONE), 0,
	       "%s: mprotect of a whole VMA at the limit (no split)", arch);
	tap_eq(mmp_madvise(e.s, big, 16 * PG, MMP_MADV_HUGEPAGE), 0,
	       "%s: MADV_HUGEPAGE of a whole VMA at the limit (no split)", arch);
	/*
	 * Linux (vms_gather_munmap_vmas): only an unmap that leaves map_count above
	 * the limit is refused; trimming a VMA's end may split temporarily.
	 */
	tap_eq(mmp_munmap(e.s, big + 15 * PG, PG), 0,
	       "%s: munmap of the last page of a VMA at the limit", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify", arch);

	/*
	 * do_mmap passes at the limit, and replacing the tail of a VMA is no
	 * split into three (vms_gather_munmap_vmas): a MAP_FIXED over it maps,
	 * taking the count one past the limit. Past it, do_mmap refuses before
	 * it touches anything, the tail still mapped.
	 */
	set_count(&e, MAX_MAP_COUNT);
	err = mmp_mmap(e.s, big + 13 * PG, 2 * PG, RW, MMP_MAP_FIXED, &a);
	tap_eq(err, 0, "%s: MAP_FIXED over the end of a VMA at the limit", arch);
	tap_ok(err ? range_holds(e.cpu, big, 13, 2, 9) : range_holds(e.cpu, big, 13, 2, 0),
	       "%s: the page is the new mapping, or the old one if MAP_FIXED failed", arch);
	err = mmp_mmap(e.s, big + 11 * PG, 2 * PG, RW, MMP_MAP_FIXED, &a);
	tap_eq(err, -ENOMEM, "%s: MAP_FIXED over the end of a VMA past the limit", arch);
	tap_ok(range_holds(e.cpu, big, 11, 2, 9), "%s: ...leaves the old pages mapped", arch);
	/*
	 * mremap_to refuses early when the move could pass the limit, before it
	 * unmaps the destination ((map_count + 2) >= max_map_count - 3).
	 */
	set_count(&e, MAX_MAP_COUNT);
	err = mmp_mremap(e.s, big, PG, PG, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, singles[100],
			 &out);
	tap_eq(err, -ENOMEM, "%s: MREMAP_FIXED onto a mapping at the limit", arch);
	tap_ok(err == 0 || !mmp_read(e.cpu, singles[100], &v, 8),
	       "%s: a failed MREMAP_FIXED leaves the destination mapped", arch);
	tap_ok(err == 0 || pages_hold(e.cpu, big, 1, 9),
	       "%s: a failed MREMAP_FIXED leaves the source intact", arch);
	/* A same-size mremap without flags is a no-op that returns addr, even at the limit. */
	set_count(&e, MAX_MAP_COUNT);
	out = 0;
	err = mmp_mremap(e.s, big + 2 * PG, 2 * PG, 2 * PG, 0, 0, &out);
	tap_ok(err == 0 && out == big + 2 * PG,
	       "%s: same-size mremap inside a VMA at the limit: %s", arch, mmp_strerror(err));
	must(!mmp_space_stat(e.s, &st), "stat");
	tap_eq(st.nr_vmas, MAX_MAP_COUNT, "%s: ... and the VMA count did not change", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify", arch);

	/* Removing a whole VMA makes room for exactly one more. */
	set_count(&e, MAX_MAP_COUNT);
	a = singles[--nr_singles];
	tap_eq(mmp_munmap(e.s, a, PG), 0, "%s: munmap of a whole VMA at the limit", arch);
	tap_eq(mmp_mmap(e.s, a, PG, MMP_PROT_NONE, 0, &singles[nr_singles++]), 0,
	       "%s: then one mmap fits", arch);
	tap_eq(mmp_mmap(e.s, 0, PG, RW, 0, &a), 0, "%s: and one more, at the limit", arch);
	tap_eq(mmp_mmap(e.s, 0, PG, RW, 0, &out), -ENOMEM, "%s: but not a third", arch);
	tap_eq(mmp_munmap(e.s, a, PG), 0, "%s: unmap it again", arch);

	/* One below: a hole in the middle ends exactly at the limit, which Linux allows. */
	set_count(&e, MAX_MAP_COUNT - 1);
	tap_eq(mmp_munmap(e.s, big + 4 * PG, PG), 0,
	       "%s: munmap of a page inside a VMA one below the limit", arch);
	tap_ok(pages_hold(e.cpu, big, 4, 9), "%s: data before the hole intact", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify", arch);
	/*
	 * One below again: MAP_FIXED over the middle of a VMA passes do_mmap's
	 * check, so Linux maps it (the count ends one above the limit). A
	 * failure must at least leave the old page mapped.
	 */
	set_count(&e, MAX_MAP_COUNT - 1);
	err = mmp_mmap(e.s, big + 10 * PG, PG, RW, MMP_MAP_FIXED, &a);
	tap_eq(err, 0, "%s: MAP_FIXED inside a VMA one below the limit", arch);
	tap_ok(err ? range_holds(e.cpu, big, 10, 1, 9) : range_holds(e.cpu, big, 10, 1, 0),
	       "%s: the page is the new mapping, or the old one if MAP_FIXED failed", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify", arch);
	tap_eq(mmp_munmap(e.s, big, next_single - big), 0, "%s: munmap everything", arch);
	tap_ok(!mmp_space_stat(e.s, &st) && st.nr_vmas == 0, "%s: no VMAs left", arch);
	tap_ok(fresh_map_works(&e) && !mmp_space_verify(e.s), "%s: space works again", arch);
	env_fini(&e);
}


/* ---- mremap near the limit, against the host ----------------------------------------------- */

/*
 * mremap keeps margins below max_map_count of its own: a call that may need
 * more VMAs than are left is refused before anything is unmapped. Each case
 * runs at map_count = max, max - 1, ..., max - 6 in a host process filled
 * with single pages up to its own vm.max_map_count, and in a space of every
 * back end filled up to MMP_MAX_MAP_COUNT. The return value, the change of
 * the VMA count, where the mapping ends up, whether the range it left is
 * still mapped and where the data is must agree. The host's answers recorded
 * in mc_cases[] are Linux 6.18.44's (x86_64, vm.max_map_count 65530); on an
 * x86_64 host running 6.18 they are taken live as well.
 */
#define MC_LEVELS	7		/* map_count = max - 0 ... max - 6 */
#define MC_NEVER	(-1)		/* a margin no count reaches */
#define MC_SLOT		(4 * MiB)	/* every call gets a fresh slot: nothing to clean up */
#define MC_DST		(2 * MiB)	/* the MREMAP_FIXED target, inside the slot */
#define MC_MOVE		MMP_MREMAP_MAYMOVE
#define MC_FIXED	(MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED)
#define MC_DONTUNMAP	(MMP_MREMAP_MAYMOVE | MMP_MREMAP_DONTUNMAP)

/* Where the mapping is after the call. */
enum { MC_NONE, MC_SAME, MC_AT_DST, MC_ELSEWHERE };
static const char *const mc_where[] = { "-", "in place", "at new_addr", "moved" };

struct mc_case {
	const char *name;
	unsigned int src_pages;			/* the source VMA, RW, each page written */
	unsigned int off, old_pages, new_pages;	/* the call, in pages from the source's start */
	int flags;
	bool blocker;		/* a read-only page right after the source: it cannot grow */
	int dst;		/* FIXED to 0: no address, 1: a free range, 2: inside a VMA */
	/* What Linux 6.18 does: */
	int margin;		/* -ENOMEM while map_count >= max - margin */
	int delta;		/* below that: the VMA count's change, */
	int where;		/* where the mapping is, */
	bool old_mapped;	/* and whether the range it left is still mapped */
};

static const struct mc_case mc_cases[] = {
	/*
	 * Grow a VMA that cannot grow in place: it must move. Host: -ENOMEM at
	 * max - 3 and above, VMA and data untouched; at max - 4 and below it
	 * moves, the count unchanged. prep_move_vma: map_count >= max - 3 (the
	 * unmap of the source may split it in three).
	 */
	{ .name = "grow, must move", .src_pages = 4, .old_pages = 4, .new_pages = 8,
	  .flags = MC_MOVE, .blocker = true,
	  .margin = 3, .delta = 0, .where = MC_ELSEWHERE, .old_mapped = false },
	/* Room after it: expand_vma_in_place, no new VMA, no check. Host: done at every count. */
	{ .name = "grow in place", .src_pages = 4, .old_pages = 4, .new_pages = 8,
	  .flags = MC_MOVE,
	  .margin = MC_NEVER, .delta = 0, .where = MC_SAME, .old_mapped = true },
	/*
	 * Grow pages 2-3 of 8: they move and the source splits around the hole.
	 * Host: -ENOMEM at max - 3 and above; at max - 4 moved, count + 2
	 * (prep_move_vma, as above).
	 */
	{ .name = "grow the middle of a VMA, must move", .src_pages = 8, .off = 2, .old_pages = 2,
	  .new_pages = 4, .flags = MC_MOVE, .blocker = true,
	  .margin = 3, .delta = 2, .where = MC_ELSEWHERE, .old_mapped = false },
	/*
	 * DONTUNMAP of a whole VMA. Host: -ENOMEM at max - 5 and above; at max - 6
	 * moved and the old VMA kept, empty: count + 1. check_mremap_params:
	 * map_count + 2 >= max - 3 for every call that implies a new address.
	 */
	{ .name = "DONTUNMAP", .src_pages = 4, .old_pages = 4, .new_pages = 4,
	  .flags = MC_DONTUNMAP, .blocker = true,
	  .margin = 5, .delta = 1, .where = MC_ELSEWHERE, .old_mapped = true },
	/* The old VMA is not split. Host: as above, count + 1 (check_mremap_params). */
	{ .name = "DONTUNMAP of the middle of a VMA", .src_pages = 8, .off = 2, .old_pages = 2,
	  .new_pages = 2, .flags = MC_DONTUNMAP, .blocker = true,
	  .margin = 5, .delta = 1, .where = MC_ELSEWHERE, .old_mapped = true },
	/*
	 * Same size to a free range (remap_move since 6.17). Host: -ENOMEM at
	 * max - 5 and above, at max - 6 moved, count unchanged (check_mremap_params).
	 */
	{ .name = "FIXED", .src_pages = 4, .old_pages = 4, .new_pages = 4,
	  .flags = MC_FIXED, .blocker = true, .dst = 1,
	  .margin = 5, .delta = 0, .where = MC_AT_DST, .old_mapped = false },
	/* Host: as FIXED (check_mremap_params). */
	{ .name = "FIXED, growing", .src_pages = 4, .old_pages = 4, .new_pages = 8,
	  .flags = MC_FIXED, .blocker = true, .dst = 1,
	  .margin = 5, .delta = 0, .where = MC_AT_DST, .old_mapped = false },
	/* Onto pages 2-5 of an 8-page VMA, which splits. Host: as FIXED, count + 1. */
	{ .name = "FIXED into the middle of a VMA", .src_pages = 4, .old_pages = 4, .new_pages = 4,
	  .flags = MC_FIXED, .blocker = true, .dst = 2,
	  .margin = 5, .delta = 1, .where = MC_AT_DST, .old_mapped = false },
	/*
	 * Shrinking unmaps the tail, which never splits a VMA in three. Host: done
	 * at every count (vms_gather_munmap_vmas checks only a split in three).
	 */
	{ .name = "shrink the tail", .src_pages = 8, .old_pages = 8, .new_pages = 4,
	  .blocker = true,
	  .margin = MC_NEVER, .delta = 0, .where = MC_SAME, .old_mapped = false },
	/*
	 * Shrink pages 0-3 of 8 to 2: pages 2-3 go, a hole inside the VMA. Host:
	 * -ENOMEM at max; at max - 1 done, count + 1 (vms_gather_munmap_vmas:
	 * map_count >= max for a split in three).
	 */
	{ .name = "shrink inside a VMA", .src_pages = 8, .old_pages = 4, .new_pages = 2,
	  .blocker = true,
	  .margin = 0, .delta = 1, .where = MC_SAME, .old_mapped = false },
};

#define MC_CASES	(sizeof(mc_cases) / sizeof(mc_cases[0]))

struct mc_result {
	int16_t err;		/* 0 or a negative errno */
	int8_t delta;		/* the VMA count after the call minus before */
	int8_t where;		/* MC_* */
	int8_t old;		/* the range the mapping left (or would have) is still mapped */
	int8_t data;		/* every written page holds its data where it must */
};

/* What the host gives back from its child: status 0 or the step that failed. */
struct mc_report {
	int status;
	long max;
	struct mc_result r[MC_CASES][MC_LEVELS];
};

/* One side: the host process or a simulated space. Calls return 0 or a negative errno. */
struct mc_side {
	int (*map)(struct mc_side *sd, uint64_t addr, uint64_t len, int prot);
	int (*unmap)(struct mc_side *sd, uint64_t addr, uint64_t len);
	int (*remap)(struct mc_side *sd, uint64_t addr, uint64_t old_len, uint64_t new_len,
		     int flags, uint64_t new_addr, uint64_t *out);
	int (*put)(struct mc_side *sd, uint64_t addr, uint64_t v);
	bool (*holds)(struct mc_side *sd, uint64_t addr, uint64_t v);
	bool (*mapped)(struct mc_side *sd, uint64_t addr, uint64_t len);
	long (*count)(struct mc_side *sd);
	long max;		/* this side's max_map_count */
	long cur;		/* its VMA count, followed as single pages come and go */
	uint64_t fill;		/* the single pages: [fill, fill + nr * PG) */
	long nr;
	uint64_t slot;		/* the next call's slot */
	struct env *e;
};

/* Bring the VMA count to @want: single pages of alternating protection (none merge). */
static int mc_set_count(struct mc_side *sd, long want)
{
	for (; sd->cur < want; sd->cur++, sd->nr++)
		if (sd->map(sd, sd->fill + sd->nr * PG, PG, sd->nr % 2 ? MMP_PROT_READ : 0))
			return -1;
	for (; sd->cur > want; sd->cur--)
		if (sd->unmap(sd, sd->fill + --sd->nr * PG, PG))
			return -1;
	return 0;
}

static int mc_map_counted(struct mc_side *sd, uint64_t addr, uint64_t len, int prot)
{
	int err = sd->map(sd, addr, len, prot);

	sd->cur += !err;
	return err;
}

/* Case @c at map_count = max - @level, in a fresh slot, its pages written with @tag + page. */
static int mc_run(struct mc_side *sd, const struct mc_case *c, int level, uint64_t tag,
		  struct mc_result *res)
{
	uint64_t src = sd->slot, new_addr = 0, out = 0;
	uint64_t addr = src + c->off * PG, old_len = c->old_pages * PG, new_len = c->new_pages * PG;
	long after;
	int err;

	sd->slot += MC_SLOT;
	if (mc_set_count(sd, sd->max - 32) || mc_map_counted(sd, src, c->src_pages * PG, RW))
		return -1;
	if (c->blocker && mc_map_counted(sd, src + c->src_pages * PG, PG, MMP_PROT_READ))
		return -1;
	if (c->dst)
		new_addr = src + MC_DST + (c->dst == 2 ? 2 * PG : 0);
	if (c->dst == 2 && mc_map_counted(sd, src + MC_DST, 8 * PG, MMP_PROT_READ))
		return -1;
	for (unsigned int i = 0; i < c->src_pages; i++)
		if (sd->put(sd, src + i * PG, tag + i))
			return -1;
	if (mc_set_count(sd, sd->max - level))
		return -1;
	/* The count followed by hand must be the real one (checked once a case: a host read is slow). */
	if (!level && sd->count(sd) != sd->cur)
		return -1;

	err = sd->remap(sd, addr, old_len, new_len, c->flags, new_addr, &out);
	after = sd->count(sd);
	res->err = err;
	res->delta = after - sd->cur;
	sd->cur = after;
	res->where = err ? MC_NONE : out == addr ? MC_SAME :
		     out == new_addr ? MC_AT_DST : MC_ELSEWHERE;
	/* A shrink leaves the tail of the range; anything else leaves all of it. */
	if (!c->flags && c->new_pages < c->old_pages)
		res->old = sd->mapped(sd, addr + new_len, old_len - new_len);
	else
		res->old = sd->mapped(sd, addr, old_len);
	/* Each page where it must be: unmoved, moved with the range, or shrunk away. */
	res->data = 1;
	for (unsigned int i = 0; i < c->src_pages; i++) {
		uint64_t at = src + i * PG;

		if (!err && i >= c->off && i < c->off + c->old_pages) {
			if (i - c->off >= c->new_pages)
				continue;
			at = out + (i - c->off) * PG;
		}
		if (!sd->holds(sd, at, tag + i))
			res->data = 0;
	}
	return 0;
}

/* Every case at every level; 0, or the step that failed (a setup call, not the one tested). */
static int mc_run_all(struct mc_side *sd, struct mc_result r[MC_CASES][MC_LEVELS])
{
	for (unsigned int c = 0; c < MC_CASES; c++)
		for (int level = 0; level < MC_LEVELS; level++) {
			uint64_t tag = (uint64_t)(c + 1) << 32 | (uint64_t)level << 24;

			if (mc_run(sd, &mc_cases[c], level, tag, &r[c][level]))
				return 1 + c * MC_LEVELS + level;
		}
	return 0;
}

/* What Linux 6.18 gave (mc_cases[]) at map_count = max - @level. */
static struct mc_result mc_recorded(const struct mc_case *c, int level)
{
	if (level <= c->margin)
		return (struct mc_result){ .err = -ENOMEM, .where = MC_NONE, .old = 1, .data = 1 };
	return (struct mc_result){ .delta = c->delta, .where = c->where, .old = c->old_mapped,
				   .data = 1 };
}

static bool mc_same(const struct mc_result *a, const struct mc_result *b)
{
	return a->err == b->err && a->delta == b->delta && a->where == b->where &&
	       a->old == b->old && a->data == b->data;
}

/* Compare a row against @want; print both where they differ. */
static bool mc_row_matches(const struct mc_result *got, const struct mc_result *want,
			   const char *got_name, const char *want_name)
{
	bool ok = true;

	for (int level = 0; level < MC_LEVELS; level++) {
		const struct mc_result *g = &got[level], *w = &want[level];

		if (mc_same(g, w))
			continue;
		ok = false;
		printf("#   map_count = max - %d: %s %s, count %+d, %s, old range %s, data %s;"
		       " %s %s, count %+d, %s, old range %s\n", level, got_name,
		       mmp_strerror(g->err), g->delta, mc_where[g->where & 3],
		       g->old ? "mapped" : "unmapped", g->data ? "ok" : "LOST", want_name,
		       mmp_strerror(w->err), w->delta, mc_where[w->where & 3],
		       w->old ? "mapped" : "unmapped");
	}
	return ok;
}

/* ---- the host side: an x86_64 process of its own (qemu-user would answer for itself) ------- */

#if defined(__x86_64__)
static int mc_host_map(struct mc_side *sd, uint64_t addr, uint64_t len, int prot)
{
	void *p = mmap((void *)(uintptr_t)addr, len, prot,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	(void)sd;
	return p == MAP_FAILED ? -errno : 0;
}

static int mc_host_unmap(struct mc_side *sd, uint64_t addr, uint64_t len)
{
	(void)sd;
	return munmap((void *)(uintptr_t)addr, len) ? -errno : 0;
}

static int mc_host_remap(struct mc_side *sd, uint64_t addr, uint64_t old_len, uint64_t new_len,
			 int flags, uint64_t new_addr, uint64_t *out)
{
	void *p = mremap((void *)(uintptr_t)addr, old_len, new_len, flags,
			 (void *)(uintptr_t)new_addr);

	(void)sd;
	if (p == MAP_FAILED)
		return -errno;
	*out = (uintptr_t)p;
	return 0;
}

static bool mc_host_mapped(struct mc_side *sd, uint64_t addr, uint64_t len)
{
	unsigned char vec[64];

	(void)sd;
	return len <= sizeof(vec) * PG && !mincore((void *)(uintptr_t)addr, len, vec);
}

static int mc_host_put(struct mc_side *sd, uint64_t addr, uint64_t v)
{
	(void)sd;
	*(volatile uint64_t *)(uintptr_t)addr = v;
	return 0;
}

static bool mc_host_holds(struct mc_side *sd, uint64_t addr, uint64_t v)
{
	return mc_host_mapped(sd, addr, PG) && *(volatile uint64_t *)(uintptr_t)addr == v;
}

/*
 * The VMAs of this process: the lines of /proc/self/maps but the gate area
 * ([vsyscall]), which is no VMA of the mm. No allocation: this runs with the
 * address space full.
 */
static long mc_host_count(struct mc_side *sd)
{
	static char buf[64 * 1024];
	const size_t keep = 16;		/* a name split between two reads is still found */
	size_t have = 0;
	long lines = 0;
	bool gate = false;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	(void)sd;
	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + have, sizeof(buf) - have)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			lines += buf[have + i] == '\n';
		have += n;
		gate |= memmem(buf, have, "[vsyscall]", 10) != NULL;
		if (have > keep) {
			memmove(buf, buf + have - keep, keep);
			have = keep;
		}
	}
	close(fd);
	return n < 0 ? -1 : lines - gate;
}

static long mc_read_long(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

/* In the child: fill this process's address space and run every case. */
static void mc_host_child(struct mc_report *rep)
{
	struct mc_side sd = {
		.map = mc_host_map, .unmap = mc_host_unmap, .remap = mc_host_remap,
		.put = mc_host_put, .holds = mc_host_holds, .mapped = mc_host_mapped,
		.count = mc_host_count,
		/* Far from the libraries, and above ASan's shadow. */
		.fill = 0x300000000000ull, .slot = 0x310000000000ull,
	};

	rep->max = sd.max = mc_read_long("/proc/sys/vm/max_map_count");
	sd.cur = mc_host_count(&sd);
	if (sd.max < 1024 || sd.cur < 0 || sd.cur + 64 > sd.max) {
		rep->status = -1;
		return;
	}
	rep->status = mc_run_all(&sd, rep->r);
}

static bool mc_host(struct mc_report *rep)
{
	size_t got = 0;
	int fds[2], status = 0;
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		return false;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		mc_host_child(rep);
		_exit(write(fds[1], rep, sizeof(*rep)) == (ssize_t)sizeof(*rep) ? 0 : 1);
	}
	close(fds[1]);
	while (pid > 0 && got < sizeof(*rep) &&
	       (n = read(fds[0], (char *)rep + got, sizeof(*rep) - got)) > 0)
		got += n;
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	if (got == sizeof(*rep) && rep->status)
		printf("# host: set-up step %d failed\n", rep->status);
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("# host: the child ended with status %#x\n", status);
	return got == sizeof(*rep) && WIFEXITED(status) && !WEXITSTATUS(status) && !rep->status;
}

static bool mc_host_is_modeled(char *release, size_t len)
{
	struct utsname u;
	unsigned int a = 0, b = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &a, &b) != 2)
		return false;
	snprintf(release, len, "%s", u.release);
	return MMP_KERNEL_VERSION(a, b, 0) == (MMP_KERNEL_MODELED & ~0xff);
}
#endif

/*
 * The answers the library must give: the host's, taken now, when it runs the
 * kernel the library models; otherwise those recorded on Linux 6.18.
 */
static bool mc_want(struct mc_result want[MC_CASES][MC_LEVELS])
{
	for (unsigned int c = 0; c < MC_CASES; c++)
		for (int level = 0; level < MC_LEVELS; level++)
			want[c][level] = mc_recorded(&mc_cases[c], level);
#if defined(__x86_64__)
	{
		static struct mc_report rep;
		char release[65] = "";
		bool modeled = mc_host_is_modeled(release, sizeof(release));

		if (!mc_host(&rep)) {
			tap_ok(1, "host: mremap near max_map_count # SKIP the host child did not run");
			return false;
		}
		tap_ok(1, "host: %ld VMAs allowed, every case ran at max - 0 ... max - %d", rep.max,
		       MC_LEVELS - 1);
		for (unsigned int c = 0; c < MC_CASES; c++) {
			const char *name = mc_cases[c].name;
			bool same = mc_row_matches(rep.r[c], want[c], "host", "6.18 recorded");

			if (modeled)
				tap_ok(same, "host %s: %s: as recorded on 6.18", release, name);
			else
				tap_ok(1, "host %s: %s # SKIP the library models 6.18", release,
				       name);
		}
		if (modeled)
			memcpy(want, rep.r, sizeof(rep.r));
		return modeled;
	}
#else
	tap_ok(1, "host: mremap near max_map_count # SKIP only on x86_64 hosts");
	return false;
#endif
}

static int mc_sim_map(struct mc_side *sd, uint64_t addr, uint64_t len, int prot)
{
	uint64_t a;

	return mmp_mmap(sd->e->s, addr, len, prot, MMP_MAP_FIXED_NOREPLACE, &a);
}

static int mc_sim_unmap(struct mc_side *sd, uint64_t addr, uint64_t len)
{
	return mmp_munmap(sd->e->s, addr, len);
}

static int mc_sim_remap(struct mc_side *sd, uint64_t addr, uint64_t old_len, uint64_t new_len,
			int flags, uint64_t new_addr, uint64_t *out)
{
	return mmp_mremap(sd->e->s, addr, old_len, new_len, flags, new_addr, out);
}

static int mc_sim_put(struct mc_side *sd, uint64_t addr, uint64_t v)
{
	return mmp_write(sd->e->cpu, addr, &v, sizeof(v));
}

static bool mc_sim_holds(struct mc_side *sd, uint64_t addr, uint64_t v)
{
	uint64_t w;

	return !mmp_read(sd->e->cpu, addr, &w, sizeof(w)) && w == v;
}

/* Every source page is readable: a page that reads is mapped. */
static bool mc_sim_mapped(struct mc_side *sd, uint64_t addr, uint64_t len)
{
	uint64_t w;

	for (uint64_t a = addr; a < addr + len; a += PG)
		if (mmp_read(sd->e->cpu, a, &w, sizeof(w)))
			return false;
	return true;
}

static long mc_sim_count(struct mc_side *sd)
{
	struct mmp_space_stat st;

	return mmp_space_stat(sd->e->s, &st) ? -1 : (long)st.nr_vmas;
}

static void test_mremap_margins(const char *arch, struct mc_result want[MC_CASES][MC_LEVELS],
				const char *want_name)
{
	static struct mc_result got[MC_CASES][MC_LEVELS];
	struct env e;
	struct mc_side sd = {
		.map = mc_sim_map, .unmap = mc_sim_unmap, .remap = mc_sim_remap,
		.put = mc_sim_put, .holds = mc_sim_holds, .mapped = mc_sim_mapped,
		.count = mc_sim_count, .max = MAX_MAP_COUNT, .e = &e,
		.fill = 0x100000000ull,
	};
	int err;

	env_init(&e, arch, 64 * MiB);
	must(!mmp_munmap(e.s, e.canary, CANARY_LEN), "drop canary");
	sd.slot = task_size(e.s) / 2 & ~(MC_SLOT - 1);
	sd.cur = mc_sim_count(&sd);
	err = mc_run_all(&sd, got);
	must(!err, "set up the mremap cases");
	for (unsigned int c = 0; c < MC_CASES; c++)
		tap_ok(mc_row_matches(got[c], want[c], arch, want_name),
		       "%s: mremap near max_map_count: %s, as %s", arch, mc_cases[c].name,
		       want_name);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify after the mremap calls near the limit", arch);
	env_fini(&e);
}


int main(void)
{
	static struct mc_result want[MC_CASES][MC_LEVELS];
	const char *want_name;

	setvbuf(stdout, NULL, _IOLBF, 0);
	want_name = mc_want(want) ? "the host" : "Linux 6.18 (recorded)";
	for (int i = 0; i < mmp_arch_count(); i++) {
		printf("# back end %s\n", mmp_arch_name(i));
		test_map_count(mmp_arch_name(i));
		test_mremap_margins(mmp_arch_name(i), want, want_name);
	}
	return tap_done();
}
