"""rowsRead and rowsWritten equal the facts' table on every listed case; the billing log."""

from __future__ import annotations

import pytest
from storage_helpers import call

from workbench.storage import estimate_cost

G = [1, 1, 2, 1, 2, 3, 1, 2, 3, 4]  # g = 1 four times, g = 2 three times


def ten(sql, index=False):
    """The facts' fixture: a 10-row rowid table t(id INTEGER PRIMARY KEY, g, s)."""
    sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, g, s)")
    for i, g in enumerate(G):
        sql.exec("INSERT INTO t(g, s) VALUES (?, ?)", g, chr(ord("j") - i))
    if index:
        sql.exec("CREATE INDEX tg ON t(g)")


def five(sql, index=False):
    sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, g, s)")
    for g in [1, 2, 1, 3, 4]:
        sql.exec("INSERT INTO t(g, s) VALUES (?, 'x')", g)
    if index:
        sql.exec("CREATE INDEX tg ON t(g)")


def measure(rt, stub, setup, query, *bindings, consume=None):
    def fn(ctx):
        sql = ctx.storage.sql
        setup(sql)
        cursor = sql.exec(query, *bindings)
        if consume is None:
            cursor.toArray()
        else:
            for _ in range(consume):
                cursor.next()
        return cursor.rowsRead, cursor.rowsWritten

    return call(rt, stub, fn)


def none(sql):
    pass


def with_unique(sql):
    sql.exec("CREATE TABLE u(id INTEGER PRIMARY KEY, e UNIQUE)")
    sql.exec("INSERT INTO u(e) VALUES (1), (2), (3)")


def without_rowid(sql):
    sql.exec("CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID")
    sql.exec("INSERT INTO w VALUES ('a', 1), ('b', 2)")


def with_trigger(sql):
    sql.exec("CREATE TABLE src(x)")
    sql.exec("CREATE TABLE audit(id INTEGER PRIMARY KEY, x)")
    sql.exec("CREATE INDEX audit_x ON audit(x)")
    sql.exec("CREATE TRIGGER tr AFTER INSERT ON src BEGIN INSERT INTO audit(x) VALUES (new.x); END")


def conflicts(sql):
    sql.exec("CREATE TABLE c(k INTEGER PRIMARY KEY, v)")
    sql.exec("INSERT INTO c VALUES (1, 'a')")


def four(sql):
    sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, g, s)")
    sql.exec("INSERT INTO t(g, s) VALUES (1, 'a'), (2, 'b'), (1, 'c'), (3, 'd')")


def views_and_indexes(sql):
    ten(sql, index=True)
    sql.exec("CREATE VIEW v AS SELECT * FROM t")


