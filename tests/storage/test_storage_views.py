"""Views of an object's storage for tools: JSON forms, the timeline, bookmark diffs, billing."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest

from workbench.storage import DurableObject, Runtime
from workbench.storage.json_form import JsonInputError, dumps, loads, to_json
from workbench.storage.value_codec import decode, encode
from workbench.storage.views import (
    billing_by_kind,
    diff_bookmarks,
    diff_lines,
    kv_preview,
    statement_kind,
    time_label,
    timeline,
)


class Job(DurableObject):
    """Runs ``job(ctx)`` inside the object (awaiting it when it is a coroutine)."""

    async def fetch(self, job):
        result = job(self.ctx)
        if hasattr(result, "__await__"):
            result = await result
        return result

    async def alarm(self, info=None):
        pass


@pytest.fixture
def obj():
    rt = Runtime()
    ns = rt.namespace(Job)
    stub = ns.get(ns.id_from_name("shop"))

    def do(job):
        return rt.run(stub.fetch(job))

    return rt, ns.host(stub.id), do


def sql(text, *args):
    def job(ctx):
        ctx.storage.sql.exec(text, *args).toArray()  # rows are counted as they are read

    return job


def put(*args):
    async def job(ctx):
        await ctx.storage.put(*args)

    return job


# -- JSON forms ----------------------------------------------------------------------------------
def test_values_json_lacks_are_tagged_and_read_back():
    value = {
        "raw": b"\x00hi",
        "buf": bytearray(b"\xff"),
        "when": datetime(2024, 5, 1, 12, 30, tzinfo=UTC),
        "day": date(2024, 5, 1),
        "tags": {"b", "a"},
        "frozen": frozenset({2, 1}),
        "pair": (1, "x"),
        "map": {1: "one", (2, 3): "tuple key"},
        "dollar": {"$bytes": "not a tag"},
        "floats": [float("nan"), float("inf"), float("-inf"), -0.0, 2**70],
        "pattern": re.compile("a+b", re.IGNORECASE | re.MULTILINE),
        "error": ValueError("boom"),
    }
    shown = to_json(value)
    assert shown["raw"] == {"$bytes": "AGhp"}
    assert shown["buf"] == {"$bytearray": "/w=="}
    assert shown["when"] == {"$datetime": "2024-05-01T12:30:00+00:00"}
    assert shown["day"] == {"$date": "2024-05-01"}
    assert shown["tags"] == {"$set": ["a", "b"]}  # sorted: stable output
    assert shown["frozen"] == {"$frozenset": [1, 2]}
    assert shown["pair"] == {"$tuple": [1, "x"]}
    assert shown["map"] == {"$map": [[1, "one"], [{"$tuple": [2, 3]}, "tuple key"]]}
    assert shown["dollar"] == {"$map": [["$bytes", "not a tag"]]}
    assert shown["floats"][:3] == [
        {"$float": "NaN"},
        {"$float": "Infinity"},
        {"$float": "-Infinity"},
    ]
    assert shown["pattern"] == {"$regexp": "a+b", "flags": "im"}
    assert shown["error"] == {"$error": "ValueError", "message": "boom"}
    back = loads(dumps(value))
    nan = back["floats"].pop(0)
    assert nan != nan
    value["floats"].pop(0)
    assert str(back.pop("error")) == "boom" and value.pop("error")
    assert back == value


def test_cycles_are_shown_as_refs_and_lone_surrogates_escaped():
    cyclic: list = [1]
    cyclic.append(cyclic)
    assert dumps({"c": cyclic}) == '{"c": [1, {"$ref": "#/c"}]}'
    assert dumps("a\ud800") == '"a\\ud800"'
    assert dumps("café") == '"café"'


@pytest.mark.parametrize(
    ("text", "message", "caret_col", "hint"),
    [
        ('{"a": 1 "b": 2}', "line 1, column 9: expected ',' or '}' (the object opened at line 1, column 1 is not closed)", 9, None),
        ("{'a': 1}", "line 1, column 2: expected a property name in double quotes", 2, "JSON strings use double quotes"),
        ("[1, 2,]", "line 1, column 7: a comma before ']': remove the trailing comma", 7, None),
        ("hello", "line 1, column 1: expected a value", 1, 'to store text, put it in double quotes: "hello"'),
        ("True", "line 1, column 1: expected a value", 1, "JSON writes true, not True"),
        ('"open', "line 1, column 1: this string is not closed", 1, None),
        ("1 2", "line 1, column 3: more text after the value", 3, None),
        ('{\n  "a": [1,\n  2\n}', "line 4, column 1: expected ',' or ']' (the array opened at line 2, column 8 is not closed)", 1, None),
    ],
)  # fmt: skip
def test_bad_json_names_the_field_line_column_and_what_was_expected(text, message, caret_col, hint):
    with pytest.raises(JsonInputError) as info:
        loads(text, field="value (JSON)")
    err = info.value
    assert str(err).startswith("value (JSON), " + message)
    assert "Expecting" not in str(err) and "JSONDecodeError" not in str(err)
    lines = err.detail.splitlines()
    assert lines[1] == " " * (caret_col - 1) + "^"
    if hint:
        assert hint in lines[2]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'value (JSON) is empty: type a JSON value, for example "text", 42, {"a": 1}, [1, 2] or null'),
        ("NaN", 'value (JSON): NaN is not JSON: write {"$float": "NaN"}'),
        ('{"a": 1, "a": 2}', 'value (JSON): the key "a" appears twice in one object'),
        ('{"$bytes": "!!"}', 'value (JSON): $bytes takes a base64 string; "!!" is not base64'),
        ('{"x": [{"$date": "May 1st"}]}', 'value (JSON) at /x/0: $date takes an ISO 8601 string such as "2026-01-01"'),
        ('{"$set": [1], "extra": 2}', "value (JSON): $set takes no other keys, found extra"),
    ],
)  # fmt: skip
def test_bad_tagged_values_say_what_is_wrong(text, message):
    with pytest.raises(JsonInputError) as info:
        loads(text)
    assert str(info.value) == message


def test_unknown_tag_says_how_to_store_a_dollar_key():
    with pytest.raises(
        JsonInputError, match=r'unknown tag "\$foo".*\{"\$map": \[\["\$foo", value\]\]\}'
    ):
        loads('{"$foo": 1}')


def test_kv_preview_is_json():
    assert kv_preview(encode({"n": [1, 2], "s": {"x"}})) == '{"n": [1, 2], "s": {"$set": ["x"]}}'
    assert kv_preview(encode("x" * 100), width=10) == '"xxxxxx...'
    assert decode(encode(loads('{"$tuple": [1]}'))) == (1,)


# -- the timeline ----------------------------------------------------------------------------------
def test_timeline_entries_say_what_each_batch_changed(obj):
    rt, host, do = obj
    do(sql("CREATE TABLE orders(id INTEGER PRIMARY KEY, total REAL)"))
    do(put({"cart": ["pen"], "total": 3}))
    do(sql("INSERT INTO orders(total) VALUES (3), (4)"))
    rt.run(rt.advance(301_200))
    do(sql("UPDATE orders SET total = 5 WHERE id = 1"))
    do(lambda ctx: ctx.storage.delete("cart"))
    do(sql("DELETE FROM orders"))
    do(lambda ctx: ctx.storage.setAlarm(rt.now() + 1500))
    do(lambda ctx: ctx.storage.deleteAlarm())
    do(sql("CREATE INDEX by_total ON orders(total)"))
    entries = timeline(host)
    assert [e["label"] for e in entries] == [
        "seq 0 · 00:00:00.000 · empty start",
        "seq 1 · 00:00:00.000 · create table orders",
        "seq 2 · 00:00:00.000 · put cart, total",
        "seq 3 · 00:00:00.000 · orders +2 rows",
        "seq 4 · 00:05:01.200 · orders 1 row updated",
        "seq 5 · 00:05:01.200 · delete cart",
        "seq 6 · 00:05:01.200 · orders -2 rows",
        "seq 7 · 00:05:01.200 · alarm set for 00:05:02.700",
        "seq 8 · 00:05:01.200 · alarm deleted",
        "seq 9 · 00:05:01.200 · create index by_total",
    ]
    assert [e["category"] for e in entries] == [
        "no change", "schema", "KV", "SQL rows", "SQL rows", "KV", "SQL rows", "alarm", "alarm", "schema",
    ]  # fmt: skip
    third = entries[3]
    assert third["changes"]["rows"] == {"orders": {"added": 2, "removed": 0, "updated": 0}}
    assert third["kind"] == "changeset" and third["bookmark"].endswith("-0000000000000003")
    assert entries[2]["changes"]["kv_put"] == ["cart", "total"]


def test_a_checkpoint_is_summarised_against_the_state_before_it(obj):
    rt, host, do = obj

    def setup(ctx):
        ctx.storage.sql.exec("CREATE TABLE t(x)")
        ctx.storage.sql.exec("INSERT INTO t VALUES (1), (2), (3)")
        return ctx.storage.put({"a": 1, "b": 2, "c": 3, "d": 4})

    do(setup)
    good = timeline(host)[-1]["bookmark"]
    do(sql("DROP TABLE t"))
    do(lambda ctx: ctx.storage.onNextSessionRestoreBookmark(good))
    host.restart()
    labels = [e["summary"] for e in timeline(host)]
    assert labels == [
        "empty start",
        "create table t +3 rows · put a, b, c +1 more",
        "drop table t (3 rows)",
        "restore to seq 1 · create table t +3 rows",  # the restore, a checkpoint
    ]


def test_the_time_shows_the_date_when_the_log_spans_days(obj):
    rt, host, do = obj
    do(put("a", 1))
    rt.run(rt.advance(2 * 86_400_000))
    do(put("a", 2))
    assert [e["time"] for e in timeline(host)] == [
        "01-01 00:00:00.000", "01-01 00:00:00.000", "01-03 00:00:00.000",
    ]  # fmt: skip
    assert time_label(1767225901200) == "00:05:01.200"


def test_kv_backend_has_no_timeline():
    rt = Runtime()
    ns = rt.namespace(Job, storage="kv")
    host = ns.host(ns.id_from_name("k"))
    assert timeline(host) == []
    with pytest.raises(ValueError, match="only SQLite-backed objects keep a history"):
        diff_bookmarks(host, "0" * 16 + "-" + "0" * 16, "0" * 16 + "-" + "0" * 16)


# -- diffs ------------------------------------------------------------------------------------------
def test_diff_holds_values_before_and_after_and_rows_by_key(obj):
    rt, host, do = obj

    def setup(ctx):
        ctx.storage.sql.exec("CREATE TABLE orders(id INTEGER PRIMARY KEY, total REAL)")
        ctx.storage.sql.exec("CREATE TABLE tags(name TEXT PRIMARY KEY, n) WITHOUT ROWID")
        ctx.storage.sql.exec("INSERT INTO orders(total) VALUES (10), (20), (30)")
        ctx.storage.sql.exec("INSERT INTO tags VALUES ('a', 1), ('b', x'00ff')")
        return ctx.storage.put({"owner": "ada", "gone": [1], "raw": b"hi"})

    do(setup)
    before = timeline(host)[-1]["bookmark"]
    do(sql("DELETE FROM orders WHERE id = 1"))
    do(sql("UPDATE orders SET total = 40 WHERE id = 2"))
    do(sql("INSERT INTO orders(total) VALUES (50)"))
    do(sql("UPDATE tags SET n = 2 WHERE name = 'a'"))
    do(put({"owner": "mallory", "new": {"when": date(2026, 1, 2)}}))
    do(lambda ctx: ctx.storage.delete("gone"))
    do(lambda ctx: ctx.storage.setAlarm(rt.now() + 1000))
    after = timeline(host)[-1]["bookmark"]
    d = diff_bookmarks(host, before, after)
    assert d["kv"]["added"] == ["new"] and d["kv"]["removed"] == ["gone"]
    assert d["kv"]["changed"] == ["owner"]
    assert d["kv"]["entries"] == [
        {"key": "gone", "change": "removed", "before": "[1]", "after": None},
        {
            "key": "new",
            "change": "added",
            "before": None,
            "after": '{"when": {"$date": "2026-01-02"}}',
        },
        {"key": "owner", "change": "changed", "before": '"ada"', "after": '"mallory"'},
    ]
    orders = d["tables"]["orders"]
    assert (orders["rows_added"], orders["rows_removed"], orders["rows_changed"]) == (1, 1, 1)
    assert orders["rows"] == [
        {"key": "rowid 1", "change": "removed", "before": '{"id": 1, "total": 10.0}', "after": None},
        {"key": "rowid 2", "change": "updated", "before": '{"id": 2, "total": 20.0}', "after": '{"id": 2, "total": 40.0}'},
        {"key": "rowid 4", "change": "added", "before": None, "after": '{"id": 4, "total": 50.0}'},
    ]  # fmt: skip
    assert d["tables"]["tags"]["rows"] == [
        {"key": 'key "a"', "change": "updated", "before": '{"name": "a", "n": 1}', "after": '{"name": "a", "n": 2}'},
    ]  # fmt: skip
    assert d["alarm"] == {"before": None, "after": rt.now() + 1000}
    assert diff_lines(d) == [
        'KV "gone" removed (was [1])',
        'KV "new" added: {"when": {"$date": "2026-01-02"}}',
        'KV "owner" changed: "ada" → "mallory"',
        "table orders: +1 row, -1 row, 1 row updated",
        '  - rowid 1: {"id": 1, "total": 10.0}',
        '  ~ rowid 2: {"id": 2, "total": 20.0} → {"id": 2, "total": 40.0}',
        '  + rowid 4: {"id": 4, "total": 50.0}',
        "table tags: 1 row updated",
        '  ~ key "a": {"name": "a", "n": 1} → {"name": "a", "n": 2}',
        "alarm: none → 01-01 00:00:01.000",
    ]
    assert diff_lines(diff_bookmarks(host, after, after)) == ["no change"]


def test_a_diff_lists_at_most_row_limit_rows_but_counts_all(obj):
    rt, host, do = obj
    do(sql("CREATE TABLE t(x)"))
    start = timeline(host)[-1]["bookmark"]
    do(
        sql(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60) INSERT INTO t SELECT i FROM n"
        )
    )
    d = diff_bookmarks(host, start, timeline(host)[-1]["bookmark"])
    assert d["tables"]["t"]["rows_added"] == 60 and len(d["tables"]["t"]["rows"]) == 50
    assert diff_lines(d)[-1] == "  ... and 10 more rows"


# -- billing --------------------------------------------------------------------------------------
def test_billing_by_statement_kind(obj):
    rt, host, do = obj
    do(sql("CREATE TABLE t(id INTEGER PRIMARY KEY, v)"))
    do(sql("CREATE INDEX by_v ON t(v)"))
    do(sql("INSERT INTO t(v) VALUES (1), (2), (3)"))
    do(sql("SELECT * FROM t"))
    do(sql("SELECT * FROM t WHERE id = 1"))
    do(sql("UPDATE t SET v = 9 WHERE id = 2"))
    rows = billing_by_kind(rt.billing, str(host.id))
    assert [r["kind"] for r in rows] == [
        "SELECT",
        "INSERT",
        "UPDATE",
        "CREATE INDEX",
        "CREATE TABLE",
    ]
    select = rows[0]
    assert select["statements"] == 2 and select["rows_read"] == 4 and select["rows_written"] == 0
    assert sum(r["statements"] for r in rows) == rt.billing.totals(str(host.id))["statements"]
    assert billing_by_kind(rt.billing, "no such object") == []


@pytest.mark.parametrize(
    ("statement", "kind"),
    [
        ("select 1", "SELECT"),
        ("WITH x AS (SELECT 1) DELETE FROM t", "DELETE"),
        ("REPLACE INTO t VALUES (1)", "INSERT"),
        ("CREATE UNIQUE INDEX i ON t(x)", "CREATE INDEX"),
        ("CREATE VIRTUAL TABLE f USING fts5(x)", "CREATE TABLE"),
        ("DROP TABLE IF EXISTS t", "DROP TABLE"),
        ("ALTER TABLE t ADD COLUMN y", "ALTER TABLE"),
        ("PRAGMA table_list", "PRAGMA"),
        ("", "OTHER"),
    ],
)
def test_statement_kinds(statement, kind):
    assert statement_kind(statement) == kind


def test_a_restore_now_restarts_the_object_and_its_undo_bookmark_goes_back(obj):
    rt, host, do = obj
    do(put("cart", 1))
    before = timeline(host)[-1]["bookmark"]
    do(put("cart", 2))
    assert host.pending_restore() is None
    undo = host.restore_now(before)
    assert do(lambda ctx: ctx.storage.get("cart")) == 1
    back = host.restore_now(undo)
    assert do(lambda ctx: ctx.storage.get("cart")) == 2
    assert back and back != undo and host.pending_restore() is None


def test_rows_deleted_and_inserted_again_under_their_rowids_are_no_update(obj):
    # SQLite hands a freed rowid to the next insert: the diff must not call it an update.
    rt, host, do = obj
    do(sql("CREATE TABLE orders(id INTEGER PRIMARY KEY, total REAL)"))
    do(sql("INSERT INTO orders(total) VALUES (10), (20), (30)"))
    start = timeline(host)[-1]["bookmark"]
    do(sql("DELETE FROM orders"))
    do(sql("INSERT INTO orders(total) VALUES (99), (100)"))
    do(sql("UPDATE orders SET total = 101 WHERE id = 2"))
    d = diff_bookmarks(host, start, timeline(host)[-1]["bookmark"])
    orders = d["tables"]["orders"]
    assert (orders["rows_added"], orders["rows_removed"], orders["rows_changed"]) == (2, 3, 0)
    assert diff_lines(d) == [
        "table orders: +2 rows, -3 rows",
        '  - rowid 1: {"id": 1, "total": 10.0}',
        '  + rowid 1: {"id": 1, "total": 99.0}',
        '  - rowid 2: {"id": 2, "total": 20.0}',
        '  + rowid 2: {"id": 2, "total": 101.0}',
        '  - rowid 3: {"id": 3, "total": 30.0}',
    ]
    # A row only updated in place stays an update.
    mid = timeline(host)[-1]["bookmark"]
    do(sql("UPDATE orders SET total = 7 WHERE id = 1"))
    assert diff_lines(diff_bookmarks(host, mid, timeline(host)[-1]["bookmark"])) == [
        "table orders: 1 row updated",
        '  ~ rowid 1: {"id": 1, "total": 99.0} → {"id": 1, "total": 7.0}',
    ]


def test_a_restore_and_its_undo_are_marked_as_restores_in_the_timeline(obj):
    rt, host, do = obj
    do(put("cart", 1))
    first = timeline(host)[-1]
    do(put("cart", 2))
    undo = host.restore_now(first["bookmark"])
    host.restore_now(undo)
    entries = timeline(host)
    restores = [e for e in entries if e["restored"] is not None]
    assert [e["category"] for e in restores] == ["restore", "restore"]
    assert restores[0]["restored"] == first["seq"]
    assert restores[0]["summary"].startswith(f"restore to seq {first['seq']} · put cart")
    assert restores[1]["summary"].startswith(f"restore to seq {restores[0]['seq'] - 1} · ")
    assert all(e["category"] != "restore" for e in entries if e["restored"] is None)
