#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Install the build into a temporary DESTDIR, then build every program of
# examples/ the way a user would (pkg-config, installed headers and library
# only, the loader path as the README says) and run it.
# Usage: test-example.sh SOURCE_ROOT BUILD_ROOT [B_SANITIZE]
set -euo pipefail

src=${1:?usage: test-example.sh SOURCE_ROOT BUILD_ROOT [B_SANITIZE]}
build=${2:?usage: test-example.sh SOURCE_ROOT BUILD_ROOT [B_SANITIZE]}
sanitize=${3:-}

if [[ -z $sanitize ]]; then
	sanitize=$(meson introspect --buildoptions "$build" |
		grep -oE '"name": "b_sanitize", "value": "[^"]*"' | sed 's/.*"value": "//; s/"$//')
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmprim-example.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root

# No --no-rebuild: meson test builds only what tests depend on, and the install
# also wants the other installed targets (mmprim-seeds, mmprim-bench). After a
# full build this is a no-op.
meson install -C "$build" --destdir "$root" --quiet

# Where the files landed depends on prefix and libdir (multiarch): look.
pc=$(find "$root" -name libmmprim.pc -print -quit)
lib=$(find "$root" -name 'libmmprim.so' -print -quit)
hdr=$(find "$root" -path '*/include/mmprim/mmprim.h' -print -quit)
for f in "libmmprim.pc:$pc" "libmmprim.so:$lib" "mmprim/mmprim.h:$hdr"; do
	if [[ -z ${f#*:} ]]; then
		echo "test-example: ${f%%:*} was not installed" >&2
		exit 1
	fi
done

PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
export PKG_CONFIG_SYSROOT_DIR=$root
flags=$(pkg-config --cflags --libs libmmprim)
echo "pkg-config --cflags --libs libmmprim: $flags"

# A sanitized libmmprim.so needs the sanitizer runtimes loaded first: build the
# example with the same -fsanitize.
sanflags=()
if [[ -n $sanitize && $sanitize != none ]]; then
	sanflags=(-fsanitize="$sanitize" -fno-omit-frame-pointer)
fi

# The loader finds the library as the README's install section says for any
# prefix: the program carries the library folder pkg-config names (-rpath).
# Here the prefix lies under the temporary DESTDIR, so the folder is looked up
# without the sysroot and the DESTDIR put in front, as it would be installed.
libdir=$root$(PKG_CONFIG_SYSROOT_DIR='' pkg-config --variable=libdir libmmprim)
if [[ ! -e $libdir/libmmprim.so ]]; then
	echo "test-example: pkg-config's libdir $libdir holds no libmmprim.so" >&2
	exit 1
fi

# Every example, and each runs with no LD_LIBRARY_PATH a user would not have.
for c in "$src"/examples/*.c; do
	name=$(basename "$c" .c)
	# shellcheck disable=SC2086 # $flags is a list of compiler words
	${CC:-cc} -std=gnu11 -Wall -Wextra -Werror "${sanflags[@]}" -o "$tmp/$name" "$c" $flags \
		-Wl,-rpath,"$libdir"
	echo "test-example: running $name"
	env -u LD_LIBRARY_PATH "$tmp/$name" >"$tmp/$name.out"
	tail -n 3 "$tmp/$name.out"
done
