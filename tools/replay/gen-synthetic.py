#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A synthetic strace log of N memory calls of one process, for mmprim-replay's speed.

usage: gen-synthetic.py N [SEED] > FILE

Mappings live in 1 MiB slots and never grow into the next one, so every
answer the log gives is the kernel's: mmap at the slot, munmap, mprotect and
mremap of whole mappings, madvise of parts of them, and a brk heap that grows
and shrinks by pages.
"""
import random
import sys

PAGE = 4096
SLOT = 1 << 20
BASE = 0x7F0000000000
HEAP = 0x555555600000
NR_SLOTS = 4096
PID = 4242


def calls(n, seed):
    rnd = random.Random(seed)
    slots = {}  # slot -> (length, prot)
    brk = HEAP
    yield "execve(\"/synthetic\", [\"synthetic\"], 0x7ffc00000000 /* 1 var */) = 0"
    yield "brk(NULL) = 0x%x" % brk
    for _ in range(n - 1):
        r = rnd.random()
        if r < 0.05:
            step = rnd.randrange(1, 64) * PAGE
            if brk - HEAP > 256 * PAGE and rnd.random() < 0.5:
                brk -= step
            else:
                brk += step
            yield "brk(0x%x) = 0x%x" % (brk, brk)
            continue
        i = rnd.randrange(NR_SLOTS)
        addr = BASE + i * SLOT
        if i not in slots:
            length = rnd.randrange(1, 128) * PAGE
            slots[i] = (length, "PROT_READ|PROT_WRITE")
            yield ("mmap(NULL, %d, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)"
                   " = 0x%x" % (length, addr))
            continue
        length, prot = slots[i]
        op = rnd.random()
        if op < 0.25:
            del slots[i]
            yield "munmap(0x%x, %d) = 0" % (addr, length)
        elif op < 0.45:
            prot = "PROT_READ" if prot != "PROT_READ" else "PROT_READ|PROT_WRITE"
            slots[i] = (length, prot)
            yield "mprotect(0x%x, %d, %s) = 0" % (addr, length, prot)
        elif op < 0.75:
            pages = length // PAGE
            first = rnd.randrange(pages)
            count = rnd.randrange(1, pages - first + 1)
            advice = rnd.choice(["MADV_DONTNEED", "MADV_FREE", "MADV_DONTNEED"])
            yield "madvise(0x%x, %d, %s) = 0" % (addr + first * PAGE, count * PAGE, advice)
        else:
            new = rnd.randrange(1, 256) * PAGE
            slots[i] = (new, prot)
            yield "mremap(0x%x, %d, %d, MREMAP_MAYMOVE) = 0x%x" % (addr, length, new, addr)


def main():
    n = int(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    out = sys.stdout
    t = 1700000000.0
    for k, c in enumerate(calls(n, seed)):
        t += 0.000003
        out.write("%d %.6f %s <0.000002>\n" % (PID, t, c))
    out.write("%d %.6f exit_group(0) = ?\n%d +++ exited with 0 +++\n" % (PID, t, PID))


if __name__ == "__main__":
    main()
