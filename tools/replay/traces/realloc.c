// SPDX-License-Identifier: LGPL-2.1-or-later
/* Grow and shrink buffers with realloc: small ones stay in the brk heap,
 * large ones are mmap'd by malloc and moved or grown by mremap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char *bufs[8] = { 0 };
	size_t sizes[8] = { 0 };
	unsigned long sum = 0;

	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < 8; i++) {
			size_t want = (size_t)(1 + (round * 7 + i * 13) % 23) << (10 + i % 4 * 3);
			char *p = realloc(bufs[i], want);

			if (!p)
				return 1;
			if (want > sizes[i])
				memset(p + sizes[i], round, want - sizes[i]);
			bufs[i] = p;
			sizes[i] = want;
			sum += (unsigned char)p[want - 1];
		}
	}
	for (int i = 0; i < 8; i++)
		free(bufs[i]);
	printf("%lu\n", sum);
	return 0;
}
