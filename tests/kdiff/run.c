/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runner: applies each op to the host agents and to every variant (a
 * back end with a switch setting, one simulated space per process), and
 * compares return values, bytes read and VMA layouts. The reference is the
 * host kernel, or variant 0 when the host is left out (the fuzzer's
 * cross-back-end mode).
 *
 * Lazy pages (lazy.c) may read as old data or zeros on either side: before a
 * write lands on one, the variants are brought to the reference's choice so
 * that the sides stay comparable.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <mmprim/mmprim.h>

#include "mm.h"
#include "kdiff.h"
#include "run.h"

void diverge(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->res->divergences++)
		return;
	r->res->first_bad = r->idx;
	va_start(ap, fmt);
	vsnprintf(r->res->what, sizeof(r->res->what), fmt, ap);
	va_end(ap);
}

bool failed(struct run *r)
{
	return r->res->divergences != 0;
}

/* ---- comparisons -------------------------------------------------------------- */

static bool all_zero(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Read [addr, addr + len) page by page in variant @v: per-page status (enum kd_page) in @st. */
static void lib_read(struct run *r, struct variant *v, int p, uint64_t addr, uint64_t len,
		     uint8_t *buf, uint8_t *st)
{
	for (uint64_t off = 0, i = 0; off < len; i++) {
		uint64_t n = kd_chunk(addr + off, len - off);
		int err;

		err = mmp_read(v->cpu[p], addr + off, buf + off, n);
		st[i] = !err ? KD_PAGE_OK : err == -EIO ? KD_PAGE_BUS : KD_PAGE_SEGV;
		if (err && err != -EFAULT && err != -EIO)
			diverge(r, "%s: read %#" PRIx64 " failed with %d", v->desc, addr + off, err);
		if (err)
			memset(buf + off, 0, n);
		off += n;
	}
}

/* The reference's view of [addr, addr + len) in proc @p: the host, or variant 0. */
static void ref_read(struct run *r, int p, uint64_t addr, uint64_t len, uint8_t *buf, uint8_t *st)
{
	if (r->opt->host) {
		if (kd_host_read(r->h, p, addr, len, buf, st))
			diverge(r, "host agent %d died", p);
		return;
	}
	lib_read(r, &r->v[0], p, addr, len, buf, st);
}

static const char *page_status(uint8_t st)
{
	return st == KD_PAGE_OK ? "readable" : st == KD_PAGE_BUS ? "SIGBUS" : "SIGSEGV";
}

/*
 * Bytes a shared mapping wrote past the end of a regular file, in its last
 * page, are no file data: writeback zeroes them (block_write_full_folio), so
 * a side that reclaimed the page (the library, KD_RECLAIM) reads zeroes where
 * one that did not (the host) reads what was written. True when the chunk
 * [addr, addr + n) differs only there, and one side has zeroes.
 */
static bool eof_tail_differs(struct run *r, int p, uint64_t addr, const uint8_t *a,
			     const uint8_t *b, uint64_t n)
{
	struct mmp_vma *vma = find_vma(r->v[0].sp[p], addr);
	uint64_t size, off, eof;

	if (!vma || !vma->vm_file || shmem_file(vma->vm_file) || (vma->flags & VM_SHARED) == 0 ||
	    mmp_file_size(vma->vm_file, &size) || !(size & (KD_PAGE - 1)))
		return false;
	off = (linear_page_index(vma, addr) << 12) + (addr & (KD_PAGE - 1));
	eof = size;
	if (off + n <= eof || (off & ~(KD_PAGE - 1)) != (eof & ~(KD_PAGE - 1)))
		return false;	/* not the page holding the end */
	if (off < eof && memcmp(a, b, eof - off))
		return false;	/* file data differs */
	off = off < eof ? eof - off : 0;
	return all_zero(a + off, n - off) || all_zero(b + off, n - off);
}

/* Compare a read of [addr, addr + len) between the reference and every variant. */
static void compare_read(struct run *r, int p, uint64_t addr, uint64_t len)
{
	ref_read(r, p, addr, len, r->rbuf, r->rok);
	for (int k = r->opt->host ? 0 : 1; k < r->nv && !failed(r); k++) {
		struct variant *v = &r->v[k];

		lib_read(r, v, p, addr, len, r->cbuf, r->cok);
		for (uint64_t off = 0, i = 0; off < len; i++) {
			uint64_t n = kd_chunk(addr + off, len - off);

			if (r->rok[i] != r->cok[i]) {
				diverge(r, "%s: page %#" PRIx64 " is %s, the reference's %s", v->desc,
					(uint64_t)((addr + off) & ~(KD_PAGE - 1)), page_status(r->cok[i]),
					page_status(r->rok[i]));
				return;
			}
			if (memcmp(r->rbuf + off, r->cbuf + off, n) &&
			    !(*lazy_at(r, p, addr + off) &&
			      (all_zero(r->rbuf + off, n) || all_zero(r->cbuf + off, n))) &&
			    !eof_tail_differs(r, p, addr + off, r->rbuf + off, r->cbuf + off, n)) {
				uint64_t j = 0;

				while (r->rbuf[off + j] == r->cbuf[off + j])
					j++;
				diverge(r, "%s: byte %#" PRIx64 " reads %#x, the reference %#x%s", v->desc,
					addr + off + j, r->cbuf[off + j], r->rbuf[off + j],
					*lazy_at(r, p, addr + off) ? " (lazyfree page)" : "");
				return;
			}
			off += n;
		}
	}
}

static int lib_vmas(struct mmp_space *s, struct kd_vma *out, int max, int *outside)
{
	int n = 0;

	*outside = 0;
	for (const struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next) {
		if (vma->end <= KD_WIN_BASE || vma->start >= KD_WIN_END) {
			if (vma->start < KD_THREAD_BASE ||
			    vma->end > KD_THREAD_BASE + KD_MAX_THREADS * KD_THREAD_SIZE)
				(*outside)++;
			continue;
		}
		if (n == max)
			return -ENOSPC;
		out[n++] = (struct kd_vma){ vma->start, vma->end,
						    (vma->flags & VM_READ ? MMP_PROT_READ : 0) |
						    (vma->flags & VM_WRITE ? MMP_PROT_WRITE : 0) |
						    (vma->flags & VM_EXEC ? MMP_PROT_EXEC : 0) };
	}
	return n;
}

/* The VMAs of proc @p in the window: same boundaries and protections everywhere. */
static void compare_layout(struct run *r, int p)
{
	static struct kd_vma got[KD_MAX_VMAS];
	int nref, outside;

	if (r->opt->host) {
		nref = kd_host_maps(r->h, p, r->rvmas, KD_MAX_VMAS);
		if (nref < 0) {
			diverge(r, "host agent %d died", p);
			return;
		}
	} else {
		nref = lib_vmas(r->v[0].sp[p], r->rvmas, KD_MAX_VMAS, &outside);
	}
	if (nref >= KD_MAX_VMAS || nref == -ENOSPC) {
		diverge(r, "more than %d VMAs in the window: cannot compare", KD_MAX_VMAS - 1);
		return;
	}
	for (int k = r->opt->host ? 0 : 1; k < r->nv && !failed(r); k++) {
		struct variant *v = &r->v[k];
		int n = lib_vmas(v->sp[p], got, KD_MAX_VMAS, &outside);

		if (outside)
			diverge(r, "%s: %d VMAs outside the window", v->desc, outside);
		if (n < 0)
			diverge(r, "%s: more than %d VMAs in the window", v->desc, KD_MAX_VMAS);
		for (int i = 0; i < n || i < nref; i++) {
			if (i < n && i < nref && got[i].start == r->rvmas[i].start &&
			    got[i].end == r->rvmas[i].end && got[i].prot == r->rvmas[i].prot)
				continue;
			if (i < nref && i < n)
				diverge(r, "%s: VMA %d is [%#" PRIx64 ", %#" PRIx64 ") prot %d, the "
					"reference's [%#" PRIx64 ", %#" PRIx64 ") prot %d", v->desc, i,
					got[i].start, got[i].end, got[i].prot, r->rvmas[i].start,
					r->rvmas[i].end, r->rvmas[i].prot);
			else if (i < n)
				diverge(r, "%s: extra VMA [%#" PRIx64 ", %#" PRIx64 ")", v->desc,
					got[i].start, got[i].end);
			else
				diverge(r, "%s: missing VMA [%#" PRIx64 ", %#" PRIx64 ")", v->desc,
					r->rvmas[i].start, r->rvmas[i].end);
			return;
		}
	}
}

/* ---- system calls ------------------------------------------------------------- */

/* The op in variant @v's space of its proc; the result as the syscall gives it. */
static int64_t lib_syscall(struct variant *v, const struct kd_op *op)
{
	struct mmp_space *s = v->sp[op->proc];
	uint64_t out = 0;
	int err;

	switch (op->kind) {
	case KD_MMAP:
		err = mmp_mmap(s, op->addr, op->len, op->prot, op->flags, &out);
		return err ? err : (int64_t)out;
	case KD_MMAP_FILE:
		err = mmp_mmap_file(s, op->addr, op->len, op->prot, op->flags, v->files[op->proc2],
				    op->addr2, &out);
		return err ? err : (int64_t)out;
	case KD_FTRUNCATE:
		return mmp_file_truncate(v->files[op->proc2], op->len);
	case KD_FWRITE: {
		static uint8_t buf[KD_MAX_IO];

		for (uint64_t i = 0; i < op->len; i++)
			buf[i] = kd_data_byte(op->seed, i);
		err = mmp_file_write(v->files[op->proc2], op->addr, buf, op->len);
		return err ? err : (int64_t)op->len;
	}
	case KD_MUNMAP:
		return mmp_munmap(s, op->addr, op->len);
	case KD_MPROTECT:
		return mmp_mprotect(s, op->addr, op->len, op->prot);
	case KD_MREMAP:
		err = mmp_mremap(s, op->addr, op->len, op->len2, op->flags, op->addr2, &out);
		return err ? err : (int64_t)out;
	case KD_MADVISE:
		return mmp_madvise(s, op->addr, op->len, op->flags);
	case KD_MSYNC:
		return mmp_msync(s, op->addr, op->len, op->flags);
	case KD_MLOCK:
		if (op->flags == 2)
			return mmp_munlock(s, op->addr, op->len);
		return mmp_mlock2(s, op->addr, op->len, (unsigned int)op->flags);
	case KD_MSEAL:
		return mmp_mseal(s, op->addr, op->len, (unsigned long)op->flags);
	case KD_THP_DISABLE:
		return mmp_space_set_thp_disable(s, op->flags & 1, op->flags & ~1u);
	}
	return -ENOSYS;
}

/*
 * A mapping the kernel placed outside the window (no hint, or a busy one):
 * compare its first @cmp bytes (moved from @src, whose lazy pages may read as
 * zeros), then unmap it on every side.
 */
static void drop_elsewhere(struct run *r, int p, int64_t ref, const int64_t *got, uint64_t len,
			   uint64_t cmp, uint64_t src)
{
	struct mmp_vma_info vi;

	for (uint64_t off = 0; off < cmp && !failed(r); off += KD_MAX_IO) {
		uint64_t n = cmp - off < KD_MAX_IO ? cmp - off : KD_MAX_IO;

		ref_read(r, p, ref + off, n, r->rbuf, r->rok);
		for (int k = 0; k < r->nv && !failed(r); k++) {
			lib_read(r, &r->v[k], p, got[k] + off, n, r->cbuf, r->cok);
			for (uint64_t i = 0; i < n / KD_PAGE; i++) {
				const uint8_t *a = r->rbuf + i * KD_PAGE, *b = r->cbuf + i * KD_PAGE;

				/* A lazy page of the source may have become zeros on either side. */
				if (r->rok[i] == r->cok[i] && (!memcmp(a, b, KD_PAGE) ||
				    (*lazy_at(r, p, src + off + i * KD_PAGE) &&
				     (all_zero(a, KD_PAGE) || all_zero(b, KD_PAGE)))))
					continue;
				diverge(r, "%s: the moved range differs at +%#" PRIx64, r->v[k].desc,
					(uint64_t)(off + i * KD_PAGE));
				break;
			}
		}
	}
	/* A hugetlb VMA is unmapped in whole huge pages (hugetlb_vm_op_split refuses less). */
	if (r->nv && !mmp_space_vma_info(r->v[0].sp[p], got[0], &vi) && vi.page_size > KD_PAGE)
		len = (len + vi.page_size - 1) & ~(vi.page_size - 1);
	if (r->opt->host) {
		struct kd_op un = { .kind = KD_MUNMAP, .proc = p, .addr = ref, .len = len };

		kd_host_syscall(r->h, &un);
	}
	for (int k = 0; k < r->nv; k++)
		mmp_munmap(r->v[k].sp[p], got[k], len);
}

/*
 * MADV_COLLAPSE of a PMD whose PTE table is there but empty makes a THP of
 * zeroes, where no table at all is -EINVAL. Whether MADV_DONTNEED left the
 * table depends on PT_RECLAIM, which is on for the host (x86_64, 6.18) but
 * follows each variant's back end and switch: such a range is no
 * like-for-like comparison.
 */
static bool has_empty_table(struct mmp_space *s, uint64_t start, uint64_t end)
{
	for (uint64_t a = (start + PMD_SIZE - 1) & PMD_MASK; a + PMD_SIZE <= end && a >= start;
	     a += PMD_SIZE) {
		mmp_pte_t *pmdp = pmd_offset(s, a), *ptes;
		bool empty = true;

		ptes = pmdp ? pte_table(s, READ_ONCE(*pmdp)) : NULL;
		for (unsigned int i = 0; ptes && empty && i < PTRS_PER_TABLE; i++)
			empty = !READ_ONCE(ptes[i]);
		if (ptes && empty)
			return true;
	}
	return false;
}

/*
 * Variants whose MADV_COLLAPSE result is not the host's to compare with:
 * pins the host does not hold (a pinned page makes the collapse -EAGAIN),
 * an empty PTE table (above), lazy pages either side may have reclaimed.
 * Shared memory, which the library does not collapse (-ENOTSUP), the host is
 * not asked to collapse (collapse_host_len).
 */
static bool collapse_incomparable(struct run *r, struct variant *v, const struct kd_op *op)
{
	uint64_t end = op->addr + page_align(op->len);

	if (op->kind != KD_MADVISE || op->flags != MMP_MADV_COLLAPSE || end < op->addr)
		return false;
	return v->npins[op->proc] || has_empty_table(v->sp[op->proc], op->addr, end) ||
	       has_lazy_page(r, op->proc, op->addr, end);
}

/*
 * MADV_COLLAPSE of shared memory is not modelled: the library stops at the
 * first shmem VMA with -ENOTSUP. The host would collapse its page cache into
 * a THP, past EOF too (a read there then sees no SIGBUS), so it is asked only
 * for the VMAs before that one, and what is resident stays comparable. Where
 * variant 0 stopped at shmem, the length the host is given; else the op's.
 */
static uint64_t collapse_host_len(struct run *r, const struct kd_op *op, int64_t got0)
{
	struct mmp_space *s = r->v[0].sp[op->proc];
	uint64_t end = op->addr + page_align(op->len);

	if (op->kind != KD_MADVISE || op->flags != MMP_MADV_COLLAPSE || got0 != -ENOTSUP)
		return op->len;
	for (struct mmp_vma *vma = vma_find_next(s, op->addr); vma && vma->start < end;
	     vma = vma_find_next(s, vma->end)) {
		if (vma_is_anonymous(vma))
			continue;
		if (vma->vm_file && shmem_file(vma->vm_file))
			return vma->start > op->addr ? vma->start - op->addr : 0;
		break;
	}
	return op->len;
}

static void do_syscall_op(struct run *r, const struct kd_op *op)
{
	int64_t ref, got[KD_MAX_VARIANTS];
	bool skip[KD_MAX_VARIANTS];
	int p = op->proc;

	/* Which pages a move may carry: all of a single-VMA move, the mapped ones of a multi-VMA one. */
	r->multi_move = op->kind == KD_MREMAP && (op->flags & MMP_MREMAP_FIXED) &&
			page_align(op->len) == page_align(op->len2) && op->len2 &&
			page_align(op->len) <= KD_WIN_SIZE;
	for (uint64_t i = 0; r->multi_move && i < page_align(op->len) / KD_PAGE; i++) {
		struct mmp_addr_info q;
		uint64_t a = op->addr + i * KD_PAGE;

		r->src_mapped[i] = find_vma(r->v[0].sp[p], a) != NULL;
		r->src_pfn[i] = in_window(a) && !mmp_space_query(lazy_ref(r)->sp[p], a, &q) ?
				q.pfn : MMP_NO_PFN;
	}

	for (int k = 0; k < r->nv; k++) {
		skip[k] = collapse_incomparable(r, &r->v[k], op);
		/* Collapsing a table the host's PT_RECLAIM freed: what is resident differs for good. */
		if (skip[k])
			r->v[k].host_like = false;
		got[k] = lib_syscall(&r->v[k], op);
	}
	ref = got[0];
	if (r->opt->host) {
		struct kd_op host_op = *op;

		host_op.len = collapse_host_len(r, op, got[0]);
		if (host_op.len == op->len) {
			ref = kd_host_syscall(r->h, op);
		} else if (host_op.len) {
			int64_t before = kd_host_syscall(r->h, &host_op);

			/* A hole before it is reported only if no VMA fails: shmem's answer is the call's. */
			ref = before == 0 || before == -ENOMEM ? got[0] : before;
		}
	}
	if (ref == KD_AGENT_DIED && r->opt->host) {
		diverge(r, "host agent %d died", p);
		return;
	}
	for (int k = 0; k < r->nv; k++) {
		bool placed = op->kind == KD_MMAP || op->kind == KD_MMAP_FILE || op->kind == KD_MREMAP;
		bool same = got[k] == ref || (placed && ref >= 0 && got[k] >= 0 &&
					      !in_window(ref) && !in_window(got[k]));

		/*
		 * An mprotect running out of the window meets the host process's
		 * own mappings there (libraries, stack), which the spaces lack:
		 * both refuse it, with the errno of what each found (a
		 * PROT_GROWSDOWN range's first VMA not a stack: EINVAL; none: ENOMEM).
		 */
		if (!same && op->kind == KD_MPROTECT && ref < 0 && got[k] < 0 &&
		    (op->addr + op->len < op->addr || !in_window(op->addr + op->len - 1)))
			same = true;
		/*
		 * So does an msync: the agent's own mappings there are locked
		 * (MS_INVALIDATE: EBUSY), where the spaces have none (ENOMEM).
		 */
		if (!same && op->kind == KD_MSYNC && ref < 0 && got[k] < 0 &&
		    (op->addr + op->len < op->addr || !in_window(op->addr + op->len - 1)))
			same = true;
		if (!same && skip[k])
			same = true;

		if (!same) {
			diverge(r, "%s: %s returned %" PRId64 " (%s), the reference %" PRId64 " (%s)",
				r->v[k].desc, kd_kind_name(op->kind), got[k],
				got[k] < 0 ? mmp_strerror(got[k]) : "ok", ref,
				ref < 0 ? mmp_strerror(ref) : "ok");
			return;
		}
	}
	if (ref >= 0 && (op->kind == KD_MMAP || op->kind == KD_MMAP_FILE || op->kind == KD_MREMAP) &&
	    !in_window(ref)) {
		uint64_t len = page_align(op->kind == KD_MREMAP ? op->len2 : op->len);
		uint64_t cmp = op->kind == KD_MREMAP ? page_align(op->len) : 0;

		drop_elsewhere(r, p, ref, got, len, cmp < len ? cmp : len, op->addr);
		/* Each side placed it where it liked: fault-around windows fall differently. */
		r->placed_outside = true;
		/*
		 * A DONTUNMAP move keeps its source: whether the source's PTE
		 * tables went with the pages (move_normal_pmd) depends on the
		 * destination's PMD alignment, which the host and the library
		 * chose each for itself.
		 */
		if (op->kind == KD_MREMAP && (op->flags & MMP_MREMAP_DONTUNMAP) &&
		    ((uint64_t)(ref ^ got[0]) & (KD_PMD_SIZE - 1)))
			r->pte_skew[p] = true;
	}
	track_lazy(r, op, ref);
	if (op->kind == KD_MREMAP && ref >= 0) {
		/* Grown or moved, or left behind by DONTUNMAP: droppable stays droppable. */
		mark_droppable(r, p, ref, page_align(op->len2));
		if (op->flags & MMP_MREMAP_DONTUNMAP)
			mark_droppable(r, p, op->addr, page_align(op->len));
	}
	if (!failed(r))
		compare_layout(r, p);
}

/* ---- accesses ----------------------------------------------------------------- */

/*
 * Before a write lands on a lazy page, give every variant the reference's
 * contents of it: old data or zeros were both right, but a write makes the
 * choice visible for good.
 */
static void settle_lazy(struct run *r, int p, uint64_t addr, uint64_t len)
{
	for (uint64_t a = addr & ~(KD_PAGE - 1); a < addr + len; a += KD_PAGE) {
		uint8_t rok, cok;

		/*
		 * Only where a mapping is (layouts agree: variant 0 tells): a read
		 * just below a stack would grow it on the host alone.
		 */
		if (!*lazy_at(r, p, a) || !find_vma(r->v[0].sp[p], a))
			continue;
		ref_read(r, p, a, KD_PAGE, r->rbuf, &rok);
		if (rok != KD_PAGE_OK)
			continue;
		for (int k = 0; k < r->nv; k++) {
			struct mmp_vma *vma = find_vma(r->v[k].sp[p], a);

			/* Only where the write can land: a refused one would count a SIGSEGV. */
			if (!vma || !(vma->flags & VM_WRITE))
				continue;
			lib_read(r, &r->v[k], p, a, KD_PAGE, r->cbuf, &cok);
			if (cok == KD_PAGE_OK && memcmp(r->rbuf, r->cbuf, KD_PAGE))
				mmp_write(r->v[k].cpu[p], a, r->rbuf, KD_PAGE);
		}
	}
}

static void do_write(struct run *r, const struct kd_op *op)
{
	int p = op->proc, ref = 0;
	uint64_t written = 0;

	for (uint64_t i = 0; i < op->len; i++)
		r->cbuf[i] = kd_data_byte(op->seed, i);
	settle_lazy(r, p, op->addr, op->len);
	if (r->opt->host) {
		ref = kd_host_write(r->h, p, op->addr, op->len, r->cbuf);
		if (ref == KD_AGENT_DIED) {
			diverge(r, "host agent %d died", p);
			return;
		}
	}
	for (int k = 0; k < r->nv; k++) {
		int err = 0;
		uint64_t off = 0;

		while (off < op->len && !err) {
			uint64_t n = kd_chunk(op->addr + off, op->len - off);

			err = mmp_write(r->v[k].cpu[p], op->addr + off, r->cbuf + off, n);
			if (!err)
				off += n;
		}
		if (!k) {
			written = off;
			if (!r->opt->host)
				ref = err;
		}
		if (err != ref) {
			diverge(r, "%s: write returned %d, the reference %d", r->v[k].desc, err, ref);
			return;
		}
	}
	lazy_written(r, p, op->addr, written);
}

/* ---- processes ---------------------------------------------------------------- */

static void do_fork(struct run *r, const struct kd_op *op)
{
	int p = op->proc, c = op->proc2;

	if (r->live[c])
		return;
	/* The child gets its own copy of a pinned page, where the host's shares it. */
	if (r->v[0].npins[p])
		r->pin_skew = true;
	if (r->opt->host && kd_host_fork(r->h, p, c)) {
		diverge(r, "host fork failed");
		return;
	}
	r->live[c] = true;	/* from here on the slot's agent exists, and is ended at the end */
	for (int k = 0; k < r->nv; k++) {
		struct variant *v = &r->v[k];
		int err = mmp_fork(v->sp[p], &v->sp[c]);

		if (!err)
			err = mmp_cpu_attach(v->sp[c], &v->cpu[c]);
		if (err) {
			diverge(r, "%s: fork failed with %d", v->desc, err);
			return;
		}
	}
	memcpy(r->lazy[c], r->lazy[p], sizeof(r->lazy[c]));
	r->pte_skew[c] = r->pte_skew[p];
	/* MADV_DONTFORK left a hole in the child, MADV_WIPEONFORK fresh memory. */
	for (struct mmp_vma *vma = r->v[0].sp[p]->vmas.first; vma; vma = vma->vm_next)
		if (vma->flags & VM_DONTCOPY)
			lazy_set(r, c, vma->start, vma->end - vma->start, 0);
		else if ((vma->flags & (VM_WIPEONFORK | VM_DROPPABLE)) == VM_WIPEONFORK)
			lazy_set(r, c, vma->start, vma->end - vma->start, DATA);
	compare_layout(r, c);
}

static void do_exit(struct run *r, int p)
{
	if (r->opt->host && kd_host_exit(r->h, p))
		diverge(r, "host agent %d did not exit", p);
	for (int k = 0; k < r->nv; k++)
		proc_destroy(&r->v[k], p);
	r->live[p] = false;
}

/*
 * Would a pin of @npages from @addr reach a hole just below a stack? The host
 * stands in for a pin by touching the pages, and a touch there grows the
 * stack, which GUP never does (since 6.5): no like-for-like comparison.
 */
static bool pin_meets_stack_gap(struct mmp_space *s, uint64_t addr, uint64_t npages)
{
	for (uint64_t i = 0; i < npages; i++) {
		struct mmp_vma *next = vma_find_next(s, addr + i * KD_PAGE);

		if (next && next->start > addr + i * KD_PAGE && (next->flags & VM_GROWSDOWN))
			return true;
	}
	return false;
}

static void do_pin(struct run *r, const struct kd_op *op)
{
	int p = op->proc, ref = 0;

	if (r->opt->host && pin_meets_stack_gap(r->v[0].sp[p], op->addr, op->len))
		return;
	/* Pins of file and shared memory are not modelled (mmp_gup: -ENOTSUP). */
	for (uint64_t i = 0; i < op->len; i++) {
		struct mmp_vma *vma = find_vma(r->v[0].sp[p], op->addr + i * KD_PAGE);

		if (vma && !vma_is_anonymous(vma))
			return;
	}
	/* A read pin unshares an anonymous page another process shares (gup_must_unshare). */
	for (uint64_t i = 0; !op->flags && i < op->len; i++) {
		struct mmp_addr_info q;

		if (!mmp_space_query(r->v[0].sp[p], op->addr + i * KD_PAGE, &q) &&
		    (q.folio_flags & MMP_FOLIO_ANON) && !(q.folio_flags & MMP_FOLIO_ANON_EXCLUSIVE))
			r->pin_skew = true;
	}
	if (r->opt->host)
		ref = kd_host_touch(r->h, p, op->addr, op->len, op->flags);

	for (int k = 0; k < r->nv; k++) {
		struct variant *v = &r->v[k];
		struct pin pin = { .nr = 0 };
		int got;

		if (v->npins[p] == MAX_PINS)
			unpin_all(v, p);
		got = mmp_gup(v->sp[p], op->addr, op->len, op->flags, pin.pfns);
		if (got > 0) {
			pin.nr = got;
			v->pins[p][v->npins[p]++] = pin;
		}
		if (!k && !r->opt->host)
			ref = got;
		else if (got != ref)
			diverge(r, "%s: pin returned %d, the reference %d", v->desc, got, ref);
	}
}

static void do_unpin(struct run *r, int p)
{
	for (int k = 0; k < r->nv; k++) {
		struct variant *v = &r->v[k];

		if (!v->npins[p])
			continue;
		mmp_unpin(v->sp[p], v->pins[p][0].pfns, v->pins[p][0].nr);
		memmove(&v->pins[p][0], &v->pins[p][1], --v->npins[p] * sizeof(struct pin));
	}
}

/*
 * Read every readable page of the window in every process. Layouts already
 * agree (compared after every op), so the VMAs of variant 0 say where to look;
 * what is not readable there was compared as a protection.
 */
static void do_check(struct run *r)
{
	static struct kd_vma vmas[KD_MAX_VMAS];

	for (int p = 0; p < KD_MAX_PROCS; p++) {
		int outside, n;

		if (!r->live[p])
			continue;
		n = lib_vmas(r->v[0].sp[p], vmas, KD_MAX_VMAS, &outside);
		for (int i = 0; i < n && !failed(r); i++) {
			if (!(vmas[i].prot & MMP_PROT_READ))
				continue;
			for (uint64_t a = vmas[i].start; a < vmas[i].end && !failed(r); a += KD_MAX_IO)
				compare_read(r, p, a, MIN(KD_MAX_IO, vmas[i].end - a));
		}
	}
}

/* ---- threads ------------------------------------------------------------------ */

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;
	struct mmp_cpu *cpu[KD_MAX_VARIANTS] = { 0 };
	uint64_t base = KD_THREAD_BASE + w->idx * KD_THREAD_SIZE;
	static __thread uint8_t page[KD_PAGE];

	for (int k = 0; k < r->nv; k++)
		if (mmp_cpu_attach(r->v[k].sp[0], &cpu[k]))
			snprintf(r->thread_err, sizeof(r->thread_err), "thread %d: attach", w->idx);
	for (uint64_t round = 1; !__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST); round++) {
		uint64_t j = (round * 7919) % THREAD_PAGES;
		uint8_t val = (uint8_t)(round * 31 + w->idx) | 1;

		if (__atomic_load_n(&r->pause_req, __ATOMIC_SEQ_CST)) {
			__atomic_fetch_add(&r->paused, 1, __ATOMIC_SEQ_CST);
			while (__atomic_load_n(&r->pause_req, __ATOMIC_SEQ_CST) &&
			       !__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST))
				sched_yield();
			__atomic_fetch_sub(&r->paused, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		for (int k = 0; k < r->nv && cpu[k] && !r->thread_err[0]; k++) {
			int err = mmp_memset(cpu[k], base + j * KD_PAGE, val, KD_PAGE);

			if (!err)
				err = mmp_read(cpu[k], base + j * KD_PAGE, page, KD_PAGE);
			if (err || page[0] != val || page[KD_PAGE - 1] != val)
				snprintf(r->thread_err, sizeof(r->thread_err),
					 "%s: thread %d page %" PRIu64 ": err %d, read %#x, wrote %#x",
					 r->v[k].desc, w->idx, j, err, page[0], val);
			__atomic_store_n(&w->expect[k][j], val, __ATOMIC_SEQ_CST);
		}
		if (r->thread_err[0])
			break;
	}
	for (int k = 0; k < r->nv; k++)
		if (cpu[k])
			mmp_cpu_detach(cpu[k]);
	return NULL;
}

