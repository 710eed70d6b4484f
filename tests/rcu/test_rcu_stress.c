/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lockless walkers against table freeing, on every back end. Walker threads
 * (each with a CPU, so each an RCU reader) pin random pages of a fixed address
 * window with mmp_gup_fast, check each pinned frame is an allocated anonymous
 * folio holding what the mutators write, and unpin. Mutator threads (each with
 * a CPU) map, touch, MADV_DONTNEED whole 2 MiB tables (PT_RECLAIM) and partial
 * ranges, munmap and mremap inside the same window with MMP_MAP_FIXED, so the
 * walkers keep reading tables that are being unlinked and freed.
 *
 * Checks: no walk read a freed table (MMP_C_PT_POISON_SEEN 0), no pinned frame
 * was anything but a live folio, verify passes, and work was done (pins, the
 * phase's way of freeing tables, reclaimed tables). Phases per back end (enum
 * mmp_table_free): that mix by RCU, the same through a synchronize_rcu per
 * table (half the time), THPs made and split under read-only pins (half the
 * time), where a huge PMD turns into a table pointer under GUP-fast; then,
 * every other table batch refused (MMP_OPT_TABLE_BATCH_FAIL 2), semi RCU,
 * whose single tables are freed at once after an IPI that waits for the
 * walkers' IRQs-off sections, and RCU, whose single tables go by a call_rcu
 * of their own; and native freeing right after the shootdown, where the
 * shootdown sends IPIs (half the time each).
 *
 * Then the window those grace periods close, forced on every back end: a
 * GUP-fast walk is held by a debug hook (MMP_DEBUG_GUP_FAST_PMD) between
 * reading a PMD and reading the PTE table below it, while the main thread
 * frees that table (munmap, and MADV_DONTNEED with PT_RECLAIM), then let go.
 * Through call_rcu the free waits for the walk; through synchronize_rcu the
 * unmap waits for it (the hook lets the walk go where the unmap starts to
 * wait, MMP_DEBUG_GRACE_PERIOD), and so does a shootdown by IPIs, which
 * waits for the walk's IRQs-off section (MMP_DEBUG_IPI_WAIT); with
 * MMP_DEBUG_BROKEN_TABLE_FREE 1 (no grace period, and no IPI wait where
 * there are IPIs) the walk must read the freed table, every time. Nothing here
 * depends on timing or forks, so it runs under qemu-user too.
 *
 * A run with a seed to repeat (threads still interleave differently):
 *   MMP_STRESS_SEED=N test_rcu_stress [ARCH]
 *
 * Duration: MMP_STRESS_SECONDS per back end (default 1.0). Soak:
 *   test_rcu_stress --soak SECONDS [ARCH]
 * runs SECONDS per back end (or on ARCH only), verifies every 5 s with the
 * threads paused, and skips the forced windows; `meson test --benchmark
 * rcu-stress-soak` runs it for 60 s per back end.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mm.h"
#include "park.h"
#include "stress.h"
#include "util.h"

#define PG		MMP_PAGE_SIZE
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define PHYS_BYTES	(64 * MiB)
/* The window: 1 GiB aligned, so its tables are exactly its 2 MiB slots; low, for every space. */
#define WIN_BASE	0x100000000ULL
#define WIN_TABLES	8
#define WIN_LEN		(WIN_TABLES * PMD_SIZE)
#define TABLE_PAGES	(PMD_SIZE / PG)
/* Most of the traffic goes to the first tables and their first pages. */
#define HOT_TABLES	2
#define HOT_PAGES	8
#define NR_WALKERS	2
#define NR_MUTATORS	2
#define MAX_PIN		4
#define TAG_MAGIC	0xa5c3ULL	/* top 16 bits of every word the mutators write */
#define MAX_MSGS	20

enum { OP_TOUCH, OP_DONTNEED_TABLE, OP_DONTNEED_PART, OP_MUNMAP_TABLE, OP_MUNMAP_PART,
       OP_MREMAP, OP_MAP_TABLE, OP_THP, NR_OPS };

