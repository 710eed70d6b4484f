/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's view of each process, compared after an op: smaps, status,
 * pagemap, faults and THP events of the host agents against those of the
 * variants whose spaces model the host as it is (docs/testing.md's table).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mmprim/mmprim.h>

#include "mm.h"
#include "proc_field.h"
#include "run.h"

/*
 * Pages the host may change behind the test's back, and the library only in
 * KD_RECLAIM: MADV_FREE'd and droppable pages (page reclaim, or DAMON's
 * pageout, may drop them at any time) and the regular file's pages (clean
 * page cache is reclaimable; shmem without swap is not). Their residency is
 * not compared: a VMA holding one keeps its sizes out, a page its pagemap
 * word, a status line that counts them its change.
 */
static bool vma_maps_regular_file(struct run *r, const struct mmp_vma *vma)
{
	for (int i = 0; i < KD_MAX_FILES; i++)
		if (vma->vm_file && vma->vm_file == r->v[0].files[i])
			return !kd_file_shmem(i);
	return false;
}

/* Which status lines a page of [start, end) of proc @p may move unseen: STATUS_* bits. */
enum { STATUS_ANON = 1, STATUS_FILE = 2, STATUS_PTE = 4 };

static unsigned int unsettled(struct run *r, int p, uint64_t start, uint64_t end)
{
	unsigned int what = 0;

	start = MAX(start, KD_WIN_BASE) & ~(KD_PAGE - 1);
	end = MIN(end, KD_WIN_END);
	for (uint64_t a = start; a < end; a += KD_PAGE)
		if (*lazy_at(r, p, a)) {
			what |= STATUS_ANON;
			break;
		}
	for (struct mmp_vma *vma = vma_find_next(r->v[0].sp[p], start); vma && vma->start < end;
	     vma = vma->vm_next)
		if (vma_maps_regular_file(r, vma))
			what |= STATUS_FILE;
	return what;
}

static uint64_t counter_of(struct mmp_space *s, enum mmp_counter c)
{
	struct mmp_counters cs;

	return mmp_space_counters(s, &cs) ? 0 : cs.v[c];
}

/* The range an op faults in, or may: the pages its faults are about. */
static void op_fault_range(const struct kd_op *op, uint64_t *start, uint64_t *end)
{
	*start = op->addr;
	*end = op->addr + (op->kind == KD_PIN ? op->len * KD_PAGE : op->len);
	if (*end < *start)
		*end = UINT64_MAX;
}

/*
 * The THP events of /proc/vmstat and of the stats files of the mTHP sizes
 * the host enables, against the same events summed over a variant's
 * processes: the kernel counts for the whole machine, so another process's
 * THP activity can only add to the host's side. The host having fewer than
 * the library is a divergence; more is counted and reported.
 */
#define MTHP_FIELD(f)	offsetof(struct mmp_mthp_stats, f)

/* /proc/vmstat's, of PMD-sized THPs: the library's counter, or else its order-9 mTHP statistic. */
static const struct {
	const char *name;
	int counter;		/* MMP_C_*, or -1 */
	size_t mthp_field;	/* else this array of struct mmp_mthp_stats */
} vmstat_events[KD_NR_VMSTAT_EVENTS] = {
	{ "thp_fault_alloc", -1, MTHP_FIELD(anon_fault_alloc) },
	{ "thp_split_pmd", MMP_C_PMD_SPLIT, 0 },
	{ "thp_collapse_alloc", MMP_C_THP_COLLAPSE_ALLOC, 0 },
	{ "thp_split_page", -1, MTHP_FIELD(split) },
	{ "thp_deferred_split_page", MMP_C_THP_DEFERRED_SPLIT_PAGE, 0 },
	{ "thp_swpout_fallback", MMP_C_THP_SWPOUT_FALLBACK, 0 },
};

/* The files of hugepages-<size>kB/stats/ compared, for each order below the PMD's. */
static const struct {
	const char *name;
	size_t mthp_field;
} mthp_events[KD_NR_MTHP_EVENTS] = {
	{ "anon_fault_alloc", MTHP_FIELD(anon_fault_alloc) },
	{ "split", MTHP_FIELD(split) },
	{ "split_deferred", MTHP_FIELD(split_deferred) },
	{ "swpout_fallback", MTHP_FIELD(swpout_fallback) },
};

/* Event @i of the mTHP sizes: its order, and its file in mthp_events[]. */
static unsigned int mthp_event_order(unsigned int i)
{
	return KD_MTHP_ORDER_MIN + (i - KD_NR_VMSTAT_EVENTS) / KD_NR_MTHP_EVENTS;
}

static unsigned int mthp_event_file(unsigned int i)
{
	return (i - KD_NR_VMSTAT_EVENTS) % KD_NR_MTHP_EVENTS;
}

static const char *thp_event_name(unsigned int i, char *buf, size_t size)
{
	if (i < KD_NR_VMSTAT_EVENTS)
		return vmstat_events[i].name;
	snprintf(buf, size, "%s of %s", mthp_events[mthp_event_file(i)].name,
		 mmp_thp_size_name(mthp_event_order(i)));
	return buf;
}

/*
 * Does the host have a stats folder for this mTHP size? Its files move
 * whether the size is enabled or not: a large page-cache folio of that order
 * splits (`split`) however anonymous memory is set.
 */
static bool host_mthp_stats(struct run *r, unsigned int order)
{
	return r->opt->cfg.mthp_mode[order] >= 0;
}

static bool host_thp_events(struct run *r, uint64_t *ev)
{
	FILE *f = fopen("/proc/vmstat", "r");
	unsigned int found = 0;
	char name[64];
	unsigned long long v;

	if (!f)
		return false;
	memset(ev, 0, KD_NR_THP_EVENTS * sizeof(*ev));
	while (fscanf(f, "%63s %llu", name, &v) == 2)
		for (unsigned int i = 0; i < KD_NR_VMSTAT_EVENTS; i++)
			if (!strcmp(name, vmstat_events[i].name)) {
				ev[i] = v;
				found++;
			}
	fclose(f);
	for (unsigned int i = KD_NR_VMSTAT_EVENTS; i < KD_NR_THP_EVENTS; i++) {
		unsigned int o = mthp_event_order(i);
		char path[160];
		long n;

		if (!host_mthp_stats(r, o))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/%s/stats/%s",
			 mmp_thp_size_name(o), mthp_events[mthp_event_file(i)].name);
		n = proc_number(path);
		if (n < 0)
			return false;
		ev[i] = (uint64_t)n;
	}
	return found == KD_NR_VMSTAT_EVENTS;
}

