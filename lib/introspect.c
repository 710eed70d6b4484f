/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Read-only looks into a space (mmprim/introspect.h): one address, one VMA
 * summed as smaps sums it, per-order mTHP statistics, pagemap words.
 *
 * Locking is that of the kernel's read-only walkers (smaps_pte_range,
 * pagemap_pmd_range): the mmap lock for reading keeps VMAs and the tables
 * above the PTE level; a huge PMD is read under the page_table_lock; a PTE
 * table under RCU and its own lock (pte_offset_map_lock), since PT_RECLAIM
 * frees empty PTE tables under the mmap read lock. Entries are read raw: a
 * ptep_get would count, and looking must not move a counter.
 */
#include <limits.h>
#include <string.h>

#include "introspect_walk.h"
#include "mmap_lock.h"
#include "rcu.h"
#include "release.h"

_Static_assert(MMP_ENTRY_PRESENT == MMP_E_PRESENT && MMP_ENTRY_WRITE == MMP_E_WRITE &&
		       MMP_ENTRY_USER == MMP_E_USER && MMP_ENTRY_ACCESSED == MMP_E_ACCESSED &&
		       MMP_ENTRY_DIRTY == MMP_E_DIRTY && MMP_ENTRY_SOFT_DIRTY == MMP_E_SOFT_DIRTY &&
		       MMP_ENTRY_SPECIAL == MMP_E_SPECIAL && MMP_ENTRY_NOEXEC == MMP_E_NOEXEC &&
		       MMP_ENTRY_PROTNONE == MMP_E_PROTNONE && MMP_ENTRY_TABLE == MMP_E_TABLE &&
		       MMP_ENTRY_LEAF == MMP_E_LEAF && MMP_ENTRY_CONT == MMP_E_CONT,
	       "the public entry flags are the core's");
_Static_assert(MMP_NR_LEVELS == MMP_MAX_LEVELS, "one entry per level");
_Static_assert(offsetof(struct mmp_addr_info, pfn) == 104 && sizeof(struct mmp_addr_info) == 192,
	       "struct mmp_addr_info of libmmprim.so.1.2: it only grows at its end");
_Static_assert(offsetof(struct mmp_vma_info, page_size) == 280 &&
		       offsetof(struct mmp_mthp_stats, split_deferred) == 400,
	       "the introspection structures of libmmprim.so.1.2 only grow at their end");
_Static_assert(sizeof(struct mmp_vma_info) == 304, "struct mmp_vma_info of libmmprim.so.1.4");
_Static_assert(offsetof(struct mmp_mthp_stats, swpout_fallback) == 480,
	       "struct mmp_mthp_stats only grows at its end");
_Static_assert(sizeof(((struct mmp_vma_info *)0)->anon_by_order) / sizeof(uint64_t) ==
		       HPAGE_PMD_ORDER + 1, "an order per folio size");

static bool is_zero_pfn(struct mmp_phys *phys, uint64_t pfn)
{
	uint32_t huge = READ_ONCE(phys->huge_zero_pfn);

	return pfn == phys->zero_pfn ||
	       (huge != NO_PFN && pfn >= huge && pfn < huge + HPAGE_PMD_NR);
}

/* Mappings of page @pfn of @pg's folio: its PTEs and the folio's PMDs (precise page mapcount). */
int introspect_page_mapcount(struct mmp_space *s, const struct introspect_page *pg, uint64_t pfn)
{
	struct mmp_page *head = pfn_to_page(s->phys, pg->folio_pfn);
	int mc = __atomic_load_n(&pfn_to_page(s->phys, pfn)->mapcount, __ATOMIC_RELAXED);

	if (pg->folio_order)
		mc += __atomic_load_n(&head->folio.entire_mapcount, __ATOMIC_RELAXED);
	return mc;
}

