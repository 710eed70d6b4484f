/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Core mm, gathered: what the core's files and the tests include (the kernel's
 * linux/mm.h). Each concept has its own header; this one only brings them
 * together. Arch code includes arch_api.h instead; the simulated hardware has
 * its own, hw/cpu.h.
 */
#ifndef MMP_MM_H
#define MMP_MM_H

#include "compiler.h"
#include "copy_ops.h"
#include "copy_struct.h"
#include "entry.h"
#include "fault.h"
#include "filemap.h"
#include "folio.h"
#include "huge_copy.h"
#include "huge_mm.h"
#include "khugepaged.h"
#include "madvise.h"
#include "memory.h"
#include "mlock.h"
#include "mmap.h"
#include "mseal.h"
#include "mm_types.h"
#include "mmu_gather.h"
#include "mthp_stat.h"
#include "page_alloc.h"
#include "pgalloc.h"
#include "pte_batch.h"
#include "release.h"
#include "rmap.h"
#include "space.h"
#include "swapops.h"
#include "tlbflush.h"
#include "vma.h"
#include "vmscan.h"
#include "vmstat.h"
/* ptep_get, set_ptes, ...: inline per arch folder. */
#include "entry_dispatch.h"
/* pte_alloc, and the walk down to a PMD compiled per format. */
#include "pgtable.h"

#endif /* MMP_MM_H */
