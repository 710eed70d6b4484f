/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A lazyfree page written again keeps its data through reclaim, however fork
 * shares it: fork copies the dirty bit into the child, and reclaim finding
 * any mapping dirty makes the folio swapbacked again and leaves every mapping
 * in place. On every back end, for a small page, an mTHP, a PMD-mapped THP
 * and a PTE-mapped THP, with one fork, two forks or a grandchild, reclaim of
 * the child or of the parent, PTE batching on and off, both lazyfree-PMD
 * rules. The write goes through a CPU whose TLB held the page before
 * MADV_FREE, so a translation the flush missed would keep "dirty" cached and
 * the write would never reach the entry.
 *
 * The PTE-mapped THP is the shape that lost data: its 512 PTEs go in one
 * batch that spans a whole PMD, and the mmu_gather flushed them at PMD stride,
 * which left their 4 KiB translations cached: entries MADV_FREE cleaned stayed
 * dirty in the TLB, so the next write never set dirty and reclaim dropped the
 * folio; after MADV_DONTNEED the freed pages stayed reachable.
 */
#include <string.h>

#include "pte_util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define BASE	0x40000000ULL	/* PMD aligned */
#define P	MMP_PAGE_SIZE
#define OLD	0x11		/* written before MADV_FREE */
#define NEW	0x22		/* written after it */

static struct mmp_phys *phys;

enum forks { FORK_ONCE, FORK_TWICE, FORK_GRANDCHILD, NR_FORKS };
static const char *const fork_name[] = { "one fork", "two forks", "a grandchild" };

struct variant {
	enum forks forks;
	bool reclaim_parent;	/* else the newest child */
	long batch;		/* MMP_OPT_PTE_BATCH */
	long lazyfree_pmd;	/* MMP_OPT_LAZYFREE_PMD */
};

struct family {
	const char *arch;
	char what[160];
	struct mmp_space *s[3];	/* parent, then children in fork order */
	unsigned int nr;
	struct mmp_cpu *cpu;	/* the parent's */
};

static void family_init(struct family *f, const char *arch, const char *shape,
			const struct variant *v)
{
	memset(f, 0, sizeof(*f));
	f->arch = arch;
	snprintf(f->what, sizeof(f->what), "%s: %s, %s, reclaim of the %s, batch %ld, "
		 "lazyfree PMD %ld", arch, shape, fork_name[v->forks],
		 v->reclaim_parent ? "parent" : "child", v->batch, v->lazyfree_pmd);
	f->s[0] = new_space(phys, arch);
	f->nr = 1;
	must(mmp_space_set_opt(f->s[0], MMP_OPT_PTE_BATCH, v->batch) == 0, "%s: batch", arch);
	must(mmp_space_set_opt(f->s[0], MMP_OPT_LAZYFREE_PMD, v->lazyfree_pmd) == 0,
	     "%s: lazyfree PMD", arch);
	must(mmp_cpu_attach(f->s[0], &f->cpu) == 0, "%s: attach", arch);
}

static void fixed_map(struct mmp_space *s, uint64_t addr, uint64_t len)
{
	uint64_t got = 0;

	must(mmp_mmap(s, addr, len, RW, MMP_MAP_FIXED, &got) == 0 && got == addr,
	     "mmap %llu KiB at %#llx", (unsigned long long)(len / KiB), (unsigned long long)addr);
}

static void fork_family(struct family *f, enum forks forks)
{
	must(mmp_fork(f->s[0], &f->s[f->nr++]) == 0, "%s: fork", f->what);
	if (forks == FORK_TWICE)
		must(mmp_fork(f->s[0], &f->s[f->nr++]) == 0, "%s: fork again", f->what);
	else if (forks == FORK_GRANDCHILD)
		must(mmp_fork(f->s[1], &f->s[f->nr++]) == 0, "%s: fork the child", f->what);
}

/* Pages of [addr, addr + len) in space @s that do not read @want (one byte each). */
static unsigned int bad_pages(struct mmp_space *s, struct mmp_cpu *cpu, uint64_t addr,
			      uint64_t len, unsigned char want)
{
	struct mmp_cpu *own = NULL;
	unsigned int bad = 0;

	if (!cpu) {
		must(mmp_cpu_attach(s, &own) == 0, "attach to read");
		cpu = own;
	}
	for (uint64_t va = addr; va < addr + len; va += P) {
		unsigned char b = 0xee;

		bad += mmp_read(cpu, va, &b, 1) != 0 || b != want;
	}
	if (own)
		mmp_cpu_detach(own);
	return bad;
}

/* Counter @c summed over the family: reclaim counts in the space whose mapping it decides. */
static uint64_t family_count(struct family *f, enum mmp_counter c)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < f->nr; i++)
		n += counter(f->s[i], c);
	return n;
}

/*
 * Reclaim as @v says, then check: the redirtied page @new reads NEW in every
 * space, reclaim found the folio dirty and freed nothing, every space verifies.
 */
