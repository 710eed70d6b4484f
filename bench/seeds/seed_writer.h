/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A writer thread beside a seed's timed calls: it maps and unmaps one range,
 * again and again, in whichever space it is pointed at, so that the calls
 * meet the mmap write lock (or not, where a release takes a VMA's lock
 * instead). The seeds that measure a lock change sample each side with it.
 */
#ifndef MMP_SEED_WRITER_H
#define MMP_SEED_WRITER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <mmprim/mmprim.h>

/* Where the writer works: a free range of a space, away from what is measured. */
struct seed_writer_target {
	struct mmp_space *space;
	uint64_t addr, len;
};

struct seed_writer {
	pthread_t th;
	const struct seed_writer_target *cur;	/* atomic: NULL idles */
	int stop;				/* atomic */
	int err;				/* atomic: the first error, which stops it */
	uint64_t ops;				/* atomic: mmap and munmap pairs done */
	bool started;
};

/* Start @w idle; 0 or a negative errno. */
int seed_writer_start(struct seed_writer *w);

/* Point @w at @t and wait until it has mapped and unmapped there once; its error, if any. */
int seed_writer_switch(struct seed_writer *w, const struct seed_writer_target *t);

/* Stop and join @w (if it started); its error, or 0. */
int seed_writer_stop(struct seed_writer *w);

#endif /* MMP_SEED_WRITER_H */