/* The folio fields of @pg for the page @pfn: under the table lock of the entry mapping it. */
void introspect_folio(struct mmp_space *s, uint64_t pfn, struct introspect_page *pg)
{
	struct mmp_page *head, *page;
	uint32_t fl;

	pg->folio_pfn = MMP_NO_PFN;
	if (pfn == MMP_NO_PFN || pfn >= s->phys->nr_pages)
		return;
	if (is_zero_pfn(s->phys, pfn)) {
		pg->folio_flags = MMP_FOLIO_ZERO;
		pg->folio_pfn = folio_pfn(s->phys, pfn);
		pg->folio_order = pfn == s->phys->zero_pfn ? 0 : HPAGE_PMD_ORDER;
		return;
	}
	pg->folio_pfn = folio_pfn(s->phys, pfn);
	head = pfn_to_page(s->phys, pg->folio_pfn);
	page = pfn_to_page(s->phys, pfn);
	fl = __atomic_load_n(&head->flags, __ATOMIC_RELAXED);
	pg->folio_order = head->order;
	pg->pincount = __atomic_load_n(&head->pincount, __ATOMIC_RELAXED);
	/* A hugetlb folio keeps PageAnonExclusive on its head page alone. */
	if (fl & PG_hugetlb)
		page = head;
	pg->folio_flags = (fl & PG_anon ? MMP_FOLIO_ANON : 0) |
			  (fl & PG_lazyfree ? MMP_FOLIO_LAZYFREE : 0) |
			  (fl & PG_dirty ? MMP_FOLIO_DIRTY : 0) |
			  (fl & PG_swapbacked ? MMP_FOLIO_SWAPBACKED : 0) |
			  (fl & PG_hugetlb ? MMP_FOLIO_HUGETLB : 0) |
			  (pg->pincount ? MMP_FOLIO_PINNED : 0) |
			  (page_flag_test(page, PG_anon_exclusive) ? MMP_FOLIO_ANON_EXCLUSIVE : 0);
	pg->folio_mapcount = folio_mapcount(head);
	pg->page_mapcount = introspect_page_mapcount(s, pg, pfn);
	pg->refcount = folio_ref_count(head);
}

/*
 * The frame a PTE maps. An entry of a contiguous block may hold the block's
 * first frame (riscv64 Svnapot encodes the size in the low pfn bits); the
 * page's own is the block's plus its place in the block, on every format.
 */
static uint64_t pte_page_pfn(struct mmp_space *s, mmp_pte_t e, unsigned int eflags,
			     unsigned int i)
{
	uint64_t pfn = entry_pfn(s, e, MMP_PTE);
	unsigned int n = s->arch->cont_ptes;

	if (n && (eflags & MMP_E_CONT))
		pfn = (pfn & ~(uint64_t)(n - 1)) | (i & (n - 1));
	return pfn;
}

/*
 * Accessed and dirty of a contiguous block gathered from all its entries, as
 * the arm64 contpte ptep_get reports them (the hardware sets them per entry).
 */
static unsigned int block_young_dirty(struct mmp_space *s, mmp_pte_t *ptes, unsigned int first,
				      unsigned int n)
{
	unsigned int f = 0;

	for (unsigned int i = first; i < first + n; i++)
		f |= entry_test(s, READ_ONCE(ptes[i]), MMP_PTE, MMP_E_ACCESSED | MMP_E_DIRTY);
	return f;
}

/* The PTEs of [addr, end) in one table under its lock, @fn once per entry, holes too. */
static int walk_ptes(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t addr, uint64_t end,
		     introspect_fn fn, void *arg)
{
	unsigned int n = s->arch->cont_ptes, blk = UINT32_MAX, blk_ad = 0;
	mmp_spinlock_t *ptl;
	mmp_pte_t *ptes;
	int err = 0;

	rcu_read_lock();
	ptes = pte_offset_map_lock(s, pmdp, &ptl);
	if (!ptes) {
		rcu_read_unlock();
		return 0;	/* emptied and freed meanwhile (PT_RECLAIM): all holes */
	}
	for (; addr < end && !err; addr += PAGE_SIZE) {
		unsigned int i = level_index(addr, MMP_PTE);
		struct introspect_page pg = { .addr = addr, .level = MMP_PTE, .nr = 1,
					      .pfn = MMP_NO_PFN, .folio_pfn = MMP_NO_PFN };

		pg.entry = READ_ONCE(ptes[i]);
		pg.eflags = entry_flags(s, pg.entry, MMP_PTE);
		if (n && (pg.eflags & MMP_E_CONT)) {
			unsigned int first = i & ~(n - 1);

			if (first != blk) {
				blk = first;
				blk_ad = block_young_dirty(s, ptes, first, n);
			}
			pg.gathered = pg.eflags | blk_ad;
		} else {
			pg.gathered = pg.eflags;
		}
		if (entry_present(pg.eflags)) {
			pg.pfn = pte_page_pfn(s, pg.entry, pg.eflags, i);
			introspect_folio(s, pg.pfn, &pg);
		}
		err = fn(s, &pg, arg);
	}
	spin_unlock(ptl);
	rcu_read_unlock();
	return err;
}

