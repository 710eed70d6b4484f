// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The release table: every rule of the model that changed between the
 * releases MMP_OPT_KERNEL_VERSION accepts (6.12 to 7.1), in release order.
 * Rules older than 6.12 (fork's PTE batching of 6.9, for one) hold for every
 * release modelled and are not listed. The README prints this table; a test
 * compares the two, and tests/mm/test_release.c checks each rule on both sides
 * of its release.
 */
#include <string.h>

#include "mm.h"
#include "release.h"

#define V(a, b)	MMP_KERNEL_VERSION(a, b, 0)

struct release_row {
	enum release_rule rule;
	struct mmp_release_rule pub;
};

static const struct release_row release_table[] = {
	{ RULE_GUARD_REGIONS, { "guard_regions", V(6, 13), NULL, -1, MMP_RULE_SYSCALL_VISIBLE,
	  "MADV_GUARD_INSTALL and MADV_GUARD_REMOVE: PTE markers that fault with SIGSEGV",
	  "Lorenzo Stoakes, \"implement lightweight guard pages\"" } },
	{ RULE_PROCESS_MADVISE_ANY_ADVICE, { "process_madvise_any_advice", V(6, 13), NULL, -1,
	  MMP_RULE_SYSCALL_VISIBLE,
	  "process_madvise of the calling process takes every madvise advice (before: COLD, PAGEOUT, WILLNEED, COLLAPSE)",
	  "Lorenzo Stoakes, \"mm/madvise: unrestrict process_madvise() for current process\"" } },
	{ RULE_HUGE_ZERO_WP_THP, { "huge_zero_wp_thp", V(6, 13), NULL, -1, MMP_RULE_INFERRED,
	  "a write to the huge zero page maps a new THP in its place (before: split into 512 zero-page PTEs, one page copied)",
	  "Dev Jain, \"mm: allocate THP on hugezeropage wp-fault\" (1ced09e0331f)" } },
	{ RULE_PT_RECLAIM, { "pt_reclaim", V(6, 14), "x86_64", MMP_OPT_PT_RECLAIM, 0,
	  "MADV_DONTNEED frees the PTE tables it empties (ARCH_SUPPORTS_PT_RECLAIM)",
	  "Qi Zheng, \"synchronously scan and reclaim empty user PTE pages\"" } },
	{ RULE_TABLE_FREE_RCU, { "table_free_rcu", V(6, 14), "x86_64", MMP_OPT_RCU_TABLE_FREE, 0,
	  "every page table freed by RCU: one that finds no batch page by a call_rcu of its own, not at once after an IPI (semi RCU); bare-metal x86 batches tables to RCU instead of freeing them after the shootdown",
	  "Qi Zheng, \"x86: mm: free page table pages by RCU instead of semi RCU\" (718b13861d22)" } },
	{ RULE_GUARD_ANY_VMA, { "guard_any_vma", V(6, 15), NULL, -1,
	  MMP_RULE_SYSCALL_VISIBLE | MMP_RULE_INFERRED,
	  "guard regions in file-backed, shared and read-only mappings, not only private anonymous",
	  "Lorenzo Stoakes, \"mm: allow guard regions in file-backed and read-only mappings\"" } },
	{ RULE_PAGEMAP_GUARD_REGION, { "pagemap_guard_region", V(6, 15), NULL, -1, MMP_RULE_INFERRED,
	  "pagemap reports a guard marker with PM_GUARD_REGION (bit 58)",
	  "Lorenzo Stoakes, \"fs/proc/task_mmu: add guard region bit to pagemap\"" } },
	{ RULE_PROCESS_MADVISE_LOCK_ONCE, { "process_madvise_lock_once", V(6, 15), NULL, -1,
	  MMP_RULE_INFERRED,
	  "process_madvise MADV_DONTNEED/MADV_FREE: one mmap lock for the whole vector",
	  "SeongJae Park, \"mm/madvise: remove redundant mmap_lock operations from process_madvise()\"" } },
	{ RULE_WP_REUSE_LARGE_ANON, { "wp_reuse_large_anon", V(6, 15), NULL, -1, MMP_RULE_INFERRED,
	  "a write fault reuses a page of a PTE-mapped large anonymous folio that one space maps and nothing else holds (before: always copied)",
	  "David Hildenbrand, \"mm: Copy-on-Write (COW) reuse support for PTE-mapped THP\"" } },
	{ RULE_PROCESS_MADVISE_TLB_BATCH, { "process_madvise_tlb_batch", V(6, 16), NULL, -1,
	  MMP_RULE_INFERRED,
	  "process_madvise MADV_DONTNEED/MADV_FREE: one mmu_gather, one flush, for the whole vector",
	  "SeongJae Park, \"mm/madvise: batch tlb flushes for MADV_DONTNEED and MADV_FREE\"" } },
	{ RULE_MREMAP_MULTI_VMA, { "mremap_multi_vma", V(6, 17), NULL, -1, MMP_RULE_SYSCALL_VISIBLE,
	  "mremap MAYMOVE and FIXED with equal lengths moves every VMA of the range, gaps kept",
	  "Lorenzo Stoakes, \"mm/mremap: permit mremap() move of multiple VMAs\"" } },
	{ RULE_MREMAP_ALIGN_FIRST, { "mremap_align_first", V(6, 17), NULL, -1,
	  MMP_RULE_SYSCALL_VISIBLE,
	  "mremap rounds both lengths to pages before checking them (MREMAP_DONTUNMAP equal lengths)",
	  "Lorenzo Stoakes, the refactoring of \"mm/mremap: permit mremap() move of multiple VMAs\"" } },
	{ RULE_MPROTECT_PTE_BATCH, { "mprotect_pte_batch", V(6, 17), NULL, -1, 0,
	  "mprotect rewrites a large folio's PTEs in batches (contpte blocks stay folded)",
	  "Dev Jain, \"mm: Optimize mprotect() by PTE-batching\" (cac1db8c3aad)" } },
	{ RULE_CONTPTE_GET_EARLY_EXIT, { "contpte_get_early_exit", V(6, 17), "arm64", -1, 0,
	  "contpte ptep_get stops reading the block once it has seen young and dirty",
	  "Xavier Xia, \"arm64/mm: Optimize loop to reduce redundant operations of contpte_ptep_get\"" } },
	{ RULE_MADVISE_VMA_LOCK, { "madvise_vma_lock", V(6, 17), NULL, -1, 0,
	  "MADV_DONTNEED, MADV_DONTNEED_LOCKED and MADV_FREE inside one VMA take its per-VMA lock, not the mmap lock (the mmap read lock across VMAs or when the VMA lock cannot be had; process_madvise tries it range by range, and keeps the mmap lock from the first range that falls back)",
	  "Barry Song, \"mm: use per_vma lock for MADV_DONTNEED\" (a6fde7add78d) and \"mm: madvise: use per_vma lock for MADV_FREE\"" } },
	{ RULE_PROCMAP_QUERY_VMA_LOCK, { "procmap_query_vma_lock", V(6, 18), NULL, -1, MMP_RULE_INFERRED,
	  "PROCMAP_QUERY finds its VMA under RCU and reads it under that VMA's lock, not the mmap lock (the mmap read lock when the VMA lock cannot be had; a COVERING_OR_NEXT lookup walks on past a hole under RCU)",
	  "Suren Baghdasaryan, \"fs/proc/task_mmu: execute PROCMAP_QUERY ioctl under per-vma locks\" (in mm-unstable in September 2025, after 6.17-rc1)" } },
	{ RULE_THP_DISABLE_EXCEPT_ADVISED, { "thp_disable_except_advised", V(6, 18), NULL, -1,
	  MMP_RULE_SYSCALL_VISIBLE | MMP_RULE_INFERRED,
	  "prctl(PR_SET_THP_DISABLE) takes PR_THP_DISABLE_EXCEPT_ADVISED: no THP but in MADV_HUGEPAGE VMAs and by MADV_COLLAPSE (before: any flag is EINVAL)",
	  "David Hildenbrand and Usama Arif, \"prctl: extend PR_SET_THP_DISABLE to optionally exclude VM_HUGEPAGE\" (posted August 2025)" } },
	{ RULE_GUARD_VMA_FLAG, { "guard_vma_flag", V(6, 19), NULL, -1,
	  MMP_RULE_SYSCALL_VISIBLE | MMP_RULE_INFERRED,
	  "guard install sets the sticky VMA flag VM_MAYBE_GUARD (smaps gu); only anonymous VMAs still get an anon_vma; fork copies a flagged VMA's tables (6.18.y stable took it)",
	  "Lorenzo Stoakes, \"mm: set the VM_MAYBE_GUARD flag on guard region install\" (49e14dabed7a)" } },
	{ RULE_PT_RECLAIM, { "pt_reclaim", V(7, 0), NULL, MMP_OPT_PT_RECLAIM, MMP_RULE_INFERRED,
	  "PT_RECLAIM on every architecture with RCU table freeing (arm64, riscv64, loongarch64)",
	  "Qi Zheng, \"mm: make PT_RECLAIM depends on MMU_GATHER_RCU_TABLE_FREE\"" } },
	{ RULE_TABLE_FREE_RCU, { "table_free_rcu", V(7, 0), NULL, MMP_OPT_RCU_TABLE_FREE,
	  MMP_RULE_INFERRED,
	  "the single table by RCU on every back end: CONFIG_PT_RECLAIM, which makes it so, on wherever RCU table freeing is",
	  "Qi Zheng, \"mm: make PT_RECLAIM depends on MMU_GATHER_RCU_TABLE_FREE\" (9c8c02df3f87)" } },
	{ RULE_CLEAR_SEQUENTIAL, { "clear_sequential", V(7, 0), NULL, MMP_OPT_HUGE_CLEAR_ORDER, 0,
	  "folio_zero_user clears a huge folio in ascending runs with clear_pages, the faulting page's neighbours last; copies keep target-last",
	  "Ankur Arora, \"mm: folio_zero_user: clear pages sequentially\" (9890ecab6ad9) and \"cache neighbouring pages\"" } },
	{ RULE_FILE_BATCHED_UNMAP, { "file_batched_unmap", V(7, 0), NULL, -1, MMP_RULE_INFERRED,
	  "reclaim unmaps a large file folio in batches, as it does a lazyfree one",
	  "Baolin Wang, \"mm: rmap: support batched unmapping for file large folios\"" } },
	{ RULE_COLLAPSE_PAST_EMPTY_PMD, { "collapse_past_empty_pmd", V(7, 0), NULL, -1,
	  MMP_RULE_SYSCALL_VISIBLE | MMP_RULE_INFERRED,
	  "MADV_COLLAPSE goes on past a PMD range with no page table to the ranges after it (before: it stops there with -EINVAL, the later ranges not collapsed)",
	  "\"mm/khugepaged: continue to collapse on SCAN_PMD_NONE\" (in mm-unstable in November 2025)" } },
	{ RULE_MPROTECT_SMALL_FOLIO, { "mprotect_small_folio", V(7, 1), NULL,
	  MMP_OPT_MPROTECT_SMALL_FOLIO, MMP_RULE_INFERRED,
	  "change_pte_range takes a branch of its own for a small folio (the 6.17 4K regression)",
	  "Pedro Falcato, \"mm/mprotect: special-case small folios when applying write permissions\"" } },
};

#define NR_ROWS	(sizeof(release_table) / sizeof(release_table[0]))

/* Is @arch of one of the families in the space-separated list @families? */
static bool arch_in(const struct mmp_arch *arch, const char *families)
{
	size_t fam = strcspn(arch->name, "-");

	if (!families)
		return true;
	for (const char *p = families; *p; p += strspn(p, " ")) {
		size_t n = strcspn(p, " ");

		if (n == fam && !strncmp(p, arch->name, n))
			return true;
		p += n;
	}
	return false;
}

static unsigned int release_rules_of(const struct mmp_arch *arch, long version)
{
	unsigned int rules = 0;

	for (size_t i = 0; i < NR_ROWS; i++)
		if (version >= release_table[i].pub.since && arch_in(arch, release_table[i].pub.arches))
			rules |= 1u << release_table[i].rule;
	return rules;
}

/*
 * Before table_free_rcu, bare-metal x86 put a table with the pages
 * (native_tlb_remove_table: tlb_remove_page), freed once the shootdown's IPIs
 * had waited for GUP-fast; only guests whose TLB flush is a hypercall (KVM's
 * PV flush, Hyper-V, Xen) switched to tlb_remove_table, semi RCU, which arm64
 * and riscv64 always had.
 */
static enum mmp_table_free table_free_before(const struct mmp_arch *arch)
{
	return arch_in(arch, "x86_64") ? MMP_TABLE_FREE_NATIVE : MMP_TABLE_FREE_SEMI_RCU;
}

void space_apply_release(struct mmp_space *s)
{
	unsigned int rules = release_rules_of(s->arch, READ_ONCE(s->opts[MMP_OPT_KERNEL_VERSION]));

	WRITE_ONCE(s->release_rules, rules);
	WRITE_ONCE(s->table_free_default, rules & (1u << RULE_TABLE_FREE_RCU) ?
					  MMP_TABLE_FREE_RCU : table_free_before(s->arch));
}

MMP_EXPORT const struct mmp_release_rule *mmp_release_rule(unsigned int i)
{
	return i < NR_ROWS ? &release_table[i].pub : NULL;
}

MMP_EXPORT int mmp_space_follows(struct mmp_space *s, const char *name)
{
	int err = -ENOENT;

	if (!s || !name)
		return -EINVAL;
	for (size_t i = 0; i < NR_ROWS; i++) {
		if (strcmp(release_table[i].pub.name, name))
			continue;
		if (release_follows(s, release_table[i].rule))
			return 1;
		err = 0;
	}
	return err;
}
