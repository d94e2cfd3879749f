"""DuckDB translations of the decoding functions ``url_decode`` and ``decode_base64``.

They keep the per-request semantics (see :mod:`.function_impls`): a pass of
``url_decode`` turns ``+`` into a space, then ``%uXXXX`` into the UTF-8 of that
code point (option ``u``), then ``%XX`` into its byte; option ``r`` repeats the
pass until the text no longer changes, at most ``URL_DECODE_MAX_PASSES`` times.
A result that is not UTF-8 reads as missing (NULL), as DuckDB text must be UTF-8;
the whole-table path guards those rows (:mod:`workbench.traffic.guards`).

Decoding is the dearest part of a replay, so the common cases are cut short:
text without ``%`` decodes to itself with spaces for ``+`` (no pass at all),
and text whose first pass leaves no ``%`` is done after that pass; only the
rest runs the fixed fold of passes.

    >>> from workbench.rules_language import compile_expression
    >>> import duckdb
    >>> sql = compile_expression('url_decode(http.request.uri.query, "ur") eq "a b\u00e9"').to_sql()
    >>> duckdb.sql(f'SELECT {sql} FROM (SELECT \\'a+b%u00e9\\' AS "http.request.uri.query")').fetchall()
    [(True,)]
"""

from __future__ import annotations

from .function_impls import URL_DECODE_MAX_PASSES
from .sql_fragments import bind
from .sql_value import SqlCompiler, Val
from .types import Type

# A %uXXXX escape: DuckDB's url_decode does not know it, so it becomes the %XX bytes of its
# UTF-8 encoding first (code points below 0x800 take two bytes, the rest three; surrogates
# take three, as Python's surrogatepass does, and the result is then not UTF-8: missing).
_PERCENT_U = r"%[uU]([0-9a-fA-F]{4})"


def _percent_u_to_bytes(text: str) -> str:
    """SQL: ``text`` with each ``%uXXXX`` replaced by the ``%XX`` escapes of its UTF-8 bytes."""
    cp = "('0x' || _z[2])::INTEGER"
    one = "printf('%%%02X', {})"
    utf8 = (
        f"(CASE WHEN {cp} < 128 THEN {one.format(cp)} "
        f"WHEN {cp} < 2048 THEN {one.format(f'192 + ({cp} >> 6)')} || "
        f"{one.format(f'128 + ({cp} & 63)')} "
        f"ELSE {one.format(f'224 + ({cp} >> 12)')} || {one.format(f'128 + (({cp} >> 6) & 63)')} || "
        f"{one.format(f'128 + ({cp} & 63)')} END)"
    )
    # The pieces between the escapes zipped with each escape's four hex digits (NULL after the
    # last piece), joined back: one regex pass each, however many escapes.
    return bind(
        text,
        lambda t: (
            f"(CASE WHEN NOT regexp_matches({t}, '{_PERCENT_U}') THEN {t} ELSE "
            f"list_aggr(list_transform(list_zip(regexp_split_to_array({t}, '{_PERCENT_U}'), "
            f"regexp_extract_all({t}, '{_PERCENT_U}', 1)), "
            f"lambda _z: _z[1] || coalesce({utf8}, '')), 'string_agg', '') END)"
        ),
        name="_u",
    )


def url_decode_sql(c: SqlCompiler, text: str, options: bytes, rtype: Type) -> Val:
    """``url_decode(text, options)`` of UTF-8 text (SQL); missing where the result is not UTF-8."""
    unicode_escapes = b"u" in options

    def once(t: str) -> str:
        spaced = f"replace({t}, '+', ' ')"
        if unicode_escapes:
            spaced = _percent_u_to_bytes(spaced)
        return f"try(url_decode({spaced}))"

    def done_or(t: str, more: str) -> str:
        # Without '%' a pass only turns '+' into spaces, and the pass after it changes nothing.
        return f"(CASE WHEN NOT contains({t}, '%') THEN replace({t}, '+', ' ') ELSE {more} END)"

    if b"r" not in options:
        return Val(bind(text, lambda t: done_or(t, once(t))), rtype, nullable=True)
    # Recursive: a fixed number of passes (a decoded text decodes to itself), as a fold rather
    # than nested calls, which DuckDB would bind in time quadratic in the depth. Most rows
    # need no pass or one, so only the rest reach the fold.
    x = c.var()

    def rest(p: str) -> str:
        fold = f"list_reduce(range({URL_DECODE_MAX_PASSES - 1}), lambda _acc, {x}: {once('_acc')}, {p})"
        return done_or(p, fold)

    # The first pass is named once (bind() would paste a short one into each use).
    return Val(
        bind(
            text, lambda t: done_or(t, f"list_transform([{once(t)}], lambda _p: {rest('_p')})[1]")
        ),
        rtype,
        nullable=True,
    )


def decode_base64_sql(text: str, rtype: Type) -> Val:
    """``decode_base64(text)``: standard or URL-safe alphabet, padding optional."""
    std = f"translate(trim({text}), '-_', '+/')"
    padded = bind(std, lambda t: f"({t} || repeat('=', (4 - strlen({t}) % 4) % 4))")
    return Val(f"try(decode(from_base64({padded})))", rtype, nullable=True)