/* A huge PMD under the page_table_lock: @fn once for the pages of it in [addr, end). */
static int walk_huge_pmd(struct mmp_space *s, mmp_pte_t *pmdp, uint64_t addr, uint64_t end,
			 introspect_fn fn, void *arg, bool *was_huge)
{
	struct introspect_page pg = { .addr = addr, .level = MMP_PMD, .pfn = MMP_NO_PFN,
				      .folio_pfn = MMP_NO_PFN };
	int err;

	spin_lock(&s->page_table_lock);
	pg.entry = READ_ONCE(*pmdp);
	pg.eflags = entry_flags(s, pg.entry, MMP_PMD);
	if (!(pg.eflags & MMP_E_LEAF)) {
		spin_unlock(&s->page_table_lock);
		*was_huge = false;	/* split meanwhile: walk its PTEs */
		return 0;
	}
	*was_huge = true;
	pg.gathered = pg.eflags;
	pg.nr = (end - addr) >> PAGE_SHIFT;
	if (entry_present(pg.eflags)) {
		pg.pfn = entry_pfn(s, pg.entry, MMP_PMD) + level_index(addr, MMP_PTE);
		introspect_folio(s, pg.pfn, &pg);
	}
	err = fn(s, &pg, arg);
	spin_unlock(&s->page_table_lock);
	return err;
}

/*
 * A 1 GiB hugetlb page where pmd_offset() found no PMD table: @fn once for
 * its pages in [addr, *next), or nothing when the PUD is no leaf (a hole).
 */
static int walk_huge_pud(struct mmp_space *s, uint64_t addr, uint64_t end, introspect_fn fn,
			 void *arg, uint64_t *next)
{
	mmp_pte_t *pudp = s->arch->hugetlb_pud ? pud_offset(s, addr) : NULL;
	struct introspect_page pg = { .addr = addr, .level = MMP_PUD, .pfn = MMP_NO_PFN,
				      .folio_pfn = MMP_NO_PFN };
	int err = 0;

	if (!pudp || !entry_test(s, READ_ONCE(*pudp), MMP_PUD, MMP_E_LEAF))
		return 0;
	spin_lock(&s->page_table_lock);
	pg.entry = READ_ONCE(*pudp);
	pg.eflags = entry_flags(s, pg.entry, MMP_PUD);
	if (pg.eflags & MMP_E_LEAF) {
		*next = level_addr_end(addr, end, MMP_PUD);
		pg.gathered = pg.eflags;
		pg.nr = (*next - addr) >> PAGE_SHIFT;
		if (entry_present(pg.eflags)) {
			pg.pfn = entry_pfn(s, pg.entry, MMP_PUD) +
				 ((addr & (level_size(MMP_PUD) - 1)) >> PAGE_SHIFT);
			introspect_folio(s, pg.pfn, &pg);
		}
		err = fn(s, &pg, arg);
	}
	spin_unlock(&s->page_table_lock);
	return err;
}

/*
 * Call @fn for what maps [addr, end), which lies in one VMA, with the mmap
 * lock held for reading: once per PTE-level page, once per huge PMD (nr pages
 * of it), and with no entry (eflags 0) for the pages below an absent table.
 */
int introspect_walk(struct mmp_space *s, uint64_t addr, uint64_t end, introspect_fn fn, void *arg)
{
	while (addr < end) {
		uint64_t next = level_addr_end(addr, end, MMP_PMD);
		mmp_pte_t *pmdp = pmd_offset(s, addr), pmd;
		bool huge = false;
		int err = 0;

		if (!pmdp)
			err = walk_huge_pud(s, addr, end, fn, arg, &next);
		pmd = pmdp ? READ_ONCE(*pmdp) : 0;
		if (pmd && entry_test(s, pmd, MMP_PMD, MMP_E_LEAF))
			err = walk_huge_pmd(s, pmdp, addr, next, fn, arg, &huge);
		if (!err && !huge && pmdp && READ_ONCE(*pmdp))
			err = walk_ptes(s, pmdp, addr, next, fn, arg);
		if (err)
			return err;
		addr = next;
	}
	return 0;
}

