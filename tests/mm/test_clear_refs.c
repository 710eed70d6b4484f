/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/PID/clear_refs as mmp_space_clear_refs() on every back end: 1, 2 and
 * 3 age all, anonymous or file pages (smaps Referenced); 4 restarts
 * soft-dirty tracking (MMP_OPT_SOFT_DIRTY, on the back ends whose format
 * has the bit): VM_SOFTDIRTY and pagemap bit 55 cleared, the next write
 * marks its page again, private, shared and THP alike, a pinned page kept
 * writable; 5 resets VmHWM; bad types. The soft-dirty round is run on the
 * host too and the pages it reports compared. mmp_space_verify() after
 * each step.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mmprim/introspect.h>

#include "util.h"

#define PG	4096ULL
#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)

static uint64_t referenced(struct mmp_space *s, uint64_t a)
{
	struct mmp_vma_info v;

	return mmp_space_vma_info(s, a, &v) ? ~0ULL : v.referenced;
}

static uint32_t vflags(struct mmp_space *s, uint64_t a)
{
	struct mmp_vma_info v;

	return mmp_space_vma_info(s, a, &v) ? 0 : v.flags;
}

/* Bit i set: page i of the @n from @a is soft-dirty in pagemap. */
static uint64_t soft_dirty_mask(struct mmp_space *s, uint64_t a, unsigned int n)
{
	uint64_t pm[64], mask = 0;

	if (mmp_space_pagemap(s, a, n, pm) != (int)n)
		return ~0ULL;
	for (unsigned int i = 0; i < n; i++)
		if (pm[i] & MMP_PM_SOFT_DIRTY)
			mask |= 1ULL << i;
	return mask;
}

static void touch(struct mmp_cpu *cpu, uint64_t a, unsigned int n, bool write)
{
	for (unsigned int i = 0; i < n; i++) {
		unsigned char b = (unsigned char)(i + 1);

		must((write ? mmp_write(cpu, a + i * PG, &b, 1) : mmp_read(cpu, a + i * PG, &b, 1)) == 0,
		     "touch page %u", i);
	}
}

