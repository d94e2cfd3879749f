"""rowsRead where the VM's stepping depends on the data: how far a filtered scan went, the
key lookups an ``IN`` list drives, and ``EXISTS`` subqueries that stop at their first row.

The platform counts a row each time a btree cursor lands on one (``shared/facts/do-storage.md``).
For these shapes the count depends on where the matching rows lie, so it is measured by
small probe queries on the same database: each probe asks SQLite where the scan would stop
(the position of a match in the table's key order, rowid or a WITHOUT ROWID primary key,
whether a subquery has a row) rather than pasting any value into SQL text. Parameters are
renumbered ``?N`` so that a probe built from any piece of the statement takes the
statement's own bindings. Several ``[NOT] EXISTS`` terms are counted in the order the plan
and the VM test them (:mod:`._counters_terms` finds them). A shape the probes cannot take
returns ``None`` and the caller keeps its plain model.

    >>> paren_body("EXISTS (SELECT ')' FROM u WHERE (a) = 1) AND x", 7)
    ("SELECT ')' FROM u WHERE (a) = 1", 40)
    >>> split_top("1, (2, 3), 'a,b'")
    ['1', '(2, 3)', "'a,b'"]
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import apsw

from ._counters_terms import owners, top_terms
from ._sql_statements import split_sql
from .names import quoted

if TYPE_CHECKING:
    from ._counters import Loop, StatementCounter

_FROM = re.compile(r"\bFROM\b", re.I)
_CLAUSE_END = re.compile(r"\b(?:GROUP|ORDER|LIMIT|WINDOW)\b", re.I)
_EXISTS = re.compile(r"\b(NOT\s+)?EXISTS\s*\(", re.I)
# the tokens that matter when renumbering parameters: strings, quoted names, comments
_TOKEN = re.compile(
    r"'(?:[^']|'')*'?|\"(?:[^\"]|\"\")*\"?|`(?:[^`]|``)*`?|\[[^\]]*\]?|--[^\n]*|/\*.*?(?:\*/|\Z)"
    r"|(?P<param>\?\d*|[:@$][A-Za-z0-9_]+)",
    re.S,
)
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


def numbered(text: str) -> str:
    """``text`` with every parameter written ``?N`` as SQLite numbers it (a bare ``?`` one
    past the largest so far, a name its first number), so a probe built from any piece of
    the statement takes the statement's own bindings.

    >>> numbered("SELECT ? , '?', :a, ?5, ?, :a")
    "SELECT ?1 , '?', ?2, ?5, ?6, ?2"
    """
    names: dict[str, int] = {}
    top = 0

    def one(m: re.Match[str]) -> str:
        nonlocal top
        tok = m.group("param")
        if tok is None:
            return m.group()
        if tok[0] == "?":
            n = int(tok[1:]) if len(tok) > 1 else top + 1
        else:
            n = names.setdefault(tok, top + 1)
        top = max(top, n)
        return f"?{n}"

    return _TOKEN.sub(one, text)


def _args(c: StatementCounter, sql: str) -> tuple:
    """The statement's bindings a probe uses (up to its highest ``?N``)."""
    top = max(
        (int(m.group("param")[1:]) for m in _TOKEN.finditer(sql) if m.group("param")), default=0
    )
    return tuple(c.bindings[:top])


def _tail(text: str) -> str | None:
    """What follows a SELECT's first FROM, up to its GROUP/ORDER/LIMIT clauses."""
    m = _FROM.search(text)
    if not m:
        return None
    return _CLAUSE_END.split(text[m.end() :])[0].rstrip().rstrip(";")


def _one(c: StatementCounter, sql: str) -> int | None:
    try:
        value = c.p._query(sql, _args(c, sql))[0][0]
    except apsw.Error:  # a WITHOUT ROWID table, or a shape the probe cannot take
        return None
    return int(value or 0)


def filtered_scan_reads(c: StatementCounter, loop: Loop, pulled: int) -> int:
    """A filtered scan has stepped onto every row up to its ``pulled``-th match (the VM
    skips the rows the WHERE refuses), or onto the whole table once it ran to its end
    without a LIMIT stopping it."""
    table = c.p.resolve(loop.name, c.auth.reads)
    if c.ended:
        limit = _limit(c)
        if not (limit is not None and pulled and pulled >= limit):
            c.fixed_reads = max(c.p.rows(table), 1)  # (an empty table's Rewind counts)
            return c.fixed_reads
    if pulled <= 0:
        return 0
    if pulled not in c.positions:
        found = scan_position(c, loop, table, pulled)
        c.positions[pulled] = pulled if found is None else found or c.p.rows(table)
    return c.positions[pulled]


