/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Op sequences: random generation from a seed, decoding of a fuzzer's bytes,
 * and the one-line text form of the op log (printed and parsed back for
 * replay). Generation knows only which processes live, not the layout: the
 * addresses and sizes are drawn from grids that make ops collide often
 * (2 MiB and 64 KiB boundaries, small and PMD-sized lengths).
 */
#include <inttypes.h>
#include <string.h>

#include <mmprim/mmprim.h>

#include "kdiff.h"

static const char *const kind_names[KD_NR_KINDS] = {
	[KD_MMAP] = "mmap",	  [KD_MUNMAP] = "munmap",   [KD_MPROTECT] = "mprotect",
	[KD_MREMAP] = "mremap",	  [KD_MADVISE] = "madvise", [KD_READ] = "read",
	[KD_WRITE] = "write",	  [KD_FORK] = "fork",	    [KD_EXIT] = "exit",
	[KD_RECLAIM] = "reclaim", [KD_SETOPT] = "setopt",   [KD_PIN] = "pin",
	[KD_UNPIN] = "unpin",	  [KD_CHECK] = "check",	    [KD_MMAP_FILE] = "mmap_file",
	[KD_FTRUNCATE] = "ftruncate", [KD_FWRITE] = "pwrite", [KD_FREAD] = "pread",
	[KD_MSYNC] = "msync", [KD_MLOCK] = "mlock", [KD_MSEAL] = "mseal",
	[KD_THP_DISABLE] = "thp_disable",
};

const char *kd_kind_name(int kind)
{
	return kind >= 0 && kind < KD_NR_KINDS ? kind_names[kind] : "?";
}

/* Which processes live, as the generator sees it (fork and exit always succeed). */
struct gen_state {
	bool live[KD_MAX_PROCS];
};

static int pick_proc(struct kd_rng *r, const struct gen_state *g)
{
	int n = 0, live[KD_MAX_PROCS];

	for (int i = 0; i < KD_MAX_PROCS; i++)
		if (g->live[i])
			live[n++] = i;
	return live[kd_below(r, n)];
}

/* Mostly the first half of the window, so mappings meet. */
static uint64_t pick_addr(struct kd_rng *r)
{
	switch (kd_below(r, 10)) {
	case 0: case 1: case 2:
		return KD_WIN_BASE + (2ULL << 20) * kd_below(r, 16);
	case 3: case 4: case 5:
		return KD_WIN_BASE + (64ULL << 10) * kd_below(r, 512);
	default:
		return KD_WIN_BASE + KD_PAGE * kd_below(r, KD_NPAGES / 2);
	}
}

static uint64_t pick_len(struct kd_rng *r)
{
	switch (kd_below(r, 20)) {
	case 0: case 1: case 2: case 3: case 4:
		return KD_PAGE * (1 + kd_below(r, 16));
	case 5: case 6: case 7: case 8:
		return (64ULL << 10) * (1 + kd_below(r, 4));
	case 9: case 10: case 11: case 12:
		return 2ULL << 20;
	case 13: case 14:
		return (2ULL << 20) + KD_PAGE * (1 + kd_below(r, 32));
	case 15:
		return 4ULL << 20;
	case 16:
		return 8ULL << 20;
	default:
		return KD_PAGE * (1 + kd_below(r, 2048));
	}
}

/* Keep [addr, addr + len) inside the window: nothing may touch the host's own mappings. */
static uint64_t clamp_len(uint64_t addr, uint64_t len)
{
	if (addr >= KD_WIN_END)
		return 0;
	return len > KD_WIN_END - addr ? KD_WIN_END - addr : len;
}

/* A file offset or size: small, at 64 KiB or 2 MiB steps, or any page, some unaligned. */
static uint64_t pick_file_pos(struct kd_rng *r)
{
	uint64_t pos;

	switch (kd_below(r, 8)) {
	case 0:
		return 0;
	case 1: case 2:
		pos = KD_PAGE * kd_below(r, 32);
		break;
	case 3:
		pos = (64ULL << 10) * kd_below(r, KD_FILE_MAX >> 16);
		break;
	case 4:
		pos = (2ULL << 20) * kd_below(r, KD_FILE_MAX >> 21);
		break;
	default:
		pos = KD_PAGE * kd_below(r, KD_FILE_MAX / KD_PAGE);
	}
	if (kd_below(r, 6) == 0)
		pos += kd_below(r, KD_PAGE);
	return pos < KD_FILE_MAX ? pos : KD_FILE_MAX - 1;
}

