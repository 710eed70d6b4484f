/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memfd with MMP_MFD_HUGETLB: a hugetlbfs file mapped shared and private, its
 * size in whole huge pages, reservations as mmap makes them and truncation
 * gives them back, faults, copy-on-write, fork, munmap, smaps. One scenario
 * runs on every back end and, as root on a host with hugetlb pages, on the
 * host too (memfd_create(MFD_HUGETLB)): every step's pool deltas (Free,
 * Rsvd), file size, data and smaps figures must match the host's.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <linux/memfd.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debug.h"
#include "mm.h"
#include "proc_field.h"
#include "util.h"

#define RW	(MMP_PROT_READ | MMP_PROT_WRITE)
#define HP	MMP_PMD_SIZE
#define POOL	16

static struct mmp_phys *phys;

/* ---- the scenario, over the library or the host ----------------------------------------- */

struct side {
	const char *name;
	void *ctx;
	int (*mmap)(struct side *x, uint64_t len, int prot, int shared, uint64_t off, uint64_t *a);
	int (*munmap)(struct side *x, uint64_t a, uint64_t len);
	int (*truncate)(struct side *x, uint64_t size);
	uint64_t (*size)(struct side *x);
	int (*wr)(struct side *x, uint64_t a, uint8_t v);
	int (*rd)(struct side *x, uint64_t a);
	/* A child writes @v at @pa and @w at @sa, then exits. */
	void (*fork_child)(struct side *x, uint64_t pa, uint8_t v, uint64_t sa, uint8_t w);
	/* Free and Rsvd of the 2 MiB pool (Rsvd as the kernel's wrapping counter). */
	void (*pool)(struct side *x, int64_t *free_pages, int64_t *rsvd);
	/* Shared_Hugetlb and Private_Hugetlb of the mapping at @a, in kB. */
	void (*smaps)(struct side *x, uint64_t a, uint64_t *shr, uint64_t *prv);
};

#define MAX_REC	160

struct record {
	int64_t v[MAX_REC];
	const char *what[MAX_REC];
	int n;
	int64_t free0, rsvd0;
};

static void rec(struct record *r, const char *what, int64_t v)
{
	if (r->n < MAX_REC) {
		r->what[r->n] = what;
		r->v[r->n++] = v;
	}
}

/* The pool as deltas from the scenario's start. */
static void rec_pool(struct side *x, struct record *r, const char *what)
{
	int64_t f, rs;

	x->pool(x, &f, &rs);
	rec(r, what, f - r->free0);
	rec(r, what, rs - r->rsvd0);
}

static void rec_smaps(struct side *x, struct record *r, const char *what, uint64_t a)
{
	uint64_t shr = ~0ULL, prv = ~0ULL;

	x->smaps(x, a, &shr, &prv);
	rec(r, what, (int64_t)shr);
	rec(r, what, (int64_t)prv);
}

