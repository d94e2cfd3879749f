"""The whole-table SQL in other engines' dialects, translated with sqlglot.

The compiler (:mod:`.sql`) writes DuckDB SQL. That text, parsed by sqlglot, is
the dialect-neutral form: a syntax tree of functions, lambdas, casts and
literals. For another dialect the tree's DuckDB-only constructs (``strlen``,
``list_bool_or``, ``list_reduce``, ``map_extract_value``, ``try``, ``0x`` hex
casts, first-match ``regexp_replace``...) are rewritten into that engine's
equivalents, and sqlglot writes the result. A construct with no equivalent
raises :class:`~.sql_value.SqlTranslationError` naming the function and the
dialect; the replay engines then evaluate that check per request, so events
stay exact. ``docs/decisions.md`` (Other engines) lists what each dialect
supports.

Regular expressions: the compiler emits RE2 patterns limited to constructs that
read the same in Java's ``java.util.regex`` (``\\A``, ``\\z``, ``\\x{hh}``,
``(?s:.)``, explicit character classes), so Spark and Trino run them as
written; ClickHouse and BigQuery use RE2 itself. PostgreSQL has its own regexes
and no lambdas: :mod:`.dialect_postgres` rewrites the tree for it (regexes of
the same meaning, lists through ``UNNEST``, maps as ``jsonb``).

    >>> to_dialect("(strlen(coalesce(CAST(\\"http.host\\" AS VARCHAR), '')) > 3)", "spark")
    "(OCTET_LENGTH(COALESCE(CAST(`http.host` AS STRING), '')) > 3)"
    >>> to_dialect("json_valid(x)", "postgres")
    Traceback (most recent call last):
    ...
    workbench.rules_language.sql_value.SqlTranslationError: json_valid() is not supported on postgres (no json_valid() in PostgreSQL 15)
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB

from . import dialect_postgres
from ._dialect_common import hex_digits, literal, public, template, unsupported
from ._dialect_common import name_of as _name
from .sql_value import SqlTranslationError

#: Dialects :func:`to_dialect` writes (``duckdb`` is the compiler's own output).
DIALECTS = ("duckdb", "spark", "trino", "clickhouse", "bigquery", "postgres")


class _DuckDBIn(DuckDB):
    """DuckDB as the compiler writes it; ``len`` (of a list) kept apart from ``length`` (of text)."""

    class Parser(DuckDB.Parser):  # type: ignore[misc,valid-type]  # sqlglot's class attribute
        FUNCTIONS = {
            **DuckDB.Parser.FUNCTIONS,
            "LEN": lambda args: exp.Anonymous(this="wb_list_len", expressions=args),
            "TO_HEX": lambda args: exp.Anonymous(this="wb_to_hex", expressions=args),
        }


@contextmanager
def _deep() -> Any:
    """Compiled expressions nest deeply (a view inside a lower inside a regex...)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _rewrite_java(repl: str, shift: int = 0, dialect: str = "spark") -> str:
    """An RE2 rewrite string (``\\1``, ``\\\\``) as a Java one (``$1``, ``\\\\``, ``\\$``), group
    numbers moved up by ``shift``. Java reads digits after ``$`` greedily, so a group followed
    by a literal digit has no faithful form."""
    out, i = [], 0
    while i < len(repl):
        c = repl[i]
        if c == "\\" and i + 1 < len(repl):
            nxt = repl[i + 1]
            if nxt.isdigit():
                if repl[i + 2 : i + 3].isdigit():
                    raise unsupported("regex_replace", dialect, "a group followed by a digit")
                out.append(f"${int(nxt) + shift}")
            else:
                out.append("\\" + nxt)
            i += 2
            continue
        out.append("\\$" if c == "$" else c)
        i += 1
    return "".join(out)


