// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The replay engine: tasks by pid, processes as simulated spaces, the order
 * of strace's lines turned into calls, and the totals a replay reports.
 *
 * execve gives the task a new space, and so does an exec a trace without
 * process events leaves out (exec_unseen()); fork, vfork-less clone and
 * clone3 without CLONE_VM mmp_fork() the parent's; CLONE_VM (threads, vfork,
 * posix_spawn) adds a task to the same space with a CPU on a host thread of
 * its own, so that a flush another thread causes is a shootdown. The replay
 * itself stays sequential, in the trace's order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "engine.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void rp_count(struct rp_reason *tab, int *nr, const char *what, uint64_t n)
{
	int i;

	for (i = 0; i < *nr; i++)
		if (!strcmp(tab[i].what, what))
			break;
	if (i == *nr) {
		if (*nr == RP_MAX_REASONS)
			i = *nr - 1;	/* the last row collects the rest */
		else
			(*nr)++;
		snprintf(tab[i].what, sizeof(tab[i].what), "%s", i < RP_MAX_REASONS - 1 ? what : "other");
	}
	tab[i].n += n;
}

void rp_input_error(struct rp_engine *e, const char *fmt, ...)
{
	va_list ap;

	e->res->bad_input++;
	if (e->in_call) {
		rp_count(e->res->reasons, &e->res->nr_reasons, "bad input", 1);
		e->res->skipped++;
	}
	e->in_call = false;
	if (e->set->quiet)
		return;
	fprintf(stderr, "%s:%lu: ", e->file, e->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void rp_skip(struct rp_engine *e, const char *fmt, ...)
{
	char buf[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	e->res->skipped++;
	rp_count(e->res->reasons, &e->res->nr_reasons, buf, 1);
}

void rp_note(struct rp_engine *e, const char *fmt, ...)
{
	char buf[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	rp_count(e->res->notes, &e->res->nr_notes, buf, 1);
}

static void verify(struct rp_engine *e, struct mmp_space *s)
{
	int err = mmp_space_verify(s);

	if (err && !e->res->verify)
		e->res->verify = err;
}

void rp_mismatch(struct rp_engine *e, const char *fmt, ...)
{
	struct rp_result *r = e->res;
	va_list ap;

	r->mismatches++;
	if (r->nr_shown < RP_MAX_MISMATCHES) {
		struct rp_mismatch *m = &r->shown[r->nr_shown++];

		snprintf(m->where, sizeof(m->where), "%s:%lu", e->file, e->line);
		va_start(ap, fmt);
		vsnprintf(m->what, sizeof(m->what), fmt, ap);
		va_end(ap);
	}
	/* The library answered differently: check the space is still sound. */
	if (e->cur && e->cur->proc && e->verify_budget > 0) {
		e->verify_budget--;
		verify(e, e->cur->proc->space);
	}
}

/* ---- processes ---- */

static struct rp_proc *proc_wrap(struct rp_engine *e, struct mmp_space *s)
{
	struct rp_proc *p = calloc(1, sizeof(*p));

	if (!p) {
		mmp_space_destroy(s);
		return NULL;
	}
	p->space = s;
	p->id = ++e->next_proc_id;
	e->res->processes++;
	return p;
}

static struct rp_proc *proc_new(struct rp_engine *e)
{
	const struct rp_config *cfg = e->cfg;
	struct mmp_space_config sc = { .arch = cfg->arch };
	struct mmp_space *s;
	int err = mmp_space_create(e->phys, &sc, &s);

	if (err) {
		fprintf(stderr, "mmprim-replay: cannot create a %s space: %s\n", cfg->arch,
			mmp_strerror(err));
		return NULL;
	}
	for (int i = 0; i < cfg->nr_opts; i++)
		mmp_space_set_opt(s, cfg->opt[i], cfg->value[i]);
	if (cfg->thp >= 0) {
		mmp_space_set_thp(s, MMP_PMD_ORDER, cfg->thp);
		for (unsigned int o = 2; cfg->thp_all_orders && o < MMP_PMD_ORDER; o++)
			mmp_space_set_thp(s, o, cfg->thp);
	}
	return proc_wrap(e, s);
}

/* The totals of VMAs, RSS and VmPTE over the live spaces, after @p changed. */
static void proc_stat(struct rp_engine *e, struct rp_proc *p, bool gone)
{
	struct rp_result *r = e->res;
	struct mmp_space_stat st = { 0 };

	if (!gone)
		mmp_space_stat(p->space, &st);
	e->tot_vmas += st.nr_vmas - p->last.nr_vmas;
	e->tot_rss += (st.rss_anon_pages - p->last.rss_anon_pages) * MMP_PAGE_SIZE;
	e->tot_pte += st.pgtable_bytes - p->last.pgtable_bytes;
	p->last = st;
	if (e->tot_vmas > r->vmas_peak)
		r->vmas_peak = e->tot_vmas;
	if (e->tot_rss > r->rss_peak)
		r->rss_peak = e->tot_rss;
	if (e->tot_pte > r->pte_peak)
		r->pte_peak = e->tot_pte;
}

/*
 * The last task of @p is gone: add its counters (the calls and touches the
 * replay made; the exit teardown that follows is not counted) and destroy it.
 */
static void proc_put(struct rp_engine *e, struct rp_proc *p)
{
	struct mmp_counters c;
	double ns = 0;

	if (--p->nr_tasks > 0)
		return;
	verify(e, p->space);
	/* Tables in a grace period were counted when queued: no need to wait for it. */
	mmp_space_counters(p->space, &c);
	for (int i = 0; i < MMP_NR_COUNTERS; i++)
		e->res->counters.v[i] += c.v[i];
	if (!mmp_modeled_ns(p->space, &c, &ns))
		e->res->modeled_ns += ns;
	proc_stat(e, p, true);
	if (e->set->smaps) {
		/* What the process held when its last task left, before the teardown. */
		fprintf(e->set->smaps, "# %s, %s: a process exits (%s:%lu)\n", e->res->trace,
			e->cfg->label, e->file ? e->file : "end", e->line);
		mmp_space_smaps(p->space, e->set->smaps);
	}
	mmp_space_destroy(p->space);
	rp_ranges_free(&p->skipped);
	free(p);
}

/* ---- tasks ---- */

struct task_op {
	struct rp_task *t;
	struct rp_proc *proc;	/* attach to it; NULL: detach */
};

static void task_attach_fn(void *arg)
{
	struct task_op *op = arg;

	if (op->t->cpu) {
		mmp_cpu_detach(op->t->cpu);
		op->t->cpu = NULL;
	}
	if (op->proc && mmp_cpu_attach(op->proc->space, &op->t->cpu))
		op->t->cpu = NULL;
}

static void on_task(struct rp_task *t, void (*fn)(void *), void *arg)
{
	if (t->worker)
		rp_worker_run(t->worker, fn, arg);
	else
		fn(arg);
}

/* Move @t to @p (NULL: none), its CPU with it. */
static void task_set_proc(struct rp_engine *e, struct rp_task *t, struct rp_proc *p)
{
	struct task_op op = { t, p };
	struct rp_proc *old = t->proc;

	on_task(t, task_attach_fn, &op);
	if (p && !t->cpu)
		rp_note(e, "task without a CPU (more than 64 in a space)");
	if (p)
		p->nr_tasks++;
	t->proc = p;
	if (old)
		proc_put(e, old);
}

static struct rp_task *task_new(struct rp_engine *e, int pid, struct rp_proc *p, bool own_thread)
{
	struct rp_task *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (e->nr_tasks == e->cap_tasks) {
		int cap = e->cap_tasks ? 2 * e->cap_tasks : 16;
		struct rp_task **v = realloc(e->tasks, (size_t)cap * sizeof(*v));

		if (!v) {
			free(t);
			return NULL;
		}
		e->tasks = v;
		e->cap_tasks = cap;
	}
	t->pid = pid;
	t->loader_ago = -1;
	if (own_thread) {
		t->worker = rp_worker_start();
		if (!t->worker)
			rp_note(e, "no host thread for a CLONE_VM task: its CPU runs on the main thread");
	}
	e->tasks[e->nr_tasks++] = t;
	e->res->threads++;
	task_set_proc(e, t, p);
	return t;
}

static void task_exit(struct rp_engine *e, struct rp_task *t)
{
	for (int i = 0; i < e->nr_tasks; i++) {
		if (e->tasks[i] == t) {
			e->tasks[i] = e->tasks[--e->nr_tasks];
			break;
		}
	}
	if (e->last_task == t)
		e->last_task = NULL;
	if (e->cur == t)
		e->cur = NULL;
	task_set_proc(e, t, NULL);
	rp_worker_stop(t->worker);
	free(t->pending);
	free(t);
}

/* execve: the task leaves its space for a new, empty one. */
static void task_exec(struct rp_engine *e, struct rp_task *t)
{
	struct rp_proc *p = proc_new(e);

	if (p)
		task_set_proc(e, t, p);
}

struct rp_task *rp_task_find(struct rp_engine *e, int pid)
{
	if (e->last_task && e->last_task->pid == pid)
		return e->last_task;
	for (int i = 0; i < e->nr_tasks; i++) {
		if (e->tasks[i]->pid == pid) {
			e->last_task = e->tasks[i];
			return e->tasks[i];
		}
	}
	return NULL;
}

static bool is_clone(const char *name)
{
	return !strcmp(name, "clone") || !strcmp(name, "clone3") || !strcmp(name, "fork") ||
	       !strcmp(name, "vfork");
}

/* Does the clone-like call @name(@text) share the address space? */
static bool shares_vm(const char *name, const char *text)
{
	const char *p = text;

	if (!strcmp(name, "vfork"))
		return true;
	while ((p = strstr(p, "CLONE_VM"))) {
		p += strlen("CLONE_VM");
		if (*p != '_' && (*p < 'A' || *p > 'Z'))
			return true;
	}
	return false;
}

struct fork_op {
	struct mmp_space *parent, *child;
	int err;
};

static void fork_fn(void *arg)
{
	struct fork_op *op = arg;

	op->err = mmp_fork(op->parent, &op->child);
}

/* @parent's clone-like call made @pid. */
static void do_clone(struct rp_engine *e, struct rp_task *parent, int pid, bool vm)
{
	struct rp_proc *p = parent->proc;

	if (rp_task_find(e, pid)) {
		rp_note(e, "clone child already known");
		return;
	}
	if (!p)
		return;		/* a parent without a space: its child comes up as unknown */
	if (!vm) {
		struct fork_op op = { p->space, NULL, 0 };

		/* fork write-protects the parent on the parent's CPU. */
		on_task(parent, fork_fn, &op);
		if (op.err) {
			rp_mismatch(e, "fork: replay %s", mmp_strerror(op.err));
			return;
		}
		p = proc_wrap(e, op.child);
		if (!p)
			return;
		p->has_heap = parent->proc->has_heap;
		/* The child's skipped mappings are the parent's. */
		if (parent->proc->skipped.nr) {
			size_t n = (size_t)parent->proc->skipped.nr * sizeof(*p->skipped.v);

			p->skipped.v = malloc(n);
			if (p->skipped.v) {
				memcpy(p->skipped.v, parent->proc->skipped.v, n);
				p->skipped.nr = p->skipped.cap = parent->proc->skipped.nr;
			}
		}
	}
	task_new(e, pid, p, vm);
	if (!vm)
		proc_stat(e, p, false);
	rp_source_child(e->src, parent->pid, pid);
}

/* A child that shows up while its parent's clone is unfinished: create it now. */
static struct rp_task *early_child(struct rp_engine *e, int pid)
{
	for (int i = 0; i < e->nr_tasks; i++) {
		struct rp_task *p = e->tasks[i];

		if (p->pending && is_clone(p->pending_name) && !p->early_child) {
			p->early_child = pid;
			do_clone(e, p, pid, shares_vm(p->pending_name, p->pending));
			return rp_task_find(e, pid);
		}
	}
	return NULL;
}

/* A line from a pid the trace has not introduced. */
static struct rp_task *task_get(struct rp_engine *e, int pid)
{
	struct rp_task *t = rp_task_find(e, pid);

	if (t)
		return t;
	if (!e->seen_root) {
		e->seen_root = true;
		return task_new(e, pid, proc_new(e), false);
	}
	t = early_child(e, pid);
	if (t)
		return t;
	rp_note(e, "task of unknown origin: a new empty space");
	return task_new(e, pid, proc_new(e), false);
}

/* ---- calls ---- */

/* Known calls with no effect on the address space (strace's %process, %memory). */
static const char *const no_effect[] = {
	"exit", "exit_group", "wait4", "waitid", "waitpid", "kill", "tkill", "tgkill",
	"rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open", "pidfd_send_signal", "pidfd_getfd",
	"unshare", "setns", "arch_prctl", "seccomp", "ptrace", "set_tid_address",
};

static const char *const not_modelled[] = {
	"mincore", "mbind",
	"set_mempolicy", "get_mempolicy", "set_mempolicy_home_node", "migrate_pages",
	"move_pages", "remap_file_pages", "pkey_mprotect", "pkey_alloc", "pkey_free",
	"shmat", "shmdt", "process_mrelease", "map_shadow_stack",
	"memfd_secret", "old_mmap", "subpage_prot", "cacheflush",
};

static bool in_list(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

static void memory_fn(void *arg)
{
	rp_memory_call(arg);
}

/* Calls that only a trace with strace's %process class shows. */
static bool is_process_call(const char *name)
{
	static const char *const names[] = { "execve", "execveat", "exit", "exit_group", "wait4",
					     "waitid" };

	return is_clone(name) || in_list(names, sizeof(names) / sizeof(names[0]), name);
}

/*
 * An exec the trace does not show (recorded without %process) leaves two marks: the new
 * image's brk(NULL) answers a break its process cannot have, and its ld.so maps objects
 * afresh, with glibc's MAP_COPY (MAP_PRIVATE|MAP_DENYWRITE on a file), a few calls after it
 * (or before, for a loader that maps before it reads the break). Both together are replayed
 * as execve. A moved break alone may be any call missing from the trace: the replay stops
 * there rather than report every brk after it as a mismatch.
 */
#define EXEC_WINDOW	16	/* calls of the task around the brk(NULL) */

static bool is_loader_mapping(const struct rp_line *l)
{
	return (!strcmp(l->name, "mmap") || !strcmp(l->name, "mmap2")) && l->nargs > 3 &&
	       l->has_ret && !l->err[0] && strstr(l->args[3], "MAP_DENYWRITE") &&
	       !strstr(l->args[3], "MAP_ANONYMOUS");
}

struct brk_op {
	struct rp_ctx *c;
	bool moved;
};

static void brk_moved_fn(void *arg)
{
	struct brk_op *op = arg;

	op->moved = rp_brk_moved(op->c);
}

/* A moved break no loader mapping explains: stop; main() says how to record the trace. */
static void exec_unproven(struct rp_engine *e, struct rp_task *t)
{
	snprintf(e->res->no_exec, sizeof(e->res->no_exec), "%s:%lu", t->exec_file, t->exec_line);
	e->stop = true;
}

/* Before @t's memory call @c: is it, or does it confirm, an exec the trace left out? */
static void exec_unseen(struct rp_engine *e, struct rp_task *t, struct rp_ctx *c)
{
	bool loader = is_loader_mapping(c->l), is_brk = !strcmp(c->l->name, "brk");
	struct brk_op op = { c, false };

	if (t->exec_window && loader) {
		t->exec_window = 0;
		e->res->inferred_execs++;
	} else if (t->exec_window && !--t->exec_window) {
		exec_unproven(e, t);
		return;
	}
	if (is_brk)
		on_task(t, brk_moved_fn, &op);
	if (op.moved) {
		if (t->exec_window) {
			exec_unproven(e, t);	/* the last one is still unexplained */
			return;
		}
		t->exec_file = e->file;
		t->exec_line = e->line;
		task_exec(e, t);
		if (t->loader_ago >= 0 && t->loader_ago < EXEC_WINDOW)
			e->res->inferred_execs++;
		else
			t->exec_window = EXEC_WINDOW;
	}
	if (loader)
		t->loader_ago = 0;
	else if (is_brk || t->loader_ago < 0 || ++t->loader_ago >= EXEC_WINDOW)
		t->loader_ago = -1;
}

static void csv_row(struct rp_engine *e, const char *name)
{
	fprintf(e->set->csv, "%s,%s,%llu,%s:%lu,%s,%llu,%llu,%llu\n", e->res->trace, e->cfg->label,
		(unsigned long long)e->seq, e->file, e->line, name,
		(unsigned long long)e->tot_vmas, (unsigned long long)e->tot_rss,
		(unsigned long long)e->tot_pte);
}

static void handle_call(struct rp_engine *e, struct rp_task *t, struct rp_line *l)
{
	struct rp_result *r = e->res;
	struct rp_ctx c = { e, t, l };

	if (l->kind == RP_BAD) {
		rp_input_error(e, "%s", l->why);
		return;
	}
	r->calls++;
	e->seq++;
	e->in_call = true;
	e->cur = t;
	if (is_process_call(l->name))
		e->process_events = true;
	if (!t->proc && strcmp(l->name, "execve")) {
		/* Its space could not be created (out of memory): nothing to replay on. */
		rp_skip(e, "task without a space");
	} else if (rp_is_memory_call(l->name)) {
		if (!e->process_events)
			exec_unseen(e, t, &c);
		if (e->stop) {
			e->in_call = false;
			return;
		}
		on_task(t, memory_fn, &c);
		if (t->proc)
			proc_stat(e, t->proc, false);
	} else if (!strcmp(l->name, "execve") || !strcmp(l->name, "execveat")) {
		r->replayed++;
		if (l->has_ret && !l->err[0])
			task_exec(e, t);
	} else if (is_clone(l->name)) {
		r->replayed++;
		if (t->early_child) {
			if (!l->has_ret || l->ret != t->early_child)
				rp_note(e, "clone resumed with another child than the one seen");
			t->early_child = 0;
		} else if (l->has_ret && l->ret > 0 && !l->err[0]) {
			bool vm = !strcmp(l->name, "vfork");

			for (int i = 0; i < l->nargs && !vm; i++)
				vm = shares_vm(l->name, l->args[i]);
			do_clone(e, t, (int)l->ret, vm);
		}
	} else if (in_list(no_effect, sizeof(no_effect) / sizeof(no_effect[0]), l->name)) {
		rp_skip(e, "no address-space effect (exit, wait4, kill, ...)");
	} else if (in_list(not_modelled, sizeof(not_modelled) / sizeof(not_modelled[0]), l->name)) {
		rp_skip(e, "%s not modelled", l->name);
	} else {
		rp_input_error(e, "unknown system call %s", l->name);
	}
	e->in_call = false;
	/* The state at the last call: what exit then tears down is not "the end". */
	r->vmas_end = e->tot_vmas;
	r->rss_end = e->tot_rss;
	r->pte_end = e->tot_pte;
	if (e->set->csv)
		csv_row(e, l->name);
}

/* Join an unfinished start with its resumed rest and replay the whole call. */
static void resume(struct rp_engine *e, struct rp_task *t, struct rp_line *l)
{
	size_t a, b;
	char *joined;
	struct rp_line whole;

	if (!t || !t->pending) {
		rp_input_error(e, "<... %s resumed> with no unfinished call", l->name);
		return;
	}
	if (strcmp(t->pending_name, l->name)) {
		rp_input_error(e, "<... %s resumed> but %s is unfinished (%s:%lu)", l->name,
			       t->pending_name, t->pending_file, t->pending_line);
		free(t->pending);
		t->pending = NULL;
		return;
	}
	a = strlen(t->pending);
	b = strlen(l->text);
	joined = malloc(a + b + 1);
	if (!joined)
		return;
	memcpy(joined, t->pending, a);
	memcpy(joined + a, l->text, b + 1);
	free(t->pending);
	t->pending = NULL;
	memset(&whole, 0, sizeof(whole));
	rp_parse_call(joined, &whole);
	whole.pid = l->pid;
	handle_call(e, t, &whole);
	free(joined);
}

static void line(struct rp_engine *e, char *s, int default_pid)
{
	struct rp_line l;
	struct rp_task *t;

	rp_parse_line(s, default_pid, &l);
	switch (l.kind) {
	case RP_BLANK:
	case RP_SIGNAL:
		return;
	case RP_BAD:
		rp_input_error(e, "%s", l.why);
		return;
	case RP_EXIT:
		/* A child may exit before its parent's clone returns. */
		t = rp_task_find(e, l.pid);
		if (!t)
			t = early_child(e, l.pid);
		if (t && t->exec_window)
			exec_unproven(e, t);	/* gone before ld.so showed */
		if (t)
			task_exit(e, t);
		return;
	case RP_RESUMED:
		resume(e, rp_task_find(e, l.pid), &l);
		return;
	case RP_UNFINISHED:
		t = task_get(e, l.pid);
		if (!t)
			return;
		if (t->pending)
			rp_input_error(e, "%s unfinished while %s (%s:%lu) is", l.name,
				       t->pending_name, t->pending_file, t->pending_line);
		free(t->pending);
		t->pending = strdup(l.text);
		memcpy(t->pending_name, l.name, sizeof(l.name));
		t->pending_file = e->file;
		t->pending_line = e->line;
		t->early_child = 0;
		return;
	case RP_CALL:
		t = task_get(e, l.pid);
		if (t)
			handle_call(e, t, &l);
		return;
	}
}

int rp_replay(struct rp_source *src, const struct rp_config *cfg, const struct rp_settings *set,
	      struct rp_result *res)
{
	struct rp_engine e = { .cfg = cfg, .set = set, .res = res, .src = src, .verify_budget = 10,
			       .files_lock = PTHREAD_MUTEX_INITIALIZER };
	const char *trace = res->trace;
	double t0 = now_s();
	int default_pid, err;
	char *s;

	memset(res, 0, sizeof(*res));
	res->trace = trace;
	res->cfg = cfg;
	/* The reservation is lazy, but a host (or qemu-user) may refuse a large one: halve it. */
	for (uint64_t bytes = set->phys_bytes; ; bytes /= 2) {
		err = mmp_phys_create(bytes, &e.phys);
		if (err != -ENOMEM || bytes <= (256ULL << 20) || bytes % (8ULL << 20))
			break;
	}
	if (err) {
		res->error = err;
		return err;
	}
	rp_source_rewind(src);
	while (!e.stop && rp_source_next(src, &s, &default_pid, &e.file, &e.line)) {
		res->lines++;
		line(&e, s, default_pid);
	}
	for (int i = 0; i < e.nr_tasks && !e.stop; i++)
		if (e.tasks[i]->exec_window)
			exec_unproven(&e, e.tasks[i]);
	/* A trace cut mid-call: what never resumed is lost. */
	for (int i = 0; i < e.nr_tasks && !e.stop; i++) {
		struct rp_task *t = e.tasks[i];

		if (t->pending) {
			e.file = t->pending_file;
			e.line = t->pending_line;
			rp_input_error(&e, "%s never resumed: the trace ends inside the call",
				       t->pending_name);
		}
	}
	if (e.nr_tasks)
		verify(&e, e.tasks[0]->proc->space);
	while (e.nr_tasks)
		task_exit(&e, e.tasks[e.nr_tasks - 1]);
	free(e.tasks);
	rp_files_free(&e);
	if (mmp_phys_destroy(e.phys))
		res->verify = res->verify ? res->verify : -EBUSY;
	res->host_s = now_s() - t0;
	return 0;
}
