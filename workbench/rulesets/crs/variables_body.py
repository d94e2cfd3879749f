"""How libmodsecurity 3 reads a query string, a urlencoded body and a JSON body.

The pieces :mod:`.variables` assembles into ARGS and REQBODY_ERROR (the XML
body is :mod:`.variables_xml`'s):

* :func:`split_args`: ``a=1&b`` split as ModSecurity splits it (``&`` then the
  first ``=``; a trailing empty piece dropped, inner ones kept), each side
  url-decoded with ``+`` as a space and a malformed ``%`` kept as it is.
* :func:`parse_json`: yajl 2's grammar (``\\v`` and ``\\f`` count as white
  space, any single value at the top, strings checked for UTF-8 shape only,
  numbers kept as written, its odd ``\\u`` surrogate decoding) and
  ModSecurity's argument names (``json.a.b``, ``json.list.array_0``,
  ``empty-key``); the arguments read before an error stay, as in the engine.

    >>> split_args(b"a=1&b=%41+c&&=x&d%zz")
    ([(b'a', b'1'), (b'b', b'A c'), (b'', b''), (b'', b'x'), (b'd%zz', b'')], False)
    >>> parse_json(b'{"a": [1, {"b": null}], "": true}').args
    [(b'json.a.array_0', b'1'), (b'json.a.array_1.b', b''), (b'json.empty-key', b'true')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote_to_bytes

__all__ = ["JsonResult", "parse_json", "split_args", "uri_decode", "url_decode"]

_INVALID_PERCENT = re.compile(rb"%(?![0-9A-Fa-f]{2})")


def url_decode(data: bytes) -> tuple[bytes, int]:
    """``urldecode_nonstrict``: ``+`` to space, ``%XY`` decoded, others kept; and the count of bad ``%``."""
    if b"%" not in data:
        return (data.replace(b"+", b" ") if b"+" in data else data), 0
    # '+' first is safe: a decoded %2B must stay '+', and it only appears after.
    invalid = len(_INVALID_PERCENT.findall(data))
    return unquote_to_bytes(data.replace(b"+", b" ")), invalid


def uri_decode(data: bytes) -> bytes:
    """``uri_decode`` (the path): ``%XY`` decoded, ``+`` kept."""
    return unquote_to_bytes(data) if b"%" in data else data


def split_args(data: bytes, separator: bytes = b"&") -> tuple[list[tuple[bytes, bytes]], bool]:
    """The arguments of a query string or urlencoded body, and URLENCODED_ERROR.

    The error flag only looks at values: ModSecurity resets its count of bad
    ``%`` for each call and decodes the name first.
    """
    pieces = data.split(separator)
    if pieces and not pieces[-1]:
        pieces.pop()  # getline() yields no token for a trailing separator
    args = []
    error = False
    for piece in pieces:
        name, _, value = piece.partition(b"=")
        name, _ = url_decode(name)
        value, bad = url_decode(value)
        error = error or bad > 0
        args.append((name, value))
    return args, error


# ---------------------------------------------------------------- JSON (yajl 2)

_WS = b"\t\n\x0b\x0c\r "
# One token after white space: yajl's lexer, with strings checked for the
# UTF-8 bit patterns yajl accepts (overlong forms and surrogates included).
_TOKEN = re.compile(
    rb"[\t\n\x0b\x0c\r ]*(?:"
    rb"(?P<p>[{}\[\],:])"
    rb'|"(?P<s>(?:[\x20\x21\x23-\x5b\x5d-\x7f]|[\xc0-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}'
    rb'|[\xf0-\xf7][\x80-\xbf]{3}|\\["\\/bfnrt]|\\u[0-9A-Fa-f]{4})*)"'
    rb"|(?P<n>-?(?:0|[1-9][0-9]*)(?P<frac>\.[0-9]+)?(?P<exp>[eE][+-]?[0-9]+)?)"
    rb"|(?P<l>true|false|null)"
    rb"|(?P<end>\Z)"
    rb")"
)
_HEX = frozenset(b"0123456789abcdefABCDEF")
_LEX = {
    "utf8": "invalid bytes in UTF8 string.",
    "escape": "inside a string, '\\' occurs before a character which it may not.",
    "control": "invalid character inside string.",
    "hex": "invalid (non-hex) character occurs after '\\u' inside string.",
    "char": "invalid char in json text.",
    "literal": "invalid string in json text.",
    "exponent": "malformed number, a digit is required after the exponent.",
    "decimal": "malformed number, a digit is required after the decimal point.",
    "minus": "malformed number, a digit is required after the minus sign.",
    "comment": "probable comment found in input text, comments are not enabled.",
}


def _lex_error(text: bytes, pos: int) -> str | None:
    """What yajl's lexer says where no token matches; None when it runs out of input first."""
    n = len(text)
    while text[pos] in _WS:
        pos += 1
    c = text[pos]
    if c == 0x22:
        i = pos + 1
        while i < n:
            ch = text[i]
            if ch == 0x5C:
                if i + 1 >= n:
                    return None
                e = text[i + 1]
                if e == 0x75:
                    for k in range(i + 2, i + 6):
                        if k >= n:
                            return None
                        if text[k] not in _HEX:
                            return _LEX["hex"]
                    i += 6
                    continue
                if e not in b'"\\/bfnrt':
                    return _LEX["escape"]
                i += 2
                continue
            if ch < 0x20:
                return _LEX["control"]
            if ch >= 0x80:
                size = 2 if ch >> 5 == 6 else 3 if ch >> 4 == 0xE else 4 if ch >> 3 == 0x1E else 0
                if not size:
                    return _LEX["utf8"]
                for k in range(i + 1, i + size):
                    if k >= n:
                        return None
                    if text[k] >> 6 != 2:
                        return _LEX["utf8"]
                i += size
                continue
            i += 1
        return None
    if c == 0x2D:
        return _LEX["minus"]
    if c in b"tfn":
        return _LEX["literal"]
    if c == 0x2F:
        return _LEX["comment"]
    return _LEX["char"]


