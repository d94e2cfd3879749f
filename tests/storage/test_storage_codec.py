"""The pickle-based value form (issue 13): same structured-clone rules, old data still read.

Values are now stored as a pickle read back by an unpickler that resolves only the
codec's own rebuild function. These tests pin what a user sees of that change: every
value type still round-trips through ``ctx.storage``, data written in the first (tagged)
form is still read, stored bytes can never run code, and the depth limit and the
uncloneable-value errors are the same whichever path a value takes.
"""

from __future__ import annotations

import math
import pickle
import re
import sqlite3
from collections import OrderedDict, defaultdict, namedtuple
from datetime import UTC, date, datetime, timedelta, timezone
from enum import IntEnum

import pytest
from storage_helpers import Probe, call

from workbench.storage import DataCloneError, Runtime, StorageLimitError
from workbench.storage.value_codec import MAX_DEPTH, decode, encode

# Bytes the first form wrote (before the pickle form) for a dict of every kind of value,
# and for a list that contains itself: data folders written then must stay readable.
FIRST_FORM_DICT = (
    b"d\r\x00\x00\x00s\x01\x00\x00\x00ni\x01\x00\x00\x00\x00\x00\x00\x00s\x03\x00\x00\x00big"
    b"J\t\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00@s\x01\x00\x00\x00ff\x00\x00\x00\x00\x00"
    b"\x00\x00\x80s\x01\x00\x00\x00ss\x03\x00\x00\x00h\xc3\xa9s\x04\x00\x00\x00tagsS\x01\x00"
    b"\x00\x00s\x01\x00\x00\x00as\x02\x00\x00\x00fzZ\x01\x00\x00\x00i\x02\x00\x00\x00\x00\x00"
    b"\x00\x00s\x03\x00\x00\x00rawb\x01\x00\x00\x00\x00s\x02\x00\x00\x00baB\x01\x00\x00\x00z"
    b"s\x01\x00\x00\x00tt\x02\x00\x00\x00i\x01\x00\x00\x00\x00\x00\x00\x00Ns\x04\x00\x00\x00"
    b"whenD\x19\x00\x00\x002026-01-02T03:04:05+02:00s\x03\x00\x00\x00daya\n\x00\x00\x00"
    b"2026-01-02s\x03\x00\x00\x00errE\n\x00\x00\x00ValueError\x03\x00\x00\x00badTF"
)
FIRST_FORM_CYCLE = b"l\x02\x00\x00\x00i\x01\x00\x00\x00\x00\x00\x00\x00r\x00\x00\x00\x00"


def first_form_expected() -> dict:
    return {
        "n": 1,
        "big": 2**70,
        "f": -0.0,
        "s": "hé",
        "tags": {"a"},
        "fz": frozenset({2}),
        "raw": b"\x00",
        "ba": bytearray(b"z"),
        "t": (1, None),
        "when": datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))),
        "day": date(2026, 1, 2),
        "err": None,  # compared apart: exceptions are not equal to each other
        True: False,
    }


def test_a_data_folder_written_in_the_first_form_is_still_read(tmp_path):
    rt = Runtime(path=tmp_path)
    ns = rt.namespace(Probe)
    stub = ns.get(ns.id_from_name("p"))
    call(rt, stub, lambda ctx: ctx.storage.put("new", {"kept": [1, 2]}))
    rt.close()
    con = sqlite3.connect(tmp_path / "Probe" / f"{stub.id}.sqlite")
    con.executemany(
        "INSERT INTO _cf_KV VALUES (?, ?)",
        [(b"old", FIRST_FORM_DICT), (b"old-cycle", FIRST_FORM_CYCLE)],
    )
    con.commit()
    con.close()

    rt2 = Runtime(path=tmp_path)
    ns2 = rt2.namespace(Probe)
    stub2 = ns2.get(ns2.id_from_name("p"))

    async def read(ctx):
        return await ctx.storage.get("old"), await ctx.storage.list()

    old, listed = call(rt2, stub2, read)
    rt2.close()
    err = old.pop("err")
    expected = first_form_expected()
    expected.pop("err")
    assert old == expected and math.copysign(1, old["f"]) == -1
    assert type(err) is ValueError and str(err) == "bad"
    assert list(listed) == ["new", "old", "old-cycle"]
    cycle = listed["old-cycle"]
    assert cycle[0] == 1 and cycle[1] is cycle
    assert listed["new"] == {"kept": [1, 2]}


