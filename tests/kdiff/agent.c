/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host agents: one host process per simulated process, running the real
 * system calls inside the window. A spawner, forked before the test makes any
 * thread, forks a fresh agent per run; an agent forks itself for KD_FORK.
 * Each process slot has its own socket pair, made up front, so a forked agent
 * just switches to its slot's socket. A lifeline pipe ends every agent when
 * the driver goes away.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmprim/mmprim.h>

#include "host_fault.h"
#include "kdiff.h"

enum { CMD_SPAWN, CMD_SYSCALL, CMD_READ, CMD_WRITE, CMD_MAPS, CMD_FORK, CMD_EXIT, CMD_TOUCH,
       CMD_FREAD, CMD_STATE };

struct msg {
	int32_t cmd, slot;
	struct kd_op op;
	uint64_t datalen;
};

struct reply {
	int64_t ret;
	uint64_t datalen;
	uint64_t faults;	/* min_flt of the command's system call or accesses */
};

struct kd_host {
	pid_t spawner;
	int spawn_fd;			/* driver's end towards the spawner */
	int fd[KD_MAX_PROCS];		/* driver's ends, one per slot */
	pid_t pid[KD_MAX_PROCS];	/* each slot's agent */
	int lifeline;			/* write end; agents see EOF when it closes */
	uint64_t faults[KD_MAX_PROCS];	/* since kd_host_take_faults() */
};

static int xfer(int fd, void *buf, size_t len, bool out)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return KD_AGENT_DIED;
		p += n;
		len -= n;
	}
	return 0;
}

/* The driver's pid, which names the files: set before the spawner forks, so agents have it. */
static pid_t driver_pid;

const char *kd_regular_files_dir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/var/tmp";
}

void kd_file_path(int i, char *buf, size_t size)
{
	snprintf(buf, size, "%s/mmprim-kdiff-%d-%d",
		 kd_file_shmem(i) ? "/dev/shm" : kd_regular_files_dir(), (int)driver_pid, i);
}

/*
 * A run killed outright (a timeout's SIGKILL) leaves its files behind: remove
 * those whose driver is gone, so that /dev/shm does not fill up over a soak.
 */
static void remove_dead_runs_files(void)
{
	const char *dirs[] = { "/dev/shm", kd_regular_files_dir() };

	for (unsigned int d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *e;

		while (dir && (e = readdir(dir))) {
			char path[512];
			int pid, i, end = 0;

			if (sscanf(e->d_name, "mmprim-kdiff-%d-%d%n", &pid, &i, &end) != 2 ||
			    e->d_name[end] || pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[d], e->d_name);
			unlink(path);
		}
		if (dir)
			closedir(dir);
	}
}

/* ---- the agent side ---------------------------------------------------------- */

/* Reads and writes of the window go through guarded_copy() (host_fault.h). */

static uint8_t *agent_buf;

/*
 * One open file per file and process, opened on first use and kept (a forked
 * agent shares its parent's): mappings of one open file may merge, as the
 * library's mappings of one mmp_file do; two open()s would be two files to
 * the kernel's VMA merging.
 */
static int file_fd[KD_MAX_FILES] = { -1, -1, -1 };

static int open_file(int i)
{
	char path[256];

	if (i < 0 || i >= KD_MAX_FILES) {
		errno = EBADF;
		return -1;
	}
	if (file_fd[i] < 0) {
		kd_file_path(i, path, sizeof(path));
		file_fd[i] = open(path, O_RDWR | O_CLOEXEC);
	}
	return file_fd[i];
}

