"""The backends over a Parquet log: the replay and the outcomes, whichever engine runs the SQL.

A :class:`LogBackend` is a :class:`~._backend.Backend` whose checks run in a SQL
engine over the log's rows: :class:`~._duckdb_log.DuckDBBackend` (``duckdb``)
and :class:`~._spark.SparkBackend` (``spark``) subclass it and provide the SQL
primitives (:class:`~._log_replay.SqlEngine`); the algorithm is this class's,
the same on both (:func:`~._log_replay.run_replay`,
:func:`~._outcomes.run_outcomes`). :func:`replay_zone` is every engine's replay of a zone.

    >>> from workbench.replay import DuckDBBackend, connect
    >>> isinstance(DuckDBBackend(connect()), LogBackend), DuckDBBackend.name
    (True, 'duckdb')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..traffic.zone_plan import ZonePlan, zone_plan
from ._backend import Backend, EventsFile, LogSource
from ._log_replay import LogReplay, run_replay
from ._outcomes import Outcomes, run_outcomes

if TYPE_CHECKING:
    from ..core.platform import Workbench, Zone
    from ..core.security import Verdict


class LogBackend:
    """A replay over a log's rows in a SQL engine (the subclass's primitives)."""

    #: The backend's name, which is also its SQL dialect.
    name = ""
    dialect = ""

    def replay(self, plan: ZonePlan, source: LogSource, sink: EventsFile) -> LogReplay:
        """The log rows of ``source`` through ``plan``; the events go to ``sink``'s file."""
        return run_replay(
            self,
            plan,
            zone_id=sink.zone_id,
            zone_name=source.zone_name,
            zone_plan=source.zone_plan,
            source=source.table,
            out=sink.out,
        )

    def outcomes(
        self,
        plans: Sequence[ZonePlan],
        outcome: Callable[[list[Verdict]], tuple[str, ...]],
        names: Sequence[str],
        source: LogSource,
        out: Path,
        *,
        keep: Sequence[str] = ("ray_id", "label"),
        memory_limit: str = "1GB",
        threads: int = 2,
    ) -> Outcomes:
        """Each row of ``source`` through several ``plans`` in one pass, its ``outcome`` (named
        ``names``) and ``keep`` columns written to ``out`` in the log's order."""
        return run_outcomes(
            self,
            plans,
            outcome,
            names,
            zone_name=source.zone_name,
            zone_plan=source.zone_plan,
            source=source.table,
            out=out,
            keep=keep,
            memory_limit=memory_limit,
            threads=threads,
        )

    # -- the SQL primitives (see _log_replay.SqlEngine), the subclass's -----------------
    def quote(self, name: str) -> str:
        raise NotImplementedError

    def fetch(self, sql: str) -> list[dict[str, Any]]:
        raise NotImplementedError

    def register(
        self, name: str, rows: list[tuple[Any, ...]], schema: tuple[tuple[str, str], ...]
    ) -> None:
        raise NotImplementedError

    def write_events(self, sql: str, target: Path) -> None:
        raise NotImplementedError

    def materialize(self, name: str, sql: str) -> str | None:
        raise NotImplementedError

    def spill(self, name: str, sql: str) -> str | None:
        raise NotImplementedError

    def release(self, name: str) -> None:
        raise NotImplementedError


def replay_zone(
    backend: Backend[LogSource, EventsFile, LogReplay], wb: Workbench, zone: Zone,
    rows: str, out: str | Path, systems: Any = "auto", plan: ZonePlan | None = None,
) -> LogReplay:  # fmt: skip
    """A log's ``rows`` (the engine's table of them) replayed as ``zone``'s requests into ``out``,
    through ``plan`` or the zone's own."""
    return backend.replay(
        plan or zone_plan(wb, zone.id, systems),
        LogSource(rows, zone.name, zone.plan),
        EventsFile(Path(out), zone.id),
    )
