#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The failed tests of meson test logs, each with the tail of its output:
#   scripts/testlog-failures.py [--lines N] LABEL=BUILDDIR...
# scripts/test.sh prints this just above its last line, where a reader who
# sees only the end of a long CI log still finds what failed and why.
import json
import sys

PASSED = {"OK", "EXPECTEDFAIL", "SKIP"}


def main(argv):
    lines = 15
    if len(argv) > 1 and argv[0] == "--lines":
        lines = max(1, int(argv[1]))
        argv = argv[2:]
    for arg in argv:
        label, _, builddir = arg.partition("=")
        try:
            log = open(f"{builddir}/meson-logs/testlog.json", encoding="utf-8")
        except OSError:
            continue
        with log:
            for row in log:
                try:
                    test = json.loads(row)
                except ValueError:
                    continue
                if test.get("result") in PASSED:
                    continue
                print(f"FAILED: {label}: {test.get('name')} ({test.get('result')}, "
                      f"{test.get('duration', 0):.1f} s)")
                out = ((test.get("stdout") or "") + (test.get("stderr") or "")).rstrip("\n")
                rows = out.split("\n")
                # A TAP test's failed checks first (it may print thousands of
                # lines after them), then the end of its output.
                for line in [r for r in rows[:-lines] if r.startswith("not ok")][:lines]:
                    print(f"    {line}")
                for line in rows[-lines:]:
                    print(f"    {line}")


if __name__ == "__main__":
    main(sys.argv[1:])
