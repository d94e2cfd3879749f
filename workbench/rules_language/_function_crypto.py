"""Hash and HMAC functions of the Rules language, on the per-request path.

``hmac``, ``uuidv4`` and ``is_timed_hmac_valid_v0`` live here, with the
argument-order rewrite that lets ``is_timed_hmac_valid_v0`` be written in the
binding's order as well as the documentation's. The whole-table translations
are in :mod:`._sql_crypto`.

    >>> _uuidv4("seed")
    '19b25856-e1c1-40ca-834c-ffc8b59b23ad'
"""

from __future__ import annotations

import base64
import hashlib
import hmac as _hmac
import uuid
from collections.abc import Callable
from typing import Any

from .function_impls import _strict
from .values import MISSING, from_bytes, to_bytes

# The algorithms hmac() knows, by the literal that names them (case does not matter).
HMAC_ALGORITHMS = ("sha256", "sha1", "sha512")
# <message><separator><10-digit timestamp>-<base64 mac>: the documented MessageMAC.
TIMESTAMP_DIGITS = 10
MAC_MIN = 43


def _uuidv4(seed: Any) -> Any:
    # Deterministic: the seed (cf.random_seed) is the randomness, as the docs describe.
    digest = hashlib.sha256(to_bytes(seed)).digest()[:16]
    return str(uuid.UUID(bytes=digest, version=4))


def _hmac_fn(v: Any, key: Any, algorithm: Any) -> Any:
    algo = to_bytes(algorithm).decode("latin-1").lower()
    if algo not in HMAC_ALGORITHMS:
        return MISSING
    return from_bytes(_hmac.new(to_bytes(key), to_bytes(v), algo).digest())


def split_message_mac(data: bytes, sep_len: int) -> tuple[bytes, bytes, bytes] | None:
    """``(message, timestamp, mac)`` of a MessageMAC, or None when it has not that shape.

    The documented shape is ``(.+)(.*)(\\d{10})-(.{43,})`` with greedy groups: the split
    is at the last dash that has ten digits before it and at least 43 bytes after it
    (a URL-safe mac may itself hold dashes).

        >>> split_message_mac(b"/a.jpg?verify=1484063787-" + b"m-" * 22, 8)
        (b'/a.jpg', b'1484063787', b'm-m-m-m-m-m-m-m-m-m-m-m-m-m-m-m-m-m-m-m-m-m-')
    """
    limit = len(data) - MAC_MIN - 1
    while limit > TIMESTAMP_DIGITS:
        pos = data.rfind(b"-", TIMESTAMP_DIGITS + 1, limit + 1)
        if pos == -1:
            return None
        timestamp = data[pos - TIMESTAMP_DIGITS : pos]
        if timestamp.isdigit():
            rest = data[: pos - TIMESTAMP_DIGITS]
            return rest[: max(len(rest) - sep_len, 0)], timestamp, data[pos + 1 :]
        limit = pos - 1
    return None


def _timed_hmac_build(lits: list[Any]) -> Callable[..., Any]:
    key = to_bytes(lits[0])
    flags = to_bytes(lits[5]) if len(lits) > 5 and lits[5] is not None else b""
    url_safe = b"s" in flags

    def check(_key: Any, message_mac: Any, ttl: int, now: int, sep_len: int = 0, *_: Any) -> bool:
        parts = split_message_mac(to_bytes(message_mac), sep_len)
        if parts is None:
            return False
        message, timestamp, mac = parts
        digest = _hmac.new(key, message + timestamp, hashlib.sha256).digest()
        if url_safe:
            # Flag "s": the mac is URL-safe base64 without padding, as it stands.
            expected = base64.urlsafe_b64encode(digest).rstrip(b"=")
        else:
            # Otherwise the mac is standard base64, URL-encoded.
            expected = base64.b64encode(digest).rstrip(b"=")
            mac = mac.replace(b"%2B", b"+").replace(b"%2F", b"/").replace(b"%3D", b"=")
            mac = mac.rstrip(b"=")
        return _hmac.compare_digest(expected, mac) and 0 <= now - int(timestamp) <= ttl

    return _strict(check)


def timed_hmac_check(lits: list[Any]) -> str | None:
    """Parse-time checks of is_timed_hmac_valid_v0's literal arguments."""
    if len(lits) > 4 and isinstance(lits[4], int) and lits[4] < 0:
        return f"is_timed_hmac_valid_v0(): the separator length must not be negative, got {lits[4]}"
    if len(lits) > 2 and isinstance(lits[2], int) and lits[2] < 0:
        return f"is_timed_hmac_valid_v0(): the ttl must not be negative, got {lits[2]}"
    return None
