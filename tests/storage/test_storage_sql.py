"""The SQL API: cursor, multi-statement rules, refused statements, limits, sizes, bindings."""

from __future__ import annotations

import re

import pytest
from storage_helpers import KV_SQL, call

from workbench.storage import (
    SqlError,
    SqlNotEnabled,
    StorageLimitError,
    StorageWriteFailed,
    TextEncodingError,
)
from workbench.storage.names import HIDDEN_TABLES, is_hidden


def sql_call(rt, stub, fn):
    return call(rt, stub, lambda ctx: fn(ctx.storage.sql))


def make_table(sql, n=3):
    sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
    for i in range(1, n + 1):
        sql.exec("INSERT INTO t(v) VALUES (?)", f"v{i}")


def test_cursor_next_to_array_and_iteration_share_one_position(rt, sqlite_stub):
    def fn(sql):
        make_table(sql, 5)
        c = sql.exec("SELECT id FROM t ORDER BY id")
        first = c.next()
        raw = c.raw()
        second = raw.next()
        third = next(iter(c))
        rest = c.toArray()
        return first, second, third, rest, c.toArray(), c.next(), raw.toArray()

    assert sql_call(rt, sqlite_stub, fn) == (
        {"done": False, "value": {"id": 1}},
        {"done": False, "value": [2]},
        {"id": 3},
        [{"id": 4}, {"id": 5}],
        [],
        {"done": True},
        [],
    )


def test_one_and_its_two_errors(rt, sqlite_stub):
    def fn(sql):
        make_table(sql, 3)
        out = [
            sql.exec("SELECT v FROM t WHERE id = 2").one(),
            sql.exec("SELECT v FROM t WHERE id = 2").raw().one(),
        ]
        for q in ("SELECT v FROM t WHERE id = 9", "SELECT v FROM t"):
            with pytest.raises(SqlError) as info:
                sql.exec(q).one()
            out.append(str(info.value))
        c = sql.exec("SELECT v FROM t")
        c.next()
        with pytest.raises(SqlError, match="multiple results"):
            c.one()  # two rows left
        with pytest.raises(SqlError, match="no results"):
            c.one()  # the first one() consumed the rest
        return out

    assert sql_call(rt, sqlite_stub, fn) == [
        {"v": "v2"},
        ["v2"],
        "Expected exactly one result from SQL query, but got no results.",
        "Expected exactly one result from SQL query, but got multiple results.",
    ]


def test_column_names(rt, sqlite_stub):
    def fn(sql):
        make_table(sql, 1)
        return [
            sql.exec("CREATE TABLE u(a)").columnNames,
            sql.exec("INSERT INTO u VALUES (1)").columnNames,
            sql.exec("UPDATE u SET a = 2").columnNames,
            sql.exec("SELECT id, v FROM t WHERE id = 99").columnNames,
            sql.exec("SELECT 1+1, 'a' || 'b'").columnNames,
            sql.exec("SELECT ?1, :x, ?", 1, 2, 3).columnNames,
        ]

    assert sql_call(rt, sqlite_stub, fn) == [
        [],
        [],
        [],
        ["id", "v"],
        ["1+1", "'a' || 'b'"],
        ["?1", ":x", "?"],
    ]


def test_duplicate_column_names_object_keeps_last_raw_keeps_all(rt, sqlite_stub):
    def fn(sql):
        c = sql.exec("SELECT 1 AS a, 2 AS a")
        return c.columnNames, sql.exec("SELECT 1 AS a, 2 AS a").toArray(), c.raw().toArray()

    assert sql_call(rt, sqlite_stub, fn) == (["a", "a"], [{"a": 2}], [[1, 2]])


def test_multiple_statements_run_in_order_cursor_shows_last_not_atomic(rt, sqlite_stub):
    def fn(sql):
        c = sql.exec(
            "CREATE TABLE m(x); INSERT INTO m VALUES (1); INSERT INTO m VALUES (2); SELECT x FROM m;"
        )
        rows = c.toArray()
        with pytest.raises(SqlError, match="no such table"):
            sql.exec("INSERT INTO m VALUES (3); SELECT * FROM missing")
        return rows, sql.exec("SELECT count(*) AS n FROM m").one()["n"]

    assert sql_call(rt, sqlite_stub, fn) == ([{"x": 1}, {"x": 2}], 3)


