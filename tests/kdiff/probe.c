/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What kind of Linux the host is, found by asking it: a kernel may legitimately
 * differ from the defaults the library models (no zero page for user memory,
 * soft-dirty tracking, a 6.18.y with a 6.19 change, PT_RECLAIM, the THP
 * settings). Each answer comes from a system call's visible effect in this
 * process, never from the version number alone; the differential test then
 * models what it found, or says what it cannot compare.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <mmprim/mmprim.h>

#include "kdiff.h"
#include "proc_field.h"

#define PROBE_PMD	(2UL << 20)

/* The smaps block of the VMA starting at @addr: field @name in kB, or the VmFlags line. */
static long smaps_field(void *addr, const char *name, char *flags, size_t flags_size)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512], want[32];
	size_t nlen = strlen(name);
	bool in = false;
	long val = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want))) {
			in = true;
		} else if (in && !strncmp(line, name, nlen) && line[nlen] == ':') {
			val = strtol(line + nlen + 1, NULL, 10);
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			if (flags && flags_size) {
				size_t n = strnlen(line + 8, flags_size - 1);

				memcpy(flags, line + 8, n);
				flags[n] = '\0';
			}
			break;
		}
	}
	fclose(f);
	return val;
}

/* @len bytes of fresh private anonymous memory at a PMD boundary, or NULL. */
static char *map_aligned(size_t len)
{
	char *p = mmap(NULL, len + PROBE_PMD, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + PROBE_PMD - 1) & ~(PROBE_PMD - 1);
	/* Cut what lies around, so the aligned range is a VMA of its own. */
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	if ((uintptr_t)p + PROBE_PMD > a)
		munmap((char *)a + len, (uintptr_t)p + PROBE_PMD - a);
	return (char *)a;
}

/* A THP "enabled" file's mode: MMP_THP_*, KD_THP_INHERIT, or -1 with no file. */
static int read_mode(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[160] = "";
	int mode = -1;

	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f))
		mode = strstr(line, "[always]") ? MMP_THP_ALWAYS :
		       strstr(line, "[madvise]") ? MMP_THP_MADVISE :
		       strstr(line, "[never]") ? MMP_THP_NEVER :
		       strstr(line, "[inherit]") ? KD_THP_INHERIT : -1;
	fclose(f);
	return mode;
}

/*
 * Does the host mark a VMA with guard regions VM_MAYBE_GUARD ("gu" in its
 * smaps VmFlags)? 6.19 does, and so do 6.18.y stable releases that took the
 * change: the release number alone does not say.
 */
bool kd_host_has_maybe_guard(void)
{
	char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char line[512], want[32];
	bool in = false, has = false;
	FILE *f;

	if (p == MAP_FAILED)
		return false;
	f = madvise(p, 4096, 102 /* MADV_GUARD_INSTALL */) ? NULL : fopen("/proc/self/smaps", "r");
	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmFlags:", 8)) {
			has |= in && strstr(line, " gu ") != NULL;
			in = false;
		} else if (!strncmp(line, want, strlen(want))) {
			in = true;
		}
	}
	if (f)
		fclose(f);
	munmap(p, 2 * 4096);
	return has;
}

/* The host's PMD THP mode (transparent_hugepage/enabled), or -1 if unknown. */
int kd_host_thp_mode(void)
{
	return read_mode("/sys/kernel/mm/transparent_hugepage/enabled");
}

/*
 * The read_ahead_kb of the device that holds the test's regular files (the
 * filesystem's bdi, named by its device number: a partition's is its
 * disk's), or -1 if not found. A file fault reads that much around it.
 */
static long files_read_ahead_kb(void)
{
	char path[128];
	struct stat st;
	long kb;

	if (stat(kd_regular_files_dir(), &st))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/read_ahead_kb", major(st.st_dev),
		 minor(st.st_dev));
	kb = proc_number(path);
	if (kb < 0) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/read_ahead_kb",
			 major(st.st_dev), minor(st.st_dev));
		kb = proc_number(path);
	}
	return kb;
}

