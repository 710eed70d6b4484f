/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the tests that look at page-table entries directly (internal headers). */
#ifndef MMP_TEST_PTE_UTIL_H
#define MMP_TEST_PTE_UTIL_H

#include "mm.h"
#include "util.h"

/* What a write fault gives a page of a read-write, non-exec VMA. */
#define F_RW	(MMP_E_PRESENT | MMP_E_USER | MMP_E_ACCESSED | MMP_E_NOEXEC | MMP_E_WRITE | \
		 MMP_E_DIRTY)
#define AD	(MMP_E_ACCESSED | MMP_E_DIRTY)

static inline mmp_pte_t *ptep_at(struct mmp_space *s, uint64_t addr)
{
	mmp_pte_t *pmdp = pmd_offset(s, addr), *ptes = NULL;

	if (pmdp)
		ptes = pte_table(s, *pmdp);
	must(ptes, "a PTE table maps %#llx", (unsigned long long)addr);
	return &ptes[level_index(addr, MMP_PTE)];
}

#endif /* MMP_TEST_PTE_UTIL_H */
