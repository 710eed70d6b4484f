/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PROCMAP_QUERY (mmp_space_procmap_query) and 6.18's per-VMA lock for it
 * (release rule procmap_query_vma_lock), each proven without timing:
 *
 * - what a query answers, on one layout of anonymous, shared and file VMAs
 *   with holes, at 6.17 and 6.18 alike: the VMA at the address, or with
 *   COVERING_OR_NEXT the first at or above it that passes the filters;
 * - the same queries, and the errors, on the host's /proc/self/maps with the
 *   same layout mapped in this process (not under qemu-user: host_oracle());
 * - a writer held inside the mmap write lock (MMP_DEBUG_MMAP_WRITE_LOCKED,
 *   in an mmp_mmap() of a far range): from 6.18 a query of an untouched VMA
 *   completes with the writer still inside; at 6.17 it waits (it reaches
 *   MMP_DEBUG_MMAP_LOCK_WAIT, which lets the writer go, so a wrong lock fails
 *   instead of hanging); so does a COVERING_OR_NEXT query from a hole, which
 *   from 6.18 walks on to the next VMA under RCU (lock_next_vma);
 * - a VMA a writer has write-locked (vma_start_write): the query falls back
 *   to the mmap lock and waits for that writer;
 * - the lock counters, exact, in one thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mmprim/introspect.h>

#include "mm.h"
#include "mmap_lock.h"
#include "held_writer.h"
#include "park.h"
#include "util.h"
#include "vma.h"

#define PG		MMP_PAGE_SIZE
#define RW		(MMP_PROT_READ | MMP_PROT_WRITE)
#define V(a, b)		MMP_KERNEL_VERSION(a, b, 0)
#define NPAGES		40	/* the layout's span, holes at both ends */

#define R		MMP_PROCMAP_VMA_READABLE
#define W		MMP_PROCMAP_VMA_WRITABLE
#define X		MMP_PROCMAP_VMA_EXECUTABLE
#define SH		MMP_PROCMAP_VMA_SHARED
#define NEXT		MMP_PROCMAP_COVERING_OR_NEXT_VMA
#define FILE_BACKED	MMP_PROCMAP_FILE_BACKED_VMA

/* include/uapi/linux/fs.h: the host's headers may predate 6.11. */
#define HOST_PROCMAP_QUERY	_IOWR('f', 17, struct mmp_procmap_query)

static struct mmp_phys *phys;

/* The layout, in pages from its base; a hole below the first and above the last. */
enum kind { ANON, SHARED_ANON, FILE_PRIVATE, FILE_SHARED };
static const struct region {
	char name;
	unsigned int first, pages;
	int prot;
	enum kind kind;
	unsigned int file_page;
} layout[] = {
	{ 'A', 2, 4, MMP_PROT_READ | MMP_PROT_WRITE, ANON, 0 },
	{ 'B', 8, 4, MMP_PROT_READ, ANON, 0 },
	{ 'C', 12, 4, MMP_PROT_READ | MMP_PROT_WRITE, SHARED_ANON, 0 },
	{ 'D', 18, 4, MMP_PROT_READ | MMP_PROT_EXEC, FILE_PRIVATE, 2 },
	{ 'E', 22, 4, MMP_PROT_READ | MMP_PROT_WRITE, FILE_SHARED, 0 },
	{ 'F', 30, 4, MMP_PROT_NONE, ANON, 0 },
};
#define NREGIONS	(sizeof(layout) / sizeof(layout[0]))
#define FILE_PAGES	8

/* The layout in a space of @arch at @release; returns its base. */
static uint64_t lib_layout(struct mmp_space *s, struct mmp_file **fp)
{
	uint64_t base = map(s, NPAGES * PG, RW), out;

	must(!mmp_munmap(s, base, NPAGES * PG), "unmap the span");
	must(!mmp_file_create(phys, FILE_PAGES * PG, 0, fp), "a file");
	for (size_t i = 0; i < NREGIONS; i++) {
		const struct region *r = &layout[i];
		uint64_t a = base + r->first * PG, len = r->pages * PG;
		int err;

		switch (r->kind) {
		case ANON:
			err = mmp_mmap(s, a, len, r->prot, MMP_MAP_FIXED, &out);
			break;
		case SHARED_ANON:
			err = mmp_mmap(s, a, len, r->prot, MMP_MAP_FIXED | MMP_MAP_SHARED, &out);
			break;
		default:
			err = mmp_mmap_file(s, a, len, r->prot,
					    MMP_MAP_FIXED | (r->kind == FILE_SHARED ? MMP_MAP_SHARED
										    : MMP_MAP_PRIVATE),
					    *fp, r->file_page * PG, &out);
		}
		must(!err, "map %c", r->name);
	}
	return base;
}

