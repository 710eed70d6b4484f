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

/* ---- verify ---------------------------------------------------------------------- */

/*
 * The TLB's own bookkeeping: each set's live count and free-way bits, and the
 * live count per size, agree with the entries of the current generation.
 */
static void tlb_verify_books(struct mmp_cpu *cpu, int c, tlb_report_fn report, void *arg)
{
	unsigned int nr_live[4] = { 0 };

	for (unsigned int set = 0; set < cpu->tlb_sets; set++) {
		struct mmp_tlb_set *st = &cpu->sets[set];
		struct mmp_tlb_entry *ways = &cpu->tlb[set * cpu->tlb_ways];
		const uint8_t *tags = tlb_set_tags(cpu, set);
		unsigned int live = 0;
		uint64_t mask = 0;

		for (unsigned int w = 0; w < cpu->tag_stride; w++) {
			uint64_t key = w < cpu->tlb_ways ? ways[w].key : 0;

			if (tags[w] != (key ? tlb_tag(key) : 0))
				report(arg, "space %llu: cpu %d: TLB set %u way %u has tag %#x for key %#llx",
				       (unsigned long long)cpu->space->id, c, set, w, tags[w],
				       (unsigned long long)key);
		}
		for (unsigned int w = 0; w < cpu->tlb_ways; w++) {
			if (ways[w].set != set)
				report(arg, "space %llu: cpu %d: TLB set %u way %u says it is of set %u",
				       (unsigned long long)cpu->space->id, c, set, w, ways[w].set);
			if (!tlb_entry_live(cpu, &ways[w]))
				continue;
			if (tlb_find(cpu, set, ways[w].key) != &ways[w])
				report(arg, "space %llu: cpu %d: TLB set %u holds key %#llx twice",
				       (unsigned long long)cpu->space->id, c, set,
				       (unsigned long long)ways[w].key);
			live++;
			nr_live[ways[w].cls]++;
			mask |= 1ULL << (w % 64);
		}
		if (live && st->gen != cpu->gen)
			report(arg, "space %llu: cpu %d: TLB set %u holds %u live entries of a set "
			       "marked flushed", (unsigned long long)cpu->space->id, c, set, live);
		else if (st->gen == cpu->gen &&
			 (st->live != live || (cpu->tlb_ways <= 64 && st->mask != mask)))
			report(arg, "space %llu: cpu %d: TLB set %u counts %u live ways (mask %#llx), "
			       "holds %u (%#llx)", (unsigned long long)cpu->space->id, c, set, st->live,
			       (unsigned long long)st->mask, live, (unsigned long long)mask);
	}
	for (unsigned int k = 0; k < cpu->nr_shifts; k++) {
		if (cpu->key_mask[k] != ~((1ULL << cpu->shifts[k]) - 1) ||
		    cpu->key_tail[k] != ((uint64_t)cpu->gen << 6 | cpu->shifts[k] << 1 | 1))
			report(arg, "space %llu: cpu %d: TLB keys of shift %u are made for another "
			       "generation than %u", (unsigned long long)cpu->space->id, c, cpu->shifts[k],
			       cpu->gen);
		if (cpu->nr_live[k] != nr_live[k])
			report(arg, "space %llu: cpu %d: %u live TLB entries of shift %u, counted %u",
			       (unsigned long long)cpu->space->id, c, nr_live[k], cpu->shifts[k],
			       cpu->nr_live[k]);
		if (!!(cpu->live_classes & (1u << k)) != !!nr_live[k])
			report(arg, "space %llu: cpu %d: TLB entries of shift %u %s, live_classes %#x",
			       (unsigned long long)cpu->space->id, c, cpu->shifts[k],
			       nr_live[k] ? "live" : "none", cpu->live_classes);
	}
}


/*
 * mmp_space_verify()'s look at the TLBs: each one's bookkeeping, and that no
 * CPU holds a translation more permissive than the tables when no flush is
 * due, every page of an entry asked of @holds (the tables are verify's).
 */
void tlb_verify(struct mmp_space *s, tlb_report_fn report, tlb_holds_fn holds, void *arg)
{
	if (READ_ONCE(s->tlb_flush_pending))
		return;
	spin_lock(&s->cpus_lock);
	for (int c = 0; c < MMP_MAX_CPUS; c++) {
		struct mmp_cpu *cpu = s->cpus[c];

		if (!cpu)
			continue;
		spin_lock(&cpu->lock);
		tlb_verify_books(cpu, c, report, arg);
		for (unsigned int i = 0; i < cpu->tlb_sets * cpu->tlb_ways; i++) {
			struct mmp_tlb_entry *te = &cpu->tlb[i];
			uint64_t va = te->key & ~((1ULL << te->shift) - 1);
			uint64_t n = tlb_entry_live(cpu, te) ? 1ULL << (te->shift - PAGE_SHIFT) : 0;
			struct tlb_translation t = { .pfn = te->pfn, .write = te->write };

			/* Every page the entry translates must still translate the same way. */
			for (uint64_t k = 0; k < n;) {
				uint64_t pva = va + (k << PAGE_SHIFT);
				uint64_t span = MIN(n - k, (PMD_SIZE - (pva & ~PMD_MASK)) >> PAGE_SHIFT);
				uint64_t held = holds(arg, &t, k, pva, span);

				if (held < span) {
					report(arg, "space %llu: cpu %d holds a stale TLB entry for %#llx",
					       (unsigned long long)s->id, c,
					       (unsigned long long)(pva + (held << PAGE_SHIFT)));
					break;
				}
				k += span;
			}
		}
		spin_unlock(&cpu->lock);
	}
	spin_unlock(&s->cpus_lock);
}