static uint64_t mthp_stat(const struct mmp_mthp_stats *st, size_t field, unsigned int order)
{
	return ((const uint64_t *)((const char *)st + field))[order];
}

static void lib_thp_events(struct run *r, struct variant *v, uint64_t *ev)
{
	memset(ev, 0, KD_NR_THP_EVENTS * sizeof(*ev));
	for (int p = 0; p < KD_MAX_PROCS; p++) {
		struct mmp_mthp_stats st;
		struct mmp_counters cs;

		if (!r->live[p] || !v->sp[p] || mmp_space_counters(v->sp[p], &cs) ||
		    mmp_space_mthp_stats(v->sp[p], &st))
			continue;
		for (unsigned int i = 0; i < KD_NR_VMSTAT_EVENTS; i++)
			ev[i] += vmstat_events[i].counter >= 0 ?
					 cs.v[vmstat_events[i].counter] :
					 mthp_stat(&st, vmstat_events[i].mthp_field, MMP_PMD_ORDER);
		for (unsigned int i = KD_NR_VMSTAT_EVENTS; i < KD_NR_THP_EVENTS; i++)
			ev[i] += mthp_stat(&st, mthp_events[mthp_event_file(i)].mthp_field,
					   mthp_event_order(i));
	}
}

static void compare_thp_events(struct run *r, const struct kd_op *op)
{
	uint64_t host[KD_NR_THP_EVENTS];
	bool more = false;

	/* A fork or an exit adds or takes a process, and its counts with it. */
	if (op->kind == KD_FORK || op->kind == KD_EXIT || !host_thp_events(r, host))
		return;
	r->thp_checked++;
	for (int k = 0; k < r->nv && !failed(r); k++) {
		struct variant *v = &r->v[k];
		uint64_t lib[KD_NR_THP_EVENTS];

		if (!v->host_like)
			continue;
		lib_thp_events(r, v, lib);
		for (unsigned int i = 0; i < KD_NR_THP_EVENTS; i++) {
			uint64_t hd = host[i] - r->host_thp[i], ld = lib[i] - v->thp_events[i];

			if (hd < ld) {
				char name[80];

				diverge(r, "%s: %s counted %" PRIu64 " %s, the host %" PRIu64, v->desc,
					kd_kind_name(op->kind), ld,
					thp_event_name(i, name, sizeof(name)), hd);
			}
			more |= hd > ld;
		}
	}
	r->thp_more += more;
}

