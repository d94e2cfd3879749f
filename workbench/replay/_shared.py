"""Sub-expressions the checks of a plan share, each computed once per table.

The managed rulesets decode the same few fields in hundreds of checks
(``url_decode(concat(http.request.uri, "\\n", http.request.body.raw), "r")``
and the like). Compiled one check at a time, DuckDB would decode them once per
check. :class:`SharedColumns` is the sharing hook of the SQL compiler
(:data:`workbench.rules_language.sql_compiler.Share`): each call of a function in
:data:`SHARED_CALLS` becomes a column named ``_wb_s<n>``, one per distinct SQL
text, and checks refer to the column. A shared call inside another one gives
layers: :meth:`._checks.CheckQuery.select` computes layer after layer, and the
checks read the last one.

    >>> from workbench.rules_language import compile_expression
    >>> from workbench.rules_language.sql_compiler import to_sql
    >>> shared = SharedColumns()
    >>> a = compile_expression('lower(url_decode(http.request.uri.query)) contains "x"')
    >>> b = compile_expression('url_decode(http.request.uri.query) eq "y"')
    >>> to_sql(b.tree, {}, shared)
    'coalesce(("_wb_s0" = \\'y\\'), false)'
    >>> to_sql(a.tree, {}, shared)
    'coalesce(contains("_wb_s1", \\'x\\'), false)'
    >>> 'lower("_wb_s0")' in shared.columns[1].sql, [c.level for c in shared.columns]
    (True, [1, 2])
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..rules_language.ast import Call, Literal, Node
from ..rules_language.regex import Regex
from ..rules_language.regex_relax import relaxed_like
from ..rules_language.sql_compiler import Val, value_sql
from ..rules_language.sql_fragments import ident, sql_string, view
from . import _prefilter as prefilters
from ._decode_split import split_decode
from ._list_gates import gate
from ._prefilter import Formula, alternation, one_pass, prefilter

#: Calls worth a column: decoding and text transforms that checks repeat on the same fields.
SHARED_CALLS = frozenset(
    {
        "url_decode",
        "decode_base64",
        "lower",
        "upper",
        "concat",
        "remove_bytes",
        "regex_replace",
        "wildcard_replace",
        "lookup_json_string",
        "lookup_json_integer",
        "to_string",
    }
)

_NAME = re.compile(r'"_wb_s(\d+)"')
#: Regexes with no literal prefilter over one column are tested this many at a time first.
UNION_GROUP = 4
#: A literal test run on every row by this many tests or more becomes a shared column.
FIRST_SHARED_FROM = 3
_LITERAL = re.compile(r"'(?:[^']|'')*'\)")
#: Each pattern's loose form and prefilter (see :func:`_pattern_filters`), by SQL literal
#: and the regex cost the prefilter was weighed with.
_FILTERS: dict[tuple[str, float], tuple[str, str | None, Formula | None]] = {}
_FILTERS_KEPT = 4096


def _pattern_filters(literal: str, tree: Any) -> tuple[str, str | None, Formula | None]:
    """A regex's pattern (its SQL literal unquoted), loose form (``relaxed_like``) and
    literal prefilter, from its SQL literal and parsed tree; remembered for the process
    by literal and :data:`~workbench.replay._prefilter.REGEX_COST`.

    Both are worked out from the tree alone and cost most of compiling a plan's SQL
    (about 1 s for the managed rulesets); a replay compiles the plan afresh each time.
    Two trees written as the same RE2 text match the same language, so what one gives
    holds for the other.
    """
    key = (literal, prefilters.REGEX_COST)
    found = _FILTERS.get(key)
    if found is None:
        if len(_FILTERS) >= _FILTERS_KEPT:
            _FILTERS.clear()
        pattern = literal[1:-1].replace("''", "'")
        found = _FILTERS[key] = (pattern, relaxed_like(pattern, tree), prefilter(tree))
    return found


def _regex_calls(sql: str, targets: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(target, pattern literal)`` of each ``regexp_matches(target, 'literal')``."""
    out = []
    at = sql.find("regexp_matches(")
    while at >= 0:
        for target in targets:
            if sql.startswith(target, at):
                m = _LITERAL.match(sql, at + len(target))
                if m:
                    out.append((target, m.group(0)[:-1]))
                break
        at = sql.find("regexp_matches(", at + 1)
    return out


