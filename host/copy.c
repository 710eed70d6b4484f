/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host data movement: the list of copy/clear variants of this host and the
 * choice of one per space.
 *
 * Data movement is host code, not part of the simulated architecture: a
 * simulated arm64 running on an x86-64 host copies pages with x86-64
 * instructions, and the host's caches are what a cache-footprint bench
 * measures. So there is one list, mmp_copy_host, formed when the library is
 * built: host/x86_64.c on an x86-64 host, host/aarch64.c on an aarch64 host
 * (each ends its list with the generic variant), the generic variant alone
 * elsewhere. Every back end copies with it. Which entries run is decided at
 * start-up from CPUID (or DCZID_EL0): the first usable one is a new space's
 * default.
 */
#include <string.h>

#include "copy_ops.h"
#include "page_alloc.h"

/* host/meson.build compiles one of the host copy files exactly on these hosts. */
#if !defined(__x86_64__) && !defined(__aarch64__)
const struct mmp_copy_ops *const mmp_copy_host[] = {
	&mmp_copy_generic,
	NULL,
};
#endif

static bool copy_ops_usable(const struct mmp_copy_ops *op)
{
	return !op->usable || op->usable();
}

MMP_EXPORT int mmp_copy_variant_count(void)
{
	int n = 0;

	while (mmp_copy_host[n])
		n++;
	return n;
}

MMP_EXPORT const char *mmp_copy_variant_name(int index)
{
	if (index < 0 || index >= mmp_copy_variant_count())
		return NULL;
	return mmp_copy_host[index]->name;
}

const struct mmp_copy_ops *copy_ops_default(void)
{
	for (const struct mmp_copy_ops *const *op = mmp_copy_host; *op; op++)
		if (copy_ops_usable(*op))
			return *op;
	return &mmp_copy_generic;
}

int copy_ops_find(const char *name, const struct mmp_copy_ops **out)
{
	for (const struct mmp_copy_ops *const *op = mmp_copy_host; *op; op++) {
		if (strcmp((*op)->name, name))
			continue;
		if (!copy_ops_usable(*op))
			return -ENOTSUP;
		*out = *op;
		return 0;
	}
	return -ENOENT;
}

MMP_EXPORT int mmp_space_set_copy(struct mmp_space *s, const char *name)
{
	const struct mmp_copy_ops *op;
	int err;

	if (!s || !name)
		return -EINVAL;
	err = copy_ops_find(name, &op);
	if (err)
		return err;
	/* Faults read it once per copy: one aligned pointer store. */
	__atomic_store_n(&s->copy, op, __ATOMIC_RELEASE);
	return 0;
}

MMP_EXPORT const char *mmp_space_copy(const struct mmp_space *s)
{
	return s ? __atomic_load_n(&s->copy, __ATOMIC_ACQUIRE)->name : NULL;
}

/*
 * page_address(): where a frame's data lives in host memory, for tools that
 * measure the host's caches around a copy (the caller holds a pin on it).
 */
MMP_EXPORT void *mmp_page_address(struct mmp_phys *phys, uint64_t pfn)
{
	if (!phys || pfn >= phys->nr_pages)
		return NULL;
	return pfn_to_virt(phys, pfn);
}