/* Before @op: can its faults be compared, and where does each variant's count stand? */
void state_before(struct run *r, const struct kd_op *op)
{
	uint64_t start, end;

	r->placed_outside = false;
	if (!r->opt->compare_state || !r->live[op->proc])
		return;
	op_fault_range(op, &start, &end);
	/* A pin is GUP in the library, a touch on the host: their faults differ by design. */
	r->faults_comparable = !r->opt->threads && !r->pin_skew && op->kind != KD_FORK &&
			       op->kind != KD_EXIT &&
			       op->kind != KD_PIN &&
			       !(op->kind == KD_MMAP_FILE && !kd_file_shmem(op->proc2)) &&
			       !unsettled(r, op->proc, start, end);
	for (int k = 0; k < r->nv; k++)
		if (r->v[k].host_like && r->v[k].sp[op->proc]) {
			r->v[k].faults[op->proc] = counter_of(r->v[k].sp[op->proc], MMP_C_MIN_FLT);
			lib_thp_events(r, &r->v[k], r->v[k].thp_events);
		}
	host_thp_events(r, r->host_thp);
	for (int p = 0; p < KD_MAX_PROCS; p++)
		if (r->live[p])
			kd_host_take_faults(r->h, p);
}

/* What mmp_space_smaps() and mmp_space_pagemap() show, read as the host's files are. */
static void lib_state(struct mmp_space *s, struct kd_state *st)
{
	int n = mmp_space_smaps_buf(s, NULL, 0);
	char *text = NULL;
	FILE *f;

	st->nvmas = 0;
	if (n > 0 && (text = malloc((size_t)n + 1)) && mmp_space_smaps_buf(s, text, n + 1) == n &&
	    (f = fmemopen(text, n, "r"))) {
		kd_parse_smaps(f, st);
		fclose(f);
	}
	free(text);
	mmp_space_pagemap(s, KD_WIN_BASE, KD_NPAGES, st->pagemap);
	for (uint64_t i = 0; i < KD_NPAGES; i++)
		st->pagemap[i] &= KD_PM_FLAGS;
}

static void compare_smaps(struct run *r, struct variant *v, int p)
{
	const struct kd_state *h = &r->hstate, *l = &r->lstate;

	if (h->nvmas != l->nvmas) {
		diverge(r, "%s: smaps of proc %d has %d VMAs in the window, the host's %d", v->desc, p,
			l->nvmas, h->nvmas);
		return;
	}
	for (int i = 0; i < h->nvmas && !failed(r); i++) {
		const struct kd_smaps *hv = &h->vmas[i], *lv = &l->vmas[i];
		bool sizes = !unsettled(r, p, hv->start, hv->end);

		if (hv->start != lv->start || hv->end != lv->end) {
			diverge(r, "%s: smaps of proc %d: VMA %d is [%#" PRIx64 ", %#" PRIx64 "), the "
				"host's [%#" PRIx64 ", %#" PRIx64 ")", v->desc, p, i, lv->start, lv->end,
				hv->start, hv->end);
			return;
		}
		if (strcmp(hv->vmflags, lv->vmflags)) {
			diverge(r, "%s: smaps of proc %d [%#" PRIx64 ", %#" PRIx64 "): VmFlags \"%s\", "
				"the host's \"%s\"", v->desc, p, hv->start, hv->end, lv->vmflags,
				hv->vmflags);
			return;
		}
		for (unsigned int f = 0; f < kd_nr_smaps_fields; f++) {
			const char *name = kd_smaps_fields[f].name;
			uint64_t hn = *(const uint64_t *)((const char *)hv + kd_smaps_fields[f].off);
			uint64_t ln = *(const uint64_t *)((const char *)lv + kd_smaps_fields[f].off);

			if (!sizes && strcmp(name, "THPeligible"))
				continue;
			/*
			 * Locked is a locked VMA's Pss: who shares a page moves it
			 * too. A fork of a pinned THP splits the parent's PMD and
			 * gives the child copies (copy_huge_pmd), where the host's
			 * unpinned THP stays mapped by a PMD on both sides.
			 */
			if (r->pin_skew && (!strncmp(name, "Pss", 3) || !strncmp(name, "Shared", 6) ||
					    !strncmp(name, "Private", 7) || !strcmp(name, "Locked") ||
					    !strcmp(name, "AnonHugePages")))
				continue;
			if (hn != ln) {
				diverge(r, "%s: smaps of proc %d [%#" PRIx64 ", %#" PRIx64 "): %s %" PRIu64
					", the host's %" PRIu64, v->desc, p, hv->start, hv->end, name, ln,
					hn);
				return;
			}
		}
	}
}

