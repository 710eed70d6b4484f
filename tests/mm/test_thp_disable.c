/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * prctl(PR_SET_THP_DISABLE) as mmp_space_set_thp_disable(), on every back
 * end: disabled completely, no fault allocates a large folio and
 * MADV_COLLAPSE is refused, in MADV_HUGEPAGE VMAs too; disabled "except
 * advised" (6.18), MADV_HUGEPAGE VMAs and MADV_COLLAPSE still get THPs;
 * fork inherits it; the arguments prctl refuses. Then the same steps on the
 * host kernel, compared: the PR_GET_THP_DISABLE value, AnonHugePages of an
 * advised and a plain region, and MADV_COLLAPSE's result.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <mmprim/introspect.h>

#include "util.h"

#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define REGION		(64 * MiB)	/* a PMD of every back end's geometry fits */
#define PLAIN		(1ULL << 36)
#define ADVISED		(PLAIN + REGION)

#ifndef PR_THP_DISABLE_EXCEPT_ADVISED
#define PR_THP_DISABLE_EXCEPT_ADVISED	(1 << 1)
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

/* The three settings, as (disable, flags) and what PR_GET_THP_DISABLE then says. */
static const struct mode {
	const char *name;
	int disable;
	unsigned int flags, get;
} modes[] = {
	{ "enabled", 0, 0, 0 },
	{ "disabled", 1, 0, 1 },
	{ "disabled except advised", 1, MMP_THP_DISABLE_EXCEPT_ADVISED,
	  1 | MMP_THP_DISABLE_EXCEPT_ADVISED },
};

/* What one setting gave: the folio orders a write faulted in, and MADV_COLLAPSE's result. */
struct outcome {
	unsigned int plain_order, advised_order;
	int collapse;
};

static unsigned int folio_order_at(struct mmp_space *s, uint64_t addr)
{
	struct mmp_addr_info info;

	return mmp_space_query(s, addr, &info) || info.folio_pfn == MMP_NO_PFN ? 0
									   : info.folio_order;
}

/* Fresh regions in @s, one write fault in each, then MADV_COLLAPSE of the plain one. */
static struct outcome run_lib(struct mmp_space *s, struct mmp_cpu *cpu)
{
	struct outcome o;
	uint64_t addr;

	must(!mmp_mmap(s, PLAIN, 2 * REGION, RW, MMP_MAP_FIXED, &addr), "map");
	must(!mmp_madvise(s, ADVISED, REGION, MMP_MADV_HUGEPAGE), "MADV_HUGEPAGE");
	must(!mmp_memset(cpu, PLAIN, 1, 1) && !mmp_memset(cpu, ADVISED, 1, 1), "write");
	o.plain_order = folio_order_at(s, PLAIN);
	o.advised_order = folio_order_at(s, ADVISED);
	o.collapse = mmp_madvise(s, PLAIN, REGION, MMP_MADV_COLLAPSE);
	must(!mmp_munmap(s, PLAIN, 2 * REGION), "unmap");
	return o;
}

