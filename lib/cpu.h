/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Simulated CPUs: the TLB and the paging-structure cache of each, for the
 * hardware model (lib/cpu.c, lib/tlb.c) and whoever checks it (verify).
 */
#ifndef MMP_CPU_H
#define MMP_CPU_H

#include "internal.h"


struct mmp_tlb_entry {
	uint64_t key;		/* aligned va | generation << 6 | shift << 1 | 1 */
	uint64_t pfn;		/* first frame of the translation */
	uint8_t write;		/* writes allowed */
	uint8_t dirty;		/* the entry was dirty when cached: a write needs no walk */
	uint8_t shift;
	uint8_t cls;		/* index of shift in cpu->shifts */
	uint32_t set;		/* its set, whose occupancy it counts in */
};

/*
 * How many ways of a set hold live translations, and which (bit w: way w; sets
 * of up to 64 ways), valid while @gen is the CPU's.
 */
struct mmp_tlb_set {
	uint32_t live;
	uint32_t gen;
	uint64_t mask;
};

#define MMP_PWC_ENTRIES	16

struct mmp_cpu {
	struct mmp_space *space;
	int index;		/* in space->cpus */
	pthread_t thread;
	/*
	 * Held for one access (translate + copy). A shootdown takes it, so the
	 * flusher waits for an access in flight as an IPI waits for its ack.
	 */
	mmp_spinlock_t lock;
	unsigned int tlb_sets, tlb_ways;
	unsigned int victim;
	bool last_lookup_missed;	/* the last translate found no entry of any size */
	unsigned int gen;	/* a full flush moves to the next generation (6 bits) */
	unsigned int nr_shifts;
	unsigned int shifts[3];	/* translation sizes this MMU caches: 4K, contpte, PMD */
	/* Live entries per size: a lookup skips sizes the TLB holds none of. */
	unsigned int nr_live[3];
	struct mmp_tlb_entry *tlb;
	/* Per set: a full set takes its victim without looking for a free way. */
	struct mmp_tlb_set *sets;
	/*
	 * Paging-structure cache (x86's PDE cache, arm64's walk cache): the
	 * PTE tables of recently walked 2 MiB regions, so a walk reads only the
	 * leaf. Every invalidation on this CPU empties it (a new pwc_gen): the
	 * kernel frees no table before such an invalidation.
	 */
	struct mmp_pwc_entry {
		uint64_t region;	/* va >> PMD_SHIFT */
		uint64_t gen;
		mmp_pte_t *ptes;
	} pwc[MMP_PWC_ENTRIES];
	uint64_t pwc_gen;
};

static inline uint64_t tlb_key(struct mmp_cpu *cpu, uint64_t va, unsigned int shift)
{
	return (va & ~((1ULL << shift) - 1)) | cpu->gen << 6 | shift << 1 | 1;
}

/* Is @te a translation of the current generation? (A dropped key, 0, is of none.) */
static inline bool tlb_entry_live(struct mmp_cpu *cpu, struct mmp_tlb_entry *te)
{
	return ((te->key >> 6) & 63) == cpu->gen;
}

/* Drop one translation (invlpg of the entry). */
static inline void tlb_entry_drop(struct mmp_cpu *cpu, struct mmp_tlb_entry *te)
{
	if (tlb_entry_live(cpu, te)) {
		struct mmp_tlb_set *st = &cpu->sets[te->set];

		cpu->nr_live[te->cls]--;
		st->live--;
		/* its way: an exact division by the entry size, no divide by the ways */
		unsigned int way = te - &cpu->tlb[(size_t)te->set * cpu->tlb_ways];

		st->mask &= ~(1ULL << (way % 64));
	}
	te->key = 0;
}

/* Drop this CPU's translations (lib/tlb.c). */
void tlb_invalidate_local(struct mmp_cpu *cpu, uint64_t start, uint64_t end, unsigned int shift);
void tlb_invalidate_all(struct mmp_cpu *cpu);

#endif /* MMP_CPU_H */
