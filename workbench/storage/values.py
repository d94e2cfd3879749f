"""Python counterparts of structured-clone values, and their stored byte form.

``encode`` turns a value into the bytes kept in ``_cf_KV`` (their length is
what the 131,072-byte value limit measures) and ``decode`` builds a fresh copy,
so a value is copied on ``put`` and again on ``get``:

    >>> from workbench.storage.values import decode, encode
    >>> v = {"n": 1, "tags": {"a", "b"}, "raw": b"\\x00", "when": None}
    >>> decode(encode(v)) == v
    True
    >>> decode(encode([1.5, float("inf"), 2**70]))
    [1.5, inf, 1180591620717411303424]

The mapping (documented in ``docs/decisions.md``): None, bool, int (any size,
like BigInt), float (NaN, infinities, -0.0 kept), str (lone surrogates kept),
bytes, bytearray, list, tuple, dict (any cloneable keys, insertion order kept,
like Map), set and frozenset, datetime, date, compiled ``re`` patterns (RegExp)
and exceptions (message kept; a custom class becomes ``Exception``, as a custom
``name`` becomes ``"Error"``). Shared references and cycles are kept.
Subclasses of these built-ins are stored as the built-in (a class instance
loses its prototype on the platform too). Anything else is refused with
:class:`DataCloneError`.
"""

from __future__ import annotations

import builtins
import re
import struct
from datetime import date, datetime
from typing import Any

from .errors import DataCloneError

_Q = struct.Struct("<q")
_D = struct.Struct("<d")
_I = struct.Struct("<I")
_INT64 = (-(2**63), 2**63 - 1)
_BUILTIN_EXC = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
}


def encode(value: Any) -> bytes:
    """The stored form of ``value``; raises :class:`DataCloneError` if it cannot be cloned."""
    t = type(value)
    # Fast paths for the common scalar values.
    if t is str:
        b = value.encode("utf-8", "surrogatepass")
        return b"s" + _I.pack(len(b)) + b
    if t is int and _INT64[0] <= value <= _INT64[1]:
        return b"i" + _Q.pack(value)
    if t is bytes:
        return b"b" + _I.pack(len(value)) + value
    out = bytearray()
    _Encoder(out).write(value)
    return bytes(out)


class _Encoder:
    def __init__(self, out: bytearray) -> None:
        self.out = out
        self.memo: dict[int, int] = {}
        self.pending: set[int] = set()
        self.keep: list[Any] = []

    def _ref(self, value: Any) -> bool:
        idx = self.memo.get(id(value))
        if idx is None:
            if id(value) in self.pending:
                raise DataCloneError("a cycle through a tuple or frozenset could not be cloned.")
            return False
        self.out += b"r" + _I.pack(idx)
        return True

    def _register(self, value: Any) -> None:
        self.memo[id(value)] = len(self.memo)
        self.keep.append(value)

    def write(self, v: Any) -> None:  # noqa: C901 - one branch per type is the clearest shape
        out = self.out
        if v is None:
            out += b"N"
        elif v is True:
            out += b"T"
        elif v is False:
            out += b"F"
        elif isinstance(v, int):
            v = int(v)
            if _INT64[0] <= v <= _INT64[1]:
                out += b"i" + _Q.pack(v)
            else:
                self._blob(b"I", str(v).encode())
        elif isinstance(v, float):
            out += b"f" + _D.pack(v)
        elif isinstance(v, str):
            self._blob(b"s", str(v).encode("utf-8", "surrogatepass"))
        elif isinstance(v, bytes):
            self._blob(b"b", bytes(v))
        elif isinstance(v, bytearray | memoryview):
            if not self._ref(v):
                self._register(v)
                self._blob(b"B", bytes(v))
        elif isinstance(v, datetime):
            self._blob(b"D", v.isoformat().encode())
        elif isinstance(v, date):
            self._blob(b"a", v.isoformat().encode())
        elif isinstance(v, re.Pattern):
            if not isinstance(v.pattern, str):
                raise DataCloneError(f"{describe(v)} could not be cloned (bytes pattern).")
            self._blob(b"x", v.pattern.encode("utf-8", "surrogatepass"))
            out += _I.pack(int(v.flags))
        elif isinstance(v, list | dict | set):
            if self._ref(v):
                return
            self._register(v)
            tag = b"l" if isinstance(v, list) else b"d" if isinstance(v, dict) else b"S"
            out += tag + _I.pack(len(v))
            if isinstance(v, dict):
                for k, item in v.items():
                    self.write(k)
                    self.write(item)
            else:
                for item in v:
                    self.write(item)
        elif isinstance(v, tuple | frozenset):
            if self._ref(v):
                return
            self.pending.add(id(v))
            out += (b"t" if isinstance(v, tuple) else b"Z") + _I.pack(len(v))
            for item in v:
                self.write(item)
            self.pending.discard(id(v))
            self._register(v)
        elif isinstance(v, BaseException):
            name = type(v).__name__ if _BUILTIN_EXC.get(type(v).__name__) is type(v) else ""
            self._blob(b"E", name.encode())
            self._blob(b"", str(v).encode("utf-8", "surrogatepass"))
        else:
            raise DataCloneError(f"{describe(v)} could not be cloned.")

    def _blob(self, tag: bytes, data: bytes) -> None:
        self.out += tag + _I.pack(len(data)) + data


