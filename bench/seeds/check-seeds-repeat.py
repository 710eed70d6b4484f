#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run `mmprim-seeds ... --json` several times and compare the runs.

usage: check-seeds-repeat.py [--plot PLOT_PY] RUNS MMPRIM_SEEDS ARGS...

Each run must pass check-seeds-json.py's checks. Counters are exact: every
counter of every (seed, arch, case) object must be identical in every run,
field by field, but for those in TIMING_DEPENDENT (the mmap lock's waits).
Verdicts are judgments of time on a machine others share: a claim whose ratio
sits near its threshold may be "met" in one run and "not met" in the next when
the load changes between them. Such a case is named and counted as unstable,
never a failure, for the suite must not depend on load. With --plot, the first
run's JSON is also rendered by PLOT_PY and each figure checked
(check-plots.py). Exit 0 when all holds, 1 otherwise.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

_spec = importlib.util.spec_from_file_location(
    "check_seeds_json", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "check-seeds-json.py"))
check_seeds_json = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_seeds_json)


def fail(msg):
    print(f"check-seeds-repeat: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited with {p.returncode}")
    check_seeds_json.check_lines(cmd, p.stdout.splitlines())
    run.outputs.append(p.stdout)
    objs = {}
    for n, line in enumerate(p.stdout.splitlines(), 1):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            fail(f"line {n}: not JSON ({e}): {line[:200]}")
        key = (obj.get("seed"), obj.get("arch"), obj.get("case"))
        if key in objs:
            fail(f"line {n}: {key} printed twice")
        objs[key] = obj
    if not objs:
        fail("no output")
    return objs


run.outputs = []


def check_plots(plot_py, output):
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(output)
        f.flush()
        p = subprocess.run([sys.executable, os.path.join(here, "check-plots.py"), plot_py,
                            f.name])
    if p.returncode != 0:
        fail("the figures of the first run do not check")


# Counters that depend on how threads interleave, not on the work: a seed with
# two busy threads keeps the rest of its contended counters out of its table
# (docs/counters.md, "Lock counters"); these are never compared.
TIMING_DEPENDENT = {"mmap_lock_read_wait", "mmap_lock_write_wait"}


def check_counters(first, other, r):
    if set(first) != set(other):
        fail(f"run {r} printed other cases: {sorted(set(first) ^ set(other), key=str)}")
    bad = 0
    for key, obj in first.items():
        for side in ("baseline", "optimized"):
            a = obj[side]["counters"]
            b = other[key][side]["counters"]
            for name in sorted((set(a) | set(b)) - TIMING_DEPENDENT):
                if a.get(name) != b.get(name):
                    print(f"not ok {key} {side}.{name}: run 1 {a.get(name)}, "
                          f"run {r} {b.get(name)}")
                    bad += 1
    return bad


def check_verdicts(results):
    """Print each case's verdicts; return how many were met and not met in turn."""
    unstable = 0
    for key in results[0]:
        seen = {r + 1: res[key].get("verdict") for r, res in enumerate(results)}
        decided = set(seen.values()) & {"met", "not met"}
        if len(decided) > 1:
            print(f"# unstable {key}: verdicts {seen} (time on a shared machine: "
                  f"reported, not asserted)")
            unstable += 1
        else:
            print(f"ok {key}: verdicts {', '.join(str(v) for v in seen.values())}")
    return unstable


def main():
    args = sys.argv[1:]
    plot_py = None
    if args[:1] == ["--plot"] and len(args) > 1:
        plot_py, args = args[1], args[2:]
    if len(args) < 2:
        fail("usage: check-seeds-repeat.py [--plot PLOT_PY] RUNS MMPRIM_SEEDS ARGS...")
    runs = int(args[0])
    cmd = args[1:]
    if "--json" not in cmd:
        cmd.append("--json")
    results = [run(cmd) for _ in range(runs)]
    bad = 0
    for r in range(1, runs):
        bad += check_counters(results[0], results[r], r + 1)
    if bad:
        fail(f"{bad} counters differ between runs")
    unstable = check_verdicts(results)
    print(f"ok: {len(results[0])} cases, counters identical in {runs} runs; verdicts "
          f"unstable between runs in {unstable}")
    if plot_py:
        check_plots(plot_py, run.outputs[0])


if __name__ == "__main__":
    main()
