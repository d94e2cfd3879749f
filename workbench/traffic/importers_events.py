"""Recorded security events: Logpush ``firewall_events`` (NDJSON) and the GraphQL export.

One event per rule that acted on a request, with its ray id. Both of the
platform's spellings are read: Logpush's (``RayID``, ``Action``, ``RuleID``,
``Source``, ``ClientRequestPath``..., values in lower case such as
``managedchallenge`` and ``firewallmanaged``) and the GraphQL
``firewallEventsAdaptive`` dataset's (``rayName``, ``action``, ``ruleId``,
``rulesetId``, ``source``, ``clientRequestPath``..., values such as
``managed_challenge`` and ``firewallManaged``), as NDJSON lines, a JSON array
of events, or the GraphQL response saved whole
(``data.viewer.zones[].firewallEventsAdaptive``). Values are folded to one
spelling (:mod:`workbench.traffic.decisions`). The workbench's own events
(``wb.traffic.events``) read the same way.

A request's events make its recorded decision: the rules in the order they
acted (``MatchIndex`` 0 is the last), the outcome of the one that ended it,
``allow`` when none did. :func:`attach_events` joins the decisions to imported
requests: by ray id, or, for a log without ray ids (combined logs, HAR entries
without ``cf-ray``), by time to the second, path and query (and client IP
when both sides have one) when one request and one ray fit each other alone.

    >>> lines = [
    ...   '{"RayID": "8f1c2a3b4d5e6f70", "Action": "log", "Source": "firewallmanaged",'
    ...   ' "RuleID": "r1", "MatchIndex": 1, "Datetime": "2026-03-02T09:00:01Z", "ClientRequestPath": "/a"}',
    ...   '{"rayName": "8f1c2a3b4d5e6f70", "action": "managed_challenge", "source": "firewallCustom",'
    ...   ' "ruleId": "r9", "matchIndex": 0}']
    >>> events = read_firewall_events(lines)
    >>> [(e.action, e.source) for e in events]
    [('log', 'firewallManaged'), ('managed_challenge', 'firewallCustom')]
    >>> decided = events.decisions()["8f1c2a3b4d5e6f70"]
    >>> decided.outcome, [r.rule_id for r in decided.rules], decided.origin
    ('managed_challenge', ['r1', 'r9'], 'firewall_events')
    >>> read_firewall_events(['{"RayID": "ab", "Action": "explode"}'])
    Traceback (most recent call last):
    ...
    workbench.traffic.log_reading.LogLineError: line 1: Action: 'explode' is not an action the platform logs (known: ...)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..core.errors import json_kind
from .decisions import Recorded, RuleMatch, action_spelling, source_spelling
from .log_reading import (
    BadValue,
    Imported,
    LogLineError,
    each_item,
    element_lines,
    json_document,
    json_object,
    log_time,
    source_text,
)

#: Each event field as ``(attribute, Logpush name, GraphQL name)``.
EVENT_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("ray_id", "RayID", "rayName"),
    ("action", "Action", "action"),
    ("source", "Source", "source"),
    ("rule_id", "RuleID", "ruleId"),
    ("ruleset_id", "RulesetID", "rulesetId"),
    ("description", "Description", "description"),
    ("match_index", "MatchIndex", "matchIndex"),
    ("datetime", "Datetime", "datetime"),
    ("host", "ClientRequestHost", "clientRequestHTTPHost"),
    ("method", "ClientRequestMethod", "clientRequestHTTPMethodName"),
    ("path", "ClientRequestPath", "clientRequestPath"),
    ("query", "ClientRequestQuery", "clientRequestQuery"),
    ("client_ip", "ClientIP", "clientIP"),
)
#: The error of a file in none of the formats.
NOT_EVENTS = (
    "not firewall events: neither NDJSON lines of events, a JSON array of events, "
    "nor a GraphQL response (data.viewer.zones[].firewallEventsAdaptive)"
)
#: Where a saved GraphQL response keeps its events.
GRAPHQL_PATH = ("data", "viewer", "zones", "*", "firewallEventsAdaptive")


@dataclass(frozen=True)
class FirewallEvent:
    """One recorded event: a rule that acted on the request ``ray_id`` (one spelling)."""

    ray_id: str
    action: str
    source: str = "unknown"
    rule_id: str = ""
    ruleset_id: str = ""
    description: str = ""
    match_index: int | None = None
    datetime: datetime | None = None
    host: str = ""
    method: str = ""
    path: str = ""
    query: str = ""
    client_ip: str = ""
    line: int = 0

    def match(self) -> RuleMatch:
        """The rule that acted, as a recorded decision lists it."""
        return RuleMatch(self.rule_id, self.source, self.action, self.ruleset_id, self.description)


@dataclass
class FirewallEvents:
    """What :func:`read_firewall_events` gave: the events, and the lines it skipped."""

    events: list[FirewallEvent] = field(default_factory=list)
    errors: list[LogLineError] = field(default_factory=list)
    format: str = "firewall_events"

    @property
    def skipped(self) -> int:
        """How many lines (or entries) were skipped as bad."""
        return len(self.errors)

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[FirewallEvent]:
        return iter(self.events)

    def decisions(self) -> dict[str, Recorded]:
        """Each ray id's recorded decision (see the module docstring)."""
        by_ray: dict[str, list[FirewallEvent]] = {}
        for event in self.events:
            by_ray.setdefault(event.ray_id, []).append(event)
        out = {}
        for ray, events in by_ray.items():
            if all(e.match_index is not None for e in events):
                events = sorted(events, key=lambda e: -(e.match_index or 0))
            out[ray] = Recorded.of((e.match() for e in events), origin="firewall_events")
        return out