static int start_threads(struct run *r)
{
	for (int i = 0; i < r->opt->threads && i < KD_MAX_THREADS; i++) {
		uint64_t base = KD_THREAD_BASE + i * KD_THREAD_SIZE, out;

		for (int k = 0; k < r->nv; k++)
			if (mmp_mmap(r->v[k].sp[0], base, KD_THREAD_SIZE, MMP_PROT_READ | MMP_PROT_WRITE,
				     MMP_MAP_FIXED, &out))
				return -ENOMEM;
		r->workers[i] = (struct worker){ .r = r, .idx = i };
		if (pthread_create(&r->workers[i].th, NULL, worker_fn, &r->workers[i])) {
			r->workers[i].r = NULL;	/* not started: nothing to join */
			return -EAGAIN;
		}
	}
	return 0;
}

static void stop_threads(struct run *r)
{
	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < r->opt->threads && i < KD_MAX_THREADS; i++)
		if (r->workers[i].r)
			pthread_join(r->workers[i].th, NULL);
}

/* Quiescent point: every thread waits while its regions are checked through proc 0's CPU. */
static void check_threads(struct run *r)
{
	int n = r->opt->threads < KD_MAX_THREADS ? r->opt->threads : KD_MAX_THREADS;
	uint8_t page[KD_PAGE];

	if (!n)
		return;
	__atomic_store_n(&r->pause_req, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&r->paused, __ATOMIC_SEQ_CST) < n && !r->thread_err[0])
		sched_yield();
	for (int i = 0; i < n && !failed(r); i++)
		for (int k = 0; k < r->nv && !failed(r); k++)
			for (uint64_t j = 0; j < THREAD_PAGES; j++) {
				uint8_t want = __atomic_load_n(&r->workers[i].expect[k][j],
							       __ATOMIC_SEQ_CST);

				if (mmp_read(r->v[k].cpu[0], KD_THREAD_BASE + i * KD_THREAD_SIZE +
					     j * KD_PAGE, page, KD_PAGE) ||
				    page[0] != want || page[KD_PAGE - 1] != want) {
					diverge(r, "%s: thread %d's page %" PRIu64 " lost its data",
						r->v[k].desc, i, j);
					break;
				}
			}
	if (r->thread_err[0])
		diverge(r, "%s", r->thread_err);
}

