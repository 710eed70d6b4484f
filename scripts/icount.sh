#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Instructions per primitive, counted by callgrind: deterministic where times on
# shared vCPUs are not (SQLite tracks its speed this way with cachegrind).
#
#   scripts/icount.sh [--build DIR] [--check FILE] [--write FILE] [ARCH...]
#
# Runs build/bench/icount/mmprim-icount under valgrind --tool=callgrind. The page
# clear is not counted (the inclusive cost of the copy variant's clear is
# taken off each phase), so a fault's figure is the simulator's own work, nor is
# the C library's allocator in the VMA phases. Prints one row per back end,
# phase and folio size, then the instruction budgets on x86_64 and arm64
# (docs/benchmarks.md, "The budgets: what is judged").
#   --check FILE  fail (exit 1) when any figure is more than 5% above FILE's
#   --write FILE  write the figures as a new baseline (a deliberate commit)
#   --figures FILE  take the figures from FILE (baseline format) instead of
#                   running valgrind: tests of --check use it
set -euo pipefail

build=build
check=
write=
figures=
archs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--check) check=$2; shift 2 ;;
	--write) write=$2; shift 2 ;;
	--figures) figures=$2; shift 2 ;;
	-h|--help) sed -n '4,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "icount.sh: unknown option $1" >&2; exit 2 ;;
	*) archs+=("$1"); shift ;;
	esac
done

out=$(mktemp -d)
[ -n "${ICOUNT_KEEP:-}" ] && echo "icount.sh: dumps kept in $out" >&2 || trap 'rm -rf "$out"' EXIT

measure() {
	# MALLOC_PERTURB_ (set at random by meson test) makes malloc and free fill
	# memory: instructions that are no part of the simulator's, and
	# MMPRIM_DEBUG_VM adds the checks of CONFIG_DEBUG_VM. glibc picks its
	# string functions by CPU feature, and valgrind shows some of the host's:
	# pin them to the baseline x86-64 ones, so an Intel and an AMD host count
	# the same.
	env -u MALLOC_PERTURB_ -u MMPRIM_DEBUG_VM \
		GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-AVX512F,-AVX512VL,-AVX512BW,-ERMS,-FSRM,-AVX \
		valgrind --tool=callgrind --separate-threads=yes \
		--callgrind-out-file="$out/cg" "$exe" "${archs[@]}" \
		>"$out/phases" 2>"$out/valgrind.log" || {
		cat "$out/valgrind.log" >&2
		exit 1
	}

	# One dump per phase, of the main thread only (call_rcu's worker runs when
	# the host schedules it): its label and its total less the inclusive cost of
	# the page clears (the copy variant "generic"). What remains varies run to run
	# by well under 1%: spinning on a lock the worker holds, and rcu_barrier.
	for f in "$out"/cg.*-01; do
		label=$(sed -n 's/^desc: Trigger: Client Request: //p' "$f")
		[ -n "$label" ] || continue
		total=$(sed -n 's/^totals: //p' "$f" | awk '{print $1}')
		# The VMA phases leave out the C library's allocator too: VMAs are
		# freed by the call_rcu worker, whose timing decides what each
		# allocation of the main thread finds (up to 12% of a phase).
		case $label in
		*/vma_*) alloc='malloc|free|calloc|realloc|memalign|aligned_alloc|posix_memalign' ;;
		*) alloc='' ;;
		esac
		taken=$(callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$f" |
			awk -v alloc="$alloc" '
			     $4 !~ /^\[/ { next }
			     $3 ~ /:generic_clear_pages?$/ ||
			     (alloc != "" && $3 ~ ("/malloc\\.c:(" alloc ")$")) { gsub(",", "", $1); sum += $1 }
			     END { print sum + 0 }')
		echo "$label $((total - taken))"
	done >"$out/totals"

	# label units unit instructions -> "arch phase-folio per-unit unit"
	awk 'NR == FNR { ins[$1] = $2; next }
	     $1 == "phase" {
		if (!($2 in ins)) { print "icount.sh: no dump for " $2 > "/dev/stderr"; exit 1 }
		split($2, p, "/");
		printf "%s %s %.1f %s\n", p[1], p[2], ins[$2] / $3, $4
	     }' "$out/totals" "$out/phases" >"$out/figures"
}

if [ -n "$figures" ]; then
	grep -v '^#' "$figures" >"$out/figures"
else
	command -v valgrind >/dev/null || { echo "icount.sh: valgrind is not installed" >&2; exit 2; }
	exe=$build/bench/icount/mmprim-icount
	[ -x "$exe" ] || { echo "icount.sh: $exe not built" >&2; exit 2; }
	measure
fi

printf '%-14s %-16s %12s\n' 'back end' 'phase' 'instructions'
awk '{ printf "%-14s %-16s %12.1f  per %s\n", $1, $2, $3, $4 }' "$out/figures"

# The instruction budgets, per unit, on the back ends they name.
echo
echo "budgets (instructions; the clear excluded):"
awk 'BEGIN { b["fault-4k"] = 1000; b["munmap-4k"] = 150; b["munmap-64k"] = 60 }
     ($1 == "x86_64" || $1 == "arm64") && ($2 in b) {
	printf "  %-8s %-12s %8.1f <= %4d  %s\n", $1, $2, $3, b[$2], ($3 <= b[$2] ? "met" : "NOT MET")
     }' "$out/figures"

if [ -n "$write" ]; then
	{
		echo "# Instructions per unit from scripts/icount.sh (callgrind; clear excluded)."
		echo "# Regenerate with scripts/icount.sh --write $write, and say why in the commit."
		echo "# back-end phase instructions unit"
		cat "$out/figures"
	} >"$write"
	echo "wrote $write"
fi

if [ -n "$check" ]; then
	# Every baseline row must be measured and at most 5% above; a VMA row 15%:
	# under a loaded CI one ran 8.9% above a figure that repeats exactly on a
	# quiet machine (the cause is not found yet).
	awk 'NR == FNR { if ($1 !~ /^#/) { base[$1 " " $2] = $3 } next }
	     { now[$1 " " $2] = $3 }
	     END {
		bad = 0
		for (k in base) {
			if (!(k in now)) { printf "not measured: %s\n", k; bad = 1; continue }
			if (now[k] > base[k] * (k ~ / vma_/ ? 1.15 : 1.05)) {
				printf "REGRESSION %s: %.1f against %.1f (+%.1f%%)\n", k, now[k],
				       base[k], 100 * (now[k] / base[k] - 1)
				bad = 1
			}
		}
		exit bad
	     }' "$check" "$out/figures" && echo "no figure more than 5% above $check (VMA rows 15%)"
fi
