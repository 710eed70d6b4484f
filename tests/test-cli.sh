#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Command-line hygiene of the installed tools: --help exits 0 and says how to
# use them, unknown options and names exit 2 with a message, and output meant
# for reading is free of the library's diagnostics. TAP.
# Usage: test-cli.sh BUILD_ROOT
set -uo pipefail

build=${1:?usage: test-cli.sh BUILD_ROOT}
n=0
failed=0

check() {
	local what=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		failed=$((failed + 1))
	fi
}

# Run "$@", keeping stdout, stderr and the exit status.
run() {
	out=$("$@" 2>"$errfile")
	rc=$?
	err=$(<"$errfile")
}

errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT

conf=$build/tests/mmprim-conformance
run "$conf" --help
check "mmprim-conformance --help exits 0" test "$rc" -eq 0
check "mmprim-conformance --help gives usage" grep -q '^usage: mmprim-conformance' <<<"$out"
run "$conf" --bogus
check "mmprim-conformance --bogus exits 2" test "$rc" -eq 2
check "mmprim-conformance --bogus names the option" grep -q "unknown option '--bogus'" <<<"$err"
run "$conf" --report sparc
check "mmprim-conformance --report sparc exits 2" test "$rc" -eq 2
check "mmprim-conformance names the missing back end" grep -q "no back end 'sparc'" <<<"$err"
run "$conf" --report generic
check "mmprim-conformance --report generic exits 0" test "$rc" -eq 0
check "--report shows only the back end asked for" \
	test "$(grep -c 'checks pass' <<<"$out")" -eq 1
check "--report prints no library diagnostics" \
	bash -c '! grep -q "libmmprim:" <<<"$1$2"' _ "$out" "$err"

echo "1..$n"
((failed == 0))