static void reclaim_and_check(struct family *f, const struct variant *v, uint64_t new)
{
	struct mmp_space *victim = v->reclaim_parent ? f->s[0] : f->s[f->nr - 1];
	uint64_t redirtied = family_count(f, MMP_C_LAZYFREE_REDIRTIED);
	uint64_t freed = family_count(f, MMP_C_LAZYFREED);
	unsigned int bad = 0;

	tap_eq(mmp_reclaim(victim), 0, "%s: reclaim", f->what);
	redirtied = family_count(f, MMP_C_LAZYFREE_REDIRTIED) - redirtied;
	freed = family_count(f, MMP_C_LAZYFREED) - freed;
	for (unsigned int i = 0; i < f->nr; i++)
		bad += bad_pages(f->s[i], i ? NULL : f->cpu, new, P, NEW);
	tap_eq(bad, 0, "%s: the redirtied page reads %#x in parent and children", f->what, NEW);
	tap_ok(redirtied == 1 && freed == 0,
	       "%s: reclaim found the folio dirty once and freed nothing (redirtied %llu, "
	       "freed %llu)", f->what, (unsigned long long)redirtied, (unsigned long long)freed);
	tap_eq(family_count(f, MMP_C_TLB_SANITIZER), 0, "%s: no stale TLB hit", f->what);
	tap_eq(mmp_space_verify(f->s[0]), 0, "%s: verify", f->what);
}

static void family_fini(struct family *f)
{
	mmp_cpu_detach(f->cpu);
	for (unsigned int i = f->nr; i-- > 0; )
		mmp_space_destroy(f->s[i]);
}

/* One small page: write, MADV_FREE, write again, fork, reclaim. */
static void check_small_page(const char *arch, const struct variant *v)
{
	struct family f;
	unsigned char b;

	family_init(&f, arch, "4 KiB page", v);
	fixed_map(f.s[0], BASE, P);
	b = OLD;
	must(mmp_write(f.cpu, BASE, &b, 1) == 0, "%s: write", f.what);
	must(mmp_madvise(f.s[0], BASE, P, MMP_MADV_FREE) == 0, "%s: MADV_FREE", f.what);
	b = NEW;
	must(mmp_write(f.cpu, BASE, &b, 1) == 0, "%s: write again", f.what);
	fork_family(&f, v->forks);
	reclaim_and_check(&f, v, BASE);
	family_fini(&f);
}

/* A 64 KiB mTHP (arm64 contpte, riscv NAPOT): one of its pages written again. */
static void check_mthp(const char *arch, const struct variant *v)
{
	const uint64_t len = 16 * P, new = BASE + 5 * P;
	struct family f;

	family_init(&f, arch, "64 KiB mTHP", v);
	mmp_space_set_thp(f.s[0], 4, MMP_THP_ALWAYS);
	fixed_map(f.s[0], BASE, len);
	must(mmp_memset(f.cpu, BASE, OLD, len) == 0, "%s: write", f.what);
	must(counter(f.s[0], MMP_C_FOLIO_ALLOC_O0 + 4) == 1, "%s: one order-4 folio", f.what);
	must(mmp_madvise(f.s[0], BASE, len, MMP_MADV_FREE) == 0, "%s: MADV_FREE", f.what);
	must(mmp_memset(f.cpu, new, NEW, P) == 0, "%s: write one page again", f.what);
	fork_family(&f, v->forks);
	reclaim_and_check(&f, v, new);
	/* A folio is redirtied whole: with batching, reclaim keeps its clean pages too. */
	if (v->batch)
		tap_eq(bad_pages(f.s[0], f.cpu, BASE, 5 * P, OLD), 0,
		       "%s: the folio's clean pages are kept with it", f.what);
	family_fini(&f);
}