static struct mmp_space *lib_space(const char *arch, long release, struct mmp_file **fp,
				   uint64_t *base)
{
	struct mmp_space *s = new_space(phys, arch);

	must(!mmp_space_set_opt(s, MMP_OPT_KERNEL_VERSION, release), "release");
	*base = lib_layout(s, fp);
	return s;
}

static void lib_done(struct mmp_space *s, struct mmp_file *f, const char *what)
{
	tap_eq(mmp_space_verify(s), 0, "%s: verifies", what);
	mmp_space_destroy(s);
	must(!mmp_file_destroy(f), "file");
}

static int lib_query(struct mmp_space *s, uint64_t addr, uint64_t flags, struct mmp_procmap_query *q)
{
	*q = (struct mmp_procmap_query){ .size = sizeof(*q), .query_flags = flags,
					 .query_addr = addr };
	return mmp_space_procmap_query(s, q);
}

/* ---- what a query answers ------------------------------------------------------ */

/* Query page @page of the layout (+ @off bytes) with @flags: the region @want, or '-' for -ENOENT. */
static const struct expect {
	unsigned int page, off;
	uint64_t flags;
	char want;
} expects[] = {
	{ 3, 123, 0, 'A' },		/* covering, any byte of a page */
	{ 6, 0, 0, '-' },		/* a hole */
	{ 6, 0, NEXT, 'B' },		/* a hole, or the next */
	{ 0, 0, NEXT, 'A' },
	{ 3, 0, FILE_BACKED | NEXT, 'C' },	/* shared anonymous memory is shmem: a file */
	{ 3, 0, FILE_BACKED, '-' },
	{ 19, 0, FILE_BACKED, 'D' },
	{ 3, 0, SH | NEXT, 'C' },
	{ 9, 0, W, '-' },		/* B is read-only */
	{ 9, 0, W | NEXT, 'C' },	/* on to the adjacent VMA */
	{ 3, 0, X | NEXT, 'D' },
	{ 23, 0, X | NEXT, '-' },	/* E rw, F none: nothing executable above */
	{ 3, 0, R | X | FILE_BACKED | NEXT, 'D' },
	{ 20, 0, W | SH | FILE_BACKED, '-' },
	{ 24, 0, W | SH | FILE_BACKED, 'E' },
	{ 31, 0, 0, 'F' },
	{ 31, 0, R, '-' },
	{ 34, 0, NEXT, '-' },		/* nothing above F */
};

static const struct region *region_named(char c)
{
	for (size_t i = 0; i < NREGIONS; i++)
		if (layout[i].name == c)
			return &layout[i];
	return NULL;
}

static uint64_t region_flags(const struct region *r)
{
	return (r->prot & MMP_PROT_READ ? R : 0) | (r->prot & MMP_PROT_WRITE ? W : 0) |
	       (r->prot & MMP_PROT_EXEC ? X : 0) |
	       (r->kind == SHARED_ANON || r->kind == FILE_SHARED ? SH : 0);
}

static void check_answers(const char *arch, long release)
{
	struct mmp_file *f;
	uint64_t base;
	struct mmp_space *s = lib_space(arch, release, &f, &base);
	char what[64];
	unsigned int bad = 0;

	snprintf(what, sizeof(what), "%s %ld.%ld", arch, release >> 16, (release >> 8) & 255);
	for (size_t i = 0; i < sizeof(expects) / sizeof(expects[0]); i++) {
		const struct expect *e = &expects[i];
		const struct region *r = region_named(e->want);
		struct mmp_procmap_query q;
		int err = lib_query(s, base + e->page * PG + e->off, e->flags, &q);
		bool ok;

		if (!r)
			ok = err == -ENOENT;
		else
			ok = !err && q.vma_start == base + r->first * PG &&
			     q.vma_end == base + (r->first + r->pages) * PG &&
			     q.vma_flags == region_flags(r) && q.vma_page_size == PG &&
			     q.vma_offset == (r->kind >= FILE_PRIVATE ? r->file_page * PG : 0) &&
			     !q.inode == (r->kind == ANON) && !q.vma_name_size && !q.build_id_size;
		if (!ok && bad++ < 3)
			printf("# %s: page %u flags %#llx: %d, [%#llx, %#llx) flags %#llx, want %c\n",
			       what, e->page, (unsigned long long)e->flags, err,
			       (unsigned long long)(err ? 0 : q.vma_start - base),
			       (unsigned long long)(err ? 0 : q.vma_end - base),
			       (unsigned long long)q.vma_flags, e->want);
	}
	tap_eq(bad, 0, "%s: %zu queries answer as PROCMAP_QUERY does", what,
	       sizeof(expects) / sizeof(expects[0]));
	lib_done(s, f, what);
}

