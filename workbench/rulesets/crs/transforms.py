"""ModSecurity's transformation functions (the ``t:`` actions), byte for byte as libmodsecurity 3.0.15 runs them.

This module owns :data:`TRANSFORMS`, every transformation CRS 3.3.4 and CRS
2.2.9 name, keyed by the name as written in rules, and :func:`apply_chain`.
Each function takes bytes and returns bytes, never raises and runs in linear
time. ``t:none`` is not here: it resets the chain, which is the caller's job.
The quirks are the engine's, kept on purpose (tests compare with
libmodsecurity): ``htmlEntityDecode`` keeps only the low byte of ``&#NNN;``,
``urlDecodeUni`` keeps the low byte of ``%uXXXX`` (no unicode map is loaded),
``base64Decode`` leaves invalid input unchanged. The longer state machines
(paths, comments, UTF-8) are in :mod:`.transforms_machines`.

    >>> apply_chain(["urlDecodeUni", "htmlEntityDecode", "lowercase"], b"%3CScRipt&gt;&#x41;")
    b'<script>a'
    >>> TRANSFORMS["cmdLine"](b'C:\\\\Win"dows ;  /c ^whoami')
    b'c:windows/c whoami'
"""

from __future__ import annotations

import binascii
import hashlib
import re
from collections.abc import Callable, Sequence
from urllib.parse import unquote_to_bytes

from .transforms_machines import (
    normalize_path,
    normalize_path_win,
    remove_comments,
    utf8_to_unicode,
)

Transform = Callable[[bytes], bytes]

# The C locale's isspace(); libmodsecurity's whitespace tests see no other byte as space.
_SPACE = b" \t\n\v\f\r"
_HEX = rb"[0-9A-Fa-f]"
_FULLWIDTH_PREFIX = frozenset(b"fF")


def _low_byte_fullwidth(hex4: bytes) -> int:
    """%uXXXX and \\uXXXX keep the low byte; U+FF01..FF5E (full-width ASCII) map back to ASCII."""
    low = int(hex4[2:], 16)
    if 0 < low < 0x5F and hex4[0] in _FULLWIDTH_PREFIX and hex4[1] in _FULLWIDTH_PREFIX:
        low += 0x20
    return low


# ---------------------------------------------------------------- URL encodings


def url_decode(value: bytes) -> bytes:
    """``urlDecode``: %XX when both digits are hex, ``+`` to space; anything else kept."""
    if b"+" in value:
        value = value.replace(b"+", b" ")
    # unquote_to_bytes decodes exactly the %XX pairs of hex digits and keeps the rest.
    return unquote_to_bytes(value) if b"%" in value else value


_URL_UNI = re.compile(rb"%(?:[uU](" + _HEX * 4 + rb")|(" + _HEX * 2 + rb"))")


def _url_uni_sub(m: re.Match[bytes]) -> bytes:
    uni = m.group(1)
    return bytes((_low_byte_fullwidth(uni) if uni else int(m.group(2), 16),))


def url_decode_uni(value: bytes) -> bytes:
    """``urlDecodeUni``: ``urlDecode`` plus IIS's %uXXXX (low byte; full-width ASCII folded)."""
    if b"+" in value:
        value = value.replace(b"+", b" ")
    # One pass: a decoded byte must never start a new escape.
    return _URL_UNI.sub(_url_uni_sub, value) if b"%" in value else value


