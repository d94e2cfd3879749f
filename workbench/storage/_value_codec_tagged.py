"""The first stored form of values: a small tagged binary format, still read and written.

Values stored before the pickle-based form (:mod:`workbench.storage.value_codec`) are in
this form, so :func:`decode` keeps them readable. :func:`encode` is still the writer
for single strings, 64-bit ints and bytes (whose exact sizes the value limit tests
pin), and the fallback for the rare values the fast form leaves to it: subclasses that
could sit inside a dict key, memoryviews, and values that cannot be cloned at all,
whose error message is written here:

    >>> from workbench.storage._value_codec_tagged import decode, encode
    >>> encode("v")
    b's\\x01\\x00\\x00\\x00v'
    >>> decode(encode({"n": 1, "tags": {"a"}, "raw": b"\\x00"}))
    {'n': 1, 'tags': {'a'}, 'raw': b'\\x00'}
    >>> decode(encode(-(10**5000))) == -(10**5000)
    True

The rules (documented in ``docs/decisions.md``) are those of
:mod:`workbench.storage.value_codec`. Subclasses of the built-ins are written as the
built-in, read through the built-in's own methods, so an overridden ``__iter__`` or
``__len__`` cannot make the stored form disagree with itself. Limits, so that every
failure is a :class:`DataCloneError` and never a Python error of the codec itself:

* containers may nest at most :data:`MAX_DEPTH` (256) levels:

    >>> deep = []
    >>> for _ in range(300):
    ...     deep = [deep]
    >>> encode(deep)
    Traceback (most recent call last):
    ...
    workbench.storage.errors.DataCloneError: list object nested deeper than 256 levels could not be cloned (the workbench's limit is 256 levels of lists, tuples, dicts and sets).

* a dict key or set member must come back hashable, so a mutable container
  (list, dict, set, bytearray, memoryview) inside one is refused at ``put``;
* a cycle through a tuple or frozenset is refused (this form builds them after their
  items);
* stored bytes that cannot be read back raise
  ``DataCloneError("Unable to deserialize cloned data ...")``, as V8 does.
"""

from __future__ import annotations

import builtins
import re
import struct
from datetime import date, datetime
from typing import Any

from .errors import DataCloneError

MAX_DEPTH = 256
_Q = struct.Struct("<q")
_D = struct.Struct("<d")
_I = struct.Struct("<I")
_INT64 = (-(2**63), 2**63 - 1)
_BUILTIN_EXC = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
}
# Keys that need no check for hashability after a round trip (the common case).
_PLAIN_KEYS = {str, int, float, bool, bytes, type(None)}


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
    try:
        _Encoder(out).write(value)
    except (DataCloneError, MemoryError):
        raise
    except RecursionError as exc:  # a deep value met an already deep call stack
        raise DataCloneError(
            f"{describe(value)} is nested too deeply for the call stack and could not be cloned."
        ) from exc
    except Exception as exc:  # the value's own code (a __str__, a tzinfo) failed
        raise DataCloneError(
            f"{describe(value)} could not be cloned ({type(exc).__name__}: {exc})."
        ) from exc
    return bytes(out)


