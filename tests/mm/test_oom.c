/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Running out of simulated memory in faults, fork, space creation, mremap,
 * GUP and MAP_POPULATE: -ENOMEM (or the kernel's answer for that call), the
 * space intact and usable again once memory is back.
 */
#include "badinput.h"
#include "mm.h"

/* ---- out of simulated memory ----------------------------------------------------------- */

static uint64_t free_pages(struct mmp_phys *phys)
{
	struct mmp_phys_stat st;

	must(!mmp_phys_stat(phys, &st), "phys_stat");
	return st.free_pages;
}

/* Free frames once page tables in an RCU grace period have landed (up to 2 s). */
static uint64_t settled_free_pages(struct mmp_phys *phys, uint64_t want)
{
	uint64_t n = free_pages(phys);

	for (int i = 0; i < 200 && n != want; i++) {
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
		n = free_pages(phys);
	}
	return n;
}

/* Write page after page until a write fails; returns how many pages were written. */
static uint64_t fill_until_oom(struct mmp_cpu *cpu, uint64_t addr, uint64_t max, int *err,
			       uint64_t tag)
{
	uint64_t p;

	for (p = 0; p < max; p++) {
		for (size_t i = 0; i < PG / 8; i++)
			page_buf[i] = stamp(tag, p) + i;
		*err = mmp_write(cpu, addr + p * PG, page_buf, PG);
		if (*err)
			break;
	}
	return p;
}

/*
 * Pages the frame-exact checks give back, one per page-table level: with
 * that many frames free a fork or a move gets the tables of its first 2 MiB
 * (every level but the PGD, which a child or an old space already has) and
 * fails at the next PTE table.
 */
static const uint64_t holes[MMP_MAX_LEVELS] = { 100, 200, 600, 700, 800 };

static bool is_hole(uint64_t p, unsigned int levels)
{
	for (unsigned int i = 0; i < levels; i++)
		if (p == holes[i])
			return true;
	return false;
}

static void test_oom(const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct mmp_phys *phys;
	struct mmp_space *s, *s2 = (struct mmp_space *)0x1, *child = NULL;
	struct mmp_cpu *cpu;
	uint64_t a, b, n, pop;
	unsigned int levels;
	int err = 0;

	must(!mmp_phys_create(4 * MiB, &phys), "phys 4 MiB");
	must(!mmp_space_create(phys, &cfg, &s), "space");
	must(!mmp_cpu_attach(s, &cpu), "cpu");
	must(!mmp_mmap(s, 0, 8 * MiB, RW, 0, &a), "mmap 8 MiB");
	n = fill_until_oom(cpu, a, 8 * MiB / PG, &err, 10);
	levels = s->arch->levels;
	tap_eq(err, -ENOMEM, "%s: write beyond simulated memory: -ENOMEM (after %llu pages)", arch,
	       (unsigned long long)n);
	tap_ok(n > 900 && n < 1024, "%s: most of the 1024 frames were used", arch);
	tap_eq(free_pages(phys), 0, "%s: phys exhausted", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after -ENOMEM", arch);
	tap_ok(pages_hold(cpu, a, n, 10), "%s: earlier pages hold their data", arch);
	tap_eq(mmp_write(cpu, a + n * PG, page_buf, 8), -ENOMEM,
	       "%s: the next write: -ENOMEM again", arch);
	tap_eq(mmp_memset(cpu, a + (n + 1) * PG, 1, 8), -ENOMEM, "%s: memset: -ENOMEM", arch);
	/* A read needs no memory: the zero page. */
	tap_ok(pages_hold(cpu, a + (n + 2) * PG, 1, 0), "%s: a read of untouched memory works",
	       arch);

	tap_eq(mmp_fork(s, &child), -ENOMEM, "%s: fork with no free frame", arch);
	tap_ok(child == NULL, "%s: fork: child untouched on error", arch);
	tap_eq(mmp_space_create(phys, &cfg, &s2), -ENOMEM, "%s: space_create on an exhausted phys",
	       arch);
	tap_ok(s2 == (struct mmp_space *)0x1, "%s: space_create: out untouched on error", arch);
	{
		uint64_t pfn = 0;

		tap_eq(mmp_gup(s, a + (n + 3) * PG, 1, true, &pfn), -ENOMEM,
		       "%s: gup of a page that must be faulted in: -ENOMEM", arch);
		tap_eq(mmp_gup(s, a + 3 * PG, 1, true, &pfn), 1,
		       "%s: gup of a present page needs no memory", arch);
		tap_eq(mmp_unpin(s, &pfn, 1), 0, "%s: unpin", arch);
	}
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);

	/* One frame per level: the child gets its tables for the first 2 MiB, not the second. */
	for (unsigned int i = 0; i < levels; i++)
		tap_eq(mmp_madvise(s, a + holes[i] * PG, PG, MMP_MADV_DONTNEED), 0,
		       "%s: DONTNEED %u", arch, i + 1);
	tap_eq(free_pages(phys), levels, "%s: %u frames free", arch, levels);
	tap_eq(mmp_fork(s, &child), -ENOMEM, "%s: fork running out of memory midway", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the failed fork", arch);
	tap_eq(free_pages(phys), levels, "%s: the failed fork leaked no frame", arch);
	{
		bool ok = pages_hold(cpu, a, 100, 10) && pages_hold(cpu, a + 100 * PG, 1, 0) &&
			  pages_hold(cpu, a + 600 * PG, 1, 0);

		for (uint64_t p = 101; ok && p < n; p++) {
			mmp_read(cpu, a + p * PG, page_buf, 8);
			ok = is_hole(p, levels) || page_buf[0] == stamp(10, p);
		}
		tap_ok(ok, "%s: parent data intact after the failed fork", arch);
	}
	/* The parent's entries were write-protected for the fork: writes reuse its pages. */
	tap_eq(mmp_write(cpu, a + 5 * PG, page_buf, 8), 0,
	       "%s: parent writes after the failed fork", arch);
	tap_eq(free_pages(phys), levels, "%s: ... by reusing its pages", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);

	/*
	 * A move that runs out of page tables midway moves everything back. The
	 * destination, in the PGD's second entry, shares no table with the
	 * source: it needs one table per level below the PGD and three PTE
	 * tables (it is 64 KiB off PMD alignment), one more than is free.
	 */
	{
		uint64_t out = 0, dst = level_size(pgd_level(s)) + 64 * KiB, v;
		bool ok = true;

		err = mmp_mremap(s, a, 4 * MiB, 4 * MiB, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, dst,
				 &out);
		tap_eq(err, -ENOMEM, "%s: mremap running out of memory midway", arch);
		tap_eq(mmp_space_verify(s), 0, "%s: verify after the failed mremap", arch);
		tap_eq(settled_free_pages(phys, levels), levels, "%s: the failed mremap leaked no frame",
		       arch);
		for (uint64_t p = 6; ok && p < n; p++) {
			ok = !mmp_read(cpu, a + p * PG, &v, 8);
			ok = ok &&
			     (is_hole(p, levels) || v == stamp(10, p));
		}
		tap_ok(ok, "%s: the failed mremap left the data in place", arch);
		tap_eq(mmp_read(cpu, dst, &v, 8), -EFAULT, "%s: and nothing at the destination",
		       arch);
	}

	/* Give memory back: writes work again. */
	tap_eq(mmp_munmap(s, a, 256 * PG), 0, "%s: munmap 1 MiB", arch);
	tap_ok(free_pages(phys) >= 250, "%s: munmap freed its frames (%llu free)", arch,
	       (unsigned long long)free_pages(phys));
	n = fill_until_oom(cpu, a + n * PG, 64, &err, 11);
	tap_ok(n == 64 && err == 0, "%s: writing works again", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	tap_eq(mmp_munmap(s, a, 8 * MiB), 0, "%s: munmap all", arch);

	/* MAP_POPULATE is best effort: more than the phys holds still maps. */
	err = mmp_mmap(s, 0, 8 * MiB, RW, MMP_MAP_POPULATE, &pop);
	tap_eq(err, 0, "%s: MAP_POPULATE of 8 MiB on a 4 MiB phys", arch);
	/* Tables freed by the munmap before may land from their grace period after it. */
	tap_ok(free_pages(phys) < 16, "%s: populate used all memory (%llu frames free)", arch,
	       (unsigned long long)free_pages(phys));
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the partial populate", arch);
	tap_ok(!err && pages_hold(cpu, pop, 16, 0), "%s: populated memory reads zero", arch);
	tap_eq(mmp_munmap(s, pop, 8 * MiB), 0, "%s: munmap", arch);

	/* A THP fault with no room for a huge folio falls back to small pages. */
	must(!mmp_mmap(s, 0, 4 * MiB, RW, 0, &b), "mmap 4 MiB");
	must(!mmp_madvise(s, b, 4 * MiB, MMP_MADV_HUGEPAGE), "madvise");
	n = fill_until_oom(cpu, b, 4 * MiB / PG, &err, 12);
	tap_eq(err, -ENOMEM, "%s: THP region: -ENOMEM when memory runs out (%llu pages)", arch,
	       (unsigned long long)n);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	tap_ok(pages_hold(cpu, b, n, 12), "%s: THP region data intact", arch);
	tap_eq(mmp_munmap(s, b, 4 * MiB), 0, "%s: munmap", arch);

	tap_eq(mmp_cpu_detach(cpu), 0, "%s: detach", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: phys_destroy", arch);
}

/* A shared THP whose COW finds no memory: split, then a one-page copy, or -ENOMEM. */
static void test_oom_huge_cow(const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct mmp_phys *phys;
	struct mmp_space *s, *child;
	struct mmp_cpu *cpu, *ccpu;
	uint64_t huge, fill, n, v = 0xabcdef;
	int err = 0;

	must(!mmp_phys_create(8 * MiB, &phys), "phys 8 MiB");
	must(!mmp_space_create(phys, &cfg, &s), "space");
	must(!mmp_cpu_attach(s, &cpu), "cpu");
	must(!mmp_mmap(s, 0, 2 * MiB, RW, 0, &huge), "mmap 2 MiB");
	must(!mmp_madvise(s, huge, 2 * MiB, MMP_MADV_HUGEPAGE), "madvise");
	must(fill_pages(cpu, huge, 512, 13), "fill THP");
	tap_eq(mmp_fork(s, &child), 0, "%s: fork with a THP", arch);
	must(!mmp_cpu_attach(child, &ccpu), "child cpu");
	must(!mmp_mmap(s, 0, 8 * MiB, RW, 0, &fill), "mmap filler");
	n = fill_until_oom(cpu, fill, 8 * MiB / PG, &err, 14);
	tap_eq(err, -ENOMEM, "%s: filler exhausted the phys", arch);
	tap_eq(mmp_write(ccpu, huge + 5 * PG, &v, 8), -ENOMEM,
	       "%s: COW of a shared THP with no memory: -ENOMEM", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the failed THP COW", arch);
	tap_ok(pages_hold(ccpu, huge, 512, 13), "%s: child still sees the shared data", arch);
	/* Splitting a PMD needs no memory: its PTE table was deposited beside it. */
	tap_eq(mmp_munmap(s, huge + 200 * PG, PG), 0,
	       "%s: munmap inside the parent's THP with no free frame", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the split", arch);
	tap_ok(pages_hold(cpu, huge, 200, 13) && range_holds(cpu, huge, 201, 311, 13) &&
		       pages_hold(ccpu, huge, 512, 13),
	       "%s: both sides keep their data", arch);
	tap_eq(free_pages(phys), 0, "%s: the shared page stays allocated", arch);
	must(!mmp_madvise(s, fill, PG, MMP_MADV_DONTNEED), "free one frame");
	tap_eq(mmp_write(ccpu, huge + 5 * PG, &v, 8), 0,
	       "%s: with one frame free the COW copies one page", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the small COW", arch);
	tap_ok(pages_hold(cpu, huge, 200, 13) && range_holds(cpu, huge, 201, 311, 13),
	       "%s: parent data unchanged", arch);
	mmp_read(ccpu, huge + 5 * PG, page_buf, PG);
	{
		bool ok = page_buf[0] == v;

		for (size_t i = 1; i < PG / 8; i++)
			ok &= page_buf[i] == stamp(13, 5) + i;
		ok &= pages_hold(ccpu, huge, 5, 13);
		tap_ok(ok, "%s: child sees its write over the copied data", arch);
	}
	tap_ok(range_holds(cpu, fill, 1, n - 1, 14), "%s: parent filler data intact", arch);
	/* The parent goes first; the child keeps the phys busy. */
	tap_eq(mmp_cpu_detach(cpu), 0, "%s: detach", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy the parent first", arch);
	tap_eq(mmp_space_verify(child), 0, "%s: verify the orphan child", arch);
	tap_ok(pages_hold(ccpu, huge, 5, 13) && range_holds(ccpu, huge, 6, 506, 13),
	       "%s: the orphan child keeps its data", arch);
	tap_eq(mmp_phys_destroy(phys), -EBUSY, "%s: phys_destroy while the child lives", arch);
	tap_eq(mmp_cpu_detach(ccpu), 0, "%s: detach child cpu", arch);
	tap_eq(mmp_space_destroy(child), 0, "%s: destroy child", arch);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: phys_destroy", arch);
}

/*
 * fork runs out of memory at the child's deposit for a THP, or after sharing
 * the THP: nothing leaks and the parent keeps working without memory.
 */
static void test_oom_fork_huge(const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	const uint64_t huge = 0x40000000ull, fill = 0x80000000ull;
	struct mmp_phys *phys;
	struct mmp_space *s, *child = NULL;
	struct mmp_cpu *cpu;
	uint64_t a, n;
	int err = 0;

	must(!mmp_phys_create(8 * MiB, &phys), "phys 8 MiB");
	must(!mmp_space_create(phys, &cfg, &s), "space");
	must(!mmp_cpu_attach(s, &cpu), "cpu");
	/* The THP sits below the filler, so fork copies it first. */
	must(!mmp_mmap(s, huge, 2 * MiB, RW, MMP_MAP_FIXED, &a), "mmap THP");
	must(!mmp_madvise(s, huge, 2 * MiB, MMP_MADV_HUGEPAGE), "madvise");
	must(fill_pages(cpu, huge, 512, 16), "fill THP");
	must(!mmp_mmap(s, fill, 8 * MiB, RW, MMP_MAP_FIXED, &a), "mmap filler");
	n = fill_until_oom(cpu, fill, 8 * MiB / PG, &err, 17);
	tap_eq(err, -ENOMEM, "%s: filler exhausted the phys", arch);

	for (unsigned int k = s->arch->levels - 1; k <= s->arch->levels; k++) {
		/* k frames: the PGD and the tables down to the PMD, then the THP's deposit or not. */
		for (unsigned int i = 0; i < k; i++)
			must(!mmp_madvise(s, fill + (100 + 10 * i) * PG, PG, MMP_MADV_DONTNEED),
			     "DONTNEED");
		tap_eq(free_pages(phys), k, "%s: %u frames free", arch, k);
		tap_eq(mmp_fork(s, &child), -ENOMEM, "%s: fork with a THP and %u free frames", arch,
		       k);
		tap_eq(free_pages(phys), k, "%s: the failed fork leaked no frame (%u free)", arch,
		       k);
		tap_eq(mmp_space_verify(s), 0, "%s: verify after the failed fork (%u)", arch, k);
		tap_ok(pages_hold(cpu, huge, 512, 16), "%s: THP data intact (%u)", arch, k);
		/* Reusing an exclusive THP after the failed fork needs no memory. */
		tap_eq(mmp_write(cpu, huge + 3 * PG, page_buf, 8), 0,
		       "%s: parent writes its THP after the failed fork (%u)", arch, k);
		tap_eq(free_pages(phys), k, "%s: ... without a copy (%u)", arch, k);
		must(fill_pages(cpu, huge, 512, 16), "refill THP");
		/* Take the frames back for the next round. */
		for (unsigned int i = 0; i < k; i++)
			must(fill_pages(cpu, fill + (100 + 10 * i) * PG, 1, 18), "refill");
		tap_eq(free_pages(phys), 0, "%s: exhausted again", arch);
	}
	tap_ok(range_holds(cpu, fill, 0, 100, 17) && n > 200, "%s: filler data intact", arch);
	tap_eq(mmp_cpu_detach(cpu), 0, "%s: detach", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: destroy", arch);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: phys_destroy", arch);
}


int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < mmp_arch_count(); i++) {
		const char *arch = mmp_arch_name(i);

		printf("# back end %s\n", arch);
		test_oom(arch);
		test_oom_huge_cow(arch);
		test_oom_fork_huge(arch);
	}
	return tap_done();
}
