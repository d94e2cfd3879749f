"""The one protocol every way of replaying implements, and what it reads and writes.

A :class:`Backend` replays a source of requests through a zone's plan into a
sink: it gives each request the key of its checks' matches (compiled by
:func:`~._checks.compile_checks`, or evaluated per request), decides each
distinct key once (:class:`~._decide.Decisions`) and hands each request its
verdict. The backends differ in where the checks run, and so in what they read:

========== ============================ =============================== ==================
backend    checks run                   source                          sink
========== ============================ =============================== ==================
request    Python, per request          :class:`Chunk` s (in memory)    :class:`ChunkSink`
table      DuckDB, a chunk's table      :class:`Chunk` s (in memory)    :class:`ChunkSink`
duckdb     DuckDB, a Parquet log        :class:`LogSource`              :class:`EventsFile`
spark      Spark, a Parquet log         :class:`LogSource`              :class:`EventsFile`
========== ============================ =============================== ==================

In memory, the requests come back to Python (the pipeline makes their event rows,
:mod:`workbench.traffic.events`); over a log, only the distinct keys do, and the
engine writes the events itself. So the protocol is generic in its source, sink
and report: the pipeline holds a ``Backend[Iterable[Chunk], ChunkSink, dict]``,
the log replay a ``Backend[LogSource, EventsFile, LogReplay]``.

    >>> from workbench.replay import BACKENDS
    >>> sorted(BACKENDS)
    ['duckdb', 'request', 'spark', 'table']
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import numpy as np

    from ..core.security import Verdict
    from ..traffic.parts import Parts
    from ..traffic.request import Request
    from ..traffic.zone_plan import ZonePlan
    from ._evaluate import Context

SourceT = TypeVar("SourceT", contravariant=True)
SinkT = TypeVar("SinkT", contravariant=True)
ReportT = TypeVar("ReportT", covariant=True)


class Backend(Protocol[SourceT, SinkT, ReportT]):
    """One way of replaying requests through a plan; see the module docstring."""

    #: ``request``, ``table``, ``duckdb`` or ``spark``.
    name: str

    def replay(self, plan: ZonePlan, source: SourceT, sink: SinkT) -> ReportT:
        """Replay the requests of ``source`` through ``plan``; their verdicts go to ``sink``."""
        ...


@dataclass
class Chunk:
    """Requests in memory, staged by the caller: what they are, their context, their parts."""

    requests: list[Request]
    ctx: Context
    #: The requests' parts, listed once (the table and the event rows read them).
    parts: Parts


class ChunkSink(Protocol):
    """Where an in-memory backend hands each decided chunk, in chunk order."""

    def emit(self, chunk: Chunk, ids: np.ndarray, verdicts: list[Verdict]) -> None:
        """``chunk``'s verdicts: request ``i``'s is ``verdicts[ids[i]]``. The list grows
        across chunks (a new list: the verdicts so far were dropped)."""
        ...

    def all_staged(self) -> None:
        """Every chunk is staged; what remains is checking and emitting the last ones."""
        ...


@dataclass
class LogSource:
    """A zone's requests in a Parquet log, as the engine's table expression."""

    #: The zone's rows, with the context columns (:func:`~._parquet_logs.context_columns`).
    table: str
    zone_name: str
    zone_plan: str


@dataclass
class EventsFile:
    """Where a log backend writes the events: one Parquet file in the event log's order."""

    out: Path
    zone_id: str
