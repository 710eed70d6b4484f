/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read-only walk behind mmprim/introspect.h (lib/introspect.c), shared
 * with its text forms (lib/smaps.c): what maps each page of a range, read
 * under the locks a kernel smaps or pagemap walk takes.
 */
#ifndef MMP_INTROSPECT_WALK_H
#define MMP_INTROSPECT_WALK_H

#include <mmprim/introspect.h>

#include "mm.h"

/* One page, or the pages of one huge PMD in the range (nr), as the walk found them. */
struct introspect_page {
	uint64_t addr;
	enum mmp_level level;		/* of the entry read: MMP_PTE or MMP_PMD */
	unsigned int nr;		/* pages from addr this entry maps in the range */
	mmp_pte_t entry;		/* raw; 0 for a hole */
	unsigned int eflags;		/* MMP_E_* of entry */
	unsigned int gathered;		/* eflags with A/D gathered over its contiguous block */
	uint64_t pfn;			/* frame at addr, MMP_NO_PFN when none */
	uint64_t folio_pfn;
	unsigned int folio_order;
	unsigned int folio_flags;	/* MMP_FOLIO_* */
	int folio_mapcount, page_mapcount, refcount, pincount;
};

/* Called under the entry's table lock; nonzero stops the walk and is returned. */
typedef int (*introspect_fn)(struct mmp_space *s, const struct introspect_page *pg, void *arg);

/* [addr, end) inside one VMA, the mmap lock held for reading. */
int introspect_walk(struct mmp_space *s, uint64_t addr, uint64_t end, introspect_fn fn, void *arg);
void introspect_folio(struct mmp_space *s, uint64_t pfn, struct introspect_page *pg);
/* The VMA summed as smaps does, the mmap lock held for reading. */
void introspect_vma(struct mmp_space *s, struct mmp_vma *vma, struct mmp_vma_info *v);
/* The mappings of page @pfn of @pg's folio, and its pagemap word. */
int introspect_page_mapcount(struct mmp_space *s, const struct introspect_page *pg, uint64_t pfn);
uint64_t introspect_pagemap_word(struct mmp_space *s, const struct introspect_page *pg,
				 uint64_t pfn);

#endif /* MMP_INTROSPECT_WALK_H */
