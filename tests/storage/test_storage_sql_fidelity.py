"""SQL fidelity through ``ctx.storage``: multi-statement exec, SQL inside transactions, what
a user sees of the database, and unconsumed RETURNING cursors at the end of an event."""

from __future__ import annotations

import pytest
from storage_helpers import KV_SQL, Probe, call

from workbench.storage import Runtime, SqlError, StorageWriteFailed, TransactionError


def statements_billed(rt, oid):
    records = rt.billing.records(oid)
    return list(
        zip(records["statement"], records["rows_read"], records["rows_written"], strict=True)
    )


# -- several statements in one exec ------------------------------------------------------------
def test_multi_statement_exec_runs_and_bills_every_statement(rt, sqlite_stub):
    def fn(ctx):
        cursor = ctx.storage.sql.exec(
            "CREATE TABLE m(x); INSERT INTO m VALUES (1), (2), (3); SELECT * FROM m WHERE x > ?",
            1,
        )
        return str(ctx.id), cursor.toArray(), cursor.columnNames

    oid, rows, names = call(rt, sqlite_stub, fn)
    assert rows == [{"x": 2}, {"x": 3}] and names == ["x"]  # the cursor shows the last one
    assert statements_billed(rt, oid) == [
        ("CREATE TABLE m(x);", 1, 2),
        ("INSERT INTO m VALUES (1), (2), (3);", 0, 3),
        ("SELECT * FROM m WHERE x > ?", 3, 0),
    ]
    assert rt.billing.totals(oid) == {"statements": 3, "rows_read": 4, "rows_written": 5}


def test_multi_statement_bindings_belong_to_the_last_statement(rt, sqlite_stub):
    def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE b(x)")
        with pytest.raises(SqlError, match="only the last statement can have parameters"):
            sql.exec("INSERT INTO b VALUES (?); SELECT 1", 5)
        last = sql.exec("INSERT INTO b VALUES (1); INSERT INTO b VALUES (?)", 2)
        return sql.exec("SELECT x FROM b").toArray(), last.rowsWritten

    assert call(rt, sqlite_stub, fn) == ([{"x": 1}, {"x": 2.0}], 1)


def test_multi_statement_is_not_atomic(rt, sqlite_stub):
    def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE a(x UNIQUE)")
        with pytest.raises(SqlError, match="UNIQUE constraint failed"):
            sql.exec("INSERT INTO a VALUES (1); INSERT INTO a VALUES (1)")
        return sql.exec("SELECT x FROM a").toArray()

    assert call(rt, sqlite_stub, fn) == [{"x": 1}]


@pytest.mark.parametrize(
    ("later", "message"),
    [
        ("BEGIN", "please use the state.storage.transaction()"),
        ("SAVEPOINT s", "please use the state.storage.transaction()"),
        ("INSERT INTO missing VALUES (1)", "no such table: missing: SQLITE_ERROR"),
        ("SELECT ?; SELECT 1", "only the last statement can have parameters"),
        (";", "SQL code did not contain a statement."),
        ("-- a trailing comment", "SQL code did not contain a statement."),
        ("CREATE TABLE u(x); ALTER TABLE u RENAME TO _cf_KV", "not authorized: SQLITE_AUTH"),
    ],
)
def test_statements_before_a_refused_one_stay_run(rt, sqlite_stub, later, message):
    """The platform prepares and runs each statement in turn, so one it refuses (even one it
    could have refused from the text alone) leaves the earlier ones' writes in place."""

    def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(x)")
        with pytest.raises(SqlError, match=message):
            sql.exec(f"INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); {later}", 7)
        return sql.exec("SELECT x FROM t").toArray()

    assert call(rt, sqlite_stub, fn) == [{"x": 1}, {"x": 2}]
    again = call(rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("SELECT x FROM t").toArray())
    assert again == [{"x": 1}, {"x": 2}]  # committed with the event


def test_a_refused_first_statement_runs_nothing(rt, sqlite_stub):
    def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(x)")
        for text in ("BEGIN; INSERT INTO t VALUES (1)", "; INSERT INTO t VALUES (1)"):
            with pytest.raises(SqlError):
                sql.exec(text)
        return sql.exec("SELECT count(*) AS n FROM t").one()["n"]

    assert call(rt, sqlite_stub, fn) == 0


