/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conformance suite: the same checks over every registered back end. A
 * port passes when every check here passes for it. As a test it speaks TAP;
 * as `mmprim-conformance [--report] [ARCH...]` it prints, per back end, each
 * check and its result.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mm.h"
#include "util.h"

static struct mmp_phys *phys;

/* ---- format ------------------------------------------------------------------- */

static void check_format(const char *name)
{
	struct mmp_space *s = new_space(phys, name);
	const struct mmp_arch *a = s->arch;
	static const unsigned int leaf_bits[] = {
		MMP_E_WRITE, MMP_E_USER, MMP_E_ACCESSED, MMP_E_DIRTY, MMP_E_SOFT_DIRTY,
		MMP_E_SPECIAL, MMP_E_NOEXEC,
	};
	bool ok = true;

	for (enum mmp_level l = MMP_PTE; l < a->levels; l++) {
		if (!(a->leaf_levels & (1u << l)))
			continue;
		for (unsigned int m = 0; m < 1u << ARRAY_SIZE(leaf_bits); m++) {
			for (int valid = 0; valid < 2; valid++) {
				unsigned int f = valid ? MMP_E_PRESENT : MMP_E_PROTNONE;
				uint64_t pfn = (0x12345ULL * (m + 1)) & 0xfffffff;
				mmp_pte_t e;

				if (l > MMP_PTE) {
					/* A huge leaf maps a naturally aligned block. */
					f |= MMP_E_LEAF;
					pfn = (pfn << 9 * (l - 1)) & ~((1ULL << 9 * l) - 1) &
					      ((1ULL << 36) - 1);
				}
				for (size_t b = 0; b < ARRAY_SIZE(leaf_bits); b++)
					if (m & (1u << b))
						f |= leaf_bits[b];
				f &= ~a->eflags_unsupported;
				e = mk_entry(s, pfn, f, l);
				if (!e || entry_flags(s, e, l) != f || entry_pfn(s, e, l) != pfn) {
					if (ok)
						printf("# %s level %d: flags %#x pfn %#llx -> %#llx -> %#x\n",
						       name, l, f, (unsigned long long)pfn,
						       (unsigned long long)e, entry_flags(s, e, l));
					ok = false;
				}
			}
		}
	}
	tap_ok(ok, "%s: every leaf flag combination encodes and decodes back at every leaf level",
	       name);

	ok = true;
	for (enum mmp_level l = MMP_PMD; l <= pgd_level(s); l++) {
		mmp_pte_t e = mk_entry(s, 777, MMP_E_TABLE, l);

		ok &= entry_flags(s, e, l) == (MMP_E_TABLE | MMP_E_PRESENT) && entry_pfn(s, e, l) == 777;
	}
	tap_ok(ok, "%s: table entries decode as present tables at every level above PTE", name);
	mmp_space_destroy(s);
}

/* ---- geometry, against figures written from the manuals, not read from the back ends ---- */

#define LEAVES(...)	(__VA_ARGS__)
#define L_PTE	(1u << MMP_PTE)
#define L_PMD	(1u << MMP_PMD)
#define L_PUD	(1u << MMP_PUD)
#define L_P4D	(1u << MMP_P4D)
#define L_PGD5	(1u << MMP_PGD5)
#define GiB	(1ULL << 30)

/*
 * One row per back end; a back end without one fails. mmap_base is mm/util.c's
 * mmap_base() without randomization for the default 8 MiB stack rlimit: the
 * gap is rlimit + stack_guard_gap raised to MIN_GAP, 128 MiB, below STACK_TOP
 * (the map window). tables: what the first touched page of a fresh space
 * allocates, one per level below the PGD.
 */
struct geometry {
	const char *arch;
	unsigned int levels;
	uint64_t task_size;
	uint64_t map_window;	/* where mmap without a high hint stays: task_size if none */
	uint64_t mmap_base;
	unsigned int leaf_levels;	/* levels the format can hold a leaf at */
	unsigned int tables;
};

