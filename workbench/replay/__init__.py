"""Replay: every way requests are run through a zone's plan, behind one interface.

A replay gives each request the vector of its checks' matches (one per *slot* of
the zone's :class:`~workbench.traffic.zone_plan.ZonePlan`), decides each distinct
vector once with the plan's own ``decide``, and joins the verdict back to its
requests. Where the checks run is the only difference between the ways:

* per request, in Python (``Evaluator.per_request``);
* DuckDB over an in-memory table of a chunk of requests (``Evaluator.whole_table``);
* DuckDB over a partitioned Parquet request log (:func:`replay_duckdb`);
* Spark over the same log (:func:`replay_spark`).

The SQL of the checks (shared decoded columns, literal prefilters, loose
regexes, guards, header-list gates) is compiled by private modules of this
package; nothing outside it reads them. :mod:`workbench.replay.run` builds a
Workbench for the terminal's ``replay`` command (this interface does not import
it: the platform's services replay through this one).

    >>> import tempfile
    >>> from workbench.traffic.request import Request
    >>> folder = tempfile.mkdtemp()
    >>> write_log([Request(url="https://a.example/x")], folder)
    1
    >>> log_zones(folder), count(folder), ENGINES
    (['a.example'], 1, ('duckdb', 'spark'))
"""

from ._duckdb_log import DuckDBBackend, replay_duckdb, source_sql, time_slices
from ._engines import ENGINES, EngineError, check_log, open_engine
from ._evaluate import Context, Evaluator, Staged
from ._log_replay import Backend, LogReplay, Outcomes, run_outcomes, run_replay
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

__all__ = [
    "CONTEXT_FIELDS",
    "ENGINES",
    "EVENT_COLUMNS",
    "LOG_FIELDS",
    "SPARK_INSTALL",
    "Backend",
    "Context",
    "DuckDBBackend",
    "EngineError",
    "Evaluator",
    "LogReplay",
    "Outcomes",
    "Pipeline",
    "Replay",
    "RequestResult",
    "SparkBackend",
    "SparkMissing",
    "Staged",
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
    "run_outcomes",
    "run_replay",
    "scan",
    "source_sql",
    "spark_session",
    "time_slices",
    "write_log",
]
