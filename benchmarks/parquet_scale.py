"""Benchmark: DuckDB reading a 50,000,000-request partitioned Parquet log with bounded memory.

Run: ``nice -n 19 python benchmarks/parquet_scale.py`` (long: writes ~30 GB
under ``/tmp`` and reads it several times). Options: ``--requests N``
(50,000,000, the replayed zone's requests), ``--base N`` (100,000 generated
requests, multiplied up to ``--requests``), ``--hours N`` (24, the time span),
``--other-zones N`` (2 zones of ``--other-requests`` 1,000,000 each, which the
replay must skip), ``--folder DIR`` (``/tmp/workbench-parquet-scale``, reused
if it holds the same log), ``--memory-limit`` (1GB), ``--threads`` (2),
``--clean`` (delete the folder at the end), ``--columns lean`` (copy only the
columns the ``engine`` stage reads, not all 70: the copies are written ~5x
faster and ~6x smaller; DuckDB reads only those columns of a full log anyway,
so the read and spill figures hold, but ``scan`` reads less than it would).

The log: ``--base`` requests from :func:`workbench.traffic.generators.generate`
written with :func:`workbench.replay.write_log`, then copied in
DuckDB SQL ``requests / base`` times, each copy with new request ids, ray ids
and times (spread evenly over ``--hours``), partitioned by zone and hour like
a log :func:`write_log` makes. Writing through Python at ~3,000 requests/s
would take hours; the copies take minutes.

Prints, for each stage, rows, seconds, rows per second, the process's peak
RSS and the peak size of DuckDB's temp (spill) folder:

1. ``scan``: every row of the zone read and grouped by hour (the plain read);
2. ``engine``: :func:`~workbench.replay.replay_duckdb` on all
   ``--requests`` with a zone of three cheap firewall rules: the engine's
   whole path (keys grouped per distinct key, the per-request fallback scan,
   the join back and the sorted events written to Parquet), which is the
   stage that must spill;
3. ``full replay``: the demo zone of ``workbench replay`` (old WAF, both
   managed rulesets, 228 checks) on the ``--base`` log only, with the time it
   would take on ``--requests`` at that rate. Evaluating every managed rule
   over 50,000,000 rows takes hours on 2 cores: this stage is measured small.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("WORKBENCH_PROGRESS", "0")

from workbench import Workbench  # noqa: E402
from workbench.replay import (  # noqa: E402
    EVENT_COLUMNS,
    DuckDBBackend,
    connect,
    count,
    replay_duckdb,
    scan,
    write_log,
)
from workbench.replay.run import demo_zone  # noqa: E402
from workbench.rules_language import compile_expression  # noqa: E402
from workbench.rules_language.sql_fragments import ident, sql_string  # noqa: E402
from workbench.traffic.generators import generate  # noqa: E402

ZONE = "example.com"
START_MS = 1_700_000_000_000
#: Columns that hold a request's id, ray id or time: new in every copy of the base.
RENEWED = (
    "request_id",
    "ray_id",
    "datetime",
    "cf.ray_id",
    "http.request.timestamp.sec",
    "http.request.timestamp.msec",
    "zone",
    "hour",
)
CHEAP_RULES = [
    {"filter": {"expression": 'http.request.uri.path contains "/admin"'}, "action": "block"},
    {"filter": {"expression": 'http.request.method eq "POST"'}, "action": "log"},
    {"filter": {"expression": 'not ip.src.country in {"US" "GB"}'}, "action": "log"},
]


def folder_mb(path: Path) -> float:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                pass  # DuckDB removed a spill file while we looked
    return total / 1e6


@contextmanager
def measured(name: str, spill: Path) -> Iterator[dict[str, Any]]:
    """Time a stage, with its peak RSS (VmHWM reset first) and the peak size of ``spill``."""
    spill.mkdir(parents=True, exist_ok=True)
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM, the peak RSS
    except OSError:
        pass
    out: dict[str, Any] = {"spill_mb": 0.0}
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.5):
            out["spill_mb"] = max(out["spill_mb"], folder_mb(spill))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    started = time.perf_counter()
    try:
        yield out
    finally:
        out["seconds"] = time.perf_counter() - started
        stop.set()
        watcher.join()
        out["spill_mb"] = max(out["spill_mb"], folder_mb(spill))
        out["peak_rss_mb"] = peak_rss_mb()
        rows = out.get("rows", 0)
        rate = rows / out["seconds"] if out["seconds"] else 0.0
        print(
            f"{name}: {rows:,} rows in {out['seconds']:.1f} s = {rate:,.0f} rows/s; "
            f"peak RSS {out['peak_rss_mb']:,.0f} MB; "
            f"spilled: {'yes' if out['spill_mb'] > 0 else 'no'} "
            f"(temp folder peak {out['spill_mb']:,.0f} MB)",
            flush=True,
        )


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ensure_base(folder: Path, n: int) -> None:
    if folder.is_dir() and count(folder, ZONE) == n:
        return
    shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    write_log(generate(n, seed=15), folder, zone=ZONE, seed=7, start_ms=START_MS, step_ms=5)
    print(f"base: {n:,} generated requests written in {time.perf_counter() - started:.1f} s")


def ensure_log(args: argparse.Namespace, base: Path, log: Path) -> None:
    """Copies of the base log, partitioned by zone and hour, up to the requested sizes."""
    wanted = {
        "requests": args.requests,
        "base": args.base,
        "hours": args.hours,
        "other_zones": args.other_zones,
        "other_requests": args.other_requests,
        "columns": args.columns,
    }
    marker = log / "_scale.json"
    if marker.is_file() and json.loads(marker.read_text()) == wanted:
        print(f"log: reusing {log} ({folder_mb(log):,.0f} MB)")
        return
    shutil.rmtree(log, ignore_errors=True)
    log.mkdir(parents=True)
    zones = [(ZONE, args.requests)] + [
        (f"zone{z}.example", args.other_requests) for z in range(1, args.other_zones + 1)
    ]
    con = connect(memory_limit=args.memory_limit, threads=args.threads, temp_directory=log / "_tmp")
    con.execute(f"CREATE TEMP TABLE base AS SELECT * FROM {scan(base, ZONE)}").fetchall()
    names = [r[0] for r in con.execute("DESCRIBE base").fetchall()]
    needed = lean_columns() if args.columns == "lean" else set(names)
    kept = ", ".join(f"b.{ident(c)}" for c in names if c in needed and c not in RENEWED)
    span_ms = args.hours * 3_600_000
    started = time.perf_counter()
    first = 0
    for z, (zone, n) in enumerate(zones):
        step = span_ms / n
        for copy, offset in enumerate(range(0, n, args.base)):
            size = min(args.base, n - offset)
            # Every copy of the base gets its own ids, ray ids and times: a log a zone would write.
            ms = f"({START_MS} + CAST(({offset} + b.request_id) * {step} AS BIGINT))"
            rid = f"({first + offset} + b.request_id)"
            select = (
                f"SELECT {rid} AS request_id, lpad(to_hex(hash({rid}, {z})), 16, '0') AS ray_id, "
                f"make_timestamp({ms} * 1000) AS datetime, {kept}, "
                f"lpad(to_hex(hash({rid}, {z})), 16, '0') AS {ident('cf.ray_id')}, "
                f"{ms} // 1000 AS {ident('http.request.timestamp.sec')}, "
                f"{ms} AS {ident('http.request.timestamp.msec')}, "
                f"{sql_string(zone)} AS zone, "
                f"strftime(make_timestamp({ms} * 1000), '%Y-%m-%d-%H') AS hour "
                f"FROM base b WHERE b.request_id < {size} ORDER BY b.request_id"
            )
            con.execute(
                f"COPY ({select}) TO {sql_string(str(log))} (FORMAT PARQUET, "
                "ROW_GROUP_SIZE 16384, PARTITION_BY (zone, hour), OVERWRITE_OR_IGNORE, "
                f"FILENAME_PATTERN 'copy{z}_{copy}_{{i}}')"
            ).fetchall()
            done = offset + size
            if copy % 50 == 0 or done == n:
                print(
                    f"log: {zone} {done:,}/{n:,} written ({time.perf_counter() - started:.0f} s)",
                    flush=True,
                )
        first += n
    con.close()
    shutil.rmtree(log / "_tmp", ignore_errors=True)
    marker.write_text(json.dumps(wanted))
    seconds = time.perf_counter() - started
    total = sum(n for _, n in zones)
    print(
        f"log: {total:,} requests ({len(zones)} zones, {args.hours} hours) written in "
        f"{seconds:.0f} s ({total / seconds:,.0f} rows/s, {folder_mb(log):,.0f} MB Parquet)"
    )


def lean_columns() -> set[str]:
    """The columns the ``engine`` stage reads: the others are never decoded (projection pushdown)."""
    fields = {
        f for rule in CHEAP_RULES for f in compile_expression(rule["filter"]["expression"]).fields
    }
    return {*RENEWED, "label", "raw", *EVENT_COLUMNS, *fields}


def cheap_zone() -> tuple[Workbench, str]:
    wb = Workbench(seed=1)
    zone = wb.create_zone(ZONE, plan="enterprise")
    wb.firewall.create_rules(zone.id, CHEAP_RULES)
    return wb, zone.id


def run_stage(name: str, spill: Path, body: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    with measured(name, spill) as out:
        body(out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50_000_000)
    parser.add_argument("--base", type=int, default=100_000)
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--other-zones", type=int, default=2)
    parser.add_argument("--other-requests", type=int, default=1_000_000)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/workbench-parquet-scale"))
    parser.add_argument("--columns", choices=("full", "lean"), default="full")
    parser.add_argument("--memory-limit", default="1GB")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-scan", action="store_true", help="skip the scan stage")
    parser.add_argument("--skip-full", action="store_true", help="skip the full replay stage")
    parser.add_argument("--clean", action="store_true", help="delete --folder at the end")
    args = parser.parse_args()
    base, log, spill = args.folder / "base", args.folder / "log", args.folder / "spill"
    ensure_base(base, args.base)
    ensure_log(args, base, log)
    print(
        f"DuckDB: memory_limit {args.memory_limit}, threads {args.threads}, "
        f"temp_directory {spill}; log {folder_mb(log):,.0f} MB on disk"
    )

    def read(out: dict[str, Any]) -> None:
        con = connect(memory_limit=args.memory_limit, threads=args.threads, temp_directory=spill)
        rows = con.execute(
            f"SELECT hour, count(*), count(DISTINCT ray_id) FROM {scan(log, ZONE)} GROUP BY hour"
        ).fetchall()
        con.close()
        out["rows"] = sum(r[1] for r in rows)
        out["distinct_ray_ids"] = sum(r[2] for r in rows)
        print(f"scan: {len(rows)} hour partitions of {ZONE}")

    if not args.skip_scan:
        scanned = run_stage("scan (read, group by hour, distinct ray ids)", spill, read)
        assert scanned["rows"] == args.requests == scanned["distinct_ray_ids"], scanned

    def engine(out: dict[str, Any]) -> None:
        wb, zone_id = cheap_zone()
        done = replay_duckdb(
            wb, zone_id, log, args.folder / "events-cheap.parquet", systems="none",
            memory_limit=args.memory_limit, threads=args.threads, temp_directory=spill,
        )  # fmt: skip
        out["rows"] = done.requests
        con = connect(memory_limit=args.memory_limit, threads=args.threads, temp_directory=spill)
        slices = len(DuckDBBackend(con, log=log, zone=ZONE).slices())
        con.close()
        print(
            f"engine: events sorted in {slices} time slice(s); "
            f"{done.requests:,} requests, {done.events:,} events, actions {done.actions}, "
            f"steps {done.stats['seconds']}, distinct keys {done.stats['distinct_keys']}"
        )

    run_stage(f"engine (3 firewall rules, {args.requests:,} requests)", spill, engine)

    if not args.skip_full:

        def full(out: dict[str, Any]) -> None:
            wb, zone_id = demo_zone(ZONE, seed=1)
            done = replay_duckdb(
                wb, zone_id, base, args.folder / "events-full.parquet",
                memory_limit=args.memory_limit, threads=args.threads, temp_directory=spill,
            )  # fmt: skip
            out["rows"] = done.requests
            hours = args.requests / (done.requests / done.seconds) / 3600
            print(
                f"full replay: {done.requests:,} requests, {done.events:,} events, "
                f"{done.stats['slots']} checks, steps {done.stats['seconds']}; at this rate "
                f"{args.requests:,} requests would take ~{hours:.1f} h (not run at that size)"
            )

        run_stage(f"full replay (demo zone, {args.base:,} requests)", spill, full)
    if args.clean:
        shutil.rmtree(args.folder, ignore_errors=True)
        print(f"removed {args.folder}")
    else:
        print(f"left in place (reused next run): {args.folder}")


if __name__ == "__main__":
    main()