/* A file op of @op in the agent, on the process's open file. */
static int64_t do_file_op(const struct kd_op *op)
{
	int fd = open_file(op->proc2);
	int64_t r = 0;

	if (fd < 0)
		return -errno;
	switch (op->kind) {
	case KD_MMAP_FILE:
		r = syscall(SYS_mmap, op->addr, op->len, op->prot, op->flags, fd, op->addr2);
		break;
	case KD_FTRUNCATE:
		r = ftruncate(fd, op->len);
		break;
	case KD_FWRITE:
		for (uint64_t i = 0; i < op->len; i++)
			agent_buf[i] = kd_data_byte(op->seed, i);
		for (uint64_t done = 0; done < op->len && r >= 0; ) {
			r = pwrite(fd, agent_buf + done, op->len - done, op->addr + done);
			if (r > 0)
				done += r;
			r = r < 0 ? r : (int64_t)done;
		}
		break;
	}
	if (r == -1)
		r = -errno;
	return r;
}

static int64_t do_syscall(const struct kd_op *op)
{
	long r;

	switch (op->kind) {
	case KD_MMAP: {
		int flags = MAP_ANONYMOUS | (op->flags & ~MMP_MAP_DROPPABLE);

		/* MAP_DROPPABLE is a mapping type of its own, in place of MAP_PRIVATE. */
		if (op->flags & MMP_MAP_DROPPABLE)
			flags |= MMP_MAP_DROPPABLE;
		else if (!(op->flags & MAP_SHARED))
			flags |= MAP_PRIVATE;
		r = syscall(SYS_mmap, op->addr, op->len, op->prot, flags, -1, 0);
		break;
	}
	case KD_MMAP_FILE:
	case KD_FTRUNCATE:
	case KD_FWRITE:
		return do_file_op(op);
	case KD_MUNMAP:
		r = syscall(SYS_munmap, op->addr, op->len);
		break;
	case KD_MPROTECT:
		r = syscall(SYS_mprotect, op->addr, op->len, op->prot);
		break;
	case KD_MREMAP:
		r = syscall(SYS_mremap, op->addr, op->len, op->len2, op->flags, op->addr2);
		break;
	case KD_MADVISE:
		r = syscall(SYS_madvise, op->addr, op->len, op->flags);
		break;
	case KD_MSYNC:
		r = syscall(SYS_msync, op->addr, op->len, op->flags);
		break;
	case KD_MLOCK:
		if (op->flags == 2)
			r = syscall(SYS_munlock, op->addr, op->len);
		else
			r = syscall(SYS_mlock2, op->addr, op->len, op->flags == 1 ? 1 : op->flags);
		break;
	case KD_MSEAL:
		r = syscall(462 /* mseal */, op->addr, op->len, op->flags);
		break;
	case KD_THP_DISABLE:
		r = prctl(PR_SET_THP_DISABLE, op->flags & 1, op->flags & ~1u, 0, 0);
		break;
	default:
		return -ENOSYS;
	}
	return r == -1 ? -errno : r;
}

static int agent_maps(struct kd_vma *v, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &start, &end, perms) != 3)
			continue;
		if (end <= KD_WIN_BASE || start >= KD_WIN_END || n == max)
			continue;
		v[n].start = start;
		v[n].end = end;
		v[n].prot = (perms[0] == 'r' ? MMP_PROT_READ : 0) |
			    (perms[1] == 'w' ? MMP_PROT_WRITE : 0) |
			    (perms[2] == 'x' ? MMP_PROT_EXEC : 0);
		n++;
	}
	fclose(f);
	return n;
}

/* The page faults this thread has taken (its min_flt). */
static uint64_t min_flt(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : (uint64_t)ru.ru_minflt;
}

/*
 * Fault in and lock the agent's own memory, everything outside the window:
 * then an op's faults, RSS and page tables are the window's alone, and page
 * reclaim (DAMON's pageout, for one) cannot take the agent's own pages and
 * make it fault on them later. mlock() writes into private writable memory,
 * which also breaks the copy-on-write a fork left behind, in parent and
 * child. Where mlock is refused (RLIMIT_MEMLOCK), faulting in is the best
 * that can be done.
 */
/* Grow the stack by @bytes below here, so that locking it covers the agent's deepest calls. */
static __attribute__((noinline)) void grow_stack(size_t bytes)
{
	volatile char deep[256 << 10];

	for (size_t i = 0; i < sizeof(deep) && i < bytes; i += 4096)
		deep[i] = 0;
}

