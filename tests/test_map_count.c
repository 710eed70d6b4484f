/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vm.max_map_count: every call that would exceed the limit fails with
 * -ENOMEM and leaves the mappings exactly as they were.
 */
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
	tap_eq(err, -ENOMEM, "%s: mmap beyond max_map_count: -ENOMEM", arch);
	tap_eq(maps, MAX_MAP_COUNT, "%s: %d mmaps succeed", arch, MAX_MAP_COUNT);
	must(!mmp_space_stat(e.s, &st), "stat");
	tap_eq(st.nr_vmas, MAX_MAP_COUNT, "%s: nr_vmas at the limit", arch);
	tap_eq(mmp_space_verify(e.s), 0, "%s: verify at max_map_count", arch);
	tap_eq(mmp_mmap(e.s, 0, PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: MAP_FIXED below the minimum at the limit is still -ENOMEM", arch);

	/* Splits that would exceed the limit fail, and change nothing. */
	tap_eq(mmp_munmap(e.s, big + 8 * PG, PG), -ENOMEM,
	       "%s: munmap of a page inside a VMA at the limit", arch);
	tap_eq(mmp_mprotect(e.s, big + 8 * PG, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect of a page inside a VMA at the limit", arch);
	tap_eq(mmp_mprotect(e.s, big, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect of the first page of a VMA at the limit", arch);
	tap_eq(mmp_madvise(e.s, big + 8 * PG, PG, MMP_MADV_HUGEPAGE), -ENOMEM,
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
	 * do_mmap refuses at the limit before it touches anything (map_count >=
	 * max_map_count), so a MAP_FIXED over the tail of a VMA fails with the
	 * tail still mapped.
	 */
	set_count(&e, MAX_MAP_COUNT);
	err = mmp_mmap(e.s, big + 13 * PG, 2 * PG, RW, MMP_MAP_FIXED, &a);
	tap_eq(err, -ENOMEM, "%s: MAP_FIXED over the end of a VMA at the limit", arch);
	tap_ok(err ? range_holds(e.cpu, big, 13, 2, 9) : range_holds(e.cpu, big, 13, 2, 0),
	       "%s: the page is the new mapping, or the old one if MAP_FIXED failed", arch);
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
	tap_eq(mmp_mmap(e.s, 0, PG, RW, 0, &a), -ENOMEM, "%s: and the next one does not", arch);

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


int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < mmp_arch_count(); i++) {
		printf("# back end %s\n", mmp_arch_name(i));
		test_map_count(mmp_arch_name(i));
	}
	return tap_done();
}
