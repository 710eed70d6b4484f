/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * TLB invalidation across the simulated CPUs of a space. A CPU holds its lock
 * for one access; a remote invalidation takes that lock, so it waits for an
 * access in flight the way a shootdown IPI waits for the target's ack. On x86
 * each remote CPU costs an IPI; arm64 broadcasts TLBIs in hardware instead.
 * An IPI is taken only with IRQs on: its sender also waits for a lockless walk
 * with IRQs off (GUP-fast) to end, which is what makes freeing a table right
 * after a shootdown safe, and what tlb_remove_table_sync_one sends IPIs for.
 */
#include <sched.h>
#include <string.h>

#include "cpu.h"
#include "irqflags.h"
#include "tlbflush.h"

/*
 * The IPI's ack: once the walks in flight on the CPU behind @w, if any, are
 * over. Walks that start later see the tables as the sender left them.
 */
static void irq_wait(struct mmp_space *s, uint64_t *w)
{
	uint64_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);

	if (!(v & IRQS_OFF_COUNT) || READ_ONCE(s->debug[MMP_DEBUG_SKIP_IPI_WAIT]))
		return;
	debug_point(s, MMP_DEBUG_IPI_WAIT);
	__atomic_fetch_add(&s->ipi_waiting, 1, __ATOMIC_RELAXED);
	/* The walker may be off its host CPU: yield rather than spin against it. */
	for (unsigned int spin = 0;
	     (__atomic_load_n(w, __ATOMIC_ACQUIRE) ^ v) < IRQS_OFF_GEN; spin++) {
		if (spin < 64)
			cpu_relax();
		else
			sched_yield();
	}
	__atomic_fetch_sub(&s->ipi_waiting, 1, __ATOMIC_RELAXED);
}

/*
 * Walkers with no CPU of @s run on some CPU of the mm, which a shootdown by
 * IPIs reaches, as does tlb_remove_table_sync_one's IPI: wait for them too.
 * Not counted as an IPI, there being no simulated CPU to count.
 */
static void irq_wait_nocpu(struct mmp_space *s)
{
	/* The tables were changed before: pairs with local_irq_save()'s fence. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	irq_wait(s, &s->irqs_off_nocpu);
}

/* A full flush starts a new generation; only a wrap clears the array. */
void tlb_invalidate_all(struct mmp_cpu *cpu)
{
	cpu->pwc_gen++;
	memset(cpu->nr_live, 0, sizeof(cpu->nr_live));
	cpu->live_classes = 0;
	tlb_set_gen(cpu, (cpu->gen + 1) & 63);
	if (!cpu->gen) {
		tlb_reset(cpu);
		tlb_set_gen(cpu, 1);
	}
}

/* Every way empty, each entry knowing its set for its books. */
void tlb_reset(struct mmp_cpu *cpu)
{
	memset(cpu->sets, 0, sizeof(*cpu->sets) * cpu->tlb_sets);
	memset(cpu->tags, 0, (size_t)cpu->tlb_sets * cpu->tag_stride);
	for (uint32_t set = 0; set < cpu->tlb_sets; set++)
		for (uint32_t w = 0; w < cpu->tlb_ways; w++)
			cpu->tlb[(size_t)set * cpu->tlb_ways + w] = (struct mmp_tlb_entry){ .set = set };
}

/* Drop this CPU's translations of [start, end), probing the size classes that hold any. */
void tlb_invalidate_local(struct mmp_cpu *cpu, uint64_t start, uint64_t end, unsigned int shift)
{
	/* invlpg drops the paging-structure caches too (all of them, here). */
	cpu->pwc_gen++;
	for (uint64_t va = start; va < end; va += 1ULL << shift) {
		for (unsigned int m = cpu->live_classes; m; m &= m - 1) {
			unsigned int k = __builtin_ctz(m), sh = cpu->shifts[k];
			struct mmp_tlb_entry *te;

			/* A set holds a key once (verify checks): one drop at most. */
			te = tlb_find(cpu, (va >> sh) & (cpu->tlb_sets - 1), tlb_key(cpu, va, k));
			if (te)
				tlb_entry_drop(cpu, te);
		}
	}
}

static void flush_cpus(struct mmp_space *s, uint64_t start, uint64_t end, unsigned int stride_shift,
		       bool all)
{
	const void *self = cpu_thread_id();
	bool ipi = !s->arch->tlbi_broadcast;

	if (ipi)
		irq_wait_nocpu(s);
	spin_lock(&s->cpus_lock);
	for (int i = 0; i < MMP_MAX_CPUS; i++) {
		struct mmp_cpu *cpu = s->cpus[i];

		if (!cpu)
			continue;
		if (cpu->thread != self && ipi) {
			count_inc(s, MMP_C_TLB_IPI);
			irq_wait(s, &cpu->irqs_off);
		}
		spin_lock(&cpu->lock);
		if (all)
			tlb_invalidate_all(cpu);
		else
			tlb_invalidate_local(cpu, start, end, stride_shift);
		spin_unlock(&cpu->lock);
	}
	spin_unlock(&s->cpus_lock);
}

/*
 * flush_tlb_range(): invalidate [start, end) on every CPU that runs the space.
 * Past the architecture's ceiling the whole mm is flushed instead, as x86's
 * tlb_single_page_flush_ceiling and arm64's MAX_DVM_OPS do.
 */
void flush_tlb_range(struct mmp_space *s, uint64_t start, uint64_t end, unsigned int stride_shift)
{
	uint64_t nr = (end - start) >> stride_shift;
	bool all = nr > s->arch->tlb_flush_ceiling;

	if (all) {
		count_inc(s, MMP_C_TLB_FLUSH_ALL);
	} else {
		count_inc(s, MMP_C_TLB_FLUSH_RANGE);
		count_add(s, MMP_C_TLB_FLUSH_PAGE, nr);
	}
	flush_cpus(s, start, end, stride_shift, all);
}

void flush_tlb_mm(struct mmp_space *s)
{
	count_inc(s, MMP_C_TLB_FLUSH_ALL);
	flush_cpus(s, 0, 0, PAGE_SHIFT, true);
}

/*
 * smp_call_function(..., wait): an IPI to every other CPU of @s, each taken
 * once that CPU has IRQs on, and waited for. The kernel interrupts every
 * online CPU; only those of the space can be walking its tables here.
 * Returns the IPIs sent.
 */
unsigned int smp_call_function_sync(struct mmp_space *s)
{
	const void *self = cpu_thread_id();
	unsigned int sent = 0;

	irq_wait_nocpu(s);
	spin_lock(&s->cpus_lock);
	for (int i = 0; i < MMP_MAX_CPUS; i++) {
		struct mmp_cpu *cpu = s->cpus[i];

		if (!cpu || cpu->thread == self)
			continue;
		sent++;
		irq_wait(s, &cpu->irqs_off);
	}
	spin_unlock(&s->cpus_lock);
	return sent;
}
