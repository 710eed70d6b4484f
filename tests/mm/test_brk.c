// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mmp_brk(): the kernel's brk rules on every back end, the error paths, and
 * (on an x86_64 host, where brk is the kernel's and not qemu-user's) the same
 * sequence of breaks run on the host, answer by answer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

#define PG	4096ULL
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/*
 * start_brk of a PIE binary: ELF_ET_DYN_BASE, 2/3 of the space (x86-64:
 * 0x555555554000), set per back end: a 3-level space is only 256 GiB.
 */
static uint64_t heap_base;
#define HEAP	heap_base

/*
 * One step of a scripted sequence, relative to start_brk: move the break
 * (BRK), or put a one-page read-only mapping in its way (OBSTACLE), or unmap
 * (UNMAP, @len bytes at @off). @expect is brk(2)'s answer relative to start.
 */
enum step_kind { BRK, OBSTACLE, UNMAP };

struct step {
	enum step_kind kind;
	int64_t off;
	uint64_t len;
	int64_t expect;
	const char *what;
};

static const struct step script[] = {
	{ BRK, 0, 0, 0, "brk(start): nothing changes" },
	{ BRK, 100, 0, 100, "grow within the first page: the break keeps its bytes" },
	{ BRK, 50, 0, 50, "shrink within the page" },
	{ BRK, -(int64_t)PG, 0, 50, "below start_brk: refused, old break" },
	{ BRK, 3 * PG + 5, 0, 3 * PG + 5, "grow by pages, unaligned" },
	{ OBSTACLE, 8 * PG, PG, 0, "a mapping 4 pages above the heap" },
	{ BRK, 7 * PG, 0, 7 * PG, "grow to one page below it: allowed" },
	{ BRK, 7 * PG + 1, 0, 7 * PG, "one byte more would leave no free page: refused" },
	{ BRK, 9 * PG, 0, 7 * PG, "grow over it: refused" },
	{ UNMAP, PG, PG, 0, "a hole in the heap" },
	{ BRK, PG, 0, PG, "shrink over the hole" },
	{ UNMAP, 0, PG, 0, "unmap what is left of the heap" },
	{ BRK, 10, 0, 10, "a break in the same page needs no mapping" },
	{ BRK, 5 * PG, 0, 5 * PG, "grow again after the heap was unmapped" },
	{ UNMAP, 2 * PG, 3 * PG, 0, "unmap the top of the heap" },
	{ BRK, 3 * PG, 0, 5 * PG, "shrink with nothing mapped between the breaks: refused" },
	{ BRK, PG, 0, PG, "shrink past the hole into a mapped page: allowed" },
	{ BRK, 0, 0, PG, "back to start: nothing mapped below the break, refused" },
};

/* Run the script on a simulated space; @got receives each BRK's answer. */
static void run_sim(struct mmp_space *s, uint64_t start, int64_t *got)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(script); i++) {
		const struct step *st = &script[i];
		uint64_t out = 0, addr = 0;

		got[i] = 0;
		if (st->kind == OBSTACLE) {
			must(mmp_mmap(s, start + st->off, st->len, MMP_PROT_READ,
				      MMP_MAP_FIXED_NOREPLACE, &addr) == 0, "obstacle");
		} else if (st->kind == UNMAP) {
			must(mmp_munmap(s, start + st->off, st->len) == 0, "unmap");
		} else {
			mmp_brk(s, start + st->off, &out);
			got[i] = (int64_t)(out - start);
		}
	}
}