static void resume_threads(struct run *r)
{
	__atomic_store_n(&r->pause_req, 0, __ATOMIC_SEQ_CST);
}

/*
 * Counters that depend on what the process did, not on the back end or its
 * switches (counters.h says which), must agree across the variants.
 */
static void compare_counters(struct run *r)
{
	static const enum mmp_counter same[] = { MMP_C_FAULT_SIGSEGV };
	/* Without the host, variant 0 also makes the reference's reads: compare the others. */
	int first = r->opt->host ? 0 : 1;

	for (int p = 0; p < KD_MAX_PROCS && first < r->nv; p++) {
		struct mmp_counters ref, got;

		if (!r->live[p] || mmp_space_counters(r->v[first].sp[p], &ref))
			continue;
		for (int k = first + 1; k < r->nv && !failed(r); k++) {
			mmp_space_counters(r->v[k].sp[p], &got);
			for (unsigned int i = 0; i < sizeof(same) / sizeof(same[0]); i++)
				if (got.v[same[i]] != ref.v[same[i]])
					diverge(r, "%s: counter %s is %llu in proc %d, %s's %llu",
						r->v[k].desc, mmp_counter_name(same[i]),
						(unsigned long long)got.v[same[i]], p, r->v[first].desc,
						(unsigned long long)ref.v[same[i]]);
		}
	}
}

