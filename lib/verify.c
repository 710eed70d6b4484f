/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmp_space_verify(): walk every space on the phys and check that the tables,
 * the VMAs, the folio counts, the frame allocator and the TLBs agree.
 *
 * It runs after every operation of a differential tester, so it must cost
 * about what the spaces map, not what the phys holds, and it must not wait:
 * page tables still in their RCU grace period are accounted as in flight
 * (PG_pt_rcu, phys->nr_pt_rcu) rather than waited for with rcu_barrier.
 */
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>

#include "mm.h"
#include "mmap_lock.h"
#include "vma_tree.h"

/*
 * What the table walk found at one frame. Kept in phys->verify_scratch across
 * calls and zeroed by the frame scan as it consumes each tally, so a call
 * touches the tallies of the frames in use only.
 */
struct tally {
	int32_t refs;		/* folio head: mappings seen (each holds a reference) */
	int32_t maps;		/* PTE mappings of this very page */
	int32_t entire;		/* folio head: PMD mappings seen */
	int32_t table;		/* reached as a page table */
	int32_t cache;		/* folio head: page-cache references (one per page) */
	int32_t owner[2];	/* anonymous large folio head: mappings by the space of each owner slot */
};

struct verify {
	struct mmp_phys *phys;
	int errors;
	struct tally *tally;	/* per frame */
	uint64_t *free;		/* bitmap per frame: free (buddy block or per-CPU list) */
	int64_t outstanding;	/* tallies the walk took and the frame scan did not consume */
	int64_t extra_refs;	/* GUP pins over all folios */
	int64_t in_flight;	/* unlinked tables waiting in an RCU batch */
	/* hugetlb, per hstate: pool pages found free and in use, reservations found */
	int64_t huge_free[HUGE_MAX_HSTATE], huge_used[HUGE_MAX_HSTATE];
	int64_t huge_resv[HUGE_MAX_HSTATE];	/* unconsumed, less freed pages that restore */
	/* per space */
	struct mmp_space *s;
	int64_t hugetlb_pages;
	struct mmp_vma *vma;	/* last VMA a leaf was found in: leaves come in address order */
	int64_t rss[NR_MM_COUNTERS], tables;
};

static bool frame_free(struct verify *v, uint64_t pfn)
{
	return v->free[pfn / 64] >> (pfn % 64) & 1;
}

/* The first frame at or after @pfn that is not free, or nr_pages: free blocks go by a word at a time. */
static inline uint64_t next_used(struct verify *v, uint64_t pfn)
{
	uint64_t nr = v->phys->nr_pages, w;

	if (pfn >= nr)
		return nr;
	w = ~v->free[pfn / 64] & (~0ULL << (pfn % 64));
	while (!w) {
		pfn = (pfn | 63) + 1;
		if (pfn >= nr)
			return nr;
		w = ~v->free[pfn / 64];
	}
	return (pfn & ~63ULL) + __builtin_ctzll(w);
}

