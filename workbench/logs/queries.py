"""Canned queries over the event log, as plain functions returning pandas DataFrames.

The migration's questions: which requests the new WAF lets through that the old
one stopped (:func:`new_allows_old_blocked`), which legitimate requests the new
WAF stops (:func:`legit_blocked_by_new`), which rules act most
(:func:`top_rules`), actions over time (:func:`actions_over_time`), and each
rule's counts in the old and the new system (:func:`rule_comparison`).
They read the summaries kept on append (:mod:`workbench.logs.summary`), and
the whole table only for filters the summaries do not hold (a time range, actions
other than the ending ones, a rule mapping).

    >>> from workbench.logs.store import EventLog
    >>> log = EventLog()
    >>> _ = log.append([
    ...     {"ray_id": "r1", "datetime": "2026-01-01T00:00:00Z", "source": "firewallManaged",
    ...      "action": "log", "rule_id": "n1", "match_index": 1, "label": "sqli"},
    ...     {"ray_id": "r1", "datetime": "2026-01-01T00:00:00Z", "source": "waf",
    ...      "action": "block", "rule_id": "100015", "match_index": 0, "label": "sqli"}])
    >>> new_allows_old_blocked(log)[["ray_id", "old_action", "old_rules", "new_events"]].values.tolist()
    [['r1', 'block', '100015', 'n1:log']]
    >>> top_rules(log)[["rule_id", "events"]].values.tolist()
    [['n1', 1], ['100015', 1]]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from . import summary
from .schema import ENDING_ACTIONS, LEGIT_LABELS, TABLE
from .store import EventLog
from .views import NEW, OLD, column_name, in_list, legit_blocked_by_new_sql

_in = in_list


def _where(
    source: str | None = None,
    action: str | None = None,
    since: Any = None,
    until: Any = None,
) -> tuple[str, list[Any]]:
    parts, params = [], []
    for column, value in (("source", source), ("action", action)):
        if value is not None:
            parts.append(f"{column} = ?")
            params.append(value)
    if since is not None:
        parts.append("datetime >= ?::TIMESTAMP")
        params.append(_timestamp(since))
    if until is not None:
        parts.append("datetime <= ?::TIMESTAMP")
        params.append(_timestamp(until))
    return (" AND ".join(parts) if parts else "true"), params


def _timestamp(value: Any) -> str:
    """A time (datetime, pandas Timestamp or ISO text) as naive UTC text for DuckDB."""
    stamp = pd.Timestamp(value)
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return stamp.isoformat()


def new_allows_old_blocked(log: EventLog) -> Any:
    """Requests (by ray id) the old WAF blocked or challenged and the new WAF let through.

    One row per ray: time, host, path, query, label, the old WAF's ending
    action(s) and rules, and what the new WAF logged (``rule:action``, maybe
    empty). Candidates come from the old WAF's ending events, and only their
    rays are looked up among the new WAF's events.
    """
    summary.update(log.con)
    return log.query(summary.new_allows_old_blocked_sql())


def legit_blocked_by_new(
    log: EventLog,
    labels: Iterable[str] = LEGIT_LABELS,
    actions: Iterable[str] = ENDING_ACTIONS,
) -> Any:
    """Legitimate requests (traffic labels) the new WAF stopped, by rule, most first.

    ``actions`` defaults to every action that ends a request (a challenge stops a
    real user too); pass ``("block",)`` for blocks only.
    """
    labels, actions = list(labels), list(actions)
    if labels and sorted(actions) == sorted(ENDING_ACTIONS):
        summary.update(log.con)
        return log.query(summary.legit_blocked_by_new_sql(labels, column_name))
    return log.query(legit_blocked_by_new_sql(labels, actions))


def top_rules(
    log: EventLog,
    n: int = 10,
    *,
    source: str | None = None,
    action: str | None = None,
    since: Any = None,
    until: Any = None,
) -> Any:
    """The ``n`` rules with most events (a rule acts at most once per request), optionally filtered."""
    where, params = _where(source, action, since, until)
    if since is None and until is None:
        summary.update(log.con)
        return log.query(summary.top_rules_sql(where), [*params, int(n)])
    return log.query(
        f"""
        SELECT source, ruleset_id, rule_id, any_value(description) AS description,
            count(*) AS events, min(datetime) AS first_seen, max(datetime) AS last_seen
        FROM {TABLE} WHERE {where}
        GROUP BY source, ruleset_id, rule_id
        ORDER BY events DESC, source, rule_id
        LIMIT ?
        """,
        [*params, int(n)],
    )


_BUCKET = re.compile(r"\s*(\d+)\s*(second|minute|hour|day)s?\s*", re.IGNORECASE)
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def bucket_seconds(bucket: str | int | float | timedelta) -> int:
    """A bucket width in seconds from ``"5 minutes"``, a number of seconds or a timedelta.

    >>> bucket_seconds("5 minutes"), bucket_seconds(timedelta(hours=1)), bucket_seconds(30)
    (300, 3600, 30)
    """
    if isinstance(bucket, timedelta):
        seconds = int(bucket.total_seconds())
    elif isinstance(bucket, int | float) and not isinstance(bucket, bool):
        seconds = int(bucket)
    elif isinstance(bucket, str) and (m := _BUCKET.fullmatch(bucket)):
        seconds = int(m.group(1)) * _SECONDS[m.group(2).lower()]
    else:
        raise ValueError(f"bucket must be like '5 minutes', seconds or a timedelta, got {bucket!r}")
    if seconds < 1:
        raise ValueError(f"bucket must be at least one second, got {bucket!r}")
    return seconds


def actions_over_time(
    log: EventLog,
    bucket: str | int | float | timedelta = "1 minute",
    *,
    source: str | None = None,
    wide: bool = False,
) -> Any:
    """Events per time bucket and action (long: bucket, action, events; ``wide``: one column per action)."""
    where, params = _where(source)
    summary.update(log.con)
    frame = log.query(summary.actions_over_time_sql(where), [bucket_seconds(bucket), *params])
    if not wide:
        return frame
    return frame.pivot(index="bucket", columns="action", values="events").fillna(0).astype(int)


def rule_comparison(log: EventLog, mapping: Mapping[str, str] | None = None) -> Any:
    """Each rule's events in the old and the new WAF.

    Without ``mapping``, one row per rule id: ``old_events``, ``new_events`` and
    how many of each ended the request. With ``mapping`` (old rule id -> new
    rule id, see :func:`legacy_mapping`), one row per pair, with ``both``: the
    requests both rules acted on.
    """
    if mapping is None:
        summary.update(log.con)
        return log.query(summary.rule_comparison_sql())
    pairs = pd.DataFrame(
        {"old_rule_id": list(mapping), "new_rule_id": [mapping[k] for k in mapping]},
        dtype=object,
    )
    log.con.register("_wb_rule_pairs", pairs)
    try:
        return log.query(
            f"""
            WITH o AS (SELECT rule_id, ray_id, description FROM {TABLE} WHERE source = '{OLD}'
                       AND rule_id IN (SELECT old_rule_id FROM _wb_rule_pairs)),
                 n AS (SELECT rule_id, ray_id FROM {TABLE} WHERE source = '{NEW}'
                       AND rule_id IN (SELECT new_rule_id FROM _wb_rule_pairs)),
                 oc AS (SELECT rule_id, count(*) AS c, any_value(description) AS d FROM o GROUP BY 1),
                 nc AS (SELECT rule_id, count(*) AS c FROM n GROUP BY 1),
                 bc AS (SELECT p.old_rule_id, count(*) AS c FROM _wb_rule_pairs p
                        JOIN o ON o.rule_id = p.old_rule_id
                        JOIN n ON n.rule_id = p.new_rule_id AND n.ray_id = o.ray_id GROUP BY 1)
            SELECT p.old_rule_id, p.new_rule_id, oc.d AS description,
                coalesce(oc.c, 0) AS old_events, coalesce(nc.c, 0) AS new_events,
                coalesce(bc.c, 0) AS both,
                coalesce(oc.c, 0) - coalesce(bc.c, 0) AS old_only,
                coalesce(nc.c, 0) - coalesce(bc.c, 0) AS new_only
            FROM _wb_rule_pairs p
            LEFT JOIN oc ON oc.rule_id = p.old_rule_id
            LEFT JOIN nc ON nc.rule_id = p.new_rule_id
            LEFT JOIN bc ON bc.old_rule_id = p.old_rule_id
            ORDER BY old_events + new_events DESC, p.old_rule_id
            """
        )
    finally:
        log.con.unregister("_wb_rule_pairs")


def legacy_mapping(catalog: Any) -> dict[str, str]:
    """Old rule id -> new rule id, from an old-WAF catalogue whose rules name their ``new_id``."""
    out: dict[str, str] = {}
    for package in getattr(catalog, "packages", []):
        for group in package.groups:
            for rule in group.rules:
                if getattr(rule, "new_id", None):
                    out[str(rule.id)] = str(rule.new_id)
    return out
