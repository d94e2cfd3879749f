"""rowsRead as SQLite's virtual machine steps: a filtered scan read partway, ``IN`` lists
that drive key lookups, and ``EXISTS`` subqueries (issue 13).

The expected numbers follow the facts' rule (``shared/facts/do-storage.md``, "rowsRead /
rowsWritten"): a row counts each time a cursor lands on it, including the one-row
read-ahead, and a seek by rowid counts 1 whether or not it finds its row. The fixture is
the facts' 10-row table, whose ``g`` column is 1, 1, 2, 1, 2, 3, 1, 2, 3, 4 (g = 1 at ids
1, 2, 4 and 7).
"""

from __future__ import annotations

import pytest
from storage_helpers import call
from test_storage_counters import measure, ten


def with_u(sql):
    ten(sql)
    sql.exec("CREATE TABLE u(a, b)")
    sql.exec("INSERT INTO u VALUES (1, 'x'), (2, 'y'), (9, 'z')")


PARTWAY = [
    # exec steps to the first match (id 1): one row landed on.
    ("filtered scan, not consumed", "SELECT * FROM t WHERE g = 1", 0, 1),
    # one next(): the read-ahead is the second match (id 2).
    ("filtered scan, one next()", "SELECT * FROM t WHERE g = 1", 1, 2),
    # two next(): the read-ahead is the third match, id 4, so rows 1..4 were stepped on.
    ("filtered scan, two next()", "SELECT * FROM t WHERE g = 1", 2, 4),
    # three next(): the read-ahead is id 7.
    ("filtered scan, three next()", "SELECT * FROM t WHERE g = 1", 3, 7),
    # four next(): no fifth match, so the scan ran to the end of the table.
    ("filtered scan, all rows", "SELECT * FROM t WHERE g = 1", 4, 10),
    # g = 4 is only at id 10: even the first step crosses the whole table.
    ("filtered scan, match at the end", "SELECT * FROM t WHERE g = 4", 0, 10),
    # LIMIT 2 stops the VM on the second match (id 2) without a step further.
    ("filtered scan with LIMIT, consumed", "SELECT * FROM t WHERE g = 1 LIMIT 2", None, 2),
    # LIMIT 3 stops on the third match, id 4.
    ("filtered scan with LIMIT 3, consumed", "SELECT * FROM t WHERE g = 1 LIMIT 3", None, 4),
    # LIMIT 9 is never reached: the scan runs to the end.
    ("filtered scan, LIMIT not reached", "SELECT * FROM t WHERE g = 1 LIMIT 9", None, 10),
]


@pytest.mark.parametrize("label, query, consume, reads", PARTWAY, ids=[c[0] for c in PARTWAY])
def test_a_filtered_scan_counts_how_far_the_vm_stepped(
    rt, sqlite_stub, label, query, consume, reads
):
    assert measure(rt, sqlite_stub, ten, query, consume=consume) == (reads, 0)


def test_a_partly_read_filtered_scan_is_billed_as_far_as_it_went(rt, sqlite_stub):
    def fn(ctx):
        sql = ctx.storage.sql
        ten(sql)
        cursor = sql.exec("SELECT * FROM t WHERE g = 1")
        cursor.next()
        cursor.next()  # read-ahead now on id 4; the cursor is closed when the request ends
        return str(ctx.id)

    oid = call(rt, sqlite_stub, fn)
    assert list(rt.billing.records(oid)["rows_read"])[-1] == 4


def ten_indexed(sql):
    ten(sql, True)