def test_new_values_use_the_pickle_form_and_single_scalars_the_first(rt, stub):
    assert encode({"a": 1})[:2] == b"\x80\x03"
    assert encode([1])[:2] == b"\x80\x03"
    # one str, 64-bit int or bytes keeps its exact first-form size (the limit is pinned on it)
    assert encode("abc") == b"s\x03\x00\x00\x00abc"
    assert encode(7)[:1] == b"i" and encode(b"x")[:1] == b"b"


def every_kind() -> dict:
    shared = [1, 2]
    looped: list = ["head"]
    looped.append(looped)
    return {
        "none": None,
        "bools": [True, False],
        "ints": [0, -1, 2**63, -(2**200), 10**5000],
        "floats": [1.5, math.inf, -math.inf, -0.0],
        "text": "h\u00e9\U0001f600 \ud800 lone surrogate",
        "bytes": b"\x00\xff",
        "bytearray": bytearray(b"ab"),
        "tuple": (1, "x", (2,)),
        "set": {1, "a", (2, 3)},
        "frozenset": frozenset({4, frozenset({5})}),
        "map": {1: "one", (2, 3): "tuple key", frozenset({6}): None, None: 0},
        "when": datetime(2026, 5, 1, 12, 30, tzinfo=UTC),
        "naive": datetime(2026, 5, 1, 12, 30, 1, 500),
        "day": date(2026, 5, 1),
        "pattern": re.compile(r"a+b", re.IGNORECASE | re.MULTILINE),
        "shared": [shared, shared],
        "looped": looped,
    }


def test_every_structured_clone_type_round_trips_in_the_pickle_form(rt, stub):
    value = every_kind()
    assert encode(value)[:2] == b"\x80\x03"

    async def body(ctx):
        await ctx.storage.put("v", value)
        return await ctx.storage.get("v"), await ctx.storage.list()

    got, listed = call(rt, stub, body)
    for back in (got, listed["v"]):
        assert back is not value
        looped = back.pop("looped")
        assert looped[0] == "head" and looped[1] is looped
        shared = back["shared"]
        assert shared[0] is shared[1] and shared[0] == [1, 2]
        expected = every_kind()
        expected.pop("looped")
        assert back == expected
        assert type(back["bytearray"]) is bytearray and type(back["tuple"]) is tuple
        assert math.copysign(1, back["floats"][3]) == -1
        assert math.isnan(decode(encode([math.nan]))[0])


def test_errors_keep_the_message_and_builtin_classes_only():
    class Custom(ValueError):
        pass

    got = decode(encode([TypeError("t"), Custom("c"), OSError("o")]))
    assert [type(e) for e in got] == [TypeError, Exception, OSError]
    assert [str(e) for e in got] == ["t", "c", "o"]


def test_subclasses_come_back_as_their_built_ins_with_shared_references_kept():
    Point = namedtuple("Point", "x y")

    class Level(IntEnum):
        HIGH = 3

    class Name(str):
        pass

    counts: defaultdict = defaultdict(list, {"a": [1]})
    ordered = OrderedDict(b=2)
    value = {
        "point": Point(1, 2),
        "level": Level.HIGH,
        "name": Name("n"),
        "counts": counts,
        "ordered": [ordered, ordered],
    }
    got = decode(encode(value))
    assert got == {"point": (1, 2), "level": 3, "name": "n", "counts": {"a": [1]},
                   "ordered": [{"b": 2}, {"b": 2}]}  # fmt: skip
    assert [type(got[k]) for k in ("point", "level", "name", "counts")] == [tuple, int, str, dict]
    assert got["ordered"][0] is got["ordered"][1] and type(got["ordered"][0]) is dict


def test_a_dict_subclass_that_contains_itself_keeps_the_cycle():
    class Node(dict):
        pass

    node = Node(name="root")
    node["self"] = node
    got = decode(encode(node))
    assert type(got) is dict and got["self"] is got and got["name"] == "root"


def test_a_hashable_list_subclass_is_fine_as_a_value_but_not_as_a_key():
    class HashableList(list):
        def __hash__(self):
            return 1

    assert decode(encode({"v": HashableList([1, 2])})) == {"v": [1, 2]}
    with pytest.raises(DataCloneError, match="inside a dict key or set member"):
        encode({HashableList([1]): "v"})