static void agent_settle(void)
{
	FILE *f;
	char line[512];

	grow_stack(256 << 10);
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char perms[8], name[256] = "";

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %255s", &start, &end, perms, name) < 3)
			continue;
		if (end > KD_WIN_BASE - (2ULL << 20) && start < KD_THREAD_BASE + (64ULL << 20))
			continue;	/* the window and what lies around it */
		/*
		 * Not the special mappings, nor reservations far larger than the
		 * agent's working set (a sanitizer's shadow, the simulated phys).
		 */
		if (perms[0] != 'r' || !strcmp(name, "[vvar]") || !strcmp(name, "[vvar_vclock]") ||
		    !strcmp(name, "[vsyscall]") || end - start > (1ULL << 30))
			continue;
		if (mlock((void *)start, end - start))
			madvise((void *)start, end - start,
				perms[1] == 'w' && perms[3] == 'p' ? 23 /* MADV_POPULATE_WRITE */ :
								     22 /* MADV_POPULATE_READ */);
	}
	fclose(f);
}

/* What the kernel shows of this process: the window's smaps and pagemap, and the status. */
static int64_t agent_state(struct kd_state *st)
{
	FILE *f = fopen("/proc/self/status", "r");
	int fd, err = 0;

	memset(st, 0, offsetof(struct kd_state, vmas));
	if (!f || kd_parse_status(f, &st->status))
		err = -EIO;
	if (f)
		fclose(f);
	f = fopen("/proc/self/smaps", "r");
	if (!f || kd_parse_smaps(f, st) < 0)
		err = -EIO;
	if (f)
		fclose(f);
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, st->pagemap, sizeof(st->pagemap), KD_WIN_BASE / KD_PAGE * 8) !=
			      (ssize_t)sizeof(st->pagemap))
		err = -EIO;
	if (fd >= 0)
		close(fd);
	for (uint64_t i = 0; i < KD_NPAGES; i++)
		st->pagemap[i] &= KD_PM_FLAGS;
	return err;
}

static void agent_loop(int fd, int lifeline, int *slot_fds) __attribute__((noreturn));