@pytest.mark.parametrize(
    "query, message",
    [
        ("", "SQL code did not contain a statement."),
        ("   ", "SQL code did not contain a statement."),
        (";", "SQL code did not contain a statement."),
        ("-- only a comment", "SQL code did not contain a statement."),
        ("SELECT 1;;", "SQL code did not contain a statement."),
        ("SELECT 1; -- trailing", "SQL code did not contain a statement."),
        ("SELECT ?; SELECT 2", "only the last statement can have parameters"),
        ("SELECT nope", "no such column: nope at offset 7: SQLITE_ERROR"),
        ("SELEC 1", 'near "SELEC": syntax error at offset 0: SQLITE_ERROR'),
    ],
)
def test_statement_errors(rt, sqlite_stub, query, message):
    with pytest.raises(SqlError, match=message.replace("?", r"\?").replace("(", r"\(")):
        sql_call(rt, sqlite_stub, lambda sql: sql.exec(query))


def test_single_trailing_semicolon_is_fine(rt, sqlite_stub):
    assert sql_call(rt, sqlite_stub, lambda sql: sql.exec("SELECT 1 AS one;").one()) == {"one": 1}


def test_binding_count_mismatch(rt, sqlite_stub):
    for args in [(), (1, 2)]:
        with pytest.raises(SqlError, match="Wrong number of parameter bindings for SQL query."):
            sql_call(rt, sqlite_stub, lambda sql, a=args: sql.exec("SELECT ?", *a))


@pytest.mark.parametrize(
    "statement",
    [
        "BEGIN",
        "BEGIN TRANSACTION",
        "BEGIN IMMEDIATE",
        "COMMIT",
        "END",
        "ROLLBACK",
        "SAVEPOINT x",
        "RELEASE x",
        "ROLLBACK TO x",
        "SELECT 1; BEGIN",
    ],
)
def test_transaction_control_is_refused(rt, sqlite_stub, statement):
    with pytest.raises(
        SqlError,
        match=r"please use the state.storage.transaction\(\) or state.storage.transactionSync\(\)",
    ):
        sql_call(rt, sqlite_stub, lambda sql: sql.exec(statement))


@pytest.mark.parametrize(
    "statement",
    [
        "ATTACH DATABASE ':memory:' AS other",
        "DETACH DATABASE main",
        "CREATE TEMP TABLE tt(x)",
        "CREATE TEMPORARY VIEW tv AS SELECT 1",
        "CREATE VIRTUAL TABLE r USING rtree(id, a, b)",
        "CREATE VIRTUAL TABLE f4 USING fts4(body)",
        "PRAGMA integrity_check",
        "PRAGMA journal_mode",
        "PRAGMA user_version",
        "PRAGMA user_version = 3",
        "PRAGMA page_size",
        "PRAGMA synchronous",
        "PRAGMA writable_schema = 1",
        "PRAGMA compile_options",
        "PRAGMA no_such_pragma",
        "PRAGMA table_info(_cf_KV)",
        "CREATE TABLE _cf_mine(x)",
    ],
)
def test_refused_statements(rt, sqlite_stub, statement):
    with pytest.raises(SqlError, match="not authorized|prohibited"):
        sql_call(rt, sqlite_stub, lambda sql: sql.exec(statement))


def test_hidden_kv_table_is_listed_but_unreadable(rt, sqlite_stub):
    async def body(ctx):
        sql = ctx.storage.sql
        before = sql.exec("SELECT name FROM sqlite_master").toArray()
        await ctx.storage.put("k", 1)
        await ctx.storage.delete("k")
        listed = sql.exec("SELECT name, sql FROM sqlite_master").toArray()
        errors = []
        for q in (
            "SELECT key FROM _cf_KV",
            "SELECT value FROM _cf_KV",
            "INSERT INTO _cf_KV VALUES ('a', x'00')",
            "DELETE FROM _cf_KV",
            "DROP TABLE _cf_KV",
            "CREATE INDEX i ON _cf_KV(value)",
        ):
            try:
                sql.exec(q)
            except SqlError as exc:
                errors.append(str(exc))
        return before, listed, errors

    before, listed, errors = call(rt, sqlite_stub, body)
    assert before == []
    assert listed == [
        {
            "name": "_cf_KV",
            "sql": KV_SQL,
        }
    ]
    assert errors[0] == "access to _cf_KV.key is prohibited: SQLITE_AUTH"
    assert errors[1] == "access to _cf_KV.value is prohibited: SQLITE_AUTH"
    assert all(e.startswith("not authorized") for e in errors[2:]) and len(errors) == 6


