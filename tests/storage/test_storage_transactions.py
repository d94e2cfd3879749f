"""transaction(), txn rules, transactionSync and the shared SQL/KV transaction."""

from __future__ import annotations

import pytest
from storage_helpers import call

from workbench.storage import TransactionError


def test_transaction_commits_and_returns_the_closure_value(rt, stub):
    async def body(ctx):
        async def closure(txn):
            await txn.put("a", 1)
            seen = await txn.get("a")
            await txn.put({"b": 2, "c": 3})
            await txn.delete("c")
            return seen, list(await txn.list())

        result = await ctx.storage.transaction(closure)
        return result, await ctx.storage.list()

    assert call(rt, stub, body) == ((1, ["a", "b"]), {"a": 1, "b": 2})


def test_exception_in_closure_undoes_everything_including_root_writes(rt, stub):
    class Custom(Exception):
        pass

    async def body(ctx):
        await ctx.storage.put("kept", 1)

        async def closure(txn):
            await txn.put("a", 1)
            await ctx.storage.put("root", 2)  # through ctx.storage, not txn
            await txn.delete("kept")
            raise Custom("abort")

        with pytest.raises(Custom, match="abort"):
            await ctx.storage.transaction(closure)
        return await ctx.storage.list()

    assert call(rt, stub, body) == {"kept": 1}


def test_rollback_resolves_normally_and_commits_nothing(rt, stub):
    async def body(ctx):
        async def closure(txn):
            await txn.put("a", 1)
            await ctx.storage.put("root", 1)  # through ctx.storage, before the rollback
            assert txn.rollback() is None
            txn.rollback()  # twice is fine
            return "value"

        return await ctx.storage.transaction(closure), await ctx.storage.list()

    assert call(rt, stub, body) == ("value", {})


def test_writes_after_rollback_belong_to_what_encloses_the_transaction(rt, stub):
    """rollback() ends the transaction at once (workerd: ROLLBACK TO and RELEASE of its
    savepoint), so what the closure writes afterwards through ctx.storage is kept."""

    async def body(ctx):
        async def closure(txn):
            await txn.put("a", 1)
            txn.rollback()
            await ctx.storage.put("after", 2)
            return "value"

        result = await ctx.storage.transaction(closure)
        await ctx.storage.transaction(lambda txn: txn.put("later", 3))
        return result, await ctx.storage.list()

    assert call(rt, stub, body) == ("value", {"after": 2, "later": 3})
    assert call(rt, stub, lambda ctx: ctx.storage.list()) == {"after": 2, "later": 3}


@pytest.mark.parametrize("method", ["get", "put", "list", "getAlarm", "setAlarm", "deleteAlarm"])
def test_use_after_rollback_rejects(rt, stub, method):
    args = {
        "get": ("a",),
        "put": ("a", 1),
        "list": (),
        "getAlarm": (),
        "setAlarm": (10**12 * 2,),
        "deleteAlarm": (),
    }

    async def body(ctx):
        async def closure(txn):
            txn.rollback()
            op = getattr(txn, method)(*args[method])  # no exception yet: a rejection
            with pytest.raises(
                TransactionError, match=rf"Cannot {method}\(\) on rolled back transaction"
            ):
                await op

        await ctx.storage.transaction(closure)

    call(rt, stub, body)


def test_delete_after_rollback_throws_synchronously(rt, stub):
    async def body(ctx):
        async def closure(txn):
            txn.rollback()
            with pytest.raises(
                TransactionError, match=r"Cannot delete\(\) on rolled back transaction"
            ):
                txn.delete("a")

        await ctx.storage.transaction(closure)

    call(rt, stub, body)


def test_use_after_commit_and_after_throw(rt, stub):
    async def body(ctx):
        saved = {}

        async def keep(txn):
            saved["txn"] = txn

        await ctx.storage.transaction(keep)
        txn = saved["txn"]
        with pytest.raises(TransactionError, match="already committed: did you move `txn`"):
            await txn.get("a")
        with pytest.raises(
            TransactionError,
            match=r"Cannot call delete\(\) on transaction that has already committed",
        ):
            txn.delete("a")
        with pytest.raises(TransactionError, match=r"Cannot call rollback\(\)"):
            txn.rollback()

        async def throws(txn):
            saved["t2"] = txn
            raise KeyError("x")

        with pytest.raises(KeyError):
            await ctx.storage.transaction(throws)
        with pytest.raises(TransactionError, match="rolled back transaction"):
            await saved["t2"].put("a", 1)

    call(rt, stub, body)


def test_errors_swallowed_inside_the_closure_do_not_abort(rt, stub):
    async def body(ctx):
        async def closure(txn):
            await txn.put("a", 1)
            try:
                await txn.list({"limit": 0})
            except ValueError:
                pass
            try:
                await txn.put("f", lambda: 0)
            except TypeError:
                pass

        await ctx.storage.transaction(closure)
        return await ctx.storage.list()

    assert call(rt, stub, body) == {"a": 1}


