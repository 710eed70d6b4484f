#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run `mmprim-seeds ... --json` and check the shape of what it prints.

usage: check-seeds-json.py MMPRIM_SEEDS ARGS...

Every stdout line must be one JSON object:
  {"seed", "arch", "baseline": {"seconds", "counters"}, "optimized": {...},
   "ratio": baseline seconds / optimized seconds, ...seed-specific fields}
with the same counter names everywhere. Exit 0 when all holds, 1 otherwise.
"""
import json
import math
import subprocess
import sys


def fail(msg):
    print(f"check-seeds-json: {msg}", file=sys.stderr)
    sys.exit(1)


def check_side(obj, side, where, counter_names):
    s = obj.get(side)
    if not isinstance(s, dict):
        fail(f"{where}: '{side}' is not an object")
    secs = s.get("seconds")
    if not isinstance(secs, (int, float)) or isinstance(secs, bool) \
            or not math.isfinite(secs) or secs <= 0:
        fail(f"{where}: {side}.seconds is not a positive number: {secs!r}")
    c = s.get("counters")
    if not isinstance(c, dict) or not c:
        fail(f"{where}: {side}.counters is not a non-empty object")
    for k, v in c.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            fail(f"{where}: {side}.counters.{k} is not a count: {v!r}")
    if counter_names is not None and set(c) != counter_names:
        fail(f"{where}: {side}.counters names differ from the first object's")
    return secs, set(c)


def main():
    if len(sys.argv) < 2:
        fail("usage: check-seeds-json.py MMPRIM_SEEDS ARGS...")
    cmd = sys.argv[1:]
    want_seed = cmd[1] if len(cmd) > 1 and cmd[1] != "all" else None
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited with {p.returncode}")
    lines = p.stdout.splitlines()
    if not lines:
        fail("no output")

    counter_names = None
    seen = set()
    for n, line in enumerate(lines, 1):
        where = f"line {n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            fail(f"{where}: not JSON ({e}): {line[:200]}")
        if not isinstance(obj, dict):
            fail(f"{where}: not an object")
        seed, arch = obj.get("seed"), obj.get("arch")
        if not isinstance(seed, str) or not seed or not isinstance(arch, str) or not arch:
            fail(f"{where}: 'seed' and 'arch' must be non-empty strings")
        if want_seed and seed != want_seed:
            fail(f"{where}: seed {seed!r}, expected {want_seed!r}")
        # A seed may run several cases per back end, told apart by "case".
        key = (seed, arch, obj.get("case"))
        if key in seen:
            fail(f"{where}: {seed} on {arch} ({obj.get('case')}) printed twice")
        seen.add(key)
        base, counter_names = check_side(obj, "baseline", where, counter_names)
        opt, _ = check_side(obj, "optimized", where, counter_names)
        ratio = obj.get("ratio")
        if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) \
                or not math.isclose(ratio, base / opt, rel_tol=1e-6):
            fail(f"{where}: ratio {ratio!r} is not {base / opt}")
        print(f"ok {seed} [{arch}]: ratio {ratio:.2f}x")


if __name__ == "__main__":
    main()
