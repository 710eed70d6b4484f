// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The memory system calls, replayed on the task's simulated CPU at the
 * addresses of the trace: mmap at the address the kernel returned
 * (MAP_FIXED_NOREPLACE, or MAP_FIXED where the program asked for it),
 * munmap, mprotect, madvise and process_madvise, mremap (a move goes to the
 * address the kernel chose), brk, mseal and the mlock family. Every return
 * value is compared with the trace.
 *
 * Files are simulated files (files.c), shared mappings shared. What the space
 * cannot hold is skipped and remembered (hugetlb, devices), so that later
 * calls touching it are skipped too. Mappings made before the
 * first traced call (exec's binary, interpreter, stack) show up as a call
 * that succeeded in the trace on a hole of the space: they are inferred then,
 * page by page into the holes, and the call is retried.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define PAGE		MMP_PAGE_SIZE
#define PAGE_ALIGN(x)	(((x) + PAGE - 1) & ~(PAGE - 1))

#define PROT_SEM	0x8
#define PROT_BTI	0x10
#define PROT_MTE	0x20
#define PROT_GROWSDOWN	0x01000000
#define PROT_GROWSUP	0x02000000

static const struct rp_flag prot_names[] = {
	{ "PROT_NONE", 0 }, { "PROT_READ", 1 }, { "PROT_WRITE", 2 }, { "PROT_EXEC", 4 },
	{ "PROT_SEM", PROT_SEM }, { "PROT_BTI", PROT_BTI }, { "PROT_MTE", PROT_MTE },
	{ "PROT_GROWSDOWN", PROT_GROWSDOWN }, { "PROT_GROWSUP", PROT_GROWSUP }, { NULL, 0 }
};

#define MAP_SHARED		0x01
#define MAP_PRIVATE		0x02
#define MAP_TYPE		0x0f
#define MAP_DROPPABLE		0x08
#define MAP_FIXED		0x10
#define MAP_ANONYMOUS		0x20
#define MAP_GROWSDOWN		0x100
#define MAP_LOCKED		0x2000
#define MAP_POPULATE		0x8000
#define MAP_STACK		0x20000
#define MAP_HUGETLB		0x40000
#define MAP_FIXED_NOREPLACE	0x100000

static const struct rp_flag map_names[] = {
	{ "MAP_SHARED", MAP_SHARED }, { "MAP_PRIVATE", MAP_PRIVATE },
	{ "MAP_SHARED_VALIDATE", 0x03 }, { "MAP_DROPPABLE", MAP_DROPPABLE },
	{ "MAP_FIXED", MAP_FIXED }, { "MAP_ANONYMOUS", MAP_ANONYMOUS }, { "MAP_ANON", MAP_ANONYMOUS },
	{ "MAP_32BIT", 0x40 }, { "MAP_GROWSDOWN", MAP_GROWSDOWN }, { "MAP_DENYWRITE", 0x800 },
	{ "MAP_EXECUTABLE", 0x1000 }, { "MAP_LOCKED", MAP_LOCKED }, { "MAP_NORESERVE", 0x4000 },
	{ "MAP_POPULATE", MAP_POPULATE }, { "MAP_NONBLOCK", 0x10000 }, { "MAP_STACK", MAP_STACK },
	{ "MAP_HUGETLB", MAP_HUGETLB }, { "MAP_SYNC", 0x80000 },
	{ "MAP_FIXED_NOREPLACE", MAP_FIXED_NOREPLACE }, { "MAP_UNINITIALIZED", 0x4000000 },
	{ "MAP_HUGE_2MB", 21ULL << 26 }, { "MAP_HUGE_1GB", 30ULL << 26 },
	{ "MAP_HUGE_64KB", 16ULL << 26 }, { "MAP_HUGE_32MB", 25ULL << 26 },
	{ "MAP_HUGE_SHIFT", 26 },	/* a shift: only in "21<<MAP_HUGE_SHIFT" */
	{ NULL, 0 }
};

static const struct rp_flag mremap_names[] = {
	{ "MREMAP_MAYMOVE", MMP_MREMAP_MAYMOVE }, { "MREMAP_FIXED", MMP_MREMAP_FIXED },
	{ "MREMAP_DONTUNMAP", MMP_MREMAP_DONTUNMAP }, { NULL, 0 }
};

/* madvise advice: the value the library takes, or -1 when it does not model it. */
static const struct {
	const char *name;
	int advice;
} madv_names[] = {
	{ "MADV_DONTNEED", MMP_MADV_DONTNEED }, { "MADV_FREE", MMP_MADV_FREE },
	{ "MADV_PAGEOUT", MMP_MADV_PAGEOUT }, { "MADV_HUGEPAGE", MMP_MADV_HUGEPAGE },
	{ "MADV_NOHUGEPAGE", MMP_MADV_NOHUGEPAGE },
	{ "MADV_GUARD_INSTALL", MMP_MADV_GUARD_INSTALL },
	{ "MADV_GUARD_REMOVE", MMP_MADV_GUARD_REMOVE },
	{ "MADV_NORMAL", MMP_MADV_NORMAL }, { "MADV_RANDOM", MMP_MADV_RANDOM },
	{ "MADV_SEQUENTIAL", MMP_MADV_SEQUENTIAL }, { "MADV_DONTFORK", MMP_MADV_DONTFORK },
	{ "MADV_DOFORK", MMP_MADV_DOFORK }, { "MADV_WIPEONFORK", MMP_MADV_WIPEONFORK },
	{ "MADV_KEEPONFORK", MMP_MADV_KEEPONFORK }, { "MADV_MERGEABLE", MMP_MADV_MERGEABLE },
	{ "MADV_UNMERGEABLE", MMP_MADV_UNMERGEABLE }, { "MADV_REMOVE", MMP_MADV_REMOVE },
	{ "MADV_DONTNEED_LOCKED", MMP_MADV_DONTNEED_LOCKED }, { "MADV_COLD", MMP_MADV_COLD },
	{ "MADV_WILLNEED", MMP_MADV_WILLNEED }, { "MADV_COLLAPSE", MMP_MADV_COLLAPSE },
	{ "MADV_POPULATE_READ", MMP_MADV_POPULATE_READ },
	{ "MADV_POPULATE_WRITE", MMP_MADV_POPULATE_WRITE },
};

static const struct rp_flag mlock2_names[] = { { "MLOCK_ONFAULT", MMP_MLOCK_ONFAULT }, { NULL, 0 } };

static const struct rp_flag ms_names[] = {
	{ "MS_ASYNC", MMP_MS_ASYNC }, { "MS_INVALIDATE", MMP_MS_INVALIDATE },
	{ "MS_SYNC", MMP_MS_SYNC }, { NULL, 0 }
};

/* The prctl options the replay looks at; strace 6.1 prints the merge ones as numbers. */
#define PR_SET_THP_DISABLE	41
#define PR_GET_THP_DISABLE	42
#define PR_SET_MEMORY_MERGE	67
static const struct rp_flag prctl_names[] = {
	{ "PR_SET_THP_DISABLE", PR_SET_THP_DISABLE }, { "PR_GET_THP_DISABLE", PR_GET_THP_DISABLE },
	{ "PR_SET_MEMORY_MERGE", PR_SET_MEMORY_MERGE }, { NULL, 0 }
};

static const struct rp_flag mcl_names[] = {
	{ "MCL_CURRENT", MMP_MCL_CURRENT }, { "MCL_FUTURE", MMP_MCL_FUTURE },
	{ "MCL_ONFAULT", MMP_MCL_ONFAULT }, { NULL, 0 }
};

/* ---- ranges the replay skipped ---- */

static void ranges_remove(struct rp_ranges *r, uint64_t start, uint64_t end)
{
	for (int i = 0; i < r->nr; i++) {
		uint64_t s = r->v[i].start, e = r->v[i].end;

		if (e <= start || s >= end)
			continue;
		if (s < start && e > end && r->nr < r->cap) {
			/* Split: keep the tail as a new entry. */
			r->v[r->nr].start = end;
			r->v[r->nr].end = e;
			r->nr++;
			r->v[i].end = start;
		} else if (s < start) {
			r->v[i].end = start;
		} else if (e > end) {
			r->v[i].start = end;
		} else {
			r->v[i--] = r->v[--r->nr];
		}
	}
}

static void ranges_add(struct rp_ranges *r, uint64_t start, uint64_t end)
{
	ranges_remove(r, start, end);
	if (r->nr + 2 > r->cap) {
		int cap = r->cap ? 2 * r->cap : 16;
		void *v = realloc(r->v, (size_t)cap * sizeof(*r->v));

		if (!v)
			return;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->nr].start = start;
	r->v[r->nr].end = end;
	r->nr++;
}

bool rp_ranges_overlap(const struct rp_ranges *r, uint64_t start, uint64_t end)
{
	for (int i = 0; i < r->nr; i++)
		if (r->v[i].start < end && r->v[i].end > start)
			return true;
	return false;
}

void rp_ranges_free(struct rp_ranges *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* ---- helpers ---- */

static bool arg_u64(struct rp_ctx *c, int i, uint64_t *v)
{
	if (i >= c->l->nargs || !rp_parse_u64(c->l->args[i], v)) {
		rp_input_error(c->e, "%s: argument %d is not a number: '%s'", c->l->name, i + 1,
			       i < c->l->nargs ? c->l->args[i] : "");
		return false;
	}
	return true;
}

static bool arg_flags(struct rp_ctx *c, int i, const struct rp_flag *names, uint64_t *v)
{
	const char *unknown = NULL;

	if (i >= c->l->nargs || !rp_parse_flags(c->l->args[i], names, v, &unknown)) {
		rp_input_error(c->e, "%s: argument %d has an unknown flag: '%s'", c->l->name, i + 1,
			       i < c->l->nargs ? c->l->args[i] : "");
		return false;
	}
	return true;
}

static bool failed(struct rp_ctx *c)
{
	return c->l->err[0] != 0;
}

/* The trace's answer against the replay's: 0 or a negative errno. */
static bool same_error(struct rp_ctx *c, int err)
{
	if (!failed(c))
		return !err;
	return err && !strcmp(mmp_strerror(err), c->l->err);
}

static void compare(struct rp_ctx *c, int err)
{
	if (same_error(c, err)) {
		c->e->res->replayed++;
		return;
	}
	rp_mismatch(c->e, "%s: trace %s, replay %s", c->l->name, failed(c) ? c->l->err : "success",
		    err ? mmp_strerror(err) : "success");
}

/* A range the trace used successfully must lie in user space. */
static bool user_range(struct rp_ctx *c, uint64_t start, uint64_t len)
{
	uint64_t top = 0;

	/* The space's own: a trace from a 47-bit host does not fit a 3-level back end. */
	mmp_space_task_size(c->t->proc->space, &top);
	if (start < top && len <= top - start)
		return true;
	rp_input_error(c->e, "%s: [0x%llx, +0x%llx) lies beyond the task size (0x%llx)", c->l->name,
		       (unsigned long long)start, (unsigned long long)len,
		       (unsigned long long)top);
	return false;
}

static bool skipped_range(struct rp_ctx *c, uint64_t start, uint64_t len)
{
	if (!rp_ranges_overlap(&c->t->proc->skipped, start, start + PAGE_ALIGN(len)))
		return false;
	rp_skip(c->e, "%s on a skipped mapping (hugetlb, a device)", c->l->name);
	return true;
}

/* --touch: write the first byte, or a byte of every page, of a new writable range. */
static void touch(struct rp_ctx *c, uint64_t start, uint64_t len)
{
	uint64_t end = start + PAGE_ALIGN(len), n = 0;
	unsigned char b = 1;
	int err = 0;

	if (c->e->set->touch == RP_TOUCH_NONE || !c->t->cpu || !len)
		return;
	if (c->e->set->touch == RP_TOUCH_FIRST)
		end = start + PAGE;
	for (uint64_t a = start; a < end && !err; a += PAGE, n++)
		err = mmp_write(c->t->cpu, a, &b, 1);
	c->e->res->touched_pages += n - (err != 0);
	if (err)
		rp_note(c->e, "touch stopped: %s", mmp_strerror(err));
}

/*
 * A call that succeeded in the trace failed on a hole of the space: fill the
 * holes of [start, start + len) with @prot, one page at a time so that what
 * is mapped stays as it is. Returns the pages added.
 */
static uint64_t infer(struct rp_ctx *c, uint64_t start, uint64_t len, int prot)
{
	uint64_t end = start + PAGE_ALIGN(len), pages = 0, out;
	bool in_run = false;

	if (PAGE_ALIGN(len) > (1ULL << 30)) {
		rp_note(c->e, "%s: hole of more than 1 GiB not inferred", c->l->name);
		return 0;
	}
	for (uint64_t a = start & ~(PAGE - 1); a < end; a += PAGE) {
		int err = mmp_mmap(c->t->proc->space, a, PAGE, prot, MMP_MAP_FIXED_NOREPLACE, &out);

		if (!err) {
			pages++;
			if (!in_run)
				c->e->res->inferred++;
		}
		in_run = !err;
	}
	c->e->res->inferred_bytes += pages * PAGE;
	return pages;
}

/* ---- the calls ---- */

static void do_mmap(struct rp_ctx *c)
{
	struct mmp_space *s = c->t->proc->space;
	uint64_t addr, len, prot, flags, off = 0, type, out = 0, ret = (uint64_t)c->l->ret;
	struct mmp_file *file = NULL;
	const char *why = NULL;
	char path[128];
	bool has_path;
	int mflags, err;

	if (!arg_u64(c, 0, &addr) || !arg_u64(c, 1, &len) || !arg_flags(c, 2, prot_names, &prot) ||
	    !arg_flags(c, 3, map_names, &flags))
		return;
	if (!(flags & MAP_ANONYMOUS) && !arg_u64(c, 5, &off))
		return;
	type = flags & MAP_TYPE;
	if (type == 0x03)
		type = MAP_SHARED;	/* MAP_SHARED_VALIDATE: the flags it validates are known here */
	if (!(flags & MAP_ANONYMOUS) && c->l->nargs > 4) {
		switch (rp_file_kind(c->l->args[4], path, sizeof(path), &has_path)) {
		case RP_FILE_ZERO:
			flags |= MAP_ANONYMOUS;	/* /dev/zero: anonymous memory, shared or not */
			break;
		case RP_FILE_SPECIAL:
			why = "mmap of a device or special file";
			break;
		default:
			if (!has_path)
				rp_note(c->e, "file known by its fd number only (trace without -y)");
		}
	}
	if (flags & MAP_HUGETLB)
		why = "mmap MAP_HUGETLB";
	else if (type != MAP_PRIVATE && type != MAP_SHARED && type != MAP_DROPPABLE)
		why = "mmap of an unknown mapping type";
	if (why) {
		/* Not in the space: skipped, but what it replaced is gone. */
		if (!failed(c) && user_range(c, ret, len)) {
			if (flags & MAP_FIXED)
				mmp_munmap(s, ret, len);
			ranges_add(&c->t->proc->skipped, ret, ret + PAGE_ALIGN(len));
		}
		rp_skip(c->e, "%s", why);
		return;
	}
	if (prot & (PROT_GROWSDOWN | PROT_GROWSUP)) {
		rp_skip(c->e, "mmap with PROT_GROWSDOWN/UP");
		return;
	}
	if (prot & (PROT_SEM | PROT_BTI | PROT_MTE))
		rp_note(c->e, "PROT_SEM/BTI/MTE dropped");
	prot &= MMP_PROT_READ | MMP_PROT_WRITE | MMP_PROT_EXEC;
	mflags = flags & MAP_FIXED ? MMP_MAP_FIXED : MMP_MAP_FIXED_NOREPLACE;
	if (flags & MAP_POPULATE)
		mflags |= MMP_MAP_POPULATE;
	if (flags & MAP_LOCKED)
		mflags |= MMP_MAP_LOCKED;
	if (type == MAP_DROPPABLE)
		mflags |= MMP_MAP_DROPPABLE;
	else
		mflags |= type == MAP_SHARED ? MMP_MAP_SHARED : MMP_MAP_PRIVATE;
	if (!(flags & MAP_ANONYMOUS)) {
		/* The file, grown to hold the mapping (its size is not in the trace). */
		file = rp_file_get(c->e, c->t->proc, c->l->args[4],
				   (off & ~(PAGE - 1)) + PAGE_ALIGN(len), &why);
		if (!file) {
			c->e->res->stood_in++;
			rp_note(c->e, "file mapping stood in by anonymous memory: %s", why);
		}
	}
	if (failed(c)) {
		/* Only a fixed address makes the failure reproducible. */
		if (!(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE))) {
			rp_skip(c->e, "mmap failed in the trace where the kernel chose the address");
			return;
		}
		err = file ? mmp_mmap_file(s, addr, len, (int)prot, mflags, file, off, &out) :
			     mmp_mmap(s, addr, len, (int)prot, mflags, &out);
		compare(c, err);
		return;
	}
	if (!c->l->has_ret) {
		rp_skip(c->e, "mmap without a return value");
		return;
	}
	if (!user_range(c, ret, len))
		return;
	if (flags & MAP_GROWSDOWN)
		rp_note(c->e, "MAP_GROWSDOWN replayed as a plain mapping");
	err = file ? mmp_mmap_file(s, ret, len, (int)prot, mflags, file, off, &out) :
		     mmp_mmap(s, ret, len, (int)prot, mflags, &out);
	if (!err && out != ret) {
		rp_mismatch(c->e, "mmap: trace 0x%llx, replay 0x%llx", (unsigned long long)ret,
			    (unsigned long long)out);
		return;
	}
	compare(c, err);
	if (err)
		return;
	ranges_remove(&c->t->proc->skipped, ret, ret + PAGE_ALIGN(len));
	/* Since Linux 6.7 MAP_STACK means VM_NOHUGEPAGE. */
	if (flags & MAP_STACK)
		mmp_madvise(s, ret, PAGE_ALIGN(len), MMP_MADV_NOHUGEPAGE);
	if (prot & MMP_PROT_WRITE)
		touch(c, ret, len);
}

static void do_munmap(struct rp_ctx *c)
{
	uint64_t addr, len;

	if (!arg_u64(c, 0, &addr) || !arg_u64(c, 1, &len))
		return;
	if (!failed(c) && !user_range(c, addr, len))
		return;
	if (!failed(c))
		ranges_remove(&c->t->proc->skipped, addr, addr + PAGE_ALIGN(len));
	compare(c, mmp_munmap(c->t->proc->space, addr, len));
}

static void do_mprotect(struct rp_ctx *c)
{
	struct mmp_space *s = c->t->proc->space;
	uint64_t addr, len, prot;
	int err;

	if (!arg_u64(c, 0, &addr) || !arg_u64(c, 1, &len) || !arg_flags(c, 2, prot_names, &prot))
		return;
	if (prot & (PROT_GROWSDOWN | PROT_GROWSUP)) {
		rp_skip(c->e, "mprotect with PROT_GROWSDOWN/UP");
		return;
	}
	if (prot & (PROT_SEM | PROT_BTI | PROT_MTE))
		rp_note(c->e, "PROT_SEM/BTI/MTE dropped");
	prot &= MMP_PROT_READ | MMP_PROT_WRITE | MMP_PROT_EXEC;
	if (!failed(c) && !user_range(c, addr, len))
		return;
	if (skipped_range(c, addr, len))
		return;
	err = mmp_mprotect(s, addr, len, (int)prot);
	if (err == -ENOMEM && !failed(c) && infer(c, addr, len, (int)prot))
		err = mmp_mprotect(s, addr, len, (int)prot);
	compare(c, err);
	if (!err && (prot & MMP_PROT_WRITE))
		touch(c, addr, len);
}

/*
 * An advice by name, or by the number an older strace prints for one it does
 * not know: the library's value, or -1 when the library does not take it.
 */
static int madv_advice(struct rp_ctx *c, const char *arg)
{
	uint64_t v;

	for (size_t i = 0; i < sizeof(madv_names) / sizeof(madv_names[0]); i++)
		if (!strcmp(madv_names[i].name, arg))
			return madv_names[i].advice;
	/* A number: one the library refuses even for no bytes it does not model. */
	if (rp_parse_u64(arg, &v) && v <= 0xffff &&
	    mmp_madvise(c->t->proc->space, 0, 0, (int)v) != -EINVAL)
		return (int)v;
	return -1;
}

static void do_madvise(struct rp_ctx *c)
{
	struct mmp_space *s = c->t->proc->space;
	uint64_t addr, len;
	int advice = -1, err;

	if (!arg_u64(c, 0, &addr) || !arg_u64(c, 1, &len))
		return;
	if (c->l->nargs < 3) {
		rp_input_error(c->e, "madvise: no advice");
		return;
	}
	advice = madv_advice(c, c->l->args[2]);
	if (advice < 0) {
		rp_skip(c->e, "madvise %.40s not modelled", c->l->args[2]);
		return;
	}
	if (!failed(c) && !user_range(c, addr, len))
		return;
	if (skipped_range(c, addr, len))
		return;
	err = mmp_madvise(s, addr, len, advice);
	if (err == -ENOMEM && !failed(c) &&
	    infer(c, addr, len, MMP_PROT_READ | MMP_PROT_WRITE))
		err = mmp_madvise(s, addr, len, advice);
	compare(c, err);
}

/*
 * process_madvise(pidfd, [{iov_base=A, iov_len=N}, ...], vlen, advice, flags):
 * replayed on the caller's own space (the pidfd's process is not in the
 * trace; programs advise themselves or a child they share nothing with).
 */
static void do_process_madvise(struct rp_ctx *c)
{
	struct mmp_iovec vec[64];
	uint64_t vlen, flags;
	unsigned int nr = 0;
	const char *p;
	long done;
	int advice;

	if (c->l->nargs < 5 || !arg_u64(c, 2, &vlen) || !arg_u64(c, 4, &flags))
		return;
	advice = madv_advice(c, c->l->args[3]);
	if (advice < 0) {
		rp_skip(c->e, "process_madvise %.40s not modelled", c->l->args[3]);
		return;
	}
	for (p = c->l->args[1]; (p = strstr(p, "iov_base=")) && nr < 64; nr++) {
		char *end;

		vec[nr].base = strtoull(p + 9, &end, 0);
		p = strstr(end, "iov_len=");
		if (!p)
			break;
		vec[nr].len = strtoull(p + 8, &end, 0);
		p = end;
	}
	if (nr != vlen) {
		rp_skip(c->e, "process_madvise with a vector the trace does not show whole");
		return;
	}
	for (unsigned int i = 0; i < nr; i++)
		if (skipped_range(c, vec[i].base, vec[i].len))
			return;
	done = mmp_process_madvise(c->t->proc->space, vec, nr, advice, (unsigned int)flags);
	if (done >= 0 && !failed(c) && c->l->has_ret && done != c->l->ret) {
		rp_mismatch(c->e, "process_madvise: trace %lld bytes, replay %ld",
			    (long long)c->l->ret, done);
		return;
	}
	compare(c, done < 0 ? (int)done : 0);
}

/*
 * mlock, mlock2, munlock and mseal: a range, and flags for mlock2 and mseal.
 * A hole the trace's call did not meet was mapped before the trace began.
 */
static void do_range_call(struct rp_ctx *c)
{
	struct mmp_space *s = c->t->proc->space;
	bool seal = !strcmp(c->l->name, "mseal"), lock2 = !strcmp(c->l->name, "mlock2");
	bool unlock = !strcmp(c->l->name, "munlock"), sync = !strcmp(c->l->name, "msync");
	uint64_t addr, len, flags = 0;
	int err;

	if (!arg_u64(c, 0, &addr) || !arg_u64(c, 1, &len))
		return;
	if (lock2 && !arg_flags(c, 2, mlock2_names, &flags))
		return;
	if (sync && !arg_flags(c, 2, ms_names, &flags))
		return;
	if (seal && !arg_u64(c, 2, &flags))
		return;
	if (!failed(c) && !user_range(c, addr & ~(PAGE - 1), len))
		return;
	if (skipped_range(c, addr & ~(PAGE - 1), len + (addr & (PAGE - 1))))
		return;
	for (int tries = 0; tries < 2; tries++) {
		err = sync ? mmp_msync(s, addr, len, (int)flags) :
		      seal ? mmp_mseal(s, addr, len, flags) :
		      lock2 ? mmp_mlock2(s, addr, len, (unsigned int)flags) :
		      unlock ? mmp_munlock(s, addr, len) : mmp_mlock(s, addr, len);
		if (err != -ENOMEM || failed(c) || tries ||
		    !infer(c, addr & ~(PAGE - 1), len + (addr & (PAGE - 1)),
			   MMP_PROT_READ | MMP_PROT_WRITE))
			break;
	}
	compare(c, err);
}

static void do_mlockall(struct rp_ctx *c)
{
	uint64_t flags;

	if (!arg_flags(c, 0, mcl_names, &flags))
		return;
	compare(c, mmp_mlockall(c->t->proc->space, (int)flags));
}

static void do_munlockall(struct rp_ctx *c)
{
	compare(c, mmp_munlockall(c->t->proc->space));
}

/*
 * prctl: PR_SET_MEMORY_MERGE (mmp_space_set_memory_merge) and
 * PR_SET_THP_DISABLE (mmp_space_set_thp_disable) are applied, and
 * PR_GET_THP_DISABLE's value compared; any other option changes no mapping.
 */
static void do_prctl(struct rp_ctx *c)
{
	struct mmp_space *s = c->t->proc->space;
	const char *unknown = NULL;
	uint64_t option, arg[4] = { 0 };
	unsigned int got;
	int err;

	if (!c->l->nargs || !rp_parse_flags(c->l->args[0], prctl_names, &option, &unknown)) {
		rp_skip(c->e, "no address-space effect (exit, wait4, kill, ...)");
		return;
	}
	for (int i = 1; i < c->l->nargs && i < 5; i++)
		if (!arg_u64(c, i, &arg[i - 1]))
			return;
	switch (option) {
	case PR_SET_MEMORY_MERGE:
		/* prctl's own check: arguments 3 to 5 must be 0. */
		err = arg[1] || arg[2] || arg[3] ? -EINVAL :
		      mmp_space_set_memory_merge(s, arg[0] != 0);
		break;
	case PR_SET_THP_DISABLE:
		err = arg[2] || arg[3] || arg[1] > UINT_MAX ? -EINVAL :
		      mmp_space_set_thp_disable(s, arg[0] != 0, (unsigned int)arg[1]);
		break;
	default:	/* PR_GET_THP_DISABLE: arguments 2 to 5 must be 0 */
		err = arg[0] || arg[1] || arg[2] || arg[3] ? -EINVAL :
		      mmp_space_get_thp_disable(s, &got);
		if (!err && !failed(c) && (int64_t)got != c->l->ret) {
			rp_mismatch(c->e, "%s: trace %" PRId64 ", replay %u", c->l->name, c->l->ret,
				    got);
			return;
		}
		break;
	}
	compare(c, err);
}

static void do_mremap(struct rp_ctx *c)
{
	struct mmp_space *s = c->t->proc->space;
	uint64_t old, old_len, new_len, flags, new_addr = 0, out = 0, ret = (uint64_t)c->l->ret;
	int err;

	if (!arg_u64(c, 0, &old) || !arg_u64(c, 1, &old_len) || !arg_u64(c, 2, &new_len) ||
	    !arg_flags(c, 3, mremap_names, &flags))
		return;
	if ((flags & MMP_MREMAP_FIXED) && !arg_u64(c, 4, &new_addr))
		return;
	if (rp_ranges_overlap(&c->t->proc->skipped, old, old + PAGE_ALIGN(old_len))) {
		if (!failed(c) && user_range(c, ret, new_len)) {
			ranges_remove(&c->t->proc->skipped, old, old + PAGE_ALIGN(old_len));
			ranges_add(&c->t->proc->skipped, ret, ret + PAGE_ALIGN(new_len));
		}
		rp_skip(c->e, "mremap on a skipped mapping (hugetlb, a device)");
		return;
	}
	if (failed(c)) {
		/* Where the kernel found no room to move, the space may well have some. */
		if ((flags & MMP_MREMAP_MAYMOVE) && !(flags & MMP_MREMAP_FIXED) &&
		    !strcmp(c->l->err, "ENOMEM")) {
			rp_skip(c->e, "mremap that may move failed in the trace");
			return;
		}
		compare(c, mmp_mremap(s, old, old_len, new_len, (int)flags, new_addr, &out));
		return;
	}
	if (!user_range(c, old, old_len) || !user_range(c, ret, new_len))
		return;
	if (!(flags & MMP_MREMAP_FIXED) && ret != old) {
		/* The kernel moved it: to the same place. */
		flags |= MMP_MREMAP_FIXED | MMP_MREMAP_MAYMOVE;
		new_addr = ret;
		rp_note(c->e, "mremap move replayed with MREMAP_FIXED at the traced address");
	}
	err = mmp_mremap(s, old, old_len, new_len, (int)flags, new_addr, &out);
	if (err == -EFAULT && infer(c, old, old_len, MMP_PROT_READ | MMP_PROT_WRITE))
		err = mmp_mremap(s, old, old_len, new_len, (int)flags, new_addr, &out);
	if (!err && out != ret) {
		rp_mismatch(c->e, "mremap: trace 0x%llx, replay 0x%llx", (unsigned long long)ret,
			    (unsigned long long)out);
		return;
	}
	compare(c, err);
}

static void do_brk(struct rp_ctx *c)
{
	struct rp_proc *p = c->t->proc;
	uint64_t want, old = 0, out = 0, ret = (uint64_t)c->l->ret;
	int err;

	if (!arg_u64(c, 0, &want))
		return;
	if (!c->l->has_ret || failed(c)) {
		rp_input_error(c->e, "brk without a break returned");
		return;
	}
	if (!user_range(c, ret, 0))
		return;
	if (!p->has_heap) {
		/* A process's first brk tells where exec put the heap. */
		err = mmp_brk_init(p->space, ret & ~(PAGE - 1));
		if (err) {
			rp_input_error(c->e, "brk: 0x%llx cannot start a heap (%s)",
				       (unsigned long long)ret, mmp_strerror(err));
			return;
		}
		p->has_heap = true;
		if (want || (ret & (PAGE - 1)))
			rp_note(c->e, "heap found after it was in use (first brk not brk(NULL))");
		if (ret & (PAGE - 1))
			mmp_brk(p->space, ret, &out);
	}
	mmp_brk(p->space, 0, &old);
	mmp_brk(p->space, want, &out);
	if (out != ret) {
		rp_mismatch(c->e, "brk: trace 0x%llx, replay 0x%llx", (unsigned long long)ret,
			    (unsigned long long)out);
		return;
	}
	c->e->res->replayed++;
	if (PAGE_ALIGN(out) > PAGE_ALIGN(old))
		touch(c, PAGE_ALIGN(old), PAGE_ALIGN(out) - PAGE_ALIGN(old));
}

/*
 * brk(NULL) answers the current break: another one is not this process's, as after an exec
 * the trace does not show.
 */
bool rp_brk_moved(struct rp_ctx *c)
{
	uint64_t want, cur = 0;

	if (strcmp(c->l->name, "brk") || !c->t->proc || !c->t->proc->has_heap ||
	    !c->l->has_ret || failed(c) || c->l->nargs < 1 || !rp_parse_u64(c->l->args[0], &want) ||
	    want)
		return false;
	mmp_brk(c->t->proc->space, 0, &cur);
	return cur != (uint64_t)c->l->ret;
}

/*
 * The process a /proc/PID/@leaf path of fd argument @arg names (strace -y
 * prints /proc/self as the pid it was), or NULL: no path, another file, or a
 * process the trace does not know.
 */
static struct rp_proc *proc_file_of(struct rp_ctx *c, const char *arg, const char *leaf)
{
	const char *lt = strchr(arg, '<');
	struct rp_task *t;
	char tail[32];
	int pid, n = 0;

	if (!lt || sscanf(lt, "</proc/%d/%31[a-z_]>%n", &pid, tail, &n) != 2 || !n ||
	    strcmp(tail, leaf))
		return NULL;
	t = rp_task_find(c->e, pid);
	return t ? t->proc : NULL;
}

/*
 * write(2) to /proc/PID/clear_refs (clear_refs_write): the number written, one
 * of 1 to 5, as mmp_space_clear_refs(); the call returns the count written.
 * Other writes change no mapping. Needs -y in the recording, for the path.
 */
static void do_write(struct rp_ctx *c)
{
	struct rp_proc *p = c->l->nargs == 3 ? proc_file_of(c, c->l->args[0], "clear_refs") : NULL;
	const char *q = c->l->nargs == 3 ? c->l->args[1] : NULL;
	char *end;
	uint64_t count;
	long type;
	int err;

	if (!p) {
		rp_skip(c->e, "no address-space effect (exit, wait4, kill, ...)");
		return;
	}
	if (!arg_u64(c, 2, &count))
		return;
	/* strace prints the buffer quoted; kstrtoint takes a trailing newline. */
	if (*q != '"') {
		rp_input_error(c->e, "write: the buffer is not a string: '%s'", q);
		return;
	}
	type = strtol(q + 1, &end, 10);
	if (!strncmp(end, "\\n", 2))
		end += 2;
	err = end == q + 1 || *end != '"' || type < 0 || type > INT_MAX ? -EINVAL :
	      mmp_space_clear_refs(p->space, (int)type);
	if (!err && !failed(c) && (uint64_t)c->l->ret != count) {
		rp_mismatch(c->e, "write clear_refs: trace %" PRId64 ", replay %" PRIu64, c->l->ret,
			    count);
		return;
	}
	compare(c, err);
}

/*
 * ioctl(2): PAGEMAP_SCAN on /proc/PID/pagemap reads a struct strace 6.1 prints
 * only as a pointer, so the trace lacks what to replay; other ioctls change no
 * mapping.
 */
static void do_ioctl(struct rp_ctx *c)
{
	if (c->l->nargs >= 2 && proc_file_of(c, c->l->args[0], "pagemap"))
		rp_skip(c->e, "PAGEMAP_SCAN: the trace has its argument as a pointer only");
	else
		rp_skip(c->e, "no address-space effect (exit, wait4, kill, ...)");
}

static const struct {
	const char *name;
	void (*fn)(struct rp_ctx *c);
} memory_calls[] = {
	{ "mmap", do_mmap }, { "mmap2", do_mmap }, { "munmap", do_munmap },
	{ "mprotect", do_mprotect }, { "madvise", do_madvise }, { "mremap", do_mremap },
	{ "brk", do_brk }, { "mlock", do_range_call }, { "mlock2", do_range_call },
	{ "munlock", do_range_call }, { "mseal", do_range_call }, { "mlockall", do_mlockall },
	{ "munlockall", do_munlockall }, { "process_madvise", do_process_madvise },
	{ "msync", do_range_call }, { "prctl", do_prctl }, { "write", do_write },
	{ "ioctl", do_ioctl },
};

bool rp_is_memory_call(const char *name)
{
	for (size_t i = 0; i < sizeof(memory_calls) / sizeof(memory_calls[0]); i++)
		if (!strcmp(memory_calls[i].name, name))
			return true;
	return false;
}

bool rp_memory_call(struct rp_ctx *c)
{
	for (size_t i = 0; i < sizeof(memory_calls) / sizeof(memory_calls[0]); i++) {
		if (!strcmp(memory_calls[i].name, c->l->name)) {
			memory_calls[i].fn(c);
			return true;
		}
	}
	return false;
}
