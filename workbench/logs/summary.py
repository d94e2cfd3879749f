"""Summaries of the event log kept next to it, so the canned queries need not scan every event.

Each write through :class:`~workbench.logs.store.EventLog` (``append``,
``load_parquet``, the synthetic events) folds the new rows, and only them, into
small tables in the schema ``wb_summary``:

* ``rule_counts``: events per (source, ruleset, rule, action, label) with the
  first and last time, a description and the smallest path;
* ``per_second``: events per (second, source, action);
* ``stop_rays`` / ``stop_counts``: the new WAF's (rule, ray) pairs that ended a
  request, with the ray's labels, and how many per (rule, labels);
* ``old_stops`` / ``new_of_old``: the old WAF's ending events, and the new
  WAF's events on those rays (with ``new_rays``, hashes of the rays the new WAF
  saw, so a later old event finds earlier new ones without a scan).

New rows are those whose ``rowid`` is above every row already folded (DuckDB
gives appended rows higher row ids). A log changed behind the log's back is
caught up before the next canned query: a direct ``INSERT`` is folded, a
``DELETE`` makes the summaries rebuild from the table. An ``UPDATE`` of events
in place is not seen (the log is append-only; :func:`create` rebuilds).

    >>> from workbench.logs.store import EventLog
    >>> log = EventLog()
    >>> _ = log.append([{"ray_id": "r1", "datetime": "2026-01-01T00:00:00Z", "source": "waf",
    ...     "action": "block", "rule_id": "100015", "match_index": 0, "label": "sqli"}])
    >>> log.con.execute("SELECT rule_id, events FROM wb_summary.rule_counts").fetchall()
    [('100015', 1)]
"""

from __future__ import annotations

from typing import Any

from .schema import ENDING_ACTIONS, TABLE

SCHEMA = "wb_summary"
OLD, NEW = "waf", "firewallManaged"


def _any_of(column: str, values: tuple[str, ...]) -> str:
    return "(" + " OR ".join(f"{column} = '{v}'" for v in values) + ")"


_ENDING = _any_of("action", ENDING_ACTIONS)
_SAME_KEY = (
    "a.ruleset_id IS NOT DISTINCT FROM b.ruleset_id AND a.rule_id IS NOT DISTINCT FROM b.rule_id "
    "AND a.ray_id = b.ray_id"
)

_TABLES = {
    "state": "boundary BIGINT, kept BIGINT",
    "rule_counts": "source VARCHAR, ruleset_id VARCHAR, rule_id VARCHAR, action VARCHAR, "
    "label VARCHAR, events BIGINT, description VARCHAR, first_seen TIMESTAMP, "
    "last_seen TIMESTAMP, example_path VARCHAR",
    "per_second": "second TIMESTAMP, source VARCHAR, action VARCHAR, events BIGINT",
    "stop_rays": "ruleset_id VARCHAR, rule_id VARCHAR, ray_id VARCHAR, labels VARCHAR[]",
    "stop_counts": "ruleset_id VARCHAR, rule_id VARCHAR, labels VARCHAR[], rays BIGINT",
    "old_stops": "ray_id VARCHAR, datetime TIMESTAMP, host VARCHAR, path VARCHAR, "
    "query VARCHAR, label VARCHAR, action VARCHAR, rule_id VARCHAR, match_index INTEGER",
    "new_of_old": "ray_id VARCHAR, action VARCHAR, rule_id VARCHAR, match_index INTEGER",
    "new_rays": "h UBIGINT",
}
#: Above this many rows, ``rule_counts`` is folded to one row per key again.
_COMPACT_AT = 200_000


def _run(con: Any, sql: str) -> list[Any]:
    return con.execute(sql).fetchall()


