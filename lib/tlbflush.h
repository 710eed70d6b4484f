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

#endif /* MMP_TLBFLUSH_H */
