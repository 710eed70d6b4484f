/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Simulated CPUs: the TLB and the paging-structure cache of each, for the
 * hardware model (hw/cpu.c, hw/tlbflush.c) and whoever checks it (verify).
 */
#ifndef MMP_CPU_H
#define MMP_CPU_H

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "mm_types.h"
#include "page_alloc.h"
#include "vmstat.h"


struct mmp_tlb_entry {
	uint64_t key;		/* aligned va | generation << 6 | shift << 1 | 1 */
	uint64_t pfn;		/* first frame of the translation */
	uint8_t write;		/* writes allowed */
	uint8_t dirty;		/* the entry was dirty when cached: a write needs no walk */
	uint8_t shift;
	uint8_t cls;		/* index of shift in cpu->shifts */
	uint32_t set;		/* its set (fixed for the slot), whose occupancy it counts in */
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

/*
 * Size classes, indices of cpu->shifts: the page, the contiguous block if
 * any, then the PMD, then the PUD where hugetlb maps 1 GiB pages.
 */
enum { TLB_CLASS_PAGE, TLB_CLASS_CONT };

struct mmp_cpu {
	struct mmp_space *space;
	int index;		/* in space->cpus */
	const void *thread;	/* cpu_thread_id() of the thread that attached it */
	/*
	 * Held for one access (translate + copy). A shootdown takes it, so the
	 * flusher waits for an access in flight as an IPI waits for its ack.
	 */
	mmp_spinlock_t lock;
	/* Lockless walks with IRQs off on this CPU, for the IPIs to wait on (lib/irqflags.h). */
	uint64_t irqs_off;
	unsigned int tlb_sets, tlb_ways;
	unsigned int victim;
	bool last_lookup_missed;	/* the last translate found no entry of any size */
	unsigned int gen;	/* a full flush moves to the next generation (6 bits) */
	unsigned int nr_shifts;
	unsigned int shifts[4];	/* translation sizes this MMU caches: 4K, contpte, PMD, PUD */
	unsigned int pmd_class, pud_class;	/* their indices (pud_class: hugetlb_pud only) */
	/* Live entries per size; a lookup and a flush probe only the sizes live_classes names. */
	unsigned int nr_live[4];
	unsigned int live_classes;	/* bit k set while nr_live[k] > 0: what a lookup probes */
	/* Per size, a key is (va & key_mask) | key_tail (tlb_set_gen() keeps the tails). */
	uint64_t key_mask[4], key_tail[4];
	struct mmp_tlb_entry *tlb;
	/*
	 * A tag byte per way (tlb_tag() of its key; 0 for a dropped or never
	 * used way), each set's padded with zeros to a multiple of 16: a lookup
	 * compares a set's tags at once, as the hardware compares its ways in
	 * parallel, and reads only the entries whose tag matches.
	 */
	uint8_t *tags;
	unsigned int tag_stride;
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

extern __thread char mmp_cpu_thread_id __attribute__((tls_model("initial-exec")));

/*
 * The calling thread, told apart from every other live thread by the address
 * of its own copy of a thread-local byte: no call, where pthread_self() is one.
 */
static __always_inline const void *cpu_thread_id(void)
{
	return &mmp_cpu_thread_id;
}

/* The key of @va's translation of size class @k: aligned va | generation << 6 | shift << 1 | 1. */
static inline uint64_t tlb_key(struct mmp_cpu *cpu, uint64_t va, unsigned int k)
{
	return (va & cpu->key_mask[k]) | cpu->key_tail[k];
}

/* Enter generation @gen (1..63): the keys of every other generation are dead. */
static inline void tlb_set_gen(struct mmp_cpu *cpu, unsigned int gen)
{
	cpu->gen = gen;
	for (unsigned int k = 0; k < cpu->nr_shifts; k++) {
		cpu->key_mask[k] = ~((1ULL << cpu->shifts[k]) - 1);
		cpu->key_tail[k] = (uint64_t)gen << 6 | cpu->shifts[k] << 1 | 1;
	}
}

/* A key's tag: 7 bits of its hash and the top bit, so that no tag is a free way's 0. */
static inline uint8_t tlb_tag(uint64_t key)
{
	return (uint8_t)((key * 0x9e3779b97f4a7c15ULL) >> 57) | 0x80;
}

#define TLB_TAG_CHUNK	16

static inline uint8_t *tlb_set_tags(struct mmp_cpu *cpu, uint32_t set)
{
	return &cpu->tags[(size_t)set * cpu->tag_stride];
}

/* Bit i set where byte i of @tags[0..15] is @tag. */
static inline uint32_t tlb_tag_match(const uint8_t *tags, uint8_t tag)
{
#ifdef __SSE2__
	__m128i t = _mm_loadu_si128((const __m128i *)tags);

	return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(t, _mm_set1_epi8((char)tag)));
#else
	uint32_t m = 0;

