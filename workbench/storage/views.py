"""Read-only views of an object's history for tools: the timeline and bookmark diffs.

>>> from workbench.storage import Runtime, DurableObject
>>> class Box(DurableObject):
...     async def fetch(self, request):
...         await self.ctx.storage.put(request, 1)
...         return await self.ctx.storage.getCurrentBookmark()
>>> rt = Runtime()
>>> ns = rt.namespace(Box)
>>> stub = ns.get(ns.id_from_name("b"))
>>> first, second = rt.run(stub.fetch("a")), rt.run(stub.fetch("b"))
>>> diff_bookmarks(ns.host(stub.id), first, second)
{'kv': {'added': ['b'], 'removed': [], 'changed': []}, 'tables': {}}
"""

from __future__ import annotations

from typing import Any

import apsw

from .history import History
from .host import StorageHost
from .values import decode


def timeline(host: StorageHost) -> list[dict[str, Any]]:
    """One entry per logged batch: sequence, virtual time, kind, bytes and its bookmark."""
    history = host.db.history
    if history is None:
        return []
    return [
        {"seq": seq, "t_ms": t, "kind": kind, "bytes": size, "bookmark": History.bookmark(seq, t)}
        for seq, t, kind, size in history.timeline()
    ]


def _snapshot(conn: apsw.Connection) -> tuple[dict[str, Any], dict[str, set[tuple]]]:
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            " AND name NOT IN ('_cf_METADATA')"
        )
    ]
    kv: dict[str, Any] = {}
    tables: dict[str, set[tuple]] = {}
    for name in names:
        quoted = '"' + name.replace('"', '""') + '"'
        if name == "_cf_KV":
            for key, value in conn.execute("SELECT key, value FROM _cf_KV"):
                kv[key.decode("utf-8", "replace")] = value
        else:
            try:
                tables[name] = set(conn.execute(f"SELECT * FROM {quoted}").fetchall())
            except apsw.Error:  # virtual tables and the like
                continue
    return kv, tables


def diff_bookmarks(host: StorageHost, older: str, newer: str) -> dict[str, Any]:
    """What changed from ``older`` to ``newer``: KV keys and rows per SQL table."""
    history = host.db.history
    if history is None:
        raise ValueError("only SQLite-backed objects keep a history")
    host.flush()
    states = []
    for bookmark in (older, newer):
        conn = history.state_at(History.parse(bookmark)[1])
        states.append(_snapshot(conn))
        conn.close()
    (kv_a, tables_a), (kv_b, tables_b) = states
    kv = {
        "added": sorted(set(kv_b) - set(kv_a)),
        "removed": sorted(set(kv_a) - set(kv_b)),
        "changed": sorted(k for k in set(kv_a) & set(kv_b) if kv_a[k] != kv_b[k]),
    }
    tables = {}
    for name in sorted(set(tables_a) | set(tables_b)):
        a, b = tables_a.get(name), tables_b.get(name)
        if a == b:
            continue
        tables[name] = {
            "status": "created" if a is None else "dropped" if b is None else "changed",
            "rows_added": len((b or set()) - (a or set())),
            "rows_removed": len((a or set()) - (b or set())),
        }
    return {"kv": kv, "tables": tables}


def kv_preview(value: bytes) -> str:
    """A short repr of a stored value."""
    text = repr(decode(value))
    return text if len(text) <= 60 else text[:57] + "..."
