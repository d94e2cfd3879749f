"""The whole-table evaluator: a typed tree compiled to one DuckDB boolean expression.

Columns are named like the fields and hold: text (String), BIGINT (Integer),
BOOLEAN, text addresses (IP), lists (Array) and MAP(VARCHAR, ...) (Map).
NULL reads as the field's empty value, as an absent field does on the
per-request path; the two paths agree on every request (see the tests).
:func:`requests_table` builds such a table from request dicts.

    >>> from workbench.rules_language.parser import parse
    >>> to_sql(parse('cf.waf.score lt 20'), {})
    '(coalesce(CAST("cf.waf.score" AS BIGINT), 0) < 20)'
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from typing import Any

from ._sql_calls import call_sql
from .ast import (
    STAR,
    Call,
    Compare,
    Empty,
    FieldRef,
    Index,
    ListRef,
    Literal,
    Logical,
    Node,
    Not,
    Pattern,
    SetLiteral,
)
from .sql_fragments import (
    ascii_ilike,
    bind,
    bytes_literal,
    ip_key,
    ip_literal_key,
    latin1_literal,
    sql_string,
    v4_text_in,
    view,
)
from .sql_fragments import column as sql_column
from .sql_value import SqlTranslationError, Val
from .types import Type
from .values import to_bytes

__all__ = ["Share", "SqlTranslationError", "Val", "to_sql", "value_sql"]

_OPS = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_EMPTY = {"Bytes": "''", "Int": "0", "Bool": "false"}


class _Compiler:
    """Compiles one tree; it is the :class:`~.sql_value.SqlCompiler` the calls receive."""

    def __init__(
        self, lists: Mapping[str, Any], share: Share | None = None, short_circuit: bool = False
    ) -> None:
        self.lists = lists
        self.counter = 0
        self.share = share
        self.short_circuit = short_circuit

    def var(self) -> str:
        self.counter += 1
        return f"x{self.counter}"

    # -- booleans ---------------------------------------------------------------
    def boolean(self, node: Node) -> str:
        """A non-NULL SQL boolean (or, for Array<Bool>, a list of them)."""
        if isinstance(node, Empty):
            return "false"
        if isinstance(node, Logical):
            return self.logical(node)
        if isinstance(node, Not):
            inner = self.boolean(node.operand)
            if node.type.kind == "Array":
                x = self.var()
                return f"list_transform({inner}, lambda {x}: NOT {x})"
            return f"(NOT {inner})"
        if isinstance(node, Compare):
            return self.compare(node)
        val = self.value(node)
        if val.type.kind == "Array":
            x = self.var()
            return f"list_transform({val.sql}, lambda {x}: coalesce({x}, false))"
        return f"coalesce({val.sql}, false)" if val.nullable else val.sql

    def logical(self, node: Logical) -> str:
        items = [self.boolean(i) for i in node.items]
        if node.type.kind == "Array":
            # Element by element up to the shortest list; list_zip names each list once.
            r = self.var()
            picks = [f"coalesce({r}[{n}], false)" for n in range(1, len(items) + 1)]
            body = self.combine(node.op, picks)
            return f"list_transform(list_zip({', '.join(items)}, true), lambda {r}: {body})"
        return self.combine(node.op, items)

    def combine(self, op: str, items: list[str]) -> str:
        if self.short_circuit and op in ("and", "or") and len(items) > 1:
            # DuckDB computes every operand of AND/OR on every row of a projection, but a
            # CASE branch only on the rows it selects: each item after the first runs only
            # where the ones before left the answer open (the items are never NULL).
            out = items[-1]
            for item in reversed(items[:-1]):
                out = (
                    f"(CASE WHEN {item} THEN {out} ELSE false END)"
                    if op == "and"
                    else f"(CASE WHEN {item} THEN true ELSE {out} END)"
                )
            return out
        if op == "and":
            return "(" + " AND ".join(items) + ")"
        if op == "or":
            return "(" + " OR ".join(items) + ")"
        if len(items) == 2:
            return f"({items[0]} <> {items[1]})"
        return "((" + " + ".join(f"{i}::INTEGER" for i in items) + ") % 2 = 1)"

    # -- comparisons ------------------------------------------------------------
    def compare(self, node: Compare) -> str:
        lhs = self.value(node.lhs)
        if lhs.each:
            x = self.var()
            element = Val(x, lhs.type, nullable=True, view=lhs.view)
            test = self.test(element, node)
            return f"list_transform({lhs.sql}, lambda {x}: coalesce({test}, false))"
        test = self.test(lhs, node)
        return f"coalesce({test}, false)" if lhs.nullable else test

    def test(self, v: Val, node: Compare) -> str:
        kind, op, rhs = v.type.kind, node.op, node.rhs
        if isinstance(rhs, Pattern):
            return self.pattern(v, op, rhs)
        if isinstance(rhs, SetLiteral):
            return self.in_set(v, rhs)
        if isinstance(rhs, ListRef):
            return self.in_list(v, rhs.name)
        if isinstance(rhs, Literal):
            if kind == "Int":
                if op == "bitwise_and":
                    return f"(({v.sql} & {rhs.value}) <> 0)"
                return f"({v.sql} {_OPS[op]} {rhs.value})"
            if kind == "Ip":
                return self.ip_literal(v, op, rhs.value)
            lit, lit_view = bytes_literal(rhs.value)
            left = v.sql
            if lit_view or v.view:
                left = v.sql if v.view else view(v.sql)
                lit = latin1_literal(rhs.value)
            if op == "contains":
                return f"contains({left}, {lit})"
            return f"({left} {_OPS[op]} {lit})"
        other = self.value(rhs)
        left, right = v.sql, other.sql
        if kind == "Bytes" and v.view != other.view:
            left = left if v.view else view(left)
            right = right if other.view else view(right)
        test = f"({left} {_OPS[op]} {right})"
        return f"coalesce({test}, false)" if other.nullable else test

    def pattern(self, v: Val, op: str, rhs: Pattern) -> str:
        compiled = rhs.compiled
        if op == "matches":
            direct = compiled.sql_pattern()
            if direct is not None and not v.view:
                return f"regexp_matches({v.sql}, {sql_string(direct)})"
            target = v.sql if v.view else view(v.sql)
            return f"regexp_matches({target}, {sql_string(compiled.sql_view_pattern())})"
        # Wildcards: LIKE when every literal piece is text, over ASCII-lowered text when
        # case does not matter (the engine folds ASCII letters only, as translate() does).
        try:
            pieces = [None if p is None else p.decode("utf-8") for p in compiled.parts]
        except UnicodeDecodeError:
            pieces = None
        if pieces is not None and not v.view:
            like = "".join(
                "%"
                if p is None
                else p.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                for p in pieces
            )
            if compiled.case_sensitive:
                return f"({v.sql} LIKE {sql_string(like)} ESCAPE '\\')"
            lowered = like.translate(str.maketrans(_UPPER, _LOWER_CHARS))
            return ascii_ilike(v.sql, sql_string(lowered))
        target = v.sql if v.view else view(v.sql)
        return f"regexp_matches({target}, {sql_string(compiled.regex.sql_view_pattern())})"

    def in_set(self, v: Val, rhs: SetLiteral) -> str:
        kind = v.type.kind
        if kind == "Ip" and v.raw is not None:
            return self.ip_text_in(v, v.raw, rhs.ip_ranges)
        if kind == "Int":
            singles = [str(n) for n in sorted({lo for lo, hi in rhs.int_ranges if lo == hi})]
            spans = [(str(lo), str(hi)) for lo, hi in rhs.int_ranges if lo != hi]
        elif kind == "Ip":
            singles = sorted({ip_literal_key(lo) for lo, hi in rhs.ip_ranges if lo == hi})
            spans = [
                (ip_literal_key(lo), ip_literal_key(hi)) for lo, hi in rhs.ip_ranges if lo != hi
            ]
        else:
            return self.in_strings(v, rhs.strings)
        return _any_of(v.sql, singles, spans)

    def ip_literal(self, v: Val, op: str, addr: Any) -> str:
        key = ip_literal_key(addr)
        if v.raw is None or addr.version != 4 or op not in ("eq", "ne"):
            return f"({v.sql} {_OPS[op]} {key})"
        # A canonical dotted quad equals the literal's text exactly when the addresses are equal.
        same = f"({v.raw} = {sql_string(str(addr))})"
        if op == "eq":
            return same
        valid = f"({v4_text_in(v.raw, [ipaddress.ip_network('0.0.0.0/0')])} OR {v.sql} IS NOT NULL)"
        return f"(NOT {same} AND {valid})"

    def ip_text_in(self, v: Val, raw: str, ranges: tuple[tuple[Any, Any], ...]) -> str:
        """Membership for an IP column held as text (``raw``): IPv4 by text patterns, IPv6 by key."""
        networks = []
        v6_singles, v6_spans = [], []
        for lo, hi in ranges:
            if lo.version == 4:
                networks += list(ipaddress.summarize_address_range(lo, hi))
            elif lo == hi and ip_literal_key(lo) not in v6_singles:
                v6_singles.append(ip_literal_key(lo))
            else:
                v6_spans.append((ip_literal_key(lo), ip_literal_key(hi)))
        parts = []
        if networks:
            parts.append(v4_text_in(raw, networks))
        if v6_singles or v6_spans:
            v6 = _any_of(v.sql, v6_singles, v6_spans)
            parts.append(f"(contains({raw}, ':') AND coalesce({v6}, false))")
        return "(" + " OR ".join(parts) + ")" if parts else "false"

    def in_strings(self, v: Val, strings: frozenset[bytes]) -> str:
        if not strings:
            return "false"
        texts: list[str] | None
        try:
            texts = [item.decode("utf-8") for item in sorted(strings)]
        except UnicodeDecodeError:
            texts = None
        if texts is not None and not v.view:
            return f"({v.sql} IN ({', '.join(sql_string(t) for t in texts)}))"
        target = v.sql if v.view else view(v.sql)
        return f"({target} IN ({', '.join(latin1_literal(s) for s in sorted(strings))}))"

    def in_list(self, v: Val, name: str) -> str:
        items = self.lists.get(name)
        if not items:
            return "false"
        kind = v.type.kind
        if kind == "Ip":
            ranges = []
            for item in items:
                net = ipaddress.ip_network(str(item), strict=False)
                ranges.append((net.network_address, net.broadcast_address))
            return self.in_set(v, SetLiteral(0, 0, ip_ranges=tuple(ranges)))
        if kind == "Int":
            return self.in_set(
                v, SetLiteral(0, 0, int_ranges=tuple((int(i), int(i)) for i in items))
            )
        # As on the per-request path: an item with a lone surrogate is its surrogatepass bytes.
        raw = frozenset(to_bytes(i if isinstance(i, bytes | bytearray) else str(i)) for i in items)
        return self.in_strings(v, raw)

    # -- values ---------------------------------------------------------------------
    def value(self, node: Node) -> Val:
        if self.share is not None:
            # Sharing hook of the whole-table path: a sub-expression several checks use may
            # come back as a column computed once (see workbench.replay._shared).
            shared = self.share(node, self.lists)
            if shared is not None:
                return shared
        return self.own_value(node)

    def own_value(self, node: Node) -> Val:
        """``node``'s SQL written out here (never through the sharing hook at this level)."""
        if isinstance(node, FieldRef):
            column = sql_column(node.name, node.type)
            kind = node.type.kind
            if kind == "Ip":
                return Val(ip_key(column), node.type, nullable=True, raw=column)
            if kind in _EMPTY:
                return Val(f"coalesce({column}, {_EMPTY[kind]})", node.type)
            if kind == "Array":
                return Val(f"coalesce({column}, [])", node.type)
            return Val(column, node.type, nullable=True)
        if isinstance(node, Literal):
            if node.type.kind == "Int":
                return Val(str(node.value), node.type)
            if node.type.kind == "Ip":
                return Val(ip_literal_key(node.value), node.type)
            text, is_view = bytes_literal(node.value)
            return Val(text, node.type, view=is_view)
        if isinstance(node, Index):
            return self.index(node)
        if isinstance(node, Call):
            return call_sql(self, node)
        if isinstance(node, Compare | Logical | Not):
            return Val(self.boolean(node), node.type)
        raise SqlTranslationError(f"no SQL for {type(node).__name__}")

    def index(self, node: Index) -> Val:
        base = self.value(node.base)
        key = node.key

        def pick(expr: str, t: Type) -> str:
            if key is STAR:
                return f"map_values({expr})" if t.kind == "Map" else expr
            if isinstance(key, int):
                return f"list_extract({expr}, {key + 1})"
            return f"map_extract_value({expr}, {sql_string(key.decode('utf-8', 'replace'))})"

        base_type = node.base.type
        if base.each:
            x = self.var()
            picked = pick(x, base_type)
            if key is STAR:
                return Val(
                    f"flatten(list_transform({base.sql}, lambda {x}: coalesce({picked}, [])))",
                    node.type,
                    each=True,
                    view=base.view,
                )
            return Val(
                f"list_transform({base.sql}, lambda {x}: {picked})",
                node.type,
                each=True,
                view=base.view,
            )
        # Elements of a list of byte views (a decoder mapped over [*]) are byte views too.
        if key is STAR:
            return Val(
                f"coalesce({pick(base.sql, base_type)}, [])", node.type, each=True, view=base.view
            )
        return Val(pick(base.sql, base_type), node.type, nullable=True, view=base.view)


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER_CHARS = "abcdefghijklmnopqrstuvwxyz"


