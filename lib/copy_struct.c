/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Extensible structures across the library boundary, as the kernel's
 * copy_struct_from_user(): the caller says how big its structure is, and the
 * two sides agree on the common prefix. See "Extensible structures" in
 * mmprim/mmprim.h.
 */
#include <string.h>

#include "compiler.h"
#include "copy_struct.h"

static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Input: the library's @ksize bytes at @dst from the caller's @usize at @src.
 * A shorter structure leaves the library's newer fields zero (their defaults);
 * a longer one must hold only zeros where the library knows no field.
 */
int copy_struct_from_caller(void *dst, size_t ksize, const void *src, size_t usize,
			    size_t min_size)
{
	if (usize < min_size)
		return -EINVAL;
	if (usize > ksize && !all_zero((const unsigned char *)src + ksize, usize - ksize))
		return -E2BIG;
	memset(dst, 0, ksize);
	memcpy(dst, src, MIN(ksize, usize));
	return 0;
}

/* Output: what fits of the library's @ksize bytes, zeros in the caller's tail. */
void copy_struct_to_caller(void *dst, size_t usize, const void *src, size_t ksize)
{
	memcpy(dst, src, MIN(ksize, usize));
	if (usize > ksize)
		memset((unsigned char *)dst + ksize, 0, usize - ksize);
}
