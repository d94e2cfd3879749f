"""Python counterparts of structured-clone values, and their stored byte form.

``encode`` turns a value into the bytes kept in ``_cf_KV`` (their length is
what the 131,072-byte value limit measures) and ``decode`` builds a fresh copy,
so a value is copied on ``put`` and again on ``get``:

    >>> from workbench.storage.value_codec import decode, encode
    >>> v = {"n": 1, "tags": {"a", "b"}, "raw": b"\\x00", "when": None}
    >>> decode(encode(v)) == v
    True
    >>> decode(encode([1.5, float("inf"), 2**70]))
    [1.5, inf, 1180591620717411303424]
    >>> encode({"n": 1})[:2]  # the pickle form, protocol 3
    b'\\x80\\x03'

The mapping (documented in ``docs/decisions.md``): None, bool, int (any size,
like BigInt), float (NaN, infinities, -0.0 kept), str, bytes, bytearray, list,
tuple, dict (any cloneable keys, insertion order kept, like Map), set and
frozenset, datetime, date, compiled ``re`` patterns (RegExp) and exceptions
(message kept; a custom class becomes ``Exception``, as a custom ``name``
becomes ``"Error"``). Shared references and cycles are kept. Subclasses of
these built-ins are stored as the built-in, read through the built-in's own
methods. Anything else is refused with :class:`DataCloneError`.

The stored form is a pickle, the one codec here that runs at C speed, read
back by an unpickler that resolves four globals and nothing else: this module's
``_rebuild`` (datetimes, dates, patterns, errors and subclasses go through it)
and the ``set``, ``frozenset`` and ``bytearray`` constructors, so stored bytes
can never import or call anything else. It is protocol 3, whose memo slots are
numbered in the stream, so :func:`decode_pairs` reads a whole ``list()`` with
one unpickler (building one per value costs as much as a small value's load):

    >>> decode(b"\\x80\\x05cos\\nsystem\\n.")
    Traceback (most recent call last):
    ...
    workbench.storage.errors.DataCloneError: Unable to deserialize cloned data (UnpicklingError: global 'os.system' is not allowed in a stored value).

A single str, 64-bit int or bytes value, and the rare values the pickle form
leaves to it (a subclass that could sit in a dict key, a memoryview, anything
uncloneable, whose error it words), use the first, tagged form of
:mod:`workbench.storage._value_codec_tagged`; ``decode`` reads both, so data stored
before the pickle form stays readable. A string or bytes *object* that appears
several times in one value is written once (pickle's memo), so such a value
measures smaller than on the platform, whose serialiser repeats it.

Unlike the first form, the pickle form also keeps a cycle through a tuple (the
first form refuses one, as it builds a tuple after its items). Reading never
recurses (the unpickler is a stack machine); on writing, containers may nest at
most :data:`MAX_DEPTH` (256) levels, checked level by level in C
(``gc.get_referents``) rather than by a Python walk, so every failure is a
:class:`DataCloneError` and never a RecursionError:

    >>> deep = []
    >>> for _ in range(300):
    ...     deep = [deep]
    >>> encode(deep)
    Traceback (most recent call last):
    ...
    workbench.storage.errors.DataCloneError: list object nested deeper than 256 levels could not be cloned (the workbench's limit is 256 levels of lists, tuples, dicts and sets).
"""

from __future__ import annotations

import builtins
import pickle
import re
from collections.abc import Sequence
from datetime import date, datetime
from gc import get_referents
from itertools import chain, compress
from types import SimpleNamespace
from typing import Any

from . import _value_codec_tagged as tagged
from ._value_codec_tagged import MAX_DEPTH, describe
from .errors import DataCloneError

__all__ = ["MAX_DEPTH", "decode", "decode_pairs", "describe", "encode"]