def _count_groups(pattern: str) -> int:
    """How many capturing groups ``pattern`` has (the compiler's RE2 output)."""
    n, i, in_class = 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            i += 1
            if pattern[i : i + 1] == "^":
                i += 1
            if pattern[i : i + 1] == "]":
                i += 1
            continue
        elif c == "(" and not pattern.startswith("(?", i):
            n += 1
        i += 1
    return n


# -- Spark ------------------------------------------------------------------------------------
_SPARK_RENAMES = {
    "strlen": "OCTET_LENGTH(_a0)",
    "wb_list_len": "SIZE(_a0)",
    "wb_to_hex": "LOWER(HEX(_a0))",
    "list_bool_or": "EXISTS(_a0, wb_b -> wb_b)",
    "list_bool_and": "FORALL(_a0, wb_b -> wb_b)",
    "list_extract": "TRY_ELEMENT_AT(_a0, _a1)",
    "map_extract_value": "TRY_ELEMENT_AT(_a0, _a1)",
    "suffix": "ENDSWITH(_a0, _a1)",
    "map_values": "MAP_VALUES(_a0)",
    "map_contains": "MAP_CONTAINS_KEY(_a0, _a1)",
    "ord": "ASCII(_a0)",
    "list_slice": "SLICE(_a0, _a1, GREATEST(_a2 - _a1 + 1, 0))",
    # Java's decoder turns bytes that are not UTF-8 into U+FFFD where DuckDB gives NULL; a
    # result holding U+FFFD reads as missing, so the whole-table guard sends that row to the
    # per-request path (exact either way).
    "url_decode": "TRANSFORM(ARRAY(TRY_URL_DECODE(_a0)), wb_u -> "
    "CASE WHEN CONTAINS(wb_u, '\ufffd') THEN NULL ELSE wb_u END)[0]",
    "ToBase64": "BASE64(_a0)",
    "FromBase64": "TRY_TO_BINARY(_a0, 'base64')",
    "Decode": "CASE WHEN IS_VALID_UTF8(CAST(_a0 AS STRING)) THEN CAST(_a0 AS STRING) END",
}
_SPARK_ALLOWED = {
    "OCTET_LENGTH", "SIZE", "EXISTS", "FORALL", "TRY_ELEMENT_AT", "ENDSWITH", "MAP_VALUES",
    "MAP_CONTAINS_KEY", "ASCII", "SLICE", "TRY_URL_DECODE", "BASE64", "TRY_TO_BINARY",
    "IS_VALID_UTF8", "CONV", "ARRAY_JOIN", "FORMAT_STRING", "AGGREGATE", "HEX", "LOWER",
}  # fmt: skip


def _spark(node: exp.Expr) -> exp.Expr:  # noqa: C901 - one table of cases
    name = _name(node)
    args = [a for a in node.iter_expressions()] if isinstance(node, exp.Anonymous) else []
    if name in _SPARK_RENAMES:
        if not args:
            args = [node.this] if not isinstance(node, exp.Anonymous) else []
        return template(_SPARK_RENAMES[name], "spark", *args)
    if name == "printf":
        return exp.Anonymous(this="FORMAT_STRING", expressions=args)
    if name == "list_aggr":
        if literal(args[1], "list_aggr()", "spark") != "string_agg":
            raise unsupported("list_aggr", "spark")
        return template("ARRAY_JOIN(_a0, _a1)", "spark", args[0], args[2])
    if name == "list_reduce" and len(args) == 3:
        return template("AGGREGATE(_a0, _a1, wb_l)", "spark", args[0], args[2]).transform(
            lambda n: args[1].copy() if isinstance(n, exp.Column) and n.name == "wb_l" else n
        )
    if isinstance(node, exp.RegexpFullMatch):
        pattern = literal(node.expression, "regexp_full_match()", "spark")
        return template("_a0 RLIKE _a1", "spark", node.this, exp.Literal.string(_anchored(pattern)))
    if isinstance(node, exp.RegexpReplace):
        return _replace(node, "spark")
    if isinstance(node, exp.Try):
        inner = node.this
        if _name(inner) in ("Bracket", "Case"):
            return inner  # already the engine's NULL-on-error form
        raise unsupported(f"try({_name(inner)})", "spark")
    if isinstance(node, exp.Cast) and node.to.this in (
        exp.DataType.Type.INT,
        exp.DataType.Type.BIGINT,
        exp.DataType.Type.UBIGINT,
    ):
        digits = hex_digits(node)
        to = "DECIMAL(20, 0)" if node.to.this == exp.DataType.Type.UBIGINT else node.to.sql("spark")
        if digits is not None:
            return template(f"CAST(CONV(_a0, 16, 10) AS {to})", "spark", digits)
        if node.to.this == exp.DataType.Type.UBIGINT:
            return template(f"CAST(_a0 AS {to})", "spark", node.this)
    if isinstance(node, exp.Split) and isinstance(node.expression, exp.Literal):
        if node.expression.this == "":
            return template("SPLIT(_a0, '')", "spark", node.this)
    if name in ("list_zip", "json_valid") or isinstance(
        node, exp.JSONType | exp.JSONExtract | exp.JSONExtractScalar
    ):
        raise unsupported(public(name), "spark")
    return node


