#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Soak the differential test against the host kernel:
#   bash scripts/soak.sh [SECONDS | OPSops] [extra test_kernel_diff options...]
# e.g. `bash scripts/soak.sh 600` or `bash scripts/soak.sh 500000ops`.
# Random seeds (printed), sequences of 2000 ops, every back end with switches
# drawn from each seed, the kernel's view (smaps, status, pagemap, faults, THP
# events) compared after every op, mmp_space_verify every 25 ops (give
# --verify-every 1 for every op, at half the speed). Stops at the first
# divergence its replay repeats, leaving its log and a minimized one
# (kdiff-SEED.log, kdiff-SEED.min.log) in build/; one the replay does not
# repeat is printed, counted and kept (kdiff-SEED.unreproduced.log).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
limit=${1:-600}
shift || true
if [[ $limit == *ops ]]; then
	limit=(--total "${limit%ops}")
else
	limit=(--seconds "$limit")
fi
bash scripts/deps.sh
[[ -f build/build.ninja ]] || meson setup build -Dbenches=false
ninja -C build tests/test_kernel_diff
cd build
exec env MMPRIM_DEBUG_VM=1 ./tests/test_kernel_diff "${limit[@]}" --ops 2000 --verify-every 25 "$@"
