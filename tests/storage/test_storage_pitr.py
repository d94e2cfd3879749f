"""Point-in-time recovery: bookmarks, restore and undo, the 30-day window, flat write cost."""

from __future__ import annotations

import re

import pytest
from storage_helpers import call

from workbench.storage import BookmarkError, ObjectAborted, PitrNotSupported

DAY = 24 * 3600 * 1000


def state(ctx):
    sql = ctx.storage.sql
    tables = [
        r["name"]
        for r in sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]
    rows = sql.exec("SELECT v FROM items ORDER BY v").raw().toArray() if "items" in tables else None
    return tables, rows, ctx.storage.kv.get("k")


def restart(rt, stub):
    with pytest.raises(ObjectAborted):
        call(rt, stub, lambda ctx: ctx.abort("restart"))


def test_bookmarks_compare_lexically_in_time_order(rt, sqlite_stub):
    marks = []
    for i in range(3):

        async def body(ctx, i=i):
            await ctx.storage.put("k", i)
            return await ctx.storage.getCurrentBookmark()

        marks.append(call(rt, sqlite_stub, body))
        rt.run(rt.advance(1000))
    again = call(rt, sqlite_stub, lambda ctx: ctx.storage.getCurrentBookmark())
    assert marks == sorted(marks) and len(set(marks)) == 3 and again > marks[-1]
    assert all(m.replace("-", "").isalnum() for m in marks)


def test_restore_to_a_bookmark_then_undo_it(rt, sqlite_stub):
    async def v1(ctx):
        ctx.storage.sql.exec("CREATE TABLE items(v)")
        ctx.storage.sql.exec("INSERT INTO items VALUES ('one')")
        await ctx.storage.put("k", "v1")
        return await ctx.storage.getCurrentBookmark()

    b1 = call(rt, sqlite_stub, v1)
    rt.run(rt.advance(60_000))

    async def v2(ctx):
        ctx.storage.sql.exec("INSERT INTO items VALUES ('two')")
        ctx.storage.sql.exec("CREATE TABLE extra(x)")
        await ctx.storage.put("k", "v2")

    call(rt, sqlite_stub, v2)
    after_v2 = call(rt, sqlite_stub, state)
    undo = call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(b1))
    assert undo > b1
    assert call(rt, sqlite_stub, state) == after_v2  # pending until the object restarts
    restart(rt, sqlite_stub)
    assert call(rt, sqlite_stub, state) == (["_cf_KV", "items"], [["one"]], "v1")

    undo2 = call(rt, sqlite_stub, lambda ctx: ctx.storage.on_next_session_restore_bookmark(undo))
    restart(rt, sqlite_stub)
    assert call(rt, sqlite_stub, state) == after_v2
    assert undo2 > undo


def test_bookmark_for_time_gives_the_state_at_that_time(rt, sqlite_stub):
    times = []
    for i in range(4):
        times.append(rt.now())
        call(rt, sqlite_stub, lambda ctx, i=i: ctx.storage.put("k", i))
        rt.run(rt.advance(DAY))

    def bookmark_at(t):
        return call(rt, sqlite_stub, lambda ctx: ctx.storage.getBookmarkForTime(t))

    marks = [bookmark_at(t + 1) for t in times]
    assert marks == sorted(marks)
    call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(marks[1]))
    restart(rt, sqlite_stub)
    assert call(rt, sqlite_stub, lambda ctx: ctx.storage.get("k")) == 1
    from datetime import UTC, datetime

    dt = datetime.fromtimestamp((times[2] + 1) / 1000, tz=UTC)
    assert bookmark_at(dt).split("-")[1] == marks[2].split("-")[1]