def _substitute(checks: list[str | None], replace: Mapping[str, str]) -> list[str | None]:
    """``checks`` with each key of ``replace`` replaced by its value (longest keys first)."""
    if not replace:
        return checks
    keys = re.compile("|".join(re.escape(k) for k in sorted(replace, key=len, reverse=True)))
    return [None if s is None else keys.sub(lambda m: replace[m.group(0)], s) for s in checks]


def _any_of(low: str, literals: list[str]) -> str:
    """SQL true where the lowered text ``low`` holds one of ``literals``.

    ``contains`` each (a byte scan), not one RE2 alternation: a DFA pass costs as
    much as most of the regexes it would guard.
    """
    return " OR ".join(f"contains({low}, {sql_string(s)})" for s in literals)


def _condition(low: str, f: Formula) -> str:
    """SQL true where the lowered text ``low`` meets ``f`` (inside a CASE condition, where
    DuckDB tests each operand of ``AND``/``OR`` only on the rows still undecided)."""
    if f.op == "lit":
        return _any_of(low, [f.literal])
    if one_pass(f):
        return f"regexp_matches({low}, {sql_string(alternation(f))})"
    if f.op == "or" and all(i.op == "lit" for i in f.items):
        return f"({_any_of(low, [i.literal for i in f.items])})"
    joiner = " AND " if f.op == "and" else " OR "
    return "(" + joiner.join(_condition(low, i) for i in f.items) + ")"


def _literals(f: Formula) -> list[str]:
    """The literals whose ``contains`` tests :func:`_condition` writes for ``f``."""
    if f.op == "lit":
        return [f.literal]
    if one_pass(f):
        return []
    return [lit for i in f.items for lit in _literals(i)]


def _guarded(call: str, low: str, f: Formula, first: Counter[tuple[str, str]]) -> str:
    """``call`` (a regex test) run only where ``low`` meets ``f``; NULL text still runs it.

    The children of a top ``and`` are nested CASEs: each is tested only on the rows
    that passed the ones before, and the regex only on the rows that passed them all.
    The literals of the first test (run on every row) are counted in ``first``.
    """
    steps = f.items if f.op == "and" else (f,)
    first.update((low, lit) for lit in _literals(steps[0]))
    for step in reversed(steps):
        call = f"(CASE WHEN {low} IS NULL OR {_condition(low, step)} THEN {call} ELSE false END)"
    return call


def _loose_first(target: str, literal: str, loose: str | None) -> str | None:
    """The regex call ``target literal)`` run only where ``loose``, the loose form of its
    pattern (:mod:`workbench.rules_language.regex_relax`), matches; None without one."""
    if loose is None:
        return None
    text = target[len("regexp_matches(") : -2]
    return (
        f"(CASE WHEN {text} IS NULL OR regexp_matches({text}, {sql_string(loose)}) "
        f"THEN {target}{literal}) ELSE false END)"
    )


@dataclass
class Column:
    """A shared column: its name, its SQL (over the fields and earlier layers), its layer."""

    name: str
    sql: str
    level: int