struct run {
	const char *arch;
	struct mmp_phys *phys;
	struct mmp_space *s;
	const struct mix *mix;
	int stop;
	int pause, paused;	/* soak: park every thread for a verify */
	/* totals, added by each thread at its end */
	uint64_t pins, gup_calls, slow_pins, bad_pins, errors;
	uint64_t ops[NR_OPS];
};

/* A workload: how often each mutation runs (out of OP_WEIGHTS) and where walkers go. */
struct mix {
	const char *name;
	unsigned int weight[NR_OPS];
	bool hot_only;		/* every walk and mutation on the hot pages */
	bool read_pins;		/* walkers pin for reading only */
};
#define OP_WEIGHTS	16

static const struct mix mix_all = {
	.name = "mixed",
	.weight = { [OP_TOUCH] = 4, [OP_DONTNEED_TABLE] = 3, [OP_DONTNEED_PART] = 1,
		    [OP_MUNMAP_TABLE] = 2, [OP_MUNMAP_PART] = 1, [OP_MREMAP] = 2,
		    [OP_MAP_TABLE] = 2, [OP_THP] = 1 },
};

/* THPs made and split under read pins: GUP-fast must see a PMD turn into a table. */
static const struct mix mix_split = {
	.name = "thp-split",
	.weight = { [OP_TOUCH] = 2, [OP_DONTNEED_TABLE] = 2, [OP_DONTNEED_PART] = 4,
		    [OP_MUNMAP_PART] = 2, [OP_MAP_TABLE] = 2, [OP_THP] = 4 },
	.hot_only = true,
	.read_pins = true,
};

static const char *const op_names[NR_OPS] = {
	"touch", "dontneed-table", "dontneed-part", "munmap-table", "munmap-part", "mremap",
	"map-table", "thp",
};

struct thr {
	struct run *run;
	int id;
	pthread_t th;
	uint64_t rng;
	uint64_t pins, gup_calls, slow_pins, bad_pins, errors;
	uint64_t ops[NR_OPS];
};

__attribute__((format(printf, 1, 2)))
static void msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	stress_vnote(MAX_MSGS, "", fmt, ap);
	va_end(ap);
}

static uint64_t rnd(struct thr *t)
{
	return xorshift64(&t->rng);
}

static bool stopping(struct run *r)
{
	return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

/* Soak: park here while the main thread verifies. */
static void maybe_pause(struct run *r)
{
	if (!__atomic_load_n(&r->pause, __ATOMIC_ACQUIRE))
		return;
	__atomic_fetch_add(&r->paused, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&r->pause, __ATOMIC_ACQUIRE))
		usleep(500);
	__atomic_fetch_sub(&r->paused, 1, __ATOMIC_ACQ_REL);
}

static uint64_t table_addr(unsigned int t)
{
	return WIN_BASE + (uint64_t)t * PMD_SIZE;
}

/* A table of the window, the hot ones half of the time (or always). */
static unsigned int pick_table(struct thr *t)
{
	return t->run->mix->hot_only || rnd(t) & 1 ? rnd(t) % HOT_TABLES : rnd(t) % WIN_TABLES;
}

/*
 * A tag whose first bytes only have landed over zeros: a mutator's write is a
 * copy, which need not store its 8 bytes at once (seen under qemu-user: the
 * low half of a tag, the high half still zero), and a walker may read it
 * halfway. Rare: look for a page of the window whose tag starts so.
 */
static bool tag_being_written(uint64_t word)
{
	unsigned int bytes = 8 - __builtin_clzll(word) / 8;
	uint64_t mask = (1ULL << (8 * (bytes & 7))) - 1;

	for (uint64_t va = WIN_BASE; bytes < 8 && va < WIN_BASE + WIN_LEN; va += PG)
		if (((TAG_MAGIC << 48 | va) & mask) == word)
			return true;
	return false;
}

/*
 * A frame a walker pinned must be a page of a live anonymous folio (our pin
 * holds it), holding zeros or a word a mutator wrote (or is writing).
 */