_PROTO = b"\x80"  # the first byte of every pickle; no tag of the first form uses it
# Protocol 3: memo slots are numbered in the stream (BINPUT), not counted by the reader
# (MEMOIZE, protocol 4 on), so one unpickler can read many values in a row.
_PROTOCOL = 3
_INT64 = (-(2**63), 2**63 - 1)
_BUILTIN_EXC = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
}
_CONTAINERS = frozenset({list, dict, tuple, set, frozenset})
_is_container = _CONTAINERS.__contains__
_NESTED = (list, dict, tuple, set, frozenset)  # isinstance is quicker with a tuple than a union
_MUTABLE = (list, dict, set, bytearray)
# Each nesting level takes at least two bytes of pickle, so a short one is shallow.
_SHALLOW_BYTES = 2 * MAX_DEPTH
_KEEP_BYTES = 16_384
_REBUILT, _REBUILT_CONTAINER = 1, 2


class _Fallback(Exception):
    """A value the pickle form leaves to the first form's writer."""


def _rebuild(tag: str, *args: Any) -> Any:
    """The codec's own global in stored values: builds what pickle has no opcode for."""
    if tag == "=":
        return args[0]
    if tag == "l":
        return []
    if tag == "d":
        return {}
    if tag == "S":
        return set(args[0])
    if tag == "Z":
        return frozenset(args[0])
    if tag == "B":
        return bytearray(args[0])
    if tag == "D":
        return datetime.fromisoformat(args[0])
    if tag == "a":
        return date.fromisoformat(args[0])
    if tag == "x":
        return re.compile(args[0], args[1])
    if tag == "E":
        cls = _BUILTIN_EXC.get(args[0], Exception) if args[0] else Exception
        try:
            return cls(args[1])
        except TypeError:  # UnicodeDecodeError and the like take more than a message
            return Exception(args[1])
    raise ValueError(f"unknown rebuild tag {tag!r}")


class _Dumper(pickle.Pickler):
    """A reusable pickler (each call takes an idle one) whose hook sees every non-built-in."""

    __slots__ = ("chunks", "flags")

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        # The pickler writes whole chunks (usually one); a list keeps them without copying.
        super().__init__(SimpleNamespace(write=self.chunks.append), _PROTOCOL)
        # _REBUILT: the hook rebuilt a value (only exact containers are walked for depth);
        # _REBUILT_CONTAINER: a subclass container (the depth is checked exactly).
        self.flags = 0

    def reducer_override(self, v: Any) -> Any:  # noqa: C901 - one branch per type
        # Only objects that are not exact built-ins arrive here: pickle writes those itself.
        if v is _rebuild or v is set or v is frozenset or v is bytearray:
            return NotImplemented  # the globals a stored value may name, saved as such
        self.flags |= _REBUILT
        if isinstance(v, datetime):
            return _rebuild, ("D", datetime.isoformat(v))
        if isinstance(v, date):
            return _rebuild, ("a", date.isoformat(v))
        if isinstance(v, re.Pattern):
            if not isinstance(v.pattern, str):
                raise _Fallback
            return _rebuild, ("x", v.pattern, int(v.flags))
        if isinstance(v, BaseException):
            name = type(v).__name__ if _BUILTIN_EXC.get(type(v).__name__) is type(v) else ""
            return _rebuild, ("E", name, str(v))
        if isinstance(v, _MUTABLE) and type(v).__hash__ is not None:
            raise _Fallback  # it could be a dict key, where it would come back unhashable
        if isinstance(v, _NESTED):
            self.flags |= _REBUILT_CONTAINER
            # Snapshots through the built-in's methods, whatever the subclass overrides; list
            # and dict items come after the (memoized) empty container, so cycles survive.
            if isinstance(v, dict):
                return _rebuild, ("d",), None, None, iter(tuple(dict.items(v)))
            if isinstance(v, list):
                return _rebuild, ("l",), None, iter(tuple(list.__iter__(v)))
            if isinstance(v, set):
                return _rebuild, ("S", tuple(set.__iter__(v)))
            if isinstance(v, frozenset):
                return _rebuild, ("Z", tuple(frozenset.__iter__(v)))
            return _rebuild, ("=", tuple.__getitem__(v, slice(None)))
        if isinstance(v, str):
            return _rebuild, ("=", str.__str__(v))
        if isinstance(v, int):
            return _rebuild, ("=", int.__index__(v))
        if isinstance(v, float):
            return _rebuild, ("=", float.__float__(v))
        if isinstance(v, bytes):
            return _rebuild, ("=", bytes.__getitem__(v, slice(None)))
        if isinstance(v, bytearray):
            return _rebuild, ("B", bytes(v))
        raise _Fallback  # memoryview, and everything that cannot be cloned