/* Where a mapping goes: fixed (replacing or not), a hint, or anywhere. */
static int pick_placement(struct kd_rng *r, struct kd_op *op)
{
	switch (kd_below(r, 20)) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8:
		return MMP_MAP_FIXED;
	case 9: case 10: case 11: case 12: case 13:
		return MMP_MAP_FIXED_NOREPLACE;
	case 14: case 15: case 16: case 17:
		return 0;	/* a hint: taken if free, else the mapping goes elsewhere */
	default:
		op->addr = 0;
		return 0;
	}
}

/*
 * A hugetlb mapping of 2 MiB pages, private or shared (left out of runs with
 * no pool on the host): mostly at a huge page boundary, for the kernel's
 * EINVAL otherwise; its length is rounded up to whole huge pages, which at a
 * boundary of the window still ends inside it.
 */
static void pick_hugetlb(struct kd_rng *r, struct kd_op *op)
{
	op->flags |= MMP_MAP_HUGETLB;
	if (kd_below(r, 3) == 0)
		op->flags |= MMP_MAP_SHARED;
	if (kd_below(r, 6))
		op->addr &= ~((2ULL << 20) - 1);
}

static int pick_prot(struct kd_rng *r)
{
	static const int prots[] = { MMP_PROT_NONE, MMP_PROT_READ, MMP_PROT_READ | MMP_PROT_WRITE,
				     MMP_PROT_READ | MMP_PROT_WRITE, MMP_PROT_READ | MMP_PROT_WRITE };

	return prots[kd_below(r, 5)];
}

/*
 * Invalid arguments the kernel rejects before touching anything: unaligned
 * addresses, zero lengths, lengths that wrap around the address space. A
 * length past the task size (1 << 63) only where the call checks it or stops
 * at the hole after the window: never for madvise, which would reach the host
 * process's own mappings (MADV_DONTNEED would zap them).
 */
static void make_invalid(struct kd_rng *r, struct kd_op *op)
{
	switch (kd_below(r, op->kind == KD_MADVISE ? 3 : 4)) {
	case 0:
		op->addr += 1 + kd_below(r, KD_PAGE - 1);
		break;
	case 1:
		op->len = 0;
		break;
	case 2:
		op->len = -op->addr + KD_PAGE * kd_below(r, 4);
		break;
	default:
		op->len = kd_below(r, 2) ? ~0ULL : 1ULL << 63;
		break;
	}
	if (op->kind == KD_MADVISE && op->len == 0 && kd_below(r, 2))
		op->len = ~0ULL;	/* page-aligns to 0: EINVAL */
}

/* PR_SET_THP_DISABLE's settings as KD_THP_DISABLE's flags: enable, disable, except advised. */
static const uint32_t thp_disable_flags[] = { 0, 1, 1 | 2 };

/*
 * One madvise in 16 becomes an mlock, mlock2(MLOCK_ONFAULT) or munlock, one
 * in 64 an mseal of a few pages, on the madvise's range, and one in 64 a
 * prctl(PR_SET_THP_DISABLE), as its seed says: no draw of the generator's is
 * taken, so the sequences of the seeds before these calls existed stay as
 * they were, but for these ops.
 */
static void madvise_to_lock(struct kd_op *op, bool invalid)
{
	uint32_t pick = op->seed & 63;

	if (pick >= 6)
		return;
	if (pick == 5) {
		op->kind = KD_THP_DISABLE;
		/* A flag with the enabling value is EINVAL. */
		op->flags = invalid && (op->seed & 64) ? 2 : thp_disable_flags[(op->seed >> 8) % 3];
		return;
	}
	if (pick == 4) {
		op->kind = KD_MSEAL;
		op->flags = invalid && (op->seed & 64) ? 1 : 0;
		if (op->len <= KD_WIN_SIZE)
			op->len = clamp_len(op->addr, KD_PAGE * (1 + ((op->seed >> 8) & 7)));
	} else {
		op->kind = KD_MLOCK;
		op->flags = (op->seed >> 8) % 3;	/* mlock, mlock2 ONFAULT, munlock */
	}
	if (invalid && op->kind == KD_MLOCK && (op->seed & 64))
		op->flags = 3;				/* an unknown mlock2 flag */
}

