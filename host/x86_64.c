/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * x86-64 host data movement, compiled only on an x86-64 host. Each variant is
 * built for the instruction set it needs (target attributes) and offered only
 * when CPUID says the CPU has it:
 *
 *   rep-movsb   rep movsb / rep stosb (ERMS), what the kernel uses
 *   avx512      64-byte loads and stores
 *   avx512-nt   64-byte loads, non-temporal stores, sfence
 *   avx2        32-byte loads and stores
 *   avx2-nt     32-byte loads, non-temporal stores, sfence
 *   clzero      AMD clzero for clearing (non-temporal, sfence); rep movsb copies
 *
 * Non-temporal stores are weakly ordered: every variant that uses them ends
 * with sfence, so the caller's store-release that publishes the page (set_pmd_at,
 * set_ptes) cannot pass them.
 */
#include <cpuid.h>
#include <immintrin.h>

#include "compiler.h"
#include "copy_ops.h"
#include "geometry.h"

#define PAGE_BYTES(nr)	((size_t)(nr) << PAGE_SHIFT)

/* ---- CPUID ---------------------------------------------------------------------- */

/*
 * CPUID traps to the hypervisor under KVM (about 25 us a call seen here), and
 * every space creation asks: each answer is read once and kept. Racing first
 * readers store the same value.
 */