_URL_SAFE = frozenset(b"*0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_URL_ENCODED = [bytes((c,)) if c in _URL_SAFE else b"%%%02x" % c for c in range(256)]
_URL_ENCODED[0x20] = b"+"


def url_encode(value: bytes) -> bytes:
    """``urlEncode``: all but ``*`` and alphanumerics as lower-case %xx, space as ``+``."""
    return b"".join([_URL_ENCODED[c] for c in value])


# ---------------------------------------------------------------- HTML, JS, CSS


# strtol saturates at LONG_MAX, whose low byte is 0xff.
_LONG_MAX = (1 << 63) - 1
_NAMED = {b"quot": b'"', b"amp": b"&", b"lt": b"<", b"gt": b">", b"nbsp": b"\xa0"}
_ENTITY = re.compile(rb"&(?:#[xX](" + _HEX + rb"+)|#([0-9]+)|([A-Za-z0-9]+))(;?)")


def _strtol_low_byte(digits: bytes, base: int) -> int:
    digits = digits.lstrip(b"0")
    # Longer than LONG_MAX can be: saturated (and int() of huge text is slow).
    if len(digits) > (16 if base == 16 else 19):
        return 0xFF
    return min(int(digits or b"0", base), _LONG_MAX) & 0xFF


def _entity_sub(m: re.Match[bytes]) -> bytes:
    hex_digits, dec_digits, name = m.group(1), m.group(2), m.group(3)
    if hex_digits is not None:
        return bytes((_strtol_low_byte(hex_digits, 16),))
    if dec_digits is not None:
        return bytes((_strtol_low_byte(dec_digits, 10),))
    # The engine compares only the known name's length: "&ltfoo;" is "<" too.
    lower = name.lower()
    for known in (lower[:4], lower[:3], lower[:2]):
        if known in _NAMED:
            return _NAMED[known]
    return m.group(0)


def html_entity_decode(value: bytes) -> bytes:
    """``htmlEntityDecode``: &#NNN; &#xHH; (low byte) and five names; the ``;`` is optional."""
    return _ENTITY.sub(_entity_sub, value) if b"&" in value else value


_JS_ESCAPE = re.compile(
    rb"\\(?:u(" + _HEX * 4 + rb")|x(" + _HEX * 2 + rb")|([0-3][0-7]{0,2}|[4-7][0-7]?)|(.))",
    re.DOTALL,
)
_C_ESCAPES = {
    **{b"a": b"\a", b"b": b"\b", b"f": b"\f", b"n": b"\n"},
    **{b"r": b"\r", b"t": b"\t", b"v": b"\v"},
}


def _js_sub(m: re.Match[bytes]) -> bytes:
    uni, hx, octal, other = m.groups()
    if uni is not None:
        return bytes((_low_byte_fullwidth(uni),))
    if hx is not None:
        return bytes((int(hx, 16),))
    if octal is not None:
        return bytes((int(octal, 8),))
    return _C_ESCAPES.get(other, other)


def js_decode(value: bytes) -> bytes:
    """``jsDecode``: \\uHHHH (low byte), \\xHH, octal up to \\377, C escapes, else drops the ``\\``."""
    return _JS_ESCAPE.sub(_js_sub, value) if b"\\" in value else value


_ESCAPE_SEQ = re.compile(
    rb"\\(?:([abfnrtv\\?'\"])|[xX](" + _HEX * 2 + rb")|([0-7]{1,3})|(.))", re.DOTALL
)


def _escape_seq_sub(m: re.Match[bytes]) -> bytes:
    simple, hx, octal, other = m.groups()
    if simple is not None:
        return _C_ESCAPES.get(simple, simple)
    if hx is not None:
        return bytes((int(hx, 16),))
    if octal is not None:
        return bytes((int(octal, 8) & 0xFF,))
    return other


def escape_seq_decode(value: bytes) -> bytes:
    """``escapeSeqDecode``: ANSI C escapes (\\n, \\xHH, \\OOO...); a lone trailing ``\\`` stays."""
    return _ESCAPE_SEQ.sub(_escape_seq_sub, value) if b"\\" in value else value


_CSS_ESCAPE = re.compile(rb"\\(?:(" + _HEX + rb"{1,6})[ \t\n\v\f\r]?|\n|(.))|\\\Z", re.DOTALL)


def _css_sub(m: re.Match[bytes]) -> bytes:
    digits, other = m.group(1), m.group(2)
    if digits is None:
        return other or b""
    n = len(digits)
    byte = int(digits[-2:], 16)
    # Four digits, or five/six with leading zeros, may be full-width ASCII (U+FF01..FF5E).
    if (
        (n == 4 or (n == 5 and digits[0] == 0x30) or (n == 6 and digits[:2] == b"00"))
        and 0 < byte < 0x5F
        and digits[n - 4] in _FULLWIDTH_PREFIX
        and digits[n - 3] in _FULLWIDTH_PREFIX
    ):
        byte += 0x20
    return bytes((byte,))


def css_decode(value: bytes) -> bytes:
    """``cssDecode``: \\H to \\HHHHHH (last byte kept, one following space eaten), \\newline dropped."""
    return _CSS_ESCAPE.sub(_css_sub, value) if b"\\" in value else value


# ---------------------------------------------------------------- whitespace, case, comments


_SPACE_RUN = re.compile(rb"[ \t\n\v\f\r]+")


def compress_whitespace(value: bytes) -> bytes:
    """``compressWhitespace``: each run of C-locale whitespace becomes one space."""
    return _SPACE_RUN.sub(b" ", value)


def remove_whitespace(value: bytes) -> bytes:
    """``removeWhitespace``: whitespace goes, and so do 0xa0 and 0xc2 (the bytes of a UTF-8 NBSP)."""
    return value.translate(None, _SPACE + b"\xa0\xc2")


_CMD_SEPARATORS = re.compile(rb"[ ,;\t\r\n]+")


def cmd_line(value: bytes) -> bytes:
    """``cmdLine``: drops ``\\ " ' ^``, separators to one space, no space before ``/`` or ``(``, lower case."""
    value = _CMD_SEPARATORS.sub(b" ", value.translate(None, b"\\\"'^").lower())
    if b" " in value:
        value = value.replace(b" /", b"/").replace(b" (", b"(")
    return value


_COMMENT_BLOCK = re.compile(rb"/\*.*?(?:\*/|\Z)", re.DOTALL)
_COMMENT_MARKS = re.compile(rb"/\*|\*/|<!--|-->|--|#")


def replace_comments(value: bytes) -> bytes:
    """``replaceComments``: each /* */ comment, or an unterminated /* to the end, becomes one space."""
    return _COMMENT_BLOCK.sub(b" ", value) if b"/*" in value else value


def remove_comments_char(value: bytes) -> bytes:
    """``removeCommentsChar``: deletes the markers ``/*  */  <!--  -->  --  #`` themselves."""
    return _COMMENT_MARKS.sub(b"", value)


# ---------------------------------------------------------------- binary encodings


def _x2c_table() -> list[int]:
    """The engine's unchecked hex digit value (any byte gives some value)."""
    return [((c & 0xDF) - 0x41 + 10) & 0xFF if c >= 0x41 else (c - 0x30) & 0xFF for c in range(256)]


_XDIGIT = _x2c_table()


def hex_decode(value: bytes) -> bytes:
    """``hexDecode``: pairs of digits to bytes, unchecked (``zz`` gives some byte); an odd last digit is dropped."""
    even = value[: len(value) & ~1]
    try:
        return binascii.unhexlify(even)
    except binascii.Error:
        return bytes(
            ((_XDIGIT[hi] << 4) + _XDIGIT[lo]) & 0xFF
            for hi, lo in zip(even[::2], even[1::2], strict=True)
        )


_SQL_HEX = re.compile(rb"0[xX]((?:" + _HEX * 2 + rb")+)")


def sql_hex_decode(value: bytes) -> bytes:
    """``sqlHexDecode``: 0xHHHH... literals (whole pairs of digits) to their bytes."""
    return _SQL_HEX.sub(lambda m: binascii.unhexlify(m.group(1)), value) if b"0" in value else value


def hex_encode(value: bytes) -> bytes:
    """``hexEncode``: two lower-case hex digits a byte."""
    return value.hex().encode("ascii")


# A run of spaces must end the text or a line; the look-behind keeps the search linear.
_B64_STRAY_SPACE = re.compile(rb"(?<! ) ++(?!\r?\n|\Z)|\r(?!\n)")
_B64_BODY = re.compile(rb"[A-Za-z0-9+/]*={0,2}")


def base64_decode(value: bytes) -> bytes:
    """``base64Decode``: strict RFC 4648 (mbed TLS) up to the first NUL; invalid input is left unchanged.

    Line breaks may separate the text and spaces may end a line; anything
    else that is not base64, or a length that is not a multiple of 4, makes
    the decode fail.
    """
    text = value.split(b"\0", 1)[0]
    if _B64_STRAY_SPACE.search(text):
        return value
    body = text.translate(None, b" \r\n")
    if not _B64_BODY.fullmatch(body) or len(body) % 4:
        return value
    return binascii.a2b_base64(body)


_B64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_JUNK = bytes(c for c in range(256) if c not in _B64_ALPHABET and c != 0x3D)
_B64_PAD_SPLIT = re.compile(rb"=(?!=)")


def base64_decode_ext(value: bytes) -> bytes:
    """``base64DecodeExt``: forgiving base64: other bytes skipped, partial groups kept as far as they go.

    Gives nothing when a ``=`` not followed by ``=`` comes one digit into a
    group, or when the input ends one digit into a group on ``=`` or on the
    digit ``9`` (the engine mistakes 9's value, 61, for the code of ``=``).
    """
    if not value:
        return value
    digits = value.translate(None, _B64_JUNK)
    count = 0
    if b"=" in digits:
        # Every "=" not followed by "=" (in the raw input) is checked against the digits before it.
        pieces = _B64_PAD_SPLIT.split(value)
        for piece in pieces[:-1]:
            count += len(piece.translate(None, _B64_JUNK + b"="))
            if count % 4 == 1:
                return b""
        digits = digits.replace(b"=", b"")
    n = len(digits)
    if n % 4 == 1 and value[-1:] in (b"=", b"9"):
        return b""
    whole = binascii.a2b_base64(digits + b"A" * (-n % 4))
    return whole[: (n // 4) * 3 + (0, 0, 1, 2)[n % 4]]


def length(value: bytes) -> bytes:
    """``length``: the length in bytes, as decimal text."""
    return str(len(value)).encode("ascii")


def md5(value: bytes) -> bytes:
    """``md5``: the raw 16-byte digest."""
    return hashlib.md5(value, usedforsecurity=False).digest()


def sha1(value: bytes) -> bytes:
    """``sha1``: the raw 20-byte digest."""
    return hashlib.sha1(value, usedforsecurity=False).digest()


class _AnyCase(dict[str, Transform]):
    """A dict whose lookups ignore case, as the rule parser does (CRS 2.2.9 writes ``compressWhiteSpace``)."""

    def __init__(self, items: dict[str, Transform]) -> None:
        super().__init__(items)
        self._folded = {name.lower(): name for name in items}

    def __missing__(self, name: str) -> Transform:
        if name.lower() not in self._folded:
            raise KeyError(name)
        return super().__getitem__(self._folded[name.lower()])

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._folded

    def get(self, name: str, default: Transform | None = None) -> Transform | None:  # type: ignore[override]
        return self[name] if name in self else default


#: Every transformation, keyed by its name in rules in any case (``t:none`` excluded: it resets the chain).
TRANSFORMS: dict[str, Transform] = _AnyCase(
    {
        "lowercase": bytes.lower,
        "uppercase": bytes.upper,
        "urlDecode": url_decode,
        "urlDecodeUni": url_decode_uni,
        "urlEncode": url_encode,
        "htmlEntityDecode": html_entity_decode,
        "jsDecode": js_decode,
        "cssDecode": css_decode,
        "escapeSeqDecode": escape_seq_decode,
        "cmdLine": cmd_line,
        "compressWhitespace": compress_whitespace,
        "removeWhitespace": remove_whitespace,
        "removeNulls": lambda value: value.replace(b"\0", b""),
        "replaceNulls": lambda value: value.replace(b"\0", b" "),
        "replaceComments": replace_comments,
        "removeCommentsChar": remove_comments_char,
        "removeComments": remove_comments,
        "normalizePath": normalize_path,
        "normalisePath": normalize_path,
        "normalizePathWin": normalize_path_win,
        "normalisePathWin": normalize_path_win,
        "utf8toUnicode": utf8_to_unicode,
        "base64Decode": base64_decode,
        "base64DecodeExt": base64_decode_ext,
        "hexDecode": hex_decode,
        "sqlHexDecode": sql_hex_decode,
        "hexEncode": hex_encode,
        "length": length,
        "md5": md5,
        "sha1": sha1,
        # bytes.strip() with no argument strips exactly the C locale's whitespace.
        "trim": bytes.strip,
        "trimLeft": bytes.lstrip,
        "trimRight": bytes.rstrip,
    }
)


def _length_changed(before: bytes, after: bytes) -> bool:
    return len(after) != len(before)


def _lowercase_flag(before: bytes, after: bytes) -> bool:
    # glibc's tolower() of a negative char gives the unsigned byte: "changed", bytes unchanged.
    return after != before or not before.isascii()


def _utf8_converted(before: bytes, after: bytes) -> bool:
    """utf8toUnicode's flag: a well-formed 2-4 byte sequence was written as ``%uXXXX`` (NULs it
    drops on the way do not count), walking the bytes as the engine does."""
    i, n = 0, len(before)
    while i < n:
        c = before[i]
        need = 2 if c & 0xE0 == 0xC0 else 3 if c & 0xF0 == 0xE0 else 4 if c & 0xF8 == 0xF0 else 0
        if need and n - i >= need and all(before[i + k] & 0xC0 == 0x80 for k in range(1, need)):
            return True
        i += 1
    return False


#: How a transformation tells libmodsecurity it changed the value, where that is not "the
#: bytes differ": ``multiMatch`` tries a step's result only when its transformation says so
#: (the chain goes on with the result either way). ``cmdLine`` lowercasing a value, or
#: ``utf8toUnicode`` dropping a NUL, adds no candidate; ``lowercase`` over a byte above 127
#: adds one. Measured against libmodsecurity for every transformation
#: (``tests/rulesets/crs/test_transforms.py``); the others flag exactly a change of bytes,
#: except ``cssDecode`` dropping the backslash of an escape that is not hex (not modelled:
#: no CRS multiMatch chain has it).
_CHANGED_FLAGS: dict[str, Callable[[bytes, bytes], bool]] = {
    "cmdline": _length_changed,
    "utf8tounicode": _utf8_converted,
    "lowercase": _lowercase_flag,
}


def changed(name: str, before: bytes, after: bytes) -> bool:
    """Whether transformation ``name`` reports that it changed ``before`` into ``after``.

    >>> changed("cmdLine", b"ABC", b"abc"), changed("lowercase", b"ABC", b"abc")
    (False, True)
    >>> changed("utf8toUnicode", b"..\\x00/x", b"../x"), changed("base64Decode", b"a", b"a")
    (False, False)
    """
    flag = _CHANGED_FLAGS.get(name.lower())
    return flag(before, after) if flag is not None else after != before


def apply_chain(names: Sequence[str], value: bytes) -> bytes:
    """Run the transformations ``names`` over ``value`` in order (KeyError for an unknown name)."""
    for name in names:
        value = TRANSFORMS[name](value)
    return value
