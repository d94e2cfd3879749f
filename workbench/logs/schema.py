"""The security-events table: one row per event, columns as the platform's events carry them.

Names are snake_case; :mod:`workbench.logs.analytics` adds the analytics API's
camelCase aliases. ``datetime`` is UTC (a TIMESTAMP without zone, so DuckDB
never shifts it to the machine's time zone). ``match_index`` numbers a
request's events from its last one (0) back, as the platform's ``MatchIndex``.
``metadata`` is JSON text.

    >>> COLUMNS[:4]
    ('ray_id', 'datetime', 'zone_id', 'action')
    >>> empty_frame().shape
    (0, 21)
"""

from __future__ import annotations

from typing import Any

import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..core.security import TERMINAL_ACTIONS

#: The events table.
TABLE = "security_events"

#: Column name -> DuckDB type, in table order.
SCHEMA: dict[str, str] = {
    "ray_id": "VARCHAR",
    "datetime": "TIMESTAMP",
    "zone_id": "VARCHAR",
    "action": "VARCHAR",
    "source": "VARCHAR",
    "rule_id": "VARCHAR",
    "ruleset_id": "VARCHAR",
    "description": "VARCHAR",
    "client_ip": "VARCHAR",
    "country": "VARCHAR",
    "host": "VARCHAR",
    "path": "VARCHAR",
    "query": "VARCHAR",
    "method": "VARCHAR",
    "user_agent": "VARCHAR",
    "score": "INTEGER",
    "paranoia_level": "INTEGER",
    "label": "VARCHAR",
    "kind": "VARCHAR",
    "match_index": "INTEGER",
    "metadata": "VARCHAR",
}
COLUMNS: tuple[str, ...] = tuple(SCHEMA)

#: Event sources (the analytics API's camelCase values).
SOURCES = ("firewallRules", "waf", "firewallManaged", "firewallCustom")
#: Actions that end a request, in both spellings the platform uses (API and Logpush).
ENDING_ACTIONS = (*sorted(TERMINAL_ACTIONS), "jschallenge", "managedchallenge")
#: Traffic labels of legitimate requests (see workbench.traffic.generators).
LEGIT_LABELS = ("benign", "api", "bot")

#: The columns of whole numbers (nullable ``Int32`` in frames).
INT_COLUMNS = tuple(c for c, t in SCHEMA.items() if t == "INTEGER")


def empty_frame() -> Any:
    """An events DataFrame with no rows and the table's columns and dtypes."""
    return normalise(pd.DataFrame({c: [] for c in COLUMNS}))


def normalise(frame: Any) -> Any:
    """``frame`` with exactly the table's columns, in order, and one dtype per column.

    Text columns are ``object`` (None for NULL), integers nullable ``Int32``,
    ``datetime`` ``datetime64[ns]`` (naive UTC). A missing column is NULL.
    """
    out = pd.DataFrame(index=frame.index)
    for column in COLUMNS:
        values = (
            frame[column] if column in frame else pd.Series([None] * len(frame), index=frame.index)
        )
        if column == "datetime":
            values = pd.to_datetime(values, utc=True).dt.tz_localize(None).astype("datetime64[ns]")
        elif column in INT_COLUMNS:
            values = values.astype("Int32")
        else:
            values = values.astype(object).where(values.notna(), None)
        out[column] = values
    return out.reset_index(drop=True)