	/* Eight bytes a word: the 0x80 of each byte of x that is zero, exactly. */
	for (unsigned int h = 0; h < TLB_TAG_CHUNK; h += 8) {
		const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;
		uint64_t x, zero;

		memcpy(&x, tags + h, sizeof(x));
		x ^= tag * 0x0101010101010101ULL;
		zero = ~(((x & lo7) + lo7) | x | lo7);
		for (; zero; zero &= zero - 1) {
			unsigned int byte = __builtin_ctzll(zero) / 8;

			if (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
				byte = 7 - byte;
			m |= 1u << (h + byte);
		}
	}
	return m;
#endif
}

/* The way of @set caching @key, or NULL: only ways whose tag matches are read. */
static inline struct mmp_tlb_entry *tlb_find(struct mmp_cpu *cpu, uint32_t set, uint64_t key)
{
	const uint8_t *tags = tlb_set_tags(cpu, set);
	struct mmp_tlb_entry *ways = &cpu->tlb[(size_t)set * cpu->tlb_ways];
	uint8_t tag = tlb_tag(key);

	for (unsigned int c = 0; c < cpu->tag_stride; c += TLB_TAG_CHUNK)
		for (uint32_t m = tlb_tag_match(tags + c, tag); m; m &= m - 1)
			if (ways[c + __builtin_ctz(m)].key == key)
				return &ways[c + __builtin_ctz(m)];
	return NULL;
}

/* Is @te a translation of the current generation? (A dropped key, 0, is of none.) */
static inline bool tlb_entry_live(struct mmp_cpu *cpu, struct mmp_tlb_entry *te)
{
	return ((te->key >> 6) & 63) == cpu->gen;
}

/* @te's way in its set: an exact division by the entry size, no divide by the ways. */
static inline unsigned int tlb_entry_way(struct mmp_cpu *cpu, struct mmp_tlb_entry *te)
{
	return te - &cpu->tlb[(size_t)te->set * cpu->tlb_ways];
}

/* One live translation of size class @k more, or fewer; live_classes follows. */
static inline void tlb_class_get(struct mmp_cpu *cpu, unsigned int k)
{
	cpu->nr_live[k]++;
	cpu->live_classes |= 1u << k;
}

static inline void tlb_class_put(struct mmp_cpu *cpu, unsigned int k)
{
	if (!--cpu->nr_live[k])
		cpu->live_classes &= ~(1u << k);
}

/* Drop one translation (invlpg of the entry). */
static inline void tlb_entry_drop(struct mmp_cpu *cpu, struct mmp_tlb_entry *te)
{
	unsigned int way = tlb_entry_way(cpu, te);

	if (tlb_entry_live(cpu, te)) {
		struct mmp_tlb_set *st = &cpu->sets[te->set];

		tlb_class_put(cpu, te->cls);
		st->live--;
		st->mask &= ~(1ULL << (way % 64));
	}
	te->key = 0;
	tlb_set_tags(cpu, te->set)[way] = 0;
}

/* Empty every way (hw/tlbflush.c); drop this CPU's translations. */
void tlb_reset(struct mmp_cpu *cpu);
void tlb_invalidate_local(struct mmp_cpu *cpu, uint64_t start, uint64_t end, unsigned int shift);
void tlb_invalidate_all(struct mmp_cpu *cpu);

#endif /* MMP_CPU_H */
