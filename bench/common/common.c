/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the bench runners.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

void bench_append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!len || *off >= len - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	*off = n < 0 ? len - 1 : BENCH_MIN(*off + (size_t)n, len - 1);
}

double bench_modeled_s(struct mmp_space *space, const struct mmp_counters *c)
{
	double ns = 0;

	mmp_modeled_ns(space, c, &ns);
	return ns * 1e-9;
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

int bench_phys_warm(struct mmp_phys *phys)
{
	struct mmp_phys_stat st;
	int err = mmp_phys_stat(phys, &st);

	if (err)
		return err;
	/*
	 * The host backs phys lazily: fault every page in now, with a write that
	 * keeps its contents, so that no timed sample pays a host page fault.
	 */
	for (uint64_t pfn = 0; pfn < st.total_pages; pfn++) {
		int *p = mmp_page_address(phys, pfn);

		if (p)
			__atomic_fetch_add(p, 0, __ATOMIC_RELAXED);
	}
	return 0;
}

int bench_phys_create_warm(size_t bytes, struct mmp_phys **phys)
{
	int err = mmp_phys_create(bytes, phys);

	if (err) {
		*phys = NULL;
		return err;
	}
	err = bench_phys_warm(*phys);
	if (err) {
		mmp_phys_destroy(*phys);
		*phys = NULL;
	}
	return err;
}

int bench_env_create(struct bench_env *env, struct mmp_phys *phys, size_t phys_bytes,
		     const char *arch, unsigned int thp_always)
{
	struct mmp_space_config cfg = { .arch = arch };
	unsigned int order;
	int err;

	memset(env, 0, sizeof(*env));
	if (!phys) {
		err = bench_phys_create_warm(phys_bytes, &phys);
		if (err)
			return err;
		env->own_phys = true;
	}
	env->phys = phys;

	err = mmp_space_create(phys, &cfg, &env->space);
	if (err)
		goto fail;
	for (order = 0; order < 32; order++) {
		if (!(thp_always & BENCH_THP(order)))
			continue;
		err = mmp_space_set_thp(env->space, order, MMP_THP_ALWAYS);
		if (err)
			goto fail;
	}
	err = mmp_cpu_attach(env->space, &env->cpu);
	if (err)
		goto fail;
	return 0;
fail:
	bench_env_destroy(env);
	return err;
}

void bench_env_destroy(struct bench_env *env)
{
	if (env->cpu)
		mmp_cpu_detach(env->cpu);
	if (env->space)
		mmp_space_destroy(env->space);
	if (env->own_phys)
		mmp_phys_destroy(env->phys);
	memset(env, 0, sizeof(*env));
}

int bench_env_detach(struct bench_env *env)
{
	int err = 0;

	if (env->cpu)
		err = mmp_cpu_detach(env->cpu);
	env->cpu = NULL;
	return err;
}

int bench_env_attach(struct bench_env *env)
{
	return env->cpu ? 0 : mmp_cpu_attach(env->space, &env->cpu);
}

bool bench_arch_valid(const char *arch)
{
	int i;

	for (i = 0; i < mmp_arch_count(); i++)
		if (!strcmp(mmp_arch_name(i), arch))
			return true;
	return false;
}

unsigned long bench_order_kib(unsigned int order)
{
	return (MMP_PAGE_SIZE << order) / BENCH_KIB;
}

int bench_kib_order(unsigned long kib)
{
	int order;

	for (order = 0; order <= MMP_MAX_ORDER; order++)
		if (bench_order_kib(order) == kib)
			return order;
	return -1;
}

void bench_counters_sub(struct mmp_counters *out, const struct mmp_counters *after,
			const struct mmp_counters *before)
{
	mmp_counters_diff(after, before, out);
}

void bench_print_counter_table(FILE *f, const struct mmp_counters *base,
			       const struct mmp_counters *opt)
{
	int i;

	for (i = 0; i < MMP_NR_COUNTERS; i++) {
		if (!base->v[i] && !opt->v[i])
			continue;
		fprintf(f, "%-*s %*" PRIu64 " %*" PRIu64 "\n", BENCH_NAME_W, mmp_counter_name(i),
			BENCH_VALUE_W, base->v[i], BENCH_VALUE_W, opt->v[i]);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(const double *v, size_t n)
{
	double *s, m;

	if (!n)
		return 0;
	s = malloc(n * sizeof(*s));
	if (!s)
		abort();
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}
