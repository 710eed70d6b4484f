#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Figures of a `mmprim-seeds ... --json` run, as PNG and SVG.

usage: /usr/bin/python3 scripts/plot.py RESULTS.json OUTDIR

Run it with Debian's python3 (python3-matplotlib, see scripts/deps.sh). Writes
into OUTDIR, and prints the name of each file:
  ratios-<seed>.{png,svg}      time ratio baseline / optimized per case and arch,
                               whiskers at the 95% interval, the verdict beside it
                               (mremap, lazyfree, page-fault, anon-cow-seq, ...)
  rcu-free-<case>.{png,svg}    log2 munmap latency histograms, both paths overlaid
  huge-copy-[hugetlb-]<variant>-<pressure>.{png,svg}
                               target-read latency per n and order, with the
                               calibrated cache levels as bands
"""
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

VERDICT_COLOUR = {"met": "tab:green", "not met": "tab:red", "inconclusive": "tab:orange",
                  None: "tab:blue"}


def slug(s):
    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()


def save(fig, outdir, name, written):
    for ext in ("png", "svg"):
        path = os.path.join(outdir, f"{name}.{ext}")
        fig.savefig(path, dpi=110 if ext == "png" else None, bbox_inches="tight")
        written.append(path)
    plt.close(fig)


def quick_note(objs):
    return " [quick: indicative]" if any(o.get("quick") for o in objs) else ""


def plot_ratios(seed, objs, outdir, written):
    """Bars of every case's time ratio with its interval, one figure per seed."""
    labels, ratio, lo, hi, colours = [], [], [], [], []
    for o in objs:
        labels.append(f"{o['arch']} {o.get('case') or ''}".strip())
        ratio.append(o["ratio"])
        lo.append(o["ratio"] - o["ratio_ci"][0])
        hi.append(o["ratio_ci"][1] - o["ratio"])
        colours.append(VERDICT_COLOUR.get(o.get("verdict"), "tab:blue"))
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(objs) + 1.6))
    y = range(len(objs))
    ax.barh(y, ratio, xerr=[lo, hi], color=colours, capsize=3, alpha=0.85)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(list(y))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("time ratio baseline / optimized (> 1: the optimization is faster)")
    if max(o["ratio_ci"][1] for o in objs) / max(min(o["ratio_ci"][0] for o in objs), 1e-9) > 50:
        ax.set_xscale("log")
    for i, o in enumerate(objs):
        if o.get("verdict"):
            ax.annotate(o["verdict"], (o["ratio_ci"][1], i), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=8)
    ax.set_title(f"{seed}: median of paired ratios, 95% interval{quick_note(objs)}")
    save(fig, outdir, f"ratios-{slug(seed)}", written)


def plot_rcu_hist(o, outdir, written):
    b, p = o.get("baseline_log2_hist"), o.get("optimized_log2_hist")
    if not b or not p:
        return
    used = [i for i in range(len(b)) if b[i] or p[i]]
    first, last = used[0], used[-1]
    x = list(range(first, last + 1))
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.bar([i - 0.2 for i in x], b[first:last + 1], width=0.4,
           label=f"{o.get('baseline_path', 'baseline')} (baseline)")
    ax.bar([i + 0.2 for i in x], p[first:last + 1], width=0.4,
           label=f"{o.get('optimized_path', 'optimized')} (optimized)")
    ax.set_yscale("log")
    ax.set_xticks(x)
    ax.set_xticklabels([human_ns(1 << i) for i in x], rotation=45, ha="right")
    ax.set_xlabel("munmap latency, log2 buckets [2^i, 2^(i+1)) ns")
    ax.set_ylabel("munmaps")
    ax.legend(fontsize=8)
    ax.set_title(f"rcu-free [{o['arch']}] {o['case']}: {o['baseline_munmaps']} / "
                 f"{o['optimized_munmaps']} munmaps{quick_note([o])}")
    save(fig, outdir, f"rcu-free-{slug(o['arch'] + ' ' + o['case'])}", written)


def human_ns(ns):
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            return f"{ns / div:g} {unit}"
    return f"{ns} ns"


def plot_huge_copy(objs, outdir, written):
    """Per (page kind, variant, pressure): read latency of each target for each order."""
    groups = {}
    for o in objs:
        groups.setdefault((o["arch"], o.get("hugetlb", False), o["variant"], o["pressure"]),
                          []).append(o)
    targets = ["0", "255", "511", "rand"]
    for (arch, hugetlb, variant, pressure), cases in groups.items():
        series = {"ascending": cases[0]["baseline_read_ns"]}
        for o in cases:
            series[o["order"]] = o["optimized_read_ns"]
        fig, ax = plt.subplots(figsize=(7, 4))
        calib = cases[0].get("calibration", {})
        levels = calib.get("levels", {})
        shades = ["#e8f4e8", "#e8eef8", "#f8f0e0", "#f8e4e4"]
        for k, (name, lvl) in enumerate(levels.items()):
            if lvl.get("ns") is None:
                continue
            lo, hi = lvl["ci"]
            ax.axhspan(lo, hi, color=shades[k % len(shades)], zorder=0)
            label = name if lvl["class"] == name else f"{name} = {lvl['class']}"
            ax.annotate(label, (len(targets) - 0.5, lvl["ns"]),
                        fontsize=7, va="center", ha="right", color="dimgray")
        if calib.get("hot_limit_ns"):
            ax.axhline(calib["hot_limit_ns"], color="gray", linestyle="--", linewidth=0.8,
                       label="L1/L2 limit")
        width = 0.8 / len(series)
        for k, (order, reads) in enumerate(series.items()):
            ax.bar([t + (k - (len(series) - 1) / 2) * width for t in range(len(targets))],
                   [reads[t] for t in targets], width=width, label=order, zorder=2)
        ax.set_xticks(range(len(targets)))
        ax.set_xticklabels([f"n={t}" for t in targets])
        ax.set_ylabel("4 KiB target read after the COW (ns)")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
        ax.set_title(f"huge-copy [{arch}] {'hugetlb ' if hugetlb else ''}{variant}, "
                     f"{'pressure' if pressure else 'quiet'}{quick_note(cases)}")
        save(fig, outdir, f"huge-copy-{'hugetlb-' if hugetlb else ''}"
             f"{slug(arch + ' ' + variant)}-{'pressure' if pressure else 'quiet'}", written)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    objs = []
    with open(sys.argv[1]) as f:
        for line in f:
            if line.strip():
                objs.append(json.loads(line))
    os.makedirs(sys.argv[2], exist_ok=True)
    written = []
    by_seed = {}
    for o in objs:
        by_seed.setdefault(o["seed"], []).append(o)
    for seed, group in by_seed.items():
        plot_ratios(seed, group, sys.argv[2], written)
        if seed == "rcu-free":
            for o in group:
                plot_rcu_hist(o, sys.argv[2], written)
        if seed == "huge-copy":
            plot_huge_copy([o for o in group if not o.get("deterministic")], sys.argv[2],
                           written)
    for path in written:
        print(path)


if __name__ == "__main__":
    main()