/* A PMD-mapped THP: MADV_FREE cleans the PMD, a write dirties it again. */
static void check_pmd_thp(const char *arch, const struct variant *v)
{
	const uint64_t new = BASE + 37 * P;
	struct family f;

	family_init(&f, arch, "PMD-mapped THP", v);
	fixed_map(f.s[0], BASE, MMP_PMD_SIZE);
	mmp_madvise(f.s[0], BASE, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	must(mmp_memset(f.cpu, BASE, OLD, MMP_PMD_SIZE) == 0, "%s: write", f.what);
	must(counter(f.s[0], MMP_C_FAULT_HUGE_ANON) == 1, "%s: one THP", f.what);
	must(mmp_madvise(f.s[0], BASE, MMP_PMD_SIZE, MMP_MADV_FREE) == 0, "%s: MADV_FREE",
	     f.what);
	must(mmp_memset(f.cpu, new, NEW, P) == 0, "%s: write one page again", f.what);
	fork_family(&f, v->forks);
	reclaim_and_check(&f, v, new);
	family_fini(&f);
}

/*
 * Leave the THP at BASE mapped by 512 PTEs, folio whole, every 4 KiB page in
 * the parent's TLB: a redirtied THP that reclaim with the pre-seed rule
 * (LAZYFREE_PMD 0) split and kept; then fill it again through the CPU.
 * Batching keeps the 512 entries uniform (contpte and NAPOT blocks whole),
 * so MADV_FREE takes them in one batch.
 */
static void pte_mapped_thp(struct mmp_space *s, struct mmp_cpu *cpu, const char *what)
{
	long rule, batch;

	fixed_map(s, BASE, MMP_PMD_SIZE);
	mmp_madvise(s, BASE, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	must(mmp_memset(cpu, BASE, 1, MMP_PMD_SIZE) == 0, "%s: fill", what);
	must(mmp_madvise(s, BASE, MMP_PMD_SIZE, MMP_MADV_FREE) == 0, "%s: MADV_FREE", what);
	must(mmp_memset(cpu, BASE, 2, P) == 0, "%s: redirty", what);
	mmp_space_get_opt(s, MMP_OPT_LAZYFREE_PMD, &rule);
	mmp_space_get_opt(s, MMP_OPT_PTE_BATCH, &batch);
	mmp_space_set_opt(s, MMP_OPT_LAZYFREE_PMD, 0);
	mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, 1);
	must(mmp_reclaim(s) == 0, "%s: reclaim splits the PMD", what);
	mmp_space_set_opt(s, MMP_OPT_LAZYFREE_PMD, rule);
	mmp_space_set_opt(s, MMP_OPT_PTE_BATCH, batch);
	must(counter(s, MMP_C_PMD_SPLIT) == 1 && counter(s, MMP_C_FOLIO_SPLIT) == 0 &&
	     counter(s, MMP_C_LAZYFREED) == 0, "%s: a PTE-mapped THP, kept whole", what);
	must(mmp_memset(cpu, BASE, OLD, MMP_PMD_SIZE) == 0, "%s: write", what);
}

/*
 * A PTE-mapped THP freed whole: one batch of 512 PTEs. Its pages must leave
 * the TLB, or the next write hits a translation cached dirty and the entry
 * stays clean: reclaim then drops the folio and the write with it.
 */
static void check_pte_mapped_thp(const char *arch, const struct variant *v)
{
	const uint64_t new = BASE + 37 * P;	/* not in the first 64 KiB */
	struct family f;

	family_init(&f, arch, "PTE-mapped THP", v);
	pte_mapped_thp(f.s[0], f.cpu, f.what);
	must(mmp_madvise(f.s[0], BASE, MMP_PMD_SIZE, MMP_MADV_FREE) == 0, "%s: MADV_FREE",
	     f.what);
	tap_ok(!(entry_flags(f.s[0], ptep_get(f.s[0], ptep_at(f.s[0], new)),
			     MMP_PTE) & MMP_E_DIRTY), "%s: MADV_FREE cleaned the entry", f.what);
	must(mmp_memset(f.cpu, new, NEW, P) == 0, "%s: write one page again", f.what);
	tap_ok(entry_flags(f.s[0], ptep_get(f.s[0], ptep_at(f.s[0], new)),
			   MMP_PTE) & MMP_E_DIRTY,
	       "%s: the write reached the entry: it is dirty again", f.what);
	fork_family(&f, v->forks);
	reclaim_and_check(&f, v, new);
	family_fini(&f);
}

/* The same flush on a zap: MADV_DONTNEED of a PTE-mapped THP leaves no way to its pages. */
static void check_pte_mapped_thp_zap(const char *arch)
{
	const uint64_t page = BASE + 37 * P;
	struct variant v = { .batch = 1, .lazyfree_pmd = 1 };
	struct family f;

	family_init(&f, arch, "", &v);
	snprintf(f.what, sizeof(f.what), "%s: PTE-mapped THP zapped", arch);
	pte_mapped_thp(f.s[0], f.cpu, f.what);
	/* Keep the table, so no table free widens the flush to page stride anyway. */
	must(mmp_space_set_opt(f.s[0], MMP_OPT_PT_RECLAIM, 0) == 0, "%s: PT_RECLAIM 0", f.what);
	tap_eq(mmp_madvise(f.s[0], BASE, MMP_PMD_SIZE, MMP_MADV_DONTNEED), 0,
	       "%s: MADV_DONTNEED of the whole THP", f.what);
	tap_eq(bad_pages(f.s[0], f.cpu, page, P, 0), 0,
	       "%s: a page the TLB held reads zeroes, not the freed folio", f.what);
	tap_eq(counter(f.s[0], MMP_C_TLB_SANITIZER), 0, "%s: no stale TLB hit", f.what);
	tap_eq(mmp_space_verify(f.s[0]), 0, "%s: verify", f.what);
	family_fini(&f);
}

int main(int argc, char **argv)
{
	const char *arch;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		if (argc > 1 && strcmp(argv[1], arch))
			continue;
		for (int forks = 0; forks < NR_FORKS; forks++) {
			for (int k = 0; k < 8; k++) {
				struct variant v = {
					.forks = forks,
					.reclaim_parent = k & 1,
					.batch = !(k & 2),
					.lazyfree_pmd = !(k & 4),
				};

				/* The lazyfree-PMD rule only matters where a PMD maps the folio. */
				if (v.lazyfree_pmd) {
					check_small_page(arch, &v);
					check_mthp(arch, &v);
				}
				check_pmd_thp(arch, &v);
				check_pte_mapped_thp(arch, &v);
			}
		}
		check_pte_mapped_thp_zap(arch);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
