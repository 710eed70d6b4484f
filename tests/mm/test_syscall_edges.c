/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * System-call edge rules of Linux 6.18 for private anonymous memory, each
 * first seen as a divergence by the differential test (test_kernel_diff) and
 * checked on the host: holes in mprotect and mremap ranges, the order of
 * mremap's checks, multi-VMA moves, and when VMAs merge. Besides, one the host
 * cannot show on cue: an mremap out of memory midway moves back what it moved.
 * Every back end.
 */
#include <errno.h>
#include <string.h>

#include <mmprim/mmprim.h>

#include "util.h"

#define P	MMP_PAGE_SIZE
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define MM	MMP_MREMAP_MAYMOVE
#define FX	(MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED)
#define DU	MMP_MREMAP_DONTUNMAP
#define BASE	(1ULL << 32)

static struct mmp_phys *phys;

struct env {
	const char *arch;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
};

static uint64_t fixed(struct env *e, uint64_t addr, uint64_t len, int prot)
{
	uint64_t out = 0;

	must(!mmp_mmap(e->s, addr, len, prot, MMP_MAP_FIXED, &out) && out == addr,
	     "mmap %#llx", (unsigned long long)addr);
	return addr;
}

static uint64_t nr_vmas(struct env *e)
{
	struct mmp_space_stat st;

	must(!mmp_space_stat(e->s, &st), "stat");
	return st.nr_vmas;
}

static bool writable(struct env *e, uint64_t addr)
{
	uint8_t v = 0x5a;

	return mmp_write(e->cpu, addr, &v, 1) == 0;
}

static bool readable(struct env *e, uint64_t addr)
{
	uint8_t v;

	return mmp_read(e->cpu, addr, &v, 1) == 0;
}

