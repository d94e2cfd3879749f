"""The request table of the whole-table path, built column by column from Requests.

Same table as :func:`workbench.rules_language.table.requests_table` (a column
per field, named like it, typed for the scheme), built for volume: a loop
per field rather than a dict per request, scalar fields as plain columns, and
lists and maps of text as one string joined with control characters that
DuckDB splits back in parallel (JSON when a value holds one of them). At a
million requests that is several times faster than handing DuckDB a Python
list per row (the row-wise helper) or JSON for every map.

A row holding a value that is not UTF-8 cannot be text in DuckDB: it is left
out of the table (its columns hold NULL or empty values) and its index is
returned, so the caller evaluates that row on the per-request path instead.

    >>> import duckdb
    >>> from workbench.traffic.request import Request
    >>> con = duckdb.connect()
    >>> reqs = [Request(url="/a?x=1", headers={"Accept": "*/*"}), Request(url="/b", body=b"\\xff")]
    >>> build_table(con, "t", reqs, ["http.request.uri.path", "http.request.headers",
    ...                                "http.request.body.raw"])
    [1]
    >>> con.sql('select idx, "http.request.uri.path", "http.request.headers" from t order by idx').fetchall()
    [(0, '/a', {'accept': ['*/*']}), (1, None, {})]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..rules_language import get_scheme
from ..rules_language.sql_fragments import duckdb_type, ident
from ..rules_language.types import Type
from .request import Request, field_column

# One encoder for every value: check_circular costs time and the values are plain data.
_dumps = json.JSONEncoder(check_circular=False, separators=(",", ":")).encode


def build_table(
    con: Any,
    name: str,
    requests: Sequence[Request],
    fields: Sequence[str],
    *,
    ray_ids: Sequence[str] | None = None,
    times_ms: Sequence[int | None] | None = None,
    zone_name: str = "",
    zone_plan: str = "",
) -> list[int]:
    """Create (or replace) table ``name``: column ``idx`` (0..n-1) and one column per field.

    Returns the indexes of the rows left out because a value is not UTF-8.
    ``ray_ids`` and ``times_ms`` give each row's ``cf.ray_id`` and timestamp.
    """
    scheme = get_scheme("http")
    n = len(requests)
    bad = np.zeros(n, dtype=bool)
    columns: list[tuple[str, Type, tuple[str, list[Any] | None]]] = []
    for f in fields:
        t = scheme.field_type(f)
        if t is None:
            raise ValueError(f"unknown field {f!r}")
        values = field_column(
            requests,
            f,
            ray_ids=ray_ids,
            times_ms=times_ms,
            zone_name=zone_name,
            zone_plan=zone_plan,
        )
        columns.append((f, t, _encoded(values, t, bad)))
    _create(con, name, n, columns, bad)
    return [int(i) for i in np.flatnonzero(bad)]


# Separators for lists and maps of text: control characters that real values almost never
# hold. Joining with them costs a tenth of JSON in Python; a column where some value does
# hold one goes as JSON instead, so the result is the same either way.
_ITEM, _KEY, _ENTRY = "\x1f", "\x1e", "\x1d"


def _joined_list(values: list[Any]) -> str | None:
    if not values:
        return None  # NULL reads as the empty list
    text = _ITEM.join(values)
    if text.count(_ITEM) != len(values) - 1 or _KEY in text or _ENTRY in text:
        raise _NeedsJson
    return text


def _joined_map(groups: dict[str, list[Any]]) -> str | None:
    if not groups:
        return None
    text = _ENTRY.join([k + _KEY + _ITEM.join(vs) for k, vs in groups.items()])
    expected = sum(len(vs) - 1 for vs in groups.values())
    if (
        text.count(_ENTRY) != len(groups) - 1
        or text.count(_KEY) != len(groups)
        or text.count(_ITEM) != expected
        or not all(groups.values())  # an empty list would read back as [""]
    ):
        raise _NeedsJson
    return text


class _NeedsJson(Exception):
    """A value holds a separator (or an empty list in a map): the column goes as JSON."""


def _form(t: Type) -> str:
    """How a field's values travel: ``plain``, ``list`` or ``map`` (joined text), or ``json``."""
    if not t.is_compound:
        return "plain"
    element = t.element_type
    if element.kind == "Bytes":
        return "list" if t.kind == "Array" else "json"
    if t.kind == "Map" and element.kind == "Array" and element.element_type.kind == "Bytes":
        return "map"
    return "json"