__attribute__((format(printf, 2, 0)))
static void vreport(struct verify *v, const char *fmt, va_list ap)
{
	if (v->errors++ >= 20)
		return;
	fprintf(stderr, "libmmprim: verify: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

__attribute__((format(printf, 2, 3)))
static void report(struct verify *v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(v, fmt, ap);
	va_end(ap);
}

static bool take_table(struct verify *v, uint64_t pfn, const char *what, uint64_t va)
{
	if (!phys_pfn_valid(v->phys, pfn) || frame_free(v, pfn) ||
	    !(pfn_to_page(v->phys, pfn)->flags & PG_table)) {
		report(v, "space %llu: %s at %#llx points to frame %llu, not a page table",
		       (unsigned long long)v->s->id, what, (unsigned long long)va,
		       (unsigned long long)pfn);
		return false;
	}
	if (pfn_to_page(v->phys, pfn)->flags & (PG_pt_freeing | PG_pt_rcu)) {
		report(v, "space %llu: %s at %#llx points to table %llu, which is being freed",
		       (unsigned long long)v->s->id, what, (unsigned long long)va,
		       (unsigned long long)pfn);
		return false;
	}
	v->outstanding++;
	if (v->tally[pfn].table++) {
		report(v, "page table %llu is linked twice", (unsigned long long)pfn);
		return false;
	}
	return true;
}

/* A leaf of @size at @va must lie inside one VMA and agree with its flags. */
static struct mmp_vma *check_leaf_vma(struct verify *v, uint64_t va, uint64_t size, unsigned int f)
{
	struct mmp_vma *vma = v->vma;

	if (!vma || va < vma->start || va >= vma->end)
		vma = v->vma = find_vma(v->s, va);

	if (!vma || va + size > vma->end) {
		report(v, "space %llu: mapping at %#llx outside any VMA", (unsigned long long)v->s->id,
		       (unsigned long long)va);
		return NULL;
	}
	if (!!(f & MMP_E_PRESENT) != !!(vma->flags & VM_ACCESS_FLAGS) ||
	    ((f & MMP_E_WRITE) && !(vma->flags & VM_WRITE)))
		report(v, "space %llu: entry at %#llx disagrees with its VMA's protection",
		       (unsigned long long)v->s->id, (unsigned long long)va);
	return vma;
}

/*
 * A swap PTE: the only ones the library writes are guard markers, and only
 * inside a VMA (munmap drops them, mremap moves them with their VMA), which
 * was given an anon_vma when they were installed.
 */
static void check_pte_marker(struct verify *v, mmp_pte_t e, uint64_t va)
{
	struct mmp_vma *vma = v->vma;

	if (!is_guard_pte_marker(v->s, e) ||
	    format_swp_offset(v->s->format, e) != PTE_MARKER_GUARD) {
		report(v, "space %llu: unexpected swap entry %#llx at %#llx",
		       (unsigned long long)v->s->id, (unsigned long long)e, (unsigned long long)va);
		return;
	}
	if (!vma || va < vma->start || va >= vma->end)
		vma = v->vma = find_vma(v->s, va);
	if (!vma)
		report(v, "space %llu: guard marker at %#llx outside any VMA",
		       (unsigned long long)v->s->id, (unsigned long long)va);
	else if (!vma->anon_vma && !(vma->flags & VM_MAYBE_GUARD))
		report(v, "space %llu: guard marker at %#llx in a VMA with neither an anon_vma "
		       "nor VM_MAYBE_GUARD",
		       (unsigned long long)v->s->id, (unsigned long long)va);
}

/*
 * The reverse map must find the page where it is mapped: the anon_vma
 * lineage, or the file's i_mmap (the VMA maps the folio's file), and the index.
 */
static void check_rmap(struct verify *v, struct mmp_vma *vma, uint64_t va, uint64_t pfn)
{
	uint64_t head = folio_pfn(v->phys, pfn);
	struct mmp_page *h = pfn_to_page(v->phys, head);
	bool found;

	if (!vma || !(h->flags & PG_head))
		return;
	if (h->flags & PG_anon)
		found = anon_vma_covers(vma->anon_vma, h->anon_vma);
	else
		found = vma->vm_file && vma->vm_file->id == h->mapping;
	if (!found || linear_page_index(vma, va) != h->index + (pfn - head))
		report(v, "space %llu: %#llx maps frame %llu, which the reverse map would not find there",
		       (unsigned long long)v->s->id, (unsigned long long)va, (unsigned long long)pfn);
}

static void check_folio_page(struct verify *v, uint64_t pfn, uint64_t va, unsigned int order)
{
	struct mmp_phys *phys = v->phys;
	uint64_t head;

	if (!phys_pfn_valid(phys, pfn) || frame_free(v, pfn)) {
		report(v, "space %llu: %#llx maps frame %llu, which is free or out of range",
		       (unsigned long long)v->s->id, (unsigned long long)va, (unsigned long long)pfn);
		return;
	}
	head = folio_pfn(phys, pfn);
	if (!(pfn_to_page(phys, head)->flags & PG_head) ||
	    (pfn_to_page(phys, head)->flags & PG_hugetlb) ||
	    !(pfn_to_page(phys, head)->flags & PG_anon || pfn_to_page(phys, head)->mapping) ||
	    pfn - head >= folio_nr_pages(pfn_to_page(phys, head)) ||
	    (order && (head != pfn || pfn_to_page(phys, head)->order != order))) {
		report(v, "space %llu: %#llx maps frame %llu, not a page of a fitting anon or "
		       "page-cache folio", (unsigned long long)v->s->id, (unsigned long long)va,
		       (unsigned long long)pfn);
		return;
	}
	v->rss[mm_counter(pfn_to_page(phys, head))] += order ? HPAGE_PMD_NR : 1;
	if (folio_mm_tracked(pfn_to_page(phys, head))) {
		struct mmp_page *t = pfn_to_page(phys, head + 1);

		for (int i = 0; i < 2; i++)
			v->tally[head].owner[i] += t->mm_id[i] == space_mm_id(v->s);
	}
	v->tally[head].refs++;
	if (order)
		v->tally[head].entire++;
	else
		v->tally[pfn].maps++;
	v->outstanding += 2;
}

/* The index of @h among the phys's hstates. */
static unsigned int hstate_index(struct mmp_phys *phys, const struct hstate *h)
{
	return (unsigned int)(h - phys->hstates);
}

/*
 * A leaf of a hugetlb VMA: one whole page of its hstate, at its level and
 * alignment, of a hugetlb folio of that order; it holds a reference and an
 * entire mapping, and counts in hugetlb_usage, not in RSS.
 */
static void check_hugetlb_leaf(struct verify *v, struct mmp_vma *vma, uint64_t va, uint64_t pfn,
			       enum mmp_level level, unsigned int f)
{
	struct hstate *h = hstate_vma(vma);
	/* Entry @i of a contiguous page maps its part: one reference and mapping for all. */
	uint64_t i = (va & (huge_page_size(h) - 1)) >> level_shift(level);
	struct mmp_page *p;
	mmp_pte_t *ptep;

	if (level != h->level || i >= h->ncontig) {
		report(v, "space %llu: hugetlb VMA [%#llx, %#llx) has a leaf at %#llx level %d",
		       (unsigned long long)v->s->id, (unsigned long long)vma->start,
		       (unsigned long long)vma->end, (unsigned long long)va, level);
		return;
	}
	pfn -= i * (level_size(level) >> PAGE_SHIFT);
	if (!phys_pfn_valid(v->phys, pfn) || frame_free(v, pfn)) {
		report(v, "space %llu: %#llx maps frame %llu, which is free or out of range",
		       (unsigned long long)v->s->id, (unsigned long long)va, (unsigned long long)pfn);
		return;
	}
	p = pfn_to_page(v->phys, pfn);
	if ((p->flags & (PG_head | PG_hugetlb)) != (PG_head | PG_hugetlb) || p->order != h->order ||
	    !p->refcount) {
		report(v, "space %llu: %#llx maps frame %llu, not a hugetlb page in use of %llu kB",
		       (unsigned long long)v->s->id, (unsigned long long)va, (unsigned long long)pfn,
		       (unsigned long long)(huge_page_size(h) >> 10));
		return;
	}
	if (h->ncontig > 1 && !(f & MMP_E_CONT))
		report(v, "space %llu: %#llx: part of a %llu kB hugetlb page without the contiguous "
		       "bit", (unsigned long long)v->s->id, (unsigned long long)va,
		       (unsigned long long)(huge_page_size(h) >> 10));
	if (i)
		return;
	/* The first entry of a contiguous page answers for the block: all there, each its part. */
	ptep = h->ncontig > 1 ? huge_pte_offset(v->s, h, va, false) : NULL;
	for (unsigned int j = 1, bad = 0; ptep && j < h->ncontig && !bad; j++) {
		mmp_pte_t e = READ_ONCE(ptep[j]);
		unsigned int ef = e ? entry_flags(v->s, e, level) : 0;
		unsigned int same = ~(MMP_E_ACCESSED | MMP_E_DIRTY);

		bad = !e || entry_pfn(v->s, e, level) != pfn + j * (level_size(level) >> PAGE_SHIFT) ||
		      (ef & same) != (f & same);
		if (bad)
			report(v, "space %llu: %#llx: entry %u of a %llu kB hugetlb page is %s",
			       (unsigned long long)v->s->id, (unsigned long long)va, j,
			       (unsigned long long)(huge_page_size(h) >> 10),
			       e ? "not its part of the page" : "missing");
	}
	v->hugetlb_pages += pages_per_huge_page(h);
	v->tally[pfn].refs++;
	v->tally[pfn].entire++;
	v->outstanding += 2;
	check_rmap(v, vma, va, pfn);
}

/* Entries in a contiguous block (contpte, NAPOT). */
static unsigned int cont_pages(struct mmp_space *s)
{
	return 1u << (s->arch->cont_shift ? s->arch->cont_shift - PAGE_SHIFT : 4);
}

/* A contiguous block (contpte, NAPOT) must lie within one folio, aligned. */
static void check_cont_block(struct verify *v, uint64_t va, uint64_t pfn)
{
	unsigned int n = cont_pages(v->s);
	uint64_t base = pfn - ((va >> PAGE_SHIFT) & (n - 1)), head = folio_pfn(v->phys, pfn);
	struct mmp_page *h = pfn_to_page(v->phys, head);

	if (base < head || base + n > head + folio_nr_pages(h) || (base & (n - 1)))
		report(v, "space %llu: the contiguous block at %#llx spans more than one folio",
		       (unsigned long long)v->s->id, (unsigned long long)(va & ~(n * PAGE_SIZE - 1)));
}

/*
 * Reads the entries of one PTE table in ascending order as ptep_get_lockless
 * decodes them, but with one lockless read per contiguous block: that read
 * finds the whole block stable and alike (it gathers A/D from all of it), so
 * the block's other entries map the pages after, with the same attributes.
 * Reading each of them would read the block again, 16 times over.
 *
 * The block is read raw first: the lockless read retries until the block is
 * alike, so on a block broken for good it would never return. Under verify's
 * locks only the hardware walker writes, and only A/D, so a block the raw
 * read finds broken stays broken: it is reported and decoded entry by entry.
 */
struct pte_reader {
	struct mmp_space *s;
	mmp_pte_t *table;
	unsigned int n;			/* entries in a block */
	unsigned int blk;		/* first slot of the block read last, UINT_MAX: none */
	unsigned int blk_f;		/* what its entry decoded to */
	unsigned int blk_rf;		/* its raw entry's flags */
	uint64_t blk_raw_pfn;		/* the pfn field of the raw entry read first in it */
	uint64_t blk_pfn;
	bool blk_broken;		/* it is not alike: @blk_ents and @fault hold */
	struct cont_block_fault fault;	/* what breaks it */
	mmp_pte_t blk_ents[MMP_CONT_PTES_MAX];	/* its entries, each as the walker uses it */
};

/* Flags every entry of a contiguous block shares: all but those hardware sets per entry. */
#define BLOCK_FLAGS(f)	((f) & ~(MMP_E_ACCESSED | MMP_E_DIRTY))

static void pte_reader_init(struct pte_reader *r, struct mmp_space *s, mmp_pte_t *table)
{
	r->s = s;
	r->table = table;
	r->n = MIN(cont_pages(s), MMP_CONT_PTES_MAX);
	r->blk = UINT_MAX;
	r->blk_broken = false;
}

/* Slot @i of a broken block: its entry as the walker uses it alone, kept cold. */
static __attribute__((noinline, cold)) mmp_pte_t pte_read_broken(struct pte_reader *r,
								 unsigned int i, unsigned int *f,
								 uint64_t *pfn)
{
	mmp_pte_t e = r->blk_ents[i - r->blk];

	*f = entry_flags(r->s, e, MMP_PTE);
	*pfn = e ? entry_pfn(r->s, e, MMP_PTE) : 0;
	return e;
}

/*
 * Slot @i: 0 when none, else the entry as read (raw inside a block), its flags
 * and pfn. @block_start: the first entry read of a block (r->blk_broken says
 * whether it is whole). @mixed: a block entry whose attributes differ from its
 * block's.
 */
static mmp_pte_t pte_read(struct pte_reader *r, unsigned int i, unsigned int *f, uint64_t *pfn,
			  bool *block_start, bool *mixed)
{
	struct mmp_space *s = r->s;
	mmp_pte_t raw, e;
	unsigned int rf;

	*block_start = false;
	*mixed = false;
	raw = READ_ONCE(r->table[i]);
	if (!raw)
		return 0;
	rf = entry_flags(s, raw, MMP_PTE);
	/* A broken block is read entry by entry: here those with the bit, below the others. */
	if ((rf & MMP_E_CONT) && (i & ~(r->n - 1)) == r->blk) {
		if (unlikely(r->blk_broken))
			return pte_read_broken(r, i, f, pfn);
		*f = r->blk_f;
		*pfn = r->blk_pfn + (i - r->blk);
		/*
		 * Cheap insurance for a back end whose lockless read checks less:
		 * each raw entry maps its own page of the block (contpte), or all
		 * hold one pfn field (NAPOT), as the entry read first does.
		 */
		*mixed = BLOCK_FLAGS(rf) != BLOCK_FLAGS(r->blk_rf) ||
			 (entry_pfn(s, raw, MMP_PTE) != *pfn &&
			  entry_pfn(s, raw, MMP_PTE) != r->blk_raw_pfn);
		return raw;
	}
	if (rf & MMP_E_CONT) {
		r->blk = i & ~(r->n - 1);
		*block_start = true;
		r->blk_broken = !cont_block_read(s, &r->table[r->blk], r->blk_ents, &r->fault);
		if (unlikely(r->blk_broken))
			return pte_read_broken(r, i, f, pfn);
	}
	e = ptep_get_lockless(s, &r->table[i]);
	*f = e == raw ? rf : entry_flags(s, e, MMP_PTE);
	*pfn = e ? entry_pfn(s, e, MMP_PTE) : 0;
	if (rf & MMP_E_CONT) {
		r->blk_f = *f;
		r->blk_rf = rf;
		r->blk_raw_pfn = entry_pfn(s, raw, MMP_PTE);
		r->blk_pfn = *pfn - (i - r->blk);
	}
	return e;
}

/* What breaks the block at @va, named with the entry the rest of it agrees with. */
static void report_block(struct verify *v, const struct cont_block_fault *bf, uint64_t va)
{
	unsigned long long id = v->s->id, addr = va;
	char more[48] = "";

	if (bf->nr_bad > 1)
		snprintf(more, sizeof(more), "; %u entries differ from entry %u", bf->nr_bad,
			 bf->ref);
	switch (bf->kind) {
	case CONT_FAULT_PFN:
		report(v, "space %llu: %s at %#llx: entry %u maps pfn %llu, expected %llu%s", id,
		       bf->name, addr, bf->entry, (unsigned long long)bf->pfn,
		       (unsigned long long)bf->expected_pfn, more);
		break;
	case CONT_FAULT_ATTRS:
		report(v, "space %llu: %s at %#llx: mixed attributes: entry %u is %#llx, entry %u "
		       "%#llx (bits %#llx differ)%s", id, bf->name, addr, bf->entry,
		       (unsigned long long)bf->raw, bf->ref, (unsigned long long)bf->ref_raw,
		       (unsigned long long)bf->attrs, more);
		break;
	default:
		report(v, "space %llu: %s at %#llx: entry %u is %#llx, not a contiguous entry%s",
		       id, bf->name, addr, bf->entry, (unsigned long long)bf->raw, more);
		break;
	}
}

static void walk_table(struct verify *v, mmp_pte_t *table, enum mmp_level level, uint64_t base)
{
	struct mmp_space *s = v->s;
	unsigned int huge = 0, deposits = 0;
	struct pte_reader r;

	pte_reader_init(&r, s, table);
	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t va = base + i * level_size(level);
		bool block_start = false, mixed = false;
		struct mmp_vma *vma;
		unsigned int f;
		uint64_t pfn;
		mmp_pte_t e;

		if (level == MMP_PTE) {
			e = pte_read(&r, i, &f, &pfn, &block_start, &mixed);
			if (block_start && r.blk_broken)
				report_block(v, &r.fault, va & ~(r.n * PAGE_SIZE - 1));
			if (mixed)
				report(v, "space %llu: entry at %#llx differs from the rest of its contiguous block",
				       (unsigned long long)s->id, (unsigned long long)va);
		} else {
			e = READ_ONCE(table[i]);
			f = entry_flags(s, e, level);
			pfn = e ? entry_pfn(s, e, level) : 0;
		}
		if (!e)
			continue;
		if (va >= TASK_SIZE(s)) {
			report(v, "space %llu: entry above the user range", (unsigned long long)s->id);
			continue;
		}
		if (level > MMP_PTE && (f & MMP_E_TABLE)) {
			if (take_table(v, pfn, "table entry", va)) {
				v->tables++;
				walk_table(v, space_table(s, pfn), level - 1, va);
			}
			continue;
		}
		if (level == MMP_PTE && is_swap_pte(s, e)) {
			check_pte_marker(v, e, va);
			continue;
		}
		if (!(f & (MMP_E_PRESENT | MMP_E_PROTNONE)) || (level > MMP_PUD) ||
		    (level > MMP_PTE && !(f & MMP_E_LEAF))) {
			report(v, "space %llu: unexpected entry %#llx at %#llx level %d",
			       (unsigned long long)s->id, (unsigned long long)e,
			       (unsigned long long)va, level);
			continue;
		}
		vma = check_leaf_vma(v, va, level_size(level), f);
		if (vma && is_vm_hugetlb_page(vma)) {
			check_hugetlb_leaf(v, vma, va, pfn, level, f);
			continue;
		}
		if (level == MMP_PUD) {
			report(v, "space %llu: a PUD leaf at %#llx outside hugetlb",
			       (unsigned long long)s->id, (unsigned long long)va);
			continue;
		}
		if (level == MMP_PMD)
			huge++;
		if (f & MMP_E_SPECIAL) {
			if (pfn != (level == MMP_PMD ? v->phys->huge_zero_pfn : v->phys->zero_pfn))
				report(v, "space %llu: special entry at %#llx is not a zero page",
				       (unsigned long long)s->id, (unsigned long long)va);
			continue;
		}
		check_folio_page(v, pfn, va, level == MMP_PMD ? HPAGE_PMD_ORDER : 0);
		/* Truncation unmaps everything past the end, private copies too. */
		if (vma && vma->vm_file &&
		    linear_page_index(vma, va) >= file_size_pages(vma->vm_file))
			report(v, "space %llu: %#llx maps page %llu of file %u, past its end",
			       (unsigned long long)s->id, (unsigned long long)va,
			       (unsigned long long)linear_page_index(vma, va), vma->vm_file->id);
		if (phys_pfn_valid(v->phys, pfn) && !frame_free(v, pfn)) {
			check_rmap(v, vma, va, pfn);
			if (block_start && !r.blk_broken)
				check_cont_block(v, va, pfn);
		}
	}
	if (level == MMP_PMD) {
		/* Every huge PMD keeps exactly one deposited PTE table beside it. */
		uint64_t tpfn = ((uint8_t *)table - v->phys->base) >> PAGE_SHIFT;

		for (uint32_t d = pfn_to_page(v->phys, tpfn)->pt.deposit; d != NO_PFN;
		     d = pfn_to_page(v->phys, d)->pt.deposit) {
			if (!take_table(v, d, "deposit", base))
				break;
			v->tables++;
			deposits++;
		}
		if (deposits != huge)
			report(v, "space %llu: PMD table at %#llx has %u huge PMDs but %u deposits",
			       (unsigned long long)s->id, (unsigned long long)base, huge, deposits);
	}
}

/*
 * A hugetlb VMA maps a hugetlbfs file over whole huge pages and never merges;
 * its owner's reserve map promises the pages it has not consumed.
 */
static void check_hugetlb_vma(struct verify *v, struct mmp_vma *vma)
{
	struct hstate *h;
	uint64_t first, last;

	if (!is_vm_hugetlb_page(vma)) {
		if (vma->resv_map || (vma->vm_file && is_file_hugepages(vma->vm_file)))
			report(v, "space %llu: VMA [%#llx, %#llx) has hugetlb state but no VM_HUGETLB",
			       (unsigned long long)v->s->id, (unsigned long long)vma->start,
			       (unsigned long long)vma->end);
		return;
	}
	if (!vma->vm_file || !is_file_hugepages(vma->vm_file) || !(vma->flags & VM_SPECIAL)) {
		report(v, "space %llu: hugetlb VMA [%#llx, %#llx) maps no hugetlbfs file",
		       (unsigned long long)v->s->id, (unsigned long long)vma->start,
		       (unsigned long long)vma->end);
		return;
	}
	h = hstate_vma(vma);
	if (((vma->start | vma->end | (vma->pgoff << PAGE_SHIFT)) & (huge_page_size(h) - 1)) ||
	    (!!vma->resv_map != !!(vma->resv_flags & HPAGE_RESV_OWNER)) ||
	    (vma->resv_map && (vma->flags & (VM_SHARED | VM_NORESERVE))))
		report(v, "space %llu: hugetlb VMA [%#llx, %#llx) is unaligned or has a reserve map "
		       "it should not", (unsigned long long)v->s->id, (unsigned long long)vma->start,
		       (unsigned long long)vma->end);
	if (!vma->resv_map)
		return;
	first = vma_hugecache_offset(h, vma, vma->start);
	last = vma_hugecache_offset(h, vma, vma->end);
	spin_lock(&vma->resv_map->lock);
	v->huge_resv[hstate_index(v->phys, h)] += (int64_t)((last - first) -
							    region_count(vma->resv_map, first, last));
	spin_unlock(&vma->resv_map->lock);
}

static void check_vmas(struct verify *v)
{
	struct mmp_space *s = v->s;

	const char *why = vma_tree_check(&s->vmas);
	unsigned int i = 0;

	if (why)
		report(v, "space %llu: VMA index: %s", (unsigned long long)s->id, why);
	for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next, i++) {
		if (vma->start >= vma->end || (vma->start | vma->end) & (PAGE_SIZE - 1) ||
		    vma->start < mmap_min_addr(s) || vma->end > TASK_SIZE(s) ||
		    (vma->vm_prev && vma->start < vma->vm_prev->end))
			report(v, "space %llu: VMA %u [%#llx, %#llx) is malformed or overlaps",
			       (unsigned long long)s->id, i, (unsigned long long)vma->start,
			       (unsigned long long)vma->end);
		if (vma->vm_file)
			vma->vm_file->verify_vmas++;
		check_hugetlb_vma(v, vma);
		if (vma->vm_page_prot != vm_get_page_prot(s, vma))
			report(v, "space %llu: VMA [%#llx, %#llx): vm_page_prot %#llx does not "
			       "match its flags %#lx", (unsigned long long)s->id,
			       (unsigned long long)vma->start, (unsigned long long)vma->end,
			       (unsigned long long)vma->vm_page_prot, vma->flags);
	}
	/* As in Linux, a MAP_FIXED that splits a VMA may end one above the limit. */
	if (s->vmas.nr > MMP_MAX_MAP_COUNT + 1)
		report(v, "space %llu: %u VMAs, above max_map_count", (unsigned long long)s->id,
		       s->vmas.nr);
}

