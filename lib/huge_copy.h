/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Clearing and copying huge folios sub-page by sub-page, in a cache-aware order (lib/huge_copy.c). */
#ifndef MMP_HUGE_COPY_H
#define MMP_HUGE_COPY_H

#include "mm_types.h"

/*
 * One ascending run [first, first + nr) of a huge folio's sub-pages. @far: away
 * from the target, a streaming (non-temporal) variant may bypass the caches.
 */
typedef void (*subpages_fn)(void *arg, unsigned int first, unsigned int nr, bool far);
/* The sub-pages of the folio around @addr_hint in @order (the space's clear or copy order). */
void process_huge_page(struct mmp_space *s, enum mmp_huge_order order, uint64_t addr_hint,
		       unsigned int nr_pages, subpages_fn fn, void *arg);
/* @order's runs for target sub-page @target; @nbhd sub-pages for neighbourhood-last, 0: default. */
void huge_page_walk(enum mmp_huge_order order, unsigned int target, unsigned int nr_pages,
		    unsigned int nbhd, subpages_fn fn, void *arg);
/* The same as sub-page indices in visiting order, for tests; returns how many (@nr_pages). */
unsigned int huge_page_order(enum mmp_huge_order order, unsigned int target, unsigned int nr_pages,
			     unsigned int nbhd, unsigned int *out);
/* Neighbourhood of neighbourhood-last when MMP_OPT_HUGE_NEIGHBOURHOOD is 0, from the host L2. */
unsigned int huge_neighbourhood_default(void);
void folio_zero_user(struct mmp_space *s, uint32_t pfn, unsigned int order, uint64_t addr_hint);
void copy_user_large_folio(struct mmp_space *s, uint32_t dst, uint32_t src, unsigned int order,
			   uint64_t addr_hint);

#endif /* MMP_HUGE_COPY_H */
