/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The back end interface: what an architecture provides. A back end is a
 * struct mmp_arch of settings (its entry format, geometry, MMU and TLB
 * model, cost table); its entry operations are static inline in its arch
 * folder (arch/<folder>/entry_ops.h, with arch/generic/entry_ops.h for what it
 * leaves out, the kernel's "#ifndef set_ptes" fallbacks). Core code calls the
 * kernel's names (ptep_get, set_ptes, get_and_clear_full_ptes, pte_batch_hint)
 * and never learns how an architecture implements them.
 */
#ifndef MMP_ARCH_H
#define MMP_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#include <mmprim/mmprim.h>

#include "mmp_formats.h"

struct mmp_space;

/* Entry accessors inline whatever their size: the kernel's __always_inline. */
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* A raw page-table entry of any level, in the architecture's own format. */
typedef uint64_t mmp_pte_t;

/*
 * Page-table levels, counted from the leaf: an entry at level l maps
 * 4 KiB << 9 * l. A space's top table (its PGD) is level arch->levels - 1;
 * the levels above it are folded into it, as the kernel folds them: with four
 * levels the P4D is the PGD (pgtable-nop4d), with three the PUD is too
 * (pgtable-nopud). MMP_PGD5 is the PGD of a 5-level space only.
 */
enum mmp_level {
	MMP_PTE = 0,
	MMP_PMD = 1,
	MMP_PUD = 2,
	MMP_P4D = 3,
	MMP_PGD5 = 4,
	MMP_MAX_LEVELS = 5,
};

/*
 * Architecture-neutral view of an entry. The back end encodes these into its
 * real bits and decodes them back; core mm only ever sees these.
 */
#define MMP_E_PRESENT	(1u << 0)  /* pte_present() but PROT_NONE: mapped and accessible */
#define MMP_E_WRITE	(1u << 1)  /* pte_write(): writable (arm64: DBM) */
#define MMP_E_USER	(1u << 2)
#define MMP_E_ACCESSED	(1u << 3)  /* pte_young() */
#define MMP_E_DIRTY	(1u << 4)  /* pte_dirty(): hardware or software dirty */
#define MMP_E_SOFT_DIRTY (1u << 5)
#define MMP_E_SPECIAL	(1u << 6)  /* no folio behind it (zero page) */
#define MMP_E_NOEXEC	(1u << 7)
#define MMP_E_PROTNONE	(1u << 8)  /* PROT_NONE: kept but not valid for hardware */
#define MMP_E_TABLE	(1u << 9)  /* non-leaf: points to the next level's table */
#define MMP_E_LEAF	(1u << 10) /* leaf above PTE level (huge PMD / block) */
#define MMP_E_CONT	(1u << 11) /* contiguous hint (arm64 PTE_CONT, riscv napot) */

/*
 * The entry formats built in, one per arch folder (arch/<folder>/format.h):
 * MMP_FORMAT_x86_64, MMP_FORMAT_arm64, ... Core mm decodes and encodes
 * entries with the folder's static inline accessors, chosen by this number
 * (lib/format_dispatch.h), never through a call.
 */
enum mmp_format {
#define MMP_FORMAT(f) MMP_FORMAT_##f,
	MMP_FORMATS
#undef MMP_FORMAT
	MMP_NR_FORMATS
};

/* What the hardware walker was asked to do. */
#define MMP_ACCESS_READ		0u
#define MMP_ACCESS_WRITE	1u

/*
 * Modeled hardware cost, in cycles, of the events the counters count. A
 * simulator does not pay for TLB invalidations, barriers or IPIs; a modeled time
 * computed from exact counts shows what hardware would.
 */
struct mmp_cost_model {
	double ghz;
	double entry_read;	/* one page-table entry load */
	double entry_write;	/* one entry store or atomic update */
	double tlbi_page;	/* invalidating one page (invlpg, TLBI VALE1IS) */
	double flush_op;	/* per flush operation: the DSB ISH, or the flush call */
	double flush_all;	/* a whole-mm flush (CR3 reload / TLBI ASIDE1IS + DSB) */
	double ipi;		/* one shootdown IPI, sender side, until acked */
	double page_walk;	/* a hardware walk on a TLB miss */
	double rcu_sync;	/* freeing one table the slow way: IPI every CPU and wait */
	double rcu_call;	/* queueing one table batch with call_rcu */
	const char *source;	/* where the figures come from */
};

struct mmp_arch {
	const char *name;
	const char *description;

	/*
	 * ---- format ----
	 * Whose static inline accessors encode and decode this back end's
	 * entries: <folder>_mk_entry() for a present, protnone, table or leaf
	 * entry at a level; <folder>_entry_flags() (MMP_E_* flags, 0 for
	 * pte_none) and <folder>_entry_pfn() to decode (arch/<folder>/format.h).
	 */
	enum mmp_format format;

	/*
	 * ---- entry operations ----
	 * ptep_get, set_ptes, get_and_clear_full_ptes and the rest are static
	 * inline, per arch folder: arch/<folder>/entry_ops.h defines those the
	 * folder does its own way, arch/generic/entry_ops.h the others
	 * (lib/entry_dispatch.h says how they are chosen).
	 */

	/* ---- hardware model (the walker itself: hw_update_leaf in entry_ops.h) ---- */
	/*
	 * Who sets accessed and dirty: the MMU itself (x86, arm64 with HAFDBS),
	 * or the fault handler after an access fault (software A/D), or either
	 * as MMP_OPT_HW_AD says (riscv: Svadu or Svade). Tests and the
	 * conformance suite take their expectations from this, never from a
	 * back end's name.
	 */
	enum mmp_ad_model {
		MMP_AD_HARDWARE,
		MMP_AD_SOFTWARE,
		MMP_AD_SWITCHABLE,
	} ad_model;
	/* Broadcast TLB invalidation (arm64 TLBI ... IS) instead of IPIs (x86). */
	bool tlbi_broadcast;
	/*
	 * MMU_GATHER_MERGE_VMAS (x86, loongarch): one mmu_gather flushes once
	 * for all the VMAs it covers; without it tlb_end_vma flushes each
	 * VMA's range as the walk leaves it (arm64, riscv64, the reference).
	 */
	bool tlb_merge_vmas;
	/* A range flush longer than this many pages flushes the whole mm. */
	unsigned int tlb_flush_ceiling;
	/* Size of a contiguous-PTE TLB entry (arm64 contpte: 16), 0 when none. */
	unsigned int cont_shift;
	/*
	 * Entries of a contiguous block the format forms over a large folio
	 * (arm64 contpte, riscv64 Svnapot: 16), 0 when it has none: one
	 * pte_batch_hint() covers a block, and ptep_get() gathers A/D over it.
	 */
	unsigned int cont_ptes;
	/*
	 * Levels at which hugetlb maps a page as cont_ptes contiguous entries
	 * with the contiguous bit (arm64's num_contig_ptes, 4K granule: 16 PTEs
	 * for 64 KiB, 16 PMDs for 32 MiB), bit l for level l; 0 when none.
	 */
	unsigned int hugetlb_cont_levels;
	/*
	 * hugetlb maps PUD leaves (x86 PDPE1GB, arm64 level 1 blocks, riscv
	 * gigapages): 1 GiB pages. Needs MMP_PUD in @leaf_levels.
	 */
	bool hugetlb_pud;
	/* MMP_E_* bits the format cannot hold (arm64 has no soft-dirty bit). */
	unsigned int eflags_unsupported;

	/*
	 * ---- geometry ----
	 * @levels: 3, 4 or 5. @task_size: TASK_SIZE, user addresses end below
	 * it (MAP_FIXED included). @map_window: DEFAULT_MAP_WINDOW, where mmap
	 * without a hint above it stays (x86 LA57, riscv Sv57: 47 bits); 0 means
	 * task_size. The top-down mmap base is computed from it (lib/space.c).
	 * @leaf_levels: bit l set when the format can hold a leaf at level l
	 * (huge pages, blocks, megapages); PTE and PMD must be among them.
	 */
	unsigned int levels;
	uint64_t task_size;
	uint64_t map_window;
	unsigned int leaf_levels;

	/* What the hardware would pay per counted event (hw/cost.c). */
	const struct mmp_cost_model *cost;
};

/*
 * The registry: every back end built into the library, in one list
 * (arch/meson.build; lib/arch.c reads it from the generated mmp_arch_list.h).
 */
const struct mmp_arch *mmp_arch_find(const char *name);
/*
 * Tests only: add a back end that is not in the list (a deliberately broken
 * copy, to prove the conformance suite catches it). 0, or -ENOSPC, -EEXIST.
 */
int mmp_arch_register_extra(const struct mmp_arch *arch);

/* arch/generic: the reference back end, whose settings fill what another leaves unset. */
extern const struct mmp_arch mmp_arch_generic;
void mmp_arch_fill_generic(struct mmp_arch *arch);

#endif /* MMP_ARCH_H */
