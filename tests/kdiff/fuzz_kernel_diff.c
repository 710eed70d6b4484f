/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer entry: the fuzzer's bytes decode into an op sequence (eight bytes
 * an op, kd_decode) that runs against the host kernel and every back end, as
 * test_kernel_diff does. Set KDIFF_NO_HOST=1 to compare the back ends with
 * each other only. A divergence aborts, so libFuzzer keeps the input.
 */
#include <stdlib.h>

#include "kdiff.h"

#define MAX_OPS	256

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct kd_host *host;
static struct kd_host_config host_cfg;
static bool use_host;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	use_host = !getenv("KDIFF_NO_HOST");
	if (use_host) {
		const char *why;

		kd_host_probe(&host_cfg);
		kd_host_khugepaged_pause(&why);
	}
	if (use_host && !(host = kd_host_start()))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kd_op ops[MAX_OPS];
	struct kd_options opt = { .host = use_host, .verify_every = 1, .only_variant = -1,
				   .thp_pmd_mode = use_host ? kd_host_thp_mode() : -1,
				   .cfg = host_cfg, .compare_state = use_host };
	struct kd_result res;
	uint64_t n = kd_decode(data, size, ops, MAX_OPS);

	if (!n || kd_run(&opt, host, ops, n, &res))
		return 0;
	if (res.divergences) {
		fprintf(stderr, "kdiff: op %llu diverged: %s\n", (unsigned long long)res.first_bad,
			res.what);
		for (uint64_t i = 0; i <= res.first_bad && i < n; i++)
			kd_print_op(stderr, &ops[i]);
		abort();
	}
	return 0;
}
