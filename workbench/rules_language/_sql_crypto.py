"""DuckDB translations of the hash and HMAC functions: sha256, hmac, uuidv4, is_timed_hmac_valid_v0.

DuckDB has SHA-256 and SHA-1 built in but no HMAC. Every HMAC key in the
language is a literal, so the two padded keys are constants computed here and
HMAC is two hash calls: ``H(K^opad || H(K^ipad || m))``. SHA-512, which DuckDB
lacks, is written in SQL (:mod:`._sql_sha512`).

    >>> import duckdb, hmac
    >>> sql = hmac_hex(b"key", "sha256", "encode('abc')")
    >>> duckdb.sql(f"select {sql}").fetchall()[0][0] == hmac.new(b"key", b"abc", "sha256").hexdigest()
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from ._function_crypto import HMAC_ALGORITHMS, MAC_MIN, TIMESTAMP_DIGITS
from ._sql_sha512 import sha512_hex
from .ast import Call, Literal
from .sql_fragments import bind, sql_string, view, view_bytes, view_from_hex
from .sql_value import Val

_BLOCK = 64  # the block size of SHA-1 and SHA-256


def _blob(val: Val) -> str:
    """A text-valued argument as the BLOB of its bytes."""
    return view_bytes(val.sql) if val.view else f"encode({val.sql})"


def _hash_hex(algorithm: str, blob: str) -> str:
    return sha512_hex(blob) if algorithm == "sha512" else f"{algorithm}({blob})"


def hmac_hex(key: bytes, algorithm: str, message_blob: str) -> str:
    """SQL: the lower-case hex HMAC of a BLOB under a literal key, by two hash calls."""
    block = _BLOCK * 2 if algorithm == "sha512" else _BLOCK
    if len(key) > block:
        key = hashlib.new(algorithm, key).digest()
    key = key.ljust(block, b"\x00")
    inner = bytes(b ^ 0x36 for b in key).hex()
    outer = bytes(b ^ 0x5C for b in key).hex()
    digest = _hash_hex(algorithm, f"unhex('{inner}') || {message_blob}")
    return _hash_hex(algorithm, f"unhex('{outer}') || unhex({digest})")


def _literal(node: Call, i: int) -> Any:
    arg = node.args[i] if i < len(node.args) else None
    return arg.value if isinstance(arg, Literal) else None


def crypto_sql(node: Call, args: list[Val], out: Callable[..., Val]) -> Val | None:
    """The SQL of a hash/HMAC call, or None when ``node`` is no such function."""
    name = node.name
    if name == "sha256":
        return out(view_from_hex(f"sha256({_blob(args[0])})"), is_view=True)
    if name == "sha512":
        return out(view_from_hex(sha512_hex(_blob(args[0]))), is_view=True)
    if name == "hmac":
        algorithm = bytes(_literal(node, 2) or b"").decode("latin-1").lower()
        if algorithm not in HMAC_ALGORITHMS:
            return out("NULL", may_miss=True)
        key = bytes(_literal(node, 1) or b"")
        return out(view_from_hex(hmac_hex(key, algorithm, _blob(args[0]))), is_view=True)
    if name == "uuidv4":
        return out(bind(f"sha256({_blob(args[0])})", _uuid_from_hex))
    if name == "is_timed_hmac_valid_v0":
        return out(_timed_hmac(node, args), may_miss=False)
    return None


def _uuid_from_hex(h: str) -> str:
    # Version nibble 4, variant bits 10, as uuid.UUID(bytes=.., version=4) sets them.
    variant = f"printf('%x', (('0x' || substr({h}, 17, 1))::INTEGER & 3) | 8)"
    return (
        f"(substr({h}, 1, 8) || '-' || substr({h}, 9, 4) || '-4' || substr({h}, 14, 3) || '-' "
        f"|| {variant} || substr({h}, 18, 3) || '-' || substr({h}, 21, 12))"
    )


# <message + separator><10 digits>-<at least 43 bytes>, greedy as the documented regex.
_MESSAGE_MAC = f"(?s)^(.+)([0-9]{{{TIMESTAMP_DIGITS}}})-(.{{{MAC_MIN},}})$"


def _timed_hmac(node: Call, args: list[Val]) -> str:
    key = bytes(_literal(node, 0) or b"")
    ttl = _literal(node, 2)
    sep_len = _literal(node, 4) or 0
    flags = bytes(_literal(node, 5) or b"")
    now = args[3].sql
    # Over the Latin-1 view, so that '.' and counts are bytes, as the engine reads them.
    target = args[1].sql if args[1].view else view(args[1].sql)
    pattern = sql_string(_MESSAGE_MAC)

    def check(v: str) -> str:
        head = f"regexp_extract({v}, {pattern}, 1)"
        message = f"substr({head}, 1, greatest(length({head}) - {sep_len}, 0))"
        timestamp = f"regexp_extract({v}, {pattern}, 2)"
        mac = f"regexp_extract({v}, {pattern}, 3)"
        signed = f"{view_bytes(message)} || encode({timestamp})"
        expected = f"rtrim(to_base64(unhex({hmac_hex(key, 'sha256', signed)})), '=')"
        if b"s" in flags:
            expected = f"translate({expected}, '+/', '-_')"
        else:
            mac = (
                f"rtrim(replace(replace(replace({mac}, '%2B', '+'), '%2F', '/'), '%3D', '='), '=')"
            )
        age = f"({now} - TRY_CAST({timestamp} AS BIGINT))"
        return (
            f"coalesce(regexp_full_match({v}, {pattern}) AND {expected} = {mac} "
            f"AND {age} BETWEEN 0 AND {ttl}, false)"
        )

    return bind(target, check)
