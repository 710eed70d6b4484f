/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmprim-probes: what the host itself charges for the work the time budgets
 * of fault_budget measure, without the simulator. Each probe runs
 * its variants in turn, the order rotating from round to round, after
 * writing 128 MiB of other memory, so each timed part starts cold; figures
 * are medians per 4 KiB page with 95% intervals, and differences are taken
 * within a round (paired), so that a host whose speed drifts still compares
 * like with like.
 *
 *   host-fault  the host kernel's own anonymous write fault and munmap, as
 *               fault_budget drives the simulator (128 MiB, one byte a page,
 *               THP off for the range).
 *   zap-rmw     the two locked read-modify-writes the kernel's zap makes per
 *               page (the PTE's get-and-clear, the page's mapcount), over
 *               cold PTEs and 40-byte descriptors, against plain ones.
 *   pcp-drain   the simulator's munmap of 128 MiB of 4 KiB folios (x86_64) on
 *               phys of 512 MiB (fault_budget's), 1 GiB and 2 GiB: the larger
 *               the zone, the more of a long run of frees the per-CPU list
 *               keeps (high_max is an eighth of it) instead of handing it on
 *               to the buddy lists.
 *   exit        processes that come and go: the host's own fork + exit of a
 *               small process beside the simulator's mmp_fork + destroy of
 *               the same, an empty space's create + destroy, and the destroy
 *               of a space with 1 MiB written (x86_64 back end).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmprim/mmprim.h>

#include "common.h"
#include "stats.h"

#define PROBE_BYTES	(128 * BENCH_MIB)
#define PROBE_PAGES	(PROBE_BYTES / 4096)
#define MAX_ROUNDS	64
#define MAX_VARIANTS	3	/* per probe */

static uint8_t *cold;

static void evict(void)
{
	memset(cold, 1, PROBE_BYTES);
}

static void *map_anon(size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void print_median(const char *what, const double *v, int n)
{
	double med, lo, hi;

	bench_median_ci(v, n, &med, &lo, &hi);
	printf("  %-34s %8.1f ns [%.1f, %.1f]\n", what, med, lo, hi);
}

/* Variant @i's per-page times less variant 0's, round by round. */
static void print_paired(const char *what, double t[][MAX_ROUNDS], int i, int n)
{
	double d[MAX_ROUNDS], med, lo, hi;

	for (int r = 0; r < n; r++)
		d[r] = t[i][r] - t[0][r];
	bench_median_ci(d, n, &med, &lo, &hi);
	printf("  %-34s %+8.1f ns [%+.1f, %+.1f]\n", what, med, lo, hi);
}

/* ---- host-fault ---------------------------------------------------------------- */

static int probe_host_fault(int rounds)
{
	double fault[MAX_ROUNDS], unmap[MAX_ROUNDS];

	for (int r = 0; r < rounds; r++) {
		uint8_t *p = map_anon(PROBE_BYTES, 0);
		double t0;

		if (!p)
			return -1;
		madvise(p, PROBE_BYTES, MADV_NOHUGEPAGE);
		evict();
		t0 = bench_now();
		for (size_t i = 0; i < PROBE_PAGES; i++)
			p[i * 4096] = 1;
		fault[r] = (bench_now() - t0) * 1e9 / PROBE_PAGES;
		evict();
		t0 = bench_now();
		munmap(p, PROBE_BYTES);
		unmap[r] = (bench_now() - t0) * 1e9 / PROBE_PAGES;
	}
	printf("host-fault: the host kernel, 128 MiB of private anonymous memory, per page\n");
	print_median("write fault (one byte)", fault, rounds);
	print_median("munmap", unmap, rounds);
	return 0;
}

/* ---- zap-rmw ------------------------------------------------------------------- */

/* The size of struct mmp_page, the simulator's memmap entry. */
struct probe_page {
	uint32_t flags;
	int32_t refcount, mapcount;
	uint32_t rest[7];
};

_Static_assert(sizeof(struct probe_page) == 40, "a memmap entry's size");

static int probe_zap_rmw(int rounds)
{
	uint64_t *ptes = malloc(PROBE_PAGES * sizeof(*ptes));
	struct probe_page *pages = malloc(PROBE_PAGES * sizeof(*pages));
	double t[MAX_VARIANTS][MAX_ROUNDS];
	uint64_t sink = 0;

	if (!ptes || !pages) {
		free(ptes);
		free(pages);
		return -1;
	}
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 3; k++) {
			int v = (k + r) % 3;
			double t0;

			for (size_t i = 0; i < PROBE_PAGES; i++) {
				ptes[i] = (i << 12) | 0x67;
				pages[i].mapcount = 1;
			}
			evict();
			t0 = bench_now();
			for (size_t i = 0; i < PROBE_PAGES; i++) {
				if (v == 0) {
					sink += ptes[i];
					ptes[i] = 0;
				} else {
					sink += __atomic_exchange_n(&ptes[i], 0, __ATOMIC_ACQ_REL);
				}
				if (v == 2)
					__atomic_fetch_sub(&pages[i].mapcount, 1, __ATOMIC_RELAXED);
				else
					pages[i].mapcount--;
			}
			t[v][r] = (bench_now() - t0) * 1e9 / PROBE_PAGES;
		}
	}
	printf("zap-rmw: a zap's per-page read-modify-writes over cold memory (sink %d)\n",
	       (int)(sink & 1));
	print_median("plain PTE clear and mapcount", t[0], rounds);
	print_median("PTE exchange, plain mapcount", t[1], rounds);
	print_median("PTE exchange, locked mapcount", t[2], rounds);
	print_paired("exchange over plain", t, 1, rounds);
	print_paired("both locked over plain", t, 2, rounds);
	free(ptes);
	free(pages);
	return 0;
}