/* ---- against the host ------------------------------------------------------------ */

static const uint64_t sweep_flags[] = {
	0, NEXT, FILE_BACKED, FILE_BACKED | NEXT, R | W, W | NEXT, X | NEXT, SH, SH | NEXT,
	R | X | FILE_BACKED | NEXT, R | NEXT, W | SH | FILE_BACKED | NEXT,
};

static int host_query(int fd, uint64_t addr, uint64_t flags, struct mmp_procmap_query *q)
{
	*q = (struct mmp_procmap_query){ .size = sizeof(*q), .query_flags = flags,
					 .query_addr = addr };
	return ioctl(fd, HOST_PROCMAP_QUERY, q) ? -errno : 0;
}

/* The layout in this process; its base, or 0 when it could not be had. */
static uint64_t host_layout(int *memfd)
{
	char *base = mmap(NULL, NPAGES * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	*memfd = memfd_create("procmap_query", 0);
	if (base == MAP_FAILED || *memfd < 0 || ftruncate(*memfd, FILE_PAGES * PG) ||
	    munmap(base, NPAGES * PG))
		return 0;
	for (size_t i = 0; i < NREGIONS; i++) {
		const struct region *r = &layout[i];
		int prot = (r->prot & MMP_PROT_READ ? PROT_READ : 0) |
			   (r->prot & MMP_PROT_WRITE ? PROT_WRITE : 0) |
			   (r->prot & MMP_PROT_EXEC ? PROT_EXEC : 0);
		int flags = MAP_FIXED | (r->kind == SHARED_ANON || r->kind == FILE_SHARED ? MAP_SHARED
											: MAP_PRIVATE);
		void *p;

		if (r->kind <= SHARED_ANON)
			p = mmap(base + r->first * PG, r->pages * PG, prot, flags | MAP_ANONYMOUS, -1, 0);
		else
			p = mmap(base + r->first * PG, r->pages * PG, prot, flags, *memfd,
				 r->file_page * PG);
		if (p == MAP_FAILED)
			return 0;
	}
	return (uint64_t)(uintptr_t)base;
}

/* One answer relative to its layout's base; an answer past the span counts as none. */
struct answer {
	int err;
	uint64_t start, end, flags, offset, page_size;
	bool file;
};

static struct answer relative(int err, const struct mmp_procmap_query *q, uint64_t base)
{
	if (err || q->vma_start >= base + NPAGES * PG)
		return (struct answer){ .err = err ? err : -ENOENT };
	return (struct answer){ 0, q->vma_start - base, q->vma_end - base, q->vma_flags,
				q->vma_offset, q->vma_page_size, q->inode != 0 };
}

/* The bad arguments of test_badinput_scan, on the host: the same errno each. */
static void check_host_errors(int fd, struct mmp_space *s, uint64_t base, uint64_t hbase)
{
	static uint64_t hbig[PG / 8 + 1], lbig[PG / 8 + 1];
	static const struct {
		const char *what;
		uint64_t size, flags, name_size, build_id_addr;
	} bad[] = {
		{ "size 16", 16, 0, 0, 0 },
		{ "size 0", 0, 0, 0, 0 },
		{ "size above a page", PG + 8, 0, 0, 0 },
		{ "unknown flag", 104, 1 << 6, 0, 0 },
		{ "a name size without an address", 104, 0, 16, 0 },
		{ "a build-ID address without a size", 104, 0, 0, 0x1000 },
		{ "size first", 8, 1 << 7, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mmp_procmap_query q = { .size = bad[i].size, .query_flags = bad[i].flags,
					       .query_addr = base + 3 * PG,
					       .vma_name_size = (uint32_t)bad[i].name_size,
					       .build_id_addr = bad[i].build_id_addr };
		int lib, host;

		memset(hbig, 0, sizeof(hbig));
		memset(lbig, 0, sizeof(lbig));
		memcpy(lbig, &q, sizeof(q));
		q.query_addr = hbase + 3 * PG;
		memcpy(hbig, &q, sizeof(q));
		lib = mmp_space_procmap_query(s, (struct mmp_procmap_query *)lbig);
		host = ioctl(fd, HOST_PROCMAP_QUERY, hbig) ? -errno : 0;
		tap_ok(lib == host && lib < 0, "host: %s: %d, the library %d", bad[i].what, host, lib);
	}
	/* Nonzero bytes beyond the structure: -E2BIG on both. */
	for (int side = 0; side < 2; side++) {
		uint64_t *b = side ? hbig : lbig;

		memset(b, 0, sizeof(hbig));
		b[0] = 128;
		b[2] = (side ? hbase : base) + 3 * PG;
		b[14] = 1;	/* byte 112 */
	}
	{
		int lib = mmp_space_procmap_query(s, (struct mmp_procmap_query *)lbig);
		int host = ioctl(fd, HOST_PROCMAP_QUERY, hbig) ? -errno : 0;

		tap_ok(lib == host && lib == -E2BIG,
		       "host: nonzero bytes beyond the structure: %d, the library %d", host, lib);
	}
}

static void check_host(void)
{
	int fd = open("/proc/self/maps", O_RDONLY), memfd = -1;
	uint64_t hbase;
	struct mmp_procmap_query q;

	if (fd < 0 || host_query(fd, 0, NEXT, &q) == -ENOTTY) {
		printf("# the host has no PROCMAP_QUERY (before Linux 6.11): not compared\n");
		if (fd >= 0)
			close(fd);
		return;
	}
	hbase = host_layout(&memfd);
	must(hbase, "the layout in this process");
	for (int rel = 0; rel < 2; rel++) {
		long release = rel ? V(6, 18) : V(6, 17);
		struct mmp_file *f;
		uint64_t base;
		struct mmp_space *s = lib_space("x86_64", release, &f, &base);
		unsigned int n = 0, found = 0, bad = 0;
		char what[64];

		snprintf(what, sizeof(what), "host and x86_64 %ld.%ld", release >> 16,
			 (release >> 8) & 255);
		for (size_t fi = 0; fi < sizeof(sweep_flags) / sizeof(sweep_flags[0]); fi++)
			for (unsigned int p = 0; p < NPAGES; p++) {
				struct mmp_procmap_query lq, hq;
				unsigned int off = p % 3 ? 0 : 777;
				struct answer l = relative(lib_query(s, base + p * PG + off,
								     sweep_flags[fi], &lq), &lq, base);
				struct answer h = relative(host_query(fd, hbase + p * PG + off,
								      sweep_flags[fi], &hq), &hq, hbase);

				n++;
				found += !h.err;
				if (!memcmp(&l, &h, sizeof(l)))
					continue;
				if (bad++ < 3)
					printf("# %s: page %u flags %#llx: host %d [%#llx, %#llx) "
					       "%#llx off %#llx file %d, library %d [%#llx, %#llx) "
					       "%#llx off %#llx file %d\n", what, p,
					       (unsigned long long)sweep_flags[fi], h.err,
					       (unsigned long long)h.start, (unsigned long long)h.end,
					       (unsigned long long)h.flags, (unsigned long long)h.offset,
					       h.file, l.err, (unsigned long long)l.start,
					       (unsigned long long)l.end, (unsigned long long)l.flags,
					       (unsigned long long)l.offset, l.file);
			}
		tap_eq(bad, 0, "%s: %u queries (every page, %zu flag sets; %u found a VMA of the "
		       "span): same VMA, flags, offset and errors", what, n,
		       sizeof(sweep_flags) / sizeof(sweep_flags[0]), found);
		if (rel)
			check_host_errors(fd, s, base, hbase);
		lib_done(s, f, what);
	}
	munmap((void *)(uintptr_t)hbase, NPAGES * PG);
	close(memfd);
	close(fd);
}

/* ---- against a writer held inside the mmap write lock ------------------------------ */

/* One query as held_writer_call() calls it. */
struct query_call {
	struct mmp_space *s;
	uint64_t addr, flags;
	struct mmp_procmap_query *q;
};

static int query_call_fn(void *arg)
{
	struct query_call *c = arg;

	return lib_query(c->s, c->addr, c->flags, c->q);
}

static void check_held_writer(const char *arch, long release, bool from_hole)
{
	struct mmp_file *f;
	uint64_t base;
	struct mmp_space *s = lib_space(arch, release, &f, &base);
	bool vma_lock = release >= V(6, 18);
	struct held_writer h = { .s = s };
	struct mmp_procmap_query q;
	struct mmp_counters c0, d;
	struct query_call call = { s, base + (from_hole ? 16 : 9) * PG, from_hole ? NEXT : 0, &q };
	int err;
	char what[160];

	snprintf(what, sizeof(what), "%s %ld.%ld: PROCMAP_QUERY %s, a writer inside", arch,
		 release >> 16, (release >> 8) & 255,
		 from_hole ? "from a hole, or the next (COVERING_OR_NEXT)" : "of an untouched VMA");
	h.far = map(s, 2 * MiB, RW) + MiB;
	must(!mmp_munmap(s, h.far, PG), "a place for the writer");

	mmp_space_counters(s, &c0);
	err = held_writer_call(&h, query_call_fn, &call);
	counters_since(s, &c0, &d);

	tap_ok(h.parked && !h.timeouts, "%s: the writer was held", what);
	tap_ok(!err && q.vma_start == base + (from_hole ? 18 : 8) * PG, "%s: answered (%d)", what,
	       err);
	tap_eq(h.err, 0, "%s: the writer's mmap", what);
	if (vma_lock) {
		tap_eq(h.waited, 0, "%s: done with the writer still inside", what);
		tap_ok(d.v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS] == 1 &&
		       d.v[MMP_C_PROCMAP_VMA_LOCK_FALLBACK] == 0 && d.v[MMP_C_MMAP_LOCK_PROCMAP] == 0,
		       "%s: under the VMA lock (success %llu, fallback %llu, mmap lock %llu)", what,
		       (unsigned long long)d.v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS],
		       (unsigned long long)d.v[MMP_C_PROCMAP_VMA_LOCK_FALLBACK],
		       (unsigned long long)d.v[MMP_C_MMAP_LOCK_PROCMAP]);
	} else {
		bool fallback = release >= V(6, 18);

		tap_eq(h.waited, 1, "%s: waited for the writer", what);
		tap_ok(d.v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS] == 0 &&
		       d.v[MMP_C_PROCMAP_VMA_LOCK_FALLBACK] == fallback &&
		       d.v[MMP_C_MMAP_LOCK_PROCMAP] == 1,
		       "%s: under the mmap lock (success %llu, fallback %llu, mmap lock %llu)", what,
		       (unsigned long long)d.v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS],
		       (unsigned long long)d.v[MMP_C_PROCMAP_VMA_LOCK_FALLBACK],
		       (unsigned long long)d.v[MMP_C_MMAP_LOCK_PROCMAP]);
	}
	lib_done(s, f, what);
}