# (label in the facts' table, setup, statement, bindings, consume, rowsRead, rowsWritten)
CASES = [
    ("SELECT 1", none, "SELECT 1", (), None, 0, 0),
    ("full scan", ten, "SELECT * FROM t", (), None, 10, 0),
    ("LIMIT 3", ten, "SELECT * FROM t LIMIT 3", (), None, 3, 0),
    ("exec + no consumption", ten, "SELECT * FROM t", (), 0, 1, 0),
    ("exec + 1 next()", ten, "SELECT * FROM t", (), 1, 2, 0),
    ("exec + 3 next()", ten, "SELECT * FROM t", (), 3, 4, 0),
    ("count(*) no index", ten, "SELECT count(*) FROM t", (), None, 10, 0),
    ("sum(g) no index", ten, "SELECT sum(g) FROM t", (), None, 10, 0),
    ("count(*) with an index", lambda s: ten(s, True), "SELECT count(*) FROM t", (), None, 10, 0),
    ("sum(g) with an index", lambda s: ten(s, True), "SELECT sum(g) FROM t", (), None, 10, 0),
    ("ORDER BY s LIMIT 1 (sorter)", ten, "SELECT * FROM t ORDER BY s LIMIT 1", (), None, 20, 0),
    ("ORDER BY id DESC LIMIT 2", ten, "SELECT * FROM t ORDER BY id DESC LIMIT 2", (), None, 2, 0),
    ("self-join on PK", ten, "SELECT * FROM t a JOIN t b ON a.id = b.id", (), None, 20, 0),
    ("WHERE g = 1 without index", ten, "SELECT * FROM t WHERE g = 1", (), None, 10, 0),
    ("PK lookup hit", ten, "SELECT * FROM t WHERE id = ?", (3,), None, 1, 0),
    ("PK lookup miss", ten, "SELECT * FROM t WHERE id = ?", (99,), None, 1, 0),
    ("PK range BETWEEN 3 AND 6", ten, "SELECT * FROM t WHERE id BETWEEN 3 AND 6", (), None, 5, 0),
    ("id > 8", ten, "SELECT * FROM t WHERE id > 8", (), None, 2, 0),
    (
        "secondary index g = 1",
        lambda s: ten(s, True),
        "SELECT * FROM t WHERE g = 1",
        (),
        None,
        5,
        0,
    ),
    (
        "secondary index no match",
        lambda s: ten(s, True),
        "SELECT * FROM t WHERE g = 99",
        (),
        None,
        0,
        0,
    ),
    (
        "count(*) WHERE g = 2 via index",
        lambda s: ten(s, True),
        "SELECT count(*) FROM t WHERE g = 2",
        (),
        None,
        3,
        0,
    ),
    ("unique index hit", with_unique, "SELECT * FROM u WHERE e = 2", (), None, 1, 0),
    ("unique index miss", with_unique, "SELECT * FROM u WHERE e = 9", (), None, 0, 0),
    ("WITHOUT ROWID PK hit", without_rowid, "SELECT * FROM w WHERE k = 'a'", (), None, 1, 0),
    ("WITHOUT ROWID PK miss", without_rowid, "SELECT * FROM w WHERE k = 'z'", (), None, 0, 0),
    ("CREATE TABLE", none, "CREATE TABLE n(a, b)", (), None, 1, 2),
    ("CREATE INDEX on 10 rows", ten, "CREATE INDEX tg ON t(g)", (), None, 22, 11),
    ("CREATE INDEX on 5 rows", five, "CREATE INDEX tg ON t(g)", (), None, 12, 6),
    ("INSERT of 1 row", ten, "INSERT INTO t(g, s) VALUES (1, 'x')", (), None, 0, 1),
    (
        "INSERT of 3 rows",
        ten,
        "INSERT INTO t(g, s) VALUES (1, 'x'), (2, 'y'), (3, 'z')",
        (),
        None,
        0,
        3,
    ),
    (
        "INSERT into a table with 1 index",
        lambda s: ten(s, True),
        "INSERT INTO t(g, s) VALUES (1, 'x')",
        (),
        None,
        0,
        2,
    ),
    (
        "INSERT ... SELECT of 10 generated rows",
        ten,
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) INSERT INTO t(g, s) SELECT x, 'gen' FROM c",
        (),
        None,
        21,
        10,
    ),
    ("UPDATE all 5 rows (non-indexed column)", five, "UPDATE t SET s = 'y'", (), None, 5, 5),
    ("UPDATE ... WHERE id = 1", five, "UPDATE t SET s = 'y' WHERE id = 1", (), None, 1, 1),
    ("UPDATE with no match by PK", five, "UPDATE t SET s = 'y' WHERE id = 99", (), None, 1, 0),
    (
        "UPDATE s WHERE g = 1 via index",
        lambda s: five(s, True),
        "UPDATE t SET s = 'z' WHERE g = 1",
        (),
        None,
        3,
        2,
    ),
    (
        "UPDATE g = 5 WHERE g = 1 (indexed column)",
        lambda s: five(s, True),
        "UPDATE t SET g = 5 WHERE g = 1",
        (),
        None,
        7,
        4,
    ),
    (
        "DELETE WHERE g = 5 (indexed)",
        lambda s: (five(s, True), s.exec("UPDATE t SET g = 5 WHERE g = 1")),
        "DELETE FROM t WHERE g = 5",
        (),
        None,
        3,
        2,
    ),
    ("DELETE without WHERE (4 rows)", four, "DELETE FROM t", (), None, 0, 4),
    (
        "INSERT OR REPLACE on a conflict",
        conflicts,
        "INSERT OR REPLACE INTO c VALUES (1, 'b')",
        (),
        None,
        0,
        1,
    ),
    (
        "ON CONFLICT DO UPDATE",
        conflicts,
        "INSERT INTO c VALUES (1, 'b') ON CONFLICT(k) DO UPDATE SET v = 'c'",
        (),
        None,
        0,
        1,
    ),
    (
        "INSERT OR IGNORE on a conflict",
        conflicts,
        "INSERT OR IGNORE INTO c VALUES (1, 'b')",
        (),
        None,
        0,
        0,
    ),
    ("ALTER TABLE ADD COLUMN", ten, "ALTER TABLE t ADD COLUMN extra", (), None, 6, 1),
    (
        "CREATE TRIGGER",
        ten,
        "CREATE TRIGGER tr AFTER DELETE ON t BEGIN SELECT 1; END",
        (),
        None,
        0,
        1,
    ),
    (
        "INSERT firing a trigger that inserts 1 row",
        with_trigger,
        "INSERT INTO src VALUES (1)",
        (),
        None,
        0,
        3,
    ),
    ("DROP VIEW", views_and_indexes, "DROP VIEW v", (), None, 6, 0),
    ("DROP TABLE", ten, "DROP TABLE t", (), None, 10, 0),
    ("DROP INDEX", views_and_indexes, "DROP INDEX tg", (), None, 4, 0),
    (
        "INSERT ... RETURNING 2 rows (consumed)",
        ten,
        "INSERT INTO t(g, s) VALUES (7, 'r'), (8, 's') RETURNING id",
        (),
        None,
        4,
        2,
    ),
    (
        # the facts' 10-row table; of its WHEREs, the 2-row range that runs to the end
        # (id > 8, 2 reads) gives the facts' 8: 2 + 2 collected + 2 sought + 2 returned
        "UPDATE ... RETURNING * 2 rows",
        ten,
        "UPDATE t SET s = 'r' WHERE id > 8 RETURNING *",
        (),
        None,
        8,
        2,
    ),
]


