/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files and the page cache (mm/filemap.c, mm/readahead.c, fs/inode.c's part):
 * an index of folios by page offset, read in from the file's store on first
 * use and written back to it when reclaim takes a dirty one; the file's
 * i_mmap of VMAs; the public file calls.
 *
 * Readahead modelled (6.18's do_sync_mmap_readahead and page_cache_ra_order,
 * for a fault that misses): a VM_HUGEPAGE mapping reads two PMD-size folios
 * from the PMD-aligned index; any other mapping reads around the fault,
 * ra_pages (MMP_OPT_READ_AHEAD_KB, 128 KiB by default: 32 pages) from half
 * of them below it, in order-0 folios (read-around sets ra->order to 0). Not modelled: the mmap_miss
 * heuristic, asynchronous readahead on PG_readahead and its order ramp, and
 * arm64's exec_folio_order for VM_EXEC. A write through the file gets folios
 * as large as its length allows (write_begin's fgf_set_order).
 */
#define _GNU_SOURCE	/* mremap */
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "filemap.h"
#include "mm.h"

/* ---- the index -------------------------------------------------------------------- */

static unsigned int xa_shift(unsigned int level)
{
	return level * XA_CHUNK_SHIFT;
}

/* Largest index the tree's height can hold, plus one. */
static uint64_t xa_capacity(const struct address_space *as)
{
	return as->height ? 1ULL << xa_shift(as->height) : 0;
}

uint32_t xa_load(struct address_space *as, uint64_t index)
{
	struct xa_node *node = as->root;

	if (index >= xa_capacity(as))
		return NO_PFN;
	for (unsigned int level = as->height; level > 1; level--) {
		node = (struct xa_node *)node->slots[(index >> xa_shift(level - 1)) & (XA_CHUNK_SIZE - 1)];
		if (!node)
			return NO_PFN;
	}
	return node->slots[index & (XA_CHUNK_SIZE - 1)] ? node->slots[index & (XA_CHUNK_SIZE - 1)] - 1
							 : NO_PFN;
}

/* Grow the tree until @index fits; -ENOMEM leaves it as it was. */
static int xa_grow(struct address_space *as, uint64_t index)
{
	while (index >= xa_capacity(as)) {
		struct xa_node *node = calloc(1, sizeof(*node));

		if (!node)
			return -ENOMEM;
		node->slots[0] = (uintptr_t)as->root;
		as->root = node;
		as->height++;
		if (as->height == 1)
			node->slots[0] = 0;	/* the first node is a leaf */
	}
	return 0;
}

/* The leaf slot of @index, allocating the nodes down to it; NULL on -ENOMEM. */
static uintptr_t *xa_slot(struct address_space *as, uint64_t index)
{
	struct xa_node *node;

	if (xa_grow(as, index))
		return NULL;
	node = as->root;
	for (unsigned int level = as->height; level > 1; level--) {
		uintptr_t *slot = &node->slots[(index >> xa_shift(level - 1)) & (XA_CHUNK_SIZE - 1)];

		if (!*slot) {
			struct xa_node *child = calloc(1, sizeof(*child));

			if (!child)
				return NULL;
			*slot = (uintptr_t)child;
		}
		node = (struct xa_node *)*slot;
	}
	return &node->slots[index & (XA_CHUNK_SIZE - 1)];
}

/* Fill [index, index + nr) with @pfn's entry (0: erase). All or nothing on -ENOMEM. */
static int xa_store_range(struct address_space *as, uint64_t index, uint64_t nr, uint32_t pfn)
{
	uintptr_t v = pfn == NO_PFN ? 0 : (uintptr_t)pfn + 1;

	if (v) {
		/* Allocate every leaf first, one slot in each, so a failure changes nothing. */
		for (uint64_t i = index; i < index + nr; i = (i | (XA_CHUNK_SIZE - 1)) + 1)
			if (!xa_slot(as, i))
				return -ENOMEM;
	}
	for (uint64_t i = 0; i < nr; i++) {
		if (index + i >= xa_capacity(as))
			break;
		*xa_slot(as, index + i) = v;
	}
	return 0;
}

static bool xa_range_empty(struct address_space *as, uint64_t index, uint64_t nr)
{
	for (uint64_t i = 0; i < nr; i++)
		if (xa_load(as, index + i) != NO_PFN)
			return false;
	return true;
}

struct xa_walk {
	uint64_t start;
	uint32_t last_pfn;	/* a large folio fills its slots: report it once */
	xa_fn fn;
	void *arg;
};

static void xa_walk(struct address_space *as, struct xa_walk *w, struct xa_node *node,
		    unsigned int level, uint64_t base)
{
	uint64_t span = 1ULL << xa_shift(level - 1);

	for (unsigned int i = 0; i < XA_CHUNK_SIZE; i++) {
		uint64_t index = base + i * span;
		uint32_t pfn;

		if (!node->slots[i] || index + span <= w->start)
			continue;
		if (level > 1) {
			xa_walk(as, w, (struct xa_node *)node->slots[i], level - 1, index);
			continue;
		}
		pfn = node->slots[i] - 1;
		if (pfn == w->last_pfn)
			continue;
		w->last_pfn = pfn;
		w->fn(as, index, pfn, w->arg);
	}
}

/*
 * Call @fn once for each folio with a slot at or after @start, in index
 * order, with the first such index. @fn may not change the index: callers
 * collect, then act.
 */
void xa_for_each_folio(struct address_space *as, uint64_t start, xa_fn fn, void *arg)
{
	struct xa_walk w = { .start = start, .last_pfn = NO_PFN, .fn = fn, .arg = arg };

	if (as->root)
		xa_walk(as, &w, as->root, as->height, 0);
}

static void xa_free_node(struct xa_node *node, unsigned int level)
{
	if (level > 1)
		for (unsigned int i = 0; i < XA_CHUNK_SIZE; i++)
			if (node->slots[i])
				xa_free_node((struct xa_node *)node->slots[i], level - 1);
	free(node);
}

/* ---- files ---------------------------------------------------------------------------- */

struct mmp_file *folio_file(struct mmp_phys *phys, struct mmp_page *head)
{
	uint32_t id = __atomic_load_n(&head->mapping, __ATOMIC_ACQUIRE);

	if (!id || (head->flags & PG_anon))
		return NULL;
	return __atomic_load_n(&phys->files[id - 1], __ATOMIC_ACQUIRE);
}

void folio_lock(struct mmp_page *head)
{
	while (!folio_trylock(head))
		sched_yield();
}

void get_file(struct mmp_file *f)
{
	__atomic_fetch_add(&f->refcount, 1, __ATOMIC_RELAXED);
}

static void file_free(struct mmp_file *f);

void fput(struct mmp_file *f)
{
	if (__atomic_sub_fetch(&f->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		file_free(f);
}

/* Link a new VMA of a file into its i_mmap, taking a file reference (vma_link_file). */
void vma_link_file(struct mmp_vma *vma)
{
	struct address_space *as = &vma->vm_file->mapping;

	get_file(vma->vm_file);
	down_write(&as->i_mmap_rwsem);
	vma->shared_prev = NULL;
	vma->shared_next = as->i_mmap;
	if (as->i_mmap)
		as->i_mmap->shared_prev = vma;
	as->i_mmap = vma;
	as->nr_mapped_vmas++;
	up_write(&as->i_mmap_rwsem);
}

/* Out of i_mmap, with its lock held for writing; the caller drops the file reference. */
void __vma_unlink_file(struct mmp_vma *vma)
{
	struct address_space *as = &vma->vm_file->mapping;

	if (vma->shared_prev)
		vma->shared_prev->shared_next = vma->shared_next;
	else
		as->i_mmap = vma->shared_next;
	if (vma->shared_next)
		vma->shared_next->shared_prev = vma->shared_prev;
	as->nr_mapped_vmas--;
	vma->vm_file = NULL;
}

/* And out of it, dropping the reference (unlink_file_vma, fput). */
void vma_unlink_file(struct mmp_vma *vma)
{
	struct mmp_file *f = vma->vm_file;

	down_write(&f->mapping.i_mmap_rwsem);
	__vma_unlink_file(vma);
	up_write(&f->mapping.i_mmap_rwsem);
	fput(f);
}

/* ---- folios in the page cache ----------------------------------------------------------- */

/* The largest folio order the page cache of @f takes (mapping_max_folio_order). */
static unsigned int mapping_max_order(struct mmp_file *f)
{
	if (shmem_file(f))
		return HPAGE_PMD_ORDER;
	return f->flags & MMP_FILE_NO_LARGE_FOLIOS ? 0 : HPAGE_PMD_ORDER;
}

unsigned int filemap_max_order(struct mmp_file *f, struct mmp_vma *vma, uint64_t index)
{
	return shmem_file(f) ? shmem_huge_order(f, vma, index) : mapping_max_order(f);
}

/* A new page-cache folio: not anonymous, locked, not yet in the cache. */
static uint32_t filemap_alloc_folio(struct mmp_file *f, unsigned int order, struct mmp_space *s)
{
	uint32_t pfn = phys_alloc_pages(f->phys, order);
	struct mmp_page *head;

	if (pfn == NO_PFN) {
		if (s)
			count_inc(s, MMP_C_FOLIO_ALLOC_FAIL);
		return NO_PFN;
	}
	head = pfn_to_page(f->phys, pfn);
	for (unsigned int i = 1; i < (1u << order); i++) {
		head[i].flags = PG_tail;
		head[i].tail.head = pfn;
	}
	head->order = order;
	head->flags = PG_head | PG_locked | (shmem_file(f) ? PG_swapbacked : 0);
	head->refcount = 0;
	if (s)
		count_inc(s, MMP_C_FOLIO_ALLOC_O0 + order);
	return pfn;
}

/* Fill a new folio at @index from the store, zeroes past it (or all of it: shmem). */
static void filemap_read_folio(struct mmp_file *f, uint32_t pfn, uint64_t index, unsigned int nr)
{
	uint8_t *dst = pfn_to_virt(f->phys, pfn);
	uint64_t off = index << PAGE_SHIFT, len = (uint64_t)nr << PAGE_SHIFT, have = 0;

	if (f->store && off < f->store_bytes)
		have = MIN(len, f->store_bytes - off);
	if (have)
		memcpy(dst, f->store + off, have);
	memset(dst + have, 0, len - have);
}

uint32_t filemap_get_folio(struct mmp_file *f, uint64_t index)
{
	struct address_space *as = &f->mapping;
	uint32_t pfn;

	spin_lock(&as->i_pages_lock);
	pfn = xa_load(as, index);
	if (pfn != NO_PFN)
		folio_ref_add(pfn_to_page(f->phys, pfn), 1);
	spin_unlock(&as->i_pages_lock);
	return pfn;
}

/*
 * Add a folio of order @order at the aligned index around @index, unless
 * something is there already. The order falls until the aligned range is
 * free in the index and ends at or before @limit. Caller holds
 * invalidate_lock for reading (the store stays where it is).
 */
uint32_t filemap_grab_folio(struct mmp_file *f, uint64_t index, unsigned int order,
			    uint64_t limit, struct mmp_space *s, int *err)
{
	struct address_space *as = &f->mapping;
	uint32_t pfn;

	for (;;) {
		uint64_t start, nr;

		spin_lock(&as->i_pages_lock);
		pfn = xa_load(as, index);
		if (pfn != NO_PFN) {
			folio_ref_add(pfn_to_page(f->phys, pfn), 1);
			spin_unlock(&as->i_pages_lock);
			return pfn;
		}
		/* Past the end: a truncation got here first (the caller checked i_size before). */
		if (index >= limit) {
			spin_unlock(&as->i_pages_lock);
			*err = -EIO;
			return NO_PFN;
		}
		/*
		 * A file's folio starts at @index, its order lowered to fit
		 * (__filemap_get_folio, page_cache_ra_order); shmem's is aligned
		 * down around it (shmem_alloc_and_add_folio).
		 */
		if (!shmem_file(f))
			while (order && (index & ((1ULL << order) - 1)))
				order--;
		for (;; order--) {
			nr = 1ULL << order;
			start = index & ~(nr - 1);
			if (!order || (start + nr <= limit && xa_range_empty(as, start, nr)))
				break;
		}
		spin_unlock(&as->i_pages_lock);

		pfn = filemap_alloc_folio(f, order, s);
		while (pfn == NO_PFN && order) {
			order--;
			nr = 1ULL << order;
			start = index & ~(nr - 1);
			pfn = filemap_alloc_folio(f, order, s);
		}
		if (pfn == NO_PFN) {
			*err = -ENOMEM;
			return NO_PFN;
		}
		filemap_read_folio(f, pfn, start, nr);

		spin_lock(&as->i_pages_lock);
		if (xa_range_empty(as, start, nr)) {
			struct mmp_page *head = pfn_to_page(f->phys, pfn);

			if (xa_store_range(as, start, nr, pfn)) {
				spin_unlock(&as->i_pages_lock);
				folio_free(f->phys, pfn);
				*err = -ENOMEM;
				return NO_PFN;
			}
			head->index = start;
			head->refcount = nr + 1;	/* the page cache's, one per page, and ours */
			__atomic_store_n(&head->mapping, f->id, __ATOMIC_RELEASE);
			as->nrpages += nr;
			spin_unlock(&as->i_pages_lock);
			folio_unlock(head);
			if (s)
				count_add(s, MMP_C_PGCACHE_ADD, nr);
			return pfn;
		}
		/* Someone added a folio meanwhile: use theirs. */
		spin_unlock(&as->i_pages_lock);
		folio_free(f->phys, pfn);
	}
}

/*
 * Put the new folio @pfn at @index, aligned to its size: the page cache
 * takes a reference per page (hugetlb_add_to_page_cache; hugetlb faults fill
 * the cache themselves). -EEXIST when something is there already, -ENOMEM.
 */
int filemap_add_folio(struct mmp_file *f, uint32_t pfn, uint64_t index)
{
	struct address_space *as = &f->mapping;
	struct mmp_page *head = pfn_to_page(f->phys, pfn);
	uint64_t nr = folio_nr_pages(head);
	int err = 0;

	spin_lock(&as->i_pages_lock);
	if (!xa_range_empty(as, index, nr))
		err = -EEXIST;
	else
		err = xa_store_range(as, index, nr, pfn);
	if (!err) {
		head->index = index;
		folio_ref_add(head, nr);
		__atomic_store_n(&head->mapping, f->id, __ATOMIC_RELEASE);
		as->nrpages += nr;
	}
	spin_unlock(&as->i_pages_lock);
	return err;
}

static bool filemap_range_empty(struct mmp_file *f, uint64_t index, uint64_t nr)
{
	bool empty;

	spin_lock(&f->mapping.i_pages_lock);
	empty = xa_range_empty(&f->mapping, index, nr);
	spin_unlock(&f->mapping.i_pages_lock);
	return empty;
}

/*
 * Read-ahead of the folios of [start, start + nr) not in the cache yet, best
 * effort. Folios of @order, each lowered to its index's alignment and to end
 * before EOF, until one would cover a page already cached: there large
 * folios stop, and the rest of the window is read in order-0 folios around
 * what is cached (page_cache_ra_order's fallback to do_page_cache_ra). A 6.18
 * host, ext4: MADV_HUGEPAGE read at index 0 with pages 224 on cached reads
 * 0-223 as order-0 folios, not as folios of 128, 64 and 32 pages.
 */
static void page_cache_ra_order(struct mmp_space *s, struct mmp_file *f, uint64_t start,
				uint64_t nr, unsigned int order)
{
	uint64_t end = MIN(start + nr, file_size_pages(f)), index = start;
	int err;

	while (index < end) {
		unsigned int o = order;
		struct mmp_page *head;
		uint32_t pfn;

		while (o && ((index & ((1ULL << o) - 1)) || index + (1ULL << o) > end))
			o--;
		if (o && !filemap_range_empty(f, index, 1ULL << o))
			order = o = 0;
		pfn = filemap_grab_folio(f, index, o, end, s, &err);
		if (pfn == NO_PFN)
			return;
		head = pfn_to_page(f->phys, pfn);
		index = head->index + folio_nr_pages(head);
		folio_put_refs(s, pfn, 1);
	}
}

void filemap_readahead(struct mmp_space *s, struct mmp_vma *vma, uint64_t index)
{
	/* The file's ra_pages: its device's read_ahead_kb in pages. */
	uint64_t ra_pages = (uint64_t)READ_ONCE(s->opts[MMP_OPT_READ_AHEAD_KB]) / (PAGE_SIZE >> 10);
	struct mmp_file *f = vma->vm_file;

	if ((vma->flags & VM_HUGEPAGE) && mapping_max_order(f) >= HPAGE_PMD_ORDER) {
		/* Two PMD folios, so that there is something to read ahead. */
		page_cache_ra_order(s, f, index & ~(uint64_t)(HPAGE_PMD_NR - 1), 2 * HPAGE_PMD_NR,
				    HPAGE_PMD_ORDER);
		return;
	}
	/* do_sync_mmap_readahead: MADV_RANDOM reads no more than the page, MADV_SEQUENTIAL on from it. */
	if (vma->flags & VM_RAND_READ)
		return;
	if (vma->flags & VM_SEQ_READ) {
		page_cache_ra_order(s, f, index, ra_pages, 0);
		return;
	}
	/* mmap read-around */
	page_cache_ra_order(s, f, index > ra_pages / 2 ? index - ra_pages / 2 : 0, ra_pages, 0);
}

void filemap_remove_folio_frozen(struct mmp_file *f, uint32_t head_pfn)
{
	struct address_space *as = &f->mapping;
	struct mmp_page *head = pfn_to_page(f->phys, head_pfn);
	unsigned int nr = folio_nr_pages(head);

	MMP_BUG_ON(xa_load(as, head->index) != head_pfn);
	xa_store_range(as, head->index, nr, NO_PFN);
	as->nrpages -= nr;
	__atomic_store_n(&head->mapping, 0, __ATOMIC_RELEASE);
}

void filemap_split_folio_frozen(struct mmp_file *f, uint32_t head_pfn, uint64_t index,
				unsigned int nr)
{
	/* The slots exist: the folio filled them. */
	for (unsigned int i = 0; i < nr; i++)
		xa_store_range(&f->mapping, index + i, 1, head_pfn + i);
}

void filemap_remove_folio(struct mmp_file *f, uint32_t head_pfn)
{
	spin_lock(&f->mapping.i_pages_lock);
	filemap_remove_folio_frozen(f, head_pfn);
	spin_unlock(&f->mapping.i_pages_lock);
	page_flag_clear(pfn_to_page(f->phys, head_pfn), PG_dirty);
	__folio_put_refs(f->phys, head_pfn, folio_nr_pages(pfn_to_page(f->phys, head_pfn)));
}

void folio_write_back(struct mmp_file *f, uint32_t head_pfn)
{
	struct mmp_page *head = pfn_to_page(f->phys, head_pfn);
	uint64_t off = head->index << PAGE_SHIFT, len = (uint64_t)folio_nr_pages(head) << PAGE_SHIFT;

	/* Only up to i_size: what lies past it in the last page is no file data. */
	len = MIN(len, __atomic_load_n(&f->i_size, __ATOMIC_ACQUIRE) > off ?
		       __atomic_load_n(&f->i_size, __ATOMIC_ACQUIRE) - off : 0);
	if (f->store && off < f->store_bytes)
		memcpy(f->store + off, pfn_to_virt(f->phys, head_pfn), MIN(len, f->store_bytes - off));
	page_flag_clear(head, PG_dirty);
	__atomic_fetch_add(&f->writeback_pages, folio_nr_pages(head), __ATOMIC_RELAXED);
}

void filemap_zero_range(struct mmp_file *f, uint64_t from, uint64_t to)
{
	while (from < to) {
		uint32_t pfn = filemap_get_folio(f, from >> PAGE_SHIFT);
		struct mmp_page *head;
		uint64_t end;

		if (pfn == NO_PFN) {
			from = ((from >> PAGE_SHIFT) + 1) << PAGE_SHIFT;
			continue;
		}
		head = pfn_to_page(f->phys, pfn);
		folio_lock(head);
		end = MIN(to, (head->index + folio_nr_pages(head)) << PAGE_SHIFT);
		if (head->mapping == f->id)
			memset((uint8_t *)pfn_to_virt(f->phys, pfn) + (from - (head->index << PAGE_SHIFT)),
			       0, end - from);
		folio_unlock(head);
		__folio_put_refs(f->phys, pfn, 1);
		from = end;
	}
}

/*
 * A regular file grows past @old_size: what a shared mapping wrote beyond the
 * old end of the last page must not become file data (ext4 zeroes the partial
 * block on such an extension). tmpfs keeps it: its block is the page.
 */
void filemap_zero_eof(struct mmp_file *f, uint64_t old_size)
{
	if (!shmem_file(f) && (old_size & (PAGE_SIZE - 1)))
		filemap_zero_range(f, old_size, (old_size + PAGE_SIZE - 1) & PAGE_MASK);
}

/* ---- the file calls ----------------------------------------------------------------------- */

#define MMP_FILE_HUGE	(MMP_FILE_HUGE_ALWAYS | MMP_FILE_HUGE_WITHIN_SIZE | MMP_FILE_HUGE_ADVISE)
#define MMP_FILE_ALL	(MMP_FILE_SHMEM | MMP_FILE_RDONLY | MMP_FILE_NO_LARGE_FOLIOS | MMP_FILE_HUGE)

int store_reserve(struct mmp_file *f, uint64_t size)
{
	uint64_t want = (size + PAGE_SIZE - 1) & PAGE_MASK;
	void *p;

	if (shmem_file(f) || want <= f->store_bytes)
		return 0;
	want = MAX(want, MIN(2 * f->store_bytes, MMP_FILE_MAX_SIZE));
	if (f->store)
		p = mremap(f->store, f->store_bytes, want, MREMAP_MAYMOVE);
	else
		p = mmap(NULL, want, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	f->store = p;
	f->store_bytes = want;
	return 0;
}

static int file_register(struct mmp_phys *phys, struct mmp_file *f)
{
	int err = -ENFILE;

	pthread_mutex_lock(&phys->files_lock);
	if (!phys->files)
		phys->files = calloc(MMP_MAX_FILES, sizeof(*phys->files));
	if (!phys->files) {
		err = -ENOMEM;
	} else {
		for (uint32_t i = 0; i < MMP_MAX_FILES; i++) {
			if (!phys->files[i]) {
				f->id = i + 1;
				__atomic_store_n(&phys->files[i], f, __ATOMIC_RELEASE);
				__atomic_fetch_add(&phys->nr_files, 1, __ATOMIC_RELEASE);
				err = 0;
				break;
			}
		}
	}
	pthread_mutex_unlock(&phys->files_lock);
	return err;
}

struct folio_batch {
	uint32_t pfns[256];
	unsigned int nr;
	uint64_t next;		/* where the next collection starts */
	uint64_t end;		/* no folio from here on is collected */
};

static void collect_folio(struct address_space *as, uint64_t index, uint32_t pfn, void *arg)
{
	struct mmp_file *f = caa_container_of(as, struct mmp_file, mapping);
	struct mmp_page *head = pfn_to_page(f->phys, pfn);
	struct folio_batch *fb = arg;

	if (fb->nr == 256 || index >= fb->end)
		return;
	fb->pfns[fb->nr++] = pfn;
	fb->next = head->index + folio_nr_pages(head);
}

/*
 * Remove every folio that starts at index @start or above from the page
 * cache (truncate_inode_pages_range): each locked, unmapped where a fault
 * mapped it after the caller's unmap (truncate_cleanup_folio), its
 * references dropped (the last frees it). A folio straddling @start stays.
 */
void filemap_remove_from(struct mmp_file *f, uint64_t start)
{
	filemap_remove_range(f, start, UINT64_MAX, true);
}

/*
 * The folios wholly inside [start, end) out of the page cache, as
 * filemap_remove_from(); one still mapped is unmapped first, private copies
 * too only with @even_cows.
 */
void filemap_remove_range(struct mmp_file *f, uint64_t start, uint64_t end, bool even_cows)
{
	struct folio_batch fb = { .next = start, .end = end };

	do {
		fb.nr = 0;
		spin_lock(&f->mapping.i_pages_lock);
		xa_for_each_folio(&f->mapping, fb.next, collect_folio, &fb);
		for (unsigned int i = 0; i < fb.nr; i++)
			folio_ref_add(pfn_to_page(f->phys, fb.pfns[i]), 1);
		spin_unlock(&f->mapping.i_pages_lock);
		for (unsigned int i = 0; i < fb.nr; i++) {
			struct mmp_page *head = pfn_to_page(f->phys, fb.pfns[i]);

			folio_lock(head);
			if (__atomic_load_n(&head->mapping, __ATOMIC_ACQUIRE) == f->id &&
			    head->index >= start && head->index + folio_nr_pages(head) <= end) {
				if (folio_mapcount(head))
					unmap_mapping_pages(f, head->index,
							    head->index + folio_nr_pages(head) - 1,
							    even_cows);
				filemap_remove_folio(f, fb.pfns[i]);
			}
			folio_unlock(head);
			__folio_put_refs(f->phys, fb.pfns[i], 1);
		}
	} while (fb.nr);
}

static void file_free(struct mmp_file *f)
{
	struct mmp_phys *phys = f->phys;
	/* Its last reference: no mapping is left, every cached page goes back to the pool. */
	uint64_t huge_freed = is_file_hugepages(f) ? f->mapping.nrpages >> f->hstate->order : 0;

	filemap_remove_from(f, 0);
	if (is_file_hugepages(f))
		hugetlb_file_release(f, huge_freed);
	if (f->mapping.root)
		xa_free_node(f->mapping.root, f->mapping.height);
	if (f->store)
		munmap(f->store, f->store_bytes);
	pthread_mutex_lock(&phys->files_lock);
	__atomic_store_n(&phys->files[f->id - 1], NULL, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&phys->nr_files, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&phys->files_lock);
	rwsem_destroy(&f->mapping.i_mmap_rwsem);
	rwsem_destroy(&f->mapping.invalidate_lock);
	pthread_mutex_destroy(&f->i_rwsem);
	free(f);
}

/* A file with one reference: the user's handle when @handle, else the creator's, for a while. */
int file_alloc(struct mmp_phys *phys, uint64_t size, unsigned int flags, bool handle,
	       struct mmp_file **out)
{
	struct mmp_file *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return -ENOMEM;
	f->phys = phys;
	f->flags = flags;
	f->i_size = size;
	f->refcount = 1;
	f->handle = handle;
	pthread_mutex_init(&f->i_rwsem, NULL);
	init_rwsem(&f->mapping.i_mmap_rwsem);
	init_rwsem(&f->mapping.invalidate_lock);
	err = store_reserve(f, size);
	if (!err)
		err = file_register(phys, f);
	if (err) {
		if (f->store)
			munmap(f->store, f->store_bytes);
		rwsem_destroy(&f->mapping.i_mmap_rwsem);
		rwsem_destroy(&f->mapping.invalidate_lock);
		pthread_mutex_destroy(&f->i_rwsem);
		free(f);
		return err;
	}
	*out = f;
	return 0;
}

MMP_EXPORT int mmp_file_create(struct mmp_phys *phys, uint64_t size, unsigned int flags,
			       struct mmp_file **out)
{
	unsigned int huge = flags & MMP_FILE_HUGE;

	if (!phys || !out || (flags & ~MMP_FILE_ALL))
		return -EINVAL;
	if ((huge & (huge - 1)) || (huge && !(flags & MMP_FILE_SHMEM)) ||
	    ((flags & MMP_FILE_SHMEM) && (flags & MMP_FILE_NO_LARGE_FOLIOS)))
		return -EINVAL;
	if (size > MMP_FILE_MAX_SIZE)
		return -EFBIG;
	return file_alloc(phys, size, flags, true, out);
}

#define MMP_MFD_HUGE_BITS	((unsigned int)MMP_MFD_HUGE_MASK << MMP_MFD_HUGE_SHIFT)

MMP_EXPORT int mmp_memfd_create(struct mmp_phys *phys, unsigned int flags, struct mmp_file **out)
{
	struct hstate *h;

	if (!phys || !out || (flags & MMP_FILE_SHMEM))
		return -EINVAL;
	/* memfd_create: size bits only with MFD_HUGETLB, then a size the kernel has an hstate of. */
	if (flags & MMP_MFD_HUGETLB) {
		if (flags & ~(MMP_MFD_HUGETLB | MMP_MFD_HUGE_BITS))
			return -EINVAL;
		h = hstate_sizelog(phys, (flags >> MMP_MFD_HUGE_SHIFT) & MMP_MFD_HUGE_MASK);
		if (!h)
			return -ENODEV;
		return hugetlb_file_setup(phys, h, 0, true, out);
	}
	if (flags & MMP_MFD_HUGE_BITS)
		return -EINVAL;
	return mmp_file_create(phys, 0, flags | MMP_FILE_SHMEM, out);
}

MMP_EXPORT int mmp_file_destroy(struct mmp_file *f)
{
	bool mapped;

	if (!f || !f->handle)
		return -EINVAL;
	down_read(&f->mapping.i_mmap_rwsem);
	mapped = f->mapping.nr_mapped_vmas;
	up_read(&f->mapping.i_mmap_rwsem);
	if (mapped)
		return -EBUSY;
	f->handle = false;
	fput(f);
	return 0;
}

/* Grow i_size to @end if below it (i_size_write under i_rwsem). */
static void file_extend(struct mmp_file *f, uint64_t end)
{
	if (end > f->i_size)
		__atomic_store_n(&f->i_size, end, __ATOMIC_RELEASE);
}

/* The order a write of @len bytes from @index asks for (fgf_set_order), within what @f allows. */
static unsigned int write_order(struct mmp_file *f, uint64_t index, uint64_t len)
{
	uint64_t pages = len >> PAGE_SHIFT;
	unsigned int order = pages ? 63 - __builtin_clzll(pages) : 0;

	return MIN(order, filemap_max_order(f, NULL, index));
}

MMP_EXPORT int mmp_file_write(struct mmp_file *f, uint64_t offset, const void *buf, size_t len)
{
	const uint8_t *src = buf;
	int err = 0;

	if (!f || (!buf && len))
		return -EINVAL;
	if (f->flags & MMP_FILE_RDONLY)
		return -EBADF;
	/* hugetlbfs has no write_iter: vfs_write says EINVAL. */
	if (is_file_hugepages(f))
		return -EINVAL;
	if (offset > MMP_FILE_MAX_SIZE || len > MMP_FILE_MAX_SIZE - offset)
		return -EFBIG;
	pthread_mutex_lock(&f->i_rwsem);
	down_write(&f->mapping.invalidate_lock);
	err = store_reserve(f, offset + len);
	up_write(&f->mapping.invalidate_lock);
	if (!err && len && offset + len > f->i_size)
		filemap_zero_eof(f, f->i_size);
	while (!err && len) {
		uint64_t index = offset >> PAGE_SHIFT, limit = (offset + len + PAGE_SIZE - 1) >> PAGE_SHIFT;
		struct mmp_page *head;
		uint64_t at, n;
		uint32_t pfn;

		down_read(&f->mapping.invalidate_lock);
		pfn = filemap_grab_folio(f, index, write_order(f, index, len), MAX(limit, file_size_pages(f)),
					 NULL, &err);
		up_read(&f->mapping.invalidate_lock);
		if (pfn == NO_PFN)
			break;
		head = pfn_to_page(f->phys, pfn);
		folio_lock(head);
		at = offset - (head->index << PAGE_SHIFT);
		n = MIN(len, ((uint64_t)folio_nr_pages(head) << PAGE_SHIFT) - at);
		memcpy((uint8_t *)pfn_to_virt(f->phys, pfn) + at, src, n);
		page_flag_set(head, PG_dirty);	/* folio_mark_dirty */
		folio_unlock(head);
		__folio_put_refs(f->phys, pfn, 1);
		offset += n;
		src += n;
		len -= n;
		file_extend(f, offset);
	}
	pthread_mutex_unlock(&f->i_rwsem);
	return err;
}

MMP_EXPORT int mmp_file_read(struct mmp_file *f, uint64_t offset, void *buf, size_t len,
			     size_t *nread)
{
	uint8_t *dst = buf;
	size_t done = 0;
	int err = 0;

	if (!f || !nread || (!buf && len))
		return -EINVAL;
	*nread = 0;
	while (len) {
		uint64_t size = __atomic_load_n(&f->i_size, __ATOMIC_ACQUIRE);
		uint64_t index = offset >> PAGE_SHIFT, at, n;
		struct mmp_page *head;
		uint32_t pfn;

		if (offset >= size)
			break;
		n = MIN(len, size - offset);
		pfn = filemap_get_folio(f, index);
		if (pfn == NO_PFN && (shmem_file(f) || is_file_hugepages(f))) {
			/* A hole in shmem or hugetlbfs reads as zeroes and stays a hole (SGP_READ). */
			n = MIN(n, PAGE_SIZE - (offset & (PAGE_SIZE - 1)));
			memset(dst, 0, n);
			goto next;
		}
		if (pfn == NO_PFN) {
			down_read(&f->mapping.invalidate_lock);
			pfn = filemap_grab_folio(f, index, 0, file_size_pages(f), NULL, &err);
			up_read(&f->mapping.invalidate_lock);
			if (pfn == NO_PFN) {
				if (err == -EIO)
					err = 0;	/* truncated meanwhile: a short read */
				break;
			}
		}
		head = pfn_to_page(f->phys, pfn);
		at = offset - (head->index << PAGE_SHIFT);
		n = MIN(n, ((uint64_t)folio_nr_pages(head) << PAGE_SHIFT) - at);
		memcpy(dst, (uint8_t *)pfn_to_virt(f->phys, pfn) + at, n);
		__folio_put_refs(f->phys, pfn, 1);
next:
		offset += n;
		dst += n;
		len -= n;
		done += n;
	}
	*nread = done;
	return done ? 0 : err;
}

MMP_EXPORT int mmp_file_size(struct mmp_file *f, uint64_t *size)
{
	if (!f || !size)
		return -EINVAL;
	*size = __atomic_load_n(&f->i_size, __ATOMIC_ACQUIRE);
	return 0;
}

static void stat_folio(struct address_space *as, uint64_t index, uint32_t pfn, void *arg)
{
	struct mmp_file_stat *st = arg;
	struct mmp_file *f = caa_container_of(as, struct mmp_file, mapping);
	struct mmp_page *head = pfn_to_page(f->phys, pfn);

	if (head->order < 10)
		st->nr_folios[head->order]++;
	if (page_flag_test(head, PG_dirty))
		st->nr_dirty += folio_nr_pages(head);
}

MMP_EXPORT int mmp_file_stat_sized(struct mmp_file *f, struct mmp_file_stat *ust, size_t size)
{
	struct mmp_file_stat k = { 0 };

	if (!f || !ust || size < sizeof(uint64_t))
		return -EINVAL;
	k.size = __atomic_load_n(&f->i_size, __ATOMIC_ACQUIRE);
	spin_lock(&f->mapping.i_pages_lock);
	k.nrpages = f->mapping.nrpages;
	xa_for_each_folio(&f->mapping, 0, stat_folio, &k);
	spin_unlock(&f->mapping.i_pages_lock);
	down_read(&f->mapping.i_mmap_rwsem);
	k.nr_mapped_vmas = f->mapping.nr_mapped_vmas;
	up_read(&f->mapping.i_mmap_rwsem);
	k.writeback_pages = __atomic_load_n(&f->writeback_pages, __ATOMIC_RELAXED);
	copy_struct_to_caller(ust, size, &k, sizeof(k));
	return 0;
}