static uint32_t vma_public_flags(const struct mmp_space *s, const struct mmp_vma *vma)
{
	/* Private mappings may always be made writable; shared ones as their file's handle allows. */
	uint32_t mw = !(vma->flags & VM_SHARED) || (vma->flags & VM_MAYWRITE) ? MMP_VMA_MAYWRITE : 0;

	return mw | (vma->flags & VM_SHARED ? MMP_VMA_SHARED : 0) |
	       (vma->vm_file ? MMP_VMA_FILE : 0) |
	       (vma->vm_file && shmem_file(vma->vm_file) && !vma->vm_file->handle ?
			MMP_VMA_SHMEM_ANON : 0) |
	       (vma->flags & VM_HUGETLB ? MMP_VMA_HUGETLB : 0) |
	       (vma->flags & VM_NORESERVE ? MMP_VMA_NORESERVE : 0) |
	       (vma->flags & VM_GROWSDOWN ? MMP_VMA_GROWSDOWN : 0) |
	       (vma->flags & VM_ACCOUNT ? MMP_VMA_ACCOUNT : 0) |
	       (vma->flags & VM_HUGEPAGE ? MMP_VMA_HUGEPAGE : 0) |
	       (vma->flags & VM_NOHUGEPAGE ? MMP_VMA_NOHUGEPAGE : 0) |
	       (vma->flags & VM_DROPPABLE ? MMP_VMA_DROPPABLE : 0) |
	       (vma->flags & VM_WIPEONFORK ? MMP_VMA_WIPEONFORK : 0) |
	       (vma->flags & VM_MAYBE_GUARD ? MMP_VMA_MAYBE_GUARD : 0) |
	       (vma->flags & VM_SOFTDIRTY ? MMP_VMA_SOFTDIRTY : 0) |
	       (vma->flags & VM_DONTCOPY ? MMP_VMA_DONTCOPY : 0) |
	       (vma->flags & VM_MERGEABLE ? MMP_VMA_MERGEABLE : 0) |
	       (vma->flags & VM_SEQ_READ ? MMP_VMA_SEQ_READ : 0) |
	       (vma->flags & VM_RAND_READ ? MMP_VMA_RAND_READ : 0) |
	       (vma->flags & VM_SEALED ? MMP_VMA_SEALED : 0) |
	       (vma->flags & VM_LOCKED ? MMP_VMA_LOCKED : 0) |
	       (vma->flags & VM_LOCKONFAULT ? MMP_VMA_LOCKONFAULT : 0) |
	       (s->start_brk && vma->start <= s->start_brk && s->start_brk < vma->end ?
			MMP_VMA_HEAP : 0);
}

/* ---- one address ---------------------------------------------------------------------- */

MMP_EXPORT int mmp_space_query_sized(struct mmp_space *s, uint64_t addr,
				     struct mmp_addr_info *out, size_t size)
{
	struct mmp_addr_info k = { .leaf_level = -1, .pfn = MMP_NO_PFN,
				   .folio_pfn = MMP_NO_PFN };
	struct introspect_page pg = { .pfn = MMP_NO_PFN, .folio_pfn = MMP_NO_PFN };
	mmp_pte_t *table;
	struct mmp_vma *vma;
	int l;

	if (!s || !out || size < sizeof(uint64_t))
		return -EINVAL;
	addr &= PAGE_MASK;
	if (addr >= TASK_SIZE(s))
		return -ENOMEM;
	mmap_read_lock(s);
	vma = find_vma(s, addr);
	if (!vma) {
		mmap_read_unlock(s);
		return -ENOMEM;
	}
	k.addr = addr;
	k.vma_start = vma->start;
	k.vma_end = vma->end;
	k.vma_prot = (uint32_t)(vma->flags & VM_ACCESS_FLAGS);
	k.vma_flags = vma_public_flags(s, vma);
	k.levels = s->arch->levels;

