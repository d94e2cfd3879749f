"""DuckDB translations of the decoding functions ``url_decode`` and ``decode_base64``.

They keep the per-request semantics (see :mod:`.function_impls`): a pass of
``url_decode`` turns ``+`` into a space, then ``%uXXXX`` into the UTF-8 of that
code point (option ``u``), then ``%XX`` into its byte; option ``r`` repeats the
pass until the text no longer changes, at most ``URL_DECODE_MAX_PASSES`` times.
``decode_base64`` strips ASCII white space, then decodes strictly, or, when the
text holds ``-`` or ``_``, as Python's non-validating decoder does (other
characters skipped, decoding stopped by the first complete padding).

Decoded bytes need not be UTF-8 (``%c0%ae``, ``%ff``, base64 of any bytes),
and DuckDB text must be, so both return the *Latin-1 view* of the decoded
bytes (:func:`.sql_fragments.view`, one character per byte): the checks over
it then read the same bytes as the per-request path. ASCII results are their
own view, so the common case costs nothing more.

Decoding is the dearest part of a replay, so the common cases are cut short:
text without ``%`` decodes to itself with spaces for ``+`` (no pass at all);
ASCII text goes through DuckDB's own ``url_decode`` when the result is ASCII;
only the rest cuts the text at each escape and joins it back byte by byte.
In recursive decoding, a pass over text left without ``%`` is a mere scan.

    >>> from workbench.rules_language import compile_expression
    >>> import duckdb
    >>> sql = compile_expression('url_decode(http.request.uri.query, "ur") eq "a b\u00e9"').to_sql()
    >>> duckdb.sql(f'SELECT {sql} FROM (SELECT \\'a+b%u00e9\\' AS "http.request.uri.query")').fetchall()
    [(True,)]
"""

from __future__ import annotations

from collections.abc import Callable

from .function_impls import URL_DECODE_MAX_PASSES
from .sql_fragments import bind, sql_string, view, view_from_hex
from .sql_value import SqlCompiler, Val
from .types import Type

# A %uXXXX escape, and a %XX escape (its two hex digits captured).
_PERCENT_U = "%[uU][0-9a-fA-F]{4}"
_PERCENT_XX = "%[0-9a-fA-F]{2}"
# The white space Python's bytes.strip() removes before decoding base64.
_WHITE = sql_string(" \t\n\x0b\x0c\r")
_EQ = "'='"
# A base64 character (once '-' and '_' read as '+' and '/'): where the strict decoder runs
# the text holds no '_', and where the lax one runs only the alphabet and '=' are left.
_STRICT_CHAR = r"[\w+/]"
_LAX_CHAR = "[^=]"
# What the strict decoder (binascii.a2b_base64, strict, as in Python 3.11) accepts once
# padding is added: whole quads, then a padded quad ('==' after two characters, '=' after
# three) or any '=' after at least one quad, and nothing after the padding.
_S = _STRICT_CHAR
_STRICT_B64 = f"(?:{_S}{{4}})*(?:{_S}{{2}}==|{_S}{{3}}=)|(?:{_S}{{4}})+=*|"
# What the non-validating decoder (binascii.a2b_base64, not strict) reads of text holding
# only alphabet and '=': whole quads (a '=' is skipped after a quad's first character, and
# once after its second when a character follows), then the end, or a padded last quad
# ('==' after two characters, '=' after three), after which nothing more is read. Its
# rewrite is '!' and the characters read, or, where the text is refused, something else
# first (group 4 is what the decoder cannot read).
_L = _LAX_CHAR
_LAX_B64 = f"^=*((?:{_L}=*{_L}=?{_L}{_L}=*)*)(?:({_L}=*{_L})==.*|({_L}=*{_L}=?{_L})=.*|$|(.+))"
_LAX_REWRITE = r"\4!\1\2\3"


def _named(expr: str, body: Callable[[str], str], name: str) -> str:
    """``body`` over ``expr`` computed once per row, however short ``expr`` is."""
    return f"list_transform([{expr}], lambda {name}: {body(name)})[1]"


def _escapes_to_chars(text: str, escape: str, size: int, chars: Callable[[str], str]) -> str:
    """SQL: ``text`` (holding ``%``) with each escape replaced by ``chars(escape)``.

    The text is cut into escapes (``escape``, ``size`` characters), runs without ``%``
    and lone ``%``, left to right as the per-request decoder reads it; each escape is
    replaced and the pieces joined back: one regex pass, however many escapes.
    """
    tokens = f"regexp_extract_all({text}, '{escape}|[^%]+|%')"
    piece = (
        f"(CASE WHEN length(_z) = {size} AND starts_with(_z, '%') THEN {chars('_z')} ELSE _z END)"
    )
    return f"list_aggr(list_transform({tokens}, lambda _z: {piece}), 'string_agg', '')"


def _utf8_chars(escape: str) -> str:
    """SQL: the Latin-1 view of the UTF-8 bytes of a ``%uXXXX`` escape's code point.

    Below 0x800 two bytes, the rest three; surrogates take three, as Python's
    surrogatepass does (the result is then not UTF-8, and the view holds it as is).
    """
    cp = f"('0x' || substr({escape}, 3, 4))::INTEGER"
    return (
        f"(CASE WHEN {cp} < 128 THEN chr({cp}) "
        f"WHEN {cp} < 2048 THEN chr(192 + ({cp} >> 6)) || chr(128 + ({cp} & 63)) "
        f"ELSE chr(224 + ({cp} >> 12)) || chr(128 + (({cp} >> 6) & 63)) || "
        f"chr(128 + ({cp} & 63)) END)"
    )


