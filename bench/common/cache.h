/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host cache measurement for the cache-footprint benches: evicting lines,
 * timing a 4 KiB read, sweeping buffers, a pointer-chase victim working set,
 * a calibration of read latency per cache level in the same run, and a
 * cache-pressure thread on a core that shares the LLC.
 */
#ifndef MMP_BENCH_CACHE_H
#define MMP_BENCH_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topo.h"

/* Can this host evict a line from every cache level (clflush, DC CIVAC)? */
bool hc_can_flush(void);
/* Evict [p, p + len) from the caches, and wait for it. No-op when !hc_can_flush(). */
void hc_flush(const void *p, size_t len);

/* Read the 4 KiB at @p (page aligned); the nanoseconds it took, one clock pair included. */
double hc_read4k_ns(const void *p);
/*
 * The same without a clock: returns a value so the loads stay. Inline, so that
 * cachegrind counts its misses in the function that calls it.
 */
static inline __attribute__((always_inline)) uint64_t hc_read4k(const void *p)
{
	const uint64_t *q = p;
	uint64_t a = 0, b = 0, c = 0, d = 0;

	for (size_t i = 0; i < 4096 / 8; i += 4) {
		a |= q[i];
		b |= q[i + 1];
		c |= q[i + 2];
		d |= q[i + 3];
	}
	return a | b | c | d;
}

/* A host buffer for sweeping caches; @huge backs it with THPs (fewer TLB misses). */
struct hc_buf {
	uint8_t *p;
	size_t len;
};

int hc_buf_alloc(struct hc_buf *b, size_t len, bool huge);
void hc_buf_free(struct hc_buf *b);
/* Read one word of every line of the first @len bytes. */
void hc_sweep(const struct hc_buf *b, size_t len);

/* The caller's working set: @len bytes chased line by line in a random order. */
struct hc_victim {
	struct hc_buf buf;
	size_t nr_lines;
};

int hc_victim_init(struct hc_victim *v, size_t len, uint64_t seed);
void hc_victim_free(struct hc_victim *v);
/* Chase every line once; the nanoseconds it took. */
double hc_victim_chase_ns(struct hc_victim *v);

enum hc_class { HC_L1, HC_L2, HC_L3, HC_DRAM, HC_NR_CLASSES };

/* Samples of a calibration, pooled over rounds (calib.c). */
struct hc_calib_set {
	double *v[HC_NR_CLASSES + 2];	/* per class, then victim hot and victim evicted */
	size_t n, cap;
	bool absent[HC_NR_CLASSES];	/* levels this host lacks or cannot reach */
	bool victim;
};

/*
 * What a calibration found, on this PU, in a known state. Levels whose reads
 * cannot be told apart (their intervals overlap, or they differ by less than
 * HC_MERGE) form one class, named "L1/L2"; classes increase strictly.
 */
#define HC_MERGE	1.15
#define HC_STABLE	0.10	/* stable: every interval within 10% of its median */
/*
 * No read counts as surely slower than L1/L2 unless it takes at least this
 * many times the calibrated L1/L2 read: on shared vCPUs that read itself moves
 * between about 150 and 250 ns within and between runs (clock and frequency),
 * so a pooled calibration can sit in the fast state while a target's samples
 * sit in the slow one, 1.7x apart, both hot.
 */
#define HC_COLD_RATIO	2.0

struct hc_calib {
	double read_ns[HC_NR_CLASSES];	/* median 4 KiB read from each level; NAN when absent */
	double read_lo[HC_NR_CLASSES], read_hi[HC_NR_CLASSES];	/* its 95% interval */
	int group[HC_NR_CLASSES];	/* the lowest level of its class */
	double victim_hot_ns;		/* a chase of the victim right after a chase */
	double victim_evicted_ns;	/* ... after chasing 2 x L2 of other lines */
	int reps;			/* samples per level */
	bool stable;
};

/*
 * Add @reps rounds of calibration samples on the calling thread's PU to @s: @t
 * gives the cache sizes, @evict is a buffer of at least 4 x L1d, @evictor a
 * random chase of at least 2 x L2 (a sequential sweep does not empty every L2:
 * some insert streamed lines at low priority), @v the victim (may be NULL).
 */
int hc_calib_collect(struct hc_calib_set *s, const struct bench_topo *t, struct hc_buf *evict,
		     struct hc_victim *evictor, struct hc_victim *v, int reps);
/* Medians, intervals and classes of the samples in @s. */
void hc_calib_finish(struct hc_calib *c, const struct hc_calib_set *s);
void hc_calib_set_free(struct hc_calib_set *s);
/* hc_calib_collect() of @reps rounds, then hc_calib_finish(). Levels the topology lacks are NAN. */
int hc_calibrate(struct hc_calib *c, const struct bench_topo *t, struct hc_buf *evict,
		 struct hc_victim *evictor, struct hc_victim *v, int reps);
/* The level of the class whose calibrated read time is nearest @ns (in ratio). */
enum hc_class hc_classify(const struct hc_calib *c, double ns);
const char *hc_class_name(enum hc_class c);
/* Name of the class level @k belongs to, e.g. "L1/L2", into @buf. */
const char *hc_calib_class_name(const struct hc_calib *c, enum hc_class k, char *buf, size_t len);
/* The boundary between the class of L2 and the next class up; NAN when none. */
double hc_hot_limit(const struct hc_calib *c);
/*
 * Reads surely slower than L1/L2: the lowest end of the intervals of the levels
 * above the class of L2, at least hc_hot_limit() and at least HC_COLD_RATIO
 * times the slowest level of the class of L2; NAN when none.
 */
double hc_cold_limit(const struct hc_calib *c);
/* The calibration as a JSON object into @buf; the characters written. */
size_t hc_calib_json(const struct hc_calib *c, char *buf, size_t len);
/* How much of the victim is still in L2 after something ran: 0..1 from the chase time. */
double hc_victim_kept(const struct hc_calib *c, double chase_ns);

/* A thread on @pu that keeps reading and writing @len bytes: LLC pressure. */
struct hc_pressure {
	pthread_t thread;
	struct bench_topo *topo;
	struct hc_buf buf;
	int pu;
	volatile int stop;
	bool running;
};

int hc_pressure_start(struct hc_pressure *p, struct bench_topo *t, int pu, size_t len);
void hc_pressure_stop(struct hc_pressure *p);

#endif /* MMP_BENCH_CACHE_H */
