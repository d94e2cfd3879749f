"""What-if: the same traffic through a zone's current and proposed configurations.

The *old* side is the zone as it runs now (``systems="auto"``: the old WAF
before a migration); the *new* side is the zone's firewall and custom rules,
then the managed entry point of :class:`~workbench.tuning.config.NewConfig`
(what a migration would configure, or the tuned one), with the old WAF off.
Both are real replays (:class:`~workbench.traffic.Pipeline`) of the same
requests with the same ray ids and times; the zone, its rulesets and its
migration state are never written. One more whole-table pass records which
expression matched each request (:class:`~workbench.tuning._matches.Matches`),
from which the score breakdown, the sweep and every candidate's blast radius
are decided without another replay.

    >>> from workbench import Workbench
    >>> from workbench.traffic import generate
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="pro")
    >>> w = run_whatif(wb, zone.id, generate(50, seed=1), progress=False)
    >>> list(w.requests.columns)[:4], len(w.requests)
    (['ray_id', 'label', 'method', 'host'], 50)
    >>> set(w.requests.change) <= set(CHANGES)
    True
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]

from ..core.security import TERMINAL_ACTIONS
from ..replay import Context, Pipeline, Replay
from ..traffic.request import Request
from ..traffic.zone_plan import ZonePlan, zone_plan
from ._matches import Matches, decide_rows
from .config import NewConfig, decide_new

if TYPE_CHECKING:
    from ..core.platform import Workbench
    from .breakdown import Breakdown

NEWLY_BLOCKED, NEWLY_ALLOWED, UNCHANGED = "newly blocked", "newly allowed", "unchanged"
CHANGES = (NEWLY_BLOCKED, NEWLY_ALLOWED, UNCHANGED)


def stops(action: Any) -> bool:
    """Whether an action ends the request (block and the challenges)."""
    return action in TERMINAL_ACTIONS


def change_of(old: Any, new: Any) -> str:
    """``newly blocked``, ``newly allowed`` or ``unchanged``."""
    if stops(new) and not stops(old):
        return NEWLY_BLOCKED
    if stops(old) and not stops(new):
        return NEWLY_ALLOWED
    return UNCHANGED


@dataclass
class WhatIf:
    """A what-if run: per request comparison, the two replays, and the matches behind them."""

    zone_id: str
    config: NewConfig
    requests: Any  # DataFrame, one row per request
    old: Replay
    new: Replay
    matches: Matches
    reqs: list[Request] = field(repr=False)
    context: Context = field(repr=False)
    #: Per request: whether the managed phase ran (firewall and custom rules let it through).
    at_managed: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0, dtype=bool))
    _breakdown: Any = field(default=None, repr=False)
    _ended: dict[str, dict[str, tuple[str, str, str]]] = field(default_factory=dict, repr=False)

    def summary(self) -> Any:
        """Requests by change (rows) and label (columns), with totals."""
        return pd.crosstab(
            self.requests["change"], self.requests["label"], margins=True, margins_name="total"
        )

    def by_rule(self) -> Any:
        """Changed requests by the rule that decides them (the new side's rule for newly blocked,
        the old side's for newly allowed), with counts by label."""
        rows = []
        for side, change in (("new", NEWLY_BLOCKED), ("old", NEWLY_ALLOWED)):
            picked = self.requests[self.requests.change == change]
            for ray, label in zip(picked.ray_id, picked.label, strict=True):
                source, rule, description = self.ended_by(ray, side) or ("", "", "")
                rows.append((change, side, source, rule, description, label))
        frame = pd.DataFrame(
            rows, columns=["change", "side", "source", "rule_id", "description", "label"]
        )
        if frame.empty:
            return pd.DataFrame(
                columns=["change", "side", "source", "rule_id", "description", "requests"]
            )
        table = pd.crosstab(
            [frame.change, frame.side, frame.source, frame.rule_id, frame.description], frame.label
        )
        table.insert(0, "requests", table.sum(axis=1))
        return table.reset_index().sort_values(
            ["change", "requests"], ascending=[True, False], ignore_index=True
        )

    def ended_by(self, ray_id: str, side: str = "new") -> tuple[str, str, str] | None:
        """(source, rule id, description) of the event that ended ``ray_id`` on ``side``
        ("new" or "old"), or None when nothing ended it."""
        if side not in ("new", "old"):
            raise ValueError(f'side must be "new" or "old", got {side!r}')
        if side not in self._ended:
            self._ended[side] = _deciding(self.new if side == "new" else self.old)
        return self._ended[side].get(ray_id)

    def to_parquet(self, path: Any) -> None:
        """Write :attr:`requests` as Parquet (through DuckDB: no pyarrow needed)."""
        write_parquet(self.requests, path)

    @property
    def breakdown(self) -> Breakdown:
        """The OWASP score breakdown of these requests (computed once)."""
        if self._breakdown is None:
            from .breakdown import Breakdown

            self._breakdown = Breakdown.of(self)
        return self._breakdown


def write_parquet(frame: Any, path: Any) -> None:
    """Write a DataFrame as one Parquet file."""
    import duckdb

    con = duckdb.connect()
    try:
        con.register("_wb_whatif", frame)
        target = str(path).replace("'", "''")
        con.execute(f"COPY (SELECT * FROM _wb_whatif) TO '{target}' (FORMAT PARQUET)")
    finally:
        con.close()


def _deciding(replay: Replay) -> dict[str, tuple[str, str, str]]:
    """Ray id -> (source, rule id, description) of the event that ended the request: the
    last of its events whose action is the request's final action (an old-WAF request may
    carry several ending events, an anomaly challenge beside a block, say)."""
    ev = replay.events
    if ev.empty:
        return {}
    final = dict(zip(replay.ray_ids, replay.actions, strict=True))
    ending = ev[[final.get(r) == a for r, a in zip(ev.ray_id, ev.action, strict=True)]]
    ending = ending[ending.action.isin(sorted(TERMINAL_ACTIONS))]
    last = ending.drop_duplicates("ray_id", keep="last")
    return {
        r: (s, i, d)
        for r, s, i, d in zip(last.ray_id, last.source, last.rule_id, last.description, strict=True)
    }


def default_seed(zone_id: str) -> int:
    """The seed of a zone's what-if ray ids when none is given (the same on every run)."""
    return zlib.crc32(zone_id.encode())


def new_side_plan(config: NewConfig) -> ZonePlan:
    """The new side as one plan: the firewall rules, then custom rules and the managed phase."""
    from ..rulesets.engine import ChainPlan

    fw, custom, managed = config.plans()
    return ZonePlan(fw, new=ChainPlan([custom, managed]))


def side_plans(wb: Workbench, zone_id: str, config: NewConfig) -> list[ZonePlan]:
    """The two sides' plans: the zone as it runs now, and ``config`` (both what-ifs read these)."""
    return [zone_plan(wb, zone_id, "auto"), new_side_plan(config)]


def run_whatif(
    wb: Workbench,
    zone_id: str,
    requests: Iterable[Any],
    *,
    config: NewConfig | None = None,
    seed: int | None = None,
    progress: bool | None = None,
    step_ms: int = 10,
) -> WhatIf:
    """Replay ``requests`` through the zone now and through ``config`` (default: the zone's
    :meth:`NewConfig.of_zone`); see the module docstring."""
    zone = wb.zone(zone_id)
    config = config or NewConfig.of_zone(wb, zone.id)
    reqs = [Request.from_raw(r) for r in requests]
    # The same seed on both sides gives each request the same ray id twice.
    seed = default_seed(zone.id) if seed is None else seed
    now, proposed = side_plans(wb, zone.id, config)
    old = Pipeline(wb, zone.id, plan=now, step_ms=step_ms).replay(
        reqs, seed=seed, progress=progress
    )
    # The new side sees each request at the time the old side did (step 0: the clock stays).
    timed = [_at(r, ms) for r, ms in zip(reqs, old.times_ms, strict=True)]
    new = Pipeline(wb, zone.id, plan=proposed, step_ms=0).replay(
        timed, seed=seed, progress=progress
    )
    ctx = Context(old.ray_ids, old.times_ms, zone.name, zone.plan)
    matches = Matches.collect(config.expressions(), reqs, ctx)
    decided = decide_rows(matches, config.keys(), lambda m: decide_new(config.plans(), m)[1])
    at_managed = (
        np.asarray(decided, dtype=bool)[matches.codes] if decided else np.zeros(0, dtype=bool)
    )
    frame = pd.DataFrame(
        {
            "ray_id": old.ray_ids,
            "label": [r.label for r in reqs],
            "method": [r.method for r in reqs],
            "host": [r.host for r in reqs],
            "path": [r.path for r in reqs],
            "query": [r.query for r in reqs],
            "old_action": [a or "pass" for a in old.actions],
            "new_action": [a or "pass" for a in new.actions],
        }
    )
    frame["change"] = [change_of(a, b) for a, b in zip(old.actions, new.actions, strict=True)]
    return WhatIf(zone.id, config, frame, old, new, matches, reqs, ctx, at_managed)


def _at(req: Request, ms: int) -> Request:
    if req.timestamp is not None:
        return req
    timed = copy.copy(req)
    timed.timestamp = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return timed