static void check_young(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	struct mmp_file *f;
	uint64_t a, fa = 0;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map(s, 8 * PG, RW);
	touch(cpu, a, 8, true);
	must(mmp_file_create(phys, 8 * PG, 0, &f) == 0, "file");
	must(mmp_mmap_file(s, 0, 8 * PG, MMP_PROT_READ, MMP_MAP_SHARED, f, 0, &fa) == 0, "map file");
	touch(cpu, fa, 8, false);
	tap_ok(referenced(s, a) == 8 * PG && referenced(s, fa) == 8 * PG,
	       "%s: every touched page is referenced", arch);
	tap_eq(mmp_space_clear_refs(s, 2), 0, "%s: clear_refs 2", arch);
	tap_ok(referenced(s, a) == 0 && referenced(s, fa) == 8 * PG,
	       "%s: 2 ages anonymous VMAs only", arch);
	touch(cpu, a, 2, false);
	tap_eq(referenced(s, a), 2 * PG, "%s: a read makes a page young again", arch);
	tap_eq(mmp_space_clear_refs(s, 3), 0, "%s: clear_refs 3", arch);
	tap_ok(referenced(s, a) == 2 * PG && referenced(s, fa) == 0,
	       "%s: 3 ages file VMAs only", arch);
	touch(cpu, fa, 1, false);
	tap_eq(mmp_space_clear_refs(s, 1), 0, "%s: clear_refs 1", arch);
	tap_ok(referenced(s, a) == 0 && referenced(s, fa) == 0, "%s: 1 ages everything", arch);
	touch(cpu, a, 8, false);
	tap_eq(referenced(s, a), 8 * PG, "%s: the data reads back and the pages are young", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after clear_refs 1-3", arch);
	mmp_munmap(s, fa, 8 * PG);
	mmp_file_destroy(f);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

static void check_soft_dirty(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	struct mmp_file *f;
	uint64_t a, sh = 0, thp, pinned_pfn = 0;
	bool tracks;
	unsigned char b = 7;

	must(mmp_space_set_opt(s, MMP_OPT_SOFT_DIRTY, 1) == 0, "soft-dirty on");
	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map(s, 8 * PG, RW);
	tracks = vflags(s, a) & MMP_VMA_SOFTDIRTY;
	touch(cpu, a, 8, true);
	must(mmp_memfd_create(phys, 0, &f) == 0 && mmp_file_truncate(f, 4 * PG) == 0, "memfd");
	must(mmp_mmap_file(s, 0, 4 * PG, RW, MMP_MAP_SHARED, f, 0, &sh) == 0, "map memfd");
	touch(cpu, sh, 4, true);
	tap_eq(soft_dirty_mask(s, a, 8), tracks ? 0xffULL : 0, "%s: written pages soft-dirty",
	       arch);
	tap_eq(mmp_space_clear_refs(s, 4), 0, "%s: clear_refs 4", arch);
	tap_eq(soft_dirty_mask(s, a, 8) | soft_dirty_mask(s, sh, 4), 0,
	       "%s: nothing soft-dirty after it", arch);
	tap_ok(!(vflags(s, a) & MMP_VMA_SOFTDIRTY) && !(vflags(s, sh) & MMP_VMA_SOFTDIRTY),
	       "%s: VMAs lose VM_SOFTDIRTY", arch);
	mmp_write(cpu, a + 2 * PG, &b, 1);
	mmp_write(cpu, a + 5 * PG, &b, 1);
	touch(cpu, a + 6 * PG, 1, false);
	mmp_write(cpu, sh + PG, &b, 1);
	tap_eq(soft_dirty_mask(s, a, 8), tracks ? 0x24ULL : 0,
	       "%s: private: the written pages only, not the read one", arch);
	tap_eq(soft_dirty_mask(s, sh, 4), tracks ? 0x2ULL : 0, "%s: shared memfd: the written page",
	       arch);
	{
		unsigned char r = 0;
		bool ok = true;

		for (unsigned int i = 0; i < 8; i++)
			ok &= !mmp_read(cpu, a + i * PG, &r, 1) &&
			      r == (i == 2 || i == 5 ? 7 : (unsigned char)(i + 1));
		tap_ok(ok, "%s: data intact through the write-protect", arch);
	}
	/* A new mapping is soft-dirty as a whole. */
	thp = map(s, 4 * MiB, RW);
	tap_eq(!!(vflags(s, thp) & MMP_VMA_SOFTDIRTY), tracks, "%s: a new VMA is sd", arch);
	thp = (thp + 2 * MiB - 1) & ~(2 * MiB - 1);
	must(mmp_madvise(s, thp, 2 * MiB, MMP_MADV_HUGEPAGE) == 0, "hugepage");
	mmp_write(cpu, thp, &b, 1);
	tap_eq(mmp_space_clear_refs(s, 4), 0, "%s: clear_refs 4 again", arch);
	tap_eq(soft_dirty_mask(s, thp, 4), 0, "%s: the THP is clean", arch);
	{
		struct mmp_addr_info in;
		bool pmd;

		must(mmp_space_query(s, thp, &in) == 0, "query");
		pmd = in.leaf_level == 1;
		mmp_write(cpu, thp + 3 * PG, &b, 1);
		tap_eq(soft_dirty_mask(s, thp, 4), !tracks ? 0 : pmd ? 0xfULL : 0x8ULL,
		       "%s: a write marks the whole THP (PMD: %d), or its page", arch, pmd);
	}
	/* A pinned anonymous page keeps its write permission: no fault marks it. */
	if (mmp_gup(s, a, 1, true, &pinned_pfn) == 1) {
		struct mmp_addr_info in;

		tap_eq(mmp_space_clear_refs(s, 4), 0, "%s: clear_refs 4 with a pin", arch);
		must(mmp_space_query(s, a, &in) == 0, "query");
		tap_ok(!tracks || (in.entry_flags[0] & MMP_ENTRY_WRITE),
		       "%s: the pinned page stays writable", arch);
		mmp_write(cpu, a, &b, 1);
		must(mmp_space_query(s, a, &in) == 0, "query");
		tap_eq(in.pfn, pinned_pfn, "%s: a write keeps the pinned page", arch);
		mmp_unpin(s, &pinned_pfn, 1);
	}
	tap_eq(mmp_space_verify(s), 0, "%s: verify after clear_refs 4", arch);
	mmp_munmap(s, sh, 4 * PG);
	mmp_file_destroy(f);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

static void check_hiwater(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_space_stat st;
	struct mmp_cpu *cpu;
	uint64_t a;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map(s, 64 * PG, RW);
	touch(cpu, a, 64, true);
	mmp_space_stat(s, &st);
	tap_eq(st.hiwater_rss_pages, 64, "%s: VmHWM follows the RSS up", arch);
	mmp_madvise(s, a, 32 * PG, MMP_MADV_DONTNEED);
	mmp_munmap(s, a + 32 * PG, 16 * PG);
	mmp_space_stat(s, &st);
	tap_ok(st.hiwater_rss_pages == 64 && st.rss_anon_pages == 16,
	       "%s: and stays at the peak as it drops (%llu)", arch,
	       (unsigned long long)st.hiwater_rss_pages);
	tap_eq(mmp_space_clear_refs(s, 5), 0, "%s: clear_refs 5", arch);
	mmp_space_stat(s, &st);
	tap_eq(st.hiwater_rss_pages, 16, "%s: VmHWM reset to the RSS", arch);
	touch(cpu, a, 8, true);
	mmp_space_stat(s, &st);
	tap_eq(st.hiwater_rss_pages, 24, "%s: and grows with it again", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after clear_refs 5", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

static void check_bad(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	static const int bad[] = { 0, 6, -1, 100, 1 << 30 };

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		tap_eq(mmp_space_clear_refs(s, bad[i]), -EINVAL, "%s: clear_refs %d: -EINVAL", arch,
		       bad[i]);
	tap_eq(mmp_space_clear_refs(NULL, 1), -EINVAL, "%s: NULL space", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify after bad types", arch);
	mmp_space_destroy(s);
}

static bool host_write_file(const char *path, const char *what)
{
	int fd = open(path, O_WRONLY);
	bool ok = fd >= 0 && write(fd, what, strlen(what)) == (ssize_t)strlen(what);

	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * The same soft-dirty round on the host and on x86_64, with soft-dirty
 * tracking as the host has it (CONFIG_MEM_SOFT_DIRTY: a new page's bit 55).
 */
static void check_host(struct mmp_phys *phys)
{
	uint64_t pm[8], host_mask = 0, lib_mask;
	unsigned char *h = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	int fd = open("/proc/self/pagemap", O_RDONLY);
	struct mmp_space *s = new_space(phys, "x86_64");
	struct mmp_cpu *cpu;
	unsigned char b = 9;
	bool host_tracks;
	uint64_t a;

	if (h == MAP_FAILED || fd < 0) {
		tap_ok(1, "# SKIP no pagemap on the host");
		mmp_space_destroy(s);
		return;
	}
	for (int i = 0; i < 8; i++)
		h[i * PG] = 1;
	must(pread(fd, pm, 8, (off_t)((uintptr_t)h / PG * 8)) == 8, "pagemap");
	host_tracks = pm[0] & (1ULL << 55);
	tap_ok(host_write_file("/proc/self/clear_refs", "4"), "host: clear_refs 4 (soft-dirty %s)",
	       host_tracks ? "tracked" : "not configured");
	h[2 * PG] = 2;
	h[5 * PG] = 2;
	(void)*(volatile unsigned char *)&h[6 * PG];
	must(pread(fd, pm, sizeof(pm), (off_t)((uintptr_t)h / PG * 8)) == sizeof(pm), "pagemap");
	for (int i = 0; i < 8; i++)
		if (pm[i] & (1ULL << 55))
			host_mask |= 1ULL << i;
	close(fd);
	munmap(h, 8 * PG);

	must(mmp_space_set_opt(s, MMP_OPT_SOFT_DIRTY, host_tracks) == 0, "soft-dirty as the host");
	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map(s, 8 * PG, RW);
	touch(cpu, a, 8, true);
	mmp_space_clear_refs(s, 4);
	mmp_write(cpu, a + 2 * PG, &b, 1);
	mmp_write(cpu, a + 5 * PG, &b, 1);
	touch(cpu, a + 6 * PG, 1, false);
	lib_mask = soft_dirty_mask(s, a, 8);
	tap_eq(lib_mask, host_mask, "host: the soft-dirty pages after clear_refs 4 and two writes");
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

int main(int argc, char **argv)
{
	struct mmp_phys *phys;
	const char *arch;

	tap_require(mmp_phys_create(128 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		if (argc > 1 && strcmp(argv[1], arch))
			continue;
		check_young(phys, arch);
		check_soft_dirty(phys, arch);
		check_hiwater(phys, arch);
		check_bad(phys, arch);
	}
	if (argc == 1)
		check_host(phys);
	mmp_phys_destroy(phys);
	return tap_done();
}
