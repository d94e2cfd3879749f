"""Runtime values: the missing value, byte views of strings, and IP parsing.

String fields may be given as ``str`` or ``bytes``; the engine works on bytes,
so functions that count or slice convert with :func:`to_bytes`. Comparisons
stay on ``str`` where that gives the same answer (UTF-8 preserves order and
substring structure), which keeps the common path fast.

A ``str`` value holding a lone surrogate (``"\\ud800"``, from a bad decode) is
not refused: the engine sees bytes, and such a value stands for the bytes its
surrogatepass encoding gives (``ED A0 80``), which is what a client sending
that CESU-8/WTF-8 sequence puts on the wire. It matches as those bytes do and
never raises. (Expression text is different: it must be UTF-8, see the parser.)

    >>> to_bytes("é"), from_bytes(b"\\xc3\\xa9"), from_bytes(b"\\xff")
    (b'\\xc3\\xa9', 'é', b'\\xff')
    >>> parse_ip("192.0.2.1") == parse_ip(b"192.0.2.1")
    True
    >>> to_bytes("a\\ud800")
    b'a\\xed\\xa0\\x80'
"""

from __future__ import annotations

import ipaddress
from typing import Any


class _Missing:
    """The missing value: an absent map key, an index out of range, a failed lookup."""

    _instance = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

_IP_CACHE: dict[Any, Any] = {}
# Longer than any address text (a full IPv6 form with an embedded IPv4 and a short zone).
_IP_TEXT_MAX = 64


def to_bytes(value: str | bytes | bytearray) -> bytes:
    """The UTF-8 bytes of a string value."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray):
        return bytes(value)
    return value.encode("utf-8", "surrogatepass")


def from_bytes(data: bytes) -> str | bytes:
    """A ``str`` when ``data`` is UTF-8, else the bytes themselves."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


def parse_ip(value: Any) -> Any:
    """An ``ipaddress`` object for a field value, or MISSING when it is not an address."""
    if isinstance(value, ipaddress.IPv4Address | ipaddress.IPv6Address):
        return value
    cached = _IP_CACHE.get(value)
    if cached is not None:
        return cached
    try:
        text = value.decode() if isinstance(value, bytes) else value
        result = ipaddress.ip_address(text)
    except (ValueError, TypeError, UnicodeDecodeError):
        result = MISSING
    if isinstance(value, str | bytes) and len(value) > _IP_TEXT_MAX:
        return result  # not worth keeping: the cache must not hold arbitrarily large values
    if len(_IP_CACHE) > 100_000:
        _IP_CACHE.clear()
    _IP_CACHE[value] = result
    return result