static bool pin_ok(struct run *r, uint64_t pfn, const char **why)
{
	struct mmp_phys *phys = r->phys;
	uint64_t word, head_pfn;
	struct mmp_page *head;
	uint32_t flags;

	/* A read pin of a page never written gets the zero page, unpinned. */
	if (pfn == phys->zero_pfn)
		return true;
	/* A bug may hand out anything: look before dereferencing. */
	head_pfn = pfn < phys->nr_pages ? folio_pfn(phys, pfn) : pfn;
	if (head_pfn >= phys->nr_pages) {
		*why = "pfn out of range";
		return false;
	}
	head = pfn_to_page(phys, head_pfn);
	flags = __atomic_load_n(&head->flags, __ATOMIC_ACQUIRE);
	if (!(flags & PG_head) || !(flags & PG_anon) ||
	    (flags & (PG_buddy | PG_pcp | PG_table | PG_reserved))) {
		*why = "not an allocated anon folio";
		return false;
	}
	if (__atomic_load_n(&head->refcount, __ATOMIC_ACQUIRE) < 1) {
		*why = "refcount below the pin";
		return false;
	}
	word = __atomic_load_n((uint64_t *)pfn_to_virt(phys, pfn), __ATOMIC_RELAXED);
	if (word && word >> 48 != TAG_MAGIC && !tag_being_written(word)) {
		*why = "data that no mutator wrote";
		return false;
	}
	return true;
}

static void *walker(void *arg)
{
	struct thr *t = arg;
	struct run *r = t->run;
	struct mmp_cpu *cpu;
	uint64_t pfns[MAX_PIN];

	if (mmp_cpu_attach(r->s, &cpu)) {
		t->errors++;
		return NULL;
	}
	while (!stopping(r)) {
		unsigned int table = pick_table(t), nr = 1 + rnd(t) % MAX_PIN;
		uint64_t page = r->mix->hot_only || rnd(t) % 4 ? rnd(t) % HOT_PAGES
							       : rnd(t) % (TABLE_PAGES - MAX_PIN);
		uint64_t va = table_addr(table) + page * PG;
		bool write = !r->mix->read_pins && rnd(t) & 1, slow = rnd(t) % 64 == 0;
		const char *why;
		int n;

		maybe_pause(r);
		t->gup_calls++;
		n = slow ? mmp_gup(r->s, va, nr, write, pfns)
			 : mmp_gup_fast(r->s, va, nr, write, pfns);
		if (slow && n == -EFAULT)
			continue;	/* a hole */
		if (n < 0) {
			t->errors++;
			msg("%s walker %d: gup at %#llx: %s", r->arch, t->id,
			    (unsigned long long)va, mmp_strerror(n));
			continue;
		}
		for (int i = 0; i < n; i++) {
			if (!pin_ok(r, pfns[i], &why)) {
				t->bad_pins++;
				msg("%s walker %d: pinned pfn %#llx for %#llx: %s", r->arch,
				    t->id, (unsigned long long)pfns[i],
				    (unsigned long long)(va + i * PG), why);
			}
		}
		/* Hold the pins a moment: let a mutator zap and free under them. */
		for (volatile int spin = rnd(t) % 256; spin > 0; spin--)
			;
		for (int i = 0; i < n; i++) {
			if (!pin_ok(r, pfns[i], &why)) {
				t->bad_pins++;
				msg("%s walker %d: pinned pfn %#llx for %#llx, held: %s", r->arch,
				    t->id, (unsigned long long)pfns[i],
				    (unsigned long long)(va + i * PG), why);
			}
		}
		if (n > 0 && mmp_unpin(r->s, pfns, n)) {
			t->errors++;
			msg("%s walker %d: unpin refused", r->arch, t->id);
		}
		t->pins += n;
		t->slow_pins += slow ? n : 0;
	}
	if (mmp_cpu_detach(cpu))
		t->errors++;
	return NULL;
}

