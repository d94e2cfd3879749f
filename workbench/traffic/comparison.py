"""The migration's comparison: generated traffic replayed through a zone, two questions asked.

:func:`compare` replays ``n`` labelled requests (``workbench.traffic``) through
the zone as it is configured now (in validation mode: the new version first,
then the previous one when the new one let the request through) into a fresh
event log, and asks the two canned questions of ``workbench.logs``: which
requests the new version lets through that the previous one blocked or
challenged, and which legitimate requests the new version stops. The
migration wizard renders it (``workbench.widgets.migration_wizard_replay``).

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="enterprise")
    >>> found = compare(wb, zone.id, 50, seed=1)
    >>> found.requests, found.systems   # the new version is off: only the previous one runs
    (50, ['fw', 'old'])
    >>> found.counts()                  # so everything the previous one stopped is listed
    (13, 0)
    >>> found.summary()
    'replayed 50 requests (seed 1) through the firewall rules and the previous version'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..logs import EventLog, legit_blocked_by_new, new_allows_old_blocked
from ..logs.schema import LEGIT_LABELS
from ..replay import Pipeline
from .generators import LABELS, generate

#: The two questions, as the wizard names them.
ALLOWED = "allowed by the new version, blocked or challenged by the previous one"
LEGIT = "legitimate requests blocked by the new version"
#: Columns shown for each question (the queries return more).
ALLOWED_COLUMNS = ("ray_id", "label", "path", "query", "old_action", "old_rules", "new_events")
LEGIT_COLUMNS = ("rule_id", "description", "requests", "benign", "api", "bot", "example_path")
#: Most requests one replay takes (a panel stays responsive).
MAX_REQUESTS = 20_000
_SYSTEMS = {"fw": "the firewall rules", "new": "the new version", "old": "the previous version"}


def records(frame: Any, columns: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows as plain dicts of text and numbers (no pandas types, so tables and JSON agree)."""
    out = []
    for row in frame.to_dict("records"):
        out.append(
            {c: _plain(row.get(c)) for c in columns + tuple(k for k in row if k not in columns)}
        )
    return out


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if value != value else value  # NaN is no value
    try:
        return int(value)
    except (TypeError, ValueError):
        return str(value)


@dataclass
class Comparison:
    """One replay and its two answers (rows as plain dicts, in the queries' order)."""

    requests: int
    seed: int
    systems: list[str]
    actions: dict[str, int]
    allowed: list[dict[str, Any]]
    legit: list[dict[str, Any]]
    log: Any = field(default=None, repr=False)
    #: A preview (``workbench.tuning.preview``): the zone now against the reviewed
    #: configuration, both replayed apart, nothing deployed.
    preview: bool = False

    def summary(self) -> str:
        """Which systems saw the replay, in words."""
        if self.preview:
            return (
                f"previewed {self.requests} requests (seed {self.seed}) through the zone as it "
                "is and as the reviewed configuration would make it"
            )
        names = [_SYSTEMS.get(s, s) for s in self.systems]
        through = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
        return f"replayed {self.requests} requests (seed {self.seed}) through {through}"

    def counts(self) -> tuple[int, int]:
        """``(requests allowed by the new version and stopped by the previous one,
        legitimate requests the new version stopped)``."""
        return len(self.allowed), sum(int(r.get("requests") or 0) for r in self.legit)

    def by_label(self) -> list[dict[str, Any]]:
        """Each question's requests by traffic label, in a fixed order (the chart's data)."""
        allowed = Counter(str(r.get("label")) for r in self.allowed)
        legit = Counter({label: sum(int(r.get(label) or 0) for r in self.legit)
                         for label in LEGIT_LABELS})  # fmt: skip
        rows = []
        for question, counted in ((ALLOWED, allowed), (LEGIT, legit)):
            for label in [*LABELS, *sorted(set(counted) - set(LABELS))]:
                if counted.get(label):
                    rows.append({"question": question, "label": label, "requests": counted[label]})
        return rows


def compare(wb: Any, zone_id: str, n: int, *, seed: int = 1) -> Comparison:
    """Replay ``n`` generated requests (``seed``) through the zone; see the module docstring."""
    log = EventLog()
    # Sent to the zone's own hosts, so that its events name them.
    traffic = generate(n, seed=seed, domain=wb.zone(zone_id).name)
    run = Pipeline(wb, zone_id).replay(traffic, log=log, progress=False)
    actions = Counter(a or "pass" for a in run.actions)
    return Comparison(
        requests=run.requests,
        seed=seed,
        systems=list(run.systems),
        actions=dict(sorted(actions.items())),
        allowed=records(new_allows_old_blocked(log), ALLOWED_COLUMNS),
        legit=records(legit_blocked_by_new(log), LEGIT_COLUMNS),
        log=log,
    )