static void gen_mremap(struct kd_rng *r, struct kd_op *op)
{
	uint64_t old = op->len;

	op->addr2 = 0;
	switch (kd_below(r, 8)) {
	case 0:		/* shrink in place */
		op->len2 = KD_PAGE * (1 + kd_below(r, old / KD_PAGE));
		if (op->len2 > old)
			op->len2 = old;
		op->flags = kd_below(r, 2) ? MMP_MREMAP_MAYMOVE : 0;
		break;
	case 1:		/* same size: a no-op that needs only the start mapped */
		op->len2 = old;
		break;
	case 2:		/* grow in place, or move anywhere */
		op->len2 = old + pick_len(r);
		op->flags = kd_below(r, 2) ? MMP_MREMAP_MAYMOVE : 0;
		break;
	case 3: case 4:	/* move to a fixed address, resizing or not */
		op->flags = MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED;
		op->addr2 = pick_addr(r);
		op->len2 = kd_below(r, 2) ? old : pick_len(r);
		break;
	case 5:		/* DONTUNMAP to a fixed address */
		op->flags = MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED | MMP_MREMAP_DONTUNMAP;
		op->addr2 = pick_addr(r);
		op->len2 = old;
		break;
	case 6:		/* DONTUNMAP with a hint, or lengths equal only once page-rounded */
		op->flags = MMP_MREMAP_MAYMOVE | MMP_MREMAP_DONTUNMAP;
		op->addr2 = kd_below(r, 4) ? pick_addr(r) : 0;
		op->len2 = old;
		if (kd_below(r, 3) == 0)
			op->len2 = old - 1 - kd_below(r, 100);
		break;
	default:	/* old_len 0 (refused for private memory), bad flags, bad new address */
		op->len2 = old;
		switch (kd_below(r, 3)) {
		case 0:
			op->len = 0;
			op->flags = MMP_MREMAP_MAYMOVE;
			break;
		case 1:
			op->flags = 8 << kd_below(r, 3);
			break;
		default:
			op->flags = MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED;
			op->addr2 = pick_addr(r) + 1 + kd_below(r, 100);
		}
	}
	op->len2 = clamp_len(op->addr2 ? op->addr2 : op->addr, op->len2);
	if (!op->len2)
		op->len2 = KD_PAGE;
}