static void scenario(struct side *x, struct record *r)
{
	uint64_t s = 0, p = 0, q = 0, m = 0, big;
	int64_t f, rs;

	memset(r, 0, sizeof(*r));
	x->pool(x, &r->free0, &r->rsvd0);
	rec(r, "truncate 1 MiB", x->truncate(x, 1 * MiB));
	rec(r, "truncate 3 MiB", x->truncate(x, 3 * MiB));
	rec(r, "truncate 4 MiB", x->truncate(x, 4 * MiB));
	rec(r, "size 4 MiB", (int64_t)x->size(x));
	rec_pool(x, r, "growing reserves nothing");
	rec(r, "mmap offset 1 MiB", x->mmap(x, 2 * MiB, RW, 1, 1 * MiB, &q));
	rec(r, "mmap offset 4 KiB", x->mmap(x, 2 * MiB, RW, 1, 4096, &q));
	rec(r, "shared mmap of 3 MiB", x->mmap(x, 3 * MiB, RW, 1, 0, &s));
	rec_pool(x, r, "shared 3 MiB reserves 2");
	rec(r, "private mmap of 4 MiB", x->mmap(x, 4 * MiB, RW, 0, 0, &p));
	rec_pool(x, r, "private 4 MiB reserves 2 more");
	rec(r, "shared write", x->wr(x, s, 7));
	rec_pool(x, r, "shared write takes a reserved page");
	rec(r, "private read sees it", x->rd(x, p));
	rec_pool(x, r, "private read maps the cache page");
	rec(r, "private write", x->wr(x, p, 9));
	rec_pool(x, r, "private write copies into a reserved page");
	rec(r, "shared unchanged", x->rd(x, s));
	rec(r, "private copy", x->rd(x, p));
	rec(r, "private write of page 1", x->wr(x, p + HP, 1));
	rec_pool(x, r, "private page 1");
	rec_smaps(x, r, "smaps shared", s);
	rec_smaps(x, r, "smaps private", p);
	rec(r, "shared rw mmap of 8 MiB", x->mmap(x, 8 * MiB, RW, 1, 0, &q));
	rec(r, "... grows the file to 8 MiB", (int64_t)x->size(x));
	rec_pool(x, r, "... reserves the 2 new pages");
	rec(r, "munmap it", x->munmap(x, q, 8 * MiB));
	rec_pool(x, r, "... the file keeps the reservations");
	rec(r, "read-only shared mmap of 16 MiB", x->mmap(x, 16 * MiB, MMP_PROT_READ, 1, 0, &q));
	rec(r, "... does not grow the file", (int64_t)x->size(x));
	rec_pool(x, r, "... but reserves its pages");
	rec(r, "munmap it", x->munmap(x, q, 16 * MiB));
	rec(r, "truncate to 4 MiB", x->truncate(x, 4 * MiB));
	rec_pool(x, r, "... gives back what the indices past it reserved");
	rec(r, "shared rw mmap at 16 MiB", x->mmap(x, 2 * MiB, RW, 1, 16 * MiB, &m));
	rec(r, "... grows the file to 18 MiB", (int64_t)x->size(x));
	rec_pool(x, r, "... reserves one");
	x->fork_child(x, p, 3, s + HP, 5);
	rec_pool(x, r, "a child's private copy came and went, its shared write stays");
	rec(r, "the parent's private page", x->rd(x, p));
	rec(r, "the child's shared write", x->rd(x, s + HP));
	rec(r, "truncate to 2 MiB", x->truncate(x, 2 * MiB));
	rec_pool(x, r, "... zaps the private copy past it too, restoring its reservation");
	rec(r, "the private page below", x->rd(x, p));
	rec(r, "the shared page below", x->rd(x, s));
	rec_smaps(x, r, "smaps private after truncation", p);
	rec(r, "truncate to 0", x->truncate(x, 0));
	rec_pool(x, r, "... frees the rest");
	rec(r, "munmap shared", x->munmap(x, s, 4 * MiB));
	rec(r, "munmap private", x->munmap(x, p, 4 * MiB));
	rec(r, "munmap at 16 MiB", x->munmap(x, m, 2 * MiB));
	rec_pool(x, r, "... the private reservations go back");
	rec(r, "truncate 4 MiB", x->truncate(x, 4 * MiB));
	x->pool(x, &f, &rs);
	big = (uint64_t)(f - rs + 3) * HP;	/* one more than the pool can promise */
	rec(r, "a shared mapping the pool cannot cover", x->mmap(x, big, RW, 1, 0, &q));
	rec_pool(x, r, "... reserves nothing");
	rec(r, "the same with NORESERVE", x->mmap(x, big, RW, 3, 0, &q));
	rec(r, "munmap it", x->munmap(x, q, big));
	rec_pool(x, r, "... and nothing stays");
}

/* ---- the library ------------------------------------------------------------------------ */

struct lib_ctx {
	struct mmp_space *s;
	struct mmp_cpu *cpu;
	struct mmp_file *f;
	bool verified;
};

static int lib_mmap(struct side *x, uint64_t len, int prot, int shared, uint64_t off, uint64_t *a)
{
	struct lib_ctx *c = x->ctx;
	int flags = (shared & 1 ? MMP_MAP_SHARED : MMP_MAP_PRIVATE) |
		    (shared & 2 ? MMP_MAP_NORESERVE : 0);

	return mmp_mmap_file(c->s, 0, len, prot, flags, c->f, off, a);
}

