"""Benchmark: Durable Object storage against raw sqlite3 doing the same work.

Run: ``python benchmarks/storage.py`` (about a minute; ``--quick`` for a smoke run, ``--sql``
for the SQL cases alone).

Prints operations per second for KV put, get and list and for SQL exec
(INSERT, SELECT by key, UPDATE by key, full scan), each next to Python's
``sqlite3`` doing the same SQLite work in the same process (ratio = runtime
time / sqlite3 time; lower is better), then the cost of one small write and of
a restore as the history and the database grow (a flat write cost means no
copy of the database per write).

Each case runs the runtime and ``sqlite3`` back to back several times; the
ratio of each pair is taken, and the median and the worst of those ratios are
printed, so a busy machine shows as a spread rather than a wrong answer.
"""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from workbench.storage import DurableObject, ObjectAborted, Runtime

QUICK = "--quick" in sys.argv
N = 2_000 if QUICK else 20_000


class Bench(DurableObject):
    async def fetch(self, job: Callable[[Any], Any]) -> Any:
        result = job(self.ctx)
        if inspect.isawaitable(result):
            result = await result
        return result


def best(fn: Callable[[], Any], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def fresh(storage: str = "sqlite") -> tuple[Runtime, Any]:
    rt = Runtime()
    ns = rt.namespace(Bench, storage=storage)
    return rt, ns.get(ns.id_from_name("bench"))


def raw_kv() -> sqlite3.Connection:
    con = sqlite3.connect(":memory:", isolation_level=None)
    con.execute("CREATE TABLE kv (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID")
    return con


PAIRS = 3 if QUICK else 7


def row(name: str, ops: int, ours: Callable[[], Any], raw: Callable[[], Any]) -> None:
    """Time ``ours`` and ``raw`` back to back PAIRS times; print medians and the worst ratio."""
    ours_t, raw_t, ratios = [], [], []
    for _ in range(PAIRS):
        a = best(ours, repeat=1)
        b = best(raw, repeat=1)
        ours_t.append(a)
        raw_t.append(b)
        ratios.append(a / b)
    print(
        f"{name:<44} {ops / statistics.median(ours_t):>12,.0f} "
        f"{ops / statistics.median(raw_t):>12,.0f} {statistics.median(ratios):>7.2f}x "
        f"{max(ratios):>7.2f}x",
        flush=True,
    )


def kv_benchmarks(storage: str) -> None:
    keys = [f"key{i:07}" for i in range(N)]
    value = "v" * 100

    # -- put: N awaited puts in one event (they coalesce into one batch) --------------
    def ours_put() -> None:
        rt, stub = fresh(storage)

        async def job(ctx: Any) -> None:
            put = ctx.storage.put
            for k in keys:
                await put(k, value)

        rt.run(stub.fetch(job))

    def raw_put() -> None:
        con = raw_kv()
        con.execute("BEGIN")
        for k in keys:
            con.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (k.encode(), value))
        con.execute("COMMIT")

    row(f"[{storage}] put, one batch ({N:,} puts)", N, ours_put, raw_put)

    # -- put: one event (and one commit) per put -------------------------------------
    m = N // 10

    def ours_put_each() -> None:
        rt, stub = fresh(storage)

        async def many() -> None:
            for k in keys[:m]:
                await stub.fetch(lambda ctx, k=k: ctx.storage.put(k, value))

        rt.run(many())

    def raw_put_each() -> None:
        con = raw_kv()
        for k in keys[:m]:
            con.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (k.encode(), value))

    row(
        f"[{storage}] put, one event + commit each ({m:,})",
        m,
        ours_put_each,
        raw_put_each,
    )

    # -- get and list on a filled object ---------------------------------------------
    rt, stub = fresh(storage)

    async def fill(ctx: Any) -> None:
        for i in range(0, N, 128):
            await ctx.storage.put({k: value for k in keys[i : i + 128]})

    rt.run(stub.fetch(fill))
    con = raw_kv()
    con.execute("BEGIN")
    con.executemany("INSERT INTO kv VALUES (?, ?)", [(k.encode(), value) for k in keys])
    con.execute("COMMIT")

    async def get_job(ctx: Any) -> None:
        get = ctx.storage.get
        for k in keys:
            await get(k)

    def raw_get() -> None:
        for k in keys:
            con.execute("SELECT value FROM kv WHERE key = ?", (k.encode(),)).fetchone()

    row(f"[{storage}] get ({N:,} keys)", N, lambda: rt.run(stub.fetch(get_job)), raw_get)

    lists = N // 100

    async def list_job(ctx: Any) -> None:
        for i in range(lists):
            await ctx.storage.list({"start": keys[i * 100 % N], "limit": 100})

    def raw_list() -> None:
        for i in range(lists):
            con.execute(
                "SELECT key, value FROM kv WHERE key >= ? ORDER BY key LIMIT 100",
                (keys[i * 100 % N].encode(),),
            ).fetchall()

    row(
        f"[{storage}] list of 100 pairs ({lists:,} calls)",
        lists,
        lambda: rt.run(stub.fetch(list_job)),
        raw_list,
    )


