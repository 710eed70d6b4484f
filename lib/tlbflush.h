/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* TLB flushes across a space's CPUs (hw/tlbflush.c): the kernel's asm/tlbflush.h. */
#ifndef MMP_TLBFLUSH_H
#define MMP_TLBFLUSH_H

#include "mm_types.h"

void flush_tlb_range(struct mmp_space *s, uint64_t start, uint64_t end, unsigned int stride_shift);
void flush_tlb_mm(struct mmp_space *s);
/* IPI every other CPU of @s and wait until each took it (hw/tlbflush.c); the IPIs sent. */
unsigned int smp_call_function_sync(struct mmp_space *s);
static inline void flush_tlb_page(struct mmp_space *s, uint64_t addr)
{
	flush_tlb_range(s, addr, addr + PAGE_SIZE, PAGE_SHIFT);
}

/* A change whose flush is not done yet: the TLB sanitizer lets stale entries be (inc_tlb_flush_pending). */
static inline void inc_tlb_flush_pending(struct mmp_space *s)
{
	__atomic_fetch_add(&s->tlb_pending_gen, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&s->tlb_flush_pending, 1, __ATOMIC_SEQ_CST);
}

static inline void dec_tlb_flush_pending(struct mmp_space *s)
{
	__atomic_fetch_sub(&s->tlb_flush_pending, 1, __ATOMIC_SEQ_CST);
}

/* What a TLB entry translates, for tlb_verify()'s @holds: from frame @pfn, writable or not. */
struct tlb_translation {
	uint64_t pfn;
	bool write;
};
typedef void (*tlb_report_fn)(void *arg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* How many of the @n pages from @va (page @k of the entry @t) the tables still translate so. */
typedef uint64_t (*tlb_holds_fn)(void *arg, const struct tlb_translation *t, uint64_t k,
				 uint64_t va, uint64_t n);
/* Check every CPU's TLB of @s (hw/tlbflush.c), reporting what is wrong through @report. */
void tlb_verify(struct mmp_space *s, tlb_report_fn report, tlb_holds_fn holds, void *arg);

#endif /* MMP_TLBFLUSH_H */
