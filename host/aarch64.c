/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arm64 host data movement, compiled only on an aarch64 host:
 *
 *   ldp-stp   64 bytes per step in general registers, like the kernel's copy_page
 *   neon      64 bytes per step in q registers
 *   dc-zva    DC ZVA clears a block at a time (size from DCZID_EL0), ldp/stp copies
 *   stnp      ldnp/stnp: the non-temporal pair hints
 *
 * No fence is needed after stnp: non-temporal stores are still ordered by the
 * store-release (stlr) that publishes the page; only LDNP relaxes ordering, and
 * only for address dependencies.
 */
#include <arm_neon.h>

#include "compiler.h"
#include "copy_ops.h"
#include "geometry.h"

#define PAGE_BYTES(nr)	((size_t)(nr) << PAGE_SHIFT)

/* ---- ldp / stp ------------------------------------------------------------------- */

static void ldp_stp_copy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src, *end = s + n;

	for (; s < end; s += 64, d += 64)
		__asm__ volatile("ldp x2, x3, [%1]\n\t"
				 "ldp x4, x5, [%1, #16]\n\t"
				 "ldp x6, x7, [%1, #32]\n\t"
				 "ldp x8, x9, [%1, #48]\n\t"
				 "stp x2, x3, [%0]\n\t"
				 "stp x4, x5, [%0, #16]\n\t"
				 "stp x6, x7, [%0, #32]\n\t"
				 "stp x8, x9, [%0, #48]\n\t"
				 : : "r"(d), "r"(s)
				 : "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "memory");
}

static void stp_clear(void *dst, size_t n)
{
	uint8_t *d = dst, *end = d + n;

	for (; d < end; d += 64)
		__asm__ volatile("stp xzr, xzr, [%0]\n\t"
				 "stp xzr, xzr, [%0, #16]\n\t"
				 "stp xzr, xzr, [%0, #32]\n\t"
				 "stp xzr, xzr, [%0, #48]\n\t"
				 : : "r"(d) : "memory");
}

static void ldp_stp_copy_page(void *dst, const void *src)
{
	ldp_stp_copy(dst, src, PAGE_SIZE);
}

static void stp_clear_page(void *dst)
{
	stp_clear(dst, PAGE_SIZE);
}

static void ldp_stp_copy_pages(void *dst, const void *src, unsigned int nr)
{
	ldp_stp_copy(dst, src, PAGE_BYTES(nr));
}

static void stp_clear_pages(void *dst, unsigned int nr)
{
	stp_clear(dst, PAGE_BYTES(nr));
}

static const struct mmp_copy_ops mmp_copy_ldp_stp = {
	.name = "ldp-stp",
	.description = "ldp/stp of general registers, 64 bytes per step",
	.copy_page = ldp_stp_copy_page,
	.clear_page = stp_clear_page,
	.copy_pages = ldp_stp_copy_pages,
	.clear_pages = stp_clear_pages,
};

/* ---- NEON ------------------------------------------------------------------------------ */

static void neon_copy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	for (size_t off = 0; off < n; off += 64) {
		uint8x16_t a = vld1q_u8(s + off), b = vld1q_u8(s + off + 16);
		uint8x16_t c = vld1q_u8(s + off + 32), e = vld1q_u8(s + off + 48);

		vst1q_u8(d + off, a);
		vst1q_u8(d + off + 16, b);
		vst1q_u8(d + off + 32, c);
		vst1q_u8(d + off + 48, e);
	}
}

static void neon_clear(void *dst, size_t n)
{
	const uint8x16_t z = vdupq_n_u8(0);
	uint8_t *d = dst;

	for (size_t off = 0; off < n; off += 64) {
		vst1q_u8(d + off, z);
		vst1q_u8(d + off + 16, z);
		vst1q_u8(d + off + 32, z);
		vst1q_u8(d + off + 48, z);
	}
}

static void neon_copy_page(void *dst, const void *src)
{
	neon_copy(dst, src, PAGE_SIZE);
}

static void neon_clear_page(void *dst)
{
	neon_clear(dst, PAGE_SIZE);
}

static void neon_copy_pages(void *dst, const void *src, unsigned int nr)
{
	neon_copy(dst, src, PAGE_BYTES(nr));
}

static void neon_clear_pages(void *dst, unsigned int nr)
{
	neon_clear(dst, PAGE_BYTES(nr));
}

static const struct mmp_copy_ops mmp_copy_neon = {
	.name = "neon",
	.description = "NEON q-register loads and stores, 64 bytes per step",
	.copy_page = neon_copy_page,
	.clear_page = neon_clear_page,
	.copy_pages = neon_copy_pages,
	.clear_pages = neon_clear_pages,
};

