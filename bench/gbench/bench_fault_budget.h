/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fault_budget/<arch>/<folio KiB>: fault and munmap time per page against their budgets. */
#ifndef MMP_BENCH_FAULT_BUDGET_H
#define MMP_BENCH_FAULT_BUDGET_H

#include <mmprim/mmprim.h>

int fault_budget_register_benches(struct mmp_phys *phys);

#endif /* MMP_BENCH_FAULT_BUDGET_H */