/* Write a tag into pages [first, first + n) of @table, mapping the table first if it is gone. */
static int touch(struct thr *t, struct mmp_cpu *cpu, unsigned int table, uint64_t first,
		 uint64_t n)
{
	struct mmp_space *s = t->run->s;
	uint64_t base = table_addr(table), addr;

	for (uint64_t p = first; p < first + n; p++) {
		uint64_t va = base + p * PG, tag = TAG_MAGIC << 48 | va;
		int err = mmp_write(cpu, va, &tag, sizeof(tag));

		if (err == -EFAULT) {
			err = mmp_mmap(s, base, PMD_SIZE, RW, MMP_MAP_FIXED, &addr);
			if (!err)
				err = mmp_write(cpu, va, &tag, sizeof(tag));
		}
		if (err)
			return err;
	}
	return 0;
}

static int mutate(struct thr *t, struct mmp_cpu *cpu)
{
	const unsigned int *weight = t->run->mix->weight;
	struct mmp_space *s = t->run->s;
	unsigned int table = pick_table(t), roll = rnd(t) % OP_WEIGHTS, op;
	uint64_t first = rnd(t) % TABLE_PAGES, n = 1 + rnd(t) % 64, base = table_addr(table);
	uint64_t addr;
	int err;

	if (first + n > TABLE_PAGES)
		n = TABLE_PAGES - first;

	for (op = 0; op < NR_OPS - 1 && roll >= weight[op]; op++)
		roll -= weight[op];
	t->ops[op]++;
	switch (op) {
	case OP_TOUCH:
		err = touch(t, cpu, table, rnd(t) % 2 ? first % HOT_PAGES : first, n);
		break;
	case OP_DONTNEED_TABLE:
		err = mmp_madvise(s, base, PMD_SIZE, MMP_MADV_DONTNEED);
		/* Refill at once half of the time: the walkers then find a new table there. */
		if ((!err || err == -ENOMEM) && rnd(t) % 2)
			err = touch(t, cpu, table, 0, HOT_PAGES);
		break;
	case OP_DONTNEED_PART:
		err = mmp_madvise(s, base + first * PG, n * PG, MMP_MADV_DONTNEED);
		break;
	case OP_MUNMAP_TABLE:
		err = mmp_munmap(s, base, PMD_SIZE);
		break;
	case OP_MUNMAP_PART:
		err = mmp_munmap(s, base + first * PG, n * PG);
		break;
	case OP_MREMAP: {
		unsigned int to = (table + 1 + rnd(t) % (WIN_TABLES - 1)) % WIN_TABLES;

		/* Whole tables (move_pmd) or a few pages to the same offset elsewhere. */
		if (rnd(t) % 2)
			err = mmp_mremap(s, base, PMD_SIZE, PMD_SIZE,
					 MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, table_addr(to),
					 &addr);
		else
			err = mmp_mremap(s, base + first * PG, n * PG, n * PG,
					 MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED,
					 table_addr(to) + first * PG, &addr);
		break;
	}
	case OP_MAP_TABLE:
		err = mmp_mmap(s, base, PMD_SIZE, RW, MMP_MAP_FIXED, &addr);
		break;
	case OP_THP:
		err = mmp_madvise(s, base, PMD_SIZE, MMP_MADV_HUGEPAGE);
		if (!err || err == -ENOMEM)
			err = touch(t, cpu, table, first, 1);
		break;
	default:
		err = -EINVAL;
	}
	/*
	 * Holes are part of the game: madvise says -ENOMEM, mremap -EFAULT, and
	 * a touch races with the other mutator's munmap.
	 */
	if (err == -EFAULT && (op == OP_TOUCH || op == OP_DONTNEED_TABLE || op == OP_THP))
		err = 0;
	if (err == -ENOMEM && (op == OP_DONTNEED_TABLE || op == OP_DONTNEED_PART || op == OP_THP))
		err = 0;
	if (err == -EFAULT && op == OP_MREMAP)
		err = 0;
	if (err)
		msg("%s mutator %d: %s at %#llx: %s", t->run->arch, t->id, op_names[op],
		    (unsigned long long)base, mmp_strerror(err));
	return err;
}

static void *mutator(void *arg)
{
	struct thr *t = arg;
	struct run *r = t->run;
	struct mmp_cpu *cpu;

	if (mmp_cpu_attach(r->s, &cpu)) {
		t->errors++;
		return NULL;
	}
	while (!stopping(r)) {
		maybe_pause(r);
		if (mutate(t, cpu))
			t->errors++;
	}
	if (mmp_cpu_detach(cpu))
		t->errors++;
	return NULL;
}

