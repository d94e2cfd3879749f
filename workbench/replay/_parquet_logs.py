"""Request logs as Parquet, partitioned by zone and hour, and DuckDB set up to read them.

A log is a folder ``zone=<host>/hour=<YYYY-MM-DD-HH>/chunk<k>_<i>.parquet``
(Hive-style, so DuckDB and Spark read the partition columns from the paths).
Each row is one request: the request table's columns (one per field, named
and typed as :func:`workbench.replay._table.build_table` makes them), plus

* ``request_id`` (0, 1, ... in the order written), ``ray_id`` and
  ``datetime`` (the request's time, a UTC ``TIMESTAMP``), ``label``;
* the events' request columns, ready to copy into each event:
  ``client_ip``, ``country``, ``host``, ``path``, ``query``, ``method``,
  ``user_agent`` (as :func:`workbench.traffic.events.request_columns` writes them);
* ``crs_matched``: what the CRS programs matched in the request (JSON, NULL for
  nothing; :func:`workbench.rulesets.crs.explain.stored_matches`), so a replay
  over the log says what its OWASP events matched as the pipeline does;
* ``raw``: NULL, or for a request holding bytes that are not UTF-8 (which a
  text column cannot hold; its field columns are then NULL) the request itself
  as JSON, so that an engine evaluates that row per request.

Fields that depend on the replaying zone (``cf.zone.name``, ``cf.zone.plan``)
or are not simulated (``cf.waf.score``...) are not stored: :func:`context_columns`
gives them as constants at replay time.

Ray ids and times are drawn as the pipeline draws them (a ``random.Random(seed)``
of 64-bit ids; ``start_ms`` plus ``step_ms`` per request unless the request has
its own time), so a log written with the Workbench's clock and a seed replays
into exactly the events :meth:`~workbench.replay._pipeline.Pipeline.replay`
gives with the same seed.

    >>> import tempfile
    >>> from workbench.traffic.request import Request
    >>> folder = tempfile.mkdtemp()
    >>> write_log([Request(url="https://a.example/x"), Request(url="https://a.example/y")],
    ...           folder, seed=1, start_ms=0)
    2
    >>> con = connect(memory_limit="500MB", threads=2)
    >>> con.execute(f"SELECT path, hour FROM {scan(folder, 'a.example')} ORDER BY request_id").fetchall()
    [('/x', '1970-01-01-00'), ('/y', '1970-01-01-00')]
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..rules_language import MANAGED, get_scheme
from ..rules_language.sql_fragments import duckdb_type, ident, sql_string
from ..rulesets.crs.explain import stored_matches
from ..traffic.events import request_columns
from ..traffic.request import CF_DEFAULTS, FIELD_NAMES, MANAGED_FIELD_NAMES, Request, epoch_ms
from ._table import build_table

#: Fields whose value comes from the replaying zone or is a constant: not stored in a log.
CONTEXT_FIELDS: tuple[str, ...] = ("cf.zone.name", "cf.zone.plan", *sorted(CF_DEFAULTS))
#: Fields stored in a log, one column each.
# The CRS programs' results are stored too: a replay on DuckDB or Spark reads them as columns.
LOG_FIELDS: tuple[str, ...] = (
    *(f for f in FIELD_NAMES if f not in CONTEXT_FIELDS),
    *MANAGED_FIELD_NAMES,
)
#: The event columns a log carries for each request.
EVENT_COLUMNS = ("client_ip", "country", "host", "path", "query", "method", "user_agent")

_CHUNK = 50_000


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _raw_json(req: Request) -> str:
    """The request as JSON (lone surrogates, from bytes that are not UTF-8, escaped as ``\\udcNN``)."""
    return json.dumps(
        {
            "method": req.method,
            "url": req.url,
            "headers": req.headers,
            "body": req.body,
            "client_ip": req.client_ip,
            "country": req.country,
            "asn": req.asn,
            "tls_version": req.tls_version,
            "http_version": req.http_version,
            "label": req.label,
        }
    )


def request_from_json(text: str) -> Request:
    """The request a log's ``raw`` column holds."""
    data = json.loads(text)
    data["headers"] = [tuple(h) for h in data["headers"]]
    return Request(**data)