def _anchored(pattern: str) -> str:
    return f"\\A(?:{pattern})\\z"


def _replace(node: exp.RegexpReplace, dialect: str) -> exp.Expr:
    """DuckDB's ``regexp_replace`` (RE2: the first match, or every one with ``'g'``)."""
    pattern = literal(node.expression, "regexp_replace()", dialect)
    repl = literal(node.args["replacement"], "regexp_replace()", dialect)
    mods = node.args.get("modifiers")
    every = mods is not None and "g" in literal(mods, "regexp_replace()", dialect)
    if dialect == "clickhouse":  # RE2, with both forms and RE2's rewrite strings
        fn = "replaceRegexpAll" if every else "replaceRegexpOne"
        return exp.Anonymous(
            this=fn, expressions=[node.this, node.expression, node.args["replacement"]]
        )
    # Spark, Trino (Java's replacement syntax) and BigQuery (RE2's) replace every match: the
    # first one only is a whole-text replace, a lazy prefix group finding the leftmost match
    # and a suffix group keeping the rest, the pattern's own groups moved up by one.
    last = _count_groups(pattern) + 2
    whole = f"\\A((?s:.)*?)(?:{pattern})((?s:.)*)\\z"
    args: tuple[str, str]
    if dialect == "bigquery":
        if every:
            args = (pattern, repl)
        elif last > 9:
            raise unsupported("regexp_replace", dialect, "more than 9 groups")
        else:
            args = (whole, "\\1" + _rewrite_re2(repl, shift=1) + f"\\{last}")
    elif every:
        args = (pattern, _rewrite_java(repl, dialect=dialect))
    else:
        args = (whole, "$1" + _rewrite_java(repl, shift=1, dialect=dialect) + f"${last}")
    return template(
        "REGEXP_REPLACE(_a0, _a1, _a2)",
        dialect,
        node.this,
        exp.Literal.string(args[0]),
        exp.Literal.string(args[1]),
    )


def _rewrite_re2(repl: str, shift: int) -> str:
    """An RE2 rewrite string with its group numbers moved up by ``shift`` (at most 9)."""
    out, i = [], 0
    while i < len(repl):
        if repl[i] == "\\" and i + 1 < len(repl):
            nxt = repl[i + 1]
            if nxt.isdigit():
                if int(nxt) + shift > 9:
                    raise unsupported("regexp_replace", "bigquery", "more than 9 groups")
                nxt = str(int(nxt) + shift)
            out.append("\\" + nxt)
            i += 2
            continue
        out.append(repl[i])
        i += 1
    return "".join(out)