/* ---- pcp-drain ---------------------------------------------------------------- */

#define PHYS_SIZES	3

/* One round on @env: fault 128 MiB in a byte a page, then the timed munmap. */
static int munmap_round(struct bench_env *env, double *ns)
{
	static const char one = 1;
	uint64_t addr;
	double t0;
	int err = mmp_mmap(env->space, 0, PROBE_BYTES, MMP_PROT_READ | MMP_PROT_WRITE, 0, &addr);

	for (uint64_t off = 0; !err && off < PROBE_BYTES; off += 4096)
		err = mmp_write(env->cpu, addr + off, &one, 1);
	evict();
	t0 = bench_now();
	if (!err)
		err = mmp_munmap(env->space, addr, PROBE_BYTES);
	*ns = (bench_now() - t0) * 1e9 / PROBE_PAGES;
	return err;
}

static int probe_pcp_drain(int rounds)
{
	static const unsigned int mib[PHYS_SIZES] = { 512, 1024, 2048 };
	struct bench_env env[PHYS_SIZES];
	double t[PHYS_SIZES][MAX_ROUNDS], warm;
	int err = 0, made = 0;

	for (; made < PHYS_SIZES && !err; made++) {
		err = bench_env_create(&env[made], NULL, (size_t)mib[made] * BENCH_MIB, "x86_64", 0);
		if (!err)
			err = mmp_space_set_copy(env[made].space, "generic");
		/* An untimed round: per-CPU lists and tables reach their steady state. */
		if (!err)
			err = munmap_round(&env[made], &warm);
	}
	for (int r = 0; r < rounds && !err; r++)
		for (int k = 0; k < PHYS_SIZES && !err; k++) {
			int v = (k + r) % PHYS_SIZES;

			err = munmap_round(&env[v], &t[v][r]);
		}
	for (int i = 0; i < made; i++)
		bench_env_destroy(&env[i]);
	if (err) {
		fprintf(stderr, "mmprim-probes: pcp-drain: %s\n", mmp_strerror(err));
		return -1;
	}
	printf("pcp-drain: the simulator's munmap of 128 MiB of 4 KiB folios (x86_64), per page\n");
	for (int v = 0; v < PHYS_SIZES; v++) {
		char what[64];

		snprintf(what, sizeof(what), "phys of %u MiB", mib[v]);
		print_median(what, t[v], rounds);
	}
	return 0;
}

/* ---- exit --------------------------------------------------------------------- */

#define EXIT_TOUCH	BENCH_MIB	/* the small process: 1 MiB written */
#define EXIT_LOOPS	200		/* forks, exits or destroys per round and variant */
#define EXIT_VARIANTS	4

/*
 * The host's own fork + exit of a small process, in a helper that first drops
 * this program's big buffers (a fork copies the page tables of every private
 * mapping written to): the helper forks EXIT_LOOPS children that _exit at
 * once, waits for each, and writes the mean per child down @fd.
 */
static void host_fork_exit_helper(int fd)
{
	uint8_t *p;
	double t0, ns;

	munmap(cold, PROBE_BYTES);
	p = map_anon(EXIT_TOUCH, 0);
	if (!p)
		_exit(1);
	memset(p, 1, EXIT_TOUCH);
	t0 = bench_now();
	for (int i = 0; i < EXIT_LOOPS; i++) {
		/* The bare system call: fork() would run liburcu's atfork handlers, 12 ms a fork. */
		pid_t pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);

		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			_exit(1);
	}
	ns = (bench_now() - t0) * 1e9 / EXIT_LOOPS;
	_exit(write(fd, &ns, sizeof(ns)) == sizeof(ns) ? 0 : 1);
}

static int host_fork_exit(double *ns)
{
	int fds[2], status;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		host_fork_exit_helper(fds[1]);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], ns, sizeof(*ns)) != sizeof(*ns)) {
		close(fds[0]);
		return -1;
	}
	close(fds[0]);
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* A small simulated process: @EXIT_TOUCH written from a CPU, detached again. */
static int small_space(struct mmp_phys *phys, struct mmp_space **out)
{
	struct mmp_space_config cfg = { .arch = "x86_64" };
	struct mmp_cpu *cpu;
	uint64_t addr;
	int err = mmp_space_create(phys, &cfg, out);

	if (err)
		return err;
	err = mmp_cpu_attach(*out, &cpu);
	if (err)
		return err;
	err = mmp_mmap(*out, 0, EXIT_TOUCH, MMP_PROT_READ | MMP_PROT_WRITE, 0, &addr);
	if (!err)
		err = mmp_memset(cpu, addr, 1, EXIT_TOUCH);
	mmp_cpu_detach(cpu);
	return err;
}

