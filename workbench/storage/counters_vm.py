"""rowsRead where the VM's stepping depends on the data: how far a filtered scan went, the
key lookups an ``IN`` list drives, and ``EXISTS`` subqueries that stop at their first row.

The platform counts a row each time a btree cursor lands on one (``shared/facts/do-storage.md``).
For these shapes the count depends on where the matching rows lie, so it is measured by
small probe queries on the same database: each probe asks SQLite where the scan would stop
(the position of a match in rowid order, whether a subquery has a row) rather than pasting
any value into SQL text. A shape the probes cannot take returns ``None`` and the caller keeps
its plain model.

    >>> paren_body("EXISTS (SELECT ')' FROM u WHERE (a) = 1) AND x", 7)
    ("SELECT ')' FROM u WHERE (a) = 1", 40)
    >>> split_top("1, (2, 3), 'a,b'")
    ['1', '(2, 3)', "'a,b'"]
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import apsw

if TYPE_CHECKING:
    from .counters import Loop, StatementCounter

_FROM = re.compile(r"\bFROM\b", re.I)
_CLAUSE_END = re.compile(r"\b(?:GROUP|ORDER|LIMIT|WINDOW)\b", re.I)
_EXISTS = re.compile(r"\b(NOT\s+)?EXISTS\s*\(", re.I)
_PARAM = re.compile(r"[?:@$]")
_REAL = ("scan", "rowid_eq", "unique_eq", "range")
_QUOTES = {"'": "'", '"': '"', "`": "`", "[": "]"}


def paren_body(text: str, start: int) -> tuple[str, int] | None:
    """The text inside the parenthesis opening at ``text[start]``, and the index just past
    its closing one (quotes and nested parentheses skipped)."""
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch in _QUOTES:
            end = text.find(_QUOTES[ch], i + 1)
            if end < 0:
                return None
            i = end
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
        i += 1
    return None


def split_top(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses and quotes."""
    parts, depth, last, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch in _QUOTES:
            end = text.find(_QUOTES[ch], i + 1)
            i = end if end >= 0 else len(text)
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[last:i].strip())
            last = i + 1
        i += 1
    parts.append(text[last:].strip())
    return parts


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _tail(text: str) -> str | None:
    """What follows a SELECT's first FROM, up to its GROUP/ORDER/LIMIT clauses."""
    m = _FROM.search(text)
    if not m:
        return None
    return _CLAUSE_END.split(text[m.end() :])[0].rstrip().rstrip(";")


def _one(c: StatementCounter, sql: str, args: tuple) -> int | None:
    try:
        value = c.p._query(sql, args)[0][0]
    except apsw.Error:  # a WITHOUT ROWID table, or a shape the probe cannot take
        return None
    return int(value or 0)


def filtered_scan_reads(c: StatementCounter, loop: Loop, pulled: int) -> int:
    """A filtered scan has stepped onto every row up to its ``pulled``-th match (the VM
    skips the rows the WHERE refuses), or onto the whole table once it ran to its end
    without a LIMIT stopping it."""
    table = c.p.resolve(loop.name, c.auth.reads)
    if c.ended:
        limit = re.search(r"\bLIMIT\s+(\d+)\s*;?\s*$", c.st.text, re.I)
        if not (limit and pulled and pulled >= int(limit.group(1))):
            c.fixed_reads = c.p.rows(table)
            return c.fixed_reads
    if pulled <= 0:
        return 0
    if pulled not in c.positions:
        found = scan_position(c, loop, table, pulled)
        c.positions[pulled] = pulled if found is None else found or c.p.rows(table)
    return c.positions[pulled]


def scan_position(c: StatementCounter, loop: Loop, table: str, k: int) -> int | None:
    """Rows a rowid-order scan of ``table`` lands on up to its ``k``-th match (0: no such match)."""
    tail = _tail(c.st.text)
    if tail is None:
        return None
    probe = (
        f"SELECT count(*) FROM main.{_quote(table)} WHERE rowid <= "
        f"(SELECT {_quote(loop.name)}.rowid FROM {tail} LIMIT 1 OFFSET {int(k) - 1})"
    )
    return _one(c, probe, c.bindings)