# -- the others -----------------------------------------------------------------------------
# Each maps the compiler's DuckDB-only functions to the dialect's, or refuses them. The
# lambda-based list functions exist in Trino and ClickHouse only.
_TRINO = {
    "strlen": "LENGTH(TO_UTF8(_a0))",
    "wb_list_len": "CARDINALITY(_a0)",
    "list_bool_or": "ANY_MATCH(_a0, wb_b -> wb_b)",
    "list_bool_and": "ALL_MATCH(_a0, wb_b -> wb_b)",
    "list_extract": "ELEMENT_AT(_a0, _a1)",
    "map_extract_value": "ELEMENT_AT(_a0, _a1)",
    "suffix": "ENDS_WITH(_a0, _a1)",
    "map_values": "MAP_VALUES(_a0)",
    "map_contains": "CONTAINS(MAP_KEYS(_a0), _a1)",
    "ord": "CODEPOINT(_a0)",
    "printf": "FORMAT(_a0, _a1)",
    "wb_to_hex": "UPPER(TO_BASE(_a0, 16))",
    "list_slice": "SLICE(_a0, _a1, GREATEST(_a2 - _a1 + 1, 0))",
}
_CLICKHOUSE = {
    "strlen": "length(_a0)",
    "wb_list_len": "length(_a0)",
    "list_bool_or": "arrayExists(wb_b -> wb_b, _a0)",
    "list_bool_and": "arrayAll(wb_b -> wb_b, _a0)",
    "list_extract": "arrayElement(_a0, _a1)",
    "map_extract_value": "arrayElement(_a0, _a1)",
    "suffix": "endsWith(_a0, _a1)",
    "map_values": "mapValues(_a0)",
    "map_contains": "mapContains(_a0, _a1)",
    "regexp_full_match": "match(_a0, _a1)",
    "list_slice": "arraySlice(_a0, _a1, greatest(_a2 - _a1 + 1, 0))",
}
_BIGQUERY = {"strlen": "BYTE_LENGTH(_a0)", "suffix": "ENDS_WITH(_a0, _a1)"}
_NO_LAMBDAS = {"bigquery"}
_LAMBDA_FUNCTIONS = {
    "list_bool_or", "list_bool_and", "list_reduce", "list_zip", "list_aggr", "list_slice",
    "wb_list_len", "list_extract", "map_extract_value", "map_values", "map_contains",
    "Transform", "ArrayFilter", "Lambda", "Flatten", "ArrayConcat", "Split", "GenerateSeries",
    "ArrayContains", "ArrayToString", "RegexpExtractAll",
}  # fmt: skip
_PER_DIALECT = {
    "trino": _TRINO,
    "clickhouse": _CLICKHOUSE,
    "bigquery": _BIGQUERY,
}
#: What each of these dialects cannot run at all (beyond bigquery's lambdas; postgres: its module).
_REFUSED = {
    "trino": {"url_decode", "json_valid", "list_reduce", "list_zip", "Try"},
    "clickhouse": {"json_valid", "list_reduce", "list_zip", "Try", "url_decode"},
    "bigquery": {"json_valid", "url_decode", "Try", "printf", "ord", "wb_to_hex"},
}  # fmt: skip
_WHY = {"bigquery": "no lambdas over arrays"}