def test_delete_all_inside_a_transaction(rt, stub):
    async def body(ctx):
        async def closure(txn):
            with pytest.raises(
                TransactionError, match=r"Cannot call deleteAll\(\) within a transaction"
            ):
                txn.deleteAll()
            op = ctx.storage.deleteAll()
            await txn.put("still", 1)
            with pytest.raises(TransactionError, match="within a transaction"):
                await op

        await ctx.storage.put("old", 0)
        await ctx.storage.transaction(closure)
        return await ctx.storage.list()

    assert call(rt, stub, body) == {"old": 0, "still": 1}


def test_nested_transactions(rt, stub):
    async def body(ctx):
        async def inner_fails(txn):
            await txn.put("inner", 1)
            raise KeyError("inner")

        async def outer(txn):
            await txn.put("outer", 1)
            with pytest.raises(KeyError):
                await ctx.storage.transaction(inner_fails)
            assert not hasattr(txn, "transaction") or True
            with pytest.raises(TypeError, match="not a function"):
                txn.transaction(inner_fails)

        await ctx.storage.transaction(outer)
        first = await ctx.storage.list()

        async def inner_ok(txn):
            await txn.put("inner2", 2)

        async def outer_fails(txn):
            await ctx.storage.transaction(inner_ok)
            raise KeyError("outer")

        with pytest.raises(KeyError):
            await ctx.storage.transaction(outer_fails)
        return first, await ctx.storage.list()

    assert call(rt, stub, body) == ({"outer": 1}, {"outer": 1})


def test_transaction_sync(rt, stub):
    async def body(ctx):
        s = ctx.storage

        def fn():
            s.put("a", 1)  # an unawaited async call belongs to the transaction
            return "value"

        value = s.transactionSync(fn)

        def fails():
            s.put("b", 2)

            def nested():
                s.put("c", 3)
                raise KeyError("nested")

            with pytest.raises(KeyError):
                s.transaction_sync(nested)
            s.put("d", 4)
            raise ValueError("outer")

        with pytest.raises(ValueError):
            s.transactionSync(fails)
        return value, await s.list(), s.transactionSync(lambda: None)

    assert call(rt, stub, body) == ("value", {"a": 1}, None)


def test_transaction_sync_undoes_sql_and_kv_together(rt, sqlite_stub):
    async def body(ctx):
        s = ctx.storage
        s.sql.exec("CREATE TABLE t(x)")

        def fn():
            s.sql.exec("INSERT INTO t VALUES (1)")
            s.sql.exec("CREATE TABLE u(y)")
            s.kv.put("k", 1)
            raise RuntimeError("undo")

        with pytest.raises(RuntimeError):
            s.transactionSync(fn)
        tables = [
            r["name"]
            for r in s.sql.exec("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        ]
        return s.sql.exec("SELECT count(*) AS n FROM t").one()["n"], tables, s.kv.get("k")

    assert call(rt, sqlite_stub, body) == (0, ["t"], None)


def test_async_transaction_undoes_sql_and_kv_together(rt, sqlite_stub):
    async def body(ctx):
        s = ctx.storage
        s.sql.exec("CREATE TABLE t(x)")

        async def closure(txn):
            s.sql.exec("INSERT INTO t VALUES (1)")
            await txn.put("k", 1)
            raise RuntimeError("undo")

        with pytest.raises(RuntimeError):
            await s.transaction(closure)
        return s.sql.exec("SELECT count(*) AS n FROM t").one()["n"], await s.get("k")

    assert call(rt, sqlite_stub, body) == (0, None)


def test_sql_begin_inside_a_transaction_is_refused(rt, sqlite_stub):
    from workbench.storage import SqlError

    async def body(ctx):
        async def closure(txn):
            with pytest.raises(SqlError, match="To execute a transaction, please use"):
                ctx.storage.sql.exec("BEGIN")

        await ctx.storage.transaction(closure)

    call(rt, sqlite_stub, body)


def test_transaction_and_transaction_sync_nest_both_ways(rt, stub):
    async def body(ctx):
        s = ctx.storage

        def sync_outer():
            s.put("a", 1)
            inner = s.transaction(lambda txn: txn.put("b", 2))  # a sync closure works too
            return inner

        await s.transactionSync(sync_outer)

        async def async_outer(txn):
            await txn.put("c", 3)
            s.transactionSync(lambda: s.put("d", 4))
            raise KeyError("undo both")

        with pytest.raises(KeyError):
            await s.transaction(async_outer)
        return await s.list()

    assert call(rt, stub, body) == {"a": 1, "b": 2}
