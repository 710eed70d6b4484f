/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The text forms of introspection: /proc/PID/smaps of a space, and a
 * pagemap-like listing of a range (mmprim/introspect.h). The text is built in
 * memory under the mmap read lock, then written out with no lock held, so a
 * slow FILE never holds up a fault.
 */
#include <limits.h>
#include <string.h>

#include "introspect_walk.h"
#include "mmap_lock.h"

/* Where a name starts on a map line: the kernel's seq_setwidth(25 + 6 * sizeof(void *) - 1). */
#define MAPS_NAME_COLUMN	72

static void smaps_field(FILE *m, const char *name, uint64_t bytes)
{
	fprintf(m, "%-16s%8llu kB\n", name, (unsigned long long)(bytes >> 10));
}

/* show_map_vma and __show_smap. */
static void show_smap(FILE *m, const struct mmp_vma_info *v)
{
	/*
	 * The kernel's VmFlags mnemonics, in its bit order (mr and me always: no
	 * mprotect limits; a hugetlb VMA is VM_DONTEXPAND and VM_HUGETLB).
	 */
	static const struct {
		uint32_t flag;
		const char *name;
	} vm_flags[] = {
		{ MMP_VMA_GROWSDOWN, "gd" },  { MMP_VMA_MAYBE_GUARD, "gu" }, { MMP_VMA_LOCKED, "lo" },
		{ MMP_VMA_SEQ_READ, "sr" },   { MMP_VMA_RAND_READ, "rr" }, { MMP_VMA_DONTCOPY, "dc" },
		{ MMP_VMA_HUGETLB, "de" },    { MMP_VMA_LOCKONFAULT, "lf" }, { MMP_VMA_ACCOUNT, "ac" },
		{ MMP_VMA_NORESERVE, "nr" },  { MMP_VMA_HUGETLB, "ht" },
		{ MMP_VMA_WIPEONFORK, "wf" }, { MMP_VMA_SOFTDIRTY, "sd" }, { MMP_VMA_HUGEPAGE, "hg" },
		{ MMP_VMA_NOHUGEPAGE, "nh" }, { MMP_VMA_MERGEABLE, "mg" }, { MMP_VMA_DROPPABLE, "dp" },
		{ MMP_VMA_SEALED, "sl" },
	};
	bool hugetlb = v->flags & MMP_VMA_HUGETLB;
	uint64_t page_size = v->page_size ? v->page_size : MMP_PAGE_SIZE;
	long pos0 = ftell(m);
	int len;

	fprintf(m, "%08llx-%08llx %c%c%c%c %08llx 00:00 %llu ", (unsigned long long)v->start,
		(unsigned long long)v->end, v->prot & MMP_PROT_READ ? 'r' : '-',
		v->prot & MMP_PROT_WRITE ? 'w' : '-', v->prot & MMP_PROT_EXEC ? 'x' : '-',
		v->flags & MMP_VMA_SHARED ? 's' : 'p',
		(unsigned long long)(v->flags & MMP_VMA_FILE ? v->pgoff * MMP_PAGE_SIZE : 0),
		(unsigned long long)(v->flags & MMP_VMA_FILE ? v->file_id : 0));
	len = (int)(ftell(m) - pos0);
	/*
	 * Where the kernel prints the path: the file's number (shared anonymous:
	 * /dev/zero; MAP_HUGETLB: the unlinked hugetlbfs file).
	 */
	if (hugetlb)
		fprintf(m, "%*s /anon_hugepage (deleted)",
			len < MAPS_NAME_COLUMN ? MAPS_NAME_COLUMN - len : 0, "");
	else if (v->flags & MMP_VMA_SHMEM_ANON)
		fprintf(m, "%*s /dev/zero (deleted)", len < MAPS_NAME_COLUMN ? MAPS_NAME_COLUMN - len : 0,
			"");
	else if (v->flags & MMP_VMA_FILE)
		fprintf(m, "%*s mmp_file:%llu", len < MAPS_NAME_COLUMN ? MAPS_NAME_COLUMN - len : 0,
			"", (unsigned long long)v->file_id);
	else if (v->flags & MMP_VMA_HEAP)
		fprintf(m, "%*s [heap]", len < MAPS_NAME_COLUMN ? MAPS_NAME_COLUMN - len : 0, "");
	fputc('\n', m);
	smaps_field(m, "Size:", v->end - v->start);
	smaps_field(m, "KernelPageSize:", page_size);
	smaps_field(m, "MMUPageSize:", page_size);
	smaps_field(m, "Rss:", v->rss);
	smaps_field(m, "Pss:", v->pss);
	smaps_field(m, "Pss_Dirty:", v->pss_dirty);
	smaps_field(m, "Shared_Clean:", v->shared_clean);
	smaps_field(m, "Shared_Dirty:", v->shared_dirty);
	smaps_field(m, "Private_Clean:", v->private_clean);
	smaps_field(m, "Private_Dirty:", v->private_dirty);
	smaps_field(m, "Referenced:", v->referenced);
	smaps_field(m, "Anonymous:", v->anonymous);
	smaps_field(m, "KSM:", 0);
	smaps_field(m, "LazyFree:", v->lazyfree);
	smaps_field(m, "AnonHugePages:", v->anon_huge_pages);
	/* Not the kernel's: the anonymous memory of each mTHP size, where there is some. */
	for (unsigned int o = 2; o < MMP_PMD_ORDER; o++) {
		char name[24];

		if (!v->anon_by_order[o])
			continue;
		snprintf(name, sizeof(name), "AnonMTHP-%lukB:", (MMP_PAGE_SIZE << o) >> 10);
		smaps_field(m, name, v->anon_by_order[o]);
	}
	smaps_field(m, "ShmemPmdMapped:", 0);
	smaps_field(m, "FilePmdMapped:", 0);
	smaps_field(m, "Shared_Hugetlb:", v->shared_hugetlb);
	smaps_field(m, "Private_Hugetlb:", v->private_hugetlb);
	smaps_field(m, "Swap:", v->swap);
	smaps_field(m, "SwapPss:", 0);
	smaps_field(m, "Locked:", v->locked);
	fprintf(m, "%-16s%8u\n", "THPeligible:", v->thp_orders ? 1u : 0u);
	fprintf(m, "VmFlags: %s%s%s%smr %sme %s", v->prot & MMP_PROT_READ ? "rd " : "",
		v->prot & MMP_PROT_WRITE ? "wr " : "", v->prot & MMP_PROT_EXEC ? "ex " : "",
		v->flags & MMP_VMA_SHARED ? "sh " : "", v->flags & MMP_VMA_MAYWRITE ? "mw " : "",
		v->flags & MMP_VMA_SHARED ? "ms " : "");
	for (size_t i = 0; i < sizeof(vm_flags) / sizeof(vm_flags[0]); i++)
		if (v->flags & vm_flags[i].flag)
			fprintf(m, "%s ", vm_flags[i].name);
	fputc('\n', m);
}

