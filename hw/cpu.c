/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Simulated CPUs: a TLB and an MMU per host thread. An access looks up the
 * TLB; a miss walks the tables as the hardware walker does, setting accessed
 * and dirty the architecture's way; a fault goes to the core's fault handler
 * (with the CPU lock dropped, as a trap re-enables interrupts) and the access
 * is retried.
 */
#include <string.h>

#include "cpu.h"
#include "entry_dispatch.h"
#include "fault.h"
#include "irqflags.h"
#include "rcu.h"

__thread char mmp_cpu_thread_id __attribute__((tls_model("initial-exec")));
__thread struct mmp_space *mmp_irq_space __attribute__((tls_model("initial-exec")));
__thread uint64_t *mmp_irq_word __attribute__((tls_model("initial-exec")));

static void cpu_free(struct mmp_cpu *cpu)
{
	free(cpu->tlb);
	free(cpu->sets);
	free(cpu->tags);
	free(cpu);
}

MMP_EXPORT int mmp_cpu_attach(struct mmp_space *s, struct mmp_cpu **out)
{
	struct mmp_cpu *cpu;
	int slot = -1;

	if (!s || !out)
		return -EINVAL;
	cpu = calloc(1, sizeof(*cpu));
	if (!cpu)
		return -ENOMEM;
	cpu->tlb_ways = s->tlb_ways;
	cpu->tlb_sets = s->tlb_entries / s->tlb_ways;
	cpu->tag_stride = (s->tlb_ways + TLB_TAG_CHUNK - 1) / TLB_TAG_CHUNK * TLB_TAG_CHUNK;
	cpu->tlb = malloc((size_t)s->tlb_entries * sizeof(*cpu->tlb));
	cpu->sets = malloc(cpu->tlb_sets * sizeof(*cpu->sets));
	cpu->tags = malloc((size_t)cpu->tlb_sets * cpu->tag_stride);
	if (!cpu->tlb || !cpu->sets || !cpu->tags) {
		cpu_free(cpu);
		return -ENOMEM;
	}
	tlb_reset(cpu);
	cpu->space = s;
	cpu->thread = cpu_thread_id();
	cpu->pwc_gen = 1;
	cpu->shifts[cpu->nr_shifts++] = PAGE_SHIFT;
	if (s->arch->cont_shift)
		cpu->shifts[cpu->nr_shifts++] = s->arch->cont_shift;
	cpu->pmd_class = cpu->nr_shifts;
	cpu->shifts[cpu->nr_shifts++] = PMD_SHIFT;
	if (s->arch->hugetlb_pud) {
		cpu->pud_class = cpu->nr_shifts;
		cpu->shifts[cpu->nr_shifts++] = level_shift(MMP_PUD);
	}
	tlb_set_gen(cpu, 1);

	spin_lock(&s->cpus_lock);
	for (int i = 0; i < MMP_MAX_CPUS; i++) {
		if (!s->cpus[i]) {
			slot = i;
			break;
		}
	}
	if (slot >= 0) {
		cpu->index = slot;
		s->cpus[slot] = cpu;
		__atomic_fetch_or(&s->cpu_mask, 1ULL << slot, __ATOMIC_RELAXED);
	}
	spin_unlock(&s->cpus_lock);
	if (slot < 0) {
		cpu_free(cpu);
		return -EBUSY;
	}
	/* A CPU is an RCU reader: lockless walks on it run in read-side sections. */
	mmp_rcu_register();
	/* Its walks turn its IRQs off; the last CPU a thread attached is the one it walks on. */
	mmp_irq_space = s;
	mmp_irq_word = &cpu->irqs_off;
	*out = cpu;
	return 0;
}

MMP_EXPORT int mmp_cpu_detach(struct mmp_cpu *cpu)
{
	struct mmp_space *s;

	if (!cpu || cpu->thread != cpu_thread_id())
		return -EINVAL;
	s = cpu->space;
	if (mmp_irq_word == &cpu->irqs_off) {
		mmp_irq_space = NULL;
		mmp_irq_word = NULL;
	}
	spin_lock(&s->cpus_lock);
	s->cpus[cpu->index] = NULL;
	__atomic_fetch_and(&s->cpu_mask, ~(1ULL << cpu->index), __ATOMIC_RELAXED);
	spin_unlock(&s->cpus_lock);
	mmp_rcu_unregister();
	cpu_free(cpu);
	return 0;
}

