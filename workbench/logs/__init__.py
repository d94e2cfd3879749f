"""Security events in DuckDB: the event log, its views, canned queries and API-shaped events.

    >>> log = EventLog()
    >>> add_synthetic_events(log, 100, seed=3)
    100
    >>> top_rules(log, 1).events.tolist()
    [5]
    >>> find_events(log, source="waf", per_page=5).result_info["count"]
    5

Modules: ``schema`` (columns and types), ``store`` (:class:`EventLog`: append,
Parquet), ``views`` (named views), ``queries`` (canned queries), ``api`` (analytics aliases,
filters, pages), ``billing`` (the storage SQL billing log next to the
events: ``wb.storage`` bills into ``wb.logs`` live, a standalone runtime's is
loaded), ``synthetic`` (events made in DuckDB for benchmarks).
"""

from .analytics import ALIASES, find_events, to_api
from .billing import billing_for, load_billing
from .queries import (
    actions_over_time,
    legacy_mapping,
    legit_blocked_by_new,
    new_allows_old_blocked,
    rule_comparison,
    top_rules,
)
from .schema import COLUMNS, SCHEMA, SOURCES
from .store import EventLog
from .synthetic import add_synthetic_events
from .views import SOURCE_VIEWS, VIEWS

__all__ = [
    "ALIASES",
    "COLUMNS",
    "SCHEMA",
    "SOURCES",
    "SOURCE_VIEWS",
    "VIEWS",
    "EventLog",
    "actions_over_time",
    "add_synthetic_events",
    "billing_for",
    "find_events",
    "legacy_mapping",
    "legit_blocked_by_new",
    "load_billing",
    "new_allows_old_blocked",
    "rule_comparison",
    "to_api",
    "top_rules",
]
