/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The walker's paging-structure cache: a walk that hits it reads only the
 * leaf, so every invalidation must empty it. A PTE table freed and made anew
 * in the same 2 MiB must be walked anew; without that, the write below would
 * fault forever on the old, emptied table.
 */
#include "cpu.h"
#include "mm.h"
#include "tap.h"

#define MiB	(1ULL << 20)

/* The cache entry for @va, if it holds one of this generation. */
static mmp_pte_t *pwc_table(struct mmp_cpu *cpu, uint64_t va)
{
	struct mmp_pwc_entry *e = &cpu->pwc[(va >> PMD_SHIFT) % MMP_PWC_ENTRIES];

	return e->gen == cpu->pwc_gen && e->region == va >> PMD_SHIFT ? e->ptes : NULL;
}

static void check_arch(struct mmp_phys *phys, const char *arch)
{
	struct mmp_space_config cfg = { .arch = arch };
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	uint64_t a, base, out, v = 0x1234, got = 0;
	mmp_pte_t *old;

	if (!tap_ok(!mmp_space_create(phys, &cfg, &s) && !mmp_cpu_attach(s, &cpu), "%s: setup", arch))
		return;
	tap_ok(!mmp_mmap(s, 0, 4 * MiB, MMP_PROT_READ | MMP_PROT_WRITE, 0, &a), "%s: map", arch);
	base = (a + PMD_SIZE - 1) & PMD_MASK;
	tap_ok(!mmp_write(cpu, base, &v, sizeof(v)), "%s: first write", arch);
	old = pwc_table(cpu, base);
	tap_ok(old != NULL, "%s: the walk cached the PTE table", arch);

	/* The table goes (munmap frees it) and a new one comes in its place. */
	tap_ok(!mmp_munmap(s, base, PMD_SIZE), "%s: unmap the 2 MiB", arch);
	tap_ok(pwc_table(cpu, base) == NULL, "%s: the invalidation emptied the cache", arch);
	tap_ok(!mmp_mmap(s, base, PMD_SIZE, MMP_PROT_READ | MMP_PROT_WRITE, MMP_MAP_FIXED, &out),
	       "%s: map it again", arch);
	v = 0x5678;
	tap_ok(!mmp_write(cpu, base + PAGE_SIZE, &v, sizeof(v)) &&
	       !mmp_read(cpu, base + PAGE_SIZE, &got, sizeof(got)) && got == v,
	       "%s: a write through the new table reads back", arch);
	tap_ok(pwc_table(cpu, base) == pte_table(s, READ_ONCE(*pmd_offset(s, base))),
	       "%s: the cache holds the new table", arch);

	/* A protection change is seen by the next walk, cached or not. */
	tap_ok(!mmp_mprotect(s, base, PMD_SIZE, MMP_PROT_READ), "%s: mprotect read-only", arch);
	tap_eq(mmp_write(cpu, base + PAGE_SIZE, &v, sizeof(v)), -EFAULT,
	       "%s: a write faults on the read-only entry", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: verify", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
}

int main(void)
{
	struct mmp_phys *phys;

	if (!tap_ok(!mmp_phys_create(64 * MiB, &phys), "phys"))
		return tap_done();
	for (int i = 0; i < mmp_arch_count(); i++)
		check_arch(phys, mmp_arch_name(i));
	mmp_phys_destroy(phys);
	return tap_done();
}