static bool cpuid_once(int *cache, bool (*read)(void))
{
	int v = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (v < 0) {
		v = read();
		__atomic_store_n(cache, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* ERMS: CPUID.(EAX=7,ECX=0):EBX bit 9. */
static bool read_erms(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 9));
}

static bool have_erms(void)
{
	static int erms = -1;

	return cpuid_once(&erms, read_erms);
}

static bool have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

static bool have_avx512(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f");
}

/* CLZERO: CPUID.(EAX=0x80000008):EBX bit 0, AMD only (Intel leaves it reserved). */
static bool read_clzero(void)
{
	unsigned int a, b, c, d;

	/* clang declares the result int, gcc unsigned int. */
	if ((unsigned int)__get_cpuid_max(0x80000000, NULL) < 0x80000008u)
		return false;
	__cpuid(0x80000008, a, b, c, d);
	return b & 1;
}

static bool have_clzero(void)
{
	static int clzero = -1;

	return cpuid_once(&clzero, read_clzero);
}

/* ---- rep movsb / rep stosb ---------------------------------------------------------- */

static void rep_movsb(void *dst, const void *src, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static void rep_stosb(void *dst, size_t n)
{
	__asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(0) : "memory");
}

static void movsb_copy_page(void *dst, const void *src)
{
	rep_movsb(dst, src, PAGE_SIZE);
}

static void stosb_clear_page(void *dst)
{
	rep_stosb(dst, PAGE_SIZE);
}

static void movsb_copy_pages(void *dst, const void *src, unsigned int nr)
{
	rep_movsb(dst, src, PAGE_BYTES(nr));
}

static void stosb_clear_pages(void *dst, unsigned int nr)
{
	rep_stosb(dst, PAGE_BYTES(nr));
}

static const struct mmp_copy_ops mmp_copy_rep_movsb = {
	.name = "rep-movsb",
	.description = "rep movsb / rep stosb (ERMS)",
	.usable = have_erms,
	.copy_page = movsb_copy_page,
	.clear_page = stosb_clear_page,
	.copy_pages = movsb_copy_pages,
	.clear_pages = stosb_clear_pages,
};

/* ---- AVX2 ------------------------------------------------------------------------------ */

/* 128 bytes per step: four loads before four stores keeps both ports busy. */
__attribute__((target("avx2")))
static inline void avx2_copy(void *dst, const void *src, size_t n, bool nt)
{
	__m256i *d = dst;
	const __m256i *s = src;

	for (size_t i = 0; i < n / sizeof(*d); i += 4) {
		__m256i a = _mm256_load_si256(s + i), b = _mm256_load_si256(s + i + 1);
		__m256i c = _mm256_load_si256(s + i + 2), e = _mm256_load_si256(s + i + 3);

		if (nt) {
			_mm256_stream_si256(d + i, a);
			_mm256_stream_si256(d + i + 1, b);
			_mm256_stream_si256(d + i + 2, c);
			_mm256_stream_si256(d + i + 3, e);
		} else {
			_mm256_store_si256(d + i, a);
			_mm256_store_si256(d + i + 1, b);
			_mm256_store_si256(d + i + 2, c);
			_mm256_store_si256(d + i + 3, e);
		}
	}
	if (nt)
		_mm_sfence();
}

__attribute__((target("avx2")))
static inline void avx2_clear(void *dst, size_t n, bool nt)
{
	const __m256i z = _mm256_setzero_si256();
	__m256i *d = dst;

	for (size_t i = 0; i < n / sizeof(*d); i += 4) {
		if (nt) {
			_mm256_stream_si256(d + i, z);
			_mm256_stream_si256(d + i + 1, z);
			_mm256_stream_si256(d + i + 2, z);
			_mm256_stream_si256(d + i + 3, z);
		} else {
			_mm256_store_si256(d + i, z);
			_mm256_store_si256(d + i + 1, z);
			_mm256_store_si256(d + i + 2, z);
			_mm256_store_si256(d + i + 3, z);
		}
	}
	if (nt)
		_mm_sfence();
}

__attribute__((target("avx2"))) static void avx2_copy_page(void *dst, const void *src)
{
	avx2_copy(dst, src, PAGE_SIZE, false);
}

__attribute__((target("avx2"))) static void avx2_clear_page(void *dst)
{
	avx2_clear(dst, PAGE_SIZE, false);
}

__attribute__((target("avx2")))
static void avx2_copy_pages(void *dst, const void *src, unsigned int nr)
{
	avx2_copy(dst, src, PAGE_BYTES(nr), false);
}

__attribute__((target("avx2"))) static void avx2_clear_pages(void *dst, unsigned int nr)
{
	avx2_clear(dst, PAGE_BYTES(nr), false);
}

__attribute__((target("avx2"))) static void avx2_nt_copy_page(void *dst, const void *src)
{
	avx2_copy(dst, src, PAGE_SIZE, true);
}

__attribute__((target("avx2"))) static void avx2_nt_clear_page(void *dst)
{
	avx2_clear(dst, PAGE_SIZE, true);
}

__attribute__((target("avx2")))
static void avx2_nt_copy_pages(void *dst, const void *src, unsigned int nr)
{
	avx2_copy(dst, src, PAGE_BYTES(nr), true);
}

__attribute__((target("avx2"))) static void avx2_nt_clear_pages(void *dst, unsigned int nr)
{
	avx2_clear(dst, PAGE_BYTES(nr), true);
}

static const struct mmp_copy_ops mmp_copy_avx2 = {
	.name = "avx2",
	.description = "AVX2 32-byte loads and stores",
	.usable = have_avx2,
	.copy_page = avx2_copy_page,
	.clear_page = avx2_clear_page,
	.copy_pages = avx2_copy_pages,
	.clear_pages = avx2_clear_pages,
};

static const struct mmp_copy_ops mmp_copy_avx2_nt = {
	.name = "avx2-nt",
	.description = "AVX2 loads, non-temporal 32-byte stores, sfence",
	.usable = have_avx2,
	.copy_page = avx2_nt_copy_page,
	.clear_page = avx2_nt_clear_page,
	.copy_pages = avx2_nt_copy_pages,
	.clear_pages = avx2_nt_clear_pages,
	.temporal = &mmp_copy_avx2,
};

/* ---- AVX-512 ---------------------------------------------------------------------------- */

__attribute__((target("avx512f")))
static inline void avx512_copy(void *dst, const void *src, size_t n, bool nt)
{
	__m512i *d = dst;
	const __m512i *s = src;

	for (size_t i = 0; i < n / sizeof(*d); i += 2) {
		__m512i a = _mm512_load_si512(s + i), b = _mm512_load_si512(s + i + 1);

		if (nt) {
			_mm512_stream_si512(d + i, a);
			_mm512_stream_si512(d + i + 1, b);
		} else {
			_mm512_store_si512(d + i, a);
			_mm512_store_si512(d + i + 1, b);
		}
	}
	if (nt)
		_mm_sfence();
}

__attribute__((target("avx512f")))
static inline void avx512_clear(void *dst, size_t n, bool nt)
{
	const __m512i z = _mm512_setzero_si512();
	__m512i *d = dst;

	for (size_t i = 0; i < n / sizeof(*d); i += 2) {
		if (nt) {
			_mm512_stream_si512(d + i, z);
			_mm512_stream_si512(d + i + 1, z);
		} else {
			_mm512_store_si512(d + i, z);
			_mm512_store_si512(d + i + 1, z);
		}
	}
	if (nt)
		_mm_sfence();
}

__attribute__((target("avx512f"))) static void avx512_copy_page(void *dst, const void *src)
{
	avx512_copy(dst, src, PAGE_SIZE, false);
}

__attribute__((target("avx512f"))) static void avx512_clear_page(void *dst)
{
	avx512_clear(dst, PAGE_SIZE, false);
}

__attribute__((target("avx512f")))
static void avx512_copy_pages(void *dst, const void *src, unsigned int nr)
{
	avx512_copy(dst, src, PAGE_BYTES(nr), false);
}

__attribute__((target("avx512f"))) static void avx512_clear_pages(void *dst, unsigned int nr)
{
	avx512_clear(dst, PAGE_BYTES(nr), false);
}

__attribute__((target("avx512f"))) static void avx512_nt_copy_page(void *dst, const void *src)
{
	avx512_copy(dst, src, PAGE_SIZE, true);
}

__attribute__((target("avx512f"))) static void avx512_nt_clear_page(void *dst)
{
	avx512_clear(dst, PAGE_SIZE, true);
}

__attribute__((target("avx512f")))
static void avx512_nt_copy_pages(void *dst, const void *src, unsigned int nr)
{
	avx512_copy(dst, src, PAGE_BYTES(nr), true);
}

__attribute__((target("avx512f"))) static void avx512_nt_clear_pages(void *dst, unsigned int nr)
{
	avx512_clear(dst, PAGE_BYTES(nr), true);
}

static const struct mmp_copy_ops mmp_copy_avx512 = {
	.name = "avx512",
	.description = "AVX-512 64-byte loads and stores",
	.usable = have_avx512,
	.copy_page = avx512_copy_page,
	.clear_page = avx512_clear_page,
	.copy_pages = avx512_copy_pages,
	.clear_pages = avx512_clear_pages,
};

static const struct mmp_copy_ops mmp_copy_avx512_nt = {
	.name = "avx512-nt",
	.description = "AVX-512 loads, non-temporal 64-byte stores, sfence",
	.usable = have_avx512,
	.copy_page = avx512_nt_copy_page,
	.clear_page = avx512_nt_clear_page,
	.copy_pages = avx512_nt_copy_pages,
	.clear_pages = avx512_nt_clear_pages,
	.temporal = &mmp_copy_avx512,
};

/* ---- clzero ------------------------------------------------------------------------------- */

/* clzero zeroes the 64-byte line at rAX without reading it; weakly ordered like movnt. */
static void clzero_clear(void *dst, size_t n)
{
	for (size_t off = 0; off < n; off += 64)
		__asm__ volatile(".byte 0x0f, 0x01, 0xfc" : : "a"((uint8_t *)dst + off) : "memory");
	__asm__ volatile("sfence" : : : "memory");
}

static void clzero_clear_page(void *dst)
{
	clzero_clear(dst, PAGE_SIZE);
}

static void clzero_clear_pages(void *dst, unsigned int nr)
{
	clzero_clear(dst, PAGE_BYTES(nr));
}

static const struct mmp_copy_ops mmp_copy_clzero = {
	.name = "clzero",
	.description = "AMD clzero clears (sfence); rep movsb copies",
	.usable = have_clzero,
	.copy_page = movsb_copy_page,
	.clear_page = clzero_clear_page,
	.copy_pages = movsb_copy_pages,
	.clear_pages = clzero_clear_pages,
	.temporal = &mmp_copy_rep_movsb,
};

/*
 * Best first: the kernel's own choice (ERMS string ops) is the default, so the
 * orders are compared on what the kernel runs; the others are there to be
 * picked by name and measured. This is the host's list (see host/copy.c).
 */
const struct mmp_copy_ops *const mmp_copy_host[] = {
	&mmp_copy_rep_movsb,
	&mmp_copy_avx512,
	&mmp_copy_avx512_nt,
	&mmp_copy_avx2,
	&mmp_copy_avx2_nt,
	&mmp_copy_clzero,
	&mmp_copy_generic,
	NULL,
};
