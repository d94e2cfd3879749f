"""Read-only views of an object's storage for tools: the timeline, bookmark diffs, billing.

Each timeline entry is one committed batch of the change log, with a
``summary`` of what it did, so a person can pick "the moment before the
mistake" from a list:

>>> from workbench.storage import Runtime, DurableObject
>>> class Box(DurableObject):
...     async def fetch(self, job):
...         return await job(self.ctx.storage)
>>> rt = Runtime()
>>> ns = rt.namespace(Box)
>>> stub = ns.get(ns.id_from_name("b"))
>>> async def shop(s):
...     s.sql.exec("CREATE TABLE orders(id INTEGER PRIMARY KEY, total REAL)")
...     await s.put({"cart": ["pen"], "total": 3})
>>> rt.run(stub.fetch(shop))
>>> rt.run(stub.fetch(lambda s: s.put("cart", [])))
>>> async def order(s):
...     s.sql.exec("INSERT INTO orders(total) VALUES (3)")
>>> rt.run(stub.fetch(order))
>>> for entry in timeline(ns.host(stub.id)):
...     print(entry["label"])
seq 0 · 00:00:00.000 · empty start
seq 1 · 00:00:00.000 · create table orders · put cart, total
seq 2 · 00:00:00.000 · put cart
seq 3 · 00:00:00.000 · orders +1 row

A diff between two bookmarks holds the values on both sides, as JSON
(:mod:`workbench.storage.json_form`), and rows keyed by rowid or primary key:

>>> first, last = timeline(ns.host(stub.id))[1]["bookmark"], timeline(ns.host(stub.id))[-1]["bookmark"]
>>> print("\\n".join(diff_lines(diff_bookmarks(ns.host(stub.id), first, last))))
KV "cart" changed: ["pen"] → []
table orders: +1 row
  + rowid 1: {"id": 1, "total": 3.0}
>>> for row in billing_by_kind(rt.billing, str(stub.id)):
...     print(row)
{'kind': 'INSERT', 'statements': 1, 'rows_read': 0, 'rows_written': 1}
{'kind': 'CREATE TABLE', 'statements': 1, 'rows_read': 1, 'rows_written': 2}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

import apsw

from ._host import StorageHost
from ._sql_statements import split_sql
from .billing import BillingLog
from .history import History
from .json_form import dumps, to_json
from .names import RESERVED_PREFIX, quoted
from .value_codec import decode

__all__ = [
    "ROW_LIMIT",
    "billing_by_kind",
    "diff_bookmarks",
    "diff_lines",
    "kv_preview",
    "time_label",
    "timeline",
]

#: At most this many rows per table are listed in a diff (the counts are always complete).
ROW_LIMIT = 50
#: At most this many keys are named in a timeline summary; the rest are counted.
NAMED_KEYS = 3


def time_label(t_ms: int, with_date: bool = False) -> str:
    """``HH:MM:SS.mmm`` of a virtual time (UTC), with ``MM-DD`` in front if asked.

    >>> time_label(1767225901200), time_label(1767225901200, with_date=True)
    ('00:05:01.200', '01-01 00:05:01.200')
    """
    when = datetime.fromtimestamp(t_ms / 1000, tz=UTC)
    text = when.strftime("%H:%M:%S.") + f"{t_ms % 1000:03d}"
    return when.strftime("%m-%d ") + text if with_date else text


# -- snapshots of a database ---------------------------------------------------------------
@dataclass
class _Table:
    columns: list[str]
    rowid: bool  # rows keyed by rowid (else by primary key)
    rows: dict[Any, tuple[Any, ...]]


@dataclass
class _State:
    kv: dict[str, bytes] = field(default_factory=dict)
    tables: dict[str, _Table] = field(default_factory=dict)
    schema: dict[tuple[str, str], str] = field(default_factory=dict)
    alarm: int | None = None


def _all(conn: apsw.Connection, sql: str) -> list[tuple[Any, ...]]:
    """Every row of ``sql`` (the tables' schema, not apsw, knows the column types)."""
    return cast("list[tuple[Any, ...]]", conn.execute(sql).fetchall())


def _snapshot(conn: apsw.Connection) -> _State:
    state = _State()
    names = []
    for kind, name, sql in _all(
        conn,
        "SELECT type, name, sql FROM main.sqlite_master WHERE name NOT LIKE 'sqlite~_%' ESCAPE '~'",
    ):
        if name == "_cf_KV":
            for key, value in _all(conn, "SELECT key, value FROM _cf_KV"):
                raw = key if isinstance(key, bytes) else str(key).encode("utf-8", "surrogatepass")
                state.kv[raw.decode("utf-8", "replace")] = value
        elif name == "_cf_METADATA":
            rows = _all(conn, "SELECT value FROM _cf_METADATA WHERE key = 'alarm'")
            state.alarm = rows[0][0] if rows else None
        elif not name.startswith(RESERVED_PREFIX):
            state.schema[(kind, name)] = sql or ""
            if kind == "table":
                names.append(name)
    for name in names:
        table = _read_table(conn, name)
        if table is not None:
            state.tables[name] = table
    return state


def _read_table(conn: apsw.Connection, name: str) -> _Table | None:
    info = _all(conn, f"PRAGMA table_info({quoted(name)})")
    columns = [str(r[1]) for r in info]
    try:
        rows = _all(conn, f"SELECT rowid, * FROM {quoted(name)}")
        return _Table(columns, True, {r[0]: tuple(r[1:]) for r in rows})
    except apsw.Error:
        pass
    pk = [i for _, i in sorted((r[5], i) for i, r in enumerate(info) if r[5])]
    try:
        rows = _all(conn, f"SELECT * FROM {quoted(name)}")
    except apsw.Error:  # a virtual table whose module is missing, and the like
        return None
    if pk:
        return _Table(columns, False, {tuple(r[i] for i in pk): tuple(r) for r in rows})
    return _Table(columns, False, {(i,): tuple(r) for i, r in enumerate(rows)})


# -- what changed between two states ---------------------------------------------------------
@dataclass
class _Changes:
    """What one batch (or a span of batches) changed, counted."""

    kv_put: list[str] = field(default_factory=list)
    kv_deleted: list[str] = field(default_factory=list)
    created: list[tuple[str, str]] = field(default_factory=list)  # (type, name)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    altered: list[tuple[str, str]] = field(default_factory=list)
    rows: dict[str, list[int]] = field(default_factory=dict)  # table -> [added, removed, updated]
    alarm: tuple[str, int | None] | None = None  # ("set", t) or ("deleted", None)

    def count(self, table: str, slot: int, n: int = 1) -> None:
        self.rows.setdefault(table, [0, 0, 0])[slot] += n

    def as_dict(self) -> dict[str, Any]:
        return {
            "kv_put": list(self.kv_put),
            "kv_deleted": list(self.kv_deleted),
            "schema": [f"create {k} {n}" for k, n in self.created]
            + [f"drop {k} {n}" for k, n in self.dropped]
            + [f"alter {k} {n}" for k, n in self.altered],
            "rows": {
                t: {"added": a, "removed": r, "updated": u}
                for t, (a, r, u) in sorted(self.rows.items())
                if a or r or u
            },
            "alarm": None if self.alarm is None else {"op": self.alarm[0], "t_ms": self.alarm[1]},
        }


def _row_keys_diff(a: _Table | None, b: _Table | None) -> tuple[list[Any], list[Any], list[Any]]:
    rows_a = a.rows if a else {}
    rows_b = b.rows if b else {}
    added = _sorted([k for k in rows_b if k not in rows_a])
    removed = _sorted([k for k in rows_a if k not in rows_b])
    changed = _sorted([k for k in rows_b if k in rows_a and rows_a[k] != rows_b[k]])
    if a and b and a.columns != b.columns:  # a column added: every row reads differently
        changed = _sorted([k for k in rows_b if k in rows_a])
    return added, removed, changed


def _sorted(keys: list[Any]) -> list[Any]:
    try:
        return sorted(keys)
    except TypeError:
        return sorted(keys, key=repr)


def _compare(a: _State, b: _State) -> _Changes:
    ch = _Changes()
    ch.kv_put = sorted(k for k in b.kv if a.kv.get(k) != b.kv[k])
    ch.kv_deleted = sorted(k for k in a.kv if k not in b.kv)
    ch.created = sorted(k for k in b.schema if k not in a.schema)
    ch.dropped = sorted(k for k in a.schema if k not in b.schema)
    ch.altered = sorted(k for k in b.schema if k in a.schema and a.schema[k] != b.schema[k])
    for name in sorted(set(a.tables) | set(b.tables)):
        added, removed, changed = _row_keys_diff(a.tables.get(name), b.tables.get(name))
        if added or removed or changed:
            ch.rows[name] = [len(added), len(removed), len(changed)]
    if a.alarm != b.alarm:
        ch.alarm = ("set", b.alarm) if b.alarm is not None else ("deleted", None)
    return ch


def _from_changeset(data: bytes) -> _Changes:
    ch = _Changes()
    put: set[str] = set()
    deleted: set[str] = set()
    for change in apsw.Changeset.iter(data):
        name, op = change.name, change.op
        old = cast("tuple[Any, ...]", change.old or ())
        new = cast("tuple[Any, ...]", change.new or ())
        row = new if op == "INSERT" else old  # an UPDATE's old side holds the primary key
        if name == "_cf_KV":
            key = row[0]
            text = (key if isinstance(key, bytes) else str(key).encode()).decode("utf-8", "replace")
            (deleted if op == "DELETE" else put).add(text)
        elif name == "_cf_METADATA":
            if row[0] != "alarm":
                continue
            ch.alarm = ("deleted", None) if op == "DELETE" else ("set", new[1])
        else:
            ch.count(name, {"INSERT": 0, "DELETE": 1}.get(op, 2))
    ch.kv_put, ch.kv_deleted = sorted(put), sorted(deleted - put)
    return ch


# -- the timeline ----------------------------------------------------------------------------
def _rows(n: int) -> str:
    return "row" if n == 1 else "rows"


def _names(keys: list[str]) -> str:
    shown = ", ".join(keys[:NAMED_KEYS])
    more = len(keys) - NAMED_KEYS
    return shown + (f" +{more} more" if more > 0 else "")


def _summary(ch: _Changes, first: bool) -> str:
    parts: list[str] = []
    rows = {t: list(v) for t, v in ch.rows.items()}
    for kind, name in ch.created:
        text = f"create {kind} {name}"
        if kind == "table" and name in rows:
            added = rows.pop(name)[0]
            text += f" +{added} {_rows(added)}" if added else ""
        parts.append(text)
    for kind, name in ch.dropped:
        text = f"drop {kind} {name}"
        if kind == "table" and name in rows:
            removed = rows.pop(name)[1]
            text += f" ({removed} {_rows(removed)})" if removed else ""
        parts.append(text)
    parts += [f"alter {kind} {name}" for kind, name in ch.altered]
    if ch.kv_put:
        parts.append("put " + _names(ch.kv_put))
    if ch.kv_deleted:
        parts.append("delete " + _names(ch.kv_deleted))
    for name, (added, removed, updated) in sorted(rows.items()):
        segs = [f"+{added} {_rows(added)}"] if added else []
        segs += [f"-{removed} {_rows(removed)}"] if removed else []
        text = f"{name} " + " ".join(segs)
        if updated:
            text += (", " if segs else "") + f"{updated} {_rows(updated)} updated"
        if segs or updated:
            parts.append(text)
    if ch.alarm is not None:
        op, t = ch.alarm
        parts.append(f"alarm set for {time_label(t)}" if op == "set" and t else "alarm deleted")
    if not parts:
        return "empty start" if first else "no change"
    return " · ".join(parts)


def _category(ch: _Changes) -> str:
    ddl = {n for k, n in ch.created + ch.dropped if k == "table"}
    found = [
        name
        for name, present in (
            ("schema", ch.created or ch.dropped or ch.altered),
            ("KV", ch.kv_put or ch.kv_deleted),
            ("SQL rows", any(any(v) for t, v in ch.rows.items() if t not in ddl)),
            ("alarm", ch.alarm is not None),
        )
        if present
    ]
    if not found:
        return "no change"
    return found[0] if len(found) == 1 else "several"


def timeline(host: StorageHost) -> list[dict[str, Any]]:
    """One entry per logged batch, oldest first, each saying what it changed.

    Keys of an entry: ``seq``, ``t_ms``, ``time`` (``HH:MM:SS.mmm``, with the
    date when the log spans several days), ``kind`` (changeset or checkpoint),
    ``bytes``, ``bookmark``, ``changes`` (keys put and deleted, schema changes,
    rows added/removed/updated per table, the alarm), ``summary`` (those in a
    few words; a restore starts with ``restore to seq N``), ``category`` (KV, SQL
    rows, schema, alarm, several, no change, restore), ``restored`` (for a restore,
    the batch whose state it brought back, else None) and ``label`` (``"seq 12 · 00:05:01.200 · put cart, total · orders +1 row"``).
    An object on the KV backend keeps no history: the list is empty.
    """
    history = host.db.history
    if history is None:
        return []
    host.flush()
    entries: list[dict[str, Any]] = []
    current: apsw.Connection | None = None
    restored = history.restores()
    for seq, t_ms, kind, data in history.records():
        if kind == "checkpoint":
            before = _snapshot(current) if current is not None else _State()
            image = apsw.Connection(":memory:")
            if data:
                image.deserialize("main", data)
            if current is not None:
                current.close()
            current = image
            changes = _compare(before, _snapshot(current))
        else:  # the log always starts with a checkpoint; an empty database if not
            current = current or apsw.Connection(":memory:")
            changes = _from_changeset(data)
            apsw.Changeset.apply(data, current)
        entries.append(
            {
                "seq": seq,
                "t_ms": t_ms,
                "kind": kind,
                "bytes": len(data),
                "bookmark": History.bookmark(seq, t_ms),
                "changes": changes.as_dict(),
                "summary": _summary(changes, first=not entries),
                "category": _category(changes),
                "restored": restored.get(seq),
            }
        )
        if seq in restored:
            # A restore writes the whole state back: say so, not only what it changed.
            entries[-1]["summary"] = f"restore to seq {restored[seq]} · " + entries[-1]["summary"]
            entries[-1]["category"] = "restore"
    if current is not None:
        current.close()
    days = {e["t_ms"] // 86_400_000 for e in entries}
    for e in entries:
        e["time"] = time_label(e["t_ms"], with_date=len(days) > 1)
        e["label"] = f"seq {e['seq']} · {e['time']} · {e['summary']}"
    return entries


# -- diffs between bookmarks -----------------------------------------------------------------
def _kv_json(value: bytes | None) -> str | None:
    return None if value is None else dumps(decode(value))


def _row_json(columns: list[str], row: tuple[Any, ...] | None) -> str | None:
    if row is None:
        return None
    return dumps({c: v for c, v in zip(columns, row, strict=False)})


def _key_text(table: _Table, key: Any) -> str:
    if table.rowid:
        return f"rowid {key}"
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    return "key " + dumps(to_json(list(key) if isinstance(key, tuple) else key))


def diff_bookmarks(host: StorageHost, older: str, newer: str) -> dict[str, Any]:
    """What changed from ``older`` to ``newer``, with the values on both sides.

    ``kv``: the keys ``added``, ``removed`` and ``changed``, and ``entries``
    (``key``, ``change``, ``before`` and ``after`` as JSON text, None where the
    key is absent). ``tables``: per changed table its ``status`` (created,
    dropped, changed), ``columns``, the counts ``rows_added``,
    ``rows_removed``, ``rows_changed`` (rows are matched by rowid, or by
    primary key in a WITHOUT ROWID table) and ``rows``, the first
    :data:`ROW_LIMIT` of them (``key``, ``change``, ``before``, ``after``).
    ``schema``: objects created, dropped or altered; ``alarm``: its time on
    both sides when it differs, else None.
    """
    history = host.db.history
    if history is None:
        raise ValueError("only SQLite-backed objects keep a history")
    host.flush()
    states = []
    for bookmark in (older, newer):
        conn = history.state_at(History.parse(bookmark)[1])
        states.append(_snapshot(conn))
        conn.close()
    a, b = states
    gone = _deleted_between(history, History.parse(older)[1], History.parse(newer)[1])
    added = sorted(set(b.kv) - set(a.kv))
    removed = sorted(set(a.kv) - set(b.kv))
    changed = sorted(k for k in set(a.kv) & set(b.kv) if a.kv[k] != b.kv[k])
    kind = {**{k: "added" for k in added}, **{k: "removed" for k in removed}}
    kind.update({k: "changed" for k in changed})
    entries = [
        {
            "key": k,
            "change": kind[k],
            "before": _kv_json(a.kv.get(k)),
            "after": _kv_json(b.kv.get(k)),
        }
        for k in sorted(kind)
    ]
    tables: dict[str, Any] = {}
    for name in sorted(set(a.tables) | set(b.tables)):
        ta, tb = a.tables.get(name), b.tables.get(name)
        rows_added, rows_removed, rows_changed = _row_keys_diff(ta, tb)
        if ta is not None and tb is not None and name in gone:
            # A row deleted in between and a new one under the same key is no update: it is
            # a removal and an addition (SQLite hands a freed rowid to the next insert).
            again = [k for k in rows_changed if _pk_of(ta, gone[name][0], k) in gone[name][1]]
            if again:
                rows_changed = [k for k in rows_changed if k not in again]
                rows_added, rows_removed = (
                    _sorted(rows_added + again),
                    _sorted(rows_removed + again),
                )
        status = "created" if ta is None else "dropped" if tb is None else "changed"
        if status == "changed" and not (rows_added or rows_removed or rows_changed):
            continue
        ref = tb or ta
        assert ref is not None
        listed = [(k, "removed") for k in rows_removed] + [(k, "added") for k in rows_added]
        listed += [(k, "updated") for k in rows_changed]
        rows = []
        for key, change in _sorted_changes(listed)[:ROW_LIMIT]:
            before = ta.rows.get(key) if ta and change != "added" else None
            after = tb.rows.get(key) if tb and change != "removed" else None
            rows.append(
                {
                    "key": _key_text(ref, key),
                    "change": change,
                    "before": _row_json(ta.columns, before) if ta else None,
                    "after": _row_json(tb.columns, after) if tb else None,
                }
            )
        tables[name] = {
            "status": status,
            "columns": list(ref.columns),
            "rows_added": len(rows_added),
            "rows_removed": len(rows_removed),
            "rows_changed": len(rows_changed),
            "rows": rows,
        }
    schema = {
        "created": [f"{k} {n}" for k, n in sorted(set(b.schema) - set(a.schema))],
        "dropped": [f"{k} {n}" for k, n in sorted(set(a.schema) - set(b.schema))],
        "altered": [
            f"{k} {n}"
            for k, n in sorted(set(a.schema) & set(b.schema))
            if a.schema[(k, n)] != b.schema[(k, n)]
        ],
    }
    alarm = None if a.alarm == b.alarm else {"before": a.alarm, "after": b.alarm}
    return {
        "kv": {"added": added, "removed": removed, "changed": changed, "entries": entries},
        "tables": tables,
        "schema": schema,
        "alarm": alarm,
    }


def _deleted_between(
    history: History, older: int, newer: int
) -> dict[str, tuple[tuple[int, ...], set[tuple[Any, ...]]]]:
    """Per table, its primary-key columns and the keys of rows deleted by the batches after
    ``older`` up to ``newer`` (a checkpoint in between tells nothing: it is skipped)."""
    gone: dict[str, tuple[tuple[int, ...], set[tuple[Any, ...]]]] = {}
    for _seq, _t_ms, _kind, data in history.records(older, newer, kind="changeset"):
        for change in apsw.Changeset.iter(data):
            if change.op != "DELETE" or change.name.startswith(RESERVED_PREFIX):
                continue
            pk = tuple(sorted(change.pk_columns))
            old = cast("tuple[Any, ...]", change.old or ())
            entry = gone.setdefault(change.name, (pk, set()))
            entry[1].add(tuple(old[i] for i in pk))
    return gone


def _pk_of(table: _Table, pk: tuple[int, ...], key: Any) -> tuple[Any, ...] | None:
    row = table.rows.get(key)
    if row is None or any(i >= len(row) for i in pk):
        return None
    return tuple(row[i] for i in pk)


def _sorted_changes(listed: list[tuple[Any, str]]) -> list[tuple[Any, str]]:
    try:
        return sorted(listed, key=lambda item: item[0])
    except TypeError:
        return sorted(listed, key=lambda item: repr(item[0]))


def _alarm_text(t_ms: int | None) -> str:
    return "none" if t_ms is None else time_label(t_ms, with_date=True)


def row_counts(table: dict[str, Any]) -> str:
    """A table's diff in :func:`diff_bookmarks` as ``+2 rows, -1 row, 3 rows updated``
    (only the counts that are not 0: "" when all are)."""
    counts = (("+", "rows_added", ""), ("-", "rows_removed", ""), ("", "rows_changed", " updated"))
    return ", ".join(
        f"{sign}{table[key]} {_rows(table[key])}{suffix}"
        for sign, key, suffix in counts
        if table[key]
    )


def diff_lines(diff: dict[str, Any]) -> list[str]:
    """A diff from :func:`diff_bookmarks` as lines of plain text (values as JSON)."""
    lines: list[str] = []
    for e in diff["kv"]["entries"]:
        key = dumps(e["key"])
        if e["change"] == "added":
            lines.append(f"KV {key} added: {e['after']}")
        elif e["change"] == "removed":
            lines.append(f"KV {key} removed (was {e['before']})")
        else:
            lines.append(f"KV {key} changed: {e['before']} → {e['after']}")
    for what in ("created", "dropped", "altered"):
        lines += [f"{what[:-1]} {name}" for name in diff.get("schema", {}).get(what, [])]
    for name, t in diff["tables"].items():
        status = "" if t["status"] == "changed" else f" ({t['status']})"
        lines.append(f"table {name}{status}: " + (row_counts(t) or "no rows"))
        for row in t["rows"]:
            if row["change"] == "added":
                lines.append(f"  + {row['key']}: {row['after']}")
            elif row["change"] == "removed":
                lines.append(f"  - {row['key']}: {row['before']}")
            else:
                lines.append(f"  ~ {row['key']}: {row['before']} → {row['after']}")
        hidden = t["rows_added"] + t["rows_removed"] + t["rows_changed"] - len(t["rows"])
        if hidden > 0:
            lines.append(f"  ... and {hidden} more {_rows(hidden)}")
    if diff.get("alarm"):
        lines.append(
            f"alarm: {_alarm_text(diff['alarm']['before'])} → {_alarm_text(diff['alarm']['after'])}"
        )
    return lines or ["no change"]


# -- billing ------------------------------------------------------------------------------------
_KIND_ORDER = ["SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "PRAGMA", "OTHER"]


def statement_kind(statement: str) -> str:
    """``SELECT``, ``INSERT``... of one statement; ``CREATE TABLE``, ``DROP INDEX`` for DDL.

    >>> statement_kind("with x as (select 1) insert into t select * from x")
    'INSERT'
    >>> statement_kind("CREATE UNIQUE INDEX i ON t(x)")
    'CREATE INDEX'
    """
    try:
        st = split_sql(statement)[-1]
    except Exception:  # noqa: BLE001 - a record's text always parsed once; be safe anyway
        return "OTHER"
    kind = st.kind.upper()
    if kind in ("CREATE", "DROP", "ALTER"):
        for word in st.words[1:4]:
            if word in ("TABLE", "INDEX", "VIEW", "TRIGGER"):
                return f"{kind} {word}"
    return kind


def billing_by_kind(log: BillingLog, object_id: str | None = None) -> list[dict[str, Any]]:
    """Statements, rowsRead and rowsWritten per statement kind (of one object if given).

    Kinds come in a fixed order (SELECT, INSERT, UPDATE, DELETE, CREATE ...,
    DROP ..., ALTER ..., PRAGMA, OTHER), so a table or chart built from them is stable.
    """
    frame = log.records(object_id)
    totals: dict[str, list[int]] = {}
    for statement, read, written in zip(
        frame["statement"], frame["rows_read"], frame["rows_written"], strict=True
    ):
        slot = totals.setdefault(statement_kind(str(statement)), [0, 0, 0])
        slot[0] += 1
        slot[1] += int(read)
        slot[2] += int(written)

    def order(kind: str) -> tuple[int, str]:
        head = kind.split()[0]
        return (_KIND_ORDER.index(head) if head in _KIND_ORDER else len(_KIND_ORDER), kind)

    return [
        {"kind": k, "statements": n, "rows_read": r, "rows_written": w}
        for k, (n, r, w) in sorted(totals.items(), key=lambda item: order(item[0]))
    ]


def kv_preview(value: bytes, width: int = 60) -> str:
    """A stored value as JSON, cut to ``width`` characters.

    >>> from workbench.storage.value_codec import encode
    >>> kv_preview(encode({"n": [1, 2], "raw": b"hi"}))
    '{"n": [1, 2], "raw": {"$bytes": "aGk="}}'
    """
    text = dumps(decode(value))
    return text if len(text) <= width else text[: width - 3] + "..."
