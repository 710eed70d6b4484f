// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Soft-dirty rounds and aging through /proc/self/clear_refs, for
 * mmprim-replay: writes of 4 (soft-dirty), 1, 2, 3 (Referenced of all,
 * anonymous, file VMAs), 5 (VmHWM) and an invalid 9 (EINVAL), between writes
 * to an anonymous and a file mapping; and one PAGEMAP_SCAN ioctl, whose
 * argument strace does not print. Recorded with write and ioctl in the
 * classes and -y, so the replay knows which file each fd is. Every result is
 * what Linux 6.18 answers; the program checks none of them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef PAGEMAP_SCAN
#define PAGEMAP_SCAN	_IOWR('f', 16, struct pm_scan_arg_local)
#endif
struct pm_scan_arg_local {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
struct page_region_local {
	uint64_t start, end, categories;
};

static void clear_refs(int fd, const char *v)
{
	if (write(fd, v, strlen(v)) < 0)
		return;		/* the trace keeps the errno */
}

int main(void)
{
	int refs = open("/proc/self/clear_refs", O_WRONLY);
	int pagemap = open("/proc/self/pagemap", O_RDONLY);
	int file = open("softdirty.data", O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *anon, *map;
	struct page_region_local regions[8];
	struct pm_scan_arg_local arg;

	if (refs < 0 || pagemap < 0 || file < 0 || ftruncate(file, 16 * 4096))
		return 1;
	anon = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	map = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
	if (anon == MAP_FAILED || map == MAP_FAILED)
		return 1;
	memset(anon, 1, 16 * 4096);
	memset(map, 2, 16 * 4096);
	clear_refs(refs, "4");
	memset(anon + 4 * 4096, 3, 4096);
	clear_refs(refs, "1");
	clear_refs(refs, "2");
	clear_refs(refs, "3");
	clear_refs(refs, "5");
	clear_refs(refs, "9");
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.start = (uintptr_t)anon;
	arg.end = (uintptr_t)anon + 16 * 4096;
	arg.vec = (uintptr_t)regions;
	arg.vec_len = 8;
	arg.category_mask = 1 << 3;	/* PAGE_IS_SOFT_DIRTY */
	arg.return_mask = 1 << 3;
	ioctl(pagemap, PAGEMAP_SCAN, &arg);
	munmap(anon, 16 * 4096);
	munmap(map, 16 * 4096);
	unlink("softdirty.data");
	return 0;
}