/* Hand the text built in @text (@len bytes) to the caller's FILE or buffer. */
static int emit(char *text, size_t len, FILE *f, char *buf, size_t size)
{
	int ret = len > INT_MAX ? -ENOMEM : (int)len;

	if (f) {
		if (ret >= 0 && fwrite(text, 1, len, f) != len)
			ret = -EIO;
	} else if (size) {
		size_t n = MIN(len, size - 1);

		memcpy(buf, text, n);
		buf[n] = '\0';
	}
	free(text);
	return ret;
}

static int smaps(struct mmp_space *s, FILE *f, char *buf, size_t size)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!s || (!f && !buf && size))
		return -EINVAL;
	m = open_memstream(&text, &len);
	if (!m)
		return -ENOMEM;
	mmap_read_lock(s);
	for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next) {
		struct mmp_vma_info v;

		introspect_vma(s, vma, &v);
		show_smap(m, &v);
	}
	mmap_read_unlock(s);
	if (fclose(m)) {
		free(text);
		return -ENOMEM;
	}
	return emit(text, len, f, buf, size);
}

MMP_EXPORT int mmp_space_smaps(struct mmp_space *s, FILE *f)
{
	return f ? smaps(s, f, NULL, 0) : -EINVAL;
}

MMP_EXPORT int mmp_space_smaps_buf(struct mmp_space *s, char *buf, size_t size)
{
	return smaps(s, NULL, buf, size);
}