/* pread of a file: the count and every byte, the host's against each variant's. */
static void do_fread(struct run *r, const struct kd_op *op)
{
	int64_t ref = -1;

	if (r->opt->host) {
		ref = kd_host_fread(r->h, op->proc, op->proc2, op->addr, op->len, r->rbuf);
		if (ref == KD_AGENT_DIED) {
			diverge(r, "host agent %d died", op->proc);
			return;
		}
	}
	for (int k = 0; k < r->nv && !failed(r); k++) {
		size_t n = 0;
		int err = mmp_file_read(r->v[k].files[op->proc2], op->addr, r->cbuf, op->len, &n);
		int64_t got = err ? err : (int64_t)n;

		if (!k && !r->opt->host) {
			ref = got;
			memcpy(r->rbuf, r->cbuf, n);
			continue;
		}
		if (got != ref)
			diverge(r, "%s: pread returned %" PRId64 ", the reference %" PRId64, r->v[k].desc,
				got, ref);
		else if (got > 0 && memcmp(r->rbuf, r->cbuf, got))
			diverge(r, "%s: pread of file %u at %#" PRIx64 " read other bytes", r->v[k].desc,
				op->proc2, op->addr);
	}
}

/* Every run starts with empty files on both sides. */
static int host_files_reset(void)
{
	for (int i = 0; i < KD_MAX_FILES; i++) {
		char path[256];
		int fd;

		kd_file_path(i, path, sizeof(path));
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		close(fd);
	}
	return 0;
}