/*
 * Does the translation @te cached for page @k of its span still hold, for the
 * @n pages from @va on that lie in one PMD? Returns the pages that hold.
 */
static uint64_t tlb_pages_hold(struct mmp_space *s, const struct tlb_translation *te,
			       uint64_t k, uint64_t va, uint64_t n)
{
	mmp_pte_t *pmdp = pmd_offset(s, va), *ptes, e;
	struct pte_reader r;
	unsigned int f;

	/* No PMD table: a 1 GiB hugetlb PUD may translate it. */
	if (!pmdp && s->arch->hugetlb_pud && (pmdp = pud_offset(s, va))) {
		e = READ_ONCE(*pmdp);
		f = entry_flags(s, e, MMP_PUD);
		if (!(f & MMP_E_LEAF) || !(f & MMP_E_PRESENT) || (te->write && !(f & MMP_E_WRITE)) ||
		    entry_pfn(s, e, MMP_PUD) + ((va & (level_size(MMP_PUD) - 1)) >> PAGE_SHIFT) !=
			    te->pfn + k)
			return 0;
		return n;
	}
	if (!pmdp)
		return 0;
	e = READ_ONCE(*pmdp);
	f = entry_flags(s, e, MMP_PMD);
	if (f & MMP_E_LEAF) {
		/* A huge PMD translates the whole span alike: one check for all of it. */
		if (!(f & MMP_E_PRESENT) || (te->write && !(f & MMP_E_WRITE)) ||
		    entry_pfn(s, e, MMP_PMD) + level_index(va, MMP_PTE) != te->pfn + k)
			return 0;
		return n;
	}
	ptes = pte_table(s, e);
	if (!ptes)
		return 0;
	pte_reader_init(&r, s, ptes);
	for (uint64_t j = 0, i = level_index(va, MMP_PTE); j < n; j++, i++) {
		uint64_t pfn;
		bool block_start, mixed;

		if (!pte_read(&r, i, &f, &pfn, &block_start, &mixed) || mixed || !(f & MMP_E_PRESENT) ||
		    (te->write && !(f & MMP_E_WRITE)) || pfn != te->pfn + k + j)
			return j;
	}
	return n;
}