/* ---- pagemap, one line per page ------------------------------------------------------- */

static int pagemap_line(struct mmp_space *s, const struct introspect_page *pg, void *arg)
{
	static const struct {
		uint32_t flag;
		const char *name;
	} folio_flags[] = {
		{ MMP_FOLIO_ANON, "anon" },
		{ MMP_FOLIO_LAZYFREE, "lazyfree" },
		{ MMP_FOLIO_DIRTY, "dirty" },
		{ MMP_FOLIO_SWAPBACKED, "swapbacked" },
		{ MMP_FOLIO_PINNED, "pinned" },
		{ MMP_FOLIO_ANON_EXCLUSIVE, "exclusive" },
		{ MMP_FOLIO_ZERO, "zero" },
	};
	unsigned int n = s->arch->cont_ptes;
	FILE *m = arg;

	if (!entry_present(pg->eflags))
		return 0;
	for (unsigned int j = 0; j < pg->nr; j++) {
		uint64_t addr = pg->addr + ((uint64_t)j << PAGE_SHIFT);
		bool zero = pg->folio_flags & MMP_FOLIO_ZERO;

		fprintf(m, "%012llx %016llx pfn %#llx %s order %u mapcount %d/%d ref %d",
			(unsigned long long)addr,
			(unsigned long long)introspect_pagemap_word(s, pg, pg->pfn + j),
			(unsigned long long)(pg->pfn + j), pg->level == MMP_PMD ? "pmd" : "pte",
			pg->folio_order, zero ? 0 : introspect_page_mapcount(s, pg, pg->pfn + j),
			pg->folio_mapcount, pg->refcount);
		fprintf(m, " %c%c%c", pg->eflags & MMP_E_WRITE ? 'w' : '-',
			pg->gathered & MMP_E_ACCESSED ? 'a' : '-',
			pg->gathered & MMP_E_DIRTY ? 'd' : '-');
		for (size_t i = 0; i < sizeof(folio_flags) / sizeof(folio_flags[0]); i++)
			if (pg->folio_flags & folio_flags[i].flag)
				fprintf(m, " %s", folio_flags[i].name);
		if (n && pg->level == MMP_PTE)
			fprintf(m, " block %#llx %s",
				(unsigned long long)(addr & ~((uint64_t)n * PAGE_SIZE - 1)),
				pg->eflags & MMP_E_CONT ? "folded" : "unfolded");
		fputc('\n', m);
	}
	return 0;
}

static int pagemap_print(struct mmp_space *s, uint64_t addr, uint64_t len, FILE *f, char *buf,
			 size_t size)
{
	char *text = NULL;
	size_t tlen = 0;
	uint64_t end;
	FILE *m;

	if (!s || (!f && !buf && size) || (addr & ~PAGE_MASK) || (len & ~PAGE_MASK))
		return -EINVAL;
	/* Past the task size there is nothing to list, as pagemap reads there return nothing. */
	addr = MIN(addr, TASK_SIZE(s));
	end = addr + MIN(len, TASK_SIZE(s) - addr);
	m = open_memstream(&text, &tlen);
	if (!m)
		return -ENOMEM;
	mmap_read_lock(s);
	for (struct mmp_vma *vma = vma_find_next(s, addr); vma && vma->start < end;
	     vma = vma->vm_next)
		introspect_walk(s, MAX(vma->start, addr), MIN(vma->end, end), pagemap_line, m);
	mmap_read_unlock(s);
	if (fclose(m)) {
		free(text);
		return -ENOMEM;
	}
	return emit(text, tlen, f, buf, size);
}

MMP_EXPORT int mmp_space_pagemap_print(struct mmp_space *s, uint64_t addr, uint64_t len, FILE *f)
{
	return f ? pagemap_print(s, addr, len, f, NULL, 0) : -EINVAL;
}

MMP_EXPORT int mmp_space_pagemap_print_buf(struct mmp_space *s, uint64_t addr, uint64_t len,
					   char *buf, size_t size)
{
	return pagemap_print(s, addr, len, NULL, buf, size);
}