def _limit(c: StatementCounter) -> int | None:
    """The statement's closing ``LIMIT n`` (a literal or a bound integer), if any."""
    m = re.search(r"\bLIMIT\s+(\d+|\?\d+)\s*;?\s*$", numbered(c.st.text), re.I)
    if not m:
        return None
    n = m.group(1)
    if n[0] != "?":
        return int(n)
    value = c.bindings[int(n[1:]) - 1] if int(n[1:]) <= len(c.bindings) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def scan_position(c: StatementCounter, loop: Loop, table: str, k: int) -> int | None:
    """Rows a scan of ``table`` in its key order lands on up to its ``k``-th match (0: no
    such match)."""
    tail = _tail(numbered(c.st.text))
    key = _scan_key(c, table)
    if tail is None or key is None:
        return None
    mine = ", ".join(f"_vm.{col}" for col in key)
    theirs = ", ".join(f"{quoted(loop.name)}.{col}" for col in key)
    probe = (
        f"SELECT count(*) FROM main.{quoted(table)} AS _vm WHERE ({mine}) <= "
        f"(SELECT {theirs} FROM {tail} ORDER BY {theirs} LIMIT 1 OFFSET {int(k) - 1})"
    )
    return _one(c, probe)


def _scan_key(c: StatementCounter, table: str) -> list[str] | None:
    """The columns a full scan of ``table`` walks in order: its rowid, or a WITHOUT ROWID
    table's primary key (None when a key column is DESC: the probes assume ascending)."""
    pk = c.p._query("SELECT name FROM pragma_index_list(?) WHERE origin = 'pk'", (table,))
    if not pk or c.p._has_rowid(table):
        return ["rowid"]
    cols = c.p._query(
        "SELECT name, desc FROM pragma_index_xinfo(?) WHERE key ORDER BY seqno", (pk[0][0],)
    )
    if not cols or any(desc for _, desc in cols):
        return None
    return [quoted(str(name)) for name, _ in cols]


def in_list_reads(c: StatementCounter, loop: Loop) -> int | None:
    """An ``IN`` list that drives a key lookup, as the VM steps it: the list is built in an
    ephemeral index (a subquery's own reads, run to its end, fill it) and stepped through,
    one read per distinct value (its ``Rewind`` counts even when it is empty), then each
    value is looked up: a rowid seek counts 1 hit or miss; an index seek counts its
    matches, plus the step onto the next entry when one follows (none at the index's end).
    A list ``SELECT rowid FROM`` a table is that table stepped through directly (the plan's
    ``ROWID SEARCH ... FOR IN-OPERATOR``): one read per row and a seek for each.
    None when the probes cannot take the shape."""
    text = numbered(c.st.text)
    keys = {k.lower() for k in re.findall(r"(\w+)=\?", loop.cons)}
    if loop.kind == "rowid_eq":
        table = c.p.resolve(loop.name, c.auth.reads)
        pk = c.p._query("SELECT name FROM pragma_table_info(?) WHERE pk > 0", (table,))
        keys |= {"oid", "_rowid_"} | {str(r[0]).lower() for r in pk}
    # the one list on the lookup's key drives it; any other IN only filters the rows found
    driving = [
        (m, column)
        for m in re.finditer(r"\bIN\s*\(", text, re.I)
        for column in [_in_column(text, m.start())]
        if column.split(".")[-1].strip('"`[]').lower() in keys
        and not re.search(r"\bNOT\s*$", text[: m.start()], re.I)
    ]
    if len(driving) != 1:
        return None
    m, column = driving[0]
    found = paren_body(text, m.end() - 1)
    if found is None:
        return None
    body = found[0].strip()
    sub_reads = 0
    if re.match(r"(?:SELECT|WITH|VALUES)\b", body, re.I):
        values = f"SELECT * FROM ({body})"
        plan = [str(r[3]) for r in _rows(c, "EXPLAIN QUERY PLAN " + text)]
        if any("FOR IN-OPERATOR" in d for d in plan):  # the table itself is the list
            n = _one(c, f"SELECT count(*) FROM ({values})")
            return None if n is None else 2 * n
        counted = subquery_reads(c, body)
        if counted is None:
            return None
        sub_reads = counted
    else:
        values = "VALUES " + ", ".join(f"({item})" for item in split_top(body))
    distinct = _one(c, f"SELECT count(*) FROM (SELECT DISTINCT * FROM ({values}))")
    if distinct is None:
        return None
    listed = sub_reads + max(distinct, 1)
    if loop.kind == "rowid_eq":
        # a value that is not an integer is never sought (the VM's MustBeInt jumps past)
        ints = _one(
            c,
            f"WITH _l(v) AS ({values}) SELECT count(DISTINCT v) FROM _l WHERE CAST(v AS INTEGER) == v",
        )
        return None if ints is None else listed + ints
    tail = _tail(text)
    if tail is None:
        return None
    # each value that matches: its rows, then one step onto the next entry if there is one
    table = c.p.resolve(loop.name, c.auth.reads)
    mine = column.split(".")[-1]
    theirs = f"{quoted(loop.name)}.{mine}"
    probe = (
        f"SELECT count(*), count(DISTINCT {theirs}) FILTER (WHERE EXISTS (SELECT 1 FROM "
        f"main.{quoted(table)} AS _vm WHERE _vm.{mine} > {theirs})) FROM {tail}"
    )
    try:
        rows, followed = c.p._query(probe, _args(c, probe))[0]
    except apsw.Error:
        return None
    return listed + int(rows) + (int(followed) if loop.kind == "range" else 0)


