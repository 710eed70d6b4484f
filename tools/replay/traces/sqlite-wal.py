# SPDX-License-Identifier: LGPL-2.1-or-later
# SQLite in WAL mode: the -shm index is a shared file mapping, written by the
# writer and read by a second process (multiprocessing fork) that queries.
import multiprocessing as mp
import sqlite3

DB = "wal.db"


def reader(n):
    con = sqlite3.connect(DB)
    got = con.execute("select count(*), sum(v) from t").fetchone()
    con.close()
    return got


def main():
    con = sqlite3.connect(DB)
    con.execute("pragma journal_mode=wal")
    con.execute("create table if not exists t (k integer primary key, v integer)")
    for i in range(200):
        con.execute("insert into t (v) values (?)", (i,))
        if i % 20 == 0:
            con.commit()
    con.commit()
    with mp.get_context("fork").Pool(2) as pool:
        print(pool.map(reader, range(4)))
    con.close()


if __name__ == "__main__":
    main()
