/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Seed "madvise-vma-lock" (Barry Song, "mm: use per_vma lock for
 * MADV_DONTNEED", 6.17): a heap thread that frees memory with MADV_DONTNEED
 * while another thread maps and unmaps elsewhere in the space. Before, each
 * DONTNEED takes the mmap read lock and queues behind the writer (and, the
 * lock being an rwsem, behind a writer that merely waits); from 6.17 a range
 * inside one VMA takes that VMA's lock alone. The series gives no time: its
 * figure is the share of calls that took the per-VMA path on Android, 217,735
 * of 218,966 (HeapTaskDaemon), so there is no claim, and this run's share is
 * printed beside it.
 *
 * Each variant is a space at its release (6.16, 6.17). A sample: the heap
 * thread writes each 64 KiB chunk of its heap (untimed) and DONTNEEDs it
 * (timed, call by call); its figure is the mean call (a median hides the
 * waits while fewer than half the calls wait). One writer thread
 * maps and unmaps 64 KiB far from the heap in the space being sampled, all
 * the time. The counters table is of one more sample per side with the
 * writer stopped, so that it repeats exactly; what the writer makes vary
 * (VMA-lock successes and fallbacks, the mmap lock's waits) is reported
 * apart, as "contended" figures of every timed sample.
 */
#include "common.h"
#include "seed_lock_writer.h"
#include "seeds.h"

#define ML_CHUNK	(64 * BENCH_KIB)
#define ML_CHUNKS	64		/* 4 MiB of heap */
#define ML_CHUNKS_QUICK	16

#define REL(a, b)	MMP_KERNEL_VERSION(a, b, 0)

/* The counters the writer makes vary: reported apart from the exact table. */
static const enum mmp_counter ml_contended[] = {
	MMP_C_MADV_VMA_LOCK_SUCCESS, MMP_C_MADV_VMA_LOCK_FALLBACK, MMP_C_MMAP_LOCK_MADVISE,
	MMP_C_MMAP_LOCK_READ_WAIT, MMP_C_MMAP_LOCK_WRITE_WAIT, MMP_C_VMA_LOCK_ABORT,
};

/* One sample: each chunk written (untimed), then DONTNEEDed (timed). */
static int ml_sample(struct seed_lock_side *side, unsigned int chunks)
{
	int err = 0;

	for (unsigned int i = 0; i < chunks && !err; i++) {
		uint64_t a = side->addr + (uint64_t)i * ML_CHUNK;
		double t0;

		err = mmp_memset(side->env.cpu, a, 0x5a, ML_CHUNK);
		if (err)
			break;
		t0 = bench_now();
		err = mmp_madvise(side->env.space, a, ML_CHUNK, MMP_MADV_DONTNEED);
		side->calls[i] = bench_now() - t0;
	}
	return err;
}

/* The heap, then the writer's place. */
static int ml_setup(struct seed_lock_side *side, unsigned int chunks)
{
	struct mmp_space *s = side->env.space;
	uint64_t far = 0;
	int err = mmp_mmap(s, 0, chunks * ML_CHUNK, RW, 0, &side->addr);

	/* A place for the writer, kept free: mapped once to find it, then unmapped. */
	if (!err)
		err = mmp_mmap(s, 0, ML_CHUNK, RW, 0, &far);
	if (!err)
		err = mmp_munmap(s, far, ML_CHUNK);
	side->writer = (struct seed_writer_target){ s, far, ML_CHUNK };
	return err;
}

static const struct seed_lock_writer ml_desc = {
	.seed = "madvise-vma-lock",
	.base_release = REL(6, 16), .opt_release = REL(6, 17),
	.base_label = "6.16", .opt_label = "6.17",
	.items = ML_CHUNKS, .items_quick = ML_CHUNKS_QUICK,
	.item_bytes = ML_CHUNK, .items_key = "chunks", .bytes_key = "chunk_bytes",
	.contended = ml_contended,
	.ncontended = sizeof(ml_contended) / sizeof(ml_contended[0]),
	.vma_ok = MMP_C_MADV_VMA_LOCK_SUCCESS, .vma_fallback = MMP_C_MADV_VMA_LOCK_FALLBACK,
	.mmap_lock = MMP_C_MMAP_LOCK_MADVISE,
	.what_pre = "MADV_DONTNEED of ", .what_post = " chunks of 64 KiB a sample",
	.share_aside = " (the series: 99.44%)",
	.published = "99.4% of calls on the per-VMA path (217,735 of 218,966, Android)",
	.note = "no claim: the series gives no time; its figure is the per-VMA share "
		"(optimized_vma_lock_share)",
	.attach = true,		/* the chunks are written through the CPU */
	.setup = ml_setup,
	.sample = ml_sample,
};

/* One case, named for the summary. */
static const char *const ml_cases[] = { "DONTNEED beside a writer" };

static int ml_case_run(const struct mmp_seed_opts *opts, const char *arch,
		       struct mmp_phys *phys, const void *arg)
{
	return seed_lock_writer_run(&ml_desc, opts, arch, phys, *(const char *const *)arg);
}

const struct mmp_seed mmp_seed_madvise_vma_lock = {
	.name = "madvise-vma-lock",
	.title = "MADV_DONTNEED beside a thread that maps and unmaps: the mmap lock (6.16) or the VMA's (6.17)",
	.archs = (const char *const[]){ "x86_64", "arm64", NULL },
	MMP_SEED_CASES(ml_cases),
	.phys_bytes = 32 * BENCH_MIB,
	.phys_bytes_quick = 32 * BENCH_MIB,
	.run_case = ml_case_run,
};
