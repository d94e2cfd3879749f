"""``wb.traffic``: requests replayed through a zone into the Workbench's event log, and queried.

One :class:`~workbench.logs.EventLog` per Workbench holds the events of every
zone (its ``zone_id`` column tells them apart). :meth:`TrafficService.submit`
runs submitted requests (JSON, see :mod:`workbench.traffic.submitted`) one at
a time through the zone's pipeline, the per-request path, so each answer's
events are exactly the pipeline's; :meth:`TrafficService.replay` runs many
(generated or imported) through the whole-table path into the same log.
:meth:`TrafficService.events` pages a zone's events as the analytics API
names them (both name sets, filters by either). :meth:`TrafficService.agreement`
replays an imported log and compares with the decisions the platform recorded
(:mod:`workbench.traffic.agreement`).

A request's ``action`` is its final action, or ``"allow"`` when nothing ended
it (it reached the origin; events that only logged or skipped may exist).
Times come from the virtual clock, which moves 10 ms per request.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="enterprise")
    >>> _ = wb.firewall.create_rules(zone.id, [
    ...     {"filter": {"expression": 'http.request.uri.path eq "/admin"'}, "action": "block"}])
    >>> [done] = wb.traffic.submit(zone.id, [{"method": "GET", "url": "https://example.com/admin"}])
    >>> done.action, [(e["source"], e["ruleId"], e["datetime"]) for e in done.events][:1]
    ('block', [('firewallRules', ..., '2026-01-01T00:00:00Z')])
    >>> page = wb.traffic.events(zone.id, source="firewallRules", per_page=5)
    >>> page.result_info["total_count"], page.items[0]["rayName"] == done.ray_id
    (1, True)
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import duckdb

from ..core.clock import iso
from ..core.errors import ValidationError
from ..core.paging import Page
from ..logs import ALIASES, EventLog, find_events, to_api
from ..logs.schema import TABLE
from ..replay import Pipeline, Replay
from .log_reading import Imported
from .request import Request
from .submitted import read_submitted

if TYPE_CHECKING:
    from ..core.platform import Workbench
    from .agreement import Agreement
    from .importers_events import FirewallEvents

#: The action of a request nothing ended.
ALLOWED = "allow"
#: Short filter names besides the logs package's (``rule``, ``ray``).
SHORT_NAMES = {"ruleset": "ruleset_id"}
#: Filter suffixes (GraphQL style); ``_in`` takes a list.
SUFFIXES = ("_in", "_geq", "_leq", "_gt", "_lt", "_neq")
#: Orders the events list takes: ``order`` (GraphQL names) or ``direction`` (v4 lists).
ORDERS = ("datetime_DESC", "datetime_ASC")
DIRECTIONS = {"desc": "datetime_DESC", "asc": "datetime_ASC"}
_INTEGERS = ("score", "paranoia_level", "match_index")
_TIME_EXAMPLE = "2026-01-01T00:00:00Z"
_WHOLE = re.compile(r"-?[0-9]{1,10}")


@dataclass
class Outcome:
    """One submitted request: its ray id, time, action (see the module docstring) and events."""

    ray_id: str
    datetime: datetime
    action: str
    events: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """The request as the HTTP extension answers it."""
        return {
            "ray_id": self.ray_id,
            "datetime": iso(self.datetime),
            "action": self.action,
            "events": self.events,
        }


class TrafficService:
    """Replays into one event log per Workbench, and the zone's view of it (one lock for all)."""

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self.lock = threading.RLock()
        self.log = wb.logs  # the platform's, shared with the storage runtime's billing

    def submit(self, zone_id: str, body: Any) -> list[Outcome]:
        """Run submitted requests (a JSON array) through the zone, one at a time; log their events."""
        requests = read_submitted(body)
        with self.lock:
            zone = self.wb.zone(zone_id)
            run = Pipeline(self.wb, zone.id).replay(
                requests, path="request", log=self.log, progress=False
            )
        by_ray: dict[str, list[dict[str, Any]]] = {ray: [] for ray in run.ray_ids}
        for event in run.events.to_dict("records"):
            by_ray[event["ray_id"]].append(to_api(event))
        return [
            Outcome(ray, _when(ms), action or ALLOWED, by_ray[ray])
            for ray, ms, action in zip(run.ray_ids, run.times_ms, run.actions, strict=True)
        ]

    def replay(self, zone_id: str, requests: Iterable[Any], **options: Any) -> Replay:
        """Replay many requests through the zone into the log (``Pipeline.replay``'s options)."""
        with self.lock:
            zone = self.wb.zone(zone_id)
            return Pipeline(self.wb, zone.id).replay(requests, log=self.log, **options)

    def agreement(
        self,
        zone_id: str,
        imported: Imported | Iterable[Any],
        *,
        events: FirewallEvents | None = None,
        rule_ids: Mapping[str, str] | None = None,
    ) -> Agreement:
        """Replay imported requests through the zone and compare with their recorded decisions.

        ``imported`` is what a reader gave (:mod:`workbench.traffic.importers`,
        :mod:`~workbench.traffic.importers_har`); ``events``
        (:func:`~workbench.traffic.importers_events.read_firewall_events`)
        supplies recorded decisions joined by ray id, or by time and path.
        ``rule_ids`` maps the log's rule ids to the zone's where an import gave
        new ones. The replay's events go into the log like any replay's. See
        :mod:`workbench.traffic.agreement` for the report.
        """
        from .agreement import compare
        from .decisions import replay_decisions
        from .importers_events import attach_events

        if not isinstance(imported, Imported):
            imported = Imported(requests=[Request.from_raw(r) for r in imported])
        if events is not None:
            imported = attach_events(imported, events)
        with self.lock:
            zone = self.wb.zone(zone_id)
            run = self.replay(zone.id, imported.requests, progress=False)
        return compare(
            imported,
            replay_decisions(run),
            simulated_ray_ids=run.ray_ids,
            rule_ids=rule_ids,
            zone=zone.name,
        )

    def events(
        self,
        zone_id: str,
        /,  # so that a filter named zone_id (refused below) is no clash
        *,
        page: Any = None,
        per_page: Any = None,
        order: Any = None,
        direction: Any = None,
        **filters: Any,
    ) -> Page[dict[str, Any]]:
        """One page of the zone's events, newest first unless ``order``/``direction`` say otherwise.

        Filters are those of :func:`workbench.logs.find_events` (table names,
        analytics aliases, ``rule``, ``ray``, ``since``, ``until``, suffixes
        ``_in``, ``_geq``...) plus ``ruleset``; a bad one raises ValidationError.
        """
        zone = self.wb.zone(zone_id)
        wanted = dict(_checked(key, value) for key, value in filters.items() if value is not None)
        with self.lock:
            try:
                return find_events(
                    self.log,
                    page=page,
                    per_page=per_page,
                    order=_order(order, direction),
                    zone_id=zone.id,
                    **wanted,
                )
            except ValueError as exc:  # an unknown field, named by the logs package
                raise ValidationError(str(exc), source={"parameter": "filters"}) from None
            except duckdb.Error as exc:  # a value the column's type cannot take
                raise ValidationError(f"a filter value does not fit its field: {exc}") from None

    def zone_log(self, zone_id: str) -> EventLog:
        """A new EventLog holding a copy of the zone's events now (for queries about one zone)."""
        zone = self.wb.zone(zone_id)
        copy = EventLog()
        with self.lock:
            frame = self.log.query(
                f"SELECT * FROM {TABLE} WHERE zone_id = ? "
                "ORDER BY datetime, ray_id, match_index DESC",
                [zone.id],
            )
        copy.append(frame)
        return copy


