"""A zone's replay over a Parquet request log, the same on every engine.

The engine (DuckDB or Spark, a :class:`SqlEngine`) only runs SQL; every verdict
comes from the zone's own ``decide`` in Python, so both engines give the same
events by construction:

1. each distinct check expression of the zone (a *slot* of its
   :class:`~workbench.traffic.zone_plan.ZonePlan`) is compiled once to the
   engine's dialect over the log's typed table, with its guards
   (:func:`~._checks.compile_checks`, the optimiser's one entry point);
2. the engine computes each request's *key*, one character per slot (``1``
   matched, ``0`` not, ``?`` no SQL in this dialect), and counts requests per
   distinct key. Requests the SQL cannot settle (a ``?``, a failed guard, a row
   held as ``raw`` JSON) come back to Python and are evaluated per request;
3. ``decide`` runs once per distinct key; its events become a small table
   (one row per event of each key's verdict);
4. the engine joins the log with that table and writes the events, with the
   event log's columns (:mod:`workbench.logs.schema`), as Parquet.

    >>> from workbench.core.security import Check, SecurityEvent, StaticPlan, Verdict
    >>> from workbench.traffic.zone_plan import ZonePlan
    >>> plan = ZonePlan(StaticPlan([Check("r1", 'http.request.uri.path contains "/admin"')],
    ...     lambda m: Verdict([SecurityEvent("firewallRules", "block", "r1", None, "")], "block")
    ...     if m("r1") else Verdict([])))
    >>> compiled = CompiledPlan(plan, "duckdb")
    >>> compiled.query.key()[:40]
    'CONCAT(CASE WHEN contains(coalesce(CAST('
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..logs.schema import COLUMNS
from ..rules_language import MANAGED, Expression, compile_expression
from ..rulesets.crs.explain import explained_by, is_owasp_event, matches_from_stored
from ..traffic.events import Templates, event_metadata
from ..traffic.zone_plan import ZonePlan
from ._checks import compile_checks
from ._decide import Decisions
from ._parquet_logs import EVENT_COLUMNS, request_from_json

if TYPE_CHECKING:
    from ._outcomes import PlanUnion

#: Column types of the events-per-key table the engines join with the log.
TEMPLATE_SCHEMA = (
    ("wb_key", "string"),
    ("action", "string"),
    ("source", "string"),
    ("rule_id", "string"),
    ("ruleset_id", "string"),
    ("description", "string"),
    ("score", "int"),
    ("paranoia_level", "int"),
    ("metadata", "string"),
    ("match_index", "int"),
)
FALLBACK_SCHEMA = (("request_id", "bigint"), ("wb_key", "string"))
#: Each OWASP event's metadata with what its own request matched (``explain.explained_by``).
EXPLAINED_SCHEMA = (("request_id", "bigint"), ("match_index", "int"), ("metadata", "string"))


class SqlEngine(Protocol):
    """What an engine provides: its SQL dialect, and running SQL over the log."""

    dialect: str

    def quote(self, name: str) -> str:
        """A quoted column name."""
        ...

    def fetch(self, sql: str) -> list[dict[str, Any]]:
        """Rows of a (small) result as dicts of Python values."""
        ...

    def register(
        self, name: str, rows: list[tuple[Any, ...]], schema: tuple[tuple[str, str], ...]
    ) -> None:
        """A small table of ``rows`` with ``schema`` (name, string/int/bigint) under ``name``."""
        ...

    def write_events(self, sql: str, target: Path) -> None:
        """Write the rows of ``sql`` (the events) to one Parquet file, in the event log's order."""
        ...

    def materialize(self, name: str, sql: str) -> str | None:
        """Keep the rows of ``sql`` as table ``name`` (returned), or None to recompute instead."""
        ...

    def spill(self, name: str, sql: str) -> str | None:
        """Write the rows of ``sql`` once, streaming, to temporary storage; a table
        expression reading them back, or None to recompute instead."""
        ...

    def release(self, name: str) -> None:
        """Free what :meth:`spill` kept under ``name`` (nothing if it kept nothing)."""
        ...


