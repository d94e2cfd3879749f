"""One entry point for a replay over a log, whichever the engine: the CLI's ``replay``.

The zone comes from saved API responses (``config``, as ``workbench import``
reads them) or is a demo: an Enterprise zone named like the log's zone, with
the old WAF on (as a new paid zone has it) and both managed rulesets deployed
(validation mode). ``systems`` chooses what runs, as in the pipeline; it is
:func:`open_engine` gives the engine itself (its SQL backend and the zone's rows
of the log) to a caller that runs its own pass, as the tuning package's
what-if does (:mod:`workbench.tuning.whatif_engine`).

    >>> wb, zone_id = demo_zone("a.example")
    >>> wb.zone(zone_id).name
    'a.example'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..core.platform import Workbench
from .parquet_logs import log_zones
from .replay import Backend, LogReplay


class EngineError(RuntimeError):
    """A replay that cannot run: bad log, unknown zone, engine missing."""


def demo_zone(name: str, seed: int = 0) -> tuple[Workbench, str]:
    """A Workbench with one Enterprise zone ``name``: old WAF on, both managed rulesets executed."""
    from ..rulesets import CLOUDFLARE_MANAGED_ID, MANAGED_PHASE, OWASP_ID

    wb = Workbench(seed=seed)
    zone = wb.create_zone(name, plan="enterprise")
    wb.rulesets.put_entrypoint(
        zone.id,
        MANAGED_PHASE,
        {
            "rules": [
                {"action": "execute", "expression": "true", "action_parameters": {"id": i}}
                for i in (CLOUDFLARE_MANAGED_ID, OWASP_ID)
            ]
        },
    )
    return wb, zone.id


def replay_log(
    log: str | Path,
    zone: str,
    *,
    engine: str = "duckdb",
    out: str | Path,
    config: str | Path | None = None,
    systems: Any = "auto",
    master: str | None = None,
    cores: int = 2,
    memory_limit: str = "1GB",
    seed: int = 0,
) -> LogReplay:
    """Replay ``zone``'s requests of ``log`` on ``engine``; raises :class:`EngineError`."""
    folder = check_log(log, zone)
    if config is not None:
        from ..zone_import import ZoneImportError, import_zone

        wb = Workbench(seed=seed)
        try:
            zone_id = import_zone(wb, config).zone.id
        except ZoneImportError as exc:
            raise EngineError(f"--config: {exc}") from None
    else:
        wb, zone_id = demo_zone(zone, seed)
    if engine == "duckdb":
        from .duckdb_engine import replay_duckdb

        return replay_duckdb(
            wb, zone_id, folder, out, systems=systems, threads=cores,
            memory_limit=memory_limit, log_zone=zone,
        )  # fmt: skip
    if engine == "spark":
        from .spark_engine import SparkMissing, replay_spark

        try:
            return replay_spark(
                wb, zone_id, folder, out, systems=systems, master=master, cores=cores, log_zone=zone
            )
        except SparkMissing as exc:
            raise EngineError(str(exc)) from None
    raise EngineError(f"--engine must be duckdb or spark, got {engine!r}")


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
) -> Iterator[tuple[Backend, str]]:
    """``(backend, source)``: ``engine``'s SQL backend and the SQL of ``log_zone``'s rows of
    ``log`` (with the context columns of a zone on ``zone_plan``), for a pass of one's own.

    DuckDB's connection closes on leaving; a Spark session (``spark``, or one started on
    ``master`` / ``cores``) stays, as :func:`~.spark_engine.replay_spark` leaves it.
    Raises :class:`EngineError` for an unknown engine or a missing pyspark.
    """
    if cores < 1:
        raise EngineError(f"--cores must be >= 1, got {cores}")
    if engine == "duckdb":
        from .duckdb_engine import DuckDBBackend, source_sql
        from .parquet_logs import connect

        con = connect(memory_limit=memory_limit, threads=cores)
        try:
            yield DuckDBBackend(con), source_sql(log, log_zone, zone_plan)
        finally:
            con.close()
        return
    if engine == "spark":
        from .spark_engine import SparkBackend, SparkMissing, register_log, spark_session

        try:
            session = spark or spark_session(master, cores=cores)
        except SparkMissing as exc:
            raise EngineError(str(exc)) from None
        backend = SparkBackend(session)
        yield backend, register_log(session, log, log_zone, zone_plan, backend.quote)
        return
    raise EngineError(f"--engine must be duckdb or spark, got {engine!r}")