def _encoded(values: list[Any], t: Type, bad: np.ndarray) -> tuple[str, list[Any] | None]:
    """``(form, values)``: the column as DuckDB takes it, values None when all NULL.

    Rows holding bytes are marked in ``bad``. The common case (no bytes) costs
    one pass over the column in C per check.
    """
    form = _form(t)
    if form in ("list", "map"):
        join = _joined_list if form == "list" else _joined_map
        try:
            return form, [None if v is None else join(v) for v in values]
        except TypeError:  # bytes somewhere: find the rows, then join what is left
            values = _drop_bytes(values, bad, compound=True)
            try:
                return form, [None if v is None else join(v) for v in values]
            except _NeedsJson:
                pass
        except _NeedsJson:
            pass
        form = "json"
    if form == "json":
        try:
            return form, [None if v is None else _dumps(v) for v in values]
        except TypeError:
            values = _drop_bytes(values, bad, compound=True)
            return form, [None if v is None else _dumps(v) for v in values]
    kinds = set(map(type, values))
    if kinds == {type(None)}:
        return form, None
    if bytes in kinds:
        values = _drop_bytes(values, bad, compound=False)
    return form, values


def _drop_bytes(values: list[Any], bad: np.ndarray, compound: bool) -> list[Any]:
    """``values`` with each row that holds bytes marked in ``bad`` and set to None."""
    out = []
    for i, v in enumerate(values):
        if compound and v is not None:
            try:
                _dumps(v)
                holds = False
            except TypeError:
                holds = True
        else:
            holds = type(v) is bytes
        if holds:
            bad[i] = True
        out.append(None if holds else v)
    return out


_SPLIT = {
    "plain": "{c}",
    "json": "{c}::JSON",
    "list": "string_split({c}, chr(31))",
    "map": (
        "map(list_transform(string_split({c}, chr(29)), lambda e: split_part(e, chr(30), 1)), "
        "list_transform(string_split({c}, chr(29)), "
        "lambda e: string_split(split_part(e, chr(30), 2), chr(31))))"
    ),
}
_EMPTY = {"list": "[]", "map": "MAP([]::VARCHAR[], []::VARCHAR[][])"}


def _create(
    con: Any,
    name: str,
    n: int,
    columns: list[tuple[str, Type, tuple[str, list[Any] | None]]],
    bad: Any,
) -> None:
    base: dict[str, Any] = {"idx": np.arange(n, dtype=np.int64)}
    selects = ["idx"]
    for c, (field, t, (form, values)) in enumerate(columns):
        col_type, target = duckdb_type(t), ident(field)
        if values is None:
            # An all-NULL column has no type DuckDB can infer: name the type outright.
            selects.append(f"NULL::{col_type} AS {target}")
            continue
        array = np.array(values, dtype=object)
        array[bad] = None
        base[f"c{c}"] = array
        source = _SPLIT[form].format(c=f"c{c}")
        if form in _EMPTY:
            # NULL stands for the empty list or map (the join of nothing).
            source = f"CASE WHEN c{c} IS NULL THEN {_EMPTY[form]} ELSE {source} END"
        selects.append(f"{source}::{col_type} AS {target}")
    con.register("_wb_requests", pd.DataFrame(base))
    try:
        con.execute(
            f"CREATE OR REPLACE TABLE {ident(name)} AS SELECT {', '.join(selects)} FROM _wb_requests"
        ).fetchall()
    finally:
        con.unregister("_wb_requests")
