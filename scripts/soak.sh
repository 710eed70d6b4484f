#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Soak the differential test against the host kernel for a given time:
#   bash scripts/soak.sh [SECONDS] [extra test_kernel_diff options...]
# Random seeds (printed), every back end with switches drawn from each seed,
# mmp_space_verify after every op. Stops at the first divergence, leaving its
# log and a minimized one (kdiff-SEED.log, kdiff-SEED.min.log) in build/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-600}
shift || true
bash scripts/deps.sh
[[ -f build/build.ninja ]] || meson setup build -Dbenches=false
ninja -C build tests/test_kernel_diff
cd build
exec env MMPRIM_DEBUG_VM=1 ./tests/test_kernel_diff --seconds "$seconds" --ops 2000 "$@"
