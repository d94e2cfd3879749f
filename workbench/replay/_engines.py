"""The engines over a Parquet log by name: a log checked, an engine opened.

:func:`open_engine`, the one place an engine is chosen by name, gives it (its SQL
backend and the zone's rows of the log) to the terminal's replay
(:mod:`workbench.replay.run`) and the tuning package's what-if
(:mod:`workbench.tuning.whatif_engine`); :func:`check_log` says whether a log holds
a zone's requests.

    >>> import tempfile
    >>> check_log(tempfile.mkdtemp(), "a.example")
    Traceback (most recent call last):
    ...
    workbench.replay._engines.EngineError: --zone: the log holds no requests of 'a.example' (zones: none)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ._backend import LogSource
from ._log_backend import LogBackend
from ._parquet_logs import log_zones

#: The engines over a Parquet log.
ENGINES = ("duckdb", "spark")


class EngineError(RuntimeError):
    """A replay that cannot run: bad log, unknown zone, engine missing."""


def check_log(log: str | Path, zone: str) -> Path:
    """The log's folder, checked to hold ``zone``'s requests; raises :class:`EngineError`."""
    folder = Path(log)
    if not folder.is_dir():
        raise EngineError(f"LOG: {folder} is not a folder")
    zones = log_zones(folder)
    if zone not in zones:
        known = ", ".join(zones) or "none"
        raise EngineError(f"--zone: the log holds no requests of {zone!r} (zones: {known})")
    return folder


@contextmanager
def open_engine(
    engine: str,
    log: str | Path,
    log_zone: str,
    zone_plan: str,
    *,
    master: str | None = None,
    cores: int = 2,
    memory_limit: str = "1GB",
    spark: Any = None,
    sliced: bool = False,
) -> Iterator[tuple[LogBackend, LogSource]]:
    """``(backend, source)``: ``engine``'s backend over a log and ``log_zone``'s rows of ``log``
    (with the context columns of a zone on ``zone_plan``), for a pass of one's own.

    DuckDB's connection closes on leaving (``sliced``: a replay's events sorted in time
    slices, as :func:`~._duckdb_log.replay_duckdb` sorts them); a Spark session (``spark``,
    or one started on ``master`` / ``cores``) stays, as :func:`~._spark.replay_spark` leaves
    it. Raises :class:`EngineError` for ``cores`` below 1, an unknown engine or no pyspark.
    """
    if cores < 1:
        raise EngineError(f"--cores must be >= 1, got {cores}")
    if engine == "duckdb":
        from ._duckdb_log import DuckDBBackend, source_sql
        from ._parquet_logs import connect

        con = connect(memory_limit=memory_limit, threads=cores)
        try:
            yield (
                DuckDBBackend(con, log=log if sliced else None, zone=log_zone),
                LogSource(source_sql(log, log_zone, zone_plan), log_zone, zone_plan),
            )
        finally:
            con.close()
        return
    if engine == "spark":
        from ._spark import SparkBackend, SparkMissing, register_log, spark_session

        try:
            session = spark or spark_session(master, cores=cores)
        except SparkMissing as exc:
            raise EngineError(str(exc)) from None
        backend = SparkBackend(session)
        table = register_log(session, log, log_zone, zone_plan, backend.quote)
        yield backend, LogSource(table, log_zone, zone_plan)
        return
    raise EngineError(f"--engine must be duckdb or spark, got {engine!r}")
