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
    # IN lists that drive a key lookup: one rowid seek per distinct value, hit or miss.
    ("rowid IN list", ten, "SELECT * FROM t WHERE id IN (1, 3, 3, 42)", 3),
    # the list is built by scanning u (3 rows), then one seek per value 1, 2, 9.
    ("rowid IN (subquery)", with_u, "SELECT * FROM t WHERE id IN (SELECT a FROM u)", 6),
    # through an index: g = 1 is 4 rows + a step onto g = 2; g = 3 is 2 rows + a step onto 4.
    ("index IN list", ten_indexed, "SELECT * FROM t WHERE g IN (1, 3)", 8),
    # a value the index does not hold lands on nothing.
    ("index IN list, one miss", ten_indexed, "SELECT * FROM t WHERE g IN (1, 7)", 5),
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
