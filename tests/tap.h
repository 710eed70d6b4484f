/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The TAP producer is tests/lib/tap.h. This path stays only for the benches'
 * own tests (bench/common), which include it as "../../tests/tap.h"; once they
 * include tests/lib/tap.h, this file goes.
 */
#include "lib/tap.h"