/* report() for a callback of the hardware model's. */
__attribute__((format(printf, 2, 3)))
static void report_cb(void *arg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(arg, fmt, ap);
	va_end(ap);
}

static uint64_t tlb_pages_hold_cb(void *arg, const struct tlb_translation *t, uint64_t k,
				  uint64_t va, uint64_t n)
{
	return tlb_pages_hold(((struct verify *)arg)->s, t, k, va, n);
}

/*
 * No CPU may hold a translation more permissive than the tables when no flush
 * is due, and each TLB's bookkeeping must agree with its entries (hw/tlbflush.c).
 */
static void check_tlbs(struct verify *v)
{
	tlb_verify(v->s, report_cb, tlb_pages_hold_cb, v);
}

static void verify_space(struct verify *v, struct mmp_space *s)
{
	struct mmp_counters c;

	static const char *const kind[NR_MM_COUNTERS] = { "anon", "file", "shmem" };

	v->s = s;
	v->vma = NULL;
	memset(v->rss, 0, sizeof(v->rss));
	v->tables = 0;
	v->hugetlb_pages = 0;
	check_vmas(v);
	if (take_table(v, s->pgd_pfn, "pgd", 0))
		walk_table(v, space_table(s, s->pgd_pfn), pgd_level(s), 0);
	for (int t = 0; t < NR_MM_COUNTERS; t++)
		if (v->rss[t] != get_mm_counter(s, t))
			report(v, "space %llu: RSS %s counter %lld, tables map %lld such pages",
			       (unsigned long long)s->id, kind[t], (long long)get_mm_counter(s, t),
			       (long long)v->rss[t]);
	if (v->hugetlb_pages != READ_ONCE(s->hugetlb_usage))
		report(v, "space %llu: HugetlbPages counts %lld pages, hugetlb entries map %lld",
		       (unsigned long long)s->id, (long long)s->hugetlb_usage,
		       (long long)v->hugetlb_pages);
	if (v->tables != READ_ONCE(s->nr_pgtables))
		report(v, "space %llu: VmPTE counts %lld tables, %lld are linked",
		       (unsigned long long)s->id, (long long)s->nr_pgtables, (long long)v->tables);
	check_tlbs(v);
	mmp_space_counters(s, &c);
	if (c.v[MMP_C_TLB_SANITIZER])
		report(v, "space %llu: the TLB sanitizer saw %llu stale translations",
		       (unsigned long long)s->id, (unsigned long long)c.v[MMP_C_TLB_SANITIZER]);
}