class CompiledPlan:
    """A zone's slots compiled for one dialect: their query over the log, and the
    expressions that settle a request per request."""

    def __init__(self, plan: ZonePlan | PlanUnion, dialect: str, quote: Any = None) -> None:
        self.plan = plan
        self.dialect = dialect
        self.quote = quote or (lambda n: '"' + n.replace('"', '""') + '"')
        self.compiled: list[Expression] = [compile_expression(e, MANAGED) for e in plan.expressions]
        #: The checks over the log's typed table (shared columns where the dialect has them).
        self.query = compile_checks(self.compiled, dialect, table="typed", quote=self.quote)
        self.sql: list[str | None] = self.query.checks
        self.fields = sorted({f for c in self.compiled for f in c.fields})

    @property
    def without_sql(self) -> int:
        """How many slots have no SQL in this dialect."""
        return self.query.without_sql

    def key_of(self, fields: dict[str, Any]) -> str:
        """A request's full key, evaluated per request."""
        return "".join("1" if c.matches(fields) else "0" for c in self.compiled)

    def events_of(self, keys: list[str]) -> tuple[list[tuple[Any, ...]], dict[str, str | None]]:
        """Template rows (see :data:`TEMPLATE_SCHEMA`) and the final action of each key."""
        plan = self.plan
        if not isinstance(plan, ZonePlan):
            raise TypeError("events_of needs one ZonePlan; a PlanUnion decides through outcomes")
        decisions = Decisions(plan.decide_slots)
        ids = decisions.index_texts(keys)
        templates = Templates(decisions.verdicts)
        templates.refresh()
        rows: list[tuple[Any, ...]] = []
        actions: dict[str, str | None] = {}
        for v, key in zip(ids, keys, strict=True):
            first, count = templates.first[v], templates.count[v]
            actions[key] = templates.action[v]
            for within in range(count):
                row = templates.rows[first + within]
                rows.append((key, *row, count - 1 - within))
        return rows, actions


@dataclass
class LogReplay:
    """What a replay over a log gave."""

    engine: str
    requests: int
    events: int
    actions: dict[str, int]
    seconds: float
    out: Path
    stats: dict[str, Any] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """A short report for the terminal."""
        rate = self.requests / self.seconds if self.seconds else 0.0
        out = [
            f"engine: {self.engine}",
            f"requests: {self.requests:,}  events: {self.events:,}  seconds: {self.seconds:.1f}"
            f"  ({rate:,.0f} requests/s)",
            "final actions: " + ", ".join(f"{a} {n:,}" for a, n in sorted(self.actions.items())),
            f"events written to {self.out}",
        ]
        return out


def _normalise(value: Any) -> Any:
    """A fetched value as the Rules language takes it (lists, dicts of lists, None)."""
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(v) for v in value]
    if hasattr(value, "tolist"):
        return _normalise(value.tolist())
    return value


@dataclass
class _Keyed:
    """Each request's key over a log: counts per distinct key, and the rows Python settled."""

    counts: dict[str, int]
    #: ``(request_id, key)`` of each request the SQL could not settle.
    fallback_rows: list[tuple[Any, ...]]
    #: SQL of the source's rows with the key the SQL gave (``wb_sql_key``).
    keyed: str
    laps: dict[str, float]
    #: Shared decoded columns the key read (0: the plain per-check SQL ran).
    shared_columns: int = 0


