#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run `mmprim-seeds ... --json` and check the shape of what it prints.

usage: check-seeds-json.py MMPRIM_SEEDS ARGS...

Every stdout line must be one JSON object:
  {"seed", "arch", "quick", "baseline": {"seconds", "counters"}, "optimized": {...},
   "ratio": baseline / optimized time, "ratio_ci": [lo, hi] around it, "samples",
   "claim", "verdict": null or met / not met / inconclusive / no verdict,
   "verdict_note" (says why, with "no verdict"), ...seed-specific fields}
with the same counter names everywhere, and no met / not met from fewer than 10
samples. huge-copy and anon-cow-seq: the THP COW splits and copies 4 KiB pages,
and makes no claim (the whole-THP copy of their seed is hugetlb's); their
"hugetlb" cases copy whole 2 MiB pages (512 sub-pages a COW, no split) and
carry the seed's claims. rcu-free:
its histograms add up to its munmaps, it refuses a verdict exactly when the
mechanism is in fewer munmaps than it says it needs, claims only the kernel's
before against the patch, and every table of an iteration took its path's way
(IPIs to each reader on semi RCU's single-table path).
Exit 0 when all holds, 1 otherwise.
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


def check_lazyfree_smaps(obj, where):
    """The mapping in kB as smaps sums it, before and after MADV_PAGEOUT, on each side."""
    thp_kb = obj.get("thps", 0) * 2048
    for side in ("baseline", "optimized"):
        sm = obj.get(f"{side}_smaps")
        if not isinstance(sm, dict) or set(sm) != {"before_pageout", "after_pageout"}:
            fail(f"{where}: {side}_smaps: {sm!r}")
        before, after = sm["before_pageout"], sm["after_pageout"]
        for f in ("Rss", "AnonHugePages", "LazyFree", "Private_Dirty"):
            if not all(isinstance(x.get(f), int) and x.get(f) >= 0 for x in (before, after)):
                fail(f"{where}: {side}_smaps: {f} is not a size")
        if before["Rss"] != thp_kb or before["AnonHugePages"] != thp_kb:
            fail(f"{where}: {side}: {thp_kb} kB of THPs expected before MADV_PAGEOUT: {before}")
        if after["Rss"] > before["Rss"] or after["LazyFree"] != 0:
            fail(f"{where}: {side}: MADV_PAGEOUT left lazyfree memory or grew: {after}")


def check_rcu_free(obj, where):
    """Histograms that add up, and "no verdict" exactly below the stated mechanism share."""
    for side in ("baseline", "optimized"):
        h, n = obj.get(f"{side}_log2_hist"), obj.get(f"{side}_munmaps")
        if not isinstance(h, list) or sum(h) != n:
            fail(f"{where}: {side}_log2_hist does not add up to {side}_munmaps {n}")
        m = obj.get(f"{side}_mechanism_munmaps")
        if not isinstance(m, int) or not 0 <= m <= n:
            fail(f"{where}: {side}_mechanism_munmaps {m!r} of {n} munmaps")
    seed = obj.get("seed_log2_hist")
    if not isinstance(seed, dict) or set(seed) != {"without", "with"} \
            or sum(seed["without"][19:20]) != 68 or sum(seed["with"][19:20]) != 29:
        fail(f"{where}: seed_log2_hist is not the seed's ([512K, 1M) 68 -> 29)")
    share, need = obj.get("mechanism_share"), obj.get("mechanism_min_share")
    want = min(obj[f"{s}_mechanism_munmaps"] / max(obj[f"{s}_munmaps"], 1)
               for s in ("baseline", "optimized"))
    if not isinstance(share, (int, float)) or abs(share - want) > 1e-4 * max(want, 1e-3):
        fail(f"{where}: mechanism_share {share!r}, the counts give {want:.6g}")
    # The kernel's before (semi RCU, native) against the patch carries the seed's claim;
    # the single-table path and the worst case no kernel had carry none.
    cmp = obj.get("comparison")
    if cmp not in ("semi RCU", "native", "single table", "worst case"):
        fail(f"{where}: comparison {cmp!r}")
    if cmp in ("semi RCU", "native"):
        if (obj.get("verdict") == "no verdict") != (share < need):
            fail(f"{where}: verdict {obj.get('verdict')!r} with the mechanism in {share:.2%} "
                 f"of munmaps, {need:.0%} needed")
    elif obj.get("claim") is not None or not str(obj.get("verdict_note", "")).startswith(
            "no claim: "):
        fail(f"{where}: {cmp} makes no claim, and says why")
    if cmp == "native" and obj["arch"].startswith("arm64"):
        fail(f"{where}: native freeing where TLBIs are broadcast")
    # Counters are of one iteration: each table it freed took the path's way.
    for side in ("baseline", "optimized"):
        c, tables = obj[side]["counters"], obj.get(f"{side}_tables_freed")
        mc = obj.get(f"{side}_mechanism_counter")
        if not isinstance(tables, int) or tables < 1 or c.get(mc) != tables:
            fail(f"{where}: {side}: {mc} {c.get(mc)!r} for {tables!r} tables freed")
        if c.get("table_batch_fail") != (tables if obj.get("batch_fail") else 0):
            fail(f"{where}: {side}: table_batch_fail {c.get('table_batch_fail')} with "
                 f"batch_fail {obj.get('batch_fail')!r}")
    ipis = obj["baseline"]["counters"].get("table_sync_ipi")
    want_ipis = obj["baseline_tables_freed"] * obj["readers"] if cmp == "single table" else 0
    if ipis != want_ipis or obj["optimized"]["counters"].get("table_sync_ipi") != 0:
        fail(f"{where}: table_sync_ipi {ipis} -> "
             f"{obj['optimized']['counters'].get('table_sync_ipi')}, expected {want_ipis} -> 0")


SPLIT_NO_CLAIM = "no claim: 6.18 splits THP on COW; measured on hugetlb"


def check_thp_cow_split(obj, where):
    """A THP COW as 6.18 makes it: the PMD split, 4 KiB copied, no 2 MiB copy, no claim."""
    for side in ("baseline", "optimized"):
        c = obj[side]["counters"]
        if c.get("pmd_split", 0) < 1 or c.get("fault_huge_cow") != 0 \
                or c.get("subpage_copy", 0) < 1 or c.get("subpage_copy") != c.get("fault_cow"):
            fail(f"{where}: {side}: a THP COW splits, then copies a page a fault, never 2 MiB: "
                 f"pmd_split {c.get('pmd_split')}, fault_huge_cow {c.get('fault_huge_cow')}, "
                 f"fault_cow {c.get('fault_cow')}, subpage_copy {c.get('subpage_copy')}")
    if obj.get("claim") is not None or not str(obj.get("verdict_note", "")).startswith("no claim: "):
        fail(f"{where}: a split THP COW claims the whole copy's figures: {obj.get('claim')!r}")


def check_hugetlb_cow(obj, where, per_cow=None):
    """A hugetlb COW as 6.18 makes it: the whole page copied, 512 sub-pages, no split."""
    for side in ("baseline", "optimized"):
        c = obj[side]["counters"]
        cows = c.get("fault_hugetlb_cow", 0)
        if cows < 1 or c.get("pmd_split") != 0 or c.get("fault_cow") != 0 \
                or c.get("subpage_copy") != 512 * cows or (per_cow and cows != per_cow):
            fail(f"{where}: {side}: a hugetlb COW copies 512 sub-pages and splits nothing: "
                 f"fault_hugetlb_cow {cows}, subpage_copy {c.get('subpage_copy')}, "
                 f"pmd_split {c.get('pmd_split')}, fault_cow {c.get('fault_cow')}")


def check_anon_cow_seq(obj, where):
    """THP: the children's COWs split, no claim; hugetlb: whole copies, target-last claims."""
    if obj.get("hugetlb"):
        check_hugetlb_cow(obj, where)
        if (obj.get("claim") is not None) != (obj.get("order") == "target-last"):
            fail(f"{where}: hugetlb {obj.get('order')}: claim {obj.get('claim')!r}")
        return
    check_thp_cow_split(obj, where)
    if obj.get("verdict_note") != SPLIT_NO_CLAIM:
        fail(f"{where}: verdict_note {obj.get('verdict_note')!r}")


def check_huge_copy(obj, where):
    """Says what decided; counted decisions carry their counts; no claim for target-last NT."""
    how = obj.get("decided_by")
    if how not in ("perf", "cachegrind", "latency"):
        fail(f"{where}: decided_by {how!r}")
    if how != "latency":
        for side in ("baseline", "optimized"):
            m = obj.get(f"{side}_misses_per_line")
            if not isinstance(m, dict) or set(m) != {"0", "255", "511", "rand"} \
                    or not all(isinstance(x, (int, float)) and 0 <= x for x in m.values()):
                fail(f"{where}: decided by {how} without {side}_misses_per_line: {m!r}")
        if how == "cachegrind" and (obj.get("pressure") or obj.get("non_temporal")):
            fail(f"{where}: cachegrind models neither pressure nor non-temporal stores")
    if obj.get("non_temporal") and obj.get("order") == "target-last" \
            and not obj.get("deterministic") and obj.get("claim") is not None:
        fail(f"{where}: a non-temporal target-last copy claims a hot target")
    if obj.get("deterministic"):
        if obj.get("claim") is not None:
            fail(f"{where}: a deterministic run claims")
        return
    if obj.get("hugetlb"):
        # One whole copy per trial, in the order: the seed's claims (but target-last NT).
        check_hugetlb_cow(obj, where, per_cow=1)
        if not (obj.get("non_temporal") and obj.get("order") == "target-last") \
                and obj.get("claim") is None:
            fail(f"{where}: a hugetlb copy in the order makes no claim")
        return
    # One split and one 4 KiB copy per trial; the claim is hugetlb's.
    for side in ("baseline", "optimized"):
        c = obj[side]["counters"]
        if c.get("pmd_split") != 1 or c.get("subpage_copy") != 1:
            fail(f"{where}: {side}: a trial is one split and one page copied: pmd_split "
                 f"{c.get('pmd_split')}, subpage_copy {c.get('subpage_copy')}")
    check_thp_cow_split(obj, where)
    if not (obj.get("non_temporal") and obj.get("order") == "target-last") \
            and obj.get("verdict_note") != SPLIT_NO_CLAIM:
        fail(f"{where}: verdict_note {obj.get('verdict_note')!r}")


def check_clear_seq(obj, where):
    """Every first-touch fault a THP of 512 cleared sub-pages; the claim the CPU calls for."""
    for side in ("baseline", "optimized"):
        c = obj[side]["counters"]
        if c.get("fault_huge_anon") != obj.get("thps") \
                or c.get("subpage_clear") != 512 * obj.get("thps", 0):
            fail(f"{where}: {side}: {obj.get('thps')} THP faults of 512 sub-pages expected: "
                 f"fault_huge_anon {c.get('fault_huge_anon')}, "
                 f"subpage_clear {c.get('subpage_clear')}")
    zen = obj.get("cpu_like") == "genoa-milan"
    if zen != (obj.get("cpu_vendor") == "AuthenticAMD" and obj.get("cpu_family", 0) >= 0x17):
        fail(f"{where}: cpu_like {obj.get('cpu_like')!r} for {obj.get('cpu_vendor')} "
             f"family {obj.get('cpu_family')}")
    if not str(obj.get("claim")).startswith("sequential" if zen else "no change"):
        fail(f"{where}: claim {obj.get('claim')!r} for a CPU like {obj.get('cpu_like')}")


def check_pt_reclaim(obj, where):
    """VmPTE figures that agree with the verdict and with the release's PT_RECLAIM rule."""
    for f in ("bytes", "chunks", "baseline_vmpte_bytes", "optimized_vmpte_bytes",
              "pte_tables_freed"):
        if not isinstance(obj.get(f), int) or obj.get(f) < 0:
            fail(f"{where}: {f} is not a count: {obj.get(f)!r}")
    if obj["chunks"] != obj["bytes"] >> 21:
        fail(f"{where}: {obj['chunks']} chunks of 2 MiB in {obj['bytes']} bytes")
    try:
        release = tuple(int(x) for x in obj["release"].split("."))
    except (KeyError, AttributeError, ValueError):
        fail(f"{where}: release {obj.get('release')!r}")
    # x86_64 from 6.14 (ARCH_SUPPORTS_PT_RECLAIM), every back end from 7.0.
    rule = release >= ((6, 14) if obj["arch"].startswith("x86_64") else (7, 0))
    if obj.get("reclaims") is not rule:
        fail(f"{where}: reclaims {obj.get('reclaims')!r} at {obj['release']} on {obj['arch']}")
    base, opt = obj["baseline_vmpte_bytes"], obj["optimized_vmpte_bytes"]
    held = (obj["pte_tables_freed"] == obj["chunks"] and opt < base) if rule else opt == base
    if obj.get("verdict") != ("met" if held else "not met"):
        fail(f"{where}: verdict {obj.get('verdict')!r} for VmPTE {base} -> {opt}")


def check_fork_large_folio(obj, where):
    """One rmap call per PTE without batching, no more with it."""
    pages = obj.get("bytes", 0) // 4096
    b, o = obj.get("baseline_rmap_calls"), obj.get("optimized_rmap_calls")
    if obj.get("op") not in ("fork", "munmap") or not pages or b != pages \
            or not isinstance(o, int) or not 0 < o <= b:
        fail(f"{where}: {obj.get('op')!r} of {pages} pages, rmap calls {b!r} -> {o!r}")


def check_mprotect_batch(obj, where):
    """The folios of the case, 6.16 never batching, and one batch a large folio after it."""
    b, o = obj["baseline"]["counters"], obj["optimized"]["counters"]
    calls, kind = obj.get("calls_per_sample"), obj.get("folio_kind")
    folios, expect = obj.get("folios"), obj.get("folios_expected")
    if not isinstance(calls, int) or calls < 2 or kind not in ("4K", "64K", "PTE-mapped THP"):
        fail(f"{where}: calls_per_sample {calls!r}, folio_kind {kind!r}")
    whole = folios == [expect, expect]
    if whole == (obj.get("verdict") == "no verdict"):
        fail(f"{where}: folios {folios!r} of {expect!r} and verdict {obj.get('verdict')!r}")
    if not whole:
        return
    pages = obj["bytes"] // 4096
    if obj.get("baseline_release") == "6.16" and b.get("pte_batch") != 0:
        fail(f"{where}: 6.16 batched: pte_batch {b.get('pte_batch')}")
    if o.get("tlb_flush_range", 0) + o.get("tlb_flush_all", 0) != calls:
        fail(f"{where}: {obj.get('optimized_release')} flushed other than once a call")
    # Contiguous blocks of 16 (arm64 contpte, riscv64 Svnapot 64K) on the back ends that have them.
    blocks_of_16 = obj["arch"].startswith(("arm64", "riscv64"))
    if kind == "4K":
        for side, c in (("baseline", b), ("optimized", o)):
            if c.get("pte_batch") != 0 or c.get("ptep_get") != calls * pages:
                fail(f"{where}: {side}: 4K pages: pte_batch {c.get('pte_batch')}, ptep_get "
                     f"{c.get('ptep_get')} for {calls} calls of {pages} pages")
    elif obj.get("optimized_release") == "6.17":
        if o.get("pte_batch") != calls * expect:
            fail(f"{where}: 6.17: pte_batch {o.get('pte_batch')}, one a folio a call "
                 f"is {calls * expect}")
        blocks = calls * pages // 16 if blocks_of_16 else 0
        if b.get("contpte_unfold") != blocks or b.get("contpte_fold") != blocks \
                or o.get("contpte_unfold") != 0 or o.get("contpte_fold") != 0:
            fail(f"{where}: contpte unfold/fold {b.get('contpte_unfold')}/"
                 f"{b.get('contpte_fold')} -> {o.get('contpte_unfold')}/"
                 f"{o.get('contpte_fold')}, expected {blocks}/{blocks} -> 0/0")
    ratio = obj.get("instruction_ratio")
    if ratio is not None:
        bi, oi = obj.get("baseline_instructions_per_page"), obj.get("optimized_instructions_per_page")
        if not all(isinstance(x, (int, float)) and x > 0 for x in (bi, oi)) \
                or abs(ratio - bi / oi) > 1e-3 * ratio:
            fail(f"{where}: instruction_ratio {ratio!r} from {bi!r} / {oi!r}")


def check_process_madvise(obj, where):
    """A gather a range before 6.16 and a call since; IPIs where the back end sends them."""
    b, o = obj["baseline"]["counters"], obj["optimized"]["counters"]
    ranges, per, calls = obj.get("ranges"), obj.get("ranges_per_call"), obj.get("calls")
    if ranges != obj.get("bytes", 0) // 4096 or calls != -(-ranges // per):
        fail(f"{where}: {ranges!r} ranges, {per!r} a call, {calls!r} calls")
    for side, c in (("baseline", b), ("optimized", o)):
        if c.get("folio_free") != ranges:
            fail(f"{where}: {side} freed {c.get('folio_free')} folios of {ranges}")
    if b.get("gather_flush") != ranges or o.get("gather_flush") != calls:
        fail(f"{where}: gather flushes {b.get('gather_flush')} -> {o.get('gather_flush')}, "
             f"expected {ranges} -> {calls}")
    flushes = [c.get("tlb_flush_range", 0) + c.get("tlb_flush_all", 0) for c in (b, o)]
    if obj["arch"].startswith("x86_64"):
        if flushes != [ranges, calls] or [b.get("tlb_ipi"), o.get("tlb_ipi")] != [ranges, calls]:
            fail(f"{where}: x86_64: flushes {flushes}, IPIs {b.get('tlb_ipi')} -> "
                 f"{o.get('tlb_ipi')}, expected {ranges} -> {calls} each")
        if obj.get("claim") is None:
            fail(f"{where}: x86_64 makes the patch's claim")
    elif obj["arch"].startswith("arm64"):
        if flushes != [ranges, ranges] or b.get("tlb_ipi") or o.get("tlb_ipi"):
            fail(f"{where}: arm64: flushes {flushes}, IPIs {b.get('tlb_ipi')} -> "
                 f"{o.get('tlb_ipi')}, expected a flush per range and no IPI")
        if obj.get("claim") is not None or \
                not str(obj.get("verdict_note", "")).startswith("no claim: no MMU_GATHER"):
            fail(f"{where}: arm64 claims nothing, and says why")


def main():
    if len(sys.argv) < 2:
        fail("usage: check-seeds-json.py MMPRIM_SEEDS ARGS...")
    cmd = sys.argv[1:]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited with {p.returncode}")
    for line in check_lines(cmd, p.stdout.splitlines()):
        print(line)


def check_lines(cmd, lines):
    """Check the objects of one run of CMD; fail() on the first fault, else one line each."""
    out = []
    want_seed = cmd[1] if len(cmd) > 1 and cmd[1] != "all" else None
    quick = "--quick" in cmd
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
        _, counter_names = check_side(obj, "baseline", where, counter_names)
        check_side(obj, "optimized", where, counter_names)
        ratio = obj.get("ratio")
        ci = obj.get("ratio_ci")
        if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) \
                or not math.isfinite(ratio) or ratio <= 0:
            fail(f"{where}: ratio {ratio!r} is not a positive number")
        if not isinstance(ci, list) or len(ci) != 2 \
                or not all(isinstance(x, (int, float)) for x in ci) \
                or not ci[0] <= ratio * (1 + 1e-9) or not ratio <= ci[1] * (1 + 1e-9):
            fail(f"{where}: ratio_ci {ci!r} is not an interval around {ratio}")
        samples = obj.get("samples")
        if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
            fail(f"{where}: samples {samples!r} is not a count")
        if obj.get("quick") is not quick:
            fail(f"{where}: quick is {obj.get('quick')!r}, the run was {quick}")
        verdict = obj.get("verdict")
        if verdict not in (None, "met", "not met", "inconclusive", "no verdict"):
            fail(f"{where}: verdict {verdict!r}")
        if verdict == "no verdict" and not str(obj.get("verdict_note", "")).startswith(
                "no verdict: "):
            fail(f"{where}: no verdict, and no verdict_note saying why")
        if verdict in ("met", "not met") and samples < 10:
            fail(f"{where}: verdict {verdict!r} from {samples} samples")
        if (verdict is None) != (obj.get("claim") is None):
            fail(f"{where}: a claim without a verdict or a verdict without a claim")
        if seed == "lazyfree":
            check_lazyfree_smaps(obj, where)
        if seed == "rcu-free":
            check_rcu_free(obj, where)
        if seed == "huge-copy":
            check_huge_copy(obj, where)
        if seed == "anon-cow-seq":
            check_anon_cow_seq(obj, where)
        if seed == "clear-seq":
            check_clear_seq(obj, where)
        if seed == "pt-reclaim":
            check_pt_reclaim(obj, where)
        if seed == "fork-large-folio":
            check_fork_large_folio(obj, where)
        if seed == "mprotect-batch":
            check_mprotect_batch(obj, where)
        if seed == "process-madvise":
            check_process_madvise(obj, where)
        out.append(f"ok {seed} [{arch}]: ratio {ratio:.2f}x [{ci[0]:.2f}, {ci[1]:.2f}], "
                   f"{samples} samples, {verdict or 'no claim'}")
    return out


if __name__ == "__main__":
    main()