@pytest.mark.parametrize(
    "label, setup, query, bindings, consume, reads, writes", CASES, ids=[c[0] for c in CASES]
)
def test_counters_match_the_facts_table(
    rt, sqlite_stub, label, setup, query, bindings, consume, reads, writes
):
    assert measure(rt, sqlite_stub, setup, query, *bindings, consume=consume) == (reads, writes)


def test_rows_read_grows_as_the_cursor_is_consumed(rt, sqlite_stub):
    def fn(ctx):
        sql = ctx.storage.sql
        ten(sql)
        cursor = sql.exec("SELECT * FROM t")
        seen = [cursor.rowsRead]
        for _ in cursor:
            seen.append(cursor.rowsRead)
        return seen

    assert call(rt, sqlite_stub, fn) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10]


def test_multi_statement_counts_only_the_last(rt, sqlite_stub):
    def fn(ctx):
        cursor = ctx.storage.sql.exec(
            "CREATE TABLE m(x); INSERT INTO m VALUES (1), (2), (3); SELECT * FROM m"
        )
        cursor.toArray()
        return cursor.rowsRead, cursor.rowsWritten

    assert call(rt, sqlite_stub, fn) == (3, 0)


def test_every_exec_appends_one_billing_record(rt, sqlite_stub):
    def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(x)")
        sql.exec("INSERT INTO t VALUES (1), (2)")
        sql.exec("SELECT * FROM t").toArray()
        return str(ctx.id)

    oid = call(rt, sqlite_stub, fn)
    records = rt.billing.records(oid)
    assert list(records["statement"]) == [
        "CREATE TABLE t(x)",
        "INSERT INTO t VALUES (1), (2)",
        "SELECT * FROM t",
    ]
    assert list(records["rows_read"]) == [1, 0, 2] and list(records["rows_written"]) == [2, 2, 0]
    assert set(records["namespace"]) == {"Probe"} and set(records["t_ms"]) == {rt.now()}
    assert rt.billing.totals(oid) == {"statements": 3, "rows_read": 3, "rows_written": 4}
    frame = rt.billing.query(
        "SELECT sum(rows_written) AS w FROM sql_billing WHERE object_id = ?", [oid]
    )
    assert int(frame["w"][0]) == 4
    assert rt.billing.cost(oid)["total_usd"] == 0.0  # far inside the included amounts


def test_cost_estimate_uses_the_published_prices():
    assert estimate_cost(25e9, 50e6) == {
        "rows_read_usd": 0.0,
        "rows_written_usd": 0.0,
        "storage_usd": 0.0,
        "total_usd": 0.0,
    }
    got = estimate_cost(rows_read=26e9, rows_written=52e6, stored_gb_month=6)
    assert got == {
        "rows_read_usd": 1.0,
        "rows_written_usd": 2.0,
        "storage_usd": 0.2,
        "total_usd": 3.2,
    }
