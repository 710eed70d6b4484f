/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad inputs of mmap, munmap, mprotect, madvise and mremap, with the errno
 * Linux would give; after each error mmp_space_verify() passes, data written
 * before is intact and the space still maps, writes and reads.
 */
#include "badinput.h"

/* ---- mappings -------------------------------------------------------------------------- */

static void test_mmap(struct env *e)
{
	const uint64_t top = task_size(e->s);
	uint64_t a = 0xdead, b, fixed;
	int err;

	tap_eq(mmp_space_task_size(NULL, &b), -EINVAL, "%s: task_size: NULL space", e->arch);
	tap_eq(mmp_space_task_size(e->s, NULL), -EINVAL, "%s: task_size: NULL out", e->arch);
	tap_eq(mmp_mmap(NULL, 0, PG, RW, 0, &a), -EINVAL, "%s: mmap: NULL space", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, RW, 0, NULL), -EINVAL, "%s: mmap: NULL addr_out", e->arch);
	tap_eq(mmp_mmap(e->s, 0, 0, RW, 0, &a), -EINVAL, "%s: mmap: len 0", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, 0x8, 0, &a), -EINVAL, "%s: mmap: prot 0x8", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, -1, 0, &a), -EINVAL, "%s: mmap: prot -1", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, RW, MMP_MAP_SHARED | MMP_MAP_PRIVATE, &a), -EINVAL,
	       "%s: mmap: shared and private at once", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, RW, 0x20, &a), -EINVAL, "%s: mmap: flags 0x20", e->arch);
	tap_eq(mmp_mmap(e->s, 0, PG, RW, 0x1000000, &a), -EINVAL, "%s: mmap: flags 0x1000000",
	       e->arch);
	tap_eq(mmp_mmap(e->s, 0x100001000ull + 1, PG, RW, MMP_MAP_FIXED, &a), -EINVAL,
	       "%s: mmap: MAP_FIXED unaligned", e->arch);
	tap_eq(mmp_mmap(e->s, 0x100000800ull, PG, RW, MMP_MAP_FIXED_NOREPLACE, &a), -EINVAL,
	       "%s: mmap: MAP_FIXED_NOREPLACE unaligned", e->arch);
	/* An unprivileged process below mmap_min_addr: EPERM (cap_mmap_addr). */
	tap_eq(mmp_mmap(e->s, 0, PG, RW, MMP_MAP_FIXED, &a), -EPERM, "%s: mmap: MAP_FIXED at 0",
	       e->arch);
	tap_eq(mmp_mmap(e->s, MMP_MMAP_MIN_ADDR - PG, PG, RW, MMP_MAP_FIXED, &a), -EPERM,
	       "%s: mmap: MAP_FIXED below MMP_MMAP_MIN_ADDR", e->arch);
	tap_eq(mmp_mmap(e->s, MMP_MMAP_MIN_ADDR - PG, 2 * PG, RW, MMP_MAP_FIXED, &a), -EPERM,
	       "%s: mmap: MAP_FIXED straddling MMP_MMAP_MIN_ADDR", e->arch);
	tap_eq(mmp_mmap(e->s, MMP_MMAP_MIN_ADDR - PG, PG, RW, MMP_MAP_FIXED_NOREPLACE, &a), -EPERM,
	       "%s: mmap: MAP_FIXED_NOREPLACE below MMP_MMAP_MIN_ADDR", e->arch);
	tap_eq(mmp_mmap(e->s, top - PG + 1, PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: the range is checked before the alignment", e->arch);
	tap_eq(mmp_mmap(e->s, top, PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: MAP_FIXED at TASK_SIZE", e->arch);
	tap_eq(mmp_mmap(e->s, top - PG, 2 * PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: MAP_FIXED ending above TASK_SIZE", e->arch);
	tap_eq(mmp_mmap(e->s, top - PG, PG + 1, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: MAP_FIXED whose rounded length ends above TASK_SIZE", e->arch);
	tap_eq(mmp_mmap(e->s, 0xfffffffffffff000ull, PG, RW, MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: mmap: MAP_FIXED at the top of the 64-bit space", e->arch);
	tap_eq(mmp_mmap(e->s, 0, top + PG, RW, 0, &a), -ENOMEM, "%s: mmap: len above TASK_SIZE",
	       e->arch);
	tap_eq(mmp_mmap(e->s, 0, top, RW, 0, &a), -ENOMEM, "%s: mmap: len TASK_SIZE (no room)",
	       e->arch);
	tap_eq(mmp_mmap(e->s, 0, UINT64_MAX, RW, 0, &a), -ENOMEM, "%s: mmap: len UINT64_MAX",
	       e->arch);
	tap_eq(mmp_mmap(e->s, 0, UINT64_MAX - PG + 2, RW, 0, &a), -ENOMEM,
	       "%s: mmap: len that wraps to one page when rounded", e->arch);
	tap_eq(mmp_mmap(e->s, MMP_MMAP_MIN_ADDR, UINT64_MAX - MMP_MMAP_MIN_ADDR + PG + 1, RW,
			MMP_MAP_FIXED, &a),
	       -ENOMEM, "%s: mmap: MAP_FIXED with wrapping end", e->arch);
	tap_ok(a == 0xdead, "%s: mmap: addr_out untouched on errors", e->arch);
	still_works(e, "bad mmap arguments");

	/* The last page below TASK_SIZE is user space: map it and use it to the end. */
	err = mmp_mmap(e->s, top - PG, PG, RW, MMP_MAP_FIXED, &a);
	tap_ok(!err && a == top - PG, "%s: mmap: MAP_FIXED of the last user page", e->arch);
	if (!err) {
		uint64_t v = 42;

		tap_eq(mmp_write(e->cpu, top - 8, &v, 8), 0, "%s: write the last 8 user bytes",
		       e->arch);
		tap_eq(mmp_write(e->cpu, top - 8, &v, 9), -EFAULT, "%s: write 1 byte past it",
		       e->arch);
		tap_eq(mmp_munmap(e->s, top - PG, PG), 0, "%s: munmap the last user page", e->arch);
	}
	/* A hint that cannot be honoured is only a hint. */
	err = mmp_mmap(e->s, top + 16 * PG, 2 * PG, RW, 0, &a);
	tap_ok(!err && a >= MMP_MMAP_MIN_ADDR && a + 2 * PG <= top,
	       "%s: mmap: a hint above TASK_SIZE is ignored", e->arch);
	if (!err)
		mmp_munmap(e->s, a, 2 * PG);
	err = mmp_mmap(e->s, e->canary + PG, 2 * PG, RW, 0, &a);
	tap_ok(!err && (a + 2 * PG <= e->canary || a >= e->canary + CANARY_LEN),
	       "%s: mmap: a hint inside a mapping is ignored", e->arch);
	if (!err)
		mmp_munmap(e->s, a, 2 * PG);

	/* An unaligned hint without MAP_FIXED is rounded; a length is rounded up to pages. */
	err = mmp_mmap(e->s, SCRATCH + 123, 1, RW, 0, &a);
	tap_ok(!err && !(a % PG), "%s: mmap: unaligned hint, 1 byte: page aligned", e->arch);
	if (!err) {
		uint64_t v = 1;

		tap_eq(mmp_write(e->cpu, a + PG - 8, &v, 8), 0,
		       "%s: mmap: 1 byte maps a whole page", e->arch);
		tap_eq(mmp_write(e->cpu, a + PG, &v, 8), -EFAULT,
		       "%s: mmap: ... and not the next one", e->arch);
		mmp_munmap(e->s, a, PG);
	}

	/* MAP_FIXED over the middle of a THP splits it and replaces only that part. */
	fixed = map_scratch(e, 512);
	must(!mmp_madvise(e->s, fixed, 2 * MiB, MMP_MADV_HUGEPAGE), "madvise");
	must(fill_pages(e->cpu, fixed, 512, 15), "fill THP");
	tap_eq(mmp_mmap(e->s, fixed + 100 * PG, 3 * PG, RW, MMP_MAP_FIXED, &a), 0,
	       "%s: MAP_FIXED over part of a THP", e->arch);
	tap_ok(pages_hold(e->cpu, fixed, 100, 15) && range_holds(e->cpu, fixed, 100, 3, 0) &&
		       range_holds(e->cpu, fixed, 103, 409, 15),
	       "%s: MAP_FIXED over a THP: replaced part zero, the rest intact", e->arch);
	tap_eq(mmp_space_verify(e->s), 0, "%s: verify after MAP_FIXED over a THP", e->arch);
	tap_eq(mmp_munmap(e->s, fixed, 2 * MiB), 0, "%s: munmap", e->arch);

	/* MAP_FIXED_NOREPLACE over a mapping: -EEXIST, the mapping untouched. */
	fixed = map_scratch(e, 8);
	must(fill_pages(e->cpu, fixed, 8, 3), "fill 8 pages");
	tap_eq(mmp_mmap(e->s, fixed, 8 * PG, RW, MMP_MAP_FIXED_NOREPLACE, &a), -EEXIST,
	       "%s: MAP_FIXED_NOREPLACE over a whole mapping", e->arch);
	tap_eq(mmp_mmap(e->s, fixed + 7 * PG, 4 * PG, RW, MMP_MAP_FIXED_NOREPLACE, &a), -EEXIST,
	       "%s: MAP_FIXED_NOREPLACE over its last page", e->arch);
	tap_eq(mmp_mmap(e->s, fixed - 2 * PG, 3 * PG, MMP_PROT_READ, MMP_MAP_FIXED_NOREPLACE, &a),
	       -EEXIST, "%s: MAP_FIXED_NOREPLACE over its first page", e->arch);
	tap_eq(mmp_mmap(e->s, fixed, PG, RW, MMP_MAP_FIXED | MMP_MAP_FIXED_NOREPLACE, &a), -EEXIST,
	       "%s: MAP_FIXED|MAP_FIXED_NOREPLACE: NOREPLACE wins", e->arch);
	tap_ok(pages_hold(e->cpu, fixed, 8, 3), "%s: data intact after -EEXIST", e->arch);
	still_works(e, "MAP_FIXED_NOREPLACE -EEXIST");

	/* MAP_FIXED over a mapping replaces that part with fresh zero memory. */
	err = mmp_mmap(e->s, fixed + 2 * PG, 3 * PG, MMP_PROT_READ, MMP_MAP_FIXED, &b);
	tap_ok(!err && b == fixed + 2 * PG, "%s: MAP_FIXED over a mapping", e->arch);
	tap_ok(pages_hold(e->cpu, fixed, 2, 3) && pages_hold(e->cpu, fixed + 2 * PG, 3, 0),
	       "%s: MAP_FIXED: replaced part reads zero, the rest is intact", e->arch);
	tap_ok(range_holds(e->cpu, fixed, 5, 3, 3),
	       "%s: MAP_FIXED: pages after the replaced part intact", e->arch);
	tap_eq(mmp_write(e->cpu, fixed + 3 * PG, page_buf, 8), -EFAULT,
	       "%s: MAP_FIXED: the replacement has its own protection", e->arch);
	tap_eq(mmp_munmap(e->s, fixed, 8 * PG), 0, "%s: munmap", e->arch);
	still_works(e, "MAP_FIXED replacement");

	/* MAP_POPULATE of PROT_NONE maps nothing and is fine. */
	tap_eq(mmp_mmap(e->s, 0, 4 * PG, MMP_PROT_NONE, MMP_MAP_POPULATE, &a), 0,
	       "%s: MAP_POPULATE of PROT_NONE", e->arch);
	tap_eq(mmp_read(e->cpu, a, page_buf, 8), -EFAULT, "%s: PROT_NONE populated reads fault",
	       e->arch);
	mmp_munmap(e->s, a, 4 * PG);
	still_works(e, "MAP_POPULATE of PROT_NONE");
}

static void test_munmap(struct env *e)
{
	const uint64_t top = task_size(e->s);
	uint64_t a;

	a = map_scratch(e, 4);
	must(fill_pages(e->cpu, a, 4, 4), "fill");
	tap_eq(mmp_munmap(NULL, a, PG), -EINVAL, "%s: munmap: NULL space", e->arch);
	tap_eq(mmp_munmap(e->s, a + 1, PG), -EINVAL, "%s: munmap: unaligned", e->arch);
	tap_eq(mmp_munmap(e->s, a + PG / 2, PG), -EINVAL, "%s: munmap: half-page aligned", e->arch);
	tap_eq(mmp_munmap(e->s, a, 0), -EINVAL, "%s: munmap: len 0", e->arch);
	tap_eq(mmp_munmap(e->s, top, PG), -EINVAL, "%s: munmap: at TASK_SIZE", e->arch);
	tap_eq(mmp_munmap(e->s, top + PG, PG), -EINVAL, "%s: munmap: beyond TASK_SIZE",
	       e->arch);
	tap_eq(mmp_munmap(e->s, top - PG, 2 * PG), -EINVAL,
	       "%s: munmap: ending beyond TASK_SIZE", e->arch);
	tap_eq(mmp_munmap(e->s, a, UINT64_MAX), -EINVAL, "%s: munmap: len UINT64_MAX", e->arch);
	tap_eq(mmp_munmap(e->s, a, 0 - a + PG), -EINVAL, "%s: munmap: addr + len wraps", e->arch);
	tap_eq(mmp_munmap(e->s, 0xfffffffffffff000ull, 2 * PG), -EINVAL,
	       "%s: munmap: top of the 64-bit space, wrapping", e->arch);
	tap_ok(pages_hold(e->cpu, a, 4, 4), "%s: munmap: mapping intact after errors", e->arch);
	still_works(e, "bad munmap arguments");

	/* Unmapping nothing, or partly nothing, is fine (as Linux). */
	tap_eq(mmp_munmap(e->s, MMP_MMAP_MIN_ADDR, PG), 0, "%s: munmap of an unmapped range",
	       e->arch);
	tap_eq(mmp_munmap(e->s, 0, PG), 0, "%s: munmap of page 0", e->arch);
	tap_eq(mmp_munmap(e->s, top - PG, PG), 0, "%s: munmap of the unmapped last user page",
	       e->arch);
	tap_eq(mmp_munmap(e->s, a + PG, 3 * PG + 16 * PG), 0, "%s: munmap of a range partly mapped",
	       e->arch);
	tap_ok(pages_hold(e->cpu, a, 1, 4), "%s: munmap: the page before the range intact",
	       e->arch);
	tap_eq(mmp_read(e->cpu, a + PG, page_buf, 8), -EFAULT, "%s: munmap: the range is gone",
	       e->arch);
	tap_eq(mmp_munmap(e->s, a, 1), 0, "%s: munmap: len 1 rounds to a page", e->arch);
	tap_eq(mmp_read(e->cpu, a, page_buf, 8), -EFAULT, "%s: munmap: len 1 unmapped the page",
	       e->arch);
	still_works(e, "munmap of unmapped ranges");
}

static void test_mprotect(struct env *e)
{
	uint64_t a, v;

	a = map_scratch(e, 8);
	must(fill_pages(e->cpu, a, 8, 5), "fill");
	tap_eq(mmp_mprotect(NULL, a, PG, MMP_PROT_READ), -EINVAL, "%s: mprotect: NULL space",
	       e->arch);
	tap_eq(mmp_mprotect(e->s, a + 8, PG, MMP_PROT_READ), -EINVAL, "%s: mprotect: unaligned",
	       e->arch);
	tap_eq(mmp_mprotect(e->s, a, PG, 0x10), -EINVAL, "%s: mprotect: prot 0x10", e->arch);
	tap_eq(mmp_mprotect(e->s, a, PG, -1), -EINVAL, "%s: mprotect: prot -1", e->arch);
	tap_eq(mmp_mprotect(e->s, a, 0, MMP_PROT_READ), 0, "%s: mprotect: len 0", e->arch);
	tap_eq(mmp_mprotect(e->s, MMP_MMAP_MIN_ADDR, 0, MMP_PROT_NONE), 0,
	       "%s: mprotect: len 0 of an unmapped address", e->arch);
	tap_eq(mmp_mprotect(e->s, a, UINT64_MAX, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: len UINT64_MAX", e->arch);
	tap_eq(mmp_mprotect(e->s, a, 0 - a + PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: addr + len wraps", e->arch);
	tap_eq(mmp_mprotect(e->s, task_size(e->s), PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: at TASK_SIZE", e->arch);
	tap_eq(mmp_mprotect(e->s, 0xfffffffffffff000ull, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: last page of the 64-bit space (end wraps to 0)", e->arch);
	tap_eq(mmp_mprotect(e->s, MMP_MMAP_MIN_ADDR, PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: unmapped", e->arch);
	tap_eq(mmp_mprotect(e->s, a - PG, 2 * PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: starting in a hole", e->arch);
	tap_eq(mmp_mprotect(e->s, a + 7 * PG, 2 * PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: ending in a hole", e->arch);
	must(!mmp_munmap(e->s, a + 3 * PG, PG), "punch a hole");
	tap_eq(mmp_mprotect(e->s, a, 8 * PG, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect: range with a hole", e->arch);
	/* As Linux: the VMAs before the hole took the new protection, those after did not. */
	v = stamp(5, 0);
	tap_eq(mmp_write(e->cpu, a, &v, 8), -EFAULT,
	       "%s: mprotect -ENOMEM: pages before the hole took the new protection", e->arch);
	v = stamp(5, 5);
	tap_eq(mmp_write(e->cpu, a + 5 * PG, &v, 8), 0,
	       "%s: mprotect -ENOMEM: pages after the hole kept theirs", e->arch);
	tap_ok(pages_hold(e->cpu, a, 3, 5) && range_holds(e->cpu, a, 4, 4, 5),
	       "%s: mprotect -ENOMEM: data intact", e->arch);
	tap_eq(mmp_munmap(e->s, a, 8 * PG), 0, "%s: munmap", e->arch);
	still_works(e, "bad mprotect arguments");
}

static void test_madvise(struct env *e)
{
	uint64_t a;

	a = map_scratch(e, 8);
	must(fill_pages(e->cpu, a, 8, 6), "fill");
	tap_eq(mmp_madvise(NULL, a, PG, MMP_MADV_DONTNEED), -EINVAL, "%s: madvise: NULL space",
	       e->arch);
	tap_eq(mmp_madvise(e->s, a + 1, PG, MMP_MADV_DONTNEED), -EINVAL, "%s: madvise: unaligned",
	       e->arch);
	tap_eq(mmp_madvise(e->s, a, PG, 999), -EINVAL, "%s: madvise: advice 999", e->arch);
	tap_eq(mmp_madvise(e->s, a, PG, -1), -EINVAL, "%s: madvise: advice -1", e->arch);
	tap_eq(mmp_madvise(e->s, a, PG, 7), -EINVAL, "%s: madvise: advice 7 (none such)",
	       e->arch);
	tap_eq(mmp_madvise(e->s, a + 1, PG, MMP_MADV_FREE), -EINVAL,
	       "%s: madvise: MADV_FREE unaligned", e->arch);
	tap_eq(mmp_madvise(e->s, a + 1, PG, MMP_MADV_PAGEOUT), -EINVAL,
	       "%s: madvise: MADV_PAGEOUT unaligned", e->arch);
	tap_eq(mmp_madvise(e->s, a, 0, MMP_MADV_FREE), 0, "%s: madvise: MADV_FREE len 0", e->arch);
	tap_eq(mmp_madvise(e->s, a, UINT64_MAX, MMP_MADV_PAGEOUT), -EINVAL,
	       "%s: madvise: MADV_PAGEOUT len UINT64_MAX", e->arch);
	tap_eq(mmp_madvise(e->s, a, 0, MMP_MADV_DONTNEED), 0, "%s: madvise: len 0", e->arch);
	tap_eq(mmp_madvise(e->s, a, UINT64_MAX, MMP_MADV_DONTNEED), -EINVAL,
	       "%s: madvise: len UINT64_MAX", e->arch);
	tap_eq(mmp_madvise(e->s, a, 0 - a + PG, MMP_MADV_DONTNEED), -EINVAL,
	       "%s: madvise: addr + len wraps", e->arch);
	tap_eq(mmp_madvise(e->s, 0xfffffffffffff000ull, PG, MMP_MADV_DONTNEED), -EINVAL,
	       "%s: madvise: last page of the 64-bit space (end wraps to 0)", e->arch);
	/* The VMA-flag advices, MADV_REMOVE and the memory-failure ones. */
	static const int flag_advices[] = { MMP_MADV_NORMAL, MMP_MADV_RANDOM, MMP_MADV_SEQUENTIAL,
					    MMP_MADV_DONTFORK, MMP_MADV_DOFORK, MMP_MADV_WIPEONFORK,
					    MMP_MADV_KEEPONFORK, MMP_MADV_MERGEABLE,
					    MMP_MADV_UNMERGEABLE, MMP_MADV_REMOVE };
	for (unsigned int i = 0; i < sizeof(flag_advices) / sizeof(flag_advices[0]); i++) {
		tap_eq(mmp_madvise(e->s, a + 1, PG, flag_advices[i]), -EINVAL,
		       "%s: madvise %d: unaligned", e->arch, flag_advices[i]);
		tap_eq(mmp_madvise(e->s, a, UINT64_MAX, flag_advices[i]), -EINVAL,
		       "%s: madvise %d: len UINT64_MAX", e->arch, flag_advices[i]);
		tap_eq(mmp_madvise(e->s, MMP_MMAP_MIN_ADDR, PG, flag_advices[i]), -ENOMEM,
		       "%s: madvise %d: unmapped range", e->arch, flag_advices[i]);
	}
	tap_eq(mmp_madvise(e->s, a, PG, MMP_MADV_REMOVE), -EINVAL,
	       "%s: madvise: MADV_REMOVE of private anonymous memory", e->arch);
	tap_eq(mmp_madvise(e->s, a, PG, MMP_MADV_HWPOISON), -EPERM,
	       "%s: madvise: MADV_HWPOISON unprivileged", e->arch);
	tap_eq(mmp_madvise(e->s, a + 1, PG, MMP_MADV_SOFT_OFFLINE), -EINVAL,
	       "%s: madvise: MADV_SOFT_OFFLINE unaligned: the range first", e->arch);
	tap_eq(mmp_space_set_memory_merge(NULL, 1), -EINVAL, "%s: memory merge: NULL space",
	       e->arch);
	tap_ok(pages_hold(e->cpu, a, 8, 6), "%s: madvise: data intact after errors", e->arch);
	still_works(e, "bad madvise arguments");

	tap_eq(mmp_madvise(e->s, MMP_MMAP_MIN_ADDR, PG, MMP_MADV_DONTNEED), -ENOMEM,
	       "%s: madvise: unmapped range", e->arch);
	tap_eq(mmp_madvise(e->s, MMP_MMAP_MIN_ADDR, PG, MMP_MADV_HUGEPAGE), -ENOMEM,
	       "%s: madvise: MADV_HUGEPAGE of an unmapped range", e->arch);
	tap_eq(mmp_madvise(e->s, task_size(e->s) - PG, 2 * PG, MMP_MADV_DONTNEED), -ENOMEM,
	       "%s: madvise: range ending beyond TASK_SIZE", e->arch);
	must(!mmp_munmap(e->s, a + 3 * PG, PG), "punch a hole");
	tap_eq(mmp_madvise(e->s, a + PG, 6 * PG, MMP_MADV_DONTNEED), -ENOMEM,
	       "%s: madvise: DONTNEED over a hole", e->arch);
	/* Linux zaps the mapped parts before reporting the hole. */
	tap_ok(pages_hold(e->cpu, a, 1, 6), "%s: madvise -ENOMEM: page before the range intact",
	       e->arch);
	tap_ok(pages_hold(e->cpu, a + PG, 2, 0) && pages_hold(e->cpu, a + 4 * PG, 3, 0),
	       "%s: madvise -ENOMEM: mapped parts were zapped (read zero)", e->arch);
	tap_ok(range_holds(e->cpu, a, 7, 1, 6), "%s: madvise -ENOMEM: page after the range intact",
	       e->arch);
	tap_eq(mmp_madvise(e->s, a, 8 * PG, MMP_MADV_HUGEPAGE), -ENOMEM,
	       "%s: madvise: MADV_HUGEPAGE over a hole", e->arch);
	tap_eq(mmp_madvise(e->s, a, 8 * PG, MMP_MADV_NOHUGEPAGE), -ENOMEM,
	       "%s: madvise: MADV_NOHUGEPAGE over a hole", e->arch);
	must(fill_pages(e->cpu, a, 3, 6), "refill");
	tap_eq(mmp_madvise(e->s, a, 8 * PG, MMP_MADV_PAGEOUT), -ENOMEM,
	       "%s: madvise: MADV_PAGEOUT over a hole", e->arch);
	tap_eq(mmp_madvise(e->s, a, 8 * PG, MMP_MADV_FREE), -ENOMEM,
	       "%s: madvise: MADV_FREE over a hole", e->arch);
	tap_eq(mmp_madvise(e->s, MMP_MMAP_MIN_ADDR, PG, MMP_MADV_FREE), -ENOMEM,
	       "%s: madvise: MADV_FREE of an unmapped range", e->arch);
	/* Rewritten after MADV_FREE, the data must survive reclaim. */
	must(fill_pages(e->cpu, a, 3, 6), "rewrite");
	tap_ok(!mmp_reclaim(e->s) && pages_hold(e->cpu, a, 3, 6),
	       "%s: MADV_FREE'd then rewritten pages survive reclaim", e->arch);
	tap_eq(mmp_munmap(e->s, a, 8 * PG), 0, "%s: munmap", e->arch);
	still_works(e, "madvise over holes");
}


static void test_mremap(struct env *e)
{
	const int mm = MMP_MREMAP_MAYMOVE, fixed = MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED;
	struct mmp_space_stat st0, st1;
	uint64_t a, b, c, out = 0xdead;

	a = map_scratch(e, 8);
	must(fill_pages(e->cpu, a, 8, 19), "fill");
	b = a + 32 * PG; /* a free destination */
	tap_eq(mmp_mremap(NULL, a, PG, PG, 0, 0, &out), -EINVAL, "%s: mremap: NULL space", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, 0, 0, NULL), -EINVAL, "%s: mremap: NULL out", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, 8, 0, &out), -EINVAL, "%s: mremap: flag 8", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, -1, 0, &out), -EINVAL, "%s: mremap: flags -1", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, MMP_MREMAP_FIXED, b, &out), -EINVAL,
	       "%s: mremap: FIXED without MAYMOVE", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, MMP_MREMAP_DONTUNMAP, 0, &out), -EINVAL,
	       "%s: mremap: DONTUNMAP without MAYMOVE", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, 2 * PG, mm | MMP_MREMAP_DONTUNMAP, 0, &out), -EINVAL,
	       "%s: mremap: DONTUNMAP changing the size", e->arch);
	tap_eq(mmp_mremap(e->s, a + 8, PG, PG, mm, 0, &out), -EINVAL, "%s: mremap: unaligned",
	       e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, 0, mm, 0, &out), -EINVAL, "%s: mremap: new_len 0", e->arch);
	tap_eq(mmp_mremap(e->s, a, 0, PG, mm, 0, &out), -EINVAL,
	       "%s: mremap: old_len 0 of a private mapping", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, UINT64_MAX, mm, 0, &out), -EINVAL,
	       "%s: mremap: new_len UINT64_MAX (page-aligns to 0)", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, fixed, b + 8, &out), -EINVAL,
	       "%s: mremap: FIXED to an unaligned address", e->arch);
	tap_eq(mmp_mremap(e->s, a, 2 * PG, 2 * PG, fixed, a + PG, &out), -EINVAL,
	       "%s: mremap: FIXED onto an overlapping range", e->arch);
	tap_eq(mmp_mremap(e->s, a, 2 * PG, 2 * PG, fixed, task_size(e->s) - PG, &out), -EINVAL,
	       "%s: mremap: FIXED ending above TASK_SIZE", e->arch);
	tap_eq(mmp_mremap(e->s, a, PG, PG, fixed, 0xfffffffffffff000ull, &out), -EINVAL,
	       "%s: mremap: FIXED to the top of the 64-bit space", e->arch);
	tap_eq(mmp_mremap(e->s, MMP_MMAP_MIN_ADDR, PG, 2 * PG, mm, 0, &out), -EFAULT,
	       "%s: mremap: unmapped old range", e->arch);
	tap_eq(mmp_mremap(e->s, a + 4 * PG, 8 * PG, 16 * PG, mm, 0, &out), -EFAULT,
	       "%s: mremap: old range past the end of the VMA", e->arch);
	must(!mmp_mprotect(e->s, a + 4 * PG, 4 * PG, MMP_PROT_READ), "mprotect");
	must(!mmp_space_set_opt(e->s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(6, 16, 0)),
	     "model 6.16");
	tap_eq(mmp_mremap(e->s, a, 8 * PG, 8 * PG, fixed, b, &out), -EFAULT,
	       "%s: mremap: before 6.17, a FIXED move over two VMAs is refused", e->arch);
	must(!mmp_space_set_opt(e->s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_MODELED), "model 6.18");
	must(!mmp_mprotect(e->s, a + 4 * PG, 4 * PG, RW), "mprotect back");
	/* Something right after it: growing in place needs MAYMOVE. */
	must(!mmp_mmap(e->s, a + 8 * PG, PG, MMP_PROT_READ, MMP_MAP_FIXED_NOREPLACE, &c),
	     "mmap the neighbour");
	tap_eq(mmp_mremap(e->s, a, 8 * PG, 9 * PG, 0, 0, &out), -ENOMEM,
	       "%s: mremap: cannot grow in place without MAYMOVE", e->arch);
	tap_ok(out == 0xdead, "%s: mremap: out untouched on errors", e->arch);
	tap_ok(pages_hold(e->cpu, a, 8, 19) && !mmp_read(e->cpu, c, &out, 8),
	       "%s: mremap: both mappings intact after errors", e->arch);
	still_works(e, "bad mremap arguments");

	/* Linux: old_len == new_len without flags returns addr and changes nothing. */
	must(!mmp_space_stat(e->s, &st0), "stat");
	tap_eq(mmp_mremap(e->s, a + 2 * PG, 2 * PG, 2 * PG, 0, 0, &out), 0, "%s: mremap: same size",
	       e->arch);
	must(!mmp_space_stat(e->s, &st1), "stat");
	tap_ok(out == a + 2 * PG && st1.nr_vmas == st0.nr_vmas,
	       "%s: mremap: same size changes nothing (%llu VMAs before, %llu after)", e->arch,
	       (unsigned long long)st0.nr_vmas, (unsigned long long)st1.nr_vmas);
	tap_eq(mmp_munmap(e->s, a, 9 * PG), 0, "%s: munmap", e->arch);
	still_works(e, "a same-size mremap");
}


/*
 * MADV_COLLAPSE: the madvise argument checks, a hole, and no THP to be had
 * (-ENOMEM, thp_collapse_alloc_failed): the space stays as it was.
 */
static void test_collapse(struct env *e)
{
	struct mmp_phys *small;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	struct mmp_counters c;
	uint64_t a = map_scratch(e, 8), b = 0;

	must(fill_pages(e->cpu, a, 8, 7), "fill");
	tap_eq(mmp_madvise(NULL, a, PG, MMP_MADV_COLLAPSE), -EINVAL, "%s: collapse: NULL space",
	       e->arch);
	tap_eq(mmp_madvise(e->s, a + 1, PG, MMP_MADV_COLLAPSE), -EINVAL, "%s: collapse: unaligned",
	       e->arch);
	tap_eq(mmp_madvise(e->s, a, UINT64_MAX, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: collapse: len UINT64_MAX", e->arch);
	tap_eq(mmp_madvise(e->s, a, 0 - a + PG, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: collapse: addr + len wraps", e->arch);
	tap_eq(mmp_madvise(e->s, a, 0, MMP_MADV_COLLAPSE), 0, "%s: collapse: len 0", e->arch);
	tap_eq(mmp_madvise(e->s, MMP_MMAP_MIN_ADDR, 2 * MiB, MMP_MADV_COLLAPSE), -ENOMEM,
	       "%s: collapse: unmapped range", e->arch);
	tap_eq(mmp_madvise(e->s, a, 8 * PG, MMP_MADV_COLLAPSE), -EINVAL,
	       "%s: collapse: a VMA too small for a PMD", e->arch);
	tap_ok(pages_hold(e->cpu, a, 8, 7), "%s: collapse: data intact after errors", e->arch);
	tap_eq(mmp_munmap(e->s, a, 8 * PG), 0, "%s: munmap", e->arch);
	still_works(e, "bad MADV_COLLAPSE arguments");

	/* 4 MiB of RAM, 3 MiB of it written: no free 2 MiB block for the THP. */
	must(!mmp_phys_create(4 * MiB, &small), "small phys");
	{
		struct mmp_space_config cfg = { .arch = e->arch, .tlb_sanitizer = true };

		must(!mmp_space_create(small, &cfg, &s), "space");
	}
	must(!mmp_cpu_attach(s, &cpu), "cpu");
	must(!mmp_mmap(s, 0x40000000ULL, 3 * MiB, RW, MMP_MAP_FIXED, &b), "map 3 MiB");
	must(fill_pages(cpu, b, 3 * MiB / PG, 8), "fill 3 MiB");
	tap_eq(mmp_madvise(s, b, 2 * MiB, MMP_MADV_COLLAPSE), -ENOMEM,
	       "%s: collapse with no THP to be had: -ENOMEM", e->arch);
	mmp_space_counters(s, &c);
	tap_eq(c.v[MMP_C_THP_COLLAPSE_ALLOC_FAILED], 1, "%s: thp_collapse_alloc_failed 1", e->arch);
	tap_eq(c.v[MMP_C_THP_COLLAPSE_ALLOC], 0, "%s: thp_collapse_alloc 0", e->arch);
	tap_ok(pages_hold(cpu, b, 3 * MiB / PG, 8), "%s: -ENOMEM: data intact", e->arch);
	tap_eq(mmp_space_verify(s), 0, "%s: -ENOMEM: verify", e->arch);
	must(!mmp_cpu_detach(cpu), "detach");
	must(!mmp_space_destroy(s), "destroy");
	tap_eq(mmp_phys_destroy(small), 0, "%s: -ENOMEM: nothing leaked", e->arch);
}

/*
 * hugetlb: every refusal of mmap, munmap, mprotect, madvise and mremap with
 * the errno a 6.18 host gave, the pool's counts as they were, the space intact.
 */
static void test_hugetlb(struct env *e)
{
	const int mm = MMP_MREMAP_MAYMOVE, fixed = MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED;
	const uint64_t hp = 2 * MiB, at = SCRATCH + 64 * MiB;
	struct mmp_hugepages_stat st0, st;
	uint64_t a = 0xdead, p, q, out;

	must(!mmp_phys_set_hugepages(e->phys, hp, 3), "nr_hugepages");
	must(!mmp_phys_hugepages(e->phys, hp, &st0), "hugepages");
	tap_eq(mmp_mmap(e->s, 0, hp, RW, MMP_MAP_HUGETLB | (26 << MMP_MAP_HUGE_SHIFT), &a), -EINVAL,
	       "%s: hugetlb mmap: 64 MiB, no such pool", e->arch);
	tap_eq(mmp_mmap(e->s, 0, hp, RW, MMP_MAP_HUGETLB | (12 << MMP_MAP_HUGE_SHIFT), &a),
	       -EINVAL, "%s: hugetlb mmap: 4 KiB pages", e->arch);
	tap_eq(mmp_mmap(e->s, 0, hp, RW, MMP_MAP_HUGETLB | MMP_MAP_GROWSDOWN, &a), -EINVAL,
	       "%s: hugetlb mmap: MAP_GROWSDOWN", e->arch);
	tap_eq(mmp_mmap(e->s, 0, hp, RW, MMP_MAP_HUGETLB | MMP_MAP_DROPPABLE, &a), -EINVAL,
	       "%s: hugetlb mmap: MAP_DROPPABLE", e->arch);
	tap_eq(mmp_mmap(e->s, 0, 0, RW, MMP_MAP_HUGETLB, &a), -EINVAL, "%s: hugetlb mmap: len 0",
	       e->arch);
	/* ksys_mmap_pgoff's ALIGN wraps a length within a huge page of 2^64 to 0 */
	tap_eq(mmp_mmap(e->s, 0, UINT64_MAX, RW, MMP_MAP_HUGETLB, &a), -EINVAL,
	       "%s: hugetlb mmap: len UINT64_MAX wraps to 0", e->arch);
	tap_eq(mmp_mmap(e->s, 0, task_size(e->s) - PG, RW, MMP_MAP_HUGETLB, &a), -ENOMEM,
	       "%s: hugetlb mmap: a length that rounds past the task size", e->arch);
	tap_eq(mmp_mmap(e->s, at + PG, hp, RW, MMP_MAP_HUGETLB | MMP_MAP_FIXED, &a), -EINVAL,
	       "%s: hugetlb mmap: MAP_FIXED 4 KiB aligned", e->arch);
	tap_eq(mmp_mmap(e->s, MMP_MMAP_MIN_ADDR - PG, hp, RW, MMP_MAP_HUGETLB | MMP_MAP_FIXED, &a),
	       -EINVAL, "%s: hugetlb mmap: unaligned below mmap_min_addr: the alignment first",
	       e->arch);
	tap_eq(mmp_mmap(e->s, 0, 4 * hp, RW, MMP_MAP_HUGETLB, &a), -ENOMEM,
	       "%s: hugetlb mmap: more than the pool can promise", e->arch);
	tap_eq(mmp_mmap(e->s, e->canary, hp, RW, MMP_MAP_HUGETLB | MMP_MAP_FIXED_NOREPLACE, &a),
	       -EEXIST, "%s: hugetlb mmap: MAP_FIXED_NOREPLACE over the canary", e->arch);
	tap_eq(mmp_mmap(e->s, e->canary, 4 * hp, RW, MMP_MAP_HUGETLB | MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: hugetlb mmap: MAP_FIXED over the canary, the pool short: the canary stays",
	       e->arch);
	tap_ok(a == 0xdead, "%s: hugetlb mmap: addr_out untouched on errors", e->arch);
	/* The MAP_HUGE_* bits without MAP_HUGETLB are ignored, as mmap(2) ignores them. */
	tap_eq(mmp_mmap(e->s, 0, PG, RW, INT_MIN, &a), 0, "%s: mmap: flags INT_MIN: MAP_HUGE bits "
	       "alone", e->arch);
	tap_eq(mmp_munmap(e->s, a, PG), 0, "%s: ... an ordinary mapping", e->arch);
	must(!mmp_phys_hugepages(e->phys, hp, &st), "hugepages");
	tap_ok(!memcmp(&st, &st0, sizeof(st)), "%s: hugetlb: the pool as it was", e->arch);
	still_works(e, "bad hugetlb mmaps");

	must(!mmp_mmap(e->s, at, 3 * hp, RW, MMP_MAP_HUGETLB | MMP_MAP_FIXED, &p), "hugetlb mmap");
	must(!mmp_mmap(e->s, at + 4 * hp, hp, RW, MMP_MAP_HUGETLB | MMP_MAP_SHARED |
		       MMP_MAP_NORESERVE, &q), "hugetlb shared mmap");
	must(fill_pages(e->cpu, p, 2, 3) && fill_pages(e->cpu, p + hp, 2, 4), "hugetlb fill");
	tap_eq(mmp_munmap(e->s, p, PG), -EINVAL, "%s: hugetlb munmap: 4 KiB", e->arch);
	tap_eq(mmp_munmap(e->s, p + PG, hp), -EINVAL, "%s: hugetlb munmap: from inside", e->arch);
	tap_eq(mmp_munmap(e->s, p, hp + PG), -EINVAL, "%s: hugetlb munmap: ending inside",
	       e->arch);
	tap_eq(mmp_mprotect(e->s, p, PG, MMP_PROT_READ), -EINVAL, "%s: hugetlb mprotect: 4 KiB",
	       e->arch);
	tap_eq(mmp_mprotect(e->s, p + hp, hp + PG, MMP_PROT_READ), -EINVAL,
	       "%s: hugetlb mprotect: ending inside", e->arch);
	tap_eq(mmp_madvise(e->s, p + PG, hp, MMP_MADV_DONTNEED), -EINVAL,
	       "%s: hugetlb MADV_DONTNEED from inside", e->arch);
	tap_eq(mmp_madvise(e->s, p, PG, MMP_MADV_DONTNEED), 0,
	       "%s: hugetlb MADV_DONTNEED of 4 KiB: nothing", e->arch);
	tap_eq(mmp_madvise(e->s, p, hp, MMP_MADV_FREE), -EINVAL, "%s: hugetlb MADV_FREE", e->arch);
	tap_eq(mmp_madvise(e->s, p, hp, MMP_MADV_COLD), -EINVAL, "%s: hugetlb MADV_COLD", e->arch);
	tap_eq(mmp_madvise(e->s, p, hp, MMP_MADV_PAGEOUT), -EINVAL, "%s: hugetlb MADV_PAGEOUT",
	       e->arch);
	tap_eq(mmp_madvise(e->s, p, hp, MMP_MADV_COLLAPSE), -EINVAL, "%s: hugetlb MADV_COLLAPSE",
	       e->arch);
	tap_eq(mmp_madvise(e->s, p, hp, MMP_MADV_GUARD_INSTALL), -EINVAL,
	       "%s: hugetlb MADV_GUARD_INSTALL", e->arch);
	tap_eq(mmp_madvise(e->s, p + PG, PG, MMP_MADV_HUGEPAGE), -EINVAL,
	       "%s: hugetlb MADV_HUGEPAGE splitting a huge page", e->arch);
	tap_eq(mmp_mremap(e->s, p + PG, PG, PG, 0, 0, &out), -EINVAL,
	       "%s: hugetlb mremap: from inside", e->arch);
	tap_eq(mmp_mremap(e->s, p, hp, 2 * hp, mm, 0, &out), -EINVAL, "%s: hugetlb mremap: grow",
	       e->arch);
	tap_eq(mmp_mremap(e->s, p, hp, hp, mm | MMP_MREMAP_DONTUNMAP, at + 8 * hp, &out), -EINVAL,
	       "%s: hugetlb mremap: DONTUNMAP", e->arch);
	tap_eq(mmp_mremap(e->s, p, hp, hp, fixed, at + 8 * hp + PG, &out), -EINVAL,
	       "%s: hugetlb mremap: to an unaligned address", e->arch);
	tap_eq(mmp_mremap(e->s, p, 0, hp, mm, 0, &out), -EINVAL,
	       "%s: hugetlb mremap: old_len 0 of a private mapping", e->arch);
	tap_eq(mmp_gup(e->s, p, 1, true, &out), -ENOTSUP, "%s: hugetlb GUP", e->arch);
	tap_ok(pages_hold(e->cpu, p, 2, 3) && pages_hold(e->cpu, p + hp, 2, 4),
	       "%s: hugetlb: the data written before stays", e->arch);
	still_works(e, "bad hugetlb calls");
	tap_eq(mmp_munmap(e->s, at, 5 * hp), 0, "%s: hugetlb munmap of both, hole included",
	       e->arch);
	must(!mmp_phys_set_hugepages(e->phys, hp, 0), "nr_hugepages 0");
	must(!mmp_phys_hugepages(e->phys, hp, &st), "hugepages");
	tap_ok(!st.total && !st.rsvd && !st.surp, "%s: hugetlb: the pool empties", e->arch);
	still_works(e, "hugetlb");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < mmp_arch_count(); i++) {
		const char *arch = mmp_arch_name(i);
		struct env e;

		printf("# back end %s\n", arch);
		env_init(&e, arch, 64 * MiB);
		test_mmap(&e);
		test_munmap(&e);
		test_mprotect(&e);
		test_madvise(&e);
		test_collapse(&e);
		test_mremap(&e);
		test_hugetlb(&e);
		tap_eq(mmp_space_verify(e.s), 0, "%s: verify at the end", arch);
		env_fini(&e);
	}
	return tap_done();
}