/* One op of @kind for a live process. */
static void gen_one(struct kd_rng *r, struct gen_state *g, int kind, struct kd_op *op)
{
	static const int advices[] = { MMP_MADV_DONTNEED, MMP_MADV_FREE, MMP_MADV_FREE,
				       MMP_MADV_HUGEPAGE, MMP_MADV_NOHUGEPAGE, MMP_MADV_PAGEOUT,
				       MMP_MADV_COLD, MMP_MADV_WILLNEED, MMP_MADV_POPULATE_READ,
				       MMP_MADV_POPULATE_WRITE, MMP_MADV_DONTNEED_LOCKED,
				       MMP_MADV_COLLAPSE, MMP_MADV_GUARD_INSTALL,
				       MMP_MADV_GUARD_REMOVE };
	/* Not MADV_HWPOISON: the host's answer depends on its privilege and config. */
	static const int flag_advices[] = { MMP_MADV_NORMAL, MMP_MADV_RANDOM,
					    MMP_MADV_SEQUENTIAL, MMP_MADV_DONTFORK,
					    MMP_MADV_DONTFORK, MMP_MADV_DOFORK,
					    MMP_MADV_WIPEONFORK, MMP_MADV_WIPEONFORK,
					    MMP_MADV_KEEPONFORK, MMP_MADV_MERGEABLE,
					    MMP_MADV_UNMERGEABLE, MMP_MADV_REMOVE, MMP_MADV_REMOVE };
	bool invalid = kd_below(r, 20) == 0;

	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->proc = pick_proc(r, g);
	op->seed = (uint32_t)kd_rand(r);
	op->addr = pick_addr(r);
	op->len = clamp_len(op->addr, pick_len(r));
	switch (kind) {
	case KD_MMAP:
		op->prot = pick_prot(r);
		op->flags = pick_placement(r, op);
		if (kd_below(r, 5) == 0)
			op->flags |= MMP_MAP_POPULATE;
		if (kd_below(r, 25) == 0)
			op->flags |= MMP_MAP_DROPPABLE;
		else if (kd_below(r, 25) == 0)
			op->flags |= MMP_MAP_GROWSDOWN;	/* a stack: reads below grow it */
		else if (kd_below(r, 8) == 0)
			op->flags |= MMP_MAP_SHARED;	/* shared anonymous: a shmem object */
		else if (kd_below(r, 10) == 0)
			pick_hugetlb(r, op);
		if (invalid)
			op->addr ? make_invalid(r, op) : (void)(op->len = 0);
		break;
	case KD_MMAP_FILE:
		op->prot = pick_prot(r);
		op->flags = pick_placement(r, op) | (kd_below(r, 2) ? MMP_MAP_SHARED : MMP_MAP_PRIVATE);
		if (kd_below(r, 5) == 0)
			op->flags |= MMP_MAP_POPULATE;
		op->proc2 = kd_below(r, KD_MAX_FILES);
		op->addr2 = pick_file_pos(r) & ~(KD_PAGE - 1);
		if (invalid) {
			switch (kd_below(r, 3)) {
			case 0:
				op->addr2 += 1 + kd_below(r, KD_PAGE - 1);	/* unaligned offset */
				break;
			case 1:
				op->flags &= ~(MMP_MAP_SHARED | MMP_MAP_PRIVATE);	/* no type */
				break;
			default:
				op->len = 0;
			}
		}
		break;
	case KD_FTRUNCATE:
		op->proc2 = kd_below(r, KD_MAX_FILES);
		op->len = pick_file_pos(r);
		break;
	case KD_MSYNC: {
		static const int ms[] = { MMP_MS_SYNC, MMP_MS_ASYNC, MMP_MS_SYNC | MMP_MS_INVALIDATE,
					  MMP_MS_ASYNC | MMP_MS_INVALIDATE, 0 };

		op->flags = ms[kd_below(r, sizeof(ms) / sizeof(ms[0]))];
		if (invalid)
			kd_below(r, 2) ? make_invalid(r, op) :
					 (void)(op->flags = kd_below(r, 2) ? MMP_MS_SYNC | MMP_MS_ASYNC : 8);
		break;
	}
	case KD_FWRITE:
	case KD_FREAD:
		op->proc2 = kd_below(r, KD_MAX_FILES);
		op->addr = pick_file_pos(r);
		op->len = kd_below(r, 4) ? 1 + kd_below(r, 3 * KD_PAGE) : 1 + kd_below(r, KD_MAX_IO);
		break;
	case KD_MUNMAP:
		if (kd_below(r, 4) == 0)
			op->len -= kd_below(r, KD_PAGE);	/* unaligned lengths round up */
		if (invalid)
			make_invalid(r, op);
		break;
	case KD_MPROTECT:
		op->prot = pick_prot(r);
		if (kd_below(r, 20) == 0)
			op->prot |= kd_below(r, 3) ? MMP_PROT_GROWSDOWN : MMP_PROT_GROWSUP;
		if (invalid)
			kd_below(r, 3) ? make_invalid(r, op) : (void)(op->prot = 0x40 << kd_below(r, 3));
		break;
	case KD_MREMAP:
		gen_mremap(r, op);
		if (invalid && op->len)
			make_invalid(r, op);
		break;
	case KD_MADVISE:
		op->flags = advices[kd_below(r, sizeof(advices) / sizeof(advices[0]))];
		/*
		 * A quarter of them one of the VMA-flag advices or MADV_REMOVE,
		 * picked from the op's own seed (its top byte, which no data
		 * pattern of a madvise uses): the generator draws nothing more,
		 * so an older seed's ops stay the same but for those.
		 */
		if ((op->seed >> 24) % 4 == 0)
			op->flags = flag_advices[(op->seed >> 26) %
						 (sizeof(flag_advices) / sizeof(flag_advices[0]))];
		/* MADV_COLLAPSE acts on whole 2 MiB ranges: give it some half the time. */
		if (op->flags == MMP_MADV_COLLAPSE && kd_below(r, 2)) {
			op->addr &= ~((2ULL << 20) - 1);
			op->len = clamp_len(op->addr, (2ULL << 20) * (1 + kd_below(r, 2)));
		}
		if (invalid)
			kd_below(r, 3) ? make_invalid(r, op) : (void)(op->flags = 1000 + kd_below(r, 1000));
		madvise_to_lock(op, invalid);	/* after every draw the madvise took */
		break;
	case KD_READ:
	case KD_WRITE:
		op->addr += kd_below(r, KD_PAGE);
		op->len = kd_below(r, 4) ? 1 + kd_below(r, 3 * KD_PAGE) : 1 + kd_below(r, KD_MAX_IO);
		op->len = clamp_len(op->addr, op->len);
		break;
	case KD_FORK:
		for (int i = 0; i < KD_MAX_PROCS; i++)
			if (!g->live[i]) {
				op->proc2 = i;
				g->live[i] = true;
				return;
			}
		op->kind = KD_READ;	/* no slot free */
		op->len = 1;
		break;
	case KD_EXIT: {
		int n = 0;

		for (int i = 0; i < KD_MAX_PROCS; i++)
			n += g->live[i];
		if (n > 1) {
			g->live[op->proc] = false;
		} else {
			op->kind = KD_READ;	/* the last process stays */
			op->len = 1;
		}
		break;
	}
	case KD_SETOPT:
		op->variant = kd_below(r, KD_MAX_VARIANTS);
		op->flags = kd_below(r, 64);	/* which switch: reduced by the runner */
		op->len = kd_below(r, 16);	/* its value: reduced by the runner */
		break;
	case KD_THP_DISABLE:
		op->flags = thp_disable_flags[kd_below(r, 3)];
		break;
	case KD_PIN:
		op->addr &= ~(KD_PAGE - 1);
		op->len = 1 + kd_below(r, 16);
		/* Read or write: a read pin of a page never written takes the zero page. */
		op->flags = kd_below(r, 2);
		break;
	default:
		break;
	}
}

