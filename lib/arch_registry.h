/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How the registry (lib/arch.c) accepts a back end: the rules a struct
 * mmp_arch must keep to be registered, and a registry built from a list.
 * Internal, for lib/arch.c and the tests: the library's own list is fixed at
 * build time and every back end in it is valid, so a test can only see a
 * listed back end refused by building a registry from a list of its own.
 */
#ifndef MMP_ARCH_REGISTRY_H
#define MMP_ARCH_REGISTRY_H

#include "arch.h"

/* Room for any refusal: the rule and the values that break it, one line. */
#define ARCH_WHY_MAX	192

/*
 * The first rule @a breaks, written to @why without a newline, or NULL when
 * @a may be registered. @listed is the name arch/meson.build lists it under,
 * which it must carry, or NULL for a back end a test adds. Settings the
 * reference fills (mmp_arch_fill_generic) must have been filled: a cost
 * table or flush ceiling still missing then is the reference's fault.
 */
const char *arch_refusal(const struct mmp_arch *a, const char *listed, char why[ARCH_WHY_MAX]);

/*
 * The back ends of @list (@names: what the list calls each) that are valid,
 * filled from the reference, into @out in list order. Each refused one is
 * left out and named on stderr with the rule it breaks, one line each.
 * Returns how many were kept.
 */
unsigned int arch_fill_list(const struct mmp_arch *const *list, const char *const *names,
			    unsigned int n, struct mmp_arch *out);

#endif /* MMP_ARCH_REGISTRY_H */
