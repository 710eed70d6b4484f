/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reclaim (lib/vmscan.c): isolate folios, then unmap and free or keep each. */
#ifndef MMP_VMSCAN_H
#define MMP_VMSCAN_H

#include "mm_types.h"

/* Reclaim: isolated folios, each holding one extra reference. */
struct folio_list {
	uint32_t *pfns;
	unsigned int nr, cap;
};
bool folio_isolate(struct mmp_space *s, struct folio_list *list, uint32_t head_pfn);
/*
 * Reclaim @list: @pageout for MADV_PAGEOUT's reclaim_pages(), which takes any
 * folio it is given; else the space's whole-memory reclaim, which without swap
 * scans only the file LRU (file and lazyfree folios).
 */
void reclaim_pages(struct mmp_space *s, struct folio_list *list, bool pageout);

#endif /* MMP_VMSCAN_H */
