/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmp_mremap through the public API on every back end, against mremap(2) for
 * private anonymous memory: each errno, and that an error changes nothing;
 * shrink, grow in place, move, FIXED over a mapping, DONTUNMAP, whole-PMD
 * moves of a THP and of a PTE table; and a map/fill/move/unmap loop that must
 * give every frame back.
 */
#include <errno.h>
#include <string.h>

#include <mmprim/mmprim.h>

#include "rcu.h"
#include "util.h"

#define P	MMP_PAGE_SIZE
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define MM	MMP_MREMAP_MAYMOVE
#define FX	MMP_MREMAP_FIXED
#define DU	MMP_MREMAP_DONTUNMAP
/* Far below the mmap base: the tests place their mappings themselves. */
#define BASE	(1ULL << 32)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static struct mmp_phys *phys;

static uint8_t page_buf[P];

static uint8_t pattern(uint64_t tag, uint64_t page)
{
	return (uint8_t)(tag * 31 + page * 7 + 1);
}

static void map_fixed(struct mmp_space *s, uint64_t addr, uint64_t len, int prot)
{
	uint64_t out = 0;

	must(mmp_mmap(s, addr, len, prot, MMP_MAP_FIXED, &out) == 0 && out == addr,
	     "mmap %#llx", (unsigned long long)addr);
}

static void fill(struct mmp_cpu *cpu, uint64_t addr, uint64_t len, uint64_t tag)
{
	for (uint64_t off = 0; off < len; off += P)
		must(mmp_memset(cpu, addr + off, pattern(tag, off / P), P) == 0, "fill %#llx",
		     (unsigned long long)(addr + off));
}

/* Do the @len bytes at @addr still hold fill(@tag) (page @first onward)? */
static bool holds(struct mmp_cpu *cpu, uint64_t addr, uint64_t len, uint64_t tag, uint64_t first)
{
	for (uint64_t off = 0; off < len; off += P) {
		if (mmp_read(cpu, addr + off, page_buf, P))
			return false;
		for (uint64_t i = 0; i < P; i++)
			if (page_buf[i] != pattern(tag, first + off / P))
				return false;
	}
	return true;
}

static bool reads_zero(struct mmp_cpu *cpu, uint64_t addr, uint64_t len)
{
	for (uint64_t off = 0; off < len; off += P) {
		if (mmp_read(cpu, addr + off, page_buf, P))
			return false;
		for (uint64_t i = 0; i < P; i++)
			if (page_buf[i])
				return false;
	}
	return true;
}

static uint64_t nr_vmas(struct mmp_space *s)
{
	struct mmp_space_stat st;

	mmp_space_stat(s, &st);
	return st.nr_vmas;
}

/* ---- errors ------------------------------------------------------------------------- */

