/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the lazyfree tests share: a space per back end with MADV_FREE'd data at
 * a fixed PMD-aligned address, counters since a snapshot, the live leaf and
 * folio of an address, data patterns that tell discarded pages from kept ones.
 */
#ifndef MMP_TESTS_LAZYFREE_UTIL_H
#define MMP_TESTS_LAZYFREE_UTIL_H

#include <string.h>

#include "mm.h"
#include "util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define BASE	0x40000000ULL	/* PMD aligned, far from mmap_base */
#define NPMD	(MMP_PMD_SIZE / MMP_PAGE_SIZE)

static struct mmp_phys *phys;

/* ---- helpers ------------------------------------------------------------------- */

struct lf {
	const char *arch;
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	struct mmp_counters c0;	/* counters at the last snap() */
};

static inline void lf_init(struct lf *t, const char *arch, long lazyfree_pmd)
{
	t->arch = arch;
	t->s = new_space(phys, arch);
	tap_require(mmp_space_set_opt(t->s, MMP_OPT_LAZYFREE_PMD, lazyfree_pmd) == 0,
		    "%s: MMP_OPT_LAZYFREE_PMD %ld", arch, lazyfree_pmd);
	tap_require(mmp_cpu_attach(t->s, &t->cpu) == 0, "%s: attach a CPU", arch);
}

static inline void lf_fini(struct lf *t)
{
	if (t->cpu)
		mmp_cpu_detach(t->cpu);
	tap_eq(counter(t->s, MMP_C_TLB_SANITIZER), 0, "%s: no stale TLB hit in the whole run",
	       t->arch);
	tap_eq(mmp_space_destroy(t->s), 0, "%s: destroy", t->arch);
}

static inline void snap(struct lf *t)
{
	mmp_space_counters(t->s, &t->c0);
}

/* How much counter @c moved since the last snap(). */
static inline long long since(struct lf *t, enum mmp_counter c)
{
	return (long long)(counter(t->s, c) - t->c0.v[c]);
}

/*
 * Faults since the snapshot that map, copy or refuse something: not the access
 * faults of software A/D (fault_ad), which only set accessed or dirty on an
 * entry that stays mapped; ad_faults_as_declared() checks those.
 */
static inline long long faults_since(struct lf *t)
{
	long long n = 0;

	for (int c = MMP_C_FAULT_ANON; c <= MMP_C_FAULT_SIGSEGV; c++)
		if (c != MMP_C_FAULT_AD)
			n += since(t, c);
	return n;
}

/* Access faults since the snapshot: some with software A/D, none with the MMU's. */
static inline bool ad_faults_as_declared(struct lf *t)
{
	return space_hw_ad(t->s) ? since(t, MMP_C_FAULT_AD) == 0 : since(t, MMP_C_FAULT_AD) > 0;
}

static inline uint64_t fixed_map(struct lf *t, uint64_t addr, uint64_t len, int flags)
{
	uint64_t got = 0;

	tap_require(mmp_mmap(t->s, addr, len, RW, MMP_MAP_FIXED | flags, &got) == 0 && got == addr,
		    "%s: mmap %llu KiB at %#llx", t->arch, (unsigned long long)(len / KiB),
		    (unsigned long long)addr);
	return addr;
}

/*
 * The leaf entry for @addr; 0 if none. A PTE is read with ptep_get: on arm64
 * the MMU sets young and dirty on one entry of a contpte block, and ptep_get
 * gathers them over the block, as the kernel sees it.
 */
static inline mmp_pte_t leaf_of(struct mmp_space *s, uint64_t addr, enum mmp_level *level)
{
	mmp_pte_t *pmdp = pmd_offset(s, addr), pmd, *ptes;

	*level = MMP_PTE;
	if (!pmdp)
		return 0;
	pmd = READ_ONCE(*pmdp);
	if (entry_flags(s, pmd, MMP_PMD) & MMP_E_LEAF) {
		*level = MMP_PMD;
		return pmd;
	}
	ptes = pte_table(s, pmd);
	return ptes ? ptep_get(s, &ptes[level_index(addr, MMP_PTE)]) : 0;
}

/* The folio head mapped at @addr, NULL for none or the zero page. */
static inline struct mmp_page *folio_at(struct mmp_space *s, uint64_t addr)
{
	enum mmp_level l;
	mmp_pte_t e = leaf_of(s, addr, &l);
	uint64_t pfn;

	if (!e || (entry_flags(s, e, l) & MMP_E_SPECIAL))
		return NULL;
	pfn = entry_pfn(s, e, l) + (l == MMP_PMD ? level_index(addr, MMP_PTE) : 0);
	return pfn_to_page(s->phys, folio_pfn(s->phys, pfn));
}

/* Lazyfree as the kernel sees it: anonymous and not swapbacked. */
static inline bool folio_lazyfree(const struct mmp_page *head)
{
	return (head->flags & PG_anon) && !(head->flags & PG_swapbacked);
}

