#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The arm64 host build: cross-build the library, its tests, the tools and the
# benches for aarch64 in build-arm64/ (Debian's cross toolchain, liburcu and
# hwloc from the private sysroot of scripts/arm64-sysroot.sh) and run meson
# test, each test under qemu-aarch64 (the cross file's exe_wrapper). On aarch64 the host copy
# and clear variants are host/aarch64.c's (ldp/stp, NEON, DC ZVA, stnp).
# Arguments go to meson test, e.g. bash scripts/test-arm64.sh --suite bench -v
#
# Exit status: 0 all passed; 1 tests failed (build-arm64/meson-logs/testlog.json
# has the results); 2 the cross setup or the build failed (no test ran).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

dir=build-arm64
rm -f "$dir/meson-logs/testlog.json"

fail_setup() {
	echo "==> arm64: $*"
	exit 2
}

# Tests that cannot pass under Debian 12's qemu-user (7.2) for reasons outside
# libmmprim; each is named with the reason. MMP_ARM64_RUN_ALL=1 runs them anyway.
# qemu-user 7.2 aborts (cpu_exec: assertion failed: (cpu == current_cpu)) when
# the child of a threaded process starts a thread. Tests run under qemu see
# MMPRIM_QEMU_USER=1 (the cross file's exe_wrapper sets it) and skip such cases;
# a test that cannot would be listed here with that reason.
declare -A excluded=(
	[example-pkgconfig]="tests/test-example.sh builds examples/hello.c with the host cc and executes it directly; a cross build needs the cross compiler and qemu (no binfmt_misc here)"
)
[[ ${MMP_ARM64_RUN_ALL:-0} == 1 ]] && excluded=()

start=$SECONDS
if ! cross_file=$(bash scripts/arm64-sysroot.sh | tail -n1) || [[ ! -f $cross_file ]]; then
	fail_setup "cross setup failed (scripts/arm64-sysroot.sh, see above): no arm64 test ran"
fi
echo "==> arm64: toolchain and sysroot ready in $((SECONDS - start)) s ($cross_file)"

# build-arm64/ is set up anew when it was not set up with this cross file as it
# is now (meson does not reread a changed cross file's binaries, exe_wrapper).
if [[ -f $dir/build.ninja ]] && ! cmp -s "$cross_file" "$dir/mmprim-cross-file.ini"; then
	echo "==> arm64: $dir was set up with another cross file: setting it up anew"
	rm -rf "$dir"
fi
if [[ ! -f $dir/build.ninja ]]; then
	start=$SECONDS
	rm -rf "$dir"
	meson setup "$dir" --cross-file "$cross_file" -Dbenches=true -Dwerror=true || fail_setup "meson setup failed"
	cp "$cross_file" "$dir/mmprim-cross-file.ini"
	echo "==> arm64: meson setup took $((SECONDS - start)) s"
else
	meson configure "$dir" -Dbenches=true -Dwerror=true >/dev/null || fail_setup "meson configure failed"
fi

start=$SECONDS
echo "==> arm64: building in $dir"
ninja -C "$dir" || fail_setup "BUILD FAILED"
echo "==> arm64: build took $((SECONDS - start)) s"

# Every test but the excluded ones, by name (meson 1.0 has no --exclude).
tests=()
while IFS= read -r name; do
	if [[ -n ${excluded[$name]+set} ]]; then
		echo "==> arm64: not run under qemu: $name: ${excluded[$name]}"
	else
		tests+=("$name")
	fi
done < <(meson introspect --tests "$dir" |
	python3 -c 'import json, sys
print("\n".join(dict.fromkeys(t["name"] for t in json.load(sys.stdin))))')
((${#tests[@]})) || fail_setup "no test to run"

# qemu-user runs the tests 3 to 15 times slower than native; with other work
# on the two cores, triple the timeouts.
start=$SECONDS
echo "==> arm64: meson test under qemu-aarch64"
meson test -C "$dir" --print-errorlogs --num-processes 2 --timeout-multiplier 3 "$@" "${tests[@]}"
rc=$?
echo "==> arm64: meson test took $((SECONDS - start)) s"
if [[ ! -f $dir/meson-logs/testlog.json ]]; then
	echo "==> arm64: meson test (exit $rc) ran no test"
	exit 2
fi
((rc == 0)) || exit 1
