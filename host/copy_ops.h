/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host data movement: the page copy and clear variants of the machine the
 * library runs on. Host code, not part of any simulated architecture: a
 * simulated arm64 on an x86-64 host copies with x86-64 instructions.
 */
#ifndef MMP_HOST_COPY_OPS_H
#define MMP_HOST_COPY_OPS_H

#include <stdbool.h>

/*
 * What a data-movement variant provides (host code for this machine). Pages are
 * 4 KiB and page aligned. Variants with non-temporal stores end with the fence
 * that orders them before the caller publishes the page with a store-release.
 */
struct mmp_copy_ops {
	const char *name;
	const char *description;
	bool (*usable)(void);	/* CPU features present on this host? NULL = always */
	void (*copy_page)(void *dst, const void *src);
	void (*clear_page)(void *dst);
	/* @nr consecutive pages in one call, ascending: string ops see the real size. */
	void (*copy_pages)(void *dst, const void *src, unsigned int nr);
	void (*clear_pages)(void *dst, unsigned int nr);
	/*
	 * A streaming (non-temporal) variant names the cache-allocating variant
	 * that process_huge_page uses near the target; NULL when this one is.
	 */
	const struct mmp_copy_ops *temporal;
};

/*
 * The variants this host can run code for, best first, "generic" last; NULL
 * ends it. Data movement is host code: every back end copies with this list,
 * whatever architecture it simulates (host/copy.c).
 */
extern const struct mmp_copy_ops *const mmp_copy_host[];
extern const struct mmp_copy_ops mmp_copy_generic;
/* The variant called @name, if this CPU can run it: 0, -ENOENT or -ENOTSUP. */
int copy_ops_find(const char *name, const struct mmp_copy_ops **out);
/* The first variant this CPU can run: a new space's default. */
const struct mmp_copy_ops *copy_ops_default(void);

#endif /* MMP_HOST_COPY_OPS_H */