static void compare_pagemap(struct run *r, struct variant *v, int p)
{
	uint64_t mask = r->pin_skew ? ~MMP_PM_MMAP_EXCLUSIVE : ~0ULL;

	for (uint64_t i = 0; i < KD_NPAGES; i++) {
		uint64_t a = KD_WIN_BASE + i * KD_PAGE;

		if (!((r->hstate.pagemap[i] ^ r->lstate.pagemap[i]) & mask) ||
		    unsettled(r, p, a, a + KD_PAGE))
			continue;
		diverge(r, "%s: pagemap of proc %d at %#" PRIx64 ": flags %#" PRIx64 ", the host's %#"
			PRIx64, v->desc, p, a, r->lstate.pagemap[i], r->hstate.pagemap[i]);
		return;
	}
}

/*
 * /proc/PID/status counts the agent's own memory too: compare how each line
 * moved since the last look, on both sides. A line the unsettled pages may
 * have moved then or now is left out. VmPTE is compared where the tables are
 * the host's own kind (x86_64, four levels) and PT_RECLAIM is the host's.
 */
static void compare_status(struct run *r, struct variant *v, int p, unsigned int skip)
{
	const struct kd_status *hn = &r->hstate.status, *hl = &r->hlast[p], *ll = &v->last[p];
	struct mmp_space_stat st;
	struct kd_status ln;
	long reclaim = -1;

	mmp_space_stat(v->sp[p], &st);
	ln.rss_anon = st.rss_anon_pages * (KD_PAGE >> 10);
	ln.rss_file = st.rss_file_pages * (KD_PAGE >> 10);
	ln.rss_shmem = st.rss_shmem_pages * (KD_PAGE >> 10);
	ln.vm_pte = st.pgtable_bytes >> 10;
	ln.hugetlb = st.hugetlb_pages * (KD_PAGE >> 10);
	mmp_space_get_opt(v->sp[p], MMP_OPT_PT_RECLAIM, &reclaim);
	if (r->opt->verbose)
		fprintf(stderr, "# op %" PRIu64 " proc %d %s: RssAnon %" PRIu64 "/%" PRIu64 " RssFile %"
			PRIu64 "/%" PRIu64 " RssShmem %" PRIu64 "/%" PRIu64 " VmPTE %" PRIu64 "/%"
			PRIu64 " kB (library/host)\n", r->idx, p, v->desc, ln.rss_anon, hn->rss_anon,
			ln.rss_file, hn->rss_file, ln.rss_shmem, hn->rss_shmem, ln.vm_pte, hn->vm_pte);
	if (r->status_known[p] && !r->opt->threads) {
		static const struct {
			const char *name;
			size_t off;
			unsigned int skip;
		} lines[] = {
			{ "RssAnon", offsetof(struct kd_status, rss_anon), STATUS_ANON },
			{ "RssFile", offsetof(struct kd_status, rss_file), STATUS_FILE },
			{ "RssShmem", offsetof(struct kd_status, rss_shmem), 0 },
			/* The host's reads that settle a lazy page may bring tables. */
			{ "VmPTE", offsetof(struct kd_status, vm_pte), STATUS_ANON | STATUS_PTE },
			{ "HugetlbPages", offsetof(struct kd_status, hugetlb), 0 },
		};

		for (unsigned int i = 0; i < sizeof(lines) / sizeof(lines[0]) && !failed(r); i++) {
			int64_t hd, ld;

			if (lines[i].skip & skip)
				continue;
			if (lines[i].off == offsetof(struct kd_status, vm_pte) &&
			    (strcmp(v->arch, "x86_64") || reclaim != r->opt->cfg.pt_reclaim))
				continue;
			hd = *(const uint64_t *)((const char *)hn + lines[i].off) -
			     *(const uint64_t *)((const char *)hl + lines[i].off);
			ld = *(const uint64_t *)((const char *)&ln + lines[i].off) -
			     *(const uint64_t *)((const char *)ll + lines[i].off);
			if (hd != ld)
				diverge(r, "%s: status of proc %d: %s moved by %" PRId64 " kB, the "
					"host's by %" PRId64 " kB", v->desc, p, lines[i].name, ld, hd);
		}
	}
	v->last[p] = ln;
}

