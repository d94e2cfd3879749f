"""The point-in-time log of small KV batches, written by hand rather than by a session.

A batch that only puts and deletes a few keys records each key's value from
before the batch and its newest value, and writes the changeset SQLite's
session would have written; these tests hold the two to the same result.
"""

from __future__ import annotations

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_helpers import call

from workbench.storage import ObjectAborted
from workbench.storage.database import HAND_LOGGED_KEYS, KV_DDL, kv_changeset
from workbench.storage.views import timeline

KEYS = st.sampled_from([b"a", b"b", b"c", "é".encode(), b"k" * 200])
# the runtime stores BLOBs; the other types are what a file written otherwise may hold
VALUES = st.sampled_from([b"1", b"2", b"x" * 300, b"", "text", "é" * 70, 7, -(2**63), 2.5])
OPS = st.lists(st.tuples(KEYS, st.none() | VALUES), max_size=12)


def _changes(changeset: bytes) -> set[tuple[str, tuple, tuple]]:
    return {(c.op, c.old or (), c.new or ()) for c in apsw.Changeset.iter(changeset)}


def _rows(conn: apsw.Connection) -> dict[bytes, bytes]:
    return dict(conn.execute("SELECT key, value FROM _cf_KV").fetchall())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=OPS, ops=OPS)
def test_hand_written_changeset_is_the_sessions(start, ops):
    conn = apsw.Connection(":memory:")
    conn.execute(KV_DDL)
    for key, value in start:
        if value is not None:
            conn.execute("INSERT OR REPLACE INTO _cf_KV VALUES (?, ?)", (key, value))
    initial = _rows(conn)
    session = apsw.Session(conn, "main")
    session.attach()
    before: dict[bytes, bytes | None] = {}
    after: dict[bytes, bytes | None] = {}
    for key, value in ops:
        before.setdefault(key, initial.get(key))
        after[key] = value
        if value is None:
            conn.execute("DELETE FROM _cf_KV WHERE key = ?", (key,))
        else:
            conn.execute("INSERT OR REPLACE INTO _cf_KV VALUES (?, ?)", (key, value))
    by_session = session.changeset()
    by_hand = kv_changeset(before, after)
    assert _changes(by_hand) == _changes(by_session)
    assert (by_hand == b"") == (by_session == b"")
    replay = apsw.Connection(":memory:")
    replay.execute(KV_DDL)
    for key, value in initial.items():
        replay.execute("INSERT INTO _cf_KV VALUES (?, ?)", (key, value))
    if by_hand:
        apsw.Changeset.apply(by_hand, replay)
    assert _rows(replay) == _rows(conn)


def _kv_state(ctx):
    return dict(ctx.storage.kv.list())


def _restore(rt, stub, bookmark):
    call(rt, stub, lambda ctx: ctx.storage.onNextSessionRestoreBookmark(bookmark))
    with pytest.raises(ObjectAborted):
        call(rt, stub, lambda ctx: ctx.abort("restore"))


def test_every_kind_of_batch_restores_to_the_state_it_left(rt, sqlite_stub):
    """Small KV batches (by hand), KV mixed with SQL and transactions (hand log then
    session, concatenated), big batches (a session throughout): each bookmark gives back
    exactly the state its batch left."""
    call(rt, sqlite_stub, lambda ctx: ctx.storage.put("seed", 0))  # _cf_KV exists now
    call(rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("CREATE TABLE t(id PRIMARY KEY, v)"))

    def small(ctx):
        ctx.storage.put("a", 1)
        ctx.storage.put({"b": [2], "c": "three"})
        ctx.storage.delete("seed")
        ctx.storage.put("a", 11)  # the same key again in the batch

    def mixed(ctx):
        ctx.storage.put("a", 12)
        ctx.storage.sql.exec("INSERT INTO t VALUES (1, 'one')")
        ctx.storage.put("a", 13)  # logged by the session, after the hand-logged put
        ctx.storage.delete("b")

    def in_transaction(ctx):
        ctx.storage.put("c", "before")

        def body(txn):
            txn.put("c", "inside")
            txn.put("d", 4)
            txn.rollback()

        return ctx.storage.transaction(body)

    def big(ctx):
        ctx.storage.put("e", 5)
        for i in range(HAND_LOGGED_KEYS + 3):
            ctx.storage.put(f"many{i:03}", i)
        ctx.storage.delete([f"many{i:03}" for i in range(0, HAND_LOGGED_KEYS + 3, 2)])

    def unchanged(ctx):
        ctx.storage.put("a", 13)  # the value it already has

    marks, states = [], []
    for batch in (small, mixed, in_transaction, big, unchanged):
        call(rt, sqlite_stub, batch)
        states.append(
            (
                call(rt, sqlite_stub, _kv_state),
                call(
                    rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("SELECT * FROM t").toArray()
                ),
            )
        )
        marks.append(call(rt, sqlite_stub, lambda ctx: ctx.storage.getCurrentBookmark()))
        rt.run(rt.advance(1000))
    assert states[2][0]["c"] == "before" and "d" not in states[2][0]
    summaries = [e["summary"] for e in timeline(sqlite_stub._host)][-4:]
    assert summaries == [
        "put a, b, c · delete seed",
        "put a · delete b · t +1 row",
        "put c",
        summaries[3],  # the big batch: its keys, listed
    ]
    assert summaries[3].startswith("put e, many001, many003")
    assert marks[4].endswith(marks[3][-16:])  # putting a value back is no change: no record
    for mark, (kv, rows) in zip(marks, states, strict=True):
        _restore(rt, sqlite_stub, mark)
        assert call(rt, sqlite_stub, _kv_state) == kv
        assert (
            call(rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("SELECT * FROM t").toArray())
            == rows
        )