static void start(struct run *r, struct thr *thr, uint64_t seed)
{
	for (int i = 0; i < NR_WALKERS + NR_MUTATORS; i++) {
		thr[i] = (struct thr){
			.run = r, .id = i, .rng = seed * 0x9e3779b97f4a7c15ULL + i + 1,
		};
		tap_require(pthread_create(&thr[i].th, NULL, i < NR_WALKERS ? walker : mutator,
					   &thr[i]) == 0, "start thread %d", i);
	}
}

static void join(struct run *r, struct thr *thr)
{
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < NR_WALKERS + NR_MUTATORS; i++) {
		pthread_join(thr[i].th, NULL);
		r->pins += thr[i].pins;
		r->gup_calls += thr[i].gup_calls;
		r->slow_pins += thr[i].slow_pins;
		r->bad_pins += thr[i].bad_pins;
		r->errors += thr[i].errors;
		for (int k = 0; k < NR_OPS; k++)
			r->ops[k] += thr[i].ops[k];
	}
}

/* A way of freeing tables: MMP_OPT_RCU_TABLE_FREE, MMP_OPT_TABLE_BATCH_FAIL. */
struct path {
	const char *name;
	long mode, fail;
	enum mmp_counter shows;	/* the counter its tables show in */
};

static const struct path path_rcu = { "call_rcu", MMP_TABLE_FREE_RCU, 0, MMP_C_RCU_CALL };
static const struct path path_sync = { "synchronize_rcu", MMP_TABLE_FREE_SYNC_EACH, 0,
				       MMP_C_RCU_SYNC };
static const struct path path_semi_one = { "semi RCU, single tables", MMP_TABLE_FREE_SEMI_RCU, 2,
					   MMP_C_PGTABLE_FREE_ONE_IPI };
static const struct path path_rcu_one = { "RCU, single tables", MMP_TABLE_FREE_RCU, 2,
					  MMP_C_PGTABLE_FREE_ONE_RCU };
static const struct path path_native = { "native", MMP_TABLE_FREE_NATIVE, 0,
					 MMP_C_PGTABLE_FREE_NATIVE };

static bool enough_work(struct mmp_space *s, const struct path *p)
{
	struct mmp_counters c;

	mmp_space_counters(s, &c);
	return c.v[MMP_C_GUP_FAST] && c.v[p->shows] &&
	       c.v[MMP_C_PT_RECLAIM_FAST] + c.v[MMP_C_PT_RECLAIM_SLOW];
}

/* Park every thread, verify, go on. */
static int pause_and_verify(struct run *r)
{
	int err;

	__atomic_store_n(&r->pause, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&r->paused, __ATOMIC_ACQUIRE) != NR_WALKERS + NR_MUTATORS)
		usleep(1000);
	err = mmp_space_verify(r->s);
	__atomic_store_n(&r->pause, 0, __ATOMIC_RELEASE);
	return err;
}

static struct mmp_space *stress_space(struct mmp_phys *phys, const char *arch,
				      const struct path *p)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct mmp_space *s = NULL;
	uint64_t addr;

	/* PT_RECLAIM on whatever the back end's release: its table frees are what is stressed. */
	if (mmp_space_create(phys, &cfg, &s) ||
	    mmp_space_set_opt(s, MMP_OPT_RCU_TABLE_FREE, p->mode) ||
	    mmp_space_set_opt(s, MMP_OPT_TABLE_BATCH_FAIL, p->fail) ||
	    mmp_space_set_opt(s, MMP_OPT_PT_RECLAIM, 1) ||
	    mmp_mmap(s, WIN_BASE, WIN_LEN, RW, MMP_MAP_FIXED | MMP_MAP_POPULATE, &addr))
		return NULL;
	return s;
}

