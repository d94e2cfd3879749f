"""Storage choices the platform leaves open (docs/decisions.md, "Durable Object storage").

Each test drives an object through ``ctx.storage`` and asserts what its user sees.
"""

from __future__ import annotations

import asyncio
from collections import Counter, OrderedDict, defaultdict, namedtuple
from datetime import UTC, datetime
from enum import IntEnum, StrEnum
from types import SimpleNamespace

import pytest
from storage_helpers import Probe, call

from workbench.storage import ObjectAborted, Runtime, SqlError, StorageWriteFailed
from workbench.storage.views import timeline

DAY = 24 * 3600 * 1000


def restart(rt, stub):
    with pytest.raises(ObjectAborted):
        call(rt, stub, lambda ctx: ctx.abort("restart"))


# -- Values: subclasses are stored as their built-in -------------------------------------------
class Level(IntEnum):
    HIGH = 3


class Color(StrEnum):
    RED = "red"


class Shouty(str):
    def __str__(self):
        return "not what was stored"


class Lying(dict):
    """A dict whose Python-level views lie: the stored form must use dict's own methods."""

    def items(self):
        return [("fake", 1)]

    def keys(self):
        return ["fake"]

    def __iter__(self):
        return iter(["fake"])


class Tagged(list):
    def __init__(self, *args):
        super().__init__(*args)
        self.note = "an attribute the built-in cannot hold"

    def __iter__(self):
        return iter(["fake"])


class Stamp(datetime):
    pass


Point = namedtuple("Point", "x y")


def test_subclasses_are_stored_and_read_back_as_their_built_ins(rt, stub):
    shared = OrderedDict(b=2, a=1)
    value = {
        "level": Level.HIGH,
        "color": Color.RED,
        "shouty": Shouty("quiet"),
        "lying": Lying(real=1),
        "tagged": Tagged([1, 2]),
        "point": Point(1, 2),
        "counts": defaultdict(list, a=[1]),
        "letters": Counter("aab"),
        "when": Stamp(2026, 1, 1, tzinfo=UTC),
        "twice": [shared, shared],
        "keys": {Color.RED: "str key", Level.HIGH: "int key", Point(0, 0): "tuple key"},
    }
    expected = {
        "level": 3,
        "color": "red",
        "shouty": "quiet",
        "lying": {"real": 1},
        "tagged": [1, 2],
        "point": (1, 2),
        "counts": {"a": [1]},
        "letters": {"a": 2, "b": 1},
        "when": datetime(2026, 1, 1, tzinfo=UTC),
        "twice": [{"b": 2, "a": 1}, {"b": 2, "a": 1}],
        "keys": {"red": "str key", 3: "int key", (0, 0): "tuple key"},
    }
    types = {
        "level": int,
        "color": str,
        "shouty": str,
        "lying": dict,
        "tagged": list,
        "point": tuple,
        "counts": dict,
        "letters": dict,
        "when": datetime,
        "twice": list,
        "keys": dict,
    }

    async def write(ctx):
        await ctx.storage.put("whole", value)  # one value holding every subclass
        await ctx.storage.put(dict(value))  # and each as a value of its own

    call(rt, stub, write)
    restart(rt, stub)  # a new instance reads what was stored, not a cached object

    async def read(ctx):
        return (
            await ctx.storage.get("whole"),
            await ctx.storage.get(list(value)),
            await ctx.storage.list(),
        )

    whole, many, listed = call(rt, stub, read)
    for got in (whole, many, {k: listed[k] for k in value}):
        assert got == expected
        assert {k: type(v) for k, v in got.items()} == types
        assert [type(k) for k in got["keys"]] == [str, int, tuple]
        assert type(got["twice"][0]) is dict and got["twice"][0] is got["twice"][1]
        assert str(got["shouty"]) == "quiet" and not hasattr(got["tagged"], "note")
    assert type(listed["level"]) is int and type(listed["when"]) is datetime


