/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The errno names of the library's return values (mmp_strerror, mmprim/mmprim.h). */
#include <errno.h>
#include <limits.h>

#include "compiler.h"
#include <mmprim/mmprim.h>

MMP_EXPORT const char *mmp_strerror(int err)
{
	/* Callers pass the return value as is; take the magnitude (INT_MIN has none). */
	int e = err == INT_MIN ? 0 : (err < 0 ? -err : err);

	if (err >= 0)
		return "success";
	switch (e) {
	case E2BIG:	return "E2BIG";
	case EINVAL:	return "EINVAL";
	case ENOMEM:	return "ENOMEM";
	case EFAULT:	return "EFAULT";
	case EEXIST:	return "EEXIST";
	case EBUSY:	return "EBUSY";
	case ENOTSUP:	return "ENOTSUP";
	case ENOENT:	return "ENOENT";
	case EUCLEAN:	return "EUCLEAN";
	case EAGAIN:	return "EAGAIN";
	case EIO:	return "EIO";
	case EBADF:	return "EBADF";
	case EACCES:	return "EACCES";
	case EFBIG:	return "EFBIG";
	case EOVERFLOW:	return "EOVERFLOW";
	case EPERM:	return "EPERM";
	case ENFILE:	return "ENFILE";
	default:	return "unknown error";
	}
}