STEPPED = [
    # IN lists that drive a key lookup (issue 29: counted as workerd's patched SQLite does,
    # which steps the list's ephemeral index too): the list's distinct values are stepped
    # through (3), then one rowid seek per value, hit or miss (3): 6.
    ("rowid IN list", ten, "SELECT * FROM t WHERE id IN (1, 3, 3, 42)", 6),
    # the list is built by scanning u (3 rows), stepped (3), then a seek per value 1, 2, 9.
    ("rowid IN (subquery)", with_u, "SELECT * FROM t WHERE id IN (SELECT a FROM u)", 9),
    # through an index: the list (2), g = 1 is 4 rows + a step onto g = 2, g = 3 is 2 rows +
    # a step onto 4.
    ("index IN list", ten_indexed, "SELECT * FROM t WHERE g IN (1, 3)", 10),
    # a value the index does not hold lands on nothing (the list still counts 2).
    ("index IN list, one miss", ten_indexed, "SELECT * FROM t WHERE g IN (1, 7)", 7),
    # EXISTS, uncorrelated: u is scanned to its first match (a = 2 is its 2nd row), then t.
    (
        "EXISTS, uncorrelated",
        with_u,
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE a = 2)",
        12,
    ),
    # no row: all of u is scanned and the outer scan never runs.
    (
        "EXISTS, uncorrelated, empty",
        with_u,
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE a = 5)",
        3,
    ),
    (
        "NOT EXISTS, uncorrelated",
        with_u,
        "SELECT * FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE a = 5)",
        13,
    ),
    # in the select list: a = 9 is u's 3rd row.
    ("SELECT EXISTS", with_u, "SELECT EXISTS (SELECT 1 FROM u WHERE a = 9)", 3),
    # correlated by rowid: one seek per outer row, hit or miss (10 + 10).
    (
        "EXISTS, correlated by rowid",
        ten,
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM t AS p WHERE p.id = t.g * 3)",
        20,
    ),
    # correlated on u.a: SQLite builds an automatic index over u once (3), then each outer
    # row's seek lands on a match for g = 1 (4 rows) and g = 2 (3 rows): 10 + 3 + 7.
    (
        "EXISTS, correlated, automatic index",
        with_u,
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.g)",
        20,
    ),
    # correlated by an inequality: each outer row scans u to its first a > g
    # (g = 1: 2 rows; g = 2, 3, 4: 3 rows): 10 + 4*2 + 3*3 + 2*3 + 3.
    (
        "EXISTS, correlated scan",
        with_u,
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a > t.g)",
        36,
    ),
    # NOT EXISTS stays a subquery run per outer row, stopping at its first match
    # (g = 1: 1 row, g = 2: 2 rows, g = 3 and 4: all 3): 10 + 4 + 6 + 6 + 3.
    (
        "NOT EXISTS, correlated",
        with_u,
        "SELECT * FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.a = t.g)",
        29,
    ),
]


@pytest.mark.parametrize("label, setup, query, reads", STEPPED, ids=[c[0] for c in STEPPED])
def test_lookups_and_exists_count_as_the_vm_steps(rt, sqlite_stub, label, setup, query, reads):
    assert measure(rt, sqlite_stub, setup, query) == (reads, 0)


def test_an_in_list_beside_the_key_lookup_does_not_multiply_it(rt, sqlite_stub):
    """``id = 3`` drives the one rowid seek; ``g IN (...)`` only filters the row it finds."""
    query = "SELECT * FROM t WHERE id = 3 AND g IN (1, 2, 3)"
    assert measure(rt, sqlite_stub, ten, query) == (1, 0)


BOUND = [
    # parameters inside the IN list: the distinct bound values (3, 42) stepped, then sought.
    ("rowid IN (?, ?, ?)", ten, "SELECT * FROM t WHERE id IN (?, ?, ?)", (3, 3, 42), 4),
    # through the index, as the literal list (1, 3): 2 + (4 + 1) + (2 + 1).
    ("index IN (?, ?)", ten_indexed, "SELECT * FROM t WHERE g IN (?, ?)", (1, 3), 10),
    # a bound subquery: u scanned once (3), the a values whose b <> 'z' (1, 2) stepped and
    # sought (2 + 2).
    (
        "rowid IN (subquery with ?)",
        with_u,
        "SELECT * FROM t WHERE id IN (SELECT a FROM u WHERE b <> ?)",
        ("z",),
        7,
    ),
    # uncorrelated EXISTS with a bound value: u to its 2nd row, then all of t (2 + 10).
    (
        "EXISTS (... = ?), found",
        with_u,
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE a = ?)",
        (2,),
        12,
    ),
    # no row for 5: all of u (3) and t never runs.
    (
        "EXISTS (... = ?), empty",
        with_u,
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE a = ?)",
        (5,),
        3,
    ),
    # a parameter before the subquery and one inside it: t (10), then for the g >= 2 rows
    # u up to its first a > g - 1 (g = 2 at ids 3, 5, 8: 2 rows each; g = 3 at ids 6, 9 and
    # g = 4 at id 10: 3 rows each): 10 + 6 + 6 + 3.
    (
        "correlated EXISTS, ? outside and inside",
        with_u,
        "SELECT * FROM t WHERE g >= ? AND EXISTS (SELECT 1 FROM u WHERE u.a > t.g + ?)",
        (2, -1),
        25,
    ),
    # a bound LIMIT stops the filtered scan on its 3rd match (id 4), as a literal one does.
    ("filtered scan, LIMIT ?", ten, "SELECT * FROM t WHERE g = ? LIMIT ?", (1, 3), 4),
]


