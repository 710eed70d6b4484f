/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host accesses with a fault caught, for the host processes that run the real
 * system calls beside the simulation (kdiff's agents, test_host_rules' child):
 * after host_fault_catch(), a SIGSEGV or SIGBUS inside guarded_copy() makes it
 * return false instead of killing the process. Any other fault still kills it.
 */
#ifndef MMP_TEST_HOST_FAULT_H
#define MMP_TEST_HOST_FAULT_H

#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_armed;

static void on_fault(int sig)
{
	if (fault_armed)
		siglongjmp(fault_jmp, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* From now on, in this process and the children it forks. */
__attribute__((unused))
static void host_fault_catch(void)
{
	struct sigaction sa = { .sa_handler = on_fault, .sa_flags = SA_NODEFER };

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/*
 * Copy @n bytes, at most to the end of a page, with a fault caught: 0, or
 * the signal the access raised (SIGSEGV, SIGBUS).
 *
 * Volatile orders fault_armed's stores only against other volatile accesses:
 * without the compiler barriers, an optimizing build sinks a small copy below
 * "fault_armed = 0" (gcc -O3 turned the one-byte copy of a touch into a load
 * and store after it), and the fault then kills the process instead of being
 * caught. The barriers also keep a copy into a dead local from being dropped.
 */
__attribute__((unused))
static int guarded_copy_sig(void *dst, const void *src, size_t n)
{
	int sig = sigsetjmp(fault_jmp, 1);

	if (sig) {
		fault_armed = 0;
		return sig;
	}
	fault_armed = 1;
	__asm__ volatile("" ::: "memory");
	/*
	 * A fault jumps out of memcpy and abandons it. The range never crosses
	 * a page, so a write that faults stored nothing (the page is read-only
	 * or unmapped as a whole).
	 */
	memcpy(dst, src, n);
	__asm__ volatile("" ::: "memory");
	fault_armed = 0;
	return 0;
}

/* The same, true when no fault came. */
__attribute__((unused))
static bool guarded_copy(void *dst, const void *src, size_t n)
{
	return !guarded_copy_sig(dst, src, n);
}

#endif /* MMP_TEST_HOST_FAULT_H */
