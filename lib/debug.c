/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Raw page-table entry access for tests (debug.h): reading and corrupting one
 * PTE the way a bug would, so that mmp_space_verify() can be shown to catch it.
 */
#include "mm.h"
#include "mmap_lock.h"
#include "rcu.h"

/*
 * Read, and with @set write, the PTE of @addr under the mmap lock and its PTL:
 * no fault or zap is halfway through it. The walker may still set A/D; an
 * exchange keeps what it set before, and overwrites it, as a stray store would.
 */
static int debug_pte(struct mmp_space *s, uint64_t addr, uint64_t *raw, bool set)
{
	mmp_spinlock_t *ptl;
	mmp_pte_t *pmdp, *ptes;
	int err = -ENOENT;

	if (!s || !raw || addr >= TASK_SIZE(s))
		return -EINVAL;
	mmap_read_lock(s);
	rcu_read_lock();
	pmdp = pmd_offset(s, addr);
	ptes = pmdp ? pte_offset_map_lock(s, pmdp, &ptl) : NULL;
	if (ptes) {
		mmp_pte_t *ptep = &ptes[level_index(addr, MMP_PTE)];

		if (set)
			__atomic_exchange_n(ptep, *raw, __ATOMIC_ACQ_REL);
		else
			*raw = __atomic_load_n(ptep, __ATOMIC_ACQUIRE);
		spin_unlock(ptl);
		err = 0;
	}
	rcu_read_unlock();
	mmap_read_unlock(s);
	return err;
}

int mmp_debug_get_pte(struct mmp_space *s, uint64_t addr, uint64_t *raw)
{
	return debug_pte(s, addr, raw, false);
}

int mmp_debug_set_pte(struct mmp_space *s, uint64_t addr, uint64_t raw)
{
	return debug_pte(s, addr, &raw, true);
}
