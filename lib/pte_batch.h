/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Batches of PTEs mapping one large folio (lib/pte_batch.c). */
#ifndef MMP_PTE_BATCH_H
#define MMP_PTE_BATCH_H

#include "mm_types.h"

#define FPB_RESPECT_DIRTY	(1u << 0)
#define FPB_RESPECT_SOFT_DIRTY	(1u << 1)
#define FPB_RESPECT_WRITE	(1u << 2)
#define FPB_MERGE_WRITE		(1u << 3)
#define FPB_MERGE_YOUNG_DIRTY	(1u << 4)

/*
 * Entries from @ptep (the first is *@ptentp, present, of a large folio) that
 * map consecutive pages of that folio with bits equal but for accessed and
 * what @flags lets differ. Merge flags OR write, young, dirty into *@ptentp.
 */
unsigned int folio_pte_batch_flags(struct mmp_space *s, mmp_pte_t *ptep, mmp_pte_t *ptentp,
				   unsigned int max_nr, unsigned int flags);
unsigned int folio_pte_batch(struct mmp_space *s, mmp_pte_t *ptep, mmp_pte_t pte,
			     unsigned int max_nr);

static inline bool pte_batching(struct mmp_space *s)
{
	return READ_ONCE(s->opts[MMP_OPT_PTE_BATCH]);
}

#endif /* MMP_PTE_BATCH_H */