def _other(dialect: str) -> Callable[[exp.Expr], exp.Expr]:
    table = _PER_DIALECT[dialect]

    def rewrite(node: exp.Expr) -> exp.Expr:
        name = _name(node)
        if dialect in _NO_LAMBDAS and name in _LAMBDA_FUNCTIONS:
            raise unsupported(name, dialect, _WHY[dialect])
        if name in _REFUSED[dialect]:
            raise unsupported(name, dialect)
        if isinstance(node, exp.Cast) and node.to.this == exp.DataType.Type.UBIGINT:
            raise unsupported("the UBIGINT type", dialect, "unsigned 64-bit integers")
        if isinstance(node, exp.Cast) and hex_digits(node) is not None:
            if dialect != "trino":
                raise unsupported("the byte view of non-ASCII text", dialect, "hex text to integer")
            digits = hex_digits(node)
            assert digits is not None
            return template("FROM_BASE(_a0, 16)", dialect, digits)
        if name == "list_aggr" and dialect in ("trino", "clickhouse"):
            args = list(node.iter_expressions())
            if literal(args[1], "list_aggr()", dialect) != "string_agg":
                raise unsupported(name, dialect)
            join = "ARRAY_JOIN(_a0, _a1)" if dialect == "trino" else "arrayStringConcat(_a0, _a1)"
            return template(join, dialect, args[0], args[2])
        if name in table:
            args = list(node.iter_expressions())
            return template(table[name], dialect, *args)
        if isinstance(node, exp.RegexpReplace):
            return _replace(node, dialect)
        if isinstance(node, exp.RegexpFullMatch) and dialect in ("trino", "bigquery"):
            pattern = literal(node.expression, "regexp_full_match()", dialect)
            fn = "REGEXP_LIKE" if dialect == "trino" else "REGEXP_CONTAINS"
            return template(
                f"{fn}(_a0, _a1)", dialect, node.this, exp.Literal.string(_anchored(pattern))
            )
        return node

    return rewrite


_ALLOWED_ANONYMOUS = {
    "spark": _SPARK_ALLOWED,
    "trino": {"LENGTH", "TO_UTF8", "CARDINALITY", "ANY_MATCH", "ALL_MATCH", "ELEMENT_AT",
              "ENDS_WITH", "MAP_VALUES", "CONTAINS", "MAP_KEYS", "CODEPOINT", "FORMAT", "FROM_BASE",
              "TO_BASE", "SLICE"},
    "clickhouse": {"LENGTH", "ARRAYEXISTS", "ARRAYALL", "ARRAYELEMENT", "ENDSWITH",
                   "MAPVALUES", "MAPCONTAINS", "MATCH", "ARRAYSTRINGCONCAT", "ARRAYSLICE",
                   "REPLACEREGEXPONE", "REPLACEREGEXPALL"},
    "bigquery": {"BYTE_LENGTH", "ENDS_WITH"},
    "postgres": dialect_postgres.ALLOWED,
}  # fmt: skip


def _walk(node: exp.Expr, fn: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
    """Rewrite children first, then the node (sqlglot's transform does not revisit new nodes)."""
    for child in list(node.iter_expressions()):
        _walk(child, fn)
    new = fn(node)
    if new is not node:
        node.replace(new)
    return new


@functools.lru_cache(maxsize=4096)
def to_dialect(duckdb_sql: str, dialect: str) -> str:
    """``duckdb_sql`` (the compiler's output) written for ``dialect``; see the module docstring.

    Raises :class:`SqlTranslationError` for a construct the dialect cannot run and
    ``ValueError`` for an unknown dialect.
    """
    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}")
    if dialect == "duckdb":
        return duckdb_sql
    with _deep():
        tree = sqlglot.parse_one(duckdb_sql, read=_DuckDBIn)
        wrapper = exp.Paren(this=tree)  # so that the root itself can be replaced
        if dialect == "postgres":
            _walk(dialect_postgres.prepass(tree), dialect_postgres.rewrite)
        else:
            _walk(tree, _spark if dialect == "spark" else _other(dialect))
        tree = wrapper.this
        allowed = _ALLOWED_ANONYMOUS[dialect]
        for node in tree.find_all(exp.Anonymous):
            if str(node.this).upper() not in allowed and not node.meta.get("pg"):
                raise unsupported(str(node.this).lower(), dialect)
        try:
            return tree.sql(dialect=dialect, unsupported_level=sqlglot.ErrorLevel.RAISE)
        except sqlglot.errors.UnsupportedError as exc:
            raise SqlTranslationError(f"not supported on {dialect}: {exc}") from None
