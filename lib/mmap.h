/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Mapping and unmapping (lib/mmap.c): do_munmap, and populating a range. */
#ifndef MMP_MMAP_H
#define MMP_MMAP_H

#include "mm_types.h"

int do_munmap(struct mmp_space *s, uint64_t start, uint64_t end);
int populate_range(struct mmp_space *s, uint64_t start, uint64_t end, bool write);

#endif /* MMP_MMAP_H */
