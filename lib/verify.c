/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmp_space_verify(): walk every space on the phys and check that the tables,
 * the VMAs, the folio counts, the frame allocator and the TLBs agree.
 */
#include <stdarg.h>
#include <string.h>

#include "internal.h"
#include "mm.h"

struct verify {
	struct mmp_phys *phys;
	int errors;
	int32_t *refs;		/* per folio head: mappings seen (each holds a reference) */
	int32_t *maps;		/* per page: PTE mappings seen */
	int32_t *entire;	/* per folio head: PMD mappings seen */
	uint8_t *table;		/* per frame: reached as a page table */
	uint8_t *free;		/* per frame: inside a free buddy block */
	int64_t extra_refs;	/* GUP pins over all folios */
	int64_t in_flight;	/* unlinked tables waiting in an RCU batch */
	/* per space */
	struct mmp_space *s;
	int64_t rss, tables;
};

__attribute__((format(printf, 2, 3)))
static void report(struct verify *v, const char *fmt, ...)
{
	va_list ap;

	if (v->errors++ >= 20)
		return;
	fprintf(stderr, "libmmprim: verify: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static bool take_table(struct verify *v, uint64_t pfn, const char *what, uint64_t va)
{
	if (!phys_pfn_valid(v->phys, pfn) || v->free[pfn] ||
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
	if (v->table[pfn]++) {
		report(v, "page table %llu is linked twice", (unsigned long long)pfn);
		return false;
	}
	return true;
}

/* A leaf of @size at @va must lie inside one VMA and agree with its flags. */
static struct mmp_vma *check_leaf_vma(struct verify *v, uint64_t va, uint64_t size, unsigned int f)
{
	struct mmp_vma *vma = find_vma(v->s, va);

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

/* The reverse map must find the page where it is mapped: anon_vma lineage and index. */
static void check_rmap(struct verify *v, struct mmp_vma *vma, uint64_t va, uint64_t pfn)
{
	uint64_t head = folio_pfn(v->phys, pfn);
	struct mmp_page *h = pfn_to_page(v->phys, head);

	if (!vma || !(h->flags & PG_head))
		return;
	if (!anon_vma_covers(vma->anon_vma, h->anon_vma) ||
	    linear_page_index(vma, va) != h->index + (pfn - head))
		report(v, "space %llu: %#llx maps frame %llu, which the reverse map would not find there",
		       (unsigned long long)v->s->id, (unsigned long long)va, (unsigned long long)pfn);
}

static void check_folio_page(struct verify *v, uint64_t pfn, uint64_t va, unsigned int order)
{
	struct mmp_phys *phys = v->phys;
	uint64_t head;

	if (!phys_pfn_valid(phys, pfn) || v->free[pfn]) {
		report(v, "space %llu: %#llx maps frame %llu, which is free or out of range",
		       (unsigned long long)v->s->id, (unsigned long long)va, (unsigned long long)pfn);
		return;
	}
	head = folio_pfn(phys, pfn);
	if (!(pfn_to_page(phys, head)->flags & PG_head) ||
	    !(pfn_to_page(phys, head)->flags & PG_anon) ||
	    pfn - head >= folio_nr_pages(pfn_to_page(phys, head)) ||
	    (order && (head != pfn || pfn_to_page(phys, head)->order != order))) {
		report(v, "space %llu: %#llx maps frame %llu, not a page of a fitting anon folio",
		       (unsigned long long)v->s->id, (unsigned long long)va, (unsigned long long)pfn);
		return;
	}
	v->refs[head]++;
	if (order)
		v->entire[head]++;
	else
		v->maps[pfn]++;
}

/* A contiguous block (contpte, NAPOT) must lie within one folio, aligned. */
static void check_cont_block(struct verify *v, uint64_t va, uint64_t pfn)
{
	unsigned int n = 1u << (v->s->arch->cont_shift ? v->s->arch->cont_shift - PAGE_SHIFT : 4);
	uint64_t base = pfn - ((va >> PAGE_SHIFT) & (n - 1)), head = folio_pfn(v->phys, pfn);
	struct mmp_page *h = pfn_to_page(v->phys, head);

	if (base < head || base + n > head + folio_nr_pages(h) || (base & (n - 1)))
		report(v, "space %llu: the contiguous block at %#llx spans more than one folio",
		       (unsigned long long)v->s->id, (unsigned long long)(va & ~(n * PAGE_SIZE - 1)));
}

static void walk_table(struct verify *v, mmp_pte_t *table, enum mmp_level level, uint64_t base)
{
	struct mmp_space *s = v->s;
	unsigned int huge = 0, deposits = 0;

	for (unsigned int i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t va = base + i * level_size(level);
		mmp_pte_t e = level == MMP_PTE ? s->arch->ptep_get_lockless(s, &table[i])
					       : READ_ONCE(table[i]);
		unsigned int f = entry_flags(s, e, level);
		struct mmp_vma *vma;
		uint64_t pfn = e ? entry_pfn(s, e, level) : 0;

		if (!e)
			continue;
		if (va >= USER_TOP) {
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
		if (!(f & (MMP_E_PRESENT | MMP_E_PROTNONE)) || (level > MMP_PTE && level != MMP_PMD) ||
		    (level == MMP_PMD && !(f & MMP_E_LEAF))) {
			report(v, "space %llu: unexpected entry %#llx at %#llx level %d",
			       (unsigned long long)s->id, (unsigned long long)e,
			       (unsigned long long)va, level);
			continue;
		}
		vma = check_leaf_vma(v, va, level_size(level), f);
		if (level == MMP_PMD)
			huge++;
		if (f & MMP_E_SPECIAL) {
			if (pfn != (level == MMP_PMD ? v->phys->huge_zero_pfn : v->phys->zero_pfn))
				report(v, "space %llu: special entry at %#llx is not a zero page",
				       (unsigned long long)s->id, (unsigned long long)va);
			continue;
		}
		check_folio_page(v, pfn, va, level == MMP_PMD ? HPAGE_PMD_ORDER : 0);
		if (phys_pfn_valid(v->phys, pfn) && !v->free[pfn]) {
			check_rmap(v, vma, va, pfn);
			if (level == MMP_PTE && (entry_flags(s, READ_ONCE(table[i]), MMP_PTE) & MMP_E_CONT))
				check_cont_block(v, va, pfn);
		}
		v->rss += level == MMP_PMD ? HPAGE_PMD_NR : 1;
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

static void check_vmas(struct verify *v)
{
	struct mmp_space *s = v->s;

	for (unsigned int i = 0; i < s->nr_vmas; i++) {
		struct mmp_vma *vma = &s->vmas[i];

		if (vma->start >= vma->end || (vma->start | vma->end) & (PAGE_SIZE - 1) ||
		    vma->start < MMP_MMAP_MIN_ADDR || vma->end > MMP_TASK_SIZE ||
		    (i && vma->start < s->vmas[i - 1].end))
			report(v, "space %llu: VMA %u [%#llx, %#llx) is malformed or overlaps",
			       (unsigned long long)s->id, i, (unsigned long long)vma->start,
			       (unsigned long long)vma->end);
	}
	/* As in Linux, a MAP_FIXED that splits a VMA may end one above the limit. */
	if (s->nr_vmas > MMP_MAX_MAP_COUNT + 1)
		report(v, "space %llu: %u VMAs, above max_map_count", (unsigned long long)s->id,
		       s->nr_vmas);
}

/* No CPU may hold a translation more permissive than the tables when no flush is due. */
static void check_tlbs(struct verify *v)
{
	struct mmp_space *s = v->s;

	if (READ_ONCE(s->tlb_flush_pending))
		return;
	spin_lock(&s->cpus_lock);
	for (int c = 0; c < MMP_MAX_CPUS; c++) {
		struct mmp_cpu *cpu = s->cpus[c];

		if (!cpu)
			continue;
		spin_lock(&cpu->lock);
		for (unsigned int i = 0; i < cpu->tlb_sets * cpu->tlb_ways; i++) {
			struct mmp_tlb_entry *te = &cpu->tlb[i];
			uint64_t va = te->key & ~((1ULL << te->shift) - 1);
			uint64_t n = tlb_entry_live(cpu, te) ? 1ULL << (te->shift - PAGE_SHIFT) : 0;

			/* Every page the entry translates must still translate the same way. */
			for (uint64_t k = 0; k < n; k++) {
				uint64_t pva = va + (k << PAGE_SHIFT), pfn = 0;
				mmp_pte_t *pmdp = pmd_offset(s, pva), e = 0;
				unsigned int f = 0;

				if (pmdp) {
					e = READ_ONCE(*pmdp);
					f = entry_flags(s, e, MMP_PMD);
					if (f & MMP_E_LEAF) {
						pfn = entry_pfn(s, e, MMP_PMD) + level_index(pva, MMP_PTE);
					} else if (pte_table(s, e)) {
						e = s->arch->ptep_get_lockless(s,
							&pte_table(s, e)[level_index(pva, MMP_PTE)]);
						f = entry_flags(s, e, MMP_PTE);
						pfn = entry_pfn(s, e, MMP_PTE);
					} else {
						f = 0;
					}
				}
				if (!(f & MMP_E_PRESENT) || pfn != te->pfn + k ||
				    (te->write && !(f & MMP_E_WRITE))) {
					report(v, "space %llu: cpu %d holds a stale TLB entry for %#llx",
					       (unsigned long long)s->id, c, (unsigned long long)pva);
					break;
				}
			}
		}
		spin_unlock(&cpu->lock);
	}
	spin_unlock(&s->cpus_lock);
}

static void verify_space(struct verify *v, struct mmp_space *s)
{
	struct mmp_counters c;

	v->s = s;
	v->rss = 0;
	v->tables = 0;
	check_vmas(v);
	if (take_table(v, s->pgd_pfn, "pgd", 0))
		walk_table(v, space_table(s, s->pgd_pfn), MMP_PGD, 0);
	if (v->rss != get_mm_rss(s))
		report(v, "space %llu: RSS counter %lld, tables map %lld pages",
		       (unsigned long long)s->id, (long long)get_mm_rss(s), (long long)v->rss);
	if (v->tables != READ_ONCE(s->nr_pgtables))
		report(v, "space %llu: VmPTE counts %lld tables, %lld are linked",
		       (unsigned long long)s->id, (long long)s->nr_pgtables, (long long)v->tables);
	check_tlbs(v);
	mmp_space_counters(s, &c);
	if (c.v[MMP_C_TLB_SANITIZER])
		report(v, "space %llu: the TLB sanitizer saw %llu stale translations",
		       (unsigned long long)s->id, (unsigned long long)c.v[MMP_C_TLB_SANITIZER]);
}

static void mark_free(struct verify *v)
{
	struct mmp_phys *phys = v->phys;

	spin_lock(&phys->lock);
	for (unsigned int o = 0; o <= MMP_MAX_ORDER; o++)
		for (uint32_t pfn = phys->free_list[o]; pfn != NO_PFN;
		     pfn = pfn_to_page(phys, pfn)->buddy.next)
			memset(v->free + pfn, 1, 1u << o);
	spin_unlock(&phys->lock);
	for (int i = 0; i < MMP_COUNTER_SHARDS; i++) {
		spin_lock(&phys->pcp[i].lock);
		for (unsigned int j = 0; j < phys->pcp[i].count; j++)
			v->free[phys->pcp[i].pfns[j]] = 1;
		spin_unlock(&phys->pcp[i].lock);
	}
}

/* Every allocated frame is a table, a mapped folio or a zero page; counts add up. */
static void check_frames(struct verify *v)
{
	struct mmp_phys *phys = v->phys;

	for (uint64_t pfn = 0; pfn < phys->nr_pages; pfn++) {
		struct mmp_page *p = pfn_to_page(phys, pfn);

		if (v->free[pfn])
			continue;
		if (p->flags & PG_reserved) {
			if (p->flags & PG_head)
				pfn += folio_nr_pages(p) - 1;
			continue;
		}
		if (p->flags & PG_table) {
			if (v->table[pfn])
				continue;
			/* Unlinked: it must be on its way to the allocator. */
			if ((p->flags & PG_pt_rcu) && (p->flags & PG_pt_freeing))
				v->in_flight++;
			else if (p->flags & PG_pt_rcu)
				report(v, "page table %llu is in an RCU batch but was never unlinked",
				       (unsigned long long)pfn);
			else if (p->flags & PG_pt_freeing)
				report(v, "page table %llu is unlinked but was never sent to be freed (leak)",
				       (unsigned long long)pfn);
			else
				report(v, "page table %llu is allocated but linked nowhere (leak)",
				       (unsigned long long)pfn);
			continue;
		}
		if (p->flags == PG_pt_freeing)
			continue;	/* released table; a speculative GUP-fast grab has the last put */
		if (!(p->flags & PG_head)) {
			report(v, "frame %llu is allocated but is no table or folio (leak)",
			       (unsigned long long)pfn);
			continue;
		}
		int32_t mapped = v->entire[pfn];

		for (unsigned int i = 0; i < folio_nr_pages(p); i++) {
			if (i && (!(p[i].flags & PG_tail) || p[i].tail.head != pfn))
				report(v, "folio %llu: page %u is not its tail", (unsigned long long)pfn, i);
			if (p[i].mapcount != v->maps[pfn + i])
				report(v, "folio %llu page %u: mapcount %d, %d PTEs map it",
				       (unsigned long long)pfn, i, p[i].mapcount, v->maps[pfn + i]);
			mapped += v->maps[pfn + i];
		}
		/* Every reference is a mapping's or a GUP pin's. */
		if (p->refcount != v->refs[pfn] + p->pincount || p->refcount <= 0 || p->pincount < 0)
			report(v, "folio %llu: refcount %d, %d mappings and %d pins hold references",
			       (unsigned long long)pfn, p->refcount, v->refs[pfn], p->pincount);
		v->extra_refs += p->pincount;
		if (p->order && (p->folio.large_mapcount != mapped ||
				 p->folio.entire_mapcount != v->entire[pfn]))
			report(v, "folio %llu: mapcount %d (entire %d), tables map it %d (entire %d)",
			       (unsigned long long)pfn, p->folio.large_mapcount,
			       p->folio.entire_mapcount, mapped, v->entire[pfn]);
		pfn += folio_nr_pages(p) - 1;
	}
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
	v.refs = calloc(phys->nr_pages, sizeof(*v.refs));
	v.maps = calloc(phys->nr_pages, sizeof(*v.maps));
	v.entire = calloc(phys->nr_pages, sizeof(*v.entire));
	v.table = calloc(phys->nr_pages, 1);
	v.free = calloc(phys->nr_pages, 1);
	if (!v.refs || !v.maps || !v.entire || !v.table || !v.free) {
		free(v.refs), free(v.maps), free(v.entire), free(v.table), free(v.free);
		return -ENOMEM;
	}

	/*
	 * Tables are unlinked, and frames allocated, only under mmap locks; the
	 * only frees left are RCU batches of tables coming home, and pt_rcu_lock
	 * holds those back. So no frame changes state under us, and tables still
	 * in their grace period are accounted as in flight rather than waited for.
	 */
	pthread_mutex_lock(&phys->spaces_lock);
	for (s = phys->spaces; s; s = s->phys_next)
		pthread_rwlock_wrlock(&s->mmap_lock);
	pthread_mutex_lock(&phys->pt_rcu_lock);
	mark_free(&v);
	for (s = phys->spaces; s; s = s->phys_next)
		verify_space(&v, s);
	check_frames(&v);
	if (v.extra_refs != READ_ONCE(phys->nr_pinned))
		report(&v, "folios hold %lld GUP pins, %lld were taken and not given back",
		       (long long)v.extra_refs, (long long)phys->nr_pinned);
	if (v.in_flight != READ_ONCE(phys->nr_pt_rcu))
		report(&v, "%lld unlinked tables are marked in flight, %lld are waiting in RCU batches",
		       (long long)v.in_flight, (long long)phys->nr_pt_rcu);
	pthread_mutex_unlock(&phys->pt_rcu_lock);
	for (s = phys->spaces; s; s = s->phys_next)
		pthread_rwlock_unlock(&s->mmap_lock);
	pthread_mutex_unlock(&phys->spaces_lock);

	if (v.errors > 20)
		fprintf(stderr, "libmmprim: verify: %d more problems\n", v.errors - 20);
	free(v.refs), free(v.maps), free(v.entire), free(v.table), free(v.free);
	return v.errors ? -EUCLEAN : 0;
}