# -- SQL inside transactions ---------------------------------------------------------------------
def test_sql_inside_a_transaction_sees_and_keeps_its_writes(rt, sqlite_stub):
    async def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v)")

        async def closure(txn):
            sql.exec("INSERT INTO t VALUES (1, 'a')")
            await txn.put("k", 1)
            sql.exec("CREATE TABLE inner_t(x)")
            sql.exec("INSERT INTO inner_t VALUES (?)", 7)
            return sql.exec("SELECT count(*) AS n FROM t").one()["n"], await txn.get("k")

        inside = await ctx.storage.transaction(closure)
        return inside, sql.exec("SELECT v FROM t").toArray()

    assert call(rt, sqlite_stub, fn) == ((1, 1), [{"v": "a"}])
    after = call(
        rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("SELECT x FROM inner_t").toArray()
    )
    assert after == [{"x": 7}]  # committed with the event


def test_a_throwing_transaction_undoes_its_sql_and_the_cache_forgets_it(rt, sqlite_stub):
    async def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
        sql.exec("INSERT INTO t VALUES (?, ?)", 1, "kept")

        async def closure(txn):
            sql.exec("INSERT INTO t VALUES (?, ?)", 2, "lost")
            sql.exec("CREATE TABLE gone(x)")
            sql.exec("INSERT INTO gone VALUES (?)", 1)  # now a known text
            raise RuntimeError("boom")

        with pytest.raises(RuntimeError, match="boom"):
            await ctx.storage.transaction(closure)
        with pytest.raises(SqlError, match="no such table: gone"):
            sql.exec("INSERT INTO gone VALUES (?)", 1)
        return sql.exec("SELECT v FROM t").toArray()

    assert call(rt, sqlite_stub, fn) == [{"v": "kept"}]


def test_rollback_and_transaction_sync_undo_sql(rt, sqlite_stub):
    async def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(x)")

        async def closure(txn):
            sql.exec("INSERT INTO t VALUES (1)")
            txn.rollback()
            return "resolved"

        resolved = await ctx.storage.transaction(closure)

        def sync_body():
            sql.exec("INSERT INTO t VALUES (2)")
            raise ValueError("no")

        with pytest.raises(ValueError):
            ctx.storage.transactionSync(sync_body)
        kept = ctx.storage.transactionSync(lambda: sql.exec("INSERT INTO t VALUES (3)").rowsWritten)
        return resolved, kept, sql.exec("SELECT x FROM t").toArray()

    assert call(rt, sqlite_stub, fn) == ("resolved", 1, [{"x": 3}])


def test_sql_after_rollback_inside_the_closure_and_in_a_later_transaction_stays(rt, sqlite_stub):
    async def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(x)")

        async def closure(txn):
            sql.exec("INSERT INTO t VALUES (1)")  # undone by the rollback
            txn.rollback()
            sql.exec("INSERT INTO t VALUES (2)")  # after it: the transaction is over
            return sql.exec("SELECT x FROM t").toArray()

        inside = await ctx.storage.transaction(closure)

        async def later(txn):
            sql.exec("INSERT INTO t VALUES (3)")

        await ctx.storage.transaction(later)
        return inside, sql.exec("SELECT x FROM t").toArray()

    assert call(rt, sqlite_stub, fn) == ([{"x": 2}], [{"x": 2}, {"x": 3}])
    again = call(rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("SELECT x FROM t").toArray())
    assert again == [{"x": 2}, {"x": 3}]


def test_a_nested_rollback_hands_later_writes_to_the_outer_transaction(rt, sqlite_stub):
    async def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(x)")

        async def inner(txn):
            sql.exec("INSERT INTO t VALUES ('inner')")
            txn.rollback()
            sql.exec("INSERT INTO t VALUES ('after inner rollback')")

        async def outer(txn):
            sql.exec("INSERT INTO t VALUES ('outer')")
            await ctx.storage.transaction(inner)
            return [r["x"] for r in sql.exec("SELECT x FROM t")]

        seen = await ctx.storage.transaction(outer)

        async def outer_throws(txn):
            await ctx.storage.transaction(inner)
            raise ValueError("undo the outer one")

        with pytest.raises(ValueError):
            await ctx.storage.transaction(outer_throws)
        return seen, [r["x"] for r in sql.exec("SELECT x FROM t")]

    seen, final = call(rt, sqlite_stub, fn)
    assert seen == ["outer", "after inner rollback"]
    assert final == ["outer", "after inner rollback"]  # the thrown outer one took its own


