"""Behaviour of the Rules-language functions on the per-request path.

Each builder takes the literal arguments (None for the others) and returns
``fn(*values)``; most functions give the missing value when any input is
missing, as the documentation says.

    >>> _strict(len)(MISSING) is MISSING
    True
"""

from __future__ import annotations

import base64
import functools
import hashlib
import ipaddress
import itertools
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_to_bytes

from ._wildcard import parse_wildcard, split_wildcard, wildcard_tree
from .regex import Node, Regex, RegexSyntaxError, Replacement, parse_regex
from .types import BYTES, Type
from .values import MISSING, from_bytes, parse_ip, to_bytes


def _fixed(t: Type) -> Callable[[list[Type]], Type]:
    return lambda _types: t


def _strict(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Missing in, missing out: the documented rule for most functions."""

    def wrapper(*values: Any) -> Any:
        if MISSING in values:
            return MISSING
        return fn(*values)

    return wrapper


def _simple(fn: Callable[..., Any]) -> Callable[[list[Any]], Callable[..., Any]]:
    return lambda _lits: _strict(fn)


# -- string helpers -----------------------------------------------------------

_UPPER_TO_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
_LOWER_TO_UPPER = bytes.maketrans(b"abcdefghijklmnopqrstuvwxyz", b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_STR_LOWER = {c: c + 32 for c in range(0x41, 0x5B)}
_STR_UPPER = {c: c - 32 for c in range(0x61, 0x7B)}


def ascii_lower(v: str | bytes) -> str | bytes:
    """Lower-case ASCII letters only; other bytes are left alone."""
    if isinstance(v, str):
        return v.lower() if v.isascii() else v.translate(_STR_LOWER)
    return v.translate(_UPPER_TO_LOWER)


def ascii_upper(v: str | bytes) -> str | bytes:
    """Upper-case ASCII letters only."""
    if isinstance(v, str):
        return v.upper() if v.isascii() else v.translate(_STR_UPPER)
    return v.translate(_LOWER_TO_UPPER)


def _len(v: Any) -> int:
    if isinstance(v, list | dict):
        return len(v)
    return len(to_bytes(v))


# For two str values the byte answers equal the str answers (UTF-8 is self-synchronising).
def _starts_with(v: Any, prefix: Any) -> bool:
    if type(v) is str and type(prefix) is str:
        return v.startswith(prefix)
    return to_bytes(v).startswith(to_bytes(prefix))


def _ends_with(v: Any, suffix: Any) -> bool:
    if type(v) is str and type(suffix) is str:
        return v.endswith(suffix)
    return to_bytes(v).endswith(to_bytes(suffix))


def _contains(v: Any, part: Any) -> bool:
    if type(v) is str and type(part) is str:
        return part in v
    return to_bytes(part) in to_bytes(v)


def _concat(*values: Any) -> Any:
    if values and isinstance(values[0], list):
        out: list[Any] = []
        for v in values:
            out.extend(v)
        return out
    parts = [str(v).encode() if isinstance(v, int) else to_bytes(v) for v in values]
    return from_bytes(b"".join(parts))


# Recursive url_decode stops after this many passes (the SQL path unrolls the same count).
URL_DECODE_MAX_PASSES = 16


def _url_decode_build(lits: list[Any]) -> Callable[..., Any]:
    options = to_bytes(lits[1]) if len(lits) > 1 and lits[1] is not None else b""
    recursive = b"r" in options
    unicode_escapes = b"u" in options

    def once(data: bytes) -> bytes:
        data = data.replace(b"+", b" ")
        if unicode_escapes:
            data = _decode_percent_u(data)
        return unquote_to_bytes(data)

    def decode(v: Any, *_opts: Any) -> Any:
        data = to_bytes(v)
        out = once(data)
        passes = 1
        while recursive and out != data and passes < URL_DECODE_MAX_PASSES:
            data, out = out, once(out)
            passes += 1
        return from_bytes(out)

    return _strict(decode)


_PERCENT_U = re.compile(rb"%[uU]([0-9a-fA-F]{4})")


def _decode_percent_u(data: bytes) -> bytes:
    """``%uXXXX`` (four hex digits) as the UTF-8 of that code point, in one regex pass."""
    return _PERCENT_U.sub(lambda m: chr(int(m.group(1), 16)).encode("utf-8", "surrogatepass"), data)


def _to_string(v: Any) -> Any:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return str(v)


# Rust's ``u8::is_ascii_whitespace``: the bytes trim() removes when no set is given.
TRIM_DEFAULT = b" \t\n\x0c\r"


def _trim_build(how: str) -> Callable[[list[Any]], Callable[..., Any]]:
    """trim / trim_start / trim_end: remove leading and/or trailing bytes of a set."""
    strip = {"both": bytes.strip, "start": bytes.lstrip, "end": bytes.rstrip}[how]

    def build(lits: list[Any]) -> Callable[..., Any]:
        chars = to_bytes(lits[1]) if len(lits) > 1 and lits[1] is not None else TRIM_DEFAULT
        return _strict(lambda v, *_: from_bytes(strip(to_bytes(v), chars)))

    return build


def _remove_bytes(v: Any, remove: Any) -> Any:
    return from_bytes(to_bytes(v).translate(None, to_bytes(remove)))


def _substring(v: Any, start: int, end: Any = None) -> Any:
    data = to_bytes(v)
    n = len(data)
    s = start + n if start < 0 else start
    e = n if end is None else (end + n if end < 0 else end)
    s, e = max(0, min(s, n)), max(0, min(e, n))
    return from_bytes(data[s:e]) if s < e else ""


# Nesting the engine's JSON parser accepts: serde_json (the usual Rust parser) gives up at
# 128 levels by default. Deeper documents hold no value for lookup_json_*; the SQL path
# applies the same limit (sql_calls.json_depth_ok).
JSON_MAX_DEPTH = 127
# A JSON string, or an unterminated one running to the end, so that no scan restarts inside it.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
# Brackets as +1/-1 steps once everything else is deleted.
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_too_deep(data: bytes) -> bool:
    """True when ``data`` nests more than JSON_MAX_DEPTH arrays/objects (outside strings).

    The engine's JSON parser gives up on such documents, and Python's own parser would
    recurse once per level, so they are refused before parsing; a linear scan decides.

        >>> json_too_deep(b"[" * 127 + b"]" * 127), json_too_deep(b"[" * 128)
        (False, True)
        >>> json_too_deep(b'["' + b"[" * 500 + b'"]')
        False
    """
    if data.count(b"[") + data.count(b"{") <= JSON_MAX_DEPTH:
        return False
    steps = _JSON_STRING.sub(b"", data).translate(_STEPS, _NOT_BRACKETS)
    return max(itertools.accumulate(memoryview(steps).cast("b")), default=0) > JSON_MAX_DEPTH


def _text_key(key: Any) -> Any:
    """A literal map key as the str a decoded JSON object or request map holds."""
    return from_bytes(key) if isinstance(key, bytes) else key


def _lookup_json(want_int: bool) -> Callable[[list[Any]], Callable[..., Any]]:
    def build(_lits: list[Any]) -> Callable[..., Any]:
        def lookup(v: Any, *keys: Any) -> Any:
            data = to_bytes(v)
            if json_too_deep(data):
                return MISSING  # as the engine: no value in a document nested this deep
            try:
                node = json.loads(data.decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                return MISSING
            for key in keys:
                if isinstance(key, int) and not isinstance(key, bool):
                    if not isinstance(node, list) or not 0 <= key < len(node):
                        return MISSING
                    node = node[key]
                else:
                    k = _text_key(key)
                    if not isinstance(node, dict) or k not in node:
                        return MISSING
                    node = node[k]
            if want_int:
                # Plain integers only: 42.0 and booleans do not count.
                return node if isinstance(node, int) and not isinstance(node, bool) else MISSING
            return node if isinstance(node, str) else MISSING

        return _strict(lookup)

    return build


def regex_replace_pattern(literal: bytes) -> str:
    """The regex text of a regex_replace pattern literal; RegexSyntaxError when not UTF-8.

    A regex is text to the engine's regex crate, so a literal spelling other bytes
    (``"\\xff"``) cannot be one; ``\\xff`` inside the pattern still matches byte 0xFF.
    """
    try:
        return literal.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RegexSyntaxError(
            f"regex parse error: the pattern is not valid UTF-8 (byte {err.start})",
            0,
            len(literal),
        ) from None


def _regex_replace_build(lits: list[Any]) -> Callable[..., Any]:
    regex = parse_regex(regex_replace_pattern(to_bytes(lits[1])))
    # Parsed here, once: a malformed template is an error now, not a loop per request.
    replacement = Replacement(to_bytes(lits[2]), regex.groups)
    return _strict(lambda v, *_: from_bytes(regex.sub_first(to_bytes(v), replacement)))


@functools.lru_cache(maxsize=256)
def wildcard_replace_regex(pattern: bytes, flags: bytes) -> Regex:
    """The regex of a wildcard_replace pattern: whole-value, each star a lazy capture.

    The group goes around the whole star (``(.*?)``), so ``${n}`` is all it matched.

        >>> wildcard_replace_regex(b"*.example.*", b"").sub_first(
        ...     b"www.example.com", Replacement(b"${2}/${1}", 2))
        b'com/www'
    """
    tree = wildcard_tree(split_wildcard(pattern), case_sensitive=b"s" in flags)
    for i, item in enumerate(tree.items):
        if item.kind == "rep":
            item.greedy = False
            tree.items[i] = Node("group", items=[item], name="cap")
    return Regex(pattern.decode("utf-8", "replace"), tree)


def _wildcard_replace_build(lits: list[Any]) -> Callable[..., Any]:
    flags = to_bytes(lits[3]) if len(lits) > 3 and lits[3] is not None else b""
    regex = wildcard_replace_regex(to_bytes(lits[1]), flags)
    replacement = Replacement(to_bytes(lits[2]), regex.groups)
    return _strict(lambda v, *_: from_bytes(regex.sub_first(to_bytes(v), replacement)))


def _encode_base64_build(lits: list[Any]) -> Callable[..., Any]:
    flags = to_bytes(lits[1]) if len(lits) > 1 and lits[1] is not None else b""

    def encode(v: Any, *_: Any) -> Any:
        data = to_bytes(v)
        out = base64.urlsafe_b64encode(data) if b"u" in flags else base64.b64encode(data)
        if b"p" not in flags:
            out = out.rstrip(b"=")
        return out.decode()

    return _strict(encode)


def _decode_base64(v: Any) -> Any:
    data = to_bytes(v).strip()
    try:
        if b"-" in data or b"_" in data:
            return from_bytes(base64.urlsafe_b64decode(data + b"=" * (-len(data) % 4)))
        return from_bytes(base64.b64decode(data + b"=" * (-len(data) % 4), validate=True))
    except ValueError:
        return MISSING


def _cidr(v: Any, v4_bits: int, v6_bits: int | None = None) -> Any:
    addr = parse_ip(v)
    if addr is MISSING:
        return MISSING
    bits = v4_bits if addr.version == 4 else v6_bits
    if bits is None:
        return addr
    return ipaddress.ip_network(f"{addr}/{bits}", strict=False).network_address


def _cidr6(v: Any, v6_bits: int) -> Any:
    addr = parse_ip(v)
    if addr is MISSING or addr.version == 4:
        return addr
    return ipaddress.ip_network(f"{addr}/{v6_bits}", strict=False).network_address


def _join(values: list[Any], sep: Any) -> Any:
    return from_bytes(to_bytes(sep).join(to_bytes(v) for v in values))


def _split(v: Any, sep: Any, limit: int) -> list[Any]:
    return [from_bytes(p) for p in to_bytes(v).split(to_bytes(sep), max(limit, 1) - 1)]


def _remove_query_args(v: Any, *names: Any) -> Any:
    drop = {to_bytes(n) for n in names}
    kept = [p for p in to_bytes(v).split(b"&") if p.split(b"=", 1)[0] not in drop]
    return from_bytes(b"&".join(kept))


def _has_key(m: Any, key: Any) -> bool:
    if not isinstance(m, dict):
        return False
    k = _text_key(key)
    return k in m or to_bytes(k) in m


def _has_value(arr: Any, value: Any) -> bool:
    want = to_bytes(value) if isinstance(value, str | bytes) else value
    return any((to_bytes(x) if isinstance(x, str | bytes) else x) == want for x in arr)


def _coalesce_build(_lits: list[Any]) -> Callable[..., Any]:
    def coalesce(*values: Any) -> Any:
        for v in values:
            if v is not MISSING:
                return v
        return MISSING

    return coalesce


def _hash_in_range(lo: int, hi: int, v: Any) -> int:
    digest = int.from_bytes(hashlib.sha256(to_bytes(v)).digest()[:8], "big")
    return lo + digest % (hi - lo + 1)


def hash_range_check(lits: list[Any]) -> str | None:
    """Parse-time check of hash_in_range(min, max, ..): the engine refuses max below min."""
    lo, hi = lits[0], lits[1]
    if isinstance(lo, int) and isinstance(hi, int) and hi < lo:
        return f"hash_in_range(): the maximum ({hi}) must not be below the minimum ({lo})"
    return None


def _bool_of(_v: Any) -> bool:
    # JWT validation needs a token configuration the workbench does not hold.
    return False


def _range_check(index: int, lo: int, hi: int, what: str) -> Callable[[list[Any]], str | None]:
    def check(lits: list[Any]) -> str | None:
        if index < len(lits) and isinstance(lits[index], int) and not lo <= lits[index] <= hi:
            return f"{what} must be between {lo} and {hi}, got {lits[index]}"
        return None

    return check


def _concat_returns(types: list[Type]) -> Type:
    return types[0] if types and types[0].kind == "Array" else BYTES


def _ip_in_range_build(lits: list[Any]) -> Callable[..., Any]:
    text = to_bytes(lits[1]).decode("utf-8", "replace").strip()
    if ".." in text:
        lo, hi = (ipaddress.ip_address(p) for p in text.split("..", 1))
    else:
        net = ipaddress.ip_network(text, strict=False)
        lo, hi = net.network_address, net.broadcast_address

    def inside(v: Any, *_: Any) -> bool:
        addr = parse_ip(v)
        return addr is not MISSING and addr.version == lo.version and lo <= addr <= hi

    return _strict(inside)


def _wildcard_fn_build(lits: list[Any]) -> Callable[..., Any]:
    pattern = parse_wildcard(to_bytes(lits[1]), case_sensitive=False)
    return _strict(lambda v, *_: pattern.match(to_bytes(v)))


def _bit_slice(v: Any, start: int, end: int) -> Any:
    # Bits numbered from the most significant bit of the first byte, both ends included.
    data = to_bytes(v)
    if start < 0 or end < start or end >= len(data) * 8:
        return MISSING
    # Only the bytes holding the bits: the work depends on the slice, not on the value.
    first, last = start // 8, end // 8
    whole = int.from_bytes(data[first : last + 1], "big")
    width = (last + 1 - first) * 8
    return (whole >> (width - 1 - (end - first * 8))) & ((1 << (end - start + 1)) - 1)


def ip_range_check(lits: list[Any]) -> str | None:
    """Parse-time check of ip_in_range's range text (a CIDR or ``a..b``)."""
    text = to_bytes(lits[1]).decode("utf-8", "replace").strip() if lits[1] is not None else ""
    try:
        if ".." in text:
            lo, hi = (ipaddress.ip_address(p) for p in text.split("..", 1))
            if lo.version != hi.version or int(lo) > int(hi):
                return "incompatible range bounds"
        else:
            ipaddress.ip_network(text, strict=True)
    except ValueError as exc:
        return f"invalid IP range {text!r}: {exc}"
    return None