/* ---- DC ZVA ---------------------------------------------------------------------------- */

/*
 * DCZID_EL0: BS (bits 3:0) is log2 of the block size in 4-byte words; DZP (bit
 * 4) set means DC ZVA is prohibited. Linux lets EL0 read it.
 */
static unsigned int zva_block_size(void)
{
	uint64_t dczid;

	__asm__ volatile("mrs %0, dczid_el0" : "=r"(dczid));
	if (dczid & (1u << 4))
		return 0;
	return 4u << (dczid & 0xf);
}

static bool have_dc_zva(void)
{
	unsigned int bs = zva_block_size();

	/* A page must be a whole number of blocks. */
	return bs && bs <= PAGE_SIZE;
}

static void zva_clear(void *dst, size_t n)
{
	static unsigned int bs;
	uint8_t *d = dst, *end = d + n;

	if (!__atomic_load_n(&bs, __ATOMIC_RELAXED))
		__atomic_store_n(&bs, zva_block_size(), __ATOMIC_RELAXED);
	for (; d < end; d += bs)
		__asm__ volatile("dc zva, %0" : : "r"(d) : "memory");
}

static void zva_clear_page(void *dst)
{
	zva_clear(dst, PAGE_SIZE);
}

static void zva_clear_pages(void *dst, unsigned int nr)
{
	zva_clear(dst, PAGE_BYTES(nr));
}

static const struct mmp_copy_ops mmp_copy_dc_zva = {
	.name = "dc-zva",
	.description = "DC ZVA clears by DCZID_EL0 block; ldp/stp copies",
	.usable = have_dc_zva,
	.copy_page = ldp_stp_copy_page,
	.clear_page = zva_clear_page,
	.copy_pages = ldp_stp_copy_pages,
	.clear_pages = zva_clear_pages,
};

/* ---- ldnp / stnp ------------------------------------------------------------------------ */

static void ldnp_stnp_copy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src, *end = s + n;

	for (; s < end; s += 64, d += 64)
		__asm__ volatile("ldnp x2, x3, [%1]\n\t"
				 "ldnp x4, x5, [%1, #16]\n\t"
				 "ldnp x6, x7, [%1, #32]\n\t"
				 "ldnp x8, x9, [%1, #48]\n\t"
				 "stnp x2, x3, [%0]\n\t"
				 "stnp x4, x5, [%0, #16]\n\t"
				 "stnp x6, x7, [%0, #32]\n\t"
				 "stnp x8, x9, [%0, #48]\n\t"
				 : : "r"(d), "r"(s)
				 : "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "memory");
}

static void stnp_clear(void *dst, size_t n)
{
	uint8_t *d = dst, *end = d + n;

	for (; d < end; d += 64)
		__asm__ volatile("stnp xzr, xzr, [%0]\n\t"
				 "stnp xzr, xzr, [%0, #16]\n\t"
				 "stnp xzr, xzr, [%0, #32]\n\t"
				 "stnp xzr, xzr, [%0, #48]\n\t"
				 : : "r"(d) : "memory");
}

static void stnp_copy_page(void *dst, const void *src)
{
	ldnp_stnp_copy(dst, src, PAGE_SIZE);
}

static void stnp_clear_page(void *dst)
{
	stnp_clear(dst, PAGE_SIZE);
}

static void stnp_copy_pages(void *dst, const void *src, unsigned int nr)
{
	ldnp_stnp_copy(dst, src, PAGE_BYTES(nr));
}

static void stnp_clear_pages(void *dst, unsigned int nr)
{
	stnp_clear(dst, PAGE_BYTES(nr));
}

static const struct mmp_copy_ops mmp_copy_stnp = {
	.name = "stnp",
	.description = "ldnp/stnp non-temporal pairs",
	.copy_page = stnp_copy_page,
	.clear_page = stnp_clear_page,
	.copy_pages = stnp_copy_pages,
	.clear_pages = stnp_clear_pages,
	.temporal = &mmp_copy_ldp_stp,
};

/*
 * Best first: the kernel's copy_page is ldp/stp, its clear_page DC ZVA. This is
 * the host's list (see host/copy.c).
 */
const struct mmp_copy_ops *const mmp_copy_host[] = {
	&mmp_copy_dc_zva,
	&mmp_copy_ldp_stp,
	&mmp_copy_neon,
	&mmp_copy_stnp,
	&mmp_copy_generic,
	NULL,
};