	/* Tables above the PTE level go away only under the mmap write lock. */
	table = space_table(s, s->pgd_pfn);
	for (l = pgd_level(s); l > MMP_PMD; l--) {
		k.entry[l] = READ_ONCE(table[level_index(addr, l)]);
		k.entry_flags[l] = entry_flags(s, k.entry[l], l);
		if (!(k.entry_flags[l] & MMP_E_TABLE))
			break;
		table = entry_table(s, k.entry[l], l);
	}
	/* A 1 GiB hugetlb page. */
	if (l == MMP_PUD && (k.entry_flags[l] & MMP_E_LEAF) && entry_present(k.entry_flags[l])) {
		spin_lock(&s->page_table_lock);
		k.entry[l] = READ_ONCE(table[level_index(addr, l)]);
		k.entry_flags[l] = entry_flags(s, k.entry[l], l);
		if ((k.entry_flags[l] & MMP_E_LEAF) && entry_present(k.entry_flags[l])) {
			k.leaf_level = MMP_PUD;
			pg.pfn = entry_pfn(s, k.entry[l], l) +
				 ((addr & (level_size(l) - 1)) >> PAGE_SHIFT);
			introspect_folio(s, pg.pfn, &pg);
		}
		spin_unlock(&s->page_table_lock);
	}
	if (l == MMP_PMD) {
		mmp_pte_t *pmdp = &table[level_index(addr, MMP_PMD)];
		mmp_spinlock_t *ptl;
		mmp_pte_t *ptes;

		unsigned int pf;

		spin_lock(&s->page_table_lock);
		k.entry[MMP_PMD] = READ_ONCE(*pmdp);
		pf = k.entry_flags[MMP_PMD] = entry_flags(s, k.entry[MMP_PMD], MMP_PMD);
		if ((pf & MMP_E_LEAF) && entry_present(pf)) {
			k.leaf_level = MMP_PMD;
			pg.pfn = entry_pfn(s, k.entry[MMP_PMD], MMP_PMD) +
				 level_index(addr, MMP_PTE);
			introspect_folio(s, pg.pfn, &pg);
		}
		spin_unlock(&s->page_table_lock);

		if (k.entry_flags[MMP_PMD] & MMP_E_TABLE) {
			rcu_read_lock();
			ptes = pte_offset_map_lock(s, pmdp, &ptl);
			if (ptes) {
				unsigned int i = level_index(addr, MMP_PTE), n = s->arch->cont_ptes;

				k.entry[MMP_PMD] = READ_ONCE(*pmdp);
				k.entry_flags[MMP_PMD] = entry_flags(s, k.entry[MMP_PMD], MMP_PMD);
				k.entry[MMP_PTE] = READ_ONCE(ptes[i]);
				k.entry_flags[MMP_PTE] = entry_flags(s, k.entry[MMP_PTE], MMP_PTE);
				if (entry_present(k.entry_flags[MMP_PTE])) {
					k.leaf_level = MMP_PTE;
					pg.pfn = pte_page_pfn(s, k.entry[MMP_PTE],
							      k.entry_flags[MMP_PTE], i);
					introspect_folio(s, pg.pfn, &pg);
				}
				if (n) {
					k.block_entries = n;
					k.block_start = addr & ~((uint64_t)n * PAGE_SIZE - 1);
					k.block_folded = !!(k.entry_flags[MMP_PTE] & MMP_E_CONT);
				}
				spin_unlock(ptl);
			}
			rcu_read_unlock();
		}
	}
	mmap_read_unlock(s);

	if (k.leaf_level >= 0) {
		k.pfn = pg.pfn;
		k.folio_pfn = pg.folio_pfn;
		k.folio_order = pg.folio_order;
		k.folio_flags = pg.folio_flags;
		k.folio_mapcount = pg.folio_mapcount;
		k.page_mapcount = pg.page_mapcount;
		k.refcount = pg.refcount;
		k.pincount = pg.pincount;
	}
	copy_struct_to_caller(out, size, &k, sizeof(k));
	return 0;
}

/* ---- pagemap ------------------------------------------------------------------------- */

uint64_t introspect_pagemap_word(struct mmp_space *s, const struct introspect_page *pg,
				 uint64_t pfn)
{
	uint64_t pm;

	/*
	 * A swap entry (pte_to_pagemap_entry): PM_SWAP, the type and offset
	 * where the pfn goes (type | offset << MAX_SWAPFILES_SHIFT), and
	 * PM_GUARD_REGION for a guard marker (6.15 and later: "fs/proc/task_mmu: add guard
	 * region bit to pagemap", posted Feb 2025, merged with the file-backed guards).
	 */
	if (pg->level == MMP_PTE && is_swap_pte(s, pg->entry)) {
		pm = MMP_PM_SWAP | ((format_swp_type(s->format, pg->entry) |
				     format_swp_offset(s->format, pg->entry) << 5) & MMP_PM_PFN_MASK);
		if (is_guard_pte_marker(s, pg->entry) &&
		    release_follows(s, RULE_PAGEMAP_GUARD_REGION))
			pm |= MMP_PM_GUARD_REGION;
		return pm;
	}
	if (!entry_present(pg->eflags))
		return 0;
	pm = MMP_PM_PRESENT | (pfn & MMP_PM_PFN_MASK);
	if (pg->eflags & MMP_E_SOFT_DIRTY)
		pm |= MMP_PM_SOFT_DIRTY;
	/*
	 * PM_FILE: a page that is not anonymous, a page-cache page. The zero
	 * page at a PTE is no normal page (vm_normal_page) and shows nothing;
	 * 6.18's pagemap_pmd_range takes the huge zero page as it is, and it
	 * is not anonymous (the host: present and file).
	 */
	if (!(pg->folio_flags & MMP_FOLIO_ANON) &&
	    (!(pg->folio_flags & MMP_FOLIO_ZERO) || pg->level != MMP_PTE))
		pm |= MMP_PM_FILE;
	/*
	 * A page mapped once, by this mm: the kernel's precise page mapcount
	 * of 1. Through a PMD, 6.18's pagemap_pmd_range_thp asks it of the
	 * PMD's own page (pmd_page) for every sub-page: a THP another mm maps
	 * in part (its copy-on-write split the PMD there) is exclusive nowhere
	 * if that first page is one it still maps.
	 */
	if (!(pg->folio_flags & MMP_FOLIO_ZERO) &&
	    introspect_page_mapcount(s, pg, pg->level == MMP_PMD ?
					    entry_pfn(s, pg->entry, MMP_PMD) : pfn) == 1)
		pm |= MMP_PM_MMAP_EXCLUSIVE;
	return pm;
}

