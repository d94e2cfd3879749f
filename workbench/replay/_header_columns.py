"""The request table's header columns: lists and maps of text joined with control characters.

``http.request.headers.names`` and ``.values`` (lists) and ``http.request.headers``
(a map of lists) travel to DuckDB as joined text: each list joined with
:data:`ITEM`, a map's keys joined with :data:`ENTRY` beside its value lists
(each joined with ``ITEM``, then the lists with ``ENTRY``). The typed table
(:func:`workbench.replay._table.build_table`) splits them back into lists and
maps as it loads. The *lean* table of the whole-table path keeps the joined
text (columns named by :func:`joined_names`): building millions of small lists
and maps cost DuckDB more than all the other columns together, and most checks
never need them. :func:`lean_sql` rewrites SQL written for the typed table so
that each use of such a field splits the text there, on the rows that reach it
(see :mod:`workbench.replay._list_gates`); one key of the map is read off the
names and values, so the lean table holds the map only where a check reads the
map as a whole (:func:`lean_fields`).

    >>> lean_sql('len("http.request.headers.names")')
    'len((CASE WHEN "http.request.headers.names:joined" IS NULL THEN []::VARCHAR[] ELSE string_split("http.request.headers.names:joined", chr(31)) END))'
    >>> joined_names("http.request.headers")
    ('http.request.headers:keys', 'http.request.headers:groups')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from ..rules_language.sql_fragments import ascii_lower, ident
from ..traffic.textvalues import field_text

# Separators for lists and maps of text: control characters that real values almost never
# hold. Joining with them costs a tenth of JSON in Python; a column where some value does
# hold one goes as JSON instead (typed table) or its rows go per request (lean table).
ITEM, ENTRY = "\x1f", "\x1d"

#: A column as DuckDB takes it: its form, its values (None when all NULL) and, for the
#: ``map`` form, each map's value lists beside its keys.
Encoded = tuple[str, list[Any] | None, list[Any] | None]

NAMES, VALUES, HEADERS = (
    "http.request.headers.names",
    "http.request.headers.values",
    "http.request.headers",
)
#: The fields the lean table keeps as joined text.
LEAN_FIELDS = frozenset({NAMES, VALUES, HEADERS})


def lean_fields(fields: Sequence[str], sql: Sequence[str]) -> list[str]:
    """The fields a lean table needs for ``fields``, once :func:`lean_sql` wrote ``sql``:
    the header map only where some SQL still reads the map itself; the header names
    and values wherever some SQL reads them."""
    text = "\n".join(sql)
    keep = [f for f in fields if f != HEADERS or ident(joined_names(HEADERS)[0]) in text]
    keep += [f for f in (NAMES, VALUES) if f not in keep and ident(joined_names(f)[0]) in text]
    return sorted(keep)


def joined_names(field: str) -> tuple[str, ...]:
    """The lean table's column names for ``field``: one for a list, keys and groups for a map."""
    if field == HEADERS:
        return f"{field}:keys", f"{field}:groups"
    return (f"{field}:joined",)


def separators(texts: list[Any], sep: str) -> int:
    """How many times ``sep`` occurs in the column's texts (None skipped), in C."""
    return sum(map(str.count, filter(None, texts), repeat(sep)))


def utf8_or_bad(texts: list[str | None], bad: np.ndarray) -> list[str | None]:
    """``texts``, with each row whose text is not UTF-8 (a lone surrogate) marked in ``bad``.

    A joined text holds a surrogate exactly when one of its values does, and such a
    value is bytes as a field value: the row the generic path would leave out.
    """
    if all(map(str.isascii, filter(None, texts))):
        return texts
    for i, text in enumerate(texts):
        if text is not None and not text.isascii() and not isinstance(field_text(text), str):
            bad[i] = True
    return texts


def header_list(part: int) -> Callable[[Any, np.ndarray], Encoded | None]:
    """``http.request.headers.names`` (part 0) or ``.values`` (1), joined as the list form.

    Takes the chunk's :class:`~workbench.traffic.parts.Parts` (each request's header
    names, values and lower-case names); None when a value holds :data:`ITEM` (the
    generic path then sends JSON).
    """

    def column(p: Any, bad: np.ndarray) -> Encoded | None:
        lists = [h[part] for h in p.headers]
        joined = [ITEM.join(v) if v else None for v in lists]
        present = [v for v in lists if v]
        if separators(joined, ITEM) != sum(map(len, present)) - len(present):
            return None
        return "list", utf8_or_bad(joined, bad), None

    return column