def test_reserved_prefix_is_case_sensitive(rt, sqlite_stub):
    def fn(sql):
        sql.exec("CREATE TABLE _CF_upper(x)")
        sql.exec("CREATE TABLE _Cf_mixed(x)")
        with pytest.raises(SqlError, match="not authorized"):
            sql.exec("CREATE INDEX _cf_idx ON _CF_upper(x)")
        return sorted(r["name"] for r in sql.exec("SELECT name FROM sqlite_master"))

    assert sql_call(rt, sqlite_stub, fn) == ["_CF_upper", "_Cf_mixed"]


# Issue 10, item 7: SQLite resolves names case-insensitively, whatever the quoting and with
# or without a schema, so every spelling of a hidden name must be refused like the plain one.
HIDDEN_NAME_SPELLINGS = [
    # read
    "SELECT * FROM _CF_KV",
    "SELECT key FROM main._Cf_Kv",
    'SELECT * FROM "_CF_KV"',
    "SELECT * FROM [_cf_kv]",
    "SELECT * FROM `_CF_kv`",
    "SELECT * FROM '_CF_KV'",
    'SELECT * FROM "MAIN"."_CF_KV"',
    "SELECT count(*) FROM _CF_KV",
    "SELECT (SELECT value FROM main._cf_kv LIMIT 1)",
    "WITH x AS (SELECT * FROM _CF_KV) SELECT * FROM x",
    "SELECT * FROM _CF_METADATA",
    "CREATE TABLE copy AS SELECT * FROM _CF_KV",
    "INSERT INTO t SELECT key FROM _CF_KV",
    # write
    "INSERT INTO _CF_KV VALUES ('a', x'00')",
    "INSERT INTO main.\"_cf_kv\" VALUES ('a', x'00')",
    "REPLACE INTO [_CF_KV] VALUES ('k', x'69')",
    "INSERT INTO '_CF_KV' VALUES ('a', x'00')",
    "UPDATE _CF_KV SET value = x'69'",
    "UPDATE `_cf_kv` SET key = 'other'",
    "DELETE FROM _CF_KV",
    "DELETE FROM '_CF_KV'",
    "UPDATE _CF_METADATA SET value = 1",
    # schema
    "DROP TABLE _CF_KV",
    "DROP TABLE IF EXISTS main._Cf_Kv",
    'DROP TABLE "_CF_METADATA"',
    "ALTER TABLE _CF_KV ADD COLUMN z",
    "ALTER TABLE _CF_KV RENAME TO mine",
    'ALTER TABLE main."_CF_KV" RENAME COLUMN key TO k',
    "CREATE TABLE _CF_KV(x)",
    "CREATE TABLE main.'_cf_kv'(x)",
    "CREATE TABLE IF NOT EXISTS _Cf_MetaData(x)",
    "CREATE INDEX i ON _CF_KV(value)",
    "CREATE TRIGGER tr AFTER INSERT ON _CF_KV BEGIN SELECT 1; END",
    "CREATE TRIGGER tr AFTER INSERT ON t BEGIN DELETE FROM _CF_KV; END",
    "CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO \"_cf_kv\" VALUES (new.x, x'00'); END",
    "CREATE VIEW v AS SELECT * FROM _CF_KV",
    "CREATE VIEW _CF_KV AS SELECT 1",
    "ALTER TABLE t RENAME TO _CF_KV",
    "ALTER TABLE main.t RENAME TO '_cf_metadata'",
    "ALTER TABLE t RENAME TO _cf_mine",
    "CREATE TABLE x(a); ALTER TABLE x RENAME TO [_Cf_Kv]",
    # inspect
    "PRAGMA table_info(_CF_KV)",
    "PRAGMA table_info('_cf_kv')",
    'PRAGMA main.table_xinfo("_CF_KV")',
    "PRAGMA index_list(_CF_KV)",
    "PRAGMA foreign_key_list(_Cf_Kv)",
    "SELECT * FROM pragma_table_info('_CF_KV')",
    # attach
    "ATTACH DATABASE ':memory:' AS _CF_PITR2",
    "ATTACH ':memory:' AS mine",
    "DETACH DATABASE _CF_PITR",
    'DETACH "_cf_pitr"',
]