# -- Eager operations: `await put(); await put()` is one batch ---------------------------------
def test_awaited_writes_with_no_real_yield_between_them_commit_as_one_batch(rt, stub):
    async def awaited_back_to_back(ctx):
        await ctx.storage.put("a", 1)
        rt.inject_write_failure(stub)  # the disk fails before the batch commits
        await ctx.storage.delete("nothing")
        await ctx.storage.get("a")  # a read does not yield either
        await ctx.storage.put("b", 2)
        return "unreachable"

    with pytest.raises(StorageWriteFailed, match="internal error; reference = "):
        call(rt, stub, awaited_back_to_back)
    # "a" was awaited, yet it shared the batch that failed
    assert call(rt, stub, lambda ctx: ctx.storage.list()) == {}

    async def with_a_real_yield(ctx):
        await ctx.storage.put("a", 1)
        await asyncio.sleep(0)  # the event loop runs: the batch holding "a" commits here
        rt.inject_write_failure(stub)
        await ctx.storage.put("b", 2)

    with pytest.raises(StorageWriteFailed):
        call(rt, stub, with_a_real_yield)
    assert call(rt, stub, lambda ctx: ctx.storage.list()) == {"a": 1}


def test_awaited_writes_advance_the_bookmark_by_one_change(rt, sqlite_stub):
    def sequence(bookmark):
        return int(bookmark.split("-")[1], 16)

    async def three_awaited_writes(ctx):
        before = await ctx.storage.getCurrentBookmark()
        await ctx.storage.put("a", 1)
        await ctx.storage.put({"b": 2, "c": 3})
        await ctx.storage.delete("a")
        return before

    before = call(rt, sqlite_stub, three_awaited_writes)
    after = call(rt, sqlite_stub, lambda ctx: ctx.storage.getCurrentBookmark())
    assert sequence(after) == sequence(before) + 1


# -- Alarms: a failed handler's own set or delete stands ---------------------------------------
@pytest.fixture(params=["sqlite", "kv"])
def alarmed(request):
    """A runtime, a stub and the handler runs ``(ms since start, retryCount)``; the first
    run calls ``env.first(ctx)`` and then fails."""
    rt = Runtime()
    env = SimpleNamespace(first=None, runs=[], start=rt.now())

    async def on_alarm(ctx, info):
        env.runs.append((rt.now() - env.start, info.retryCount))
        if len(env.runs) == 1:
            await env.first(ctx)
            raise RuntimeError("the handler failed")

    env.on_alarm = on_alarm
    ns = rt.namespace(Probe, storage=request.param, env=env)
    return rt, ns.get(ns.id_from_name("a")), env


def _fire_once(rt, stub, env):
    """Set the alarm 1 s ahead, let the handler run and fail; the alarm the user then sees."""
    call(rt, stub, lambda ctx: ctx.storage.setAlarm(env.start + 1000))
    rt.run(rt.advance(1000))
    alarm = call(rt, stub, lambda ctx: ctx.storage.getAlarm())
    return None if alarm is None else alarm - env.start


def test_a_failed_handlers_own_set_alarm_stands_and_no_retry_is_scheduled(alarmed):
    rt, stub, env = alarmed

    async def reschedule(ctx):
        await ctx.storage.setAlarm(env.start + 60_000)

    env.first = reschedule
    assert _fire_once(rt, stub, env) == 60_000  # not the retry's 3,000
    rt.run(rt.advance(120_000))
    assert env.runs == [(1000, 0), (60_000, 0)]  # its own time, as a first run


def test_a_failed_handlers_own_delete_alarm_stands_and_no_retry_is_scheduled(alarmed):
    rt, stub, env = alarmed

    async def stop(ctx):
        await ctx.storage.deleteAlarm()  # already None inside the handler: still a choice

    env.first = stop
    assert _fire_once(rt, stub, env) is None
    rt.run(rt.advance(120_000))
    assert env.runs == [(1000, 0)]


def _set_in_a_rolled_back_transaction(ctx, env):
    async def closure(txn):
        await txn.setAlarm(env.start + 60_000)
        txn.rollback()

    return ctx.storage.transaction(closure)


async def _put_in_a_throwing_transaction(ctx, env):
    async def closure(txn):
        await txn.put("k", 1)
        raise ValueError("undo")

    with pytest.raises(ValueError):
        await ctx.storage.transaction(closure)


async def _delete_all_keeping_the_alarm(ctx, env):
    await ctx.storage.put("k", 1)
    await ctx.storage.deleteAll()  # before compatibility date 2026-02-24 the alarm is kept