static void verify_all(struct run *r)
{
	check_threads(r);
	compare_counters(r);
	for (int k = 0; k < r->nv && !failed(r); k++)
		for (int p = 0; p < KD_MAX_PROCS; p++)
			if (r->v[k].sp[p]) {
				if (mmp_space_verify(r->v[k].sp[p]))
					diverge(r, "%s: mmp_space_verify failed", r->v[k].desc);
				break;	/* one call checks every space of the phys */
			}
	resume_threads(r);
}

/* Does [addr, addr + len) meet a hugetlb VMA of process @p? */
static bool meets_hugetlb(struct run *r, int p, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + page_align(len);

	for (struct mmp_vma *vma = vma_find_next(r->v[0].sp[p], addr); vma && vma->start < end;
	     vma = vma->vm_next)
		if (vma->flags & VM_HUGETLB)
			return true;
	return false;
}

/*
 * May the host lock memory without a limit, as the library does? Root may
 * (CAP_IPC_LOCK); others only under an unlimited RLIMIT_MEMLOCK.
 */
static bool host_may_lock(void)
{
	struct rlimit rl;

	return !geteuid() || (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur == RLIM_INFINITY);
}

static void apply(struct run *r, const struct kd_op *op)
{
	if (!r->live[op->proc])
		return;		/* a minimized log may have lost the fork */
	if (op->kind == KD_MMAP && (op->flags & MMP_MAP_HUGETLB) && !r->opt->hugetlb)
		return;		/* no pool on the host: left out on both sides */
	/* Punching a hole in hugetlbfs is not modelled (-EOPNOTSUPP): left out on both sides. */
	if (op->kind == KD_MADVISE && op->flags == MMP_MADV_REMOVE && op->addr + op->len >= op->addr &&
	    meets_hugetlb(r, op->proc, op->addr, op->len))
		return;
	if (op->kind == KD_MLOCK && r->opt->host && !host_may_lock())
		return;		/* RLIMIT_MEMLOCK, which the library does not model */
	switch (op->kind) {
	case KD_MMAP: case KD_MUNMAP: case KD_MPROTECT: case KD_MREMAP: case KD_MADVISE:
	case KD_MMAP_FILE: case KD_FTRUNCATE: case KD_FWRITE: case KD_MSYNC: case KD_MLOCK:
	case KD_MSEAL: case KD_THP_DISABLE:
		if (op->proc2 < KD_MAX_FILES && op->len <= (op->kind == KD_FWRITE ? KD_MAX_IO : ~0ULL))
			do_syscall_op(r, op);
		break;
	case KD_FREAD:
		if (op->proc2 < KD_MAX_FILES && op->len <= KD_MAX_IO)
			do_fread(r, op);
		break;
	case KD_READ:
		compare_read(r, op->proc, op->addr, op->len > KD_MAX_IO ? KD_MAX_IO : op->len);
		break;
	case KD_WRITE:
		if (op->len <= KD_MAX_IO)
			do_write(r, op);
		break;
	case KD_FORK:
		do_fork(r, op);
		break;
	case KD_EXIT:
		if (op->proc)	/* proc 0 stays, so the run always has a space */
			do_exit(r, op->proc);
		break;
	case KD_RECLAIM:
		for (int k = 0; k < r->nv; k++)
			mmp_reclaim(r->v[k].sp[op->proc]);
		break;
	case KD_SETOPT:
		for (int k = 0; k < r->nv; k++) {
			struct variant *v = &r->v[k];

			if (v->orig != op->variant % r->orig_nv)
				continue;
			v->host_like = false;
			for (int p = 0; p < KD_MAX_PROCS; p++)
				if (v->sp[p])
					apply_setting(r, v->sp[p], op->flags, op->len);
		}
		break;
	case KD_PIN:
		if (op->len <= 16) {
			do_pin(r, op);
			compare_layout(r, op->proc);
		}
		break;
	case KD_UNPIN:
		do_unpin(r, op->proc);
		break;
	case KD_CHECK:
		do_check(r);
		break;
	}
}

