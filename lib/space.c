/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Address spaces: creation, teardown (exit_mmap), switches, counters. */
#include <string.h>

#include "mm.h"
#include "mmap_lock.h"
#include "opt_table.h"
#include "rcu.h"
#include "vma_tree.h"

/*
 * mmap_base() (mm/util.c; arch/x86/mm/mmap.c is the same here) for a process
 * with the default 8 MiB stack rlimit and no randomization: the stack gap is
 * the rlimit plus stack_guard_gap (256 pages), raised to MIN_GAP (128 MiB),
 * capped at 5/6 of the space; mmap grows down from STACK_TOP minus that gap.
 * STACK_TOP is the map window (DEFAULT_MAP_WINDOW): x86 LA57 and riscv Sv57
 * keep the stack and default mmaps below 47 bits.
 */
#define MIN_GAP			(128ULL << 20)

static uint64_t mmap_base(const struct mmp_arch *arch)
{
	uint64_t top = arch->map_window ? arch->map_window : arch->task_size;
	uint64_t gap = STACK_RLIMIT + STACK_GUARD_GAP;

	if (gap < MIN_GAP)
		gap = MIN_GAP;
	else if (gap > top / 6 * 5)
		gap = top / 6 * 5;
	return (top - gap) & PAGE_MASK;
}

/*
 * The last reference to the space itself is gone (__mmdrop): free what is
 * left of it. Its mappings, tables and PGD went with exit_mmap and the unlink.
 */
void __mmdrop(struct mmp_space *s)
{
	mmap_destroy_lock(s);
	free(s->rss);
	free(s->counters);
	free(s);
}

/* A space with an empty PGD and no VMAs; not yet visible on the phys. */
int space_alloc(struct mmp_phys *phys, const struct mmp_arch *arch, struct mmp_space **out)
{
	struct mmp_space *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	if (posix_memalign((void **)&s->counters, 64,
			   sizeof(*s->counters) * MMP_COUNTER_SHARDS)) {
		free(s);
		return -ENOMEM;
	}
	memset(s->counters, 0, sizeof(*s->counters) * MMP_COUNTER_SHARDS);
	if (posix_memalign((void **)&s->rss, 64, sizeof(*s->rss) * MMP_COUNTER_SHARDS)) {
		free(s->counters);
		free(s);
		return -ENOMEM;
	}
	memset(s->rss, 0, sizeof(*s->rss) * MMP_COUNTER_SHARDS);
	s->mm_count = 1;	/* the reference of its users, dropped by mmp_space_destroy */
	s->phys = phys;
	/* Now, not at space_link: a fork child owns the folios it maps before it is linked. */
	pthread_mutex_lock(&phys->spaces_lock);
	s->id = phys->next_space_id++;
	pthread_mutex_unlock(&phys->spaces_lock);
	s->arch = arch;
	s->format = arch->format;
	s->copy = copy_ops_default();
	s->mmap_base = mmap_base(arch);
	s->vmas.floor = MMP_MMAP_MIN_ADDR;
	s->tlb_entries = 1536;
	s->tlb_ways = 12;
	s->thp_orders_madvise = 1u << HPAGE_PMD_ORDER;
	/* The switches' defaults (lib/opt_table.h); -1: as the release and the back end say. */
	for (int o = 0; o < MMP_NR_OPTS; o++)
		s->opts[o] = mmp_opt_descs[o].def;
	space_apply_release(s);
	mmap_init_lock(s);
	/* The PGD belongs to the mm itself (pgd_alloc): not counted in VmPTE. */
	s->pgd_pfn = phys_alloc_pages(phys, 0);
	if (s->pgd_pfn == NO_PFN) {
		__mmdrop(s);
		return -ENOMEM;
	}
	pfn_to_page(phys, s->pgd_pfn)->flags = PG_table;
	pfn_to_page(phys, s->pgd_pfn)->refcount = 1;
	memset(pfn_to_virt(phys, s->pgd_pfn), 0, PAGE_SIZE);
	*out = s;
	return 0;
}

void space_link(struct mmp_space *s)
{
	struct mmp_phys *phys = s->phys;

	pthread_mutex_lock(&phys->spaces_lock);
	s->phys_next = phys->spaces;
	phys->spaces = s;
	pthread_mutex_unlock(&phys->spaces_lock);
}