static const struct geometry geometries[] = {
	/* x86-64: TASK_SIZE_MAX is one page short of 2^47 (2^56 with LA57); 2M and 1G pages. */
	{ "x86_64", 4, (1ULL << 47) - PAGE_SIZE, (1ULL << 47) - PAGE_SIZE,
	  (1ULL << 47) - PAGE_SIZE - 128 * MiB, L_PTE | L_PMD | L_PUD, 3 },
	{ "x86_64-la57", 5, (1ULL << 56) - PAGE_SIZE, (1ULL << 47) - PAGE_SIZE,
	  (1ULL << 47) - PAGE_SIZE - 128 * MiB, L_PTE | L_PMD | L_PUD, 4 },
	/* arm64 4K granule: TTBR0 spans 2^VA_BITS; blocks at levels 2 and 1. */
	{ "arm64", 4, 1ULL << 48, 1ULL << 48, (1ULL << 48) - 128 * MiB, L_PTE | L_PMD | L_PUD, 3 },
	{ "arm64-va39", 3, 1ULL << 39, 1ULL << 39, (1ULL << 39) - 128 * MiB,
	  L_PTE | L_PMD | L_PUD, 2 },
	/* riscv: user space is the lower half of SvNN; a leaf may sit at any level. */
	{ "riscv64", 4, 1ULL << 47, 1ULL << 47, (1ULL << 47) - 128 * MiB,
	  L_PTE | L_PMD | L_PUD | L_P4D, 3 },
	{ "riscv64-sv39", 3, 1ULL << 38, 1ULL << 38, (1ULL << 38) - 128 * MiB,
	  L_PTE | L_PMD | L_PUD, 2 },
	{ "riscv64-sv57", 5, 1ULL << 56, 1ULL << 47, (1ULL << 47) - 128 * MiB,
	  L_PTE | L_PMD | L_PUD | L_P4D | L_PGD5, 4 },
	/* LoongArch64, 4 KiB pages: 4 levels over a 48-bit user space; huge pages in the PMD only. */
	{ "loongarch64", 4, 1ULL << 48, 1ULL << 48, (1ULL << 48) - 128 * MiB, L_PTE | L_PMD, 3 },
	/* The reference: 4 levels, 47 bits, no leaves above the PMD. */
	{ "generic", 4, 1ULL << 47, 1ULL << 47, (1ULL << 47) - 128 * MiB, L_PTE | L_PMD, 3 },
};

static const struct geometry *geometry_of(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(geometries); i++)
		if (!strcmp(geometries[i].arch, name))
			return &geometries[i];
	return NULL;
}

/*
 * Space @name against row @g: what it reports, then what it does. The
 * behaviour catches a back end whose fields lie: tables counted as they are
 * allocated, mappings refused at the row's task size, the mmap base found by
 * mapping. No tap_require: a broken copy must fail checks, not stop the run.
 */