static void check_errors(struct mmp_space *s, const char *arch)
{
	unsigned int v;

	tap_eq(mmp_space_set_thp_disable(NULL, 1, 0), -EINVAL, "%s: NULL space", arch);
	tap_eq(mmp_space_get_thp_disable(NULL, &v), -EINVAL, "%s: get, NULL space", arch);
	tap_eq(mmp_space_get_thp_disable(s, NULL), -EINVAL, "%s: get, NULL out", arch);
	tap_eq(mmp_space_set_thp_disable(s, 1, 1u << 2), -EINVAL, "%s: an unknown flag", arch);
	tap_eq(mmp_space_set_thp_disable(s, 0, MMP_THP_DISABLE_EXCEPT_ADVISED), -EINVAL,
	       "%s: a flag when enabling", arch);
	tap_eq(mmp_space_get_thp_disable(s, &v), 0, "%s: get", arch);
	tap_eq(v, 0, "%s: the refused calls changed nothing", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after the refused calls", arch);
}

static void check_arch(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *child;
	struct mmp_cpu *cpu, *ccpu;
	struct outcome o[3];
	unsigned int v;

	tap_require(mmp_cpu_attach(s, &cpu) == 0, "%s: attach", arch);
	/* Every size the back end's PMD allows, always: a plain VMA takes THPs too. */
	for (unsigned int order = 2; !mmp_space_set_thp(s, order, MMP_THP_ALWAYS); order++)
		;
	check_errors(s, arch);
	for (int m = 0; m < 3; m++) {
		tap_eq(mmp_space_set_thp_disable(s, modes[m].disable, modes[m].flags), 0, "%s: %s",
		       arch, modes[m].name);
		tap_ok(!mmp_space_get_thp_disable(s, &v) && v == modes[m].get,
		       "%s: %s: get says %u", arch, modes[m].name, v);
		o[m] = run_lib(s, cpu);
		tap_eq(mmp_space_verify(s), 0, "%s: %s: verify", arch, modes[m].name);
	}
	tap_ok(o[0].plain_order > 0 && o[0].advised_order > 0,
	       "%s: enabled: large folios in both VMAs (orders %u, %u)", arch, o[0].plain_order,
	       o[0].advised_order);
	tap_ok(o[1].plain_order == 0 && o[1].advised_order == 0,
	       "%s: disabled: small folios only, MADV_HUGEPAGE or not (orders %u, %u)", arch,
	       o[1].plain_order, o[1].advised_order);
	tap_eq(o[1].collapse, -EINVAL, "%s: disabled: MADV_COLLAPSE refused", arch);
	tap_ok(o[2].plain_order == 0 && o[2].advised_order == o[0].advised_order,
	       "%s: except advised: only the MADV_HUGEPAGE VMA (orders %u, %u)", arch,
	       o[2].plain_order, o[2].advised_order);
	tap_eq(o[2].collapse, o[0].collapse, "%s: except advised: MADV_COLLAPSE as if enabled",
	       arch);

	/* fork: the child's mm takes the flag (MMF_INIT_MASK). */
	must(!mmp_space_set_thp_disable(s, 1, 0), "disable");
	tap_require(mmp_fork(s, &child) == 0 && mmp_cpu_attach(child, &ccpu) == 0,
		    "%s: fork", arch);
	tap_ok(!mmp_space_get_thp_disable(child, &v) && v == 1, "%s: the child inherits it",
	       arch);
	o[0] = run_lib(child, ccpu);
	tap_ok(o[0].plain_order == 0 && o[0].advised_order == 0,
	       "%s: the child faults small folios only", arch);
	tap_eq(mmp_space_set_thp_disable(s, 0, 0), 0, "%s: enable again", arch);
	o[1] = run_lib(s, cpu);
	tap_ok(o[1].plain_order > 0, "%s: enabled again, THPs again", arch);
	tap_eq(mmp_space_verify(child), 0, "%s: verify the child", arch);
	mmp_cpu_detach(ccpu);
	mmp_space_destroy(child);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

/* AnonHugePages of the host VMA that holds @addr, in kB; -1 without one. */
static long host_anon_huge(void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	bool in = false;
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		/* A VMA's first line; no field's name is a hex number and a '-'. */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in = start <= (unsigned long)addr && (unsigned long)addr < end;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return in ? kb : -1;
}

/* The host's PMD THP mode (transparent_hugepage/enabled), as a space takes it. */
static enum mmp_thp_mode host_thp_mode(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[128] = "";

	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	return strstr(line, "[always]") ? MMP_THP_ALWAYS :
	       strstr(line, "[madvise]") ? MMP_THP_MADVISE : MMP_THP_NEVER;
}

/* The same steps on the host, in this process, which leaves THP as it found it. */
static int run_host(const struct mode *m, struct outcome *o, unsigned int *get)
{
	size_t len = 2 * REGION + 2 * MiB;
	char *raw, *plain, *advised;

	if (prctl(PR_SET_THP_DISABLE, m->disable, m->flags, 0, 0))
		return -errno;
	*get = (unsigned int)prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
	raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tap_require(raw != MAP_FAILED, "host mmap");
	plain = (char *)(((uintptr_t)raw + 2 * MiB - 1) & ~(uintptr_t)(2 * MiB - 1));
	advised = plain + REGION;
	/* Two VMAs: the advice splits the mapping. */
	tap_require(!madvise(advised, REGION, MADV_HUGEPAGE), "host MADV_HUGEPAGE");
	plain[0] = 1;
	advised[0] = 1;
	o->plain_order = host_anon_huge(plain) > 0 ? 9 : 0;
	o->advised_order = host_anon_huge(advised) > 0 ? 9 : 0;
	o->collapse = madvise(plain, REGION, MADV_COLLAPSE) ? -errno : 0;
	munmap(raw, len);
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	return 0;
}

static void check_host(struct mmp_phys *phys)
{
	struct mmp_space *s = new_space(phys, "x86_64");
	enum mmp_thp_mode mode = host_thp_mode();
	struct mmp_cpu *cpu;

	tap_require(mmp_cpu_attach(s, &cpu) == 0, "host: attach");
	tap_eq(mmp_space_set_thp(s, 9, mode), 0, "host: the space takes the host's PMD THP mode");
	for (int i = 0; i < 3; i++) {
		const struct mode *m = &modes[i];
		struct outcome h = { 0 }, l;
		unsigned int hget = 0, lget;
		int err = run_host(m, &h, &hget);

		if (err) {
			tap_ok(1, "# SKIP host: %s: prctl refused it (%s): older than 6.18", m->name,
			       strerror(-err));
			continue;
		}
		tap_eq(mmp_space_set_thp_disable(s, m->disable, m->flags), 0, "host: %s", m->name);
		tap_eq(mmp_space_get_thp_disable(s, &lget), 0, "host: %s: get", m->name);
		l = run_lib(s, cpu);
		tap_eq(lget, hget, "host: %s: PR_GET_THP_DISABLE", m->name);
		tap_eq(l.plain_order == 9, h.plain_order == 9,
		       "host: %s: a THP in the plain VMA", m->name);
		tap_eq(l.advised_order == 9, h.advised_order == 9,
		       "host: %s: a THP in the MADV_HUGEPAGE VMA", m->name);
		tap_eq(l.collapse, h.collapse, "host: %s: MADV_COLLAPSE", m->name);
	}
	/* The refused arguments, as prctl refuses them. */
	tap_eq(prctl(PR_SET_THP_DISABLE, 0, PR_THP_DISABLE_EXCEPT_ADVISED, 0, 0) ? -errno : 0,
	       mmp_space_set_thp_disable(s, 0, MMP_THP_DISABLE_EXCEPT_ADVISED),
	       "host: a flag when enabling");
	tap_eq(prctl(PR_SET_THP_DISABLE, 1, 1 << 2, 0, 0) ? -errno : 0,
	       mmp_space_set_thp_disable(s, 1, 1u << 2), "host: an unknown flag");
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	tap_eq(mmp_space_verify(s), 0, "host: verify");
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

int main(int argc, char **argv)
{
	struct mmp_phys *phys;
	const char *arch;

	tap_require(mmp_phys_create(512 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch)
		if (argc == 1 || !strcmp(argv[1], arch))
			check_arch(phys, arch);
	if (argc == 1 && host_oracle("PR_SET_THP_DISABLE"))
		check_host(phys);
	mmp_phys_destroy(phys);
	return tap_done();
}
