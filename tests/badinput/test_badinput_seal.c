/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bad inputs of mmp_mseal, the mlock family and MMP_OPT_CAP_SYS_RAWIO on
 * every back end: each gets the errno Linux gives, in its order, and leaves
 * the space usable (still_works: verify, the canary, a fresh mapping). The
 * rules themselves are in tests/mm/test_mseal.c and test_mlock.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "badinput.h"

static void test_null(void)
{
	tap_eq(mmp_mseal(NULL, 0x10000, PG, 0), -EINVAL, "mseal: NULL space");
	tap_eq(mmp_mlock(NULL, 0x10000, PG), -EINVAL, "mlock: NULL space");
	tap_eq(mmp_mlock2(NULL, 0x10000, PG, 0), -EINVAL, "mlock2: NULL space");
	tap_eq(mmp_munlock(NULL, 0x10000, PG), -EINVAL, "munlock: NULL space");
	tap_eq(mmp_mlockall(NULL, MMP_MCL_CURRENT), -EINVAL, "mlockall: NULL space");
	tap_eq(mmp_munlockall(NULL), -EINVAL, "munlockall: NULL space");
}

static void test_mseal(struct env *e)
{
	uint64_t a = map_scratch(e, 4), ts = task_size(e->s);

	/* do_mseal's order: flags, alignment, the length's rounding and wrap, then holes. */
	tap_eq(mmp_mseal(e->s, a + 1, PG, 1), -EINVAL, "%s: mseal: flags before alignment", e->arch);
	tap_eq(mmp_mseal(e->s, a, PG, ~0ul), -EINVAL, "%s: mseal: every flag", e->arch);
	tap_eq(mmp_mseal(e->s, a + 1, PG, 0), -EINVAL, "%s: mseal: unaligned", e->arch);
	tap_eq(mmp_mseal(e->s, a, UINT64_MAX, 0), -EINVAL, "%s: mseal: len UINT64_MAX", e->arch);
	tap_eq(mmp_mseal(e->s, a, UINT64_MAX - PG, 0), -EINVAL, "%s: mseal: a range that wraps",
	       e->arch);
	tap_eq(mmp_mseal(e->s, a, 0, 0), 0, "%s: mseal: nothing", e->arch);
	tap_eq(mmp_mseal(e->s, a, 5 * PG, 0), -ENOMEM, "%s: mseal: a hole after", e->arch);
	tap_eq(mmp_mseal(e->s, a - PG, 2 * PG, 0), -ENOMEM, "%s: mseal: a hole before", e->arch);
	tap_eq(mmp_mseal(e->s, ts, PG, 0), -ENOMEM, "%s: mseal: at the task size", e->arch);
	tap_eq(mmp_mseal(e->s, UINT64_MAX & ~(PG - 1), PG, 0), -EINVAL,
	       "%s: mseal: the last page of 2^64 wraps", e->arch);
	still_works(e, "bad mseal arguments");
	must(!mmp_munmap(e->s, a, 4 * PG), "unmap the scratch");
}

static void test_mlock(struct env *e)
{
	uint64_t a = map_scratch(e, 4), ts = task_size(e->s);
	struct mmp_space_stat st = { 0 };

	tap_eq(mmp_mlock2(e->s, a, PG, 2), -EINVAL, "%s: mlock2: unknown flag", e->arch);
	tap_eq(mmp_mlock2(e->s, a, PG, ~0u), -EINVAL, "%s: mlock2: every flag", e->arch);
	tap_eq(mmp_mlock(e->s, a + PG, -2 * PG), -EINVAL, "%s: mlock: a range that wraps", e->arch);
	tap_eq(mmp_munlock(e->s, a + PG, -2 * PG), -EINVAL, "%s: munlock: a range that wraps",
	       e->arch);
	tap_eq(mmp_mlock(e->s, a, UINT64_MAX), 0, "%s: mlock: a length rounding to 0", e->arch);
	tap_eq(mmp_mlock(e->s, a - PG, 2 * PG), -ENOMEM, "%s: mlock: starts in a hole", e->arch);
	tap_eq(mmp_mlock(e->s, ts, PG), -ENOMEM, "%s: mlock: at the task size", e->arch);
	tap_eq(mmp_munlock(e->s, a, 5 * PG), -ENOMEM, "%s: munlock: a hole after", e->arch);
	tap_eq(mmp_mlockall(e->s, 0), -EINVAL, "%s: mlockall: no flag", e->arch);
	tap_eq(mmp_mlockall(e->s, MMP_MCL_ONFAULT), -EINVAL, "%s: mlockall: ONFAULT alone", e->arch);
	tap_eq(mmp_mlockall(e->s, 8), -EINVAL, "%s: mlockall: unknown flag", e->arch);
	tap_eq(mmp_mlockall(e->s, -1), -EINVAL, "%s: mlockall: every flag", e->arch);
	tap_ok(!mmp_space_stat(e->s, &st) && st.locked_bytes == 0,
	       "%s: nothing was locked", e->arch);
	tap_eq(mmp_munlockall(e->s), 0, "%s: munlockall", e->arch);
	still_works(e, "bad mlock arguments");
	must(!mmp_munmap(e->s, a, 4 * PG), "unmap the scratch");
}

static void test_rawio(struct env *e)
{
	long v = -1;

	tap_eq(mmp_space_set_opt(e->s, MMP_OPT_CAP_SYS_RAWIO, -1), -EINVAL, "%s: CAP_SYS_RAWIO -1",
	       e->arch);
	tap_eq(mmp_space_set_opt(e->s, MMP_OPT_CAP_SYS_RAWIO, 2), -EINVAL, "%s: CAP_SYS_RAWIO 2",
	       e->arch);
	tap_ok(!mmp_space_get_opt(e->s, MMP_OPT_CAP_SYS_RAWIO, &v) && v == 0,
	       "%s: CAP_SYS_RAWIO off by default", e->arch);
	still_works(e, "bad CAP_SYS_RAWIO values");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_null();
	for (int i = 0; i < mmp_arch_count(); i++) {
		const char *arch = mmp_arch_name(i);
		struct env e;

		printf("# back end %s\n", arch);
		env_init(&e, arch, 64 * MiB);
		test_mseal(&e);
		test_mlock(&e);
		test_rawio(&e);
		tap_eq(mmp_space_verify(e.s), 0, "%s: verify at the end", arch);
		env_fini(&e);
	}
	return tap_done();
}