/* ---- a VMA a writer has write-locked --------------------------------------------- */

struct stamper {
	struct mmp_space *s;
	uint64_t addr;
	struct park *park;
};

/* Take the mmap write lock, stamp the VMA at ->addr, hold until a reader waits, let go. */
static void *stamper(void *arg)
{
	struct stamper *st = arg;

	mmap_write_lock(st->s);
	vma_start_write(st->s, find_vma(st->s, st->addr));
	park_self(st->park);
	mmap_write_unlock(st->s);
	return NULL;
}

static void check_write_locked_vma(const char *arch)
{
	struct mmp_file *f;
	uint64_t base;
	struct mmp_space *s = lib_space(arch, V(6, 18), &f, &base);
	struct mmp_procmap_query q;
	struct mmp_counters c0, d;
	struct stamper st;
	struct park park;
	pthread_t th;
	bool parked;
	int err, waited;
	char what[128];

	snprintf(what, sizeof(what), "%s 6.18: PROCMAP_QUERY of a VMA a writer has locked", arch);
	mmp_space_counters(s, &c0);
	park_init(&park, s);
	park_arm(&park, -1, PARK_AT(MMP_DEBUG_MMAP_LOCK_WAIT));
	st = (struct stamper){ .s = s, .addr = base + 20 * PG, .park = &park };
	pthread_create(&th, NULL, stamper, &st);
	parked = park_wait_parked(&park);
	err = lib_query(s, base + 20 * PG, 0, &q);
	pthread_mutex_lock(&park.lock);
	waited = park.waited;
	pthread_mutex_unlock(&park.lock);
	park_release(&park);
	pthread_join(th, NULL);
	park_fini(&park, s);
	counters_since(s, &c0, &d);

	tap_ok(parked && !park.timeouts, "%s: the writer was held", what);
	tap_ok(!err && q.vma_start == base + 18 * PG && q.vma_offset == 2 * PG,
	       "%s: answered (%d)", what, err);
	tap_eq(waited, 1, "%s: waited for the writer", what);
	tap_ok(d.v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS] == 0 && d.v[MMP_C_PROCMAP_VMA_LOCK_FALLBACK] == 1 &&
	       d.v[MMP_C_MMAP_LOCK_PROCMAP] == 1,
	       "%s: fell back to the mmap lock (success %llu, fallback %llu, mmap lock %llu)", what,
	       (unsigned long long)d.v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS],
	       (unsigned long long)d.v[MMP_C_PROCMAP_VMA_LOCK_FALLBACK],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_PROCMAP]);
	lib_done(s, f, what);
}