@pytest.mark.parametrize("statement", HIDDEN_NAME_SPELLINGS)
def test_hidden_names_are_refused_in_any_case_quoting_or_schema(rt, sqlite_stub, statement):
    async def body(ctx):
        await ctx.storage.put({"k": "value", "other": 2})
        await ctx.storage.setAlarm(rt.now() + 3_600_000)  # creates _cf_METADATA
        ctx.storage.sql.exec("CREATE TABLE t(x)")
        schema = ctx.storage.sql.exec("SELECT type, name, sql FROM sqlite_master").toArray()
        with pytest.raises(SqlError) as info:
            ctx.storage.sql.exec(statement)
        after = ctx.storage.sql.exec("SELECT type, name, sql FROM sqlite_master").toArray()
        return info.value, schema, after

    error, schema, after = call(rt, sqlite_stub, body)
    assert error.sqlite_code == "SQLITE_AUTH"
    assert re.fullmatch(
        r"not authorized: SQLITE_AUTH|access to \S+ is prohibited: SQLITE_AUTH", str(error)
    )
    # nothing was created, renamed or dropped by the refused statement; statements before it
    # in the same exec have run and stay (a multi-statement exec is not atomic)
    earlier = [{"type": "table", "name": "x", "sql": "CREATE TABLE x(a)"}]
    if not statement.startswith("CREATE TABLE x(a);"):
        earlier = []
    assert after == schema + earlier

    async def kv_after(ctx):
        await ctx.storage.put("new", [1])
        return await ctx.storage.get("k"), await ctx.storage.list(), await ctx.storage.getAlarm()

    value, listed, alarm = call(rt, sqlite_stub, kv_after)
    assert (value, listed) == ("value", {"k": "value", "new": [1], "other": 2})
    assert alarm is not None


@pytest.mark.parametrize(
    "statement",
    [
        "CREATE TABLE _CF_KV(key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID",
        "CREATE TABLE _Cf_MeTaDaTa(key TEXT PRIMARY KEY, value) WITHOUT ROWID",
        "CREATE VIEW [_cf_kv] AS SELECT 'k' AS key, x'69' AS value",
        "CREATE INDEX _CF_KV ON t(x)",
        "CREATE TABLE mine(key TEXT PRIMARY KEY, value BLOB); ALTER TABLE mine RENAME TO _CF_KV",
    ],
)
def test_hidden_names_cannot_be_taken_before_the_storage_creates_them(rt, sqlite_stub, statement):
    def take(ctx):
        ctx.storage.sql.exec("CREATE TABLE t(x)")
        with pytest.raises(SqlError, match="not authorized: SQLITE_AUTH"):
            ctx.storage.sql.exec(statement)

    call(rt, sqlite_stub, take)

    async def use(ctx):
        await ctx.storage.put("k", 1)
        await ctx.storage.setAlarm(rt.now() + 1000)
        names = [r["name"] for r in ctx.storage.sql.exec("SELECT name FROM sqlite_master")]
        return await ctx.storage.get("k"), await ctx.storage.list(), sorted(names)

    # a statement before the refused one in the same exec has run and stays (not atomic)
    mine = []
    if statement.startswith("CREATE TABLE mine"):
        mine = ["mine", "sqlite_autoindex_mine_1"]
    assert call(rt, sqlite_stub, use) == (
        1,
        {"k": 1},
        sorted(["_cf_KV", "_cf_METADATA", "t", *mine]),
    )


