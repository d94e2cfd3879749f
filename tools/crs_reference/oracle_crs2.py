r"""libmodsecurity 3 running CRS 2.2.9 in anomaly mode: the reference for the old OWASP package.

:func:`crs2_config` writes the whole configuration: ModSecurity's recommended
body-processor rules (:data:`.oracle.BASE_CONFIG`, as for CRS 3), CRS 2.2.9's
set-up in anomaly mode (:func:`.translate_crs2.anomaly_setup`: ``pass`` by
default, 900004 on, the inbound threshold in 900003) and the request-side base
rule files without rule 981227, with the phrase files named by absolute path.
:class:`Crs2Oracle` loads it into :class:`.oracle.Oracle` at one threshold
(a sensitivity's: High 25, Medium 40, Low 60) and replays requests.

The package's "fired" rules are read as the rules that log: the ids of
``get_rule_messages()`` (``nolog`` rules leave no message: the phrase
pre-checks, the SQL keyword counters, the set-up's rules), without the
body-processor rules and without 981176, the blocking rule, which is the
decision (:attr:`Crs2Result.blocked`). Its message gives libmodsecurity's
total (``Total Score: N``), which counts a rule once per matched variable.

    >>> setup = "\n".join(['SecDefaultAction "phase:2,deny,log"', "#SecAction \\",
    ...     "  \"id:'900004',phase:1,setvar:tx.anomaly_score_blocking=on,nolog,pass\"",
    ...     "SecAction \"id:'900003',phase:1,setvar:tx.inbound_anomaly_score_level=5\""])
    >>> config = crs2_config({SETUP: setup, RULE_FILES[4].name: "SecRule ARGS @pmFromFile a.data"},
    ...                      threshold=40, data_dir=Path("/d"))
    >>> "phase:2,pass,log" in config, "level=40" in config, "@pmFromFile /d/a.data" in config
    (True, True, True)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from workbench.rulesets.crs.request import RawRequest

from .oracle import BASE_CONFIG, BASE_IDS, Oracle
from .source_crs2 import BASE, SETUP, Checkout, checkout, unavailable_reason
from .translate_crs2 import REMOVED_RULES, RULE_FILES, anomaly_setup, without_rules

BLOCKING_RULE = 981176
_FROM_FILE = re.compile(r"(@pmFromFile|@pmf|@ipMatchFromFile) +([\w.-]+\.data)")
_TOTAL = re.compile(r"Total Score: (\d+)")


def oracle_unavailable_reason(repo: Path | None = None) -> str:
    """Why the oracle cannot run (empty when it can), for a test's skip message."""
    try:
        import libmodsecurity  # noqa: F401
    except ImportError:
        return "libmodsecurity is not installed (pip install libmodsecurity)"
    return unavailable_reason(repo)


def _texts(source: Path | Checkout) -> tuple[dict[str, str], Path]:
    root = source.root if isinstance(source, Checkout) else source
    base = root / BASE if (root / BASE).is_dir() else root
    setup = root / SETUP if (root / SETUP).exists() else base / SETUP
    texts = {SETUP: setup.read_text(encoding="utf-8")}
    texts |= {f.name: (base / f.name).read_text(encoding="utf-8") for f in RULE_FILES}
    return texts, base


def crs2_config(
    source: Path | Checkout | Mapping[str, str],
    threshold: int = 25,
    data_dir: Path | None = None,
) -> str:
    """The configuration text for CRS 2.2.9 in anomaly mode at inbound threshold ``threshold``.

    ``source`` is a checkout (or its folder, or its ``base_rules`` folder holding the set-up
    too), or the texts by file name: the set-up and the rule files, with ``data_dir``
    the folder of their phrase files (a text load has no folder of its own).
    """
    if isinstance(source, Mapping):
        texts = dict(source)
    else:
        texts, base = _texts(source)
        data_dir = data_dir or base
    parts = [BASE_CONFIG, anomaly_setup(texts[SETUP], threshold)]
    for rule_file in RULE_FILES:
        if rule_file.name not in texts:
            continue
        text = without_rules(texts[rule_file.name], REMOVED_RULES)
        parts.append(text if data_dir is None else _with_data_paths(text, data_dir))
    return "\n".join(parts)


def _with_data_paths(text: str, folder: Path) -> str:
    """``text`` with its phrase files named by absolute path (a text load has no folder)."""
    return _FROM_FILE.sub(lambda m: f"{m.group(1)} {folder / m.group(2)}", text)


@dataclass(frozen=True)
class Crs2Result:
    """What libmodsecurity did with one request under CRS 2.2.9 at one threshold."""

    #: The rules that logged, without the body-processor rules and without 981176.
    rule_ids: frozenset[int]
    #: Whether 981176 fired: the anomaly score reached the oracle's threshold.
    blocked: bool
    #: 981176's "Total Score" (None when it did not fire, or its message was not UTF-8).
    total: int | None = None
    #: A body-processor rule (200002-200005) that denied the request first, if any.
    body_error: int | None = None


class Crs2Oracle(Oracle):
    """libmodsecurity with CRS 2.2.9 at one inbound threshold; :meth:`replay` runs a request."""

    def __init__(
        self, threshold: int = 25, source: Path | Checkout | None = None, repo: Path | None = None
    ) -> None:
        self.threshold = threshold
        super().__init__(config=crs2_config(source or checkout(repo), threshold))

    def replay(self, request: RawRequest) -> Crs2Result:
        """Replay ``request``: the rules that logged and 981176's total."""
        ids: set[int] = set()
        blocked = False
        total = body_error = None
        for rule_id, _, message in self.messages(request):
            if rule_id in BASE_IDS:
                body_error = body_error or rule_id
            elif rule_id == BLOCKING_RULE:
                blocked = True
                m = _TOTAL.search(message)
                total = int(m.group(1)) if m else None
            else:
                ids.add(rule_id)
        return Crs2Result(frozenset(ids), blocked, total, body_error)

    def replay_all(self, requests: Iterable[RawRequest]) -> list[Crs2Result]:
        """:meth:`replay` over many requests."""
        return [self.replay(r) for r in requests]
