# SPDX-License-Identifier: LGPL-2.1-or-later
# Four threads build, encode and decode JSON lists: arenas, thread stacks, mremap.
import json
import threading

out = [None] * 4


def work(k):
    d = [{"k": i, "v": str(i) * 10} for i in range(20000 * (k + 1))]
    out[k] = len(json.loads(json.dumps(d)))


ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sum(out))