@pytest.mark.parametrize(
    "value, message",
    [
        (lambda: None, r"^function <lambda> could not be cloned\.$"),
        ({"nested": [object()]}, r"^object object could not be cloned\.$"),
        (re.compile(b"bytes"), r"could not be cloned \(bytes pattern\)"),
        (int, r"^type int could not be cloned\.$"),
    ],
)
def test_uncloneable_values_are_refused_with_the_same_message(value, message):
    with pytest.raises(DataCloneError, match=message):
        encode(value)


def test_memoryview_comes_back_as_a_bytearray():
    assert decode(encode({"m": memoryview(b"xy")})) == {"m": bytearray(b"xy")}


def test_stored_bytes_can_never_run_code(capsys):
    class Evil:
        def __reduce__(self):
            return (print, ("stored bytes ran code",))

    for payload in (
        pickle.dumps(Evil(), 5),
        pickle.dumps(Evil(), 0),
        pickle.dumps({"ok": [Evil()]}, 2),
        b"\x80\x05cos\nsystem\n(S'true'\ntR.",
    ):
        with pytest.raises(DataCloneError, match=r"^Unable to deserialize cloned data \(") as info:
            decode(payload)
        assert "is not allowed in a stored value" in str(info.value) or "unknown tag" in str(
            info.value
        )  # a protocol 0 pickle does not even start like one
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    "damaged",
    [
        encode({"a": [1, 2, 3]})[:-3],  # cut short
        b"\x80\x05\x95",  # a frame header and nothing else
        b"\x80\x05" + pickle.dumps(1, 5)[2:].replace(b"K", b"\xff", 1),  # unknown opcode
        b"\x80\x05\x8f(]\x90.",  # a list inside a set
    ],
)
def test_damaged_pickle_bytes_raise_data_clone_error(damaged):
    with pytest.raises(DataCloneError, match=r"^Unable to deserialize cloned data \("):
        decode(damaged)


def test_a_forged_rebuild_call_with_a_bad_tag_is_refused():
    from workbench.storage import value_codec as values

    forged = pickle.dumps(values._rebuild, 5)[:-1]  # the global, then call it with ("?",)
    forged += b"\x8c\x01?\x94\x85\x94R\x94."
    with pytest.raises(DataCloneError, match="unknown rebuild tag"):
        decode(forged)


def nested(depth, make=lambda inner: [inner]):
    value = None
    for _ in range(depth):
        value = make(value)
    return value


def test_wide_values_with_many_containers_are_not_mistaken_for_deep_ones(rt, stub):
    wide = {"rows": [{"id": i, "tags": [i, (i, [i])]} for i in range(500)]}
    shared = [[1]] * 1000  # one container a thousand times
    assert decode(encode(wide)) == wide
    got = decode(encode(shared))
    assert got == shared and got[0] is got[999]


@pytest.mark.parametrize(
    "make, extra, innermost",
    [
        # wide at every level: the innermost {"pad": [1]} adds two levels
        (lambda inner: [inner, [0] * 3, {"pad": [1]}], 2, "list"),
        (lambda inner: OrderedDict(k=inner), 0, "OrderedDict"),  # subclass containers
        # a container shared by every level, met first at the top
        (lambda inner: {"same": SHARED, "k": inner}, 0, "dict"),
    ],
    ids=["wide", "subclass", "shared"],
)
def test_the_depth_limit_holds_on_every_path(make, extra, innermost):
    at_limit = nested(MAX_DEPTH - extra, make)
    assert decode(encode(at_limit)) == at_limit
    with pytest.raises(DataCloneError) as info:
        encode(make(at_limit))
    assert str(info.value) == (
        f"{innermost} object nested deeper than 256 levels could not be cloned (the "
        "workbench's limit is 256 levels of lists, tuples, dicts and sets)."
    )


SHARED = [[1, 2], (3, 4)]


def test_cycles_with_many_containers_are_checked_exactly():
    ring: list = []
    node = ring
    for i in range(300):
        nxt: list = [i]
        node.append(nxt)
        node = nxt
    node.append(ring)  # 301 lists in one cycle: deeper than the limit
    with pytest.raises(DataCloneError, match="nested deeper than 256 levels"):
        encode(ring)
    short: list = []
    node = short
    for i in range(200):
        nxt = [i, [i] * 3]
        node.append(nxt)
        node = nxt
    node.append(short)  # a long cycle that stays within the limit
    got = decode(encode(short))
    tail = got
    for _ in range(200):
        tail = tail[-1]
    assert tail[-1] is got


