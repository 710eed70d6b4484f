#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Re-record the traces of this folder on this machine: bash tools/replay/traces/record.sh [NAME...]
# Each trace is `strace -f -ttt -T -e trace=memory,process -o NAME.trace CMD`, CMD as below;
# reexec-noprocess leaves %process out on purpose (mmprim-replay infers the exec); the
# traces whose name ends in -paths, and sqlite-wal, add -y, so every fd shows its path.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$here/realloc.c" "$here/reexec.c" "$here/python-threads.py" "$here/python-pool.py" \
	"$here/sqlite-wal.py" "$here/forkadv.c" "$here/seal-lock.c" "$here/softdirty.c" .
gcc -O2 -o realloc realloc.c
gcc -O2 -o forkadv forkadv.c
gcc -O2 -o reexec reexec.c
gcc -O2 -o seal-lock seal-lock.c
gcc -O2 -o softdirty softdirty.c
seq 1 300000 | awk '{print ($1*7919)%100003, $1}' > sort-input.txt

record() {
	name=$1
	shift
	strace -f -ttt -T -e trace=memory,process -o "$here/$name.trace" "$@" > /dev/null
	echo "$name: $(wc -l < "$here/$name.trace") lines, $(wc -c < "$here/$name.trace") bytes"
}

# With paths (-y): the replay maps each file by its path, shared between processes.
record_paths() {
	name=$1
	shift
	strace -f -y -ttt -T -e trace=memory,process -o "$here/$name.trace" "$@" > /dev/null
	echo "$name: $(wc -l < "$here/$name.trace") lines, $(wc -c < "$here/$name.trace") bytes"
}

# With process_madvise, which %memory leaves out (as prctl).
record_advise() {
	name=$1
	shift
	strace -f -ttt -T -e trace=memory,process,process_madvise,prctl -o "$here/$name.trace" \
		"$@" > /dev/null
	echo "$name: $(wc -l < "$here/$name.trace") lines, $(wc -c < "$here/$name.trace") bytes"
}

# With write and ioctl, and paths: the clear_refs writes and pagemap ioctls, known by their files.
record_proc() {
	name=$1
	shift
	strace -f -y -ttt -T -e trace=memory,process,write,ioctl -o "$here/$name.trace" "$@" > /dev/null
	echo "$name: $(wc -l < "$here/$name.trace") lines, $(wc -c < "$here/$name.trace") bytes"
}

# Memory calls only: no execve line, the exec shows as a new break and a fresh ld.so.
record_noprocess() {
	name=$1
	shift
	strace -f -ttt -T -e trace=memory -o "$here/$name.trace" "$@" > /dev/null
	echo "$name: $(wc -l < "$here/$name.trace") lines, $(wc -c < "$here/$name.trace") bytes"
}

want() {
	[ $# -eq 0 ] && return 0
	for n in "$@"; do [ "$n" = "$name" ] && return 0; done
	return 1
}

for name in python-threads python-pool gcc-compile git-log git-status sort realloc reexec-noprocess \
	    python-pool-paths sqlite-wal forkadv seal-lock softdirty; do
	want "$@" || continue
	case $name in
	python-threads) record "$name" /usr/bin/python3 python-threads.py ;;
	python-pool) record "$name" /usr/bin/python3 python-pool.py ;;
	gcc-compile) record "$name" gcc -O2 -c -o realloc.o realloc.c ;;
	git-log) record "$name" git -C "$repo" log --oneline -n 200 ;;
	git-status) record "$name" git -C "$repo" status --short ;;
	sort) record "$name" sort -S 64M --parallel=2 -o sorted.txt sort-input.txt ;;
	realloc) record "$name" ./realloc ;;
	reexec-noprocess) record_noprocess "$name" ./reexec ;;
	python-pool-paths) record_paths "$name" /usr/bin/python3 python-pool.py ;;
	sqlite-wal) record_paths "$name" /usr/bin/python3 sqlite-wal.py ;;
	forkadv) record "$name" ./forkadv ;;
	seal-lock) record_advise "$name" ./seal-lock ;;
	softdirty) record_proc "$name" ./softdirty ;;
	esac
done