MMP_EXPORT int mmp_cpu_flush_tlb(struct mmp_cpu *cpu)
{
	if (!cpu)
		return -EINVAL;
	spin_lock(&cpu->lock);
	tlb_invalidate_all(cpu);
	spin_unlock(&cpu->lock);
	return 0;
}

static inline uint32_t tlb_set_index(struct mmp_cpu *cpu, uint64_t va, unsigned int shift)
{
	return (va >> shift) & (cpu->tlb_sets - 1);
}

static struct mmp_tlb_entry *tlb_lookup(struct mmp_cpu *cpu, uint64_t va)
{
	/* Only the size classes that hold a translation, smallest first. */
	for (unsigned int m = cpu->live_classes; m; m &= m - 1) {
		unsigned int k = __builtin_ctz(m);
		struct mmp_tlb_entry *te;

		te = tlb_find(cpu, tlb_set_index(cpu, va, cpu->shifts[k]), tlb_key(cpu, va, k));
		if (te)
			return te;
	}
	return NULL;
}

/*
 * Cache a translation of size class @k (cpu->shifts[k]): in the first free
 * way of its set, else over a victim taken in round-robin order.
 */
static __always_inline void tlb_insert(struct mmp_cpu *cpu, uint64_t va, unsigned int k,
				       uint64_t pfn, unsigned int eflags)
{
	unsigned int shift = cpu->shifts[k], way = 0;
	uint32_t index = tlb_set_index(cpu, va, shift);
	struct mmp_tlb_entry *e, *set = &cpu->tlb[index * cpu->tlb_ways];
	struct mmp_tlb_set *st = &cpu->sets[index];

	if (st->gen != cpu->gen) {	/* a full flush emptied it since */
		st->gen = cpu->gen;
		st->live = 0;
		st->mask = 0;
	}
	if (st->live < cpu->tlb_ways) {
		if (cpu->tlb_ways <= 64)
			way = __builtin_ctzll(~st->mask);
		else
			while (tlb_entry_live(cpu, &set[way]))
				way++;
		st->live++;
		st->mask |= 1ULL << (way % 64);
	} else {
		/* A full set: every way is live, the victim's stays taken. */
		way = cpu->victim;
		cpu->victim = way + 1 < cpu->tlb_ways ? way + 1 : 0;
		tlb_class_put(cpu, set[way].cls);
	}
	e = &set[way];
	e->key = tlb_key(cpu, va, k);
	tlb_set_tags(cpu, index)[way] = tlb_tag(e->key);
	e->cls = k;
	tlb_class_get(cpu, k);
	e->pfn = pfn;
	e->shift = shift;
	e->write = !!(eflags & MMP_E_WRITE);
	e->dirty = !!(eflags & MMP_E_DIRTY);
}

/*
 * The walker reached leaf entry @e at @ep, level @l (a constant: each level's
 * decode compiles on its own): let the architecture's MMU update it for
 * @access, fill the TLB and return the host address, or NULL to fault.
 */
static __always_inline void *walk_leaf(struct mmp_cpu *cpu, uint64_t va, mmp_pte_t *ep,
				       mmp_pte_t e, const enum mmp_level l, unsigned int access,
				       const enum mmp_format fmt)
{
	struct mmp_space *s = cpu->space;
	unsigned int f, k;
	uint64_t pfn, base;

	if (!format_entry_test(fmt, e, l, MMP_E_PRESENT))
		return NULL;
	e = format_hw_update_leaf(fmt, s, ep, l, access);
	if (!e)
		return NULL;
	f = format_entry_test(fmt, e, l, MMP_E_WRITE | MMP_E_DIRTY | MMP_E_CONT);
	pfn = format_entry_pfn(fmt, e, l);
	if (l == MMP_PMD) {
		k = cpu->pmd_class;
		base = pfn;
	} else if (l == MMP_PUD) {
		k = cpu->pud_class;	/* only hugetlb makes PUD leaves, where the MMU has them */
		base = pfn;
	} else if (f & MMP_E_CONT) {
		/* A contiguous entry may be cached as one translation of its block. */
		k = TLB_CLASS_CONT;
		base = pfn - ((va >> PAGE_SHIFT) & ((1u << (s->arch->cont_shift - PAGE_SHIFT)) - 1));
	} else {
		k = TLB_CLASS_PAGE;
		base = pfn;
	}
	tlb_insert(cpu, va, k, base, f);
	return (uint8_t *)pfn_to_virt(s->phys, pfn) + (va & (level_size(l) - 1));
}

