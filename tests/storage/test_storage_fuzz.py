"""Fuzzing the KV API: random keys, values and operations raise only storage errors.

Keys mix odd text (lone surrogates, NUL, bidi and combining marks, astral
characters, huge keys around the 2,048-byte limit); values mix every type the
codec supports (nested containers up to and past the depth limit, huge integers,
NaN and infinities, bytes, dates, sets, maps, errors, patterns). Each example runs
a few put/get/delete/list calls on one object and checks them against a plain
dict model: no exception but the storage's own, whatever ``put`` accepted ``get``
returns equal and ``list()`` lists exactly, and a refused call changes nothing.

With ``CI`` set the run is derandomized and bounded (``FUZZ_EXAMPLES``, default
150, well under a minute); a bigger run is ``FUZZ_EXAMPLES=5000 pytest -s
tests/storage/test_storage_fuzz.py``, whose figures (inputs tried, calls, storage
errors by class, non-storage exceptions, slowest input) the last test prints.
"""

from __future__ import annotations

import gc
import math
import os
import re
import time
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_helpers import Probe

from workbench.storage import Runtime, StorageError, StorageLimitError
from workbench.storage.value_codec import MAX_DEPTH

CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=CI,
    database=None if CI else settings.default.database,
    suppress_health_check=list(HealthCheck),
)
# The storage's own errors; DataCloneError is a StorageError.
STORAGE_ERRORS = (StorageError, StorageLimitError)
STATS: dict[str, Any] = {
    "inputs": 0,
    "calls": 0,
    "accepted puts": 0,
    "storage errors": {},
    "other": [],
    "slowest": (0.0, ""),
}

GC_TIME = [0.0, 0.0]  # seconds spent collecting garbage so far; when the current one began


def _gc_timer(phase: str, _info: dict[str, Any]) -> None:
    if phase == "start":
        GC_TIME[1] = time.process_time()
    else:
        GC_TIME[0] += time.process_time() - GC_TIME[1]


@pytest.fixture(scope="module", autouse=True)
def _time_garbage_collection():
    gc.callbacks.append(_gc_timer)
    yield
    gc.callbacks.remove(_gc_timer)


# -- keys ---------------------------------------------------------------------------
ODD = ["\ud800", "\udfff", "\ud83d", "\x00", "\u200f", "\u202e", "\ufeff", "\u0301", "\uffff"]
ODD += ["\U0010ffff", "\U0001f600", "\ue000", "\x7f", "\x80", "é", "\u212a", "K", "k", "_"]
KEY_CHARS = st.sampled_from(ODD) | st.characters(exclude_categories=())
HUGE_KEYS = st.builds(
    lambda ch, n: ch * n,
    st.sampled_from(["k", "é", "\U0001f600", "\ud800"]),
    st.integers(500, 2100),
)
PLAIN_CHARS = st.sampled_from(["a", "b", "é", "\x00", "\U0001f600", "\ue000", "K", "\u212a"])
PLAIN_KEYS = st.text(PLAIN_CHARS, max_size=3)  # few enough that calls meet earlier keys


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, picked in proportion to its weight."""
    pool = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(pool).flatmap(lambda strategy: strategy)


KEYS = weighted((8, PLAIN_KEYS), (2, st.text(KEY_CHARS, max_size=12)), (1, HUGE_KEYS))

# -- values -------------------------------------------------------------------------
ZONES = st.sampled_from(
    [None, UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
)
BIG_INTS = st.builds(
    lambda sign, digits, extra: sign * (10**digits + extra),
    st.sampled_from([1, -1]),
    st.integers(18, 6000),
    st.integers(0, 2**64),
)
HASHABLE_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | BIG_INTS
    | st.floats(allow_nan=False)
    | st.text(KEY_CHARS, max_size=8)
    | st.binary(max_size=8)
    | st.dates()
    | st.datetimes(timezones=ZONES)
)
HASHABLE = st.recursive(HASHABLE_LEAVES, lambda inner: st.tuples(inner, inner), max_leaves=4)
LEAVES = (
    HASHABLE_LEAVES
    | st.floats()  # NaN and infinities too
    | st.builds(bytearray, st.binary(max_size=8))
    | st.sampled_from([re.compile("a+b", re.I), re.compile(r"\d{2,}", re.M | re.S)])
    | st.builds(ValueError, st.text(KEY_CHARS, max_size=8))
)


class Deep:
    """A value nested ``depth`` levels, built only when used: Hypothesis prints its inputs
    when a test fails, and cannot print a value thousands of levels deep."""

    def __init__(self, depth: int, kind: int) -> None:
        self.depth, self.kind = depth, kind

    def __repr__(self) -> str:
        return f"Deep({self.depth}, {self.kind})"

    def build(self) -> Any:
        value: Any = "leaf"
        for i in range(self.depth):
            shape = (self.kind + i) % 3
            value = [value] if shape == 0 else {"k": value} if shape == 1 else (value,)
        return value


def built(value: Any) -> Any:
    return value.build() if isinstance(value, Deep) else value


def short(value: Any, depth: int = 0) -> str:
    """A short description of a generated value (repr fails on ints over 4,300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"<int of {value.bit_length()} bits>"
    if isinstance(value, str | bytes) and len(value) > 24:
        return f"{value[:12]!r}...<{len(value)}>"
    if isinstance(value, list | tuple | set | frozenset | dict):
        if depth > 2:
            return f"<{type(value).__name__} of {len(value)}>"
        if isinstance(value, dict):
            parts = [f"{short(k, depth + 1)}: {short(v, depth + 1)}" for k, v in value.items()]
        else:
            parts = [short(x, depth + 1) for x in value]
        more = ", ..." if len(parts) > 4 else ""
        return f"{type(value).__name__}[{', '.join(parts[:4])}{more}]"
    return repr(value)


DEEP = st.builds(
    Deep,
    st.integers(MAX_DEPTH - 3, MAX_DEPTH + 3) | st.integers(2000, 20_000),
    st.integers(0, 2),
)
NESTED = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(HASHABLE, inner, max_size=4)
        | st.sets(HASHABLE, max_size=4)
        | st.frozensets(HASHABLE, max_size=4)
        | st.tuples(inner, inner)
    ),
    max_leaves=16,
)
AROUND_THE_LIMIT = st.builds(lambda n: "x" * n, st.integers(131_060, 131_080))
VALUES = weighted((12, NESTED), (1, DEEP), (1, AROUND_THE_LIMIT))

