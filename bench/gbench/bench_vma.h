/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mmprim-bench's vma_scale and page_fault_threads families (bench_vma.c). */
#ifndef MMP_BENCH_VMA_H
#define MMP_BENCH_VMA_H

#include <mmprim/mmprim.h>

/* Register them; page_fault_threads faults in @phys, which must outlive the run. */
int vma_register_benches(struct mmp_phys *phys);

#endif /* MMP_BENCH_VMA_H */