/* ---- exact counts, one thread ---------------------------------------------------- */

static void check_counts(const char *arch, long release)
{
	struct mmp_file *f;
	uint64_t base;
	struct mmp_space *s = lib_space(arch, release, &f, &base);
	bool vma = release >= V(6, 18);
	struct mmp_procmap_query q;
	struct mmp_counters c0, d;
	char what[64];

	snprintf(what, sizeof(what), "%s %ld.%ld", arch, release >> 16, (release >> 8) & 255);
	mmp_space_counters(s, &c0);
	must(!lib_query(s, base + 3 * PG, 0, &q), "covering");		/* VMA lock */
	must(lib_query(s, base + 6 * PG, 0, &q) == -ENOENT, "a hole");	/* none: RCU said so */
	must(!lib_query(s, base + 6 * PG, NEXT, &q), "a hole, next");	/* VMA lock, past the hole */
	must(lib_query(s, base + 9 * PG, W, &q) == -ENOENT, "filtered");	/* VMA lock */
	must(!lib_query(s, base + 9 * PG, W | NEXT, &q), "filtered, next");	/* B, C: VMA locks */
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS] == (vma ? 5 : 0) &&
	       d.v[MMP_C_PROCMAP_VMA_LOCK_FALLBACK] == 0 &&
	       d.v[MMP_C_MMAP_LOCK_PROCMAP] == (vma ? 0 : 5) &&
	       d.v[MMP_C_MMAP_LOCK_READ] == (vma ? 0 : 5) && d.v[MMP_C_MMAP_LOCK_READ_WAIT] == 0,
	       "%s: 5 queries: success %llu, fallback %llu, mmap lock %llu (read %llu)", what,
	       (unsigned long long)d.v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS],
	       (unsigned long long)d.v[MMP_C_PROCMAP_VMA_LOCK_FALLBACK],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_PROCMAP],
	       (unsigned long long)d.v[MMP_C_MMAP_LOCK_READ]);
	/* With the per-VMA locks off, as CONFIG_PER_VMA_LOCK=n: the mmap lock every time. */
	must(!mmp_space_set_opt(s, MMP_OPT_PER_VMA_LOCK, 0), "no VMA locks");
	mmp_space_counters(s, &c0);
	must(!lib_query(s, base + 3 * PG, 0, &q), "covering");
	counters_since(s, &c0, &d);
	tap_ok(d.v[MMP_C_PROCMAP_VMA_LOCK_SUCCESS] == 0 && d.v[MMP_C_MMAP_LOCK_PROCMAP] == 1,
	       "%s: without per-VMA locks, the mmap lock", what);
	lib_done(s, f, what);
}

int main(int argc, char **argv)
{
	static const char *const archs[] = { "x86_64", "arm64" };
	static const long releases[] = { V(6, 17), V(6, 18) };

	(void)argv;
	must(!mmp_phys_create(64 * MiB, &phys), "phys");
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		check_write_locked_vma(archs[i]);
		for (size_t r = 0; r < sizeof(releases) / sizeof(releases[0]); r++) {
			check_answers(archs[i], releases[r]);
			check_counts(archs[i], releases[r]);
			check_held_writer(archs[i], releases[r], false);
			check_held_writer(archs[i], releases[r], true);
		}
	}
	if (argc == 1 && host_oracle("PROCMAP_QUERY"))
		check_host();
	mmp_phys_destroy(phys);
	return tap_done();
}
