#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Render the figures of a seeds JSON file and check that each one is an image.

usage: check-plots.py PLOT_PY RESULTS.json

Runs Debian's /usr/bin/python3 (python3-matplotlib) on scripts/plot.py into a
temporary folder, then checks: every PNG has the PNG signature and an IHDR
chunk, every SVG parses as XML with an <svg> root, and the figures expected
from the JSON are there (a ratio chart per seed, a histogram per rcu-free case,
a latency chart per huge-copy variant and pressure). Exit 0 or 1.
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

PYTHON = "/usr/bin/python3"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fail(msg):
    print(f"check-plots: {msg}", file=sys.stderr)
    sys.exit(1)


def check_png(path):
    with open(path, "rb") as f:
        head = f.read(16)
    if head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        fail(f"{path}: not a PNG")


def check_svg(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail(f"{path}: does not parse: {e}")
    if not root.tag.endswith("svg"):
        fail(f"{path}: root element is {root.tag}, not svg")


def main():
    if len(sys.argv) != 3:
        fail("usage: check-plots.py PLOT_PY RESULTS.json")
    plot_py, results = sys.argv[1:]
    if subprocess.run([PYTHON, "-c", "import matplotlib"]).returncode != 0:
        fail(f"{PYTHON} has no matplotlib: install python3-matplotlib (scripts/deps.sh)")
    seeds, rcu_cases, hc_groups = set(), 0, set()
    with open(results) as f:
        for line in f:
            o = json.loads(line)
            seeds.add(o["seed"])
            rcu_cases += o["seed"] == "rcu-free"
            if o["seed"] == "huge-copy" and not o.get("deterministic"):
                hc_groups.add((o["arch"], o.get("hugetlb", False), o["variant"], o["pressure"]))
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([PYTHON, plot_py, results, out], stdout=subprocess.PIPE, text=True)
        if p.returncode != 0:
            fail(f"plot.py exited with {p.returncode}")
        files = sorted(os.listdir(out))
        for name in files:
            path = os.path.join(out, name)
            if name.endswith(".png"):
                check_png(path)
            elif name.endswith(".svg"):
                check_svg(path)
            else:
                fail(f"unexpected file {name}")
        want = {f"ratios-{s}" for s in seeds}
        have = {n.rsplit(".", 1)[0] for n in files}
        if not want <= have:
            fail(f"missing figures: {sorted(want - have)}")
        if sum(n.startswith("rcu-free-") for n in have) != rcu_cases:
            fail(f"{rcu_cases} rcu-free cases, but not as many histograms")
        if sum(n.startswith("huge-copy-") for n in have) != len(hc_groups):
            fail(f"{len(hc_groups)} huge-copy variants and pressures, not as many charts")
        for stem in have:
            if f"{stem}.png" not in files or f"{stem}.svg" not in files:
                fail(f"{stem}: not both PNG and SVG")
    print(f"ok: {len(files)} figures, each a valid PNG or SVG")


if __name__ == "__main__":
    main()
