"""Tables of requests for the whole-table path: request dicts in, typed DuckDB table out.

Each field becomes a column named like the field, typed for the scheme:
VARCHAR for strings and IP addresses, BIGINT, BOOLEAN, lists for arrays and
MAP(VARCHAR, ...) for maps. Fields a request does not carry are NULL.

    >>> import duckdb
    >>> con = duckdb.connect()
    >>> requests_table(con, [{"http.host": "a.com", "cf.waf.score": 5}], name="r")
    >>> con.sql('select "http.host", "cf.waf.score" from r').fetchall()
    [('a.com', 5)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from workbench.core.text import utf8_problem

from ._scheme import Scheme, get_scheme
from .sql_fragments import duckdb_type, ident
from .types import BYTES, Type

__all__ = ["duckdb_type", "requests_table"]


def _plain(value: Any, t: Type, field: str) -> Any:
    if value is None:
        return None
    if t.kind == "Bytes":
        if isinstance(value, bytes | bytearray):
            try:
                return bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(
                    f"field {field}: the table path holds text; {value!r} is not UTF-8"
                ) from None
        problem = utf8_problem(value) if isinstance(value, str) else None
        if problem is not None:
            # DuckDB stores UTF-8 only; the per-request path reads such text as its bytes.
            raise ValueError(f"field {field}: the table path holds text; the value {problem}")
        return value
    if t.kind == "Ip":
        return str(value)
    if t.kind == "Array":
        element = t.element_type
        return [_plain(v, element, field) for v in value]
    if t.kind == "Map":
        element = t.element_type
        return {_plain(str(k), BYTES, field): _plain(v, element, field) for k, v in value.items()}
    return value


def requests_table(
    con: Any,
    requests: Iterable[Mapping[str, Any]],
    name: str = "requests",
    scheme: str | Scheme = "http",
    fields: Iterable[str] | None = None,
) -> None:
    """Create (or replace) table ``name`` on ``con`` holding ``requests``."""
    sch = get_scheme(scheme) if isinstance(scheme, str) else scheme
    rows = list(requests)
    names = sorted(set(fields) if fields is not None else {k for r in rows for k in r})
    types: dict[str, Type] = {}
    for n in names:
        found = sch.field_type(n)
        if found is None:
            raise ValueError(f"unknown field {n!r} in scheme {sch.name!r}")
        types[n] = found
    columns: dict[str, list[Any]] = {}
    selects = []
    for i, n in enumerate(names):
        t = types[n]
        values = [_plain(r.get(n), t, n) for r in rows]
        if t.kind == "Map":
            columns[f"k{i}"] = [None if v is None else list(v.keys()) for v in values]
            columns[f"v{i}"] = [None if v is None else list(v.values()) for v in values]
            selects.append(
                f"CASE WHEN k{i} IS NULL THEN NULL ELSE "
                f"MAP(k{i}::VARCHAR[], v{i}::{duckdb_type(t.element_type)}[]) END::{duckdb_type(t)} "
                f"AS {ident(n)}"
            )
        else:
            columns[f"c{i}"] = values
            selects.append(f"c{i}::{duckdb_type(t)} AS {ident(n)}")
    frame = pd.DataFrame(columns if columns else {"_": [None] * len(rows)})
    con.register("_workbench_requests_src", frame)
    try:
        body = ", ".join(selects) if selects else "NULL AS _empty"
        con.execute(
            f"CREATE OR REPLACE TABLE {ident(name)} AS SELECT {body} FROM _workbench_requests_src"
        )
    finally:
        con.unregister("_workbench_requests_src")
