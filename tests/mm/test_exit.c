/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Exit without waiting, on every back end: mmp_space_destroy() never waits for
 * a grace period, as the kernel's exit does not. With a reader holding a grace
 * period open:
 *  (a) a process and its forked child exit with their page tables still in an
 *      RCU batch: both destroys return at once, call no rcu_barrier, and the
 *      tables are in flight; a space that lives on still verifies; once the
 *      reader leaves, every frame comes home. The batches hold their space
 *      (mmgrab) until their callback: without it, the callbacks would read
 *      freed memory, which the ASan build of this test reports;
 *  (b) a fork + exit loop of a small process: no exit waits, and nothing is
 *      left behind once the grace period ends.
 */
#include <string.h>

#include "mm.h"
#include "rcu.h"
#include "grace.h"
#include "util.h"

#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define LOOPS		64

static struct mmp_phys *phys;

/* Free frames once every grace period has ended (mmp_phys_stat waits). */
static uint64_t free_pages_settled(void)
{
	struct mmp_phys_stat st;

	tap_require(mmp_phys_stat(phys, &st) == 0, "phys stat");
	return st.free_pages;
}

/* A space with @len written from a CPU, detached again. */
static struct mmp_space *touched_space(const char *arch, uint64_t len)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_cpu *cpu;
	uint64_t a;

	must(mmp_cpu_attach(s, &cpu) == 0, "attach");
	a = map(s, len, RW);
	must(mmp_memset(cpu, a, 0x5a, len) == 0, "touch");
	must(mmp_cpu_detach(cpu) == 0, "detach");
	return s;
}

/* ---- (a) a parent and its child exit with tables in a grace period ----------------- */

static void check_exit_in_flight(const char *arch)
{
	uint64_t free0 = free_pages_settled(), b0;
	struct mmp_space *s, *child, *other;
	struct grace_holder g;
	int64_t waiting;

	other = touched_space(arch, 1 * MiB);
	s = touched_space(arch, 8 * MiB);
	must(mmp_fork(s, &child) == 0, "%s: fork", arch);
	b0 = rcu_barriers();
	grace_hold(&g);
	tap_eq(mmp_space_destroy(child), 0, "%s: the child exits", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: the parent exits", arch);
	waiting = tables_in_flight(phys);
	tap_eq(rcu_barriers() - b0, 0, "%s: neither exit waited for a grace period", arch);
	tap_ok(waiting >= (int64_t)(2 * 8 * MiB / PMD_SIZE),
	       "%s: their page tables are still in flight (%lld)", arch, (long long)waiting);
	tap_eq(mmp_space_verify(other), 0, "%s: a space that lives on verifies meanwhile", arch);
	grace_release(&g);
	tap_eq(mmp_space_destroy(other), 0, "%s: the other exits", arch);
	tap_eq(free_pages_settled(), free0, "%s: every frame is back once the grace period ends",
	       arch);
	tap_eq(tables_in_flight(phys), 0, "%s: no table left in flight", arch);
}

/* ---- (b) a fork + exit loop --------------------------------------------------------- */

static void check_fork_exit_loop(const char *arch)
{
	struct mmp_space *s = touched_space(arch, 256 * KiB);
	uint64_t free0, b0, fails = 0;
	struct grace_holder g;

	free0 = free_pages_settled();
	b0 = rcu_barriers();
	grace_hold(&g);
	for (int i = 0; i < LOOPS; i++) {
		struct mmp_space *child;

		must(mmp_fork(s, &child) == 0, "%s: fork", arch);
		fails += mmp_space_destroy(child) != 0;
	}
	tap_eq(fails, 0, "%s: %d children forked and exited", arch, LOOPS);
	tap_eq(rcu_barriers() - b0, 0, "%s: no exit waited", arch);
	tap_ok(tables_in_flight(phys) >= LOOPS,
	       "%s: each child's tables went through call_rcu (%lld)", arch,
	       (long long)tables_in_flight(phys));
	grace_release(&g);
	tap_eq(free_pages_settled(), free0, "%s: the children left nothing behind", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: the parent verifies", arch);
	tap_eq(mmp_space_destroy(s), 0, "%s: the parent exits", arch);
}

int main(void)
{
	const char *arch;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	for_each_arch(i, arch) {
		check_exit_in_flight(arch);
		check_fork_exit_loop(arch);
	}
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