/* Off the phys, PGD freed in the same breath: verify never sees it linked nowhere. */
static void space_unlink(struct mmp_space *s)
{
	struct mmp_phys *phys = s->phys;

	pthread_mutex_lock(&phys->spaces_lock);
	for (struct mmp_space **pp = &phys->spaces; *pp; pp = &(*pp)->phys_next) {
		if (*pp == s) {
			*pp = s->phys_next;
			break;
		}
	}
	phys_free_pages(phys, s->pgd_pfn, 0);
	pthread_mutex_unlock(&phys->spaces_lock);
}

/* The size of the first published struct mmp_space_config. */
#define SPACE_CONFIG_SIZE_VER0	24

MMP_EXPORT int mmp_space_create_sized(struct mmp_phys *phys, const struct mmp_space_config *ucfg,
				      size_t size, struct mmp_space **out)
{
	struct mmp_space_config kcfg = { 0 }, *cfg = ucfg ? &kcfg : NULL;
	const struct mmp_copy_ops *copy;
	const struct mmp_arch *arch;
	unsigned int entries = 1536, ways = 12;
	struct mmp_space *s;
	int err;

	if (!phys || !out)
		return -EINVAL;
	if (ucfg) {
		err = copy_struct_from_caller(&kcfg, sizeof(kcfg), ucfg, size, SPACE_CONFIG_SIZE_VER0);
		if (err)
			return err;
		for (size_t i = 0; i < sizeof(kcfg.reserved); i++)
			if (kcfg.reserved[i])
				return -EINVAL;
	}
	/* No name: the first of the list (arch/meson.build), which no file here names. */
	arch = mmp_arch_find(cfg && cfg->arch ? cfg->arch : mmp_arch_name(0));
	if (!arch)
		return -ENOENT;
	if (cfg && cfg->tlb_entries)
		entries = cfg->tlb_entries;
	if (cfg && cfg->tlb_ways)
		ways = cfg->tlb_ways;
	if (ways > entries || entries % ways || entries > (1u << 20) ||
	    ((entries / ways) & (entries / ways - 1)))
		return -EINVAL;
	copy = copy_ops_default();
	if (cfg && cfg->copy) {
		err = copy_ops_find(cfg->copy, &copy);
		if (err)
			return err;
	}
	err = space_alloc(phys, arch, &s);
	if (err)
		return err;
	s->copy = copy;
	s->tlb_entries = entries;
	s->tlb_ways = ways;
	s->opts[MMP_OPT_TLB_SANITIZER] = cfg && cfg->tlb_sanitizer;
	space_link(s);
	*out = s;
	return 0;
}

/* Tear down every mapping and table (exit_mmap); no CPU runs the space any more. */
void exit_mmap(struct mmp_space *s)
{
	struct mmp_gather tlb;

	bool hugetlb = false;

	tlb_gather_mmu(&tlb, s, true);
	for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next) {
		unmap_single_vma(&tlb, vma, vma->start, vma->end);
		hugetlb |= is_vm_hugetlb_page(vma);
	}
	/* Huge pages back to their pool, then the reservations never used (remove_vma's close). */
	if (unlikely(hugetlb)) {
		tlb_flush_mmu(&tlb);
		for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next)
			hugetlb_vm_op_close(s, vma);
	}
	/* free_pgtables: file VMAs leave i_mmap before their tables go. */
	for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next)
		if (vma->vm_file)
			vma_unlink_file(vma);
	free_pgtables(&tlb, 0, USER_TOP(s), 0, USER_TOP(s));
	tlb_finish_mmu(&tlb);
	/* No CPU runs the space: nobody can be looking the VMAs up. */
	while (s->vmas.first) {
		struct mmp_vma *vma = s->vmas.first;

		vma_tree_erase(&s->vmas, vma);
		anon_vma_put(vma->anon_vma);
		free(vma);
	}
}

MMP_EXPORT int mmp_space_destroy(struct mmp_space *s)
{
	if (!s)
		return -EINVAL;
	if (__atomic_load_n(&s->cpu_mask, __ATOMIC_ACQUIRE))
		return -EBUSY;
	mmap_write_lock(s);
	exit_mmap(s);
	mmap_write_unlock(s);
	space_unlink(s);
	/*
	 * As the kernel's exit, this never waits for a grace period: a table
	 * batch still in one holds its own reference (mmgrab), and the struct
	 * goes with the last mmdrop.
	 */
	mmdrop(s);
	return 0;
}

MMP_EXPORT const char *mmp_space_arch(const struct mmp_space *s)
{
	return s ? s->arch->name : NULL;
}