def test_rolling_back_an_outer_transaction_while_a_nested_one_runs_throws(rt, sqlite_stub):
    async def fn(ctx):
        async def outer(txn):
            async def inner(inner_txn):
                await inner_txn.put("k", 1)
                with pytest.raises(TransactionError, match="nested transaction is still running"):
                    txn.rollback()

            await ctx.storage.transaction(inner)
            return await txn.get("k")

        return await ctx.storage.transaction(outer), await ctx.storage.get("k")

    assert call(rt, sqlite_stub, fn) == (1, 1)


# -- what a user sees of the database ------------------------------------------------------------
def test_table_list_shows_only_what_the_runtime_shows(rt, sqlite_stub):
    async def fn(ctx):
        sql = ctx.storage.sql
        fresh = sql.exec("PRAGMA table_list").toArray()
        await ctx.storage.put("k", 1)
        sql.exec("CREATE TABLE mine(x)")
        listed = sql.exec("SELECT schema, name FROM pragma_table_list ORDER BY name").toArray()
        return fresh, listed

    fresh, listed = call(rt, sqlite_stub, fn)
    assert [(r["schema"], r["name"]) for r in fresh] == [
        ("main", "sqlite_schema"),
        ("temp", "sqlite_temp_schema"),
    ]
    assert listed == [
        {"schema": "main", "name": "_cf_KV"},
        {"schema": "main", "name": "mine"},
        {"schema": "main", "name": "sqlite_schema"},
        {"schema": "temp", "name": "sqlite_temp_schema"},
    ]


@pytest.mark.parametrize(
    "statement, error",
    [
        ("SELECT * FROM log", "no such table: log"),
        ("SELECT * FROM state", "no such table: state"),
        ("SELECT * FROM _cf_pitr.log", "no such table: _cf_pitr.log"),
        ("SELECT name FROM _cf_pitr.sqlite_master", "no such table: _cf_pitr.sqlite_master"),
        ("PRAGMA database_list", "not authorized"),
    ],
)
def test_the_change_log_is_nowhere_to_be_found(rt, sqlite_stub, statement, error):
    async def fn(ctx):
        await ctx.storage.put("k", 1)  # the log has records now
        with pytest.raises(SqlError, match=error):
            ctx.storage.sql.exec(statement)
        return ctx.storage.sql.exec("PRAGMA table_info(log)").toArray()

    assert call(rt, sqlite_stub, fn) == []


def test_kv_table_schema_text_is_the_runtimes(rt, sqlite_stub):
    async def fn(ctx):
        await ctx.storage.put("k", 1)
        return ctx.storage.sql.exec("SELECT type, name, tbl_name, sql FROM sqlite_master").one()

    assert call(rt, sqlite_stub, fn) == {
        "type": "table",
        "name": "_cf_KV",
        "tbl_name": "_cf_KV",
        "sql": KV_SQL,
    }


def test_analyze_lists_only_sqlite_stat1(rt, sqlite_stub):
    """The platform's SQLite has no STAT4: ANALYZE makes sqlite_stat1 only."""

    async def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, g)")
        sql.exec("CREATE INDEX tg ON t(g)")
        sql.exec("INSERT INTO t(g) SELECT value % 3 FROM json_each('[1,2,3,4,5,6,7,8,9]')")
        sql.exec("ANALYZE")
        names = [r["name"] for r in sql.exec("SELECT name FROM sqlite_master ORDER BY name")]
        stats = sql.exec("SELECT tbl, idx FROM sqlite_stat1 ORDER BY idx").toArray()
        with pytest.raises(SqlError, match="no such table: sqlite_stat4"):
            sql.exec("SELECT * FROM sqlite_stat4")
        sql.exec("PRAGMA optimize")
        sql.exec("ANALYZE t")
        again = [r["name"] for r in sql.exec("SELECT name FROM sqlite_master ORDER BY name")]
        await ctx.storage.deleteAll()
        return names, stats, again, sql.exec("SELECT name FROM sqlite_master").toArray()

    names, stats, again, after_delete_all = call(rt, sqlite_stub, fn)
    assert names == again == ["sqlite_stat1", "t", "tg"]
    assert stats == [{"tbl": "t", "idx": "tg"}]
    assert after_delete_all == []  # deleteAll leaves sqlite_master empty, as the facts say