/* One correct run of @seconds on @arch; @p picks the table-free path. */
static void stress(const char *arch, const struct path *p, const struct mix *mix, double seconds,
		   bool soak, uint64_t seed)
{
	struct thr thr[NR_WALKERS + NR_MUTATORS];
	struct run r = { .arch = arch, .mix = mix };
	char how[64];
	struct mmp_counters c;
	uint64_t free0, reclaim;
	double t0 = now(), next_verify = t0 + 5;
	int verify_fails = 0;
	struct mmp_phys_stat st;

	snprintf(how, sizeof(how), "%s %s", p->name, mix->name);
	tap_require(mmp_phys_create(PHYS_BYTES, &r.phys) == 0, "phys");
	mmp_phys_stat(r.phys, &st);
	free0 = st.free_pages;
	r.s = stress_space(r.phys, arch, p);
	tap_require(r.s != NULL, "%s: a space with the window mapped", arch);
	start(&r, thr, seed);
	/* At least @seconds, and on until every kind of work showed up (a loaded host). */
	while (now() - t0 < seconds || (!enough_work(r.s, p) && now() - t0 < seconds + 30)) {
		usleep(soak ? 100000 : 10000);
		if (soak && now() >= next_verify) {
			verify_fails += !!pause_and_verify(&r);
			mmp_space_counters(r.s, &c);
			printf("# %s %s soak %.0f s: pins %llu, rcu_call %llu, rcu_sync %llu, "
			       "pt_reclaim %llu, pt_poison_seen %llu\n", arch, how, now() - t0,
			       (unsigned long long)c.v[MMP_C_GUP_FAST],
			       (unsigned long long)c.v[MMP_C_RCU_CALL],
			       (unsigned long long)c.v[MMP_C_RCU_SYNC],
			       (unsigned long long)(c.v[MMP_C_PT_RECLAIM_FAST] +
						    c.v[MMP_C_PT_RECLAIM_SLOW]),
			       (unsigned long long)c.v[MMP_C_PT_POISON_SEEN]);
			fflush(stdout);
			next_verify = now() + 5;
		}
	}
	join(&r, thr);

	mmp_space_counters(r.s, &c);
	reclaim = c.v[MMP_C_PT_RECLAIM_FAST] + c.v[MMP_C_PT_RECLAIM_SLOW];
	printf("# %s %s %.1f s: %llu gup calls, %llu pins (%llu locked), ops", arch, how,
	       now() - t0, (unsigned long long)r.gup_calls, (unsigned long long)r.pins,
	       (unsigned long long)r.slow_pins);
	for (int k = 0; k < NR_OPS; k++)
		printf(" %s %llu", op_names[k], (unsigned long long)r.ops[k]);
	printf("; rcu_call %llu, rcu_sync %llu, pt_reclaim %llu, freed rcu/sync %llu/%llu\n",
	       (unsigned long long)c.v[MMP_C_RCU_CALL], (unsigned long long)c.v[MMP_C_RCU_SYNC],
	       (unsigned long long)reclaim, (unsigned long long)c.v[MMP_C_PGTABLE_FREE_RCU],
	       (unsigned long long)c.v[MMP_C_PGTABLE_FREE_SYNC]);
	tap_eq(c.v[MMP_C_PT_POISON_SEEN], 0, "%s %s: no lockless walk read a freed table", arch,
	       how);
	tap_eq(r.bad_pins, 0, "%s %s: every pinned frame was a live folio of ours", arch, how);
	tap_eq(r.errors, 0, "%s %s: no call failed unexpectedly", arch, how);
	tap_eq(verify_fails, 0, "%s %s: periodic verify", arch, how);
	tap_eq(mmp_space_verify(r.s), 0, "%s %s: verify after the run", arch, how);
	tap_ok(c.v[MMP_C_GUP_FAST] > 0, "%s %s: gup_fast pinned pages (%llu)", arch, how,
	       (unsigned long long)c.v[MMP_C_GUP_FAST]);
	tap_ok(c.v[p->shows] > 0, "%s %s: tables went that way (%s %llu)", arch, how,
	       mmp_counter_name(p->shows), (unsigned long long)c.v[p->shows]);
	if (p->mode == MMP_TABLE_FREE_SEMI_RCU)
		tap_ok(c.v[MMP_C_TABLE_SYNC_IPI] >= c.v[MMP_C_TABLE_SYNC_ONE] &&
			       c.v[MMP_C_TABLE_SYNC_ONE] == c.v[MMP_C_PGTABLE_FREE_ONE_IPI],
		       "%s %s: an IPI to each other CPU before each single table (%llu syncs, "
		       "%llu IPIs)", arch, how, (unsigned long long)c.v[MMP_C_TABLE_SYNC_ONE],
		       (unsigned long long)c.v[MMP_C_TABLE_SYNC_IPI]);
	tap_ok(reclaim > 0, "%s %s: PT_RECLAIM freed tables (%llu)", arch, how,
	       (unsigned long long)reclaim);
	tap_eq(mmp_munmap(r.s, WIN_BASE, WIN_LEN), 0, "%s %s: munmap the window", arch, how);
	tap_eq(mmp_space_destroy(r.s), 0, "%s %s: destroy", arch, how);
	mmp_phys_stat(r.phys, &st);
	/* The huge zero folio, once a read fault made it, lives as long as the phys. */
	if (r.phys->huge_zero_pfn != NO_PFN)
		free0 -= HPAGE_PMD_NR;
	tap_eq(st.free_pages, free0, "%s %s: every frame back", arch, how);
	tap_eq(mmp_phys_destroy(r.phys), 0, "%s %s: phys destroyed", arch, how);
}