MMP_EXPORT int mmp_space_task_size(const struct mmp_space *s, uint64_t *out)
{
	if (!s || !out)
		return -EINVAL;
	*out = TASK_SIZE(s);
	return 0;
}

/* A release MMP_OPT_KERNEL_VERSION accepts: 6.12 to 6.19, 7.0 or 7.1, any patch level. */
static bool kernel_release_known(long v)
{
	long major = v >> 16, minor = (v >> 8) & 0xff;

	if (v < MMP_KERNEL_OLDEST || v > (MMP_KERNEL_NEWEST | 0xff))
		return false;
	return major == 7 || (major == 6 && minor <= 19);
}

MMP_EXPORT int mmp_space_set_opt(struct mmp_space *s, enum mmp_opt opt, long value)
{
	if (!s || (unsigned int)opt >= MMP_NR_OPTS)
		return -EINVAL;
	/* The range of lib/opt_table.h, then what a range cannot say. */
	if (value < mmp_opt_descs[opt].min || value > mmp_opt_descs[opt].max)
		return -EINVAL;
	switch (opt) {
	case MMP_OPT_RCU_TABLE_FREE:
		/* No IPI would wait for GUP-fast where TLB invalidations are broadcast. */
		if (value == MMP_TABLE_FREE_NATIVE && s->arch->tlbi_broadcast)
			return -EINVAL;
		break;
	case MMP_OPT_TABLE_BATCH_FAIL:
		/* Every Nth try from now on. */
		__atomic_store_n(&s->table_batch_tries, 0, __ATOMIC_RELAXED);
		break;
	case MMP_OPT_KERNEL_VERSION:
		if (!kernel_release_known(value))
			return -EINVAL;
		WRITE_ONCE(s->opts[opt], value);
		space_apply_release(s);
		return 0;
	case MMP_OPT_CAP_SYS_RAWIO:
		/* The mappings below mmap_min_addr stay: the privilege may not go while they do. */
		if (!value) {
			struct mmp_vma *low;

			mmap_read_lock(s);
			low = s->vmas.first;
			mmap_read_unlock(s);
			if (low && low->start < MMP_MMAP_MIN_ADDR)
				return -EBUSY;
		}
		break;
	default:
		break;
	}
	WRITE_ONCE(s->opts[opt], value);
	return 0;
}

MMP_EXPORT int mmp_space_get_opt(struct mmp_space *s, enum mmp_opt opt, long *value)
{
	if (!s || !value || (unsigned int)opt >= MMP_NR_OPTS)
		return -EINVAL;
	/* Switches left to the release: what they come to now. */
	switch (opt) {
	case MMP_OPT_PT_RECLAIM:
		*value = pt_reclaim_enabled(s);
		break;
	case MMP_OPT_RCU_TABLE_FREE:
		*value = table_free_mode(s);
		break;
	case MMP_OPT_HUGE_CLEAR_ORDER:
		*value = huge_clear_order(s);
		break;
	case MMP_OPT_MPROTECT_SMALL_FOLIO:
		*value = mprotect_small_folio_branch(s);
		break;
	default:
		*value = READ_ONCE(s->opts[opt]);
	}
	return 0;
}

int mmp_debug_set(struct mmp_space *s, enum mmp_debug_opt opt, long value)
{
	if (!s || (unsigned int)opt >= MMP_NR_DEBUG_OPTS || value < 0 ||
	    (opt != MMP_DEBUG_SKIP_FLUSH && value > 1))
		return -EINVAL;
	WRITE_ONCE(s->debug[opt], value);
	return 0;
}

int mmp_debug_set_hook(struct mmp_space *s, mmp_debug_hook_fn fn, void *arg)
{
	if (!s)
		return -EINVAL;
	/* The argument first: a thread that sees the hook sees its argument. */
	__atomic_store_n(&s->debug_hook, NULL, __ATOMIC_RELEASE);
	s->debug_hook_arg = arg;
	__atomic_store_n(&s->debug_hook, fn, __ATOMIC_RELEASE);
	return 0;
}

int mmp_debug_get(struct mmp_space *s, enum mmp_debug_opt opt, long *value)
{
	if (!s || !value || (unsigned int)opt >= MMP_NR_DEBUG_OPTS)
		return -EINVAL;
	*value = READ_ONCE(s->debug[opt]);
	return 0;
}