def header_map(p: Any, bad: np.ndarray) -> Encoded | None:
    """``http.request.headers`` joined as the map form (keys, then each key's values)."""
    headers = p.headers
    # With no repeated name (the common case) a request's keys are its lower-case names and
    # each holds one value: both join as they are, with no map to build.
    keys = [ENTRY.join(k) if k else None for _, _, k in headers]
    groups = [ENTRY.join(v) if v else None for _, v, _ in headers]
    values = sum(len(v) for _, v, _ in headers)
    entries = values
    for i in [i for i, (_, _, k) in enumerate(headers) if len(set(k)) != len(k)]:
        m = p.requests[i].header_map
        keys[i] = ENTRY.join(m)
        groups[i] = ENTRY.join(map(ITEM.join, m.values()))
        entries -= len(headers[i][2]) - len(m)
    maps = len(keys) - keys.count(None)
    if (
        separators(keys, ENTRY) != entries - maps
        or separators(groups, ENTRY) != entries - maps
        or separators(groups, ITEM) != values - entries
    ):
        return None
    return "map", utf8_or_bad(keys, bad), utf8_or_bad(groups, bad)


#: The typed table's header columns encoded here directly (None: the generic path).
ENCODED: dict[str, Callable[[Any, np.ndarray], Encoded | None]] = {
    HEADERS: header_map,
    NAMES: header_list(0),
    VALUES: header_list(1),
}


def lean_column(field: str, p: Any, bad: np.ndarray) -> Encoded:
    """``field`` for the lean table: its joined text (form ``joined``), never JSON.

    A row where a header name or value holds a separator is marked in ``bad``
    (checked per request) and its text left NULL.
    """
    encoded = ENCODED[field](p, bad)
    if encoded is None:
        for i, (names, values, _) in enumerate(p.headers):
            if any(ITEM in t or ENTRY in t for t in (*names, *values)):
                bad[i] = True
        encoded = ENCODED[field](_Without(p, bad), bad)
        assert encoded is not None  # no separator is left in the rows kept
    _, values, groups = encoded
    return "joined", values, groups


class _Without:
    """A chunk's header parts with the rows marked in ``bad`` emptied."""

    def __init__(self, p: Any, bad: np.ndarray) -> None:
        self.requests = p.requests
        self.headers = [((), (), []) if bad[i] else h for i, h in enumerate(p.headers)]


#: The separators as DuckDB writes them.
ITEM_SQL, ENTRY_SQL = f"chr({ord(ITEM)})", f"chr({ord(ENTRY)})"


def split_sql(form: str, text: str, groups: str = "") -> str:
    """SQL turning joined text back into its list (``form`` "list") or map ("map", its
    keys in ``text`` and value lists in ``groups``); NULL text is the empty one."""
    if form == "list":
        return f"(CASE WHEN {text} IS NULL THEN []::VARCHAR[] ELSE string_split({text}, {ITEM_SQL}) END)"
    return (
        f"(CASE WHEN {text} IS NULL THEN MAP([]::VARCHAR[], []::VARCHAR[][]) ELSE "
        f"map(string_split({text}, {ENTRY_SQL}), list_transform(string_split({groups}, {ENTRY_SQL}), "
        f"lambda e: string_split(e, {ITEM_SQL}))) END)"
    )


#: One key of the header map, as the SQL compiler writes it (a plain literal key).
_MAP_KEY = re.compile(
    re.escape(f"map_extract_value(CAST({ident(HEADERS)} AS MAP(VARCHAR, VARCHAR[])), ")
    + r"('(?:[^']|'')*')\)"
)


def _lookup(key: str) -> str:
    """The values of the headers whose lower-case name is ``key`` (a SQL literal), in
    request order, or NULL when there is none: what the map gives for the key."""
    pairs = f"list_zip(CAST({ident(NAMES)} AS VARCHAR[]), CAST({ident(VALUES)} AS VARCHAR[]))"
    named = f"list_filter({pairs}, lambda p: {ascii_lower('p[1]')} = {key})"
    return f"nullif(list_transform({named}, lambda p: p[2]), []::VARCHAR[])"


def lean_sql(sql: str) -> str:
    """``sql`` (written for the typed table) for the lean table: each header field it
    reads is split from its joined text where it is read. One key of the header map
    is read off the names and values (no map is built)."""
    sql = _MAP_KEY.sub(lambda m: _lookup(m.group(1)), sql)
    for field in (NAMES, VALUES, HEADERS):
        quoted = ident(field)
        if quoted in sql:
            cols = [ident(c) for c in joined_names(field)]
            sql = sql.replace(quoted, split_sql("map" if field == HEADERS else "list", *cols))
    return sql