static void check_geometry(const char *name, const struct geometry *g)
{
	struct mmp_space_config cfg = { .arch = name, .tlb_sanitizer = true };
	struct mmp_space *s = NULL;
	struct mmp_cpu *cpu = NULL;
	uint64_t ts = 0, a = 0, low = 4 * GiB, before;
	char c = 1;

	if (!tap_ok(g != NULL, "%s: has a row in the conformance geometry table", name))
		return;
	if (!tap_ok(mmp_space_create(phys, &cfg, &s) == 0, "%s: geometry: create a space", name))
		return;
	tap_eq(s->arch->levels, g->levels, "%s: %u page-table levels", name, g->levels);
	mmp_space_task_size(s, &ts);
	tap_ok(ts == g->task_size, "%s: task size %#llx (got %#llx)", name,
	       (unsigned long long)g->task_size, (unsigned long long)ts);
	tap_eq(s->arch->leaf_levels, g->leaf_levels, "%s: leaf levels %#x", name, g->leaf_levels);

	/* The first touch allocates one table per level below the PGD: the real depth. */
	mmp_cpu_attach(s, &cpu);
	before = counter(s, MMP_C_PGTABLE_ALLOC);
	tap_ok(!mmp_mmap(s, low, PAGE_SIZE, MMP_PROT_READ | MMP_PROT_WRITE, MMP_MAP_FIXED, &a) &&
		       !mmp_write(cpu, low, &c, 1),
	       "%s: touch a page at 4 GiB", name);
	tap_eq(counter(s, MMP_C_PGTABLE_ALLOC) - before, g->tables,
	       "%s: the first touched page allocates %u tables", name, g->tables);

	/* The top of user space: its last page maps, the next does not. */
	tap_eq(mmp_mmap(s, g->task_size - PAGE_SIZE, PAGE_SIZE, MMP_PROT_READ,
			MMP_MAP_FIXED_NOREPLACE, &a), 0,
	       "%s: MAP_FIXED of the last page below the task size", name);
	tap_eq(mmp_mmap(s, g->task_size, PAGE_SIZE, MMP_PROT_READ, MMP_MAP_FIXED_NOREPLACE, &a),
	       -ENOMEM, "%s: MAP_FIXED at the task size is refused", name);
	tap_eq(mmp_mmap(s, g->task_size - PAGE_SIZE, 2 * PAGE_SIZE, MMP_PROT_READ,
			MMP_MAP_FIXED, &a), -ENOMEM,
	       "%s: MAP_FIXED across the task size is refused", name);
	tap_eq(mmp_munmap(s, g->task_size - PAGE_SIZE, PAGE_SIZE), 0, "%s: unmap the last page",
	       name);

	/* Top-down from the mmap base: the first free mapping ends there. */
	a = 0;
	mmp_mmap(s, 0, PAGE_SIZE, MMP_PROT_READ, 0, &a);
	tap_ok(a == g->mmap_base - PAGE_SIZE,
	       "%s: the first mmap ends at the mmap base %#llx (got %#llx)", name,
	       (unsigned long long)g->mmap_base, (unsigned long long)a + PAGE_SIZE);
	if (g->map_window < g->task_size) {
		uint64_t hint = g->task_size / 2 & ~(PAGE_SIZE - 1);

		a = 0;
		tap_ok(!mmp_mmap(s, hint, PAGE_SIZE, MMP_PROT_READ, 0, &a) && a == hint,
		       "%s: a free hint above the map window is honoured", name);
		a = 0;
		tap_ok(!mmp_mmap(s, hint, PAGE_SIZE, MMP_PROT_READ, 0, &a) && a != hint &&
			       a >= g->map_window && a < g->task_size,
		       "%s: a taken hint above the window still maps above it", name);
		a = 0;
		tap_ok(!mmp_mmap(s, g->map_window - PAGE_SIZE, 2 * PAGE_SIZE, MMP_PROT_READ, 0, &a) &&
			       a + 2 * PAGE_SIZE <= g->map_window,
		       "%s: a hint straddling the map window stays below it", name);
	}
	tap_eq(mmp_space_verify(s), 0, "%s: geometry: verify", name);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* A check that fails is what the counting hook wants: the copy under test is broken on purpose. */
static int fooled;

static void count_failures(int ok, const char *msg)
{
	fooled += !ok;
}

/*
 * A back end copied with the wrong geometry, as a porter who forgot to change
 * it would make it, registered in this program only: the geometry checks
 * against the original's row must fail, or they prove nothing.
 */
static void check_fooled(const char *orig, const char *what, unsigned int levels,
			 uint64_t task_size, uint64_t map_window)
{
	const struct mmp_arch *a = mmp_arch_find(orig);
	void (*saved)(int, const char *) = tap_hook;
	struct mmp_arch copy;
	char name[64];
	int n0, f0, err;

	if (!a)
		return;
	copy = *a;
	snprintf(name, sizeof(name), "%s~%s", orig, what);
	copy.name = name;
	copy.levels = levels;
	copy.task_size = task_size;
	copy.map_window = map_window;
	err = mmp_arch_register_extra(&copy);
	if (!tap_eq(err, 0, "%s: register a copy with %s", orig, what))
		return;
	n0 = tap_n;
	f0 = tap_failed;
	fooled = 0;
	tap_hook = count_failures;
	check_geometry(name, geometry_of(orig));
	tap_hook = saved;
	tap_n = n0;
	tap_failed = f0;
	tap_ok(fooled > 0, "%s: a copy with %s fails %d geometry checks", orig, what, fooled);
}

/* ---- batched entry hooks against one-at-a-time ------------------------------------ */

static void check_entry_hooks(const char *name)
{
	struct mmp_space *s = new_space(phys, name);
	uint32_t tpfn = pgtable_alloc(s);
	mmp_pte_t *t = space_table(s, tpfn), first, e;
	unsigned int base = MMP_E_PRESENT | MMP_E_USER | MMP_E_WRITE;
	uint64_t addr = 0x40000000, pfn = 0x1000;
	bool ok = true;

	set_ptes(s, addr, t, mk_entry(s, pfn, base, MMP_PTE), 16);
	for (int i = 0; i < 16; i++) {
		e = ptep_get(s, &t[i]);
		ok &= entry_pfn(s, e, MMP_PTE) == pfn + i &&
		      (entry_flags(s, e, MMP_PTE) & ~(MMP_E_ACCESSED | MMP_E_DIRTY | MMP_E_CONT)) ==
			      base;
	}
	tap_ok(ok, "%s: set_ptes maps consecutive pfns with the same bits", name);

	/* A/D left on any entry of the range comes back on the first. */
	ptep_modify(s, &t[5], MMP_PTE, MMP_E_DIRTY, 0);
	ptep_modify(s, &t[11], MMP_PTE, MMP_E_ACCESSED, 0);
	first = get_and_clear_full_ptes(s, addr, t, 16, 0);
	tap_ok(entry_pfn(s, first, MMP_PTE) == pfn &&
	       (entry_flags(s, first, MMP_PTE) & (MMP_E_ACCESSED | MMP_E_DIRTY)) ==
		       (MMP_E_ACCESSED | MMP_E_DIRTY),
	       "%s: get_and_clear_full_ptes returns the first entry with A/D of all", name);
	ok = true;
	for (int i = 0; i < 16; i++)
		ok &= ptep_get(s, &t[i]) == 0;
	tap_ok(ok, "%s: ... and clears every entry", name);

	set_ptes(s, addr, t, mk_entry(s, pfn, base | MMP_E_DIRTY, MMP_PTE), 16);
	wrprotect_ptes(s, addr, t, 16);
	ok = true;
	for (int i = 0; i < 16; i++) {
		unsigned int f = entry_flags(s, ptep_get(s, &t[i]), MMP_PTE);

		ok &= !(f & MMP_E_WRITE) && (f & MMP_E_DIRTY) && (f & MMP_E_PRESENT);
	}
	tap_ok(ok, "%s: wrprotect_ptes removes write and keeps dirty", name);

	ptep_modify(s, &t[3], MMP_PTE, MMP_E_ACCESSED, 0);
	tap_ok(ptep_test_and_clear_young(s, addr + 3 * PAGE_SIZE, &t[3]) == 1 &&
	       ptep_test_and_clear_young(s, addr + 3 * PAGE_SIZE, &t[3]) == 0,
	       "%s: ptep_test_and_clear_young reports and clears accessed", name);
	clear_full_ptes(s, addr, t, 16, 1);
	ok = true;
	for (int i = 0; i < 16; i++)
		ok &= t[i] == 0;
	tap_ok(ok, "%s: clear_full_ptes clears", name);
	tap_ok(pte_batch_hint(s, t, mk_entry(s, pfn, base, MMP_PTE)) >= 1,
	       "%s: pte_batch_hint is at least 1", name);
	pgtable_free(s, tpfn);
	mmp_space_destroy(s);
}

/* ---- the hardware model -------------------------------------------------------------- */

static mmp_pte_t leaf_of(struct mmp_space *s, uint64_t addr, enum mmp_level *level)
{
	mmp_pte_t *pmdp = pmd_offset(s, addr), pmd;

	*level = MMP_PTE;
	if (!pmdp)
		return 0;
	pmd = *pmdp;
	*level = MMP_PMD;
	if (entry_flags(s, pmd, MMP_PMD) & MMP_E_LEAF)
		return pmd;
	*level = MMP_PTE;
	return pte_table(s, pmd) ?
		ptep_get_lockless(s, &pte_table(s, pmd)[level_index(addr, MMP_PTE)]) : 0;
}

static void check_hardware(const char *name)
{
	struct mmp_space *s = new_space(phys, name);
	struct mmp_cpu *cpu;
	enum mmp_level l = MMP_PTE;
	uint64_t a = map(s, 64 * KiB, MMP_PROT_READ | MMP_PROT_WRITE);
	mmp_pte_t *ptep;
	char buf[8] = "abcdefg", out[8];
	unsigned int f;

	mmp_cpu_attach(s, &cpu);
	tap_eq(mmp_write(cpu, a, buf, 8), 0, "%s: write faults a page in", name);
	f = entry_flags(s, leaf_of(s, a, &l), l);
	tap_ok((f & (MMP_E_PRESENT | MMP_E_WRITE | MMP_E_DIRTY | MMP_E_ACCESSED | MMP_E_USER)) ==
		       (MMP_E_PRESENT | MMP_E_WRITE | MMP_E_DIRTY | MMP_E_ACCESSED | MMP_E_USER) &&
		       l == MMP_PTE,
	       "%s: the new PTE is present, user, writable, young and dirty", name);

	/* Clean and age the entry behind the TLB's back, flush, and let the MMU set them again. */
	ptep = &pte_table(s, *pmd_offset(s, a))[level_index(a, MMP_PTE)];
	ptep_modify(s, ptep, MMP_PTE, 0, MMP_E_ACCESSED | MMP_E_DIRTY);
	flush_tlb_page(s, a);
	tap_eq(mmp_read(cpu, a, out, 8), 0, "%s: read back", name);
	f = entry_flags(s, *ptep, MMP_PTE);
	tap_ok((f & MMP_E_ACCESSED) && !(f & MMP_E_DIRTY), "%s: a read sets accessed only", name);
	tap_eq(mmp_write(cpu, a + 1, "X", 1), 0, "%s: write through the clean TLB entry", name);
	f = entry_flags(s, *ptep, MMP_PTE);
	tap_ok(f & MMP_E_DIRTY, "%s: a write through a clean TLB entry walks and sets dirty", name);
	/* Two A/D updates, by the MMU or by access faults, as the back end declares. */
	if (space_hw_ad(s))
		tap_ok(counter(s, MMP_C_HW_AD_UPDATE) == 2 && counter(s, MMP_C_FAULT_AD) == 0,
		       "%s: two hardware A/D updates, no access fault (got %llu, %llu)", name,
		       (unsigned long long)counter(s, MMP_C_HW_AD_UPDATE),
		       (unsigned long long)counter(s, MMP_C_FAULT_AD));
	else
		tap_ok(counter(s, MMP_C_HW_AD_UPDATE) == 0 && counter(s, MMP_C_FAULT_AD) == 2,
		       "%s: software A/D: two access faults set them (got %llu, %llu)", name,
		       (unsigned long long)counter(s, MMP_C_FAULT_AD),
		       (unsigned long long)counter(s, MMP_C_HW_AD_UPDATE));
	tap_ok(!memcmp(out, buf, 8), "%s: data round-trips", name);

	/* Zero page on read, COW on the first write. */
	tap_eq(mmp_read(cpu, a + 8 * PAGE_SIZE, out, 8), 0, "%s: read of an untouched page", name);
	f = entry_flags(s, leaf_of(s, a + 8 * PAGE_SIZE, &l), l);
	tap_ok((f & MMP_E_SPECIAL) && !(f & MMP_E_WRITE) && !out[0],
	       "%s: a read fault maps the zero page read-only", name);
	tap_eq(counter(s, MMP_C_FAULT_ZERO), 1, "%s: one zero-page fault", name);
	tap_eq(mmp_write(cpu, a + 8 * PAGE_SIZE, "z", 1), 0, "%s: write the zero-page mapping", name);
	tap_eq(counter(s, MMP_C_FAULT_COW), 1, "%s: ... which copies (COW from the zero page)", name);
	tap_eq(rss(s), 2, "%s: RSS counts the two real pages", name);
	mmp_cpu_detach(cpu);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", name);
	mmp_space_destroy(s);
}

/* ---- faults, fork, protection --------------------------------------------------------- */

static void check_fork_cow(const char *name)
{
	struct mmp_space *s = new_space(phys, name), *c;
	struct mmp_cpu *pc, *cc;
	uint64_t a = map(s, 256 * KiB, MMP_PROT_READ | MMP_PROT_WRITE);
	char out[4];

	mmp_cpu_attach(s, &pc);
	for (int i = 0; i < 64; i++)
		mmp_write(pc, a + i * PAGE_SIZE, "par", 4);
	tap_eq(mmp_fork(s, &c), 0, "%s: fork", name);
	tap_eq(rss(c), 64, "%s: the child maps all 64 pages", name);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after fork (parent and child)", name);
	mmp_cpu_attach(c, &cc);
	tap_eq(mmp_write(cc, a, "chi", 4), 0, "%s: child writes", name);
	mmp_read(pc, a, out, 4);
	tap_ok(!strcmp(out, "par"), "%s: the parent keeps its data", name);
	mmp_read(cc, a, out, 4);
	tap_ok(!strcmp(out, "chi"), "%s: the child sees its write", name);
	tap_eq(counter(c, MMP_C_FAULT_COW), 1, "%s: the child copied one page", name);
	mmp_write(pc, a + PAGE_SIZE, "PAR", 4);
	tap_eq(counter(s, MMP_C_FAULT_COW), 1, "%s: the parent copies a shared page too", name);
	mmp_write(pc, a, "PAR", 4);
	tap_eq(counter(s, MMP_C_FAULT_WP_REUSE), 1,
	       "%s: a page the child left is reused, not copied", name);
	mmp_cpu_detach(cc);
	tap_eq(mmp_space_destroy(c), 0, "%s: destroy the child", name);
	mmp_write(pc, a + 2 * PAGE_SIZE, "PAR", 4);
	tap_eq(counter(s, MMP_C_FAULT_WP_REUSE), 2, "%s: once the child is gone, pages are reused",
	       name);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", name);
	mmp_cpu_detach(pc);
	mmp_space_destroy(s);
}

static void check_protection(const char *name)
{
	struct mmp_space *s = new_space(phys, name);
	struct mmp_cpu *cpu;
	uint64_t a = map(s, 64 * KiB, MMP_PROT_READ | MMP_PROT_WRITE);
	char out[4];

	mmp_cpu_attach(s, &cpu);
	mmp_write(cpu, a, "abc", 4);
	tap_eq(mmp_mprotect(s, a, 64 * KiB, MMP_PROT_READ), 0, "%s: mprotect read-only", name);
	tap_eq(mmp_write(cpu, a, "x", 1), -EFAULT, "%s: a write is refused (SIGSEGV)", name);
	tap_eq(mmp_read(cpu, a, out, 4), 0, "%s: a read works", name);
	tap_eq(mmp_mprotect(s, a, 64 * KiB, MMP_PROT_NONE), 0, "%s: mprotect PROT_NONE", name);
	tap_eq(mmp_read(cpu, a, out, 4), -EFAULT, "%s: a read is refused", name);
	tap_eq(mmp_space_verify(s), 0, "%s: PROT_NONE entries verify", name);
	tap_eq(mmp_mprotect(s, a, 64 * KiB, MMP_PROT_READ | MMP_PROT_WRITE), 0,
	       "%s: mprotect back to read-write", name);
	tap_eq(mmp_read(cpu, a, out, 4), 0, "%s: read again", name);
	tap_ok(!strcmp(out, "abc"), "%s: data survived PROT_NONE", name);
	tap_eq(mmp_write(cpu, a, "d", 1), 0, "%s: write again", name);
	tap_eq(counter(s, MMP_C_FAULT_WP_REUSE) + counter(s, MMP_C_FAULT_COW), 0,
	       "%s: an exclusive page is made writable by mprotect itself", name);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* ---- THP and mTHP --------------------------------------------------------------------- */

static void check_thp(const char *name)
{
	struct mmp_space *s = new_space(phys, name), *c;
	struct mmp_cpu *cpu, *cc;
	uint64_t a = map(s, 4 * MiB, MMP_PROT_READ | MMP_PROT_WRITE);
	enum mmp_level l = MMP_PTE;
	char out[4];

	tap_eq(a % MMP_PMD_SIZE, 0, "%s: a 4 MiB mapping is PMD aligned", name);
	mmp_madvise(s, a, 4 * MiB, MMP_MADV_HUGEPAGE);
	mmp_cpu_attach(s, &cpu);
	mmp_write(cpu, a + 12345, "thp", 4);
	leaf_of(s, a, &l);
	tap_ok(l == MMP_PMD && counter(s, MMP_C_FAULT_HUGE_ANON) == 1,
	       "%s: a write maps a PMD THP", name);
	tap_eq(counter(s, MMP_C_SUBPAGE_CLEAR), 512, "%s: 512 sub-pages cleared", name);
	tap_eq(rss(s), 512, "%s: RSS 512 pages", name);
	mmp_read(cpu, a + MMP_PMD_SIZE, out, 4);
	tap_eq(counter(s, MMP_C_FAULT_HUGE_ZERO), 1, "%s: a read maps the huge zero page", name);
	mmp_write(cpu, a + MMP_PMD_SIZE + 5, "w", 1);
	tap_eq(counter(s, MMP_C_FAULT_HUGE_ANON), 2, "%s: writing it allocates a THP", name);

	tap_eq(mmp_fork(s, &c), 0, "%s: fork with THPs", name);
	mmp_cpu_attach(c, &cc);
	mmp_write(cc, a, "kid", 4);
	/* Since 5.8 a shared THP is split on a write, and one page copied. */
	tap_eq(counter(c, MMP_C_PMD_SPLIT), 1, "%s: the child's write splits its PMD", name);
	tap_ok(counter(c, MMP_C_FAULT_COW) == 1 && counter(c, MMP_C_SUBPAGE_COPY) == 1 &&
		       counter(c, MMP_C_FAULT_HUGE_COW) == 0,
	       "%s: ... and copies one page", name);
	mmp_read(cc, a + 12345, out, 4);
	tap_ok(!strcmp(out, "thp"), "%s: the copy holds the parent's data", name);
	mmp_read(cpu, a, out, 1);
	tap_eq(out[0], 0, "%s: the parent is unchanged", name);
	mmp_cpu_detach(cc);
	mmp_space_destroy(c);

	/* Partial munmap splits the PMD; the rest stays mapped with its data. */
	tap_eq(mmp_munmap(s, a, 8 * KiB), 0, "%s: unmap 8 KiB of a THP", name);
	tap_eq(counter(s, MMP_C_PMD_SPLIT), 1, "%s: the PMD was split", name);
	tap_eq(rss(s), 1024 - 2, "%s: RSS lost two pages", name);
	mmp_read(cpu, a + 12345, out, 4);
	tap_ok(!strcmp(out, "thp"), "%s: data after the split", name);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after split", name);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

static void check_mthp(const char *name)
{
	struct mmp_space *s = new_space(phys, name);
	struct mmp_cpu *cpu;
	/* 2 MiB starts PMD aligned wherever the space's mmap base lies; faults touch 1 MiB. */
	uint64_t a = map(s, 2 * MiB, MMP_PROT_READ | MMP_PROT_WRITE);
	mmp_pte_t *ptes;
	bool ok = true;

	mmp_space_set_thp(s, 4, MMP_THP_ALWAYS);
	mmp_cpu_attach(s, &cpu);
	for (uint64_t off = 0; off < MiB; off += PAGE_SIZE)
		mmp_write(cpu, a + off, &off, sizeof(off));
	tap_eq(counter(s, MMP_C_FOLIO_ALLOC_O4), 16, "%s: 1 MiB faults in as 16 64 KiB folios", name);
	tap_eq(counter(s, MMP_C_FAULT_ANON), 16, "%s: 16 faults", name);
	ptes = pte_table(s, *pmd_offset(s, a));
	for (int i = 0; i < 256; i++) {
		/* Read as core mm does: a riscv NAPOT run stores one value for 16 pages. */
		uint64_t pfn = entry_pfn(s, ptep_get_lockless(s,
						&ptes[level_index(a, MMP_PTE) + i]), MMP_PTE);
		uint64_t head = folio_pfn(s->phys, pfn);

		ok &= pfn - head == (unsigned int)(i % 16) && pfn_to_page(s->phys, head)->order == 4;
	}
	tap_ok(ok, "%s: each folio maps 16 consecutive pfns in order", name);
	tap_eq(mmp_munmap(s, a + 8 * PAGE_SIZE, PAGE_SIZE), 0, "%s: unmap one page of a folio", name);
	tap_eq(mmp_space_verify(s), 0, "%s: a partly mapped folio verifies", name);
	tap_eq(mmp_munmap(s, a, MiB), 0, "%s: unmap the rest", name);
	tap_eq(counter(s, MMP_C_FOLIO_FREE), 16, "%s: all 16 folios freed", name);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* ---- TLB flushing and the sanitizer ---------------------------------------------------- */

struct remote {
	struct mmp_space *s;
	uint64_t addr;
	pthread_barrier_t *bar;
};

static void *remote_cpu(void *arg)
{
	struct remote *r = arg;
	struct mmp_cpu *cpu;
	char c;

	mmp_cpu_attach(r->s, &cpu);
	mmp_read(cpu, r->addr, &c, 1);
	pthread_barrier_wait(r->bar);	/* translation cached */
	pthread_barrier_wait(r->bar);	/* the main thread unmapped */
	mmp_cpu_detach(cpu);
	return NULL;
}

/*
 * A check that provokes the library's own error reports on purpose (a missing
 * flush for the TLB sanitizer): TAP says they are expected; --report, which
 * prints a clean table, silences them.
 */
static int saved_stderr = -1;

static void expected_reports_begin(void)
{
	int null;

	fflush(stdout);
	fflush(stderr);
	if (!tap_hook) {
		printf("# the next sanitizer and verify reports are expected\n");
		fflush(stdout);
		return;
	}
	null = open("/dev/null", O_WRONLY);
	saved_stderr = dup(STDERR_FILENO);
	if (null >= 0 && saved_stderr >= 0)
		dup2(null, STDERR_FILENO);
	if (null >= 0)
		close(null);
}

static void expected_reports_end(void)
{
	fflush(stderr);
	if (saved_stderr >= 0) {
		dup2(saved_stderr, STDERR_FILENO);
		close(saved_stderr);
		saved_stderr = -1;
	}
}

static void check_tlb(const char *name)
{
	struct mmp_space *s = new_space(phys, name);
	struct mmp_cpu *cpu;
	uint64_t a = map(s, 64 * KiB, MMP_PROT_READ | MMP_PROT_WRITE);
	pthread_barrier_t bar;
	pthread_t t;
	struct remote r = { .s = s, .addr = a, .bar = &bar };
	char out;
	int err;

	mmp_cpu_attach(s, &cpu);
	mmp_write(cpu, a, "1", 1);
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&t, NULL, remote_cpu, &r);
	pthread_barrier_wait(&bar);
	mmp_space_reset_counters(s);
	tap_eq(mmp_munmap(s, a, PAGE_SIZE), 0, "%s: unmap a page two CPUs use", name);
	tap_eq(counter(s, MMP_C_TLB_FLUSH_RANGE), 1, "%s: one ranged flush", name);
	tap_eq(counter(s, MMP_C_TLB_FLUSH_PAGE), 1, "%s: of one page", name);
	tap_eq(counter(s, MMP_C_TLB_IPI), s->arch->tlbi_broadcast ? 0 : 1,
	       "%s: one IPI to the other CPU (none with broadcast TLBI)", name);
	pthread_barrier_wait(&bar);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&bar);

	/* Drop a flush on purpose: the sanitizer must catch the stale translation. */
	mmp_write(cpu, a + PAGE_SIZE, "2", 1);
	mmp_debug_set(s, MMP_DEBUG_SKIP_FLUSH, 1);
	mmp_munmap(s, a + PAGE_SIZE, PAGE_SIZE);
	expected_reports_begin();
	mmp_read(cpu, a + PAGE_SIZE, &out, 1);
	err = mmp_space_verify(s);
	expected_reports_end();
	tap_eq(counter(s, MMP_C_TLB_SANITIZER), 1, "%s: the sanitizer reports the missing flush",
	       name);
	tap_eq(err, -EUCLEAN, "%s: verify reports it too", name);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* --report: results grouped by back end ("arch: check" messages). */
struct report_row {
	char arch[32];
	char check[256];
	int ok;
};

static struct report_row *rows;
static int nr_rows, cap_rows;

/* Copy at most @len bytes of @src into @dst of @size, cut short to fit. */
static void copy_cut(char *dst, size_t size, const char *src, size_t len)
{
	if (len > size - 1)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* A check's result as a row: "arch: check" split at the first colon. */
static struct report_row report_row_of(int ok, const char *msg)
{
	const char *colon = strstr(msg, ": ");
	const char *check = colon ? colon + 2 : msg;
	struct report_row r = { .ok = !!ok };

	copy_cut(r.arch, sizeof(r.arch), msg, colon ? (size_t)(colon - msg) : 0);
	copy_cut(r.check, sizeof(r.check), check, strlen(check));
	return r;
}

static void report_add(const struct report_row *r)
{
	if (nr_rows == cap_rows) {
		cap_rows = cap_rows ? 2 * cap_rows : 256;
		rows = realloc(rows, cap_rows * sizeof(*rows));
		tap_require(rows != NULL, "memory for the report");
	}
	rows[nr_rows++] = *r;
}

static void report_hook(int ok, const char *msg)
{
	struct report_row r = report_row_of(ok, msg);

	report_add(&r);
}

/*
 * --report survives a check that stops the process (a BUG in the library, a
 * crash): each back end's checks run in a child that sends its rows down a
 * pipe, and a child that dies leaves a failing row that says how and after
 * which check, instead of losing the whole report.
 */
static int report_fd = -1;
/* MMP_CONFORMANCE_ABORT_AFTER=N: abort after N checks, to test the report's own survival. */
static long abort_after = -1;

static void report_pipe_hook(int ok, const char *msg)
{
	struct report_row r = report_row_of(ok, msg);

	if (write(report_fd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
	if (abort_after > 0 && --abort_after == 0)
		abort();
}

static void run_checks(const char *name, void (*checks)(const char *name))
{
	struct report_row r;
	char last[sizeof(r.check)] = "none";
	int fds[2], status;
	pid_t pid;

	if (tap_hook != report_hook) {
		checks(name);
		return;
	}
	tap_require(pipe(fds) == 0, "a pipe for the report");
	fflush(NULL);
	pid = fork();
	tap_require(pid >= 0, "fork for the report");
	if (pid == 0) {
		const char *env = getenv("MMP_CONFORMANCE_ABORT_AFTER");

		close(fds[0]);
		report_fd = fds[1];
		abort_after = env ? atol(env) : -1;
		tap_hook = report_pipe_hook;
		checks(name);
		_exit(0);
	}
	close(fds[1]);
	while (read(fds[0], &r, sizeof(r)) == sizeof(r)) {
		report_add(&r);
		snprintf(last, sizeof(last), "%s", r.check);
	}
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status))) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s: stopped (%s %d) after \"%.200s\": the checks after it did not run",
			 name, WIFSIGNALED(status) ? "signal" : "exit status",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), last);
		report_hook(0, msg);
	}
}

