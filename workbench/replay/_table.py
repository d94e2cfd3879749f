"""The request table of the whole-table path, built column by column from Requests.

Same table as :func:`workbench.rules_language.table.requests_table` (a column
per field, named like it, typed for the scheme), built for volume: a loop
per field rather than a dict per request, and no call per row for the fields
most rules read (they are read straight off each request's cached parts).
Scalar fields go as plain columns; lists of text as one string joined with a
control character, maps of lists of text as two (the keys, and each key's
values), which DuckDB splits back in parallel, checked once per column (JSON
when a value holds a separator). The garbage collector is paused meanwhile:
the millions of small objects made here hold no cycle, and its passes over
every live request used to cost more than the work itself.

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

import gc
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd  # type: ignore[import-untyped]  # no pandas-stubs in the dev dependencies

from ..rules_language import MANAGED, get_scheme
from ..rules_language.sql_fragments import duckdb_type, ident
from ..rules_language.types import Type
from ..rulesets.crs.parallel import keep_runs
from ..traffic.parts import Parts, all_values, first_values, hosts, paths, queries
from ..traffic.request import Request, bodies_as_sent, field_column, path_extension
from ..traffic.textvalues import field_text
from ._header_columns import (
    ENCODED,
    ENTRY,
    ITEM,
    LEAN_FIELDS,
    Encoded,
    joined_names,
    lean_column,
    split_sql,
)
from ._header_columns import separators as _separators

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
    The two halves, :func:`table_data` (Python) and :func:`load_table` (DuckDB), can
    run on different threads.
    """
    data = table_data(
        requests,
        fields,
        ray_ids=ray_ids,
        times_ms=times_ms,
        zone_name=zone_name,
        zone_plan=zone_plan,
    )
    load_table(con, name, data)
    return data.bad


@dataclass
class TableData:
    """A table's columns made in Python, ready for DuckDB to load (see :func:`load_table`)."""

    #: One column per encoded field (``c<k>``, ``c<k>v``) and ``idx``.
    frame: Any
    #: The SELECT list that turns the encoded columns into the typed fields.
    selects: list[str]
    #: Rows left out because a value is not UTF-8.
    bad: list[int]


def table_data(
    requests: Sequence[Request],
    fields: Sequence[str],
    *,
    ray_ids: Sequence[str] | None = None,
    times_ms: Sequence[int | None] | None = None,
    zone_name: str = "",
    zone_plan: str = "",
    lean: bool = False,
    parts: Parts | None = None,
) -> TableData:
    """The Python half of :func:`build_table`: every column, encoded; no DuckDB call.

    ``lean``: the header lists and map stay joined text, in the columns
    :func:`~workbench.replay._header_columns.joined_names` names (read them through
    :func:`~workbench.replay._header_columns.lean_sql`); a row where a header holds a
    separator is left out as a row that is not UTF-8 is. ``parts``: the requests'
    :class:`~workbench.traffic.parts.Parts`, when the caller reads them too.
    """
    # Building a table allocates millions of small lists and dicts and no reference cycle;
    # left on, the collector would scan every live request over and over (most of the
    # time this took before).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(
            requests,
            fields,
            ray_ids,
            times_ms,
            zone_name,
            zone_plan,
            lean,
            parts or Parts(requests),
        )
    finally:
        if collecting:
            gc.enable()


def load_table(con: Any, name: str, data: TableData) -> None:
    """The DuckDB half of :func:`build_table`: create (or replace) table ``name`` from ``data``."""
    con.register("_wb_requests", data.frame)
    try:
        con.execute(
            f"CREATE OR REPLACE TABLE {ident(name)} AS SELECT {', '.join(data.selects)} "
            "FROM _wb_requests"
        ).fetchall()
    finally:
        con.unregister("_wb_requests")