@pytest.mark.parametrize("label, setup, query, bindings, reads", BOUND, ids=[c[0] for c in BOUND])
def test_parameters_inside_lists_and_subqueries_are_bound_in_the_count(
    rt, sqlite_stub, label, setup, query, bindings, reads
):
    assert measure(rt, sqlite_stub, setup, query, *bindings) == (reads, 0)


def test_a_parameter_before_a_filtered_scan_does_not_shift_the_count(rt, sqlite_stub):
    """``?`` in the select list: the scan's own ``?`` is the second binding. Two next()
    calls leave the read-ahead on the third g = 1 row, id 4."""
    query = "SELECT ? AS tag, * FROM t WHERE g = ?"
    assert measure(rt, sqlite_stub, ten, query, "x", 1, consume=2) == (4, 0)


SEVERAL = [
    # two EXISTS made join loops before t, in text order: u to its 2nd row (a = 2), u to
    # its 3rd (a = 9), then all of t: 2 + 3 + 10.
    (
        "EXISTS AND EXISTS, both found",
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE a = 2)"
        " AND EXISTS (SELECT 1 FROM u WHERE a = 9)",
        15,
    ),
    # the first finds no row in its 3: the second and t never run.
    (
        "EXISTS AND EXISTS, first empty",
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE a = 5)"
        " AND EXISTS (SELECT 1 FROM u WHERE a = 9)",
        3,
    ),
    # the plan runs the inequality (a scan of u) before the equality (an automatic index):
    # t (10); u scanned to its first a > 3g, 3 rows for every g, true for g = 1, 2 only
    # (30); the index built once (3) and one matching seek for each of those 7 rows (7).
    (
        "correlated EXISTS AND EXISTS, in plan order",
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.g)"
        " AND EXISTS (SELECT 1 FROM u WHERE u.a > t.g * 3)",
        50,
    ),
    # two correlated subqueries, the second only for rows the first let through: t (10);
    # u to its first a = g (g = 1: 1 row, 4 times; g = 2: 2 rows, 3 times; g = 3, 4: all
    # 3, 3 times): 19; then for g = 3, 4 (3 rows) u to a > g + 5, never found: 9.
    (
        "NOT EXISTS AND NOT EXISTS, correlated",
        "SELECT * FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.a = t.g)"
        " AND NOT EXISTS (SELECT 1 FROM u WHERE u.a > t.g + 5)",
        38,
    ),
    # a plain term, then per g > 1 row (6 rows) the scan of u to a > g (3 each: 18), then
    # the uncorrelated a = 2 through an automatic index: built once (3), 6 matching seeks.
    (
        "plain AND EXISTS AND EXISTS",
        "SELECT * FROM t WHERE g > 1 AND EXISTS (SELECT 1 FROM u WHERE a = 2)"
        " AND EXISTS (SELECT 1 FROM u WHERE u.a > t.g)",
        37,
    ),
    # the AND inside BETWEEN joins no terms: u to a = 2 (2 rows, found), all of t (10), then
    # for the 5 rows with g in 2..3, u to its first a = g (g = 2: 2 rows, 3 times; g = 3:
    # all 3, twice): 2 + 10 + 12.
    (
        "BETWEEN AND EXISTS AND NOT EXISTS",
        "SELECT * FROM t WHERE g BETWEEN 2 AND 3 AND EXISTS (SELECT 1 FROM u WHERE a = 2)"
        " AND NOT EXISTS (SELECT 1 FROM u WHERE u.a = t.g)",
        24,
    ),
    # ORed, the subqueries run at t's first row, each at most once: a = 5 (3 rows, none),
    # then a = 9 (3 rows); t is stepped through in full: 10 + 3 + 3.
    (
        "EXISTS OR EXISTS, second found",
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE a = 5)"
        " OR EXISTS (SELECT 1 FROM u WHERE a = 9)",
        16,
    ),
    # the first holds (u's 1st row), so the second never runs: 10 + 1.
    (
        "EXISTS OR EXISTS, first found",
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE a = 1)"
        " OR EXISTS (SELECT 1 FROM u WHERE a = 9)",
        11,
    ),
    # correlated and ORed: u to its first a = g per row (19, as above), then for the rows
    # where it failed (g = 3, 4: 3 rows) u to a > 3g, never found (9): 10 + 19 + 9.
    (
        "correlated EXISTS OR EXISTS",
        "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.a = t.g)"
        " OR EXISTS (SELECT 1 FROM u WHERE u.a > t.g * 3)",
        38,
    ),
    # NOT EXISTS is not made a join: SQLite runs it once, at t's first row (u's 1st row
    # matches, so it fails), and still steps through all of t: 10 + 1.
    (
        "NOT EXISTS, uncorrelated, failing",
        "SELECT * FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE a = 1)",
        11,
    ),
]


