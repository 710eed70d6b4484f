#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Command-line hygiene of the installed tools: --help exits 0 and says how to
# use them, unknown options and names exit 2 with a message, and output meant
# for reading is free of the library's diagnostics. TAP.
# Usage: test-cli.sh conformance|seeds|bench PATH_OF_THE_TOOL
set -uo pipefail

tool=${1:?usage: test-cli.sh conformance|seeds|bench PATH}
path=${2:?usage: test-cli.sh conformance|seeds|bench PATH}
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

conformance_checks() {
local conf=$path
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
# A check that stops the process (as a BUG does) fails that back end, not the report.
run env MMP_CONFORMANCE_ABORT_AFTER=5 "$conf" --report generic
check "--report after an abort in a check exits 1" test "$rc" -eq 1
check "--report after an abort still reports the back end, failing" \
	grep -Eq '^generic: [0-9]+ of [0-9]+ checks pass  <-- FAILING' <<<"$out"
check "--report names how the checks stopped and after which" \
	grep -q 'FAIL stopped (signal 6) after ".*": the checks after it did not run' <<<"$out"
}

seeds_checks() {
	local seeds=$path csv

	for h in --help help; do
		run "$seeds" $h
		check "mmprim-seeds $h exits 0" test "$rc" -eq 0
		check "mmprim-seeds $h says which seeds take --csv" \
			grep -q -- '--csv FILE .*taken by: huge-copy' <<<"$out"
	done
	run "$seeds" --bogus
	check "mmprim-seeds --bogus exits 2" test "$rc" -eq 2
	run "$seeds" no-such-seed
	check "mmprim-seeds no-such-seed exits 2, naming it" \
		bash -c '(( $1 == 2 )) && grep -q "unknown seed .no-such-seed." <<<"$2"' _ "$rc" "$err"
	csv=$(mktemp -u)
	run "$seeds" page-fault --quick --csv "$csv"
	check "--csv to a seed that ignores it exits 2" test "$rc" -eq 2
	check "and says which seeds take it" grep -q "page-fault does not take --csv; seeds that do: huge-copy" <<<"$err"
	check "and writes no file" test ! -e "$csv"
	run "$seeds" all --csv "$csv"
	check "all --csv exits 2 (most seeds ignore it)" test "$rc" -eq 2
	run "$seeds" huge-copy --quick --csv /nonexistent-dir/x.csv
	check "an unwritable --csv exits 2 before measuring" test "$rc" -eq 2
	check "and names the file" grep -q "cannot write --csv /nonexistent-dir/x.csv" <<<"$err"
	run "$seeds" mremap --arch sparc
	check "an unknown --arch exits 2" test "$rc" -eq 2
}

bench_checks() {
	local bench=$path

	run "$bench" --help
	check "mmprim-bench --help exits 0" test "$rc" -eq 0
	check "mmprim-bench --help explains the benchmark names" grep -q 'BENCHMARKS' <<<"$out"
	check "and Google Benchmark's own flags" grep -q -- '--benchmark_filter' <<<"$out"
	run "$bench" --bogus
	check "mmprim-bench --bogus exits 2" test "$rc" -eq 2
	run "$bench" --benchmark_filter='^huge_copy/ascending/generic/0/0/' --benchmark_min_time=0.01
	check "a short min_time makes huge_copy short: 2 iterations, not 40" \
		bash -c '(( $1 == 0 )) && grep -q "huge_copy/ascending/generic/0/0/iterations:2/" <<<"$2"' \
		_ "$rc" "$out"
}

case $tool in
conformance) conformance_checks ;;
seeds) seeds_checks ;;
bench) bench_checks ;;
*) echo "test-cli.sh: unknown tool $tool" >&2; exit 2 ;;
esac

echo "1..$n"
((failed == 0))