/*
 * A 1 GiB hugetlb leaf: rare, and kept out of line so that the walk the
 * faults and accesses take stays small enough to be inlined where it is used.
 */
static __attribute__((noinline, cold)) void *walk_pud_leaf(struct mmp_cpu *cpu, uint64_t va,
							      mmp_pte_t *ep, mmp_pte_t e,
							      unsigned int access)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: \
	return walk_leaf(cpu, va, ep, e, MMP_PUD, access, MMP_FORMAT_##f);
	MMP_DISPATCH_FORMAT(cpu->space->format)
#undef MMP_FORMAT
}

/*
 * The hardware walker: follow the tables for @va, from the PTE table when the
 * paging-structure cache has it, and hand the leaf to walk_leaf(). Returns
 * the host address, or NULL when the access faults. Compiled per format (@fmt).
 */
static __always_inline void *page_walk_fmt(struct mmp_cpu *cpu, uint64_t va, unsigned int access,
					   const enum mmp_format fmt)
{
	struct mmp_space *s = cpu->space;
	struct mmp_pwc_entry *pwc = &cpu->pwc[(va >> PMD_SHIFT) % MMP_PWC_ENTRIES];
	mmp_pte_t *table, *ep;

	if (pwc->gen == cpu->pwc_gen && pwc->region == va >> PMD_SHIFT) {
		table = pwc->ptes;
	} else {
		table = space_table(s, s->pgd_pfn);
		for (enum mmp_level l = pgd_level(s); l > MMP_PTE; l--) {
			mmp_pte_t e;
			unsigned int f;

			ep = &table[level_index(va, l)];
			e = __atomic_load_n(ep, __ATOMIC_ACQUIRE);
			f = format_entry_test(fmt, e, l, MMP_E_PRESENT | MMP_E_TABLE);
			if (!(f & MMP_E_PRESENT))
				return NULL;
			if (!(f & MMP_E_TABLE)) {	/* a leaf: huge PMD, or a 1 GiB hugetlb PUD */
				if (l == MMP_PMD)
					return walk_leaf(cpu, va, ep, e, MMP_PMD, access, fmt);
				return l == MMP_PUD && s->arch->hugetlb_pud ?
					       walk_pud_leaf(cpu, va, ep, e, access) : NULL;
			}
			table = format_entry_table(fmt, s, e, l);
		}
		*pwc = (struct mmp_pwc_entry){ va >> PMD_SHIFT, cpu->pwc_gen, table };
	}
	ep = &table[level_index(va, MMP_PTE)];
	return walk_leaf(cpu, va, ep, __atomic_load_n(ep, __ATOMIC_ACQUIRE), MMP_PTE, access,
			 fmt);
}

/* page_walk_fmt() for the space's format: a copy per format. */
static void *page_walk(struct mmp_cpu *cpu, uint64_t va, unsigned int access)
{
#define MMP_FORMAT(f)	case MMP_FORMAT_##f: return page_walk_fmt(cpu, va, access, MMP_FORMAT_##f);
	MMP_DISPATCH_FORMAT(cpu->space->format)
#undef MMP_FORMAT
}

/*
 * TLB sanitizer: the translation just hit must still be what the tables say,
 * unless a flush is pending (the kernel allows stale entries until then).
 */