def _any_of(value: str, singles: list[str], spans: list[tuple[str, str]]) -> str:
    """``value`` equal to one of ``singles`` or inside one of ``spans`` (SQL literals)."""

    def test(v: str) -> str:
        parts = [f"{v} IN ({', '.join(singles)})"] if singles else []
        parts += [f"{v} BETWEEN {lo} AND {hi}" for lo, hi in spans]
        return "(" + " OR ".join(parts) + ")" if parts else "false"

    # One test names the value once; several would paste it several times, so bind it.
    return test(value) if len(spans) + bool(singles) <= 1 else bind(value, test)


#: ``share(node, lists)``: a shared column's value for ``node``, or None to compile it in place.
Share = Callable[[Node, Mapping[str, Any]], "Val | None"]


def to_sql(
    tree: Node, lists: Mapping[str, Any], share: Share | None = None, short_circuit: bool = False
) -> str:
    """The DuckDB boolean expression for a checked tree (``share``: see :data:`Share`).

    ``short_circuit``: ``and``/``or`` as CASE chains, each item computed only on the
    rows the items before it leave open (same results; cheaper where an early item
    is cheap and settles most rows).
    """
    return _Compiler(lists, share, short_circuit).boolean(tree)


def value_sql(
    node: Node, lists: Mapping[str, Any], share: Share | None = None, short_circuit: bool = False
) -> Val:
    """``node``'s own SQL value, its sub-expressions offered to ``share`` (lambda names from x1)."""
    return _Compiler(lists, share, short_circuit).own_value(node)
