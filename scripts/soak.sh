#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Soak the differential test against the host kernel:
#   bash scripts/soak.sh [-j JOBS] [SECONDS | OPSops] [extra test_kernel_diff options...]
# e.g. `bash scripts/soak.sh 600` or `bash scripts/soak.sh -j 2 500000ops`.
# Random seeds (printed), sequences of 2000 ops, every back end with switches
# drawn from each seed, the kernel's view (smaps, status, pagemap, faults, THP
# events) compared after every op, mmp_space_verify every 25 ops (give
# --verify-every 1 for every op, at half the speed). Stops at the first
# divergence its replay repeats, leaving its log and a minimized one
# (kdiff-SEED.log, kdiff-SEED.min.log) in build/; one the replay does not
# repeat is printed, counted and kept (kdiff-SEED.unreproduced.log).
#
# -j JOBS splits the work between JOBS test_kernel_diff processes, each on a
# CPU of its own (its host agents with it) and with seeds of its own; their
# output goes to build/soak-N.log, and the first to fail stops the others.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=1
if [[ ${1:-} == -j ]]; then
	jobs=$2
	shift 2
fi
limit=${1:-600}
shift || true
bash scripts/deps.sh
[[ -f build/build.ninja ]] || meson setup build -Dbenches=false
ninja -C build tests/test_kernel_diff
cd build
kdiff=(env MMPRIM_DEBUG_VM=1 ./tests/test_kernel_diff --ops 2000 --verify-every 25)

if ((jobs == 1)); then
	if [[ $limit == *ops ]]; then
		exec "${kdiff[@]}" --total "${limit%ops}" "$@"
	fi
	exec "${kdiff[@]}" --seconds "$limit" "$@"
fi

ncpu=$(nproc)
base=$(( ($(date +%s) * 1000003) ^ $$ ))
pids=()
for ((i = 0; i < jobs; i++)); do
	if [[ $limit == *ops ]]; then
		share=(--total $(( (${limit%ops} + jobs - 1) / jobs )))
	else
		share=(--seconds "$limit")
	fi
	# Seeds 2^32 apart: no two jobs run the same sequence.
	taskset -c $((i % ncpu)) "${kdiff[@]}" --seed $((base + (i << 32))) "${share[@]}" "$@" \
		>"soak-$i.log" 2>&1 &
	pids+=($!)
	echo "# job $i: pid $!, CPU $((i % ncpu)), seeds from $(printf '%#x' $((base + (i << 32)))), build/soak-$i.log"
done
status=0
while ((${#pids[@]})); do
	done_pid=
	if ! wait -n -p done_pid "${pids[@]}"; then
		status=1
		kill "${pids[@]}" 2>/dev/null || true
	fi
	for i in "${!pids[@]}"; do
		[[ ${pids[$i]} == "$done_pid" ]] && unset "pids[$i]"
	done
done
for ((i = 0; i < jobs; i++)); do
	echo "# job $i:"
	grep -E '^(not ok|# [0-9]+ sequences|#   (op|log|minimized))' "soak-$i.log" || true
done
logs=()
for ((i = 0; i < jobs; i++)); do logs+=("soak-$i.log"); done
# Counted from each sequence's line, so that a job stopped early counts too.
awk '/^ok .* ops agree/ { s++; for (i = 1; i < NF; i++) if ($(i + 1) == "ops") o += $i }
     /^# .* diverged .* not reproduced/ { u++ }
     END { printf "# all jobs: %d sequences, %d ops on every back end; %d divergences not reproduced\n", s, o, u }' \
	"${logs[@]}"
exit $status