def sql_benchmarks() -> None:
    rt, stub = fresh()
    schema = "CREATE TABLE t(id INTEGER PRIMARY KEY, g, s); CREATE TABLE ins(id INTEGER PRIMARY KEY, g, s)"
    rt.run(stub.fetch(lambda ctx: ctx.storage.sql.exec(schema)))
    con = sqlite3.connect(":memory:", isolation_level=None)
    con.executescript(schema)

    def fill(ctx: Any) -> None:
        for i in range(N):
            ctx.storage.sql.exec("INSERT INTO t(id, g, s) VALUES (?, ?, ?)", i, i % 10, "row")

    rt.run(stub.fetch(fill))
    con.executemany(
        "INSERT INTO t(id, g, s) VALUES (?, ?, ?)", [(i, i % 10, "row") for i in range(N)]
    )
    # Each INSERT run adds N new rows (to its own table), so only inserts are timed.
    next_ours, next_raw = [0], [0]

    def ours_insert() -> None:
        start = next_ours[0]
        next_ours[0] += N

        def job(ctx: Any) -> None:
            exec_ = ctx.storage.sql.exec
            for i in range(start, start + N):
                exec_("INSERT INTO ins(id, g, s) VALUES (?, ?, ?)", i, i % 10, "row")

        rt.run(stub.fetch(job))

    def raw_insert() -> None:
        start = next_raw[0]
        next_raw[0] += N
        con.execute("BEGIN")
        for i in range(start, start + N):
            con.execute("INSERT INTO ins(id, g, s) VALUES (?, ?, ?)", (i, i % 10, "row"))
        con.execute("COMMIT")

    row(f"[sql] exec INSERT ({N:,})", N, ours_insert, raw_insert)

    def ours_select() -> None:
        def job(ctx: Any) -> None:
            exec_ = ctx.storage.sql.exec
            for i in range(N):
                exec_("SELECT g, s FROM t WHERE id = ?", i).one()

        rt.run(stub.fetch(job))

    def raw_select() -> None:
        for i in range(N):
            con.execute("SELECT g, s FROM t WHERE id = ?", (i,)).fetchone()

    row(f"[sql] exec SELECT by PK + one() ({N:,})", N, ours_select, raw_select)

    def ours_update() -> None:
        def job(ctx: Any) -> None:
            exec_ = ctx.storage.sql.exec
            for i in range(N):
                exec_("UPDATE t SET s = ? WHERE id = ?", "upd", i)

        rt.run(stub.fetch(job))

    def raw_update() -> None:
        con.execute("BEGIN")
        for i in range(N):
            con.execute("UPDATE t SET s = ? WHERE id = ?", ("upd", i))
        con.execute("COMMIT")

    row(f"[sql] exec UPDATE by PK ({N:,})", N, ours_update, raw_update)

    scans = 10  # several scans per event, so the event's own cost does not hide the scan's

    def ours_scan() -> None:
        def job(ctx: Any) -> None:
            for _ in range(scans):
                ctx.storage.sql.exec("SELECT * FROM t").toArray()

        rt.run(stub.fetch(job))

    def raw_scan() -> None:
        for _ in range(scans):
            con.execute("SELECT * FROM t").fetchall()

    row(f"[sql] full scan toArray() ({scans} x {N:,} rows)", scans * N, ours_scan, raw_scan)


def growth_benchmarks() -> None:
    print()
    print(f"{'database size':>14} {'history records':>16} {'one small write':>16} {'restore':>10}")
    rt, stub = fresh()
    blob = "x" * 4000
    sizes = [1, 4, 16] if QUICK else [1, 4, 16, 64]
    rows_done = 0
    rt.run(
        stub.fetch(
            lambda ctx: ctx.storage.sql.exec("CREATE TABLE big(id INTEGER PRIMARY KEY, body)")
        )
    )
    for mb in sizes:
        target_rows = mb * 1_000_000 // 4000

        async def grow(ctx: Any, start: int = rows_done, stop: int = target_rows) -> None:
            for i in range(start, stop, 200):  # one batch of up to 200 rows per event
                for j in range(i, min(i + 200, stop)):
                    ctx.storage.sql.exec("INSERT INTO big VALUES (?, ?)", j, blob)
                await asyncio.sleep(0)

        rt.run(stub.fetch(grow))
        rows_done = target_rows
        mark = rt.run(stub.fetch(lambda ctx: ctx.storage.getCurrentBookmark()))
        writes = 200

        async def small_writes(writes: int = writes) -> None:
            for i in range(writes):
                await stub.fetch(lambda ctx, i=i: ctx.storage.put("counter", i))

        per_write = best(lambda: rt.run(small_writes()), repeat=2) / writes

        def restore(mark: str = mark) -> None:
            rt.run(stub.fetch(lambda ctx: ctx.storage.onNextSessionRestoreBookmark(mark)))
            try:
                rt.run(stub.fetch(lambda ctx: ctx.abort("restore")))
            except ObjectAborted:
                pass
            rt.run(stub.fetch(lambda ctx: None))  # the restart applies the restore

        restore_s = best(restore, repeat=1)
        size = rt.run(stub.fetch(lambda ctx: ctx.storage.sql.databaseSize))
        records = len(stub._host.db.history.timeline())
        print(
            f"{size / 1e6:>11.1f} MB {records:>16,} {per_write * 1e6:>13.0f} µs {restore_s * 1e3:>7.1f} ms",
            flush=True,
        )


def main() -> None:
    if "--sql" in sys.argv:  # the SQL cases alone
        print(f"{'operation':<44} {'runtime/s':>12} {'sqlite3/s':>12} {'median':>8} {'worst':>8}")
        sql_benchmarks()
        return
    print(f"{'operation':<44} {'runtime/s':>12} {'sqlite3/s':>12} {'median':>8} {'worst':>8}")
    for storage in ("sqlite", "kv"):
        kv_benchmarks(storage)
    sql_benchmarks()
    growth_benchmarks()


if __name__ == "__main__":
    main()
