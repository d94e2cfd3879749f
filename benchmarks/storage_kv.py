"""Benchmark: KV get and list with structured values, and the value codec against pickle.

Run: ``python benchmarks/storage_kv.py`` (about half a minute; ``--quick`` for a smoke run).

``benchmarks/storage.py`` measures KV calls with 100-character strings. This one stores
records (a dict of a few fields, and a list of 200 such dicts) and bytes, and compares:

* ``ctx.storage`` get / list with ``sqlite3`` doing the same SQLite work in the same
  process and turning the stored bytes back into a value with ``pickle.loads`` (the
  hand-written way to keep Python values in SQLite), and with ``sqlite3`` alone (the
  bytes, not decoded: a floor no codec can reach);
* ``encode`` / ``decode`` of :mod:`workbench.storage.value_codec` (and ``decode_pairs``, which
  ``list()`` uses) with ``pickle.dumps`` / ``pickle.loads`` (protocol 5) of the same value.

Ratios are our time / the baseline's time; lower is better. Times are this process's CPU
time (``time.process_time``, best of 5), so other work on a shared machine does not skew them.
"""

from __future__ import annotations

import pickle
import sqlite3
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from workbench.storage import DurableObject, Runtime
from workbench.storage.value_codec import decode, decode_pairs, encode

QUICK = "--quick" in sys.argv
N = 1_000 if QUICK else 10_000


class Bench(DurableObject):
    async def fetch(self, job: Callable[[Any], Any]) -> Any:
        return await job(self.ctx)


def best(fn: Callable[[], Any], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def record(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "name": f"user{i}",
        "email": f"user{i}@example.com",
        "tags": ["alpha", "beta"],
        "score": i * 0.5,
        "active": i % 2 == 0,
    }


VALUES: dict[str, Callable[[int], Any]] = {
    "small record (dict, 6 fields)": record,
    "large record (200 dicts, ~12 KB)": lambda i: {
        "owner": i,
        "rows": [record(i * 1000 + j) for j in range(200)],
    },
    "bytes (4 KB)": lambda i: i.to_bytes(4, "little") * 1024,
    "mixed (date, set, tuple, bytes)": lambda i: {
        "when": datetime(2026, 1, 1, tzinfo=UTC),
        "seen": {f"k{i}", f"k{i + 1}"},
        "pair": (i, str(i)),
        "raw": b"\x00" * 16,
    },
}


def row(name: str, ours: float, base: float, floor: float | None = None) -> None:
    extra = f" {ours / floor:>9.2f}x" if floor else ""
    print(f"{name:<58} {ours * 1e6:>10.2f} {base * 1e6:>10.2f} {ours / base:>7.2f}x{extra}")


def codec(name: str, make: Callable[[int], Any]) -> None:
    values = [make(i) for i in range(64)]
    stored = [encode(v) for v in values]
    pickled = [pickle.dumps(v, 5) for v in values]
    assert [decode(s) for s in stored] == values
    reps = max(1, N // 1000)

    def loop(fn: Callable[[Any], Any], items: list[Any]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(reps):
                for item in items:
                    fn(item)

        return run

    per = reps * len(values)
    row(
        f"encode: {name}",
        best(loop(encode, values)) / per,
        best(loop(lambda v: pickle.dumps(v, 5), values)) / per,
    )
    row(
        f"decode: {name}", best(loop(decode, stored)) / per, best(loop(pickle.loads, pickled)) / per
    )
    # a list(): keys decoded and every value kept in one dict, on both sides
    rows = [(f"k{i:03}".encode(), data) for i, data in enumerate(stored)]
    pickled_rows = [(f"k{i:03}".encode(), data) for i, data in enumerate(pickled)]

    def pickle_pairs(rows: list[tuple[bytes, bytes]]) -> dict[str, Any]:
        return {k.decode(): pickle.loads(v) for k, v in rows}

    row(
        f"decode, a list() of {len(rows)}: {name}",
        best(loop(decode_pairs, [rows])) / per,
        best(loop(pickle_pairs, [pickled_rows])) / per,
    )


def kv(name: str, make: Callable[[int], Any]) -> None:
    n = N if "large" not in name else N // 20
    keys = [f"key{i:07}" for i in range(n)]
    values = [make(i) for i in range(n)]

    rt = Runtime()
    ns = rt.namespace(Bench, storage="sqlite")
    stub = ns.get(ns.id_from_name("bench"))

    async def fill(ctx: Any) -> None:
        for i in range(0, n, 128):
            await ctx.storage.put(dict(zip(keys[i : i + 128], values[i : i + 128], strict=True)))

    rt.run(stub.fetch(fill))
    con = sqlite3.connect(":memory:", isolation_level=None)
    con.execute("CREATE TABLE kv (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID")
    con.executemany(
        "INSERT INTO kv VALUES (?, ?)",
        [(k.encode(), pickle.dumps(v, 5)) for k, v in zip(keys, values, strict=True)],
    )

    async def get_job(ctx: Any) -> None:
        get = ctx.storage.get
        for k in keys:
            await get(k)

    def raw_get(loads: Callable[[bytes], Any] | None) -> Callable[[], None]:
        def run() -> None:
            for k in keys:
                (data,) = con.execute(
                    "SELECT value FROM kv WHERE key = ?", (k.encode(),)
                ).fetchone()
                if loads:
                    loads(data)

        return run

    ours = best(lambda: rt.run(stub.fetch(get_job))) / n
    row(
        f"get: {name} ({n:,} keys)",
        ours,
        best(raw_get(pickle.loads)) / n,
        best(raw_get(None)) / n,
    )

    lists = max(1, n // 100)

    async def list_job(ctx: Any) -> None:
        for i in range(lists):
            await ctx.storage.list({"start": keys[i * 100 % n], "limit": 100})

    def raw_list(loads: Callable[[bytes], Any] | None) -> Callable[[], None]:
        def run() -> None:
            for i in range(lists):
                rows = con.execute(
                    "SELECT key, value FROM kv WHERE key >= ? ORDER BY key LIMIT 100",
                    (keys[i * 100 % n].encode(),),
                ).fetchall()
                if loads:
                    {k.decode(): loads(v) for k, v in rows}

        return run

    row(
        f"list of 100: {name} ({lists:,} calls)",
        best(lambda: rt.run(stub.fetch(list_job))) / lists,
        best(raw_list(pickle.loads)) / lists,
        best(raw_list(None)) / lists,
    )


def main() -> None:
    print(f"{'codec (µs per value)':<58} {'ours':>10} {'pickle':>10} {'ratio':>8}")
    for name, make in VALUES.items():
        codec(name, make)
    print()
    print(
        f"{'ctx.storage (µs per call)':<58} {'ours':>10} {'sq3+pickle':>10} {'ratio':>8}"
        f" {'vs sqlite3 alone':>10}"
    )
    for name, make in VALUES.items():
        kv(name, make)


if __name__ == "__main__":
    main()
