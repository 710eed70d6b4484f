#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The main job: install missing packages, build in build/, then run every seed
# reproduction and bench with quick defaults. Extra arguments go to mmprim-seeds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/deps.sh

if [[ ! -f build/build.ninja ]]; then
	if [[ -f build/meson-private/coredata.dat ]]; then
		meson setup --reconfigure build
	else
		meson setup build
	fi
fi
ninja -C build

seeds=build/bench/seeds/mmprim-seeds
if [[ ! -x $seeds ]]; then
	# build/ was configured with -Dbenches=false: turn the benches back on.
	meson configure build -Dbenches=true
	ninja -C build
fi

exec "$seeds" all --quick "$@"
