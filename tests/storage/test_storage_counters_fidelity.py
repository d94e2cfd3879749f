"""rowsRead / rowsWritten beyond the facts' table: subqueries, RETURNING (consumed or not),
CREATE VIEW, DROP TABLE, scans, and the same counts from a statement's later (cached) runs."""

from __future__ import annotations

import pytest
from storage_helpers import call
from test_storage_counters import CASES, measure, ten


def with_u(sql):
    ten(sql)
    sql.exec("CREATE TABLE u(a, b)")
    sql.exec("INSERT INTO u VALUES (1, 'x'), (2, 'y'), (9, 'z')")


def four(sql):
    sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, g, s)")
    sql.exec("INSERT INTO t(g, s) VALUES (1, 'a'), (2, 'b'), (1, 'c'), (3, 'd')")


def empty(sql):
    sql.exec("CREATE TABLE e(x)")


MORE = [
    # An uncorrelated subquery runs once: the outer scan plus one pass over its table.
    ("scalar subquery", ten, "SELECT * FROM t WHERE g = (SELECT max(g) FROM t)", None, 20, 0),
    # A correlated one runs again for every outer row: 10 + 10 x 3.
    (
        "correlated subquery",
        with_u,
        "SELECT id, (SELECT count(*) FROM u WHERE u.a = t.g) AS n FROM t",
        None,
        40,
        0,
    ),
    (
        "IN (subquery) over a scan",
        with_u,
        "SELECT * FROM t WHERE g IN (SELECT a FROM u)",
        None,
        13,
        0,
    ),
    # RETURNING (issue 29, read from the statement's program): the rows come from an
    # ephemeral table the cursor steps through (its Rewind, then a Next per row); several
    # VALUES rows are stored in one first (a read each); an UPDATE of several rows collects
    # them in one (a read each, its Rewind even when empty), then seeks each row (a read).
    (
        "INSERT RETURNING, consumed",
        ten,
        "INSERT INTO t(g, s) VALUES (7, 'r'), (8, 's') RETURNING id",
        None,
        4,
        2,
    ),
    (
        "UPDATE RETURNING, consumed",
        four,
        "UPDATE t SET s = 'r' WHERE g = 1 RETURNING *",
        None,
        10,  # scan 4, collected 2, sought 2, returned 2
        2,
    ),
    (
        "UPDATE RETURNING, not consumed",
        four,
        "UPDATE t SET s = 'r' WHERE g = 1 RETURNING *",
        0,
        9,  # the returned rows' Rewind only
        2,
    ),
    (
        "INSERT RETURNING, one row",
        ten,
        "INSERT INTO t(g, s) VALUES (7, 'r') RETURNING id",
        None,
        1,
        1,
    ),
    (
        "INSERT ... SELECT RETURNING",
        ten,
        "INSERT INTO t(g, s) SELECT g, s FROM t WHERE id < 4 RETURNING id",
        None,
        10,  # the SELECT as 2k + 1 (7), then the 3 returned rows
        3,
    ),
    ("UPDATE RETURNING by key", ten, "UPDATE t SET s = 'x' WHERE id = 1 RETURNING *", None, 2, 1),
    (
        "UPDATE RETURNING, nothing matched",
        ten,
        "UPDATE t SET s = 'x' WHERE id > 99 RETURNING *",
        None,
        3,  # the range's probe, the empty collection's Rewind, the empty result's Rewind
        0,
    ),
    ("DELETE RETURNING all, two read", four, "DELETE FROM t RETURNING id", 2, 11, 4),
    ("DELETE RETURNING, one row read", four, "DELETE FROM t WHERE id <= 3 RETURNING id", 1, 9, 3),
    # A view (or virtual table) is made like a table: a placeholder row, then rewritten.
    ("CREATE VIEW", ten, "CREATE VIEW v AS SELECT g FROM t", None, 1, 2),
    ("CREATE VIRTUAL TABLE", empty, "CREATE VIRTUAL TABLE f USING fts5(body)", None, 1, 2),
    (
        "CREATE VIEW IF NOT EXISTS, already there",
        lambda s: (ten(s), s.exec("CREATE VIEW v AS SELECT 1")),
        "CREATE VIEW IF NOT EXISTS v AS SELECT 2",
        None,
        0,
        0,
    ),
    # DROP TABLE reads the rows the table held, however the table is named.
    ("DROP TABLE main.t", ten, "DROP TABLE main.t", None, 10, 0),
    ('DROP TABLE "t"', ten, 'DROP TABLE "t"', None, 10, 0),
    ("DROP TABLE of an empty table", empty, "DROP TABLE e", None, 0, 0),
    ("DROP TABLE IF EXISTS, missing", empty, "DROP TABLE IF EXISTS nope", None, 0, 0),
    # Scans read as far as the cursor went (one row ahead), a filtered scan the whole table.
    ("scan with LIMIT, not consumed", ten, "SELECT * FROM t LIMIT 5", 0, 1, 0),
    ("filtered scan, consumed", ten, "SELECT * FROM t WHERE s > 'c'", None, 10, 0),
    # the Rewind onto an empty table counts (workerd's patch counts every Rewind)
    ("scan of an empty table", empty, "SELECT * FROM e", None, 1, 0),
    ("filtered scan of an empty table", empty, "SELECT * FROM e WHERE x > 1", None, 1, 0),
    # a range seek by < or > counts even when it finds nothing; an equality seek does not
    ("rowid range, nothing found", ten, "SELECT * FROM t WHERE id > 99", None, 1, 0),
    ("DELETE by rowid range, nothing found", ten, "DELETE FROM t WHERE id > 99", None, 1, 0),
]