@pytest.mark.parametrize("label, query, reads", SEVERAL, ids=[c[0] for c in SEVERAL])
def test_several_exists_terms_count_in_the_order_the_vm_tests_them(
    rt, sqlite_stub, label, query, reads
):
    assert measure(rt, sqlite_stub, with_u, query) == (reads, 0)


def kv(sql):
    """A user's key-value table WITHOUT ROWID (like ``_cf_KV``), filled out of key order:
    in key order its rows are a (v 2), b (1), c (2), d (1), e (1)."""
    sql.exec("CREATE TABLE kv(key TEXT PRIMARY KEY, v) WITHOUT ROWID")
    for key, v in [("e", 1), ("a", 2), ("d", 1), ("b", 1), ("c", 2)]:
        sql.exec("INSERT INTO kv VALUES (?, ?)", key, v)


def kv2(sql):
    """Two key columns; in key order: (1, a, 0), (1, b, 0), (2, a, 1), (2, b, 1)."""
    sql.exec("CREATE TABLE kv2(ns, key, v, PRIMARY KEY (ns, key)) WITHOUT ROWID")
    for row in [(2, "a", 1), (1, "b", 0), (1, "a", 0), (2, "b", 1)]:
        sql.exec("INSERT INTO kv2 VALUES (?, ?, ?)", *row)


WITHOUT_ROWID = [
    # the scan walks the key order: exec steps to the first v = 1 row, b, landing on a, b.
    ("not consumed", kv, "SELECT * FROM kv WHERE v = 1", 0, 2),
    # one next(): the read-ahead is d, the 4th row in key order.
    ("one next()", kv, "SELECT * FROM kv WHERE v = 1", 1, 4),
    # LIMIT 2 stops on the second match, d.
    ("LIMIT 2, consumed", kv, "SELECT * FROM kv WHERE v = 1 LIMIT 2", None, 4),
    # run to its end: every row.
    ("consumed", kv, "SELECT * FROM kv WHERE v = 1", None, 5),
    # a bound value: v = 2 first at a, the first row.
    ("bound, LIMIT 1", kv, "SELECT * FROM kv WHERE v = ? LIMIT 1", None, 1),
    # two key columns: the first v = 1 row is (2, a), the 3rd in key order.
    ("two key columns, LIMIT 1", kv2, "SELECT * FROM kv2 WHERE v = 1 LIMIT 1", None, 3),
    # EXISTS over it stops at its first row, b: 2 rows.
    ("EXISTS", kv, "SELECT EXISTS (SELECT 1 FROM kv WHERE v = 1)", None, 2),
]