/* One timed variant of the simulator's: mean ns per fork + exit, create + destroy or destroy. */
static int sim_exit_variant(struct mmp_phys *phys, struct mmp_space *parent, int v, double *ns)
{
	struct mmp_space *s[EXIT_LOOPS];
	struct mmp_space_config cfg = { .arch = "x86_64" };
	double t = 0, t0;
	int err = 0;

	for (int i = 0; i < EXIT_LOOPS && !err; i++) {
		switch (v) {
		case 1:		/* fork + exit */
			t0 = bench_now();
			err = mmp_fork(parent, &s[i]);
			if (!err)
				err = mmp_space_destroy(s[i]);
			t += bench_now() - t0;
			break;
		case 2:		/* create + destroy of an empty space */
			t0 = bench_now();
			err = mmp_space_create(phys, &cfg, &s[i]);
			if (!err)
				err = mmp_space_destroy(s[i]);
			t += bench_now() - t0;
			break;
		case 3:		/* destroy alone, of a space with 1 MiB written */
			err = small_space(phys, &s[i]);
			t0 = bench_now();
			if (!err)
				err = mmp_space_destroy(s[i]);
			t += bench_now() - t0;
			break;
		}
	}
	*ns = t * 1e9 / EXIT_LOOPS;
	return err;
}

static int probe_exit(int rounds)
{
	static const char *const what[EXIT_VARIANTS] = {
		"host fork + exit (1 MiB written)", "mmp_fork + destroy (same)",
		"mmp_space_create + destroy", "mmp_space_destroy (1 MiB written)",
	};
	double t[EXIT_VARIANTS][MAX_ROUNDS], ratio[MAX_ROUNDS], med, lo, hi;
	struct mmp_space *parent = NULL;
	struct mmp_phys *phys;
	int err = mmp_phys_create(256 * BENCH_MIB, &phys);

	if (!err)
		err = small_space(phys, &parent);
	for (int r = 0; r < rounds && !err; r++)
		for (int k = 0; k < EXIT_VARIANTS && !err; k++) {
			int v = (k + r) % EXIT_VARIANTS;

			err = v ? sim_exit_variant(phys, parent, v, &t[v][r]) :
				  host_fork_exit(&t[0][r]) ? -EIO : 0;
		}
	if (parent)
		mmp_space_destroy(parent);
	if (phys)
		mmp_phys_destroy(phys);
	if (err) {
		fprintf(stderr, "mmprim-probes: exit: %s\n", mmp_strerror(err));
		return -1;
	}
	printf("exit: processes that come and go (x86_64 back end), per process\n");
	for (int v = 0; v < EXIT_VARIANTS; v++) {
		bench_median_ci(t[v], rounds, &med, &lo, &hi);
		printf("  %-34s %8.2f us [%.2f, %.2f]\n", what[v], med / 1e3, lo / 1e3, hi / 1e3);
	}
	for (int r = 0; r < rounds; r++)
		ratio[r] = t[1][r] / t[0][r];
	bench_median_ci(ratio, rounds, &med, &lo, &hi);
	printf("  %-34s %8.3fx [%.3f, %.3f]\n", "simulator over host, fork + exit", med, lo, hi);
	return 0;
}

static const struct probe {
	const char *name;
	int (*run)(int rounds);
	int rounds;
} probes[] = {
	{ "host-fault", probe_host_fault, 7 },
	{ "zap-rmw", probe_zap_rmw, 15 },
	{ "pcp-drain", probe_pcp_drain, 9 },
	{ "exit", probe_exit, 15 },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: mmprim-probes [host-fault|zap-rmw|pcp-drain|exit|all] [--rounds N]\n"
		   "What the host charges for the work behind the time budgets, beside the\n"
		   "simulator's own: medians with 95%% intervals (see bench/probes/probes.c).\n");
}

int main(int argc, char **argv)
{
	const char *which = "all";
	int rounds = 0, ran = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
			if (rounds < 3 || rounds > MAX_ROUNDS) {
				fprintf(stderr, "mmprim-probes: --rounds takes 3 to %d\n", MAX_ROUNDS);
				return 2;
			}
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] != '-') {
			which = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	cold = map_anon(PROBE_BYTES, MAP_POPULATE);
	if (!cold) {
		perror("mmprim-probes: mmap");
		return 1;
	}
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		if (strcmp(which, "all") && strcmp(which, probes[i].name))
			continue;
		ran++;
		if (probes[i].run(rounds ? rounds : probes[i].rounds)) {
			fprintf(stderr, "mmprim-probes: %s failed\n", probes[i].name);
			return 1;
		}
	}
	if (!ran) {
		fprintf(stderr, "mmprim-probes: no probe named %s\n", which);
		usage(stderr);
		return 2;
	}
	return 0;
}
