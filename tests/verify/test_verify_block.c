/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mmp_space_verify() on a broken 64 KiB block (arm64 contpte, riscv Svnapot),
 * on every back end that folds order-4 folios into one. The lockless read
 * verify gathers a block with retries until the block is alike, so a block
 * broken for good used to hang verify; now verify names it and returns.
 * One entry at a time, through the debug interface:
 *  (a) maps another page (entry 5, then entry 0: the odd one out is named,
 *      not the 15 that agree with each other);
 *  (b) loses its write bit: mixed attributes;
 *  (c) loses its contiguous bit;
 *  (d) is cleared;
 * and two entries at once lose their write bit (one report counting both).
 * Each must fail verify within the watchdog's time with a report naming the
 * block and the entry, and pass again once the entry is put back. Accessed
 * and dirty, which hardware sets per entry, may differ across a block: set by
 * hand on single entries, and by the MMU on a write, they are not reported.
 * Last, the spaces go away leaving every frame free.
 */
#include <signal.h>
#include <unistd.h>

#include "pte_util.h"
#include "rcu.h"

#define P		PAGE_SIZE
#define NR		16			/* entries in a 64 KiB block */
#define BLOCK		((uint64_t)NR * PAGE_SIZE)
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define WATCHDOG	20			/* seconds a verify may take */

static struct mmp_phys *phys;

