#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks of mmprim-replay, run by meson test (TAP).

  check-replay.py REPLAY traces TOUCH TRACE...  every trace on every back end: 0 mismatches,
                                                 verify ok, no bad input, every call accounted
  check-replay.py REPLAY formats TRACE           the same trace without -ttt/-T/pids, and as
                                                 -ff per-process files, replays the same
  check-replay.py REPLAY badinput                broken lines: file:line messages, exit 2,
                                                 the good lines still replay
  check-replay.py REPLAY processes               fork, clone with and without CLONE_VM, vfork,
                                                 execve, a child seen before its clone returned
  check-replay.py REPLAY synthetic GEN N         a generated trace of N calls replays exactly
  check-replay.py REPLAY reexec TRACE            a re-exec traced without %process: one exec
                                                 inferred per back end, 0 mismatches; the new
                                                 break without ld.so's mappings: exit 2, one line
  check-replay.py REPLAY smaps TRACE             --smaps FILE: a smaps per exiting process, in
                                                 the kernel's format, the same figures with --json
  check-replay.py REPLAY seal-lock TRACE         seals, locks, a fork: every such call replayed
  check-replay.py REPLAY softdirty TRACE         clear_refs writes replayed, PAGEMAP_SCAN skipped
                                                 (none "not modelled"), 0 mismatches everywhere
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


def check_seal_lock(replay, trace):
    name = os.path.basename(trace)
    for opts in ([], ["--opt", "cap_sys_rawio=1"]):
        rc, res, err = replay_json(replay, ["--arch", "all"] + opts + [trace])
        ok(rc == 0 and len(res) >= 4, "%s %s: exit 0, a result per back end %s" %
           (name, opts, err.strip()[:200]))
        for r in res:
            what = "%s %s %s" % (name, r["arch"], " ".join(opts))
            ok(r["mismatches"] == 0 and r["verify"] == "ok" and r["bad_input"] == 0,
               "%s: 0 mismatches, verify ok %s" % (what, r["mismatch_list"][:3]))
            extra = {k: v for k, v in r["skipped_by_reason"].items()
                     if k not in ("mmap MAP_HUGETLB",
                                  "no address-space effect (exit, wait4, kill, ...)")}
            ok(not extra, "%s: nothing else skipped %s" % (what, extra))
    # The calls themselves, each counted as replayed: the trace has them all.
    with open(trace) as f:
        text = f.read()
    for call in ("syscall_0x1ce(", "mlock(", "mlock2(", "munlock(", "mlockall(",
                 "munlockall(", "process_madvise(", "/* MADV_??? */", "/* MAP_??? */",
                 "21<<MAP_HUGE_SHIFT", "msync(", "prctl(0x43 /* PR_??? */"):
        ok(call in text, "%s holds %s" % (name, call))


def check_softdirty(replay, trace):
    """clear_refs writes replayed, the PAGEMAP_SCAN ioctl skipped for want of its argument."""
    name = os.path.basename(trace)
    with open(trace) as f:
        text = f.read()
    writes = text.count("/clear_refs>,")
    ok(writes >= 6 and "/pagemap>, " in text, "%s holds %d clear_refs writes and a pagemap ioctl" %
       (name, writes))
    rc, res, err = replay_json(replay, ["--arch", "all", trace])
    ok(rc == 0 and len(res) >= 4, "%s: exit 0, a result per back end %s" % (name, err.strip()[:200]))
    for r in res:
        what = "%s %s" % (name, r["arch"])
        ok(r["mismatches"] == 0 and r["verify"] == "ok" and r["bad_input"] == 0,
           "%s: 0 mismatches, verify ok %s" % (what, r["mismatch_list"][:3]))
        ok(r["skipped_by_reason"] == {
            "PAGEMAP_SCAN: the trace has its argument as a pointer only": 1,
            "no address-space effect (exit, wait4, kill, ...)": 1},
           "%s: only the ioctl and exit_group skipped %s" % (what, r["skipped_by_reason"]))


PREFIX = re.compile(r"^(\d+) (\d+\.\d+ )?(.*?)( <\d+\.\d+>)?$")