static void agent_loop(int fd, int lifeline, int *slot_fds)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = lifeline, .events = POLLIN } };
		struct reply rep = { 0 };
		uint64_t npages, len;

		struct msg m;

		if (poll(p, 2, -1) < 0 && errno == EINTR)
			continue;
		if (p[1].revents || xfer(fd, &m, sizeof(m), false))
			_exit(0);
		len = m.op.len;
		npages = (len + KD_PAGE - 1) / KD_PAGE;
		rep.faults = min_flt();
		switch (m.cmd) {
		case CMD_SYSCALL:
			rep.ret = do_syscall(&m.op);
			break;
		case CMD_READ:
			/* A status byte per page touched, then the bytes (zeros where it faulted). */
			npages = kd_pages_touched(m.op.addr, len);
			rep.datalen = npages + len;
			memset(agent_buf, 0, rep.datalen);
			for (uint64_t off = 0, i = 0; off < len; i++) {
				uint64_t n = kd_chunk(m.op.addr + off, len - off);

				int sig = guarded_copy_sig(agent_buf + npages + off,
							   (void *)(m.op.addr + off), n);

				agent_buf[i] = !sig ? KD_PAGE_OK : sig == SIGBUS ? KD_PAGE_BUS : KD_PAGE_SEGV;
				off += n;
			}
			break;
		case CMD_FREAD: {
			int f = open_file(m.op.proc2);
			ssize_t n = 0, got = 0;

			if (f < 0) {
				rep.ret = -errno;
				break;
			}
			while (got < (ssize_t)len &&
			       (n = pread(f, agent_buf + got, len - got, m.op.addr + got)) > 0)
				got += n;
			rep.ret = n < 0 ? -errno : got;
			rep.datalen = got;
			break;
		}
		case CMD_WRITE:
			if (xfer(fd, agent_buf, m.datalen, false))
				_exit(1);
			for (uint64_t off = 0; off < len; ) {
				uint64_t n = kd_chunk(m.op.addr + off, len - off);

				int sig = guarded_copy_sig((void *)(m.op.addr + off), agent_buf + off, n);

				if (sig) {
					rep.ret = sig == SIGBUS ? -EIO : -EFAULT;
					break;
				}
				off += n;
			}
			break;
		case CMD_TOUCH:
			/*
			 * Fault the pages in as GUP does for a pin: MADV_POPULATE_WRITE
			 * (FOLL_WRITE, breaking COW, checking the VMA's permission before
			 * any fault) or _READ. Only unsharing a page a read pin needs
			 * (FOLL_PIN) is beyond it.
			 */
			rep.ret = syscall(SYS_madvise, m.op.addr, len * KD_PAGE,
					  m.op.flags ? 23 /* MADV_POPULATE_WRITE */ :
						       22 /* MADV_POPULATE_READ */) ? -EFAULT : (int64_t)len;
			break;
		case CMD_STATE:
			rep.ret = agent_state((struct kd_state *)agent_buf);
			rep.datalen = rep.ret ? 0 : sizeof(struct kd_state);
			break;
		case CMD_MAPS:
			rep.ret = agent_maps((struct kd_vma *)agent_buf, KD_MAX_VMAS);
			rep.datalen = rep.ret > 0 ? rep.ret * sizeof(struct kd_vma) : 0;
			break;
		case CMD_FORK: {
			pid_t pid = fork();

			agent_settle();	/* in both: the fork left the agent's memory COW */
			if (pid == 0) {
				fd = slot_fds[m.slot];
				continue;	/* the child answers on its own slot */
			}
			rep.ret = pid < 0 ? -errno : pid;
			break;
		}
		case CMD_EXIT:
			xfer(fd, &rep, sizeof(rep), true);
			_exit(0);
		default:
			rep.ret = -ENOSYS;
		}
		/* The faults of the command itself: its system call or its accesses. */
		rep.faults = m.cmd == CMD_SYSCALL || m.cmd == CMD_READ || m.cmd == CMD_WRITE ||
				     m.cmd == CMD_TOUCH ? min_flt() - rep.faults : 0;
		if (xfer(fd, &rep, sizeof(rep), true) ||
		    (rep.datalen && xfer(fd, agent_buf, rep.datalen, true)))
			_exit(1);
	}
}

/*
 * Every agent on one CPU. A page faulted in waits in its CPU's LRU batch
 * (lru_add) until that batch drains, and MADV_PAGEOUT and MADV_COLD drain
 * only the batch of the CPU they run on (lru_add_drain) before they isolate
 * the pages: a page still batched on another CPU is skipped. An agent the
 * scheduler moved would keep pages the library, which batches nothing, takes.
 */
