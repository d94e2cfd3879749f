"""The CRS program of the OWASP catalogue, run once per request: what ``cf.waf.crs.rules`` reads.

The catalogue (``workbench/rulesets/catalog/owasp_core.json``) carries the
translated program under ``crs``: every rule and marker in order, the set-up's
``TX`` values and the phrase files. :func:`program` loads it once;
:func:`evaluate` runs it on a request at paranoia level 4 (every rule: a
ruleset's paranoia level is a category override on top, as on the platform)
and keeps the result on the request, so the field, the event's "why" and both
replay paths read one run.

    >>> from .request import RawRequest, raw_from_request
    >>> result = evaluate(RawRequest("GET", "/?id=1%27%20or%20%271%27%3D%271",
    ...                              (("Host", "a.example"), ("User-Agent", "Mozilla/5.0"),
    ...                               ("Accept", "*/*"))))
    >>> 942100 in result.hits
    True
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from .interpreter import Program, Result
from .request import RawRequest, raw_from_request
from .seclang import Item, Marker, rule_from_json

CATALOG = Path(__file__).resolve().parent.parent / "catalog" / "owasp_core.json"

#: Every paranoia level runs: the ruleset's own level is applied as category overrides.
RUN_LEVEL = 4
#: Where a traffic request keeps this program's run (:func:`kept_run`).
KEPT_AS = "_crs_result"


def program_from_data(crs: Mapping[str, Any], run_level: int | None = RUN_LEVEL) -> Program:
    """A :class:`Program` from a catalogue's ``crs`` section; ``run_level`` sets CRS 3's paranoia
    level (None for CRS 2, which has none)."""
    items: list[Item] = []
    for entry in crs["program"]:
        if "marker" in entry:
            items.append(Marker(entry["marker"]))
        else:
            items.append(
                rule_from_json(
                    int(entry["id"]), entry, entry.get("msg", ""), entry.get("severity", "")
                )
            )
    tx = dict(crs.get("tx", {}))
    if run_level is not None:
        tx["paranoia_level"] = tx["executing_paranoia_level"] = str(run_level)
    return Program(items, tx, phrases=crs.get("data", {}))


@cache
def program(path: Path = CATALOG) -> Program:
    """The catalogue's program, loaded once per process."""
    return program_from_data(json.loads(path.read_text(encoding="utf-8"))["crs"])


def evaluate(request: RawRequest) -> Result:
    """The catalogue program's run on ``request``."""
    return program().run(request)


def kept_run(req: Any, key: str, run: Callable[[RawRequest], Result]) -> Result:
    """``run`` on a traffic request as it was sent, computed once and kept on the request under
    ``key``: the field, the replay paths and the tuning "why" read one run."""
    found = req.__dict__.get(key)
    if found is None:
        found = req.__dict__[key] = run(raw_from_request(req))
    return found


def result_of(req: Any) -> Result:
    """The program's run on a traffic request, computed once and kept on the request."""
    return kept_run(req, KEPT_AS, evaluate)


def fired_ids(req: Any) -> list[int]:
    """The value of ``cf.waf.crs.rules`` for a traffic request: the CRS rule ids that fired."""
    return sorted(result_of(req).hits)


@cache
def _catalog_rules(path: Path = CATALOG) -> tuple[tuple[int, int, int], ...]:
    """(CRS id, paranoia level, score) of each scoring managed rule of the catalogue."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return tuple(
        (int(r["crs_id"]), int(r["paranoia_level"]), int(r["score"]))
        for r in data["rules"]
        if r.get("paranoia_level") is not None
    )


class CrsEngine:
    """The catalogue's CRS rules at one paranoia level: which fire on a request, and their scores.

    What a zone's OWASP ruleset matches with every rule at or below ``paranoia_level``
    enabled; the tests and ``benchmarks/owasp.py`` set it beside libmodsecurity.
    """

    def __init__(self, paranoia_level: int = 1, path: Path = CATALOG) -> None:
        self.paranoia_level = paranoia_level
        rules = _catalog_rules(path)
        self.levels = {i: level for i, level, _ in rules}
        self.scores = {i: score for i, _, score in rules}
        self._on = frozenset(i for i, level, _ in rules if level <= paranoia_level)
        self._program = program(path)

    def run(self, request: RawRequest) -> Result:
        """The whole program's run (every level)."""
        return self._program.run(request)

    def fired(self, request: RawRequest) -> set[int]:
        """The scoring CRS rules at or below the paranoia level that fire on ``request``."""
        return {i for i in self._program.run(request).hits if i in self._on}