def split_ff(path, prefix, keep_time=False):
    """A -f log as strace -ff writes it: one file per pid, no pids, calls whole."""
    files, pending, stamp = {}, {}, {}
    for line in open(path):
        m = PREFIX.match(line.rstrip("\n"))
        pid, body = m.group(1), m.group(3)
        if body.endswith(" <unfinished ...>"):
            stamp[pid] = m.group(2) or ""
        if body.endswith(" <unfinished ...>"):
            pending[pid] = body[:-len(" <unfinished ...>")]
            continue
        r = re.match(r"<\.\.\. \w+ resumed>(.*)", body)
        ts = m.group(2) or ""
        if r:
            body = pending.pop(pid) + r.group(1)
            ts = stamp.pop(pid)
        files.setdefault(pid, []).append((ts if keep_time else "") + body)
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
        bracket = os.path.join(d, "bracket.trace")
        with open(bracket, "w") as f:
            for line in open(trace):
                f.write(re.sub(r"^(\d+) ", lambda m: "[pid %5s] " % m.group(1), line))
        rc, res, err = replay_json(replay, ["--touch", "first", bracket])
        ok(rc == 0 and res and res[0]["counters"] == base[0]["counters"],
           "%s with [pid N] prefixes (strace to a terminal): the same replay" % name)
        timed = os.path.join(d, "timed")
        split_ff(trace, timed, keep_time=True)
        rc, res3, err = replay_json(replay, ["--touch", "first", timed])
        ok(rc == 0 and res3 and res3[0]["mismatches"] == 0 and
           res3[0]["replayed"] == base[0]["replayed"] and
           res3[0]["tasks"] == base[0]["tasks"],
           "%s as -ff files with -ttt, merged by time: %d replayed, as the single file" %
           (name, res3[0]["replayed"] if res3 else -1))
        if re.search(r"CLONE_VM\b", open(trace).read()):
            # Without times, a thread's file replays whole at its clone: not the same order.
            return
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
        ok(err.count(path + ":") == len(expect),
           "bad input: messages printed once, not per back end")
        good_calls = len(GOOD) + len(BAD) + len(TAIL) - 1
        for r in res:
            ok(r["bad_input"] == len(expect),
               "%s: %d bad inputs counted" % (r["arch"], len(expect)))
            ok(r["mismatches"] == 0 and r["verify"] == "ok",
               "%s: the rest replays cleanly" % r["arch"])
            ok(r["replayed"] == good_calls, "%s: the %d good calls replayed (%d)" %
               (r["arch"], good_calls, r["replayed"]))
        rc, out, err = run(replay, [os.path.join(d, "missing")])
        ok(rc == 2 and "missing" in err, "a missing trace: exit 2 with its name")
        rc, out, err = run(replay, ["--opt", "no_such_opt=1", path])
        ok(rc == 2 and "no_such_opt" in err, "an unknown --opt: exit 2")
        rc, out, err = run(replay, ["--touch", "sometimes", path])
        ok(rc == 2, "a bad --touch: exit 2")
        rc, out, err = run(replay, ["--bogus", path])
        ok(rc == 2 and "unknown option '--bogus'" in err, "an unknown option: exit 2, named")
        rc, out, err = run(replay, ["--arch", "sparc", path])
        ok(rc == 2 and "no back end 'sparc'" in err, "an unknown back end: exit 2, named")
        rc, out, err = run(replay, [path, "--touch"])
        ok(rc == 2 and "'--touch' needs a value" in err, "an option without its value: exit 2")
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


PROCESSES = """\
1 execve("/bin/p", ["p"], 0x7ffc00000000 /* 1 var */) = 0
1 brk(NULL) = 0x555555558000
1 brk(0x555555579000) = 0x555555579000
1 mmap(NULL, 2097152, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000
1 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f0000001000 <unfinished ...>
2 mmap(0x7f0000000000, 4096, PROT_READ, MAP_PRIVATE|MAP_FIXED|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000
2 brk(NULL) = 0x555555579000
2 exit_group(0) = ?
2 +++ exited with 0 +++
1 <... clone resumed>) = 2
1 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, child_tid=0x7f0000100910, exit_signal=0, stack=0x7f0000000000, stack_size=0x100000} => {parent_tid=[3]}, 88) = 3
3 munmap(0x7f0000000000, 4096) = 0
3 mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7e0000000000
3 exit(0) = ?
3 +++ exited with 0 +++
1 vfork( <unfinished ...>
4 execve("/bin/q", ["q"], 0x7ffc00000000 /* 1 var */) = 0
4 brk(NULL) = 0x565555558000
4 +++ exited with 0 +++
1 <... vfork resumed>) = 4
1 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=4, si_status=0} ---
1 wait4(-1, NULL, 0, NULL) = 4
1 munmap(0x7f0000000000, 2097152) = 0
1 exit_group(0) = ?
1 +++ exited with 0 +++
"""