_ESCAPES = {
    ord("r"): b"\r",
    ord("n"): b"\n",
    ord("\\"): b"\\",
    ord("/"): b"/",
    ord('"'): b'"',
    ord("f"): b"\f",
    ord("b"): b"\b",
    ord("t"): b"\t",
}


def _utf8(cp: int) -> bytes:
    """yajl's Utf32toUtf8: up to four bytes by bit pattern (surrogates too), else ``?``."""
    if cp < 0x80:
        return bytes((cp,))
    if cp < 0x800:
        return bytes((0xC0 | cp >> 6, 0x80 | cp & 0x3F))
    if cp < 0x10000:
        return bytes((0xE0 | cp >> 12, 0x80 | cp >> 6 & 0x3F, 0x80 | cp & 0x3F))
    if cp < 0x200000:
        return bytes(
            (0xF0 | cp >> 18, 0x80 | cp >> 12 & 0x3F, 0x80 | cp >> 6 & 0x3F, 0x80 | cp & 0x3F)
        )
    return b"?"


def _hex4(data: bytes, i: int) -> int:
    """yajl's hexToDigit, on whatever four bytes are there (0 past the buffer)."""
    value = 0
    for k in range(i, i + 4):
        c = data[k] if k < len(data) else 0
        if c >= 0x41:
            c = ((c & ~0x20) - 7) & 0xFF
        value = (value << 4 | (c - 0x30) & 0xFF) & 0xFFFFFFFF
    return value


def _decode_json_string(raw: bytes) -> bytes:
    """yajl_string_decode: escapes resolved, with its quirks.

    A high surrogate not followed by ``\\u`` becomes ``?`` and the character
    after it is skipped; that can leave the decoder reading the closing quote
    that follows the string in yajl's buffer, or an escape letter it does not
    know (``?`` too).
    """
    if b"\\" not in raw:
        return raw
    data = raw + b'"'
    n = len(raw)
    out = bytearray()
    end = beg = 0
    while end < n:
        if data[end] != 0x5C:
            end += 1
            continue
        out += data[beg:end]
        end += 1
        c = data[end] if end < len(data) else 0
        if c == 0x75:  # \uXXXX
            cp = _hex4(data, end + 1)
            end += 4  # on the last hex digit
            if cp & 0xFC00 == 0xD800:
                end += 1
                if data[end : end + 2] == b"\\u":
                    low = _hex4(data, end + 2)
                    cp = ((cp & 0x3F) << 10) | ((((cp >> 6) & 0xF) + 1) << 16) | (low & 0x3FF)
                    end += 5
                else:
                    out += b"?"
                    end += 1
                    beg = end
                    continue
            out += _utf8(cp)
        else:
            out += _ESCAPES.get(c, b"?")
        end += 1
        beg = end
    out += data[beg:end]
    return bytes(out)


@dataclass
class JsonResult:
    """What the JSON body processor leaves: arguments (name, value) in order, and an error message or ""."""

    args: list[tuple[bytes, bytes]] = field(default_factory=list)
    error: str = ""


class _JsonArgs:
    """ModSecurity's JSON callbacks: containers named by the key that opened them, arrays counted."""

    __slots__ = ("args", "names", "arrays", "counters", "key", "depth", "max_depth")

    def __init__(self, max_depth: int) -> None:
        self.args: list[tuple[bytes, bytes]] = []
        # The open containers: name, whether an array, elements seen so far.
        self.names: list[bytes] = []
        self.arrays: list[bool] = []
        self.counters: list[int] = []
        self.key = b""
        self.depth = 0
        self.max_depth = max_depth

    def current_key(self) -> bytes:
        if not self.names:
            return b"json"
        if not self.key:
            return b"" if self.arrays[-1] else b"empty-key"
        key, self.key = self.key, b""
        return key

    def value(self, value: bytes) -> None:
        parts = []
        for name, is_array, counter in zip(self.names, self.arrays, self.counters, strict=True):
            parts.append(name)
            parts.append(b".array_%d" % counter if is_array else b".")
        if self.arrays and self.arrays[-1]:
            self.counters[-1] += 1
        else:
            parts.append(self.current_key())
        self.args.append((b"".join(parts), value))

    def open(self, is_array: bool) -> bool:
        self.names.append(self.current_key())
        self.arrays.append(is_array)
        self.counters.append(0)
        self.depth += 1
        return self.depth <= self.max_depth

    def close(self) -> None:
        if self.names:
            self.names.pop()
            self.arrays.pop()
            self.counters.pop()
            if self.arrays and self.arrays[-1]:
                self.counters[-1] += 1
        self.depth -= 1


