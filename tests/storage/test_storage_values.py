"""The value codec's edges: nesting depth, huge integers, damaged bytes, odd subclasses.

Issue 10, item 10: deep values raised RecursionError (on put, or later on get), and an
integer of more than 4,300 digits raised Python's own ValueError. Every failure of the codec
is now the storage's DataCloneError, and what put accepts, get returns.
"""

from __future__ import annotations

import pytest
from storage_helpers import call

from workbench.storage import DataCloneError, StorageLimitError
from workbench.storage.value_codec import MAX_DEPTH, decode, encode


def nested(depth, make=lambda inner: [inner]):
    value = None
    for _ in range(depth):
        value = make(value)
    return value


@pytest.mark.parametrize(
    "make, levels, innermost",
    [
        (lambda v: [v], 1, "list"),
        (lambda v: {"k": v}, 1, "dict"),
        (lambda v: (v,), 1, "tuple"),
        (lambda v: {1: [v]}, 2, "list"),
    ],
    ids=["list", "dict", "tuple", "dict of lists"],
)
def test_values_nested_to_the_limit_round_trip_and_one_more_is_refused(
    rt, stub, make, levels, innermost
):
    at_limit = nested(MAX_DEPTH // levels, make)
    too_deep = [at_limit]

    async def body(ctx):
        await ctx.storage.put("ok", at_limit)
        with pytest.raises(DataCloneError) as info:
            ctx.storage.put("deep", too_deep)
        return await ctx.storage.get("ok"), await ctx.storage.list(), str(info.value)

    got, listed, message = call(rt, stub, body)
    assert got == at_limit and list(listed) == ["ok"]
    assert message == (
        f"{innermost} object nested deeper than 256 levels could not be cloned (the "
        "workbench's limit is 256 levels of lists, tuples, dicts and sets)."
    )


def test_very_deep_values_are_refused_not_a_recursion_error(rt, stub):
    deep = nested(100_000)

    async def body(ctx):
        with pytest.raises(DataCloneError, match="nested deeper than 256 levels"):
            ctx.storage.put("deep", deep)
        with pytest.raises(DataCloneError, match="nested deeper than 256 levels"):
            ctx.storage.put({"fine": 1, "deep": deep})
        return await ctx.storage.list()

    assert call(rt, stub, body) == {}


def test_huge_integers_round_trip_and_only_the_value_limit_stops_them(rt, stub):
    values = [10**5000, -(10**5000) - 1, 2**64, -(2**63) - 1, 2**1_000_000 - 1]

    async def body(ctx):
        for i, v in enumerate(values):
            await ctx.storage.put(f"n{i}", v)
        with pytest.raises(StorageLimitError, match="the limit is 131072"):
            ctx.storage.put("too big", 2**1_100_000)
        return [await ctx.storage.get(f"n{i}") for i in range(len(values))]

    assert call(rt, stub, body) == values


@pytest.mark.parametrize(
    "damaged",
    [
        b"",
        b"i\x01",
        b"l\x05\x00\x00\x00",
        b"l\x01\x00\x00\x00r\x09\x00\x00\x00",
        b"l\x01\x00\x00\x00s\xff\xff\xff\x7fabc",
        b"d\x01\x00\x00\x00l\x00\x00\x00\x00N",
        b"Q",
        b"NN",
        b"I\x05\x00\x00\x00abcde",
        b"x\x01\x00\x00\x00(\x00\x00\x00\x00",
        b"l\x01\x00\x00\x00" * 5000 + b"N",
    ],
)
def test_damaged_stored_bytes_raise_data_clone_error(damaged):
    with pytest.raises(DataCloneError, match=r"^Unable to deserialize cloned data \("):
        decode(damaged)


def test_mutable_containers_inside_keys_are_refused_at_put():
    class HashableList(list):
        def __hash__(self):
            return 1

    for bad in ({(1, HashableList([2])): "v"}, {frozenset({HashableList()})}):
        with pytest.raises(DataCloneError, match="inside a dict key or set member"):
            encode(bad)
    assert decode(encode({(1, (2, "x")): {frozenset({3})}})) == {(1, (2, "x")): {frozenset({3})}}


def test_subclasses_are_stored_through_the_built_in_methods():
    class LyingList(list):
        def __len__(self):
            return 99

        def __iter__(self):
            return iter(["not", "these"])

    class LoudDict(dict):
        def items(self):
            raise RuntimeError("not called")

    class Text(str):
        def encode(self, *args, **kw):
            return b"not this"

    value = [LyingList([1, 2]), LoudDict(a=1), Text("kept")]
    got = decode(encode(value))
    assert got == [[1, 2], {"a": 1}, "kept"]
    assert [type(x) for x in got] == [list, dict, str]


def test_errors_of_the_value_s_own_code_become_data_clone_errors():
    class Broken(Exception):
        def __str__(self):
            raise KeyError("boom")

    with pytest.raises(
        DataCloneError, match=r"^list object could not be cloned \(KeyError: 'boom'\)"
    ):
        encode([Broken()])


def test_builtin_errors_that_need_more_than_a_message_come_back_as_errors():
    err = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
    got = decode(encode(err))
    assert type(got) is Exception and str(got) == str(err)
