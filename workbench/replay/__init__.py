"""Replay: every way requests are run through a zone's plan, behind one protocol.

A replay gives each request the *key* of its checks' matches (one per slot of the
zone's :class:`~workbench.traffic.zone_plan.ZonePlan`), decides each distinct key
once with the plan's own ``decide``, and joins the verdict back to its requests.
Every way of doing it is a :class:`Backend` (see :mod:`._backend`); they differ
only in where the checks run:

* ``request``: per request, in Python (:class:`RequestBackend`);
* ``table``: DuckDB over an in-memory table of each chunk (:class:`TableBackend`);
* ``duckdb``: DuckDB over a partitioned Parquet request log (:class:`DuckDBBackend`);
* ``spark``: Spark over the same log (:class:`SparkBackend`).

The :class:`Pipeline` (a zone's replays, events into an event log) runs the two
in-memory backends; :func:`replay_duckdb`, :func:`replay_spark` and
:func:`open_engine` the two log backends (the CLI's ``replay`` and the what-if on
an engine). The SQL of the checks comes from the package's one optimiser entry
point (``_checks.compile_checks``); nothing outside the package reads it.
:mod:`workbench.replay.run` builds a Workbench for the terminal's ``replay``
command (this interface does not import it: the platform's services replay
through this one).

    >>> import tempfile
    >>> from workbench.traffic.request import Request
    >>> folder = tempfile.mkdtemp()
    >>> write_log([Request(url="https://a.example/x")], folder)
    1
    >>> log_zones(folder), count(folder), sorted(BACKENDS), ENGINES
    (['a.example'], 1, ['duckdb', 'request', 'spark', 'table'], ('duckdb', 'spark'))
"""

from ._backend import Backend, Chunk, ChunkSink, EventsFile, LogSource
from ._duckdb_log import DuckDBBackend, replay_duckdb, source_sql, time_slices
from ._engines import ENGINES, EngineError, check_log, open_engine
from ._evaluate import Context
from ._log_backend import LogBackend
from ._log_replay import LogReplay
from ._memory import RequestBackend, TableBackend
from ._outcomes import Outcomes
from ._parquet_logs import (
    CONTEXT_FIELDS,
    EVENT_COLUMNS,
    LOG_FIELDS,
    connect,
    count,
    log_zones,
    request_from_json,
    scan,
    write_log,
)
from ._pipeline import Pipeline, Replay, RequestResult
from ._spark import (
    SPARK_INSTALL,
    SparkBackend,
    SparkMissing,
    register_log,
    replay_spark,
    spark_session,
)
from ._table import build_table

#: Every backend by name: the in-memory ones take no argument, the log ones their engine
#: (a DuckDB connection, a Spark session).
BACKENDS: dict[str, type[RequestBackend | TableBackend | LogBackend]] = {
    "request": RequestBackend,
    "table": TableBackend,
    "duckdb": DuckDBBackend,
    "spark": SparkBackend,
}

__all__ = [
    "BACKENDS",
    "CONTEXT_FIELDS",
    "ENGINES",
    "EVENT_COLUMNS",
    "LOG_FIELDS",
    "SPARK_INSTALL",
    "Backend",
    "Chunk",
    "ChunkSink",
    "Context",
    "DuckDBBackend",
    "EngineError",
    "EventsFile",
    "LogBackend",
    "LogReplay",
    "LogSource",
    "Outcomes",
    "Pipeline",
    "Replay",
    "RequestBackend",
    "RequestResult",
    "SparkBackend",
    "SparkMissing",
    "TableBackend",
    "build_table",
    "check_log",
    "connect",
    "count",
    "log_zones",
    "open_engine",
    "register_log",
    "replay_duckdb",
    "replay_spark",
    "request_from_json",
    "scan",
    "source_sql",
    "spark_session",
    "time_slices",
    "write_log",
]