struct pagemap_walk {
	uint64_t start;
	uint64_t *out;
};

static int pagemap_page(struct mmp_space *s, const struct introspect_page *pg, void *arg)
{
	struct pagemap_walk *w = arg;
	uint64_t i = (pg->addr - w->start) >> PAGE_SHIFT;

	for (unsigned int j = 0; j < pg->nr; j++)
		w->out[i + j] |= introspect_pagemap_word(s, pg, pg->pfn + j);
	return 0;
}

MMP_EXPORT int mmp_space_pagemap(struct mmp_space *s, uint64_t addr, unsigned int nr,
				 uint64_t *out)
{
	struct pagemap_walk w = { .start = addr, .out = out };
	uint64_t end;

	if (!s || !out || (addr & ~PAGE_MASK) || nr > INT_MAX)
		return -EINVAL;
	if (addr >= TASK_SIZE(s))
		return 0;
	/* A read of /proc/PID/pagemap stops at the task size: a short count. */
	if (nr > (TASK_SIZE(s) - addr) >> PAGE_SHIFT)
		nr = (unsigned int)((TASK_SIZE(s) - addr) >> PAGE_SHIFT);
	end = addr + ((uint64_t)nr << PAGE_SHIFT);
	memset(out, 0, (size_t)nr * sizeof(*out));
	mmap_read_lock(s);
	for (struct mmp_vma *vma = vma_find_next(s, addr); vma && vma->start < end;
	     vma = vma->vm_next) {
		uint64_t from = MAX(vma->start, addr), to = MIN(vma->end, end);

		/* A soft-dirty VMA reports every page soft-dirty, holes too (pagemap_pte_hole). */
		if (vma->flags & VM_SOFTDIRTY)
			for (uint64_t a = from; a < to; a += PAGE_SIZE)
				out[(a - addr) >> PAGE_SHIFT] = MMP_PM_SOFT_DIRTY;
		introspect_walk(s, from, to, pagemap_page, &w);
	}
	mmap_read_unlock(s);
	return (int)nr;
}

/* ---- one VMA, as smaps sums it -------------------------------------------------------- */

/* smaps_account() for @pg's pages: their mapcount decides shared or private, and the Pss share. */
/* Pss is summed in fixed point, as smaps does, so that shares of a third do not round away. */
#define PSS_SHIFT	12

struct smaps_sums {
	struct mmp_vma_info *v;
	uint64_t pss, pss_dirty;	/* bytes << PSS_SHIFT */
};

static int smaps_page(struct mmp_space *s, const struct introspect_page *pg, void *arg)
{
	struct smaps_sums *sums = arg;
	struct mmp_vma_info *v = sums->v;
	uint64_t bytes = (uint64_t)pg->nr << PAGE_SHIFT;
	bool dirty, young;

	/*
	 * smaps_pte_entry and smaps_pmd_entry take the page through
	 * vm_normal_page(), which has none for the zero pages: not counted.
	 */
	if (!entry_present(pg->eflags) || (pg->folio_flags & MMP_FOLIO_ZERO))
		return 0;
	/* smaps_hugetlb_range: a hugetlb page counts only as shared or private hugetlb. */
	if (pg->folio_flags & MMP_FOLIO_HUGETLB) {
		*(pg->folio_mapcount > 1 ? &v->shared_hugetlb : &v->private_hugetlb) += bytes;
		return 0;
	}
	dirty = (pg->gathered & MMP_E_DIRTY) || (pg->folio_flags & MMP_FOLIO_DIRTY);
	young = pg->gathered & MMP_E_ACCESSED;
	v->rss += bytes;
	if (young)
		v->referenced += bytes;
	if (pg->folio_flags & MMP_FOLIO_ANON) {
		v->anonymous += bytes;
		if (pg->folio_order <= HPAGE_PMD_ORDER)
			v->anon_by_order[pg->folio_order] += bytes;
		if (pg->level == MMP_PMD)
			v->anon_huge_pages += bytes;
		/* smaps_account(): MADV_FREE'd and still clean; a redirtied page is not lazy. */
		if (!(pg->folio_flags & MMP_FOLIO_SWAPBACKED) && !dirty)
			v->lazyfree += bytes;
	}
	for (unsigned int j = 0; j < pg->nr; j++) {
		int mc = introspect_page_mapcount(s, pg, pg->pfn + j);

		if (mc < 1)
			mc = 1;
		sums->pss += (PAGE_SIZE << PSS_SHIFT) / (uint64_t)mc;
		if (dirty)
			sums->pss_dirty += (PAGE_SIZE << PSS_SHIFT) / (uint64_t)mc;
		if (mc >= 2)
			*(dirty ? &v->shared_dirty : &v->shared_clean) += PAGE_SIZE;
		else
			*(dirty ? &v->private_dirty : &v->private_clean) += PAGE_SIZE;
	}
	return 0;
}