static bool lib_verify(struct lib_ctx *c)
{
	bool ok = mmp_space_verify(c->s) == 0;

	c->verified &= ok;
	return ok;
}

static int lib_munmap(struct side *x, uint64_t a, uint64_t len)
{
	int err = mmp_munmap(((struct lib_ctx *)x->ctx)->s, a, len);

	lib_verify(x->ctx);
	return err;
}

static int lib_truncate(struct side *x, uint64_t size)
{
	int err = mmp_file_truncate(((struct lib_ctx *)x->ctx)->f, size);

	lib_verify(x->ctx);
	return err;
}

static uint64_t lib_size(struct side *x)
{
	uint64_t size = ~0ULL;

	mmp_file_size(((struct lib_ctx *)x->ctx)->f, &size);
	return size;
}

static int lib_wr(struct side *x, uint64_t a, uint8_t v)
{
	int err = mmp_write(((struct lib_ctx *)x->ctx)->cpu, a, &v, 1);

	lib_verify(x->ctx);
	return err;
}

static int lib_rd(struct side *x, uint64_t a)
{
	uint8_t v = 0xee;
	int err = mmp_read(((struct lib_ctx *)x->ctx)->cpu, a, &v, 1);

	return err ? err : v;
}

static void lib_fork_child(struct side *x, uint64_t pa, uint8_t v, uint64_t sa, uint8_t w)
{
	struct lib_ctx *c = x->ctx;
	struct mmp_space *child;
	struct mmp_cpu *cc;

	must(mmp_fork(c->s, &child) == 0, "fork");
	must(mmp_cpu_attach(child, &cc) == 0, "the child's cpu");
	mmp_write(cc, pa, &v, 1);
	mmp_write(cc, sa, &w, 1);
	c->verified &= mmp_space_verify(child) == 0;
	mmp_cpu_detach(cc);
	mmp_space_destroy(child);
}

static void lib_pool(struct side *x, int64_t *free_pages, int64_t *rsvd)
{
	struct mmp_hugepages_stat st;

	must(mmp_phys_hugepages(phys, HP, &st) == 0, "the pool");
	*free_pages = (int64_t)st.free;
	*rsvd = (int64_t)st.rsvd;
}

static void lib_smaps(struct side *x, uint64_t a, uint64_t *shr, uint64_t *prv)
{
	struct mmp_vma_info vi;

	if (mmp_space_vma_info(((struct lib_ctx *)x->ctx)->s, a, &vi) == 0) {
		*shr = vi.shared_hugetlb >> 10;
		*prv = vi.private_hugetlb >> 10;
	}
}

static struct side lib_side = {
	.mmap = lib_mmap, .munmap = lib_munmap, .truncate = lib_truncate, .size = lib_size,
	.wr = lib_wr, .rd = lib_rd, .fork_child = lib_fork_child, .pool = lib_pool,
	.smaps = lib_smaps,
};

/* ---- the host --------------------------------------------------------------------------- */

struct host_ctx {
	int fd;
};

static int host_mmap(struct side *x, uint64_t len, int prot, int shared, uint64_t off, uint64_t *a)
{
	int flags = (shared & 1 ? MAP_SHARED : MAP_PRIVATE) | (shared & 2 ? MAP_NORESERVE : 0);
	void *p = mmap(NULL, len, prot, flags, ((struct host_ctx *)x->ctx)->fd, (off_t)off);

	if (p == MAP_FAILED)
		return -errno;
	*a = (uint64_t)p;
	return 0;
}

static int host_munmap(struct side *x, uint64_t a, uint64_t len)
{
	return munmap((void *)a, len) ? -errno : 0;
}

static int host_truncate(struct side *x, uint64_t size)
{
	return ftruncate(((struct host_ctx *)x->ctx)->fd, (off_t)size) ? -errno : 0;
}

static uint64_t host_size(struct side *x)
{
	struct stat st;

	return fstat(((struct host_ctx *)x->ctx)->fd, &st) ? ~0ULL : (uint64_t)st.st_size;
}