static void check_errors(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	/* a: 256 KiB read-write; b right after it, read-only (a separate VMA); c alone. */
	const uint64_t a = BASE, b = BASE + 256 * KiB, c = BASE + MiB;
	static const struct {
		uint64_t addr, old_len, new_len;
		int flags;
		uint64_t new_addr;
		int err;
		const char *what;
	} cases[] = {
		{ a, P, P, 8, 0, -EINVAL, "an unknown flag" },
		{ a, P, P, MM | 0x100, 0, -EINVAL, "an unknown flag with MAYMOVE" },
		{ a, P, P, FX, BASE + 8 * MiB, -EINVAL, "FIXED without MAYMOVE" },
		{ a, P, P, DU, 0, -EINVAL, "DONTUNMAP without MAYMOVE" },
		{ a, P, 2 * P, MM | DU, 0, -EINVAL, "DONTUNMAP with old_len != new_len" },
		{ a + 1, P, 2 * P, MM, 0, -EINVAL, "an unaligned address" },
		{ a + 100, P, P, 0, 0, -EINVAL, "an unaligned address, same length" },
		{ a, P, 0, MM, 0, -EINVAL, "new_len 0" },
		{ a, P, P, MM | FX, BASE + 8 * MiB + 12, -EINVAL, "FIXED to an unaligned address" },
		{ a, 64 * KiB, 64 * KiB, MM | FX, a + 32 * KiB, -EINVAL,
		  "FIXED onto an overlapping range" },
		{ a + 32 * KiB, 64 * KiB, 64 * KiB, MM | FX, a, -EINVAL,
		  "FIXED onto an overlapping range below" },
		{ BASE + 2 * MiB, P, 2 * P, MM, 0, -EFAULT, "an unmapped source" },
		{ BASE + 2 * MiB, P, P, MM | FX, BASE + 8 * MiB, -EFAULT,
		  "an unmapped source, FIXED" },
		{ a + 128 * KiB, 192 * KiB, 512 * KiB, MM, 0, -EFAULT,
		  "an old range spanning two VMAs" },
		{ c, 128 * KiB, 256 * KiB, MM, 0, -EFAULT, "an old range past the VMA end" },
		{ a, 256 * KiB, 512 * KiB, 0, 0, -ENOMEM,
		  "growing in place into a taken range without MAYMOVE" },
	};
	uint64_t vmas;

	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	map_fixed(s, a, 256 * KiB, RW);
	map_fixed(s, b, 64 * KiB, MMP_PROT_READ);
	map_fixed(s, c, 64 * KiB, RW);
	fill(cpu, a, 256 * KiB, 1);
	fill(cpu, c, 64 * KiB, 2);
	vmas = nr_vmas(s);
	must(vmas == 3, "three VMAs");

	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		uint64_t out = 0xdead;
		int err = mmp_mremap(s, cases[k].addr, cases[k].old_len, cases[k].new_len,
				     cases[k].flags, cases[k].new_addr, &out);

		tap_ok(err == cases[k].err, "%s: %s: %s (got %s)", arch, cases[k].what,
		       mmp_strerror(cases[k].err), mmp_strerror(err));
		tap_ok(out == 0xdead && nr_vmas(s) == vmas && mmp_space_verify(s) == 0 &&
		       holds(cpu, a, 256 * KiB, 1, 0) && holds(cpu, c, 64 * KiB, 2, 0),
		       "%s: ... changes nothing: VMAs, data, verify", arch);
	}
	tap_eq(mmp_mremap(s, a, P, P, 0, 0, NULL), -EINVAL, "%s: no result pointer: -EINVAL", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* ---- success cases --------------------------------------------------------------------- */

static void check_moves(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	const uint64_t a = BASE, b = BASE + 256 * KiB, d = BASE + 8 * MiB;
	uint64_t out = 0, moved, vmas, x, y;
	char ch;

	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	map_fixed(s, a, 256 * KiB, RW);
	map_fixed(s, b, 64 * KiB, MMP_PROT_READ);
	fill(cpu, a, 256 * KiB, 3);

	/* Shrink: same address, the tail is gone. */
	vmas = nr_vmas(s);
	tap_ok(mmp_mremap(s, a, 256 * KiB, 192 * KiB, 0, 0, &out) == 0 && out == a,
	       "%s: shrink returns the same address", arch);
	tap_eq(mmp_read(cpu, a + 200 * KiB, &ch, 1), -EFAULT, "%s: the shrunk tail is unmapped",
	       arch);
	tap_ok(holds(cpu, a, 192 * KiB, 3, 0), "%s: the rest keeps its data", arch);

	/* Grow in place into the free gap before b. */
	tap_ok(mmp_mremap(s, a, 192 * KiB, 256 * KiB, 0, 0, &out) == 0 && out == a,
	       "%s: grow in place when the range is free", arch);
	tap_ok(holds(cpu, a, 192 * KiB, 3, 0) && reads_zero(cpu, a + 192 * KiB, 64 * KiB),
	       "%s: ... old data kept, the new part reads zero", arch);
	tap_eq(nr_vmas(s), vmas, "%s: ... still one VMA", arch);
	fill(cpu, a, 256 * KiB, 4);

	/* Grow blocked by b: MAYMOVE moves it. */
	tap_eq(mmp_mremap(s, a, 256 * KiB, 512 * KiB, 0, 0, &out), -ENOMEM,
	       "%s: grow without MAYMOVE when b is in the way: -ENOMEM", arch);
	moved = 0;
	tap_ok(mmp_mremap(s, a, 256 * KiB, 512 * KiB, MM, 0, &moved) == 0 && moved != a &&
	       moved % P == 0, "%s: grow with MAYMOVE moves the mapping", arch);
	tap_ok(holds(cpu, moved, 256 * KiB, 4, 0) && reads_zero(cpu, moved + 256 * KiB, 256 * KiB),
	       "%s: ... the data moved with it, the grown part reads zero", arch);
	tap_eq(mmp_read(cpu, a, &ch, 1), -EFAULT, "%s: ... and the old range is unmapped", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the move", arch);

	/* FIXED replaces what is at the destination, and only that. */
	map_fixed(s, d, 128 * KiB, RW);
	fill(cpu, d, 128 * KiB, 5);
	tap_ok(mmp_mremap(s, moved, 64 * KiB, 64 * KiB, MM | FX, d + 32 * KiB, &out) == 0 &&
	       out == d + 32 * KiB, "%s: FIXED onto the middle of another mapping", arch);
	tap_ok(holds(cpu, d + 32 * KiB, 64 * KiB, 4, 0), "%s: ... the moved data is there", arch);
	tap_ok(holds(cpu, d, 32 * KiB, 5, 0) && holds(cpu, d + 96 * KiB, 32 * KiB, 5, 24),
	       "%s: ... around it the old mapping is untouched", arch);
	tap_eq(mmp_read(cpu, moved, &ch, 1), -EFAULT, "%s: ... the source is unmapped", arch);
	tap_ok(holds(cpu, moved + 64 * KiB, 192 * KiB, 4, 16), "%s: ... the rest of the source "
	       "stays", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after FIXED", arch);

	/* DONTUNMAP: the old range stays mapped and empty; a new fault fills it. */
	x = moved + 64 * KiB;
	y = 0;
	tap_ok(mmp_mremap(s, x, 64 * KiB, 64 * KiB, MM | DU, 0, &y) == 0 && y && y != x,
	       "%s: DONTUNMAP moves the pages", arch);
	tap_ok(holds(cpu, y, 64 * KiB, 4, 16), "%s: ... the data is at the new address", arch);
	{
		uint64_t f0 = counter(s, MMP_C_FAULT_ZERO) + counter(s, MMP_C_FAULT_ANON);

		tap_ok(reads_zero(cpu, x, P), "%s: ... the old range reads zero", arch);
		tap_eq(counter(s, MMP_C_FAULT_ZERO) + counter(s, MMP_C_FAULT_ANON) - f0, 1,
		       "%s: ... through a new fault", arch);
	}
	tap_eq(mmp_space_verify(s), 0, "%s: verify after DONTUNMAP", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* A same-length remap without FIXED or DONTUNMAP is a no-op: no move, no split. */
static void check_same_length(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	const uint64_t a = BASE;
	uint64_t out = 0;

	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	map_fixed(s, a, 256 * KiB, RW);
	fill(cpu, a, 256 * KiB, 8);
	tap_ok(mmp_mremap(s, a, 8 * KiB, 8 * KiB, 0, 0, &out) == 0 && out == a,
	       "%s: same length, no flags: returns the address", arch);
	tap_eq(nr_vmas(s), 1, "%s: ... and leaves the VMA whole", arch);
	out = 0;
	tap_ok(mmp_mremap(s, a + 64 * KiB, 8 * KiB, 8 * KiB, MM, 0, &out) == 0 &&
	       out == a + 64 * KiB, "%s: same length with MAYMOVE: stays where it is", arch);
	tap_eq(nr_vmas(s), 1, "%s: ... and leaves the VMA whole", arch);
	tap_ok(holds(cpu, a, 256 * KiB, 8, 0), "%s: ... the data is untouched", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* Whole PMDs move as one entry: a huge PMD, or a PTE table. */
static void check_pmd_moves(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	const uint64_t t = BASE + 64 * MiB, dt = BASE + 128 * MiB;
	const uint64_t p = BASE + 96 * MiB, dp = BASE + 160 * MiB;
	uint64_t out = 0, mp, split, ptes;
	char ch;

	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	map_fixed(s, t, 4 * MiB, RW);
	must(mmp_madvise(s, t, 4 * MiB, MMP_MADV_HUGEPAGE) == 0, "MADV_HUGEPAGE");
	fill(cpu, t, 2 * MiB, 6);
	must(counter(s, MMP_C_FAULT_HUGE_ANON) == 1, "one THP");
	mp = counter(s, MMP_C_MOVE_PMD);
	split = counter(s, MMP_C_PMD_SPLIT);
	tap_ok(mmp_mremap(s, t, 2 * MiB, 2 * MiB, MM | FX, dt, &out) == 0 && out == dt,
	       "%s: move a 2 MiB THP to a 2 MiB aligned address", arch);
	tap_eq(counter(s, MMP_C_MOVE_PMD) - mp, 1, "%s: ... the huge PMD moves whole", arch);
	tap_eq(counter(s, MMP_C_PMD_SPLIT) - split, 0, "%s: ... without a split", arch);
	tap_ok(holds(cpu, dt, 2 * MiB, 6, 0), "%s: ... the data moved", arch);
	tap_eq(mmp_read(cpu, t, &ch, 1), -EFAULT, "%s: ... the old range is unmapped", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after moving a THP", arch);

	map_fixed(s, p, 2 * MiB, RW);
	fill(cpu, p, 2 * MiB, 7);
	mp = counter(s, MMP_C_MOVE_PMD);
	ptes = counter(s, MMP_C_MOVE_PTES);
	tap_ok(mmp_mremap(s, p, 2 * MiB, 2 * MiB, MM | FX, dp, &out) == 0 && out == dp,
	       "%s: move 2 MiB of 4 KiB pages between PMD-aligned addresses", arch);
	tap_eq(counter(s, MMP_C_MOVE_PMD) - mp, 1, "%s: ... the PTE table moves whole", arch);
	tap_eq(counter(s, MMP_C_MOVE_PTES) - ptes, 0, "%s: ... no entry moves on its own", arch);
	tap_ok(holds(cpu, dp, 2 * MiB, 7, 0), "%s: ... the data moved", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after moving a PTE table", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* The seed loop: every iteration must give back all it took. */
static void check_loop(const char *arch, unsigned int mthp_order)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_phys_stat st0, st1;
	struct mmp_cpu *cpu;
	const uint64_t addr = 1ULL << 30;
	bool ok = true;

	if (mthp_order)
		must(mmp_space_set_thp(s, mthp_order, MMP_THP_ALWAYS) == 0, "mTHP");
	must(mmp_cpu_attach(s, &cpu) == 0, "cpu");
	mmp_phys_stat(phys, &st0);
	for (int i = 0; i < 100 && ok; i++) {
		uint64_t out = 0, got = 0;

		ok &= mmp_mmap(s, addr, MiB, RW, MMP_MAP_FIXED, &got) == 0 && got == addr;
		ok &= mmp_memset(cpu, addr, i, MiB) == 0;
		ok &= mmp_mremap(s, addr, MiB, MiB, MM | FX, addr + MiB, &out) == 0 &&
		      out == addr + MiB;
		ok &= mmp_munmap(s, addr + MiB, MiB) == 0;
	}
	rcu_barrier();	/* page tables come home after a grace period */
	mmp_phys_stat(phys, &st1);
	tap_ok(ok, "%s, mTHP order %u: 100 x (mmap 1 MiB at 1 GiB, memset, mremap FIXED +1 MiB, "
	       "munmap)", arch, mthp_order);
	tap_eq(st1.free_pages, st0.free_pages, "%s, mTHP order %u: the phys free count is back "
	       "where it started", arch, mthp_order);
	tap_eq(mmp_space_verify(s), 0, "%s, mTHP order %u: verify", arch, mthp_order);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

int main(int argc, char **argv)
{
	const char *name;

	tap_require(mmp_phys_create(256 * MiB, &phys) == 0, "phys");
	for_each_arch(i, name) {
		if (argc > 1 && strcmp(argv[1], name))
			continue;
		check_errors(name);
		check_moves(name);
		check_same_length(name);
		check_pmd_moves(name);
		check_loop(name, 0);
		check_loop(name, 4);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
