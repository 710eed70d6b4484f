/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The variants a run compares with the host: each back end twice, with its
 * defaults and with a tiny TLB and switches drawn from the seed, one space
 * per simulated process; their settings, and their end.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <mmprim/mmprim.h>

#include "mm.h"
#include "kdiff.h"
#include "run.h"

/* The switches a variant draws from its seed (and SETOPT toggles), and how many values each takes. */
static const struct {
	enum mmp_opt opt;
	int nvals;
} switches[] = {
	{ MMP_OPT_PTE_BATCH, 2 },     { MMP_OPT_RCU_TABLE_FREE, 2 }, { MMP_OPT_PT_RECLAIM, 2 },
	{ MMP_OPT_LAZYFREE_PMD, 2 },  { MMP_OPT_HW_AD, 2 },	     { MMP_OPT_BBML2_NOABORT, 2 },
	{ MMP_OPT_HUGE_ORDER, MMP_NR_HUGE_ORDERS },
};
#define NR_SWITCHES	(sizeof(switches) / sizeof(switches[0]))
/* After the switches come the THP orders 2..9, three modes each. */
#define NR_SETTINGS	(NR_SWITCHES + 8)

/*
 * The PMD THP mode is visible to the process: a read fault maps the huge zero
 * page only in a THP-eligible VMA, and that fault prepares an anon_vma, which
 * decides later merges. So every variant has the same: the host's, or without
 * the host one drawn from the seed.
 */
void apply_setting(struct run *r, struct mmp_space *s, unsigned int which, unsigned int value)
{
	unsigned int order;

	which %= NR_SETTINGS;
	if (which < NR_SWITCHES) {
		mmp_space_set_opt(s, switches[which].opt, value % switches[which].nvals);
		return;
	}
	order = 2 + (which - NR_SWITCHES);
	if (order != 9)
		mmp_space_set_thp(s, order, value % 3);
}

/*
 * What the host was found to be (kd_host_probe), in the library's terms: no
 * zero page, soft-dirty, its files' read-ahead, and the mTHP sizes it
 * enables; against the host, its PT_RECLAIM too, whatever the back end's
 * release says (an x86_64 host frees the PTE table MADV_DONTNEED empties, so
 * its next fault there may map a THP, where a table left behind takes small
 * pages). A forked space inherits all of it.
 */
static void host_like(struct run *r, struct mmp_space *s)
{
	const struct kd_host_config *c = &r->opt->cfg;

	mmp_space_set_opt(s, MMP_OPT_FORBID_ZEROPAGE, c->forbids_zeropage);
	if (r->opt->host)
		mmp_space_set_opt(s, MMP_OPT_PT_RECLAIM, c->pt_reclaim);
	if (c->read_ahead_kb >= 0)
		mmp_space_set_opt(s, MMP_OPT_READ_AHEAD_KB, c->read_ahead_kb);
	mmp_space_set_opt(s, MMP_OPT_SOFT_DIRTY, c->soft_dirty);
	for (unsigned int o = 2; o < 9; o++) {
		int mode = c->mthp_mode[o] == KD_THP_INHERIT ? r->thp_pmd_mode : c->mthp_mode[o];

		if (mode == MMP_THP_ALWAYS || mode == MMP_THP_MADVISE)
			mmp_space_set_thp(s, o, mode);
	}
}

/*
 * Every back end twice: its defaults, and a tiny TLB with settings drawn from
 * the seed. With opt->only_variant, only that one is made (the draws stay the
 * same, so it is the same variant), which makes minimizing much faster.
 */
/* Back ends left out are named once per process: the fuzzer builds variants per input. */
static bool said_left_out;