@pytest.mark.parametrize(
    "undone",
    [
        _set_in_a_rolled_back_transaction,
        _put_in_a_throwing_transaction,
        _delete_all_keeping_the_alarm,
    ],
)
def test_an_alarm_change_that_did_not_stand_still_gets_the_retry(alarmed, undone):
    rt, stub, env = alarmed
    env.first = lambda ctx: undone(ctx, env)
    assert _fire_once(rt, stub, env) == 3000  # retried 2 s after the failure
    rt.run(rt.advance(120_000))
    assert env.runs == [(1000, 0), (3000, 1)]


# -- PITR: pruning old history -----------------------------------------------------------------
def test_history_before_the_newest_checkpoint_older_than_the_window_is_pruned(rt, sqlite_stub):
    host = sqlite_stub._host

    def step(days, write):
        rt.run(rt.advance(days * DAY))
        call(rt, sqlite_stub, write)

    step(0, lambda ctx: ctx.storage.put("k", "v0"))
    step(1, lambda ctx: ctx.storage.put("k", "v1"))
    step(1, lambda ctx: ctx.storage.sql.exec("CREATE TABLE a(x)"))  # a checkpoint (schema)
    step(1, lambda ctx: ctx.storage.put("k", "v2"))
    step(31, lambda ctx: ctx.storage.put("k", "v3"))
    # nothing is pruned until a checkpoint is written
    assert [e["seq"] for e in timeline(host)] == [0, 1, 2, 3, 4, 5]

    step(0, lambda ctx: ctx.storage.sql.exec("CREATE TABLE b(x)"))  # a checkpoint, 34 days on
    entries = timeline(host)
    # the newest checkpoint older than 30 days is the one from day 2: it and what follows stay
    assert [(e["seq"], e["kind"]) for e in entries] == [
        (3, "checkpoint"),
        (4, "changeset"),
        (5, "changeset"),
        (6, "checkpoint"),
    ]
    assert entries[0]["summary"] == "create table a · put k"  # the kept image, read whole

    # the oldest state the window reaches (day 4: v2) is still rebuilt from the kept records
    edge = call(rt, sqlite_stub, lambda ctx: ctx.storage.getBookmarkForTime(rt.now() - 30 * DAY))
    call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(edge))
    restart(rt, sqlite_stub)
    assert call(rt, sqlite_stub, lambda ctx: ctx.storage.get("k")) == "v2"


# -- SQL: dbstat is refused --------------------------------------------------------------------
@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM dbstat",
        "SELECT count(*) FROM dbstat",
        "SELECT name, pgsize FROM main.dbstat",
        'SELECT * FROM "DbStat"',
        "SELECT * FROM dbstat('main')",
        "SELECT sum(pgsize) FROM dbstat WHERE name = 't'",
        "SELECT * FROM t WHERE x IN (SELECT pgsize FROM dbstat)",
        "CREATE VIRTUAL TABLE pages USING dbstat",
        "CREATE VIRTUAL TABLE pages USING DBSTAT(main)",
    ],
)
def test_dbstat_is_refused_however_it_is_reached(rt, sqlite_stub, query):
    call(rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS t(x)"))
    with pytest.raises(SqlError, match=r"(not authorized|access to dbstat\.\w+ is prohibited)"):
        call(rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec(query).toArray())
    tables = call(
        rt,
        sqlite_stub,
        lambda ctx: ctx.storage.sql.exec("SELECT name FROM sqlite_master").raw().toArray(),
    )
    assert tables == [["t"]]  # no page-size table was made either


def test_a_view_or_trigger_over_dbstat_fails_when_used(rt, sqlite_stub):
    def body(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(x)")
        sql.exec("CREATE VIEW pages AS SELECT name, pgsize FROM dbstat")
        sql.exec(
            "CREATE TRIGGER spy AFTER INSERT ON t BEGIN"
            " INSERT INTO t SELECT pgsize FROM dbstat LIMIT 0; END"
        )
        errors = []
        for query in ("SELECT * FROM pages", "INSERT INTO t VALUES (1)"):
            with pytest.raises(SqlError) as caught:
                sql.exec(query)
            errors.append(str(caught.value))
        return errors, sql.exec("SELECT count(*) AS n FROM t").one()["n"]

    errors, rows = call(rt, sqlite_stub, body)
    assert all('unsafe use of virtual table "dbstat"' in e for e in errors) and rows == 0