static int host_wr(struct side *x, uint64_t a, uint8_t v)
{
	*(volatile uint8_t *)a = v;
	return 0;
}

static int host_rd(struct side *x, uint64_t a)
{
	return *(volatile uint8_t *)a;
}

static void host_fork_child(struct side *x, uint64_t pa, uint8_t v, uint64_t sa, uint8_t w)
{
	pid_t pid = fork();

	if (pid == 0) {
		*(volatile uint8_t *)pa = v;
		*(volatile uint8_t *)sa = w;
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void host_pool(struct side *x, int64_t *free_pages, int64_t *rsvd)
{
	*free_pages = proc_field("/proc/meminfo", "HugePages_Free");
	*rsvd = proc_field("/proc/meminfo", "HugePages_Rsvd");
}

static void host_smaps(struct side *x, uint64_t a, uint64_t *shr, uint64_t *prv)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256], want[32];
	bool in = false;

	if (!f)
		return;
	snprintf(want, sizeof(want), "%llx-", (unsigned long long)a);
	while (fgets(line, sizeof(line), f)) {
		bool head = strchr(line, '-') && strchr(line, '-') < strchr(line, ' ') &&
			    strncmp(line, "VmFlags", 7);

		if (head)
			in = !strncmp(line, want, strlen(want));
		else if (in && !strncmp(line, "Shared_Hugetlb:", 15))
			*shr = strtoull(line + 15, NULL, 10);
		else if (in && !strncmp(line, "Private_Hugetlb:", 16))
			*prv = strtoull(line + 16, NULL, 10);
	}
	fclose(f);
}

static struct side host_side = {
	.name = "host", .mmap = host_mmap, .munmap = host_munmap, .truncate = host_truncate,
	.size = host_size, .wr = host_wr, .rd = host_rd, .fork_child = host_fork_child,
	.pool = host_pool, .smaps = host_smaps,
};

/*
 * The host's pool grows by POOL pages for the run and shrinks back after,
 * under the lock the kdiff runs take, so no run writes back a count another
 * changed meanwhile.
 */
#define NR_HUGEPAGES	"/proc/sys/vm/nr_hugepages"
#define POOL_LOCK	"/dev/shm/mmprim-kdiff-hugetlb.lock"