def test_every_table_the_storage_creates_is_a_hidden_name(rt, sqlite_stub):
    async def body(ctx):
        await ctx.storage.put("k", 1)
        await ctx.storage.setAlarm(rt.now() + 1000)
        return [r["name"] for r in ctx.storage.sql.exec("SELECT name FROM sqlite_master")]

    names = call(rt, sqlite_stub, body)
    assert sorted(names) == sorted(HIDDEN_TABLES)
    assert all(is_hidden(n.upper()) and is_hidden(n.lower()) for n in names)


def test_allowed_pragmas_and_statements(rt, sqlite_stub):
    def fn(sql):
        make_table(sql, 2)
        sql.exec("CREATE INDEX tv ON t(v)")
        out = {
            "table_info": [r["name"] for r in sql.exec("PRAGMA table_info(t)")],
            "main.table_info": len(sql.exec("PRAGMA main.table_info(t)").toArray()),
            "pragma fn": len(sql.exec("SELECT * FROM pragma_table_info('t')").toArray()),
            "index_list": [r["name"] for r in sql.exec("PRAGMA index_list(t)")],
            "foreign_keys": sql.exec("PRAGMA foreign_keys").one()["foreign_keys"],
            "quick_check": sql.exec("PRAGMA quick_check").one()["quick_check"],
        }
        for q in (
            "PRAGMA defer_foreign_keys = ON",
            "PRAGMA case_sensitive_like = 1",
            "PRAGMA recursive_triggers = 1",
            "PRAGMA optimize",
            "PRAGMA data_version",
            "PRAGMA table_xinfo(t)",
            "PRAGMA foreign_key_list(t)",
            "ANALYZE",
            "REINDEX",
            "EXPLAIN SELECT 1",
            "EXPLAIN QUERY PLAN SELECT * FROM t",
        ):
            sql.exec(q).toArray()
        out["json"] = sql.exec("SELECT json_extract('{\"a\": 5}', '$.a') AS a").one()["a"]
        out["math"] = sql.exec("SELECT sqrt(16) AS r").one()["r"]
        sql.exec("CREATE VIRTUAL TABLE docs USING fts5(body)")
        sql.exec("INSERT INTO docs VALUES ('hello world')")
        out["fts5"] = sql.exec("SELECT count(*) AS n FROM docs WHERE docs MATCH 'hello'").one()["n"]
        out["stat1"] = sql.exec(
            "SELECT count(*) AS n FROM sqlite_master WHERE name = 'sqlite_stat1'"
        ).one()["n"]
        return out

    assert sql_call(rt, sqlite_stub, fn) == {
        "table_info": ["id", "v"],
        "main.table_info": 2,
        "pragma fn": 2,
        "index_list": ["tv"],
        "foreign_keys": 1,
        "quick_check": "ok",
        "json": 5,
        "math": 4.0,
        "fts5": 1,
        "stat1": 1,
    }


@pytest.mark.parametrize(
    "query, message",
    [
        ("VACUUM", "cannot VACUUM from within a transaction: SQLITE_ERROR"),
        ("SELECT sqlite_version()", "not authorized to use function: sqlite_version"),
        ("SELECT load_extension('x')", "not authorized"),
        ("SELECT * FROM sqlite_dbpage", "no such table"),
        ("SELECT * FROM generate_series(1, 3)", "no such table"),
    ],
)
def test_other_refusals(rt, sqlite_stub, query, message):
    with pytest.raises(SqlError, match=message):
        sql_call(rt, sqlite_stub, lambda sql: sql.exec(query))