MMP_EXPORT int mmp_space_set_thp(struct mmp_space *s, unsigned int order, enum mmp_thp_mode mode)
{
	if (!s || order < 2 || order > HPAGE_PMD_ORDER || (unsigned int)mode > MMP_THP_ALWAYS)
		return -EINVAL;
	WRITE_ONCE(s->thp_orders_always, (s->thp_orders_always & ~(1u << order)) |
					 (mode == MMP_THP_ALWAYS ? 1u << order : 0));
	WRITE_ONCE(s->thp_orders_madvise, (s->thp_orders_madvise & ~(1u << order)) |
					  (mode == MMP_THP_MADVISE ? 1u << order : 0));
	return 0;
}

/*
 * PR_SET_THP_DISABLE (prctl_set_thp_disable): two mm flags, one at most set,
 * under the mmap write lock as the kernel takes it.
 */
MMP_EXPORT int mmp_space_set_thp_disable(struct mmp_space *s, int disable, unsigned int flags)
{
	if (!s || (flags & ~MMP_THP_DISABLE_EXCEPT_ADVISED) || (!disable && flags))
		return -EINVAL;
	/* Before 6.18 prctl took no flag at all. */
	if (flags && !release_follows(s, RULE_THP_DISABLE_EXCEPT_ADVISED))
		return -EINVAL;
	mmap_write_lock(s);
	WRITE_ONCE(s->thp_disable, !disable ? THP_DISABLE_NONE : flags ? THP_DISABLE_EXCEPT_ADVISED :
				   THP_DISABLE_COMPLETELY);
	WRITE_ONCE(s->last_op, "mmp_space_set_thp_disable");
	mmap_write_unlock(s);
	return 0;
}

MMP_EXPORT int mmp_space_get_thp_disable(struct mmp_space *s, unsigned int *out)
{
	if (!s || !out)
		return -EINVAL;
	switch (READ_ONCE(s->thp_disable)) {
	case THP_DISABLE_COMPLETELY:
		*out = 1;
		break;
	case THP_DISABLE_EXCEPT_ADVISED:
		*out = 1 | MMP_THP_DISABLE_EXCEPT_ADVISED;
		break;
	default:
		*out = 0;
	}
	return 0;
}

MMP_EXPORT int mmp_space_counters_sized(struct mmp_space *s, struct mmp_counters *out,
					size_t size)
{
	struct mmp_counters k = { 0 };

	if (!s || !out || size < sizeof(uint64_t))
		return -EINVAL;
	for (int sh = 0; sh < MMP_COUNTER_SHARDS; sh++)
		for (int c = 0; c < MMP_NR_COUNTERS; c++)
			k.v[c] += __atomic_load_n(&s->counters[sh].v[c], __ATOMIC_RELAXED);
	copy_struct_to_caller(out, size, &k, sizeof(k));
	return 0;
}

MMP_EXPORT int mmp_space_reset_counters(struct mmp_space *s)
{
	if (!s)
		return -EINVAL;
	for (int sh = 0; sh < MMP_COUNTER_SHARDS; sh++)
		for (int c = 0; c < MMP_NR_COUNTERS; c++)
			__atomic_store_n(&s->counters[sh].v[c], 0, __ATOMIC_RELAXED);
	return 0;
}

MMP_EXPORT int mmp_space_stat_sized(struct mmp_space *s, struct mmp_space_stat *st, size_t size)
{
	struct mmp_space_stat k = { 0 };

	if (!s || !st || size < sizeof(uint64_t))
		return -EINVAL;
	mmap_read_lock(s);
	k.nr_vmas = s->vmas.nr;
	k.rss_anon_pages = get_mm_counter(s, MM_ANONPAGES);
	k.rss_file_pages = get_mm_counter(s, MM_FILEPAGES);
	k.rss_shmem_pages = get_mm_counter(s, MM_SHMEMPAGES);
	k.pgtable_bytes = __atomic_load_n(&s->nr_pgtables, __ATOMIC_RELAXED) * PAGE_SIZE;
	k.hugetlb_pages = __atomic_load_n(&s->hugetlb_usage, __ATOMIC_RELAXED);
	k.hiwater_rss_pages = get_mm_hiwater_rss(s);
	/* mm->locked_vm: what the VM_LOCKED VMAs span. */
	for (struct mmp_vma *vma = s->vmas.first; vma; vma = vma->vm_next)
		if (vma->flags & VM_LOCKED)
			k.locked_bytes += vma->end - vma->start;
	mmap_read_unlock(s);
	copy_struct_to_caller(st, size, &k, sizeof(k));
	return 0;
}