/* Every check of one back end. */
static void check_arch(const char *name)
{
	check_format(name);
	check_geometry(name, geometry_of(name));
	check_entry_hooks(name);
	check_hardware(name);
	check_fork_cow(name);
	check_protection(name);
	check_thp(name);
	check_mthp(name);
	check_tlb(name);
}

/* What the back end says of itself; the checks above compared it with the table. */
static void print_geometry(const char *name)
{
	const struct mmp_arch *a = mmp_arch_find(name);
	uint64_t window = a->map_window ? a->map_window : a->task_size;
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	uint64_t v = (a->task_size + PAGE_SIZE) & PAGE_MASK;	/* x86: a page short of 2^47 */
	int u = 0;

	while (v >= 1024 && u < 6)
		v /= 1024, u++;
	printf("  geometry: %u levels, user space [%#llx, %#llx) (%llu %s), mmap below %#llx\n",
	       a->levels, (unsigned long long)MMP_MMAP_MIN_ADDR, (unsigned long long)a->task_size,
	       (unsigned long long)v, units[u], (unsigned long long)window);
}

static int print_report(void)
{
	const char *name;
	int failed = 0;

	for_each_arch(i, name) {
		int n = 0, pass = 0;

		for (int k = 0; k < nr_rows; k++)
			if (!strcmp(rows[k].arch, name))
				n++, pass += rows[k].ok;
		if (!n)
			continue;
		printf("%s: %d of %d checks pass%s\n", name, pass, n, pass == n ? "" : "  <-- FAILING");
		print_geometry(name);
		for (int k = 0; k < nr_rows; k++)
			if (!strcmp(rows[k].arch, name))
				printf("  %-4s %s\n", rows[k].ok ? "ok" : "FAIL", rows[k].check);
		failed += n - pass;
	}
	free(rows);
	return failed ? 1 : 0;
}