def query_filters(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Query-string pairs as :meth:`TrafficService.events` takes them.

    A ``_in`` filter takes repeated or comma-separated values; any other name
    may appear once.

    >>> query_filters([("ruleId", "a"), ("source_in", "waf,firewallManaged"), ("page", "2")])
    {'ruleId': 'a', 'source_in': ['waf', 'firewallManaged'], 'page': '2'}
    """
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key.endswith("_in"):
            out.setdefault(key, []).extend(v for v in value.split(",") if v)
        elif key in out:
            raise ValidationError(
                f"{key} is given twice; give it once (or use {key}_in for several values)",
                source={"parameter": key},
            )
        else:
            out[key] = value
    return out


def _when(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _order(order: Any, direction: Any) -> str:
    if order is not None and direction is not None:
        raise ValidationError("give order or direction, not both", source={"parameter": "order"})
    if direction is not None:
        if str(direction).lower() not in DIRECTIONS:
            raise ValidationError(
                f"direction must be asc or desc, got {direction!r}",
                source={"parameter": "direction"},
            )
        return DIRECTIONS[str(direction).lower()]
    if order is None:
        return "datetime_DESC"
    if order not in ORDERS:
        raise ValidationError(
            f"order must be one of {', '.join(ORDERS)}, got {order!r}",
            source={"parameter": "order"},
        )
    return str(order)


def _base(key: str) -> tuple[str, str]:
    """``(field, suffix)`` of a filter key: ``ruleId_in`` -> ``("ruleId", "_in")``."""
    for suffix in SUFFIXES:
        if key.endswith(suffix) and key[: -len(suffix)]:
            return key[: -len(suffix)], suffix
    return key, ""


def _checked(key: str, value: Any) -> tuple[str, Any]:
    """``(key, value)`` as find_events takes them, or a ValidationError naming the problem."""
    name, suffix = _base(key)
    if name in ("zone", "zone_id"):
        raise ValidationError(
            f"{key}: the zone is the one in the path; events of other zones are not listed",
            source={"parameter": key},
        )
    column = SHORT_NAMES.get(name, ALIASES.get(name, name))
    if key in ("since", "until"):
        column = "datetime"
    values = value if isinstance(value, list) else [value]
    if column == "datetime":
        for v in values:
            _iso_time(key, v)
    elif column in _INTEGERS:
        for v in values:
            if not (isinstance(v, int) or (isinstance(v, str) and _WHOLE.fullmatch(v))):
                raise ValidationError(
                    f"{key} must be a whole number, got {v!r}", source={"parameter": key}
                )
    if suffix == "_in" and not isinstance(value, list):
        value = [value]
    if name in SHORT_NAMES:
        return SHORT_NAMES[name] + suffix, value
    return key, value


def _iso_time(key: str, value: Any) -> None:
    if isinstance(value, datetime):
        return
    text = str(value)
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise ValidationError(
            f"{key} must be an ISO 8601 time such as {_TIME_EXAMPLE}, got {value!r}",
            source={"parameter": key},
        ) from None