static void tlb_sanitize(struct mmp_cpu *cpu, uint64_t va, struct mmp_tlb_entry *te)
{
	struct mmp_space *s = cpu->space;
	uint64_t gen = __atomic_load_n(&s->tlb_pending_gen, __ATOMIC_SEQ_CST);
	mmp_pte_t *table = space_table(s, s->pgd_pfn);
	const char *why = NULL;
	enum mmp_level l;
	mmp_pte_t e = 0;
	unsigned int f = 0;

	if (__atomic_load_n(&s->tlb_flush_pending, __ATOMIC_SEQ_CST))
		return;
	for (l = pgd_level(s);; l--) {
		/* A leaf PTE is read as the arch presents it (riscv NAPOT: this page's pfn). */
		e = l == MMP_PTE ? ptep_get_lockless(s, &table[level_index(va, l)])
				 : __atomic_load_n(&table[level_index(va, l)], __ATOMIC_ACQUIRE);
		f = entry_flags(s, e, l);
		if (!(f & MMP_E_PRESENT) || !(f & MMP_E_TABLE) || l == MMP_PTE)
			break;
		table = entry_table(s, e, l);
	}
	if (!(f & MMP_E_PRESENT))
		why = "entry no longer present";
	else if (entry_pfn(s, e, l) + ((va & (level_size(l) - 1)) >> PAGE_SHIFT) !=
		 te->pfn + ((va & ((1ULL << te->shift) - 1)) >> PAGE_SHIFT))
		why = "entry maps another frame";
	else if (te->write && !(f & MMP_E_WRITE))
		why = "entry was write-protected";
	else if (te->dirty && !(f & MMP_E_DIRTY))
		why = "entry was cleaned";
	if (!why || __atomic_load_n(&s->tlb_flush_pending, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&s->tlb_pending_gen, __ATOMIC_SEQ_CST) != gen)
		return;
	count_inc(s, MMP_C_TLB_SANITIZER);
	fprintf(stderr, "libmmprim: TLB sanitizer: cpu %d used a stale translation of %#llx (%s): "
		"missing TLB flush after %s\n", cpu->index, (unsigned long long)va, why,
		READ_ONCE(s->last_op) ? READ_ONCE(s->last_op) : "?");
}

/*
 * Translate @va for @access. Returns the host address, or NULL with the CPU
 * lock still held when the access must fault.
 */
static void *translate(struct mmp_cpu *cpu, uint64_t va, unsigned int access, bool known_miss)
{
	struct mmp_space *s = cpu->space;
	struct mmp_tlb_entry *te = known_miss ? NULL : tlb_lookup(cpu, va);

	cpu->last_lookup_missed = !te;
	if (likely(te)) {
		if (access == MMP_ACCESS_READ || (te->write && te->dirty)) {
			count_inc(s, MMP_C_TLB_HIT);
			if (unlikely(s->opts[MMP_OPT_TLB_SANITIZER]))
				tlb_sanitize(cpu, va, te);
			return (uint8_t *)pfn_to_virt(s->phys, te->pfn) +
			       (va & ((1ULL << te->shift) - 1));
		}
		/*
		 * A write through a clean or read-only entry: the MMU walks again
		 * to set dirty, and x86 drops the entry on a fault anyway.
		 */
		tlb_entry_drop(cpu, te);
	}
	/* The miss sends the walker (counted here: one shard lookup for both). */
	count_add2(s, MMP_C_TLB_MISS, MMP_C_PAGE_WALK, 1);
	return page_walk(cpu, va, access);
}

/*
 * Past this many faults on one page the handler and the MMU model disagree:
 * the handler keeps finding nothing to do (spurious) and the walker keeps
 * faulting. The kernel has no limit; the model stops, naming the entry.
 */
#define FAULT_RETRY_LIMIT	1000000

