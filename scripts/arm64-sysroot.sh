#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Everything the arm64 cross build needs, idempotent and quiet when done:
#  1. the cross toolchain and qemu-user from Debian (installed when root and
#     missing; nothing else on the host is installed or upgraded),
#  2. a private sysroot of Debian's arm64 liburcu and hwloc packages, unpacked
#     with dpkg-deb -x (never installed: installing liburcu-dev:arm64 through
#     multiarch would upgrade host packages),
#  3. a meson cross file pointing at both, with absolute paths.
#
# Usage: arm64-sysroot.sh [DIR]     (default: build-arm64-sysroot/ in the tree)
# Prints the path of the cross file on its last line. The debs are cached in
# DIR/debs and the sysroot in DIR/root: a second run downloads nothing and does
# not touch apt or dpkg. Set MMP_ARM64_REFRESH=1 to download the debs again.
#
# To download the arm64 debs, arm64 is added to dpkg's architectures for the
# time of one apt-get update and apt-get download, then removed again (and the
# arm64 package lists dropped by a second apt-get update), also on failure or
# interruption. An arm64 architecture that was there before is left alone.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

dir=${1:-$PWD/build-arm64-sysroot}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
sysroot=$dir/root
debs=$dir/debs
cross_file=$dir/aarch64-linux-gnu.ini
stamp=$sysroot/.mmprim-sysroot

# Debian's toolchain for aarch64: C for the library, C++ because the project
# declares it (bench/gbench/shim.cc), the arm64 glibc, and qemu-aarch64 to run it.
tool_packages=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
tool_commands=(aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ qemu-aarch64)

# The sysroot: liburcu (liburcu-memb.pc) and hwloc (hwloc.pc) with the shared
# libraries they load. libhwloc.so.15 needs libudev.so.1 (and libm, libc);
# hwloc.pc asks for nothing more when linking dynamically (Requires.private is
# empty, Libs.private is only for -static). libnuma is here as libhwloc-dev
# depends on it; libhwloc-dev's libltdl-dev dependency is left out: nothing
# in hwloc.pc or the libraries' NEEDED refers to libltdl.
sysroot_packages=(liburcu-dev liburcu8 libhwloc-dev libhwloc15 libudev1 libnuma1 libnuma-dev)
multiarch=aarch64-linux-gnu

log() { echo "arm64-sysroot: $*" >&2; }
die() {
	log "$*"
	exit 1
}

case $dir in
*\'* | *\"* | *\\*) die "the directory $dir has a quote or backslash; the cross file cannot name it" ;;
esac

is_root() { [[ $(id -u) -eq 0 ]]; }

pkg_installed() {
	[[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) == "install ok installed" ]]
}

# apt and dpkg take locks that other users of the machine may hold for a while.
apt_get() {
	local try
	for try in 1 2 3; do
		if apt-get -o DPkg::Lock::Timeout=120 "$@" </dev/null; then
			return 0
		fi
		((try < 3)) || break
		log "apt-get $1 failed (try $try), retrying in 10 s"
		sleep 10
	done
	return 1
}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	die "not a Debian system: the arm64 cross build uses Debian's cross toolchain and arm64 packages"
fi

# ---- 1. cross toolchain and qemu-user -------------------------------------------

missing=()
for pkg in "${tool_packages[@]}"; do
	pkg_installed "$pkg" || missing+=("$pkg")
