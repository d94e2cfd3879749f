"""Benchmark: replaying a partitioned Parquet request log on DuckDB and on Spark local.

Run: ``python benchmarks/replay_engines.py``. By default it measures 200,000
requests on DuckDB and 20,000 on Spark (minutes each on 2 cores) and
*projects* the rest; ``--requests 10000000 --distinct 1000000 --skip-spark``
measures the issue's 10,000,000 on DuckDB (a 6 GB log: about 8 minutes to
generate and 6 to copy, then about 15 to replay on 2 cores). Options: ``--requests N`` (DuckDB's log,
200,000), ``--spark-requests N`` (Spark's log, 20,000; Spark is much slower
here), ``--cores N`` (2), ``--billion-cores N`` (the cluster size of the
projection, repeatable; 100 and 1000), ``--skip-spark``, ``--log DIR`` (reuse
a log written before), ``--memory-limit`` (DuckDB, 1GB), ``--distinct N`` (generate N
requests and write copies of them, each with its own ids and times, up to
``--requests``: generating 10,000,000 takes about 40 minutes, copying a few).

Prints, for the demo zone of ``workbench replay`` (an Enterprise zone, old
WAF on, both managed rulesets deployed: validation mode, the real catalogues):

* the time to generate and write each log (not counted in the replays);
* for each engine, what was *measured*: the requests, the seconds, requests
  per second and per core, and where the time went;
* what is *projected* from the measured per-core rate, labelled as such: the
  time for 10,000,000 requests on ``--cores`` cores for each engine, and for
  1,000,000,000 requests on N Spark cores. The projection is linear: it
  ignores that the fixed costs (Spark's planning, the driver's work) do not
  grow with the size, which makes it pessimistic for a small measured log,
  and that shuffles do grow, which makes it optimistic for a large cluster.

Requests are generated in seeded chunks, so a log of N requests is the same on
every run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("WORKBENCH_PROGRESS", "0")

from workbench.replay import connect, count, replay_duckdb, scan, write_log  # noqa: E402
from workbench.replay.run import demo_zone  # noqa: E402
from workbench.traffic.generators import generate  # noqa: E402

ZONE = "example.com"
CHUNK = 50_000
BILLION = 1_000_000_000


def requests(n: int):
    """``n`` generated requests, in seeded chunks (generated as the log is written)."""
    for i, start in enumerate(range(0, n, CHUNK)):
        yield from generate(min(CHUNK, n - start), seed=2000 + i)


STEP_MS = 5


def ensure_log(folder: Path, n: int, distinct: int | None = None) -> None:
    """The log of ``n`` requests in ``folder``: generated, or ``distinct`` generated ones
    copied (see :func:`copy_log`) until there are ``n``."""
    if folder.is_dir() and count(folder, ZONE) == n:
        print(f"log: reusing {folder} ({n:,} requests)")
        return
    shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    if distinct is None or distinct >= n:
        write_log(
            requests(n), folder, zone=ZONE, seed=7, start_ms=1_700_000_000_000, step_ms=STEP_MS
        )
        how = "generated and written"
    else:
        base = folder.with_name(folder.name + "-distinct")
        ensure_log(base, distinct)
        copy_log(base, folder, n, distinct)
        how = f"written as copies of {distinct:,} generated ones"
    seconds = time.perf_counter() - started
    size = sum(p.stat().st_size for p in folder.rglob("*.parquet")) / 1e6
    print(f"log: {n:,} requests {how} in {seconds:.1f} s ({size:,.0f} MB Parquet)")


def copy_log(base: Path, folder: Path, n: int, distinct: int) -> None:
    """``n`` requests from the ``distinct`` of ``base``: copy k has its own request ids, ray
    ids and times (after copy k - 1's), so the engines do the whole work of ``n`` requests;
    only the requests' contents repeat."""
    copies = -(-n // distinct)
    span_ms = distinct * STEP_MS
    con = connect(memory_limit="4GB", threads=2, temp_directory=folder.with_name("copy-spill"))
    names = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {scan(base, ZONE)}").fetchall()]
    renewed = ("request_id", "ray_id", "datetime", "hour", "zone")
    kept = ", ".join(f'"{c}"' for c in names if c not in renewed)
    for k in range(copies):
        # One copy per statement: a partitioned write holds a writer per open hour.
        shifted = f"datetime + INTERVAL {k * span_ms} MILLISECOND"
        con.execute(
            f"COPY (SELECT request_id + {k * distinct} AS request_id, "
            f"lpad(to_hex(hash(request_id, {k})), 16, '0') AS ray_id, "
            f"{shifted} AS datetime, {kept}, zone, strftime({shifted}, '%Y-%m-%d-%H') AS hour "
            f"FROM {scan(base, ZONE)} WHERE request_id + {k * distinct} < {n}) "
            "TO ? (FORMAT PARQUET, ROW_GROUP_SIZE 16384, PARTITION_BY (zone, hour), "
            f"OVERWRITE_OR_IGNORE, FILENAME_PATTERN 'copy{k}_{{i}}')",
            [str(folder)],
        ).fetchall()
    con.close()


TEN_MILLION = 10_000_000


def report(name: str, done, cores: int) -> float:
    """Print what was measured and the 10,000,000 projection; returns the per-core rate."""
    rate = done.requests / done.seconds
    print(
        f"{name}: measured {done.requests:,} requests in {done.seconds:.1f} s = "
        f"{rate:,.0f} requests/s on {cores} cores ({rate / cores:,.0f} per core); "
        f"{done.events:,} events; steps {done.stats['seconds']}; "
        f"fallback requests {done.stats['fallback_requests']:,}; "
        f"slots {done.stats['slots']} ({done.stats['slots_without_sql']} without SQL)"
    )
    if done.requests != TEN_MILLION:
        print(
            f"{name}: projected from the measured rate: {TEN_MILLION:,} requests on {cores} "
            f"cores ~ {_duration(TEN_MILLION / rate)}"
        )
    return rate / cores


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:,.1f} h" if seconds >= 3600 else f"{seconds / 60:,.1f} min"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200_000)
    parser.add_argument("--spark-requests", type=int)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--billion-cores", type=int, action="append")
    parser.add_argument("--skip-spark", action="store_true")
    parser.add_argument("--log", type=Path)
    parser.add_argument("--memory-limit", default="1GB")
    parser.add_argument(
        "--distinct", type=int, help="generate this many, copy them up to --requests"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="workbench-bench-"))
    wb, zone_id = demo_zone(ZONE, seed=1)
    log = args.log or work / "log"
    ensure_log(log, args.requests, args.distinct)
    done = replay_duckdb(
        wb, zone_id, log, work / "duckdb.parquet", threads=args.cores,
        memory_limit=args.memory_limit, temp_directory=work / "spill",
    )  # fmt: skip
    report("duckdb", done, args.cores)
    if args.skip_spark:
        return
    from workbench.replay import replay_spark, spark_session

    spark_n = args.spark_requests or min(args.requests, 20_000)
    spark_log = log
    if spark_n != args.requests:
        spark_log = work / "spark-log"
        ensure_log(spark_log, spark_n)
    started = time.perf_counter()
    session = spark_session(cores=args.cores)
    print(f"spark: session started in {time.perf_counter() - started:.1f} s (not counted)")
    done = replay_spark(wb, zone_id, spark_log, work / "spark.parquet", spark=session)
    per_core = report(f"spark local[{args.cores}]", done, args.cores)
    for cores in args.billion_cores or [100, 1000]:
        print(
            f"spark: projected from the measured per-core rate: {BILLION:,} requests on "
            f"{cores:,} Spark cores ~ {_duration(BILLION / (per_core * cores))}"
        )
    session.stop()


if __name__ == "__main__":
    main()
