// SPDX-License-Identifier: LGPL-2.1-or-later
/* Re-execute itself once: the first image grows its heap and execs /proc/self/exe, the second
 * grows a new heap and maps, protects and unmaps anonymous memory. Traced without %process,
 * nothing but the new break and the loader's mappings says that an exec happened. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned long churn(int n, size_t step)
{
	unsigned long sum = 0;
	char *p[16] = { 0 };

	for (int i = 0; i < n && i < 16; i++) {
		p[i] = malloc(step * (size_t)(i + 1));
		if (!p[i])
			exit(1);
		memset(p[i], i, step * (size_t)(i + 1));
		sum += (unsigned char)p[i][step / 2];
	}
	for (int i = 0; i < 16; i++)
		free(p[i]);
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long sum;
	char *m;

	if (argc < 2) {
		char *again[] = { argv[0], "again", NULL };

		printf("first %lu\n", churn(4, 16 << 10));
		fflush(stdout);
		execv("/proc/self/exe", again);
		return 1;
	}
	sum = churn(16, 24 << 10);	/* brk growth */
	m = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	memset(m, 1, 4 << 20);
	mprotect(m + (1 << 20), 1 << 20, PROT_READ);
	munmap(m, 2 << 20);
	sum += churn(4, 512 << 10);	/* mmap'd chunks */
	munmap(m + (2 << 20), 2 << 20);
	printf("second %lu\n", sum);
	return 0;
}