def check_processes(replay):
    """fork, a child that exits before its clone returns, a thread, vfork + execve."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "processes.trace")
        with open(path, "w") as f:
            f.write(PROCESSES)
        rc, res, err = replay_json(replay, ["--arch", "all", path])
        ok(rc == 0, "processes: exit 0 (%d) %s" % (rc, err.strip()[:200]))
        for r in res:
            a = r["arch"]
            ok(r["mismatches"] == 0, "%s: 0 mismatches %s" % (a, r["mismatch_list"][:2]))
            ok(r["spaces"] == 4, "%s: 4 spaces: first, execve, fork, vfork+execve (%d)" %
               (a, r["spaces"]))
            ok(r["tasks"] == 4, "%s: 4 tasks (%d)" % (a, r["tasks"]))
            ok(r["replayed"] == 14 and r["skipped"] == 4,
               "%s: 14 calls replayed (%d), exit, exit_group and wait4 skipped (%d)" %
               (a, r["replayed"], r["skipped"]))
            ok(r["vmas_end"] == 2, "%s: at the last call, the heap and the thread's mapping (%d)" %
               (a, r["vmas_end"]))
            # The thread's munmap of a page its process touched flushes the main CPU too.
            ipi = r["counters"]["tlb_ipi"]
            if a in ("arm64",):
                ok(ipi == 0, "%s: broadcast TLBI, no IPI (%d)" % (a, ipi))
            else:
                ok(ipi >= 1, "%s: the thread's munmap sends an IPI (%d)" % (a, ipi))
        csv = os.path.join(d, "series.csv")
        rc, res, err = replay_json(replay, ["--arch", "arm64", "--csv", csv, path])
        rows = [l.split(",") for l in open(csv).read().splitlines()]
        ok(rows[0] == ["trace", "config", "call", "where", "syscall", "vmas", "rss_bytes",
                       "vmpte_bytes"], "--csv: the header")
        ok(len(rows) == 1 + res[0]["calls"], "--csv: a row per call (%d)" % (len(rows) - 1))
        last = rows[-1]
        ok(last[4] == "exit_group" and int(last[5]) == res[0]["vmas_end"] and
           int(last[6]) == res[0]["rss_end"] and int(last[7]) == res[0]["vmpte_end"],
           "--csv: the last row is the state at the last call")
        # A peak may fall between two calls (a fork inside an unfinished clone).
        ok(max(int(r[5]) for r in rows[1:]) <= res[0]["vmas_peak"] and
           max(int(r[6]) for r in rows[1:]) <= res[0]["rss_peak"] and
           max(int(r[7]) for r in rows[1:]) > 0, "--csv: its maxima are within the peaks")


BRK = re.compile(r"brk\((NULL|0x[0-9a-f]+)\)\s*= (0x[0-9a-f]+)")


def moved_break(lines):
    """The index of the first brk(NULL) that answers another break than the last brk."""
    last = None
    for i, line in enumerate(lines):
        m = BRK.search(line)
        if not m:
            continue
        if m.group(1) == "NULL" and last is not None and m.group(2) != last:
            return i
        last = m.group(2)
    return None


def check_reexec(replay, trace):
    """The exec a trace=memory trace leaves out is inferred, or refused with one line."""
    name = os.path.basename(trace)
    lines = open(trace).read().splitlines(keepends=True)
    moved = moved_break(lines)
    if not ok(moved is not None, "%s: a brk(NULL) answers a new break" % name):
        return
    ok(not any(re.search(r"\b(execve|clone|exit_group)\(", l) for l in lines),
       "%s: no process events in the trace" % name)
    rc, res, err = replay_json(replay, ["--arch", "all", trace])
    ok(rc == 0 and not err, "%s: exit 0, nothing on stderr (%d) %s" % (name, rc, err.strip()[:200]))
    ok(len(res) >= 4, "%s: a result per back end" % name)
    for r in res:
        a = r["arch"]
        ok(r["mismatches"] == 0, "%s %s: 0 mismatches %s" % (name, a, r["mismatch_list"][:3]))
        ok(r["inferred_execs"] == 1, "%s %s: 1 inferred exec (%d)" % (name, a, r["inferred_execs"]))
        ok(r["spaces"] == 2, "%s %s: 2 spaces, before and after the exec (%d)" %
           (name, a, r["spaces"]))
        ok(r["verify"] == "ok" and r["bad_input"] == 0,
           "%s %s: verify ok, no bad input" % (name, a))
    rc, out, err = run(replay, ["--arch", "all", trace])
    row = [l.split() for l in out.splitlines() if l.startswith("inferred execs ")]
    ok(rc == 0 and len(row) == 1 and row[0][2:] == ["1"] * len(res),
       "%s: the table's \"inferred execs\" row says 1 per back end %s" % (name, row))

    def refused(what, derived, lineno):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "noexec.trace")
            with open(path, "w") as f:
                f.writelines(derived)
            rc, out, err = run(replay, ["--arch", "all", path])
            ok(rc == 2, "%s: exit 2 (got %d)" % (what, rc))
            ok(err.count("\n") == 1 and "%s:%d: " % (path, lineno) in err and
               "lacks process events" in err and
               "strace -f -e trace=memory,process -o FILE CMD" in err,
               "%s: one line names the brk and how to record: %s" % (what, err.strip()[:300]))
            ok(out == "", "%s: no table" % what)
            rc, out, err = run(replay, ["--json", path])
            ok(rc == 2 and json.loads(out) == [] and err.count("\n") == 1,
               "%s: --json prints no result, exit 2" % what)

    # Without ld.so's mappings (glibc maps each object with MAP_DENYWRITE), a new break is
    # all there is: any call missing from a trace could have moved it.
    kept = [l for l in lines if "MAP_DENYWRITE" not in l]
    refused("%s without ld.so's mappings" % name, kept, moved_break(kept) + 1)
    # The same when the task exits, or the trace ends, before ld.so could show.
    refused("%s cut at the new break, then the exit" % name,
            lines[:moved + 1] + [l for l in lines if "+++ exited" in l], moved + 1)
    refused("%s cut at the new break" % name, lines[:moved + 1], moved + 1)
    # A loader that maps before it reads the break: the mappings before the brk(NULL) count.
    after = [i for i in range(moved + 1, len(lines)) if "MAP_DENYWRITE" in lines[i]]
    if ok(after, "%s: ld.so maps objects after the new break" % name):
        last = after[-1] + 1
        moved_late = lines[:moved] + lines[moved + 1:last + 1] + [lines[moved]] + lines[last + 1:]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "late.trace")
            with open(path, "w") as f:
                f.writelines(moved_late)
            rc, res, err = replay_json(replay, [path])
            ok(rc == 0 and res and res[0]["inferred_execs"] == 1 and res[0]["mismatches"] == 0,
               "%s with the new break after ld.so's mappings: 1 inferred exec, exit %d %s" %
               (name, rc, err.strip()[:200]))


def check_smaps(replay, trace):
    name = os.path.basename(trace)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "smaps")
        rc, res, err = replay_json(replay, ["--arch", "arm64", "--smaps", path, trace])
        ok(rc == 0 and not err, "%s --smaps: exit 0, nothing on stderr (%d) %s" %
           (name, rc, err.strip()[:200]))
        with open(path) as f:
            text = f.read()
    heads = re.findall(r"^# .*: a process exits", text, re.M)
    ok(len(heads) >= 1, "%s: a smaps per exiting process (%d)" % (name, len(heads)))
    # Private or shared; a file mapping has its offset, and its file's number as the inode.
    maps = re.findall(r"^[0-9a-f]{8,}-[0-9a-f]{8,} [r-][w-][x-][ps] [0-9a-f]{8,} 00:00 [0-9]+ ",
                      text, re.M)
    ok(len(maps) > 0, "%s: map lines as /proc/PID/smaps has them (%d)" % (name, len(maps)))
    fields = ["Size", "KernelPageSize", "MMUPageSize", "Rss", "Pss", "Pss_Dirty", "Shared_Clean",
              "Shared_Dirty", "Private_Clean", "Private_Dirty", "Referenced", "Anonymous", "KSM",
              "LazyFree", "AnonHugePages", "ShmemPmdMapped", "FilePmdMapped", "Shared_Hugetlb",
              "Private_Hugetlb", "Swap", "SwapPss", "Locked"]
    each = all(len(re.findall(r"^%-16s *[0-9]+ kB$" % (f + ":"), text, re.M)) == len(maps)
               for f in fields)
    ok(each, "%s: every field once per VMA, the kernel's names and format" % name)
    ok(len(re.findall(r"^THPeligible: +[01]$", text, re.M)) == len(maps) and
       len(re.findall(r"^VmFlags: ", text, re.M)) == len(maps), "%s: THPeligible, VmFlags" % name)
    ok("[heap]" in text, "%s: the heap named" % name)
    rss = sum(int(v) for v in re.findall(r"^Rss: +([0-9]+) kB$", text, re.M))
    ok(res and rss > 0, "%s: some memory resident at exit (%d kB)" % (name, rss))


def main():
    replay, mode = sys.argv[1], sys.argv[2]
    if mode == "traces":
        check_traces(replay, sys.argv[3], sys.argv[4:])
    elif mode == "formats":
        for t in sys.argv[3:]:
            check_formats(replay, t)
    elif mode == "badinput":
        check_badinput(replay)
    elif mode == "processes":
        check_processes(replay)
    elif mode == "synthetic":
        check_synthetic(replay, sys.argv[3], int(sys.argv[4]))
    elif mode == "reexec":
        check_reexec(replay, sys.argv[3])
    elif mode == "smaps":
        check_smaps(replay, sys.argv[3])
    elif mode == "seal-lock":
        check_seal_lock(replay, sys.argv[3])
    elif mode == "softdirty":
        check_softdirty(replay, sys.argv[3])
    print("1..%d" % n_checks)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
