#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The whole test suite: a native build (build/), a release build
# (build-release/), an ASan+UBSan build (build-asan/) and an aarch64 cross
# build run under qemu-aarch64 (build-arm64/, scripts/test-arm64.sh), each
# followed by meson test. All run even when one
# fails; the last line printed is "N passed, N failed[, N skipped]" over all.
# MMP_TEST_ARGS (word-split) is passed to every meson test run, e.g.
#   MMP_TEST_ARGS='--suite conformance -v' bash scripts/test.sh
# MMP_SKIP_ARM64=1 leaves the arm64 suite out. When its cross setup fails (no
# network to the Debian archive, not root for the first install, ...), it
# counts as one failure.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

read -r -a extra_args <<<"${MMP_TEST_ARGS:-}"

total_pass=0
total_fail=0
total_skip=0
failed=()	# each failure that is no meson test's, recapped above the last line
testlogs=()	# "suite=builddir" of each meson test run with failures, recapped too

# Count one failure that is no meson test's, and say what it was.
fail_one() {
	echo "==> $1"
	failed+=("$1")
	total_fail=$((total_fail + 1))
}

# Configure $1 with the remaining arguments as options, reusing an existing build.
configure() {
	local dir=$1
	shift
	if [[ -f $dir/build.ninja ]]; then
		# Reused: make sure the options are the ones this script wants.
		if (($#)); then
			meson configure "$dir" "$@" >/dev/null || return
		fi
		return 0
	fi
	if [[ -f $dir/meson-private/coredata.dat ]]; then
		meson setup --reconfigure "$dir" "$@"
	else
		meson setup "$dir" "$@"
	fi
}

# Count the results in $1/meson-logs/testlog.json: prints "pass fail skip".
count_results() {
	local log=$1/meson-logs/testlog.json
	# One JSON object per line; quotes inside strings are escaped, so the first
	# unescaped "result": "..." on a line is the test's result.
	awk '
		match($0, /"result": *"[A-Z]+"/) {
			r = substr($0, RSTART, RLENGTH)
			sub(/^"result": *"/, "", r)
			sub(/"$/, "", r)
			if (r == "OK" || r == "EXPECTEDFAIL")
				pass++
			else if (r == "SKIP")
				skip++
			else
				fail++
		}
		END { printf "%d %d %d\n", pass, fail, skip }
	' "$log"
}

# Add the results in $1/meson-logs/testlog.json of suite $2, whose meson test
# exited with $3, to the totals.
add_results() {
	local dir=$1 name=$2 rc=$3 pass fail skip
	read -r pass fail skip < <(count_results "$dir")
	if ((rc != 0 && fail == 0)); then
		# meson test failed without a failing test in its log (bad arguments,
		# no tests found, a crash of meson itself): still a failure.
		echo "==> $name: meson test exited with $rc"
		failed+=("$name: meson test exited with $rc")
		fail=1
	fi
	echo "==> $name: $pass passed, $fail failed, $skip skipped"
	((fail > 0)) && testlogs+=("$name=$dir")
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
}

# Build $1 and run its tests; the remaining arguments go to meson test.
run_suite() {
	local dir=$1 name=$2
	shift 2
	local rc

	echo "==> $name: building in $dir"
	if ! ninja -C "$dir"; then
		fail_one "$name: BUILD FAILED"
		return
	fi

	echo "==> $name: meson test"
	rm -f "$dir/meson-logs/testlog.json"
	meson test -C "$dir" --print-errorlogs --num-processes 2 "$@" "${extra_args[@]}"
	rc=$?
	if [[ ! -f $dir/meson-logs/testlog.json ]]; then
		fail_one "$name: meson test (exit $rc) ran no test"
		return
	fi
	add_results "$dir" "$name" "$rc"
}

if ! bash scripts/deps.sh; then
	echo "0 passed, 1 failed"
	exit 1
fi

# Every build is warning-free at warning_level=3 (the project default) under
# gcc and clang: warnings are errors here, not for users building the release.
# Native, with the benches (their smoke tests are part of the suite).
if configure build -Dbenches=true -Dwerror=true; then
	run_suite build native
else
	fail_one "native: meson setup failed"
fi

# Release: what people build to measure. The optimizer may expose what the
# default build hides (it once sank a copy out of a fault-catching window).
if configure build-release -Dbuildtype=release -Dbenches=true -Dwerror=true; then
	run_suite build-release release
else
	fail_one "release: meson setup failed"
fi

# ASan + UBSan. Sanitized code runs about twice as slow: double the timeouts.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if configure build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbenches=false \
	-Dwerror=true; then
	run_suite build-asan asan+ubsan --timeout-multiplier 2
else
	fail_one "asan+ubsan: meson setup failed"
fi

# clang builds everything too, benches included, warnings as errors; one test.
if command -v clang >/dev/null 2>&1 &&
	CC=clang CXX=clang++ configure build-clang -Dbenches=true -Dwerror=true; then
	if ninja -C build-clang; then
		echo "==> clang -Werror: 1 passed"
		total_pass=$((total_pass + 1))
	else
		fail_one "clang -Werror: BUILD FAILED"
	fi
else
	fail_one "clang -Werror: clang missing or meson setup failed; counted as 1 failure"
fi

# The differential test's op decoder under libFuzzer (clang), 60 s against
# the host kernel and every back end; it counts as one test.
if command -v clang >/dev/null 2>&1 &&
	CC=clang configure build-fuzz -Dbenches=false -Dfuzz=true -Dwerror=true \
		-Dc_args=-fsanitize=fuzzer-no-link -Db_sanitize=address,undefined -Db_lundef=false &&
	ninja -C build-fuzz tests/fuzz_kernel_diff; then
	echo "==> fuzz: 60 s of tests/fuzz_kernel_diff"
	mkdir -p build-fuzz/corpus
	if (cd build-fuzz && MMPRIM_DEBUG_VM=1 ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		./tests/fuzz_kernel_diff -max_total_time=60 -max_len=2048 corpus >fuzz.log 2>&1); then
		echo "==> fuzz: 1 passed ($(grep -c NEW build-fuzz/fuzz.log) new inputs)"
		total_pass=$((total_pass + 1))
	else
		tail -40 build-fuzz/fuzz.log
		fail_one "fuzz: FAILED (build-fuzz/fuzz.log, crash-* inputs in build-fuzz/)"
	fi
else
	fail_one "fuzz: clang missing or the fuzz build failed; counted as 1 failure"
fi

# arm64: cross-built for aarch64, every test under qemu-aarch64. Exit 2 of
# test-arm64.sh means the cross setup or the build failed and no test ran.
if [[ ${MMP_SKIP_ARM64:-0} == 1 ]]; then
	echo "==> arm64: skipped (MMP_SKIP_ARM64=1)"
else
	rm -f build-arm64/meson-logs/testlog.json
	env -u ASAN_OPTIONS -u UBSAN_OPTIONS bash scripts/test-arm64.sh "${extra_args[@]}"
	rc=$?
	if ((rc == 2)) || [[ ! -f build-arm64/meson-logs/testlog.json ]]; then
		fail_one "arm64: FAILED: no arm64 test ran (test-arm64.sh exit $rc); counted as 1 failure"
	else
		add_results build-arm64 arm64 "$rc"
	fi
fi

# The recap sits where a reader of only the tail still sees it.
if ((total_fail > 0)); then
	echo "==> what failed"
	for f in "${failed[@]}"; do
		echo "FAILED: $f"
	done
	((${#testlogs[@]})) && python3 scripts/testlog-failures.py "${testlogs[@]}"
fi
summary="$total_pass passed, $total_fail failed"
((total_skip > 0)) && summary+=", $total_skip skipped"
echo "$summary"
((total_fail == 0))
