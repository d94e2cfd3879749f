"""Several plans over a Parquet log in one pass: one outcome per request (the what-if's).

:func:`run_outcomes` computes one key over every plan's slots
(:class:`PlanUnion`: a check the plans share runs once per request), decides
each distinct key once for every plan, and writes one row per request with the
strings ``outcome`` gives for its plans' verdicts (the what-if's old action, new
action and change), in the log's request order. A log backend's
:meth:`~._log_backend.LogBackend.outcomes` calls it.

    >>> union = PlanUnion([])
    >>> union.expressions, union.decide(lambda slot: True)
    ([], [])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.security import Verdict
from ..rules_language.sql_fragments import ident
from ..traffic.zone_plan import ZonePlan
from ._decide import Decisions
from ._log_replay import (
    FALLBACK_SCHEMA,
    CompiledPlan,
    SqlEngine,
    _key_requests,
    _with_keys,
    run_stats,
)
from ._parquet_logs import connect


class PlanUnion:
    """Several plans' slots as one key: an expression they share is evaluated once.

    >>> from workbench.core.security import Check, StaticPlan, Verdict
    >>> def plan(*exprs):
    ...     checks = [Check(str(i), e) for i, e in enumerate(exprs)]
    ...     return ZonePlan(StaticPlan(checks, lambda m: Verdict([], "block" if m("0") else None)))
    >>> union = PlanUnion([plan("ssl", "true"), plan("true")])
    >>> union.expressions
    ['ssl', 'true']
    >>> [v.action for v in union.decide(lambda slot: "01"[slot] == "1")]
    [None, 'block']
    """

    def __init__(self, plans: Sequence[ZonePlan]) -> None:
        self.plans = list(plans)
        self.expressions: list[str] = list(
            dict.fromkeys(e for plan in self.plans for e in plan.expressions)
        )
        at = {e: i for i, e in enumerate(self.expressions)}
        self._slots = [[at[e] for e in plan.expressions] for plan in self.plans]

    def decide(self, matched: Callable[[int], bool]) -> list[Verdict]:
        """Each plan's verdict for a request where slot ``s`` of :attr:`expressions` matched
        when ``matched(s)``."""
        return [
            plan.decide_slots(lambda s, slots=slots: matched(slots[s]))  # type: ignore[misc]
            for plan, slots in zip(self.plans, self._slots, strict=True)
        ]


@dataclass
class Outcomes:
    """What :func:`run_outcomes` gave: requests per distinct outcome, and where they went."""

    engine: str
    requests: int
    #: Requests per outcome (the tuple ``outcome`` gave).
    counts: dict[tuple[str, ...], int]
    seconds: float
    out: Path
    stats: dict[str, Any] = field(default_factory=dict)


def run_outcomes(
    backend: SqlEngine,
    plans: Sequence[ZonePlan],
    outcome: Callable[[list[Verdict]], tuple[str, ...]],
    names: Sequence[str],
    *,
    zone_name: str,
    zone_plan: str,
    source: str,
    out: Path,
    keep: Sequence[str] = ("ray_id", "label"),
    memory_limit: str = "1GB",
    threads: int = 2,
) -> Outcomes:
    """Each request of ``source`` through several ``plans`` at once, one row per request in ``out``.

    One key over every plan's slots (:class:`PlanUnion`), so each distinct check runs
    once per request; ``outcome`` turns the plans' verdicts for a distinct key into
    strings, named ``names``. ``out`` is one Parquet file: the log's ``keep`` columns,
    then ``names``, in the log's request order (``request_id``).
    """
    started = time.perf_counter()
    union = PlanUnion(plans)
    compiled = CompiledPlan(union, backend.dialect, backend.quote)
    laps = {"compile": time.perf_counter() - started}
    try:
        needed = ("ray_id", "datetime", *keep)
        keyed = _key_requests(backend, compiled, source, zone_name, zone_plan, needed)
        laps.update(keyed.laps)
        clock = time.perf_counter()
        distinct = sorted(keyed.counts)
        decisions = Decisions(union.decide)
        ids = decisions.index_texts(distinct)
        decided = {
            k: tuple(outcome(decisions.verdicts[i])) for k, i in zip(distinct, ids, strict=True)
        }
        backend.register(
            "wb_outcomes",
            [(k, *decided[k]) for k in distinct],
            (("wb_key", "string"), *((n, "string") for n in names)),
        )
        backend.register("wb_fallback", keyed.fallback_rows, FALLBACK_SCHEMA)
        # write_events sorts by the event log's order (datetime, ray_id, match_index); the
        # request order is restored below from request_id, the one order that is the log's.
        picked = {
            "wb_request_id": "l.request_id",
            "datetime": "l.datetime",
            "ray_id": "l.ray_id",
            "match_index": "0",
            **{c: f"l.{c}" for c in keep},
            **{n: f"o.{n}" for n in names},
        }
        select = ", ".join(f"{sql} AS {name}" for name, sql in picked.items())
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = out.with_name(out.name + ".unsorted")
        backend.write_events(
            f"SELECT {select} FROM ({_with_keys(keyed)}) l JOIN wb_outcomes o ON l.wb_key = o.wb_key",
            staging,
        )
    finally:
        backend.release("wb_keyed")
    laps["write"] = time.perf_counter() - clock
    clock = time.perf_counter()
    con = connect(memory_limit=memory_limit, threads=threads)
    try:
        columns = ", ".join(ident(c) for c in (*keep, *names))
        con.execute(
            f"COPY (SELECT {columns} FROM read_parquet(?) ORDER BY wb_request_id) "
            "TO ? (FORMAT PARQUET)",
            [str(staging), str(out)],
        ).fetchall()
    finally:
        con.close()
        staging.unlink(missing_ok=True)
    laps["order"] = time.perf_counter() - clock
    counts: dict[tuple[str, ...], int] = {}
    for k, n in keyed.counts.items():
        counts[decided[k]] = counts.get(decided[k], 0) + n
    return Outcomes(
        backend.dialect,
        sum(keyed.counts.values()),
        counts,
        time.perf_counter() - started,
        out,
        run_stats(compiled, keyed, distinct, laps),
    )