# yajl's parser states: a value wanted at the top, the top value read; in a map,
# just opened, a key wanted after ',', ':' wanted, a value wanted, a value read;
# in an array, just opened, a value wanted after ',', a value read.
_START, _COMPLETE = 0, 1
_MAP_START, _MAP_KEY, _MAP_SEP, _MAP_VAL, _MAP_GOT = 2, 3, 4, 5, 6
_ARR_START, _ARR_VAL, _ARR_GOT = 7, 8, 9


def parse_json(body: bytes, max_depth: int = 512) -> JsonResult:
    """The ARGS a JSON body gives (names ``json...``) and the parse error, as ModSecurity with yajl reports it."""
    cb = _JsonArgs(max_depth)
    result = JsonResult(cb.args)
    text = body + b" "  # yajl_complete_parse feeds one space to end a number at EOF
    pos = 0
    stack = [_START]
    token = _TOKEN
    while True:
        state = stack[-1]
        m = token.match(text, pos)
        if m is None:
            why = _lex_error(text, pos)
            if state == _COMPLETE:
                # After the value only the end may come, but an unterminated
                # string there is still "waiting for more input" to yajl.
                result.error = "" if why is None else "parse error: trailing garbage\n"
            elif why is None:
                result.error = "parse error: premature EOF\n"
            else:
                result.error = f"lexical error: {why}\n"
            break
        pos = m.end()
        kind = m.lastgroup
        if kind == "n" and state != _COMPLETE:
            # yajl reads past a number: a '.' or an 'e' there must start its fraction or exponent.
            after = text[pos]
            if after == 0x2E and m.group("frac") is None:
                result.error = f"lexical error: {_LEX['decimal']}\n"
                break
            if after in b"eE" and m.group("exp") is None:
                result.error = f"lexical error: {_LEX['exponent']}\n"
                break
        if kind == "end":
            if state == _COMPLETE:
                break
            result.error = "parse error: premature EOF\n"
            break
        if state == _COMPLETE:
            result.error = "parse error: trailing garbage\n"
            break
        tok = m.group(kind or "")
        if state in (_MAP_START, _MAP_KEY):
            if kind == "s":
                cb.key = _decode_json_string(tok)
                stack[-1] = _MAP_SEP
                continue
            if tok == b"}" and state == _MAP_START:
                cb.close()
                stack.pop()
                continue
            result.error = "parse error: invalid object key (must be a string)\n"
            break
        if state == _MAP_SEP:
            if tok == b":":
                stack[-1] = _MAP_VAL
                continue
            result.error = "parse error: object key and value must be separated by a colon (':')\n"
            break
        if state == _MAP_GOT:
            if tok == b"}":
                cb.close()
                stack.pop()
            elif tok == b",":
                stack[-1] = _MAP_KEY
            else:
                result.error = "parse error: after key and value, inside map, I expect ',' or '}'\n"
                break
            continue
        if state == _ARR_GOT:
            if tok == b"]":
                cb.close()
                stack.pop()
            elif tok == b",":
                stack[-1] = _ARR_VAL
            else:
                result.error = "parse error: after array element, I expect ',' or ']'\n"
                break
            continue
        # A value is wanted (_START, _MAP_VAL, _ARR_START, _ARR_VAL).
        push = None
        if kind == "s":
            cb.value(_decode_json_string(tok))
        elif kind == "n":
            cb.value(tok)
        elif kind == "l":
            cb.value(b"" if tok == b"null" else tok)
        elif tok == b"{" or tok == b"[":
            is_array = tok == b"["
            if not cb.open(is_array):
                result.error = (
                    "parse error: client cancelled parse via callback return value\n"
                    ". Parsing depth limit exceeded"
                )
                break
            push = _ARR_START if is_array else _MAP_START
        elif tok == b"]" and state == _ARR_START:
            cb.close()
            stack.pop()
            continue
        else:
            result.error = "parse error: unallowed token at this point in JSON text\n"
            break
        stack[-1] = _COMPLETE if state == _START else (_MAP_GOT if state == _MAP_VAL else _ARR_GOT)
        if push is not None:
            stack.append(push)
    if not body:
        result.error = ""  # ModSecurity ignores yajl's complaint about an empty body
    return result
