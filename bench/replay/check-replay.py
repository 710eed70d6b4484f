#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks of mmprim-replay, run by meson test (TAP).

  check-replay.py REPLAY traces TOUCH TRACE...  every trace on every back end: 0 mismatches,
                                                 verify ok, no bad input, every call accounted
  check-replay.py REPLAY formats TRACE           the same trace without -ttt/-T/pids, and as
                                                 -ff per-process files, replays the same
  check-replay.py REPLAY badinput                broken lines: file:line messages, exit 2,
                                                 the good lines still replay
  check-replay.py REPLAY synthetic GEN N         a generated trace of N calls replays exactly
"""
import json
import os
import re
import subprocess
import sys
import tempfile

n_checks = 0
failed = 0


def ok(cond, msg):
    global n_checks, failed
    n_checks += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n_checks, msg))
    if not cond:
        failed += 1
    return cond


def run(replay, args):
    p = subprocess.run([replay] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def replay_json(replay, args):
    rc, out, err = run(replay, ["--json"] + args)
    try:
        return rc, json.loads(out), err
    except ValueError:
        return rc, [], err + out


def check_traces(replay, touch, traces):
    for t in traces:
        name = os.path.basename(t)
        rc, res, err = replay_json(replay, ["--arch", "all", "--touch", touch, t])
        _, again, _ = replay_json(replay, ["--arch", "all", "--touch", touch, t])
        ok([r["counters"] for r in res] == [r["counters"] for r in again],
           "%s --touch %s: the counters repeat exactly" % (name, touch))
        ok(rc == 0, "%s --touch %s: exit 0 (got %d) %s" % (name, touch, rc, err.strip()[:200]))
        ok(len(res) >= 4, "%s: a result per back end" % name)
        for r in res:
            what = "%s %s --touch %s" % (name, r["arch"], touch)
            ok(r["mismatches"] == 0, "%s: 0 mismatches %s" % (what, r["mismatch_list"][:3]))
            ok(r["verify"] == "ok", "%s: verify ok" % what)
            ok(r["bad_input"] == 0, "%s: no bad input" % what)
            ok(r["replayed"] > 0 and r["calls"] == r["replayed"] + r["skipped"] + r["mismatches"],
               "%s: every call replayed or skipped (%d = %d + %d)" %
               (what, r["calls"], r["replayed"], r["skipped"]))
            if touch != "none":
                ok(r["counters"]["fault_anon"] + r["counters"]["fault_huge_anon"] > 0,
                   "%s: touching faulted pages in" % what)


PREFIX = re.compile(r"^(\d+) (\d+\.\d+ )?(.*?)( <\d+\.\d+>)?$")


def split_ff(path, prefix):
    """A -f log as strace -ff writes it: one file per pid, no pids, calls whole."""
    files, pending = {}, {}
    for line in open(path):
        m = PREFIX.match(line.rstrip("\n"))
        pid, body = m.group(1), m.group(3)
        if body.endswith(" <unfinished ...>"):
            pending[pid] = body[:-len(" <unfinished ...>")]
            continue
        r = re.match(r"<\.\.\. \w+ resumed>(.*)", body)
        if r:
            body = pending.pop(pid) + r.group(1)
        files.setdefault(pid, []).append(body)
    for pid, lines in files.items():
        with open("%s.%s" % (prefix, pid), "w") as f:
            f.write("\n".join(lines) + "\n")


def check_formats(replay, trace):
    name = os.path.basename(trace)
    _, base, _ = replay_json(replay, ["--touch", "first", trace])
    with tempfile.TemporaryDirectory() as d:
        bare = os.path.join(d, "bare.trace")
        pids = set()
        with open(bare, "w") as f:
            for line in open(trace):
                m = PREFIX.match(line.rstrip("\n"))
                pids.add(m.group(1))
                f.write(m.group(3) + "\n")
        if len(pids) == 1:
            rc, res, err = replay_json(replay, ["--touch", "first", bare])
            ok(rc == 0 and res and res[0]["replayed"] == base[0]["replayed"] and
               res[0]["counters"] == base[0]["counters"],
               "%s without pids, -ttt and -T: the same replay" % name)
        prefix = os.path.join(d, "ff")
        split_ff(trace, prefix)
        rc, res, err = replay_json(replay, ["--touch", "first", prefix])
        ok(rc == 0 and res and res[0]["mismatches"] == 0 and
           res[0]["replayed"] == base[0]["replayed"],
           "%s as -ff files (%s): %d replayed, as the single file" %
           (name, err.strip()[:100], res[0]["replayed"] if res else -1))
        files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith("ff."))
        rc, res2, err = replay_json(replay, ["--touch", "first"] + files)
        ok(rc == 0 and len(res2) == 1 and res2[0]["replayed"] == base[0]["replayed"],
           "%s: -ff files named one by one are one trace" % name)


GOOD = [
    "100 execve(\"/bin/x\", [\"x\"], 0x7ffc00000000 /* 1 var */) = 0",
    "100 brk(NULL) = 0x555555558000",
    "100 mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000",
]
BAD = [
    ("this is not strace output", "not a system call"),
    ("100 mmap(NULL, 8192, PROT_READ|PROT_WR", "truncated"),
    ("100 frobnicate(1, 2) = 0", "unknown system call frobnicate"),
    ("100 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0xffff800000000000",
     "beyond the task size"),
    ("100 munmap(0xzz, 4096) = 0", "not a number"),
    ("100 <... mmap resumed>) = 0x7f0000100000", "no unfinished call"),
    ("100 mprotect(0x7f0000000000, 4096, PROT_READ|PROT_FROB) = 0", "unknown flag"),
]
TAIL = [
    "100 mprotect(0x7f0000000000, 4096, PROT_READ) = 0",
    "100 brk(0x555555579000) = 0x555555579000",
    "100 munmap(0x7f0000000000, 8192) = 0",
    "100 mmap(NULL, 4096, PROT_READ <unfinished ...>",
]


def check_badinput(replay):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bad.trace")
        lines, expect = list(GOOD), []
        for text, msg in BAD:
            lines.append(text)
            expect.append((len(lines), msg))
            lines.append(GOOD[2].replace("0x7f0000000000", "0x7f00%08x" % (len(lines) << 20)))
        lines += TAIL
        expect.append((len(lines), "never resumed"))
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        rc, res, err = replay_json(replay, ["--arch", "all", path])
        ok(rc == 2, "bad input: exit 2 (got %d)" % rc)
        for lineno, msg in expect:
            ok(re.search(r"%s:%d: .*%s" % (re.escape(path), lineno, re.escape(msg)), err),
               "bad input: %s at line %d" % (msg, lineno))
        ok(err.count(path + ":") == len(expect), "bad input: messages printed once, not per back end")
        good_calls = len(GOOD) + len(BAD) + len(TAIL) - 1
        for r in res:
            ok(r["bad_input"] == len(expect), "%s: %d bad inputs counted" % (r["arch"], len(expect)))
            ok(r["mismatches"] == 0 and r["verify"] == "ok", "%s: the rest replays cleanly" % r["arch"])
            ok(r["replayed"] == good_calls, "%s: the %d good calls replayed (%d)" %
               (r["arch"], good_calls, r["replayed"]))
        rc, out, err = run(replay, [os.path.join(d, "missing")])
        ok(rc == 2 and "missing" in err, "a missing trace: exit 2 with its name")
        rc, out, err = run(replay, ["--opt", "no_such_opt=1", path])
        ok(rc == 2 and "no_such_opt" in err, "an unknown --opt: exit 2")
        rc, out, err = run(replay, ["--touch", "sometimes", path])
        ok(rc == 2, "a bad --touch: exit 2")
    # A mismatch is exit 1: a mapping over one the trace never unmapped.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "mismatch.trace")
        with open(path, "w") as f:
            f.write("\n".join(GOOD + [GOOD[2]]) + "\n")
        rc, res, err = replay_json(replay, [path])
        ok(rc == 1 and res and res[0]["mismatches"] == 1 and
           res[0]["mismatch_list"][0]["where"].endswith(":4"),
           "a mapping the trace never unmapped: a mismatch at line 4, exit 1")


def check_synthetic(replay, gen, n):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "synthetic.trace")
        with open(path, "w") as f:
            subprocess.run([sys.executable, gen, str(n)], stdout=f, check=True)
        rc, res, err = replay_json(replay, ["--touch", "none", path])
        ok(rc == 0, "synthetic %d calls: exit 0 %s" % (n, err[:200]))
        ok(res and res[0]["mismatches"] == 0 and res[0]["replayed"] == n + 1,
           "synthetic: %d memory calls and execve replayed (%d)" %
           (n, res[0]["replayed"] if res else -1))
        print("# %d calls in %.2f s host time" % (n, res[0]["host_s"] if res else 0))


def main():
    replay, mode = sys.argv[1], sys.argv[2]
    if mode == "traces":
        check_traces(replay, sys.argv[3], sys.argv[4:])
    elif mode == "formats":
        for t in sys.argv[3:]:
            check_formats(replay, t)
    elif mode == "badinput":
        check_badinput(replay)
    elif mode == "synthetic":
        check_synthetic(replay, sys.argv[3], int(sys.argv[4]))
    print("1..%d" % n_checks)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