def subquery_reads(c: StatementCounter, body: str) -> int | None:
    """The reads of a subquery run to its end, counted as a statement of its own."""
    try:
        st = split_sql(body)[0]
    except Exception:  # noqa: BLE001 - a piece the splitter refuses: no count
        return None
    sub = type(c)(c.p, st, c.bindings)  # (a StatementCounter, without importing its module)
    sub.auth = c.auth
    sub.executed(False)
    rows = _one(c, f"SELECT count(*) FROM ({body})")
    if rows is None or not (sub.real or sub.fixed_reads is not None):
        return None
    sub.done = sub.ended = True
    return sub.reads(rows, True)


def _rows(c: StatementCounter, sql: str) -> list[tuple]:
    try:
        return list(c.p._query(sql, _args(c, sql)))
    except apsw.Error:
        return []


def _in_column(text: str, at: int) -> str:
    m = re.search(r"([\w.\"]+)\s+(?:NOT\s+)?$", text[:at], re.I)
    return m.group(1) if m else "NULL"


def exists_reads(c: StatementCounter, loops: list[Loop]) -> int | None:
    """An ``EXISTS`` subquery stops at its first row: once if it is uncorrelated, once per
    outer row if it is correlated. ``loops`` are the statement's loops outside subqueries."""
    text = numbered(c.st.text)
    matches = list(_EXISTS.finditer(text))
    inner = [lp for lp in c.loops if (lp.exists or lp.group) and lp.kind in _REAL]
    counted = where_exists_reads(c, loops, text) if matches else None
    if counted is not None or len(matches) > 1:
        return counted
    if len(matches) != 1 or len(inner) != 1:
        return None
    m = matches[0]
    found = paren_body(text, m.end() - 1)
    if found is None:
        return None
    sub, end = found
    ex = inner[0]
    table = c.p.resolve(ex.name, c.auth.reads)
    one_pass = _pass(c, ex, table, sub)
    if one_pass is None:
        return None
    build = c.p.rows(table) if ex.auto else 0
    outer = [lp for lp in loops if lp is not ex]
    correlated = ex.correlated or (ex.exists and bool(loops) and loops[0] is not ex)
    if not correlated:
        once = _one(c, f"SELECT {one_pass}")
        hit = _one(c, f"SELECT EXISTS ({sub})")
        if once is None or hit is None:
            return None
        # an EXISTS made a join loop before the outer ones runs them only if it found a row;
        # a subquery (NOT EXISTS, or in the select list) is tested at the outer row
        runs = bool(hit) if ex.exists else True
        after = c._nested(outer, False, False) if runs else 0
        return build + once + after
    if len(outer) != 1:
        return None
    # the outer rows that reach the subquery: the outer WHERE with the EXISTS term left true
    rest = text[: m.start()] + "1" + text[end:]
    tail = _tail(rest)
    if tail is None:
        return None
    total = _one(c, f"SELECT total({one_pass}) FROM {tail}")
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
    key = _scan_key(c, table)
    if key is None:
        return None
    mine = ", ".join(f"_vm.{col}" for col in key)
    theirs = ", ".join(f"{quoted(loop.name)}.{col}" for col in key)
    first = f"SELECT {theirs} FROM {tail} ORDER BY {theirs} LIMIT 1"
    return (
        f"coalesce(nullif((SELECT count(*) FROM main.{quoted(table)} AS _vm "
        f"WHERE ({mine}) <= ({first})), 0), {c.p.rows(table)})"
    )