/* thp_vma_suitable_order(): an aligned folio of @order around @addr fits in @vma. */
static bool thp_vma_suitable_order(const struct mmp_vma *vma, uint64_t addr, unsigned int order)
{
	uint64_t size = PAGE_SIZE << order, haddr = addr & ~(size - 1);

	/* A file's folio is aligned in the file too. */
	if (vma->vm_file && ((vma->start >> PAGE_SHIFT) - vma->pgoff) & ((size >> PAGE_SHIFT) - 1))
		return false;
	return haddr >= vma->start && haddr + size <= vma->end;
}

/*
 * smaps' THPeligible: thp_vma_allowable_orders() as smaps asks it. The policy's
 * orders (anonymous memory's sysfs and MADV_HUGEPAGE, shmem's own; a regular
 * file's large folios are its page cache's, not THP, so none), kept only when
 * one of them fits an aligned folio ending at most at the VMA's end (and the
 * larger ones dropped).
 */
static uint32_t thp_smaps_orders(struct mmp_space *s, struct mmp_vma *vma)
{
	uint32_t orders;

	if (!vma->vm_file)
		orders = thp_vma_allowable_orders(s, vma) & ((2u << HPAGE_PMD_ORDER) - 1) & ~3u;
	else if (shmem_file(vma->vm_file) && filemap_max_order(vma->vm_file, vma, vma->pgoff))
		orders = 1u << filemap_max_order(vma->vm_file, vma, vma->pgoff);
	else
		orders = 0;
	for (unsigned int o = HPAGE_PMD_ORDER; o >= 2; o--)
		if ((orders & (1u << o)) && vma->end - vma->start >= PAGE_SIZE << o &&
		    thp_vma_suitable_order(vma, vma->end - (PAGE_SIZE << o), o))
			return orders & ((2u << o) - 1);	/* the larger ones do not fit */
	return 0;
}

void introspect_vma(struct mmp_space *s, struct mmp_vma *vma, struct mmp_vma_info *v)
{
	struct smaps_sums sums = { .v = v };

	memset(v, 0, sizeof(*v));
	v->start = vma->start;
	v->end = vma->end;
	v->prot = (uint32_t)(vma->flags & VM_ACCESS_FLAGS);
	v->flags = vma_public_flags(s, vma);
	v->page_size = is_vm_hugetlb_page(vma) ? huge_page_size(hstate_vma(vma)) : PAGE_SIZE;
	if (is_vm_hugetlb_page(vma)) {
		v->pgoff = vma->pgoff;
		v->file_id = vma->vm_file->id;
	} else if (vma->vm_file) {
		v->pgoff = vma->pgoff;
		v->file_id = vma->vm_file->id;
	}
	v->thp_orders = thp_smaps_orders(s, vma);
	introspect_walk(s, vma->start, vma->end, smaps_page, &sums);
	v->pss = sums.pss >> PSS_SHIFT;
	v->pss_dirty = sums.pss_dirty >> PSS_SHIFT;
	/* smaps_account's pss_locked: what this VMA holds, as Pss counts it. */
	if (vma->flags & VM_LOCKED)
		v->locked = v->pss;
}

MMP_EXPORT int mmp_space_vma_info_sized(struct mmp_space *s, uint64_t addr,
					struct mmp_vma_info *out, size_t size)
{
	struct mmp_vma_info k;
	struct mmp_vma *vma;

