"""DuckDB translations of the Rules-language functions.

Each translation keeps the per-request semantics: byte offsets and ASCII-only
case changes, missing values (NULL) passed through, malformed input (bad
base64, invalid JSON, non-UTF-8 results) read as missing rather than as a
DuckDB error.

    >>> from workbench.rules_language import compile_expression
    >>> 'translate(' in compile_expression('lower(http.host) eq "a"').to_sql()
    True
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from ._sql_crypto import crypto_sql
from ._wildcard import parse_wildcard
from .ast import Call, Literal, Pattern
from .function_impls import TRIM_DEFAULT
from .functions import (
    JSON_MAX_DEPTH,
    regex_replace_pattern,
    wildcard_replace_regex,
)
from .regex import Replacement, parse_regex
from .sql_decode import decode_base64_sql, url_decode_sql
from .sql_fragments import (
    ascii_lower,
    ascii_upper,
    bind,
    from_view,
    ip_key_to_text,
    ip_literal_key,
    ip_mask,
    join_list,
    latin1_literal,
    sql_string,
    view,
    view_bytes,
)
from .sql_value import SqlCompiler, SqlTranslationError, Val
from .types import Type


def _lit(node: Call, i: int) -> Any:
    arg = node.args[i] if i < len(node.args) else None
    return arg.value if isinstance(arg, Literal) else None


def _text(val: Val) -> str:
    """A text-valued argument as UTF-8 text (views are turned back)."""
    return from_view(val.sql) if val.view else val.sql


def _bytes(val: Val) -> str:
    """A text-valued argument as the BLOB of its bytes (views keep their non-UTF-8 bytes)."""
    return view_bytes(val.sql) if val.view else f"encode({val.sql})"


def _replacement(template: Replacement, as_view: bool) -> str:
    """An RE2 rewrite string for a parsed ``${n}`` / ``$$`` template.

    An RE2 rewrite string names a group with one digit (``\\1`` to ``\\9``), so a template using
    a group above 9 has no translation.
    """
    out = []
    for piece in template.pieces:
        if isinstance(piece, bytes):
            text = piece.decode("latin-1") if as_view else piece.decode("utf-8")
            out.append(text.replace("\\", "\\\\"))
        elif piece > 9:
            raise SqlTranslationError(
                f"regex_replace() and wildcard_replace() have no SQL translation for ${{{piece}}}: "
                "DuckDB's rewrite strings reach groups 0 to 9 only"
            )
        else:
            out.append(f"\\{piece}")
    return sql_string("".join(out))


# A JSON string, or an unterminated one running to the end, so that a scan never restarts.
_JSON_STRING_RE = r'"(?:[^"\\]|\\(?s:.))*(?:"|\\?\z)'


def json_depth_ok(doc: str) -> str:
    """SQL: ``doc`` (a column or lambda variable) nests at most JSON_MAX_DEPTH arrays/objects.

    Counting the openers answers most documents cheaply; only one with more openers than the
    limit is scanned: strings removed, then a running depth that stops counting once too deep.
    """
    openers = f"(length({doc}) - length(replace(replace({doc}, '[', ''), '{{', '')))"
    brackets = (
        f"regexp_replace(regexp_replace({doc}, {sql_string(_JSON_STRING_RE)}, '', 'g'), "
        f"'[^\\[\\]{{}}]', '', 'g')"
    )
    depth = (
        f"list_reduce(string_split({brackets}, ''), lambda d, c: CASE WHEN d > {JSON_MAX_DEPTH} "
        f"THEN d WHEN c IN ('[', '{{') THEN d + 1 ELSE d - 1 END, 0)"
    )
    return (
        f"(CASE WHEN {openers} <= {JSON_MAX_DEPTH} THEN true ELSE {depth} <= {JSON_MAX_DEPTH} END)"
    )


def _json_path(keys: list[Any]) -> str:
    path = "$"
    for key in keys:
        if isinstance(key, int):
            path += f"[{key}]"
        else:
            path += "." + json.dumps(key.decode("utf-8", "replace"))
    return sql_string(path)


def call_sql(c: SqlCompiler, node: Call) -> Val:
    """The SQL value of a function call (mapped over ``[*]`` when its first argument is)."""
    if node.name in ("any", "all"):
        inner = c.boolean(node.args[0])
        if node.name == "any":
            return Val(f"coalesce(list_bool_or({inner}), false)", node.type)
        return Val(f"coalesce(list_bool_and({inner}), true)", node.type)
    args = [c.value(a) for a in node.args]
    if node.mapped:
        x = c.var()
        first = args[0]
        element = Val(x, first.type, nullable=True, view=first.view)
        body = _scalar(c, node, [element, *args[1:]], Type(node.type.element_type.kind))
        if body is None:
            raise _untranslated(node)
        return Val(
            f"list_transform({first.sql}, lambda {x}: {body.sql})", node.type, view=body.view
        )
    result = _scalar(c, node, args, node.type)
    if result is None:
        raise _untranslated(node)
    return result


def _untranslated(node: Call) -> SqlTranslationError:
    return SqlTranslationError(f"{node.name}() has no SQL translation in the workbench")


def _scalar(c: SqlCompiler, node: Call, args: list[Val], rtype: Type) -> Val | None:  # noqa: C901
    name = node.name
    a = args[0].sql if args else ""
    # A byte view read back as text (_text) is NULL when its bytes are not UTF-8.
    nullable = any(v.nullable or v.view for v in args)

    def out(sql: str, is_view: bool = False, may_miss: bool = nullable) -> Val:
        return Val(sql, rtype, nullable=may_miss, view=is_view)

    if name in ("lower", "upper"):
        fn = ascii_lower if name == "lower" else ascii_upper
        return out(fn(a), is_view=args[0].view)
    if name == "len":
        if args[0].type.kind == "Array":
            return out(f"len({a})")
        return out(f"strlen({_text(args[0])})" if not args[0].view else f"length({a})")
    if name in ("starts_with", "ends_with", "contains"):
        left, right = args[0], args[1]
        ls, rs = left.sql, right.sql
        if left.view or right.view:
            ls = ls if left.view else view(ls)
            rs = rs if right.view else view(rs)
        test = {"starts_with": "starts_with", "ends_with": "suffix", "contains": "contains"}[name]
        return out(f"{test}({ls}, {rs})")
    if name == "concat":
        if rtype.kind == "Array":
            sql = args[0].sql
            for v in args[1:]:
                sql = f"list_concat({sql}, {v.sql})"
            return out(sql)
        if any(v.view for v in args):
            # Joined as byte views, so that bytes which are not UTF-8 survive, as per request.
            parts = [
                f"CAST({v.sql} AS VARCHAR)"
                if v.type.kind == "Int"
                else v.sql
                if v.view
                else view(v.sql)
                for v in args
            ]
            return out(
                "(" + " || ".join(parts) + ")",
                is_view=True,
                may_miss=any(v.nullable for v in args),
            )
        parts = [f"CAST({v.sql} AS VARCHAR)" if v.type.kind == "Int" else _text(v) for v in args]
        return out("(" + " || ".join(parts) + ")")
    if name == "url_decode":
        return url_decode_sql(c, args[0], _lit(node, 1) or b"", rtype)
    if name == "to_string":
        kind = args[0].type.kind
        if kind == "Int":
            return out(f"CAST({a} AS VARCHAR)")
        if kind == "Bool":
            return out(f"(CASE WHEN {a} THEN 'true' ELSE 'false' END)")
        return out(ip_key_to_text(a))
    if name == "remove_bytes":
        remove = _lit(node, 1) or b""
        if not remove:
            return args[0]
        if all(b < 0x80 for b in remove):
            members = "".join(f"\\x{{{b:02x}}}" for b in sorted(set(remove)))
            return out(f"regexp_replace({a}, '[{members}]', '', 'g')", is_view=args[0].view)
        members = "".join(f"\\x{{{b:02x}}}" for b in sorted(set(remove)))
        target = a if args[0].view else view(a)
        return out(f"regexp_replace({target}, '[{members}]', '', 'g')", is_view=True)
    if name in ("trim", "trim_start", "trim_end"):
        chars = _lit(node, 1)
        chars = TRIM_DEFAULT if chars is None else chars
        trim_fn = {"trim": "trim", "trim_start": "ltrim", "trim_end": "rtrim"}[name]
        if not chars:
            return args[0]
        if chars.isascii() and not args[0].view:
            # ASCII bytes never occur inside a UTF-8 sequence: trimming characters is byte-exact.
            return out(f"{trim_fn}({a}, {sql_string(chars.decode('ascii'))})")
        target = a if args[0].view else view(a)
        return out(f"{trim_fn}({target}, {latin1_literal(chars)})", is_view=True)
    if name == "substring":
        start, end = _lit(node, 1), _lit(node, 2)

        def cut(target: str) -> str:
            n = f"length({target})"
            s = f"({n} + ({start}))" if start < 0 else str(start)
            e = n if end is None else (f"({n} + ({end}))" if end < 0 else str(end))
            s = f"greatest(0, least({n}, {s}))"
            e = f"greatest(0, least({n}, {e}))"
            return f"substr({target}, {s} + 1, greatest({e} - {s}, 0))"

        return out(bind(a if args[0].view else view(a), cut), is_view=True)
    if name in ("lookup_json_string", "lookup_json_integer"):
        keys = [_lit(node, i) for i in range(1, len(node.args))]
        path = _json_path(keys)
        if name == "lookup_json_string":
            extract, kinds = "json_extract_string({}, {})", "('VARCHAR')"
        else:
            extract, kinds = "CAST(json_extract({}, {}) AS BIGINT)", "('BIGINT', 'UBIGINT')"

        def lookup(doc: str) -> str:
            return (
                f"(CASE WHEN json_valid({doc}) AND {json_depth_ok(doc)} "
                f"AND json_type({doc}, {path}) IN {kinds} THEN {extract.format(doc, path)} END)"
            )

        return out(bind(_text(args[0]), lookup), may_miss=True)
    if name in ("regex_replace", "wildcard_replace"):
        if name == "regex_replace":
            regex = parse_regex(regex_replace_pattern(_lit(node, 1) or b""))
        else:
            regex = wildcard_replace_regex(_lit(node, 1) or b"", _lit(node, 3) or b"")
        template = Replacement(_lit(node, 2) or b"", regex.groups)
        direct = regex.sql_pattern()
        if direct is not None and not args[0].view and template.is_text():
            rewrite = _replacement(template, as_view=False)
            return out(f"regexp_replace({a}, {sql_string(direct)}, {rewrite})")
        target = a if args[0].view else view(a)
        rewrite = _replacement(template, as_view=True)
        pattern = sql_string(regex.sql_view_pattern())
        return out(f"regexp_replace({target}, {pattern}, {rewrite})", is_view=True)
    if name == "encode_base64":
        flags = _lit(node, 1) or b""
        data = _bytes(args[0])
        sql = f"to_base64({data})"
        if b"u" in flags:
            sql = f"translate({sql}, '+/', '-_')"
        if b"p" not in flags:
            sql = f"rtrim({sql}, '=')"
        return out(sql)
    if name == "decode_base64":
        return decode_base64_sql(args[0], rtype)
    if name in ("cidr", "cidr6"):
        v4_bits = _lit(node, 1) if name == "cidr" else None
        v6_bits = _lit(node, 2) if name == "cidr" else _lit(node, 1)

        def mask(key: str) -> str:
            v4 = key if v4_bits is None else ip_mask(key, v4_bits, 8, "4")
            v6 = ip_mask(key, v6_bits, 32, "6")
            return f"(CASE WHEN starts_with({key}, '4') THEN {v4} ELSE {v6} END)"

        return out(bind(a, mask))
    if name == "join":
        sep = _lit(node, 1) or b""
        return out(join_list(a, sql_string(sep.decode("utf-8", "replace"))))
    if name == "split":
        sep = sql_string((_lit(node, 1) or b"").decode("utf-8", "replace"))
        limit = _lit(node, 2)

        def first_pieces(pieces: str) -> str:
            return (
                f"(CASE WHEN len({pieces}) <= {limit} THEN {pieces} ELSE list_concat("
                f"list_slice({pieces}, 1, {limit - 1}), "
                f"[{join_list(f'list_slice({pieces}, {limit}, len({pieces}))', sep)}]) END)"
            )

        return out(bind(f"string_split({_text(args[0])}, {sep})", first_pieces))
    if name == "remove_query_args":
        names = ", ".join(
            sql_string((_lit(node, i) or b"").decode("utf-8", "replace"))
            for i in range(1, len(node.args))
        )
        x = c.var()
        text = _text(args[0])
        kept = f"list_filter(string_split({text}, '&'), lambda {x}: split_part({x}, '=', 1) NOT IN ({names}))"
        return out(join_list(kept, "'&'"))
    if name == "has_key":
        key = args[1].sql
        return out(f"coalesce(map_contains({a}, {key}), false)", may_miss=False)
    if name == "has_value":
        return out(f"coalesce(list_contains({a}, {args[1].sql}), false)", may_miss=False)
    if name == "coalesce":
        return out("coalesce(" + ", ".join(v.sql for v in args) + ")", may_miss=True)
    if name == "hash_in_range":
        lo, hi = _lit(node, 0), _lit(node, 1)  # the parser refuses hi < lo
        digest = f"sha256({_bytes(args[2])})"
        return out(f"({lo} + (('0x' || substr({digest}, 1, 16))::UBIGINT % {hi - lo + 1}))::BIGINT")
    if name == "ip_in_range":
        text = (_lit(node, 1) or b"").decode("utf-8", "replace").strip()
        if ".." in text:
            lo, hi = (ipaddress.ip_address(p) for p in text.split("..", 1))
        else:
            net = ipaddress.ip_network(text, strict=False)
            lo, hi = net.network_address, net.broadcast_address
        return out(f"coalesce({a} BETWEEN {ip_literal_key(lo)} AND {ip_literal_key(hi)}, false)")
    if name == "wildcard":
        compiled = parse_wildcard(_lit(node, 1) or b"", case_sensitive=False)
        test = c.pattern(args[0], "wildcard", Pattern(0, 0, compiled=compiled))
        return out(f"coalesce({test}, false)")
    if name == "bit_slice":
        return out(
            _bit_slice(a if args[0].view else view(a), _lit(node, 1), _lit(node, 2)), may_miss=True
        )
    if name in ("is_jwt_valid", "is_jwt_present"):
        return out("false", may_miss=False)
    return crypto_sql(node, args, out)


# bit_slice() answers an Integer (signed 64-bit); a wider slice has no value to give.
BIT_SLICE_MAX_WIDTH = 63


def _bit_slice(target: str, start: int, end: int) -> str:
    """SQL of bit_slice over a Latin-1 view: bits from the most significant bit of the first
    byte, both ends included; NULL (missing) when the value is too short."""
    if start < 0 or end < start:
        return "NULL::BIGINT"
    width = end - start + 1
    if width > BIT_SLICE_MAX_WIDTH:
        raise SqlTranslationError(
            f"bit_slice() has no SQL translation for a slice of {width} bits: "
            f"an Integer holds at most {BIT_SLICE_MAX_WIDTH}"
        )
    first, last = start // 8, end // 8
    count = last - first + 1

    def body(v: str) -> str:
        whole = " + ".join(
            f"(ord(substr({v}, {first + 1 + k}, 1))::HUGEINT << {8 * (count - 1 - k)})"
            for k in range(count)
        )
        shift = count * 8 - 1 - (end - first * 8)
        return (
            f"(CASE WHEN length({v}) * 8 > {end} "
            f"THEN ((({whole}) >> {shift}) & {(1 << width) - 1})::BIGINT END)"
        )

    return bind(target, body)