def test_sql_limits(rt, sqlite_stub):
    def fn(sql):
        sql.exec("SELECT 1 -- " + "x" * (100_000 - 12))  # exactly 100,000 bytes
        errors = []
        with pytest.raises(
            SqlError, match="statement too long .*100001 bytes; the limit is 100000.*SQLITE_TOOBIG"
        ):
            sql.exec("SELECT 1 -- " + "x" * (100_000 - 11))
        placeholders = ",".join("?" * 100)
        assert len(sql.exec(f"SELECT {placeholders}", *range(100)).raw().one()) == 100
        with pytest.raises(StorageLimitError, match="SQL bindings is 101; the limit is 100"):
            sql.exec(f"SELECT {placeholders},?", *range(101))
        with pytest.raises(SqlError, match="variable number must be between"):
            sql.exec("SELECT ?101", 1)
        cols = ",".join(f"c{i}" for i in range(101))
        with pytest.raises(SqlError, match="too many columns on w2"):
            sql.exec(f"CREATE TABLE w2({cols})")
        with pytest.raises(SqlError, match="too many columns in result set"):
            sql.exec("SELECT " + ",".join(["1"] * 101))
        assert sql.exec("SELECT length(?) AS n", "x" * 2_200_000).one() == {"n": 2_200_000}
        with pytest.raises(SqlError, match="string or blob too big: SQLITE_TOOBIG"):
            sql.exec("SELECT length(?)", "é" * 1_100_001)
        return errors

    assert sql_call(rt, sqlite_stub, fn) == []


def test_database_size_follows_pages_in_use(rt, sqlite_stub):
    async def body(ctx):
        s, sizes = ctx.storage, {}
        sql = s.sql
        sizes["fresh"] = sql.databaseSize
        sql.exec("SELECT 1")
        sizes["after select"] = sql.databaseSize
        sql.exec("CREATE TABLE big(x)")
        sizes["one table"] = sql.databaseSize
        sql.exec("INSERT INTO big VALUES (?)", "x" * 1_000_000)
        sizes["1 MB row"] = sql.database_size
        sql.exec("DELETE FROM big")
        sizes["deleted"] = sql.databaseSize
        sql.exec("DROP TABLE big")
        sizes["dropped"] = sql.databaseSize
        await s.put("v", b"x" * 100_000)
        sizes["100 KB value"] = sql.databaseSize
        await s.setAlarm(10**12 * 2)
        sizes["alarm"] = sql.databaseSize
        await s.deleteAll()
        sizes["deleteAll keeps alarm table"] = sql.databaseSize
        return sizes

    sizes = call(rt, sqlite_stub, body)
    assert sizes["fresh"] == sizes["after select"] == 4096
    assert sizes["one table"] == 8192
    assert 1_000_000 < sizes["1 MB row"] < 1_020_000 and sizes["1 MB row"] % 4096 == 0
    assert sizes["deleted"] == 8192 and sizes["dropped"] == 4096
    assert 100_000 < sizes["100 KB value"] <= 110_592
    assert sizes["alarm"] == sizes["100 KB value"] + 4096
    assert sizes["deleteAll keeps alarm table"] == 8192


def test_sql_text_and_bindings_that_are_not_utf8_are_refused(rt, sqlite_stub):
    # Issue 10, item 9: text enters SQLite as UTF-8; a lone surrogate used to escape as a
    # raw UnicodeEncodeError from the driver.
    def fn(sql):
        sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        errors = []
        for query, bindings in (
            ("INSERT INTO t(v) VALUES (?)", ("a\ud800b",)),
            ("INSERT INTO t(v) VALUES (?2)", ("fine", "\udfff")),
            ("INSERT INTO t(v) VALUES ('\ud83d')", ()),
            ("INSERT INTO t(v) VALUES (1); INSERT INTO t(v) VALUES ('\udc00')", ()),
        ):
            with pytest.raises(TextEncodingError) as info:
                sql.exec(query, *bindings)
            errors.append(str(info.value))
        sql.exec("INSERT INTO t(v) VALUES (?)", "caf\u00e9 \U0001f600")
        return errors, sql.exec("SELECT v FROM t").raw().toArray()

    errors, rows = sql_call(rt, sqlite_stub, fn)
    assert errors == [
        "SQL binding 1 holds a lone surrogate (U+D800) at character 2, which cannot be encoded "
        "as UTF-8; SQLite stores text as UTF-8, so it was refused",
        "SQL binding 2 holds a lone surrogate (U+DFFF) at character 1, which cannot be encoded "
        "as UTF-8; SQLite stores text as UTF-8, so it was refused",
        "SQL text holds a lone surrogate (U+D83D) at character 27, which cannot be encoded as "
        "UTF-8; SQLite reads SQL as UTF-8, so it was refused",
        "SQL text holds a lone surrogate (U+DC00) at character 56, which cannot be encoded as "
        "UTF-8; SQLite reads SQL as UTF-8, so it was refused",
    ]
    assert rows == [["caf\u00e9 \U0001f600"]]  # nothing of the refused calls was written