/* The leaf the walker keeps faulting on, raw and as core mm reads it. */
static void report_fault_loop(struct mmp_cpu *cpu, uint64_t va, unsigned int access)
{
	struct mmp_space *s = cpu->space;
	const char *last_op = READ_ONCE(s->last_op);
	mmp_pte_t *table = space_table(s, s->pgd_pfn), *ep, e;
	unsigned int f, core;
	enum mmp_level l;

	rcu_read_lock();
	for (l = pgd_level(s);; l--) {
		ep = &table[level_index(va, l)];
		e = READ_ONCE(*ep);
		if (l == MMP_PTE || !entry_test(s, e, l, MMP_E_TABLE))
			break;
		table = entry_table(s, e, l);
	}
	f = entry_flags(s, e, l);
	core = l == MMP_PTE ? entry_flags(s, ptep_get_lockless(s, ep), l) : f;
	fprintf(stderr, "libmmprim: %s: cpu %d: %s of %#llx faults forever: level %d entry %#llx "
		"(flags %#x, as core reads it %#x), MMP_OPT_HW_AD %ld, last change by %s\n",
		s->arch->name, cpu->index, access == MMP_ACCESS_WRITE ? "write" : "read",
		(unsigned long long)va, (int)l, (unsigned long long)e, f, core,
		READ_ONCE(s->opts[MMP_OPT_HW_AD]), last_op ? last_op : "?");
	rcu_read_unlock();
}

/* Run @fn over [addr, addr + len) a page at a time, faulting as needed. */
static int user_access(struct mmp_cpu *cpu, uint64_t addr, size_t len, unsigned int access,
		       void (*fn)(void *host, size_t off, size_t n, void *arg), void *arg)
{
	struct mmp_space *s;
	size_t done = 0;

	if (!cpu)
		return -EINVAL;
	if (cpu->thread != cpu_thread_id())
		return -EINVAL;
	if (len == 0)
		return 0;
	if (addr >= TASK_SIZE(cpu->space) || len > TASK_SIZE(cpu->space) - addr)
		return -EFAULT;
	s = cpu->space;
	while (done < len) {
		uint64_t va = addr + done;
		size_t n = MIN(len - done, PAGE_SIZE - (va & (PAGE_SIZE - 1)));
		void *host;
		int err, tries = 0;
		bool known_miss = false;

		for (;;) {
			spin_lock(&cpu->lock);
			host = translate(cpu, va, access, known_miss);
			if (likely(host))
				break;
			/*
			 * Only this CPU fills its TLB: if nothing matched @va before
			 * the fault, nothing will after it, so the retry goes
			 * straight to the walk (counted as the miss it is).
			 */
			known_miss = cpu->last_lookup_missed;
			spin_unlock(&cpu->lock);
			err = handle_mm_fault(s, va, access == MMP_ACCESS_WRITE ? FAULT_FLAG_WRITE : 0);
			if (err)
				return err;
			if (unlikely(++tries > FAULT_RETRY_LIMIT)) {
				report_fault_loop(cpu, va, access);
				MMP_BUG_ON(tries > FAULT_RETRY_LIMIT);
			}
		}
		fn(host, done, n, arg);
		spin_unlock(&cpu->lock);
		done += n;
	}
	return 0;
}

static void copy_out(void *host, size_t off, size_t n, void *arg)
{
	memcpy((uint8_t *)arg + off, host, n);
}

static void copy_in(void *host, size_t off, size_t n, void *arg)
{
	memcpy(host, (const uint8_t *)arg + off, n);
}

static void fill(void *host, size_t off, size_t n, void *arg)
{
	memset(host, *(int *)arg, n);
}

MMP_EXPORT int mmp_read(struct mmp_cpu *cpu, uint64_t addr, void *buf, size_t len)
{
	if (!buf && len)
		return -EINVAL;
	return user_access(cpu, addr, len, MMP_ACCESS_READ, copy_out, buf);
}

MMP_EXPORT int mmp_write(struct mmp_cpu *cpu, uint64_t addr, const void *buf, size_t len)
{
	if (!buf && len)
		return -EINVAL;
	return user_access(cpu, addr, len, MMP_ACCESS_WRITE, copy_in, (void *)buf);
}

MMP_EXPORT int mmp_memset(struct mmp_cpu *cpu, uint64_t addr, int c, size_t len)
{
	return user_access(cpu, addr, len, MMP_ACCESS_WRITE, fill, &c);
}