void kd_host_probe(struct kd_host_config *c)
{
	size_t len = 2 * PROBE_PMD;
	volatile char sink;
	char *p, flags[256] = "";
	long before, after, min_addr;
	FILE *f;

	memset(c, 0, sizeof(*c));
	c->thp_pmd_mode = kd_host_thp_mode();
	for (unsigned int o = 2; o < 10; o++) {
		char path[128];

		snprintf(path, sizeof(path),
			 "/sys/kernel/mm/transparent_hugepage/hugepages-%lukB/enabled", 4UL << o);
		c->mthp_mode[o] = read_mode(path);
	}

	/*
	 * A read fault of untouched anonymous memory: the zero page counts
	 * nowhere in smaps. No answer (no smaps, as under qemu-user) keeps the
	 * default, the zero page.
	 */
	p = map_aligned(len);
	if (p) {
		sink = p[0];
		c->forbids_zeropage = smaps_field(p, "Rss", flags, sizeof(flags)) > 0;
		c->soft_dirty = strstr(flags, " sd ") != NULL;
		/* And in a MADV_HUGEPAGE range: the huge zero page, unless a THP comes instead. */
		if (!madvise(p + PROBE_PMD, PROBE_PMD, MADV_HUGEPAGE) &&
		    c->thp_pmd_mode != MMP_THP_NEVER) {
			sink = p[PROBE_PMD + 5 * 4096];
			c->no_huge_zero_page = smaps_field(p + PROBE_PMD, "Rss", NULL, 0) > 0;
		}
		/*
		 * PT_RECLAIM: MADV_DONTNEED of a whole PMD range frees its PTE
		 * table, and VmPTE falls by a page.
		 */
		madvise(p, PROBE_PMD, MADV_NOHUGEPAGE);
		p[4096] = 1;
		before = proc_field("/proc/self/status", "VmPTE");
		madvise(p, PROBE_PMD, MADV_DONTNEED);
		after = proc_field("/proc/self/status", "VmPTE");
		c->pt_reclaim = before > 0 && after >= 0 && after < before;
		munmap(p, len);
	}
	(void)sink;

	c->maybe_guard = kd_host_has_maybe_guard();
	min_addr = proc_number("/proc/sys/vm/mmap_min_addr");
	c->mmap_min_addr = min_addr > 0 ? (unsigned long)min_addr : 0;
	/* A running kdamond ages pages: Referenced is not compared anyway, say so. */
	f = popen("ls /sys/kernel/mm/damon/admin/kdamonds/*/state 2>/dev/null | "
		  "xargs -r grep -l '^on' 2>/dev/null | wc -l", "r");
	if (f) {
		int n = 0;

		c->damon = fscanf(f, "%d", &n) == 1 && n > 0;
		pclose(f);
	}
	c->kpageflags = access("/proc/kpageflags", R_OK) == 0;
	c->read_ahead_kb = files_read_ahead_kb();
}

void kd_host_config_print(const struct kd_host_config *c)
{
	printf("# host probe: zero page %s, huge zero page %s, soft-dirty %s, VM_MAYBE_GUARD %s, "
	       "PT_RECLAIM %s, THP %d, mmap_min_addr %lu, DAMON %s, kpageflags %s, "
	       "read_ahead_kb of the files' device %ld\n",
	       c->forbids_zeropage ? "no (mm_forbids_zeropage)" : "yes",
	       c->no_huge_zero_page ? "no" : "yes", c->soft_dirty ? "yes" : "no",
	       c->maybe_guard ? "yes" : "no", c->pt_reclaim ? "yes" : "no", c->thp_pmd_mode,
	       c->mmap_min_addr, c->damon ? "running" : "off",
	       c->kpageflags ? "readable" : "not readable", c->read_ahead_kb);
	printf("# host mTHP:");
	for (unsigned int o = 2; o < 10; o++)
		printf(" %lukB=%d", 4UL << o, c->mthp_mode[o]);
	printf("\n");
}
