"""The Spark engine: the same replay as Spark SQL through pyspark, locally or on a cluster.

pyspark is an optional extra (``pip install 'workbench[spark]'``) and is
imported only when this engine runs; :func:`require_pyspark` says how to
install it. The session runs in local mode on the machine's Java 17 unless a
``master`` URL names a cluster. The log is read as Hive-partitioned Parquet,
the checks run as Spark SQL (:mod:`workbench.rules_language.dialects`), and
the events are written as one Parquet file with the event log's columns and
order (``datetime`` as a timestamp without time zone, as DuckDB writes it).
Spark, like DuckDB, computes each request's key over the log with its shared
decoded columns (:func:`~workbench.replay._checks.compile_checks`).

    >>> SPARK_INSTALL.split(":")[0]
    'The Spark engine needs pyspark'
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from ..logs.store import EVENT_ORDER
from ..rules_language.dialects import to_dialect
from ..traffic.zone_plan import ZonePlan
from ._log_backend import LogBackend, replay_zone
from ._log_replay import LogReplay
from ._parquet_logs import context_columns

SPARK_INSTALL = (
    "The Spark engine needs pyspark: pip install 'workbench[spark]' (pyspark 4, with Java 17)"
)


class SparkMissing(RuntimeError):
    """pyspark is not installed."""


def require_pyspark() -> Any:
    """The pyspark module, or :class:`SparkMissing` saying how to install it."""
    # By name: pyspark is the optional ``spark`` extra, not a dependency of the package.
    try:
        return importlib.import_module("pyspark")
    except ImportError:
        raise SparkMissing(SPARK_INSTALL) from None


def spark_session(master: str | None = None, *, cores: int = 2) -> Any:
    """A Spark session: ``master`` (a cluster URL), or local mode on ``cores`` cores."""
    require_pyspark()
    session = importlib.import_module("pyspark.sql").SparkSession
    builder = (
        session.builder.master(master or f"local[{cores}]")
        .appName("workbench-replay")
        .config("spark.sql.session.timeZone", "UTC")
        # Out-of-range element lookups read as NULL, as in DuckDB (the SQL relies on it).
        .config("spark.sql.ansi.enabled", "false")
        # Partition values ("2026-01-01-00") stay text.
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(max(2, cores * 2)))
        .config("spark.ui.enabled", "false")
        # Small splits (a row group or two): the checks cost far more per byte than reading.
        .config("spark.sql.files.maxPartitionBytes", "2m")
        .config("spark.sql.files.openCostInBytes", "1m")
        # The checks compile to very large expressions: generated Java for them exceeds the
        # JVM's method size and takes minutes to fail, so Spark interprets them instead.
        # With the shared columns (compile_checks) code generation works but was slower still:
        # the time goes to Java regexes and lambdas (url_decode), which it does not compile.
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
        .config("spark.sql.parquet.inferTimestampNTZ.enabled", "true")
        # Progress bars would reach a notebook's saved outputs and change at every run.
        .config("spark.ui.showConsoleProgress", "false")
        # The replay keeps no tables: without this Spark leaves an empty spark-warehouse/
        # (and metastore_db/) in the working directory, a notebook's folder.
        .config("spark.sql.warehouse.dir", str(SPARK_WAREHOUSE))
        .config("spark.sql.catalogImplementation", "in-memory")
    )
    return _start_quietly(builder)


#: Spark's warehouse folder, out of the working directory (the replay writes no tables there).
SPARK_WAREHOUSE = Path(tempfile.gettempdir()) / "workbench-spark-warehouse"
#: Where the JVM's own messages go (start-up notices, warnings): not the terminal or a notebook.
SPARK_LOG = Path(tempfile.gettempdir()) / "workbench-spark.log"


def _start_quietly(builder: Any) -> Any:
    """``builder.getOrCreate()`` with the JVM's standard error sent to :data:`SPARK_LOG`.

    The JVM inherits file descriptor 2 when it starts and writes timestamped notices there
    for its whole life; in a notebook they would become outputs that differ at every run.
    Errors still reach Python as exceptions through py4j.
    """
    saved = os.dup(2)
    try:
        with open(SPARK_LOG, "ab") as log:
            os.dup2(log.fileno(), 2)
        with warnings.catch_warnings():
            # pyspark 4 warns that it does not yet claim pandas 3; the engine needs no pandas API.
            warnings.simplefilter("ignore", FutureWarning)
            session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        return session
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class SparkBackend(LogBackend):
    """The replay over a log in a Spark session (the ``spark`` backend)."""

    name = dialect = "spark"

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    def quote(self, name: str) -> str:
        return _quote(name)

    def fetch(self, sql: str) -> list[dict[str, Any]]:
        return [row.asDict(recursive=True) for row in self.spark.sql(sql).collect()]

    def register(
        self, name: str, rows: list[tuple[Any, ...]], schema: tuple[tuple[str, str], ...]
    ) -> None:
        ddl = ", ".join(f"{c} {t}" for c, t in schema)
        self.spark.createDataFrame(rows, ddl).createOrReplaceTempView(name)

    def materialize(self, name: str, sql: str) -> str | None:
        # Catalyst plans the checks' huge expression once (tens of seconds), not once per pass.
        level = importlib.import_module("pyspark").StorageLevel.MEMORY_AND_DISK
        # A replay run again in the same session (a new backend each time) replaces the
        # view: release the old one's cache, or every run would keep its keys table.
        catalog = self.spark.catalog
        if catalog.tableExists(name) and catalog.isCached(name):
            catalog.uncacheTable(name)
        self.spark.sql(sql).persist(level).createOrReplaceTempView(name)
        return name

    def spill(self, name: str, sql: str) -> str | None:
        return None  # the keys are materialized (cached) instead

    def release(self, name: str) -> None:
        return None

    def write_events(self, sql: str, target: Path) -> None:
        frame = self.spark.sql(f"SELECT * FROM ({sql}) ORDER BY {EVENT_ORDER}")
        staging = Path(tempfile.mkdtemp(prefix="workbench-spark-events-"))
        try:
            # One sorted file: the sort runs in parallel, the final merge keeps its order.
            frame.coalesce(1).write.mode("overwrite").parquet(str(staging / "out"))
            parts = sorted((staging / "out").glob("part-*.parquet"))
            if len(parts) != 1:
                raise RuntimeError(f"Spark wrote {len(parts)} event files, expected 1")
            target.unlink(missing_ok=True)
            shutil.move(str(parts[0]), target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def register_log(
    spark: Any, log: str | Path, zone_name: str, zone_plan_name: str, quote: Any
) -> str:
    """Register the zone's rows of the log as view ``wb_log``; returns its name."""
    # Only the zone's partition folder is read; basePath keeps zone and hour as columns.
    partition = Path(log) / f"zone={zone_name}"
    frame = spark.read.option("basePath", str(log)).parquet(str(partition))
    frame.createOrReplaceTempView("wb_log_all")
    extra = ", ".join(
        f"{to_dialect(lit, 'spark')} AS {quote(name)}"
        for name, lit in context_columns(zone_name, zone_plan_name)
    )
    zone = zone_name.replace("'", "''")
    spark.sql(f"SELECT *, {extra} FROM wb_log_all WHERE zone = '{zone}'").createOrReplaceTempView(
        "wb_log"
    )
    return "wb_log"


def replay_spark(
    wb: Any,
    zone_id: str,
    log: str | Path,
    out: str | Path,
    *,
    systems: Any = "auto",
    master: str | None = None,
    cores: int = 2,
    spark: Any = None,
    log_zone: str | None = None,
    plan: ZonePlan | None = None,
) -> LogReplay:
    """Replay the log's requests of the zone into ``out`` on Spark (see the module docstring).

    ``plan`` replaces the zone's own plan (the what-if hook, as in the DuckDB engine).
    """
    zone = wb.zone(zone_id)
    session = spark or spark_session(master, cores=cores)
    rows = register_log(session, log, log_zone or zone.name, zone.plan, _quote)
    return replay_zone(SparkBackend(session), wb, zone, rows, out, systems, plan)