def test_window_and_argument_errors(rt, sqlite_stub):
    call(rt, sqlite_stub, lambda ctx: ctx.storage.put("k", 1))
    old = rt.now()
    rt.run(rt.advance(31 * DAY))
    with pytest.raises(BookmarkError, match="more than 30 days ago"):
        call(rt, sqlite_stub, lambda ctx: ctx.storage.getBookmarkForTime(old))
    with pytest.raises(BookmarkError, match="in the future"):
        call(rt, sqlite_stub, lambda ctx: ctx.storage.getBookmarkForTime(rt.now() + 1))
    for bad in ("1700000000000", True, None):
        with pytest.raises(TypeError, match="timestamp must be epoch milliseconds"):
            call(rt, sqlite_stub, lambda ctx, b=bad: ctx.storage.getBookmarkForTime(b))
    with pytest.raises(BookmarkError, match="not a bookmark of this object"):
        call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark("garbage"))
    with pytest.raises(TypeError, match="bookmark must be a str"):
        call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(12))
    stale = f"{old:016x}-{0:016x}"
    with pytest.raises(BookmarkError, match="older than the 30-day recovery window"):
        call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(stale))
    future = f"{rt.now():016x}-{10**6:016x}"
    with pytest.raises(BookmarkError, match="past the newest change"):
        call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(future))
    assert call(rt, sqlite_stub, lambda ctx: ctx.storage.getBookmarkForTime(rt.now() - 30 * DAY))


@pytest.mark.parametrize(
    "method, args",
    [
        ("getCurrentBookmark", ()),
        ("getBookmarkForTime", (0,)),
        ("onNextSessionRestoreBookmark", ("x",)),
    ],
)
def test_kv_backend_does_not_support_pitr(rt, kv_stub, method, args):
    with pytest.raises(PitrNotSupported, match=f"{method}\\(\\) is not supported"):
        call(rt, kv_stub, lambda ctx: getattr(ctx.storage, method)(*args))


def test_restore_keeps_the_current_alarm(rt, sqlite_stub):
    b = call(rt, sqlite_stub, lambda ctx: ctx.storage.getCurrentBookmark())
    t = rt.now() + 10 * DAY
    call(rt, sqlite_stub, lambda ctx: ctx.storage.setAlarm(t))
    call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(b))
    restart(rt, sqlite_stub)
    assert call(rt, sqlite_stub, lambda ctx: ctx.storage.getAlarm()) == t