def _build(
    requests: Sequence[Request],
    fields: Sequence[str],
    ray_ids: Sequence[str] | None,
    times_ms: Sequence[int | None] | None,
    zone_name: str,
    zone_plan: str,
    lean: bool,
    parts: Parts,
) -> TableData:
    scheme = get_scheme(MANAGED)
    n = len(requests)
    bad = np.zeros(n, dtype=bool)
    # The CRS programs, for a large chunk, in worker processes (kept on each request).
    keep_runs(requests, fields)
    columns: list[tuple[str, Type, Encoded]] = []
    for f in fields:
        t = scheme.field_type(f)
        if t is None:
            raise ValueError(f"unknown field {f!r}")
        if lean and f in LEAN_FIELDS:
            columns.append((f, t, lean_column(f, parts, bad)))
            continue
        encoded = ENCODED.get(f)
        if encoded is not None and (direct := encoded(parts, bad)) is not None:
            columns.append((f, t, direct))
            continue
        column = _COLUMNS.get(f)
        if column is not None:
            values = column(parts)
        else:
            values = field_column(
                requests,
                f,
                ray_ids=ray_ids,
                times_ms=times_ms,
                zone_name=zone_name,
                zone_plan=zone_plan,
            )
        columns.append((f, t, _encoded(values, t, bad)))
    frame, selects = _source(n, columns, bad)
    return TableData(frame, selects, [int(i) for i in np.flatnonzero(bad)])


# -- columns read straight off the requests ----------------------------------------------
# The same values as field_column (the per-request functions of .request) for the fields
# most rules read, without a call per row: each reads the requests' cached parts, shared
# across columns (.parts.Parts), in one comprehension. Text goes through field_text only
# when a column is not all ASCII. Header lists and maps are joined here directly, checked
# once per column, instead of being built as lists first.


def _texts_of(values: list[str]) -> list[Any]:
    """Inner texts as field values: the list itself when every text is ASCII (checked in C)."""
    if all(map(str.isascii, values)):
        return values
    return [field_text(v) for v in values]


def _first_header(name: str) -> Callable[[Parts], list[Any]]:
    return lambda p: _texts_of(first_values(p, name))


def _all_headers(name: str, sep: str) -> Callable[[Parts], list[Any]]:
    return lambda p: _texts_of(all_values(p, name, sep))


def _uri(p: Parts) -> list[Any]:
    return _texts_of(
        [
            path + "?" + query if query else path
            for path, query in zip(paths(p), queries(p), strict=True)
        ]
    )


def _host(p: Parts) -> list[Any]:
    return _texts_of(hosts(p))


def _bodies(p: Parts) -> list[Any]:
    bodies = p.attribute("body")
    if bodies_as_sent(bodies):  # the common case: one pass, no call per request
        return bodies
    return _texts_of([r._inspected_body[0] for r in p.requests])


_COLUMNS: dict[str, Callable[[Parts], list[Any]]] = {
    "http.request.method": lambda p: _texts_of(p.attribute("method")),
    "http.request.version": lambda p: _texts_of([r.http_version for r in p.requests]),
    "http.request.uri": _uri,
    "http.request.uri.path": lambda p: _texts_of(paths(p)),
    "http.request.uri.query": lambda p: _texts_of(queries(p)),
    "http.request.uri.path.extension": lambda p: _texts_of(list(map(path_extension, paths(p)))),
    "http.host": _host,
    "http.user_agent": _first_header("user-agent"),
    "http.referer": _first_header("referer"),
    "http.cookie": _all_headers("cookie", "; "),
    "http.x_forwarded_for": _all_headers("x-forwarded-for", ", "),
    "http.request.body.raw": _bodies,
    "ip.src": lambda p: [r._ip for r in p.requests],
    "ip.src.asnum": lambda p: p.attribute("asn"),
    "ip.src.country": lambda p: _texts_of(p.attribute("country")),
}
for _raw in ("uri", "uri.path", "uri.query", "uri.path.extension"):
    _COLUMNS[f"raw.http.request.{_raw}"] = _COLUMNS[f"http.request.{_raw}"]


def _joined_lists(values: list[Any]) -> list[str | None]:
    """Each list joined with ``ITEM`` (NULL for the empty list: it reads as ``[]``).

    Every separator in the column is one a join put there unless some value holds one;
    the join puts ``len - 1`` in each list, so comparing the totals checks every value at
    once. Raises TypeError when a value is bytes, _NeedsJson when one holds ``ITEM``.
    """
    out = [ITEM.join(v) if v else None for v in values]
    present = [v for v in values if v]
    if _separators(out, ITEM) != sum(map(len, present)) - len(present):
        raise _NeedsJson
    return out


