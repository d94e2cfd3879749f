"""Text of a request as field values: ``str`` when it is UTF-8, else the bytes themselves.

Requests arrive as ``str`` (generators, JSON logs) or ``bytes`` (raw bodies,
nginx's ``\\xHH`` escapes). Inside a :class:`~workbench.traffic.request.Request`
everything is ``str``, with bytes that are not UTF-8 kept as lone surrogates
(Python's ``surrogateescape``), so parsing stays on fast ``str`` methods and no
byte is lost. :func:`field_text` turns such text back into what the Rules
language takes: ``str`` when encodable as UTF-8 (the rule of
:mod:`workbench.core.text`), else the original ``bytes``.

    >>> inner = as_text(b"caf\\xe9")
    >>> field_text(inner), field_text("plain"), field_text(as_text("\\u00e9"))
    (b'caf\\xe9', 'plain', 'é')
    >>> field_text("\\ud800")  # a lone surrogate that stands for no byte
    b'\\xed\\xa0\\x80'
"""

from __future__ import annotations

from typing import Any


def as_text(value: Any) -> str:
    """``value`` as inner text: bytes decoded with ``surrogateescape``, None as ``""``."""
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "surrogateescape")
    return value if isinstance(value, str) else str(value)


def field_text(text: str) -> str | bytes:
    """Inner text as a field value: the ``str`` when it is valid UTF-8, else its bytes."""
    if text.isascii():  # the common case, and the cheapest test Python has
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # Surrogates outside U+DC80..U+DCFF stand for no byte: keep their UTF-8-like form.
        return text.encode("utf-8", "surrogatepass")


def byte_length(text: str) -> int:
    """The number of bytes ``text`` stands for."""
    if text.isascii():
        return len(text)
    value = field_text(text)
    return len(value) if isinstance(value, bytes) else len(value.encode("utf-8"))


def ascii_lower(text: str) -> str:
    """``text`` with ASCII letters lowered only (as the platform lowers header names)."""
    return text.lower() if text.isascii() else text.translate(_LOWER)


_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