def test_writes_append_small_changesets_not_copies(rt, sqlite_stub):
    def grow(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE items(id INTEGER PRIMARY KEY, v)")
        for _ in range(200):
            sql.exec("INSERT INTO items(v) VALUES (?)", "x" * 4000)
        ctx.storage.kv.put("k", -1)  # creates _cf_KV: a schema change, so a checkpoint

    call(rt, sqlite_stub, grow)
    history = sqlite_stub._host.db.history
    before = len(history.timeline())
    for i in range(30):
        call(rt, sqlite_stub, lambda ctx, i=i: ctx.storage.put("k", i))
    new = history.timeline()[before:]
    assert len(new) == 30
    assert [kind for _, _, kind, _ in new] == ["changeset"] * 30
    assert max(size for *_, size in new) < 200  # bytes, while the database is ~800 KB


def test_checkpoints_by_volume_and_restore_across_them(rt, sqlite_stub):
    marks = {}
    for i in range(60):

        async def body(ctx, i=i):
            await ctx.storage.put(f"blob{i % 5}", "y" * 20_000 + str(i))
            await ctx.storage.put("k", i)
            return await ctx.storage.getCurrentBookmark()

        marks[i] = call(rt, sqlite_stub, body)
        rt.run(rt.advance(1000))
    kinds = [kind for _, _, kind, _ in sqlite_stub._host.db.history.timeline()]
    assert 1 < kinds.count("checkpoint") < 12  # by volume, not per write
    for target in (3, 31, 59):
        call(
            rt,
            sqlite_stub,
            lambda ctx, t=target: ctx.storage.onNextSessionRestoreBookmark(marks[t]),
        )
        restart(rt, sqlite_stub)
        assert call(rt, sqlite_stub, lambda ctx: ctx.storage.get("k")) == target
        assert call(rt, sqlite_stub, lambda ctx: ctx.storage.get("blob0")).endswith(
            str(target - target % 5)
        )


def test_checkpoints_larger_than_the_sql_value_limit(rt, sqlite_stub):
    def big(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE blobs(id INTEGER PRIMARY KEY, body)")
        for _ in range(800):  # about 3.2 MB, more than the 2.2 MB limit on one SQL value
            sql.exec("INSERT INTO blobs(body) VALUES (?)", "z" * 4000)

    call(rt, sqlite_stub, big)
    mark = call(rt, sqlite_stub, lambda ctx: ctx.storage.getCurrentBookmark())
    call(rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("DELETE FROM blobs WHERE id > 10"))
    call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(mark))
    restart(rt, sqlite_stub)
    count = call(
        rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("SELECT count(*) AS n FROM blobs").one()
    )
    assert count == {"n": 800}


def _history_31_days_long(rt, stub):
    """v0 at t0, v1 an hour later, then 31 days of nothing, then v2 now."""
    t0 = rt.now()
    call(rt, stub, lambda ctx: ctx.storage.put("k", "v0"))
    old = call(rt, stub, lambda ctx: ctx.storage.getCurrentBookmark())
    rt.run(rt.advance(3600_000))
    call(rt, stub, lambda ctx: ctx.storage.put("k", "v1"))
    rt.run(rt.advance(31 * DAY))
    call(rt, stub, lambda ctx: ctx.storage.put("k", "v2"))
    return t0, old


def test_bookmarks_are_checked_against_the_history_not_trusted(rt, sqlite_stub):
    # Issue 10, item 8: the time inside a bookmark was trusted, so a forged bookmark could
    # name a future time, or today's time with a sequence number from 31 days ago.
    t0, old = _history_31_days_long(rt, sqlite_stub)
    now = rt.now()
    last = sqlite_stub._host.db.history.last_seq
    old_seq = int(old.split("-")[1], 16)
    current = call(rt, sqlite_stub, lambda ctx: ctx.storage.getCurrentBookmark())
    forged = {
        f"{now + 10 * DAY:016x}-{last:016x}": "is in the future",
        "ffffffffffffffff-0000000000000001": "is in the future",
        "ffffffffffffffff-ffffffffffffffff": "is in the future",
        f"{now:016x}-{old_seq:016x}": f"the object was already past change {old_seq}",
        f"{now - 3600_000:016x}-{last:016x}": f"change {last} was made at {now}, after",
        f"{now:016x}-{last + 5:016x}": "past the newest change",
        old: "older than the 30-day recovery window",
        f"{t0:016x}-{last:016x}": "older than the 30-day recovery window",
        current + "\n": "is not a bookmark of this object",
        " " + current: "is not a bookmark of this object",
        current.upper(): "is not a bookmark of this object",
        current.replace("-", "_"): "is not a bookmark of this object",
        "": "is not a bookmark of this object",
    }
    for bookmark, reason in forged.items():
        with pytest.raises(BookmarkError, match=re.escape(reason)):
            call(
                rt, sqlite_stub, lambda ctx, b=bookmark: ctx.storage.onNextSessionRestoreBookmark(b)
            )
    restart(rt, sqlite_stub)
    assert call(rt, sqlite_stub, lambda ctx: ctx.storage.get("k")) == "v2"  # nothing restored


def test_the_oldest_reachable_state_is_the_one_at_the_window_start(rt, sqlite_stub):
    _history_31_days_long(rt, sqlite_stub)
    # 30 days ago the object held v1 (written 31 days ago, still current until just now):
    # that state is inside the window; v0, replaced 31 days ago, is not reachable.
    edge = call(rt, sqlite_stub, lambda ctx: ctx.storage.getBookmarkForTime(rt.now() - 30 * DAY))
    call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(edge))
    restart(rt, sqlite_stub)
    assert call(rt, sqlite_stub, lambda ctx: ctx.storage.get("k")) == "v1"


def test_a_pending_restore_whose_point_leaves_the_window_is_cancelled(rt, sqlite_stub):
    call(rt, sqlite_stub, lambda ctx: ctx.storage.put("k", "v1"))
    mark = call(rt, sqlite_stub, lambda ctx: ctx.storage.getCurrentBookmark())
    rt.run(rt.advance(3600_000))
    call(rt, sqlite_stub, lambda ctx: ctx.storage.put("k", "v2"))
    call(rt, sqlite_stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(mark))
    rt.run(rt.advance(31 * DAY))  # the object is not restarted within the window
    restart(rt, sqlite_stub)
    with pytest.raises(BookmarkError, match="was cancelled: bookmark .* older than the 30-day"):
        call(rt, sqlite_stub, lambda ctx: ctx.storage.get("k"))
    assert call(rt, sqlite_stub, lambda ctx: ctx.storage.get("k")) == "v2"  # not stuck