def _byte_char(escape: str) -> str:
    """SQL: the view character of a ``%XX`` escape's byte."""
    return f"chr(('0x' || substr({escape}, 2, 2))::INTEGER)"


def _percent_u(text: str) -> str:
    """SQL: a view with each ``%uXXXX`` replaced by the view of its UTF-8 bytes."""
    return bind(
        text,
        lambda t: (
            f"(CASE WHEN NOT regexp_matches({t}, '{_PERCENT_U}') THEN {t} ELSE "
            f"{_escapes_to_chars(t, _PERCENT_U, 6, _utf8_chars)} END)"
        ),
        name="_u",
    )


def _percent_xx(spaced: str) -> str:
    """SQL: a view with each ``%XX`` replaced by its byte (as a view character).

    ASCII text whose decoding is ASCII takes DuckDB's url_decode (the common case);
    other text, or a decoding that is not ASCII, is cut at the escapes.
    """

    def body(s: str) -> str:
        # try(): DuckDB's url_decode refuses a result that is not UTF-8 (NULL, then cut).
        native = _named(
            f"try(url_decode({s}))",
            lambda r: f"(CASE WHEN strlen({r}) = length({r}) THEN {r} END)",
            "_r",
        )
        slow = _escapes_to_chars(s, _PERCENT_XX, 3, _byte_char)
        return f"coalesce((CASE WHEN strlen({s}) = length({s}) THEN {native} END), {slow})"

    return bind(spaced, body, name="_s")


def url_decode_sql(c: SqlCompiler, arg: Val, options: bytes, rtype: Type) -> Val:
    """``url_decode(arg, options)`` as the Latin-1 view of the decoded bytes (SQL)."""
    unicode_escapes = b"u" in options

    def once(t: str) -> str:
        spaced = f"replace({t}, '+', ' ')"
        if unicode_escapes:
            spaced = _percent_u(spaced)
        return _percent_xx(spaced)

    def done_or(t: str, more: str) -> str:
        # Without '%' a pass only turns '+' into spaces, and the pass after it changes nothing.
        return f"(CASE WHEN NOT contains({t}, '%') THEN replace({t}, '+', ' ') ELSE {more} END)"

    source = arg.sql if arg.view else view(arg.sql)
    if b"r" not in options:
        return Val(bind(source, lambda t: done_or(t, once(t))), rtype, nullable=True, view=True)
    # Recursive: a fixed number of passes (a decoded text decodes to itself), as a fold rather
    # than nested calls, which DuckDB would bind in time quadratic in the depth. Most rows
    # hold no '%' and skip the fold; in it, a pass over text without '%' costs a scan or
    # two, so the passes after the text stops changing are cheap.
    x = c.var()
    step = (
        f"(CASE WHEN contains(_acc, '%') THEN {once('_acc')} "
        "WHEN contains(_acc, '+') THEN replace(_acc, '+', ' ') ELSE _acc END)"
    )
    return Val(
        bind(
            source,
            lambda t: done_or(
                t, f"list_reduce(range({URL_DECODE_MAX_PASSES}), lambda _acc, {x}: {step}, {t})"
            ),
        ),
        rtype,
        nullable=True,
        view=True,
    )


def _blob_view(blob: str) -> str:
    """SQL: the Latin-1 view of a BLOB (ASCII bytes are their own view)."""

    def body(b: str) -> str:
        ascii_ = _named(
            f"try(decode({b}))",
            lambda d: f"(CASE WHEN strlen({d}) = length({d}) THEN {d} END)",
            "_d",
        )
        return f"coalesce({ascii_}, {view_from_hex(f'hex({b})')})"

    return _named(blob, body, "_b")


def _from_data(data: str) -> str:
    """SQL: the bytes of base64 characters without padding (padded here, as DuckDB wants)."""
    return bind(
        data, lambda d: f"from_base64({d} || repeat('=', (4 - strlen({d}) % 4) % 4))", name="_e"
    )


def decode_base64_sql(arg: Val, rtype: Type) -> Val:
    """``decode_base64(arg)`` as the Latin-1 view of the decoded bytes (SQL).

    Standard or URL-safe alphabet, padding optional, as :func:`.function_impls._decode_base64`.
    """
    # Padding is counted in bytes: a view has one character per byte.
    size = "length" if arg.view else "strlen"

    def decoded(s: str) -> str:
        padded = f"(translate({s}, '-_', '+/') || repeat('=', (4 - {size}({s}) % 4) % 4))"
        # Text without '-' or '_' is decoded strictly: its shape is checked first (DuckDB's
        # from_base64 reads more, 'Rg=A'), then it reads as the lax decoder reads it.
        strict = f"regexp_full_match({padded}, '{_STRICT_B64}')"
        kept = f"regexp_replace({padded}, '[^A-Za-z0-9+/=]', '', 'g')"
        read = f"regexp_replace({kept}, '{_LAX_B64}', '{_LAX_REWRITE}')"

        def data(r: str) -> str:
            chars = _from_data(f"replace(substr({r}, 2), {_EQ}, '')")
            return f"(CASE WHEN starts_with({r}, '!') THEN {chars} END)"

        lax = bind(read, data, name="_k")
        return f"(CASE WHEN contains({s}, '-') OR contains({s}, '_') OR {strict} THEN {lax} END)"

    return Val(
        _blob_view(bind(f"trim({arg.sql}, {_WHITE})", decoded, name="_t")),
        rtype,
        nullable=True,
        view=True,
    )