static void test_script(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	int64_t got[ARRAY_SIZE(script)];
	int bad = 0;

	must(mmp_brk_init(s, HEAP) == 0, "init");
	run_sim(s, HEAP, got);
	for (unsigned int i = 0; i < ARRAY_SIZE(script); i++) {
		if (script[i].kind == BRK && got[i] != script[i].expect) {
			printf("# %s: step %u (%s): got %+" PRId64 ", want %+" PRId64 "\n", arch, i,
			       script[i].what, got[i], script[i].expect);
			bad++;
		}
	}
	tap_ok(!bad, "%s: the scripted breaks answer as Linux 6.18 does", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify after the script", arch);
	mmp_space_destroy(s);
}

static void test_heap_vma(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_space_stat st;
	struct mmp_space *child = NULL;
	struct mmp_cpu *cpu;
	uint64_t out = 0, addr = 0, v = 0;
	int err;

	/* A mapping that ends at start_brk (the bss) stays a VMA of its own. */
	must(mmp_mmap(s, HEAP - 4 * PG, 4 * PG, MMP_PROT_READ | MMP_PROT_WRITE,
		      MMP_MAP_FIXED_NOREPLACE, &addr) == 0, "bss");
	must(mmp_brk_init(s, HEAP) == 0, "init");
	must(mmp_brk(s, HEAP + 10 * PG, &out) == 0, "grow");
	mmp_space_stat(s, &st);
	tap_ok(st.nr_vmas == 2, "%s: the first growth does not merge into the bss (%" PRIu64 " VMAs)",
	       arch, st.nr_vmas);
	for (int i = 1; i <= 5; i++)
		must(mmp_brk(s, HEAP + (10 + (uint64_t)i) * PG, &out) == 0, "grow %d", i);
	mmp_space_stat(s, &st);
	tap_ok(st.nr_vmas == 2, "%s: later growth extends the heap VMA", arch);

	/* The heap is ordinary anonymous memory: faults, fork, COW. */
	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	v = 0x1234;
	tap_ok(mmp_write(cpu, HEAP + 14 * PG, &v, sizeof(v)) == 0, "%s: write the heap's last page",
	       arch);
	tap_ok(mmp_write(cpu, HEAP + 15 * PG, &v, sizeof(v)) == -EFAULT,
	       "%s: the page above the break faults", arch);
	must(mmp_fork(s, &child) == 0, "fork");
	err = mmp_brk(child, 0, &out);
	tap_ok(err == 0 && out == HEAP + 15 * PG, "%s: the child inherits the break", arch);
	tap_ok(mmp_brk_init(child, HEAP) == -EBUSY, "%s: a grown heap cannot move", arch);
	tap_ok(mmp_brk(child, HEAP + PG, &out) == 0 && out == HEAP + PG, "%s: the child shrinks its heap",
	       arch);
	v = 0;
	tap_ok(mmp_read(cpu, HEAP + 14 * PG, &v, sizeof(v)) == 0 && v == 0x1234,
	       "%s: the parent keeps its heap", arch);
	mmp_brk(s, 0, &out);
	tap_ok(out == HEAP + 15 * PG, "%s: and its break", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify parent and child", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(child);
	/* Shrinking to start_brk removes the heap VMA; the bss stays. */
	tap_ok(mmp_brk(s, HEAP, &out) == 0 && out == HEAP, "%s: shrink to start_brk", arch);
	mmp_space_stat(s, &st);
	tap_ok(st.nr_vmas == 1 && st.rss_anon_pages == 0, "%s: only the bss is left", arch);
	mmp_space_destroy(s);
}

static void test_errors(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	uint64_t out = 1, addr = 0;

	tap_ok(mmp_brk(NULL, HEAP, &out) == -EINVAL, "%s: NULL space", arch);
	tap_ok(mmp_brk(s, HEAP, NULL) == -EINVAL, "%s: NULL result", arch);
	tap_ok(mmp_brk(s, HEAP, &out) == -EINVAL && out == 0, "%s: no heap yet: -EINVAL, break 0",
	       arch);
	tap_ok(mmp_brk_init(NULL, HEAP) == -EINVAL, "%s: init NULL", arch);
	tap_ok(mmp_brk_init(s, HEAP + 1) == -EINVAL, "%s: init unaligned", arch);
	tap_ok(mmp_brk_init(s, PG) == -EINVAL, "%s: init below mmap_min_addr", arch);
	tap_ok(mmp_brk_init(s, task_size(s)) == -EINVAL, "%s: init at the task size", arch);
	tap_ok(mmp_brk_init(s, HEAP + PG) == 0 && mmp_brk_init(s, HEAP) == 0,
	       "%s: an unused heap can move", arch);
	tap_ok(mmp_brk(s, 0, &out) == 0 && out == HEAP, "%s: brk(NULL) reads start_brk", arch);
	tap_ok(mmp_brk(s, HEAP - 1, &out) == -EINVAL && out == HEAP, "%s: below start_brk", arch);
	tap_ok(mmp_brk(s, UINT64_MAX, &out) == -ENOMEM && out == HEAP, "%s: ~0 (would wrap)", arch);
	tap_ok(mmp_brk(s, task_size(s) + 1, &out) == -ENOMEM && out == HEAP,
	       "%s: beyond the task size", arch);
	must(mmp_mmap(s, HEAP + PG, PG, MMP_PROT_NONE, MMP_MAP_FIXED_NOREPLACE, &addr) == 0,
	     "obstacle");
	tap_ok(mmp_brk(s, HEAP + 1, &out) == -ENOMEM && out == HEAP,
	       "%s: a PROT_NONE mapping blocks too", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify after the errors", arch);
	mmp_space_destroy(s);

	/*
	 * max_map_count: every VMA is a separate page; past the limit the heap
	 * cannot add one more (do_brk_flags refuses only above it).
	 */
	s = new_space(phys, arch);
	must(mmp_brk_init(s, HEAP) == 0, "init");
	for (uint64_t i = 0, a = 0x100000000ULL; i < 65531; i++, a += 2 * PG)
		must(mmp_mmap(s, a, PG, MMP_PROT_READ, MMP_MAP_FIXED_NOREPLACE, &addr) == 0,
		     "mapping %" PRIu64, i);
	tap_ok(mmp_brk(s, HEAP + PG, &out) == -ENOMEM && out == HEAP,
	       "%s: no heap VMA past max_map_count", arch);
	tap_ok(mmp_space_verify(s) == 0, "%s: verify at max_map_count", arch);
	mmp_space_destroy(s);
}

#if defined(__x86_64__)
/* start_brk of this process, field 47 of /proc/self/stat; 0 when unknown. */
static uint64_t host_start_brk(void)
{
	char buf[4096], *p;
	unsigned long long v = 0;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;
	int field = 2;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the command name may hold spaces */
	if (!p)
		return 0;
	for (p++; *p && field < 47; p++)
		if (*p == ' ')
			field++;
	if (sscanf(p, "%llu", &v) != 1)
		return 0;
	return v;
}

/*
 * The script on the host, in a child that calls nothing that could use the
 * heap between the breaks (malloc shares it), reporting through shared memory.
 */
static void test_host(struct mmp_phys *phys)
{
	int64_t *host = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int64_t sim[ARRAY_SIZE(script)];
	uint64_t start = host_start_brk(), cur, out;
	struct mmp_space *s;
	int status = 0, bad = 0;
	pid_t pid;

	if (host == MAP_FAILED || !start) {
		tap_ok(1, "# SKIP host brk: no /proc/self/stat start_brk");
		return;
	}
	cur = (uint64_t)syscall(SYS_brk, 0);
	/* Run from the current break: the script's heap starts above malloc's. */
	cur = (cur + PG - 1) & ~(PG - 1);
	pid = fork();
	if (pid == 0) {
		uint64_t base = (uint64_t)syscall(SYS_brk, cur);

		for (unsigned int i = 0; i < ARRAY_SIZE(script); i++) {
			const struct step *st = &script[i];

			host[i] = 0;
			if (base != cur)
				_exit(3);
			if (st->kind == OBSTACLE) {
				if (mmap((void *)(cur + st->off), st->len, PROT_READ,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) ==
				    MAP_FAILED)
					_exit(4);
			} else if (st->kind == UNMAP) {
				munmap((void *)(cur + st->off), st->len);
			} else {
				host[i] = (int64_t)((uint64_t)syscall(SYS_brk, cur + st->off) - cur);
			}
		}
		_exit(0);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "host: the script ran (status %d)",
	       status);

	/* The same on a space whose heap is the host's: start_brk, grown to @cur. */
	s = new_space(phys, mmp_arch_name(0));	/* the first back end: 47-bit user space or more */
	must(mmp_brk_init(s, (start + PG - 1) & ~(PG - 1)) == 0, "init at the host's start_brk");
	if (cur > start)
		must(mmp_brk(s, cur, &out) == 0, "grow to the host's break");
	run_sim(s, cur, sim);
	for (unsigned int i = 0; i < ARRAY_SIZE(script); i++) {
		if (script[i].kind == BRK && sim[i] != host[i]) {
			printf("# step %u (%s): host %+" PRId64 ", simulated %+" PRId64 "\n", i,
			       script[i].what, host[i], sim[i]);
			bad++;
		}
	}
	tap_ok(!bad, "host and simulation agree on every break");
	mmp_space_destroy(s);
	munmap(host, PG);
}
#else
static void test_host(struct mmp_phys *phys)
{
	(void)phys;
	tap_ok(1, "# SKIP host brk: only on x86_64 hosts (qemu-user emulates brk itself)");
}
#endif

int main(void)
{
	struct mmp_phys *phys;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for (int a = 0; a < mmp_arch_count(); a++) {
		const char *arch = mmp_arch_name(a);

		struct mmp_space *s = new_space(phys, arch);

		heap_base = task_size(s) / 3 * 2 & ~(PG - 1);
		mmp_space_destroy(s);
		test_script(phys, arch);
		test_heap_vma(phys, arch);
		test_errors(phys, arch);
	}
	test_host(phys);
	mmp_phys_destroy(phys);
	return tap_done();
}
