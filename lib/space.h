/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An address space's life (lib/space.c): creation, exit_mmap, mmgrab and mmdrop. */
#ifndef MMP_SPACE_H
#define MMP_SPACE_H

#include "mm_types.h"

void exit_mmap(struct mmp_space *s);
int space_alloc(struct mmp_phys *phys, const struct mmp_arch *arch, struct mmp_space **out);
void space_link(struct mmp_space *s);
void __mmdrop(struct mmp_space *s);

/* Keep the struct of @s (not its mappings) alive past its users' exit. */
static inline void mmgrab(struct mmp_space *s)
{
	__atomic_fetch_add(&s->mm_count, 1, __ATOMIC_RELAXED);
}

/* Drop a reference from mmgrab or the users'; the last one frees the struct. */
static inline void mmdrop(struct mmp_space *s)
{
	if (__atomic_sub_fetch(&s->mm_count, 1, __ATOMIC_ACQ_REL) == 0)
		__mmdrop(s);
}

#endif /* MMP_SPACE_H */