/* How often each kind comes up, per 1155. */
static const uint16_t weights[KD_NR_KINDS] = {
	[KD_MMAP] = 150,   [KD_MUNMAP] = 80, [KD_MPROTECT] = 90, [KD_MREMAP] = 110,
	[KD_MADVISE] = 110, [KD_READ] = 180, [KD_WRITE] = 200,	[KD_FORK] = 12,
	[KD_EXIT] = 8,	   [KD_RECLAIM] = 10, [KD_SETOPT] = 20, [KD_PIN] = 12,
	[KD_UNPIN] = 12,   [KD_CHECK] = 6, [KD_MMAP_FILE] = 70, [KD_FTRUNCATE] = 15,
	[KD_FWRITE] = 30,  [KD_FREAD] = 25, [KD_MSYNC] = 15,
};

static int pick_kind(struct kd_rng *r)
{
	unsigned int total = 0, x;

	for (int k = 0; k < KD_NR_KINDS; k++)
		total += weights[k];
	x = kd_below(r, total);
	for (int k = 0; k < KD_NR_KINDS; k++) {
		if (x < weights[k])
			return k;
		x -= weights[k];
	}
	return KD_READ;
}

void kd_generate(uint64_t seed, struct kd_op *ops, uint64_t n)
{
	struct kd_rng r = { seed };
	struct gen_state g = { .live = { true } };

	for (uint64_t i = 0; i < n; i++)
		gen_one(&r, &g, pick_kind(&r), &ops[i]);
}

uint64_t kd_decode(const uint8_t *data, size_t size, struct kd_op *ops, uint64_t max)
{
	struct gen_state g = { .live = { true } };
	uint64_t n = 0;

	/* Eight bytes an op: the first picks the kind, all of them seed its arguments. */
	for (; size >= 8 && n < max; data += 8, size -= 8) {
		uint64_t word;
		struct kd_rng r;

		memcpy(&word, data, 8);
		r.s = word;
		gen_one(&r, &g, data[0] % KD_NR_KINDS, &ops[n++]);
	}
	return n;
}

void kd_print_op(FILE *f, const struct kd_op *op)
{
	fprintf(f, "%s p=%u q=%u v=%u prot=%d flags=%#x seed=%#x addr=%#" PRIx64 " len=%#" PRIx64
		" len2=%#" PRIx64 " addr2=%#" PRIx64 "\n",
		kd_kind_name(op->kind), op->proc, op->proc2, op->variant, op->prot,
		(unsigned int)op->flags, op->seed, op->addr, op->len, op->len2, op->addr2);
}

int kd_parse_op(const char *line, struct kd_op *op)
{
	char name[16];
	unsigned int p, q, v, flags, seed;
	int prot;

	memset(op, 0, sizeof(*op));
	if (sscanf(line, "%15s p=%u q=%u v=%u prot=%d flags=%x seed=%x addr=%" SCNx64 " len=%" SCNx64
		   " len2=%" SCNx64 " addr2=%" SCNx64, name, &p, &q, &v, &prot, &flags, &seed,
		   &op->addr, &op->len, &op->len2, &op->addr2) != 11)
		return -1;
	for (int k = 0; k < KD_NR_KINDS; k++)
		if (!strcmp(name, kind_names[k]))
			op->kind = k;
	if (strcmp(name, kind_names[op->kind]) || p >= KD_MAX_PROCS || q >= KD_MAX_PROCS ||
	    v >= KD_MAX_VARIANTS)
		return -1;
	op->proc = p;
	op->proc2 = q;
	op->variant = v;
	op->prot = prot;
	op->flags = (int32_t)flags;
	op->seed = seed;
	return 0;
}