static void on_alarm(int sig)
{
	static const char msg[] = "Bail out! mmp_space_verify() did not return (hung)\n";

	(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

/*
 * mmp_space_verify() under the watchdog, its report in @out (echoed as TAP
 * comments). The report goes to stderr: catch it in a file, not a pipe that
 * a long report could fill.
 */
static int verify(struct mmp_space *s, char *out, size_t size)
{
	FILE *f = tmpfile();
	int saved, ret;
	size_t n;

	must(f, "a temporary file for verify's report");
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	must(saved >= 0 && dup2(fileno(f), STDERR_FILENO) >= 0, "stderr to a file");
	alarm(WATCHDOG);
	ret = mmp_space_verify(s);
	alarm(0);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	n = fread(out, 1, size - 1, f);
	out[n] = 0;
	fclose(f);
	for (char *line = out, *end; *line; line = end + !!*end) {
		end = line + strcspn(line, "\n");
		printf("#   %.*s\n", (int)(end - line), line);
	}
	return ret;
}

static mmp_pte_t get_pte(struct mmp_space *s, uint64_t va)
{
	uint64_t raw = 0;

	must(mmp_debug_get_pte(s, va, &raw) == 0, "read the PTE of %#llx", (unsigned long long)va);
	return raw;
}

static void set_pte(struct mmp_space *s, uint64_t va, mmp_pte_t raw)
{
	must(mmp_debug_set_pte(s, va, raw) == 0, "write the PTE of %#llx", (unsigned long long)va);
}

/* Do all entries of the block at @blk carry the contiguous bit? */
static bool folded(struct mmp_space *s, uint64_t blk)
{
	for (unsigned int i = 0; i < NR; i++)
		if (!entry_test(s, get_pte(s, blk + i * P), MMP_PTE, MMP_E_CONT))
			return false;
	return true;
}

/* The first line of a report (after its prefix) starts with @want. */
static bool first_line_is(const char *out, const char *want)
{
	static const char prefix[] = "libmmprim: verify: ";

	return !strncmp(out, prefix, strlen(prefix)) &&
	       !strncmp(out + strlen(prefix), want, strlen(want));
}

enum corruption { C_PFN, C_WRITE, C_CONT, C_NONE, NR_CORRUPTIONS };

static const char *const corruption_name[NR_CORRUPTIONS] = {
	"maps another page", "lost its write bit", "lost its contiguous bit", "was cleared",
};

/* What verify calls a block of @arch's. */
static const char *block_kind(const char *arch)
{
	if (!strncmp(arch, "arm64", 5))
		return "contpte block";
	if (!strncmp(arch, "riscv64", 7))
		return "Svnapot run";
	return NULL;
}

/*
 * Corrupt entry @k of the block at @blk as @how says, check verify names the
 * block and the entry first, then put the entry back and check verify passes
 * again.
 */
static void corrupt_one(struct mmp_space *s, const char *arch, uint64_t blk, unsigned int k,
			enum corruption how)
{
	uint64_t va = blk + k * P;
	mmp_pte_t saved = get_pte(s, va), bad;
	/* The page the entry maps, as core reads it (NAPOT: not the raw pfn field). */
	uint64_t pfn = entry_pfn(s, ptep_get_lockless(s, ptep_at(s, va)), MMP_PTE);
	unsigned int f = entry_flags(s, saved, MMP_PTE);
	const char *kind = block_kind(arch);
	char out[8192], want[192];
	int n;

	switch (how) {
	case C_PFN:	/* two blocks on: NAPOT encodes the run's base, which must differ */
		bad = mk_entry(s, pfn + 2 * NR, f, MMP_PTE);
		break;
	case C_WRITE:
		bad = mk_entry(s, pfn, f & ~MMP_E_WRITE, MMP_PTE);
		break;
	case C_CONT:
		bad = mk_entry(s, pfn, f & ~MMP_E_CONT, MMP_PTE);
		break;
	default:
		bad = 0;
		break;
	}
	must(kind, "%s: verify's name for its blocks is known here", arch);
	must(bad != saved, "%s: entry %u %s: a different value", arch, k, corruption_name[how]);
	set_pte(s, va, bad);
	tap_eq(verify(s, out, sizeof(out)), -EUCLEAN, "%s: entry %u %s: verify fails, no hang",
	       arch, k, corruption_name[how]);

	/* "space N: <kind> at <va>: entry K ...", before any consequence of it. */
	n = snprintf(want, sizeof(want), "space %llu: %s at %#llx: ", (unsigned long long)s->id,
		     kind, (unsigned long long)blk);
	if (how == C_PFN)
		snprintf(want + n, sizeof(want) - n, "entry %u maps pfn %llu, expected %llu", k,
			 (unsigned long long)(pfn + 2 * NR), (unsigned long long)pfn);
	else if (how == C_WRITE)
		snprintf(want + n, sizeof(want) - n, "mixed attributes: entry %u is %#llx, entry",
			 k, (unsigned long long)bad);
	else
		snprintf(want + n, sizeof(want) - n, "entry %u is %#llx, not a contiguous entry",
			 k, (unsigned long long)bad);
	tap_ok(first_line_is(out, want), "%s: entry %u %s: the first report is \"%s...\"", arch,
	       k, corruption_name[how], want);

	set_pte(s, va, saved);
	tap_eq(verify(s, out, sizeof(out)), 0, "%s: entry %u put back: verify passes", arch, k);
	tap_ok(!out[0], "%s: entry %u put back: verify reports nothing", arch, k);
}

/* Two entries lose their write bit: the report names the first and counts both. */
static void corrupt_two(struct mmp_space *s, const char *arch, uint64_t blk)
{
	mmp_pte_t saved4 = get_pte(s, blk + 4 * P), saved6 = get_pte(s, blk + 6 * P);
	char out[8192];

	set_pte(s, blk + 4 * P, entry_set_flags(s, saved4, MMP_PTE, 0, MMP_E_WRITE));
	set_pte(s, blk + 6 * P, entry_set_flags(s, saved6, MMP_PTE, 0, MMP_E_WRITE));
	tap_eq(verify(s, out, sizeof(out)), -EUCLEAN, "%s: entries 4 and 6 read-only: verify fails",
	       arch);
	tap_ok(strstr(out, "mixed attributes: entry 4 ") &&
	       strstr(out, "; 2 entries differ from entry 0\n") && !strstr(out, "entry 6"),
	       "%s: entries 4 and 6 read-only: one report, for entry 4, counting both", arch);
	set_pte(s, blk + 4 * P, saved4);
	set_pte(s, blk + 6 * P, saved6);
	tap_eq(verify(s, out, sizeof(out)), 0, "%s: entries 4 and 6 put back: verify passes", arch);
}

/* Rewrite the block at @blk old and clean, but entry @dirty dirty and entry @young young. */
static void set_ad(struct mmp_space *s, uint64_t blk, const mmp_pte_t *saved,
		   const uint64_t *pfns, int dirty, int young)
{
	for (int i = 0; i < NR; i++) {
		unsigned int f = entry_flags(s, saved[i], MMP_PTE) & ~AD;

		f |= (i == dirty ? MMP_E_DIRTY : 0) | (i == young ? MMP_E_ACCESSED : 0);
		set_pte(s, blk + i * P, mk_entry(s, pfns[i], f, MMP_PTE));
	}
}

/*
 * Accessed and dirty on single entries of the block at @blk: by hand, then by
 * the MMU on a write to one page. Neither is a broken block.
 */
static void per_entry_ad(struct mmp_space *s, const char *arch, uint64_t blk)
{
	mmp_pte_t saved[NR];
	uint64_t pfns[NR];
	struct mmp_cpu *cpu;
	char out[8192];
	bool ok = true;

	for (unsigned int i = 0; i < NR; i++) {
		saved[i] = get_pte(s, blk + i * P);
		pfns[i] = entry_pfn(s, ptep_get_lockless(s, ptep_at(s, blk + i * P)), MMP_PTE);
	}
	set_ad(s, blk, saved, pfns, 3, 12);
	must(folded(s, blk), "%s: still a block", arch);
	tap_eq(verify(s, out, sizeof(out)), 0, "%s: A/D on single entries: verify passes", arch);
	tap_ok(!out[0], "%s: A/D on single entries: verify reports nothing", arch);
	tap_ok((entry_flags(s, ptep_get_lockless(s, ptep_at(s, blk)), MMP_PTE) & AD) == AD,
	       "%s: A/D on single entries: the lockless read gathers them", arch);

	/* All old and clean, then one write through the MMU: it dirties entry 9 alone. */
	set_ad(s, blk, saved, pfns, -1, -1);
	for (unsigned int i = 0; i < NR; i++)
		ok &= !(entry_flags(s, get_pte(s, blk + i * P), MMP_PTE) & AD);
	must(ok, "%s: every entry old and clean", arch);
	must(mmp_cpu_attach(s, &cpu) == 0, "%s: a CPU", arch);
	tap_eq(mmp_write(cpu, blk + 9 * P + 100, "x", 1), 0, "%s: a write through the MMU", arch);
	tap_ok((entry_flags(s, get_pte(s, blk + 9 * P), MMP_PTE) & MMP_E_DIRTY) &&
	       !(entry_flags(s, get_pte(s, blk + 8 * P), MMP_PTE) & MMP_E_DIRTY) && folded(s, blk),
	       "%s: the MMU dirtied entry 9 of the block alone", arch);
	tap_eq(verify(s, out, sizeof(out)), 0, "%s: hardware dirty on one entry: verify passes",
	       arch);
	tap_ok(!out[0], "%s: hardware dirty on one entry: verify reports nothing", arch);
	mmp_cpu_detach(cpu);
}

/* Returns whether @arch folds order-4 folios into 64 KiB blocks (and was tested). */
static bool check_arch(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	uint64_t a, blk;
	char out[8192];
	bool blocks;

	must(mmp_space_set_thp(s, 4, MMP_THP_ALWAYS) == 0, "%s: mTHP order 4", arch);
	a = map(s, 2 * MiB, RW);
	must(populate_range(s, a, a + 4 * BLOCK, true) == 0, "%s: touch 4 blocks", arch);
	/* One inside the table, with blocks on either side. */
	blk = a + 2 * BLOCK;
	blocks = folded(s, blk);
	if (!blocks) {
		printf("# %s: order-4 folios do not map as one block: nothing to corrupt\n", arch);
		tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	} else {
		tap_eq(verify(s, out, sizeof(out)), 0, "%s: a whole block: verify passes", arch);
		corrupt_one(s, arch, blk, 5, C_PFN);
		corrupt_one(s, arch, blk, 0, C_PFN);
		corrupt_one(s, arch, blk, 5, C_WRITE);
		corrupt_one(s, arch, blk, 5, C_CONT);
		corrupt_one(s, arch, blk, 0, C_CONT);
		corrupt_one(s, arch, blk, 15, C_NONE);
		corrupt_two(s, arch, blk);
		per_entry_ad(s, arch, blk);
	}
	mmp_space_destroy(s);
	return blocks;
}

int main(void)
{
	struct mmp_phys_stat st0, st1;
	const char *arch;
	int nr_blocks = 0;

	signal(SIGALRM, on_alarm);
	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	mmp_phys_stat(phys, &st0);
	for_each_arch(i, arch)
		nr_blocks += check_arch(arch);
	tap_ok(nr_blocks >= 2, "%d back ends have 64 KiB blocks (contpte, Svnapot)", nr_blocks);
	rcu_barrier();	/* page tables come home after a grace period */
	mmp_phys_stat(phys, &st1);
	tap_eq(st1.free_pages, st0.free_pages, "every frame went back to the phys");
	tap_eq(mmp_phys_destroy(phys), 0, "phys destroyed");
	return tap_done();
}