@pytest.mark.parametrize(
    "label, setup, query, consume, reads", WITHOUT_ROWID, ids=[c[0] for c in WITHOUT_ROWID]
)
def test_a_without_rowid_scan_counts_in_key_order(
    rt, sqlite_stub, label, setup, query, consume, reads
):
    bindings = (2,) if "?" in query else ()
    assert measure(rt, sqlite_stub, setup, query, *bindings, consume=consume) == (reads, 0)


SEVERAL_IN = [
    # id's list is stepped (3) and drives one rowid seek per value (1, 3, 42); g's list only
    # filters: 6.
    ("two IN lists", "SELECT * FROM t WHERE id IN (1, 3, 42) AND g IN (1, 2)", 6),
    # each list's subquery scans u once (3 + 3), then id's list is stepped (3) and a seek
    # made per a value (1, 2, 9): 12.
    (
        "two IN subqueries",
        "SELECT * FROM t WHERE id IN (SELECT a FROM u) AND g IN (SELECT a FROM u WHERE b <> 'x')",
        12,
    ),
]


@pytest.mark.parametrize("label, query, reads", SEVERAL_IN, ids=[c[0] for c in SEVERAL_IN])
def test_only_the_in_list_on_the_key_drives_the_lookup(rt, sqlite_stub, label, query, reads):
    assert measure(rt, sqlite_stub, with_u, query) == (reads, 0)


IN_WRITES_AND_AGGREGATES = [
    # issue 29: the list is stepped (3) and each value sought (3); two rows deleted
    ("DELETE by rowid IN list", ten, "DELETE FROM t WHERE id IN (1, 3, 42)", (6, 2)),
    ("UPDATE by rowid IN list", ten, "UPDATE t SET s = 'z' WHERE id IN (2, 4)", (4, 2)),
    # the list (2), g = 2: 3 rows + a step onto g = 3, g = 3: 2 rows + a step onto 4
    ("DELETE by index IN list", ten_indexed, "DELETE FROM t WHERE g IN (2, 3)", (9, 5)),
    # u scanned (3), its a values stepped (3) and sought (3), then each deleted row sought
    # again (3: DELETE collects the rows first when its WHERE has a subquery)
    ("DELETE by IN (subquery)", with_u, "DELETE FROM t WHERE id IN (SELECT a FROM u)", (12, 3)),
    ("count(*) over an IN list", ten, "SELECT count(*) AS n FROM t WHERE id IN (1, 2, 3)", (6, 0)),
    # the same table's rowids as the list: t walked (10) and each row sought (10)
    ("IN (SELECT id FROM t)", ten, "SELECT * FROM t WHERE id IN (SELECT id FROM t)", (20, 0)),
    # the subquery as its own statement: g = 3 is 2 rows + a step onto 4 (3), then 2 + 2
    (
        "IN (SELECT id FROM t WHERE g = ?) over the same table",
        ten_indexed,
        "SELECT * FROM t WHERE id IN (SELECT id FROM t WHERE g = 3)",
        (7, 0),
    ),
    # an UPDATE that changes the indexed column: the index (3), then its rows collected (2)
    # and sought (2); with no match, only the empty collection's Rewind
    ("UPDATE of an indexed column", ten_indexed, "UPDATE t SET g = 9 WHERE g = 3", (7, 4)),
    ("UPDATE of an indexed column, none", ten_indexed, "UPDATE t SET g = 9 WHERE g = 99", (1, 0)),
]


@pytest.mark.parametrize(
    "label, setup, query, counted",
    IN_WRITES_AND_AGGREGATES,
    ids=[c[0] for c in IN_WRITES_AND_AGGREGATES],
)
def test_in_lists_in_writes_and_aggregates_count_as_the_vm_steps(
    rt, sqlite_stub, label, setup, query, counted
):
    assert measure(rt, sqlite_stub, setup, query) == counted