/*
 * The op's faults in proc @p: the agent's min_flt against the space's, where
 * the MMU sets accessed and dirty itself, as the host's does: loongarch64
 * (and riscv64 with Svade) take a fault for each, which the kernel counts too.
 */
static void compare_faults(struct run *r, struct variant *v, int p, uint64_t host)
{
	uint64_t lib = counter_of(v->sp[p], MMP_C_MIN_FLT) - v->faults[p];
	long hw_ad = 0;

	mmp_space_get_opt(v->sp[p], MMP_OPT_HW_AD, &hw_ad);
	if (!hw_ad || !strncmp(v->arch, "loongarch64", 11))
		return;
	if (lib != host)
		diverge(r, "%s: %s in proc %d took %" PRIu64 " faults (min_flt), the host %" PRIu64,
			v->desc, kd_kind_name(r->op ? r->op->kind : 0), p, lib, host);
}

/*
 * After an op: what the kernel shows of each process, the host's against
 * every variant that models the host as it is. Faults are the op's own
 * process's; the rest is every process's, as an op may reach others (a
 * truncation zaps them, an exit leaves their pages exclusive).
 */
void compare_state(struct run *r, const struct kd_op *op)
{
	uint64_t host_faults = kd_host_take_faults(r->h, op->proc);

	compare_thp_events(r, op);
	for (int p = 0; p < KD_MAX_PROCS && !failed(r); p++) {
		unsigned int skip;
		int err;

		if (!r->live[p])
			continue;
		err = kd_host_state(r->h, p, &r->hstate);
		if (err) {
			diverge(r, "host agent %d: no state (%d)", p, err);
			return;
		}
		skip = unsettled(r, p, KD_WIN_BASE, KD_WIN_END);
		/*
		 * Moved or mapped outside the window and dropped there: on the host,
		 * its page tables were shared with the agent's own mappings nearby.
		 */
		if ((r->placed_outside && p == op->proc) || r->pte_skew[p])
			skip |= STATUS_PTE;
		/* A reclaim the host did not make: start the status over. */
		if (op->kind == KD_RECLAIM)
			r->status_known[p] = false;
		for (int k = 0; k < r->nv && !failed(r); k++) {
			struct variant *v = &r->v[k];

			if (!v->host_like || !v->sp[p])
				continue;
			lib_state(v->sp[p], &r->lstate);
			compare_smaps(r, v, p);
			if (!failed(r))
				compare_pagemap(r, v, p);
			if (!failed(r) && !KD_SANITIZED)
				compare_status(r, v, p, skip | r->status_skip[p]);
			if (!failed(r) && !KD_SANITIZED && p == op->proc && r->faults_comparable &&
			    !r->placed_outside)
				compare_faults(r, v, p, host_faults);
		}
		r->hlast[p] = r->hstate.status;
		r->status_known[p] = true;
		r->status_skip[p] = skip;
	}
}
