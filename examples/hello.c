/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hello: the smallest complete use of libmmprim, built against the installed
 * library with pkg-config:
 *
 *   cc hello.c $(pkg-config --cflags --libs libmmprim) -o hello
 *
 * For every registered back end: a space on a shared 64 MiB phys, a 2 MiB
 * mapping, one CPU that writes a string and reads it back, the counters that
 * moved, and a full invariant check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mmprim/mmprim.h>

#define PHYS_BYTES (64UL << 20)
#define MAP_BYTES  (2UL << 20)

static int fail(const char *what, const char *arch, int err)
{
	fprintf(stderr, "hello: %s (%s): %s\n", what, arch, mmp_strerror(err));
	return err;
}

static int hello_arch(struct mmp_phys *phys, const char *arch)
{
	static const char msg[] = "hello, simulated world";
	struct mmp_space_config cfg = { .arch = arch, .tlb_sanitizer = true };
	struct mmp_counters counters;
	struct mmp_space *space;
	struct mmp_cpu *cpu;
	char buf[sizeof(msg)];
	uint64_t addr;
	int err, ret;

	err = mmp_space_create(phys, &cfg, &space);
	if (err)
		return fail("mmp_space_create", arch, err);

	err = mmp_mmap(space, 0, MAP_BYTES, MMP_PROT_READ | MMP_PROT_WRITE, 0, &addr);
	if (err) {
		fail("mmp_mmap", arch, err);
		goto out_space;
	}

	err = mmp_cpu_attach(space, &cpu);
	if (err) {
		fail("mmp_cpu_attach", arch, err);
		goto out_space;
	}

	/* The write faults a folio in; the read goes through the TLB. */
	err = mmp_write(cpu, addr + MAP_BYTES / 2, msg, sizeof(msg));
	if (err) {
		fail("mmp_write", arch, err);
		goto out_cpu;
	}
	memset(buf, 0, sizeof(buf));
	err = mmp_read(cpu, addr + MAP_BYTES / 2, buf, sizeof(buf));
	if (err) {
		fail("mmp_read", arch, err);
		goto out_cpu;
	}
	if (memcmp(buf, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "hello: %s read back \"%.*s\"\n", arch, (int)sizeof(buf) - 1, buf);
		err = -1;
		goto out_cpu;
	}
	printf("%s: mapped 2 MiB at 0x%llx, read back \"%s\"\n", arch, (unsigned long long)addr,
	       buf);

	err = mmp_space_counters(space, &counters);
	if (err) {
		fail("mmp_space_counters", arch, err);
		goto out_cpu;
	}
	/* The counters that moved: a new space starts at 0, so all of them. */
	ret = mmp_counters_print(stdout, &counters, "  ");
	if (ret < 0) {
		fail("mmp_counters_print", arch, ret);
		err = ret;
		goto out_cpu;
	}

	err = mmp_space_verify(space);
	if (err)
		fail("mmp_space_verify", arch, err);

out_cpu:
	ret = mmp_cpu_detach(cpu);
	if (ret) {
		fail("mmp_cpu_detach", arch, ret);
		err = err ? err : ret;
	}
out_space:
	ret = mmp_space_destroy(space);
	if (ret) {
		fail("mmp_space_destroy", arch, ret);
		err = err ? err : ret;
	}
	return err;
}

int main(void)
{
	struct mmp_phys *phys;
	int n, err, failed = 0;

	n = mmp_arch_count();
	if (n <= 0) {
		fprintf(stderr, "hello: no architecture back end registered\n");
		return 1;
	}

	err = mmp_phys_create(PHYS_BYTES, &phys);
	if (err) {
		fprintf(stderr, "hello: mmp_phys_create: %s\n", mmp_strerror(err));
		return 1;
	}

	for (int i = 0; i < n; i++) {
		const char *arch = mmp_arch_name(i);

		if (!arch) {
			fprintf(stderr, "hello: no name for back end %d\n", i);
			failed = 1;
			continue;
		}
		if (hello_arch(phys, arch))
			failed = 1;
	}

	err = mmp_phys_destroy(phys);
	if (err) {
		fprintf(stderr, "hello: mmp_phys_destroy: %s\n", mmp_strerror(err));
		failed = 1;
	}
	return failed;
}