class SharedColumns:
    """The sharing hook: collects shared columns while checks compile.

    ``lean``: checks for the lean table (:mod:`workbench.replay._header_columns`).
    ``and``/``or`` compile as CASE chains, ``any`` over a header list runs behind
    its gate (:mod:`workbench.replay._list_gates`), and a call giving a list or map
    is not shared: a shared column is computed on every row, while in place it
    runs only on the rows a gate or an earlier item lets through.
    """

    def __init__(self, lean: bool = False) -> None:
        self.lean = lean
        self.columns: list[Column] = []
        self._viewed: dict[str, str] = {}  # a shared view column -> the column it views
        self._by_sql: dict[tuple[str, bool, bool, bool], Val] = {}
        self._over_table: dict[str, str] = {}  # SQL over table columns -> its shared column
        #: Patterns the gates test (SQL literal -> tree), for :meth:`prefilter`.
        self.gate_patterns: dict[str, Any] = {}
        #: How many tests run on every row ask each (lowered text, literal): see
        #: :meth:`_share_firsts`.
        self._first: Counter[tuple[str, str]] = Counter()

    def __call__(self, node: Node, lists: Mapping[str, Any]) -> Val | None:
        if not isinstance(node, Call):
            return None
        if self.lean:
            if node.name == "any" and not node.mapped:
                return self._gated(node, lists)
            if node.mapped or node.type.kind in ("Array", "Map"):
                return None
        if node.name not in SHARED_CALLS:
            return None
        parts = split_decode(node)
        val = (
            value_sql(node, lists, self, self.lean) if parts is None else self._joined(parts, lists)
        )
        key = (val.sql, val.nullable, val.view, val.each)
        found = self._by_sql.get(key)
        if found is None:
            used = [self.columns[int(m)].level for m in _NAME.findall(val.sql)]
            quoted = self.add(val.sql, 1 + max(used, default=0))
            found = self._by_sql[key] = dataclasses.replace(val, sql=quoted)
        return found

    def _gated(self, node: Call, lists: Mapping[str, Any]) -> Val | None:
        """``any(...)`` behind its gate (or the gate alone where it is exact), or None
        (compiled as usual) when it has none."""
        found = gate(node.args[0], self._column, self._gate_condition, self._regex_gate)
        if found is None:
            return None
        test, exact = found
        if exact:
            return Val(test, node.type)
        exact_sql = value_sql(node, lists, self, short_circuit=True).sql  # the call, not the hook
        return Val(f"(CASE WHEN {test} THEN {exact_sql} ELSE false END)", node.type)

    def _gate_condition(self, low: str, f: Formula) -> str:
        """A gate's prefilter test (run on every row): its literals are counted."""
        self._first.update((low, lit) for lit in _literals(f))
        return _condition(low, f)

    def _regex_gate(self, text: str, tree: Any) -> str:
        """``regexp_matches`` of ``tree`` (Latin-1 form) over the view of ``text``; the
        pattern is kept so that :meth:`prefilter` gives it a loose form and a group."""
        # Regex's own Latin-1 form of the tree (the language's public API; it also
        # compiles the pattern once, a few of which a plan's gates hold).
        literal = sql_string(Regex("", tree).sql_view_pattern())
        self.gate_patterns[literal] = tree
        return f"coalesce(regexp_matches({self._column(view(text))}, {literal}), false)"

    def _column(self, sql: str) -> str:
        """A shared column computing ``sql`` over table columns (one per distinct text)."""
        if sql not in self._over_table:
            self._over_table[sql] = self.add(sql, 1)
        return self._over_table[sql]

    def _joined(self, parts: list[Node], lists: Mapping[str, Any]) -> Val:
        """The decoded parts of a split ``url_decode`` joined (see :mod:`.decode_split`)."""
        pieces = []
        for part in parts:
            if isinstance(part, Literal):
                pieces.append(value_sql(part, lists, self).sql)  # ASCII: its own view
                continue
            decoded = self(part, lists)
            assert decoded is not None and decoded.view
            # A missing field joins as empty text, as concat has it.
            pieces.append(f"coalesce({decoded.sql}, '')")
        return Val("(" + " || ".join(pieces) + ")", parts[0].type, nullable=False, view=True)

    def add(self, sql: str, level: int) -> str:
        """A column computing ``sql`` at layer ``level``; returns its quoted name."""
        name = f"_wb_s{len(self.columns)}"
        self.columns.append(Column(name, sql, level))
        return ident(name)

    def prefilter(self, checks: list[str | None], patterns: Mapping[str, Any]) -> list[str | None]:
        """``checks`` with each regex over shared text behind its literal prefilter.

        ``patterns`` maps a pattern's SQL literal to its parsed tree. Where
        :func:`~workbench.replay._prefilter.prefilter` finds a formula over literals
        a match must meet and worth its scans, the regex runs only on the rows whose
        lowered text meets it (``CASE`` branches: DuckDB evaluates both sides of
        ``AND`` in a projection, but a branch only on the rows it selects). A row
        without the text (NULL) still runs the regex, which gives NULL as before.
        The elements of a list a lambda tests (``any(http.request.headers.values[*]
        matches ...)``) get none: ``lower`` of each short element costs more than
        the regex it would spare.
        """
        checks = self._share_views(checks)
        targets: dict[str, tuple[str, int]] = {}
        for c in list(self.columns):
            quoted = ident(c.name)
            source = self._viewed.get(quoted, quoted)  # a view's literals are its source's
            targets[f"regexp_matches({quoted}, "] = (source, c.level)
        lowered: dict[str, str] = {}
        replace: dict[str, str] = {}
        ungated: dict[str, list[tuple[str, str]]] = {}  # target -> (call, pattern) of each
        for sql in checks:
            for target, literal in _regex_calls(sql or "", targets):
                call = target + literal + ")"
                tree = patterns.get(literal)
                if tree is None or call in replace:
                    continue
                pattern, loose, f = _pattern_filters(literal, tree)
                guarded = _loose_first(target, literal, loose)
                if f is not None:
                    column, level = targets[target]
                    if column not in lowered:
                        lowered[column] = self.add(f"lower({column})", level + 1)
                    guarded = _guarded(guarded or call, lowered[column], f, self._first)
                else:
                    ungated.setdefault(target, []).append((call, loose or pattern))
                replace[call] = guarded or call
        for target, members in ungated.items():
            self._grouped(target, targets[target][1], members, replace)
        checks = _substitute(checks, {k: v for k, v in replace.items() if k != v})
        return _substitute(checks, self._share_firsts())

    def _share_firsts(self) -> dict[str, str]:
        """A column for each literal test that ``FIRST_SHARED_FROM`` or more tests run on
        every row.

        ``contains`` scans the whole lowered text; asked on every row by several
        checks, it is cheaper once as a column that each of them reads. Tests asked
        only behind another (on the few rows it lets through) stay in place: as a
        column, they would run on every row. Returns each test's SQL -> its column.
        """
        levels = {ident(c.name): c.level for c in self.columns}
        out: dict[str, str] = {}
        for (low, literal), count in sorted(self._first.items()):
            if count >= FIRST_SHARED_FROM:
                test = _any_of(low, [literal])
                out[test] = self.add(test, levels[low] + 1)
        return out

    def _grouped(
        self, target: str, level: int, members: list[tuple[str, str]], replace: dict[str, str]
    ) -> None:
        """Regexes without a prefilter over one column, in groups behind one test each.

        Most rows match none of a group's patterns, and RE2 tests their alternation in
        one pass as long as it stays small; each pattern then runs only where the
        group's test matched (a necessary condition: the alternation of its patterns,
        each in its loose form where it has one).
        """
        text = target[len("regexp_matches(") : -2]
        for start in range(0, len(members), UNION_GROUP):
            group = members[start : start + UNION_GROUP]
            if len(group) < 2:
                continue
            union = "|".join(f"(?:{p})" for _, p in group)
            test = self.add(f"regexp_matches({text}, {sql_string(union)})", level + 1)
            for call, _ in group:
                replace[call] = (
                    f"(CASE WHEN {test} IS NOT FALSE THEN {replace[call]} ELSE false END)"
                )

    def _share_views(self, checks: list[str | None]) -> list[str | None]:
        """``checks`` with each shared column's Latin-1 view computed once, as a column."""
        replace: dict[str, str] = {}
        self._viewed = {}
        for c in list(self.columns):
            quoted = ident(c.name)
            text = view(quoted)
            if any(text in s for s in checks if s):
                replace[text] = self.add(text, c.level + 1)
                self._viewed[replace[text]] = quoted
        return _substitute(checks, replace)