# Idle picklers. A caller takes one (list.pop and append are atomic), so two threads, or
# a value's own code that calls encode again, never share one.
_IDLE: list[_Dumper] = []


def _dump(value: Any) -> tuple[bytes, int]:
    """The pickle of ``value`` and the hook's flags."""
    try:
        dumper = _IDLE.pop()
    except IndexError:  # none idle (a check first could race with another thread)
        dumper = _Dumper()
    dumper.flags = 0
    chunks = dumper.chunks
    try:
        dumper.dump(value)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        dumper.clear_memo()  # let go of the value's objects
        chunks.clear()
    # Not kept after a big value: clearing its grown memo would cost every later value.
    if len(data) <= _KEEP_BYTES and len(_IDLE) < 4:
        _IDLE.append(dumper)
    return data, dumper.flags


def encode(value: Any) -> bytes:
    """The stored form of ``value``; raises :class:`DataCloneError` if it cannot be cloned."""
    t = type(value)
    # One str, int or bytes keeps the first form: exact sizes the value limit is pinned on.
    if t is str:
        b = value.encode("utf-8", "surrogatepass")
        return b"s" + len(b).to_bytes(4, "little") + b
    if t is int and _INT64[0] <= value <= _INT64[1]:
        return b"i" + value.to_bytes(8, "little", signed=True)
    if t is bytes:
        return b"b" + len(value).to_bytes(4, "little") + value
    try:
        data, flags = _dump(value)
    except MemoryError:
        raise
    except RecursionError:
        check_depth(value)  # refuses what is too deep; otherwise the call stack was deep
        return tagged.encode(value)
    except Exception:  # _Fallback, or the value's own code failed: the first form words it
        return tagged.encode(value)
    if len(data) > _SHALLOW_BYTES and (
        flags & _REBUILT_CONTAINER or not _shallow(value, len(data), flags & _REBUILT)
    ):
        check_depth(value)
    return data


def _shallow(value: Any, size: int, filtered: int) -> bool:
    """True if no chain of containers in ``value`` is deeper than MAX_DEPTH (False: unsure).

    Walks level by level, each level one ``gc.get_referents`` call: the items of every
    container in C, with str keys skipped (they cannot nest). Without hook-rebuilt values
    the value holds only built-ins, whose only referents are their items; otherwise each
    level keeps only exact containers, so an error's traceback is never entered. ``size``
    (the pickle's length) bounds the distinct objects: a longer level repeats shared ones
    and is deduplicated. A cycle runs past the limit, where :func:`check_depth` decides.
    """
    level = [value]
    for _ in range(MAX_DEPTH):
        level = get_referents(*level)
        if filtered:
            level = list(compress(level, map(_is_container, map(type, level))))
        if not level:
            return True
        if len(level) > size:
            level = list(dict(zip(map(id, level), level, strict=True)).values())
    return False


def check_depth(value: Any) -> None:
    """Raise :class:`DataCloneError` if containers in ``value`` nest deeper than MAX_DEPTH.

    Depth-first in stored order, without recursion; a container met again is not
    entered again, so cycles and shared references end the walk.
    """
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if not isinstance(v, _NESTED) or id(v) in seen:
            continue
        if depth > MAX_DEPTH:
            raise DataCloneError(
                f"{describe(v)} nested deeper than {MAX_DEPTH} levels could not be cloned "
                f"(the workbench's limit is {MAX_DEPTH} levels of lists, tuples, dicts and sets)."
            )
        seen.add(id(v))
        if isinstance(v, dict):
            items: Any = chain.from_iterable(dict.items(v))
        elif isinstance(v, list):
            items = list.__iter__(v)
        elif isinstance(v, tuple):
            items = tuple.__iter__(v)
        elif isinstance(v, set):
            items = set.__iter__(v)
        else:
            items = frozenset.__iter__(v)
        children = [(x, depth + 1) for x in items if isinstance(x, _NESTED)]
        children.reverse()
        stack += children


