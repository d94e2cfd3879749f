"""Events as the analytics API shows them: table names plus camelCase aliases, filters, pages.

:func:`to_api` gives an event row with both names (``ray_id`` and ``rayName``,
``rule_id`` and ``ruleId`` ...). :func:`find_events` filters by either name,
GraphQL style (``source_in``, ``datetime_geq``, ``ruleId``), or by the short
names ``rule``, ``since`` and ``until``, and returns one page, newest first.

    >>> from workbench.logs.store import EventLog
    >>> log = EventLog()
    >>> _ = log.append([{"ray_id": f"{i:016x}", "datetime": f"2026-01-01T00:00:0{i}Z",
    ...                  "source": "waf" if i % 2 else "firewallManaged", "action": "block",
    ...                  "rule_id": str(i), "match_index": 0} for i in range(7)])
    >>> page = find_events(log, source_in=["waf"], per_page=5)
    >>> [e["ruleId"] for e in page.items], page.result_info["total_count"]
    (['5', '3', '1'], 3)
    >>> find_events(log, rule="4").items[0]["datetime"]
    '2026-01-01T00:00:04Z'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..core.paging import Page, page_args
from .schema import COLUMNS
from .store import TABLE, EventLog

#: Analytics API (GraphQL) name -> table column.
ALIASES: dict[str, str] = {
    "rayName": "ray_id",
    "ruleId": "rule_id",
    "rulesetId": "ruleset_id",
    "clientIP": "client_ip",
    "clientCountryName": "country",
    "clientRequestHTTPHost": "host",
    "clientRequestPath": "path",
    "clientRequestQuery": "query",
    "clientRequestHTTPMethodName": "method",
    "userAgent": "user_agent",
    "matchIndex": "match_index",
}
#: Short names the filter takes too.
SHORT = {"rule": "rule_id", "ray": "ray_id", "zone": "zone_id"}
_OPS = {"_in": "IN", "_geq": ">=", "_leq": "<=", "_gt": ">", "_lt": "<", "_neq": "<>"}
ORDERS = {"datetime_DESC": "DESC", "datetime_ASC": "ASC"}


def _plain(value: Any) -> Any:
    """A value as JSON shows it: None for missing, ints as ints, times as ISO ``Z`` text."""
    if value is None or (not isinstance(value, str | list | dict) and pd.isna(value)):
        return None
    if isinstance(value, pd.Timestamp) or hasattr(value, "isoformat"):
        stamp = pd.Timestamp(value)
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def to_api(event_row: Any) -> dict[str, Any]:
    """An event (dict, pandas row or namedtuple) with table names and API aliases.

    >>> e = to_api({"ray_id": "ab", "rule_id": "100015", "match_index": 0})
    >>> e["rayName"], e["ruleId"], e["matchIndex"], e["metadata"]
    ('ab', '100015', 0, {})
    """
    if isinstance(event_row, Mapping):
        row = dict(event_row)
    elif hasattr(event_row, "_asdict"):
        row = event_row._asdict()
    else:
        row = dict(event_row.items())
    out = {c: _plain(row.get(c)) for c in COLUMNS}
    metadata = out.get("metadata")
    out["metadata"] = json.loads(metadata) if isinstance(metadata, str) and metadata else {}
    for alias, column in ALIASES.items():
        out[alias] = out[column]
    return out


def _column(name: str) -> str:
    column = ALIASES.get(name, SHORT.get(name, name))
    if column not in COLUMNS:
        known = ", ".join([*COLUMNS, *ALIASES, *SHORT])
        raise ValueError(f"unknown event field {name!r}; known: {known}")
    return column


def _filters(filters: Mapping[str, Any]) -> tuple[str, list[Any]]:
    parts: list[str] = []
    params: list[Any] = []
    for key, value in filters.items():
        if value is None:
            continue
        if key in ("since", "until"):
            key = "datetime_geq" if key == "since" else "datetime_leq"
        op, name = "=", key
        for suffix, sql_op in _OPS.items():
            if key.endswith(suffix) and key[: -len(suffix)]:
                op, name = sql_op, key[: -len(suffix)]
                break
        column = _column(name)
        target = f'"{column}"'
        if column == "datetime":
            value = [_time(v) for v in value] if op == "IN" else _time(value)
            target = '"datetime"'
        if op == "IN":
            items = list(value) if not isinstance(value, str) else [value]
            if not items:
                parts.append("false")
                continue
            parts.append(f"{target} IN ({', '.join('?' for _ in items)})")
            params.extend(items)
        else:
            parts.append(f"{target} {op} ?")
            params.append(value)
    return (" AND ".join(parts) or "true"), params


def _time(value: Any) -> Any:
    stamp = pd.Timestamp(value)
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return stamp.to_pydatetime()


def find_events(
    log: EventLog,
    *,
    page: Any = None,
    per_page: Any = None,
    order: str = "datetime_DESC",
    **filters: Any,
) -> Page[dict[str, Any]]:
    """One page of events (as :func:`to_api` gives them) matching every filter.

    A filter is ``name=value`` (equality) or ``name_in``, ``name_geq``,
    ``name_leq``, ``name_gt``, ``name_lt``, ``name_neq``, where name is a
    column, an API alias or ``rule``/``ray``/``zone``; ``since``/``until`` bound
    the time. Pages count from 1; ``per_page`` is 5 to 1000 (default 25).
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    page_n, per_n = page_args(page, per_page, default=25, top=1000)
    where, params = _filters(filters)
    total = int(
        log.con.execute(f"SELECT count(*) FROM {TABLE} WHERE {where}", params).fetchall()[0][0]
    )
    frame = log.query(
        f"SELECT * FROM {TABLE} WHERE {where} "
        f"ORDER BY datetime {ORDERS[order]}, ray_id, match_index DESC LIMIT ? OFFSET ?",
        [*params, per_n, (page_n - 1) * per_n],
    )
    items = [to_api(row) for row in frame.to_dict("records")]
    return Page(items, page_n, per_n, total)