def test_bindings_and_result_types(rt, sqlite_stub):
    def fn(sql):
        row = sql.exec(
            "SELECT typeof(?1) AS a, typeof(?2) AS b, typeof(?3) AS c, typeof(?4) AS d, typeof(?5) AS e, ?5 AS ev, "
            "typeof(?6) AS f, ?7 AS g, ?8 AS h, 9007199254740993 AS big",
            None,
            1,
            1.5,
            "s",
            True,
            b"\x00\x01",
            bytearray(b"z"),
            memoryview(b"mv"),
        ).one()
        return row

    assert sql_call(rt, sqlite_stub, fn) == {
        "a": "null",
        "b": "integer",
        "c": "real",
        "d": "text",
        "e": "integer",
        "ev": 1,
        "f": "blob",
        "g": b"z",
        "h": b"mv",
        "big": 9007199254740993,
    }


@pytest.mark.parametrize("bad", [[1, 2], {"a": 1}, object(), 2**64])
def test_unsupported_bindings_are_refused(rt, sqlite_stub, bad):
    with pytest.raises((TypeError, OverflowError), match="binding 1"):
        sql_call(rt, sqlite_stub, lambda sql: sql.exec("SELECT ?", bad))


def test_strings_with_nul_and_infinity(rt, sqlite_stub):
    def fn(sql):
        return sql.exec("SELECT ? AS s, 9e999 AS inf", "\x00a").one()

    assert sql_call(rt, sqlite_stub, fn) == {"s": "\x00a", "inf": float("inf")}


def test_query_must_be_a_string(rt, sqlite_stub):
    with pytest.raises(TypeError, match="query must be a str"):
        sql_call(rt, sqlite_stub, lambda sql: sql.exec(123))


def test_constraint_errors_name_the_extended_code(rt, sqlite_stub):
    def fn(sql):
        sql.exec("CREATE TABLE p(id INTEGER PRIMARY KEY)")
        sql.exec("CREATE TABLE c(pid REFERENCES p(id))")
        with pytest.raises(SqlError) as fk:
            sql.exec("INSERT INTO c VALUES (7)")
        sql.exec("INSERT INTO p VALUES (1)")
        with pytest.raises(SqlError) as pk:
            sql.exec("INSERT INTO p VALUES (1)")
        return str(fk.value), str(pk.value)

    fk, pk = sql_call(rt, sqlite_stub, fn)
    assert (
        fk
        == "FOREIGN KEY constraint failed: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_FOREIGNKEY)"
    )
    assert pk.endswith("SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)")


def test_writes_happen_in_exec_even_if_cursor_unread(rt, sqlite_stub):
    def fn(sql):
        make_table(sql, 0)
        sql.exec("INSERT INTO t(v) VALUES ('x')")
        return sql.exec("SELECT count(*) AS n FROM t").one()["n"]

    assert sql_call(rt, sqlite_stub, fn) == 1


def test_open_cursor_sees_later_writes_and_blocks_drop(rt, sqlite_stub):
    def fn(sql):
        make_table(sql, 4)
        c = sql.exec("SELECT id FROM t ORDER BY id")
        first = c.next()["value"]
        sql.exec("DELETE FROM t WHERE id = 3")
        with pytest.raises(SqlError, match="database table is locked: SQLITE_LOCKED"):
            sql.exec("DROP TABLE t")
        rest = c.toArray()
        sql.exec("DROP TABLE t")  # the cursor is finished now
        return first, rest

    assert sql_call(rt, sqlite_stub, fn) == ({"id": 1}, [{"id": 2}, {"id": 4}])