def _key_requests(
    backend: SqlEngine,
    compiled: CompiledPlan,
    source: str,
    zone_name: str,
    zone_plan: str,
    needed: Sequence[str],
) -> _Keyed:
    """Steps 1 and 2 of the module docstring: each request's key, counted per distinct key.

    ``needed``: the log's columns the caller reads from the keyed rows (with ``request_id``).

    The key is computed over the log with its shared decoded columns (the query of
    :func:`~._checks.compile_checks`), or, where a shared column has no SQL in the
    engine's dialect, with the plain per-check SQL.
    """
    query = compiled.query
    key, fallback, rows = query.key(), query.fallback(), query.select(source)
    shared = len(query.columns)
    laps: dict[str, float] = {}
    q = backend.quote
    wanted = "".join(f", s.{q(f)}" for f in compiled.fields)
    clock = time.perf_counter()
    keys = backend.materialize(
        "wb_keys", f"SELECT request_id, {key} AS wb_key, {fallback} AS wb_fb FROM {rows}"
    )
    spilled = None
    if keys is None and shared:
        # The log's rows with their key, written once as they stream by: the checks run once,
        # in bounded memory, and the passes below read the keys back instead of recomputing.
        # Only the columns the events take: every column of a log is more than a writer
        # holds in a small memory limit.
        kept = ", ".join(q(c) for c in dict.fromkeys(("request_id", *needed)))
        spilled = backend.spill(
            "wb_keyed", f"SELECT {kept}, {key} AS wb_sql_key, {fallback} AS wb_fb FROM {rows}"
        )
    if spilled is not None:
        counted = (
            f"SELECT wb_sql_key AS wb_key, count(*) AS n FROM {spilled} WHERE NOT wb_fb "
            "GROUP BY wb_sql_key"
        )
        unsettled = (
            f"SELECT s.request_id, s.raw, s.ray_id, s.datetime{wanted} FROM {source} s "
            f"WHERE s.request_id IN (SELECT request_id FROM {spilled} WHERE wb_fb)"
        )
        keyed = f"SELECT * FROM {spilled}"
    elif keys is not None:
        # The engine keeps each request's key: the checks run once.
        counted = f"SELECT wb_key, count(*) AS n FROM {keys} WHERE NOT wb_fb GROUP BY wb_key"
        unsettled = (
            f"SELECT s.request_id, s.raw, s.ray_id, s.datetime{wanted} FROM {source} s "
            f"JOIN {keys} k ON s.request_id = k.request_id WHERE k.wb_fb"
        )
        keyed = f"SELECT s.*, k.wb_key AS wb_sql_key FROM {source} s JOIN {keys} k ON s.request_id = k.request_id"
    else:
        # The engine streams: each pass computes what it needs again, nothing is kept.
        counted = (
            f"SELECT wb_key, count(*) AS n FROM (SELECT {key} AS wb_key FROM {rows} "
            f"WHERE NOT {fallback}) GROUP BY wb_key"
        )
        unsettled = (
            f"SELECT s.request_id, s.raw, s.ray_id, s.datetime{wanted} FROM {rows} s "
            f"WHERE {fallback}"
        )
        keyed = f"SELECT s.*, {key} AS wb_sql_key FROM {rows} s"
    counts: dict[str, int] = {}
    for row in backend.fetch(counted):
        counts[row["wb_key"]] = int(row["n"])
    laps["keys"] = time.perf_counter() - clock
    clock = time.perf_counter()
    fallback_rows: list[tuple[Any, ...]] = []
    for row in backend.fetch(unsettled):
        if row["raw"] is not None:
            fields = request_from_json(row["raw"]).fields(
                compiled.fields,
                ray_id=row["ray_id"],
                timestamp_ms=_epoch_ms(row["datetime"]),
                zone_name=zone_name,
                zone_plan=zone_plan,
            )
        else:
            fields = {f: _normalise(row[f]) for f in compiled.fields}
        k = compiled.key_of(fields)
        counts[k] = counts.get(k, 0) + 1
        fallback_rows.append((int(row["request_id"]), k))
    laps["fallback"] = time.perf_counter() - clock
    return _Keyed(counts, fallback_rows, keyed, laps, shared)


def _with_keys(keyed: _Keyed) -> str:
    """SQL of the source's rows with each one's full key (``wb_key``), settled by SQL or Python."""
    return (
        f"SELECT s.*, COALESCE(f.wb_key, s.wb_sql_key) AS wb_key "
        f"FROM ({keyed.keyed}) s LEFT JOIN wb_fallback f ON s.request_id = f.request_id"
    )


def run_replay(
    backend: SqlEngine,
    plan: ZonePlan,
    *,
    zone_id: str,
    zone_name: str,
    zone_plan: str,
    source: str,
    out: Path,
) -> LogReplay:
    """Replay the log rows of ``source`` (a table expression) through ``plan``; see the docstring."""
    started = time.perf_counter()
    compiled = CompiledPlan(plan, backend.dialect, backend.quote)
    laps = {"compile": time.perf_counter() - started}
    try:
        needed = ("ray_id", "datetime", "label", "crs_matched", *EVENT_COLUMNS)
        keyed = _key_requests(backend, compiled, source, zone_name, zone_plan, needed)
        return _write_replay(backend, compiled, keyed, laps, started, zone_id, out)
    finally:
        backend.release("wb_keyed")