@pytest.mark.parametrize(
    "label, setup, query, consume, reads, writes", MORE, ids=[c[0] for c in MORE]
)
def test_counters_beyond_the_facts_table(
    rt, sqlite_stub, label, setup, query, consume, reads, writes
):
    assert measure(rt, sqlite_stub, setup, query, consume=consume) == (reads, writes)


def test_unconsumed_insert_returning_counts_before_its_commit_fails(rt, sqlite_stub):
    from workbench.storage import StorageWriteFailed

    seen = []

    def fn(ctx):
        ten(ctx.storage.sql)
        cursor = ctx.storage.sql.exec("INSERT INTO t(g, s) VALUES (7, 'r'), (8, 's') RETURNING id")
        seen.append((cursor.rowsRead, cursor.rowsWritten))

    with pytest.raises(StorageWriteFailed):
        call(rt, sqlite_stub, fn)
    assert seen == [(3, 2)]  # both rows stored and counted; one read by the cursor


SELECTS = [c for c in CASES if c[2].startswith("SELECT")]


@pytest.mark.parametrize("case", SELECTS, ids=[c[0] for c in SELECTS])
def test_a_statements_later_runs_count_like_its_first(rt, sqlite_stub, case):
    """The first run of a text is fully modelled; later runs take the cached formula."""
    _, setup, query, bindings, consume, reads, writes = case

    def fn(ctx):
        sql = ctx.storage.sql
        setup(sql)
        seen = []
        for _ in range(3):
            cursor = sql.exec(query, *bindings)
            if consume is None:
                cursor.toArray()
            else:
                for _ in range(consume):
                    cursor.next()
            seen.append((cursor.rowsRead, cursor.rowsWritten))
        return seen

    assert call(rt, sqlite_stub, fn) == [(reads, writes)] * 3


def test_a_cached_statement_counts_again_after_the_schema_changes(rt, sqlite_stub):
    def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, g)")
        insert = "INSERT INTO t(g) VALUES (?)"
        before = [sql.exec(insert, i).rowsWritten for i in range(3)]
        sql.exec("CREATE INDEX tg ON t(g)")
        after = [sql.exec(insert, i).rowsWritten for i in range(3)]
        update = "UPDATE t SET g = ? WHERE id = ?"
        changed = [sql.exec(update, 5, i).rowsWritten for i in (1, 2)]
        sql.exec("DROP INDEX tg")
        plain = [sql.exec(update, 6, i).rowsWritten for i in (1, 2)]
        return before, after, changed, plain

    assert call(rt, sqlite_stub, fn) == ([1, 1, 1], [2, 2, 2], [2, 2], [1, 1])


