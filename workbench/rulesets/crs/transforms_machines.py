"""The stateful transformations of :mod:`.transforms`: path normalisation, ``removeComments``, ``utf8toUnicode``.

They follow libmodsecurity 3.0.15 byte for byte, quirks included: a
``removeComments`` comment closed at the very end leaves a NUL byte,
``utf8toUnicode`` drops a NUL that is not the last byte, and
``normalizePathWin`` copies a backslash that ends a run of separators as it
is. Each has a fast path for the common input it leaves unchanged.

    >>> normalize_path(b"/a/b/../c//d/./e")
    b'/a/c/d/e'
    >>> utf8_to_unicode(b"caf\\xc3\\xa9")
    b'caf%u00e9'
"""

from __future__ import annotations

import re

_SLASH, _BACKSLASH, _DOT = 0x2F, 0x5C, 0x2E


def _normalize(value: bytes, win: bool) -> bytes:
    """The engine's in-place path normaliser, step for step (positions instead of pointers)."""
    if not value:
        return value
    if b"." not in value and b"//" not in value and not (win and b"\\" in value):
        return value
    buf = bytearray(value)
    end = len(buf) - 1
    seps = (_SLASH, _BACKSLASH) if win else (_SLASH,)
    relative = buf[0] not in seps
    trailing = buf[end] in seps
    hitroot = done = False
    src = dst = 0
    while not done and src <= end and dst <= end:
        if win:
            # Only the current byte and the next are converted: a separator run
            # skipped below can end on a backslash, which is then copied as is.
            if buf[src] == _BACKSLASH:
                buf[src] = _SLASH
            if src < end and buf[src + 1] == _BACKSLASH:
                buf[src + 1] = _SLASH
        segment_end = src == end or buf[src + 1] == _SLASH
        done = src == end
        if segment_end and not (src != end and buf[src] == _SLASH):
            if buf[src] == _DOT:
                if dst > 0 and buf[dst - 1] == _DOT:
                    if relative and (hitroot or dst - 2 <= 0):
                        # ".." with nothing left to remove in a relative path: kept.
                        hitroot = True
                    else:
                        dst -= 3
                        while dst > 0 and buf[dst] != _SLASH:
                            dst -= 1
                        if dst <= 0:
                            hitroot = True
                            dst = 1 if not relative and done else 0
                        if done:
                            continue
                        src += 1
                elif dst == 0:
                    if done:
                        continue
                    src += 1
                elif buf[dst - 1] == _SLASH:
                    if done:
                        continue
                    dst -= 1
                    src += 1
            elif dst > 0:
                hitroot = False
        if buf[src] == _SLASH:
            while src < end and buf[src + 1] in seps:
                src += 1
            if relative and dst == 0:
                src += 1
                continue
        buf[dst] = buf[src]
        dst += 1
        src += 1
    if not trailing and dst > 0 and buf[dst - 1] == _SLASH:
        dst -= 1
    return bytes(buf[:dst])


def normalize_path(value: bytes) -> bytes:
    """``normalizePath``: collapses ``//``, resolves ``.`` and ``..``; keeps a trailing slash only if there was one."""
    return _normalize(value, False)


def normalize_path_win(value: bytes) -> bytes:
    """``normalizePathWin``: ``normalizePath`` with backslashes turned into slashes as it goes."""
    return _normalize(value, True)


_COMMENT_OPEN = re.compile(rb"/\*|<!--|--|#")
_COMMENT_CLOSE = re.compile(rb"\*/|-->")


def remove_comments(value: bytes) -> bytes:
    """``removeComments``: drops /* */ and <!-- --> comments, and everything from ``--`` or ``#`` on.

    An unterminated comment becomes one space. After a comment closes, the
    next byte is copied unexamined (a NUL when the comment closes at the end).
    """
    first = _COMMENT_OPEN.search(value)
    if first is None:
        return value
    out = []
    pos = 0
    found: re.Match[bytes] | None = first
    while found is not None:
        out.append(value[pos : found.start()])
        if found.group() in (b"--", b"#"):
            return b"".join(out)
        close = _COMMENT_CLOSE.search(value, found.end())
        if close is None:
            out.append(b" ")
            return b"".join(out)
        pos = close.end()
        out.append(value[pos : pos + 1] or b"\0")
        pos += 1
        found = _COMMENT_OPEN.search(value, pos)
    out.append(value[pos:])
    return b"".join(out)


# A NUL before the last byte, a lead byte with its continuations, or a lone lead byte.
_UTF8_TOKEN = re.compile(
    rb"\x00(?=.)|[\xc0-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf7][\x80-\xbf]{3}|[\xc0-\xf7]",
    re.DOTALL,
)
_CONTINUATION_BITS = (0, 0x1F, 0x0F, 0x07)


def _utf8_sub(m: re.Match[bytes]) -> bytes:
    seq = m.group()
    lead = seq[0]
    extra = b"\xf5\xf6\xf7"
    if len(seq) == 1:
        # A NUL, or a lead byte without its continuations: dropped (F5-F7 are kept).
        return seq if lead in extra else b""
    code = lead & _CONTINUATION_BITS[len(seq) - 1]
    for c in seq[1:]:
        code = (code << 6) | (c & 0x3F)
    out = b"%%u%04x" % code
    if lead in extra:
        out = seq[:1] + out
    if 0xD800 <= code <= 0xDFFF:
        out += seq[:1]
    if code < (0x80, 0x800, 0x10000)[len(seq) - 2]:
        # Overlong: the engine appends the lead byte after the code.
        out += seq[:1]
    return out


def utf8_to_unicode(value: bytes) -> bytes:
    """``utf8toUnicode``: each multi-byte UTF-8 character as %uXXXX (lower-case hex, at least 4 digits)."""
    if value.isascii() and b"\0" not in value[:-1]:
        return value
    return _UTF8_TOKEN.sub(_utf8_sub, value)
