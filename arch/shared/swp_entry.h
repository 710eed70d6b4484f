/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The swap entry shape most back ends share: a masked type field at one shift
 * and the offset, unbounded, from a higher one; every other bit clear, so the
 * entry is neither present nor PROT_NONE. Each format.h keeps its own layout
 * constants and documents them; x86_64 (inverted offset) and arm64 (bounded
 * offset) keep their own encoders.
 */
#ifndef MMP_ARCH_SWP_ENTRY_H
#define MMP_ARCH_SWP_ENTRY_H

/*
 * <arch>_mk_swp_entry, <arch>_swp_type and <arch>_swp_offset, as format
 * dispatch names them, from the layout constants of @arch's format.h.
 */
#define DEFINE_SWP_ENTRY_OPS(arch, type_shift, type_mask, offset_shift)			\
static __always_inline mmp_pte_t arch##_mk_swp_entry(unsigned int type, uint64_t offset)	\
{												\
	return ((type & (type_mask)) << (type_shift)) | offset << (offset_shift);		\
}												\
												\
static __always_inline unsigned int arch##_swp_type(mmp_pte_t e)				\
{												\
	return (e >> (type_shift)) & (type_mask);						\
}												\
												\
static __always_inline uint64_t arch##_swp_offset(mmp_pte_t e)					\
{												\
	return e >> (offset_shift);								\
}

#endif /* MMP_ARCH_SWP_ENTRY_H */
