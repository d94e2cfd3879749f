"""Benchmark: Durable Object storage against raw sqlite3 doing the same work.

Run: ``python benchmarks/storage.py`` (about a minute; ``--quick`` for a smoke run, ``--sql``
for the SQL cases alone, ``--only TEXT`` for the rows whose name holds TEXT). The 2x
target is for the full run: ``--quick`` times 10x fewer operations per run, so each
run's fixed cost (``rt.run`` starts a new event loop) weighs 10x more.

Prints operations per second for KV put, get and list (100 pairs a call, and every key in
one call) and for SQL exec (INSERT, SELECT by key, the smallest statement ``SELECT ?``,
UPDATE by key, full scan), each next to Python's
``sqlite3`` doing the same SQLite work in the same process (ratio = runtime
time / sqlite3 time; lower is better), then the cost of one small write and of
a restore as the history and the database grow (a flat write cost means no
copy of the database per write).

Each case runs the runtime and ``sqlite3`` back to back several times; the
ratio of each pair is taken, and the median and the worst of those ratios are
printed, so a busy machine shows as a spread rather than a wrong answer. A row
whose median misses 2x gets a line under it saying where the profile found the
time (docs/decisions.md, "Storage speed"); a footnote says which baselines keep
no point-in-time log.
"""

from __future__ import annotations

import asyncio
import gc
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
# ``--only TEXT``: time only the rows whose name holds TEXT (while working on one case)
ONLY = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""


class Bench(DurableObject):
    async def fetch(self, job: Callable[[Any], Any]) -> Any:
        result = job(self.ctx)
        if inspect.isawaitable(result):
            result = await result
        return result