int kd_run(const struct kd_options *opt, struct kd_host *h, const struct kd_op *ops, uint64_t n,
	   struct kd_result *res)
{
	struct run *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	memset(res, 0, sizeof(*res));
	r->opt = opt;
	r->h = h;
	r->res = res;
	r->live[0] = true;
	r->thp_pmd_mode = opt->thp_pmd_mode >= 0 ? opt->thp_pmd_mode : (int)(opt->seed % 3);
	err = make_variants(r);
	if (!err && opt->host)
		err = host_files_reset();
	if (!err && opt->host)
		err = kd_host_spawn(h, 0);
	if (err) {
		destroy_variants(r);
		free(r);
		return err;
	}
	if (start_threads(r))
		diverge(r, "could not start %d threads", opt->threads);
	if (opt->verbose)
		for (int k = 0; k < r->nv; k++)
			fprintf(stderr, "# variant %d: %s\n", k, r->v[k].desc);
	for (r->idx = 0; r->idx < n && !failed(r); r->idx++) {
		r->op = &ops[r->idx];
		state_before(r, r->op);
		apply(r, r->op);
		if (!failed(r) && opt->compare_state && r->live[r->op->proc] &&
		    r->op->kind != KD_CHECK && r->op->kind != KD_SETOPT)
			compare_state(r, r->op);
		res->ops++;
		if (!failed(r) && opt->verify_every && (r->idx + 1) % opt->verify_every == 0)
			verify_all(r);
	}
	if (!failed(r)) {
		r->idx = n;
		do_check(r);
		verify_all(r);
	}
	stop_threads(r);
	res->thp_checked = r->thp_checked;
	res->thp_more = r->thp_more;
	res->variant = -1;
	for (int k = 0; k < r->nv && res->divergences; k++) {
		size_t len = strlen(r->v[k].desc);

		if (!strncmp(res->what, r->v[k].desc, len) && res->what[len] == ':')
			res->variant = r->v[k].orig;
	}
	for (int p = KD_MAX_PROCS - 1; p >= 0; p--)
		if (r->live[p] && opt->host)
			kd_host_exit(h, p);
	destroy_variants(r);
	free(r);
	return 0;
}