def test_unconsumed_returning_makes_the_commit_fail_and_loses_the_request(rt, sqlite_stub):
    async def body(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE r(x)")
        await ctx.storage.put("k", 1)
        sql.exec("INSERT INTO r VALUES (1), (2) RETURNING x")  # not consumed
        return "never delivered"

    with pytest.raises(StorageWriteFailed, match="internal error; reference = "):
        call(rt, sqlite_stub, body)
    tables = call(
        rt,
        sqlite_stub,
        lambda ctx: ctx.storage.sql.exec("SELECT name FROM sqlite_master").toArray(),
    )
    assert tables == [] and call(rt, sqlite_stub, lambda ctx: ctx.storage.get("k")) is None

    def consumed(ctx):
        ctx.storage.sql.exec("CREATE TABLE r(x)")
        return ctx.storage.sql.exec("INSERT INTO r VALUES (1), (2) RETURNING x").toArray()

    assert call(rt, sqlite_stub, consumed) == [{"x": 1}, {"x": 2}]


def test_sql_on_kv_backend(rt, kv_stub):
    assert call(rt, kv_stub, lambda ctx: ctx.storage.sql is not None)
    with pytest.raises(SqlNotEnabled, match="SQL is not enabled"):
        call(rt, kv_stub, lambda ctx: ctx.storage.sql.exec("SELECT 1"))
    with pytest.raises(SqlNotEnabled):
        call(rt, kv_stub, lambda ctx: ctx.storage.sql.databaseSize)


def test_delete_all_drops_sql_tables_and_frees_pages():
    from storage_helpers import Probe

    from workbench.storage import Runtime

    rt = Runtime(compatibility_date="2026-03-01")  # deleteAll also deletes the alarm
    ns = rt.namespace(Probe)
    stub = ns.get(ns.id_from_name("d"))

    async def body(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(x); CREATE INDEX tx ON t(x); CREATE VIEW v AS SELECT * FROM t")
        sql.exec("INSERT INTO t VALUES (?)", "x" * 50_000)
        await ctx.storage.put("k", 1)
        await ctx.storage.setAlarm(rt.now() + 1000)
        before = sql.databaseSize
        await ctx.storage.deleteAll()
        return before, sql.exec("SELECT name FROM sqlite_master").toArray(), sql.databaseSize

    before, master, after = call(rt, stub, body)
    assert before > 50_000 and master == [] and after == 4096


def test_alarm_metadata_table_is_listed_unreadable_and_stays(rt, sqlite_stub):
    async def body(ctx):
        sql = ctx.storage.sql
        await ctx.storage.setAlarm(10**12 * 2)
        await ctx.storage.deleteAlarm()
        names = [r["name"] for r in sql.exec("SELECT name FROM sqlite_master")]
        with pytest.raises(SqlError, match="access to _cf_METADATA.key is prohibited: SQLITE_AUTH"):
            sql.exec("SELECT key FROM _cf_METADATA")
        return names, sql.databaseSize

    assert call(rt, sqlite_stub, body) == (["_cf_METADATA"], 8192)


def test_list_with_none_options_is_plain_list(rt, stub):
    async def body(ctx):
        await ctx.storage.put({"b": 1, "a": 2})
        return list(await ctx.storage.list(None))

    assert call(rt, stub, body) == ["a", "b"]


@pytest.mark.parametrize(
    "statement, args",
    [
        ("SELECT value FROM _cf_KV WHERE key = ?", (b"k",)),
        ("INSERT OR REPLACE INTO _cf_KV VALUES (?, ?)", (b"k", b"x")),
        ("PRAGMA main.schema_version", ()),
        ("SELECT value FROM _cf_METADATA WHERE key = 'alarm'", ()),
    ],
)
def test_runtime_statements_in_the_cache_do_not_bypass_the_authorizer(
    rt, sqlite_stub, statement, args
):
    async def body(ctx):
        ctx.storage.sql.exec("SELECT 1")  # the SQL API (and its authorizer) is set up first
        await ctx.storage.put("k", 1)  # the runtime prepares (and caches) its own statements
        await ctx.storage.setAlarm(10**12 * 2)
        await ctx.storage.get("k")
        await ctx.storage.getAlarm()
        for _ in range(2):
            with pytest.raises(SqlError, match="prohibited|not authorized"):
                ctx.storage.sql.exec(statement, *args)

    call(rt, sqlite_stub, body)