def describe(value: Any) -> str:
    """A stable description of an uncloneable value (no memory addresses)."""
    name = getattr(value, "__qualname__", None)
    if callable(value) and name:
        return f"{type(value).__name__} {name}"
    return f"{type(value).__name__} object"


def decode(data: bytes) -> Any:
    """A fresh copy of the value stored as ``data``."""
    tag = data[:1]
    if tag == b"s":
        return data[5:].decode("utf-8", "surrogatepass")
    if tag == b"i" and len(data) == 9:
        return _Q.unpack_from(data, 1)[0]
    if tag == b"b":
        return bytes(data[5:])
    value, _ = _Decoder(memoryview(data)).read(0)
    return value


class _Decoder:
    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.refs: list[Any] = []

    def _blob(self, pos: int) -> tuple[bytes, int]:
        (n,) = _I.unpack_from(self.data, pos)
        start = pos + 4
        return bytes(self.data[start : start + n]), start + n

    def read(self, pos: int) -> tuple[Any, int]:  # noqa: C901
        tag = bytes(self.data[pos : pos + 1])
        pos += 1
        if tag == b"N":
            return None, pos
        if tag == b"T":
            return True, pos
        if tag == b"F":
            return False, pos
        if tag == b"i":
            return _Q.unpack_from(self.data, pos)[0], pos + 8
        if tag == b"f":
            return _D.unpack_from(self.data, pos)[0], pos + 8
        if tag == b"r":
            (idx,) = _I.unpack_from(self.data, pos)
            return self.refs[idx], pos + 4
        if tag in (b"l", b"d", b"S", b"t", b"Z"):
            (n,) = _I.unpack_from(self.data, pos)
            pos += 4
            if tag in (b"t", b"Z"):
                items = []
                for _ in range(n):
                    item, pos = self.read(pos)
                    items.append(item)
                frozen = tuple(items) if tag == b"t" else frozenset(items)
                self.refs.append(frozen)
                return frozen, pos
            container: Any = [] if tag == b"l" else {} if tag == b"d" else set()
            self.refs.append(container)
            for _ in range(n):
                if tag == b"d":
                    k, pos = self.read(pos)
                    container[k], pos = self.read(pos)
                else:
                    item, pos = self.read(pos)
                    container.append(item) if tag == b"l" else container.add(item)
            return container, pos
        raw, pos = self._blob(pos)
        if tag == b"I":
            return int(raw.decode()), pos
        if tag == b"s":
            return raw.decode("utf-8", "surrogatepass"), pos
        if tag == b"b":
            return raw, pos
        if tag == b"B":
            value = bytearray(raw)
            self.refs.append(value)
            return value, pos
        if tag == b"D":
            return datetime.fromisoformat(raw.decode()), pos
        if tag == b"a":
            return date.fromisoformat(raw.decode()), pos
        if tag == b"x":
            (flags,) = _I.unpack_from(self.data, pos)
            return re.compile(raw.decode("utf-8", "surrogatepass"), flags), pos + 4
        if tag == b"E":
            message, pos = self._blob(pos)
            cls = _BUILTIN_EXC.get(raw.decode(), Exception) if raw else Exception
            return cls(message.decode("utf-8", "surrogatepass")), pos
        raise ValueError(f"corrupt stored value (tag {tag!r})")