struct verify_cache {
	struct verify *v;
	struct mmp_file *f;
	uint64_t pages;
};

/* A page-cache folio, found at @index: a head of this file there, with a reference per page. */
static void check_cache_folio(struct address_space *as, uint64_t index, uint32_t pfn, void *arg)
{
	struct verify_cache *c = arg;
	struct verify *v = c->v;
	struct mmp_page *p;

	if (!phys_pfn_valid(v->phys, pfn) || frame_free(v, pfn)) {
		report(v, "file %u: index %llu holds frame %u, which is free or out of range",
		       c->f->id, (unsigned long long)index, pfn);
		return;
	}
	p = pfn_to_page(v->phys, pfn);
	if (!(p->flags & PG_head) || (p->flags & PG_anon) || p->mapping != c->f->id ||
	    index < p->index || index >= p->index + folio_nr_pages(p) ||
	    (p->index & (folio_nr_pages(p) - 1))) {
		report(v, "file %u: index %llu holds frame %u, not a folio of this file there",
		       c->f->id, (unsigned long long)index, pfn);
		return;
	}
	for (uint64_t i = 0; i < folio_nr_pages(p); i++)
		if (xa_load(as, p->index + i) != pfn)
			report(v, "file %u: folio %u does not fill its slot %llu", c->f->id, pfn,
			       (unsigned long long)(p->index + i));
	v->tally[pfn].cache += folio_nr_pages(p);
	v->outstanding += folio_nr_pages(p);
	c->pages += folio_nr_pages(p);
}

