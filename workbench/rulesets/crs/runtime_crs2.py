"""The old OWASP package's CRS 2.2.9 program, run once per request: what ``cf.waf.crs2.rules`` reads.

``workbench/waf_legacy/catalog/owasp_crs2.json`` (made by
:mod:`.translate_crs2`) carries the program under ``crs`` (rules and markers
in order, the anomaly-mode set-up's ``TX`` values, the phrase files) and the
package's scoring rules under ``rules``. :func:`program` loads it once;
:func:`result_of` runs it on a traffic request and keeps the run on the
request (``_crs2_result``), so the field and the replay read one run.
:class:`Crs2Engine` is the package as the old WAF scores it: each fired
scoring rule adds its score once, and the sum meets a sensitivity's
threshold or not. (The program's own blocking rule 981176 fires at the
set-up's threshold, 5: the package's rules never read it.)

    >>> from .request import RawRequest
    >>> engine = Crs2Engine()
    >>> fired = engine.fired(RawRequest("GET", "/?id=1%27%20or%20%271%27%3D%271",
    ...     (("Host", "a.example"), ("User-Agent", "Mozilla/5.0"), ("Accept", "*/*"))))
    >>> 959071 in fired, engine.score(fired) >= engine.scores[959071]
    (True, True)
    >>> engine.blocks(fired, "high") == (engine.score(fired) >= 25)
    True
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from .interpreter import Program, Result, tx_int
from .request import RawRequest
from .runtime import kept_run, program_from_data

CATALOG = Path(__file__).resolve().parents[2] / "waf_legacy" / "catalog" / "owasp_crs2.json"
#: The old package's anomaly thresholds ("and up") by sensitivity (waf-migration.md §1.2).
THRESHOLDS = {"high": 25, "medium": 40, "low": 60}
AJAX_THRESHOLDS = {"high": 65, "medium": 80, "low": 120}
#: Where a traffic request keeps this program's run (``runtime.kept_run``).
KEPT_AS = "_crs2_result"
#: CRS 2's inbound blocking rule: the package's decision, not one of its rules.
BLOCKING_RULE = 981176


@cache
def _data(path: Path = CATALOG) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@cache
def program(path: Path = CATALOG) -> Program:
    """The CRS 2 program, loaded once per process."""
    return program_from_data(_data(path)["crs"], run_level=None)


def evaluate(request: RawRequest) -> Result:
    """The program's run on ``request``."""
    return program().run(request)


def result_of(req: Any) -> Result:
    """The program's run on a traffic request, computed once and kept on the request."""
    return kept_run(req, KEPT_AS, evaluate)


def fired_ids(req: Any) -> list[int]:
    """The value of ``cf.waf.crs2.rules`` for a traffic request: the CRS 2 rule ids that fired."""
    return sorted(result_of(req).hits)


def rule_scores(path: Path = CATALOG) -> dict[int, int]:
    """The package's scoring rules: CRS 2 id -> the score it adds."""
    return {int(r["id"]): int(r["score"]) for r in _data(path)["rules"]}


class Crs2Engine:
    """The old OWASP package with every rule on: which of its rules fire, their sum, the decision.

    The tests and ``benchmarks/owasp.py`` set it beside libmodsecurity running CRS 2.2.9.
    """

    def __init__(self, path: Path = CATALOG) -> None:
        self.scores = rule_scores(path)
        self._program = program(path)

    def run(self, request: RawRequest) -> Result:
        """The whole program's run (the blocking rule and the exceptions too)."""
        return self._program.run(request)

    def fired(self, request: RawRequest) -> set[int]:
        """The package's rules that fire on ``request``."""
        return {i for i in self._program.run(request).hits if i in self.scores}

    def outcome(self, request: RawRequest) -> tuple[set[int], int]:
        """The package's rules that fire and the program's ``tx.anomaly_score`` (which, as
        libmodsecurity's, counts a rule once per matched variable)."""
        result = self._program.run(request)
        total = tx_int(result.tx.get("anomaly_score", b"0"))
        return {i for i in result.hits if i in self.scores}, total

    def score(self, fired: Iterable[int]) -> int:
        """The package's anomaly score: each fired rule's score once."""
        return sum(self.scores.get(i, 0) for i in set(fired))

    def blocks(self, fired: Iterable[int], sensitivity: str, ajax: bool = False) -> bool:
        """Whether the score reaches the sensitivity's threshold (AJAX requests have higher ones)."""
        return self.score(fired) >= (AJAX_THRESHOLDS if ajax else THRESHOLDS)[sensitivity]