static void pin_to_one_cpu(void)
{
	int cpu = sched_getcpu();	/* where it is: runs side by side spread out */
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void spawner_loop(int spawn_fd, int lifeline, int *slot_fds) __attribute__((noreturn));

static void spawner_loop(int spawn_fd, int lifeline, int *slot_fds)
{
	/* Agents are reaped by init: nobody waits for them. */
	signal(SIGCHLD, SIG_IGN);
	pin_to_one_cpu();
	host_fault_catch();
	/* Room for the largest reply: a read with its statuses, the maps, or the state. */
	agent_buf = malloc(KD_MAX_IO + KD_MAX_IO / KD_PAGE + 2 + KD_MAX_VMAS * sizeof(struct kd_vma) +
			   sizeof(struct kd_state));
	if (!agent_buf)
		_exit(1);
	for (;;) {
		struct pollfd p[2] = { { .fd = spawn_fd, .events = POLLIN },
				       { .fd = lifeline, .events = POLLIN } };
		struct reply rep = { 0 };
		struct msg m;
		pid_t pid;

		if (poll(p, 2, -1) < 0 && errno == EINTR)
			continue;
		if (p[1].revents || xfer(spawn_fd, &m, sizeof(m), false))
			_exit(0);
		pid = fork();
		if (pid == 0) {
			close(spawn_fd);
			agent_settle();
			agent_loop(slot_fds[m.slot], lifeline, slot_fds);
		}
		rep.ret = pid < 0 ? -errno : pid;
		if (xfer(spawn_fd, &rep, sizeof(rep), true))
			_exit(1);
	}
}

/* ---- the driver side --------------------------------------------------------- */

struct kd_host *kd_host_start(void)
{
	struct kd_host *h = calloc(1, sizeof(*h));
	int sv[2], agent_fds[KD_MAX_PROCS], spawn_sv[2], life[2];

	if (!h)
		return NULL;
	driver_pid = getpid();
	remove_dead_runs_files();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, spawn_sv) || pipe2(life, O_CLOEXEC))
		goto fail;
	for (int i = 0; i < KD_MAX_PROCS; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			goto fail;
		h->fd[i] = sv[0];
		agent_fds[i] = sv[1];
	}
	/* The window must be free on the host, with a gap on both sides. */
	void *probe = mmap((void *)(KD_WIN_BASE - (2 << 20)), KD_WIN_SIZE + (4 << 20), PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE | MAP_NORESERVE, -1, 0);
	if (probe != (void *)(KD_WIN_BASE - (2 << 20))) {
		fprintf(stderr, "kdiff: the window %#llx is not free on this host\n", KD_WIN_BASE);
		goto fail;
	}
	munmap(probe, KD_WIN_SIZE + (4 << 20));
	fflush(NULL);
	h->spawner = fork();
	if (h->spawner < 0)
		goto fail;
	if (h->spawner == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(spawn_sv[0]);
		close(life[1]);
		for (int i = 0; i < KD_MAX_PROCS; i++)
			close(h->fd[i]);
		spawner_loop(spawn_sv[1], life[0], agent_fds);
	}
	close(spawn_sv[1]);
	close(life[0]);
	for (int i = 0; i < KD_MAX_PROCS; i++)
		close(agent_fds[i]);
	h->spawn_fd = spawn_sv[0];
	h->lifeline = life[1];
	return h;
fail:
	free(h);
	return NULL;
}

void kd_host_stop(struct kd_host *h)
{
	if (!h)
		return;
	close(h->lifeline);
	close(h->spawn_fd);
	for (int i = 0; i < KD_MAX_PROCS; i++)
		close(h->fd[i]);
	waitpid(h->spawner, NULL, 0);
	for (int i = 0; i < KD_MAX_FILES; i++) {
		char path[256];

		kd_file_path(i, path, sizeof(path));
		unlink(path);
	}
	free(h);
}

/*
 * Every agent holds every slot's socket, so a dead agent shows as silence,
 * not end of file: a reply that takes a minute means it died.
 */
static bool reply_ready(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 60 * 1000) == 1;
}

static int64_t call(struct kd_host *h, int fd, int cmd, int slot, const struct kd_op *op,
		    const void *data, uint64_t datalen, void *out, uint64_t outmax)
{
	struct msg m = { .cmd = cmd, .slot = slot, .datalen = datalen };
	struct reply rep;

	if (op)
		m.op = *op;
	if (xfer(fd, &m, sizeof(m), true) || (datalen && xfer(fd, (void *)data, datalen, true)) ||
	    !reply_ready(fd) ||
	    xfer(fd, &rep, sizeof(rep), false) || rep.datalen > outmax ||
	    (rep.datalen && xfer(fd, out, rep.datalen, false)))
		return KD_AGENT_DIED;
	if (cmd != CMD_SPAWN)
		h->faults[slot] += rep.faults;
	return rep.ret;
}