/* Every file's page cache and i_mmap against what the spaces map. */
static void verify_files(struct verify *v)
{
	struct mmp_phys *phys = v->phys;

	pthread_mutex_lock(&phys->files_lock);
	for (uint32_t i = 0; phys->files && i < MMP_MAX_FILES; i++) {
		struct mmp_file *f = phys->files[i];
		struct verify_cache c = { .v = v, .f = f };
		uint64_t listed = 0;

		if (!f)
			continue;
		spin_lock(&f->mapping.i_pages_lock);
		xa_for_each_folio(&f->mapping, 0, check_cache_folio, &c);
		if (c.pages != f->mapping.nrpages)
			report(v, "file %u: nrpages %llu, the index holds %llu", f->id,
			       (unsigned long long)f->mapping.nrpages, (unsigned long long)c.pages);
		/* A hugetlbfs file promises what its map holds and its cache does not. */
		if (is_file_hugepages(f)) {
			struct hstate *h = f->hstate;
			int64_t held, cached = (int64_t)(c.pages >> h->order);

			spin_lock(&f->resv_map->lock);
			held = (int64_t)region_count(f->resv_map, 0, UINT64_MAX);
			spin_unlock(&f->resv_map->lock);
			if (held < cached)
				report(v, "file %u: %lld huge pages cached, its reserve map holds %lld",
				       f->id, (long long)cached, (long long)held);
			v->huge_resv[hstate_index(v->phys, h)] += held - cached;
		}
		spin_unlock(&f->mapping.i_pages_lock);
		down_read(&f->mapping.i_mmap_rwsem);
		for (struct mmp_vma *vma = f->mapping.i_mmap; vma; vma = vma->shared_next) {
			if (vma->vm_file != f)
				report(v, "file %u: i_mmap holds a VMA of another file", f->id);
			listed++;
		}
		if (listed != f->mapping.nr_mapped_vmas || listed != f->verify_vmas)
			report(v, "file %u: i_mmap lists %llu VMAs, counts %llu, the spaces hold %llu",
			       f->id, (unsigned long long)listed,
			       (unsigned long long)f->mapping.nr_mapped_vmas,
			       (unsigned long long)f->verify_vmas);
		if (f->refcount != (int)listed + f->handle)
			report(v, "file %u: %d references, %llu VMAs and %d handle", f->id, f->refcount,
			       (unsigned long long)listed, f->handle);
		up_read(&f->mapping.i_mmap_rwsem);
		f->verify_vmas = 0;
	}
	pthread_mutex_unlock(&phys->files_lock);
}

/* Mark [pfn, pfn + nr) free; a buddy block is aligned to its size. */
static void set_free(struct verify *v, uint64_t pfn, uint64_t nr)
{
	if (nr >= 64)
		memset(&v->free[pfn / 64], 0xff, nr / 8);
	else
		v->free[pfn / 64] |= ((1ULL << nr) - 1) << (pfn % 64);
}

/*
 * One snapshot of every free frame. A drain (mmp_phys_stat, say) moves frames
 * from a per-CPU list to the buddy lists under both locks: with all of them
 * held, in the allocator's order (per-CPU, then buddy), none slips between the
 * two scans.
 */
static void mark_free(struct verify *v)
{
	struct mmp_phys *phys = v->phys;

	memset(v->free, 0, phys->nr_pages / 8);
	for (int i = 0; i < MMP_COUNTER_SHARDS; i++)
		spin_lock(&phys->pcp[i].lock);
	spin_lock(&phys->lock);
	for (unsigned int o = 0; o <= MMP_MAX_ORDER; o++)
		for (uint32_t pfn = phys->free_list[o]; pfn != NO_PFN;
		     pfn = pfn_to_page(phys, pfn)->buddy.next)
			set_free(v, pfn, 1ull << o);
	for (int i = 0; i < MMP_COUNTER_SHARDS; i++)
		for (unsigned int j = 0; j < phys->pcp[i].count; j++)
			set_free(v, *pcp_slot(&phys->pcp[i], phys->pcp_ring_mask, j), 1);
	spin_unlock(&phys->lock);
	for (int i = MMP_COUNTER_SHARDS - 1; i >= 0; i--)
		spin_unlock(&phys->pcp[i].lock);
}

