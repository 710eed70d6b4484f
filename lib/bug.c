/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* BUG: an internal contradiction stops the process, naming the invariant (MMP_BUG_ON). */
#include "compiler.h"

_Noreturn void mmp_bug(const char *file, int line, const char *what)
{
	fprintf(stderr, "libmmprim: BUG at %s:%d: %s\n", file, line, what);
	abort();
}
