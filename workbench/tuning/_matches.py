"""Which expressions matched each replayed request, evaluated once, decided again at will.

A :class:`Matches` holds, for the requests of one replay, whether each of a
set of expressions matched: the zone's firewall and custom rules, the managed
entry point's rules, and *every* rule of every managed ruleset in the
catalogue (enabled or not, at any paranoia level). It is filled by one
whole-table pass of the traffic evaluator (a plan whose checks are those
expressions and whose verdict records which matched), so it is stored as the
distinct rows of matches and each request's row code. Any configuration of
the managed phase (a candidate exception, another paranoia level) is then
decided again from these rows by the ruleset engine itself, without a replay.

    >>> from workbench.traffic.request import Request
    >>> m = Matches.collect(['http.request.uri.path eq "/a"', "ssl"],
    ...                     [Request(url="http://x/a"), Request(url="http://x/b")])
    >>> m.column('http.request.uri.path eq "/a"').tolist(), m.column("ssl").tolist()
    ([True, False], [False, False])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.security import Check, SecurityEvent, StaticPlan, Verdict
from ..replay import Chunk, Context, TableBackend
from ..rulesets.expressions import matches_everything
from ..traffic.parts import Parts
from ..traffic.request import Request
from ..traffic.zone_plan import ZonePlan

_SOURCE = "tuning"


@dataclass
class Matches:
    """``rows[codes[i], col[expr]]``: whether ``expr`` matched request ``i``."""

    expressions: list[str]
    rows: np.ndarray  # distinct rows x expressions, bool
    codes: np.ndarray  # one row code per request, int64

    @property
    def col(self) -> dict[str, int]:
        """Column of each expression."""
        return {e: i for i, e in enumerate(self.expressions)}

    def __len__(self) -> int:
        return len(self.codes)

    def column(self, expression: str) -> np.ndarray:
        """Per request: whether ``expression`` matched (``true`` always does)."""
        if matches_everything(expression):
            return np.ones(len(self.codes), dtype=bool)
        return np.asarray(self.rows[self.codes, self.col[expression]], dtype=bool)

    @classmethod
    def collect(
        cls, expressions: Sequence[str], requests: Sequence[Request], ctx: Context | None = None
    ) -> Matches:
        """Evaluate ``expressions`` over ``requests`` in one whole-table pass."""
        exprs = list(dict.fromkeys(e for e in expressions if not matches_everything(e)))
        checks = [Check(str(i), e) for i, e in enumerate(exprs)]

        def record(matched: Callable[[str], bool]) -> Verdict:
            bits = tuple(matched(c.key) for c in checks)
            return Verdict([SecurityEvent(_SOURCE, "log", "", None, "", metadata={"bits": bits})])

        plan = ZonePlan(StaticPlan([], lambda m: Verdict([])), new=StaticPlan(checks, record))
        reqs = list(requests)
        decided = _Decided()
        chunk = Chunk(reqs, ctx or Context.plain(len(reqs)), Parts(reqs))
        TableBackend().replay(plan, [chunk], decided)
        # Verdict indexes are dense and each is one distinct row of matches.
        verdicts = decided.verdicts
        table = np.array([v.events[-1].metadata["bits"] for v in verdicts], dtype=bool).reshape(
            len(verdicts), len(exprs)
        )
        return cls(exprs, table, np.asarray(decided.ids, dtype=np.int64))

    def with_columns(self, more: Matches) -> Matches:
        """These matches and ``more``'s (same requests), as one."""
        if len(more.codes) != len(self.codes):
            raise ValueError("with_columns: both must cover the same requests")
        pairs = self.codes * max(len(more.rows), 1) + more.codes
        distinct, first, inverse = np.unique(pairs, return_index=True, return_inverse=True)
        rows = np.concatenate([self.rows[self.codes[first]], more.rows[more.codes[first]]], axis=1)
        return Matches(self.expressions + more.expressions, rows, inverse.ravel().astype(np.int64))


class _Decided:
    """The one chunk's verdict indexes and verdicts, as the backend hands them over."""

    def __init__(self) -> None:
        self.ids: np.ndarray = np.zeros(0, dtype=np.int64)
        self.verdicts: list[Verdict] = []

    def emit(self, chunk: Chunk, ids: np.ndarray, verdicts: list[Verdict]) -> None:
        self.ids, self.verdicts = ids, verdicts

    def all_staged(self) -> None:
        return None


def decide_rows(
    matches: Matches, keys: dict[str, str], decide: Callable[[Callable[[str], bool]], Any]
) -> list[Any]:
    """``decide(matched)`` once per distinct row; ``keys`` maps each check key to its expression."""
    col = matches.col
    slot = {k: (None if matches_everything(e) else col[e]) for k, e in keys.items()}
    out = []
    for row in matches.rows:
        values = row.tolist()

        def matched(key: str, values: list[bool] = values) -> bool:
            s = slot[key]
            return True if s is None else values[s]

        out.append(decide(matched))
    return out
