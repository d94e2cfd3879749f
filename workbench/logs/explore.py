"""What the events panels ask of an event log: one request's events, totals, per-rule and
per-system counts, a zone's copy. The panels render the answers; the SQL lives here.

    >>> from .synthetic import add_synthetic_events
    >>> log = EventLog(); _ = add_synthetic_events(log, 40, seed=1)
    >>> totals(log)[:2]
    (40, 20)
    >>> ray = first_ray(log); len(ray_events(log, ray)) >= 1
    True
    >>> sorted(actions_per_system(log).source.unique())
    ['firewallManaged', 'waf']
"""

from __future__ import annotations

from typing import Any

from ..core.security import NEW_WAF, OLD_WAF
from .schema import TABLE
from .store import EventLog

#: The SQL a panel offers to start from: the newest events.
EXAMPLE_SQL = (
    "SELECT ray_id, datetime, source, action, rule_id, description, method, host, path, query\n"
    f"FROM {TABLE}\nORDER BY datetime DESC, ray_id, match_index DESC\nLIMIT 50"
)

_BY_RULE = f"""
    WITH top AS (
        SELECT source, rule_id, count(*) AS total FROM {TABLE}
        GROUP BY ALL ORDER BY total DESC, source, rule_id LIMIT ?)
    SELECT e.source, e.rule_id, any_value(e.description) AS description, e.action,
        count(*) AS events, any_value(top.total) AS total
    FROM {TABLE} e JOIN top ON e.source = top.source AND e.rule_id IS NOT DISTINCT FROM top.rule_id
    GROUP BY e.source, e.rule_id, e.action ORDER BY total DESC, e.source, e.rule_id, e.action
"""

_PER_SYSTEM = f"""
    SELECT source, action, count(*) AS events, count(DISTINCT ray_id) AS requests FROM {TABLE}
    WHERE source IN ('{OLD_WAF}', '{NEW_WAF}') GROUP BY ALL ORDER BY source DESC, events DESC, action
"""


def totals(log: EventLog) -> tuple[int, int, Any, Any]:
    """``(events, requests, first time, last time)`` of the log (times None when empty)."""
    events, rays, first, last = log.con.execute(
        f"SELECT count(*), count(DISTINCT ray_id), min(datetime), max(datetime) FROM {TABLE}"
    ).fetchall()[0]
    return int(events), int(rays), first, last


def span_seconds(log: EventLog) -> float | None:
    """Seconds from the first event to the last (None: no events)."""
    span = log.con.execute(
        f"SELECT epoch(max(datetime)) - epoch(min(datetime)) FROM {TABLE}"
    ).fetchall()[0][0]
    return None if span is None else float(span)


def first_ray(log: EventLog) -> str | None:
    """The ray id of the log's first event (by time, then ray id), or None."""
    found = log.con.execute(
        f"SELECT ray_id FROM {TABLE} ORDER BY datetime, ray_id LIMIT 1"
    ).fetchall()
    return found[0][0] if found else None


def ray_events(log: EventLog, ray_id: str) -> Any:
    """Every event of one request, in the order the rules acted (a DataFrame)."""
    return log.query(f"SELECT * FROM {TABLE} WHERE ray_id = ? ORDER BY match_index DESC", [ray_id])


def zone_events(log: EventLog, zone_id: str) -> EventLog:
    """A new event log holding a copy of one zone's events."""
    copy = EventLog()
    copy.append(log.query(f"SELECT * FROM {TABLE} WHERE zone_id = ?", [zone_id]))
    return copy


def rule_actions(log: EventLog, n: int) -> Any:
    """The ``n`` rules with most events, one row per (rule, action): ``source``, ``rule_id``,
    ``description``, ``action``, ``events`` and the rule's ``total``."""
    return log.query(_BY_RULE, [n])


def new_rule_descriptions(log: EventLog) -> dict[str, str]:
    """Each new-WAF rule id's description, as its events give it."""
    rows = log.con.execute(
        f"SELECT rule_id, any_value(description) FROM {TABLE} "
        f"WHERE source = '{NEW_WAF}' GROUP BY rule_id"
    ).fetchall()
    return dict(rows)


def actions_per_system(log: EventLog) -> Any:
    """Events and requests per action of the old and the new WAF (a DataFrame)."""
    return log.query(_PER_SYSTEM)


def requests_seen(log: EventLog, source: str) -> int:
    """How many requests ``source`` logged or acted on."""
    return int(
        log.con.execute(
            f"SELECT count(DISTINCT ray_id) FROM {TABLE} WHERE source = ?", [source]
        ).fetchall()[0][0]
    )