/* Per 4 KiB page of a range: what maps it and with which bits. */
struct rstate {
	unsigned int none, zero;	/* unmapped, zero page (small or huge) */
	unsigned int mapped, pmd;	/* by a folio; of those through a huge PMD */
	unsigned int young, dirty;	/* of the mapped, from their live entries */
	unsigned int lazyfree;		/* of the mapped, in a lazyfree folio */
	unsigned int large;		/* of the mapped, in a folio of order > 0 */
};

static inline struct rstate range_state(struct mmp_space *s, uint64_t addr, uint64_t len)
{
	struct rstate st = { 0 };

	for (uint64_t a = addr; a < addr + len; a += PAGE_SIZE) {
		enum mmp_level l;
		mmp_pte_t e = leaf_of(s, a, &l);
		unsigned int f = entry_flags(s, e, l);
		struct mmp_page *head;

		if (!e) {
			st.none++;
			continue;
		}
		if (f & MMP_E_SPECIAL) {
			st.zero++;
			continue;
		}
		head = folio_at(s, a);
		st.mapped++;
		st.pmd += l == MMP_PMD;
		st.young += !!(f & MMP_E_ACCESSED);
		st.dirty += !!(f & MMP_E_DIRTY);
		st.lazyfree += folio_lazyfree(head);
		st.large += head->order > 0;
	}
	return st;
}

/* How many @nr-page chunks of [addr, addr + len) have a dirty entry. */
static inline unsigned int dirty_chunks(struct mmp_space *s, uint64_t addr, uint64_t len, unsigned int nr)
{
	unsigned int n = 0;

	for (uint64_t c = addr; c < addr + len; c += (uint64_t)nr * PAGE_SIZE)
		n += range_state(s, c, (uint64_t)nr * PAGE_SIZE).dirty > 0;
	return n;
}

/* Page i of a filled range holds this byte everywhere. */
static inline unsigned char pattern(uint64_t addr)
{
	return (unsigned char)(((addr >> PAGE_SHIFT) * 7) % 251 + 1);
}

static inline void fill(struct lf *t, uint64_t addr, uint64_t len)
{
	int err = 0;

	for (uint64_t a = addr; a < addr + len && !err; a += PAGE_SIZE)
		err = mmp_memset(t->cpu, a, pattern(a), PAGE_SIZE);
	tap_require(err == 0, "%s: fill %llu KiB at %#llx", t->arch,
		    (unsigned long long)(len / KiB), (unsigned long long)addr);
}

/*
 * A THP at BASE (MADV_HUGEPAGE) and, when @slen, @slen bytes of small pages at
 * @small, both mapped with @flags, then both filled. Returns BASE.
 */
static inline uint64_t filled_thp_and_small(struct lf *t, uint64_t small, uint64_t slen,
					    int flags)
{
	uint64_t a = fixed_map(t, BASE, MMP_PMD_SIZE, flags);

	mmp_madvise(t->s, a, MMP_PMD_SIZE, MMP_MADV_HUGEPAGE);
	if (slen)
		fixed_map(t, small, slen, flags);
	fill(t, a, MMP_PMD_SIZE);
	if (slen)
		fill(t, small, slen);
	return a;
}

/* A THP at BASE, filled. */
static inline uint64_t filled_thp(struct lf *t)
{
	return filled_thp_and_small(t, 0, 0, 0);
}

/* Write one byte, the value it already has, into page @addr: a redirty, data unchanged. */
static inline void redirty(struct lf *t, uint64_t addr)
{
	unsigned char b = pattern(addr);

	if (mmp_write(t->cpu, addr + 1, &b, 1))
		tap_require(0, "%s: redirty %#llx", t->arch, (unsigned long long)addr);
}

/* Pages of [addr, addr + len) whose content is not the fill pattern (or zero when @zero). */
static inline unsigned int bad_pages(struct lf *t, uint64_t addr, uint64_t len, bool zero)
{
	static unsigned char buf[PAGE_SIZE];
	unsigned int bad = 0;

	for (uint64_t a = addr; a < addr + len; a += PAGE_SIZE) {
		unsigned char want = zero ? 0 : pattern(a);

		if (mmp_read(t->cpu, a, buf, PAGE_SIZE)) {
			bad++;
			continue;
		}
		for (unsigned int i = 0; i < PAGE_SIZE; i++) {
			if (buf[i] != want) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

static inline void verify(struct lf *t, const char *what)
{
	tap_eq(mmp_space_verify(t->s), 0, "%s: verify after %s", t->arch, what);
}

#define EXPECT(t, c, want, what)						\
	tap_eq(since(t, MMP_C_##c), (want), "%s: %s: " #c " += %lld", (t)->arch, what,	\
	       (long long)(want))

/*
 * main() of a lazyfree test: the phys, then @run on one back end per entry
 * format (the first listed of each), or on the one named.
 */
static inline int lf_main(int argc, char **argv, void (*run)(const char *arch))
{
	unsigned int formats = 0;
	const char *arch;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		unsigned int f = 1u << mmp_arch_find(arch)->format;

		if ((argc < 2 && !(formats & f)) || (argc >= 2 && !strcmp(argv[1], arch)))
			run(arch);
		formats |= f;
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}


#endif /* MMP_TESTS_LAZYFREE_UTIL_H */
