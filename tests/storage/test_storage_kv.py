"""The key-value API on both backends: every row of the seed's KV and options tables."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
from storage_helpers import Probe, call

from workbench.storage import DataCloneError, StorageLimitError, TextEncodingError


def test_get_missing_is_none_and_put_resolves_to_none(rt, stub):
    async def body(ctx):
        s = ctx.storage
        missing = await s.get("nope")
        put = await s.put("k", "v")
        return missing, put, await s.get("k")

    assert call(rt, stub, body) == (None, None, "v")


def test_empty_string_and_nul_keys(rt, stub):
    async def body(ctx):
        s = ctx.storage
        await s.put("", 0)
        await s.put("a\x00b", 1)
        await s.put("a", 2)
        return list((await s.list()).items())

    assert call(rt, stub, body) == [("", 0), ("a", 2), ("a\x00b", 1)]


def test_keys_sort_by_utf8_bytes_not_code_units(rt, stub):
    keys = [
        "\U0010ffff",
        "\U0001f600",
        "\U00010000",
        "\uffff",
        "\ufffd",
        "\ue000",
        "é",
        "\x80",
        "\x7f",
        "",
    ]

    async def body(ctx):
        await ctx.storage.put({k: 1 for k in keys})
        return list(await ctx.storage.list())

    assert call(rt, stub, body) == sorted(keys, key=lambda k: k.encode())
    assert call(rt, stub, body)[-4:] == ["\uffff", "\U00010000", "\U0001f600", "\U0010ffff"]


def test_lone_surrogate_keys_are_stored_as_wtf8_and_listed_as_replacement_characters(rt, stub):
    """[kv_lone_surrogate_keys]: put("\\ud800") then get("\\ud800") finds the value, list()
    returns the key as three U+FFFD (its WTF-8 bytes read leniently), and get("\\ufffd")
    does not find it. Keys sort by those bytes (ED A0 80: after U+D7FF, before U+E000)."""
    fffd3 = "\ufffd" * 3

    async def body(ctx):
        s = ctx.storage
        await s.put("\ud800", 1)
        await s.put({"a\udfffb": 2, "\ud7ff": 3, "\ue000": 4})
        got = [await s.get(k) for k in ("\ud800", "a\udfffb", "\ufffd", fffd3)]
        listed = await s.list()
        many = await s.get(["\ud800", "\ue000"])
        ranged = list(await s.list({"start": "\ud800", "end": "\ue000"}))
        prefixed = list(await s.list({"prefix": "a\udfff"}))
        deleted = await s.delete("\ud800"), await s.delete(["a\udfffb", "\ud800"])
        return got, listed, many, ranged, prefixed, deleted, await s.list()

    got, listed, many, ranged, prefixed, deleted, after = call(rt, stub, body)
    assert got == [1, 2, None, None]
    assert list(listed.items()) == [
        (f"a{fffd3}b", 2),
        ("\ud7ff", 3),
        (fffd3, 1),
        ("\ue000", 4),
    ]
    assert many == {fffd3: 1, "\ue000": 4}  # keys as list() shows them, sorted by bytes
    assert ranged == [fffd3] and prefixed == [f"a{fffd3}b"]
    assert deleted == (True, 1)
    assert after == {"\ud7ff": 3, "\ue000": 4}


def test_a_surrogate_pair_in_a_key_is_one_character(rt, stub):
    async def body(ctx):
        await ctx.storage.put("\ud83d\ude00", "pair")  # two UTF-16 units, as a JS string has
        return await ctx.storage.get("\U0001f600"), await ctx.storage.list()

    assert call(rt, stub, body) == ("pair", {"\U0001f600": "pair"})


def test_object_names_that_are_not_utf8_are_refused(rt):
    ns = rt.namespace(Probe, storage="kv")
    with pytest.raises(TextEncodingError, match=r"the name holds a lone surrogate \(U\+D800\)"):
        ns.id_from_name("user-\ud800")
    assert ns.id_from_name("user-\u00e9") == ns.id_from_name("user-\u00e9")


def test_sync_kv_and_transactions_store_lone_surrogate_keys_too(rt, sqlite_stub):
    async def body(ctx):
        ctx.storage.kv.put("\ud800", 1)
        sync = ctx.storage.kv.get("\ud800"), list(ctx.storage.kv.list())

        async def closure(txn):
            await txn.put("\udfff", 2)
            return await txn.get("\udfff")

        inside = await ctx.storage.transaction(closure)
        return sync, inside, await ctx.storage.list()

    fffd3 = "\ufffd" * 3
    assert call(rt, sqlite_stub, body) == ((1, [(fffd3, 1)]), 2, {fffd3: 2})


def test_strings_inside_values_are_kept_as_they_are(rt, stub):
    # The choice documented in values.py: V8 keeps strings as UTF-16, so lone surrogates
    # inside values round-trip, and list() shows the same values get() does.
    value = {"s": "a\ud800", "\udfff": ["\ud83d", ("x\udc00",)], "ok": "caf\u00e9"}

    async def body(ctx):
        await ctx.storage.put("k", value)
        return await ctx.storage.get("k"), await ctx.storage.list()

    got, listed = call(rt, stub, body)
    assert got == value and listed == {"k": value}


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -(2**63),
        2**100,
        1.5,
        float("inf"),
        "text",
        "\ud800 lone",
        b"\x00\xff",
        bytearray(b"ab"),
        [1, [2, None]],
        (1, "two"),
        {"a": 1, 2: "b", (3, 4): [5]},
        {1, "x"},
        frozenset({2}),
        datetime(2026, 1, 1, tzinfo=UTC),
        date(2026, 2, 3),
        re.compile("a+b", re.I),
    ],
    ids=repr,
)
def test_structured_clone_values_round_trip(rt, stub, value):
    async def body(ctx):
        await ctx.storage.put("v", value)
        return await ctx.storage.get("v")

    got = call(rt, stub, body)
    assert got == value and type(got) is type(value)


def test_special_floats_and_errors_round_trip(rt, stub):
    class Custom(Exception):
        pass

    async def body(ctx):
        await ctx.storage.put(
            {"nan": float("nan"), "negzero": -0.0, "te": TypeError("m"), "c": Custom("c")}
        )
        return await ctx.storage.get(["nan", "negzero", "te", "c"])

    got = call(rt, stub, body)
    assert got["nan"] != got["nan"]
    assert str(got["negzero"]) == "-0.0"
    assert type(got["te"]) is TypeError and str(got["te"]) == "m"
    assert type(got["c"]) is Exception and str(got["c"]) == "c"  # a custom name becomes Error


def test_values_are_copied_on_put_and_get_and_cycles_kept(rt, stub):
    async def body(ctx):
        original = {"list": [1]}
        original["self"] = original
        ctx.storage.put("v", original)
        original["list"].append(2)  # after put: not seen
        first = await ctx.storage.get("v")
        first["list"].append(3)  # on the copy: not stored
        second = await ctx.storage.get("v")
        return second["list"], second["self"] is second, first is second

    assert call(rt, stub, body) == ([1], True, False)


def test_uncloneable_value_refused_and_nothing_written(rt, stub):
    async def body(ctx):
        errors = []
        for bad in (lambda: 1, {"nested": print}, object()):
            try:
                ctx.storage.put("f", bad)
            except DataCloneError as exc:
                errors.append(str(exc))
        try:
            ctx.storage.put({"ok": 1, "bad": open})
        except DataCloneError:
            errors.append("batch")
        return errors, await ctx.storage.list()

    errors, stored = call(rt, stub, body)
    assert len(errors) == 4 and all("could not be cloned" in e for e in errors[:3])
    assert stored == {}


def test_get_many_sorted_dedup_missing_omitted(rt, stub):
    async def body(ctx):
        await ctx.storage.put({"b": 2, "a": 1, "c": 3})
        many = await ctx.storage.get(["c", "zz", "a", "c"])
        return list(many.items()), await ctx.storage.get([])

    assert call(rt, stub, body) == ([("a", 1), ("c", 3)], {})


def test_delete_single_and_many(rt, stub):
    async def body(ctx):
        s = ctx.storage
        await s.put({"a": 1, "b": 2, "c": 3})
        return (
            await s.delete("a"),
            await s.delete("a"),
            await s.delete(["b", "b", "b"]),
            await s.delete(["c", "nope"]),
            await s.delete([]),
        )

    assert call(rt, stub, body) == (True, False, 1, 1, 0)


@pytest.mark.parametrize(
    "opts, expected",
    [
        ({}, ["a", "aa", "ab", "b", "ba", "c"]),
        ({"start": "ab"}, ["ab", "b", "ba", "c"]),
        ({"startAfter": "ab"}, ["b", "ba", "c"]),
        ({"end": "b"}, ["a", "aa", "ab"]),
        ({"start": "aa", "end": "ba"}, ["aa", "ab", "b"]),
        ({"start": "b", "end": "b"}, []),
        ({"start": "c", "end": "a"}, []),
        ({"start": "zz"}, []),
        ({"prefix": "a"}, ["a", "aa", "ab"]),
        ({"prefix": "a", "start": "aa"}, ["aa", "ab"]),
        ({"prefix": "a", "end": "ab"}, ["a", "aa"]),
        ({"prefix": "b", "startAfter": "a"}, ["b", "ba"]),
        ({"reverse": True}, ["c", "ba", "b", "ab", "aa", "a"]),
        ({"reverse": True, "limit": 2}, ["c", "ba"]),
        ({"limit": 2}, ["a", "aa"]),
        ({"reverse": True, "start": "aa", "end": "b"}, ["ab", "aa"]),
        ({"prefix": "a", "reverse": True, "limit": 2}, ["ab", "aa"]),
        ({"unknownOption": 1, "limit": 1}, ["a"]),
    ],
)
def test_list_options_combine_by_intersection(rt, stub, opts, expected):
    async def body(ctx):
        await ctx.storage.put({k: k for k in ["a", "aa", "ab", "b", "ba", "c"]})
        return list(await ctx.storage.list(opts))

    assert call(rt, stub, body) == expected


def test_list_keyword_options_and_snake_case(rt, stub):
    async def body(ctx):
        await ctx.storage.put({"a": 1, "b": 2, "c": 3})
        return list(await ctx.storage.list(start_after="a", limit=1))

    assert call(rt, stub, body) == ["b"]


@pytest.mark.parametrize(
    "opts, error, text",
    [
        ({"start": "a", "startAfter": "a"}, TypeError, "both start and startAfter"),
        ({"limit": 0}, ValueError, "limit must be positive"),
        ({"limit": -1}, ValueError, "limit must be positive"),
        ({"limit": 1.5}, TypeError, "limit must be int"),
        ({"limit": True}, TypeError, "limit must be int"),
        ({"limit": "2"}, TypeError, "limit must be int"),
        ({"start": 1}, TypeError, "start must be str"),
        ({"prefix": None}, TypeError, "prefix must be str"),
        ({"reverse": "yes"}, TypeError, "reverse must be bool"),
    ],
)
def test_list_option_errors(rt, stub, opts, error, text):
    with pytest.raises(error, match=text):
        call(rt, stub, lambda ctx: ctx.storage.list(opts))


def test_list_rejects_non_dict_options(rt, stub):
    with pytest.raises(TypeError, match="options must be a dict"):
        call(rt, stub, lambda ctx: ctx.storage.list("x"))


@pytest.mark.parametrize("key", [1, None, b"k", ["a"]])
def test_non_str_keys_are_type_errors(rt, stub, key):
    with pytest.raises(TypeError, match="key must be a str"):
        call(rt, stub, lambda ctx: ctx.storage.put(key, 1))


def test_put_entries_with_a_non_dict_second_argument_is_refused(rt, stub):
    with pytest.raises(TypeError, match=r"put\(\) takes put\(key, value, options\)"):
        call(rt, stub, lambda ctx: ctx.storage.put({"a": 1}, "x"))
    with pytest.raises(TypeError, match="without a value"):
        call(rt, stub, lambda ctx: ctx.storage.put("a"))


def test_put_and_get_options_accepted(rt, stub):
    async def body(ctx):
        s = ctx.storage
        await s.put("a", 1, {"allowUnconfirmed": True, "noCache": True, "whatever": 3})
        await s.put({"b": 2}, {"noCache": True})
        await s.put("c", 3, allow_unconfirmed=True)
        return await s.get("a", {"noCache": True, "allowConcurrency": True}), await s.get(
            ["b", "c"]
        )

    assert call(rt, stub, body) == (1, {"b": 2, "c": 3})
    with pytest.raises(TypeError, match="allowUnconfirmed must be bool"):
        call(rt, stub, lambda ctx: ctx.storage.put("a", 1, {"allowUnconfirmed": 1}))


def test_key_limit_2048_bytes_counted_in_utf8(rt, stub):
    call(rt, stub, lambda ctx: ctx.storage.put("k" * 2048, 1))
    with pytest.raises(
        StorageLimitError, match=r"key is 2049 bytes \(UTF-8\); the limit is 2048"
    ) as info:
        call(rt, stub, lambda ctx: ctx.storage.put("k" * 2049, 1))
    assert (info.value.field, info.value.limit, info.value.found) == ("key", 2048, 2049)
    with pytest.raises(StorageLimitError, match="key is 2050 bytes"):
        call(rt, stub, lambda ctx: ctx.storage.put("é" * 1025, 1))
    with pytest.raises(StorageLimitError):
        call(rt, stub, lambda ctx: ctx.storage.get("k" * 2049))


def test_value_limit_131072_bytes_of_stored_form(rt, stub):
    # a str is stored as 5 bytes of header plus its UTF-8 bytes
    call(rt, stub, lambda ctx: ctx.storage.put("ok", "x" * (131_072 - 5)))
    with pytest.raises(
        StorageLimitError,
        match=r"value of key 'big' is 131073 bytes \(stored form\); the limit is 131072",
    ):
        call(rt, stub, lambda ctx: ctx.storage.put("big", "x" * (131_072 - 4)))
    assert call(rt, stub, lambda ctx: ctx.storage.get("big")) is None


def test_batch_limit_128_and_a_refused_batch_writes_nothing(rt, stub):
    ok = {f"k{i:03}": i for i in range(128)}
    call(rt, stub, lambda ctx: ctx.storage.put(ok))
    too_many = {f"n{i:03}": i for i in range(129)}
    with pytest.raises(StorageLimitError, match="pairs per put is 129; the limit is 128"):
        call(rt, stub, lambda ctx: ctx.storage.put(too_many))
    with pytest.raises(StorageLimitError, match="keys per get is 129"):
        call(rt, stub, lambda ctx: ctx.storage.get(list(too_many)))
    with pytest.raises(StorageLimitError, match="keys per delete is 129"):
        call(rt, stub, lambda ctx: ctx.storage.delete(list(too_many)))
    mixed = {"fine": 1, "x" * 3000: 2}
    with pytest.raises(StorageLimitError):
        call(rt, stub, lambda ctx: ctx.storage.put(mixed))
    stored = call(rt, stub, lambda ctx: ctx.storage.list())
    assert len(stored) == 128 and "fine" not in stored and "n000" not in stored


def test_delete_all_removes_keys_and_keeps_alarm_by_default(rt, stub):
    async def body(ctx):
        s = ctx.storage
        await s.put({"a": 1, "b": 2})
        await s.setAlarm(rt.now() + 60_000)
        result = await s.deleteAll()
        return result, await s.list(), await s.getAlarm()

    assert call(rt, stub, body) == (None, {}, rt.now() + 60_000)


@pytest.mark.parametrize(
    "date_, flags, alarm_kept",
    [
        ("2026-02-23", [], True),
        ("2026-02-24", [], False),
        ("2026-06-01", ["delete_all_preserves_alarm"], True),
        ("2025-01-01", ["delete_all_deletes_alarm"], False),
    ],
)
def test_delete_all_alarm_follows_compatibility_date(date_, flags, alarm_kept):
    from storage_helpers import Probe

    from workbench.storage import Runtime

    rt = Runtime(compatibility_date=date_, compatibility_flags=flags)
    for backend in ("sqlite", "kv"):
        ns = rt.namespace(Probe, storage=backend, name=f"P{backend}")
        stub = ns.get(ns.id_from_name("x"))

        async def body(ctx):
            await ctx.storage.setAlarm(rt.now() + 1000)
            await ctx.storage.deleteAll()
            return await ctx.storage.getAlarm()

        assert (call(rt, stub, body) is not None) is alarm_kept


def test_compatibility_date_must_be_a_date():
    from workbench.storage import Runtime

    with pytest.raises(ValueError, match="compatibility_date must look like YYYY-MM-DD"):
        Runtime(compatibility_date="March 2026")


def test_sync_kv_api_shares_data_with_async_api(rt, sqlite_stub):
    async def body(ctx):
        kv = ctx.storage.kv
        kv.put("a", 1)
        await ctx.storage.put("b", 2)
        return (
            kv.get("a"),
            kv.get("b"),
            kv.get("zz"),
            kv.delete("a"),
            kv.delete("a"),
            list(kv.list({"prefix": "b"})),
        )

    assert call(rt, sqlite_stub, body) == (1, 2, None, True, False, [("b", 2)])


def test_sync_kv_api_refused_on_kv_backend(rt, kv_stub):
    from workbench.storage import StorageError

    with pytest.raises(StorageError, match="only available for SQLite-backed"):
        call(rt, kv_stub, lambda ctx: ctx.storage.kv.get("a"))
