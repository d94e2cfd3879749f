"""Property tests: list() against a plain model, and values surviving a round trip."""

from __future__ import annotations

import asyncio
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_helpers import Probe

from workbench.storage import Runtime
from workbench.storage.value_codec import decode, encode

KEYS = st.text(
    alphabet=st.sampled_from(["a", "b", "é", "\x00", "\U0001f600", "\ue000"]), max_size=3
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    keys=st.lists(KEYS, max_size=12),
    deleted=st.lists(KEYS, max_size=4),
    start=st.none() | KEYS,
    end=st.none() | KEYS,
    prefix=st.none() | KEYS,
    after=st.booleans(),
    reverse=st.booleans(),
    limit=st.none() | st.integers(min_value=1, max_value=5),
    backend=st.sampled_from(["sqlite", "kv"]),
)
def test_list_matches_a_sorted_dict_model(
    keys, deleted, start, end, prefix, after, reverse, limit, backend
):
    rt = Runtime()
    ns = rt.namespace(Probe, storage=backend)
    stub = ns.get(ns.id_from_name("model"))
    opts = {"reverse": reverse}
    if start is not None:
        opts["startAfter" if after else "start"] = start
    if end is not None:
        opts["end"] = end
    if prefix is not None:
        opts["prefix"] = prefix
    if limit is not None:
        opts["limit"] = limit

    async def body(ctx):
        for i, k in enumerate(keys):
            ctx.storage.put(k, i)
        ctx.storage.delete(deleted)
        return await ctx.storage.list(opts)

    got = asyncio.run(stub.fetch(body))

    model = {}
    for i, k in enumerate(keys):
        model[k] = i
    for k in deleted:
        model.pop(k, None)
    b = str.encode
    picked = [
        k
        for k in sorted(model, key=b)
        if (start is None or (b(k) > b(start) if after else b(k) >= b(start)))
        and (end is None or b(k) < b(end))
        and (prefix is None or k.startswith(prefix))
    ]
    if reverse:
        picked.reverse()
    if limit is not None:
        picked = picked[:limit]
    assert list(got.items()) == [(k, model[k]) for k in picked]


VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(max_size=20)
    | st.datetimes(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=4)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers() | st.text(max_size=3), max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_values_round_trip_with_types(value):
    got = decode(encode(value))
    assert got == value
    assert type(got) is type(value)


@given(st.floats())
def test_floats_round_trip_bit_for_bit(x):
    got = decode(encode(x))
    assert (math.isnan(got) and math.isnan(x)) or (
        got == x and math.copysign(1, got) == math.copysign(1, x)
    )
