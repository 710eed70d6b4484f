/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Structures that grow: copy what both sides know, zero or check the rest (lib/copy_struct.c). */
#ifndef MMP_COPY_STRUCT_H
#define MMP_COPY_STRUCT_H

#include <stddef.h>

/* Extensible structures (lib/copy_struct.c). */
int copy_struct_from_caller(void *dst, size_t ksize, const void *src, size_t usize,
			    size_t min_size);
void copy_struct_to_caller(void *dst, size_t usize, const void *src, size_t ksize);

#endif /* MMP_COPY_STRUCT_H */