static bool host_pool_adjust(long delta)
{
	int fd = open(POOL_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	long nr;
	bool ok;

	if (fd < 0 || flock(fd, LOCK_EX)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	nr = proc_number(NR_HUGEPAGES);
	ok = nr >= 0 && nr + delta >= 0 && proc_number_write(NR_HUGEPAGES, nr + delta);
	close(fd);
	return ok;
}

/* A TAP skip: the host comparison cannot run here. */
static void tap_skip(const char *why)
{
	printf("ok %d # SKIP %s\n", ++tap_n, why);
	fflush(stdout);
}

/* ---- the checks ---------------------------------------------------------------------------- */

static bool records_match(const struct record *a, const struct record *b, bool report)
{
	bool ok = a->n == b->n;

	for (int i = 0; ok && i < a->n; i++) {
		if (a->v[i] != b->v[i]) {
			if (report)
				printf("#   step %d (%s): library %lld, host %lld\n", i, a->what[i],
				       (long long)a->v[i], (long long)b->v[i]);
			ok = false;
		}
	}
	return ok;
}

/* The figures a 6.18 host gave, so the scenario is checked on any machine. */
static const int64_t expected[] = {
	-EINVAL, -EINVAL, 0, 4 * MiB, 0, 0,			/* truncate */
	-EINVAL, -EINVAL, 0, 0, 2, 0, 0, 4,			/* offsets, shared, private */
	0, -1, 3, 7, -1, 3, 0, -2, 2, 7, 9, 0, -3, 1,		/* faults and the copy */
	0, 2048, 0, 4096,					/* smaps */
	0, 8 * MiB, -3, 3, 0, -3, 3,				/* shared 8 MiB */
	0, 8 * MiB, -3, 7, 0,					/* read-only 16 MiB */
	0, -3, 1,						/* truncate to 4 MiB */
	0, 18 * MiB, -3, 2,					/* at 16 MiB */
	-4, 1, 9, 5,						/* fork */
	0, -2, 1, 9, 7, 0, 2048,				/* truncate to 2 MiB */
	0, 0, 2,						/* truncate to 0 */
	0, 0, 0, 0, 0,						/* munmap */
	0, -ENOMEM, 0, 0, 0, 0, 0, 0,				/* the pool too small */
};

static void check_scenario(const char *arch, struct record *out)
{
	struct lib_ctx c = { .verified = true };
	struct side x = lib_side;
	struct record r;
	bool ok = true;

	x.name = arch;
	x.ctx = &c;
	c.s = new_space(phys, arch);
	must(mmp_cpu_attach(c.s, &c.cpu) == 0, "cpu");
	must(mmp_phys_set_hugepages(phys, HP, POOL) == 0, "pool");
	tap_eq(mmp_memfd_create(phys, MMP_MFD_HUGETLB, &c.f), 0, "%s: memfd_create(MFD_HUGETLB)",
	       arch);
	scenario(&x, &r);
	tap_eq(r.n, (int)ARRAY_SIZE(expected), "%s: the scenario's steps", arch);
	for (int i = 0; i < r.n && i < (int)ARRAY_SIZE(expected); i++) {
		if (r.v[i] != expected[i]) {
			printf("#   step %d (%s): %lld, the host gave %lld\n", i, r.what[i],
			       (long long)r.v[i], (long long)expected[i]);
			ok = false;
		}
	}
	tap_ok(ok, "%s: every step as on a 6.18 host", arch);
	tap_ok(c.verified, "%s: the space verifies after every step", arch);
	tap_eq(mmp_file_destroy(c.f), 0, "%s: close the memfd", arch);
	tap_ok(mmp_space_verify(c.s) == 0, "%s: verify", arch);
	mmp_cpu_detach(c.cpu);
	mmp_space_destroy(c.s);
	{
		struct mmp_hugepages_stat st;

		mmp_phys_hugepages(phys, HP, &st);
		tap_ok(st.total == POOL && st.free == POOL && st.rsvd == 0 && st.surp == 0,
		       "%s: the pool is whole again", arch);
	}
	must(mmp_phys_set_hugepages(phys, HP, 0) == 0, "pool");
	*out = r;
}

static void check_host(const struct record *lib)
{
	struct host_ctx hc;
	struct side x = host_side;
	struct record r = { .n = 0 };
	bool ok = false;

	if (geteuid() != 0) {
		tap_skip("the host: not root, cannot give the host a hugetlb pool");
		return;
	}
	hc.fd = memfd_create("mmprim-hugetlb", MFD_HUGETLB);
	if (hc.fd < 0) {
		tap_skip("the host: no hugetlbfs (memfd_create(MFD_HUGETLB) failed)");
		return;
	}
	if (!host_pool_adjust(POOL)) {
		close(hc.fd);
		tap_skip("the host: nr_hugepages cannot be raised");
		return;
	}
	x.ctx = &hc;
	/* Other runs on the host move the pool too: a mismatch is tried again, twice. */
	for (int attempt = 0; attempt < 3 && !ok; attempt++) {
		int64_t f, rs;

		host_pool(&x, &f, &rs);
		if (f - rs < POOL) {
			/* Not enough for the scenario: the kernel did not find the pages. */
			r.n = 0;
			break;
		}
		ftruncate(hc.fd, 0);
		scenario(&x, &r);
		ok = records_match(lib, &r, attempt == 2);
	}
	close(hc.fd);
	host_pool_adjust(-POOL);
	if (r.n == 0) {
		tap_skip("the host: its pool did not grow enough (other runs hold its pages)");
		return;
	}
	tap_ok(ok, "the host gives the same figures at every step as the library (%d)", r.n);
	if (getenv("MMP_DUMP_HOST"))
		for (int i = 0; i < r.n; i++)
			printf("#   host %d %s: %lld\n", i, r.what[i], (long long)r.v[i]);
}

/* ---- the API's edges --------------------------------------------------------------------- */

static void check_api(void)
{
	struct mmp_file *f = NULL;
	uint64_t size;
	size_t n = 0;
	char buf[16];

	tap_eq(mmp_memfd_create(phys, MMP_MFD_HUGE_2MB, &f), -EINVAL,
	       "memfd: a size without MFD_HUGETLB is -EINVAL, as the host");
	tap_eq(mmp_memfd_create(phys, MMP_MFD_HUGETLB | MMP_FILE_NO_LARGE_FOLIOS, &f), -EINVAL,
	       "memfd: MFD_HUGETLB with a file flag");
	tap_eq(mmp_memfd_create(phys, MMP_MFD_HUGETLB | (63u << MMP_MFD_HUGE_SHIFT), &f), -ENODEV,
	       "memfd: a size with no pool is -ENODEV, as the host");
	tap_eq(mmp_memfd_create(phys, MMP_MFD_HUGETLB | (12u << MMP_MFD_HUGE_SHIFT), &f), -ENODEV,
	       "memfd: 4 KiB is no huge size");
	tap_eq(mmp_memfd_create(NULL, MMP_MFD_HUGETLB, &f), -EINVAL, "memfd: NULL phys");
	tap_eq(mmp_memfd_create(phys, MMP_MFD_HUGETLB | MMP_MFD_HUGE_2MB, &f), 0,
	       "memfd: MFD_HUGETLB | MFD_HUGE_2MB");
	tap_ok(mmp_file_size(f, &size) == 0 && size == 0, "... empty");
	tap_eq(mmp_file_write(f, 0, "ab", 2), -EINVAL, "... write(2) is -EINVAL, as the host");
	tap_eq(mmp_file_truncate(f, HP + 4096), -EINVAL, "... ftruncate to 2 MiB + 4 KiB");
	tap_eq(mmp_file_truncate(f, MMP_FILE_MAX_SIZE + HP), -EFBIG, "... past the largest size");
	tap_eq(mmp_file_truncate(f, 2 * HP), 0, "... ftruncate to 4 MiB");
	memset(buf, 1, sizeof(buf));
	tap_ok(mmp_file_read(f, HP - 8, buf, sizeof(buf), &n) == 0 && n == sizeof(buf) && !buf[0] &&
		       !buf[15],
	       "... a hole reads as zeroes");
	tap_eq(mmp_file_destroy(f), 0, "... closes");
}

/* A page written through one mapping is read back through the file and a second space. */
static void check_cache(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch), *t = new_space(phys, arch);
	struct mmp_cpu *cpu, *cpu2;
	struct mmp_file *f;
	struct mmp_file_stat fst;
	uint64_t a, b, v = 0x1234567890abcdefULL, got = 0, pm[1];
	size_t n;

	must(mmp_phys_set_hugepages(phys, HP, 2) == 0, "pool");
	mmp_cpu_attach(s, &cpu);
	mmp_cpu_attach(t, &cpu2);
	must(mmp_memfd_create(phys, MMP_MFD_HUGETLB, &f) == 0, "memfd");
	must(mmp_mmap_file(s, 0, HP, RW, MMP_MAP_SHARED, f, 0, &a) == 0, "map");
	mmp_write(cpu, a + HP - 8, &v, 8);
	must(mmp_mmap_file(t, 0, HP, MMP_PROT_READ, MMP_MAP_SHARED, f, 0, &b) == 0, "map 2");
	mmp_read(cpu2, b + HP - 8, &got, 8);
	tap_ok(got == v, "%s: another space reads what one wrote", arch);
	got = 0;
	tap_ok(mmp_file_read(f, HP - 8, &got, 8, &n) == 0 && got == v,
	       "%s: and so does read(2)", arch);
	tap_ok(mmp_file_stat(f, &fst) == 0 && fst.nrpages == 512 && fst.nr_folios[9] == 1,
	       "%s: the page cache holds one 2 MiB folio", arch);
	tap_eq(mmp_space_pagemap(s, a, 1, pm), 1, "%s: pagemap", arch);
	tap_ok((pm[0] & MMP_PM_PRESENT) && (pm[0] & MMP_PM_FILE), "%s: ... a present file page",
	       arch);
	/* mprotect, mremap, MADV_DONTNEED on the memfd mapping, as on MAP_HUGETLB ones. */
	tap_eq(mmp_mprotect(t, b, HP, MMP_PROT_NONE), 0, "%s: mprotect PROT_NONE", arch);
	tap_ok(mmp_read(cpu2, b, &got, 8) != 0, "%s: ... a read faults", arch);
	tap_eq(mmp_mprotect(t, b, HP, MMP_PROT_READ), 0, "%s: mprotect PROT_READ", arch);
	tap_ok(mmp_read(cpu2, b + HP - 8, &got, 8) == 0 && got == v, "%s: ... reads again", arch);
	tap_eq(mmp_mremap(t, b, HP, HP, MMP_MREMAP_MAYMOVE | MMP_MREMAP_FIXED, b + 8 * HP, &b), 0,
	       "%s: mremap it elsewhere", arch);
	got = 0;
	tap_ok(mmp_read(cpu2, b + HP - 8, &got, 8) == 0 && got == v, "%s: ... the page went along",
	       arch);
	tap_eq(mmp_madvise(s, a, HP, MMP_MADV_DONTNEED), 0, "%s: MADV_DONTNEED", arch);
	got = 0;
	tap_ok(mmp_read(cpu, a + HP - 8, &got, 8) == 0 && got == v,
	       "%s: ... the file keeps the page, a fault maps it again", arch);
	tap_eq(mmp_file_destroy(f), -EBUSY, "%s: a mapped memfd does not close", arch);
	tap_ok(mmp_space_verify(s) == 0 && mmp_space_verify(t) == 0, "%s: verify", arch);
	mmp_munmap(s, a, HP);
	mmp_munmap(t, b, HP);
	tap_eq(mmp_file_destroy(f), 0, "%s: closes once unmapped", arch);
	mmp_cpu_detach(cpu);
	mmp_cpu_detach(cpu2);
	mmp_space_destroy(s);
	mmp_space_destroy(t);
	must(mmp_phys_set_hugepages(phys, HP, 0) == 0, "pool");
}

/*
 * A sparse file: pages at its first and its last possible index. Truncation
 * drops the cached pages past the new end, however far apart, and gives the
 * pool back what it took.
 */
static void check_sparse_truncate(const char *arch)
{
	struct mmp_space *s = new_space(phys, arch);
	struct mmp_hugepages_stat st;
	struct mmp_file_stat fst;
	struct mmp_file *f;
	struct mmp_cpu *cpu;
	uint64_t far = MMP_FILE_MAX_SIZE - HP, a, b;

	must(mmp_phys_set_hugepages(phys, HP, 2) == 0, "pool");
	mmp_cpu_attach(s, &cpu);
	must(mmp_memfd_create(phys, MMP_MFD_HUGETLB, &f) == 0, "memfd");
	must(mmp_mmap_file(s, 0, HP, RW, MMP_MAP_SHARED, f, 0, &a) == 0, "map the first page");
	must(mmp_mmap_file(s, 0, HP, RW, MMP_MAP_SHARED, f, far, &b) == 0, "map the last");
	must(!mmp_memset(cpu, a, 1, 8) && !mmp_memset(cpu, b, 2, 8), "both written");
	mmp_munmap(s, b, HP);
	tap_eq(mmp_file_truncate(f, HP), 0, "%s: sparse: truncate to the first page", arch);
	mmp_phys_hugepages(phys, HP, &st);
	must(mmp_file_stat(f, &fst) == 0, "stat");
	tap_ok(fst.nrpages == 512 && st.free == 1 && st.rsvd == 0,
	       "%s: sparse: the far page went back to the pool (cache %llu pages, free %llu, "
	       "rsvd %llu)", arch, (unsigned long long)fst.nrpages, (unsigned long long)st.free,
	       (unsigned long long)st.rsvd);
	mmp_munmap(s, a, HP);
	tap_eq(mmp_file_truncate(f, 0), 0, "%s: sparse: truncate to 0", arch);
	mmp_phys_hugepages(phys, HP, &st);
	tap_ok(st.free == 2 && st.rsvd == 0, "%s: sparse: the pool is whole", arch);
	tap_eq(mmp_space_verify(s), 0, "%s: sparse: verify", arch);
	tap_eq(mmp_file_destroy(f), 0, "%s: sparse: closes", arch);
	mmp_cpu_detach(cpu);
	mmp_space_destroy(s);
	must(mmp_phys_set_hugepages(phys, HP, 0) == 0, "pool");
}

/* ---- truncation racing faults -------------------------------------------------------------- */

struct racer {
	struct mmp_space *s;
	uint64_t shared, priv;
	int stop;
	unsigned long faults, sigbus;
};

static void *race_faults(void *arg)
{
	struct racer *r = arg;
	struct mmp_cpu *cpu;
	uint64_t x = 88172645463325252ULL;

	must(mmp_cpu_attach(r->s, &cpu) == 0, "racer cpu");
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t page, base;
		uint8_t v = 1;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		page = (x >> 8) % 4;
		base = x & 1 ? r->shared : r->priv;
		if (mmp_write(cpu, base + page * HP + (x & 0xff0), &v, 1))
			__atomic_fetch_add(&r->sigbus, 1, __ATOMIC_RELAXED);
		else
			__atomic_fetch_add(&r->faults, 1, __ATOMIC_RELAXED);
	}
	mmp_cpu_detach(cpu);
	return NULL;
}