	if (!s || !out || size < sizeof(uint64_t))
		return -EINVAL;
	mmap_read_lock(s);
	vma = addr < TASK_SIZE(s) ? vma_find_next(s, addr) : NULL;
	if (vma)
		introspect_vma(s, vma, &k);
	mmap_read_unlock(s);
	if (!vma)
		return -ENOMEM;
	copy_struct_to_caller(out, size, &k, sizeof(k));
	return 0;
}

/* ---- mTHP statistics ----------------------------------------------------------------- */

struct mthp_walk {
	struct mmp_mthp_stats *st;
	uint64_t last_folio;
};

/* On the deferred split queue as partially mapped (deferred_split_folio)? */
static bool folio_partially_mapped(struct mmp_page *head)
{
	return page_flag_test(head, PG_partially_mapped);
}

static int mthp_page(struct mmp_space *s, const struct introspect_page *pg, void *arg)
{
	struct mthp_walk *w = arg;
	unsigned int o = pg->folio_order;

	if (!entry_present(pg->eflags) || !(pg->folio_flags & MMP_FOLIO_ANON) ||
	    (pg->folio_flags & MMP_FOLIO_HUGETLB) || o < 2 ||
	    o > HPAGE_PMD_ORDER || pg->folio_pfn == w->last_folio)
		return 0;
	w->last_folio = pg->folio_pfn;
	w->st->nr_anon[o]++;
	if (folio_partially_mapped(pfn_to_page(s->phys, pg->folio_pfn)))
		w->st->nr_anon_partially_mapped[o]++;
	return 0;
}

MMP_EXPORT int mmp_space_mthp_stats_sized(struct mmp_space *s, struct mmp_mthp_stats *out,
					  size_t size)
{
	struct mmp_mthp_stats k = { 0 };
	struct mthp_walk w = { .st = &k, .last_folio = MMP_NO_PFN };

	if (!s || !out || size < sizeof(uint64_t))
		return -EINVAL;
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++) {
		k.anon_fault_alloc[o] = __atomic_load_n(
			&s->mthp_stat[MTHP_STAT_ANON_FAULT_ALLOC][o], __ATOMIC_RELAXED);
		k.anon_fault_fallback[o] = __atomic_load_n(
			&s->mthp_stat[MTHP_STAT_ANON_FAULT_FALLBACK][o], __ATOMIC_RELAXED);
		k.split[o] = __atomic_load_n(&s->mthp_stat[MTHP_STAT_SPLIT][o], __ATOMIC_RELAXED);
		k.split_deferred[o] = __atomic_load_n(&s->mthp_stat[MTHP_STAT_SPLIT_DEFERRED][o],
						      __ATOMIC_RELAXED);
		k.swpout_fallback[o] = __atomic_load_n(
			&s->mthp_stat[MTHP_STAT_SWPOUT_FALLBACK][o], __ATOMIC_RELAXED);
	}
	mmap_read_lock(s);
	for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next)
		introspect_walk(s, vma->start, vma->end, mthp_page, &w);
	mmap_read_unlock(s);
	copy_struct_to_caller(out, size, &k, sizeof(k));
	return 0;
}

/* ---- mTHP sizes by name --------------------------------------------------------------- */

static const char *const thp_size_names[HPAGE_PMD_ORDER + 1] = {
	[2] = "hugepages-16kB",	  [3] = "hugepages-32kB",   [4] = "hugepages-64kB",
	[5] = "hugepages-128kB",  [6] = "hugepages-256kB",  [7] = "hugepages-512kB",
	[8] = "hugepages-1024kB", [9] = "hugepages-2048kB",
};

MMP_EXPORT const char *mmp_thp_size_name(unsigned int order)
{
	return order <= HPAGE_PMD_ORDER ? thp_size_names[order] : NULL;
}

MMP_EXPORT int mmp_thp_order(const char *name)
{
	unsigned long long n;
	const char *p;
	char *end;

	if (!name)
		return -EINVAL;
	p = strncmp(name, "hugepages-", 10) ? name : name + 10;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(p, &end, 10);
	if (errno)
		return -EINVAL;
	if (!strcmp(end, "kB") || !strcmp(end, "K") || !strcmp(end, "k")) {
		if (n > (1ULL << 40))
			return -EINVAL;
		n <<= 10;
	} else if (*end || p != name) {
		return -EINVAL;	/* "hugepages-" wants its unit, as sysfs writes it */
	}
	for (unsigned int o = 2; o <= HPAGE_PMD_ORDER; o++)
		if (n == PAGE_SIZE << o)
			return (int)o;
	return -EINVAL;
}