/* ---- the window, forced ---------------------------------------------------------- */

enum table_free { FREE_CALL_RCU, FREE_SYNC, FREE_BROKEN, NR_TABLE_FREES };

static const char *const table_free_names[NR_TABLE_FREES] = {
	"call_rcu", "synchronize_rcu", "no grace period (MMP_DEBUG_BROKEN_TABLE_FREE)",
};

struct held_walk {
	struct mmp_space *s;
	int pinned;
	uint64_t pfn;
};

/* One GUP-fast walk on a CPU of its own: the debug hook holds it between PMD and table. */
static void *held_gup(void *arg)
{
	struct held_walk *w = arg;
	struct mmp_cpu *cpu;

	if (mmp_cpu_attach(w->s, &cpu)) {
		w->pinned = -EBADE;
		return NULL;
	}
	w->pinned = mmp_gup_fast(w->s, WIN_BASE, 1, true, &w->pfn);
	if (w->pinned > 0)
		mmp_unpin(w->s, &w->pfn, w->pinned);
	mmp_cpu_detach(cpu);
	return NULL;
}

/*
 * A GUP-fast walk of WIN_BASE held after it read the PMD, while the main
 * thread frees the PTE table below (munmap, or MADV_DONTNEED with
 * PT_RECLAIM) through @how; then the walk goes on and reads the table.
 */
