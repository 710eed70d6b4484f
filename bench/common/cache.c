/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host cache measurement: flush, timed reads, sweeps, a victim, pressure (calibration: calib.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cache.h"
#include "common.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define LINE	64

static volatile uint64_t hc_sink;

/* Keep the timed loads between the two clock reads. */
static inline void hc_serialize(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("lfence" : : : "memory");
#elif defined(__aarch64__)
	__asm__ volatile("dsb ish\n\tisb" : : : "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* ---- flushing ---------------------------------------------------------------------- */

#if defined(__x86_64__) || defined(__i386__)
static bool have_clflushopt(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23));
}

bool hc_can_flush(void)
{
	return true;	/* clflush is part of SSE2 */
}

void hc_flush(const void *p, size_t len)
{
	static int opt = -1;
	const uint8_t *c = (const uint8_t *)((uintptr_t)p & ~(uintptr_t)(LINE - 1));
	const uint8_t *end = (const uint8_t *)p + len;

	if (opt < 0)
		opt = have_clflushopt();
	__asm__ volatile("mfence" : : : "memory");
	if (opt)
		for (; c < end; c += LINE)	/* clflushopt: 66 0f ae /7 */
			__asm__ volatile(".byte 0x66; clflush %0" : "+m"(*(volatile uint8_t *)c));
	else
		for (; c < end; c += LINE)
			__asm__ volatile("clflush %0" : "+m"(*(volatile uint8_t *)c));
	__asm__ volatile("mfence" : : : "memory");
}
#elif defined(__aarch64__)
bool hc_can_flush(void)
{
	return true;	/* DC CIVAC is allowed at EL0 on Linux */
}

void hc_flush(const void *p, size_t len)
{
	uint64_t ctr;
	size_t line;
	const uint8_t *c, *end = (const uint8_t *)p + len;

	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	line = 4u << ((ctr >> 16) & 0xf);	/* DminLine */
	c = (const uint8_t *)((uintptr_t)p & ~(uintptr_t)(line - 1));
	__asm__ volatile("dsb ish" : : : "memory");
	for (; c < end; c += line)
		__asm__ volatile("dc civac, %0" : : "r"(c) : "memory");
	__asm__ volatile("dsb ish" : : : "memory");
}
#else
bool hc_can_flush(void)
{
	return false;
}

void hc_flush(const void *p, size_t len)
{
}
#endif

/* ---- reading ---------------------------------------------------------------------------- */

double hc_read4k_ns(const void *p)
{
	uint64_t t0, t1, v;

	hc_serialize();
	t0 = bench_now_ns();
	hc_serialize();
	v = hc_read4k(p);
	hc_serialize();
	t1 = bench_now_ns();
	hc_sink += v;
	return (double)(t1 - t0);
}

/* ---- buffers and the victim ------------------------------------------------------------- */

#define HC_THP	(2UL << 20)

static size_t hc_buf_map_len(size_t len)
{
	return (len + HC_THP - 1) & ~(HC_THP - 1);
}

/* 2 MiB aligned, so that MADV_HUGEPAGE can back it with THPs (one TLB entry each). */
int hc_buf_alloc(struct hc_buf *b, size_t len, bool huge)
{
	size_t map = hc_buf_map_len(len);
	uint8_t *p = mmap(NULL, map + HC_THP, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *a;

	if (p == MAP_FAILED) {
		b->p = NULL;
		return -ENOMEM;
	}
	a = (uint8_t *)(((uintptr_t)p + HC_THP - 1) & ~(HC_THP - 1));
	if (a > p)
		munmap(p, a - p);
	munmap(a + map, p + HC_THP - a);
	madvise(a, map, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(a, 1, map);
	b->p = a;
	b->len = len;
	return 0;
}

void hc_buf_free(struct hc_buf *b)
{
	if (b->p)
		munmap(b->p, hc_buf_map_len(b->len));
	b->p = NULL;
}

void hc_sweep(const struct hc_buf *b, size_t len)
{
	const volatile uint8_t *p = b->p;
	uint64_t v = 0;

	if (len > b->len)
		len = b->len;
	for (size_t off = 0; off < len; off += LINE)
		v += p[off];
	hc_sink += v;
}

int hc_victim_init(struct hc_victim *v, size_t len, uint64_t seed)
{
	size_t *perm;
	uint64_t *w;
	int err;

	v->nr_lines = len / LINE;
	if (v->nr_lines < 2)
		return -EINVAL;
	err = hc_buf_alloc(&v->buf, len, true);
	if (err)
		return err;
	perm = malloc(v->nr_lines * sizeof(*perm));
	if (!perm) {
		hc_buf_free(&v->buf);
		return -ENOMEM;
	}
	/* A random cycle through every line: prefetchers cannot guess the next one. */
	for (size_t i = 0; i < v->nr_lines; i++)
		perm[i] = i;
	for (size_t i = v->nr_lines - 1; i > 0; i--) {
		size_t j, t;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		j = seed % (i + 1);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	w = (uint64_t *)v->buf.p;
	for (size_t i = 0; i < v->nr_lines; i++)
		w[perm[i] * (LINE / 8)] = perm[(i + 1) % v->nr_lines];
	free(perm);
	return 0;
}

void hc_victim_free(struct hc_victim *v)
{
	hc_buf_free(&v->buf);
}

double hc_victim_chase_ns(struct hc_victim *v)
{
	const volatile uint64_t *w = (const uint64_t *)v->buf.p;
	uint64_t t0, idx = 0;

	t0 = bench_now_ns();
	for (size_t i = 0; i < v->nr_lines; i++)
		idx = w[idx * (LINE / 8)];
	hc_sink += idx;
	return (double)(bench_now_ns() - t0);
}

/* ---- cache pressure ----------------------------------------------------------------------- */

static void *pressure_thread(void *arg)
{
	struct hc_pressure *p = arg;
	volatile uint8_t *b;

	bench_topo_pin(p->topo, p->pu);
	b = p->buf.p;
	__atomic_store_n(&p->running, true, __ATOMIC_RELEASE);
	while (!p->stop)
		for (size_t off = 0; off < p->buf.len && !p->stop; off += LINE)
			b[off]++;	/* read and dirty every line */
	return NULL;
}

int hc_pressure_start(struct hc_pressure *p, struct bench_topo *t, int pu, size_t len)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->topo = t;
	p->pu = pu;
	err = hc_buf_alloc(&p->buf, len, true);
	if (err)
		return err;
	err = -pthread_create(&p->thread, NULL, pressure_thread, p);
	if (err) {
		hc_buf_free(&p->buf);
		return err;
	}
	while (!__atomic_load_n(&p->running, __ATOMIC_ACQUIRE))
		;
	return 0;
}

void hc_pressure_stop(struct hc_pressure *p)
{
	if (!p->running)
		return;
	p->stop = 1;
	pthread_join(p->thread, NULL);
	p->running = false;
	hc_buf_free(&p->buf);
}