def _write_replay(
    backend: SqlEngine,
    compiled: CompiledPlan,
    keyed: _Keyed,
    laps: dict[str, float],
    started: float,
    zone_id: str,
    out: Path,
) -> LogReplay:
    """Steps 3 and 4 of the module docstring, once each request has its key."""
    laps.update(keyed.laps)
    counts = keyed.counts
    clock = time.perf_counter()
    distinct = sorted(counts)
    templates, actions = compiled.events_of(distinct)
    backend.register("wb_templates", templates, TEMPLATE_SCHEMA)
    backend.register("wb_fallback", keyed.fallback_rows, FALLBACK_SCHEMA)
    backend.register("wb_explained", _explained_rows(backend, keyed, templates), EXPLAINED_SCHEMA)
    picked = {
        **{c: f"l.{c}" for c in ("ray_id", "datetime", "label", *EVENT_COLUMNS)},
        "zone_id": "'" + zone_id.replace("'", "''") + "'",
        "kind": "'firewall'",
        **{c: f"t.{c}" for c, _ in TEMPLATE_SCHEMA if c != "wb_key"},
        "metadata": "COALESCE(x.metadata, t.metadata)",
    }
    select = ", ".join(f"{picked[c]} AS {c}" for c in COLUMNS)
    events_sql = (
        f"SELECT {select} FROM ({_with_keys(keyed)}) l JOIN wb_templates t ON l.wb_key = t.wb_key "
        "LEFT JOIN wb_explained x ON x.request_id = l.request_id AND x.match_index = t.match_index"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    backend.write_events(events_sql, out)
    laps["events"] = time.perf_counter() - clock
    by_action: dict[str, int] = {}
    for k, n in counts.items():
        name = actions[k] or "pass"
        by_action[name] = by_action.get(name, 0) + n
    per_key_events: dict[str, int] = {}
    for template in templates:
        per_key_events[template[0]] = per_key_events.get(template[0], 0) + 1
    return LogReplay(
        backend.dialect,
        sum(counts.values()),
        sum(per_key_events.get(k, 0) * n for k, n in counts.items()),
        by_action,
        time.perf_counter() - started,
        out,
        run_stats(compiled, keyed, distinct, laps),
    )


def _explained_rows(
    backend: SqlEngine, keyed: _Keyed, templates: list[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """``(request_id, match_index, metadata)`` of each OWASP event whose request's stored CRS
    matches explain it, as the pipeline's events do (:mod:`workbench.rulesets.crs.explain`)."""
    owasp: dict[str, list[tuple[int, str, dict[str, Any]]]] = {}
    for key, _a, source, _r, _s, _d, _sc, _pl, metadata, match_index in templates:
        meta = json.loads(metadata) if metadata else {}
        if is_owasp_event(source, meta):
            owasp.setdefault(key, []).append((match_index, source, meta))
    if not owasp:
        return []
    wanted = ", ".join("'" + k.replace("'", "''") + "'" for k in sorted(owasp))
    rows: list[tuple[Any, ...]] = []
    for row in backend.fetch(
        f"SELECT request_id, wb_key, crs_matched FROM ({_with_keys(keyed)}) "
        f"WHERE crs_matched IS NOT NULL AND wb_key IN ({wanted})"
    ):
        for match_index, source, meta in owasp[row["wb_key"]]:
            richer = explained_by(meta, source, matches_from_stored(row["crs_matched"], source))
            if richer is not meta:
                rows.append((int(row["request_id"]), match_index, event_metadata(richer)))
    return rows


def _epoch_ms(when: Any) -> int | None:
    if when is None:
        return None
    import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

    stamp = pd.Timestamp(when)
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return int(stamp.value // 1_000_000)


def run_stats(compiled: Any, keyed: Any, distinct: Any, laps: dict[str, float]) -> dict[str, Any]:
    """What a log replay reports about its own work (both the replay and the what-if's pass)."""
    return {
        "slots": len(compiled.sql),
        "slots_without_sql": compiled.without_sql,
        "fallback_requests": len(keyed.fallback_rows),
        "distinct_keys": len(distinct),
        "shared_columns": keyed.shared_columns,
        "seconds": {k: round(v, 2) for k, v in laps.items()},
    }