# -- operations ---------------------------------------------------------------------
LIST_OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "start": KEYS,
        "end": KEYS,
        "prefix": st.text(KEY_CHARS, max_size=2),
        "reverse": st.booleans(),
        "limit": st.integers(1, 5),
    },
)
OPS = st.lists(
    weighted(
        (4, st.tuples(st.just("put"), KEYS, VALUES)),
        (2, st.tuples(st.just("put entries"), st.dictionaries(KEYS, VALUES, max_size=3))),
        (2, st.tuples(st.just("get"), KEYS)),
        (1, st.tuples(st.just("get many"), st.lists(KEYS, max_size=4))),
        (1, st.tuples(st.just("delete"), KEYS)),
        (1, st.tuples(st.just("delete many"), st.lists(KEYS, max_size=4))),
        (2, st.tuples(st.just("list"), LIST_OPTIONS)),
    ),
    min_size=1,
    max_size=10,
)


def same(a: Any, b: Any) -> bool:
    """Equal as stored values: same types all the way down, NaN equal to NaN, -0.0 kept."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return len(a) == len(b) and all(
            same(ka, kb) and same(va, vb)
            for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
        )
    if isinstance(a, re.Pattern):
        return (a.pattern, a.flags) == (b.pattern, b.flags)
    if isinstance(a, BaseException):
        return str(a) == str(b)
    if isinstance(a, datetime):
        return a == b and a.utcoffset() == b.utcoffset()
    return bool(a == b)


def stored(key: str) -> bytes:
    """A key as the platform stores it: its UTF-16 units as WTF-8 (a pair is one character)."""
    units = key.encode("utf-16-le", "surrogatepass")
    return units.decode("utf-16-le", "surrogatepass").encode("utf-8", "surrogatepass")


def shown(data: bytes) -> str:
    """A stored key as list() shows it: read leniently, a byte that is not UTF-8 as U+FFFD."""
    return data.decode("utf-8", "replace")


def as_map(model: dict[bytes, Any], keys: list[bytes]) -> list[tuple[str, Any]]:
    """What a list() or get() of these stored keys returns, in order (two keys shown alike
    are one entry, with the later value, as in a JS Map)."""
    out: dict[str, Any] = {}
    for k in keys:
        out[shown(k)] = model[k]
    return list(out.items())


def listed(model: dict[bytes, Any], opts: dict[str, Any]) -> list[bytes]:
    """The stored keys ``list(opts)`` must return, from the model."""
    keys = sorted(model)
    if "start" in opts:
        keys = [k for k in keys if k >= stored(opts["start"])]
    if "end" in opts:
        keys = [k for k in keys if k < stored(opts["end"])]
    if "prefix" in opts:
        keys = [k for k in keys if k.startswith(stored(opts["prefix"]))]
    if opts.get("reverse"):
        keys.reverse()
    return keys[: opts["limit"]] if "limit" in opts else keys


def same_map(got: dict[str, Any], model: dict[bytes, Any], keys: list[bytes]) -> bool:
    want = as_map(model, keys)
    return list(got) == [k for k, _ in want] and all(same(got[k], v) for k, v in want)


async def apply(storage: Any, op: tuple, model: dict[bytes, Any]) -> None:
    """Run one call and check it against the model (which it updates)."""
    kind = op[0]
    if kind == "put":
        value = built(op[2])
        await storage.put(op[1], value)
        model[stored(op[1])] = value
        STATS["accepted puts"] += 1
    elif kind == "put entries":
        entries = {k: built(v) for k, v in op[1].items()}
        await storage.put(entries)
        model.update((stored(k), v) for k, v in entries.items())
        STATS["accepted puts"] += len(entries)
    elif kind == "get":
        got = await storage.get(op[1])
        key = stored(op[1])
        assert same(got, model[key]) if key in model else got is None
    elif kind == "get many":
        got = await storage.get(op[1])
        assert same_map(got, model, sorted({stored(k) for k in op[1]} & set(model)))
    elif kind == "delete":
        assert await storage.delete(op[1]) is (stored(op[1]) in model)
        model.pop(stored(op[1]), None)
    elif kind == "delete many":
        keys = {stored(k) for k in op[1]}
        assert await storage.delete(op[1]) == len(keys & set(model))
        for k in keys:
            model.pop(k, None)
    else:
        got = await storage.list(op[1])
        assert same_map(got, model, listed(model, op[1]))


@FUZZ
@given(ops=OPS, backend=st.sampled_from(["sqlite", "kv"]))
def test_kv_calls_raise_only_storage_errors_and_agree_with_a_model(ops, backend):
    rt = Runtime()
    ns = rt.namespace(Probe, storage=backend)
    stub = ns.get(ns.id_from_name("fuzz"))
    model: dict[bytes, Any] = {}  # by stored key
    STATS["inputs"] += 1
    started, gc_before = time.process_time(), GC_TIME[0]

    async def run(ctx):
        for op in ops:
            STATS["calls"] += 1
            try:
                await apply(ctx.storage, op, model)  # the model changes only if the call succeeds
            except STORAGE_ERRORS as exc:
                name = type(exc).__name__
                STATS["storage errors"][name] = STATS["storage errors"].get(name, 0) + 1
                if op[0] in ("get", "delete"):  # a key put accepted can always be read
                    assert stored(op[1]) not in model, f"{op[0]} refused a stored key: {exc}"
            except AssertionError:
                raise
            except Exception as exc:
                STATS["other"].append((type(exc).__name__, str(exc)[:200], short(op)))
                raise

    async def final(ctx):
        got = await ctx.storage.list()
        assert same_map(got, model, sorted(model))
        for k in model:  # every stored key is found by the key it was put with
            if shown(k).encode() == k:
                assert same(await ctx.storage.get(shown(k)), model[k])

    try:
        rt.run(stub.fetch(run))
        rt.run(stub.fetch(final))  # after the batch committed
    finally:
        # CPU time, less garbage collection: a full collection of everything Hypothesis
        # keeps can land in any example, and would name the wrong input as the slowest.
        took = time.process_time() - started - (GC_TIME[0] - gc_before)
        if took > STATS["slowest"][0]:
            STATS["slowest"] = (took, f"{backend}: {short(ops)}")
        rt.close()


def test_fuzz_figures():
    # Runs after the fuzz test in this module (file order).
    took, what = STATS["slowest"]
    print(
        f"\nstorage fuzz: {STATS['inputs']} inputs, {STATS['calls']} calls, "
        f"{STATS['accepted puts']} values stored, storage errors: {STATS['storage errors']}, "
        f"non-storage exceptions: {len(STATS['other'])}, slowest input: {took * 1000:.1f} ms "
        "of CPU time, garbage collection excluded "
        f"({what})"
    )
    assert STATS["other"] == []