def write_log(
    requests: Iterable[Any],
    folder: str | Path,
    *,
    zone: str | None = None,
    seed: int = 0,
    start_ms: int = 0,
    step_ms: int = 10,
    chunk_size: int = _CHUNK,
    first_id: int = 0,
) -> int:
    """Append ``requests`` (Requests or raw requests) to the log in ``folder``; returns how many.

    ``zone`` names the partition (default: each request's host). ``first_id`` numbers the
    first request (give the count already written when appending to a log).
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    if step_ms < 0:
        raise ValueError(f"step_ms must be >= 0, got {step_ms}")
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    rays = random.Random(seed)
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false").fetchall()
    written, clock = 0, start_ms
    for chunk in _chunks(requests, chunk_size):
        reqs = [Request.from_raw(r) for r in chunk]
        n = len(reqs)
        ticks = (clock + step_ms * np.arange(1, n + 1, dtype=np.int64)).tolist()
        clock += step_ms * n
        times = [
            t if r.timestamp is None else epoch_ms(r.timestamp)
            for t, r in zip(ticks, reqs, strict=True)
        ]
        ray_ids = [f"{rays.getrandbits(64):016x}" for _ in range(n)]
        bad = build_table(con, "_wb_log_chunk", reqs, LOG_FIELDS, ray_ids=ray_ids, times_ms=times)
        columns = request_columns(reqs, ray_ids, times)
        extra = pd.DataFrame(
            {
                "idx": np.arange(n, dtype=np.int64),
                "request_id": np.arange(first_id + written, first_id + written + n, dtype=np.int64),
                **{c: columns[c] for c in ("ray_id", "datetime", "label", *EVENT_COLUMNS)},
                "zone": [zone or r.host for r in reqs],
                "raw": np.array([None] * n, dtype=object),
                # Read after build_table: the CRS fields' runs are kept on the requests then.
                "crs_matched": np.array([stored_matches(r) for r in reqs], dtype=object),
            }
        )
        for i in bad:
            extra.at[i, "raw"] = _raw_json(reqs[i])
        con.register("_wb_log_extra", extra)
        fields = ", ".join(f"t.{ident(f)}" for f in LOG_FIELDS)
        out = str(target).replace("'", "''")
        con.execute(
            f"COPY (SELECT e.request_id, e.ray_id, e.datetime::TIMESTAMP AS datetime, e.label, "
            f"{', '.join('e.' + c for c in EVENT_COLUMNS)}, e.crs_matched::VARCHAR AS crs_matched, e.raw, {fields}, e.zone, "
            "strftime(e.datetime::TIMESTAMP, '%Y-%m-%d-%H') AS hour "
            "FROM _wb_log_extra e JOIN _wb_log_chunk t USING (idx) ORDER BY e.request_id) "
            # Row groups of 16,384 requests: the units DuckDB and Spark read in parallel.
            f"TO '{out}' (FORMAT PARQUET, ROW_GROUP_SIZE 16384, PARTITION_BY (zone, hour), OVERWRITE_OR_IGNORE, "
            f"FILENAME_PATTERN 'chunk{first_id + written}_{{i}}')"
        ).fetchall()
        con.unregister("_wb_log_extra")
        written += n
    con.close()
    return written


def scan(folder: str | Path, zone: str | None = None) -> str:
    """A DuckDB table expression over the log's Parquet files, read in parallel (one zone's)."""
    glob = sql_string(str(Path(folder) / "zone=*" / "hour=*" / "*.parquet"))
    source = f"read_parquet({glob}, hive_partitioning = true, hive_types_autocast = false)"
    if zone is None:
        return f"(SELECT * FROM {source})"
    return f"(SELECT * FROM {source} WHERE zone = {sql_string(zone)})"


def context_columns(zone_name: str, zone_plan: str) -> list[tuple[str, str]]:
    """``(column, DuckDB literal)`` for each field a log does not store (:data:`CONTEXT_FIELDS`)."""
    scheme = get_scheme(MANAGED)
    out = []
    for name in CONTEXT_FIELDS:
        t = scheme.field_type(name)
        assert t is not None
        value: Any = {"cf.zone.name": zone_name, "cf.zone.plan": zone_plan}.get(name)
        value = CF_DEFAULTS.get(name, value)
        literal = (
            "NULL"
            if value is None
            else (str(value) if isinstance(value, int) else sql_string(value))
        )
        out.append((name, f"CAST({literal} AS {duckdb_type(t)})"))
    return out


def connect(
    *,
    memory_limit: str = "1GB",
    threads: int = 2,
    temp_directory: str | Path | None = None,
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection that reads logs in parallel on ``threads`` and spills past ``memory_limit``.

    Insertion order is not kept (so scans and aggregations stream in parallel); the
    replay orders what it writes itself.
    """
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    con = duckdb.connect()
    spill = (
        Path(temp_directory) if temp_directory else Path(tempfile.gettempdir()) / "workbench-spill"
    )
    spill.mkdir(parents=True, exist_ok=True)
    for setting, value in (
        ("memory_limit", memory_limit),
        ("threads", threads),
        ("temp_directory", str(spill)),
        ("preserve_insertion_order", False),
        ("enable_progress_bar", False),
    ):
        con.execute(
            f"SET {setting} = {sql_string(str(value)) if isinstance(value, str) else value}"
        ).fetchall()
    return con


def log_zones(folder: str | Path) -> list[str]:
    """The zones a log holds (from its partition folders)."""
    return sorted(p.name.split("=", 1)[1] for p in Path(folder).glob("zone=*") if p.is_dir())


def count(folder: str | Path, zone: str | None = None, con: Any = None) -> int:
    """How many requests the log holds (for ``zone``)."""
    con = con or connect()
    return int(con.execute(f"SELECT count(*) FROM {scan(folder, zone)}").fetchall()[0][0])


__all__: Sequence[str] = (
    "CONTEXT_FIELDS",
    "EVENT_COLUMNS",
    "LOG_FIELDS",
    "connect",
    "context_columns",
    "count",
    "log_zones",
    "request_from_json",
    "scan",
    "write_log",
)