def test_the_value_limit_is_measured_on_the_stored_form(rt, stub):
    value = {"text": "x" * 131_000, "more": "y" * 100}
    size = len(encode(value))
    assert size > 131_072

    with pytest.raises(StorageLimitError, match=rf"is {size} bytes \(stored form\)"):
        call(rt, stub, lambda ctx: ctx.storage.put("big", value))
    assert call(rt, stub, lambda ctx: ctx.storage.get("big")) is None


def test_a_large_value_holding_a_raised_error_is_walked_without_its_traceback():
    try:
        raise ValueError("kept")
    except ValueError as err:
        caught = err
    assert caught.__traceback__ is not None
    value = {"rows": [{"id": i, "tags": [i]} for i in range(300)], "error": caught}
    got = decode(encode(value))
    assert got["rows"] == value["rows"]
    assert type(got["error"]) is ValueError and str(got["error"]) == "kept"
    assert got["error"].__traceback__ is None


def test_a_value_whose_own_code_stores_a_value_while_being_stored():
    class Chatty(Exception):
        def __str__(self):
            return "inner " + repr(decode(encode({"nested": [1, 2]})))

    got = decode(encode([Chatty(), {"after": 1}]))
    assert str(got[0]) == "inner {'nested': [1, 2]}" and got[1] == {"after": 1}


def test_a_cycle_through_a_tuple_now_round_trips(rt, stub):
    pair: tuple = ([],)
    pair[0].append(pair)

    async def body(ctx):
        await ctx.storage.put("pair", pair)
        return await ctx.storage.get("pair")

    got = call(rt, stub, body)
    assert type(got) is tuple and got[0][0] is got


def test_bytes_after_a_value_s_end_are_ignored():
    # The value ends at its STOP opcode; what follows is not read (this is what lets
    # list() read many values with one unpickler).
    assert decode(encode({"a": [1]}) + b"junk") == {"a": [1]}


def corrupt(tmp_path, values, damage):
    """Store ``values`` in a data folder, rewrite some stored bytes, reopen: the stub."""
    rt = Runtime(path=tmp_path)
    ns = rt.namespace(Probe)
    stub = ns.get(ns.id_from_name("p"))
    call(rt, stub, lambda ctx: ctx.storage.put(values))
    rt.close()
    con = sqlite3.connect(tmp_path / "Probe" / f"{stub.id}.sqlite")
    for key, data in damage.items():
        con.execute("UPDATE _cf_KV SET value = ? WHERE key = ?", (data, key.encode()))
    con.commit()
    con.close()
    rt2 = Runtime(path=tmp_path)
    ns2 = rt2.namespace(Probe)
    return rt2, ns2.get(ns2.id_from_name("p"))


def test_list_reads_many_values_and_every_key_gets_its_own(tmp_path):
    values = {f"k{i:03}": {"i": i, "tags": [i, (i,)], "seen": {i}} for i in range(50)}
    values["text"] = "plain"
    values["n"] = 7
    # junk after one value's end must not shift the values after it
    rt, stub = corrupt(tmp_path, values, {"k010": encode({"i": 10}) + b"\x80\x03K\x05."})
    listed = call(rt, stub, lambda ctx: ctx.storage.list())
    rt.close()
    expected = dict(values, k010={"i": 10})
    assert listed == expected and list(listed) == sorted(expected)


def test_list_with_one_damaged_value_raises_for_it(tmp_path):
    values = {f"k{i:03}": [i, {"i": i}] for i in range(20)}
    # without its STOP the value would run into the next one's bytes
    rt, stub = corrupt(tmp_path, values, {"k005": encode([5, {"i": 5}])[:-1]})

    async def body(ctx):
        with pytest.raises(DataCloneError, match=r"^Unable to deserialize cloned data \("):
            await ctx.storage.list()
        return await ctx.storage.get("k006"), await ctx.storage.list({"start": "k006"})

    one, rest = call(rt, stub, body)
    rt.close()
    assert one == [6, {"i": 6}] and list(rest) == [f"k{i:03}" for i in range(6, 20)]