/* Hand over the tally of @pfn and leave it zero for the next call. */
static struct tally take_tally(struct verify *v, uint64_t pfn)
{
	struct tally t = v->tally[pfn];

	memset(&v->tally[pfn], 0, sizeof(t));
	return t;
}

/*
 * A hugetlb folio: of a pool's order, free (no reference, nothing maps it:
 * true, the scan is done with it) or in use, when a freed one would give a
 * reservation back (restore_reserve) that the pool already counts again.
 */
static bool check_hugetlb_folio(struct verify *v, uint64_t pfn)
{
	struct mmp_page *p = pfn_to_page(v->phys, pfn);
	struct hstate *h = NULL;
	unsigned int i;

	for (i = 0; i < HUGE_MAX_HSTATE; i++)
		if (v->phys->hstates[i].order == p->order)
			h = &v->phys->hstates[i];
	if (!h) {
		report(v, "hugetlb folio %llu has order %u, no pool's", (unsigned long long)pfn,
		       p->order);
		return false;
	}
	i = hstate_index(v->phys, h);
	if (p->refcount) {
		v->huge_used[i]++;
		if (p->flags & PG_hugetlb_restore_reserve)
			v->huge_resv[i]--;
		return false;
	}
	v->huge_free[i]++;
	if (v->tally[pfn].refs || v->tally[pfn].cache || p->flags != (PG_head | PG_hugetlb) ||
	    p->pincount)
		report(v, "free hugetlb page %llu is mapped, cached or marked %#x",
		       (unsigned long long)pfn, p->flags);
	for (uint64_t j = 1; j < folio_nr_pages(p); j++)
		if (!(p[j].flags & PG_tail) || p[j].tail.head != pfn)
			report(v, "free hugetlb page %llu: page %llu is not its tail",
			       (unsigned long long)pfn, (unsigned long long)j);
	return true;
}

/* Each pool's counts against the folios found and the reservations the maps hold. */
static void check_hstates(struct verify *v)
{
	struct mmp_phys *phys = v->phys;

	spin_lock(&phys->hugetlb_lock);
	for (unsigned int i = 0; i < HUGE_MAX_HSTATE; i++) {
		struct hstate *h = &phys->hstates[i];
		uint64_t listed = 0, kb = huge_page_size(h) >> 10;

		for (uint32_t pfn = h->free_list; pfn != NO_PFN && listed <= h->nr_huge_pages;
		     pfn = pfn_to_page(phys, pfn)->buddy.next)
			listed++;
		if (listed != h->free_huge_pages || (int64_t)listed != v->huge_free[i])
			report(v, "hugetlb %llu kB: HugePages_Free %llu, %llu listed, %lld free found",
			       (unsigned long long)kb, (unsigned long long)h->free_huge_pages,
			       (unsigned long long)listed, (long long)v->huge_free[i]);
		if ((int64_t)h->nr_huge_pages != v->huge_free[i] + v->huge_used[i] ||
		    h->surplus_huge_pages > h->nr_huge_pages)
			report(v, "hugetlb %llu kB: HugePages_Total %llu (surplus %llu), found %lld "
			       "free and %lld in use", (unsigned long long)kb,
			       (unsigned long long)h->nr_huge_pages,
			       (unsigned long long)h->surplus_huge_pages, (long long)v->huge_free[i],
			       (long long)v->huge_used[i]);
		if ((int64_t)h->resv_huge_pages != v->huge_resv[i] + (int64_t)h->resv_leaked)
			report(v, "hugetlb %llu kB: HugePages_Rsvd %lld, the reserve maps promise "
			       "%lld (and %llu leaked by mremap)", (unsigned long long)kb,
			       (long long)h->resv_huge_pages, (long long)v->huge_resv[i],
			       (unsigned long long)h->resv_leaked);
	}
	spin_unlock(&phys->hugetlb_lock);
}

/*
 * The owner slots of an anonymous large folio (CONFIG_MM_ID): a slot never
 * counts more mappings than its space has (it may count fewer: the space mapped
 * before it had the slot), and a folio not marked shared is mapped by the one
 * space whose slot counts every mapping. do_wp_page hands a page over on that.
 */
static void check_mm_owners(struct verify *v, uint64_t pfn, int32_t mapped,
			    const struct tally *h)
{
	struct mmp_page *t = pfn_to_page(v->phys, pfn + 1);
	bool owned = false;

	if (t->tail.mm_ids & ~MM_IDS_SHARED)
		report(v, "folio %llu: owner slots left locked", (unsigned long long)pfn);
	for (int i = 0; i < 2; i++) {
		int32_t c = t->mm_id_mapcount[i];

		if (c < 0 || c > h->owner[i] || (!t->mm_id[i] && c))
			report(v, "folio %llu: owner slot %d (space id %u) counts %d mappings, its "
			       "space has %d", (unsigned long long)pfn, i, t->mm_id[i], c,
			       h->owner[i]);
		owned |= t->mm_id[i] && c == mapped && h->owner[i] == mapped;
	}
	if (mapped && !(t->tail.mm_ids & MM_IDS_SHARED) && !owned)
		report(v, "folio %llu: not marked shared, yet no one space has all %d mappings",
		       (unsigned long long)pfn, mapped);
}

/*
 * Every frame in use is a linked table, a table on its way to the allocator, a
 * mapped folio or a zero page; counts add up. Free frames are skipped a bitmap
 * word at a time, so the scan costs the frames in use, not the size of the phys.
 */
