#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Make sure the Debian packages that build and test libmmprim are installed.
# Quiet when everything is there. As root, installs what is missing; otherwise
# names the missing packages and fails. gcc brings libasan/libubsan, so the
# sanitizer build needs nothing extra.
set -euo pipefail

# clang and its runtime build the libFuzzer target of the differential test
# (and the clang -Werror build); abigail-tools checks the ABI; python3-matplotlib
# draws the seeds' figures (scripts/plot.py, run by /usr/bin/python3); valgrind
# counts instructions per primitive (scripts/icount.sh, the icount-baseline test).
packages=(meson ninja-build pkg-config gcc g++ liburcu-dev libbenchmark-dev libhwloc-dev hwloc clang
	  libclang-rt-14-dev abigail-tools python3-matplotlib valgrind)

if ! command -v dpkg-query >/dev/null 2>&1; then
	# Not Debian: check for the tools and libraries themselves instead.
	missing=()
	for tool in meson ninja pkg-config cc c++; do
		command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
	done
	if command -v pkg-config >/dev/null 2>&1; then
		for pc in liburcu-memb benchmark hwloc; do
			pkg-config --exists "$pc" || missing+=("$pc (pkg-config)")
		done
	fi
	if ((${#missing[@]})); then
		echo "deps.sh: not a Debian system and missing: ${missing[*]}" >&2
		exit 1
	fi
	exit 0
fi

missing=()
for pkg in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[[ $status == "install ok installed" ]] || missing+=("$pkg")
done

((${#missing[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
	echo "deps.sh: install them with: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q </dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