static void usage(FILE *f)
{
	const char *name;

	fprintf(f, "usage: mmprim-conformance [--report] [ARCH...]\n"
		   "The conformance suite over every registered back end (or the ARCHs named):\n"
		   "TAP by default; --report groups the checks by back end, with a verdict each.\n"
		   "Exit status: 0 all pass, 1 a check failed, 2 bad usage.\n"
		   "Back ends:");
	for_each_arch(i, name)
		fprintf(f, " %s", name);
	fprintf(f, "\n");
}

static bool wanted(int argc, char **argv, const char *name)
{
	bool any = false;

	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		any = true;
		if (!strcmp(argv[i], name))
			return true;
	}
	return !any;
}

/* Options and back end names, before any check runs: 2 for bad usage, 0 to run, -1 to exit 0. */
static int parse_args(int argc, char **argv, bool *report)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--report")) {
			*report = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return -1;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "mmprim-conformance: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (!mmp_arch_find(argv[i])) {
			fprintf(stderr, "mmprim-conformance: no back end '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *name;
	bool report = false;
	int err = parse_args(argc, argv, &report);

	if (err)
		return err < 0 ? 0 : err;
	if (report)
		tap_hook = report_hook;
	tap_require(mmp_phys_create(256 * MiB, &phys) == 0, "phys");
	for_each_arch(i, name) {
		if (!wanted(argc, argv, name))
			continue;
		run_checks(name, check_arch);
	}
	/* The checks must catch what a port gets wrong: the first Sv39 kept Sv48's depth. */
	if (wanted(argc, argv, "riscv64-sv39")) {
		check_fooled("riscv64-sv39", "Sv48's 4 levels", 4, 1ULL << 38, 0);
		check_fooled("riscv64-sv39", "Sv48's task size", 3, 1ULL << 39, 0);
	}
	if (wanted(argc, argv, "x86_64-la57"))
		check_fooled("x86_64-la57", "4 levels", 4, (1ULL << 47) - PAGE_SIZE, 0);
	if (wanted(argc, argv, "arm64-va39"))
		check_fooled("arm64-va39", "arm64's 4 levels and 48 bits", 4, 1ULL << 48, 0);
	tap_eq(mmp_phys_destroy(phys), 0, "all: phys destroyed");
	return report ? print_report() : tap_done();
}
