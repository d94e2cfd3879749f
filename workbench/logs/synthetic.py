"""Synthetic security events made in DuckDB, for benchmarks and for trying the queries at scale.

Events come in pairs on one ray (``match_index`` 1 then 0), with the shapes a
validation-mode migration produces: mostly both WAFs only log (65% of rays);
the new WAF blocks after a firewall ``log`` rule (28%); a firewall rule blocks
after another logs (5%); and the new WAF logs while the old one blocks or
challenges (2%, what :func:`~workbench.logs.queries.new_allows_old_blocked`
looks for). Everything derives from the event number and
``seed`` by integer arithmetic, so the same call gives the same table on every
machine; nothing goes through the pipeline or Python per row.

    >>> from workbench.logs.store import EventLog
    >>> log = EventLog()
    >>> add_synthetic_events(log, 1000, seed=1)
    1000
    >>> sorted(log.query("select distinct source from security_events").source)
    ['firewallManaged', 'firewallRules', 'waf']
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from . import summary
from .store import TABLE, EventLog

_NEW_RULES = 200
_OLD_RULES = 150
_PATHS = 60


def _pool(prefix: str, n: int) -> str:
    """A SQL list literal of ``n`` 32-hex ids derived from ``prefix`` (stable)."""
    ids = [hashlib.md5(f"{prefix}{i}".encode()).hexdigest() for i in range(n)]
    return "[" + ", ".join(f"'{i}'" for i in ids) + "]"


def add_synthetic_events(
    log: EventLog,
    n: int,
    seed: int = 0,
    start: datetime = datetime(2026, 1, 1),
    zone_id: str = "0" * 32,
) -> int:
    """Append ``n`` synthetic events (rays of two events, 10 ms apart) to ``log``."""
    if n < 0:
        raise ValueError("n must be >= 0")
    new_rules = _pool("new-rule-", _NEW_RULES)
    new_ruleset = "efb7b8c949ac4650a09736fc376e9aee"
    fw_rules = _pool("firewall-rule-", 20)
    labels = "['benign', 'api', 'bot', 'sqli', 'xss', 'cmdi', 'traversal', 'scanner', 'cms']"
    countries = "['US', 'DE', 'FR', 'GB', 'JP', 'BR', 'IN', 'CN', 'RU', 'NL', 'CA', 'AU']"
    agents = "['Mozilla/5.0 (Windows NT 10.0)', 'curl/8.7.1', 'python-requests/2.32', 'sqlmap/1.8']"
    # h: a ray's hash; s: its scenario (0-9); p: the event's place in its ray (0 first).
    sql = f"""
        INSERT INTO {TABLE}
        WITH base AS (
            SELECT i, i // 2 AS r, i % 2 AS p,
                ((i // 2) * 2654435761 + {int(seed)}) % 4294967296 AS h
            FROM range({int(n)}) t(i)
        ), shaped AS (
            SELECT *, (h // 256) % 1000 AS s,
                CASE WHEN h % 100 < 55 THEN 0 WHEN h % 100 < 70 THEN 1 WHEN h % 100 < 75 THEN 2
                     ELSE 3 + (h // 7) % 6 END AS l
            FROM base
        ), evented AS (
            SELECT *,
                CASE WHEN s < 20 OR s >= 350 THEN (CASE WHEN p = 0 THEN 'firewallManaged' ELSE 'waf' END)
                     WHEN s < 300 THEN (CASE WHEN p = 0 THEN 'firewallRules' ELSE 'firewallManaged' END)
                     ELSE 'firewallRules' END AS src,
                CASE WHEN p = 0 THEN 'log'
                     WHEN s < 10 THEN 'block' WHEN s < 20 THEN 'challenge'
                     WHEN s < 350 THEN 'block' ELSE 'log' END AS act
            FROM shaped
        )
        SELECT
            printf('%08x%08x', h, r) AS ray_id,
            TIMESTAMP '{start.isoformat(sep=" ")}' + to_milliseconds(r * 10) AS datetime,
            '{zone_id}' AS zone_id,
            act AS action,
            src AS source,
            CASE src WHEN 'firewallManaged' THEN {new_rules}[1 + (h // 4096 + p) % {_NEW_RULES}]
                     WHEN 'waf' THEN (100000 + (h // 65536) % {_OLD_RULES})::VARCHAR
                     ELSE {fw_rules}[1 + (h // 1024) % 20] END AS rule_id,
            CASE src WHEN 'firewallManaged' THEN '{new_ruleset}' ELSE NULL END AS ruleset_id,
            'synthetic rule ' || (h % 97)::VARCHAR AS description,
            printf('%d.%d.%d.%d', 1 + h % 223, (h // 223) % 256, (h // 57088) % 256, 1 + r % 254)
                AS client_ip,
            {countries}[1 + (h // 3) % 12] AS country,
            'example.com' AS host,
            '/p/' || ((h // 11) % {_PATHS})::VARCHAR AS path,
            CASE WHEN h % 3 = 0 THEN '' ELSE 'q=' || (h % 1000)::VARCHAR END AS query,
            CASE WHEN h % 5 = 0 THEN 'POST' ELSE 'GET' END AS method,
            {agents}[1 + (h // 13) % 4] AS user_agent,
            NULL::INTEGER AS score,
            NULL::INTEGER AS paranoia_level,
            {labels}[1 + l] AS label,
            'firewall' AS kind,
            (1 - p)::INTEGER AS match_index,
            '{{}}' AS metadata
        FROM evented
    """
    before = log.count()
    log.con.execute(sql).fetchall()
    summary.update(log.con)
    return log.count() - before