class _Encoder:
    def __init__(self, out: bytearray) -> None:
        self.out = out
        self.memo: dict[int, int] = {}
        self.pending: set[int] = set()
        self.keep: list[Any] = []
        self.depth = 0  # containers open around the value being written (MAX_DEPTH at most)
        self.in_key = 0  # > 0 while writing a dict key or a set member

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

    def _too_deep(self, v: Any) -> None:
        raise DataCloneError(
            f"{describe(v)} nested deeper than {MAX_DEPTH} levels could not be cloned "
            f"(the workbench's limit is {MAX_DEPTH} levels of lists, tuples, dicts and sets)."
        )

    def _unhashable(self, v: Any) -> None:
        raise DataCloneError(
            f"{describe(v)} inside a dict key or set member could not be cloned: it would "
            "come back as an unhashable built-in."
        )

    def _key(self, k: Any) -> None:
        """Write a dict key or a set member, which must come back hashable."""
        if type(k) in _PLAIN_KEYS:
            self.write(k)
            return
        self.in_key += 1
        self.write(k)
        self.in_key -= 1

    def _int(self, v: int) -> None:
        if _INT64[0] <= v <= _INT64[1]:
            self.out += b"i" + _Q.pack(v)
        else:
            # Two's-complement bytes: no 4,300-digit str limit, and about the size V8 uses.
            self._blob(b"J", v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True))

    def write(self, v: Any) -> None:  # noqa: C901 - one branch per type is the clearest shape
        out = self.out
        t = type(v)
        # The exact built-ins first: the common case, and cheaper than the isinstance chain.
        if t is str:
            b = v.encode("utf-8", "surrogatepass")
            out += b"s" + _I.pack(len(b)) + b
        elif t is int:
            if _INT64[0] <= v <= _INT64[1]:
                out += b"i" + _Q.pack(v)
            else:
                self._int(v)
        elif t is float:
            out += b"f" + _D.pack(v)
        elif v is None:
            out += b"N"
        elif v is True:
            out += b"T"
        elif v is False:
            out += b"F"
        elif isinstance(v, list | dict | set):
            if self.in_key:
                self._unhashable(v)
            if self._ref(v):
                return
            self._register(v)
            # Depth is counted here, in the walk that happens anyway (one add a container);
            # the decoder recurses exactly as deep, so it needs no check of its own.
            self.depth += 1
            if self.depth > MAX_DEPTH:
                self._too_deep(v)
            write = self.write
            # A snapshot through the built-in's own methods: the count written first always
            # matches the items written after it, whatever a subclass overrides.
            if isinstance(v, dict):
                pairs = tuple(dict.items(v))
                out += b"d" + _I.pack(len(pairs))
                for k, item in pairs:
                    if type(k) in _PLAIN_KEYS:
                        write(k)
                    else:
                        self._key(k)
                    write(item)
            elif isinstance(v, list):
                items = tuple(list.__iter__(v))
                out += b"l" + _I.pack(len(items))
                for item in items:
                    write(item)
            else:
                members = tuple(set.__iter__(v))
                out += b"S" + _I.pack(len(members))
                for item in members:
                    self._key(item)
            self.depth -= 1
        elif isinstance(v, tuple | frozenset):
            if self._ref(v):
                return
            self.pending.add(id(v))
            self.depth += 1
            if self.depth > MAX_DEPTH:
                self._too_deep(v)
            if isinstance(v, tuple):
                items = tuple.__getitem__(v, slice(None))
                out += b"t" + _I.pack(len(items))
                for item in items:
                    self.write(item)
            else:
                members = tuple(frozenset.__iter__(v))
                out += b"Z" + _I.pack(len(members))
                for item in members:
                    self._key(item)
            self.depth -= 1
            self.pending.discard(id(v))
            self._register(v)
        elif isinstance(v, int):
            self._int(int.__index__(v))  # the built-in value: no subclass code runs
        elif isinstance(v, float):
            out += b"f" + _D.pack(v)
        elif isinstance(v, str):
            self._blob(b"s", str.encode(v, "utf-8", "surrogatepass"))
        elif isinstance(v, bytes):
            self._blob(b"b", bytes.__getitem__(v, slice(None)))
        elif isinstance(v, bytearray | memoryview):
            if self.in_key:
                self._unhashable(v)
            if not self._ref(v):
                self._register(v)
                self._blob(b"B", bytes(v))
        elif isinstance(v, datetime):
            self._blob(b"D", datetime.isoformat(v).encode())
        elif isinstance(v, date):
            self._blob(b"a", date.isoformat(v).encode())
        elif isinstance(v, re.Pattern):
            if not isinstance(v.pattern, str):
                raise DataCloneError(f"{describe(v)} could not be cloned (bytes pattern).")
            self._blob(b"x", v.pattern.encode("utf-8", "surrogatepass"))
            out += _I.pack(int(v.flags))
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
    """A fresh copy of the value stored as ``data``; unreadable bytes raise DataCloneError."""
    try:
        tag = data[:1]
        if tag == b"s":
            return data[5:].decode("utf-8", "surrogatepass")
        if tag == b"i" and len(data) == 9:
            return _Q.unpack_from(data, 1)[0]
        if tag == b"b":
            return bytes(data[5:])
        value, end = _Decoder(memoryview(data)).read(0)
        if end != len(data):
            raise ValueError(f"the value ends at byte {end} of {len(data)}")
    except (DataCloneError, MemoryError):
        raise
    except Exception as exc:  # struct.error, IndexError, RecursionError... of damaged bytes
        raise DataCloneError(
            f"Unable to deserialize cloned data ({type(exc).__name__}: {exc})."
        ) from exc
    return value


class _Decoder:
    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.refs: list[Any] = []

    def _blob(self, pos: int) -> tuple[bytes, int]:
        (n,) = _I.unpack_from(self.data, pos)
        start = pos + 4
        # A length past the end shows as a final position past the end (checked once).
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
        if tag == b"s":
            return raw.decode("utf-8", "surrogatepass"), pos
        if tag == b"b":
            return raw, pos
        if tag == b"J":
            return int.from_bytes(raw, "little", signed=True), pos
        if tag == b"I":  # the decimal form written before big ints were stored as bytes
            return int(raw.decode()), pos
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
            text = message.decode("utf-8", "surrogatepass")
            try:
                return cls(text), pos
            except TypeError:  # UnicodeDecodeError and the like take more than a message
                return Exception(text), pos
        raise ValueError(f"unknown tag {tag!r}")
