# SPDX-License-Identifier: LGPL-2.1-or-later
# A multiprocessing pool: forked workers that come and go (maxtasksperchild).
import multiprocessing as mp


def work(n):
    return sum(i * i for i in range(n))


if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(4, maxtasksperchild=1) as pool:
        print(sum(pool.map(work, [20000] * 46, chunksize=1)))