def test_billing_records_settle_when_their_cursor_is_read(rt, sqlite_stub):
    def fn(ctx):
        sql = ctx.storage.sql
        ten(sql)
        for _ in range(2):  # the second run takes the cached path
            cursor = sql.exec("SELECT * FROM t WHERE id > ?", 4)
            cursor.next()
            cursor.toArray()
        sql.exec("SELECT * FROM t LIMIT 3")  # never read: counted as far as it went
        return str(ctx.id)

    oid = call(rt, sqlite_stub, fn)
    records = rt.billing.records(oid)
    assert list(records["rows_read"])[-3:] == [6, 6, 1]


def test_hot_path_still_checks_bindings(rt, sqlite_stub):
    from workbench.storage import StorageLimitError, TextEncodingError

    def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("CREATE TABLE t(x)")
        q = "INSERT INTO t VALUES (?)"
        sql.exec(q, 1)
        sql.exec(q, 2)  # known text now
        with pytest.raises(TypeError, match="SQL binding 1 has type object"):
            sql.exec(q, object())
        with pytest.raises(TextEncodingError, match="SQL binding 1"):
            sql.exec(q, "\ud800")
        with pytest.raises(OverflowError, match="SQL binding 1"):
            sql.exec(q, 2**64)
        with pytest.raises(StorageLimitError):
            sql.exec(q, *range(101))
        sql.exec(q, True)
        sql.exec(q, b"\x00")
        return sql.exec("SELECT x FROM t").toArray()

    assert call(rt, sqlite_stub, fn) == [{"x": 1}, {"x": 2}, {"x": 1}, {"x": b"\x00"}]


def test_a_statement_that_reads_no_table_behaves_the_same_on_its_later_runs(rt, sqlite_stub):
    """Issue 29: later runs of a statement that reads no table (``SELECT ?``) take all
    their rows at once; what the cursor shows, the counters and the billing are unchanged."""

    def fn(ctx):
        sql = ctx.storage.sql
        seen = []
        for i in range(3):  # the first run is fully checked, the later ones take the hot path
            many = sql.exec("SELECT ? AS a, 'x' AS b UNION ALL SELECT 2, 'y'", i)
            first = many.next()
            rest = many.raw().toArray()
            one = sql.exec("SELECT ? AS v", i).one()
            empty = sql.exec("SELECT 1 AS n WHERE ?", 0)
            seen.append(
                (
                    first,
                    rest,
                    one,
                    many.next(),
                    many.columnNames,
                    (many.rowsRead, many.rowsWritten),
                    empty.toArray(),
                    empty.columnNames,
                    (empty.rowsRead, empty.rowsWritten),
                    sql.exec("SELECT ?", i).toArray(),
                )
            )
        return str(ctx.id), seen

    oid, seen = call(rt, sqlite_stub, fn)
    for i, run in enumerate(seen):
        assert run == (
            {"done": False, "value": {"a": i, "b": "x"}},
            [[2, "y"]],
            {"v": i},
            {"done": True},
            ["a", "b"],
            (0, 0),
            [],
            ["n"],
            (0, 0),
            [{"?": i}],
        )
    records = rt.billing.records(oid)
    assert len(records["statement"]) == 12  # one record per statement, every run
    assert set(records["rows_read"]) == {0} and set(records["rows_written"]) == {0}


def test_a_statement_that_reads_no_table_still_refuses_bad_bindings(rt, sqlite_stub):
    from workbench.storage import SqlError

    def fn(ctx):
        sql = ctx.storage.sql
        sql.exec("SELECT ?", 1).toArray()  # the first run: checked, then cached
        out = []
        for bad in ((object(),), (2**70,), ()):
            try:
                sql.exec("SELECT ?", *bad)
            except (TypeError, OverflowError, SqlError) as exc:
                out.append(type(exc).__name__)
        out.append(sql.exec("SELECT ?", True).toArray())  # bound as 1, as before
        return out

    assert call(rt, sqlite_stub, fn) == ["TypeError", "OverflowError", "SqlError", [{"?": 1}]]