/* Faults on both mappings while the file shrinks and grows: the counts stay whole. */
static void check_truncate_race(const char *arch)
{
	struct racer r = { .s = new_space(phys, arch) };
	struct mmp_hugepages_stat st;
	struct mmp_file *f;
	pthread_t t;
	bool ok = true;

	must(mmp_phys_set_hugepages(phys, HP, 16) == 0, "pool");
	must(mmp_memfd_create(phys, MMP_MFD_HUGETLB, &f) == 0, "memfd");
	must(mmp_mmap_file(r.s, 0, 4 * HP, RW, MMP_MAP_SHARED, f, 0, &r.shared) == 0, "shared");
	must(mmp_mmap_file(r.s, 0, 4 * HP, RW, MMP_MAP_PRIVATE, f, 0, &r.priv) == 0, "private");
	must(pthread_create(&t, NULL, race_faults, &r) == 0, "racer");
	/* 300 truncations at least, and until the racer has made 3000 accesses. */
	for (int i = 0; i < 300 || (__atomic_load_n(&r.faults, __ATOMIC_RELAXED) +
					   __atomic_load_n(&r.sigbus, __ATOMIC_RELAXED) < 3000 &&
				   i < 1000000); i++) {
		ok &= mmp_file_truncate(f, (uint64_t)(i % 4) * HP) == 0;
		if (i % 50 == 49)
			ok &= mmp_space_verify(r.s) == 0;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	tap_ok(ok && mmp_space_verify(r.s) == 0,
	       "%s: truncations racing writes (%lu landed, %lu SIGBUS past the end): verify holds",
	       arch, r.faults, r.sigbus);
	mmp_munmap(r.s, r.shared, 4 * HP);
	mmp_munmap(r.s, r.priv, 4 * HP);
	mmp_file_destroy(f);
	mmp_space_destroy(r.s);
	mmp_phys_hugepages(phys, HP, &st);
	tap_ok(st.free == 16 && st.rsvd == 0 && st.surp == 0, "%s: ... and the pool is whole again",
	       arch);
	must(mmp_phys_set_hugepages(phys, HP, 0) == 0, "pool");
}

int main(void)
{
	struct record lib = { 0 };
	const char *name;

	tap_require(mmp_phys_create(64 * MiB, &phys) == 0, "phys");
	check_api();
	for_each_arch(i, name) {
		check_scenario(name, &lib);
		check_cache(name);
		check_sparse_truncate(name);
		check_truncate_race(name);
	}
	if (host_oracle("hugetlb memfds"))
		check_host(&lib);
	tap_eq(mmp_phys_destroy(phys), 0, "the phys goes");
	return tap_done();
}