def where_exists_reads(c: StatementCounter, loops: list[Loop], text: str) -> int | None:
    """``[NOT] EXISTS`` terms of a WHERE whose terms are all joined by ``AND`` or all by
    ``OR``, over one outer table, counted in the order the VM tests them:

    - an ``EXISTS`` the planner made a join loop before the outer table runs once, to its
      first row, and the loops inside it run only if it found one; placed after the outer
      table, it runs for each outer row that passed every term of the outer row;
    - any other ``[NOT] EXISTS`` is a subquery tested at the outer row (after the row's
      own terms; a correlated one after the uncorrelated ones), only when the terms before
      it let it be reached (``AND``: they held; ``OR``: they failed). Uncorrelated, it runs
      once, at the first row that reaches it; correlated, once per such row. The outer
      table is stepped through in full either way."""
    found = top_terms(text)
    if found is None:
        return None
    joiner, (start, stop), spans = found
    outer = text[start:stop]
    terms = []  # (span, sub, negated), the [NOT] EXISTS terms in text order
    for a, b in spans:
        m = _EXISTS.match(text, a)
        body = paren_body(text, m.end() - 1) if m else None
        if m and body and body[1] == b:
            terms.append(((a, b), body[0], bool(m.group(1))))
    joined = [lp for lp in loops if lp.exists]
    main = [lp for lp in loops if not lp.exists]
    groups: dict[int, list[Loop]] = {}
    for lp in c.loops:
        if lp.group:
            groups.setdefault(lp.group, []).append(lp)
    if len(main) != 1 or not terms or len(terms) != len(joined) + len(groups):
        return None
    if any(len(g) != 1 or g[0].kind not in _REAL for g in groups.values()):
        return None
    if joiner == "OR" and joined:
        return None
    loop_of = owners([(sub, negated) for _, sub, negated in terms], joined, groups)
    if loop_of is None:
        return None
    at = loops.index(main[0])
    owner_of = {span: lp for (span, _, _), lp in zip(terms, loop_of, strict=True)}
    sub_of = {span: sub for span, sub, _ in terms}
    pre = sorted((lp for lp in joined if loops.index(lp) < at), key=loops.index)
    post = sorted((lp for lp in joined if loops.index(lp) > at), key=loops.index)
    spans_of = {id(lp): span for span, lp in owner_of.items()}
    # the order the outer row's terms are tested in
    if joiner == "AND":
        level = [sp for sp in spans if sp not in owner_of or not owner_of[sp].exists]
        level.sort(key=lambda sp: sp in owner_of and owner_of[sp].correlated)
    else:
        level = list(spans)
    reads = 0
    if pre and main[0].kind == "scan" and not c.p.rows(c.p.resolve(main[0].name, c.auth.reads)):
        return 0  # the VM checks that the outer table has a row (IfEmpty) before them
    for lp in pre:  # once each, and nothing further once one finds no row
        span = spans_of[id(lp)]
        once = _pass_total(c, lp, sub_of[span], None, "")
        hit = _one(c, f"SELECT EXISTS ({sub_of[span]})")
        if once is None or hit is None:
            return None
        reads += once[1]
        if not hit:
            return reads
    reads += c._nested(main, False, False)
    tested: list[str] = []
    for span in level + [spans_of[id(lp)] for lp in post]:
        term = f"({text[span[0] : span[1]]})"
        if span in owner_of:
            lp = owner_of[span]
            if joiner == "AND":
                cond = " AND ".join(tested) or "1"
            else:
                cond = " AND ".join(f"NOT {t}" for t in tested) or "1"
            per_row = lp.correlated or (lp.exists and lp in post)
            got = _pass_total(c, lp, sub_of[span], outer, cond if per_row else "")
            if got is None:
                return None
            reached = (
                got[0]
                if per_row
                else _one(c, f"SELECT EXISTS (SELECT 1 FROM {outer} WHERE {cond})")
            )
            if reached is None:
                return None
            if reached:
                reads += got[1]
        tested.append(term)
    return reads


def _pass_total(
    c: StatementCounter, lp: Loop, sub: str, outer: str | None, cond: str
) -> tuple[int, int] | None:
    """``(runs, rows)`` of a subquery's loop: run once (no ``cond``), or once for each row
    of ``outer`` that meets ``cond``; an automatic index is built when it is first reached."""
    table = c.p.resolve(lp.name, c.auth.reads)
    one_pass = _pass(c, lp, table, sub)
    if one_pass is None:
        return None
    if not cond:
        got = _one(c, f"SELECT {one_pass}")
        row: tuple | None = None if got is None else (1, got)
    else:
        row = _row(c, f"SELECT count(*), total({one_pass}) FROM {outer} WHERE {cond}")
    if row is None:
        return None
    runs, rows = int(row[0]), int(row[1])
    return runs, rows + (c.p.rows(table) if lp.auto and runs else 0)


def _row(c: StatementCounter, sql: str) -> tuple | None:
    try:
        return tuple(c.p._query(sql, _args(c, sql))[0])
    except apsw.Error:
        return None