done
if ((${#missing[@]})); then
	if ! is_root; then
		log "missing Debian packages: ${missing[*]}"
		die "install them with: sudo apt-get install --no-install-recommends ${missing[*]}"
	fi
	export DEBIAN_FRONTEND=noninteractive
	log "installing ${missing[*]}"
	apt_get update -q >/dev/null
	# Refuse anything but new packages: no upgrade or removal of what the host
	# has (a cross gcc pins gcc-12-base etc. to its own version, so a stale
	# host could otherwise be upgraded behind the user's back).
	sim=$(apt-get install -s -q --no-install-recommends "${missing[@]}" </dev/null) ||
		die "apt-get cannot install ${missing[*]}"
	changes=$(grep -E '^(Inst [^ ]+ \[|Remv )' <<<"$sim" || true)
	if [[ -n $changes ]]; then
		log "installing ${missing[*]} would change host packages:"
		printf '  %s\n' "$changes" >&2
		die "refusing; install the cross toolchain by hand"
	fi
	apt_get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
fi
for cmd in "${tool_commands[@]}"; do
	command -v "$cmd" >/dev/null 2>&1 || die "$cmd not found after installing ${tool_packages[*]}"
done
[[ -e /usr/$multiarch/lib/ld-linux-aarch64.so.1 ]] ||
	die "/usr/$multiarch/lib/ld-linux-aarch64.so.1 missing (libc6-arm64-cross)"

# ---- 2. the private sysroot -----------------------------------------------------

# What the build needs from the sysroot; the sysroot counts as complete when the
# stamp names exactly these packages and the files are all there.
want_files=(
	"usr/lib/$multiarch/pkgconfig/liburcu-memb.pc"
	"usr/lib/$multiarch/pkgconfig/hwloc.pc"
	"usr/lib/$multiarch/liburcu-memb.so.8"
	"usr/lib/$multiarch/liburcu-common.so.8"
	"usr/lib/$multiarch/libhwloc.so.15"
	"usr/lib/$multiarch/libudev.so.1"
	usr/include/hwloc.h
	"usr/include/$multiarch/urcu/config.h"
)

sysroot_complete() {
	[[ -f $stamp ]] || return 1
	[[ $(head -n1 "$stamp") == "packages: ${sysroot_packages[*]}" ]] || return 1
	local f
	for f in "${want_files[@]}"; do
		[[ -e $sysroot/$f ]] || return 1
	done
}

# The cached deb of $1, if any.
cached_deb() {
	{ compgen -G "$debs/${1}_*_arm64.deb" || true; } | sort -V | tail -n1
}

added_arch=0
restore_arch() {
	if ((added_arch)); then
		added_arch=0
		log "removing the arm64 architecture again"
		if ! dpkg --remove-architecture arm64; then
			log "WARNING: dpkg --remove-architecture arm64 failed; run it by hand"
			return
		fi
		# Drop the arm64 package lists so that apt is as it was.
		apt_get update -q >/dev/null || log "WARNING: apt-get update after removing arm64 failed"
	fi
}

download_debs() {
	local need=() pkg
	for pkg in "${sysroot_packages[@]}"; do
		if [[ ${MMP_ARM64_REFRESH:-0} == 1 || -z $(cached_deb "$pkg") ]]; then
			need+=("$pkg")
		fi
	done
	((${#need[@]})) || return 0

	is_root || die "downloading arm64 debs needs root (dpkg --add-architecture, apt-get update)"
	export DEBIAN_FRONTEND=noninteractive
	# One adder/remover of the arm64 architecture at a time on this machine
	# (other trees, CI): another run must not remove it under our download.
	local lock=/run/lock/mmprim-arm64-sysroot.lock
	[[ -d /run/lock ]] || lock=/tmp/mmprim-arm64-sysroot.lock
	exec 9>"$lock"
	flock -w 900 9 || die "another arm64-sysroot.sh holds $lock"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		trap restore_arch EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM
		added_arch=1
		log "adding the arm64 architecture for the download"
		dpkg --add-architecture arm64
	fi
	apt_get update -q >/dev/null || die "apt-get update failed (no network to the Debian archive?)"
	local tmp
	tmp=$(mktemp -d "$debs/.download.XXXXXX")
	# apt drops to the _apt user for downloads: let it write there.
	chmod 755 "$tmp"
	chown _apt "$tmp" 2>/dev/null || true
	log "downloading ${need[*]} (arm64)"
	if ! (cd "$tmp" && apt-get download -q "${need[@]/%/:arm64}" </dev/null >/dev/null); then
		rm -rf "$tmp"
		die "apt-get download of the arm64 debs failed (no network to the Debian archive?)"
	fi
	for pkg in "${need[@]}"; do
		rm -f "$debs/${pkg}"_*_arm64.deb
	done
	mv "$tmp"/*.deb "$debs"/
	rm -rf "$tmp"
	restore_arch
	trap - EXIT INT TERM
}

if [[ ${MMP_ARM64_REFRESH:-0} == 1 ]] || ! sysroot_complete; then
	mkdir -p "$debs"
	download_debs

	log "unpacking the arm64 debs into $sysroot"
	new=$dir/root.new
	rm -rf "$new"
	mkdir -p "$new"
	for pkg in "${sysroot_packages[@]}"; do
		deb=$(cached_deb "$pkg")
		[[ -n $deb ]] || die "no deb for $pkg in $debs"
		dpkg-deb -x "$deb" "$new"
	done
	# Merged /usr as on the host: anything under lib/ moves to usr/lib/.
	for d in lib lib64; do
		if [[ -d $new/$d && ! -L $new/$d ]]; then
			mkdir -p "$new/usr/$d"
			cp -a "$new/$d/." "$new/usr/$d/"
			rm -rf "${new:?}/$d"
		fi
	done
	# Absolute symlinks would point into the host: make them sysroot-relative.
	while IFS= read -r -d '' link; do
		target=$(readlink "$link")
		rel=$(realpath -m --relative-to="$(dirname "$link")" "$new$target")
		ln -sfn "$rel" "$link"
	done < <(find "$new" -type l -lname '/*' -print0)
	{
		echo "packages: ${sysroot_packages[*]}"
		for pkg in "${sysroot_packages[@]}"; do
			basename "$(cached_deb "$pkg")"
		done
	} >"$new/.mmprim-sysroot"
	rm -rf "$sysroot"
	mv "$new" "$sysroot"
	sysroot_complete || die "the sysroot in $sysroot lacks files the build needs"
fi

# ---- 3. the meson cross file -----------------------------------------------------

libdir=$sysroot/usr/lib/$multiarch
tmp_cross=$(mktemp "$dir/.cross.XXXXXX")
cat >"$tmp_cross" <<EOF
# Generated by scripts/arm64-sysroot.sh: aarch64 with Debian's cross toolchain,
# liburcu and hwloc from the private sysroot, tests run under qemu-aarch64
# (which gives them MMPRIM_QEMU_USER=1 to tell).
[binaries]
c = 'aarch64-linux-gnu-gcc'
cpp = 'aarch64-linux-gnu-g++'
ar = 'aarch64-linux-gnu-ar'
strip = 'aarch64-linux-gnu-strip'
pkgconfig = 'pkg-config'
exe_wrapper = ['qemu-aarch64', '-L', '/usr/$multiarch', '-E', 'LD_LIBRARY_PATH=$libdir', '-E', 'MMPRIM_QEMU_USER=1']

[properties]
sys_root = '$sysroot'
pkg_config_libdir = ['$libdir/pkgconfig']

[built-in options]
# -isystem: the sysroot's headers are system headers, so -Wpedantic spares the
# inline code of theirs we compile (liburcu's read side, _LGPL_SOURCE).
c_args = ['-isystem$sysroot/usr/include/$multiarch']
c_link_args = ['-Wl,-rpath-link,$libdir']
cpp_args = ['-isystem$sysroot/usr/include/$multiarch']
cpp_link_args = ['-Wl,-rpath-link,$libdir']

[host_machine]
system = 'linux'
cpu_family = 'aarch64'
cpu = 'aarch64'
endian = 'little'
EOF
if cmp -s "$tmp_cross" "$cross_file"; then
	rm -f "$tmp_cross"
else
	mv "$tmp_cross" "$cross_file"
fi
echo "$cross_file"