def read_firewall_events(source: Any, *, skip_bad: bool = False) -> FirewallEvents:
    """Events from Logpush ``firewall_events`` NDJSON or a GraphQL export (module docstring).

    ``source`` is a path, the text, or its lines. A line (or an entry of an
    array) that cannot be read raises :class:`LogLineError` with its line and
    the field at fault, or with ``skip_bad=True`` is counted and skipped.
    ``RayID`` (``rayName``) and ``Action`` (``action``) are required; every
    other field may be missing.
    """
    text = source_text(source).lstrip("\ufeff")
    if not text.strip():
        return FirewallEvents()
    lines = text.splitlines()
    # NDJSON when one of the first two lines is an event on its own (the first may be bad).
    firsts = [line for line in lines if line.strip()][:2]
    if not any(_one_object(line) and not _is_response(line) for line in firsts):
        return _document(text, skip_bad)
    out = FirewallEvents(format="firewall_events")
    numbered = ((n, line) for n, line in enumerate(lines, 1) if line.strip())
    for n, fields in each_item(numbered, lambda t: _fields(json_object(t)), skip_bad, out.errors):
        out.events.append(FirewallEvent(**fields, line=n))
    return out


def _one_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def _is_response(text: str) -> bool:
    value = json.loads(text)
    return "data" in value or "errors" in value


def _document(text: str, skip_bad: bool) -> FirewallEvents:
    """A JSON array of events, or a GraphQL response holding them."""
    if text.strip()[:1] not in ("{", "["):
        line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip())
        raise LogLineError(line, NOT_EVENTS)
    document = json_document(text, "the events file")
    if isinstance(document, list):
        items, lines = document, element_lines(text, [])
        fmt = "graphql"
    elif isinstance(document, dict) and "data" in document:
        errors = document.get("errors")
        if errors:
            said = errors[0].get("message") if isinstance(errors[0], dict) else errors[0]
            raise LogLineError(1, f"the GraphQL response holds errors: {said}", "errors")
        items = _graphql_events(document)
        lines = element_lines(text, GRAPHQL_PATH)
        fmt = "graphql"
    else:
        raise LogLineError(1, NOT_EVENTS)
    if len(lines) != len(items):
        lines = [1] * len(items)
    out = FirewallEvents(format=fmt)
    numbered = zip(lines, enumerate(items), strict=True)
    for line, fields in each_item(numbered, _item_fields, skip_bad, out.errors):
        out.events.append(FirewallEvent(**fields, line=line))
    return out