def best(fn: Callable[[], Any], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        # A full collection owed by earlier work (imports, setup, the other side of the
        # pair) is paid here, not inside whichever timed run happens to trigger it;
        # collections the timed work itself causes still count.
        gc.collect()
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


def raw_log() -> sqlite3.Connection:
    """The point-in-time log's table, in a database of its own (as the runtime keeps it)."""
    con = sqlite3.connect(":memory:", isolation_level=None)
    con.execute(
        "CREATE TABLE log (seq INTEGER PRIMARY KEY, t_ms INTEGER NOT NULL, kind TEXT NOT NULL,"
        " data BLOB NOT NULL)"
    )
    return con


PAIRS = 3 if QUICK else 7
LIST_ALL = 1 if QUICK else 5  # list() calls of the whole object per timed run
TARGET = 2.0  # issue 13: every ratio within 2x
# Where the time beyond sqlite3's goes (profiled; docs/decisions.md, "Storage speed"),
# printed under a row whose median ratio misses TARGET.
WHY = {
    "commit each": "each event opens and commits its own batch (BEGIN + COMMIT around the put: "
    "a batch cannot know it will hold one write) and passes the input and output gates",
    "[sqlite] put, one event": "and, for the change log, reads the key's old value and writes "
    "the changeset by hand",
    "[sqlite] put, one batch": "the SQLite session logging the batch for point-in-time "
    "recovery (sqlite3 keeps no log here)",
    "[sql] exec INSERT": "the SQLite session logging each written row for point-in-time "
    "recovery, about 1 µs a row (sqlite3 keeps no log here)",
    "[sql] exec UPDATE": "the SQLite session logging each written row for point-in-time "
    "recovery, about 1 µs a row (sqlite3 keeps no log here)",
    "[sql] exec SELECT": "Python per statement: the cursor object, its billing record, the "
    "read-ahead step",
    "list of 100": "decoding the 100 values (structured clone) that sqlite3 returns as bytes",
    "list() of all": "decoding every value (structured clone) that sqlite3 returns as bytes",
    "SELECT ?": "Python per statement: the call, the cursor object, its billing record",
}


def row(name: str, ops: int, ours: Callable[[], Any], raw: Callable[[], Any]) -> None:
    """Time ``ours`` and ``raw`` back to back PAIRS times; print medians and the worst ratio
    (and, when the median misses TARGET, the profile's explanation)."""
    if ONLY and ONLY not in name:
        return
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
    if statistics.median(ratios) > TARGET:
        why = "; ".join(text for key, text in WHY.items() if key in name)
        if QUICK:  # the profiles are of the full run
            why = (
                "in --quick each timed run's fixed cost (rt.run's new event loop, about "
                "0.5 ms) weighs on 10x fewer operations; the target is for the full run"
            )
        print(f"    above {TARGET:g}x: {why or 'not profiled'}", flush=True)


def footnote() -> None:
    print(
        "sqlite3 does the runtime's durable work, except: '[sqlite] put, one event + commit "
        "each' also appends a log row per commit, as the runtime's point-in-time log does; "
        "the other [sqlite] and [sql] writes keep no log, while the runtime logs each batch's "
        "changes (an SQLite session).",
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
    m = 2_000  # quick or not: fewer would let rt.run's own ~0.5 ms (a new event loop) show
    # Each timed run starts on a new object (and new sqlite3 databases), made beforehand
    # with its KV table (as raw_kv makes sqlite3's): with only m events, making them would
    # weigh on the per-put figure.
    objects = [fresh(storage) for _ in range(PAIRS)]
    for rt, stub in objects:
        rt.run(stub.fetch(lambda ctx: ctx.storage.put("warm", value)))
    raw_dbs = [(raw_kv(), raw_log()) for _ in range(PAIRS)]

    def ours_put_each() -> None:
        rt, stub = objects.pop()

        async def many() -> None:
            for k in keys[:m]:
                await stub.fetch(lambda ctx, k=k: ctx.storage.put(k, value))

        rt.run(many())

    def raw_put_each() -> None:
        con, _ = raw_dbs.pop()
        for k in keys[:m]:
            con.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (k.encode(), value))

    def raw_put_each_logged() -> None:
        # The same durable work as the SQLite backend: each commit also appends one record
        # (here the key and value) to a log in a database of its own, as point-in-time
        # recovery does.
        con, log = raw_dbs.pop()
        for seq, k in enumerate(keys[:m], 1):
            key = k.encode()
            con.execute("INSERT OR REPLACE INTO kv VALUES (?, ?)", (key, value))
            log.execute(
                "INSERT INTO log VALUES (?, ?, 'changeset', ?)", (seq, 0, key + value.encode())
            )

    row(
        f"[{storage}] put, one event + commit each ({m:,})",
        m,
        ours_put_each,
        raw_put_each_logged if storage == "sqlite" else raw_put_each,
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

    # issue 29: one list() of every key (the keys and values of the whole object)
    async def list_all_job(ctx: Any) -> None:
        for _ in range(LIST_ALL):
            await ctx.storage.list()

    def raw_list_all() -> None:
        for _ in range(LIST_ALL):
            con.execute("SELECT key, value FROM kv ORDER BY key").fetchall()

    row(
        f"[{storage}] list() of all {N:,} keys ({LIST_ALL} calls)",
        LIST_ALL * N,
        lambda: rt.run(stub.fetch(list_all_job)),
        raw_list_all,
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

    # issue 29: the smallest statement, where the fixed cost per call shows
    def ours_tiny() -> None:
        def job(ctx: Any) -> None:
            exec_ = ctx.storage.sql.exec
            for i in range(N):
                exec_("SELECT ?", i).toArray()

        rt.run(stub.fetch(job))

    def raw_tiny() -> None:
        for i in range(N):
            con.execute("SELECT ?", (i,)).fetchall()

    row(f"[sql] exec SELECT ? + toArray() ({N:,})", N, ours_tiny, raw_tiny)

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
        footnote()
        return
    print(f"{'operation':<44} {'runtime/s':>12} {'sqlite3/s':>12} {'median':>8} {'worst':>8}")
    for storage in ("sqlite", "kv"):
        kv_benchmarks(storage)
    sql_benchmarks()
    footnote()
    if not ONLY:
        growth_benchmarks()


if __name__ == "__main__":
    main()