class _Once:
    """The unpickler's file: every byte at the first read, so it never reads again."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, n: int = -1) -> bytes:
        data, self.data = self.data, b""
        return data

    def readline(self) -> bytes:
        return self.read()


_GLOBALS = {
    (__name__, "_rebuild"): _rebuild,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
}


class _Loader(pickle.Unpickler):
    __slots__ = ()

    def find_class(self, module: str, name: str) -> Any:
        found = _GLOBALS.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(
                f"global '{module}.{name}' is not allowed in a stored value"
            )
        return found


def _unreadable(exc: Exception) -> DataCloneError:
    return DataCloneError(f"Unable to deserialize cloned data ({type(exc).__name__}: {exc}).")


def decode(data: bytes) -> Any:
    """A fresh copy of the value stored as ``data``; unreadable bytes raise DataCloneError."""
    tag = data[:1]
    if tag != _PROTO:
        # The common first-form values inline: one str, bytes or 64-bit int.
        if tag == b"s":
            try:
                return data[5:].decode("utf-8", "surrogatepass")
            except UnicodeDecodeError:
                pass  # the first form's decoder words the error
        elif tag == b"b":
            return data[5:]
        elif tag == b"i" and len(data) == 9:
            return int.from_bytes(data[1:], "little", signed=True)
        return tagged.decode(data)
    try:
        return _Loader(_Once(data)).load()
    except MemoryError:
        raise
    except Exception as exc:  # UnpicklingError, EOFError, TypeError... of damaged bytes
        raise _unreadable(exc) from exc


_from_bytes = int.from_bytes
# Read after a batch of values: finding it proves every value ended where it should.
_END_VALUE = "\x00end of the batch\x00"
_END = pickle.dumps(_END_VALUE, _PROTOCOL)


def decode_pairs(rows: Sequence[tuple[bytes, bytes]]) -> dict[str, Any]:
    """``{key: value}`` for stored ``(UTF-8 key, value)`` rows, as ``list()`` returns them.

    The same as :func:`decode` per value, but the pickled values are read by one unpickler
    in a row (its construction is most of what a small value costs), and a one-str value
    is read inline: this is the loop a ``list()`` of many small values spends its time in.

        >>> decode_pairs([(b"a", encode("x")), (b"b", encode([1])), (b"c", encode({2}))])
        {'a': 'x', 'b': [1], 'c': {2}}
    """
    out: dict[str, Any] = {}
    pickled: list[tuple[str, bytes]] = []  # read together below, into their places
    for key, data in rows:
        text = key.decode("utf-8", "replace")  # as the platform lists a WTF-8 key
        tag = data[:1]
        if tag == b"s":
            try:
                out[text] = data[5:].decode("utf-8", "surrogatepass")
                continue
            except UnicodeDecodeError:
                pass  # decode() words the error
        elif tag == _PROTO:
            out[text] = None  # the place, in key order
            pickled.append((text, data))
            continue
        elif tag == b"i" and len(data) == 9:
            out[text] = _from_bytes(data[1:], "little", signed=True)
            continue
        out[text] = decode(data)
    if len(pickled) > 1:
        loader = _Loader(_Once(b"".join([data for _, data in pickled] + [_END])))
        try:
            values = [loader.load() for _ in pickled]
            if loader.load() == _END_VALUE:
                out.update(zip([text for text, _ in pickled], values, strict=True))
                return out
        except MemoryError:
            raise
        except Exception:  # a damaged value: read one by one below, to name it
            pass
    for text, data in pickled:
        out[text] = decode(data)
    return out