def test_data_version_is_two_and_does_not_move_for_the_objects_own_writes(rt, sqlite_stub):
    """PRAGMA data_version reads 2, as on the platform (its database is in WAL mode, whose
    first read counts as a change), and moves only for commits by *other* connections; the
    object's database has one, so its own writes, transactions and deleteAll leave it."""

    async def fn(ctx):
        sql = ctx.storage.sql

        def version():
            return sql.exec("PRAGMA data_version").one()["data_version"]

        seen = [version()]
        sql.exec("CREATE TABLE t(x)")
        await ctx.storage.put("k", 1)
        seen.append(version())
        await ctx.storage.transaction(lambda txn: txn.put("j", 2))
        await ctx.storage.sync()
        seen.append(version())
        await ctx.storage.deleteAll()
        seen.append(version())
        return seen

    first = call(rt, sqlite_stub, fn)
    later = call(rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("PRAGMA data_version").one())
    assert first == [2] * 4 and later == {"data_version": 2}


def test_data_version_is_two_in_a_data_folder_and_after_a_restart(tmp_path):
    def version(ctx):
        ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS t(x)")
        ctx.storage.sql.exec("INSERT INTO t VALUES (1)")
        return ctx.storage.sql.exec("SELECT * FROM pragma_data_version").one()["data_version"]

    seen = []
    for _ in range(2):  # the second runtime opens the file the first one wrote
        rt = Runtime(path=tmp_path)
        ns = rt.namespace(Probe, storage="sqlite")
        seen.append(call(rt, ns.get(ns.id_from_name("on disk")), version))
        rt.close()
    assert seen == [2, 2]


# -- unconsumed RETURNING at the end of an event ---------------------------------------------------
@pytest.mark.parametrize(
    "statement",
    ["UPDATE r SET x = x + 10 RETURNING x", "DELETE FROM r WHERE x > 1 RETURNING x"],
)
def test_unconsumed_update_or_delete_returning_does_not_fail_the_event(rt, sqlite_stub, statement):
    def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE r(x)")
        sql.exec("INSERT INTO r VALUES (1), (2), (3)")
        cursor = sql.exec(statement)  # read one row ahead, never consumed
        return cursor.rowsWritten

    written = call(rt, sqlite_stub, fn)
    rows = call(rt, sqlite_stub, lambda ctx: ctx.storage.sql.exec("SELECT x FROM r").toArray())
    if statement.startswith("UPDATE"):
        assert written == 3 and rows == [{"x": 11}, {"x": 12}, {"x": 13}]
    else:
        assert written == 2 and rows == [{"x": 1}]


def test_returning_rows_are_read_after_an_await_and_still_block_drop(rt, sqlite_stub):
    async def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE r(x)")
        sql.exec("INSERT INTO r VALUES (1), (2)")
        cursor = sql.exec("UPDATE r SET x = -x RETURNING x")
        await ctx.storage.sync()  # a commit happens while the cursor is open
        with pytest.raises(SqlError, match="database table is locked: SQLITE_LOCKED"):
            sql.exec("DROP TABLE r")
        rows = cursor.toArray()
        sql.exec("DROP TABLE r")
        return rows

    assert call(rt, sqlite_stub, fn) == [{"x": -1}, {"x": -2}]


def test_unconsumed_insert_returning_still_fails_the_commit(rt, sqlite_stub):
    def fn(ctx):
        ctx.storage.sql.exec("CREATE TABLE r(x)")
        ctx.storage.sql.exec("INSERT INTO r VALUES (1), (2) RETURNING x").next()

    with pytest.raises(StorageWriteFailed, match="internal error"):
        call(rt, sqlite_stub, fn)
    master = call(
        rt,
        sqlite_stub,
        lambda ctx: ctx.storage.sql.exec("SELECT name FROM sqlite_master").toArray(),
    )
    assert master == []  # every write of that request was lost