static void test_mprotect_hole(struct env *e)
{
	uint64_t a = fixed(e, BASE, 4 * P, RW);

	fixed(e, a + 6 * P, 2 * P, RW);
	tap_eq(mmp_mprotect(e->s, a, 8 * P, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect over a hole fails with ENOMEM", e->arch);
	tap_ok(!writable(e, a + 3 * P) && readable(e, a + 3 * P),
	       "%s: mprotect applies the protection to the VMAs before the hole", e->arch);
	tap_ok(writable(e, a + 6 * P), "%s: mprotect leaves the VMAs after the hole", e->arch);
	tap_eq(mmp_mprotect(e->s, a + 4 * P, 4 * P, MMP_PROT_READ), -ENOMEM,
	       "%s: mprotect starting in a hole fails", e->arch);
	tap_ok(writable(e, a + 6 * P), "%s: ...and changes nothing", e->arch);
	tap_eq(mmp_mprotect(e->s, a, 0, 0x40), 0, "%s: mprotect of length 0 ignores a bad prot",
	       e->arch);
	tap_eq(mmp_mprotect(e->s, a, -a, 0x40), -ENOMEM,
	       "%s: mprotect checks a wrapping length before the prot", e->arch);
	tap_eq(mmp_mprotect(e->s, a + 6 * P, 1ULL << 63, MMP_PROT_NONE), -ENOMEM,
	       "%s: mprotect with a length past the task size stops at the hole", e->arch);
	tap_ok(!readable(e, a + 7 * P), "%s: ...after protecting what came before it", e->arch);
	must(!mmp_munmap(e->s, a, 8 * P), "munmap");
}

static void test_mremap_shrink_past_vma(struct env *e)
{
	uint64_t a = fixed(e, BASE, 4 * P, RW), out = 0;

	fixed(e, a + 6 * P, 2 * P, MMP_PROT_READ);
	tap_eq(mmp_mremap(e->s, a, 8 * P, 2 * P, 0, 0, &out), 0,
	       "%s: mremap shrink needs only the start mapped", e->arch);
	tap_ok(out == a && readable(e, a + P) && !readable(e, a + 2 * P) &&
	       !readable(e, a + 6 * P), "%s: ...and unmaps the tail like munmap, across the hole",
	       e->arch);
	fixed(e, a + 2 * P, 6 * P, RW);
	tap_eq(mmp_mremap(e->s, a + 6 * P, 8 * P, 8 * P, 0, 0, &out), 0,
	       "%s: same-size mremap past the VMA's end returns addr", e->arch);
	tap_ok(out == a + 6 * P, "%s: ...unchanged", e->arch);
	tap_eq(mmp_mremap(e->s, a + 6 * P, 8 * P, 16 * P, 0, 0, &out), -EFAULT,
	       "%s: growing mremap still needs the old range inside the VMA", e->arch);
	must(!mmp_munmap(e->s, a, 16 * P), "munmap");
}

static void test_mremap_check_order(struct env *e)
{
	uint64_t a = fixed(e, BASE, 4 * P, RW), out = 0;

	tap_eq(mmp_mremap(e->s, BASE + (1ULL << 30), 0, P, MM, 0, &out), -EFAULT,
	       "%s: mremap with old_len 0 looks the address up first (EFAULT)", e->arch);
	tap_eq(mmp_mremap(e->s, a, 0, P, MM, 0, &out), -EINVAL,
	       "%s: mremap with old_len 0 of a private mapping is EINVAL", e->arch);
	tap_eq(mmp_mremap(e->s, a, ~0ULL, P, 0, 0, &out), -EINVAL,
	       "%s: a shrink whose tail passes the task size is EINVAL", e->arch);
	tap_eq(mmp_mremap(e->s, a, 2 * P, 2 * P - 100, MM | DU, BASE + (1ULL << 30), &out), 0,
	       "%s: DONTUNMAP compares page-rounded lengths (6.17+)", e->arch);
	must(!mmp_space_set_opt(e->s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_VERSION(6, 16, 0)),
	     "model 6.16");
	tap_eq(mmp_mremap(e->s, a, 2 * P, 2 * P - 100, MM | DU, BASE + (2ULL << 30), &out), -EINVAL,
	       "%s: before 6.17 DONTUNMAP compared the lengths as given", e->arch);
	must(!mmp_space_set_opt(e->s, MMP_OPT_KERNEL_VERSION, MMP_KERNEL_MODELED), "model 6.18");
	tap_eq(mmp_mremap(e->s, a, P, P, FX, 0, &out), -EPERM,
	       "%s: a FIXED move below mmap_min_addr is EPERM", e->arch);
	tap_ok(readable(e, a) && !mmp_space_verify(e->s), "%s: ...and keeps the source", e->arch);
	must(!mmp_munmap(e->s, BASE, 1ULL << 32), "munmap");
}

static void test_multi_vma_move(struct env *e)
{
	uint64_t a = fixed(e, BASE, 2 * P, RW), dst = BASE + (1ULL << 30), out = 0;
	uint8_t v;

	fixed(e, a + 3 * P, 2 * P, MMP_PROT_READ);
	v = 0x11;
	must(!mmp_write(e->cpu, a, &v, 1), "write");
	fixed(e, dst + 2 * P, P, RW);	/* inside the gap's destination: left alone */
	tap_eq(mmp_mremap(e->s, a, 5 * P, 5 * P, FX, dst, &out), 0,
	       "%s: MAYMOVE|FIXED with equal lengths moves several VMAs and a gap (6.17+)",
	       e->arch);
	tap_ok(out == dst && !readable(e, a) && !readable(e, a + 3 * P),
	       "%s: ...the old range is empty", e->arch);
	tap_ok(!mmp_read(e->cpu, dst, &v, 1) && v == 0x11 && readable(e, dst + 4 * P) &&
	       !writable(e, dst + 4 * P), "%s: ...data and protections moved", e->arch);
	tap_ok(writable(e, dst + 2 * P), "%s: ...the gap's destination keeps its mapping", e->arch);
	tap_eq(mmp_mremap(e->s, dst + 5 * P, 2 * P, 2 * P, FX, a, &out), -EFAULT,
	       "%s: a multi-VMA move may not start in a hole", e->arch);
	must(!mmp_munmap(e->s, dst, 8 * P), "munmap");
}

/*
 * A multi-VMA move goes VMA by VMA: one that refuses (sealed) fails the call,
 * and the VMAs before it stay moved, as on the host (6.18). Last: the seal
 * stays for the life of the space.
 */
static void test_multi_vma_move_stops(struct env *e)
{
	uint64_t a = fixed(e, BASE + (8ULL << 30), 2 * P, RW), dst = BASE + (1ULL << 30), out = 0;
	uint8_t v = 0x11;

	fixed(e, a + 2 * P, 2 * P, MMP_PROT_READ);
	must(!mmp_write(e->cpu, a, &v, 1), "write");
	must(!mmp_mseal(e->s, a + 2 * P, 2 * P, 0), "mseal");
	tap_eq(mmp_mremap(e->s, a, 4 * P, 4 * P, FX, dst, &out), -EPERM,
	       "%s: a multi-VMA move that meets a sealed VMA fails", e->arch);
	tap_ok(!readable(e, a) && !mmp_read(e->cpu, dst, &v, 1) && v == 0x11 &&
	       readable(e, a + 2 * P) && !readable(e, dst + 2 * P) && !mmp_space_verify(e->s),
	       "%s: ...after moving the VMA before it", e->arch);
	must(!mmp_munmap(e->s, dst, 2 * P), "munmap");
}

static void test_merges(struct env *e)
{
	uint64_t a = BASE, out = 0, before;
	uint8_t v = 1;

	/* A never-faulted VMA moved next to a fresh one takes its pgoff and merges. */
	fixed(e, a, 2 * P, RW);
	fixed(e, a + (1ULL << 30), 2 * P, RW);
	tap_eq(mmp_mremap(e->s, a + (1ULL << 30), 2 * P, 2 * P, FX, a + 2 * P, &out), 0,
	       "%s: move a never-faulted VMA", e->arch);
	tap_eq(nr_vmas(e), 1, "%s: ...it merges with its new neighbour", e->arch);
	must(!mmp_munmap(e->s, a, 4 * P), "munmap");

	/* Read-only after being written keeps VM_ACCOUNT: no merge with a fresh read-only one. */
	fixed(e, a, P, RW);
	must(!mmp_write(e->cpu, a, &v, 1), "write");
	must(!mmp_mprotect(e->s, a, P, MMP_PROT_READ), "mprotect");
	fixed(e, a + P, P, MMP_PROT_READ);
	tap_eq(nr_vmas(e), 2, "%s: faulted RW->R stays apart from a fresh R (VM_ACCOUNT)", e->arch);
	must(!mmp_munmap(e->s, a, 2 * P), "munmap");
	fixed(e, a, P, RW);
	must(!mmp_mprotect(e->s, a, P, MMP_PROT_READ), "mprotect");
	fixed(e, a + P, P, MMP_PROT_READ);
	tap_eq(nr_vmas(e), 1, "%s: never-faulted RW->R is uncharged and merges", e->arch);
	must(!mmp_munmap(e->s, a, 2 * P), "munmap");

	/*
	 * A first fault next to a compatible faulted VMA (equal but for the
	 * protection, pgoff contiguous) shares its anon_vma, so the two merge
	 * once their protections agree (find_mergeable_anon_vma).
	 */
	fixed(e, a, 4 * P, RW);
	must(!mmp_write(e->cpu, a + 3 * P, &v, 1), "write");
	must(!mmp_mprotect(e->s, a + 2 * P, 2 * P, MMP_PROT_READ), "mprotect");
	must(!mmp_munmap(e->s, a, 2 * P), "munmap");
	fixed(e, a, 2 * P, RW);
	must(!mmp_write(e->cpu, a, &v, 1), "first fault");
	must(!mmp_mprotect(e->s, a, 2 * P, MMP_PROT_READ), "mprotect");
	tap_eq(nr_vmas(e), 1, "%s: a first fault shares the compatible neighbour's anon_vma",
	       e->arch);
	tap_ok(!mmp_space_verify(e->s), "%s: ...and the merged VMA verifies", e->arch);
	must(!mmp_munmap(e->s, a, 4 * P), "munmap");

	/* An mprotect that changes nothing keeps the charge, even of never-faulted memory. */
	fixed(e, a, P, RW);
	must(!mmp_write(e->cpu, a, &v, 1), "write");
	must(!mmp_mprotect(e->s, a, P, MMP_PROT_READ), "mprotect: charged, faulted");
	tap_eq(mmp_mremap(e->s, a, P, P, FX | DU, a + (1ULL << 30), &out), 0,
	       "%s: DONTUNMAP the whole VMA (it loses its anon_vma)", e->arch);
	must(!mmp_mprotect(e->s, a, P, MMP_PROT_READ), "mprotect to the same protection");
	fixed(e, a + P, P, MMP_PROT_READ);
	tap_eq(nr_vmas(e), 3, "%s: a same-protection mprotect does not uncharge (no merge)",
	       e->arch);
	must(!mmp_munmap(e->s, a, 2 * P) && !mmp_munmap(e->s, a + (1ULL << 30), P), "munmap");

	/* fork copies no page tables of a VMA never faulted in (vma_needs_copy)... */
	{
		struct env c = { .arch = e->arch }, g = { .arch = e->arch };
		struct mmp_space_stat st;
		uint8_t b;

		must(!mmp_mmap(e->s, a, 2 * MiB, MMP_PROT_READ, MMP_MAP_FIXED | MMP_MAP_POPULATE,
			       &out), "populate zero pages");
		must(!mmp_madvise(e->s, a, 2 * MiB, MMP_MADV_HUGEPAGE), "MADV_HUGEPAGE");
		must(!mmp_fork(e->s, &c.s), "fork");
		must(!mmp_space_stat(c.s, &st), "stat");
		tap_eq(st.pgtable_bytes, 0, "%s: fork copies no tables of a never-faulted VMA",
		       e->arch);
		/* ...so the child's read faults the huge zero page, which prepares an anon_vma. */
		must(!mmp_cpu_attach(c.s, &c.cpu), "attach");
		must(!mmp_read(c.cpu, a + 5, &b, 1), "read");
		mmp_cpu_detach(c.cpu);
		must(!mmp_fork(c.s, &g.s), "fork the grandchild");
		must(!mmp_mmap(g.s, a + 2 * MiB, 2 * MiB, MMP_PROT_READ, MMP_MAP_FIXED, &out) &&
		     !mmp_madvise(g.s, a + 2 * MiB, 2 * MiB, MMP_MADV_HUGEPAGE), "a neighbour");
		tap_eq(nr_vmas(&g), 2,
		       "%s: a huge zero page read gives the VMA an anon_vma (no merge in a grandchild)",
		       e->arch);
		must(!mmp_space_destroy(g.s) && !mmp_space_destroy(c.s), "destroy");
		must(!mmp_munmap(e->s, a, 2 * MiB), "munmap");
	}

	/*
	 * Only what a call changes merges: two VMAs that could merge but were
	 * left apart stay apart through an mprotect that changes nothing and
	 * an madvise beside them.
	 */
	{
		struct env c = { .arch = e->arch };
		uint64_t far = a + (1ULL << 30), n;

		fixed(e, a, 2 * P, RW);
		must(!mmp_write(e->cpu, a, &v, 1), "write");
		must(!mmp_fork(e->s, &c.s), "fork");
		fixed(&c, a + 2 * P, 2 * P, RW);	/* apart: the child's anon_vma has parents */
		must(!mmp_mremap(c.s, a, 2 * P, 2 * P, FX | DU, far, &out), "DONTUNMAP it all");
		n = nr_vmas(&c);			/* [a, +2P) lost its anon_vma: now mergeable */
		must(!mmp_mprotect(c.s, a, 4 * P, RW), "mprotect to the same protection");
		tap_eq(nr_vmas(&c), n, "%s: an mprotect that changes nothing merges nothing",
		       e->arch);
		must(!mmp_madvise(c.s, a, P, MMP_MADV_NOHUGEPAGE), "NOHUGEPAGE");
		tap_eq(nr_vmas(&c), n + 1, "%s: madvise merges only around what it changed",
		       e->arch);
		tap_ok(!mmp_space_verify(c.s), "%s: verify the child", e->arch);
		must(!mmp_space_destroy(c.s), "destroy the child");
		must(!mmp_munmap(e->s, a, 4 * P), "munmap");
	}

	/* A forked child's faulted VMA does not lend its anon_vma to a new neighbour. */
	{
		struct env c = { .arch = e->arch };

		fixed(e, a, 4 * P, RW);
		must(!mmp_write(e->cpu, a, &v, 1), "write");
		must(!mmp_fork(e->s, &c.s), "fork");
		before = nr_vmas(&c);
		fixed(&c, a + 2 * P, 2 * P, RW);
		tap_eq(nr_vmas(&c), before + 1,
		       "%s: in a forked child, a new mapping does not merge with a faulted VMA",
		       e->arch);
		fixed(e, a + 2 * P, 2 * P, RW);
		tap_eq(nr_vmas(e), before, "%s: ...while in the parent it does", e->arch);
		tap_ok(!mmp_space_verify(c.s), "%s: verify the child", e->arch);
		must(!mmp_space_destroy(c.s), "destroy the child");
		must(!mmp_munmap(e->s, a, 4 * P), "munmap");
	}
}

/*
 * An mremap that runs out of memory for the new page tables midway moves
 * back what it moved (the old tables are still there, so that cannot fail)
 * and leaves the old range as it was. Memory is filled, then a few frames
 * freed, so the move gets some of its tables but not all.
 */
static void test_mremap_enomem_moves_back(const char *arch)
{
	struct mmp_phys *small;
	struct env e = { .arch = arch };
	uint64_t src = BASE + MiB, dst, fill = BASE + (1ULL << 30), out;
	bool partial = false;

	must(!mmp_phys_create(8 * MiB, &small), "a small phys");
	e.s = new_space(small, arch);
	/* Halfway up the space: far from the source, so the move needs upper tables too. */
	dst = (task_size(e.s) / 2 & ~((1ULL << 30) - 1)) + MiB;
	must(!mmp_cpu_attach(e.s, &e.cpu), "attach");
	fixed(&e, src, 2 * MiB, RW);
	for (uint64_t i = 0; i < 2 * MiB / P; i++)
		must(!mmp_memset(e.cpu, src + i * P, (int)(i % 251) + 1, 8), "fill the source");
	fixed(&e, fill, 8 * MiB, RW);
	uint64_t filled = 0;

	while (filled < 8 * MiB / P && !mmp_memset(e.cpu, fill + filled * P, 1, 1))
		filled++;
	for (unsigned int give = 1; give <= 8 && !partial; give++) {
		struct mmp_counters before, d;
		struct mmp_phys_stat st;
		int err;

		/* Hand back @give frames, one page a time from the end of the filler. */
		must(!mmp_madvise(e.s, fill + (filled - give) * P, P, MMP_MADV_DONTNEED), "free one");
		filled--;
		mmp_space_counters(e.s, &before);
		err = mmp_mremap(e.s, src, 2 * MiB, 2 * MiB, FX, dst, &out);
		counters_since(e.s, &before, &d);
		if (err == 0)
			break;
		must(err == -ENOMEM, "mremap fails only for memory (%d)", err);
		partial = d.v[MMP_C_MOVE_PTES] > 0;
		/* The failed attempt's new tables go through RCU: let them land before the next. */
		must(!mmp_phys_stat(small, &st), "phys stat");
	}
	tap_ok(partial, "%s: an mremap ran out of memory after moving part of the range", arch);
	bool intact = true;

	for (uint64_t i = 0; i < 2 * MiB / P && intact; i++) {
		uint8_t b[8];

		intact = !mmp_read(e.cpu, src + i * P, b, 8) && b[0] == (uint8_t)(i % 251 + 1) &&
			 b[7] == b[0];
	}
	tap_ok(intact, "%s: ...and the old range holds all its data", arch);
	tap_ok(!readable(&e, dst), "%s: ...and nothing is mapped at the new address", arch);
	tap_ok(!mmp_space_verify(e.s), "%s: ...and the space verifies", arch);
	mmp_cpu_detach(e.cpu);
	must(!mmp_space_destroy(e.s) && !mmp_phys_destroy(small), "teardown");
}

/*
 * mremap grows a VMA in place (vma_merge_extend) and may merge it with the VMA
 * after, never with the one before. Two stack VMAs, the second grown down to
 * the first by a fault (expand_downwards: no guard gap between two stacks, no
 * merge), then the second grown in place: a 6.18.44 host keeps them apart.
 */
static void test_grow_in_place_merges_forward_only(struct env *e)
{
	uint64_t a = BASE, out = 0;
	struct mmp_vma_info vi;
	uint8_t v = 1;

	must(!mmp_mmap(e->s, a, 8 * P, RW, MMP_MAP_FIXED | MMP_MAP_GROWSDOWN, &out), "stack");
	must(!mmp_munmap(e->s, a + 4 * P, P), "a hole below the upper stack");
	tap_eq(mmp_write(e->cpu, a + 4 * P, &v, 1), 0, "%s: the upper stack grows down", e->arch);
	tap_eq(nr_vmas(e), 2, "%s: ...to the lower one, without merging", e->arch);
	tap_eq(mmp_mremap(e->s, a + 4 * P, 4 * P, 5 * P, 0, 0, &out), 0,
	       "%s: grow the upper one in place", e->arch);
	mmp_space_vma_info(e->s, a + 4 * P, &vi);
	tap_ok(vi.start == a + 4 * P && vi.end == a + 9 * P,
	       "%s: grown in place, it does not merge backwards", e->arch);
	must(!mmp_munmap(e->s, a, 16 * P), "clean");
}

/*
 * Placement of a private anonymous mapping of whole PMDs: PMD aligned when
 * there is no hint (__get_unmapped_area's THP alignment, since 6.12), but
 * with a hint that is taken, the search below it is the plain one
 * (thp_get_unmapped_area only runs for "no hint"): a 6.18 host put an
 * MREMAP_DONTUNMAP move with a busy new_addr hint, and an mmap with a busy
 * hint, at unaligned addresses just below the mapping above.
 */
static void test_hint_skips_thp_alignment(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	uint64_t top, hinted, plain, moved, src = BASE;

	must(!mmp_mmap(s, 0, P, RW, 0, &top), "a page at the top");
	must((top - 2 * MMP_PMD_SIZE) % MMP_PMD_SIZE, "the gap below it ends unaligned");
	tap_eq(mmp_mmap(s, top, 2 * MMP_PMD_SIZE, RW, 0, &hinted), 0, "%s: map, hint busy", arch);
	tap_eq(hinted, top - 2 * MMP_PMD_SIZE, "%s: placed right below, not PMD aligned", arch);
	must(!mmp_munmap(s, hinted, 2 * MMP_PMD_SIZE), "unmap");
	tap_eq(mmp_mmap(s, 0, 2 * MMP_PMD_SIZE, RW, 0, &plain), 0, "%s: map, no hint", arch);
	tap_eq(plain, (top - 2 * MMP_PMD_SIZE) & ~(MMP_PMD_SIZE - 1), "%s: placed PMD aligned", arch);
	must(!mmp_munmap(s, plain, 2 * MMP_PMD_SIZE), "unmap");
	/* mremap DONTUNMAP takes new_addr as a hint too (vrm_implies_new_addr). */
	must(!mmp_mmap(s, src, MMP_PMD_SIZE, RW, MMP_MAP_FIXED, &src), "a source");
	tap_eq(mmp_mremap(s, src, MMP_PMD_SIZE, MMP_PMD_SIZE, MM | DU, top, &moved), 0,
	       "%s: DONTUNMAP move, hint busy", arch);
	tap_eq(moved, top - MMP_PMD_SIZE, "%s: moved right below, not PMD aligned", arch);
	tap_ok(!mmp_space_verify(s), "%s: verify", arch);
	tap_ok(!mmp_space_destroy(s), "%s: destroy", arch);
}

int main(void)
{
	tap_require(!mmp_phys_create(64 * MiB, &phys), "create phys");
	for (int i = 0; i < mmp_arch_count(); i++) {
		struct env e = { .arch = mmp_arch_name(i) };

		e.s = new_space(phys, e.arch);
		tap_require(!mmp_cpu_attach(e.s, &e.cpu), "attach a CPU");
		test_mprotect_hole(&e);
		test_mremap_shrink_past_vma(&e);
		test_mremap_check_order(&e);
		test_multi_vma_move(&e);
		test_merges(&e);
		test_grow_in_place_merges_forward_only(&e);
		test_mremap_enomem_moves_back(e.arch);
		test_hint_skips_thp_alignment(e.arch);
		test_multi_vma_move_stops(&e);
		tap_ok(!mmp_space_verify(e.s), "%s: verify", e.arch);
		mmp_cpu_detach(e.cpu);
		tap_ok(!mmp_space_destroy(e.s), "%s: destroy", e.arch);
	}
	tap_ok(!mmp_phys_destroy(phys), "destroy phys");
	return tap_done();
}