def _item_fields(numbered: tuple[int, Any]) -> dict[str, Any]:
    """The fields of event ``k`` of a JSON array (see :func:`_fields`)."""
    k, item = numbered
    if not isinstance(item, dict):
        raise BadValue(f"event {k} must be an object, got {json_kind(item)}")
    return _fields(item)


def _graphql_events(document: dict[str, Any]) -> list[Any]:
    value: Any = document
    for step in GRAPHQL_PATH[:3]:
        value = value.get(step) if isinstance(value, dict) else None
    if not isinstance(value, list):
        raise LogLineError(1, "no data.viewer.zones array in the GraphQL response", "data")
    items: list[Any] = []
    for zone in value:
        events = zone.get(GRAPHQL_PATH[-1]) if isinstance(zone, dict) else None
        if events is None:
            continue
        if not isinstance(events, list):
            raise LogLineError(
                1, f"firewallEventsAdaptive must be an array, got {json_kind(events)}", "data"
            )
        items.extend(events)
    return items


def _fields(record: dict[str, Any]) -> dict[str, Any]:
    """The event's fields by attribute, checked and in one spelling."""
    out: dict[str, Any] = {}
    for attribute, logpush, graphql in EVENT_FIELDS:
        name = logpush if logpush in record else graphql
        value = record.get(name)
        if value is None:
            continue
        if attribute == "match_index":
            if isinstance(value, bool) or not isinstance(value, int):
                raise BadValue(f"{name} must be an integer, got {json_kind(value)}", name)
        elif attribute == "datetime":
            value = log_time(value, name)
        elif attribute == "rule_id" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # the previous WAF's numeric rule ids
        elif not isinstance(value, str):
            raise BadValue(f"{name} must be a string, got {json_kind(value)}", name)
        out[attribute] = value
    for attribute, logpush, graphql in EVENT_FIELDS[:2]:
        if not out.get(attribute):
            raise BadValue(f"no {logpush} (or {graphql})", logpush)
    try:
        out["action"] = action_spelling(out["action"])
    except ValueError as exc:
        name = "Action" if "Action" in record else "action"
        raise BadValue(f"{name}: {exc}", name) from None
    if "source" in out:
        out["source"] = source_spelling(out["source"])
    return out


def attach_events(imported: Imported, events: FirewallEvents) -> Imported:
    """``imported`` with each request's recorded decision taken from ``events``.

    A request with a ray id takes its ray's events; one without takes the
    events of a ray whose first event has its time (to the second), path and
    query (and client IP when both have one), when that ray fits no other
    request and no other ray fits this one. A request no event
    fits keeps the decision its own log recorded (the Security fields), else
    has none: events are often sampled or filtered, so no event does not
    mean no action. ``imported`` itself is not changed.
    """
    decided = events.decisions()
    first: dict[str, FirewallEvent] = {}
    for event in events:
        first.setdefault(event.ray_id, event)
    by_place: dict[tuple[Any, ...], list[str]] = {}
    for ray, event in first.items():
        if event.datetime is not None:
            by_place.setdefault(_place(event.datetime, event.path, event.query), []).append(ray)
    taken = {m.ray_id for m in imported.logged if m.ray_id}
    fits: dict[int, list[str]] = {}
    for i, request in enumerate(imported.requests):
        if imported.logged_at(i).ray_id or request.timestamp is None:
            continue
        place = _place(request.timestamp, request.path, request.query)
        fits[i] = [
            r
            for r in by_place.get(place, [])
            if r not in taken
            and (not first[r].client_ip or not request.client_ip
                 or first[r].client_ip == request.client_ip)
        ]  # fmt: skip
    wanted = Counter(r for rays in fits.values() for r in rays)
    logged = []
    for i in range(len(imported.requests)):
        seen = imported.logged_at(i)
        ray = seen.ray_id
        if not ray and len(fits.get(i, [])) == 1 and wanted[fits[i][0]] == 1:
            ray = fits[i][0]  # one request fits this ray, and this ray alone fits it
        found = decided.get(ray) if ray else None
        logged.append(replace(seen, ray_id=ray, recorded=found or seen.recorded))
    return replace(imported, logged=logged)


def _place(when: datetime, path: str, query: str) -> tuple[Any, ...]:
    return (int(when.timestamp()), path or "/", query.lstrip("?"))
