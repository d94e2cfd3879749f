"""DuckDB SQL fragments the whole-table compiler builds from: quoting, byte views, IP keys.

DuckDB strings are UTF-8 text, while the Rules language works on bytes. Where
the difference shows (``.`` in a regex, byte offsets, non-UTF-8 literals) the
generated SQL works on a *Latin-1 view* of the text: one character per byte,
so RE2 and string functions count bytes. ASCII rows skip the conversion.

IP columns hold addresses as text; comparisons use a *key*: ``'4'`` and 8 hex
digits for IPv4, ``'6'`` and 32 hex digits for IPv6. Keys of one family
compare like the addresses, and every IPv4 key sorts before every IPv6 key,
which is the engine's order too.

Several fragments use their argument more than once (``CASE WHEN strlen(e) =
length(e) THEN lower(e) ...``). Pasting a large argument several times would
make nested calls grow exponentially (12 nested ``lower()`` gave 1.4 GB), so
every such fragment goes through :func:`bind`: a short argument (a column, a
literal) is repeated, a longer one is written once and named by a lambda. The
SQL therefore grows linearly with the expression.

    >>> sql_string("it's")
    "'it''s'"
    >>> ip_literal_key(__import__("ipaddress").ip_address("192.0.2.1"))
    "'4c0000201'"
    >>> bind("x", lambda v: f"{v} || {v}")
    'x || x'
    >>> bind("f(" + "y" * 200 + ")", lambda v: f"{v} || {v}").count("y" * 200)
    1
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .types import Type

_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = "abcdefghijklmnopqrstuvwxyz"


def ident(name: str) -> str:
    """A quoted column name."""
    return '"' + name.replace('"', '""') + '"'


def duckdb_type(t: Type) -> str:
    """The DuckDB column type for a Rules-language type."""
    if t.kind == "Array":
        return duckdb_type(t.element_type) + "[]"
    if t.kind == "Map":
        return f"MAP(VARCHAR, {duckdb_type(t.element_type)})"
    return {"Bytes": "VARCHAR", "Int": "BIGINT", "Bool": "BOOLEAN", "Ip": "VARCHAR"}[t.kind]


# Text up to this long may be repeated inside one fragment: a column cast, a lambda variable or
# a short literal. Repeating it costs a constant; anything longer is bound once (see bind()).
REPEATABLE = 120


def bind(expr: str, body: Callable[[str], str], name: str = "_v") -> str:
    """``body(expr)`` with ``expr`` written once, however often ``body`` uses it.

    A long ``expr`` is evaluated once per row and named by a lambda over a one-element
    list. ``body`` must refer to no lambda variable but its own argument, so that one
    name serves every binding (inner ones shadow outer ones harmlessly).
    """
    if len(expr) <= REPEATABLE:
        return body(expr)
    return f"list_transform([{expr}], lambda {name}: {body(name)})[1]"


def column(name: str, t: Type) -> str:
    """A field's column cast to its type, so tables built by pandas (dicts become
    STRUCTs, all-NULL columns INTEGER, integers with gaps DOUBLE) read the same."""
    return f"CAST({ident(name)} AS {duckdb_type(t)})"


def sql_string(text: str) -> str:
    """A SQL string literal for any text, NUL included."""
    if "\x00" in text:
        return "(" + " || chr(0) || ".join(sql_string(p) for p in text.split("\x00")) + ")"
    return "'" + text.replace("'", "''") + "'"


def latin1_literal(data: bytes) -> str:
    """A literal holding ``data`` as one character per byte (for comparing with a view)."""
    return sql_string(data.decode("latin-1"))


def bytes_literal(data: bytes) -> tuple[str, bool]:
    """``(literal, is_view)``: plain text when ``data`` is UTF-8, else its Latin-1 view."""
    try:
        return sql_string(data.decode("utf-8")), False
    except UnicodeDecodeError:
        return latin1_literal(data), True


def _by_ascii(expr: str, ascii_: Callable[[str], str], other: Callable[[str], str]) -> str:
    """``ascii_(e)`` when ``expr`` is ASCII (as many bytes as characters), else ``other(e)``.

    ASCII text is the common case, and there DuckDB's own functions count bytes already.
    """
    return bind(
        expr,
        lambda e: f"(CASE WHEN strlen({e}) = length({e}) THEN {ascii_(e)} ELSE {other(e)} END)",
    )


def view(expr: str) -> str:
    """The Latin-1 view of a text expression (ASCII text is its own view)."""
    return _by_ascii(expr, lambda e: e, lambda e: _chars_joined(_hex_to_chars(f"hex(encode({e}))")))


def from_view(expr: str) -> str:
    """Text back from a Latin-1 view; NULL when the bytes are not UTF-8."""
    return _by_ascii(
        expr, lambda e: e, lambda e: f"try(decode(unhex({_chars_joined(_chars_to_hex(e))})))"
    )


def view_bytes(expr: str) -> str:
    """The bytes (a BLOB) a Latin-1 view stands for, to hash or encode them."""
    return _by_ascii(
        expr, lambda e: f"encode({e})", lambda e: f"unhex({_chars_joined(_chars_to_hex(e))})"
    )


def view_from_hex(expr: str) -> str:
    """The Latin-1 view of bytes given as a hex string of at least one byte (a digest, say)."""
    return _chars_joined(_hex_to_chars(expr))


def _hex_to_chars(hex_text: str) -> str:
    return (
        f"list_transform(regexp_extract_all({hex_text}, '..'), lambda b: chr(('0x' || b)::INTEGER))"
    )


def _chars_to_hex(text: str) -> str:
    return f"list_transform(string_split({text}, ''), lambda c: lpad(to_hex(ord(c)), 2, '0'))"


def _chars_joined(chars: str) -> str:
    # list_aggr, not array_to_string: DuckDB expands that macro with its argument pasted twice,
    # which nested views would multiply. Callers never pass an empty list (it would give NULL).
    return f"list_aggr({chars}, 'string_agg', '')"


def join_list(items: str, sep: str) -> str:
    """``array_to_string(items, sep)``: '' for an empty list, NULL for NULL."""
    return bind(items, lambda x: f"array_to_string({x}, {sep})")


def ascii_lower(expr: str) -> str:
    """Lower-case ASCII letters only, as the engine's lower() does.

    DuckDB's lower() is exact on ASCII text and fast; other text goes through
    translate(), which leaves non-ASCII letters alone as the engine does.
    """
    return _by_ascii(
        expr, lambda e: f"lower({e})", lambda e: f"translate({e}, '{_UPPER}', '{_LOWER}')"
    )


def ascii_upper(expr: str) -> str:
    """Upper-case ASCII letters only."""
    return _by_ascii(
        expr, lambda e: f"upper({e})", lambda e: f"translate({e}, '{_LOWER}', '{_UPPER}')"
    )


def ascii_ilike(expr: str, pattern: str) -> str:
    """``expr`` LIKE ``pattern`` ignoring ASCII case only (pattern already lowered)."""
    return _by_ascii(
        expr,
        lambda e: f"{e} ILIKE {pattern} ESCAPE '\\'",
        lambda e: f"translate({e}, '{_UPPER}', '{_LOWER}') LIKE {pattern} ESCAPE '\\'",
    )


_V4_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_V4 = rf"{_V4_OCTET}(\.{_V4_OCTET}){{3}}"


def ip_key(expr: str) -> str:
    """The comparison key of an address held as text; NULL when it is not an address."""
    return bind(expr, _ip_key)


def _ip_key(expr: str) -> str:
    v4 = (
        f"printf('4%02x%02x%02x%02x', split_part({expr}, '.', 1)::INTEGER, "
        f"split_part({expr}, '.', 2)::INTEGER, split_part({expr}, '.', 3)::INTEGER, "
        f"split_part({expr}, '.', 4)::INTEGER)"
    )
    return (
        f"(CASE WHEN regexp_full_match({expr}, '{_V4}') THEN {v4} "
        f"WHEN NOT contains({expr}, ':') THEN NULL "
        f"WHEN NOT contains({expr}, '.') THEN {_v6_key(f'lower({expr})')} "
        # An embedded IPv4 tail is rare: only then pay for rewriting it as hex groups.
        f"ELSE {bind(_v6_groups_text(expr), _v6_key)} END)"
    )


def _v6_groups_text(expr: str) -> str:
    """Lower-case IPv6 text with an embedded IPv4 tail (``::ffff:192.0.2.1``) written as two
    hex groups (``::ffff:c000:201``), as the address parser reads it; NULL for a bad tail."""
    tail = f"regexp_extract({expr}, ':({_V4})$', 1)"
    groups = (
        f"printf('%x:%x', split_part({tail}, '.', 1)::INTEGER * 256 + "
        f"split_part({tail}, '.', 2)::INTEGER, split_part({tail}, '.', 3)::INTEGER * 256 + "
        f"split_part({tail}, '.', 4)::INTEGER)"
    )
    return (
        f"(CASE WHEN NOT contains({expr}, '.') THEN lower({expr}) "
        f"WHEN regexp_full_match({expr}, '[0-9A-Fa-f:]*:{_V4}') "
        f"THEN lower(regexp_extract({expr}, '^(.*:)', 1)) || {groups} END)"
    )


def _v6_key(low: str) -> str:
    left = f"split_part({low}, '::', 1)"
    right = f"split_part({low}, '::', 2)"
    has_gap = f"contains({low}, '::')"
    lg = f"(CASE WHEN {left} = '' THEN []::VARCHAR[] ELSE string_split({left}, ':') END)"
    rg = f"(CASE WHEN {right} = '' THEN []::VARCHAR[] ELSE string_split({right}, ':') END)"
    groups = (
        f"(CASE WHEN {has_gap} THEN list_concat(list_concat({lg}, "
        f"list_transform(range(greatest(8 - len({lg}) - len({rg}), 0)), lambda z: '0')), {rg}) "
        f"ELSE string_split({low}, ':') END)"
    )
    v6 = f"('6' || array_to_string(list_transform({groups}, lambda g: lpad(g, 4, '0')), ''))"
    v6_ok = (
        f"regexp_full_match({low}, '[0-9a-f:]+') AND length({low}) - length(replace({low}, '::', '')) <= 2 "
        f"AND len({groups}) = 8 AND list_bool_and(list_transform({groups}, "
        f"lambda g: regexp_full_match(g, '[0-9a-f]{{1,4}}')))"
    )
    return f"(CASE WHEN {v6_ok} THEN {v6} END)"


def ip_literal_key(addr: Any) -> str:
    """The key of an address literal, as a SQL string."""
    width = 8 if addr.version == 4 else 32
    return f"'{addr.version}{int(addr):0{width}x}'"


def ip_key_to_text(key: str) -> str:
    """Dotted text of an IPv4 key (IPv6 keys give their full, uncompressed form)."""
    return bind(key, _ip_key_to_text)


def _ip_key_to_text(key: str) -> str:
    octets = ", ".join(f"('0x' || substr({key}, {2 + 2 * i}, 2))::INTEGER" for i in range(4))
    groups = " || ':' || ".join(
        f"coalesce(nullif(ltrim(substr({key}, {2 + 4 * i}, 4), '0'), ''), '0')" for i in range(8)
    )
    v6 = bind(groups, _compress_zero_groups)
    return f"(CASE WHEN starts_with({key}, '4') THEN printf('%d.%d.%d.%d', {octets}) ELSE {v6} END)"


def _compress_zero_groups(text: str) -> str:
    # The first longest run of two or more zero groups becomes '::', as Python's ipaddress
    # writes an address (RFC 5952), so to_string() reads the same on both paths.
    cases = " ".join(
        f"WHEN regexp_matches({text}, '{_zero_run(n)}') "
        f"THEN regexp_replace({text}, '{_zero_run(n)}', '::')"
        for n in range(8, 1, -1)
    )
    return f"(CASE {cases} ELSE {text} END)"


def _zero_run(n: int) -> str:
    return f"(^|:)(0:){{{n - 1}}}0(:|$)"


def ip_mask(key: str, bits: int, width: int, family: str) -> str:
    """The key of the network of ``key`` with ``bits`` prefix bits (hex width ``width``)."""
    full, part = divmod(bits, 4)
    pieces = [f"'{family}'", f"substr({key}, 2, {full})"] if full else [f"'{family}'"]
    used = full
    if part and full < width:
        mask = (0xF << (4 - part)) & 0xF
        pieces.append(f"printf('%x', ('0x' || substr({key}, {2 + full}, 1))::INTEGER & {mask})")
        used += 1
    if used < width:
        pieces.append(f"'{'0' * (width - used)}'")
    return "(" + " || ".join(pieces) + ")"


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"


def _octet_range(lo: int, hi: int) -> str:
    if (lo, hi) == (0, 255):
        return _OCTET
    return "(?:" + "|".join(str(i) for i in range(lo, hi + 1)) + ")"


def v4_network_regex(network: Any) -> tuple[str, str]:
    """``(regex, literal prefix)`` matching exactly the canonical dotted quads of a network."""
    octets = list(network.network_address.packed)
    full, part = divmod(network.prefixlen, 8)
    pieces = [str(o) for o in octets[:full]]
    prefix = ".".join(pieces) + ("." if 0 < full < 4 else "")
    pieces = [p.replace(".", r"\.") for p in pieces]
    if full < 4:
        if part:
            span = 1 << (8 - part)
            pieces.append(_octet_range(octets[full], octets[full] + span - 1))
        else:
            pieces.append(_OCTET)
        pieces += [_OCTET] * (3 - full)
    return r"\.".join(pieces), prefix


def v4_text_in(raw: str, networks: list[Any]) -> str:
    """SQL testing that text ``raw`` is a canonical IPv4 address inside any of ``networks``.

    A literal-prefix test runs first so that the regex only sees candidate rows.
    """
    if not networks:
        return "false"
    regexes, prefixes = zip(*(v4_network_regex(n) for n in networks), strict=True)
    pattern = sql_string("(?:" + "|".join(regexes) + ")")
    test = f"regexp_full_match({raw}, {pattern})"
    if all(prefixes):
        starts = " OR ".join(f"starts_with({raw}, {sql_string(p)})" for p in sorted(set(prefixes)))
        return f"(({starts}) AND {test})"
    return test