def create(con: Any) -> None:
    """Create the summary tables (empty) on ``con`` and fold in the events already there."""
    _run(con, f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    for name, columns in _TABLES.items():
        _run(con, f"CREATE OR REPLACE TABLE {SCHEMA}.{name} ({columns})")
    _run(con, f"INSERT INTO {SCHEMA}.state VALUES (0, 0)")
    update(con)


def covered(con: Any) -> tuple[int, int]:
    """The first row id the summaries have not seen, and how many events they cover."""
    boundary, kept = _run(con, f"SELECT boundary, kept FROM {SCHEMA}.state")[0]
    return int(boundary), int(kept)


def update(con: Any) -> None:
    """Fold the events the summaries do not cover yet (rebuild if covered events went away).

    Row ids are stable and a new row's is above every earlier one, so the rows
    below ``boundary`` are the covered ones: if fewer are left, some were deleted.
    """
    boundary, kept = covered(con)
    if _count(con, f"rowid < {boundary}") != kept:
        create(con)
        return
    total = _count(con, "true")
    if total == kept:
        return
    _fold(con, boundary)
    top = _run(con, f"SELECT max(rowid) FROM {TABLE} WHERE rowid >= {boundary}")[0][0]
    _run(con, f"UPDATE {SCHEMA}.state SET boundary = {int(top) + 1}, kept = {total}")


def _count(con: Any, where: str) -> int:
    return int(_run(con, f"SELECT count(*) FROM {TABLE} WHERE {where}")[0][0])


def _fold(con: Any, start: int) -> None:
    s = SCHEMA
    rows = f"(SELECT * FROM {TABLE} WHERE rowid >= {start})"
    _run(
        con,
        f"""INSERT INTO {s}.rule_counts
        SELECT source, ruleset_id, rule_id, action, label, count(*), any_value(description),
            min(datetime), max(datetime), min(path)
        FROM {rows} GROUP BY ALL""",
    )
    if int(_run(con, f"SELECT count(*) FROM {s}.rule_counts")[0][0]) > _COMPACT_AT:
        _run(
            con,
            f"""CREATE OR REPLACE TABLE {s}.rule_counts AS
            SELECT source, ruleset_id, rule_id, action, label, sum(events)::BIGINT AS events,
                any_value(description) AS description, min(first_seen) AS first_seen,
                max(last_seen) AS last_seen, min(example_path) AS example_path
            FROM {s}.rule_counts GROUP BY ALL""",
        )
    _run(
        con,
        f"""INSERT INTO {s}.per_second
        SELECT date_trunc('second', datetime), source, action, count(*) FROM {rows} GROUP BY ALL""",
    )
    _fold_stops(con, rows)
    _fold_old_and_new(con, rows, start)


def _fold_stops(con: Any, rows: str) -> None:
    s = SCHEMA
    _run(
        con,
        f"""CREATE OR REPLACE TEMP TABLE _wb_keys AS
        SELECT ruleset_id, rule_id, ray_id,
            list_sort(list(DISTINCT label) FILTER (WHERE label IS NOT NULL)) AS labels
        FROM {rows} WHERE source = '{NEW}' AND {_ENDING} AND ray_id IS NOT NULL
        GROUP BY ruleset_id, rule_id, ray_id""",
    )
    try:
        seen = _run(
            con,
            f"SELECT count(*) FROM _wb_keys a JOIN {s}.stop_rays b ON {_SAME_KEY}",
        )[0][0]
        _run(con, f"INSERT INTO {s}.stop_rays SELECT * FROM _wb_keys")
        if seen:
            # A ray's stops came in two writes: merge its labels and count again.
            _run(
                con,
                f"""CREATE OR REPLACE TABLE {s}.stop_rays AS
                SELECT ruleset_id, rule_id, ray_id, list_sort(list_distinct(flatten(list(labels))))
                    AS labels
                FROM {s}.stop_rays GROUP BY ruleset_id, rule_id, ray_id""",
            )
            _run(con, f"DELETE FROM {s}.stop_counts")
            source = f"{s}.stop_rays"
        else:
            source = "_wb_keys"
        _run(
            con,
            f"""INSERT INTO {s}.stop_counts
            SELECT ruleset_id, rule_id, labels, count(*) FROM {source} GROUP BY ALL""",
        )
    finally:
        _run(con, "DROP TABLE IF EXISTS _wb_keys")


def _fold_old_and_new(con: Any, rows: str, start: int) -> None:
    s = SCHEMA
    _run(
        con,
        f"""CREATE OR REPLACE TEMP TABLE _wb_old AS
        SELECT ray_id, datetime, host, path, query, label, action, rule_id, match_index
        FROM {rows} WHERE source = '{OLD}' AND {_ENDING}""",
    )
    try:
        if start:
            # New-WAF events written before these old ones, on the same rays (rare: a
            # request's events come in one write). The hashes say whether to look.
            hit = _run(
                con,
                f"SELECT count(*) FROM {s}.new_rays WHERE h IN (SELECT hash(ray_id) FROM _wb_old)",
            )[0][0]
            if hit:
                _run(
                    con,
                    f"""INSERT INTO {s}.new_of_old
                    SELECT ray_id, action, rule_id, match_index FROM {TABLE}
                    WHERE rowid < {start} AND source = '{NEW}'
                        AND ray_id IN (SELECT ray_id FROM _wb_old)
                        AND NOT EXISTS (SELECT 1 FROM {s}.old_stops o WHERE o.ray_id = ray_id)""",
                )
        _run(con, f"INSERT INTO {s}.old_stops SELECT * FROM _wb_old")
    finally:
        _run(con, "DROP TABLE IF EXISTS _wb_old")
    _run(
        con,
        f"""INSERT INTO {s}.new_of_old
        SELECT ray_id, action, rule_id, match_index FROM {rows}
        WHERE source = '{NEW}' AND ray_id IN (SELECT ray_id FROM {s}.old_stops)""",
    )
    _run(con, f"INSERT INTO {s}.new_rays SELECT hash(ray_id) FROM {rows} WHERE source = '{NEW}'")


# The canned queries' default forms over the summaries (same rows, columns and order as the
# SQL of workbench.logs.views over the table).


def new_allows_old_blocked_sql() -> str:
    """Rays the old WAF stopped and the new WAF let through, from ``old_stops`` and ``new_of_old``."""
    return f"""
        WITH new_by_ray AS (
            SELECT ray_id, bool_or({_ENDING}) AS stopped,
                string_agg(rule_id || ':' || action, ',' ORDER BY match_index DESC) AS events
            FROM {SCHEMA}.new_of_old GROUP BY ray_id
        )
        SELECT o.ray_id, min(o.datetime) AS datetime, any_value(o.host) AS host,
            any_value(o.path) AS path, any_value(o.query) AS query, any_value(o.label) AS label,
            string_agg(DISTINCT o.action, ',' ORDER BY o.action) AS old_action,
            string_agg(o.rule_id, ',' ORDER BY o.match_index DESC) AS old_rules,
            coalesce(any_value(n.events), '') AS new_events
        FROM {SCHEMA}.old_stops o LEFT JOIN new_by_ray n USING (ray_id)
        WHERE NOT coalesce(n.stopped, false)
        GROUP BY o.ray_id
        ORDER BY datetime, o.ray_id
    """


def legit_blocked_by_new_sql(labels: list[str], column: Any) -> str:
    """Legitimate requests the new WAF stopped, by rule, from ``rule_counts`` and ``stop_counts``."""
    listed = "[" + ", ".join(_quote(label) for label in labels) + "]"
    per_label = "".join(
        f", coalesce(sum(events) FILTER (WHERE label = {_quote(label)}), 0)::BIGINT"
        f" AS {column(label)}"
        for label in labels
    )
    return f"""
        WITH counts AS (
            SELECT ruleset_id, rule_id, any_value(description) AS description{per_label},
                min(example_path) AS example_path
            FROM {SCHEMA}.rule_counts
            WHERE source = '{NEW}' AND {_ENDING} AND label IN {_in(labels)}
            GROUP BY ruleset_id, rule_id
        ), rays AS (
            SELECT ruleset_id, rule_id, sum(rays)::BIGINT AS requests FROM {SCHEMA}.stop_counts
            WHERE list_has_any(labels, {listed}::VARCHAR[]) GROUP BY ruleset_id, rule_id
        )
        SELECT c.ruleset_id, c.rule_id, c.description, coalesce(r.requests, 0)::BIGINT AS requests
            {"".join(f", c.{column(label)}" for label in labels)}, c.example_path
        FROM counts c LEFT JOIN rays r
            ON c.ruleset_id IS NOT DISTINCT FROM r.ruleset_id
            AND c.rule_id IS NOT DISTINCT FROM r.rule_id
        ORDER BY requests DESC, c.rule_id
    """


def rule_comparison_sql() -> str:
    """Each rule's events in the old and the new WAF, by rule id, from ``rule_counts``."""

    def total(where: str) -> str:
        return f"coalesce(sum(events) FILTER (WHERE {where}), 0)::BIGINT"

    return f"""
        SELECT rule_id, any_value(description) AS description,
            {total(f"source = '{OLD}'")} AS old_events,
            {total(f"source = '{NEW}'")} AS new_events,
            {total(f"source = '{OLD}' AND {_ENDING}")} AS old_ending,
            {total(f"source = '{NEW}' AND {_ENDING}")} AS new_ending
        FROM {SCHEMA}.rule_counts WHERE source = '{OLD}' OR source = '{NEW}'
        GROUP BY rule_id ORDER BY old_events + new_events DESC, rule_id
    """


def top_rules_sql(where: str) -> str:
    """The rules with most events (``where`` on source and action; ``LIMIT ?``), from ``rule_counts``."""
    return f"""
        SELECT source, ruleset_id, rule_id, any_value(description) AS description,
            sum(events)::BIGINT AS events, min(first_seen) AS first_seen,
            max(last_seen) AS last_seen
        FROM {SCHEMA}.rule_counts WHERE {where}
        GROUP BY source, ruleset_id, rule_id
        ORDER BY events DESC, source, rule_id
        LIMIT ?
    """


def actions_over_time_sql(where: str) -> str:
    """Events per bucket (``?`` seconds) and action, from ``per_second``.

    A bucket of whole seconds starts on a whole second, so a second's events all
    fall in one bucket and summing per-second counts gives the table's counts.
    """
    return f"""
        SELECT time_bucket(to_seconds(?::BIGINT), second) AS bucket, action,
            sum(events)::BIGINT AS events
        FROM {SCHEMA}.per_second WHERE {where}
        GROUP BY ALL ORDER BY bucket, action
    """


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _in(values: list[str]) -> str:
    return "(" + ", ".join(_quote(v) for v in values) + ")" if values else "(NULL)"
