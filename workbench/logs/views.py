"""Named views of the event log: one per event source, and the canned queries' default forms.

Each view is plain SQL on the events table, so notebooks and tools can read
them by name (``SELECT * FROM new_allows_old_blocked``). The functions of
:mod:`workbench.logs.queries` give the same rows from the summaries of
:mod:`workbench.logs.summary` (fast at ten million events), and run this SQL
over the table for arguments the summaries do not cover.

    >>> sorted(VIEWS)[:3]
    ['custom_rule_events', 'firewall_rule_events', 'legit_blocked_by_new']
    >>> "security_events" in VIEWS["old_waf_events"]
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .schema import ENDING_ACTIONS, LEGIT_LABELS, TABLE

OLD, NEW = "waf", "firewallManaged"

#: View name -> event source: each a plain filter of the table.
SOURCE_VIEWS = {
    "firewall_rule_events": "firewallRules",
    "custom_rule_events": "firewallCustom",
    "old_waf_events": OLD,
    "new_waf_events": NEW,
}


def quoted(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def in_list(values: Iterable[str]) -> str:
    """A SQL ``IN`` list of string literals."""
    return "(" + ", ".join(quoted(str(v)) for v in values) + ")"


def any_of(column: str, values: Iterable[str]) -> str:
    """``column`` equal to one of ``values``, as a chain of ``OR``.

    DuckDB plans a long ``IN`` list in a filter as a join against the list; a
    chain of comparisons is evaluated in the scan and is faster over millions of rows.

    >>> any_of("action", ["block", "log"])
    "(action = 'block' OR action = 'log')"
    """
    terms = [f"{column} = {quoted(str(v))}" for v in values]
    return "(" + " OR ".join(terms) + ")" if terms else "false"


def column_name(text: str) -> str:
    """A quoted SQL identifier."""
    return '"' + text.replace('"', '""') + '"'


def new_allows_old_blocked_sql() -> str:
    """Rays the old WAF blocked or challenged and the new WAF let through (see the query)."""
    ending = in_list(ENDING_ACTIONS)
    return f"""
        WITH old AS (
            SELECT ray_id, datetime, host, path, query, label, action, rule_id, match_index
            FROM {TABLE} WHERE source = '{OLD}' AND {any_of("action", ENDING_ACTIONS)}
        ), new AS (
            SELECT ray_id, action, rule_id, match_index FROM {TABLE}
            WHERE source = '{NEW}' AND ray_id IN (SELECT ray_id FROM old)
        ), new_by_ray AS (
            SELECT ray_id, bool_or(action IN {ending}) AS stopped,
                string_agg(rule_id || ':' || action, ',' ORDER BY match_index DESC) AS events
            FROM new GROUP BY ray_id
        )
        SELECT o.ray_id, min(o.datetime) AS datetime, any_value(o.host) AS host,
            any_value(o.path) AS path, any_value(o.query) AS query, any_value(o.label) AS label,
            string_agg(DISTINCT o.action, ',' ORDER BY o.action) AS old_action,
            string_agg(o.rule_id, ',' ORDER BY o.match_index DESC) AS old_rules,
            coalesce(any_value(n.events), '') AS new_events
        FROM old o LEFT JOIN new_by_ray n USING (ray_id)
        WHERE NOT coalesce(n.stopped, false)
        GROUP BY o.ray_id
        ORDER BY datetime, o.ray_id
    """


def legit_blocked_by_new_sql(
    labels: Iterable[str] = LEGIT_LABELS, actions: Iterable[str] = ENDING_ACTIONS
) -> str:
    """Legitimate requests the new WAF stopped, by rule (see the query)."""
    labels = list(labels)
    per_label = "".join(
        f", count(*) FILTER (WHERE label = {quoted(label)}) AS {column_name(label)}"
        for label in labels
    )
    return f"""
        SELECT ruleset_id, rule_id, any_value(description) AS description,
            count(DISTINCT ray_id) AS requests{per_label}, min(path) AS example_path
        FROM {TABLE}
        WHERE source = '{NEW}' AND {any_of("action", actions)} AND {any_of("label", labels)}
        GROUP BY ruleset_id, rule_id
        ORDER BY requests DESC, rule_id
    """


def rule_comparison_sql() -> str:
    """Each rule's events in the old and the new WAF, by rule id (see the query).

    Counted first per (rule, source, action), a few hundred groups, then folded
    per rule: one narrow aggregate over the table instead of four filtered counts per row.
    """
    ending = in_list(ENDING_ACTIONS)

    def total(where: str) -> str:
        return f"coalesce(sum(events) FILTER (WHERE {where}), 0)::BIGINT"

    return f"""
        WITH per_action AS (
            SELECT rule_id, source, action, any_value(description) AS description,
                count(*) AS events
            FROM {TABLE} WHERE source = '{OLD}' OR source = '{NEW}'
            GROUP BY rule_id, source, action
        )
        SELECT rule_id, any_value(description) AS description,
            {total(f"source = '{OLD}'")} AS old_events,
            {total(f"source = '{NEW}'")} AS new_events,
            {total(f"source = '{OLD}' AND action IN {ending}")} AS old_ending,
            {total(f"source = '{NEW}' AND action IN {ending}")} AS new_ending
        FROM per_action
        GROUP BY rule_id ORDER BY old_events + new_events DESC, rule_id
    """


#: View name -> its SQL.
VIEWS: dict[str, str] = {
    **{
        view: f"SELECT * FROM {TABLE} WHERE source = {quoted(source)}"
        for view, source in SOURCE_VIEWS.items()
    },
    "new_allows_old_blocked": new_allows_old_blocked_sql(),
    "legit_blocked_by_new": legit_blocked_by_new_sql(),
    "rule_comparison": rule_comparison_sql(),
}


def create_views(con: Any) -> None:
    """Create (or replace) every view of :data:`VIEWS` on ``con``."""
    for name, sql in VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {column_name(name)} AS {sql}").fetchall()
