#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# ABI check of the built libmmprim.so against the baseline of its soname,
# abi/libmmprim.so.<N>.abi (libabigail's abidw/abidiff, Debian's abigail-tools),
# and of the exported symbols against the public headers.
#   scripts/abi-check.sh BUILD_DIR            check (exit 1 on a break)
#   scripts/abi-check.sh BUILD_DIR --update   rewrite the baseline: a deliberate
#                                             commit that says why
# Allowed without a new soname: new functions, structures that grow at their
# end, enumerations that gain values at their end (abi/suppressions.abignore).
# Anything else needs the soname bumped in lib/meson.build and a new baseline.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${1:?usage: abi-check.sh BUILD_DIR [--update]}
lib=$(readlink -f "$build/lib/libmmprim.so")
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
baseline=abi/$soname.abi
headers=include/mmprim

# Every exported function is declared in the public headers, and every
# function declared there (not static inline) is exported.
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort)
declared=$(sed -n 's/^[a-z].*[ *]\(mmp_[a-z0-9_]*\)(.*/\1/p' "$headers"/*.h | sort -u)
inline=$(sed -n 's/^static inline .*[ *]\(mmp_[a-z0-9_]*\)(.*/\1/p' "$headers"/*.h | sort -u)
declared=$(comm -23 <(echo "$declared") <(echo "$inline"))
if [[ $exported != "$declared" ]]; then
	echo "abi-check: exported symbols and public declarations differ (< exported only, > declared only):"
	diff <(echo "$exported") <(echo "$declared") | grep '^[<>]' || true
	exit 1
fi
echo "abi-check: $(echo "$exported" | wc -l) exported functions, each declared in $headers"

if [[ ${2:-} == --update ]]; then
	abidw --headers-dir "$headers" --out-file "$baseline" "$lib"
	echo "abi-check: wrote $baseline"
	exit 0
fi
if [[ ! -f $baseline ]]; then
	echo "abi-check: no baseline $baseline for $soname: a new soname needs one (--update)"
	exit 1
fi
set +e
abidiff --no-added-syms --suppressions abi/suppressions.abignore \
	--headers-dir2 "$headers" "$baseline" "$lib"
rc=$?
set -e
# abidiff's status is a bit mask: 1 error, 2 usage, 4 ABI change, 8 incompatible change.
if ((rc != 0)); then
	echo "abi-check: $soname changed its ABI beyond additions (abidiff status $rc):"
	echo "bump the soname, or, if the change is compatible, update the baseline deliberately"
	exit 1
fi
echo "abi-check: $soname compatible with $baseline"
