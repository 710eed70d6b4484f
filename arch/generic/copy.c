/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host data movement every machine has: the C library's memcpy and memset. */
#include <string.h>

#include "internal.h"

static void generic_copy_page(void *dst, const void *src)
{
	memcpy(dst, src, PAGE_SIZE);
}

static void generic_clear_page(void *dst)
{
	memset(dst, 0, PAGE_SIZE);
}

const struct mmp_copy_ops mmp_copy_generic = {
	.name = "generic",
	.copy_page = generic_copy_page,
	.clear_page = generic_clear_page,
};