int kd_host_spawn(struct kd_host *h, int slot)
{
	int64_t r = call(h, h->spawn_fd, CMD_SPAWN, slot, NULL, NULL, 0, NULL, 0);

	if (r < 0)
		return (int)r;
	h->pid[slot] = (pid_t)r;
	return 0;
}

int kd_host_fork(struct kd_host *h, int slot, int child_slot)
{
	int64_t r = call(h, h->fd[slot], CMD_FORK, child_slot, NULL, NULL, 0, NULL, 0);

	if (r < 0)
		return (int)r;
	h->pid[child_slot] = (pid_t)r;
	return 0;
}

/*
 * The agent answers, then exits: its pages stay mapped until its exit_mmap,
 * and a process it shares them with (a fork) shows them shared in smaps (Pss)
 * until then. Wait for it to be gone (agents are reaped at once: SIGCHLD is
 * ignored), at most about 5 s.
 */
int kd_host_exit(struct kd_host *h, int slot)
{
	int r = (int)call(h, h->fd[slot], CMD_EXIT, slot, NULL, NULL, 0, NULL, 0);

	for (int i = 0; r >= 0 && h->pid[slot] > 0 && i < 50000; i++) {
		if (kill(h->pid[slot], 0) && errno == ESRCH)
			break;
		usleep(100);
	}
	h->pid[slot] = 0;
	return r;
}

int64_t kd_host_syscall(struct kd_host *h, const struct kd_op *op)
{
	return call(h, h->fd[op->proc], CMD_SYSCALL, op->proc, op, NULL, 0, NULL, 0);
}

int kd_host_read(struct kd_host *h, int slot, uint64_t addr, uint64_t len, uint8_t *buf,
		 uint8_t *st)
{
	struct kd_op op = { .addr = addr, .len = len };
	uint64_t npages = kd_pages_touched(addr, len);
	static uint8_t tmp[KD_MAX_IO + KD_MAX_IO / KD_PAGE + 2];
	int64_t r;

	if (len > KD_MAX_IO)
		return -EINVAL;
	r = call(h, h->fd[slot], CMD_READ, slot, &op, NULL, 0, tmp, sizeof(tmp));
	if (r < 0)
		return (int)r;
	memcpy(st, tmp, npages);
	memcpy(buf, tmp + npages, len);
	return 0;
}

int64_t kd_host_fread(struct kd_host *h, int slot, int file, uint64_t off, uint64_t len,
		      uint8_t *buf)
{
	struct kd_op op = { .addr = off, .len = len, .proc2 = file };

	if (len > KD_MAX_IO)
		return -EINVAL;
	return call(h, h->fd[slot], CMD_FREAD, slot, &op, NULL, 0, buf, len);
}

int kd_host_write(struct kd_host *h, int slot, uint64_t addr, uint64_t len, const uint8_t *buf)
{
	struct kd_op op = { .addr = addr, .len = len };

	if (len > KD_MAX_IO)
		return -EINVAL;
	return (int)call(h, h->fd[slot], CMD_WRITE, slot, &op, buf, len, NULL, 0);
}

int kd_host_touch(struct kd_host *h, int slot, uint64_t addr, uint64_t npages, bool write)
{
	struct kd_op op = { .addr = addr, .len = npages, .flags = write };

	return (int)call(h, h->fd[slot], CMD_TOUCH, slot, &op, NULL, 0, NULL, 0);
}

int kd_host_maps(struct kd_host *h, int slot, struct kd_vma *v, int max)
{
	return (int)call(h, h->fd[slot], CMD_MAPS, slot, NULL, NULL, 0, v, max * sizeof(*v));
}

int kd_host_state(struct kd_host *h, int slot, struct kd_state *st)
{
	return (int)call(h, h->fd[slot], CMD_STATE, slot, NULL, NULL, 0, st, sizeof(*st));
}

uint64_t kd_host_take_faults(struct kd_host *h, int slot)
{
	uint64_t n = h->faults[slot];

	h->faults[slot] = 0;
	return n;
}
