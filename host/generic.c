/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host data movement every machine has: the C library's memcpy and memset. */
#include <string.h>

#include "compiler.h"
#include "copy_ops.h"
#include "geometry.h"

static void generic_copy_page(void *dst, const void *src)
{
	memcpy(dst, src, PAGE_SIZE);
}

static void generic_clear_page(void *dst)
{
	memset(dst, 0, PAGE_SIZE);
}

/*
 * Page by page: glibc copies a large buffer backward when source and
 * destination share a page offset, which would turn an ascending run around.
 */
static void generic_copy_pages(void *dst, const void *src, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		memcpy((uint8_t *)dst + ((size_t)i << PAGE_SHIFT),
		       (const uint8_t *)src + ((size_t)i << PAGE_SHIFT), PAGE_SIZE);
}

static void generic_clear_pages(void *dst, unsigned int nr)
{
	memset(dst, 0, (size_t)nr << PAGE_SHIFT);
}

const struct mmp_copy_ops mmp_copy_generic = {
	.name = "generic",
	.description = "C library memcpy and memset",
	.copy_page = generic_copy_page,
	.clear_page = generic_clear_page,
	.copy_pages = generic_copy_pages,
	.clear_pages = generic_clear_pages,
};