static void check_frames(struct verify *v)
{
	struct mmp_phys *phys = v->phys;

	for (uint64_t pfn = next_used(v, 0); pfn < phys->nr_pages; pfn = next_used(v, pfn + 1)) {
		struct mmp_page *p = pfn_to_page(phys, pfn);
		uint32_t flags = p->flags;

		if (flags & PG_reserved) {
			if (flags & PG_head)
				pfn += folio_nr_pages(p) - 1;
			continue;
		}
		if (flags & PG_table) {
			int32_t linked = take_tally(v, pfn).table;

			v->outstanding -= linked;
			if (linked)
				continue;
			/* Unlinked: it must be on its way to the allocator. */
			if ((flags & PG_pt_rcu) && (flags & PG_pt_freeing))
				v->in_flight++;
			else if (flags & PG_pt_rcu)
				report(v, "page table %llu is in an RCU batch but was never unlinked",
				       (unsigned long long)pfn);
			else if (flags & PG_pt_freeing)
				report(v, "page table %llu is unlinked but was never sent to be freed (leak)",
				       (unsigned long long)pfn);
			else
				report(v, "page table %llu is allocated but linked nowhere (leak)",
				       (unsigned long long)pfn);
			continue;
		}
		if (flags == PG_pt_freeing)
			continue;	/* released table; a speculative GUP-fast grab has the last put */
		if (!(flags & PG_head)) {
			report(v, "frame %llu is allocated but is no table or folio (leak)",
			       (unsigned long long)pfn);
			continue;
		}
		if ((flags & PG_hugetlb) && check_hugetlb_folio(v, pfn)) {
			pfn += folio_nr_pages(p) - 1;
			continue;
		}

		struct tally h = take_tally(v, pfn);
		int32_t mapped = h.entire;

		v->outstanding -= h.refs + h.entire + h.maps + h.cache;
		/* A page-cache folio is in its file's cache; one truncated, in none. */
		if (!(flags & PG_anon) && (p->mapping ? h.cache != (int32_t)folio_nr_pages(p) : h.cache))
			report(v, "folio %llu: of file %u, yet %d page-cache slots hold it",
			       (unsigned long long)pfn, p->mapping, h.cache);
		for (unsigned int i = 0; i < folio_nr_pages(p); i++) {
			int32_t maps = i ? take_tally(v, pfn + i).maps : h.maps;

			if (i) {
				v->outstanding -= maps;
				if (!(p[i].flags & PG_tail) || p[i].tail.head != pfn)
					report(v, "folio %llu: page %u is not its tail",
					       (unsigned long long)pfn, i);
			}
			if (p[i].mapcount != maps)
				report(v, "folio %llu page %u: mapcount %d, %d PTEs map it",
				       (unsigned long long)pfn, i, p[i].mapcount, maps);
			mapped += maps;
		}
		/* Every reference is a mapping's, a GUP pin's or the page cache's. */
		if (p->refcount != h.refs + p->pincount + h.cache || p->refcount <= 0 ||
		    p->pincount < 0)
			report(v, "folio %llu: refcount %d, %d mappings, %d pins and %d cache slots "
			       "hold references", (unsigned long long)pfn, p->refcount, h.refs,
			       p->pincount, h.cache);
		v->extra_refs += p->pincount;
		if (p->order && (p->folio.large_mapcount != mapped ||
				 p->folio.entire_mapcount != h.entire))
			report(v, "folio %llu: mapcount %d (entire %d), tables map it %d (entire %d)",
			       (unsigned long long)pfn, p->folio.large_mapcount,
			       p->folio.entire_mapcount, mapped, h.entire);
		if (folio_mm_tracked(p))
			check_mm_owners(v, pfn, mapped, &h);
		pfn += folio_nr_pages(p) - 1;
	}
}

/* The tallies and the free bitmap, once per phys: reserved lazily, touched where frames are used. */
static int verify_scratch(struct mmp_phys *phys)
{
	size_t bytes = phys->nr_pages * sizeof(struct tally) + phys->nr_pages / 8;
	void *p;

	if (phys->verify_scratch)
		return 0;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	phys->verify_scratch = p;
	phys->verify_scratch_bytes = bytes;
	return 0;
}

MMP_EXPORT int mmp_space_verify(struct mmp_space *space)
{
	struct mmp_phys *phys;
	struct verify v = { 0 };
	struct mmp_space *s;

	if (!space)
		return -EINVAL;
	phys = space->phys;
	v.phys = phys;

	/* The hugetlb sysctls wait, then spaces_lock makes verifies take turns with the scratch. */
	pthread_mutex_lock(&phys->hugetlb_mutex);
	pthread_mutex_lock(&phys->spaces_lock);
	if (verify_scratch(phys)) {
		pthread_mutex_unlock(&phys->spaces_lock);
		pthread_mutex_unlock(&phys->hugetlb_mutex);
		return -ENOMEM;
	}
	v.tally = phys->verify_scratch;
	v.free = (uint64_t *)(v.tally + phys->nr_pages);
	/*
	 * Tables are unlinked, and frames allocated, only under mmap locks or a
	 * VMA's (faults; MADV_DONTNEED and MADV_FREE from 6.17), both taken
	 * below; the only frees left are RCU batches of tables coming home, and
	 * pt_rcu_lock holds those back. So no frame changes state under us, and
	 * tables still in their grace period are accounted as in flight rather
	 * than waited for.
	 */
	for (s = phys->spaces; s; s = s->phys_next) {
		mmap_write_lock(s);
		/* Faults under a VMA's own lock stop too. */
		for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next)
			vma_start_write(s, vma);
	}
	pthread_mutex_lock(&phys->pt_rcu_lock);
	mark_free(&v);
	for (s = phys->spaces; s; s = s->phys_next)
		verify_space(&v, s);
	verify_files(&v);
	check_frames(&v);
	check_hstates(&v);
	if (v.extra_refs != READ_ONCE(phys->nr_pinned))
		report(&v, "folios hold %lld GUP pins, %lld were taken and not given back",
		       (long long)v.extra_refs, (long long)phys->nr_pinned);
	if (v.in_flight != READ_ONCE(phys->nr_pt_rcu))
		report(&v, "%lld unlinked tables are marked in flight, %lld are waiting in RCU batches",
		       (long long)v.in_flight, (long long)phys->nr_pt_rcu);
	if (v.outstanding) {
		/* Mappings or links into frames the scan did not reach: overlapping folios, say. */
		report(&v, "%lld references from the tables land where no table or folio accounts for them",
		       (long long)v.outstanding);
		/* Leave the tallies zero for the next call: back to untouched pages. */
		madvise(phys->verify_scratch, phys->verify_scratch_bytes, MADV_DONTNEED);
	}
	pthread_mutex_unlock(&phys->pt_rcu_lock);
	for (s = phys->spaces; s; s = s->phys_next)
		mmap_write_unlock(s);
	pthread_mutex_unlock(&phys->spaces_lock);
	pthread_mutex_unlock(&phys->hugetlb_mutex);

	if (v.errors > 20)
		fprintf(stderr, "libmmprim: verify: %d more problems\n", v.errors - 20);
	return v.errors ? -EUCLEAN : 0;
}