def _joined_maps(values: list[Any]) -> tuple[list[str | None], list[str | None]]:
    """Each map's keys joined with ``ENTRY``, and its value lists (``ITEM``) the same way.

    Checked as :func:`_joined_lists` checks lists; a map holding an empty list goes as
    JSON (it would read back as ``[""]``).
    """
    keys = [ENTRY.join(m) if m else None for m in values]
    groups = [ENTRY.join(map(ITEM.join, m.values())) if m else None for m in values]
    present = [m for m in values if m]
    sizes = [list(map(len, m.values())) for m in present]
    entries = sum(map(len, sizes))
    if (
        any(0 in s for s in sizes)
        or _separators(keys, ENTRY) != entries - len(present)
        or _separators(groups, ENTRY) != entries - len(present)
        or _separators(groups, ITEM) != sum(map(sum, sizes)) - entries
    ):
        raise _NeedsJson
    return keys, groups


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


def _joined(form: str, values: list[Any]) -> Encoded:
    if form == "list":
        return form, _joined_lists(values), None
    keys, groups = _joined_maps(values)
    return form, keys, groups


def _encoded(values: list[Any], t: Type, bad: np.ndarray) -> Encoded:
    """The column as DuckDB takes it (see :data:`Encoded`).

    Rows holding bytes are marked in ``bad``. The common case (no bytes) costs
    one pass over the column in C per check.
    """
    form = _form(t)
    if form in ("list", "map"):
        try:
            return _joined(form, values)
        except TypeError:  # bytes somewhere: find the rows, then join what is left
            values = _drop_bytes(values, bad, compound=True)
            try:
                return _joined(form, values)
            except _NeedsJson:
                pass
        except _NeedsJson:
            pass
        form = "json"
    if form == "json":
        try:
            return form, [None if v is None else _dumps(v) for v in values], None
        except TypeError:
            values = _drop_bytes(values, bad, compound=True)
            return form, [None if v is None else _dumps(v) for v in values], None
    kinds = set(map(type, values))
    if kinds == {type(None)}:
        return form, None, None
    if bytes in kinds:
        values = _drop_bytes(values, bad, compound=False)
    return form, values, None


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


#: How the scalar forms turn into typed columns (lists and maps: header_columns.split_sql).
_TYPED = {"plain": "{c}", "json": "{c}::JSON"}


def _source(
    n: int, columns: list[tuple[str, Type, Encoded]], bad: np.ndarray
) -> tuple[Any, list[str]]:
    """The frame DuckDB reads, and the SELECT list that types its columns."""
    base: dict[str, Any] = {"idx": np.arange(n, dtype=np.int64)}
    selects = ["idx"]
    for c, (field, t, (form, values, groups)) in enumerate(columns):
        col_type, target = duckdb_type(t), ident(field)
        if form == "joined":
            # The lean table's header text, split where a check reads it (see lean_sql).
            names = joined_names(field)  # a list's text, or a map's keys and value lists
            for suffix, name, data in zip(
                ("", "v"), names, (values, groups)[: len(names)], strict=False
            ):
                if data is None:
                    selects.append(f"NULL::VARCHAR AS {ident(name)}")
                    continue
                array = np.array(data, dtype=object)
                array[bad] = None
                base[f"c{c}{suffix}"] = array
                selects.append(f"c{c}{suffix}::VARCHAR AS {ident(name)}")
            continue
        if values is None:
            # An all-NULL column has no type DuckDB can infer: name the type outright.
            selects.append(f"NULL::{col_type} AS {target}")
            continue
        for suffix, data in (("", values), ("v", groups)):
            if data is not None:
                array = np.array(data, dtype=object)
                array[bad] = None
                base[f"c{c}{suffix}"] = array
        if form in ("list", "map"):
            # NULL stands for the empty list or map (the join of nothing).
            source = split_sql(form, f"c{c}", f"c{c}v")
        else:
            source = _TYPED[form].format(c=f"c{c}")
        selects.append(f"{source}::{col_type} AS {target}")
    return pd.DataFrame(base), selects