static void held_table_free(const char *arch, enum table_free how, bool dontneed)
{
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct held_walk w = { 0 };
	struct mmp_phys *phys;
	struct park park;
	uint64_t addr, poison, freed_rcu;
	pthread_t th;
	bool held;
	char what[160];

	snprintf(what, sizeof(what), "%s: a GUP-fast walk held between PMD and table while %s "
		 "frees the table through %s", arch, dontneed ? "MADV_DONTNEED" : "munmap",
		 table_free_names[how]);
	tap_require(mmp_phys_create(16 * MiB, &phys) == 0, "%s: phys", what);
	tap_require(mmp_space_create(phys, &cfg, &w.s) == 0 &&
		    mmp_space_set_opt(w.s, MMP_OPT_RCU_TABLE_FREE, how != FREE_SYNC) == 0 &&
		    mmp_space_set_opt(w.s, MMP_OPT_PT_RECLAIM, 1) == 0 &&
		    mmp_debug_set(w.s, MMP_DEBUG_BROKEN_TABLE_FREE, how == FREE_BROKEN) == 0 &&
		    mmp_debug_set(w.s, MMP_DEBUG_SKIP_IPI_WAIT, how == FREE_BROKEN) == 0 &&
		    mmp_mmap(w.s, WIN_BASE, PMD_SIZE, RW, MMP_MAP_FIXED | MMP_MAP_POPULATE,
			     &addr) == 0, "%s: a space with one table mapped", what);
	freed_rcu = counter(w.s, MMP_C_PGTABLE_FREE_RCU);
	park_init(&park, w.s);
	park_arm(&park, MMP_DEBUG_GUP_FAST_PMD,
		 PARK_AT(MMP_DEBUG_GRACE_PERIOD) | PARK_AT(MMP_DEBUG_IPI_WAIT));
	tap_require(!pthread_create(&th, NULL, held_gup, &w), "start a thread");
	held = park_wait_parked(&park);
	if (dontneed)
		tap_eq(mmp_madvise(w.s, WIN_BASE, PMD_SIZE, MMP_MADV_DONTNEED), 0,
		       "%s: MADV_DONTNEED", what);
	else
		tap_eq(mmp_munmap(w.s, WIN_BASE, PMD_SIZE), 0, "%s: munmap", what);
	park_release(&park);
	pthread_join(th, NULL);
	poison = counter(w.s, MMP_C_PT_POISON_SEEN);

	tap_ok(held && !park.timeouts, "%s: the walk was held at the window", what);
	tap_ok(counter(w.s, MMP_C_PGTABLE_FREE_RCU) + counter(w.s, MMP_C_PGTABLE_FREE_SYNC) > 0,
	       "%s: the table was freed", what);
	if (how == FREE_BROKEN) {
		tap_ok(poison > 0, "%s: the walk read the table after its free", what);
	} else {
		tap_eq(poison, 0, "%s: the walk read a live table", what);
		tap_eq(w.pinned, 0, "%s: and found the entry cleared", what);
		/* A shootdown by IPIs waits for the walk too, before any free. */
		if (how == FREE_SYNC)
			tap_eq(park.waited, 1, "%s: the unmap waited for the walk", what);
		else
			tap_ok(counter(w.s, MMP_C_PGTABLE_FREE_RCU) > freed_rcu,
			       "%s: the table went by call_rcu, which waited for the walk", what);
	}
	tap_eq(mmp_space_verify(w.s), 0, "%s: verify", what);
	park_fini(&park, w.s);
	tap_eq(mmp_space_destroy(w.s), 0, "%s: destroy", what);
	tap_eq(mmp_phys_destroy(phys), 0, "%s: every frame back", what);
}

int main(int argc, char **argv)
{
	const char *env = getenv("MMP_STRESS_SECONDS"), *only = NULL, *arch;
	uint64_t seed = getenv("MMP_STRESS_SEED") ? strtoull(getenv("MMP_STRESS_SEED"), NULL, 0)
						  : (uint64_t)time(NULL);
	double seconds = env ? atof(env) : 1.0;
	bool soak = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--soak") && i + 1 < argc) {
			soak = true;
			seconds = atof(argv[++i]);
		} else if (argv[i][0] != '-') {
			only = argv[i];
		} else {
			fprintf(stderr, "usage: %s [--soak SECONDS] [ARCH]\n", argv[0]);
			return 2;
		}
	}
	if (seconds <= 0)
		seconds = 1.0;
	printf("# seed %llu (MMP_STRESS_SEED), %.1f s per back end and path\n",
	       (unsigned long long)seed, seconds);
	for_each_arch(i, arch) {
		if (only && strcmp(only, arch))
			continue;
		double half = soak ? seconds : seconds / 2;

		stress(arch, &path_rcu, &mix_all, seconds, soak, seed + i);
		stress(arch, &path_sync, &mix_all, half, soak, seed + i);
		stress(arch, &path_rcu, &mix_split, half, soak, seed + i);
		stress(arch, &path_semi_one, &mix_all, half, soak, seed + i);
		stress(arch, &path_rcu_one, &mix_all, half, soak, seed + i);
		if (strncmp(arch, "arm64", 5))	/* refused where TLBIs are broadcast */
			stress(arch, &path_native, &mix_all, half, soak, seed + i);
		for (int how = 0; how < NR_TABLE_FREES && !soak; how++) {
			held_table_free(arch, how, false);
			held_table_free(arch, how, true);
		}
	}
	return tap_done();
}