int make_variants(struct run *r)
{
	struct kd_rng rng = { r->opt->seed ^ 0x5eed };

	for (int a = 0; a < mmp_arch_count(); a++) {
		const char *arch = mmp_arch_name(a);

		if (r->opt->only_arch && strcmp(r->opt->only_arch, arch))
			continue;
		/*
		 * Host and library use the same addresses: a back end whose user
		 * space ends below the host's window (3 levels: 256 or 512 GiB)
		 * cannot take part.
		 */
		if (mmp_arch_find(arch)->task_size < KD_THREAD_BASE + KD_MAX_THREADS * KD_THREAD_SIZE) {
			if (!said_left_out)
				printf("# %s left out: its user space (%llu GiB) ends below the host's "
				       "window\n", arch,
				       (unsigned long long)(mmp_arch_find(arch)->task_size >> 30));
			continue;
		}
		for (int k = 0; k < 2 && r->nv < KD_MAX_VARIANTS; k++) {
			struct variant *v = &r->v[r->nv];
			struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
			unsigned int which[6], value[6];
			int len, orig = r->orig_nv++;

			for (int i = 0; k && i < 6; i++) {
				which[i] = kd_below(&rng, NR_SETTINGS);
				value[i] = kd_below(&rng, 16);
			}
			if (r->opt->only_variant >= 0 && orig != r->opt->only_variant)
				continue;
			r->nv++;
			v->arch = arch;
			v->orig = orig;
			v->host_like = !k;
			if (k) {
				/* A tiny TLB evicts often, so stale entries meet the sanitizer. */
				cfg.tlb_entries = 16;
				cfg.tlb_ways = 4;
			}
			if (mmp_phys_create(PHYS_BYTES, &v->phys) ||
			    mmp_space_create(v->phys, &cfg, &v->sp[0]) ||
			    mmp_cpu_attach(v->sp[0], &v->cpu[0]))
				return -ENOMEM;
			for (int i = 0; i < KD_MAX_FILES; i++)
				if (mmp_file_create(v->phys, 0, kd_file_shmem(i) ? MMP_FILE_SHMEM : 0,
						    &v->files[i]))
					return -ENOMEM;
			if (r->opt->hugetlb)
				mmp_phys_set_hugepages(v->phys, 2ULL << 20, KD_HUGETLB_POOL);
			mmp_space_set_thp(v->sp[0], 9, r->thp_pmd_mode);
			host_like(r, v->sp[0]);
			if (r->opt->kernel_version)
				mmp_space_set_opt(v->sp[0], MMP_OPT_KERNEL_VERSION,
						  r->opt->kernel_version);
			len = snprintf(v->desc, sizeof(v->desc), "%s%s", arch, k ? " tlb16" : "");
			for (int i = 0; k && i < 6; i++) {
				long val;

				apply_setting(r, v->sp[0], which[i], value[i]);
				if (which[i] < NR_SWITCHES) {
					mmp_space_get_opt(v->sp[0], switches[which[i]].opt, &val);
					len += snprintf(v->desc + len, sizeof(v->desc) - len, " opt%d=%ld",
							switches[which[i]].opt, val);
				} else {
					len += snprintf(v->desc + len, sizeof(v->desc) - len, " thp%u=%u",
							2 + which[i] - (unsigned int)NR_SWITCHES,
							value[i] % 3);
				}
				if (len >= (int)sizeof(v->desc))
					len = sizeof(v->desc) - 1;
			}
		}
	}
	said_left_out = true;
	return r->nv ? 0 : -ENOENT;
}

void unpin_all(struct variant *v, int p)
{
	for (int i = 0; i < v->npins[p]; i++)
		mmp_unpin(v->sp[p], v->pins[p][i].pfns, v->pins[p][i].nr);
	v->npins[p] = 0;
}

void proc_destroy(struct variant *v, int p)
{
	if (!v->sp[p])
		return;
	unpin_all(v, p);
	mmp_cpu_detach(v->cpu[p]);
	mmp_space_destroy(v->sp[p]);
	v->sp[p] = NULL;
	v->cpu[p] = NULL;
}

void destroy_variants(struct run *r)
{
	for (int i = 0; i < r->nv; i++) {
		for (int p = 0; p < KD_MAX_PROCS; p++)
			proc_destroy(&r->v[i], p);
		for (int f = 0; f < KD_MAX_FILES; f++)
			if (r->v[i].files[f] && mmp_file_destroy(r->v[i].files[f]))
				diverge(r, "%s: file %d still mapped at the end", r->v[i].desc, f);
		if (r->v[i].phys && mmp_phys_destroy(r->v[i].phys))
			diverge(r, "%s: phys still busy at the end", r->v[i].desc);
	}
}