def in_list_reads(c: StatementCounter, loop: Loop) -> int | None:
    """An ``IN`` list that drives a rowid lookup: one seek per distinct listed value (a seek by
    rowid lands on a row whether or not it finds its own). Lookups through an index count
    per value as an equality lookup does: the matches plus the one-row read-ahead."""
    text = c.st.text
    m = re.search(r"\bIN\s*\(", text, re.I)
    if not m or len(re.findall(r"\bIN\s*\(", text, re.I)) != 1:
        return None
    found = paren_body(text, m.end() - 1)
    if found is None:
        return None
    body = found[0].strip()
    if _PARAM.search(body) or _PARAM.search(text[: m.start()]):
        return None  # the probe's parameters would not line up with the statement's
    column = _in_column(text, m.start())
    keys = {k.lower() for k in re.findall(r"(\w+)=\?", loop.cons)}
    if loop.kind == "rowid_eq":
        table = c.p.resolve(loop.name, c.auth.reads)
        pk = c.p._query("SELECT name FROM pragma_table_info(?) WHERE pk > 0", (table,))
        keys |= {"oid", "_rowid_"} | {str(r[0]).lower() for r in pk}
    if column.split(".")[-1].strip('"`[]').lower() not in keys:
        return None  # the IN list filters rows; it does not drive the lookup
    if re.match(r"(?:SELECT|WITH|VALUES)\b", body, re.I):
        values = f"SELECT * FROM ({body})"
    else:
        values = "VALUES " + ", ".join(f"({item})" for item in split_top(body))
    distinct = _one(c, f"SELECT count(*) FROM (SELECT DISTINCT * FROM ({values}))", ())
    if distinct is None:
        return None
    if loop.kind == "rowid_eq":
        return distinct
    tail = _tail(text)
    if tail is None:
        return None
    # each value that matches: its rows, then one step onto the next entry
    probe = f"SELECT count(*), count(DISTINCT {column}) FROM {tail}"
    try:
        rows, hits = c.p._query(probe, c.bindings)[0]
    except apsw.Error:
        return None
    return int(rows) + (int(hits) if loop.kind == "range" else 0)


def _in_column(text: str, at: int) -> str:
    m = re.search(r"([\w.\"]+)\s+(?:NOT\s+)?$", text[:at], re.I)
    return m.group(1) if m else "NULL"


def exists_reads(c: StatementCounter, loops: list[Loop]) -> int | None:
    """An ``EXISTS`` subquery stops at its first row: once if it is uncorrelated, once per
    outer row if it is correlated. ``loops`` are the statement's loops outside subqueries."""
    text = c.st.text
    matches = list(_EXISTS.finditer(text))
    inner = [lp for lp in c.loops if (lp.exists or lp.group) and lp.kind in _REAL]
    if len(matches) != 1 or len(inner) != 1:
        return None
    m = matches[0]
    found = paren_body(text, m.end() - 1)
    if found is None:
        return None
    sub, end = found
    if _PARAM.search(sub):
        return None  # the probe's parameters would not line up with the statement's
    ex = inner[0]
    table = c.p.resolve(ex.name, c.auth.reads)
    one_pass = _pass(c, ex, table, sub)
    if one_pass is None:
        return None
    build = c.p.rows(table) if ex.auto else 0
    outer = [lp for lp in loops if lp is not ex]
    correlated = ex.correlated or (ex.exists and bool(loops) and loops[0] is not ex)
    if not correlated:
        once = _one(c, f"SELECT {one_pass}", ())
        hit = _one(c, f"SELECT EXISTS ({sub})", ())
        if once is None or hit is None:
            return None
        # a constant WHERE term is tested before the outer loops start: they run only if it
        # holds (EXISTS found a row, NOT EXISTS found none); in the select list they always run
        in_where = re.search(r"\bWHERE\b", text[: m.start()], re.I) is not None
        runs = bool(hit) != bool(m.group(1)) if in_where else True
        after = c._nested(outer, False, False) if runs else 0
        return build + once + after
    if len(outer) != 1:
        return None
    # the outer rows that reach the subquery: the outer WHERE with the EXISTS term left true
    rest = text[: m.start()] + "1" + text[end:]
    tail = _tail(rest)
    if tail is None:
        return None
    total = _one(c, f"SELECT total({one_pass}) FROM {tail}", c.bindings)
    if total is None:
        return None
    return c._nested(outer, False, False) + build + total


def _pass(c: StatementCounter, loop: Loop, table: str, sub: str) -> str | None:
    """SQL for the rows one run of the subquery lands on before it stops."""
    if loop.kind == "rowid_eq":
        return "1"
    if loop.kind in ("unique_eq", "range"):
        return f"EXISTS ({sub})"  # an index seek counts only when it finds its first match
    if loop.kind != "scan":
        return None
    tail = _tail(sub)
    if tail is None:
        return None
    first = f"SELECT {_quote(loop.name)}.rowid FROM {tail} LIMIT 1"
    return (
        f"coalesce(nullif((SELECT count(*) FROM main.{_quote(table)} AS _vm "
        f"WHERE _vm.rowid <= ({first})), 0), {c.p.rows(table)})"
    )
