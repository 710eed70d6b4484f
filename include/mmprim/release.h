/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel releases a space models (MMP_OPT_KERNEL_VERSION) and the release
 * table: every rule of the model that changed between two releases, with the
 * release it changed in, the back ends it applies to, the switch whose
 * default it drives and its source. The README prints the same table; a test
 * keeps the two equal. Included by mmprim/mmprim.h; since libmmprim.so.1.3.
 */
#ifndef MMPRIM_RELEASE_H
#define MMPRIM_RELEASE_H

#include <mmprim/mmprim.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mmp_space;

/* The oldest and the newest release MMP_OPT_KERNEL_VERSION accepts (any patch level). */
#define MMP_KERNEL_OLDEST	MMP_KERNEL_VERSION(6, 12, 0)
#define MMP_KERNEL_NEWEST	MMP_KERNEL_VERSION(7, 1, 0)

/* mmp_release_rule.flags */
/* User space sees the change through system calls (results, errors, contents). */
#define MMP_RULE_SYSCALL_VISIBLE	(1u << 0)
/* Dated from the merge into Andrew Morton's mm tree, not from a release tag. */
#define MMP_RULE_INFERRED		(1u << 1)

/*
 * One row of the release table. A rule may take several rows, one per set of
 * back ends that got it in a different release; a space follows the rule when
 * any row naming its back end has a release at or below the space's.
 * Fields are only ever added at the end.
 */
struct mmp_release_rule {
	const char *name;	/* the rule, e.g. "pt_reclaim"; rows of one rule share it */
	unsigned int since;	/* MMP_KERNEL_VERSION of the first release with it */
	/*
	 * The back-end families of this row, space separated ("x86_64"), or
	 * NULL for every back end (a family is a back end's name up to its
	 * first '-': "x86_64-la57" is of "x86_64").
	 */
	const char *arches;
	int opt;		/* the switch (enum mmp_opt) whose default it drives, or -1 */
	unsigned int flags;	/* MMP_RULE_* */
	const char *what;	/* the behaviour from that release on, one line */
	const char *source;	/* author and commit or series title */
};

/* Row @i of the release table, in release order; NULL past its end. */
const struct mmp_release_rule *mmp_release_rule(unsigned int i);

/*
 * mmp_space_follows() - does @space follow the rule named @name, by its
 * release (MMP_OPT_KERNEL_VERSION) and back end? 1 or 0; -EINVAL for a NULL
 * argument, -ENOENT for a name the table lacks. A switch the rule drives may
 * still have been set by hand: mmp_space_get_opt() says what it comes to.
 */
int mmp_space_follows(struct mmp_space *space, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* MMPRIM_RELEASE_H */
