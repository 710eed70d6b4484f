#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# scripts/icount.sh --check must fail on a regression of more than 5% and on a
# figure it did not measure, and pass within 5%: checked on made-up figures
# (--figures), so without valgrind. TAP.
set -u
icount=$(dirname "$0")/../../scripts/icount.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0
failed=0

printf '# a baseline\nx86_64 fault-4k 1000.0 page\narm64 munmap-4k 100.0 page\n' >"$dir/base"

# $1: expected exit (0 or 1), $2: description, stdin: the figures measured.
check() {
	local want=$1 what=$2 rc
	cat >"$dir/now"
	bash "$icount" --figures "$dir/now" --check "$dir/base" >"$dir/out" 2>&1
	rc=$?
	n=$((n + 1))
	if [ $((rc != 0)) -eq "$want" ]; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what (exit $rc)"
		sed 's/^/# /' "$dir/out"
		failed=1
	fi
}

check 0 "equal figures pass" <<<$'x86_64 fault-4k 1000.0 page\narm64 munmap-4k 100.0 page'
check 0 "4.9% above passes" <<<$'x86_64 fault-4k 1049.0 page\narm64 munmap-4k 100.0 page'
check 0 "better passes" <<<$'x86_64 fault-4k 600.0 page\narm64 munmap-4k 90.0 page'
check 1 "5.1% above fails" <<<$'x86_64 fault-4k 1051.0 page\narm64 munmap-4k 100.0 page'
check 1 "a regression in any row fails" <<<$'x86_64 fault-4k 900.0 page\narm64 munmap-4k 120.0 page'
check 1 "a baseline row not measured fails" <<<$'x86_64 fault-4k 1000.0 page'
echo "1..$n"
exit $failed
